//! Between [`Flow`] and OpenFlow 1.0: its match (`ofp_match`, wildcard bits and
//! prefix lengths) and its actions, both ways.

use std::net::Ipv4Addr;

use super::common::{FromWireError, Head};
use crate::error::{not_in, EncodeResult};
use crate::header::Version;
use crate::model::PortNo;
use crate::of10;
use crate::of10::flow_match::{
    OFPFW_ALL, OFPFW_DL_DST, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_DL_VLAN, OFPFW_DL_VLAN_PCP,
    OFPFW_IN_PORT, OFPFW_NW_DST_SHIFT, OFPFW_NW_PROTO, OFPFW_NW_SRC_SHIFT, OFPFW_NW_TOS,
    OFPFW_TP_DST, OFPFW_TP_SRC, OFP_VLAN_NONE,
};
use crate::ofctl::flow::{
    Flow, FlowAction, FlowMatch, Masked, SetField, Transport, VlanMatch, ETH_ARP, ETH_IPV4,
};

/// The 1.0 `ofp_match` for `m`, or what 1.0 cannot express of it.
pub(super) fn match_v10(m: &FlowMatch) -> EncodeResult<of10::Match> {
    const V: Version = Version::V1_0;
    if m.ipv6_src.is_some() || m.ipv6_dst.is_some() || m.ipv6_label.is_some() {
        return Err(not_in(V, "an IPv6 field match"));
    }
    if m.ip_ecn.is_some() {
        return Err(not_in(V, "an ip_ecn match"));
    }
    if m.arp_sha.is_some() || m.arp_tha.is_some() {
        return Err(not_in(V, "an arp_sha or arp_tha match"));
    }
    if m.metadata.is_some() {
        return Err(not_in(V, "a metadata match"));
    }
    // 1.0 §5.2.3: the network fields are IPv4's, or ARP's ("nw_proto: IP protocol or
    // lower 8 bits of ARP opcode"); a switch ignores them on any other Ethernet type.
    let l3 = m.ip_proto.is_some()
        || m.ip_dscp.is_some()
        || m.ipv4_src.is_some()
        || m.ipv4_dst.is_some()
        || m.tp_src.is_some()
        || m.tp_dst.is_some();
    if l3 && !matches!(m.eth_type, Some(ETH_IPV4) | Some(ETH_ARP)) {
        return Err(not_in(
            V,
            "a network or transport field of a packet that is not IPv4 or ARP",
        ));
    }
    let mut w = OFPFW_ALL;
    let mut o = of10::Match::all();
    let mut clear = |bit: u32| w &= !bit;
    if let Some(p) = m.in_port {
        o.in_port = p.to_v10()?;
        clear(OFPFW_IN_PORT);
    }
    if let Some(a) = m.eth_src {
        if a.mask.is_some() {
            return Err(not_in(V, "a masked Ethernet address match"));
        }
        o.dl_src = a.value;
        clear(OFPFW_DL_SRC);
    }
    if let Some(a) = m.eth_dst {
        if a.mask.is_some() {
            return Err(not_in(V, "a masked Ethernet address match"));
        }
        o.dl_dst = a.value;
        clear(OFPFW_DL_DST);
    }
    if let Some(t) = m.eth_type {
        o.dl_type = t;
        clear(OFPFW_DL_TYPE);
    }
    match m.vlan {
        Some(VlanMatch::Untagged) => {
            o.dl_vlan = OFP_VLAN_NONE;
            clear(OFPFW_DL_VLAN);
        }
        Some(VlanMatch::Id(v)) => {
            o.dl_vlan = v;
            clear(OFPFW_DL_VLAN);
        }
        // 1.0 matches a priority on tagged packets only: any tag with a priority is the
        // priority alone.
        Some(VlanMatch::AnyTagged) if m.vlan_pcp.is_some() => {}
        Some(VlanMatch::AnyTagged) => {
            return Err(not_in(V, "a match on any VLAN tag without a priority"))
        }
        None => {}
    }
    if let Some(p) = m.vlan_pcp {
        o.dl_vlan_pcp = p;
        clear(OFPFW_DL_VLAN_PCP);
    }
    if let Some(d) = m.ip_dscp {
        o.nw_tos = d << 2;
        clear(OFPFW_NW_TOS);
    }
    if let Some(p) = m.ip_proto {
        o.nw_proto = p;
        clear(OFPFW_NW_PROTO);
    }
    if let Some(p) = m.tp_src {
        o.tp_src = p;
        clear(OFPFW_TP_SRC);
    }
    if let Some(p) = m.tp_dst {
        o.tp_dst = p;
        clear(OFPFW_TP_DST);
    }
    // nw_src/nw_dst wildcards count the low bits to ignore: prefixes only.
    let prefix = |a: Option<Masked<Ipv4Addr>>| -> EncodeResult<(Ipv4Addr, u32)> {
        match a {
            None => Ok((Ipv4Addr::UNSPECIFIED, 32)),
            Some(Masked { value, mask: None }) => Ok((value, 0)),
            Some(Masked {
                value,
                mask: Some(m),
            }) => {
                let m = u32::from(m);
                if m.leading_ones() + m.trailing_zeros() != 32 {
                    return Err(not_in(V, "an IPv4 mask that is not a prefix"));
                }
                Ok((value, m.trailing_zeros()))
            }
        }
    };
    let (src, src_wild) = prefix(m.ipv4_src)?;
    let (dst, dst_wild) = prefix(m.ipv4_dst)?;
    o.nw_src = src;
    o.nw_dst = dst;
    w &= !(0x3f << OFPFW_NW_SRC_SHIFT | 0x3f << OFPFW_NW_DST_SHIFT);
    w |= src_wild << OFPFW_NW_SRC_SHIFT | dst_wild << OFPFW_NW_DST_SHIFT;
    o.wildcards = w;
    Ok(o)
}

