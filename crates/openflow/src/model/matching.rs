//! What a flow matches: [`Match`], with its VLAN and IP prefix fields.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::types::MacAddr;

/// VLAN matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vlan {
    /// Only packets without an 802.1Q tag.
    Untagged,
    /// Packets tagged with this VLAN id (12 bits).
    Id(u16),
}

/// An IPv4 address with a prefix length (32 = exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ipv4Prefix {
    pub addr: Ipv4Addr,
    pub len: u8,
}

impl Ipv4Prefix {
    pub fn exact(addr: Ipv4Addr) -> Self {
        Ipv4Prefix { addr, len: 32 }
    }

    pub(super) fn mask(&self) -> u32 {
        match self.len {
            0 => 0,
            l if l >= 32 => u32::MAX,
            l => u32::MAX << (32 - l),
        }
    }
}

/// An IPv6 address with a prefix length (128 = exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ipv6Prefix {
    pub addr: Ipv6Addr,
    pub len: u8,
}

impl Ipv6Prefix {
    pub(super) fn mask(&self) -> u128 {
        match self.len {
            0 => 0,
            l if l >= 128 => u128::MAX,
            l => u128::MAX << (128 - l),
        }
    }
}

/// What a flow matches. `None` means "any value". Field meanings follow 1.0's `ofp_match`
/// (so ARP's opcode is `ip_proto` and its addresses `ipv4_src`/`ipv4_dst` when
/// `eth_type` is 0x0806, and ICMP's type and code are `tp_src`/`tp_dst`); the 1.3
/// encoding turns them into the matching OXM fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Match {
    pub in_port: Option<u32>,
    pub eth_src: Option<MacAddr>,
    pub eth_dst: Option<MacAddr>,
    pub eth_type: Option<u16>,
    pub vlan: Option<Vlan>,
    pub vlan_pcp: Option<u8>,
    /// IP DSCP (6 bits; 1.0's `nw_tos` holds it shifted left by 2).
    pub ip_dscp: Option<u8>,
    /// IP protocol, or the ARP opcode's low byte for ARP.
    pub ip_proto: Option<u8>,
    pub ipv4_src: Option<Ipv4Prefix>,
    pub ipv4_dst: Option<Ipv4Prefix>,
    /// TCP/UDP/SCTP source port, or the ICMP type.
    pub tp_src: Option<u16>,
    /// TCP/UDP/SCTP destination port, or the ICMP code.
    pub tp_dst: Option<u16>,
    /// 1.3 only.
    pub ipv6_src: Option<Ipv6Prefix>,
    /// 1.3 only.
    pub ipv6_dst: Option<Ipv6Prefix>,
    /// 1.3 only: a mask on `eth_src` (`None` = exact).
    pub eth_src_mask: Option<MacAddr>,
    /// 1.3 only: a mask on `eth_dst` (`None` = exact).
    pub eth_dst_mask: Option<MacAddr>,
    /// 1.3 only: the pipeline metadata register.
    pub metadata: Option<u64>,
}
