//! Ryu shape for OpenFlow 1.0 messages (`ryu/ofproto/ofproto_v1_0_parser.py`'s
//! `to_jsondict`): `{"OFPClass": {fields}}`, bytes in base64, addresses as text.

use openflow::common::{ErrorBody, QueueProperty};
use openflow::of10::stats::{FlowStats, StatsReplyBody, StatsRequestBody};
use openflow::of10::{Action, Match, Message, PhyPort};
use serde_json::{json, Map, Value};

use super::{b64, opaque, wrap};

pub fn message(m: &Message) -> Value {
    match m {
        Message::Hello(_) => wrap("OFPHello", json!({})),
        Message::Error(ErrorBody::Standard {
            err_type,
            code,
            data,
        }) => wrap(
            "OFPErrorMsg",
            json!({ "type": err_type, "code": code, "data": b64(data) }),
        ),
        Message::Error(ErrorBody::Experimenter { .. }) => {
            opaque("experimenter error layout does not exist in 1.0")
        }
        Message::EchoRequest { data } => wrap("OFPEchoRequest", json!({ "data": b64(data) })),
        Message::EchoReply { data } => wrap("OFPEchoReply", json!({ "data": b64(data) })),
        Message::Vendor(v) => wrap(
            "OFPVendor",
            json!({ "vendor": v.vendor, "data": b64(&v.data) }),
        ),
        Message::FeaturesRequest => wrap("OFPFeaturesRequest", json!({})),
        Message::FeaturesReply(f) => {
            let mut ports = Map::new();
            for p in &f.ports {
                ports.insert(p.port_no.to_string(), phy_port(p));
            }
            wrap(
                "OFPSwitchFeatures",
                json!({
                    "datapath_id": f.datapath_id,
                    "n_buffers": f.n_buffers,
                    "n_tables": f.n_tables,
                    "capabilities": f.capabilities,
                    "actions": f.actions,
                    "ports": Value::Object(ports),
                }),
            )
        }
        Message::GetConfigRequest => wrap("OFPGetConfigRequest", json!({})),
        Message::GetConfigReply(c) => wrap(
            "OFPGetConfigReply",
            json!({ "flags": c.flags, "miss_send_len": c.miss_send_len }),
        ),
        Message::SetConfig(c) => wrap(
            "OFPSetConfig",
            json!({ "flags": c.flags, "miss_send_len": c.miss_send_len }),
        ),
        Message::PacketIn(p) => wrap(
            "OFPPacketIn",
            json!({
                "buffer_id": p.buffer_id,
                "total_len": p.total_len,
                "in_port": p.in_port,
                "reason": p.reason.to_raw(),
                "data": b64(&p.data),
            }),
        ),
        Message::FlowRemoved(f) => wrap(
            "OFPFlowRemoved",
            json!({
                "match": of_match(&f.match_),
                "cookie": f.cookie,
                "priority": f.priority,
                "reason": f.reason.to_raw(),
                "duration_sec": f.duration_sec,
                "duration_nsec": f.duration_nsec,
                "idle_timeout": f.idle_timeout,
                "packet_count": f.packet_count,
                "byte_count": f.byte_count,
            }),
        ),
        Message::PortStatus(p) => wrap(
            "OFPPortStatus",
            json!({ "reason": p.reason.to_raw(), "desc": phy_port(&p.desc) }),
        ),
        Message::PacketOut(p) => wrap(
            "OFPPacketOut",
            json!({
                "buffer_id": p.buffer_id,
                "in_port": p.in_port,
                "actions": actions(&p.actions),
                "data": b64(&p.data),
            }),
        ),
        Message::FlowMod(f) => wrap(
            "OFPFlowMod",
            json!({
                "match": of_match(&f.match_),
                "cookie": f.cookie,
                "command": f.command.to_raw(),
                "idle_timeout": f.idle_timeout,
                "hard_timeout": f.hard_timeout,
                "priority": f.priority,
                "buffer_id": f.buffer_id,
                "out_port": f.out_port,
                "flags": f.flags,
                "actions": actions(&f.actions),
            }),
        ),
        Message::PortMod(p) => wrap(
            "OFPPortMod",
            json!({
                "port_no": p.port_no,
                "hw_addr": p.hw_addr.to_string(),
                "config": p.config,
                "mask": p.mask,
                "advertise": p.advertise,
            }),
        ),
        Message::StatsRequest(s) => {
            let flags = s.flags;
            match &s.body {
                StatsRequestBody::Desc => wrap("OFPDescStatsRequest", json!({ "flags": flags })),
                StatsRequestBody::Table => wrap("OFPTableStatsRequest", json!({ "flags": flags })),
                StatsRequestBody::Flow(f) | StatsRequestBody::Aggregate(f) => wrap(
                    if matches!(s.body, StatsRequestBody::Flow(_)) {
                        "OFPFlowStatsRequest"
                    } else {
                        "OFPAggregateStatsRequest"
                    },
                    json!({
                        "flags": flags,
                        "match": of_match(&f.match_),
                        "table_id": f.table_id,
                        "out_port": f.out_port,
                    }),
                ),
                StatsRequestBody::Port(p) => wrap(
                    "OFPPortStatsRequest",
                    json!({ "flags": flags, "port_no": p.port_no }),
                ),
                StatsRequestBody::Queue(q) => wrap(
                    "OFPQueueStatsRequest",
                    json!({ "flags": flags, "port_no": q.port_no, "queue_id": q.queue_id }),
                ),
                StatsRequestBody::Vendor { .. } => opaque("vendor stats request"),
                StatsRequestBody::Unknown { .. } => opaque("unknown stats request"),
            }
        }
        Message::StatsReply(s) => {
            let flags = s.flags;
            match &s.body {
                StatsReplyBody::Desc(d) => wrap(
                    "OFPDescStatsReply",
                    json!({
                        "flags": flags,
                        "body": wrap("OFPDescStats", json!({
                            "mfr_desc": d.mfr_desc.to_string_lossy(),
                            "hw_desc": d.hw_desc.to_string_lossy(),
                            "sw_desc": d.sw_desc.to_string_lossy(),
                            "serial_num": d.serial_num.to_string_lossy(),
                            "dp_desc": d.dp_desc.to_string_lossy(),
                        })),
                    }),
                ),
                StatsReplyBody::Flow { stats } => wrap(
                    "OFPFlowStatsReply",
                    json!({
                        "flags": flags,
                        "body": stats.iter().map(flow_stats).collect::<Vec<_>>(),
                    }),
                ),
                StatsReplyBody::Aggregate(a) => wrap(
                    "OFPAggregateStatsReply",
                    json!({
                        "flags": flags,
                        "body": [wrap("OFPAggregateStats", json!({
                            "packet_count": a.packet_count,
                            "byte_count": a.byte_count,
                            "flow_count": a.flow_count,
                        }))],
                    }),
                ),
                StatsReplyBody::Table { stats } => wrap(
                    "OFPTableStatsReply",
                    json!({
                        "flags": flags,
                        "body": stats.iter().map(|t| wrap("OFPTableStats", json!({
                            "table_id": t.table_id,
                            "name": t.name.to_string_lossy(),
                            "wildcards": t.wildcards,
                            "max_entries": t.max_entries,
                            "active_count": t.active_count,
                            "lookup_count": t.lookup_count,
                            "matched_count": t.matched_count,
                        }))).collect::<Vec<_>>(),
                    }),
                ),
                StatsReplyBody::Port { stats } => wrap(
                    "OFPPortStatsReply",
                    json!({
                        "flags": flags,
                        "body": stats.iter().map(|p| wrap("OFPPortStats", json!({
                            "port_no": p.port_no,
                            "rx_packets": p.counters.rx_packets,
                            "tx_packets": p.counters.tx_packets,
                            "rx_bytes": p.counters.rx_bytes,
                            "tx_bytes": p.counters.tx_bytes,
                            "rx_dropped": p.counters.rx_dropped,
                            "tx_dropped": p.counters.tx_dropped,
                            "rx_errors": p.counters.rx_errors,
                            "tx_errors": p.counters.tx_errors,
                            "rx_frame_err": p.counters.rx_frame_err,
                            "rx_over_err": p.counters.rx_over_err,
                            "rx_crc_err": p.counters.rx_crc_err,
                            "collisions": p.counters.collisions,
                        }))).collect::<Vec<_>>(),
                    }),
                ),
                StatsReplyBody::Queue { stats } => wrap(
                    "OFPQueueStatsReply",
                    json!({
                        "flags": flags,
                        "body": stats.iter().map(|q| wrap("OFPQueueStats", json!({
                            "port_no": q.port_no,
                            "queue_id": q.queue_id,
                            "tx_bytes": q.tx_bytes,
                            "tx_packets": q.tx_packets,
                            "tx_errors": q.tx_errors,
                        }))).collect::<Vec<_>>(),
                    }),
                ),
                StatsReplyBody::Vendor { .. } => opaque("vendor stats reply"),
                StatsReplyBody::Unknown { .. } => opaque("unknown stats reply"),
            }
        }
        Message::BarrierRequest => wrap("OFPBarrierRequest", json!({})),
        Message::BarrierReply => wrap("OFPBarrierReply", json!({})),
        Message::QueueGetConfigRequest(q) => {
            wrap("OFPQueueGetConfigRequest", json!({ "port": q.port }))
        }
        Message::QueueGetConfigReply(q) => wrap(
            "OFPQueueGetConfigReply",
            json!({
                "port": q.port,
                "queues": q.queues.iter().map(|pq| wrap("OFPPacketQueue", json!({
                    "queue_id": pq.queue_id,
                    "properties": pq.properties.iter().map(|p| match p {
                        QueueProperty::MinRate { rate } => {
                            wrap("OFPQueuePropMinRate", json!({ "rate": rate }))
                        }
                        _ => opaque("queue property 1.0 does not define"),
                    }).collect::<Vec<_>>(),
                }))).collect::<Vec<_>>(),
            }),
        ),
        Message::Unknown { msg_type, .. } => opaque(&format!("unknown message type {msg_type}")),
    }
}

