//! Frames and a recording sink for the table's tests (and its bench and no-allocation
//! test, through `ofswitch::table::testutil`).

use std::net::Ipv4Addr;

use packet::checksum::{self, PseudoHeader};

use crate::{Egress, Sink};

/// A sink that remembers what it was given.
#[derive(Debug, Default)]
pub struct Recorder {
    pub out: Vec<(Egress, u32, Vec<u8>)>,
}

impl Sink for Recorder {
    fn emit(&mut self, egress: Egress, in_port: u32, frame: &[u8]) {
        self.out.push((egress, in_port, frame.to_vec()));
    }
}

impl Recorder {
    /// The egresses, in order.
    pub fn egresses(&self) -> Vec<Egress> {
        self.out.iter().map(|o| o.0).collect()
    }
}

/// A sink that counts (no allocation).
#[derive(Debug, Default)]
pub struct Counter {
    pub frames: u64,
    pub bytes: u64,
    pub last: Option<Egress>,
}

impl Sink for Counter {
    fn emit(&mut self, egress: Egress, _in_port: u32, frame: &[u8]) {
        self.frames += 1;
        self.bytes += frame.len() as u64;
        self.last = Some(egress);
    }
}

/// An IPv4 packet for [`frame`].
#[derive(Debug, Clone, Copy)]
pub struct Ip4 {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// 6 (TCP, with a 20-byte header) or 17 (UDP); anything else: an 8-byte payload.
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
    pub tos: u8,
    pub ttl: u8,
}

impl Default for Ip4 {
    fn default() -> Self {
        Ip4 {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            proto: 17,
            sport: 1000,
            dport: 2000,
            tos: 0,
            ttl: 64,
        }
    }
}

/// An Ethernet frame carrying `ip` with valid checksums, tagged with `vlan` (vid,
/// pcp) if given.
pub fn frame(src: [u8; 6], dst: [u8; 6], vlan: Option<(u16, u8)>, ip: &Ip4) -> Vec<u8> {
    let mut f = Vec::with_capacity(80);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    if let Some((vid, pcp)) = vlan {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&((u16::from(pcp) << 13) | vid).to_be_bytes());
    }
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let payload = b"pharos!!";
    let l4: Vec<u8> = match ip.proto {
        6 => {
            let mut t = vec![0u8; 20];
            t[0..2].copy_from_slice(&ip.sport.to_be_bytes());
            t[2..4].copy_from_slice(&ip.dport.to_be_bytes());
            t[12] = 5 << 4;
            t[13] = 0x02;
            t.extend_from_slice(payload);
            let c = checksum::transport(
                &PseudoHeader::V4 {
                    src: ip.src,
                    dst: ip.dst,
                },
                6,
                &t,
            );
            t[16..18].copy_from_slice(&c.to_be_bytes());
            t
        }
        17 => {
            let mut u = vec![0u8; 8];
            u[0..2].copy_from_slice(&ip.sport.to_be_bytes());
            u[2..4].copy_from_slice(&ip.dport.to_be_bytes());
            u[4..6].copy_from_slice(&(8 + payload.len() as u16).to_be_bytes());
            u.extend_from_slice(payload);
            let c = checksum::transport(
                &PseudoHeader::V4 {
                    src: ip.src,
                    dst: ip.dst,
                },
                17,
                &u,
            );
            u[6..8].copy_from_slice(&c.to_be_bytes());
            u
        }
        _ => payload.to_vec(),
    };
    let mut h = [0u8; 20];
    h[0] = 0x45;
    h[1] = ip.tos;
    h[2..4].copy_from_slice(&(20 + l4.len() as u16).to_be_bytes());
    h[8] = ip.ttl;
    h[9] = ip.proto;
    h[12..16].copy_from_slice(&ip.src.octets());
    h[16..20].copy_from_slice(&ip.dst.octets());
    let c = checksum::checksum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&h);
    f.extend_from_slice(&l4);
    f
}

/// A UDP frame between two MACs ending in `a` and `b` (02:00:00:00:00:xx).
pub fn udp(a: u8, b: u8) -> Vec<u8> {
    frame(
        [2, 0, 0, 0, 0, a],
        [2, 0, 0, 0, 0, b],
        None,
        &Ip4::default(),
    )
}

/// Whether the IPv4 header checksum and the TCP/UDP checksum of an untagged or
/// singly tagged frame are right.
pub fn checksums_ok(f: &[u8]) -> bool {
    let l3 = if u16::from_be_bytes([f[12], f[13]]) == 0x8100 {
        18
    } else {
        14
    };
    let ihl = usize::from(f[l3] & 0xf) * 4;
    if checksum::checksum(&f[l3..l3 + ihl]) != 0 {
        return false;
    }
    let src = Ipv4Addr::new(f[l3 + 12], f[l3 + 13], f[l3 + 14], f[l3 + 15]);
    let dst = Ipv4Addr::new(f[l3 + 16], f[l3 + 17], f[l3 + 18], f[l3 + 19]);
    let total = usize::from(u16::from_be_bytes([f[l3 + 2], f[l3 + 3]]));
    let l4 = &f[l3 + ihl..l3 + total];
    match f[l3 + 9] {
        p @ (6 | 17) => checksum::verify_transport(&PseudoHeader::V4 { src, dst }, p, l4),
        _ => true,
    }
}
