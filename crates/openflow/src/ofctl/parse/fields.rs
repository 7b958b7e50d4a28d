//! The items before `actions=`: the flow's own keys (`table`, `priority`, `cookie`, ...),
//! the counters of a dump-flows line, and the match fields under each of their names;
//! then [`Parser::finish`], the checks that need the whole match (prerequisites, the
//! protocol `mod_tp_*` writes).

use std::ops::Range;

use super::error::{ErrorKind, ParseError};
use super::values::{duration, int, mac, masked_int, masked_ipv4, masked_ipv6, masked_mac, port};
use super::{Mode, Parser, F};
use crate::ofctl::flow::{
    FlowAction, FlowCounters, FlowMatch, Masked, SetField, Transport, VlanMatch, ETH_ARP, ETH_IPV4,
    ETH_IPV6, ETH_RARP, PROTO_ICMP, PROTO_ICMPV6, PROTO_SCTP, PROTO_TCP, PROTO_UDP,
};

impl<'a> Parser<'a> {
    /// One item before `actions=`: a shorthand or flag keyword (no value), a key of the
    /// flow, a counter (dump-flows lines only) or a match field.
    pub(super) fn item(
        &mut self,
        key: &str,
        value: Option<(usize, &'a str)>,
        span: Range<usize>,
    ) -> Result<(), ParseError> {
        // Shorthands and flag keywords take no value.
        let shorthand: Option<(u16, Option<u8>)> = match key {
            "ip" | "ipv4" => Some((ETH_IPV4, None)),
            "ipv6" => Some((ETH_IPV6, None)),
            "arp" => Some((ETH_ARP, None)),
            "rarp" => Some((ETH_RARP, None)),
            "icmp" => Some((ETH_IPV4, Some(PROTO_ICMP))),
            "icmp6" => Some((ETH_IPV6, Some(PROTO_ICMPV6))),
            "tcp" => Some((ETH_IPV4, Some(PROTO_TCP))),
            "tcp6" => Some((ETH_IPV6, Some(PROTO_TCP))),
            "udp" => Some((ETH_IPV4, Some(PROTO_UDP))),
            "udp6" => Some((ETH_IPV6, Some(PROTO_UDP))),
            "sctp" => Some((ETH_IPV4, Some(PROTO_SCTP))),
            "sctp6" => Some((ETH_IPV6, Some(PROTO_SCTP))),
            _ => None,
        };
        let flag = match key {
            "send_flow_rem" => Some(&mut self.flow.flags.send_flow_rem),
            "check_overlap" => Some(&mut self.flow.flags.check_overlap),
            "reset_counts" => Some(&mut self.flow.flags.reset_counts),
            "no_packet_counts" => Some(&mut self.flow.flags.no_packet_counts),
            "no_byte_counts" => Some(&mut self.flow.flags.no_byte_counts),
            _ => None,
        };
        if shorthand.is_some() || flag.is_some() {
            if value.is_some() {
                return Err(self.err(span, ErrorKind::UnexpectedValue));
            }
            if let Some(f) = flag {
                *f = true;
                return Ok(());
            }
            let (t, p) = shorthand.unwrap_or_default();
            self.set(F::EthType, |m| &mut m.eth_type, t, &span)?;
            if let Some(p) = p {
                self.set(F::IpProto, |m| &mut m.ip_proto, p, &span)?;
            }
            return Ok(());
        }
        let Some((_, v)) = value else {
            let kind = if known_key(key) {
                ErrorKind::MissingValue
            } else {
                ErrorKind::UnknownField(key.to_string())
            };
            return Err(self.err(span, kind));
        };
        let bad = |what: &'static str| {
            self.err(
                span.clone(),
                ErrorKind::BadValue {
                    what,
                    value: v.to_string(),
                },
            )
        };
        let dump_only = |p: &Self| {
            if p.mode == Mode::Dump {
                Ok(())
            } else {
                Err(p.err(
                    span.clone(),
                    ErrorKind::NotHere("a counter, found only in dump-flows output"),
                ))
            }
        };
        match key {
            // The flow itself.
            "table" => self.flow.table = int(v, 8).ok_or_else(|| bad("table id"))? as u8,
            "priority" => self.flow.priority = int(v, 16).ok_or_else(|| bad("priority"))? as u16,
            "idle_timeout" => {
                self.flow.idle_timeout = int(v, 16).ok_or_else(|| bad("timeout"))? as u16
            }
            "hard_timeout" => {
                self.flow.hard_timeout = int(v, 16).ok_or_else(|| bad("timeout"))? as u16
            }
            "cookie" => {
                let m = masked_int(v, 64).ok_or_else(|| bad("cookie"))?;
                // A zero mask selects every cookie.
                let m = m.unwrap_or(Masked::exact(0));
                if m.mask.is_some() && self.mode != Mode::Match {
                    return Err(self.err(
                        span,
                        ErrorKind::NotHere(
                            "a cookie mask selects flows (del-flows, dump-flows); a flow to add has one cookie",
                        ),
                    ));
                }
                self.flow.cookie = m.value;
                self.flow.cookie_mask = m.mask.unwrap_or(0);
            }
            // Counters of dump-flows.
            "duration" => {
                dump_only(self)?;
                let (sec, nsec) = duration(v).ok_or_else(|| bad("duration"))?;
                let c = self.counters.get_or_insert(zero_counters());
                c.duration_sec = sec;
                c.duration_nsec = nsec;
            }
            "n_packets" => {
                dump_only(self)?;
                let n = int(v, 64).ok_or_else(|| bad("packet count"))?;
                self.counters.get_or_insert(zero_counters()).packet_count = n;
            }
            "n_bytes" => {
                dump_only(self)?;
                let n = int(v, 64).ok_or_else(|| bad("byte count"))?;
                self.counters.get_or_insert(zero_counters()).byte_count = n;
            }
            "idle_age" | "hard_age" => {
                dump_only(self)?;
                int(v, 32).ok_or_else(|| bad("age"))?;
            }
            // The match.
            "in_port" => {
                let p = port(v).ok_or_else(|| bad("port"))?;
                self.set(F::InPort, |m| &mut m.in_port, p, &span)?;
            }
            "dl_src" | "eth_src" => {
                let a = masked_mac(v).ok_or_else(|| bad("Ethernet address"))?;
                self.set_opt(F::EthSrc, |m| &mut m.eth_src, a, &span)?;
            }
            "dl_dst" | "eth_dst" => {
                let a = masked_mac(v).ok_or_else(|| bad("Ethernet address"))?;
                self.set_opt(F::EthDst, |m| &mut m.eth_dst, a, &span)?;
            }
            "dl_type" | "eth_type" => {
                let t = int(v, 16).ok_or_else(|| bad("Ethernet type"))? as u16;
                self.set(F::EthType, |m| &mut m.eth_type, t, &span)?;
            }
            "dl_vlan" => {
                let n = int(v, 16).ok_or_else(|| bad("VLAN id"))?;
                let vl = match n {
                    0xffff => VlanMatch::Untagged,
                    n if n <= 0x0fff => VlanMatch::Id(n as u16),
                    _ => return Err(bad("VLAN id")),
                };
                self.set(F::Vlan, |m| &mut m.vlan, vl, &span)?;
            }
            "vlan_vid" => {
                // OXM_OF_VLAN_VID: OFPVID_PRESENT | vid, or OFPVID_NONE; a mask of
                // 0x1000 on 0x1000 is "any tag" (1.3 §7.2.3.7, table 12).
                let m = masked_int(v, 13).flatten().ok_or_else(|| bad("VLAN vid"))?;
                let vl = match (m.value, m.mask) {
                    (0, None) => VlanMatch::Untagged,
                    (0x1000, Some(0x1000)) => VlanMatch::AnyTagged,
                    (x, None) if x & 0x1000 != 0 => VlanMatch::Id(x as u16 & 0x0fff),
                    _ => return Err(bad("VLAN vid (0, 0x1000|VID or 0x1000/0x1000)")),
                };
                self.set(F::Vlan, |m| &mut m.vlan, vl, &span)?;
            }
            "vlan_tci" => {
                let m = masked_int(v, 16).flatten().ok_or_else(|| bad("VLAN TCI"))?;
                let vl = match (m.value, m.mask) {
                    (0, None) | (0, Some(0x1fff)) => VlanMatch::Untagged,
                    (0x1000, Some(0x1000)) => VlanMatch::AnyTagged,
                    (x, Some(0x1fff)) if x & 0x1000 != 0 => VlanMatch::Id(x as u16 & 0x0fff),
                    _ => {
                        return Err(bad(
                            "VLAN TCI (0x0000, 0x1000/0x1000 or 0x1VVV/0x1fff; use dl_vlan and dl_vlan_pcp)",
                        ))
                    }
                };
                self.set(F::Vlan, |m| &mut m.vlan, vl, &span)?;
            }
            "dl_vlan_pcp" | "vlan_pcp" => {
                let p = int(v, 3).ok_or_else(|| bad("VLAN priority (0-7)"))? as u8;
                self.set(F::VlanPcp, |m| &mut m.vlan_pcp, p, &span)?;
            }
            "nw_tos" => {
                let t = int(v, 8).ok_or_else(|| bad("IP ToS"))?;
                if t & 3 != 0 {
                    return Err(bad("IP ToS (a multiple of 4: the DSCP shifted left by 2)"));
                }
                self.set(F::IpDscp, |m| &mut m.ip_dscp, (t >> 2) as u8, &span)?;
            }
            "ip_dscp" => {
                let d = int(v, 6).ok_or_else(|| bad("IP DSCP (0-63)"))? as u8;
                self.set(F::IpDscp, |m| &mut m.ip_dscp, d, &span)?;
            }
            "nw_ecn" | "ip_ecn" => {
                let e = int(v, 2).ok_or_else(|| bad("IP ECN (0-3)"))? as u8;
                self.set(F::IpEcn, |m| &mut m.ip_ecn, e, &span)?;
            }
            "nw_proto" | "ip_proto" => {
                let p = int(v, 8).ok_or_else(|| bad("IP protocol"))? as u8;
                self.set(F::IpProto, |m| &mut m.ip_proto, p, &span)?;
            }
            "arp_op" => {
                let p = int(v, 8).ok_or_else(|| bad("ARP opcode (0-255)"))? as u8;
                self.set(F::IpProto, |m| &mut m.ip_proto, p, &span)?;
            }
            "nw_src" | "ip_src" | "ipv4_src" | "arp_spa" => {
                let a = masked_ipv4(v).ok_or_else(|| bad("IPv4 address"))?;
                self.set_opt(F::Ipv4Src, |m| &mut m.ipv4_src, a, &span)?;
            }
            "nw_dst" | "ip_dst" | "ipv4_dst" | "arp_tpa" => {
                let a = masked_ipv4(v).ok_or_else(|| bad("IPv4 address"))?;
                self.set_opt(F::Ipv4Dst, |m| &mut m.ipv4_dst, a, &span)?;
            }
            "tp_src" | "tcp_src" | "udp_src" | "sctp_src" | "icmp_type" | "icmpv4_type"
            | "icmpv6_type" => {
                let (what, bits) = if key.contains("icmp") {
                    ("ICMP type", 8)
                } else {
                    ("port", 16)
                };
                let n = int(v, bits).ok_or_else(|| bad(what))? as u16;
                self.set(F::TpSrc, |m| &mut m.tp_src, n, &span)?;
                self.key_protocol(key, &span)?;
            }
            "tp_dst" | "tcp_dst" | "udp_dst" | "sctp_dst" | "icmp_code" | "icmpv4_code"
            | "icmpv6_code" => {
                let (what, bits) = if key.contains("icmp") {
                    ("ICMP code", 8)
                } else {
                    ("port", 16)
                };
                let n = int(v, bits).ok_or_else(|| bad(what))? as u16;
                self.set(F::TpDst, |m| &mut m.tp_dst, n, &span)?;
                self.key_protocol(key, &span)?;
            }
            "ipv6_src" => {
                let a = masked_ipv6(v).ok_or_else(|| bad("IPv6 address"))?;
                self.set_opt(F::Ipv6Src, |m| &mut m.ipv6_src, a, &span)?;
            }
            "ipv6_dst" => {
                let a = masked_ipv6(v).ok_or_else(|| bad("IPv6 address"))?;
                self.set_opt(F::Ipv6Dst, |m| &mut m.ipv6_dst, a, &span)?;
            }
            "ipv6_label" | "ipv6_flabel" => {
                let l = int(v, 20).ok_or_else(|| bad("IPv6 flow label (20 bits)"))? as u32;
                self.set(F::Ipv6Label, |m| &mut m.ipv6_label, l, &span)?;
            }
            "arp_sha" => {
                let a = mac(v).ok_or_else(|| bad("Ethernet address"))?;
                self.set(F::ArpSha, |m| &mut m.arp_sha, a, &span)?;
            }
            "arp_tha" => {
                let a = mac(v).ok_or_else(|| bad("Ethernet address"))?;
                self.set(F::ArpTha, |m| &mut m.arp_tha, a, &span)?;
            }
            "metadata" => {
                let m = masked_int(v, 64).ok_or_else(|| bad("metadata"))?;
                self.set_opt(F::Metadata, |x| &mut x.metadata, m, &span)?;
            }
            _ => return Err(self.err(span, ErrorKind::UnknownField(key.to_string()))),
        }
        Ok(())
    }

