//! A probe frame: its layout ([`FrameSpec`]: Ethernet, IPv4, UDP, the stamp) and the
//! [`Stamp`] it carries, found again after a switch rewrote or tagged it.

use std::net::Ipv4Addr;

use packet::checksum::checksum;

use super::{
    ProbeError, DEFAULT_DST_PORT, DEFAULT_FRAME_LEN, DEFAULT_SRC_PORT, MAGIC, PAYLOAD_LEN,
};

/// The headers of a probe frame. The payload ([`Stamp`]) is written by the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    /// Ethernet source.
    pub src_mac: [u8; 6],
    /// Ethernet destination.
    pub dst_mac: [u8; 6],
    /// An 802.1Q tag: VLAN id (12 bits) and priority (3 bits).
    pub vlan: Option<(u16, u8)>,
    /// IPv4 source.
    pub src_ip: Ipv4Addr,
    /// IPv4 destination.
    pub dst_ip: Ipv4Addr,
    /// IPv4 TOS byte (DSCP << 2 | ECN).
    pub tos: u8,
    /// IPv4 TTL.
    pub ttl: u8,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// Total frame length in bytes (without the FCS); at least [`super::MIN_FRAME_LEN`] (+4 with a tag).
    pub len: usize,
}

impl FrameSpec {
    /// An untagged UDP frame of [`DEFAULT_FRAME_LEN`] bytes, TTL 64, TOS 0, ports
    /// [`DEFAULT_SRC_PORT`] → [`DEFAULT_DST_PORT`].
    pub fn udp(
        src_mac: [u8; 6],
        dst_mac: [u8; 6],
        src_ip: Ipv4Addr,
        dst_ip: Ipv4Addr,
    ) -> FrameSpec {
        FrameSpec {
            src_mac,
            dst_mac,
            vlan: None,
            src_ip,
            dst_ip,
            tos: 0,
            ttl: 64,
            src_port: DEFAULT_SRC_PORT,
            dst_port: DEFAULT_DST_PORT,
            len: DEFAULT_FRAME_LEN,
        }
    }

    fn header_len(&self) -> usize {
        14 + if self.vlan.is_some() { 4 } else { 0 } + 20 + 8
    }

    /// Checks the length leaves room for the payload.
    pub fn check(&self) -> Result<(), ProbeError> {
        if self.len < self.header_len() + PAYLOAD_LEN || self.len > 9000 {
            return Err(ProbeError::Invalid(format!(
                "frame length {} out of range: {} to 9000 bytes",
                self.len,
                self.header_len() + PAYLOAD_LEN
            )));
        }
        Ok(())
    }

    /// Writes the frame carrying `stamp` into `buf` (resized to [`FrameSpec::len`]).
    pub fn build_into(&self, stamp: &Stamp, buf: &mut Vec<u8>) {
        buf.clear();
        buf.resize(self.len.max(self.header_len() + PAYLOAD_LEN), 0);
        buf[0..6].copy_from_slice(&self.dst_mac);
        buf[6..12].copy_from_slice(&self.src_mac);
        let mut o = 12;
        if let Some((vid, pcp)) = self.vlan {
            buf[o..o + 2].copy_from_slice(&0x8100u16.to_be_bytes());
            let tci = (u16::from(pcp & 7) << 13) | (vid & 0x0fff);
            buf[o + 2..o + 4].copy_from_slice(&tci.to_be_bytes());
            o += 4;
        }
        buf[o..o + 2].copy_from_slice(&0x0800u16.to_be_bytes());
        o += 2;
        let ip_len = (buf.len() - o) as u16;
        let ip = o;
        buf[ip] = 0x45;
        buf[ip + 1] = self.tos;
        buf[ip + 2..ip + 4].copy_from_slice(&ip_len.to_be_bytes());
        // Identification: the low bits of the sequence number, for a reader of a capture.
        buf[ip + 4..ip + 6].copy_from_slice(&(stamp.seq as u16).to_be_bytes());
        buf[ip + 6..ip + 8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF
        buf[ip + 8] = self.ttl;
        buf[ip + 9] = 17;
        buf[ip + 12..ip + 16].copy_from_slice(&self.src_ip.octets());
        buf[ip + 16..ip + 20].copy_from_slice(&self.dst_ip.octets());
        let csum = checksum(&buf[ip..ip + 20]);
        buf[ip + 10..ip + 12].copy_from_slice(&csum.to_be_bytes());
        let udp = ip + 20;
        buf[udp..udp + 2].copy_from_slice(&self.src_port.to_be_bytes());
        buf[udp + 2..udp + 4].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[udp + 4..udp + 6].copy_from_slice(&(ip_len - 20).to_be_bytes());
        // UDP checksum 0: none (allowed over IPv4), so rewritten addresses and ports
        // leave a valid frame without the switch recomputing anything.
        stamp.write(&mut buf[udp + 8..udp + 8 + PAYLOAD_LEN]);
    }

    /// The frame carrying `stamp`.
    pub fn build(&self, stamp: &Stamp) -> Vec<u8> {
        let mut v = Vec::new();
        self.build_into(stamp, &mut v);
        v
    }
}

/// The probe payload: which frame this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The stream the frame belongs to.
    pub stream: u32,
    /// Its sequence number in the stream, from 0.
    pub seq: u64,
    /// Which of the stream's templates built it (`seq % templates.len()` for a [`super::Sender::run`]).
    pub template: u32,
    /// The sender's [`super::now_ns`] just before the send call.
    pub user_tx_ns: i64,
}