/// The 1.0 action for `a`; `m` says which transport header a `mod_tp_*` writes.
pub(super) fn action_v10(a: &FlowAction, m: &FlowMatch) -> EncodeResult<of10::Action> {
    const V: Version = Version::V1_0;
    use of10::Action as A;
    // SET_TP_SRC/DST write whatever transport header the packet has: the match must say
    // which, or the flow would mean something else when read back.
    let tp = |want: Transport| {
        if m.transport() == Some(want) {
            Ok(())
        } else {
            Err(not_in(
                V,
                "setting a TCP or UDP port without that protocol in the match",
            ))
        }
    };
    Ok(match *a {
        FlowAction::Output { port } => A::Output {
            port: port.to_v10()?,
            max_len: 0,
        },
        FlowAction::Controller { max_len } => A::Output {
            port: PortNo::Controller.to_v10()?,
            max_len,
        },
        FlowAction::Enqueue { port, queue } => A::Enqueue {
            port: port.to_v10()?,
            queue_id: queue,
        },
        FlowAction::SetQueue { .. } => return Err(not_in(V, "set_queue (use enqueue:PORT:QUEUE)")),
        FlowAction::PushVlan { .. } => return Err(not_in(V, "push_vlan")),
        FlowAction::PopVlan => A::StripVlan,
        FlowAction::Group { .. } => return Err(not_in(V, "a group action")),
        FlowAction::DecTtl => return Err(not_in(V, "dec_ttl")),
        FlowAction::Set(sf) => match sf {
            SetField::EthSrc(a) => A::SetDlSrc { dl_addr: a },
            SetField::EthDst(a) => A::SetDlDst { dl_addr: a },
            SetField::VlanVid(v) => A::SetVlanVid { vlan_vid: v },
            SetField::VlanPcp(p) => A::SetVlanPcp { vlan_pcp: p },
            SetField::Ipv4Src(a) => A::SetNwSrc { nw_addr: a },
            SetField::Ipv4Dst(a) => A::SetNwDst { nw_addr: a },
            SetField::IpDscp(d) => A::SetNwTos { nw_tos: d << 2 },
            SetField::TcpSrc(p) => {
                tp(Transport::Tcp)?;
                A::SetTpSrc { tp_port: p }
            }
            SetField::UdpSrc(p) => {
                tp(Transport::Udp)?;
                A::SetTpSrc { tp_port: p }
            }
            SetField::TcpDst(p) => {
                tp(Transport::Tcp)?;
                A::SetTpDst { tp_port: p }
            }
            SetField::UdpDst(p) => {
                tp(Transport::Udp)?;
                A::SetTpDst { tp_port: p }
            }
            SetField::IpEcn(_) => return Err(not_in(V, "setting ip_ecn")),
            SetField::SctpSrc(_) | SetField::SctpDst(_) => {
                return Err(not_in(V, "setting an SCTP port"))
            }
            SetField::Ipv6Src(_) | SetField::Ipv6Dst(_) | SetField::Ipv6Label(_) => {
                return Err(not_in(V, "setting an IPv6 field"))
            }
            SetField::ArpOp(_)
            | SetField::ArpSpa(_)
            | SetField::ArpTpa(_)
            | SetField::ArpSha(_)
            | SetField::ArpTha(_) => return Err(not_in(V, "setting an ARP field")),
        },
    })
}

/// The flow of a 1.0 FLOW_MOD or flow-stats entry: `head`, the match and the actions.
pub(super) fn from_parts_v10(
    m: &of10::Match,
    actions: &[of10::Action],
    head: Head,
) -> Result<Flow, FromWireError> {
    let mut flow = head.flow();
    // 1.0's third flag bit is OFPFF_EMERG, not reset_counts.
    flow.flags.reset_counts = false;
    flow.matching = match_from_v10(m);
    for a in actions {
        flow.actions.push(action_from_v10(a, &flow.matching)?);
    }
    Ok(flow)
}

