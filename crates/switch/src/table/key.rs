//! The packed lookup key: every field a flow can match, in twelve 64-bit words, so a
//! match is "`key & mask == value`" word by word and a hash covers only the words a
//! mask uses.
//!
//! ```text
//! word  bits 63..48        47..32          31..0
//! 0     vlan tci           eth_type        in_port
//! 1     dscp | pcp         eth_dst (48)
//! 2     ecn | ip_proto     eth_src (48)
//! 3     ipv4_src (32)                      ipv4_dst (32)
//! 4     tp_src             tp_dst          ipv6_label (20)
//! 5     metadata (1.3)
//! 6-7   ipv6_src           8-9 ipv6_dst    10 arp_sha   11 arp_tha
//! ```
//!
//! The VLAN TCI is 1.3's `VLAN_VID` (`0x1000 | vid` when tagged, 0 when not); the PCP
//! has its own byte. As in [`openflow::ofctl::FlowMatch`], ARP's opcode and protocol
//! addresses share `ip_proto` and the IPv4 words, and ICMP's type and code the
//! transport ports.

use std::net::{Ipv4Addr, Ipv6Addr};

use openflow::model::PortNo;
use openflow::ofctl::{FlowMatch, Masked, VlanMatch};
use openflow::MacAddr;
use packet::flow::L4Key;
use packet::FlowKey;

/// Words in a key.
pub const WORDS: usize = 12;

/// A frame's fields (or a flow's values, or a mask) packed in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Key(pub [u64; WORDS]);

pub(crate) const W_PORT: usize = 0;
pub(crate) const W_DST: usize = 1;
pub(crate) const W_SRC: usize = 2;
pub(crate) const W_V4: usize = 3;
pub(crate) const W_TP: usize = 4;
pub(crate) const W_META: usize = 5;
pub(crate) const W_V6SRC: usize = 6;
pub(crate) const W_V6DST: usize = 8;
pub(crate) const W_SHA: usize = 10;
pub(crate) const W_THA: usize = 11;

const MAC: u64 = 0xffff_ffff_ffff;
const TCI_PRESENT: u64 = 0x1000;

/// The dl_type 1.0 gives 802.3 frames (spec 1.0.0 §5.2.3); 1.3 uses it too, as Open
/// vSwitch does.
pub const DL_TYPE_NOT_ETH_TYPE: u16 = packet::of_match::DL_TYPE_NOT_ETH_TYPE;

fn mac(m: MacAddr) -> u64 {
    let b = m.0;
    u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]])
}

fn v6(a: Ipv6Addr) -> (u64, u64) {
    let n = u128::from(a);
    ((n >> 64) as u64, n as u64)
}

/// A port number as a key holds it: 1.3's 32-bit value (1.0's reserved ports widened).
pub fn port_value(p: PortNo) -> u32 {
    match p {
        PortNo::Physical(p) => p,
        PortNo::InPort => 0xffff_fff8,
        PortNo::Table => 0xffff_fff9,
        PortNo::Normal => 0xffff_fffa,
        PortNo::Flood => 0xffff_fffb,
        PortNo::All => 0xffff_fffc,
        PortNo::Controller => 0xffff_fffd,
        PortNo::Local => 0xffff_fffe,
        PortNo::Any => 0xffff_ffff,
    }
}

impl Key {
    /// The key of `frame` arriving on `in_port`, metadata 0. Fields the frame does not
    /// have (or that were cut short) are 0. No allocation.
    pub fn from_frame(frame: &[u8], in_port: u32) -> Key {
        let mut k = Key::default();
        k.0[W_PORT] = u64::from(in_port);
        let Ok(f) = FlowKey::extract(frame) else {
            return k;
        };
        k.fill(&f);
        k
    }

