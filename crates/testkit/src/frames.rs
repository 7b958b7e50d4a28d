//! Frames hosts send, built with the packet crate, for the device tests: ARP, IPv4,
//! IPv6 (with neighbour discovery), a VLAN tag on any of them, and LLDP; and the
//! PACKET_IN a switch would wrap one in.
//!
//! Used by the apps crate's `tests/devices.rs`, `tests/allocations.rs`,
//! `benches/devices.rs` and the device app's unit tests.

use std::net::{Ipv4Addr, Ipv6Addr};

use openflow::model::NO_BUFFER;
use openflow::{of10, of13, MacAddr, Message, Version};
use packet::arp::{ArpOperation, ArpRepr};
use packet::ethernet::{EtherType, EthernetRepr};
use packet::icmpv6::Icmpv6Repr;
use packet::ip::IpProtocol;
use packet::ipv4::Ipv4Repr;
use packet::ipv6::Ipv6Repr;

/// The host numbered `n`: MAC 02:00:00:00:00:n.
pub fn mac(n: u8) -> MacAddr {
    MacAddr([2, 0, 0, 0, 0, n])
}

/// 10.0.0.n.
pub fn v4(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, n)
}

/// fd00::n.
pub fn v6(n: u8) -> Ipv6Addr {
    Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, n.into())
}

fn ethernet(src: MacAddr, dst: MacAddr, ethertype: EtherType, payload: &[u8]) -> Vec<u8> {
    let eth = EthernetRepr {
        dst_addr: dst,
        src_addr: src,
        ethertype,
    };
    let mut f = vec![0u8; eth.buffer_len()];
    eth.emit(&mut f).unwrap();
    f.extend_from_slice(payload);
    f
}

/// An ARP request (broadcast) from `src` at `spa`, for `tpa`.
pub fn arp_request(src: MacAddr, spa: Ipv4Addr, tpa: Ipv4Addr) -> Vec<u8> {
    arp(
        src,
        MacAddr::BROADCAST,
        ArpOperation::Request,
        src,
        spa,
        tpa,
    )
}

/// An ARP reply from `src` at `spa` to `dst` at `tpa`.
pub fn arp_reply(src: MacAddr, spa: Ipv4Addr, dst: MacAddr, tpa: Ipv4Addr) -> Vec<u8> {
    arp(src, dst, ArpOperation::Reply, src, spa, tpa)
}

/// An ARP packet whose sender hardware address is `sha` (a proxy's answer when it is
/// not `src`).
pub fn arp(
    src: MacAddr,
    dst: MacAddr,
    operation: ArpOperation,
    sha: MacAddr,
    spa: Ipv4Addr,
    tpa: Ipv4Addr,
) -> Vec<u8> {
    let arp = ArpRepr {
        operation,
        source_hardware_addr: sha,
        source_protocol_addr: spa,
        target_hardware_addr: if dst.is_multicast() {
            MacAddr::ZERO
        } else {
            dst
        },
        target_protocol_addr: tpa,
    };
    let mut body = vec![0u8; arp.buffer_len()];
    arp.emit(&mut body).unwrap();
    ethernet(src, dst, EtherType::Arp, &body)
}

/// An IPv4 UDP datagram (8 zero bytes of UDP header; nobody checks the checksum).
pub fn ipv4(src: MacAddr, dst: MacAddr, sip: Ipv4Addr, dip: Ipv4Addr) -> Vec<u8> {
    let udp = [0u8; 8];
    let ip = Ipv4Repr {
        src_addr: sip,
        dst_addr: dip,
        protocol: IpProtocol::Udp,
        payload_len: udp.len(),
        ttl: 64,
        dscp: 0,
        ecn: 0,
        ident: 1,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        options: &[],
    };
    let mut body = vec![0u8; 20];
    ip.emit(&mut body).unwrap();
    body.extend_from_slice(&udp);
    ethernet(src, dst, EtherType::Ipv4, &body)
}

fn ipv6_packet(
    src: MacAddr,
    dst: MacAddr,
    sip: Ipv6Addr,
    dip: Ipv6Addr,
    proto: IpProtocol,
    l4: &[u8],
) -> Vec<u8> {
    let ip = Ipv6Repr {
        src_addr: sip,
        dst_addr: dip,
        next_header: proto,
        payload_len: l4.len(),
        hop_limit: 255,
        traffic_class: 0,
        flow_label: 0,
    };
    let mut body = vec![0u8; 40];
    ip.emit(&mut body).unwrap();
    body.extend_from_slice(l4);
    ethernet(src, dst, EtherType::Ipv6, &body)
}

/// An IPv6 UDP datagram.
pub fn ipv6(src: MacAddr, dst: MacAddr, sip: Ipv6Addr, dip: Ipv6Addr) -> Vec<u8> {
    ipv6_packet(src, dst, sip, dip, IpProtocol::Udp, &[0u8; 8])
}

