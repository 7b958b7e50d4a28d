//! Replies in each version's structures: features, switch configuration, statistics
//! (split into several messages with the "more" flag when they would not fit in one),
//! FLOW_REMOVED and PORT_STATUS.

use std::time::{Duration, Instant};

use openflow::common::{AggregateStats, DescStats, PortCounters, SwitchConfig};
use openflow::header::Version;
use openflow::ofctl::{FlowEntry, FlowModCommand};
use openflow::types::FixedStr;
use openflow::{of10, of13, Message};

use super::ports::{PortIo, PortSlot};
use crate::table::{RemovedFlow, RemovedReason, TableStats};

/// Bytes of entries per statistics reply before the next goes into a new message
/// (a message is at most 65535 bytes).
const REPLY_BUDGET: usize = 60_000;

/// The 1.0 actions the tables apply (`ofp_switch_features.actions`): OUTPUT through
/// SET_TP_DST, not ENQUEUE (no queues).
const V10_ACTIONS: u32 = (1 << 11) - 1;

fn wrap(
    v: Version,
    m10: impl FnOnce() -> of10::Message,
    m13: impl FnOnce() -> of13::Message,
) -> Message {
    match v {
        Version::V1_0 => Message::V10(m10()),
        Version::V1_3 => Message::V13(m13()),
    }
}

fn secs(d: Duration) -> (u32, u32) {
    (d.as_secs().min(u32::MAX as u64) as u32, d.subsec_nanos())
}

pub fn features<P: PortIo>(
    v: Version,
    dpid: u64,
    n_buffers: u32,
    n_tables: u8,
    ports: &[PortSlot<P>],
) -> Message {
    let caps = of10::features::OFPC_FLOW_STATS
        | of10::features::OFPC_TABLE_STATS
        | of10::features::OFPC_PORT_STATS;
    wrap(
        v,
        || {
            of10::Message::FeaturesReply(of10::SwitchFeatures {
                datapath_id: dpid,
                n_buffers,
                n_tables: 1,
                capabilities: caps,
                actions: V10_ACTIONS,
                ports: ports.iter().map(PortSlot::phy_port_v10).collect(),
            })
        },
        || {
            of13::Message::FeaturesReply(of13::FeaturesReply {
                datapath_id: dpid,
                n_buffers,
                n_tables,
                auxiliary_id: 0,
                capabilities: caps | OFPC_GROUP_STATS,
                reserved: 0,
            })
        },
    )
}

pub fn config(v: Version, c: SwitchConfig) -> Message {
    wrap(
        v,
        || of10::Message::GetConfigReply(c),
        || of13::Message::GetConfigReply(c),
    )
}

pub fn barrier(v: Version) -> Message {
    wrap(
        v,
        || of10::Message::BarrierReply,
        || of13::Message::BarrierReply,
    )
}

pub fn echo(v: Version, data: Vec<u8>) -> Message {
    match v {
        Version::V1_0 => Message::V10(of10::Message::EchoReply { data }),
        Version::V1_3 => Message::V13(of13::Message::EchoReply { data }),
    }
}

pub fn echo_request(v: Version) -> Message {
    match v {
        Version::V1_0 => Message::V10(of10::Message::EchoRequest { data: Vec::new() }),
        Version::V1_3 => Message::V13(of13::Message::EchoRequest { data: Vec::new() }),
    }
}

pub fn port_status<P: PortIo>(v: Version, port: &PortSlot<P>) -> Message {
    wrap(
        v,
        || {
            of10::Message::PortStatus(of10::PortStatus {
                reason: of10::PortReason::Modify,
                desc: port.phy_port_v10(),
            })
        },
        || {
            of13::Message::PortStatus(of13::PortStatus {
                reason: of13::port::PortReason::Modify,
                desc: port.port_v13(),
            })
        },
    )
}

