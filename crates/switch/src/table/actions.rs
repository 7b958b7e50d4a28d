//! Actions on a frame: a copy-on-write buffer (the received bytes are read as they are
//! until an action writes; then they are copied once into a scratch buffer with
//! headroom for pushed tags), and the field writes with their checksum fixes.
//!
//! Checksums are updated incrementally (RFC 1624: `HC' = ~(~HC + ~m + m')`): the IPv4
//! header checksum for addresses, TOS and TTL; TCP and UDP (and ICMPv6) checksums for
//! addresses (their pseudo-header) and ports. A UDP checksum of zero (none, IPv4) is
//! left zero. SCTP's CRC32c is not recomputed after a port is set.

use std::net::{Ipv4Addr, Ipv6Addr};

use openflow::ofctl::SetField;

/// Bytes before the frame in the scratch buffer: room for this many bytes of pushed
/// tags (4 each).
pub const HEADROOM: usize = 64;
/// The largest frame the scratch buffer holds; an action on a longer frame is not
/// applied (the frame goes on unchanged).
pub const MAX_FRAME: usize = 65535;

/// A scratch buffer for one frame in flight.
pub fn scratch() -> Vec<u8> {
    vec![0; HEADROOM + MAX_FRAME + 8]
}

/// A frame being processed: the received bytes until the first write, then a copy in
/// `buf[start..end]`.
pub struct Frame<'a> {
    orig: &'a [u8],
    buf: &'a mut [u8],
    start: usize,
    end: usize,
    owned: bool,
    /// Counts writes, so the pipeline knows when to rebuild the key.
    generation: u32,
}

const ETH_VLAN: [u16; 3] = [0x8100, 0x88a8, 0x9100];

