//! The printer: `ovs-ofctl` syntax, with only names Open vSwitch accepts, in one
//! canonical order, so that printing then parsing is the identity.

use std::fmt::{self, Write as _};
use std::net::{Ipv4Addr, Ipv6Addr};

use super::flow::{
    Flow, FlowAction, FlowEntry, FlowMatch, Masked, SetField, Transport, VlanMatch, ALL_TABLES,
    ETH_ARP, ETH_IPV4, ETH_IPV6, ETH_RARP, PROTO_ICMP, PROTO_ICMPV6, PROTO_SCTP, PROTO_TCP,
    PROTO_UDP,
};
use crate::model::PortNo;

/// A port as `ovs-ofctl` names it.
pub(super) struct Port(pub PortNo);

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            PortNo::Physical(n) => write!(f, "{n}"),
            PortNo::InPort => f.write_str("IN_PORT"),
            PortNo::Table => f.write_str("TABLE"),
            PortNo::Normal => f.write_str("NORMAL"),
            PortNo::Flood => f.write_str("FLOOD"),
            PortNo::All => f.write_str("ALL"),
            PortNo::Controller => f.write_str("CONTROLLER"),
            PortNo::Local => f.write_str("LOCAL"),
            PortNo::Any => f.write_str("ANY"),
        }
    }
}

