//! Between [`Flow`] and OpenFlow 1.3: its match (OXM TLVs, with the prerequisites of
//! 1.3 §7.2.3.8), its actions (set-field for every field) and its instructions, both
//! ways.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::common::{FromWireError, Head};
use crate::error::{not_in, EncodeResult};
use crate::header::Version;
use crate::model::PortNo;
use crate::of13::oxm::{OxmValue, OFPVID_PRESENT};
use crate::of13::{self, Instruction, Oxm, OxmField};
use crate::ofctl::flow::{
    Flow, FlowAction, FlowMatch, Masked, SetField, VlanMatch, ETH_IPV4, ETH_IPV6, PROTO_ICMP,
    PROTO_ICMPV6, PROTO_SCTP, PROTO_TCP, PROTO_UDP,
};
use crate::types::MacAddr;

/// The 1.3 match (OXM TLVs) for `m`, or the prerequisite it lacks.
pub(super) fn match_v13(m: &FlowMatch) -> EncodeResult<of13::Match> {
    const V: Version = Version::V1_3;
    let mut o: Vec<Oxm> = Vec::new();
    let mut put = |f: OxmField, v: OxmValue, mask: Option<OxmValue>| {
        o.push(match mask {
            None => Oxm::basic(f, v),
            Some(k) => Oxm::masked(f, v, k),
        })
    };
    if let Some(p) = m.in_port {
        put(OxmField::InPort, OxmValue::Int(p.to_v13()? as u64), None);
    }
    if let Some(md) = m.metadata {
        put(
            OxmField::Metadata,
            OxmValue::Int(md.value),
            md.mask.map(OxmValue::Int),
        );
    }
    if let Some(a) = m.eth_dst {
        put(OxmField::EthDst, a.value.into(), a.mask.map(OxmValue::Mac));
    }
    if let Some(a) = m.eth_src {
        put(OxmField::EthSrc, a.value.into(), a.mask.map(OxmValue::Mac));
    }
    if let Some(t) = m.eth_type {
        put(OxmField::EthType, OxmValue::Int(t as u64), None);
    }
    match m.vlan {
        Some(VlanMatch::Untagged) => put(OxmField::VlanVid, OxmValue::Int(0), None),
        Some(VlanMatch::AnyTagged) => put(
            OxmField::VlanVid,
            OxmValue::Int(OFPVID_PRESENT as u64),
            Some(OxmValue::Int(OFPVID_PRESENT as u64)),
        ),
        Some(VlanMatch::Id(v)) => put(
            OxmField::VlanVid,
            OxmValue::Int((OFPVID_PRESENT | (v & 0x0fff)) as u64),
            None,
        ),
        None => {}
    }
    if let Some(p) = m.vlan_pcp {
        // §7.2.3.8: VLAN_PCP requires VLAN_VID != NONE.
        if !matches!(m.vlan, Some(VlanMatch::Id(_)) | Some(VlanMatch::AnyTagged)) {
            return Err(not_in(V, "a vlan_pcp match without a VLAN tag"));
        }
        put(OxmField::VlanPcp, OxmValue::Int(p as u64), None);
    }
    let ip = m.is_ip();
    let arp = m.is_arp();
    if let Some(d) = m.ip_dscp {
        if !ip {
            return Err(not_in(V, "an ip_dscp match without ip or ipv6"));
        }
        put(OxmField::IpDscp, OxmValue::Int(d as u64), None);
    }
    if let Some(e) = m.ip_ecn {
        if !ip {
            return Err(not_in(V, "an ip_ecn match without ip or ipv6"));
        }
        put(OxmField::IpEcn, OxmValue::Int(e as u64), None);
    }
    if let Some(p) = m.ip_proto {
        if arp {
            put(OxmField::ArpOp, OxmValue::Int(p as u64), None);
        } else if ip {
            put(OxmField::IpProto, OxmValue::Int(p as u64), None);
        } else {
            return Err(not_in(V, "an ip_proto match without ip, ipv6 or arp"));
        }
    }
    for (a, ipf, arpf) in [
        (m.ipv4_src, OxmField::Ipv4Src, OxmField::ArpSpa),
        (m.ipv4_dst, OxmField::Ipv4Dst, OxmField::ArpTpa),
    ] {
        if let Some(a) = a {
            let f = match m.eth_type {
                Some(ETH_IPV4) => ipf,
                _ if arp => arpf,
                _ => return Err(not_in(V, "an IPv4 address match without ip or arp")),
            };
            put(f, a.value.into(), a.mask.map(OxmValue::Ipv4));
        }
    }
    if m.tp_src.is_some() || m.tp_dst.is_some() {
        let (src, dst) = match (m.eth_type, m.ip_proto) {
            (Some(ETH_IPV4 | ETH_IPV6), Some(PROTO_TCP)) => (OxmField::TcpSrc, OxmField::TcpDst),
            (Some(ETH_IPV4 | ETH_IPV6), Some(PROTO_UDP)) => (OxmField::UdpSrc, OxmField::UdpDst),
            (Some(ETH_IPV4 | ETH_IPV6), Some(PROTO_SCTP)) => (OxmField::SctpSrc, OxmField::SctpDst),
            (Some(ETH_IPV4), Some(PROTO_ICMP)) => (OxmField::Icmpv4Type, OxmField::Icmpv4Code),
            (Some(ETH_IPV6), Some(PROTO_ICMPV6)) => (OxmField::Icmpv6Type, OxmField::Icmpv6Code),
            _ => {
                return Err(not_in(
                    V,
                    "a transport port match without tcp, udp, sctp or icmp",
                ))
            }
        };
        if let Some(p) = m.tp_src {
            put(src, OxmValue::Int(p as u64), None);
        }
        if let Some(p) = m.tp_dst {
            put(dst, OxmValue::Int(p as u64), None);
        }
    }
    let v6 = m.eth_type == Some(ETH_IPV6);
    for (a, f) in [
        (m.ipv6_src, OxmField::Ipv6Src),
        (m.ipv6_dst, OxmField::Ipv6Dst),
    ] {
        if let Some(a) = a {
            if !v6 {
                return Err(not_in(V, "an IPv6 address match without ipv6"));
            }
            put(f, a.value.into(), a.mask.map(OxmValue::Ipv6));
        }
    }
    if let Some(l) = m.ipv6_label {
        if !v6 {
            return Err(not_in(V, "an ipv6_label match without ipv6"));
        }
        put(OxmField::Ipv6Flabel, OxmValue::Int(l as u64), None);
    }
    for (a, f) in [(m.arp_sha, OxmField::ArpSha), (m.arp_tha, OxmField::ArpTha)] {
        if let Some(a) = a {
            if !arp {
                return Err(not_in(V, "an arp_sha or arp_tha match without arp"));
            }
            put(f, a.into(), None);
        }
    }
    Ok(of13::Match::new(o))
}