fn phy_port(p: &PhyPort) -> Value {
    wrap(
        "OFPPhyPort",
        json!({
            "port_no": p.port_no,
            "hw_addr": p.hw_addr.to_string(),
            "name": p.name.to_string_lossy(),
            "config": p.config,
            "state": p.state,
            "curr": p.curr,
            "advertised": p.advertised,
            "supported": p.supported,
            "peer": p.peer,
        }),
    )
}

fn of_match(m: &Match) -> Value {
    wrap(
        "OFPMatch",
        json!({
            "wildcards": m.wildcards,
            "in_port": m.in_port,
            "dl_src": m.dl_src.to_string(),
            "dl_dst": m.dl_dst.to_string(),
            "dl_vlan": m.dl_vlan,
            "dl_vlan_pcp": m.dl_vlan_pcp,
            "dl_type": m.dl_type,
            "nw_tos": m.nw_tos,
            "nw_proto": m.nw_proto,
            "nw_src": m.nw_src.to_string(),
            "nw_dst": m.nw_dst.to_string(),
            "tp_src": m.tp_src,
            "tp_dst": m.tp_dst,
        }),
    )
}

fn flow_stats(s: &FlowStats) -> Value {
    wrap(
        "OFPFlowStats",
        json!({
            "table_id": s.table_id,
            "match": of_match(&s.match_),
            "duration_sec": s.duration_sec,
            "duration_nsec": s.duration_nsec,
            "priority": s.priority,
            "idle_timeout": s.idle_timeout,
            "hard_timeout": s.hard_timeout,
            "cookie": s.cookie,
            "packet_count": s.packet_count,
            "byte_count": s.byte_count,
            "actions": actions(&s.actions),
        }),
    )
}

