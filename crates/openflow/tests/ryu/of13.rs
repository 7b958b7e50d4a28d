//! Ryu shape for OpenFlow 1.3 messages (`ofproto_v1_3_parser`). Multipart messages are
//! in `of13mp.rs`; the building blocks here (match, actions, instructions, buckets,
//! bands, ports) are shared with it.

use openflow::common::{ErrorBody, HelloElement, QueueProperty, SwitchConfig};
use openflow::of13::action::NICIRA_EXPERIMENTER_ID;
use openflow::of13::oxm::OXM_CLASS_OPENFLOW_BASIC;
use openflow::of13::{
    Action, AsyncConfig, Bucket, Instruction, Match, Message, MeterBand, Oxm, OxmValue,
    PacketQueue, Port, Role,
};
use serde_json::{json, Value};

use super::{b64, opaque, wrap};

fn oxm_value(v: &OxmValue) -> Value {
    match v {
        OxmValue::Int(n) => json!(n),
        other => json!(other.to_string()),
    }
}

/// One OXM TLV as `{"OXMTlv": {field, value, mask}}`; opaque for non-basic classes.
pub fn oxm(o: &Oxm) -> Value {
    match o {
        Oxm::Basic(b) => wrap(
            "OXMTlv",
            json!({
                "field": b.field.name().unwrap_or("?"),
                "value": oxm_value(&b.value),
                "mask": b.mask.as_ref().map_or(Value::Null, oxm_value),
            }),
        ),
        Oxm::Experimenter { experimenter, .. } => {
            opaque(&format!("experimenter OXM 0x{experimenter:08x}"))
        }
        Oxm::Raw { class, field, .. } if *class != OXM_CLASS_OPENFLOW_BASIC => {
            opaque(&format!("OXM class 0x{class:04x} field {field}"))
        }
        Oxm::Raw { field, .. } => opaque(&format!("unknown basic OXM field {field}")),
    }
}

/// `{"OFPMatch": {type, oxm_fields}}`.
pub fn match_(m: &Match) -> Value {
    match m {
        Match::Oxm(fields) => wrap(
            "OFPMatch",
            json!({
                "type": 1,
                "oxm_fields": fields.iter().map(oxm).collect::<Vec<_>>(),
            }),
        ),
        Match::Other { match_type, .. } => opaque(&format!("match type {match_type}")),
    }
}

fn act(class: &str, a: &Action, mut fields: Value) -> Value {
    fields["type"] = json!(a.action_type().to_raw());
    wrap(class, fields)
}

/// One action in Ryu's shape; Nicira and unknown actions opaque.
pub fn action(a: &Action) -> Value {
    match a {
        Action::Output { port, max_len } => act(
            "OFPActionOutput",
            a,
            json!({ "port": port, "max_len": max_len }),
        ),
        Action::CopyTtlOut => act("OFPActionCopyTtlOut", a, json!({})),
        Action::CopyTtlIn => act("OFPActionCopyTtlIn", a, json!({})),
        Action::SetMplsTtl { mpls_ttl } => {
            act("OFPActionSetMplsTtl", a, json!({ "mpls_ttl": mpls_ttl }))
        }
        Action::DecMplsTtl => act("OFPActionDecMplsTtl", a, json!({})),
        Action::PushVlan { ethertype } => {
            act("OFPActionPushVlan", a, json!({ "ethertype": ethertype }))
        }
        Action::PopVlan => act("OFPActionPopVlan", a, json!({})),
        Action::PushMpls { ethertype } => {
            act("OFPActionPushMpls", a, json!({ "ethertype": ethertype }))
        }
        Action::PopMpls { ethertype } => {
            act("OFPActionPopMpls", a, json!({ "ethertype": ethertype }))
        }
        Action::SetQueue { queue_id } => {
            act("OFPActionSetQueue", a, json!({ "queue_id": queue_id }))
        }
        Action::Group { group_id } => act("OFPActionGroup", a, json!({ "group_id": group_id })),
        Action::SetNwTtl { nw_ttl } => act("OFPActionSetNwTtl", a, json!({ "nw_ttl": nw_ttl })),
        Action::DecNwTtl => act("OFPActionDecNwTtl", a, json!({})),
        Action::SetField { field } => act("OFPActionSetField", a, json!({ "field": oxm(field) })),
        Action::PushPbb { ethertype } => {
            act("OFPActionPushPbb", a, json!({ "ethertype": ethertype }))
        }
        Action::PopPbb => act("OFPActionPopPbb", a, json!({})),
        Action::Experimenter { experimenter, .. } if *experimenter == NICIRA_EXPERIMENTER_ID => {
            opaque("Nicira action")
        }
        Action::Experimenter { experimenter, data } => act(
            "OFPActionExperimenterUnknown",
            a,
            json!({ "experimenter": experimenter, "data": b64(data) }),
        ),
        Action::Unknown { action_type, .. } => opaque(&format!("unknown action {action_type}")),
    }
}

