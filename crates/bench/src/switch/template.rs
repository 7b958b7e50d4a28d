//! A switch's pre-encoded PACKET_IN ([`Template`]), patched per packet (xid, buffer id,
//! source and destination, in port), and the message types the switch reads and writes.

use openflow::{of10, of13, MacAddr, Message, Version};

use super::hosts::{dst_mac, frame, host_ip, host_mac, host_port, partner, FRAME_LEN, IN_PORT};

/// The xid of announcement `i` is `LEARN_XID + i` (below the counting's
/// `LEARN_DONE_XID` for 2^24).
pub(super) const LEARN_XID: u32 = 0x0e00_0000;

/// The buffer id of a PACKET_IN whose frame is all in the message.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// Message types: the codec's numbers ([`openflow::msg_type`] for those alike in 1.0 and
/// 1.3, the per-version enums for the rest).
pub(crate) mod msg {
    use openflow::{of10, of13};

    pub use openflow::msg_type::{
        ECHO_REPLY, ECHO_REQUEST, ERROR, FEATURES_REQUEST, FLOW_MOD, GET_CONFIG_REQUEST, HELLO,
        PACKET_IN, PACKET_OUT, PORT_STATUS,
    };
    pub const MULTIPART_REQUEST_13: u8 = of13::MsgType::MultipartRequest.to_raw();
    pub const BARRIER_REQUEST_10: u8 = of10::MsgType::BarrierRequest.to_raw();
    pub const BARRIER_REPLY_10: u8 = of10::MsgType::BarrierReply.to_raw();
    pub const BARRIER_REQUEST_13: u8 = of13::MsgType::BarrierRequest.to_raw();
    pub const BARRIER_REPLY_13: u8 = of13::MsgType::BarrierReply.to_raw();
    pub const MP_PORT_DESC: u16 = of13::multipart::MultipartType::PortDesc.to_raw();
    pub const STATS_REQUEST_10: u8 = of10::MsgType::StatsRequest.to_raw();
    /// OFPMP_PORT_STATS (1.3), OFPST_PORT (1.0): the same number.
    pub const MP_PORT_STATS: u16 = of13::multipart::MultipartType::PortStats.to_raw();
    const _: () = assert!(MP_PORT_STATS == of10::StatsType::Port.to_raw());
}

pub(super) fn encode(msg: &Message) -> Vec<u8> {
    msg.to_bytes(0)
        .expect("the emulated switch's own messages encode")
}

/// An unbuffered PACKET_IN of `data` from `in_port` (1.0 says table miss; 1.3 says
/// `reason13`).
pub(super) fn packet_in(
    version: Version,
    in_port: u32,
    reason13: of13::PacketInReason,
    data: Vec<u8>,
) -> Message {
    let total_len = data.len() as u16;
    match version {
        Version::V1_0 => Message::V10(of10::Message::PacketIn(of10::PacketIn {
            buffer_id: NO_BUFFER,
            total_len,
            in_port: in_port as u16,
            reason: of10::PacketInReason::NoMatch,
            data,
        })),
        Version::V1_3 => Message::V13(of13::Message::PacketIn(of13::PacketIn {
            buffer_id: NO_BUFFER,
            total_len,
            reason: reason13,
            table_id: 0,
            cookie: 0,
            match_: of13::Match::new(vec![of13::Oxm::basic(
                of13::OxmField::InPort,
                u64::from(in_port),
            )]),
            data,
        })),
    }
}

pub(super) fn patch_xid(bytes: &mut [u8], xid: u32) {
    bytes[4..8].copy_from_slice(&xid.to_be_bytes());
}

/// One switch's pre-encoded PACKET_IN, and where to patch it.
#[derive(Debug, Clone)]
pub struct Template {
    /// The whole message, as sent for host 0 and xid 0.
    bytes: Vec<u8>,
    /// Where the Ethernet frame starts in `bytes`.
    frame_at: usize,
    /// Where the ingress port is (a `u16` in 1.0, the OXM's `u32` value in 1.3).
    in_port_at: usize,
    /// 1.0 carries the port in 16 bits, 1.3 in 32.
    wide_port: bool,
    /// The one's-complement sum of the frame's IPv4 header words but the checksum and
    /// the addresses: the checksum of a packet between two hosts is this plus their
    /// addresses, with no pass over the header.
    ip_fixed_sum: u32,
}