fn actions(list: &[Action]) -> Value {
    Value::Array(list.iter().map(action).collect())
}

fn action(a: &Action) -> Value {
    match a {
        Action::Output { port, max_len } => wrap(
            "OFPActionOutput",
            json!({ "port": port, "max_len": max_len }),
        ),
        Action::SetVlanVid { vlan_vid } => {
            wrap("OFPActionVlanVid", json!({ "vlan_vid": vlan_vid }))
        }
        Action::SetVlanPcp { vlan_pcp } => {
            wrap("OFPActionVlanPcp", json!({ "vlan_pcp": vlan_pcp }))
        }
        Action::StripVlan => wrap("OFPActionStripVlan", json!({})),
        Action::SetDlSrc { dl_addr } => wrap(
            "OFPActionSetDlSrc",
            json!({ "dl_addr": dl_addr.to_string() }),
        ),
        Action::SetDlDst { dl_addr } => wrap(
            "OFPActionSetDlDst",
            json!({ "dl_addr": dl_addr.to_string() }),
        ),
        Action::SetNwSrc { nw_addr } => wrap(
            "OFPActionSetNwSrc",
            json!({ "nw_addr": u32::from(*nw_addr) }),
        ),
        Action::SetNwDst { nw_addr } => wrap(
            "OFPActionSetNwDst",
            json!({ "nw_addr": u32::from(*nw_addr) }),
        ),
        Action::SetNwTos { nw_tos } => wrap("OFPActionSetNwTos", json!({ "tos": nw_tos })),
        Action::SetTpSrc { tp_port } => wrap("OFPActionSetTpSrc", json!({ "tp": tp_port })),
        Action::SetTpDst { tp_port } => wrap("OFPActionSetTpDst", json!({ "tp": tp_port })),
        Action::Enqueue { port, queue_id } => wrap(
            "OFPActionEnqueue",
            json!({ "port": port, "queue_id": queue_id }),
        ),
        Action::Vendor { .. } | Action::Unknown { .. } => {
            opaque(&a.opaque_part().unwrap_or_default())
        }
    }
}
