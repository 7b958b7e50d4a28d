//! Between [`Flow`] and the wire: FLOW_MOD for 1.0 or 1.3 out, flow-stats entries (and
//! FLOW_MODs, for tests) in. What one version cannot express is an
//! [`EncodeError::NotExpressible`] naming it; what this syntax cannot show (vendor
//! actions, unknown OXM fields) is a [`FromWireError`] naming it.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::{
    Flow, FlowAction, FlowCounters, FlowEntry, FlowFlags, FlowMatch, FlowModCommand, Masked,
    PortNo, SetField, VlanMatch, ETH_IPV4, ETH_IPV6, PROTO_ICMP, PROTO_ICMPV6, PROTO_SCTP,
    PROTO_TCP, PROTO_UDP,
};
use crate::error::{EncodeError, EncodeResult};
use crate::header::Version;
use crate::message::Message;
use crate::of10::flow_match::{
    OFPFW_ALL, OFPFW_DL_DST, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_DL_VLAN, OFPFW_DL_VLAN_PCP,
    OFPFW_IN_PORT, OFPFW_NW_DST_SHIFT, OFPFW_NW_PROTO, OFPFW_NW_SRC_SHIFT, OFPFW_NW_TOS,
    OFPFW_TP_DST, OFPFW_TP_SRC, OFP_VLAN_NONE,
};
use crate::of10::{self, flow::OFPFF_CHECK_OVERLAP, flow::OFPFF_SEND_FLOW_REM};
use crate::of13::flow::flow_mod_flags as ff13;
use crate::of13::oxm::{OxmValue, OFPVID_PRESENT};
use crate::of13::{self, Instruction, Oxm, OxmField};
use crate::types::MacAddr;

/// A flow read from a switch that `ovs-ofctl` syntax (as this module knows it) cannot
/// show: a vendor or experimenter action, an OXM field it does not know, ...
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the flow holds {0}, which this syntax cannot show")]
pub struct FromWireError(pub String);

fn not_in(version: Version, what: &'static str) -> EncodeError {
    EncodeError::NotExpressible { what, version }
}

impl Flow {
    /// The FLOW_MOD doing `command` with this flow, for `version`.
    pub fn to_message(&self, version: Version, command: FlowModCommand) -> EncodeResult<Message> {
        Ok(match version {
            Version::V1_0 => Message::V10(of10::Message::FlowMod(self.to_of10(command)?)),
            Version::V1_3 => Message::V13(of13::Message::FlowMod(self.to_of13(command)?)),
        })
    }

    /// The FLOW_STATS request (1.0 STATS_REQUEST, 1.3 MULTIPART_REQUEST) for the flows
    /// this selection names (see [`super::parse_match`]: every table when `table` is
    /// 0xff, the cookie under its mask in 1.3). [`FlowEntry::from_message`] reads the
    /// reply.
    pub fn stats_request(&self, version: Version) -> EncodeResult<Message> {
        Ok(match version {
            Version::V1_0 => {
                if self.cookie_mask != 0 {
                    return Err(not_in(version, "a cookie mask"));
                }
                Message::V10(of10::Message::StatsRequest(of10::StatsRequest {
                    flags: 0,
                    body: of10::StatsRequestBody::Flow(of10::stats::FlowStatsRequest {
                        match_: match_v10(&self.matching)?,
                        table_id: self.table,
                        out_port: 0xffff,
                    }),
                }))
            }
            Version::V1_3 => Message::V13(of13::Message::MultipartRequest(
                of13::multipart::MultipartRequest {
                    flags: 0,
                    body: of13::multipart::MultipartRequestBody::Flow(
                        of13::multipart::FlowStatsRequest {
                            table_id: self.table,
                            out_port: of13::port::OFPP_ANY,
                            out_group: of13::OFPG_ANY,
                            cookie: self.cookie,
                            cookie_mask: self.cookie_mask,
                            match_: match_v13(&self.matching)?,
                        },
                    ),
                },
            )),
        })
    }

    /// A PACKET_OUT of `data` (unbuffered) through this flow's actions, as if it came
    /// in on `in_port`, for `version` (the match only tells what `mod_tp_*` writes;
    /// instructions other than the actions are refused).
    pub fn packet_out(
        &self,
        version: Version,
        in_port: PortNo,
        data: Vec<u8>,
    ) -> EncodeResult<Message> {
        if self.has_instructions() {
            return Err(not_in(version, "instructions in a PACKET_OUT"));
        }
        let buffer_id = crate::model::NO_BUFFER;
        Ok(match version {
            Version::V1_0 => Message::V10(of10::Message::PacketOut(of10::PacketOut {
                buffer_id,
                in_port: in_port.to_v10()?,
                actions: self
                    .actions
                    .iter()
                    .map(|a| action_v10(a, &self.matching))
                    .collect::<EncodeResult<Vec<_>>>()?,
                data,
            })),
            Version::V1_3 => Message::V13(of13::Message::PacketOut(of13::PacketOut {
                buffer_id,
                in_port: in_port.to_v13()?,
                actions: actions_v13(&self.actions)?,
                data,
            })),
        })
    }