pub fn actions(list: &[Action]) -> Value {
    Value::Array(list.iter().map(action).collect())
}

/// One instruction in Ryu's shape.
pub fn instruction(i: &Instruction) -> Value {
    let t = i.instruction_type().to_raw();
    match i {
        Instruction::GotoTable { table_id } => wrap(
            "OFPInstructionGotoTable",
            json!({ "type": t, "table_id": table_id }),
        ),
        Instruction::WriteMetadata {
            metadata,
            metadata_mask,
        } => wrap(
            "OFPInstructionWriteMetadata",
            json!({ "type": t, "metadata": metadata, "metadata_mask": metadata_mask }),
        ),
        Instruction::WriteActions { actions: list }
        | Instruction::ApplyActions { actions: list } => wrap(
            "OFPInstructionActions",
            json!({ "type": t, "actions": actions(list) }),
        ),
        Instruction::ClearActions => {
            wrap("OFPInstructionActions", json!({ "type": t, "actions": [] }))
        }
        Instruction::Meter { meter_id } => wrap(
            "OFPInstructionMeter",
            json!({ "type": t, "meter_id": meter_id }),
        ),
        Instruction::Experimenter { experimenter, .. } => {
            opaque(&format!("experimenter instruction 0x{experimenter:08x}"))
        }
        Instruction::Unknown {
            instruction_type, ..
        } => opaque(&format!("unknown instruction {instruction_type}")),
    }
}

pub fn instructions(list: &[Instruction]) -> Value {
    Value::Array(list.iter().map(instruction).collect())
}

/// `{"OFPBucket": {...}}`.
pub fn bucket(b: &Bucket) -> Value {
    wrap(
        "OFPBucket",
        json!({
            "weight": b.weight,
            "watch_port": b.watch_port,
            "watch_group": b.watch_group,
            "actions": actions(&b.actions),
        }),
    )
}

/// One meter band in Ryu's shape.
pub fn meter_band(b: &MeterBand) -> Value {
    let t = b.band_type().to_raw();
    match b {
        MeterBand::Drop { rate, burst_size } => wrap(
            "OFPMeterBandDrop",
            json!({ "type": t, "rate": rate, "burst_size": burst_size }),
        ),
        MeterBand::DscpRemark {
            rate,
            burst_size,
            prec_level,
        } => wrap(
            "OFPMeterBandDscpRemark",
            json!({ "type": t, "rate": rate, "burst_size": burst_size, "prec_level": prec_level }),
        ),
        MeterBand::Experimenter {
            rate,
            burst_size,
            experimenter,
            data,
        } if data.is_empty() => wrap(
            "OFPMeterBandExperimenter",
            json!({ "type": t, "rate": rate, "burst_size": burst_size, "experimenter": experimenter }),
        ),
        MeterBand::Experimenter { experimenter, .. } => {
            opaque(&format!("experimenter meter band 0x{experimenter:08x}"))
        }
        MeterBand::Unknown { band_type, .. } => opaque(&format!("unknown meter band {band_type}")),
    }
}