    /// Fills the frame fields (all but in_port and metadata) from a parsed frame.
    pub fn fill(&mut self, f: &FlowKey) {
        let w = &mut self.0;
        let keep_port = w[W_PORT] & 0xffff_ffff;
        let meta = w[W_META];
        *w = [0; WORDS];
        w[W_META] = meta;
        let eth_type = if f.eth_type < 0x0600 {
            DL_TYPE_NOT_ETH_TYPE
        } else {
            f.eth_type
        };
        let (tci, pcp) = match f.vlan {
            Some(v) => (TCI_PRESENT | u64::from(v.vid), u64::from(v.pcp)),
            None => (0, 0),
        };
        w[W_PORT] = keep_port | u64::from(eth_type) << 32 | tci << 48;
        w[W_DST] = mac(f.eth_dst) | pcp << 48;
        w[W_SRC] = mac(f.eth_src);
        if let Some(ip) = f.ip {
            w[W_DST] |= u64::from(ip.dscp) << 56;
            w[W_SRC] |= u64::from(ip.proto) << 48 | u64::from(ip.ecn) << 56;
        }
        if let Some(a) = f.ipv4 {
            w[W_V4] = u64::from(u32::from(a.src)) << 32 | u64::from(u32::from(a.dst));
        }
        if let Some(a) = f.ipv6 {
            (w[W_V6SRC], w[W_V6SRC + 1]) = v6(a.src);
            (w[W_V6DST], w[W_V6DST + 1]) = v6(a.dst);
            w[W_TP] |= u64::from(a.flow_label & 0xf_ffff);
        }
        if let Some(a) = f.arp {
            w[W_SRC] |= u64::from(a.op as u8) << 48;
            w[W_V4] = u64::from(u32::from(a.spa)) << 32 | u64::from(u32::from(a.tpa));
            w[W_SHA] = mac(a.sha);
            w[W_THA] = mac(a.tha);
        }
        let ports = match f.l4 {
            Some(
                L4Key::Tcp { src, dst, .. } | L4Key::Udp { src, dst } | L4Key::Sctp { src, dst },
            ) => Some((src, dst)),
            Some(L4Key::Icmpv4 { icmp_type, code } | L4Key::Icmpv6 { icmp_type, code }) => {
                Some((icmp_type.into(), code.into()))
            }
            None => None,
        };
        if let Some((s, d)) = ports {
            w[W_TP] |= u64::from(s) << 48 | u64::from(d) << 32;
        }
    }

    pub fn in_port(&self) -> u32 {
        self.0[W_PORT] as u32
    }

    pub fn set_metadata(&mut self, m: u64) {
        self.0[W_META] = m;
    }

    pub fn metadata(&self) -> u64 {
        self.0[W_META]
    }

    /// `self & mask`.
    pub fn masked(&self, mask: &Key) -> Key {
        let mut k = *self;
        for (a, m) in k.0.iter_mut().zip(mask.0.iter()) {
            *a &= m;
        }
        k
    }

    /// Whether this key, masked, equals `value` (a flow's value, already masked).
    #[inline]
    pub fn matches(&self, value: &Key, mask: &Key) -> bool {
        let mut diff = 0;
        for i in 0..WORDS {
            diff |= (self.0[i] & mask.0[i]) ^ value.0[i];
        }
        diff == 0
    }

    /// A bit set of the words that are not zero (for a mask: the words a match uses).
    pub fn used_words(&self) -> u16 {
        let mut b = 0;
        for (i, w) in self.0.iter().enumerate() {
            if *w != 0 {
                b |= 1 << i;
            }
        }
        b
    }
}

/// A match as a value and a mask (value already masked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MatchKey {
    pub value: Key,
    pub mask: Key,
}