/// Where the sequence number sits in a frame: the first bytes of the UDP payload.
pub(super) const FRAME_SEQ_AT: usize = 42;

impl Template {
    /// The PACKET_IN of switch `dpid` in `version`.
    pub fn new(version: Version, dpid: u64) -> Template {
        let data = frame(host_mac(dpid, 0), dst_mac(dpid));
        let bytes = encode(&packet_in(
            version,
            IN_PORT,
            of13::PacketInReason::NoMatch,
            data,
        ));
        // 1.0: header, buffer_id, total_len, then in_port (§5.4.1). 1.3: header,
        // buffer_id, total_len, reason, table_id, cookie, then the match: type, length,
        // and its one OXM (4-byte header, 4-byte value) (§7.4.1).
        let (in_port_at, wide_port) = match version {
            Version::V1_0 => (14, false),
            Version::V1_3 => (32, true),
        };
        let frame_at = bytes.len() - FRAME_LEN;
        // The IPv4 header's first ten bytes: version to protocol (the checksum and the
        // addresses follow).
        let ip_fixed_sum = bytes[frame_at + 14..frame_at + 24]
            .chunks_exact(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum::<u32>();
        Template {
            frame_at,
            bytes,
            in_port_at,
            wide_port,
            ip_fixed_sum,
        }
    }

    /// Bytes of one PACKET_IN.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Never empty; for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends PACKET_IN `seq` (its xid, and its number in the frame) with this buffer
    /// id, from `src` behind `in_port`, to `dst`.
    #[inline]
    pub fn append(
        &self,
        out: &mut Vec<u8>,
        seq: u32,
        buffer_id: u32,
        in_port: u32,
        src: MacAddr,
        dst: MacAddr,
    ) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        let m = &mut out[at..];
        m[4..8].copy_from_slice(&seq.to_be_bytes());
        m[8..12].copy_from_slice(&buffer_id.to_be_bytes());
        if self.wide_port {
            m[self.in_port_at..self.in_port_at + 4].copy_from_slice(&in_port.to_be_bytes());
        } else {
            m[self.in_port_at..self.in_port_at + 2]
                .copy_from_slice(&(in_port as u16).to_be_bytes());
        }
        let f = &mut m[self.frame_at..];
        f[0..6].copy_from_slice(&dst.0);
        f[6..12].copy_from_slice(&src.0);
        f[FRAME_SEQ_AT..FRAME_SEQ_AT + 4].copy_from_slice(&seq.to_be_bytes());
    }

    /// Appends PACKET_IN `seq` of switch `dpid` (with `macs` hosts) from host `src`,
    /// behind its port, to its partner ([`partner`]), with their MAC and IPv4
    /// addresses.
    #[inline]
    pub fn append_from_host(
        &self,
        out: &mut Vec<u8>,
        seq: u32,
        buffer_id: u32,
        dpid: u64,
        macs: u32,
        src: u32,
    ) {
        let at = out.len();
        let dst = partner(src, macs);
        self.append(
            out,
            seq,
            buffer_id,
            host_port(src),
            host_mac(dpid, src),
            dst.map_or(dst_mac(dpid), |d| host_mac(dpid, d)),
        );
        let Some(dst) = dst else {
            return;
        };
        // The IPv4 header (RFC 791 §3.1) follows the 14-byte Ethernet header: the
        // addresses at 12 and 16, the checksum at 10: the sum of the fixed words, plus
        // the four address words (RFC 1071), folded and inverted.
        let (s, d) = (host_ip(dpid, src, macs), host_ip(dpid, dst, macs));
        let word = |b: &[u8; 4], i: usize| u32::from(u16::from_be_bytes([b[i], b[i + 1]]));
        let sum = self.ip_fixed_sum + word(&s, 0) + word(&s, 2) + word(&d, 0) + word(&d, 2);
        let sum = (sum & 0xffff) + (sum >> 16);
        let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
        let ip = &mut out[at + self.frame_at + 14..at + self.frame_at + 34];
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        ip[12..16].copy_from_slice(&s);
        ip[16..20].copy_from_slice(&d);
    }