/// `{"OFPPort": {...}}`. Ryu decodes the name as UTF-8 up to the first NUL.
pub fn port(p: &Port) -> Value {
    wrap(
        "OFPPort",
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
            "curr_speed": p.curr_speed,
            "max_speed": p.max_speed,
        }),
    )
}

fn queue_property(p: &QueueProperty) -> Value {
    match p {
        QueueProperty::MinRate { rate } => wrap(
            "OFPQueuePropMinRate",
            json!({ "property": 1, "rate": rate }),
        ),
        QueueProperty::MaxRate { rate } => wrap(
            "OFPQueuePropMaxRate",
            json!({ "property": 2, "rate": rate }),
        ),
        // Ryu gives this property's data as a list of byte values, not base64.
        QueueProperty::Experimenter { experimenter, data } => wrap(
            "OFPQueuePropExperimenter",
            json!({ "property": 65535, "experimenter": experimenter, "data": data }),
        ),
        QueueProperty::Unknown { prop_type, .. } => {
            opaque(&format!("unknown queue property {prop_type}"))
        }
    }
}

fn packet_queue(q: &PacketQueue) -> Value {
    wrap(
        "OFPPacketQueue",
        json!({
            "queue_id": q.queue_id,
            "port": q.port,
            "properties": q.properties.iter().map(queue_property).collect::<Vec<_>>(),
        }),
    )
}

fn config(c: &SwitchConfig) -> Value {
    json!({ "flags": c.flags, "miss_send_len": c.miss_send_len })
}

fn role(r: &Role) -> Value {
    json!({ "role": r.role.to_raw(), "generation_id": r.generation_id })
}

fn async_config(c: &AsyncConfig) -> Value {
    json!({
        "packet_in_mask": c.packet_in_mask,
        "port_status_mask": c.port_status_mask,
        "flow_removed_mask": c.flow_removed_mask,
    })
}