/// The 1.3 actions for `list` (ENQUEUE becomes SET_QUEUE then OUTPUT).
pub(super) fn actions_v13(list: &[FlowAction]) -> EncodeResult<Vec<of13::Action>> {
    use of13::Action as A;
    let mut out = Vec::with_capacity(list.len());
    let sf = |f: OxmField, v: OxmValue| A::SetField {
        field: Oxm::basic(f, v),
    };
    let int = OxmValue::Int;
    for a in list {
        match *a {
            FlowAction::Output { port } => out.push(A::output(port.to_v13()?)),
            FlowAction::Controller { max_len } => out.push(A::Output {
                port: of13::port::OFPP_CONTROLLER,
                max_len,
            }),
            FlowAction::Enqueue { port, queue } => {
                out.push(A::SetQueue { queue_id: queue });
                out.push(A::output(port.to_v13()?));
            }
            FlowAction::SetQueue { queue } => out.push(A::SetQueue { queue_id: queue }),
            FlowAction::PushVlan { ethertype } => out.push(A::PushVlan { ethertype }),
            FlowAction::PopVlan => out.push(A::PopVlan),
            FlowAction::Group { group_id } => out.push(A::Group { group_id }),
            FlowAction::DecTtl => out.push(A::DecNwTtl),
            FlowAction::Set(s) => out.push(match s {
                SetField::EthSrc(a) => sf(OxmField::EthSrc, a.into()),
                SetField::EthDst(a) => sf(OxmField::EthDst, a.into()),
                SetField::VlanVid(v) => sf(
                    OxmField::VlanVid,
                    int((OFPVID_PRESENT | (v & 0x0fff)) as u64),
                ),
                SetField::VlanPcp(p) => sf(OxmField::VlanPcp, int(p as u64)),
                SetField::Ipv4Src(a) => sf(OxmField::Ipv4Src, a.into()),
                SetField::Ipv4Dst(a) => sf(OxmField::Ipv4Dst, a.into()),
                SetField::IpDscp(d) => sf(OxmField::IpDscp, int(d as u64)),
                SetField::IpEcn(e) => sf(OxmField::IpEcn, int(e as u64)),
                SetField::TcpSrc(p) => sf(OxmField::TcpSrc, int(p as u64)),
                SetField::TcpDst(p) => sf(OxmField::TcpDst, int(p as u64)),
                SetField::UdpSrc(p) => sf(OxmField::UdpSrc, int(p as u64)),
                SetField::UdpDst(p) => sf(OxmField::UdpDst, int(p as u64)),
                SetField::SctpSrc(p) => sf(OxmField::SctpSrc, int(p as u64)),
                SetField::SctpDst(p) => sf(OxmField::SctpDst, int(p as u64)),
                SetField::Ipv6Src(a) => sf(OxmField::Ipv6Src, a.into()),
                SetField::Ipv6Dst(a) => sf(OxmField::Ipv6Dst, a.into()),
                SetField::Ipv6Label(l) => sf(OxmField::Ipv6Flabel, int(l as u64)),
                SetField::ArpOp(o) => sf(OxmField::ArpOp, int(o as u64)),
                SetField::ArpSpa(a) => sf(OxmField::ArpSpa, a.into()),
                SetField::ArpTpa(a) => sf(OxmField::ArpTpa, a.into()),
                SetField::ArpSha(a) => sf(OxmField::ArpSha, a.into()),
                SetField::ArpTha(a) => sf(OxmField::ArpTha, a.into()),
            }),
        }
    }
    Ok(out)
}