fn icmpv6(src: MacAddr, dst: MacAddr, sip: Ipv6Addr, dip: Ipv6Addr, m: &Icmpv6Repr) -> Vec<u8> {
    let mut l4 = vec![0u8; m.buffer_len()];
    m.emit(sip, dip, &mut l4).unwrap();
    ipv6_packet(src, dst, sip, dip, IpProtocol::Icmpv6, &l4)
}

/// The solicited-node multicast group of `ip` and its Ethernet address.
fn solicited_node(ip: Ipv6Addr) -> (Ipv6Addr, MacAddr) {
    let o = ip.octets();
    let group = Ipv6Addr::new(
        0xff02,
        0,
        0,
        0,
        0,
        1,
        0xff00 | u16::from(o[13]),
        u16::from_be_bytes([o[14], o[15]]),
    );
    let g = group.octets();
    (group, MacAddr([0x33, 0x33, g[12], g[13], g[14], g[15]]))
}

/// A neighbour solicitation from `src` at `sip` for `target` (`sip` :: is duplicate
/// address detection: no link-layer option then).
pub fn neighbor_solicit(src: MacAddr, sip: Ipv6Addr, target: Ipv6Addr) -> Vec<u8> {
    let (group, group_mac) = solicited_node(target);
    let m = Icmpv6Repr::NeighborSolicit {
        target_addr: target,
        lladdr: (!sip.is_unspecified()).then_some(src),
    };
    icmpv6(src, group_mac, sip, group, &m)
}

/// A neighbour advertisement from `src` at `sip` for `target`, with `tll` as its
/// target link-layer address option, to `dst` at `dip`.
pub fn neighbor_advert(
    src: MacAddr,
    sip: Ipv6Addr,
    target: Ipv6Addr,
    tll: Option<MacAddr>,
    dst: MacAddr,
    dip: Ipv6Addr,
) -> Vec<u8> {
    let m = Icmpv6Repr::NeighborAdvert {
        router: false,
        solicited: true,
        override_: true,
        target_addr: target,
        lladdr: tll,
    };
    icmpv6(src, dst, sip, dip, &m)
}

/// `frame` with an 802.1Q tag (VLAN `vid`) after its addresses.
pub fn tagged(vid: u16, frame: &[u8]) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend_from_slice(&[0x81, 0x00]);
    f.extend_from_slice(&vid.to_be_bytes());
    f.extend_from_slice(&frame[12..]);
    f
}

/// An LLDP frame from `src` (its content does not matter here).
pub fn lldp(src: MacAddr) -> Vec<u8> {
    let nearest_bridge = MacAddr([0x01, 0x80, 0xc2, 0, 0, 0x0e]);
    // Chassis id, port id, TTL, end: enough to be LLDP.
    let tlvs = [
        0x02, 0x07, 0x04, 2, 0, 0, 0, 0, 1, // chassis id: MAC
        0x04, 0x02, 0x07, b'1', // port id: local "1"
        0x06, 0x02, 0x00, 0x78, // TTL 120
        0x00, 0x00, // end
    ];
    ethernet(src, nearest_bridge, EtherType::Lldp, &tlvs)
}

/// The PACKET_IN (unbuffered, table miss) a switch of `version` sends for `frame`
/// received on `in_port`.
pub fn packet_in(version: Version, in_port: u32, frame: &[u8]) -> Vec<u8> {
    let msg = packet_in_message(version, in_port, frame, NO_BUFFER);
    let mut out = Vec::new();
    msg.encode(1, &mut out).unwrap();
    out
}

/// The PACKET_IN (table miss) a switch of `version` sends for `frame` received on
/// `in_port`: with `buffer_id` [`openflow::model::NO_BUFFER`], the whole frame; with
/// another (the switch buffered it), its first 128 bytes.
pub fn packet_in_message(version: Version, in_port: u32, frame: &[u8], buffer_id: u32) -> Message {
    buffered_packet_in(version, in_port, frame, buffer_id, 128)
}

/// [`packet_in_message`] with the switch's miss_send_len: a buffered frame carries its
/// first `miss_send_len` bytes (the emulator's SET_CONFIG sets it).
pub(crate) fn buffered_packet_in(
    version: Version,
    in_port: u32,
    frame: &[u8],
    buffer_id: u32,
    miss_send_len: usize,
) -> Message {
    let total_len = frame.len() as u16;
    let data = if buffer_id == NO_BUFFER {
        frame.to_vec()
    } else {
        frame[..frame.len().min(miss_send_len)].to_vec()
    };
    match version {
        Version::V1_0 => Message::V10(of10::Message::PacketIn(of10::PacketIn {
            buffer_id,
            total_len,
            in_port: in_port as u16,
            reason: of10::PacketInReason::NoMatch,
            data,
        })),
        Version::V1_3 => Message::V13(of13::Message::PacketIn(of13::PacketIn {
            buffer_id,
            total_len,
            reason: of13::PacketInReason::NoMatch,
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
