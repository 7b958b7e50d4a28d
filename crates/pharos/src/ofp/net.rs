//! Link-layer, IPv4/IPv6 and TCP headers: a captured frame into a TCP segment.
//!
//! Ethernet, 802.1Q/802.1ad tags, IPv4, IPv6 (with its extension headers) and TCP are
//! read with the `packet` crate's zero-copy views; this module adds the capture link
//! types that are not protocols (Linux cooked SLL/SLL2, BSD loopback/null, raw IP) and
//! the policy: which frames are skipped and why. Checksums are not verified: loopback
//! captures carry offloaded (unfilled) checksums.

use std::net::{IpAddr, SocketAddr};

use packet::ethernet::{EtherType, EthernetFrame, HEADER_LEN as ETHERNET_LEN};
use packet::ip::IpProtocol;
use packet::ipv4::Ipv4Packet;
use packet::ipv6::{Ipv6Packet, HEADER_LEN as IPV6_HEADER_LEN};
use packet::tcp::{TcpFlags, TcpPacket};
use packet::vlan::VlanTags;

/// LINKTYPE_ values this module reads (<https://www.tcpdump.org/linktypes.html>).
pub mod linktype {
    pub const NULL: i32 = 0;
    pub const ETHERNET: i32 = 1;
    pub const RAW: i32 = 101;
    pub const LOOP: i32 = 108;
    pub const LINUX_SLL: i32 = 113;
    pub const IPV4: i32 = 228;
    pub const IPV6: i32 = 229;
    pub const LINUX_SLL2: i32 = 276;
}

/// True for the link types [`parse`] reads.
pub fn is_supported(linktype: i32) -> bool {
    use linktype::*;
    [NULL, ETHERNET, RAW, LOOP, LINUX_SLL, IPV4, IPV6, LINUX_SLL2].contains(&linktype)
}

/// Length of the Linux cooked header v1; its protocol field is the last two bytes.
const SLL_LEN: usize = 16;
/// Length of the Linux cooked header v2; its protocol field is the first two bytes.
const SLL2_LEN: usize = 20;

pub const TCP_FIN: u8 = TcpFlags::FIN as u8;
pub const TCP_SYN: u8 = TcpFlags::SYN as u8;
pub const TCP_RST: u8 = TcpFlags::RST as u8;
pub const TCP_ACK: u8 = TcpFlags::ACK as u8;

/// A TCP segment found in a frame.
#[derive(Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    /// The acknowledgement number (meaningful with [`TCP_ACK`]).
    pub ack: u32,
    /// The low eight TCP flag bits (FIN, SYN, RST, ACK, ...).
    pub flags: u8,
    /// The payload bytes the capture holds.
    pub payload: &'a [u8],
    /// Payload bytes the IP header announces but the capture cut (snap length).
    pub missing: usize,
}

/// What a frame turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed<'a> {
    Tcp(Segment<'a>),
    /// Not TCP over IP (ARP, UDP, ...): nothing to say.
    Other,
    /// Something that might have been relevant but cannot be read; the reason.
    Unreadable(String),
}

