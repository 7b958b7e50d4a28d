//! `ofp_match` (spec 1.0.0 §5.2.3): the fixed 40-byte, 12-tuple match of OpenFlow 1.0.
//!
//! ```text
//! 0          4        6              12             18        20   21  22       24   25    26  28      32      36      38      40
//! | wildcards| in_port| dl_src       | dl_dst       | dl_vlan |pcp |pad| dl_type|tos |proto|pad| nw_src| nw_dst| tp_src| tp_dst|
//! ```
//!
//! The wildcard word is kept exactly as received (including bits 1.0 does not define),
//! so a match always re-encodes byte for byte. Fields whose wildcard bit is set are
//! still carried: switches and other controllers put values there, and dropping them
//! would change the bytes.

use std::fmt;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::error::DecodeResult;
use crate::types::MacAddr;
use crate::wire::{Put, Reader};

/// `ofp_flow_wildcards`: switch input port.
pub const OFPFW_IN_PORT: u32 = 1 << 0;
/// VLAN id.
pub const OFPFW_DL_VLAN: u32 = 1 << 1;
/// Ethernet source address.
pub const OFPFW_DL_SRC: u32 = 1 << 2;
/// Ethernet destination address.
pub const OFPFW_DL_DST: u32 = 1 << 3;
/// Ethernet frame type.
pub const OFPFW_DL_TYPE: u32 = 1 << 4;
/// IP protocol.
pub const OFPFW_NW_PROTO: u32 = 1 << 5;
/// TCP/UDP source port.
pub const OFPFW_TP_SRC: u32 = 1 << 6;
/// TCP/UDP destination port.
pub const OFPFW_TP_DST: u32 = 1 << 7;
/// Where the 6-bit count of wildcarded low bits of `nw_src` starts. 0 means an exact
/// match, 1 ignores the least significant bit, ..., 32 and above wildcard the address.
pub const OFPFW_NW_SRC_SHIFT: u32 = 8;
/// Width of the `nw_src` wildcard count.
pub const OFPFW_NW_SRC_BITS: u32 = 6;
/// The `nw_src` wildcard count field.
pub const OFPFW_NW_SRC_MASK: u32 = ((1 << OFPFW_NW_SRC_BITS) - 1) << OFPFW_NW_SRC_SHIFT;
/// `nw_src` entirely wildcarded.
pub const OFPFW_NW_SRC_ALL: u32 = 32 << OFPFW_NW_SRC_SHIFT;
/// Where the 6-bit count of wildcarded low bits of `nw_dst` starts.
pub const OFPFW_NW_DST_SHIFT: u32 = 14;
/// Width of the `nw_dst` wildcard count.
pub const OFPFW_NW_DST_BITS: u32 = 6;
/// The `nw_dst` wildcard count field.
pub const OFPFW_NW_DST_MASK: u32 = ((1 << OFPFW_NW_DST_BITS) - 1) << OFPFW_NW_DST_SHIFT;
/// `nw_dst` entirely wildcarded.
pub const OFPFW_NW_DST_ALL: u32 = 32 << OFPFW_NW_DST_SHIFT;
/// VLAN priority.
pub const OFPFW_DL_VLAN_PCP: u32 = 1 << 20;
/// IP ToS (DSCP field, 6 bits).
pub const OFPFW_NW_TOS: u32 = 1 << 21;
/// Wildcard all fields.
pub const OFPFW_ALL: u32 = (1 << 22) - 1;

/// `OFP_VLAN_NONE`: the `dl_vlan` value matching packets without a VLAN tag.
pub const OFP_VLAN_NONE: u16 = 0xffff;

/// `ofp_match`: a flow match with its wildcard word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Match {
    /// `OFPFW_*` bits, kept as received.
    pub wildcards: u32,
    /// Input switch port.
    pub in_port: u16,
    /// Ethernet source address.
    pub dl_src: MacAddr,
    /// Ethernet destination address.
    pub dl_dst: MacAddr,
    /// Input VLAN id ([`OFP_VLAN_NONE`] for untagged).
    pub dl_vlan: u16,
    /// Input VLAN priority.
    pub dl_vlan_pcp: u8,
    /// Ethernet frame type.
    pub dl_type: u16,
    /// IP ToS (the DSCP in the high 6 bits).
    pub nw_tos: u8,
    /// IP protocol, or the low 8 bits of the ARP opcode.
    pub nw_proto: u8,
    /// IP source address.
    pub nw_src: Ipv4Addr,
    /// IP destination address.
    pub nw_dst: Ipv4Addr,
    /// TCP/UDP source port (ICMP type).
    pub tp_src: u16,
    /// TCP/UDP destination port (ICMP code).
    pub tp_dst: u16,
}

