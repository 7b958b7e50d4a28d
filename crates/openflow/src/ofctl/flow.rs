//! The flow as this syntax holds it: [`Flow`], its [`FlowMatch`] and [`FlowAction`]s,
//! and the [`FlowEntry`] a flow-stats reply shows. Version-neutral, owned, and the REST
//! API's JSON form of a flow (serde); the parser, the printer and the wire conversions
//! are written against these types.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::model::PortNo;
use crate::types::MacAddr;

/// A value and an optional mask (`None`: exact). A parsed or decoded value is
/// normalised: `value & mask == value`, and the mask is never all ones nor zero (a zero
/// mask is no match on the field at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Masked<T> {
    pub value: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mask: Option<T>,
}

impl<T> Masked<T> {
    /// An exact match on `value`.
    pub fn exact(value: T) -> Self {
        Masked { value, mask: None }
    }
}

/// VLAN matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VlanMatch {
    /// Packets without an 802.1Q tag.
    Untagged,
    /// Packets with a tag, whatever its id (1.3 only).
    AnyTagged,
    /// Packets tagged with this VLAN id (12 bits).
    Id(u16),
}

/// What a flow matches; `None` is "any value". Field meanings follow
/// [`crate::model::Match`]: for ARP, `ip_proto` is the opcode and `ipv4_src`/`ipv4_dst`
/// the protocol addresses; for ICMP, `tp_src`/`tp_dst` are the type and code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowMatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_port: Option<PortNo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eth_src: Option<Masked<MacAddr>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eth_dst: Option<Masked<MacAddr>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eth_type: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vlan: Option<VlanMatch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vlan_pcp: Option<u8>,
    /// IP DSCP (6 bits; `nw_tos` is this shifted left by 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_dscp: Option<u8>,
    /// IP ECN (2 bits; 1.3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_ecn: Option<u8>,
    /// IP protocol, or the ARP opcode for ARP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_proto: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv4_src: Option<Masked<Ipv4Addr>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv4_dst: Option<Masked<Ipv4Addr>>,
    /// TCP/UDP/SCTP source port, or the ICMP type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp_src: Option<u16>,
    /// TCP/UDP/SCTP destination port, or the ICMP code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp_dst: Option<u16>,
    /// 1.3 only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv6_src: Option<Masked<Ipv6Addr>>,
    /// 1.3 only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv6_dst: Option<Masked<Ipv6Addr>>,
    /// IPv6 flow label (20 bits; 1.3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv6_label: Option<u32>,
    /// ARP source hardware address (1.3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arp_sha: Option<MacAddr>,
    /// ARP target hardware address (1.3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arp_tha: Option<MacAddr>,
    /// Pipeline metadata (1.3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Masked<u64>>,
}

/// Ethernet types with a shorthand.
pub const ETH_IPV4: u16 = 0x0800;
pub const ETH_ARP: u16 = 0x0806;
pub const ETH_RARP: u16 = 0x8035;
pub const ETH_IPV6: u16 = 0x86dd;
/// IP protocols with a shorthand.
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_SCTP: u8 = 132;
pub const PROTO_ICMPV6: u8 = 58;

impl FlowMatch {
    /// IPv4 or IPv6.
    pub fn is_ip(&self) -> bool {
        matches!(self.eth_type, Some(ETH_IPV4) | Some(ETH_IPV6))
    }

    /// ARP or RARP (whose fields are ARP's).
    pub fn is_arp(&self) -> bool {
        matches!(self.eth_type, Some(ETH_ARP) | Some(ETH_RARP))
    }

    /// ICMP over IPv4, or ICMPv6 over IPv6.
    pub fn is_icmp(&self) -> bool {
        matches!(
            (self.eth_type, self.ip_proto),
            (Some(ETH_IPV4), Some(PROTO_ICMP)) | (Some(ETH_IPV6), Some(PROTO_ICMPV6))
        )
    }

    /// The transport protocol whose ports `tp_src`/`tp_dst` are, if any.
    pub fn transport(&self) -> Option<Transport> {
        if !self.is_ip() {
            return None;
        }
        match self.ip_proto? {
            PROTO_TCP => Some(Transport::Tcp),
            PROTO_UDP => Some(Transport::Udp),
            PROTO_SCTP => Some(Transport::Sctp),
            _ => None,
        }
    }
}

/// A transport protocol with ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Tcp,
    Udp,
    Sctp,
}

/// A packet field an action writes (`set_field`, `mod_*`), with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "field", content = "value", rename_all = "snake_case")]
pub enum SetField {
    EthSrc(MacAddr),
    EthDst(MacAddr),
    /// The VLAN id (12 bits). 1.0's SET_VLAN_VID also adds a tag to an untagged packet;
    /// 1.3's set-field does not (push one first).
    VlanVid(u16),
    VlanPcp(u8),
    Ipv4Src(Ipv4Addr),
    Ipv4Dst(Ipv4Addr),
    /// DSCP, 6 bits (`mod_nw_tos` takes it shifted left by 2).
    IpDscp(u8),
    /// ECN, 2 bits (1.3 only).
    IpEcn(u8),
    TcpSrc(u16),
    TcpDst(u16),
    UdpSrc(u16),
    UdpDst(u16),
    /// 1.3 only.
    SctpSrc(u16),
    /// 1.3 only.
    SctpDst(u16),
    /// 1.3 only.
    Ipv6Src(Ipv6Addr),
    /// 1.3 only.
    Ipv6Dst(Ipv6Addr),
    /// 20 bits, 1.3 only.
    Ipv6Label(u32),
    /// 1.3 only.
    ArpOp(u16),
    /// 1.3 only.
    ArpSpa(Ipv4Addr),
    /// 1.3 only.
    ArpTpa(Ipv4Addr),
    /// 1.3 only.
    ArpSha(MacAddr),
    /// 1.3 only.
    ArpTha(MacAddr),
}