impl MatchKey {
    /// Packs a flow's match. The PCP of a match on untagged frames is made exact (0,
    /// what an untagged frame's key holds), so that a 1.0 flow built from an untagged
    /// frame is an exact-match flow.
    pub fn from_match(m: &FlowMatch) -> MatchKey {
        let mut mk = MatchKey::default();
        let mut put = |word: usize, shift: u32, width: u64, value: u64, mask: u64| {
            let field = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            mk.value.0[word] |= (value & mask & field) << shift;
            mk.mask.0[word] |= (mask & field) << shift;
        };
        if let Some(p) = m.in_port {
            put(W_PORT, 0, 32, port_value(p).into(), u64::MAX);
        }
        if let Some(t) = m.eth_type {
            put(W_PORT, 32, 16, t.into(), u64::MAX);
        }
        match m.vlan {
            Some(VlanMatch::Untagged) => {
                put(W_PORT, 48, 16, 0, 0x1fff);
                put(W_DST, 48, 8, 0, 0x07);
            }
            Some(VlanMatch::AnyTagged) => put(W_PORT, 48, 16, TCI_PRESENT, TCI_PRESENT),
            Some(VlanMatch::Id(v)) => put(W_PORT, 48, 16, TCI_PRESENT | u64::from(v), 0x1fff),
            None => {}
        }
        if let Some(p) = m.vlan_pcp {
            put(W_DST, 48, 8, p.into(), 0x07);
        }
        let macm = |x: Masked<MacAddr>| (mac(x.value), x.mask.map_or(MAC, mac));
        if let Some(x) = m.eth_dst {
            let (v, k) = macm(x);
            put(W_DST, 0, 48, v, k);
        }
        if let Some(x) = m.eth_src {
            let (v, k) = macm(x);
            put(W_SRC, 0, 48, v, k);
        }
        if let Some(d) = m.ip_dscp {
            put(W_DST, 56, 8, d.into(), 0x3f);
        }
        if let Some(e) = m.ip_ecn {
            put(W_SRC, 56, 8, e.into(), 0x03);
        }
        if let Some(p) = m.ip_proto {
            put(W_SRC, 48, 8, p.into(), 0xff);
        }
        let v4 = |x: Masked<Ipv4Addr>| {
            (
                u64::from(u32::from(x.value)),
                x.mask.map_or(0xffff_ffff, |m| u64::from(u32::from(m))),
            )
        };
        if let Some(x) = m.ipv4_src {
            let (v, k) = v4(x);
            put(W_V4, 32, 32, v, k);
        }
        if let Some(x) = m.ipv4_dst {
            let (v, k) = v4(x);
            put(W_V4, 0, 32, v, k);
        }
        if let Some(p) = m.tp_src {
            put(W_TP, 48, 16, p.into(), 0xffff);
        }
        if let Some(p) = m.tp_dst {
            put(W_TP, 32, 16, p.into(), 0xffff);
        }
        if let Some(l) = m.ipv6_label {
            put(W_TP, 0, 20, l.into(), 0xf_ffff);
        }
        if let Some(x) = m.metadata {
            put(W_META, 0, 64, x.value, x.mask.unwrap_or(u64::MAX));
        }
        let v6m = |x: Masked<Ipv6Addr>| (v6(x.value), x.mask.map_or((u64::MAX, u64::MAX), v6));
        if let Some(x) = m.ipv6_src {
            let ((vh, vl), (mh, ml)) = v6m(x);
            put(W_V6SRC, 0, 64, vh, mh);
            put(W_V6SRC + 1, 0, 64, vl, ml);
        }
        if let Some(x) = m.ipv6_dst {
            let ((vh, vl), (mh, ml)) = v6m(x);
            put(W_V6DST, 0, 64, vh, mh);
            put(W_V6DST + 1, 0, 64, vl, ml);
        }
        if let Some(a) = m.arp_sha {
            put(W_SHA, 0, 48, mac(a), MAC);
        }
        if let Some(a) = m.arp_tha {
            put(W_THA, 0, 48, mac(a), MAC);
        }
        mk
    }

    /// Every frame this match takes is also taken by `wide` (a non-strict request's
    /// selection: `self` is at least as specific as `wide`).
    pub fn covered_by(&self, wide: &MatchKey) -> bool {
        (0..WORDS).all(|i| {
            wide.mask.0[i] & !self.mask.0[i] == 0
                && self.value.0[i] & wide.mask.0[i] == wide.value.0[i]
        })
    }

    /// Some frame matches both.
    pub fn overlaps(&self, other: &MatchKey) -> bool {
        (0..WORDS)
            .all(|i| (self.value.0[i] ^ other.value.0[i]) & self.mask.0[i] & other.mask.0[i] == 0)
    }

    /// No field is matched (the 1.3 table-miss flow's match).
    pub fn is_catch_all(&self) -> bool {
        self.mask == Key::default()
    }
}

/// The mask of a 1.0 flow with no wildcards: the twelve 1.0 fields, whole.
pub fn exact_v10_mask() -> Key {
    let mut k = Key::default();
    k.0[W_PORT] = 0x1fff_ffff_ffff_ffff;
    k.0[W_DST] = 0x3f07_0000_0000_0000 | MAC;
    k.0[W_SRC] = 0x00ff_0000_0000_0000 | MAC;
    k.0[W_V4] = u64::MAX;
    k.0[W_TP] = 0xffff_ffff_0000_0000;
    k
}