/// FLOW_REMOVED for `r`, or `None` if its flow cannot be said in `v` (it was added
/// in `v`, so this does not happen).
pub fn flow_removed(v: Version, r: &RemovedFlow) -> Option<Message> {
    let (duration_sec, duration_nsec) = secs(r.duration);
    let f = &r.flow;
    Some(match v {
        Version::V1_0 => Message::V10(of10::Message::FlowRemoved(of10::FlowRemoved {
            match_: f.to_of10(FlowModCommand::Add).ok()?.match_,
            cookie: f.cookie,
            priority: f.priority,
            reason: match r.reason {
                RemovedReason::IdleTimeout => of10::FlowRemovedReason::IdleTimeout,
                RemovedReason::HardTimeout => of10::FlowRemovedReason::HardTimeout,
                // 1.0 has no groups, so no flow of it goes with one.
                RemovedReason::Delete | RemovedReason::GroupDelete => {
                    of10::FlowRemovedReason::Delete
                }
            },
            duration_sec,
            duration_nsec,
            idle_timeout: f.idle_timeout,
            packet_count: r.packets,
            byte_count: r.bytes,
        })),
        Version::V1_3 => Message::V13(of13::Message::FlowRemoved(of13::FlowRemoved {
            cookie: f.cookie,
            priority: f.priority,
            reason: match r.reason {
                RemovedReason::IdleTimeout => of13::FlowRemovedReason::IdleTimeout,
                RemovedReason::HardTimeout => of13::FlowRemovedReason::HardTimeout,
                RemovedReason::Delete => of13::FlowRemovedReason::Delete,
                RemovedReason::GroupDelete => of13::FlowRemovedReason::GroupDelete,
            },
            table_id: f.table,
            duration_sec,
            duration_nsec,
            idle_timeout: f.idle_timeout,
            hard_timeout: f.hard_timeout,
            packet_count: r.packets,
            byte_count: r.bytes,
            match_: f.to_of13(FlowModCommand::Add).ok()?.match_,
        })),
    })
}

pub fn desc(v: Version, name: &str) -> Message {
    let d = DescStats {
        mfr_desc: FixedStr::new("Pharos").unwrap_or_default(),
        hw_desc: FixedStr::new("pharos switch (AF_PACKET)").unwrap_or_default(),
        sw_desc: FixedStr::new(env!("CARGO_PKG_VERSION")).unwrap_or_default(),
        serial_num: FixedStr::new("None").unwrap_or_default(),
        dp_desc: FixedStr::new(&name[..name.len().min(255)]).unwrap_or_default(),
    };
    wrap(
        v,
        || {
            of10::Message::StatsReply(of10::StatsReply {
                flags: 0,
                body: of10::StatsReplyBody::Desc(Box::new(d.clone())),
            })
        },
        || {
            of13::Message::MultipartReply(of13::multipart::MultipartReply {
                flags: 0,
                body: of13::multipart::MultipartReplyBody::Desc(Box::new(d.clone())),
            })
        },
    )
}

/// Splits `items` into replies of at most [`REPLY_BUDGET`] bytes each (by `size`),
/// every reply but the last flagged "more".
fn chunked<I>(
    items: Vec<I>,
    size: impl Fn(&I) -> usize,
    mut make: impl FnMut(Vec<I>, u16) -> Message,
) -> Vec<Message> {
    let mut groups: Vec<Vec<I>> = vec![Vec::new()];
    let mut used = 0;
    for it in items {
        let n = size(&it);
        if used + n > REPLY_BUDGET && !groups.last().is_some_and(Vec::is_empty) {
            groups.push(Vec::new());
            used = 0;
        }
        used += n;
        groups.last_mut().expect("never empty").push(it);
    }
    let last = groups.len() - 1;
    groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| make(g, u16::from(i != last)))
        .collect()
}

