//! Link-layer, IPv4/IPv6 and TCP headers: a captured frame into a TCP segment.
//!
//! A small, careful parser of just what `pharos ofp` needs (the `packet` crate's views
//! had not landed when this was written). Every length is checked before it is used;
//! a frame that is not TCP, or is damaged, is skipped with a reason. Checksums are not
//! verified: loopback captures carry offloaded (unfilled) checksums.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

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

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
/// 802.1Q, 802.1ad and the old QinQ tag types.
const ETHERTYPE_VLANS: [u16; 3] = [0x8100, 0x88a8, 0x9100];
const IPPROTO_TCP: u8 = 6;

pub const TCP_FIN: u8 = 0x01;
pub const TCP_SYN: u8 = 0x02;
pub const TCP_RST: u8 = 0x04;
pub const TCP_ACK: u8 = 0x10;

/// A TCP segment found in a frame.
#[derive(Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    /// The acknowledgement number (meaningful with [`TCP_ACK`]).
    pub ack: u32,
    /// The TCP flags byte (FIN, SYN, RST, ...).
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

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parses a frame of the given link type.
pub fn parse(linktype: i32, frame: &[u8]) -> Parsed<'_> {
    match linktype {
        linktype::ETHERNET => {
            if frame.len() < 14 {
                return Parsed::Unreadable(format!("Ethernet header needs 14 bytes, frame has {}", frame.len()));
            }
            ethertype(be16(frame, 12), &frame[14..])
        }
        linktype::LINUX_SLL => {
            if frame.len() < 16 {
                return Parsed::Unreadable(format!("Linux cooked (SLL) header needs 16 bytes, frame has {}", frame.len()));
            }
            ethertype(be16(frame, 14), &frame[16..])
        }
        linktype::LINUX_SLL2 => {
            if frame.len() < 20 {
                return Parsed::Unreadable(format!("Linux cooked (SLL2) header needs 20 bytes, frame has {}", frame.len()));
            }
            ethertype(be16(frame, 0), &frame[20..])
        }
        linktype::NULL | linktype::LOOP => {
            // A 4-byte address family, in the capturing host's byte order for NULL and
            // in network order for LOOP. AF_INET is 2 everywhere; AF_INET6 is 10 (Linux),
            // 24 (NetBSD, OpenBSD), 28 (FreeBSD), 30 (macOS).
            if frame.len() < 4 {
                return Parsed::Unreadable(format!("loopback header needs 4 bytes, frame has {}", frame.len()));
            }
            let le = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]);
            let be = be32(frame, 0);
            let family = if le < 256 { le } else { be };
            match family {
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
        other => Parsed::Unreadable(format!("link type {other} is not supported (Ethernet, Linux cooked SLL/SLL2, raw IP and BSD loopback are)")),
    }
}

/// The payload of an Ethernet-like header, after any VLAN tags.
fn ethertype(mut kind: u16, mut rest: &[u8]) -> Parsed<'_> {
    while ETHERTYPE_VLANS.contains(&kind) {
        if rest.len() < 4 {
            return Parsed::Unreadable("VLAN tag cut short".to_string());
        }
        kind = be16(rest, 2);
        rest = &rest[4..];
    }
    match kind {
        ETHERTYPE_IPV4 => ipv4(rest),
        ETHERTYPE_IPV6 => ipv6(rest),
        _ => Parsed::Other,
    }
}

fn ipv4(p: &[u8]) -> Parsed<'_> {
    if p.len() < 20 {
        return Parsed::Unreadable(format!("IPv4 header needs 20 bytes, {} present", p.len()));
    }
    if p[0] >> 4 != 4 {
        return Parsed::Unreadable(format!("IPv4 header has version {}", p[0] >> 4));
    }
    let ihl = usize::from(p[0] & 0x0f) * 4;
    let total = usize::from(be16(p, 2));
    if ihl < 20 || total < ihl || p.len() < ihl {
        return Parsed::Unreadable(format!(
            "IPv4 header length {ihl} / total length {total} are inconsistent"
        ));
    }
    if p[9] != IPPROTO_TCP {
        return Parsed::Other;
    }
    let src = Ipv4Addr::new(p[12], p[13], p[14], p[15]);
    let dst = Ipv4Addr::new(p[16], p[17], p[18], p[19]);
    let frag = be16(p, 6);
    if frag & 0x3fff != 0 {
        return Parsed::Unreadable(format!(
            "IPv4 fragment {src} -> {dst} (fragments are not reassembled)"
        ));
    }
    // Ethernet pads short frames: the IP total length says where the packet ends.
    let (packet, missing) = if p.len() >= total {
        (&p[..total], 0)
    } else {
        (p, total - p.len())
    };
    tcp(IpAddr::V4(src), IpAddr::V4(dst), &packet[ihl..], missing)
}

fn ipv6(p: &[u8]) -> Parsed<'_> {
    if p.len() < 40 {
        return Parsed::Unreadable(format!("IPv6 header needs 40 bytes, {} present", p.len()));
    }
    if p[0] >> 4 != 6 {
        return Parsed::Unreadable(format!("IPv6 header has version {}", p[0] >> 4));
    }
    let payload_len = usize::from(be16(p, 4));
    let mut octets = [0u8; 16];
    octets.copy_from_slice(&p[8..24]);
    let src = Ipv6Addr::from(octets);
    octets.copy_from_slice(&p[24..40]);
    let dst = Ipv6Addr::from(octets);
    let body = &p[40..];
    let (mut body, missing) = if body.len() >= payload_len {
        (&body[..payload_len], 0)
    } else {
        (body, payload_len - body.len())
    };
    let mut next = p[6];
    // Extension headers: hop-by-hop (0), routing (43), destination options (60), AH (51).
    loop {
        match next {
            IPPROTO_TCP => return tcp(IpAddr::V6(src), IpAddr::V6(dst), body, missing),
            0 | 43 | 60 | 51 => {
                if body.len() < 2 {
                    return Parsed::Unreadable("IPv6 extension header cut short".to_string());
                }
                let len = if next == 51 {
                    (usize::from(body[1]) + 2) * 4
                } else {
                    (usize::from(body[1]) + 1) * 8
                };
                if body.len() < len {
                    return Parsed::Unreadable("IPv6 extension header cut short".to_string());
                }
                next = body[0];
                body = &body[len..];
            }
            44 => {
                return Parsed::Unreadable(format!(
                    "IPv6 fragment {src} -> {dst} (fragments are not reassembled)"
                ))
            }
            _ => return Parsed::Other,
        }
    }
}

fn tcp(src: IpAddr, dst: IpAddr, t: &[u8], missing: usize) -> Parsed<'_> {
    if t.len() < 20 {
        return Parsed::Unreadable(format!(
            "TCP header {src} -> {dst} cut short ({} bytes)",
            t.len()
        ));
    }
    let data_offset = usize::from(t[12] >> 4) * 4;
    if data_offset < 20 || data_offset > t.len() {
        return Parsed::Unreadable(format!(
            "TCP header {src} -> {dst}: data offset {data_offset} with {} bytes present",
            t.len()
        ));
    }
    Parsed::Tcp(Segment {
        src: SocketAddr::new(src, be16(t, 0)),
        dst: SocketAddr::new(dst, be16(t, 2)),
        seq: be32(t, 4),
        ack: be32(t, 8),
        flags: t[13],
        payload: &t[data_offset..],
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
