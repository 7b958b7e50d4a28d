//! The parser: one pass over `key=value` items, then the checks that need the whole
//! match (prerequisites, the protocol `mod_tp_src` writes). Every error carries the byte
//! span of the item it is about.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;

use super::{
    Flow, FlowAction, FlowCounters, FlowEntry, FlowMatch, Masked, PortNo, SetField, Transport,
    VlanMatch, ETH_ARP, ETH_IPV4, ETH_IPV6, ETH_RARP, PROTO_ICMP, PROTO_ICMPV6, PROTO_SCTP,
    PROTO_TCP, PROTO_UDP,
};
use crate::types::MacAddr;

/// A string that is not a flow, and where: `span` is the byte range of `token` in the
/// input. Displays as `nw_dst=10.0.0.300: bad IPv4 address "10.0.0.300" (at byte 13)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Bytes of the input the error is about.
    pub span: Range<usize>,
    /// The offending item (`key=value`, a keyword or an action), as written.
    pub token: String,
    /// What is wrong with it.
    pub kind: ErrorKind,
}

/// What is wrong with a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// A key that is no field, shorthand or flow keyword.
    #[error("unknown field or keyword {0:?}")]
    UnknownField(String),
    /// An action name that is no action or instruction.
    #[error("unknown action {0:?}")]
    UnknownAction(String),
    /// A value that does not parse as what the field holds, or does not fit it.
    #[error("bad {what} {value:?}")]
    BadValue { what: &'static str, value: String },
    /// A field or action that needs a value was given none.
    #[error("needs a value")]
    MissingValue,
    /// A keyword that takes no value was given one.
    #[error("takes no value")]
    UnexpectedValue,
    /// The same field twice with different values, or a value the shorthand before it
    /// contradicts.
    #[error("contradicts {0:?} earlier in the flow")]
    Conflict(String),
    /// A match field whose prerequisite is missing (OpenFlow 1.3 §7.2.3.8: "the
    /// prerequisite ... must be specified"), or an action that needs the match to say
    /// more.
    #[error("needs {0} in the match")]
    Prerequisite(&'static str),
    /// `actions=` is missing (a flow to add), or present where only a match belongs.
    #[error("{0}")]
    Actions(&'static str),
    /// Instructions out of 1.3's order, or `drop` beside other actions.
    #[error("{0}")]
    Order(&'static str),
    /// Something only a `dump-flows` line holds (counters), or a cookie mask in a flow to
    /// add.
    #[error("{0}")]
    NotHere(&'static str),
}

impl ParseError {
    fn new(span: Range<usize>, input: &str, kind: ErrorKind) -> ParseError {
        let token = input.get(span.clone()).unwrap_or("").to_string();
        ParseError { span, token, kind }
    }

    /// The input with a caret line under the offending token, for a terminal.
    pub fn show(&self, input: &str) -> String {
        let width = input
            .get(self.span.clone())
            .map_or(1, |t| t.chars().count().max(1));
        let pad = input
            .get(..self.span.start)
            .map_or(0, |p| p.chars().count());
        format!(
            "{input}\n{}{} {}",
            " ".repeat(pad),
            "^".repeat(width),
            self.kind
        )
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.token.is_empty() {
            write!(f, "{} (at byte {})", self.kind, self.span.start)
        } else {
            write!(
                f,
                "{}: {} (at byte {})",
                self.token, self.kind, self.span.start
            )
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses a flow as `ovs-ofctl add-flow` takes it (`actions=` required; `actions=drop`
/// for none).
pub fn parse_flow(s: &str) -> Result<Flow, ParseError> {
    Ok(Parser::new(s, Mode::Add).run()?.flow)
}

/// Parses a selection of flows as `ovs-ofctl del-flows` and `dump-flows` take it: match
/// fields, `table` (every table when absent: [`Flow::table`] is then `0xff`, 1.3's
/// `OFPTT_ALL`), `priority` (for strict commands), `cookie=VALUE/MASK`; no actions.
/// [`Flow::selection_to_ofctl`] prints it back.
pub fn parse_match(s: &str) -> Result<Flow, ParseError> {
    let mut p = Parser::new(s, Mode::Match);
    p.flow.table = ALL_TABLES;
    Ok(p.run()?.flow)
}

/// `OFPTT_ALL`: the table of a selection that names none.
pub(super) const ALL_TABLES: u8 = 0xff;

/// Parses one line of `ovs-ofctl dump-flows` output (counters optional; `idle_age` and
/// `hard_age` are read and dropped; durations keep their milliseconds).
pub fn parse_flow_entry(s: &str) -> Result<FlowEntry, ParseError> {
    Parser::new(s, Mode::Dump).run()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Add,
    Match,
    Dump,
}

/// The match fields, for spans (duplicates, prerequisites).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum F {
    InPort,
    EthSrc,
    EthDst,
    EthType,
    Vlan,
    VlanPcp,
    IpDscp,
    IpEcn,
    IpProto,
    Ipv4Src,
    Ipv4Dst,
    TpSrc,
    TpDst,
    Ipv6Src,
    Ipv6Dst,
    Ipv6Label,
    ArpSha,
    ArpTha,
    Metadata,
}
const N_FIELDS: usize = F::Metadata as usize + 1;

struct Parser<'a> {
    s: &'a str,
    mode: Mode,
    flow: Flow,
    /// Where each match field was set (its item's span).
    spans: [Option<Range<usize>>; N_FIELDS],
    counters: Option<FlowCounters>,
    /// `mod_tp_src`/`mod_tp_dst` actions whose protocol the match decides: (in
    /// write_actions?, index, span).
    tp_actions: Vec<(bool, usize, Range<usize>)>,
}

fn is_sep(b: u8) -> bool {
    b == b',' || b.is_ascii_whitespace()
}

impl<'a> Parser<'a> {
    fn new(s: &'a str, mode: Mode) -> Self {
        Parser {
            s,
            mode,
            flow: Flow::default(),
            spans: Default::default(),
            counters: None,
            tp_actions: Vec::new(),
        }
    }

    fn err(&self, span: Range<usize>, kind: ErrorKind) -> ParseError {
        ParseError::new(span, self.s, kind)
    }

    fn run(mut self) -> Result<FlowEntry, ParseError> {
        let b = self.s.as_bytes();
        let mut i = 0;
        let mut actions_seen = false;
        while i < b.len() {
            if is_sep(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && !is_sep(b[i]) && b[i] != b'=' && b[i] != b':' {
                i += 1;
            }
            let key = &self.s[start..i];
            let mut value = None;
            if i < b.len() && (b[i] == b'=' || b[i] == b':') {
                i += 1;
                let vstart = i;
                if key == "actions" {
                    i = b.len();
                } else {
                    while i < b.len() && !is_sep(b[i]) {
                        i += 1;
                    }
                }
                value = Some((vstart, &self.s[vstart..i]));
            }
            let span = start..i;
            if key == "actions" {
                if self.mode == Mode::Match {
                    return Err(self.err(
                        span,
                        ErrorKind::Actions("a match takes no actions (del-flows, dump-flows)"),
                    ));
                }
                let (vstart, v) = value.ok_or_else(|| self.err(span, ErrorKind::MissingValue))?;
                self.actions(vstart, v)?;
                actions_seen = true;
            } else {
                self.item(key, value, span)?;
            }
        }
        if self.mode != Mode::Match && !actions_seen {
            let end = self.s.len();
            return Err(self.err(
                end..end,
                ErrorKind::Actions(
                    "no actions: end the flow with actions=... (actions=drop for none)",
                ),
            ));
        }
        self.finish()?;
        Ok(FlowEntry {
            flow: self.flow,
            counters: self.counters,
        })
    }

    /// Sets match field `f`; a second setting must agree with the first.
    fn set<T: PartialEq + Copy>(
        &mut self,
        f: F,
        slot: impl Fn(&mut FlowMatch) -> &mut Option<T>,
        v: T,
        span: &Range<usize>,
    ) -> Result<(), ParseError> {
        let cur = slot(&mut self.flow.matching);
        match *cur {
            Some(old) if old != v => {
                let prev = self.spans[f as usize].clone().unwrap_or(0..0);
                let prev_tok = self.s.get(prev).unwrap_or("").to_string();
                Err(self.err(span.clone(), ErrorKind::Conflict(prev_tok)))
            }
            _ => {
                *cur = Some(v);
                self.spans[f as usize] = Some(span.clone());
                Ok(())
            }
        }
    }

    fn item(
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

    fn span_of(&self, f: F) -> Range<usize> {
        self.spans[f as usize].clone().unwrap_or(0..0)
    }

    /// Prerequisites, implied fields, and the protocol of `mod_tp_*`.
    fn finish(&mut self) -> Result<(), ParseError> {
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

    /// The `actions=` value: apply-actions and 1.3's instructions, in 1.3's order.
    fn actions(&mut self, base: usize, v: &str) -> Result<(), ParseError> {
        // Instruction order (1.3 §5.9 executes them in this order; Open vSwitch refuses
        // any other): meter, apply-actions, clear, write-actions, write-metadata, goto.
        const ORDER: &str = "instructions go in this order: meter, actions, clear_actions, write_actions, write_metadata, goto_table";
        let mut phase = 0u8;
        let items = split_top(v, base);
        let only_drop = items.len() == 1;
        for (span, tok) in items {
            let (name, arg) = split_action(tok);
            let lname = name.to_ascii_lowercase();
            let p = match lname.as_str() {
                "meter" => 1,
                "clear_actions" => 3,
                "write_actions" => 4,
                "write_metadata" => 5,
                "goto_table" => 6,
                _ => 2,
            };
            if p < phase || (p == phase && p != 2) {
                return Err(self.err(span, ErrorKind::Order(ORDER)));
            }
            phase = p;
            let bad = |what: &'static str| {
                self.err(
                    span.clone(),
                    ErrorKind::BadValue {
                        what,
                        value: arg.unwrap_or("").to_string(),
                    },
                )
            };
            let need_arg = || arg.ok_or_else(|| self.err(span.clone(), ErrorKind::MissingValue));
            match lname.as_str() {
                "meter" => {
                    let a = need_arg()?;
                    self.flow.meter = Some(int(a, 32).ok_or_else(|| bad("meter id"))? as u32);
                }
                "clear_actions" => {
                    if arg.is_some() {
                        return Err(self.err(span, ErrorKind::UnexpectedValue));
                    }
                    self.flow.clear_actions = true;
                }
                "write_actions" => {
                    let a = need_arg()?;
                    let inner = a
                        .strip_prefix('(')
                        .and_then(|x| x.strip_suffix(')'))
                        .ok_or_else(|| bad("write_actions list: write_actions(ACTION,...)"))?;
                    let inner_base = span.start + name.len() + 1;
                    let mut list = Vec::new();
                    for (s2, t2) in split_top(inner, inner_base) {
                        let act = self.action(t2, s2.clone(), true, list.len())?;
                        match act {
                            Some(a) => list.push(a),
                            None => {
                                return Err(self.err(
                                    s2,
                                    ErrorKind::Order(
                                        "drop is the whole action list, not part of one",
                                    ),
                                ))
                            }
                        }
                    }
                    self.flow.write_actions = Some(list);
                }
                "write_metadata" => {
                    let a = need_arg()?;
                    // A zero mask would write nothing: refused as a mistake.
                    let m = masked_int(a, 64)
                        .flatten()
                        .ok_or_else(|| bad("metadata (VALUE[/MASK], mask not 0)"))?;
                    self.flow.write_metadata = Some(m);
                }
                "goto_table" => {
                    let a = need_arg()?;
                    self.flow.goto_table = Some(int(a, 8).ok_or_else(|| bad("table id"))? as u8);
                }
                _ => {
                    let idx = self.flow.actions.len();
                    match self.action(tok, span.clone(), false, idx)? {
                        Some(a) => self.flow.actions.push(a),
                        None if only_drop => {}
                        None => {
                            return Err(self.err(
                                span,
                                ErrorKind::Order("drop is the whole action list, not part of one"),
                            ))
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One action (not an instruction); `None` for `drop`.
    fn action(
        &mut self,
        tok: &str,
        span: Range<usize>,
        in_write: bool,
        idx: usize,
    ) -> Result<Option<FlowAction>, ParseError> {
        let (name, arg) = split_action(tok);
        let lname = name.to_ascii_lowercase();
        let bad = |what: &'static str| {
            self.err(
                span.clone(),
                ErrorKind::BadValue {
                    what,
                    value: arg.unwrap_or("").to_string(),
                },
            )
        };
        let need_arg = || arg.ok_or_else(|| self.err(span.clone(), ErrorKind::MissingValue));
        let no_arg = |a: FlowAction| {
            if arg.is_some() {
                Err(self.err(span.clone(), ErrorKind::UnexpectedValue))
            } else {
                Ok(Some(a))
            }
        };
        let set = |f: SetField| Ok(Some(FlowAction::Set(f)));
        match lname.as_str() {
            "drop" => {
                if arg.is_some() {
                    return Err(self.err(span, ErrorKind::UnexpectedValue));
                }
                Ok(None)
            }
            "output" => {
                let p = port(need_arg()?).ok_or_else(|| bad("port"))?;
                Ok(Some(output(p, 0xffff)))
            }
            "controller" => {
                let max_len = match arg {
                    None => 0xffff,
                    Some(a) => {
                        let a = a
                            .strip_prefix('(')
                            .and_then(|x| x.strip_suffix(')'))
                            .map(|x| x.strip_prefix("max_len=").unwrap_or(x))
                            .unwrap_or(a);
                        int(a, 16).ok_or_else(|| bad("max_len"))? as u16
                    }
                };
                Ok(Some(FlowAction::Controller { max_len }))
            }
            "in_port" | "flood" | "all" | "normal" | "local" | "table" => {
                let p = port(&lname).ok_or_else(|| bad("port"))?;
                no_arg(output(p, 0xffff))
            }
            "enqueue" => {
                let a = need_arg()?;
                let a = a
                    .strip_prefix('(')
                    .and_then(|x| x.strip_suffix(')'))
                    .unwrap_or(a);
                let (p, q) = a
                    .split_once([':', ','])
                    .ok_or_else(|| bad("enqueue (enqueue:PORT:QUEUE)"))?;
                let port = port(p).ok_or_else(|| bad("enqueue port"))?;
                let queue = int(q, 32).ok_or_else(|| bad("queue id"))? as u32;
                Ok(Some(FlowAction::Enqueue { port, queue }))
            }
            "set_queue" => {
                let q = int(need_arg()?, 32).ok_or_else(|| bad("queue id"))? as u32;
                Ok(Some(FlowAction::SetQueue { queue: q }))
            }
            "group" => {
                let g = int(need_arg()?, 32).ok_or_else(|| bad("group id"))? as u32;
                Ok(Some(FlowAction::Group { group_id: g }))
            }
            "dec_ttl" => no_arg(FlowAction::DecTtl),
            "strip_vlan" | "pop_vlan" => no_arg(FlowAction::PopVlan),
            "push_vlan" => {
                let t = int(need_arg()?, 16).ok_or_else(|| bad("ethertype"))? as u16;
                Ok(Some(FlowAction::PushVlan { ethertype: t }))
            }
            "mod_vlan_vid" => {
                let v = int(need_arg()?, 12).ok_or_else(|| bad("VLAN id (0-4095)"))?;
                set(SetField::VlanVid(v as u16))
            }
            "mod_vlan_pcp" => {
                let v = int(need_arg()?, 3).ok_or_else(|| bad("VLAN priority (0-7)"))?;
                set(SetField::VlanPcp(v as u8))
            }
            "mod_dl_src" => set(SetField::EthSrc(
                mac(need_arg()?).ok_or_else(|| bad("Ethernet address"))?,
            )),
            "mod_dl_dst" => set(SetField::EthDst(
                mac(need_arg()?).ok_or_else(|| bad("Ethernet address"))?,
            )),
            "mod_nw_src" => set(SetField::Ipv4Src(
                need_arg()?.parse().map_err(|_| bad("IPv4 address"))?,
            )),
            "mod_nw_dst" => set(SetField::Ipv4Dst(
                need_arg()?.parse().map_err(|_| bad("IPv4 address"))?,
            )),
            "mod_nw_tos" => {
                let t = int(need_arg()?, 8).ok_or_else(|| bad("IP ToS"))?;
                if t & 3 != 0 {
                    return Err(bad("IP ToS (a multiple of 4: the DSCP shifted left by 2)"));
                }
                set(SetField::IpDscp((t >> 2) as u8))
            }
            "mod_nw_ecn" => {
                let e = int(need_arg()?, 2).ok_or_else(|| bad("IP ECN (0-3)"))?;
                set(SetField::IpEcn(e as u8))
            }
            "mod_tp_src" | "mod_tp_dst" => {
                let p = int(need_arg()?, 16).ok_or_else(|| bad("port"))? as u16;
                // The protocol comes from the match, once it is whole.
                self.tp_actions.push((in_write, idx, span.clone()));
                set(if lname == "mod_tp_src" {
                    SetField::TcpSrc(p)
                } else {
                    SetField::TcpDst(p)
                })
            }
            "set_field" => {
                let a = need_arg()?;
                let (value, field) = a
                    .rsplit_once("->")
                    .ok_or_else(|| bad("set_field (set_field:VALUE->FIELD)"))?;
                let sf = self.set_field(value, field, &span, in_write, idx)?;
                set(sf)
            }
            _ => {
                // A bare number is an output port.
                if arg.is_none() {
                    if let Some(n) = int(name, 32) {
                        return Ok(Some(output(PortNo::from_u32(n as u32), 0xffff)));
                    }
                }
                Err(self.err(span, ErrorKind::UnknownAction(name.to_string())))
            }
        }
    }

    fn set_field(
        &mut self,
        value: &str,
        field: &str,
        span: &Range<usize>,
        in_write: bool,
        idx: usize,
    ) -> Result<SetField, ParseError> {
        let bad = |what: &'static str| {
            self.err(
                span.clone(),
                ErrorKind::BadValue {
                    what,
                    value: value.to_string(),
                },
            )
        };
        let ip4 = || value.parse::<Ipv4Addr>().map_err(|_| bad("IPv4 address"));
        let ip6 = || value.parse::<Ipv6Addr>().map_err(|_| bad("IPv6 address"));
        let mac_ = || mac(value).ok_or_else(|| bad("Ethernet address"));
        let n = |bits: u32, what: &'static str| int(value, bits).ok_or_else(|| bad(what));
        Ok(match field {
            "eth_src" | "dl_src" => SetField::EthSrc(mac_()?),
            "eth_dst" | "dl_dst" => SetField::EthDst(mac_()?),
            "vlan_vid" => {
                // OXM's value: OFPVID_PRESENT | vid (the bit may be left out).
                let v = n(13, "VLAN vid")?;
                SetField::VlanVid((v & 0x0fff) as u16)
            }
            "dl_vlan" => SetField::VlanVid(n(12, "VLAN id (0-4095)")? as u16),
            "vlan_pcp" | "dl_vlan_pcp" => SetField::VlanPcp(n(3, "VLAN priority (0-7)")? as u8),
            "ipv4_src" | "ip_src" | "nw_src" => SetField::Ipv4Src(ip4()?),
            "ipv4_dst" | "ip_dst" | "nw_dst" => SetField::Ipv4Dst(ip4()?),
            "ip_dscp" => SetField::IpDscp(n(6, "IP DSCP (0-63)")? as u8),
            "nw_tos" => {
                let t = n(8, "IP ToS")?;
                if t & 3 != 0 {
                    return Err(bad("IP ToS (a multiple of 4)"));
                }
                SetField::IpDscp((t >> 2) as u8)
            }
            "ip_ecn" | "nw_ecn" => SetField::IpEcn(n(2, "IP ECN (0-3)")? as u8),
            "tcp_src" => SetField::TcpSrc(n(16, "port")? as u16),
            "tcp_dst" => SetField::TcpDst(n(16, "port")? as u16),
            "udp_src" => SetField::UdpSrc(n(16, "port")? as u16),
            "udp_dst" => SetField::UdpDst(n(16, "port")? as u16),
            "sctp_src" => SetField::SctpSrc(n(16, "port")? as u16),
            "sctp_dst" => SetField::SctpDst(n(16, "port")? as u16),
            "tp_src" | "tp_dst" => {
                let p = n(16, "port")? as u16;
                self.tp_actions.push((in_write, idx, span.clone()));
                if field == "tp_src" {
                    SetField::TcpSrc(p)
                } else {
                    SetField::TcpDst(p)
                }
            }
            "ipv6_src" => SetField::Ipv6Src(ip6()?),
            "ipv6_dst" => SetField::Ipv6Dst(ip6()?),
            "ipv6_label" | "ipv6_flabel" => {
                SetField::Ipv6Label(n(20, "IPv6 flow label (20 bits)")? as u32)
            }
            "arp_op" => SetField::ArpOp(n(16, "ARP opcode")? as u16),
            "arp_spa" => SetField::ArpSpa(ip4()?),
            "arp_tpa" => SetField::ArpTpa(ip4()?),
            "arp_sha" => SetField::ArpSha(mac_()?),
            "arp_tha" => SetField::ArpTha(mac_()?),
            _ => {
                return Err(self.err(
                    span.clone(),
                    ErrorKind::BadValue {
                        what: "set_field field",
                        value: field.to_string(),
                    },
                ))
            }
        })
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

fn output(p: PortNo, max_len: u16) -> FlowAction {
    match p {
        PortNo::Controller => FlowAction::Controller { max_len },
        port => FlowAction::Output { port },
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

/// Splits an action list at the commas outside parentheses; each piece with its span
/// (trimmed) in the whole input (`base` is where `v` starts).
fn split_top(v: &str, base: usize) -> Vec<(Range<usize>, &str)> {
    let mut cuts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in v.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                cuts.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    cuts.push(start..v.len());
    let mut out = Vec::new();
    for r in cuts {
        let piece = &v[r.clone()];
        let lead = piece.len() - piece.trim_start().len();
        let t = piece.trim();
        if !t.is_empty() {
            let s = base + r.start + lead;
            out.push((s..s + t.len(), t));
        }
    }
    out
}

/// `name:arg`, `name(arg)` (the argument keeps its parentheses) or `name`.
fn split_action(tok: &str) -> (&str, Option<&str>) {
    match tok.find([':', '(', '=']) {
        Some(i) if tok.as_bytes()[i] == b'(' => (&tok[..i], Some(&tok[i..])),
        Some(i) => (&tok[..i], Some(&tok[i + 1..])),
        None => (tok, None),
    }
}

/// A decimal or `0x` hexadecimal integer of at most `bits` bits.
fn int(s: &str, bits: u32) -> Option<u64> {
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) if !h.is_empty() && h.len() <= 16 => u64::from_str_radix(h, 16).ok()?,
        Some(_) => return None,
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok()?,
        None => return None,
    };
    (bits >= 64 || v >> bits == 0).then_some(v)
}

/// `VALUE[/MASK]` integers, normalised (see [`Masked`]); `Some(None)`: the mask is 0.
fn masked_int(s: &str, bits: u32) -> Option<Option<Masked<u64>>> {
    let all = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    match s.split_once('/') {
        None => Some(Some(Masked::exact(int(s, bits)?))),
        Some((v, m)) => {
            let (v, m) = (int(v, bits)?, int(m, bits)?);
            Some(match m {
                0 => None,
                m if m == all => Some(Masked::exact(v)),
                m => Some(Masked {
                    value: v & m,
                    mask: Some(m),
                }),
            })
        }
    }
}

fn mac(s: &str) -> Option<MacAddr> {
    let a: MacAddr = s.parse().ok()?;
    // Two hex digits per byte, as ovs-ofctl writes them.
    (s.len() == 17).then_some(a)
}

fn masked_mac(s: &str) -> Option<Option<Masked<MacAddr>>> {
    match s.split_once('/') {
        None => Some(Some(Masked::exact(mac(s)?))),
        Some((v, m)) => {
            let (v, m) = (mac(v)?, mac(m)?);
            Some(match m {
                MacAddr::ZERO => None,
                MacAddr::BROADCAST => Some(Masked::exact(v)),
                m => {
                    let mut x = v.0;
                    for (b, k) in x.iter_mut().zip(m.0) {
                        *b &= k;
                    }
                    Some(Masked {
                        value: MacAddr(x),
                        mask: Some(m),
                    })
                }
            })
        }
    }
}

/// `A.B.C.D[/LEN|/MASK]`, normalised.
fn masked_ipv4(s: &str) -> Option<Option<Masked<Ipv4Addr>>> {
    let (a, m) = match s.split_once('/') {
        None => (s, None),
        Some((a, m)) => (a, Some(m)),
    };
    let a = u32::from(a.parse::<Ipv4Addr>().ok()?);
    let m = match m {
        None => u32::MAX,
        Some(m) if m.contains('.') => u32::from(m.parse::<Ipv4Addr>().ok()?),
        Some(m) => match int(m, 8)? {
            0 => 0,
            l @ 1..=32 => u32::MAX << (32 - l),
            _ => return None,
        },
    };
    Some(match m {
        0 => None,
        u32::MAX => Some(Masked::exact(Ipv4Addr::from(a))),
        m => Some(Masked {
            value: Ipv4Addr::from(a & m),
            mask: Some(Ipv4Addr::from(m)),
        }),
    })
}

/// `ADDR[/LEN|/MASK]`, normalised.
fn masked_ipv6(s: &str) -> Option<Option<Masked<Ipv6Addr>>> {
    let (a, m) = match s.split_once('/') {
        None => (s, None),
        Some((a, m)) => (a, Some(m)),
    };
    let a = u128::from(a.parse::<Ipv6Addr>().ok()?);
    let m = match m {
        None => u128::MAX,
        Some(m) if m.contains(':') => u128::from(m.parse::<Ipv6Addr>().ok()?),
        Some(m) => match int(m, 8)? {
            0 => 0,
            l @ 1..=128 => u128::MAX << (128 - l),
            _ => return None,
        },
    };
    Some(match m {
        0 => None,
        u128::MAX => Some(Masked::exact(Ipv6Addr::from(a))),
        m => Some(Masked {
            value: Ipv6Addr::from(a & m),
            mask: Some(Ipv6Addr::from(m)),
        }),
    })
}

/// A port number or a reserved port's name (any case). 1.0's and 1.3's reserved numbers
/// read as the port they name, as Open vSwitch reads them.
fn port(s: &str) -> Option<PortNo> {
    Some(match s.to_ascii_lowercase().as_str() {
        "in_port" => PortNo::InPort,
        "table" => PortNo::Table,
        "normal" => PortNo::Normal,
        "flood" => PortNo::Flood,
        "all" => PortNo::All,
        "controller" => PortNo::Controller,
        "local" => PortNo::Local,
        "any" | "none" => PortNo::Any,
        n => {
            let n = int(n, 32)?;
            if (0xfff8..=0xffff).contains(&n) {
                PortNo::from_u32(n as u32 | 0xffff_0000)
            } else {
                PortNo::from_u32(n as u32)
            }
        }
    })
}

/// `SEC[.FRACTION]s`, kept to the nanosecond.
fn duration(s: &str) -> Option<(u32, u32)> {
    let s = s.strip_suffix('s')?;
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sec = int(sec, 32)? as u32;
    let nsec = if frac.is_empty() {
        0
    } else {
        frac.parse::<u32>().ok()? * 10u32.pow(9 - frac.len() as u32)
    };
    Some((sec, nsec))
}