/// Parses a frame of the given link type.
pub fn parse(linktype: i32, frame: &[u8]) -> Parsed<'_> {
    match linktype {
        linktype::ETHERNET => match EthernetFrame::new_checked(frame) {
            // The tags are walked over `frame` itself, for the payload to outlive the view.
            Ok(eth) => over_ethertype(VlanTags::new(
                eth.ethertype_raw(),
                &frame[ETHERNET_LEN..],
                ETHERNET_LEN,
            )),
            Err(e) => Parsed::Unreadable(e.to_string()),
        },
        linktype::LINUX_SLL => {
            if frame.len() < SLL_LEN {
                return short("Linux cooked (SLL) header", SLL_LEN, frame.len());
            }
            let protocol = u16::from_be_bytes([frame[14], frame[15]]);
            over_ethertype(VlanTags::new(protocol, &frame[SLL_LEN..], SLL_LEN))
        }
        linktype::LINUX_SLL2 => {
            if frame.len() < SLL2_LEN {
                return short("Linux cooked (SLL2) header", SLL2_LEN, frame.len());
            }
            let protocol = u16::from_be_bytes([frame[0], frame[1]]);
            over_ethertype(VlanTags::new(protocol, &frame[SLL2_LEN..], SLL2_LEN))
        }
        linktype::NULL | linktype::LOOP => {
            // A 4-byte address family, in the capturing host's byte order for NULL and
            // in network order for LOOP. AF_INET is 2 everywhere; AF_INET6 is 10 (Linux),
            // 24 (NetBSD, OpenBSD), 28 (FreeBSD), 30 (macOS).
            if frame.len() < 4 {
                return short("loopback header", 4, frame.len());
            }
            let le = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]);
            let be = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
            match if le < 256 { le } else { be } {
                2 => ipv4(&frame[4..]),
                10 | 24 | 28 | 30 => ipv6(&frame[4..]),
                _ => Parsed::Other,
            }
        }
        linktype::RAW => match frame.first().map(|b| b >> 4) {
            Some(4) => ipv4(frame),
            Some(6) => ipv6(frame),
            _ => Parsed::Other,
        },
        linktype::IPV4 => ipv4(frame),
        linktype::IPV6 => ipv6(frame),
        other => Parsed::Unreadable(format!(
            "link type {other} is not supported (Ethernet, Linux cooked SLL/SLL2, raw IP and BSD loopback are)"
        )),
    }
}

fn short(what: &str, needed: usize, available: usize) -> Parsed<'static> {
    Parsed::Unreadable(format!(
        "{what} needs {needed} bytes, the frame has {available}"
    ))
}

/// The payload of an Ethernet-like header, after any VLAN tags.
fn over_ethertype(tags: VlanTags<'_>) -> Parsed<'_> {
    let mut tags = tags;
    for tag in tags.by_ref() {
        if let Err(e) = tag {
            return Parsed::Unreadable(e.to_string());
        }
    }
    match tags.ethertype() {
        EtherType::Ipv4 => ipv4(tags.payload()),
        EtherType::Ipv6 => ipv6(tags.payload()),
        _ => Parsed::Other,
    }
}

fn ipv4(p: &[u8]) -> Parsed<'_> {
    let ip = Ipv4Packet::new_unchecked(p);
    // Only the header is required: a capture's snap length may cut the payload.
    if let Err(e) = ip.check_header() {
        return Parsed::Unreadable(e.to_string());
    }
    if ip.version() != 4 {
        return Parsed::Unreadable(format!("IPv4 header with version {}", ip.version()));
    }
    if ip.protocol() != IpProtocol::Tcp {
        return Parsed::Other;
    }
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    if ip.is_fragment() {
        return Parsed::Unreadable(format!(
            "IPv4 fragment {src} -> {dst} (fragments are not reassembled)"
        ));
    }
    // Ethernet pads short frames: the total length says where the packet ends.
    // (The slice is cut from `p`, like `payload_available`, to outlive the view.)
    let end = usize::from(ip.total_len());
    let available = &p[ip.header_len()..end.min(p.len())];
    let missing = end.saturating_sub(p.len());
    tcp(IpAddr::V4(src), IpAddr::V4(dst), available, missing)
}