/// The flow of a 1.3 FLOW_MOD or flow-stats entry: `head`, the match and the
/// instructions.
pub(super) fn from_parts_v13(
    m: &of13::Match,
    instructions: &[Instruction],
    head: Head,
) -> Result<Flow, FromWireError> {
    let mut flow = head.flow();
    flow.matching = match_from_v13(m)?;
    for i in instructions {
        match i {
            Instruction::Meter { meter_id } => flow.meter = Some(*meter_id),
            Instruction::ApplyActions { actions } => {
                flow.actions = actions_from_v13(actions)?;
            }
            Instruction::ClearActions => flow.clear_actions = true,
            Instruction::WriteActions { actions } => {
                flow.write_actions = Some(actions_from_v13(actions)?);
            }
            Instruction::WriteMetadata {
                metadata,
                metadata_mask,
            } => {
                flow.write_metadata = Some(Masked {
                    value: *metadata,
                    mask: (*metadata_mask != u64::MAX).then_some(*metadata_mask),
                });
            }
            Instruction::GotoTable { table_id } => flow.goto_table = Some(*table_id),
            Instruction::Experimenter { experimenter, .. } => {
                return Err(FromWireError(format!(
                    "an experimenter instruction ({experimenter:#x})"
                )))
            }
            Instruction::Unknown {
                instruction_type, ..
            } => {
                return Err(FromWireError(format!(
                    "an unknown instruction type {instruction_type}"
                )))
            }
        }
    }
    Ok(flow)
}

fn int_of(v: &OxmValue) -> u64 {
    match v {
        OxmValue::Int(x) => *x,
        _ => 0,
    }
}

fn mac_of(v: &OxmValue) -> MacAddr {
    match v {
        OxmValue::Mac(m) => *m,
        _ => MacAddr::ZERO,
    }
}

fn ipv4_of(v: &OxmValue) -> Ipv4Addr {
    match v {
        OxmValue::Ipv4(a) => *a,
        _ => Ipv4Addr::UNSPECIFIED,
    }
}