impl fmt::Display for Masked<Ipv4Addr> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value)?;
        if let Some(m) = self.mask {
            let m = u32::from(m);
            if m.leading_ones() + m.trailing_zeros() == 32 {
                write!(f, "/{}", m.leading_ones())?;
            } else {
                write!(f, "/{}", Ipv4Addr::from(m))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Masked<Ipv6Addr> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value)?;
        if let Some(m) = self.mask {
            let m = u128::from(m);
            if m.leading_ones() + m.trailing_zeros() == 128 {
                write!(f, "/{}", m.leading_ones())?;
            } else {
                write!(f, "/{}", Ipv6Addr::from(m))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Masked<crate::MacAddr> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value)?;
        if let Some(m) = self.mask {
            write!(f, "/{m}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Masked<u64> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.value)?;
        if let Some(m) = self.mask {
            write!(f, "/{m:#x}")?;
        }
        Ok(())
    }
}

/// Writes `item` after a separator when `out` already holds something.
fn item(out: &mut String, args: fmt::Arguments<'_>) {
    if !out.is_empty() {
        out.push(',');
    }
    let _ = out.write_fmt(args);
}

impl FlowMatch {
    /// The match alone, in `ovs-ofctl` syntax (empty for the match-all match).
    pub fn to_ofctl(&self) -> String {
        let mut out = String::new();
        self.write_items(&mut out);
        out
    }

    fn write_items(&self, out: &mut String) {
        let m = self;
        let shorthand = match (m.eth_type, m.ip_proto) {
            (Some(ETH_IPV4), Some(PROTO_ICMP)) => Some(("icmp", true)),
            (Some(ETH_IPV4), Some(PROTO_TCP)) => Some(("tcp", true)),
            (Some(ETH_IPV4), Some(PROTO_UDP)) => Some(("udp", true)),
            (Some(ETH_IPV4), Some(PROTO_SCTP)) => Some(("sctp", true)),
            (Some(ETH_IPV6), Some(PROTO_ICMPV6)) => Some(("icmp6", true)),
            (Some(ETH_IPV6), Some(PROTO_TCP)) => Some(("tcp6", true)),
            (Some(ETH_IPV6), Some(PROTO_UDP)) => Some(("udp6", true)),
            (Some(ETH_IPV6), Some(PROTO_SCTP)) => Some(("sctp6", true)),
            (Some(ETH_IPV4), _) => Some(("ip", false)),
            (Some(ETH_IPV6), _) => Some(("ipv6", false)),
            (Some(ETH_ARP), _) => Some(("arp", false)),
            (Some(ETH_RARP), _) => Some(("rarp", false)),
            _ => None,
        };
        let proto_done = match shorthand {
            Some((s, p)) => {
                item(out, format_args!("{s}"));
                p
            }
            None => {
                if let Some(t) = m.eth_type {
                    item(out, format_args!("dl_type={t:#06x}"));
                }
                false
            }
        };
        if let Some(p) = m.in_port {
            item(out, format_args!("in_port={}", Port(p)));
        }
        if let Some(a) = m.eth_src {
            item(out, format_args!("dl_src={a}"));
        }
        if let Some(a) = m.eth_dst {
            item(out, format_args!("dl_dst={a}"));
        }
        match (m.vlan, m.vlan_pcp) {
            (Some(VlanMatch::Id(v)), _) => item(out, format_args!("dl_vlan={v}")),
            (Some(VlanMatch::Untagged), _) => item(out, format_args!("vlan_tci=0x0000/0x1fff")),
            // A priority implies a tag: Open vSwitch prints it alone.
            (Some(VlanMatch::AnyTagged), None) => item(out, format_args!("vlan_tci=0x1000/0x1000")),
            _ => {}
        }
        if let Some(p) = m.vlan_pcp {
            item(out, format_args!("dl_vlan_pcp={p}"));
        }
        let arp = m.is_arp();
        if let Some(a) = m.ipv4_src {
            item(
                out,
                format_args!("{}={a}", if arp { "arp_spa" } else { "nw_src" }),
            );
        }
        if let Some(a) = m.ipv4_dst {
            item(
                out,
                format_args!("{}={a}", if arp { "arp_tpa" } else { "nw_dst" }),
            );
        }
        if let Some(p) = m.ip_proto {
            if arp {
                item(out, format_args!("arp_op={p}"));
            } else if !proto_done {
                item(out, format_args!("nw_proto={p}"));
            }
        }
        if let Some(d) = m.ip_dscp {
            item(out, format_args!("nw_tos={}", d << 2));
        }
        if let Some(e) = m.ip_ecn {
            item(out, format_args!("nw_ecn={e}"));
        }
        let icmp = m.is_icmp();
        if let Some(p) = m.tp_src {
            item(
                out,
                format_args!("{}={p}", if icmp { "icmp_type" } else { "tp_src" }),
            );
        }
        if let Some(p) = m.tp_dst {
            item(
                out,
                format_args!("{}={p}", if icmp { "icmp_code" } else { "tp_dst" }),
            );
        }
        if let Some(a) = m.ipv6_src {
            item(out, format_args!("ipv6_src={a}"));
        }
        if let Some(a) = m.ipv6_dst {
            item(out, format_args!("ipv6_dst={a}"));
        }
        if let Some(l) = m.ipv6_label {
            item(out, format_args!("ipv6_label={l:#x}"));
        }
        if let Some(a) = m.arp_sha {
            item(out, format_args!("arp_sha={a}"));
        }
        if let Some(a) = m.arp_tha {
            item(out, format_args!("arp_tha={a}"));
        }
        if let Some(md) = m.metadata {
            item(out, format_args!("metadata={md}"));
        }
    }
}

/// One action, in the context of the flow's match (which says whether `mod_tp_src`
/// means TCP, UDP or SCTP).
pub(super) fn write_action(out: &mut String, a: &FlowAction, m: &FlowMatch) {
    let t = m.transport();
    match *a {
        FlowAction::Output { port } => match port {
            PortNo::Physical(_) | PortNo::Table | PortNo::Any | PortNo::Controller => {
                item(out, format_args!("output:{}", Port(port)))
            }
            _ => item(out, format_args!("{}", Port(port))),
        },
        FlowAction::Controller { max_len } => item(out, format_args!("CONTROLLER:{max_len}")),
        FlowAction::Enqueue { port, queue } => {
            item(out, format_args!("enqueue:{}:{queue}", Port(port)))
        }
        FlowAction::SetQueue { queue } => item(out, format_args!("set_queue:{queue}")),
        FlowAction::PushVlan { ethertype } => item(out, format_args!("push_vlan:{ethertype:#06x}")),
        FlowAction::PopVlan => item(out, format_args!("pop_vlan")),
        FlowAction::Group { group_id } => item(out, format_args!("group:{group_id}")),
        FlowAction::DecTtl => item(out, format_args!("dec_ttl")),
        FlowAction::Set(sf) => {
            let tp = |out: &mut String, want: Transport, src: bool, p: u16, name: &str| {
                if t == Some(want) {
                    let which = if src { "src" } else { "dst" };
                    item(out, format_args!("mod_tp_{which}:{p}"));
                } else {
                    item(out, format_args!("set_field:{p}->{name}"));
                }
            };
            match sf {
                SetField::EthSrc(a) => item(out, format_args!("mod_dl_src:{a}")),
                SetField::EthDst(a) => item(out, format_args!("mod_dl_dst:{a}")),
                SetField::VlanVid(v) => item(out, format_args!("mod_vlan_vid:{v}")),
                SetField::VlanPcp(p) => item(out, format_args!("mod_vlan_pcp:{p}")),
                SetField::Ipv4Src(a) => item(out, format_args!("mod_nw_src:{a}")),
                SetField::Ipv4Dst(a) => item(out, format_args!("mod_nw_dst:{a}")),
                SetField::IpDscp(d) => item(out, format_args!("mod_nw_tos:{}", d << 2)),
                SetField::IpEcn(e) => item(out, format_args!("mod_nw_ecn:{e}")),
                SetField::TcpSrc(p) => tp(out, Transport::Tcp, true, p, "tcp_src"),
                SetField::TcpDst(p) => tp(out, Transport::Tcp, false, p, "tcp_dst"),
                SetField::UdpSrc(p) => tp(out, Transport::Udp, true, p, "udp_src"),
                SetField::UdpDst(p) => tp(out, Transport::Udp, false, p, "udp_dst"),
                SetField::SctpSrc(p) => tp(out, Transport::Sctp, true, p, "sctp_src"),
                SetField::SctpDst(p) => tp(out, Transport::Sctp, false, p, "sctp_dst"),
                SetField::Ipv6Src(a) => item(out, format_args!("set_field:{a}->ipv6_src")),
                SetField::Ipv6Dst(a) => item(out, format_args!("set_field:{a}->ipv6_dst")),
                SetField::Ipv6Label(l) => item(out, format_args!("set_field:{l:#x}->ipv6_label")),
                SetField::ArpOp(o) => item(out, format_args!("set_field:{o}->arp_op")),
                SetField::ArpSpa(a) => item(out, format_args!("set_field:{a}->arp_spa")),
                SetField::ArpTpa(a) => item(out, format_args!("set_field:{a}->arp_tpa")),
                SetField::ArpSha(a) => item(out, format_args!("set_field:{a}->arp_sha")),
                SetField::ArpTha(a) => item(out, format_args!("set_field:{a}->arp_tha")),
            }
        }
    }
}

impl Flow {
    /// The `actions=` value: instructions and actions, `drop` when there are none.
    pub fn actions_to_ofctl(&self) -> String {
        let mut out = String::new();
        if let Some(m) = self.meter {
            item(&mut out, format_args!("meter:{m}"));
        }
        for a in &self.actions {
            write_action(&mut out, a, &self.matching);
        }
        if self.clear_actions {
            item(&mut out, format_args!("clear_actions"));
        }
        if let Some(w) = &self.write_actions {
            let mut inner = String::new();
            for a in w {
                write_action(&mut inner, a, &self.matching);
            }
            item(&mut out, format_args!("write_actions({inner})"));
        }
        if let Some(md) = self.write_metadata {
            item(&mut out, format_args!("write_metadata:{md}"));
        }
        if let Some(t) = self.goto_table {
            item(&mut out, format_args!("goto_table:{t}"));
        }
        if out.is_empty() {
            out.push_str("drop");
        }
        out
    }

    fn write_head(&self, out: &mut String, with_table: bool) {
        if with_table && self.table != 0 {
            item(out, format_args!("table={}", self.table));
        }
        if self.idle_timeout != 0 {
            item(out, format_args!("idle_timeout={}", self.idle_timeout));
        }
        if self.hard_timeout != 0 {
            item(out, format_args!("hard_timeout={}", self.hard_timeout));
        }
        let fl = &self.flags;
        for (on, name) in [
            (fl.send_flow_rem, "send_flow_rem"),
            (fl.check_overlap, "check_overlap"),
            (fl.reset_counts, "reset_counts"),
            (fl.no_packet_counts, "no_packet_counts"),
            (fl.no_byte_counts, "no_byte_counts"),
        ] {
            if on {
                item(out, format_args!("{name}"));
            }
        }
        if self.priority != Flow::DEFAULT_PRIORITY {
            item(out, format_args!("priority={}", self.priority));
        }
    }
}

impl Flow {
    /// A selection of flows (what [`super::parse_match`] reads) in `ovs-ofctl del-flows`
    /// syntax: `table=` unless every table, `priority=` unless the default, the cookie
    /// and its mask, the match; no actions.
    pub fn selection_to_ofctl(&self) -> String {
        let mut out = String::new();
        if self.table != ALL_TABLES {
            item(&mut out, format_args!("table={}", self.table));
        }
        if self.priority != Flow::DEFAULT_PRIORITY {
            item(&mut out, format_args!("priority={}", self.priority));
        }
        if self.cookie != 0 || self.cookie_mask != 0 {
            item(&mut out, format_args!("cookie={:#x}", self.cookie));
            if self.cookie_mask != 0 {
                let _ = write!(out, "/{:#x}", self.cookie_mask);
            }
        }
        self.matching.write_items(&mut out);
        out
    }
}

impl fmt::Display for Flow {
    /// `ovs-ofctl add-flow` syntax: `table=1,priority=100,ip,nw_dst=10.0.0.2,actions=...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write_head(&mut out, true);
        if self.cookie != 0 || self.cookie_mask != 0 {
            item(&mut out, format_args!("cookie={:#x}", self.cookie));
            if self.cookie_mask != 0 {
                let _ = write!(out, "/{:#x}", self.cookie_mask);
            }
        }
        self.matching.write_items(&mut out);
        item(
            &mut out,
            format_args!("actions={}", self.actions_to_ofctl()),
        );
        f.write_str(&out)
    }
}

impl fmt::Display for FlowEntry {
    /// With counters, a `dump-flows` line (`cookie=0x0, duration=1.5s, table=0,
    /// n_packets=0, n_bytes=0, priority=100,ip actions=drop`, durations to the
    /// millisecond); without, the flow as [`Flow`] prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(c) = self.counters else {
            return self.flow.fmt(f);
        };
        let fl = &self.flow;
        write!(f, "cookie={:#x}, ", fl.cookie)?;
        write!(
            f,
            "duration={}.{:03}s, ",
            c.duration_sec,
            c.duration_nsec / 1_000_000
        )?;
        write!(
            f,
            "table={}, n_packets={}, n_bytes={}, ",
            fl.table, c.packet_count, c.byte_count
        )?;
        let mut head = String::new();
        fl.write_head(&mut head, false);
        fl.matching.write_items(&mut head);
        if !head.is_empty() {
            write!(f, "{head} ")?;
        }
        write!(f, "actions={}", fl.actions_to_ofctl())
    }
}
