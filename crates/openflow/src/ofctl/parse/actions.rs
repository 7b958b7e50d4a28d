//! The `actions=` value: the actions (1.0's action list, 1.3's apply-actions) and 1.3's
//! other instructions, in 1.3's order.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;

use super::error::{ErrorKind, ParseError};
use super::values::{int, mac, masked_int, port, split_action, split_top};
use super::Parser;
use crate::model::PortNo;
use crate::ofctl::flow::{FlowAction, SetField};

impl Parser<'_> {
    /// The `actions=` value: apply-actions and 1.3's instructions, in 1.3's order.
    pub(super) fn actions(&mut self, base: usize, v: &str) -> Result<(), ParseError> {
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

fn output(p: PortNo, max_len: u16) -> FlowAction {
    match p {
        PortNo::Controller => FlowAction::Controller { max_len },
        port => FlowAction::Output { port },
    }
}