pub fn message(m: &Message) -> Value {
    match m {
        Message::Hello(h) => wrap(
            "OFPHello",
            json!({
                "elements": h.elements.iter().map(|e| match e {
                    HelloElement::VersionBitmap { .. } => wrap(
                        "OFPHelloElemVersionBitmap",
                        json!({
                            "type": 1,
                            "versions": openflow::common::Hello { elements: vec![e.clone()] }
                                .versions()
                                .unwrap_or_default(),
                        }),
                    ),
                    _ => opaque("hello element"),
                }).collect::<Vec<_>>(),
            }),
        ),
        Message::Error(ErrorBody::Standard {
            err_type,
            code,
            data,
        }) => wrap(
            "OFPErrorMsg",
            json!({ "type": err_type, "code": code, "data": b64(data) }),
        ),
        Message::Error(ErrorBody::Experimenter {
            exp_type,
            experimenter,
            data,
        }) => wrap(
            "OFPErrorMsg",
            json!({
                "type": 65535,
                "code": null,
                "exp_type": exp_type,
                "experimenter": experimenter,
                "data": b64(data),
            }),
        ),
        Message::EchoRequest { data } => wrap("OFPEchoRequest", json!({ "data": b64(data) })),
        Message::EchoReply { data } => wrap("OFPEchoReply", json!({ "data": b64(data) })),
        Message::Experimenter(e) => wrap(
            "OFPExperimenter",
            json!({ "experimenter": e.experimenter, "exp_type": e.exp_type, "data": b64(&e.data) }),
        ),
        Message::FeaturesRequest => wrap("OFPFeaturesRequest", json!({})),
        Message::FeaturesReply(f) => wrap(
            "OFPSwitchFeatures",
            json!({
                "datapath_id": f.datapath_id,
                "n_buffers": f.n_buffers,
                "n_tables": f.n_tables,
                "auxiliary_id": f.auxiliary_id,
                "capabilities": f.capabilities,
            }),
        ),
        Message::GetConfigRequest => wrap("OFPGetConfigRequest", json!({})),
        Message::GetConfigReply(c) => wrap("OFPGetConfigReply", config(c)),
        Message::SetConfig(c) => wrap("OFPSetConfig", config(c)),
        Message::PacketIn(p) => wrap(
            "OFPPacketIn",
            json!({
                "buffer_id": p.buffer_id,
                "total_len": p.total_len,
                "reason": p.reason.to_raw(),
                "table_id": p.table_id,
                "cookie": p.cookie,
                "match": match_(&p.match_),
                "data": b64(&p.data),
            }),
        ),
        Message::FlowRemoved(f) => wrap(
            "OFPFlowRemoved",
            json!({
                "cookie": f.cookie,
                "priority": f.priority,
                "reason": f.reason.to_raw(),
                "table_id": f.table_id,
                "duration_sec": f.duration_sec,
                "duration_nsec": f.duration_nsec,
                "idle_timeout": f.idle_timeout,
                "hard_timeout": f.hard_timeout,
                "packet_count": f.packet_count,
                "byte_count": f.byte_count,
                "match": match_(&f.match_),
            }),
        ),
        Message::PortStatus(s) => wrap(
            "OFPPortStatus",
            json!({ "reason": s.reason.to_raw(), "desc": port(&s.desc) }),
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
                "cookie": f.cookie,
                "cookie_mask": f.cookie_mask,
                "table_id": f.table_id,
                "command": f.command.to_raw(),
                "idle_timeout": f.idle_timeout,
                "hard_timeout": f.hard_timeout,
                "priority": f.priority,
                "buffer_id": f.buffer_id,
                "out_port": f.out_port,
                "out_group": f.out_group,
                "flags": f.flags,
                "match": match_(&f.match_),
                "instructions": instructions(&f.instructions),
            }),
        ),
        Message::GroupMod(g) => wrap(
            "OFPGroupMod",
            json!({
                "command": g.command.to_raw(),
                "type": g.group_type.to_raw(),
                "group_id": g.group_id,
                "buckets": g.buckets.iter().map(bucket).collect::<Vec<_>>(),
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
        Message::TableMod(t) => wrap(
            "OFPTableMod",
            json!({ "table_id": t.table_id, "config": t.config }),
        ),
        Message::MultipartRequest(req) => super::of13mp::request(req),
        Message::MultipartReply(rep) => super::of13mp::reply(rep),
        Message::BarrierRequest => wrap("OFPBarrierRequest", json!({})),
        Message::BarrierReply => wrap("OFPBarrierReply", json!({})),
        Message::QueueGetConfigRequest(q) => {
            wrap("OFPQueueGetConfigRequest", json!({ "port": q.port }))
        }
        Message::QueueGetConfigReply(q) => wrap(
            "OFPQueueGetConfigReply",
            json!({
                "port": q.port,
                "queues": q.queues.iter().map(packet_queue).collect::<Vec<_>>(),
            }),
        ),
        Message::RoleRequest(r) => wrap("OFPRoleRequest", role(r)),
        Message::RoleReply(r) => wrap("OFPRoleReply", role(r)),
        Message::GetAsyncRequest => wrap("OFPGetAsyncRequest", json!({})),
        Message::GetAsyncReply(c) => wrap("OFPGetAsyncReply", async_config(c)),
        Message::SetAsync(c) => wrap("OFPSetAsync", async_config(c)),
        Message::MeterMod(m) => wrap(
            "OFPMeterMod",
            json!({
                "command": m.command.to_raw(),
                "flags": m.flags,
                "meter_id": m.meter_id,
                "bands": m.bands.iter().map(meter_band).collect::<Vec<_>>(),
            }),
        ),
        Message::Unknown { msg_type, .. } => opaque(&format!("unknown message type {msg_type}")),
    }
}