impl Default for Match {
    /// The match-everything match: all fields wildcarded and zero.
    fn default() -> Self {
        Match::all()
    }
}

impl Match {
    /// Wire size of `ofp_match`.
    pub const LEN: usize = 40;

    /// The match that matches every packet.
    pub fn all() -> Match {
        Match {
            wildcards: OFPFW_ALL,
            in_port: 0,
            dl_src: MacAddr::ZERO,
            dl_dst: MacAddr::ZERO,
            dl_vlan: 0,
            dl_vlan_pcp: 0,
            dl_type: 0,
            nw_tos: 0,
            nw_proto: 0,
            nw_src: Ipv4Addr::UNSPECIFIED,
            nw_dst: Ipv4Addr::UNSPECIFIED,
            tp_src: 0,
            tp_dst: 0,
        }
    }

    /// Parses the 40 bytes of a match (the reader may hold more).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Match> {
        let wildcards = r.u32()?;
        let in_port = r.u16()?;
        let dl_src = MacAddr(r.array()?);
        let dl_dst = MacAddr(r.array()?);
        let dl_vlan = r.u16()?;
        let dl_vlan_pcp = r.u8()?;
        r.skip(1)?;
        let dl_type = r.u16()?;
        let nw_tos = r.u8()?;
        let nw_proto = r.u8()?;
        r.skip(2)?;
        let nw_src = Ipv4Addr::from(r.u32()?);
        let nw_dst = Ipv4Addr::from(r.u32()?);
        let tp_src = r.u16()?;
        let tp_dst = r.u16()?;
        Ok(Match {
            wildcards,
            in_port,
            dl_src,
            dl_dst,
            dl_vlan,
            dl_vlan_pcp,
            dl_type,
            nw_tos,
            nw_proto,
            nw_src,
            nw_dst,
            tp_src,
            tp_dst,
        })
    }

    /// Appends the 40-byte match.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.wildcards);
        out.put_u16(self.in_port);
        out.put_slice(&self.dl_src.0);
        out.put_slice(&self.dl_dst.0);
        out.put_u16(self.dl_vlan);
        out.put_u8(self.dl_vlan_pcp);
        out.put_zeros(1);
        out.put_u16(self.dl_type);
        out.put_u8(self.nw_tos);
        out.put_u8(self.nw_proto);
        out.put_zeros(2);
        out.put_u32(u32::from(self.nw_src));
        out.put_u32(u32::from(self.nw_dst));
        out.put_u16(self.tp_src);
        out.put_u16(self.tp_dst);
    }

    /// True if every bit of `bits` (`OFPFW_*`) is set, i.e. those fields are wildcarded.
    pub fn is_wildcarded(&self, bits: u32) -> bool {
        self.wildcards & bits == bits
    }

    /// The prefix length `nw_src` is matched with: 32 for an exact match, 0 when the
    /// address is wildcarded.
    pub fn nw_src_prefix_len(&self) -> u8 {
        prefix_len(self.wildcards, OFPFW_NW_SRC_SHIFT)
    }

    /// The prefix length `nw_dst` is matched with: 32 for an exact match, 0 when the
    /// address is wildcarded.
    pub fn nw_dst_prefix_len(&self) -> u8 {
        prefix_len(self.wildcards, OFPFW_NW_DST_SHIFT)
    }

    /// Matches `nw_src` on its first `len` bits (0 wildcards it; above 32 counts as 32).
    pub fn set_nw_src_prefix_len(&mut self, len: u8) {
        self.wildcards = with_prefix_len(self.wildcards, OFPFW_NW_SRC_SHIFT, len);
    }

    /// Matches `nw_dst` on its first `len` bits (0 wildcards it; above 32 counts as 32).
    pub fn set_nw_dst_prefix_len(&mut self, len: u8) {
        self.wildcards = with_prefix_len(self.wildcards, OFPFW_NW_DST_SHIFT, len);
    }
}

fn prefix_len(wildcards: u32, shift: u32) -> u8 {
    let ignored = (wildcards >> shift) & ((1 << OFPFW_NW_SRC_BITS) - 1);
    32 - ignored.min(32) as u8
}

fn with_prefix_len(wildcards: u32, shift: u32, len: u8) -> u32 {
    let ignored = 32 - u32::from(len.min(32));
    let mask = ((1 << OFPFW_NW_SRC_BITS) - 1) << shift;
    (wildcards & !mask) | (ignored << shift)
}

