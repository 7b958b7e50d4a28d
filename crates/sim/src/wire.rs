//! The OpenFlow side of the sim's switches: a frame's exact match, whether one match
//! covers another (1.0 and 1.3), a wire match as the model's, and what PACKET_OUTs and
//! FLOW_MODs say, read from the decoded messages.

use std::net::Ipv4Addr;
use std::time::Instant;

use openflow::model::{FlowModCommand, Ipv4Prefix, Match, Vlan};
use openflow::of10::flow_match as fw;
use openflow::of13::oxm::{OxmField, OxmValue, OFPVID_PRESENT};
use openflow::of13::Oxm;
use openflow::view::widen_port;
use openflow::{of10, of13, Message, Version};

use crate::{FlowModRecord, WireMatch};

/// The exact match of `frame` arriving on `port`, in the switch's version.
pub(crate) fn packet_match(version: Version, frame: &[u8], port: u32) -> WireMatch {
    match version {
        Version::V1_0 => WireMatch::V10(packet::of_match::of10_match(frame, port as u16)),
        Version::V1_3 => WireMatch::V13(packet::of_match::oxm_match(frame, port)),
    }
}

/// Whether every packet `specific` matches is matched by `general` (for a packet's
/// exact match: whether `general` matches the packet).
pub fn covers(general: &WireMatch, specific: &WireMatch) -> bool {
    match (general, specific) {
        (WireMatch::V10(g), WireMatch::V10(s)) => covers10(g, s),
        (WireMatch::V13(g), WireMatch::V13(s)) => covers13(g, s),
        _ => false,
    }
}

fn covers10(g: &of10::Match, s: &of10::Match) -> bool {
    let exact = |m: &of10::Match, bit: u32| m.wildcards & bit == 0;
    let fields: [(u32, bool); 10] = [
        (fw::OFPFW_IN_PORT, g.in_port == s.in_port),
        (fw::OFPFW_DL_VLAN, g.dl_vlan == s.dl_vlan),
        (fw::OFPFW_DL_SRC, g.dl_src == s.dl_src),
        (fw::OFPFW_DL_DST, g.dl_dst == s.dl_dst),
        (fw::OFPFW_DL_TYPE, g.dl_type == s.dl_type),
        (fw::OFPFW_NW_PROTO, g.nw_proto == s.nw_proto),
        (fw::OFPFW_TP_SRC, g.tp_src == s.tp_src),
        (fw::OFPFW_TP_DST, g.tp_dst == s.tp_dst),
        (fw::OFPFW_DL_VLAN_PCP, g.dl_vlan_pcp == s.dl_vlan_pcp),
        (fw::OFPFW_NW_TOS, g.nw_tos == s.nw_tos),
    ];
    if fields
        .iter()
        .any(|&(bit, same)| exact(g, bit) && !(exact(s, bit) && same))
    {
        return false;
    }
    // nw_src / nw_dst: the number of wildcarded low bits (32 or more: any).
    let wild = |m: &of10::Match, shift: u32| ((m.wildcards >> shift) & 0x3f).min(32);
    [
        (fw::OFPFW_NW_SRC_SHIFT, g.nw_src, s.nw_src),
        (fw::OFPFW_NW_DST_SHIFT, g.nw_dst, s.nw_dst),
    ]
    .iter()
    .all(|&(shift, ga, sa)| {
        let (gw, sw) = (wild(g, shift), wild(s, shift));
        let mask = u32::MAX.checked_shl(gw).unwrap_or(0);
        gw == 32 || (sw <= gw && u32::from(ga) & mask == u32::from(sa) & mask)
    })
}

fn oxm_bits(v: &OxmValue) -> u128 {
    match v {
        OxmValue::Int(i) => u128::from(*i),
        OxmValue::Mac(m) => u128::from(m.to_u64()),
        OxmValue::Ipv4(a) => u128::from(u32::from(*a)),
        OxmValue::Ipv6(a) => u128::from(*a),
    }
}