impl<'a> Frame<'a> {
    #[inline]
    pub fn new(orig: &'a [u8], buf: &'a mut [u8]) -> Frame<'a> {
        Frame {
            orig,
            buf,
            start: 0,
            end: 0,
            owned: false,
            generation: 0,
        }
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        if self.owned {
            &self.buf[self.start..self.end]
        } else {
            self.orig
        }
    }

    /// How many writes the frame has had.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The frame, writable (copied into the scratch buffer on the first call).
    fn make_mut(&mut self) -> Option<&mut [u8]> {
        self.generation = self.generation.wrapping_add(1);
        if !self.owned {
            if self.orig.len() > MAX_FRAME || self.buf.len() < HEADROOM + self.orig.len() {
                return None;
            }
            self.start = HEADROOM;
            self.end = HEADROOM + self.orig.len();
            self.buf[self.start..self.end].copy_from_slice(self.orig);
            self.owned = true;
        }
        Some(&mut self.buf[self.start..self.end])
    }

    fn outer_vlan(&self) -> Option<u16> {
        let b = self.bytes();
        if b.len() >= 18 && ETH_VLAN.contains(&be16(b, 12)) {
            Some(be16(b, 14))
        } else {
            None
        }
    }

    /// Pushes an 802.1Q tag with `tpid` and `tci` after the MAC addresses.
    pub fn push_vlan(&mut self, tpid: u16, tci: u16) {
        if self.bytes().len() < 12 || self.make_mut().is_none() {
            return;
        }
        if self.start < 4 {
            return;
        }
        self.buf
            .copy_within(self.start..self.start + 12, self.start - 4);
        self.start -= 4;
        let s = self.start;
        self.buf[s + 12..s + 14].copy_from_slice(&tpid.to_be_bytes());
        self.buf[s + 14..s + 16].copy_from_slice(&tci.to_be_bytes());
    }

    /// Removes the outer tag, if any.
    pub fn pop_vlan(&mut self) {
        if self.outer_vlan().is_none() || self.make_mut().is_none() {
            return;
        }
        self.buf
            .copy_within(self.start..self.start + 12, self.start + 4);
        self.start += 4;
    }

    /// 1.3 push-VLAN: the new tag copies the outer tag's TCI, or is 0 (spec 1.3.5 §7.2.5).
    pub fn push_vlan_13(&mut self, tpid: u16) {
        let tci = self.outer_vlan().unwrap_or(0);
        self.push_vlan(tpid, tci);
    }

    /// Decrements the IPv4 TTL or IPv6 hop limit. False when it was 0 or 1 (the frame
    /// is then dropped, as Open vSwitch does).
    pub fn dec_ttl(&mut self) -> bool {
        let Some(l) = Layers::of(self.bytes()) else {
            return true;
        };
        let Some(b) = self.make_mut() else {
            return true;
        };
        match l.ip {
            Ip::V4 => {
                let ttl = b[l.l3 + 8];
                if ttl <= 1 {
                    return false;
                }
                let old = be16(b, l.l3 + 8);
                b[l.l3 + 8] = ttl - 1;
                let new = be16(b, l.l3 + 8);
                fix16(b, l.l3 + 10, old, new, false);
                true
            }
            Ip::V6 => {
                let hl = b[l.l3 + 7];
                if hl <= 1 {
                    return false;
                }
                b[l.l3 + 7] = hl - 1;
                true
            }
            Ip::None => true,
        }
    }

    /// Writes a field. `v10`: 1.0's SET_VLAN_VID / SET_VLAN_PCP, which tag an untagged
    /// frame (1.3's set-field leaves it alone).
    pub fn set_field(&mut self, f: &SetField, v10: bool) {
        match *f {
            SetField::EthSrc(m) => self.write(6, &m.0),
            SetField::EthDst(m) => self.write(0, &m.0),
            SetField::VlanVid(vid) => match self.outer_vlan() {
                Some(tci) => self.write(14, &((tci & 0xf000) | (vid & 0x0fff)).to_be_bytes()),
                None if v10 => self.push_vlan(0x8100, vid & 0x0fff),
                None => {}
            },
            SetField::VlanPcp(pcp) => match self.outer_vlan() {
                Some(tci) => {
                    let tci = (tci & 0x1fff) | (u16::from(pcp & 7) << 13);
                    self.write(14, &tci.to_be_bytes())
                }
                None if v10 => self.push_vlan(0x8100, u16::from(pcp & 7) << 13),
                None => {}
            },
            SetField::Ipv4Src(a) => self.set_ipv4(12, a),
            SetField::Ipv4Dst(a) => self.set_ipv4(16, a),
            SetField::IpDscp(d) => self.set_tos(0x03, d << 2),
            SetField::IpEcn(e) => self.set_tos(0xfc, e & 3),
            SetField::TcpSrc(p) => self.set_port(6, 0, p),
            SetField::TcpDst(p) => self.set_port(6, 2, p),
            SetField::UdpSrc(p) => self.set_port(17, 0, p),
            SetField::UdpDst(p) => self.set_port(17, 2, p),
            SetField::SctpSrc(p) => self.set_port(132, 0, p),
            SetField::SctpDst(p) => self.set_port(132, 2, p),
            SetField::Ipv6Src(a) => self.set_ipv6(8, a),
            SetField::Ipv6Dst(a) => self.set_ipv6(24, a),
            SetField::Ipv6Label(l) => {
                if let Some(Layers { ip: Ip::V6, l3, .. }) = Layers::of(self.bytes()) {
                    let b = self.bytes();
                    let w = u32::from_be_bytes([b[l3], b[l3 + 1], b[l3 + 2], b[l3 + 3]]);
                    let w = (w & 0xfff0_0000) | (l & 0xf_ffff);
                    self.write(l3, &w.to_be_bytes());
                }
            }
            SetField::ArpOp(op) => self.set_arp(6, &op.to_be_bytes()),
            SetField::ArpSha(m) => self.set_arp(8, &m.0),
            SetField::ArpSpa(a) => self.set_arp(14, &a.octets()),
            SetField::ArpTha(m) => self.set_arp(18, &m.0),
            SetField::ArpTpa(a) => self.set_arp(24, &a.octets()),
        }
    }

    /// Writes `bytes` at `at` if the frame is long enough.
    fn write(&mut self, at: usize, bytes: &[u8]) {
        if self.bytes().len() < at + bytes.len() {
            return;
        }
        if let Some(b) = self.make_mut() {
            b[at..at + bytes.len()].copy_from_slice(bytes);
        }
    }

    fn set_arp(&mut self, off: usize, bytes: &[u8]) {
        if let Some(l) = Layers::of(self.bytes()) {
            if l.eth_type == 0x0806 && l.l3 + 28 <= self.bytes().len() {
                self.write(l.l3 + off, bytes);
            }
        }
    }

    fn set_ipv4(&mut self, off: usize, a: Ipv4Addr) {
        let Some(l) = Layers::of(self.bytes()) else {
            return;
        };
        if l.ip != Ip::V4 {
            return;
        }
        let Some(b) = self.make_mut() else {
            return;
        };
        let at = l.l3 + off;
        let old = [be16(b, at), be16(b, at + 2)];
        b[at..at + 4].copy_from_slice(&a.octets());
        let new = [be16(b, at), be16(b, at + 2)];
        for k in 0..2 {
            fix16(b, l.l3 + 10, old[k], new[k], false);
            if let Some((csum, udp)) = l.l4_csum_pseudo() {
                fix16(b, csum, old[k], new[k], udp);
            }
        }
    }

    fn set_ipv6(&mut self, off: usize, a: Ipv6Addr) {
        let Some(l) = Layers::of(self.bytes()) else {
            return;
        };
        if l.ip != Ip::V6 {
            return;
        }
        let Some(b) = self.make_mut() else {
            return;
        };
        let at = l.l3 + off;
        let mut old = [0u16; 8];
        for (k, o) in old.iter_mut().enumerate() {
            *o = be16(b, at + 2 * k);
        }
        b[at..at + 16].copy_from_slice(&a.octets());
        if let Some((csum, udp)) = l.l4_csum_pseudo() {
            for (k, o) in old.iter().enumerate() {
                let n = be16(b, at + 2 * k);
                fix16(b, csum, *o, n, udp);
            }
        }
    }

    /// Sets the TOS/traffic-class bits outside `keep` to `bits`.
    fn set_tos(&mut self, keep: u8, bits: u8) {
        let Some(l) = Layers::of(self.bytes()) else {
            return;
        };
        let Some(b) = self.make_mut() else {
            return;
        };
        match l.ip {
            Ip::V4 => {
                let old = be16(b, l.l3);
                b[l.l3 + 1] = (b[l.l3 + 1] & keep) | (bits & !keep);
                let new = be16(b, l.l3);
                fix16(b, l.l3 + 10, old, new, false);
            }
            Ip::V6 => {
                // The traffic class straddles bytes 0 and 1.
                let w = be16(b, l.l3);
                let tc = ((w >> 4) & 0xff) as u8;
                let tc = (tc & keep) | (bits & !keep);
                let w = (w & 0xf00f) | (u16::from(tc) << 4);
                b[l.l3..l.l3 + 2].copy_from_slice(&w.to_be_bytes());
            }
            Ip::None => {}
        }
    }

    fn set_port(&mut self, proto: u8, off: usize, port: u16) {
        let Some(l) = Layers::of(self.bytes()) else {
            return;
        };
        let Some(l4) = l.l4 else {
            return;
        };
        if l.proto != proto || l4 + off + 2 > self.bytes().len() {
            return;
        }
        let Some(b) = self.make_mut() else {
            return;
        };
        let old = be16(b, l4 + off);
        b[l4 + off..l4 + off + 2].copy_from_slice(&port.to_be_bytes());
        if let Some((csum, udp)) = l.l4_csum() {
            fix16(b, csum, old, port, udp);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ip {
    None,
    V4,
    V6,
}

/// Where a frame's headers are.
#[derive(Debug, Clone, Copy)]
struct Layers {
    eth_type: u16,
    l3: usize,
    ip: Ip,
    proto: u8,
    /// The transport header, when it is in the frame (not in a later fragment).
    l4: Option<usize>,
    len: usize,
}

impl Layers {
    fn of(b: &[u8]) -> Option<Layers> {
        if b.len() < 14 {
            return None;
        }
        let mut l3 = 12;
        let mut t = be16(b, 12);
        while ETH_VLAN.contains(&t) && b.len() >= l3 + 8 {
            l3 += 4;
            t = be16(b, l3);
        }
        l3 += 2;
        let mut l = Layers {
            eth_type: t,
            l3,
            ip: Ip::None,
            proto: 0,
            l4: None,
            len: b.len(),
        };
        match t {
            0x0800 if b.len() >= l3 + 20 && b[l3] >> 4 == 4 => {
                let ihl = usize::from(b[l3] & 0x0f) * 4;
                if ihl < 20 || b.len() < l3 + ihl {
                    return Some(l);
                }
                l.ip = Ip::V4;
                l.proto = b[l3 + 9];
                let frag_off = be16(b, l3 + 6) & 0x1fff;
                if frag_off == 0 {
                    l.l4 = Some(l3 + ihl);
                }
            }
            0x86dd if b.len() >= l3 + 40 && b[l3] >> 4 == 6 => {
                l.ip = Ip::V6;
                l.proto = b[l3 + 6];
                // Transport headers right after the fixed header only (extension
                // headers are not walked for writes).
                if matches!(l.proto, 6 | 17 | 58 | 132) {
                    l.l4 = Some(l3 + 40);
                }
            }
            _ => {}
        }
        Some(l)
    }

    /// The transport checksum's offset and whether it is UDP's (0 = none), for a
    /// protocol whose checksum covers ports.
    fn l4_csum(&self) -> Option<(usize, bool)> {
        let l4 = self.l4?;
        let (off, udp) = match self.proto {
            6 => (16, false),
            17 => (6, true),
            _ => return None,
        };
        (l4 + off + 2 <= self.len).then_some((l4 + off, udp))
    }

    /// As `l4_csum`, for checksums that cover the IP addresses (ICMPv6 too).
    fn l4_csum_pseudo(&self) -> Option<(usize, bool)> {
        if self.ip == Ip::V6 && self.proto == 58 {
            let l4 = self.l4?;
            return (l4 + 4 <= self.len).then_some((l4 + 2, false));
        }
        self.l4_csum()
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Updates the checksum at `at` for a 16-bit word of its data going from `old` to
/// `new` (RFC 1624 eqn. 3). `udp`: a zero checksum means none and stays zero, and a
/// computed zero is sent as 0xffff.
fn fix16(b: &mut [u8], at: usize, old: u16, new: u16, udp: bool) {
    let hc = be16(b, at);
    if udp && hc == 0 {
        return;
    }
    let mut sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let mut c = !(sum as u16);
    if udp && c == 0 {
        c = 0xffff;
    }
    b[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// 1.3's action set: at most one action of each kind, applied at the end of the
/// pipeline in the spec's order (spec 1.3.5 §5.10): pop, push-VLAN, dec-TTL, the
/// set-fields, queue, output. Fixed size: no allocation.
#[derive(Debug, Clone, Copy, Default)]
pub struct ActionSet {
    pub pop_vlan: bool,
    pub push_vlan: Option<u16>,
    pub dec_ttl: bool,
    pub sets: [Option<SetField>; SET_KINDS],
    pub queue: Option<u32>,
    /// An `Output` or `Controller` action.
    pub output: Option<openflow::ofctl::FlowAction>,
    /// A group action (takes precedence over `output`).
    pub group: Option<u32>,
}

/// How many kinds of set-field there are.
pub const SET_KINDS: usize = 22;

/// The kind of a set-field (its slot in the action set).
pub fn set_kind(f: &SetField) -> usize {
    match f {
        SetField::EthSrc(_) => 0,
        SetField::EthDst(_) => 1,
        SetField::VlanVid(_) => 2,
        SetField::VlanPcp(_) => 3,
        SetField::Ipv4Src(_) => 4,
        SetField::Ipv4Dst(_) => 5,
        SetField::IpDscp(_) => 6,
        SetField::IpEcn(_) => 7,
        SetField::TcpSrc(_) => 8,
        SetField::TcpDst(_) => 9,
        SetField::UdpSrc(_) => 10,
        SetField::UdpDst(_) => 11,
        SetField::SctpSrc(_) => 12,
        SetField::SctpDst(_) => 13,
        SetField::Ipv6Src(_) => 14,
        SetField::Ipv6Dst(_) => 15,
        SetField::Ipv6Label(_) => 16,
        SetField::ArpOp(_) => 17,
        SetField::ArpSpa(_) => 18,
        SetField::ArpTpa(_) => 19,
        SetField::ArpSha(_) => 20,
        SetField::ArpTha(_) => 21,
    }
}