/// Flow statistics replies for `entries` (each converted back to its version's
/// structures; one the version cannot say is skipped and logged).
pub fn flow_stats(v: Version, entries: Vec<FlowEntry>) -> Vec<Message> {
    match v {
        Version::V1_0 => {
            let stats: Vec<of10::stats::FlowStats> = entries
                .iter()
                .filter_map(|e| {
                    let fm = e
                        .flow
                        .to_of10(FlowModCommand::Add)
                        .map_err(|err| tracing::warn!(flow = %e.flow, error = %err, "flow not in 1.0 stats"))
                        .ok()?;
                    let c = e.counters.unwrap_or(openflow::ofctl::FlowCounters {
                        duration_sec: 0,
                        duration_nsec: 0,
                        packet_count: 0,
                        byte_count: 0,
                    });
                    Some(of10::stats::FlowStats {
                        table_id: e.flow.table,
                        match_: fm.match_,
                        duration_sec: c.duration_sec,
                        duration_nsec: c.duration_nsec,
                        priority: e.flow.priority,
                        idle_timeout: e.flow.idle_timeout,
                        hard_timeout: e.flow.hard_timeout,
                        cookie: e.flow.cookie,
                        packet_count: c.packet_count,
                        byte_count: c.byte_count,
                        actions: fm.actions,
                    })
                })
                .collect();
            chunked(
                stats,
                |s| of10::stats::FlowStats::FIXED_LEN + s.actions.len() * 16,
                |stats, flags| {
                    Message::V10(of10::Message::StatsReply(of10::StatsReply {
                        flags,
                        body: of10::StatsReplyBody::Flow { stats },
                    }))
                },
            )
        }
        Version::V1_3 => {
            let stats: Vec<of13::multipart::FlowStats> = entries
                .iter()
                .filter_map(|e| {
                    let fm = e
                        .flow
                        .to_of13(FlowModCommand::Add)
                        .map_err(|err| tracing::warn!(flow = %e.flow, error = %err, "flow not in 1.3 stats"))
                        .ok()?;
                    let c = e.counters.unwrap_or(openflow::ofctl::FlowCounters {
                        duration_sec: 0,
                        duration_nsec: 0,
                        packet_count: 0,
                        byte_count: 0,
                    });
                    Some(of13::multipart::FlowStats {
                        table_id: e.flow.table,
                        duration_sec: c.duration_sec,
                        duration_nsec: c.duration_nsec,
                        priority: e.flow.priority,
                        idle_timeout: e.flow.idle_timeout,
                        hard_timeout: e.flow.hard_timeout,
                        flags: fm.flags,
                        cookie: e.flow.cookie,
                        packet_count: c.packet_count,
                        byte_count: c.byte_count,
                        match_: fm.match_,
                        instructions: fm.instructions,
                    })
                })
                .collect();
            chunked(
                stats,
                |s| {
                    let mut b = Vec::new();
                    let _ = s.emit(&mut b);
                    b.len()
                },
                |stats, flags| {
                    Message::V13(of13::Message::MultipartReply(
                        of13::multipart::MultipartReply {
                            flags,
                            body: of13::multipart::MultipartReplyBody::Flow { stats },
                        },
                    ))
                },
            )
        }
    }
}

pub fn aggregate(v: Version, entries: &[FlowEntry]) -> Message {
    let mut a = AggregateStats::default();
    for e in entries {
        a.flow_count += 1;
        if let Some(c) = e.counters {
            a.packet_count += c.packet_count;
            a.byte_count += c.byte_count;
        }
    }
    wrap(
        v,
        || {
            of10::Message::StatsReply(of10::StatsReply {
                flags: 0,
                body: of10::StatsReplyBody::Aggregate(a),
            })
        },
        || {
            of13::Message::MultipartReply(of13::multipart::MultipartReply {
                flags: 0,
                body: of13::multipart::MultipartReplyBody::Aggregate(a),
            })
        },
    )
}

pub fn table_stats(v: Version, tables: &[TableStats]) -> Message {
    wrap(
        v,
        || {
            of10::Message::StatsReply(of10::StatsReply {
                flags: 0,
                body: of10::StatsReplyBody::Table {
                    stats: tables
                        .iter()
                        .map(|t| of10::stats::TableStats {
                            table_id: t.table_id,
                            name: FixedStr::new("classifier").unwrap_or_default(),
                            wildcards: of10::flow_match::OFPFW_ALL,
                            max_entries: t.max_entries,
                            active_count: t.active,
                            lookup_count: t.lookups,
                            matched_count: t.matched,
                        })
                        .collect(),
                },
            })
        },
        || {
            of13::Message::MultipartReply(of13::multipart::MultipartReply {
                flags: 0,
                body: of13::multipart::MultipartReplyBody::Table {
                    stats: tables
                        .iter()
                        .map(|t| of13::multipart::TableStats {
                            table_id: t.table_id,
                            active_count: t.active,
                            lookup_count: t.lookups,
                            matched_count: t.matched,
                        })
                        .collect(),
                },
            })
        },
    )
}

pub fn port_stats<'a, P: PortIo + 'a>(
    v: Version,
    ports: impl Iterator<Item = &'a PortSlot<P>>,
    now: Instant,
) -> Message {
    let rows: Vec<(u32, PortCounters, Duration)> = ports
        .map(|p| (p.port_no, p.counters(), now.duration_since(p.since)))
        .collect();
    wrap(
        v,
        || {
            of10::Message::StatsReply(of10::StatsReply {
                flags: 0,
                body: of10::StatsReplyBody::Port {
                    stats: rows
                        .iter()
                        .map(|(n, c, _)| of10::stats::PortStats {
                            port_no: *n as u16,
                            counters: *c,
                        })
                        .collect(),
                },
            })
        },
        || {
            of13::Message::MultipartReply(of13::multipart::MultipartReply {
                flags: 0,
                body: of13::multipart::MultipartReplyBody::PortStats {
                    stats: rows
                        .iter()
                        .map(|(n, c, d)| {
                            let (duration_sec, duration_nsec) = secs(*d);
                            of13::multipart::PortStats {
                                port_no: *n,
                                counters: *c,
                                duration_sec,
                                duration_nsec,
                            }
                        })
                        .collect(),
                },
            })
        },
    )
}