fn ipv6(p: &[u8]) -> Parsed<'_> {
    let ip = Ipv6Packet::new_unchecked(p);
    if let Err(e) = ip.check_header() {
        return Parsed::Unreadable(e.to_string());
    }
    if ip.version() != 6 {
        return Parsed::Unreadable(format!("IPv6 header with version {}", ip.version()));
    }
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let upper = match ip.ext_headers().walk() {
        Ok(u) => u,
        Err(e) => return Parsed::Unreadable(e.to_string()),
    };
    if upper.protocol != IpProtocol::Tcp {
        return Parsed::Other;
    }
    if upper.fragment.is_some() {
        return Parsed::Unreadable(format!(
            "IPv6 fragment {src} -> {dst} (fragments are not reassembled)"
        ));
    }
    // `upper.offset` counts from the start of the IPv6 header; the walker only returns
    // extension headers that are all present.
    // (The slice is cut from `p`, like `payload_available`, to outlive the view.)
    let end = IPV6_HEADER_LEN + usize::from(ip.payload_len());
    let start = upper.offset.min(end).min(p.len());
    let missing = end.saturating_sub(p.len());
    tcp(
        IpAddr::V6(src),
        IpAddr::V6(dst),
        &p[start..end.min(p.len())],
        missing,
    )
}