fn match_from_v10(o: &of10::Match) -> FlowMatch {
    let w = o.wildcards;
    let on = |bit: u32| w & bit == 0;
    let mut m = FlowMatch::default();
    if on(OFPFW_IN_PORT) {
        m.in_port = Some(PortNo::from_u32(if o.in_port >= 0xfff8 {
            o.in_port as u32 | 0xffff_0000
        } else {
            o.in_port as u32
        }));
    }
    if on(OFPFW_DL_SRC) {
        m.eth_src = Some(Masked::exact(o.dl_src));
    }
    if on(OFPFW_DL_DST) {
        m.eth_dst = Some(Masked::exact(o.dl_dst));
    }
    if on(OFPFW_DL_TYPE) {
        m.eth_type = Some(o.dl_type);
    }
    if on(OFPFW_DL_VLAN) {
        m.vlan = Some(match o.dl_vlan {
            OFP_VLAN_NONE => VlanMatch::Untagged,
            v => VlanMatch::Id(v & 0x0fff),
        });
    }
    // A priority means nothing on an untagged packet: Open vSwitch reports dl_vlan=0xffff
    // with the priority field exact (and 0), the 802.1Q TCI being all zeros.
    if on(OFPFW_DL_VLAN_PCP) && m.vlan != Some(VlanMatch::Untagged) {
        m.vlan_pcp = Some(o.dl_vlan_pcp);
        m.vlan.get_or_insert(VlanMatch::AnyTagged);
    }
    if on(OFPFW_NW_TOS) {
        m.ip_dscp = Some(o.nw_tos >> 2);
    }
    if on(OFPFW_NW_PROTO) {
        m.ip_proto = Some(o.nw_proto);
    }
    if on(OFPFW_TP_SRC) {
        m.tp_src = Some(o.tp_src);
    }
    if on(OFPFW_TP_DST) {
        m.tp_dst = Some(o.tp_dst);
    }
    let pfx = |a: Ipv4Addr, len: u8| -> Option<Masked<Ipv4Addr>> {
        match len {
            0 => None,
            32 => Some(Masked::exact(a)),
            l => {
                let mask = u32::MAX << (32 - l);
                Some(Masked {
                    value: Ipv4Addr::from(u32::from(a) & mask),
                    mask: Some(Ipv4Addr::from(mask)),
                })
            }
        }
    };
    m.ipv4_src = pfx(o.nw_src, o.nw_src_prefix_len());
    m.ipv4_dst = pfx(o.nw_dst, o.nw_dst_prefix_len());
    m
}

fn action_from_v10(a: &of10::Action, m: &FlowMatch) -> Result<FlowAction, FromWireError> {
    use of10::Action as A;
    let udp = m.transport() == Some(Transport::Udp);
    Ok(match *a {
        A::Output { port, max_len } => {
            let p = port_from_v10(port);
            if p == PortNo::Controller {
                FlowAction::Controller { max_len }
            } else {
                FlowAction::Output { port: p }
            }
        }
        A::SetVlanVid { vlan_vid } => FlowAction::Set(SetField::VlanVid(vlan_vid & 0x0fff)),
        A::SetVlanPcp { vlan_pcp } => FlowAction::Set(SetField::VlanPcp(vlan_pcp)),
        A::StripVlan => FlowAction::PopVlan,
        A::SetDlSrc { dl_addr } => FlowAction::Set(SetField::EthSrc(dl_addr)),
        A::SetDlDst { dl_addr } => FlowAction::Set(SetField::EthDst(dl_addr)),
        A::SetNwSrc { nw_addr } => FlowAction::Set(SetField::Ipv4Src(nw_addr)),
        A::SetNwDst { nw_addr } => FlowAction::Set(SetField::Ipv4Dst(nw_addr)),
        A::SetNwTos { nw_tos } => FlowAction::Set(SetField::IpDscp(nw_tos >> 2)),
        // 1.0's SET_TP_* write the ports of whatever transport the packet has; the match
        // names it (TCP when it does not).
        A::SetTpSrc { tp_port } if udp => FlowAction::Set(SetField::UdpSrc(tp_port)),
        A::SetTpSrc { tp_port } => FlowAction::Set(SetField::TcpSrc(tp_port)),
        A::SetTpDst { tp_port } if udp => FlowAction::Set(SetField::UdpDst(tp_port)),
        A::SetTpDst { tp_port } => FlowAction::Set(SetField::TcpDst(tp_port)),
        A::Enqueue { port, queue_id } => FlowAction::Enqueue {
            port: port_from_v10(port),
            queue: queue_id,
        },
        A::Vendor { vendor, .. } => {
            return Err(FromWireError(format!(
                "a vendor action (vendor {vendor:#x})"
            )))
        }
        A::Unknown { action_type, .. } => {
            return Err(FromWireError(format!(
                "an unknown action type {action_type}"
            )))
        }
    })
}

fn port_from_v10(p: u16) -> PortNo {
    if p >= 0xfff8 {
        PortNo::from_u32(p as u32 | 0xffff_0000)
    } else {
        PortNo::Physical(p as u32)
    }
}