impl Stamp {
    fn write(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&MAGIC);
        out[4..8].copy_from_slice(&self.stream.to_be_bytes());
        out[8..16].copy_from_slice(&self.seq.to_be_bytes());
        out[16..20].copy_from_slice(&self.template.to_be_bytes());
        out[20..28].copy_from_slice(&self.user_tx_ns.to_be_bytes());
    }

    fn read(b: &[u8]) -> Option<Stamp> {
        if b.len() < PAYLOAD_LEN || b[0..4] != MAGIC {
            return None;
        }
        Some(Stamp {
            stream: u32::from_be_bytes(b[4..8].try_into().ok()?),
            seq: u64::from_be_bytes(b[8..16].try_into().ok()?),
            template: u32::from_be_bytes(b[16..20].try_into().ok()?),
            user_tx_ns: i64::from_be_bytes(b[20..28].try_into().ok()?),
        })
    }
}

/// Finds the probe payload in a frame, through any number of VLAN tags and whatever the
/// switch rewrote: the UDP payload when the frame parses as IPv4/UDP, else the first
/// [`super::MAGIC`] anywhere in the frame.
pub fn parse_stamp(frame: &[u8]) -> Option<Stamp> {
    let mut o = 12;
    while frame.len() >= o + 2
        && matches!(
            u16::from_be_bytes([frame[o], frame[o + 1]]),
            0x8100 | 0x88a8
        )
    {
        o += 4;
    }
    if frame.len() >= o + 2 && u16::from_be_bytes([frame[o], frame[o + 1]]) == 0x0800 {
        let ip = o + 2;
        if frame.len() > ip {
            let ihl = usize::from(frame[ip] & 0x0f) * 4;
            let payload = ip + ihl + 8;
            if let Some(s) = frame.get(payload..).and_then(Stamp::read) {
                return Some(s);
            }
        }
    }
    frame.windows(PAYLOAD_LEN).find_map(Stamp::read)
}

#[cfg(test)]
mod tests {
    use super::super::MIN_FRAME_LEN;
    use super::*;

    fn spec() -> FrameSpec {
        FrameSpec::udp(
            [2, 0, 0, 0, 0, 1],
            [2, 0, 0, 0, 0, 2],
            [10, 0, 0, 1].into(),
            [10, 0, 0, 2].into(),
        )
    }

    #[test]
    fn frame_layout_and_stamp_round_trip() {
        let st = Stamp {
            stream: 7,
            seq: 123_456_789_012,
            template: 3,
            user_tx_ns: 1_700_000_000_123_456_789,
        };
        let f = spec().build(&st);
        assert_eq!(f.len(), DEFAULT_FRAME_LEN);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(checksum(&f[14..34]), 0, "IPv4 header checksum verifies");
        assert_eq!(
            u16::from_be_bytes([f[16], f[17]]) as usize,
            DEFAULT_FRAME_LEN - 14
        );
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), DEFAULT_DST_PORT);
        assert_eq!(parse_stamp(&f), Some(st));
    }

    #[test]
    fn stamp_found_through_vlan_tags_and_rewrites() {
        let st = Stamp {
            stream: 1,
            seq: 9,
            template: 0,
            user_tx_ns: 5,
        };
        let mut s = spec();
        s.vlan = Some((100, 5));
        let f = s.build(&st);
        assert_eq!(&f[12..14], &[0x81, 0x00]);
        assert_eq!(u16::from_be_bytes([f[14], f[15]]), (5 << 13) | 100);
        assert_eq!(parse_stamp(&f), Some(st));
        // A second tag pushed in front (QinQ) still parses.
        let mut q = f[..12].to_vec();
        q.extend_from_slice(&[0x88, 0xa8, 0x00, 0x07]);
        q.extend_from_slice(&f[12..]);
        assert_eq!(parse_stamp(&q), Some(st));
        // Not IPv4 any more: found by scanning for the magic.
        let mut g = f.clone();
        g[16] = 0x86;
        assert_eq!(parse_stamp(&g), Some(st));
        assert_eq!(parse_stamp(&g[..40]), None);
    }

    #[test]
    fn short_frames_refused() {
        let mut s = spec();
        s.len = MIN_FRAME_LEN;
        s.check().unwrap();
        s.len = MIN_FRAME_LEN - 1;
        assert!(s.check().is_err());
        s.len = MIN_FRAME_LEN;
        s.vlan = Some((1, 0));
        assert!(s.check().is_err());
    }
}