    /// Appends the announcement of host `index` of switch `dpid` (with `macs` hosts): a
    /// gratuitous ARP reply from it, behind its port, unbuffered, to `out`.
    pub fn append_announcement(&self, out: &mut Vec<u8>, dpid: u64, macs: u32, index: u32) {
        let at = out.len();
        self.append(
            out,
            LEARN_XID + index,
            NO_BUFFER,
            host_port(index),
            host_mac(dpid, index),
            MacAddr::BROADCAST,
        );
        let src = host_mac(dpid, index);
        let ip = host_ip(dpid, index, macs);
        let f = &mut out[at + self.frame_at..];
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        // ARP (RFC 826): Ethernet, IPv4, lengths 6 and 4, reply; sender = target = the
        // host (a gratuitous ARP).
        f[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
        f[22..28].copy_from_slice(&src.0);
        f[28..32].copy_from_slice(&ip);
        f[32..38].copy_from_slice(&src.0);
        f[38..42].copy_from_slice(&ip);
        f[42..].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_patches_xid_buffer_and_source() {
        for version in [Version::V1_0, Version::V1_3] {
            let t = Template::new(version, 7);
            let mut out = Vec::new();
            t.append(&mut out, 42, 9, 3, host_mac(7, 0x01_0203), host_mac(7, 5));
            let (xid, msg) = Message::decode(&out).unwrap();
            assert_eq!(xid, 42);
            let (buffer_id, in_port, data) = match msg {
                Message::V10(of10::Message::PacketIn(p)) => {
                    (p.buffer_id, u32::from(p.in_port), p.data)
                }
                Message::V13(of13::Message::PacketIn(p)) => {
                    let port = p.in_port().expect("an in_port OXM");
                    (p.buffer_id, port, p.data)
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(buffer_id, 9);
            assert_eq!(in_port, 3);
            assert_eq!(&data[6..12], &[0x02, 0, 7, 1, 2, 3]);
            assert_eq!(&data[0..6], &host_mac(7, 5).0);
            assert_eq!(&data[FRAME_SEQ_AT..FRAME_SEQ_AT + 4], &42u32.to_be_bytes());
            assert_eq!(data.len(), FRAME_LEN);
            // The frame is still a valid IPv4/UDP one.
            let eth = packet::ethernet::EthernetFrame::new_checked(&data[..]).unwrap();
            assert_eq!(eth.ethertype(), packet::ethernet::EtherType::Ipv4);
        }
    }

    #[test]
    fn announcements_are_gratuitous_arps_from_the_host_port() {
        for version in [Version::V1_0, Version::V1_3] {
            let mut out = Vec::new();
            Template::new(version, 9).append_announcement(&mut out, 9, 1 << 20, 0x01_0203);
            let (_, msg) = Message::decode(&out).unwrap();
            let (buffer_id, in_port, data) = match msg {
                Message::V10(of10::Message::PacketIn(p)) => {
                    (p.buffer_id, u32::from(p.in_port), p.data)
                }
                Message::V13(of13::Message::PacketIn(p)) => {
                    (p.buffer_id, p.in_port().unwrap(), p.data)
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(buffer_id, NO_BUFFER);
            assert_eq!(in_port, host_port(0x01_0203));
            let eth = packet::ethernet::EthernetFrame::new_checked(&data[..]).unwrap();
            assert_eq!(eth.src_addr(), host_mac(9, 0x01_0203));
            assert_eq!(eth.dst_addr(), MacAddr::BROADCAST);
            assert_eq!(eth.ethertype(), packet::ethernet::EtherType::Arp);
        }
    }
}