    /// [`Parser::set`] for a masked field, where a zero mask means no match at all.
    fn set_opt<T: PartialEq + Copy>(
        &mut self,
        f: F,
        slot: impl Fn(&mut FlowMatch) -> &mut Option<T>,
        v: Option<T>,
        span: &Range<usize>,
    ) -> Result<(), ParseError> {
        match v {
            Some(v) => self.set(f, slot, v, span),
            None => Ok(()),
        }
    }

    /// A protocol-specific name (`tcp_dst`, `icmpv6_type`) must agree with the match's
    /// protocol; checked in [`Parser::finish`] through the span it records.
    fn key_protocol(&mut self, key: &str, span: &Range<usize>) -> Result<(), ParseError> {
        let want: Option<(Option<u16>, u8)> = match key.split('_').next() {
            Some("tcp") => Some((None, PROTO_TCP)),
            Some("udp") => Some((None, PROTO_UDP)),
            Some("sctp") => Some((None, PROTO_SCTP)),
            Some("icmpv4") => Some((Some(ETH_IPV4), PROTO_ICMP)),
            Some("icmpv6") => Some((Some(ETH_IPV6), PROTO_ICMPV6)),
            _ => None,
        };
        if let Some((t, p)) = want {
            self.set(F::IpProto, |m| &mut m.ip_proto, p, span)?;
            if let Some(t) = t {
                self.set(F::EthType, |m| &mut m.eth_type, t, span)?;
            }
            // A protocol-specific field implies its protocol, as in OXM; the eth_type
            // still has to be given (tcp or tcp6 say which).
        }
        Ok(())
    }