fn covers13(g: &of13::oxm::Match, s: &of13::oxm::Match) -> bool {
    g.fields().iter().all(|o| {
        let Oxm::Basic(gb) = o else {
            return false; // experimenter fields: never matched
        };
        let Some(sb) = s.get(gb.field) else {
            return false;
        };
        let mask = gb.mask.as_ref().map_or(u128::MAX, oxm_bits);
        let smask = sb.mask.as_ref().map_or(u128::MAX, oxm_bits);
        mask & !smask == 0 && oxm_bits(&gb.value) & mask == oxm_bits(&sb.value) & mask
    })
}

/// The model's view of a wire match (fields the model has no place for are left out).
pub fn model_match(w: &WireMatch) -> Match {
    match w {
        WireMatch::V10(m) => {
            let ex = |bit: u32| m.wildcards & bit == 0;
            let prefix = |shift: u32, addr: Ipv4Addr| {
                let wild = (m.wildcards >> shift) & 0x3f;
                (wild < 32).then(|| Ipv4Prefix {
                    addr,
                    len: 32 - wild as u8,
                })
            };
            Match {
                in_port: ex(fw::OFPFW_IN_PORT).then(|| widen_port(m.in_port)),
                eth_src: ex(fw::OFPFW_DL_SRC).then_some(m.dl_src),
                eth_dst: ex(fw::OFPFW_DL_DST).then_some(m.dl_dst),
                eth_type: ex(fw::OFPFW_DL_TYPE).then_some(m.dl_type),
                vlan: ex(fw::OFPFW_DL_VLAN).then_some(match m.dl_vlan {
                    fw::OFP_VLAN_NONE => Vlan::Untagged,
                    v => Vlan::Id(v),
                }),
                ip_proto: ex(fw::OFPFW_NW_PROTO).then_some(m.nw_proto),
                ipv4_src: prefix(fw::OFPFW_NW_SRC_SHIFT, m.nw_src),
                ipv4_dst: prefix(fw::OFPFW_NW_DST_SHIFT, m.nw_dst),
                tp_src: ex(fw::OFPFW_TP_SRC).then_some(m.tp_src),
                tp_dst: ex(fw::OFPFW_TP_DST).then_some(m.tp_dst),
                ..Match::default()
            }
        }
        WireMatch::V13(m) => {
            let mut out = Match::default();
            for o in m.fields() {
                let Oxm::Basic(b) = o else { continue };
                let int = oxm_bits(&b.value) as u64;
                let mac = match b.value {
                    OxmValue::Mac(m) => Some(m),
                    _ => None,
                };
                let v4 = |v: &OxmValue| match v {
                    OxmValue::Ipv4(a) => Some(*a),
                    _ => None,
                };
                let prefix = |b: &of13::oxm::BasicOxm| {
                    let len = b
                        .mask
                        .as_ref()
                        .map_or(32, |m| oxm_bits(m).count_ones() as u8);
                    v4(&b.value).map(|addr| Ipv4Prefix { addr, len })
                };
                let mask_mac = b.mask.as_ref().and_then(|m| match m {
                    OxmValue::Mac(m) => Some(*m),
                    _ => None,
                });
                match b.field {
                    OxmField::InPort => out.in_port = Some(int as u32),
                    OxmField::EthSrc => (out.eth_src, out.eth_src_mask) = (mac, mask_mac),
                    OxmField::EthDst => (out.eth_dst, out.eth_dst_mask) = (mac, mask_mac),
                    OxmField::EthType => out.eth_type = Some(int as u16),
                    OxmField::VlanVid if b.mask.is_none() => {
                        out.vlan = Some(if int as u16 & OFPVID_PRESENT != 0 {
                            Vlan::Id(int as u16 & 0xfff)
                        } else {
                            Vlan::Untagged
                        })
                    }
                    OxmField::VlanPcp => out.vlan_pcp = Some(int as u8),
                    OxmField::IpProto => out.ip_proto = Some(int as u8),
                    OxmField::Ipv4Src => out.ipv4_src = prefix(b),
                    OxmField::Ipv4Dst => out.ipv4_dst = prefix(b),
                    OxmField::TcpSrc | OxmField::UdpSrc => out.tp_src = Some(int as u16),
                    OxmField::TcpDst | OxmField::UdpDst => out.tp_dst = Some(int as u16),
                    OxmField::Metadata => out.metadata = Some(int),
                    _ => {}
                }
            }
            out
        }
    }
}