impl fmt::Display for Match {
    /// ovs-ofctl style: the fields that are matched, `name=value` separated by commas,
    /// addresses with a prefix length when partly wildcarded
    /// (`in_port=1,dl_type=0x0800,nw_src=10.0.0.0/8`); `any` when nothing is matched.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        let w = |bit: u32| self.wildcards & bit == 0;
        if w(OFPFW_IN_PORT) {
            parts.push(match super::port::port_name(self.in_port) {
                Some(n) => format!("in_port={n}"),
                None => format!("in_port={}", self.in_port),
            });
        }
        if w(OFPFW_DL_VLAN) {
            parts.push(format!("dl_vlan={}", self.dl_vlan));
        }
        if w(OFPFW_DL_VLAN_PCP) {
            parts.push(format!("dl_vlan_pcp={}", self.dl_vlan_pcp));
        }
        if w(OFPFW_DL_SRC) {
            parts.push(format!("dl_src={}", self.dl_src));
        }
        if w(OFPFW_DL_DST) {
            parts.push(format!("dl_dst={}", self.dl_dst));
        }
        if w(OFPFW_DL_TYPE) {
            parts.push(format!("dl_type=0x{:04x}", self.dl_type));
        }
        if w(OFPFW_NW_TOS) {
            parts.push(format!("nw_tos={}", self.nw_tos));
        }
        if w(OFPFW_NW_PROTO) {
            parts.push(format!("nw_proto={}", self.nw_proto));
        }
        for (name, addr, len) in [
            ("nw_src", self.nw_src, self.nw_src_prefix_len()),
            ("nw_dst", self.nw_dst, self.nw_dst_prefix_len()),
        ] {
            match len {
                0 => {}
                32 => parts.push(format!("{name}={addr}")),
                n => parts.push(format!("{name}={addr}/{n}")),
            }
        }
        if w(OFPFW_TP_SRC) {
            parts.push(format!("tp_src={}", self.tp_src));
        }
        if w(OFPFW_TP_DST) {
            parts.push(format!("tp_dst={}", self.tp_dst));
        }
        if parts.is_empty() {
            f.write_str("any")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The match of `1-2-ofp_flow_mod.packet`: everything but dl_dst wildcarded.
    const FLOW_MOD_MATCH: [u8; 40] = [
        0x00, 0x3f, 0xff, 0xf7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf2, 0x0b, 0xa4,
        0x7d, 0xf8, 0xea, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn parses_and_emits_the_vector_match() {
        let m = Match::parse(&mut Reader::new(&FLOW_MOD_MATCH, 8, "ofp_match")).unwrap();
        assert_eq!(m.wildcards, 4194295);
        assert_eq!(m.dl_dst.to_string(), "f2:0b:a4:7d:f8:ea");
        assert_eq!(m.to_string(), "dl_dst=f2:0b:a4:7d:f8:ea");
        let mut out = Vec::new();
        m.emit(&mut out);
        assert_eq!(out, FLOW_MOD_MATCH);
    }

    #[test]
    fn prefix_lengths_read_and_set() {
        let mut m = Match::all();
        assert_eq!((m.nw_src_prefix_len(), m.nw_dst_prefix_len()), (0, 0));
        m.wildcards &= !(OFPFW_IN_PORT | OFPFW_DL_TYPE);
        m.in_port = 1;
        m.dl_type = 0x0800;
        m.nw_src = Ipv4Addr::new(10, 0, 0, 0);
        m.set_nw_src_prefix_len(8);
        m.nw_dst = Ipv4Addr::new(192, 168, 1, 7);
        m.set_nw_dst_prefix_len(32);
        assert_eq!((m.nw_src_prefix_len(), m.nw_dst_prefix_len()), (8, 32));
        assert_eq!(m.wildcards & OFPFW_NW_SRC_MASK, 24 << OFPFW_NW_SRC_SHIFT);
        assert_eq!(m.wildcards & OFPFW_NW_DST_MASK, 0);
        assert_eq!(
            m.to_string(),
            "in_port=1,dl_type=0x0800,nw_src=10.0.0.0/8,nw_dst=192.168.1.7"
        );
        // Counts above 32 (up to 63) wildcard the whole address.
        m.wildcards |= OFPFW_NW_SRC_MASK;
        assert_eq!(m.nw_src_prefix_len(), 0);
        m.set_nw_src_prefix_len(0);
        assert!(m.is_wildcarded(OFPFW_NW_SRC_ALL));
        assert_eq!(Match::all().to_string(), "any");
        assert_eq!(OFPFW_ALL, 0x3fffff);
    }

    #[test]
    fn truncated_match_is_an_error() {
        let e = Match::parse(&mut Reader::new(&FLOW_MOD_MATCH[..39], 8, "ofp_match"));
        assert!(matches!(
            e,
            Err(crate::DecodeError::Truncated { offset: 46, .. })
        ));
    }
}