    fn is_delete(command: FlowModCommand) -> bool {
        matches!(
            command,
            FlowModCommand::Delete | FlowModCommand::DeleteStrict
        )
    }

    /// The OpenFlow 1.0 FLOW_MOD.
    pub fn to_of10(&self, command: FlowModCommand) -> EncodeResult<of10::FlowMod> {
        const V: Version = Version::V1_0;
        // 1.0 has one table (flow_mod has no table id); "all tables" is what 1.0 deletes do.
        if self.table != 0 && !(self.table == 0xff && Self::is_delete(command)) {
            return Err(not_in(V, "a table other than 0"));
        }
        if self.cookie_mask != 0 {
            return Err(not_in(V, "a cookie mask"));
        }
        let fl = &self.flags;
        if fl.reset_counts || fl.no_packet_counts || fl.no_byte_counts {
            return Err(not_in(
                V,
                "the reset_counts, no_packet_counts and no_byte_counts flags",
            ));
        }
        if self.meter.is_some() {
            return Err(not_in(V, "a meter instruction"));
        }
        if self.clear_actions {
            return Err(not_in(V, "a clear_actions instruction"));
        }
        if self.write_actions.is_some() {
            return Err(not_in(V, "a write_actions instruction"));
        }
        if self.write_metadata.is_some() {
            return Err(not_in(V, "a write_metadata instruction"));
        }
        if self.goto_table.is_some() {
            return Err(not_in(V, "a goto_table instruction"));
        }
        let actions = self
            .actions
            .iter()
            .map(|a| action_v10(a, &self.matching))
            .collect::<EncodeResult<Vec<_>>>()?;
        Ok(of10::FlowMod {
            match_: match_v10(&self.matching)?,
            cookie: self.cookie,
            command: match command {
                FlowModCommand::Add => of10::FlowModCommand::Add,
                FlowModCommand::Modify => of10::FlowModCommand::Modify,
                FlowModCommand::ModifyStrict => of10::FlowModCommand::ModifyStrict,
                FlowModCommand::Delete => of10::FlowModCommand::Delete,
                FlowModCommand::DeleteStrict => of10::FlowModCommand::DeleteStrict,
            },
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            priority: self.priority,
            buffer_id: crate::model::NO_BUFFER,
            out_port: 0xffff,
            flags: (fl.send_flow_rem as u16 * OFPFF_SEND_FLOW_REM)
                | (fl.check_overlap as u16 * OFPFF_CHECK_OVERLAP),
            actions,
        })
    }

    /// The OpenFlow 1.3 FLOW_MOD.
    pub fn to_of13(&self, command: FlowModCommand) -> EncodeResult<of13::FlowMod> {
        let mut instructions = Vec::new();
        if let Some(m) = self.meter {
            instructions.push(Instruction::Meter { meter_id: m });
        }
        if !self.actions.is_empty() {
            instructions.push(Instruction::ApplyActions {
                actions: actions_v13(&self.actions)?,
            });
        }
        if self.clear_actions {
            instructions.push(Instruction::ClearActions);
        }
        if let Some(w) = &self.write_actions {
            instructions.push(Instruction::WriteActions {
                actions: actions_v13(w)?,
            });
        }
        if let Some(md) = self.write_metadata {
            instructions.push(Instruction::WriteMetadata {
                metadata: md.value,
                metadata_mask: md.mask.unwrap_or(u64::MAX),
            });
        }
        if let Some(t) = self.goto_table {
            instructions.push(Instruction::GotoTable { table_id: t });
        }
        let fl = &self.flags;
        Ok(of13::FlowMod {
            cookie: self.cookie,
            cookie_mask: self.cookie_mask,
            table_id: self.table,
            command: match command {
                FlowModCommand::Add => of13::FlowModCommand::Add,
                FlowModCommand::Modify => of13::FlowModCommand::Modify,
                FlowModCommand::ModifyStrict => of13::FlowModCommand::ModifyStrict,
                FlowModCommand::Delete => of13::FlowModCommand::Delete,
                FlowModCommand::DeleteStrict => of13::FlowModCommand::DeleteStrict,
            },
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            priority: self.priority,
            buffer_id: crate::model::NO_BUFFER,
            out_port: of13::port::OFPP_ANY,
            out_group: of13::OFPG_ANY,
            flags: (fl.send_flow_rem as u16 * ff13::SEND_FLOW_REM)
                | (fl.check_overlap as u16 * ff13::CHECK_OVERLAP)
                | (fl.reset_counts as u16 * ff13::RESET_COUNTS)
                | (fl.no_packet_counts as u16 * ff13::NO_PKT_COUNTS)
                | (fl.no_byte_counts as u16 * ff13::NO_BYT_COUNTS),
            match_: match_v13(&self.matching)?,
            instructions: if Self::is_delete(command) {
                Vec::new()
            } else {
                instructions
            },
        })
    }