/// 1.3 only (PORT_DESC multipart).
pub fn port_desc<P: PortIo>(ports: &[PortSlot<P>]) -> Message {
    Message::V13(of13::Message::MultipartReply(
        of13::multipart::MultipartReply {
            flags: 0,
            body: of13::multipart::MultipartReplyBody::PortDesc {
                ports: ports.iter().map(PortSlot::port_v13).collect(),
            },
        },
    ))
}

/// An empty queue statistics reply (the switch has no queues).
pub fn queue_stats(v: Version) -> Message {
    wrap(
        v,
        || {
            of10::Message::StatsReply(of10::StatsReply {
                flags: 0,
                body: of10::StatsReplyBody::Queue { stats: Vec::new() },
            })
        },
        || {
            of13::Message::MultipartReply(of13::multipart::MultipartReply {
                flags: 0,
                body: of13::multipart::MultipartReplyBody::Queue { stats: Vec::new() },
            })
        },
    )
}

/// An empty 1.3 reply of `kind` (groups and meters: there are none).
/// `OFPC_GROUP_STATS` (1.3).
const OFPC_GROUP_STATS: u32 = 1 << 3;

fn multipart(body: of13::multipart::MultipartReplyBody) -> Message {
    Message::V13(of13::Message::MultipartReply(
        of13::multipart::MultipartReply { flags: 0, body },
    ))
}

/// GROUP statistics (1.3).
pub fn group_stats(stats: Vec<crate::table::GroupStats>) -> Message {
    use of13::multipart::{Counter, GroupStats, MultipartReplyBody as B};
    multipart(B::Group {
        stats: stats
            .into_iter()
            .map(|g| {
                let (duration_sec, duration_nsec) = secs(g.duration);
                GroupStats {
                    group_id: g.group_id,
                    ref_count: g.ref_count,
                    packet_count: g.packets,
                    byte_count: g.bytes,
                    duration_sec,
                    duration_nsec,
                    bucket_stats: g
                        .buckets
                        .into_iter()
                        .map(|(packet_count, byte_count)| Counter {
                            packet_count,
                            byte_count,
                        })
                        .collect(),
                }
            })
            .collect(),
    })
}

/// GROUP_DESC (1.3).
pub fn group_desc(groups: Vec<crate::table::GroupDesc>) -> Message {
    use of13::multipart::{GroupDesc, MultipartReplyBody as B};
    multipart(B::GroupDesc {
        groups: groups
            .into_iter()
            .map(|g| GroupDesc {
                group_type: g.group_type,
                group_id: g.group_id,
                buckets: g.buckets,
            })
            .collect(),
    })
}

/// GROUP_FEATURES (1.3): all, select and indirect groups, select weights, and the
/// actions a bucket may hold (output, push/pop VLAN, dec-TTL, set-field).
pub fn group_features(max_groups: u32) -> Message {
    use of13::multipart::{GroupFeatures, MultipartReplyBody as B};
    // OFPGT_ALL, OFPGT_SELECT, OFPGT_INDIRECT.
    let types = 1 << 0 | 1 << 1 | 1 << 2;
    // OFPGFC_SELECT_WEIGHT.
    let capabilities = 1 << 0;
    // OFPAT_OUTPUT, OFPAT_PUSH_VLAN, OFPAT_POP_VLAN, OFPAT_DEC_NW_TTL, OFPAT_SET_FIELD.
    let actions = 1 << 0 | 1 << 17 | 1 << 18 | 1 << 24 | 1 << 25;
    multipart(B::GroupFeatures(GroupFeatures {
        types,
        capabilities,
        max_groups: [max_groups, max_groups, max_groups, 0],
        actions: [actions, actions, actions, 0],
    }))
}

pub fn empty_v13(kind: of13::multipart::MultipartType) -> Message {
    use of13::multipart::{MultipartReplyBody as B, MultipartType as T};
    let body = match kind {
        T::Meter => B::Meter { stats: Vec::new() },
        _ => B::MeterConfig { meters: Vec::new() },
    };
    Message::V13(of13::Message::MultipartReply(
        of13::multipart::MultipartReply { flags: 0, body },
    ))
}