/// One action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum FlowAction {
    /// Send out a port (any port but the controller).
    Output { port: PortNo },
    /// Send to the controller, with at most `max_len` bytes of the packet (65535: all).
    Controller { max_len: u16 },
    /// Send out `port` through its queue `queue` (1.0 ENQUEUE; 1.3 SET_QUEUE + OUTPUT).
    Enqueue { port: PortNo, queue: u32 },
    /// Set the queue of later outputs (1.3 only).
    SetQueue { queue: u32 },
    /// Push an 802.1Q tag with this TPID (1.3 only).
    PushVlan { ethertype: u16 },
    /// Remove the outer 802.1Q tag (1.0 STRIP_VLAN, 1.3 POP_VLAN).
    PopVlan,
    /// Write a field.
    Set(SetField),
    /// Process through a group (1.3 only).
    Group { group_id: u32 },
    /// Decrement the IP TTL (1.3 only).
    DecTtl,
}

/// Flow-mod flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowFlags {
    pub send_flow_rem: bool,
    pub check_overlap: bool,
    /// 1.3 only.
    pub reset_counts: bool,
    /// 1.3 only.
    pub no_packet_counts: bool,
    /// 1.3 only.
    pub no_byte_counts: bool,
}

/// One flow as `ovs-ofctl` writes it: where it goes, what it matches, what it does.
/// `actions` are 1.3's apply-actions (1.0's action list); the other instructions are
/// 1.3 only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Flow {
    pub table: u8,
    pub priority: u16,
    pub cookie: u64,
    /// Which cookie bits must match, for modify and delete (1.3 only); 0: none.
    pub cookie_mask: u64,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub flags: FlowFlags,
    #[serde(rename = "match")]
    pub matching: FlowMatch,
    /// The meter instruction (1.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meter: Option<u32>,
    /// Apply-actions (1.3), the action list (1.0). Empty: drop.
    pub actions: Vec<FlowAction>,
    /// The clear-actions instruction (1.3).
    pub clear_actions: bool,
    /// The write-actions instruction (1.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_actions: Option<Vec<FlowAction>>,
    /// The write-metadata instruction (1.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_metadata: Option<Masked<u64>>,
    /// The goto-table instruction (1.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goto_table: Option<u8>,
}

impl Default for Flow {
    fn default() -> Self {
        Flow {
            table: 0,
            priority: Flow::DEFAULT_PRIORITY,
            cookie: 0,
            cookie_mask: 0,
            idle_timeout: 0,
            hard_timeout: 0,
            flags: FlowFlags::default(),
            matching: FlowMatch::default(),
            meter: None,
            actions: Vec::new(),
            clear_actions: false,
            write_actions: None,
            write_metadata: None,
            goto_table: None,
        }
    }
}

impl Flow {
    /// OpenFlow's default priority (0x8000), which `ovs-ofctl` does not print.
    pub const DEFAULT_PRIORITY: u16 = 0x8000;

    /// The flow as a switch speaking `version` reports it back in its flow stats: 1.0's
    /// `ofp_flow_stats` has no flags, so they are gone; 1.3 has no ENQUEUE, so
    /// `enqueue:P:Q` comes back as `set_queue:Q,output:P`; the rest is unchanged. Compare
    /// a flow read from a switch with this, not with what was sent.
    pub fn read_back(&self, version: crate::Version) -> Flow {
        let mut f = self.clone();
        if version == crate::Version::V1_0 {
            f.flags = FlowFlags::default();
        }
        if version == crate::Version::V1_3 {
            let split = |list: &mut Vec<FlowAction>| {
                let mut out = Vec::with_capacity(list.len());
                for a in list.drain(..) {
                    match a {
                        FlowAction::Enqueue { port, queue } => {
                            out.push(FlowAction::SetQueue { queue });
                            out.push(FlowAction::Output { port });
                        }
                        a => out.push(a),
                    }
                }
                *list = out;
            };
            split(&mut f.actions);
            if let Some(w) = f.write_actions.as_mut() {
                split(w);
            }
        }
        f
    }

    /// Whether the flow uses 1.3 instructions other than apply-actions.
    pub fn has_instructions(&self) -> bool {
        self.meter.is_some()
            || self.clear_actions
            || self.write_actions.is_some()
            || self.write_metadata.is_some()
            || self.goto_table.is_some()
    }
}

/// A flow as a flow-stats reply shows it: the flow and its counters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FlowEntry {
    #[serde(flatten)]
    pub flow: Flow,
    /// `None`: printed without counters (as `ovs-ofctl --no-stats dump-flows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<FlowCounters>,
}

/// A flow's counters in a flow-stats reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FlowCounters {
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub packet_count: u64,
    pub byte_count: u64,
}

/// `OFPTT_ALL`: the table of a selection that names none.
pub(super) const ALL_TABLES: u8 = 0xff;
