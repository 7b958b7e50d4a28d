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
    ///
    /// The common frames (untagged or singly tagged, IPv4 with TCP, UDP, SCTP or ICMP,
    /// or an EtherType with nothing matched above it) are read here in one short pass;
    /// the rest (IPv6 and its extension headers, ARP, MPLS, stacked or cut tags) go
    /// through [`FlowKey::extract`]. Both give the same key (a property test checks it
    /// on arbitrary bytes).
    #[inline]
    pub fn from_frame(frame: &[u8], in_port: u32) -> Key {
        match Key::fast(frame, in_port) {
            Some(k) => k,
            None => Key::from_frame_full(frame, in_port),
        }
    }

    /// [`Key::from_frame`] through [`FlowKey::extract`] for every frame.
    pub fn from_frame_full(frame: &[u8], in_port: u32) -> Key {
        let mut k = Key::default();
        k.0[W_PORT] = u64::from(in_port);
        let Ok(f) = FlowKey::extract(frame) else {
            return k;
        };
        k.fill(&f);
        k
    }

    /// The fast path of [`Key::from_frame`]; `None` for frames it leaves to
    /// [`FlowKey::extract`].
    #[inline(always)]
    fn fast(b: &[u8], in_port: u32) -> Option<Key> {
        if b.len() < 14 {
            return None;
        }
        let be16 = |at: usize| u16::from_be_bytes([b[at], b[at + 1]]);
        let mac_at = |at: usize| {
            u64::from_be_bytes([
                0,
                0,
                b[at],
                b[at + 1],
                b[at + 2],
                b[at + 3],
                b[at + 4],
                b[at + 5],
            ])
        };
        let is_tag = |t: u16| matches!(t, 0x8100 | 0x88a8 | 0x9100);
        let mut t = be16(12);
        let mut l3 = 14;
        let (mut tci, mut pcp) = (0u64, 0u64);
        if is_tag(t) {
            if b.len() < 18 {
                return None;
            }
            let tag = be16(14);
            tci = TCI_PRESENT | u64::from(tag & 0x0fff);
            pcp = u64::from(tag >> 13);
            t = be16(16);
            l3 = 18;
            if is_tag(t) {
                return None;
            }
        }
        if matches!(t, 0x86dd | 0x0806 | 0x8847 | 0x8848) {
            return None;
        }
        let eth_type = if t < 0x0600 { DL_TYPE_NOT_ETH_TYPE } else { t };
        let mut w = [0u64; WORDS];
        w[W_PORT] = u64::from(in_port) | u64::from(eth_type) << 32 | tci << 48;
        w[W_DST] = mac_at(0) | pcp << 48;
        w[W_SRC] = mac_at(6);
        if t != 0x0800 {
            return Some(Key(w));
        }
        // IPv4, as FlowKey reads it: a header of at least 20 bytes, all present, a
        // total length covering it, version 4; otherwise no IP fields at all.
        let ip = &b[l3..];
        if ip.len() < 20 {
            return Some(Key(w));
        }
        let hl = usize::from(ip[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        if hl < 20 || total < hl || ip.len() < hl || ip[0] >> 4 != 4 {
            return Some(Key(w));
        }
        let proto = ip[9];
        w[W_DST] |= u64::from(ip[1] >> 2) << 56;
        w[W_SRC] |= u64::from(proto) << 48 | u64::from(ip[1] & 3) << 56;
        w[W_V4] = u64::from(u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]])) << 32
            | u64::from(u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]));
        if u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0 {
            // A later fragment: no transport header.
            return Some(Key(w));
        }
        let l4 = &ip[hl..total.min(ip.len())];
        let need = match proto {
            6 => 20,
            17 => 8,
            132 => 12,
            1 => 4,
            _ => return Some(Key(w)),
        };
        if l4.len() >= need {
            let (s, d) = if proto == 1 {
                (u64::from(l4[0]), u64::from(l4[1]))
            } else {
                (
                    u64::from(u16::from_be_bytes([l4[0], l4[1]])),
                    u64::from(u16::from_be_bytes([l4[2], l4[3]])),
                )
            };
            w[W_TP] = s << 48 | d << 32;
        }
        Some(Key(w))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testutil::{frame, Ip4};
    use proptest::prelude::*;

    fn frames() -> impl Strategy<Value = Vec<u8>> {
        let ip = (
            any::<[u8; 4]>(),
            any::<[u8; 4]>(),
            prop_oneof![
                Just(1u8),
                Just(6),
                Just(17),
                Just(132),
                Just(50),
                any::<u8>()
            ],
            any::<u16>(),
            any::<u16>(),
            any::<u8>(),
        );
        let valid = (
            any::<[u8; 6]>(),
            any::<[u8; 6]>(),
            proptest::option::of((0u16..4096, 0u8..8)),
            ip,
        )
            .prop_map(|(s, d, vlan, (src, dst, proto, sport, dport, tos))| {
                frame(
                    s,
                    d,
                    vlan,
                    &Ip4 {
                        src: src.into(),
                        dst: dst.into(),
                        proto,
                        sport,
                        dport,
                        tos,
                        ttl: 9,
                    },
                )
            });
        // Valid frames cut anywhere and with bytes overwritten (lengths, versions,
        // fragment fields, EtherTypes: whatever lands there), and plain noise.
        let mangled = (
            valid.clone(),
            any::<usize>(),
            proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        )
            .prop_map(|(mut f, cut, pokes)| {
                for (at, v) in pokes {
                    let n = f.len();
                    f[at % n] = v;
                }
                let n = f.len();
                f.truncate(cut % (n + 1));
                f
            });
        // The IPv4 header's length, version and fragment fields set to edge values.
        let ip_fields = (
            valid.clone(),
            prop_oneof![
                Just(0x45u8),
                Just(0x46),
                Just(0x44),
                Just(0x55),
                Just(0x4f),
                any::<u8>()
            ],
            0usize..80,
            prop_oneof![
                Just(0u16),
                Just(0x2000),
                Just(0x1000),
                Just(0x0001),
                Just(0x4000),
                any::<u16>()
            ],
        )
            .prop_map(|(mut f, ver_ihl, total, frag)| {
                let l3 = if f[12] == 0x81 { 18 } else { 14 };
                f[l3] = ver_ihl;
                f[l3 + 2..l3 + 4].copy_from_slice(&(total as u16).to_be_bytes());
                f[l3 + 6..l3 + 8].copy_from_slice(&frag.to_be_bytes());
                f
            });
        let tagged_types = (
            any::<[u8; 12]>(),
            prop_oneof![
                Just(0x8100u16),
                Just(0x88a8),
                Just(0x0800),
                Just(0x86dd),
                Just(0x0806),
                Just(0x0400),
                Just(0x88cc)
            ],
            proptest::collection::vec(any::<u8>(), 0..80),
        )
            .prop_map(|(macs, t, rest)| {
                let mut f = macs.to_vec();
                f.extend_from_slice(&t.to_be_bytes());
                f.extend_from_slice(&rest);
                f
            });
        prop_oneof![
            valid,
            mangled,
            ip_fields,
            tagged_types,
            proptest::collection::vec(any::<u8>(), 0..100)
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn the_fast_key_is_flowkeys_key(f in frames(), port in any::<u32>()) {
            prop_assert_eq!(Key::from_frame(&f, port), Key::from_frame_full(&f, port));
        }
    }

    #[test]
    fn common_frames_take_the_fast_path() {
        let f = frame([1; 6], [2; 6], Some((5, 1)), &Ip4::default());
        assert!(Key::fast(&f, 1).is_some());
        let mut arp = f.clone();
        arp[16..18].copy_from_slice(&0x0806u16.to_be_bytes());
        assert!(Key::fast(&arp, 1).is_none());
    }
}