fn tcp(src: IpAddr, dst: IpAddr, t: &[u8], missing: usize) -> Parsed<'_> {
    let seg = match TcpPacket::new_checked(t) {
        Ok(seg) => seg,
        Err(e) => return Parsed::Unreadable(format!("{src} -> {dst}: {e}")),
    };
    Parsed::Tcp(Segment {
        src: SocketAddr::new(src, seg.src_port()),
        dst: SocketAddr::new(dst, seg.dst_port()),
        seq: seg.seq_number(),
        ack: seg.ack_number(),
        flags: seg.flags().0 as u8,
        payload: &t[seg.header_len()..],
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 + TCP packet from 10.0.0.1:40000 to 10.0.0.2:6653 carrying `payload`.
    fn ipv4_tcp(payload: &[u8]) -> Vec<u8> {
        let total = 40 + payload.len();
        let mut p = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ];
        p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        p.extend_from_slice(&[0x9c, 0x40, 0x19, 0xfd, 0, 0, 0, 100, 0, 0, 0, 0, 0x50, 0x18]);
        p.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
        p.extend_from_slice(payload);
        p
    }

    fn ipv6_tcp(payload: &[u8]) -> Vec<u8> {
        let v4 = ipv4_tcp(payload);
        let tcp = &v4[20..];
        let mut p = vec![0x60, 0, 0, 0, 0, tcp.len() as u8, 6, 64];
        p.extend_from_slice(&[0; 15]);
        p.push(1);
        p.extend_from_slice(&[0; 15]);
        p.push(2);
        p.extend_from_slice(tcp);
        p
    }

    fn expect(parsed: Parsed<'_>, src: &str, payload: &[u8]) {
        let Parsed::Tcp(s) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!(s.src, src.parse::<SocketAddr>().unwrap());
        assert_eq!((s.dst.port(), s.seq, s.flags), (6653, 100, 0x18));
        assert_eq!((s.payload, s.missing), (payload, 0));
    }

    #[test]
    fn every_link_type() {
        let data = b"\x04\x00\x00\x08\x00\x00\x00\x01";
        let ip = ipv4_tcp(data);
        let mut eth = vec![0; 12];
        eth.extend_from_slice(&[0x08, 0x00]);
        eth.extend_from_slice(&ip);
        eth.extend_from_slice(&[0; 6]); // Ethernet padding is not payload
        expect(parse(linktype::ETHERNET, &eth), "10.0.0.1:40000", data);

        let mut vlan = vec![0; 12];
        vlan.extend_from_slice(&[0x88, 0xa8, 0, 5, 0x81, 0x00, 0, 7, 0x08, 0x00]);
        vlan.extend_from_slice(&ip);
        expect(parse(linktype::ETHERNET, &vlan), "10.0.0.1:40000", data);

        let mut sll = vec![0; 14];
        sll.extend_from_slice(&[0x08, 0x00]);
        sll.extend_from_slice(&ip);
        expect(parse(linktype::LINUX_SLL, &sll), "10.0.0.1:40000", data);

        let mut sll2 = vec![0x08, 0x00];
        sll2.extend_from_slice(&[0; 18]);
        sll2.extend_from_slice(&ip);
        expect(parse(linktype::LINUX_SLL2, &sll2), "10.0.0.1:40000", data);

        expect(parse(linktype::RAW, &ip), "10.0.0.1:40000", data);
        expect(parse(linktype::IPV4, &ip), "10.0.0.1:40000", data);

        let mut null = vec![2, 0, 0, 0];
        null.extend_from_slice(&ip);
        expect(parse(linktype::NULL, &null), "10.0.0.1:40000", data);
        let mut lo = vec![0, 0, 0, 2];
        lo.extend_from_slice(&ip);
        expect(parse(linktype::LOOP, &lo), "10.0.0.1:40000", data);

        let ip6 = ipv6_tcp(data);
        expect(parse(linktype::RAW, &ip6), "[::1]:40000", data);
        let mut null6 = vec![30, 0, 0, 0];
        null6.extend_from_slice(&ip6);
        expect(parse(linktype::NULL, &null6), "[::1]:40000", data);
        let mut eth6 = vec![0; 12];
        eth6.extend_from_slice(&[0x86, 0xdd]);
        eth6.extend_from_slice(&ip6);
        expect(parse(linktype::ETHERNET, &eth6), "[::1]:40000", data);
    }

    #[test]
    fn snap_length_cut_is_reported_as_missing() {
        let ip = ipv4_tcp(&[1; 100]);
        let Parsed::Tcp(s) = parse(linktype::RAW, &ip[..90]) else {
            panic!()
        };
        assert_eq!((s.payload.len(), s.missing), (50, 50));
    }

    #[test]
    fn every_truncation_is_handled() {
        let ip = ipv4_tcp(&[1; 8]);
        let mut eth = vec![0; 12];
        eth.extend_from_slice(&[0x81, 0x00, 0, 1, 0x08, 0x00]);
        eth.extend_from_slice(&ip);
        for n in 0..eth.len() {
            for lt in [
                linktype::ETHERNET,
                linktype::LINUX_SLL,
                linktype::LINUX_SLL2,
                linktype::NULL,
                linktype::RAW,
                linktype::IPV6,
            ] {
                let _ = parse(lt, &eth[..n]);
                let _ = parse(lt, &ip[..n.min(ip.len())]);
            }
        }
        assert!(matches!(
            parse(linktype::RAW, &ip[..30]),
            Parsed::Unreadable(_)
        ));
    }

    #[test]
    fn ipv6_extension_headers_and_snap_length() {
        let data = [9u8; 20];
        let plain = ipv6_tcp(&data);
        // A hop-by-hop header (8 bytes: next header TCP, length 0, PadN) before TCP.
        let mut ext = plain[..40].to_vec();
        ext[6] = 0;
        let len = u16::from_be_bytes([plain[4], plain[5]]) + 8;
        ext[4..6].copy_from_slice(&len.to_be_bytes());
        ext.extend_from_slice(&[6, 0, 1, 4, 0, 0, 0, 0]);
        ext.extend_from_slice(&plain[40..]);
        expect(parse(linktype::IPV6, &ext), "[::1]:40000", &data);
        let Parsed::Tcp(s) = parse(linktype::IPV6, &ext[..ext.len() - 5]) else {
            panic!()
        };
        assert_eq!((s.payload.len(), s.missing), (15, 5));
    }

    #[test]
    fn fragments_and_other_protocols() {
        let mut frag = ipv4_tcp(&[1; 8]);
        frag[6] = 0x20; // more fragments
        assert!(
            matches!(parse(linktype::RAW, &frag), Parsed::Unreadable(m) if m.contains("fragment"))
        );
        let mut udp = ipv4_tcp(&[1; 8]);
        udp[9] = 17;
        assert_eq!(parse(linktype::RAW, &udp), Parsed::Other);
        assert!(matches!(parse(147, &udp), Parsed::Unreadable(_)));
    }
}
