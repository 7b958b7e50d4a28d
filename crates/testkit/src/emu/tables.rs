//! What the emulated switch answers beyond the handshake: a flow table that FLOW_MODs
//! change (add, modify, delete, strict or not), and the statistics a controller asks
//! for (DESC, FLOW, PORT, TABLE, and in 1.3 GROUP_DESC, GROUP, METER_CONFIG, METER),
//! one flow per reply part, so a multipart reply comes in several parts. It can also
//! keep silent to statistics ([`Emu::answer_stats`]) and refuse flows of one priority
//! ([`Emu::refuse_priority`]) with FLOW_MOD_FAILED.

use openflow::common::{DescStats, ErrorBody, PortCounters};
use openflow::of13::multipart::{
    Counter, FlowStats, GroupDesc, GroupStats, MeterConfig, MeterStats, MultipartReply,
    MultipartReplyBody as B13, MultipartRequestBody as R13, PortStats, TableStats,
};
use openflow::ofctl::{Flow, FlowModCommand};
use openflow::{of10, of13, FixedStr, Message};

use super::Emu;

/// `OFPSF_REPLY_MORE` / `OFPMPF_REPLY_MORE`.
const MORE: u16 = 1;

impl Emu {
    /// The replies to `msg` beyond the handshake's (none for most messages).
    pub(super) fn answer_tables(&mut self, msg: &Message) -> Vec<Message> {
        match msg {
            Message::V10(of10::Message::FlowMod(fm)) => {
                let flow = Flow::from_of10(fm).expect("a FLOW_MOD the syntax can show");
                let command = match fm.command {
                    of10::FlowModCommand::Add => FlowModCommand::Add,
                    of10::FlowModCommand::Modify => FlowModCommand::Modify,
                    of10::FlowModCommand::ModifyStrict => FlowModCommand::ModifyStrict,
                    of10::FlowModCommand::Delete => FlowModCommand::Delete,
                    _ => FlowModCommand::DeleteStrict,
                };
                self.flow_mod(flow, command, false).into_iter().collect()
            }
            Message::V13(of13::Message::FlowMod(fm)) => {
                let flow = Flow::from_of13(fm).expect("a FLOW_MOD the syntax can show");
                let command = match fm.command {
                    of13::FlowModCommand::Add => FlowModCommand::Add,
                    of13::FlowModCommand::Modify => FlowModCommand::Modify,
                    of13::FlowModCommand::ModifyStrict => FlowModCommand::ModifyStrict,
                    of13::FlowModCommand::Delete => FlowModCommand::Delete,
                    _ => FlowModCommand::DeleteStrict,
                };
                self.flow_mod(flow, command, true).into_iter().collect()
            }
            Message::V10(of10::Message::StatsRequest(r)) if self.answer_stats => {
                self.stats_10(&r.body)
            }
            Message::V13(of13::Message::MultipartRequest(r)) if self.answer_stats => {
                self.stats_13(&r.body)
            }
            _ => Vec::new(),
        }
    }

    /// Applies a FLOW_MOD to the table; the ERROR when it is refused.
    fn flow_mod(&mut self, flow: Flow, command: FlowModCommand, v13: bool) -> Option<Message> {
        let same = |a: &Flow, b: &Flow| a.matching == b.matching && a.priority == b.priority;
        let selects = |sel: &Flow, f: &Flow, strict: bool| {
            (sel.table == 0xff || sel.table == f.table)
                && if strict {
                    same(sel, f)
                } else {
                    sel.matching == Default::default() || sel.matching == f.matching
                }
        };
        match command {
            FlowModCommand::Add => {
                if self.refuse_priority == Some(flow.priority) {
                    // FLOW_MOD_FAILED: 1.0 type 3 ALL_TABLES_FULL, 1.3 type 5 TABLE_FULL.
                    let (err_type, code) = if v13 { (5, 1) } else { (3, 0) };
                    let body = ErrorBody::Standard {
                        err_type,
                        code,
                        data: Vec::new(),
                    };
                    return Some(if v13 {
                        Message::V13(of13::Message::Error(body))
                    } else {
                        Message::V10(of10::Message::Error(body))
                    });
                }
                self.flows
                    .retain(|f| !(f.table == flow.table && same(f, &flow)));
                self.flows.push(flow);
            }
            FlowModCommand::Modify | FlowModCommand::ModifyStrict => {
                let strict = command == FlowModCommand::ModifyStrict;
                for f in self.flows.iter_mut() {
                    if selects(&flow, f, strict) {
                        f.actions = flow.actions.clone();
                    }
                }
            }
            FlowModCommand::Delete | FlowModCommand::DeleteStrict => {
                let strict = command == FlowModCommand::DeleteStrict;
                self.flows.retain(|f| !selects(&flow, f, strict));
            }
        }
        None
    }

    fn description(&self) -> DescStats {
        DescStats {
            mfr_desc: FixedStr::new("Pharos tests").unwrap(),
            hw_desc: FixedStr::new("emulated switch").unwrap(),
            sw_desc: FixedStr::new("1.0").unwrap(),
            serial_num: FixedStr::new(&format!("E{:x}", self.spec.dpid)).unwrap(),
            dp_desc: FixedStr::new("emu").unwrap(),
        }
    }

    fn port_counters(p: u32) -> PortCounters {
        PortCounters {
            rx_packets: u64::from(p) * 100,
            tx_packets: u64::from(p) * 200,
            rx_bytes: u64::from(p) * 1000,
            tx_bytes: u64::from(p) * 2000,
            ..PortCounters::default()
        }
    }