    /// The flow a 1.0 FLOW_MOD adds (command, buffer and out_port are dropped).
    pub fn from_of10(fm: &of10::FlowMod) -> Result<Flow, FromWireError> {
        from_parts_v10(
            &fm.match_,
            &fm.actions,
            Head {
                table: 0,
                priority: fm.priority,
                cookie: fm.cookie,
                idle_timeout: fm.idle_timeout,
                hard_timeout: fm.hard_timeout,
                flags: fm.flags,
            },
        )
    }

    /// The flow a 1.3 FLOW_MOD adds (command, buffer, out_port and out_group are
    /// dropped; the cookie mask is kept).
    pub fn from_of13(fm: &of13::FlowMod) -> Result<Flow, FromWireError> {
        let mut f = from_parts_v13(
            &fm.match_,
            &fm.instructions,
            Head {
                table: fm.table_id,
                priority: fm.priority,
                cookie: fm.cookie,
                idle_timeout: fm.idle_timeout,
                hard_timeout: fm.hard_timeout,
                flags: fm.flags,
            },
        )?;
        f.cookie_mask = fm.cookie_mask;
        Ok(f)
    }
}

impl FlowEntry {
    /// One entry of a 1.0 flow stats reply.
    pub fn from_of10(s: &of10::stats::FlowStats) -> Result<FlowEntry, FromWireError> {
        let flow = from_parts_v10(
            &s.match_,
            &s.actions,
            Head {
                table: s.table_id,
                priority: s.priority,
                cookie: s.cookie,
                idle_timeout: s.idle_timeout,
                hard_timeout: s.hard_timeout,
                flags: 0,
            },
        )?;
        Ok(FlowEntry {
            flow,
            counters: Some(FlowCounters {
                duration_sec: s.duration_sec,
                duration_nsec: s.duration_nsec,
                packet_count: s.packet_count,
                byte_count: s.byte_count,
            }),
        })
    }

    /// One entry of a 1.3 flow stats reply.
    pub fn from_of13(s: &of13::multipart::FlowStats) -> Result<FlowEntry, FromWireError> {
        let flow = from_parts_v13(
            &s.match_,
            &s.instructions,
            Head {
                table: s.table_id,
                priority: s.priority,
                cookie: s.cookie,
                idle_timeout: s.idle_timeout,
                hard_timeout: s.hard_timeout,
                flags: s.flags,
            },
        )?;
        Ok(FlowEntry {
            flow,
            counters: Some(FlowCounters {
                duration_sec: s.duration_sec,
                duration_nsec: s.duration_nsec,
                packet_count: s.packet_count,
                byte_count: s.byte_count,
            }),
        })
    }

    /// Every entry of a flow stats reply of either version; `None` when `msg` is no
    /// flow stats reply. Entries this syntax cannot show are errors, one per entry.
    pub fn from_message(msg: &Message) -> Option<Vec<Result<FlowEntry, FromWireError>>> {
        match msg {
            Message::V10(of10::Message::StatsReply(r)) => match &r.body {
                of10::StatsReplyBody::Flow { stats } => {
                    Some(stats.iter().map(FlowEntry::from_of10).collect())
                }
                _ => None,
            },
            Message::V13(of13::Message::MultipartReply(r)) => match &r.body {
                of13::multipart::MultipartReplyBody::Flow { stats } => {
                    Some(stats.iter().map(FlowEntry::from_of13).collect())
                }
                _ => None,
            },
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------
// OpenFlow 1.0

fn match_v10(m: &FlowMatch) -> EncodeResult<of10::Match> {
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
    if l3 && !matches!(m.eth_type, Some(ETH_IPV4) | Some(super::ETH_ARP)) {
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

fn action_v10(a: &FlowAction, m: &FlowMatch) -> EncodeResult<of10::Action> {
    const V: Version = Version::V1_0;
    use super::Transport;
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

/// The flow-level fields shared by FLOW_MOD and flow stats.
struct Head {
    table: u8,
    priority: u16,
    cookie: u64,
    idle_timeout: u16,
    hard_timeout: u16,
    flags: u16,
}

impl Head {
    fn flow(&self) -> Flow {
        let f = self.flags;
        Flow {
            table: self.table,
            priority: self.priority,
            cookie: self.cookie,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            flags: FlowFlags {
                send_flow_rem: f & ff13::SEND_FLOW_REM != 0,
                check_overlap: f & ff13::CHECK_OVERLAP != 0,
                reset_counts: f & ff13::RESET_COUNTS != 0,
                no_packet_counts: f & ff13::NO_PKT_COUNTS != 0,
                no_byte_counts: f & ff13::NO_BYT_COUNTS != 0,
            },
            ..Flow::default()
        }
    }
}

fn from_parts_v10(
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
    let udp = m.transport() == Some(super::Transport::Udp);
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

// ---------------------------------------------------------------------------------
// OpenFlow 1.3

fn match_v13(m: &FlowMatch) -> EncodeResult<of13::Match> {
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

fn actions_v13(list: &[FlowAction]) -> EncodeResult<Vec<of13::Action>> {
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

fn from_parts_v13(
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

// ---------------------------------------------------------------------------------
// From the apps' model (crate::model), so a flow an app sends can be shown in this
// syntax (logs, the REST API's view of what an app installed).

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
