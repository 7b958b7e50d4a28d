//! From the apps' model ([`crate::model`]) to this syntax, so a flow an app sends can be
//! shown (logs, the REST API's view of what an app installed).

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::model::PortNo;
use crate::ofctl::flow::{Flow, FlowAction, FlowFlags, FlowMatch, Masked, SetField, VlanMatch};
use crate::types::MacAddr;

impl From<&crate::model::Match> for FlowMatch {
    fn from(m: &crate::model::Match) -> FlowMatch {
        use crate::model::{Ipv4Prefix, Ipv6Prefix, Vlan};
        let v4 = |p: Ipv4Prefix| -> Option<Masked<Ipv4Addr>> {
            match p.len.min(32) {
                0 => None,
                32 => Some(Masked::exact(p.addr)),
                l => {
                    let mask = u32::MAX << (32 - l);
                    Some(Masked {
                        value: Ipv4Addr::from(u32::from(p.addr) & mask),
                        mask: Some(Ipv4Addr::from(mask)),
                    })
                }
            }
        };
        let v6 = |p: Ipv6Prefix| -> Option<Masked<Ipv6Addr>> {
            match p.len.min(128) {
                0 => None,
                128 => Some(Masked::exact(p.addr)),
                l => {
                    let mask = u128::MAX << (128 - l);
                    Some(Masked {
                        value: Ipv6Addr::from(u128::from(p.addr) & mask),
                        mask: Some(Ipv6Addr::from(mask)),
                    })
                }
            }
        };
        let eth = |a: Option<MacAddr>, k: Option<MacAddr>| -> Option<Masked<MacAddr>> {
            let a = a?;
            match k {
                None => Some(Masked::exact(a)),
                Some(MacAddr::ZERO) => None,
                Some(MacAddr::BROADCAST) => Some(Masked::exact(a)),
                Some(k) => {
                    let mut v = a.0;
                    for (b, x) in v.iter_mut().zip(k.0) {
                        *b &= x;
                    }
                    Some(Masked {
                        value: MacAddr(v),
                        mask: Some(k),
                    })
                }
            }
        };
        let mut out = FlowMatch {
            in_port: m.in_port.map(PortNo::from_u32),
            eth_src: eth(m.eth_src, m.eth_src_mask),
            eth_dst: eth(m.eth_dst, m.eth_dst_mask),
            eth_type: m.eth_type,
            vlan: m.vlan.map(|v| match v {
                Vlan::Untagged => VlanMatch::Untagged,
                Vlan::Id(id) => VlanMatch::Id(id & 0x0fff),
            }),
            vlan_pcp: m.vlan_pcp,
            ip_dscp: m.ip_dscp,
            ip_proto: m.ip_proto,
            ipv4_src: m.ipv4_src.and_then(v4),
            ipv4_dst: m.ipv4_dst.and_then(v4),
            tp_src: m.tp_src,
            tp_dst: m.tp_dst,
            ipv6_src: m.ipv6_src.and_then(v6),
            ipv6_dst: m.ipv6_dst.and_then(v6),
            metadata: m.metadata.map(Masked::exact),
            ..FlowMatch::default()
        };
        if out.vlan_pcp.is_some() && out.vlan.is_none() {
            out.vlan = Some(VlanMatch::AnyTagged);
        }
        out
    }
}

impl From<crate::model::Action> for FlowAction {
    fn from(a: crate::model::Action) -> FlowAction {
        use crate::model::Action as M;
        match a {
            M::Output {
                port: PortNo::Controller,
                max_len,
            } => FlowAction::Controller { max_len },
            M::Output { port, .. } => FlowAction::Output { port },
            M::SetVlanVid { vid } => FlowAction::Set(SetField::VlanVid(vid & 0x0fff)),
            M::SetVlanPcp { pcp } => FlowAction::Set(SetField::VlanPcp(pcp)),
            M::PopVlan => FlowAction::PopVlan,
            M::PushVlan { ethertype } => FlowAction::PushVlan { ethertype },
            M::SetEthSrc { addr } => FlowAction::Set(SetField::EthSrc(addr)),
            M::SetEthDst { addr } => FlowAction::Set(SetField::EthDst(addr)),
            M::SetIpv4Src { addr } => FlowAction::Set(SetField::Ipv4Src(addr)),
            M::SetIpv4Dst { addr } => FlowAction::Set(SetField::Ipv4Dst(addr)),
            M::SetIpDscp { dscp } => FlowAction::Set(SetField::IpDscp(dscp)),
            M::SetTcpSrc { port } => FlowAction::Set(SetField::TcpSrc(port)),
            M::SetTcpDst { port } => FlowAction::Set(SetField::TcpDst(port)),
            M::SetUdpSrc { port } => FlowAction::Set(SetField::UdpSrc(port)),
            M::SetUdpDst { port } => FlowAction::Set(SetField::UdpDst(port)),
            M::Enqueue { port, queue_id } => FlowAction::Enqueue {
                port,
                queue: queue_id,
            },
            M::Group { group_id } => FlowAction::Group { group_id },
            M::DecNwTtl => FlowAction::DecTtl,
        }
    }
}

impl From<&crate::model::FlowMod<'_>> for Flow {
    /// The flow an app's FLOW_MOD describes (command, buffer and out_port aside).
    fn from(fm: &crate::model::FlowMod<'_>) -> Flow {
        Flow {
            table: fm.table_id,
            priority: fm.priority,
            cookie: fm.cookie,
            cookie_mask: fm.cookie_mask,
            idle_timeout: fm.idle_timeout,
            hard_timeout: fm.hard_timeout,
            flags: FlowFlags {
                send_flow_rem: fm.flags.send_flow_removed,
                check_overlap: fm.flags.check_overlap,
                reset_counts: fm.flags.reset_counts,
                ..FlowFlags::default()
            },
            matching: FlowMatch::from(&fm.matching),
            actions: fm.actions.iter().copied().map(FlowAction::from).collect(),
            ..Flow::default()
        }
    }
}