    fn stats_10(&self, body: &of10::stats::StatsRequestBody) -> Vec<Message> {
        use of10::stats::{StatsReplyBody as B, StatsRequestBody as R};
        let one = |body| vec![(0, body)];
        let parts: Vec<(u16, B)> = match body {
            R::Desc => one(B::Desc(Box::new(self.description()))),
            R::Port(_) => one(B::Port {
                stats: self
                    .spec
                    .ports
                    .iter()
                    .map(|&p| of10::stats::PortStats {
                        port_no: p as u16,
                        counters: Emu::port_counters(p),
                    })
                    .collect(),
            }),
            R::Table => one(B::Table {
                stats: vec![of10::stats::TableStats {
                    table_id: 0,
                    name: FixedStr::new("classifier").unwrap(),
                    wildcards: 0x3f_ffff,
                    max_entries: 1_000_000,
                    active_count: self.flows.len() as u32,
                    lookup_count: 10,
                    matched_count: 5,
                }],
            }),
            R::Flow(_) => self.parts(
                |f| {
                    let fm = f.to_of10(FlowModCommand::Add).unwrap();
                    B::Flow {
                        stats: vec![of10::stats::FlowStats {
                            table_id: 0,
                            match_: fm.match_,
                            duration_sec: 3,
                            duration_nsec: 500_000_000,
                            priority: fm.priority,
                            idle_timeout: fm.idle_timeout,
                            hard_timeout: fm.hard_timeout,
                            cookie: fm.cookie,
                            packet_count: 7,
                            byte_count: 700,
                            actions: fm.actions,
                        }],
                    }
                },
                B::Flow { stats: Vec::new() },
            ),
            _ => return Vec::new(),
        };
        parts
            .into_iter()
            .map(|(flags, body)| {
                Message::V10(of10::Message::StatsReply(of10::StatsReply { flags, body }))
            })
            .collect()
    }

    /// One reply part per flow (MORE on all but the last); `empty` when there is none.
    fn parts<T>(&self, part: impl Fn(&Flow) -> T, empty: T) -> Vec<(u16, T)> {
        let n = self.flows.len();
        if n == 0 {
            return vec![(0, empty)];
        }
        self.flows
            .iter()
            .enumerate()
            .map(|(i, f)| (if i + 1 < n { MORE } else { 0 }, part(f)))
            .collect()
    }

    fn stats_13(&self, body: &R13) -> Vec<Message> {
        let one = |body| vec![(0, body)];
        let parts: Vec<(u16, B13)> = match body {
            R13::Desc => one(B13::Desc(Box::new(self.description()))),
            R13::PortStats { .. } => one(B13::PortStats {
                stats: self
                    .spec
                    .ports
                    .iter()
                    .map(|&p| PortStats {
                        port_no: p,
                        counters: Emu::port_counters(p),
                        duration_sec: 60,
                        duration_nsec: 0,
                    })
                    .collect(),
            }),
            R13::Table => one(B13::Table {
                stats: vec![TableStats {
                    table_id: 0,
                    active_count: self.flows.len() as u32,
                    lookup_count: 10,
                    matched_count: 5,
                }],
            }),
            R13::Flow(_) => self.parts(
                |f| {
                    let fm = f.to_of13(FlowModCommand::Add).unwrap();
                    B13::Flow {
                        stats: vec![FlowStats {
                            table_id: fm.table_id,
                            duration_sec: 3,
                            duration_nsec: 500_000_000,
                            priority: fm.priority,
                            idle_timeout: fm.idle_timeout,
                            hard_timeout: fm.hard_timeout,
                            flags: fm.flags,
                            cookie: fm.cookie,
                            packet_count: 7,
                            byte_count: 700,
                            match_: fm.match_,
                            instructions: fm.instructions,
                        }],
                    }
                },
                B13::Flow { stats: Vec::new() },
            ),
            R13::GroupDesc => one(B13::GroupDesc {
                groups: vec![GroupDesc {
                    group_type: of13::group::GroupType::All,
                    group_id: 1,
                    buckets: vec![of13::Bucket {
                        weight: 0,
                        watch_port: of13::port::OFPP_ANY,
                        watch_group: of13::OFPG_ANY,
                        actions: vec![of13::Action::Output {
                            port: 1,
                            max_len: 0,
                        }],
                    }],
                }],
            }),
            R13::Group { .. } => one(B13::Group {
                stats: vec![GroupStats {
                    group_id: 1,
                    ref_count: 0,
                    packet_count: 4,
                    byte_count: 400,
                    duration_sec: 9,
                    duration_nsec: 0,
                    bucket_stats: vec![Counter {
                        packet_count: 4,
                        byte_count: 400,
                    }],
                }],
            }),
            R13::MeterConfig { .. } => one(B13::MeterConfig {
                meters: vec![MeterConfig {
                    flags: of13::meter::flags::KBPS | of13::meter::flags::STATS,
                    meter_id: 1,
                    bands: vec![of13::MeterBand::Drop {
                        rate: 1000,
                        burst_size: 0,
                    }],
                }],
            }),
            R13::Meter { .. } => one(B13::Meter {
                stats: vec![MeterStats {
                    meter_id: 1,
                    flow_count: 0,
                    packet_in_count: 2,
                    byte_in_count: 200,
                    duration_sec: 9,
                    duration_nsec: 0,
                    band_stats: vec![Counter {
                        packet_count: 0,
                        byte_count: 0,
                    }],
                }],
            }),
            _ => return Vec::new(),
        };
        parts
            .into_iter()
            .map(|(flags, body)| {
                Message::V13(of13::Message::MultipartReply(MultipartReply {
                    flags,
                    body,
                }))
            })
            .collect()
    }
}