    /// Prerequisites, implied fields, and the protocol of `mod_tp_*`.
    pub(super) fn finish(&mut self) -> Result<(), ParseError> {
        let m = self.flow.matching;
        let need = |p: &Self, f: F, ok: bool, what: &'static str| {
            if ok {
                Ok(())
            } else {
                Err(p.err(p.span_of(f), ErrorKind::Prerequisite(what)))
            }
        };
        let ipv4 = m.eth_type == Some(ETH_IPV4);
        let ipv6 = m.eth_type == Some(ETH_IPV6);
        need(
            self,
            F::IpDscp,
            m.ip_dscp.is_none() || m.is_ip(),
            "ip or ipv6",
        )?;
        need(
            self,
            F::IpEcn,
            m.ip_ecn.is_none() || m.is_ip(),
            "ip or ipv6",
        )?;
        need(
            self,
            F::IpProto,
            m.ip_proto.is_none() || m.is_ip() || m.is_arp(),
            "ip, ipv6 or arp",
        )?;
        for f in [F::Ipv4Src, F::Ipv4Dst] {
            let set = match f {
                F::Ipv4Src => m.ipv4_src.is_some(),
                _ => m.ipv4_dst.is_some(),
            };
            need(self, f, !set || ipv4 || m.is_arp(), "ip or arp")?;
        }
        need(self, F::Ipv6Src, m.ipv6_src.is_none() || ipv6, "ipv6")?;
        need(self, F::Ipv6Dst, m.ipv6_dst.is_none() || ipv6, "ipv6")?;
        need(self, F::Ipv6Label, m.ipv6_label.is_none() || ipv6, "ipv6")?;
        need(self, F::ArpSha, m.arp_sha.is_none() || m.is_arp(), "arp")?;
        need(self, F::ArpTha, m.arp_tha.is_none() || m.is_arp(), "arp")?;
        let l4 = m.transport().is_some() || m.is_icmp();
        need(
            self,
            F::TpSrc,
            m.tp_src.is_none() || l4,
            "tcp, udp, sctp, icmp or their IPv6 forms",
        )?;
        need(
            self,
            F::TpDst,
            m.tp_dst.is_none() || l4,
            "tcp, udp, sctp, icmp or their IPv6 forms",
        )?;
        if m.is_icmp() {
            for (f, v) in [(F::TpSrc, m.tp_src), (F::TpDst, m.tp_dst)] {
                if v.is_some_and(|v| v > 0xff) {
                    let s = self.span_of(f);
                    let value = self.s[s.clone()].to_string();
                    return Err(self.err(
                        s,
                        ErrorKind::BadValue {
                            what: "ICMP type or code (0-255)",
                            value,
                        },
                    ));
                }
            }
        }
        if m.vlan_pcp.is_some() {
            match m.vlan {
                // 1.0 matches a priority on tagged packets only: a priority alone
                // implies a tag, as Open vSwitch reads it.
                None => self.flow.matching.vlan = Some(VlanMatch::AnyTagged),
                Some(VlanMatch::Untagged) => {
                    let prev = self.s[self.span_of(F::Vlan)].to_string();
                    return Err(self.err(self.span_of(F::VlanPcp), ErrorKind::Conflict(prev)));
                }
                Some(_) => {}
            }
        }
        // mod_tp_src / mod_tp_dst write the ports of the match's protocol.
        let transport = m.transport();
        for (in_write, idx, span) in std::mem::take(&mut self.tp_actions) {
            let Some(t) = transport else {
                return Err(self.err(span, ErrorKind::Prerequisite("tcp, udp or sctp")));
            };
            let list = if in_write {
                self.flow.write_actions.get_or_insert_with(Vec::new)
            } else {
                &mut self.flow.actions
            };
            if let Some(FlowAction::Set(sf)) = list.get_mut(idx) {
                *sf = match (*sf, t) {
                    (SetField::TcpSrc(p), Transport::Tcp) => SetField::TcpSrc(p),
                    (SetField::TcpSrc(p), Transport::Udp) => SetField::UdpSrc(p),
                    (SetField::TcpSrc(p), Transport::Sctp) => SetField::SctpSrc(p),
                    (SetField::TcpDst(p), Transport::Tcp) => SetField::TcpDst(p),
                    (SetField::TcpDst(p), Transport::Udp) => SetField::UdpDst(p),
                    (SetField::TcpDst(p), Transport::Sctp) => SetField::SctpDst(p),
                    (other, _) => other,
                };
            }
        }
        Ok(())
    }
}

