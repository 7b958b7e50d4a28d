//! Ryu shape for OpenFlow 1.3 MULTIPART_REQUEST and MULTIPART_REPLY
//! (`OFPxxxStatsRequest` / `OFPxxxStatsReply` classes of `ofproto_v1_3_parser`).

use openflow::of13::multipart::{
    Counter, ExperimenterMultipart, FlowStatsRequest, MultipartReply, MultipartReplyBody,
    MultipartRequest, MultipartRequestBody,
};
use openflow::of13::oxm::{OxmField, OXM_CLASS_OPENFLOW_BASIC};
use openflow::of13::table_features::{FeatureId, OxmId, TableFeatureProp, TableFeatures};
use serde_json::{json, Map, Value};

use super::{b64, opaque, wrap};

/// The ONF experimenter id (`ONF_EXPERIMENTER_ID`, "ONF\0").
const ONF_EXPERIMENTER_ID: u32 = 0x4f4e_4600;

/// `{"flags": .., "type": .., ...fields}` under `class`.
fn msg(class: &str, flags: u16, mp_type: u16, fields: Value) -> Value {
    let mut m = match fields {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    m.insert("flags".into(), json!(flags));
    m.insert("type".into(), json!(mp_type));
    wrap(class, Value::Object(m))
}

fn flow_request(f: &FlowStatsRequest) -> Value {
    json!({
        "table_id": f.table_id,
        "out_port": f.out_port,
        "out_group": f.out_group,
        "cookie": f.cookie,
        "cookie_mask": f.cookie_mask,
        "match": super::of13::match_(&f.match_),
    })
}

/// Ryu's rendering of a MULTIPART_REQUEST.
pub fn request(m: &MultipartRequest) -> Value {
    use MultipartRequestBody as B;
    let t = m.kind().to_raw();
    let f = m.flags;
    match &m.body {
        B::Desc => msg("OFPDescStatsRequest", f, t, json!({})),
        B::Flow(r) => msg("OFPFlowStatsRequest", f, t, flow_request(r)),
        B::Aggregate(r) => msg("OFPAggregateStatsRequest", f, t, flow_request(r)),
        B::Table => msg("OFPTableStatsRequest", f, t, json!({})),
        B::PortStats { port_no } => msg("OFPPortStatsRequest", f, t, json!({ "port_no": port_no })),
        B::Queue { port_no, queue_id } => msg(
            "OFPQueueStatsRequest",
            f,
            t,
            json!({ "port_no": port_no, "queue_id": queue_id }),
        ),
        B::Group { group_id } => msg(
            "OFPGroupStatsRequest",
            f,
            t,
            json!({ "group_id": group_id }),
        ),
        B::GroupDesc => msg("OFPGroupDescStatsRequest", f, t, json!({})),
        B::GroupFeatures => msg("OFPGroupFeaturesStatsRequest", f, t, json!({})),
        B::Meter { meter_id } => msg(
            "OFPMeterStatsRequest",
            f,
            t,
            json!({ "meter_id": meter_id }),
        ),
        B::MeterConfig { meter_id } => msg(
            "OFPMeterConfigStatsRequest",
            f,
            t,
            json!({ "meter_id": meter_id }),
        ),
        B::MeterFeatures => msg("OFPMeterFeaturesStatsRequest", f, t, json!({})),
        B::TableFeatures { tables } => msg(
            "OFPTableFeaturesStatsRequest",
            f,
            t,
            json!({ "body": tables.iter().map(table_features).collect::<Vec<_>>() }),
        ),
        B::PortDesc => msg("OFPPortDescStatsRequest", f, t, json!({})),
        // README quirk 2: the ONF flow monitor request is an ONF experimenter multipart
        // whose body we carry opaquely.
        B::Experimenter(e) if e.experimenter == ONF_EXPERIMENTER_ID => msg(
            "ONFFlowMonitorStatsRequest",
            f,
            t,
            json!({
                "experimenter": e.experimenter,
                "exp_type": e.exp_type,
                "body": opaque("ONF experimenter multipart body"),
            }),
        ),
        B::Experimenter(e) => msg(
            "OFPExperimenterStatsRequest",
            f,
            t,
            json!({ "experimenter": e.experimenter, "exp_type": e.exp_type, "data": b64(&e.data) }),
        ),
        B::Unknown { mp_type, .. } => opaque(&format!("unknown multipart request {mp_type}")),
    }
}

fn experimenter(e: &ExperimenterMultipart) -> Value {
    wrap(
        "OFPExperimenterMultipart",
        json!({ "experimenter": e.experimenter, "exp_type": e.exp_type, "data": b64(&e.data) }),
    )
}

fn counters(class: &str, packets: &str, bytes: &str, cs: &[Counter]) -> Value {
    Value::Array(
        cs.iter()
            .map(|c| {
                wrap(
                    class,
                    json!({ packets: c.packet_count, bytes: c.byte_count }),
                )
            })
            .collect(),
    )
}

/// Ryu's rendering of a MULTIPART_REPLY.
pub fn reply(m: &MultipartReply) -> Value {
    use MultipartReplyBody as B;
    let t = m.kind().to_raw();
    let f = m.flags;
    let list = |v: Vec<Value>| json!({ "body": v });
    match &m.body {
        B::Desc(d) => msg(
            "OFPDescStatsReply",
            f,
            t,
            json!({ "body": wrap("OFPDescStats", json!({
                "mfr_desc": d.mfr_desc.to_string_lossy(),
                "hw_desc": d.hw_desc.to_string_lossy(),
                "sw_desc": d.sw_desc.to_string_lossy(),
                "serial_num": d.serial_num.to_string_lossy(),
                "dp_desc": d.dp_desc.to_string_lossy(),
            })) }),
        ),
        B::Flow { stats } => msg(
            "OFPFlowStatsReply",
            f,
            t,
            list(
                stats
                    .iter()
                    .map(|s| {
                        wrap(
                            "OFPFlowStats",
                            json!({
                                "table_id": s.table_id,
                                "duration_sec": s.duration_sec,
                                "duration_nsec": s.duration_nsec,
                                "priority": s.priority,
                                "idle_timeout": s.idle_timeout,
                                "hard_timeout": s.hard_timeout,
                                "flags": s.flags,
                                "cookie": s.cookie,
                                "packet_count": s.packet_count,
                                "byte_count": s.byte_count,
                                "match": super::of13::match_(&s.match_),
                                "instructions": super::of13::instructions(&s.instructions),
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        B::Aggregate(a) => msg(
            "OFPAggregateStatsReply",
            f,
            t,
            json!({ "body": wrap("OFPAggregateStats", json!({
                "packet_count": a.packet_count,
                "byte_count": a.byte_count,
                "flow_count": a.flow_count,
            })) }),
        ),
        B::Table { stats } => msg(
            "OFPTableStatsReply",
            f,
            t,
            list(
                stats
                    .iter()
                    .map(|s| {
                        wrap(
                            "OFPTableStats",
                            json!({
                                "table_id": s.table_id,
                                "active_count": s.active_count,
                                "lookup_count": s.lookup_count,
                                "matched_count": s.matched_count,
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        B::PortStats { stats } => msg(
            "OFPPortStatsReply",
            f,
            t,
            list(
                stats
                    .iter()
                    .map(|s| {
                        wrap(
                            "OFPPortStats",
                            json!({
                                "port_no": s.port_no,
                                "rx_packets": s.counters.rx_packets,
                                "tx_packets": s.counters.tx_packets,
                                "rx_bytes": s.counters.rx_bytes,
                                "tx_bytes": s.counters.tx_bytes,
                                "rx_dropped": s.counters.rx_dropped,
                                "tx_dropped": s.counters.tx_dropped,
                                "rx_errors": s.counters.rx_errors,
                                "tx_errors": s.counters.tx_errors,
                                "rx_frame_err": s.counters.rx_frame_err,
                                "rx_over_err": s.counters.rx_over_err,
                                "rx_crc_err": s.counters.rx_crc_err,
                                "collisions": s.counters.collisions,
                                "duration_sec": s.duration_sec,
                                "duration_nsec": s.duration_nsec,
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        B::Queue { stats } => msg(
            "OFPQueueStatsReply",
            f,
            t,
            list(
                stats
                    .iter()
                    .map(|s| {
                        wrap(
                            "OFPQueueStats",
                            json!({
                                "port_no": s.port_no,
                                "queue_id": s.queue_id,
                                "tx_bytes": s.tx_bytes,
                                "tx_packets": s.tx_packets,
                                "tx_errors": s.tx_errors,
                                "duration_sec": s.duration_sec,
                                "duration_nsec": s.duration_nsec,
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        B::Group { stats } => msg(
            "OFPGroupStatsReply",
            f,
            t,
            list(
                stats
                    .iter()
                    .map(|s| {
                        wrap(
                            "OFPGroupStats",
                            json!({
                                "group_id": s.group_id,
                                "ref_count": s.ref_count,
                                "packet_count": s.packet_count,
                                "byte_count": s.byte_count,
                                "duration_sec": s.duration_sec,
                                "duration_nsec": s.duration_nsec,
                                "bucket_stats": counters(
                                    "OFPBucketCounter",
                                    "packet_count",
                                    "byte_count",
                                    &s.bucket_stats,
                                ),
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        B::GroupDesc { groups } => msg(
            "OFPGroupDescStatsReply",
            f,
            t,
            list(
                groups
                    .iter()
                    .map(|g| {
                        wrap(
                            "OFPGroupDescStats",
                            json!({
                                "type": g.group_type.to_raw(),
                                "group_id": g.group_id,
                                "buckets": g.buckets.iter().map(super::of13::bucket).collect::<Vec<_>>(),
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        B::GroupFeatures(g) => msg(
            "OFPGroupFeaturesStatsReply",
            f,
            t,
            json!({ "body": wrap("OFPGroupFeaturesStats", json!({
                "types": g.types,
                "capabilities": g.capabilities,
                "max_groups": g.max_groups,
                "actions": g.actions,
            })) }),
        ),
        B::Meter { stats } => msg(
            "OFPMeterStatsReply",
            f,
            t,
            list(
                stats
                    .iter()
                    .map(|s| {
                        wrap(
                            "OFPMeterStats",
                            json!({
                                "meter_id": s.meter_id,
                                "flow_count": s.flow_count,
                                "packet_in_count": s.packet_in_count,
                                "byte_in_count": s.byte_in_count,
                                "duration_sec": s.duration_sec,
                                "duration_nsec": s.duration_nsec,
                                "band_stats": counters(
                                    "OFPMeterBandStats",
                                    "packet_band_count",
                                    "byte_band_count",
                                    &s.band_stats,
                                ),
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        B::MeterConfig { meters } => msg(
            "OFPMeterConfigStatsReply",
            f,
            t,
            list(
                meters
                    .iter()
                    .map(|c| {
                        wrap(
                            "OFPMeterConfigStats",
                            json!({
                                "flags": c.flags,
                                "meter_id": c.meter_id,
                                "bands": c.bands.iter().map(super::of13::meter_band).collect::<Vec<_>>(),
                            }),
                        )
                    })
                    .collect(),
            ),
        ),
        // Ryu decodes the single ofp_meter_features as a one-element list.
        B::MeterFeatures(m) => msg(
            "OFPMeterFeaturesStatsReply",
            f,
            t,
            list(vec![wrap(
                "OFPMeterFeaturesStats",
                json!({
                    "max_meter": m.max_meter,
                    "band_types": m.band_types,
                    "capabilities": m.capabilities,
                    "max_bands": m.max_bands,
                    "max_color": m.max_color,
                }),
            )]),
        ),
        B::TableFeatures { tables } => msg(
            "OFPTableFeaturesStatsReply",
            f,
            t,
            list(tables.iter().map(table_features).collect()),
        ),
        B::PortDesc { ports } => msg(
            "OFPPortDescStatsReply",
            f,
            t,
            list(ports.iter().map(super::of13::port).collect()),
        ),
        B::Experimenter(e) => msg(
            "OFPExperimenterStatsReply",
            f,
            t,
            json!({ "body": experimenter(e) }),
        ),
        B::Unknown { mp_type, .. } => opaque(&format!("unknown multipart reply {mp_type}")),
    }
}

fn table_features(t: &TableFeatures) -> Value {
    wrap(
        "OFPTableFeaturesStats",
        json!({
            "table_id": t.table_id,
            "name": t.name.to_string_lossy(),
            "metadata_match": t.metadata_match,
            "metadata_write": t.metadata_write,
            "config": t.config,
            "max_entries": t.max_entries,
            "properties": t.properties.iter().map(table_feature_prop).collect::<Vec<_>>(),
        }),
    )
}

fn feature_ids(class: &str, ids: &[FeatureId]) -> Value {
    Value::Array(
        ids.iter()
            .map(|id| wrap(class, json!({ "type": id.id_type(), "len": id.wire_len() })))
            .collect(),
    )
}

fn oxm_ids(ids: &[OxmId]) -> Value {
    Value::Array(
        ids.iter()
            .map(|id| {
                let h = id.header;
                let name = if h.class() == OXM_CLASS_OPENFLOW_BASIC {
                    OxmField::from_raw(h.field()).name()
                } else {
                    None
                };
                match name {
                    Some(n) => wrap(
                        "OFPOxmId",
                        json!({ "type": n, "hasmask": h.hasmask() as u8, "length": h.length() }),
                    ),
                    None => opaque(&format!("OXM id {:#010x}", h.0)),
                }
            })
            .collect(),
    )
}

fn table_feature_prop(p: &TableFeatureProp) -> Value {
    use TableFeatureProp as P;
    let t = p.prop_type().to_raw();
    match p {
        P::Instructions { ids } | P::InstructionsMiss { ids } => wrap(
            "OFPTableFeaturePropInstructions",
            json!({ "type": t, "instruction_ids": feature_ids("OFPInstructionId", ids) }),
        ),
        P::NextTables { table_ids } | P::NextTablesMiss { table_ids } => wrap(
            "OFPTableFeaturePropNextTables",
            json!({ "type": t, "table_ids": table_ids }),
        ),
        P::WriteActions { ids }
        | P::WriteActionsMiss { ids }
        | P::ApplyActions { ids }
        | P::ApplyActionsMiss { ids } => wrap(
            "OFPTableFeaturePropActions",
            json!({ "type": t, "action_ids": feature_ids("OFPActionId", ids) }),
        ),
        P::Match { oxm_ids: ids }
        | P::Wildcards { oxm_ids: ids }
        | P::WriteSetfield { oxm_ids: ids }
        | P::WriteSetfieldMiss { oxm_ids: ids }
        | P::ApplySetfield { oxm_ids: ids }
        | P::ApplySetfieldMiss { oxm_ids: ids } => wrap(
            "OFPTableFeaturePropOxm",
            json!({ "type": t, "oxm_ids": oxm_ids(ids) }),
        ),
        // Ryu reads an experimenter property's data as a list of 32-bit words.
        P::Experimenter {
            experimenter,
            exp_type,
            data,
        }
        | P::ExperimenterMiss {
            experimenter,
            exp_type,
            data,
        } if data.len() % 4 == 0 => wrap(
            "OFPTableFeaturePropExperimenter",
            json!({
                "type": t,
                "experimenter": experimenter,
                "exp_type": exp_type,
                "data": data
                    .chunks(4)
                    .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
                    .collect::<Vec<_>>(),
            }),
        ),
        _ => opaque(&format!("table feature property {t}")),
    }
}