pub fn queue_config(v: Version, port: u32) -> Message {
    wrap(
        v,
        || {
            of10::Message::QueueGetConfigReply(of10::QueueGetConfigReply {
                port: super::channel::port_v10(port),
                queues: Vec::new(),
            })
        },
        || {
            of13::Message::QueueGetConfigReply(of13::QueueGetConfigReply {
                port,
                queues: Vec::new(),
            })
        },
    )
}

pub fn role(r: of13::Role) -> Message {
    Message::V13(of13::Message::RoleReply(r))
}

/// GET_ASYNC_REPLY with 1.3.3 §A.3.9's defaults for an equal or master controller:
/// every PACKET_IN and PORT_STATUS reason, and FLOW_REMOVED for timeouts and deletes.
pub fn async_config() -> Message {
    Message::V13(of13::Message::GetAsyncReply(of13::AsyncConfig {
        packet_in_mask: [0b011, 0],
        port_status_mask: [0b111, 0b111],
        flow_removed_mask: [0b1111, 0],
    }))
}

/// 1.3 TABLE_FEATURES: each table's name, size, the instructions, actions and fields
/// it takes, and the tables its goto-table may name (every later one). `ovs-ofctl`
/// asks for them before a FLOW_MOD, and refuses a reply without the eight properties
/// 1.3.3 §7.3.5.5.2 requires.
pub fn table_features(tables: u8, max_flows: usize) -> Message {
    use of13::table_features::{FeatureId, OxmId, TableFeatureProp as P, TableFeatures};
    use of13::{OxmField as F, OxmHeader};
    let ids = |list: &[u16]| -> Vec<FeatureId> {
        list.iter()
            .map(|&id_type| FeatureId::Standard { id_type })
            .collect()
    };
    let oxms = |list: &[F]| -> Vec<OxmId> {
        list.iter()
            .map(|&f| {
                let width = f.kind().map_or(0, |k| k.width()) as u8;
                OxmId::new(OxmHeader::basic(f, false, width))
            })
            .collect()
    };
    // GOTO_TABLE, WRITE_METADATA, WRITE_ACTIONS, APPLY_ACTIONS, CLEAR_ACTIONS.
    let instructions = [1, 2, 3, 4, 5];
    // OUTPUT, PUSH_VLAN, POP_VLAN, DEC_NW_TTL, SET_FIELD.
    let actions = [0, 17, 18, 24, 25];
    let matched = [
        F::InPort,
        F::Metadata,
        F::EthDst,
        F::EthSrc,
        F::EthType,
        F::VlanVid,
        F::VlanPcp,
        F::IpDscp,
        F::IpEcn,
        F::IpProto,
        F::Ipv4Src,
        F::Ipv4Dst,
        F::TcpSrc,
        F::TcpDst,
        F::UdpSrc,
        F::UdpDst,
        F::Icmpv4Type,
        F::Icmpv4Code,
        F::ArpOp,
        F::ArpSpa,
        F::ArpTpa,
    ];
    let set = [
        F::EthDst,
        F::EthSrc,
        F::VlanVid,
        F::VlanPcp,
        F::IpDscp,
        F::Ipv4Src,
        F::Ipv4Dst,
        F::TcpSrc,
        F::TcpDst,
        F::UdpSrc,
        F::UdpDst,
    ];
    let features = (0..tables)
        .map(|t| TableFeatures {
            table_id: t,
            name: FixedStr::new(&format!("table{t}")).unwrap_or_default(),
            metadata_match: u64::MAX,
            metadata_write: u64::MAX,
            config: 0,
            max_entries: max_flows.min(u32::MAX as usize) as u32,
            properties: vec![
                P::Instructions {
                    ids: ids(&instructions),
                },
                P::NextTables {
                    table_ids: (t + 1..tables).collect(),
                },
                P::WriteActions { ids: ids(&actions) },
                P::ApplyActions { ids: ids(&actions) },
                P::Match {
                    oxm_ids: oxms(&matched),
                },
                P::Wildcards {
                    oxm_ids: oxms(&matched),
                },
                P::WriteSetfield {
                    oxm_ids: oxms(&set),
                },
                P::ApplySetfield {
                    oxm_ids: oxms(&set),
                },
            ],
        })
        .collect();
    Message::V13(of13::Message::MultipartReply(
        of13::multipart::MultipartReply {
            flags: 0,
            body: of13::multipart::MultipartReplyBody::TableFeatures { tables: features },
        },
    ))
}