fn zero_counters() -> FlowCounters {
    FlowCounters {
        duration_sec: 0,
        duration_nsec: 0,
        packet_count: 0,
        byte_count: 0,
    }
}

/// Whether `key` names something (so a missing value is "needs a value", not "unknown").
fn known_key(key: &str) -> bool {
    const KEYS: &[&str] = &[
        "table",
        "priority",
        "idle_timeout",
        "hard_timeout",
        "cookie",
        "duration",
        "n_packets",
        "n_bytes",
        "idle_age",
        "hard_age",
        "in_port",
        "dl_src",
        "eth_src",
        "dl_dst",
        "eth_dst",
        "dl_type",
        "eth_type",
        "dl_vlan",
        "vlan_vid",
        "vlan_tci",
        "dl_vlan_pcp",
        "vlan_pcp",
        "nw_tos",
        "ip_dscp",
        "nw_ecn",
        "ip_ecn",
        "nw_proto",
        "ip_proto",
        "arp_op",
        "nw_src",
        "ip_src",
        "ipv4_src",
        "arp_spa",
        "nw_dst",
        "ip_dst",
        "ipv4_dst",
        "arp_tpa",
        "tp_src",
        "tcp_src",
        "udp_src",
        "sctp_src",
        "icmp_type",
        "icmpv4_type",
        "icmpv6_type",
        "tp_dst",
        "tcp_dst",
        "udp_dst",
        "sctp_dst",
        "icmp_code",
        "icmpv4_code",
        "icmpv6_code",
        "ipv6_src",
        "ipv6_dst",
        "ipv6_label",
        "ipv6_flabel",
        "arp_sha",
        "arp_tha",
        "metadata",
    ];
    KEYS.contains(&key)
}