/// A PACKET_OUT's in_port (`None` for CONTROLLER/ANY), output ports (widened) and
/// frame; `None` for other messages.
pub fn packet_out_parts(msg: &Message) -> Option<(Option<u32>, Vec<u32>, Vec<u8>)> {
    let (in_port, outputs, data) = match msg {
        Message::V10(of10::Message::PacketOut(po)) => {
            let outs = po.actions.iter().filter_map(|a| match a {
                of10::Action::Output { port, .. } => Some(widen_port(*port)),
                _ => None,
            });
            (widen_port(po.in_port), outs.collect(), po.data.clone())
        }
        Message::V13(of13::Message::PacketOut(po)) => {
            let outs = po.actions.iter().filter_map(|a| match a {
                of13::Action::Output { port, .. } => Some(*port),
                _ => None,
            });
            (po.in_port, outs.collect(), po.data.clone())
        }
        _ => return None,
    };
    let in_port = (in_port < 0xffff_ff00).then_some(in_port);
    Some((in_port, outputs, data))
}

/// A FLOW_MOD of either version as a record; `None` for other messages.
pub fn flow_mod_record(msg: &Message, at: Instant) -> Option<FlowModRecord> {
    let command = |raw: u8| match raw {
        0 => FlowModCommand::Add,
        1 => FlowModCommand::Modify,
        2 => FlowModCommand::ModifyStrict,
        3 => FlowModCommand::Delete,
        _ => FlowModCommand::DeleteStrict,
    };
    let port = |p: u32| (p != 0xffff_ffff).then_some(p);
    let r = match msg {
        Message::V10(of10::Message::FlowMod(fm)) => {
            let outputs: Vec<u32> = fm
                .actions
                .iter()
                .filter_map(|a| match a {
                    of10::Action::Output { port, .. } => Some(widen_port(*port)),
                    _ => None,
                })
                .collect();
            let wire = WireMatch::V10(fm.match_);
            FlowModRecord {
                command: command(fm.command.to_raw() as u8),
                matching: model_match(&wire),
                wire,
                priority: fm.priority,
                cookie: fm.cookie,
                cookie_mask: 0,
                idle_timeout: fm.idle_timeout,
                hard_timeout: fm.hard_timeout,
                out_port: port(widen_port(fm.out_port)),
                other_actions: fm.actions.len() - outputs.len(),
                outputs,
                at,
            }
        }
        Message::V13(of13::Message::FlowMod(fm)) => {
            let actions: Vec<&of13::Action> = fm
                .instructions
                .iter()
                .flat_map(|i| match i {
                    of13::Instruction::ApplyActions { actions }
                    | of13::Instruction::WriteActions { actions } => actions.iter().collect(),
                    _ => Vec::new(),
                })
                .collect();
            let outputs: Vec<u32> = actions
                .iter()
                .filter_map(|a| match a {
                    of13::Action::Output { port, .. } => Some(*port),
                    _ => None,
                })
                .collect();
            let wire = WireMatch::V13(fm.match_.clone());
            FlowModRecord {
                command: command(fm.command.to_raw()),
                matching: model_match(&wire),
                wire,
                priority: fm.priority,
                cookie: fm.cookie,
                cookie_mask: fm.cookie_mask,
                idle_timeout: fm.idle_timeout,
                hard_timeout: fm.hard_timeout,
                out_port: port(fm.out_port),
                other_actions: actions.len() - outputs.len(),
                outputs,
                at,
            }
        }
        _ => return None,
    };
    Some(r)
}