fn ipv6_of(v: &OxmValue) -> Ipv6Addr {
    match v {
        OxmValue::Ipv6(a) => *a,
        _ => Ipv6Addr::UNSPECIFIED,
    }
}

fn match_from_v13(o: &of13::Match) -> Result<FlowMatch, FromWireError> {
    let mut m = FlowMatch::default();
    if let of13::Match::Other { match_type, .. } = o {
        return Err(FromWireError(format!("a match of type {match_type}")));
    }
    for x in o.fields() {
        let Oxm::Basic(b) = x else {
            return Err(FromWireError(format!("a non-basic OXM field {x:?}")));
        };
        let v = &b.value;
        let mask = b.mask.as_ref();
        let unmasked = |what: &str| -> Result<(), FromWireError> {
            match mask {
                None => Ok(()),
                Some(_) => Err(FromWireError(format!("a masked {what} match"))),
            }
        };
        match b.field {
            OxmField::InPort => {
                unmasked("in_port")?;
                m.in_port = Some(PortNo::from_u32(int_of(v) as u32));
            }
            OxmField::Metadata => {
                m.metadata = Some(Masked {
                    value: int_of(v),
                    mask: mask.map(int_of).filter(|&k| k != u64::MAX),
                });
            }
            OxmField::EthDst | OxmField::EthSrc => {
                let a = Some(Masked {
                    value: mac_of(v),
                    mask: mask.map(mac_of).filter(|&k| k != MacAddr::BROADCAST),
                });
                if b.field == OxmField::EthDst {
                    m.eth_dst = a;
                } else {
                    m.eth_src = a;
                }
            }
            OxmField::EthType => {
                unmasked("eth_type")?;
                m.eth_type = Some(int_of(v) as u16);
            }
            OxmField::VlanVid => {
                let vid = int_of(v) as u16;
                m.vlan = Some(match (vid, mask.map(int_of)) {
                    (0, None) => VlanMatch::Untagged,
                    (x, Some(k)) if x & 0x1000 != 0 && k == 0x1000 => VlanMatch::AnyTagged,
                    (x, None) if x & 0x1000 != 0 => VlanMatch::Id(x & 0x0fff),
                    _ => return Err(FromWireError("a masked vlan_vid match".into())),
                });
            }
            OxmField::VlanPcp => m.vlan_pcp = Some(int_of(v) as u8),
            OxmField::IpDscp => m.ip_dscp = Some(int_of(v) as u8),
            OxmField::IpEcn => m.ip_ecn = Some(int_of(v) as u8),
            OxmField::IpProto => m.ip_proto = Some(int_of(v) as u8),
            OxmField::ArpOp => {
                let op = int_of(v);
                if op > 0xff {
                    return Err(FromWireError(format!("an ARP opcode {op} above 255")));
                }
                m.ip_proto = Some(op as u8);
            }
            OxmField::Ipv4Src | OxmField::ArpSpa | OxmField::Ipv4Dst | OxmField::ArpTpa => {
                let a = Some(Masked {
                    value: ipv4_of(v),
                    mask: mask.map(ipv4_of).filter(|k| *k != Ipv4Addr::BROADCAST),
                });
                if matches!(b.field, OxmField::Ipv4Src | OxmField::ArpSpa) {
                    m.ipv4_src = a;
                } else {
                    m.ipv4_dst = a;
                }
            }
            OxmField::TcpSrc
            | OxmField::UdpSrc
            | OxmField::SctpSrc
            | OxmField::Icmpv4Type
            | OxmField::Icmpv6Type => {
                unmasked("transport source")?;
                m.tp_src = Some(int_of(v) as u16);
            }
            OxmField::TcpDst
            | OxmField::UdpDst
            | OxmField::SctpDst
            | OxmField::Icmpv4Code
            | OxmField::Icmpv6Code => {
                unmasked("transport destination")?;
                m.tp_dst = Some(int_of(v) as u16);
            }
            OxmField::Ipv6Src | OxmField::Ipv6Dst => {
                let a = Some(Masked {
                    value: ipv6_of(v),
                    mask: mask.map(ipv6_of).filter(|k| u128::from(*k) != u128::MAX),
                });
                if b.field == OxmField::Ipv6Src {
                    m.ipv6_src = a;
                } else {
                    m.ipv6_dst = a;
                }
            }
            OxmField::Ipv6Flabel => {
                unmasked("ipv6_label")?;
                m.ipv6_label = Some(int_of(v) as u32);
            }
            OxmField::ArpSha => m.arp_sha = Some(mac_of(v)),
            OxmField::ArpTha => m.arp_tha = Some(mac_of(v)),
            other => {
                return Err(FromWireError(format!(
                    "a match on {}",
                    other.name().unwrap_or("an unknown OXM field")
                )))
            }
        }
    }
    Ok(m)
}

/// A 1.3 action list (a group's bucket, say) as this syntax's actions.
pub fn actions_from_of13(list: &[of13::Action]) -> Result<Vec<FlowAction>, FromWireError> {
    actions_from_v13(list)
}

fn actions_from_v13(list: &[of13::Action]) -> Result<Vec<FlowAction>, FromWireError> {
    use of13::Action as A;
    let mut out = Vec::with_capacity(list.len());
    for a in list {
        out.push(match a {
            A::Output { port, max_len } => match PortNo::from_u32(*port) {
                PortNo::Controller => FlowAction::Controller { max_len: *max_len },
                p => FlowAction::Output { port: p },
            },
            A::SetQueue { queue_id } => FlowAction::SetQueue { queue: *queue_id },
            A::PushVlan { ethertype } => FlowAction::PushVlan {
                ethertype: *ethertype,
            },
            A::PopVlan => FlowAction::PopVlan,
            A::Group { group_id } => FlowAction::Group {
                group_id: *group_id,
            },
            A::DecNwTtl => FlowAction::DecTtl,
            A::SetField {
                field: Oxm::Basic(b),
            } if b.mask.is_none() => {
                let v = &b.value;
                let n = int_of(v);
                FlowAction::Set(match b.field {
                    OxmField::EthSrc => SetField::EthSrc(mac_of(v)),
                    OxmField::EthDst => SetField::EthDst(mac_of(v)),
                    OxmField::VlanVid => SetField::VlanVid(n as u16 & 0x0fff),
                    OxmField::VlanPcp => SetField::VlanPcp(n as u8),
                    OxmField::Ipv4Src => SetField::Ipv4Src(ipv4_of(v)),
                    OxmField::Ipv4Dst => SetField::Ipv4Dst(ipv4_of(v)),
                    OxmField::IpDscp => SetField::IpDscp(n as u8),
                    OxmField::IpEcn => SetField::IpEcn(n as u8),
                    OxmField::TcpSrc => SetField::TcpSrc(n as u16),
                    OxmField::TcpDst => SetField::TcpDst(n as u16),
                    OxmField::UdpSrc => SetField::UdpSrc(n as u16),
                    OxmField::UdpDst => SetField::UdpDst(n as u16),
                    OxmField::SctpSrc => SetField::SctpSrc(n as u16),
                    OxmField::SctpDst => SetField::SctpDst(n as u16),
                    OxmField::Ipv6Src => SetField::Ipv6Src(ipv6_of(v)),
                    OxmField::Ipv6Dst => SetField::Ipv6Dst(ipv6_of(v)),
                    OxmField::Ipv6Flabel => SetField::Ipv6Label(n as u32),
                    OxmField::ArpOp => SetField::ArpOp(n as u16),
                    OxmField::ArpSpa => SetField::ArpSpa(ipv4_of(v)),
                    OxmField::ArpTpa => SetField::ArpTpa(ipv4_of(v)),
                    OxmField::ArpSha => SetField::ArpSha(mac_of(v)),
                    OxmField::ArpTha => SetField::ArpTha(mac_of(v)),
                    other => {
                        return Err(FromWireError(format!(
                            "a set_field on {}",
                            other.name().unwrap_or("an unknown OXM field")
                        )))
                    }
                })
            }
            other => {
                return Err(FromWireError(format!(
                    "a {} action",
                    other.action_type().name().unwrap_or("unknown")
                )))
            }
        });
    }
    Ok(out)
}
