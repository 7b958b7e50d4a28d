//! OpenFlow 1.3 (wire version 0x04): every message, parse and emit.
//!
//! Spec: OpenFlow Switch Specification 1.3.5 (ONF TS-023).
//!
//! ```text
//! oxm             Match (ofp_match) and Oxm TLVs: every OpenFlow-basic field typed,
//!                 other classes (Nicira NXM, experimenter) opaque
//! action          Action: every 1.3 action, experimenter and unknown ones opaque
//! instruction     Instruction: every 1.3 instruction
//! port            Port (ofp_port), reserved port numbers, PORT_STATUS, PORT_MOD
//! group           Bucket, GROUP_MOD, group constants
//! meter           MeterBand, METER_MOD, meter constants
//! flow            FLOW_MOD, FLOW_REMOVED, PACKET_IN, PACKET_OUT
//! switch          FEATURES_REPLY, EXPERIMENTER, TABLE_MOD, QUEUE_GET_CONFIG, ROLE, ASYNC
//! multipart       MULTIPART_REQUEST / MULTIPART_REPLY and their bodies (flow, table /
//!                 port / queue, group and meter statistics, one file each)
//! table_features  the TABLE_FEATURES multipart body and its properties
//! entries         the entry lists multipart bodies and table features are made of
//! error_codes     ErrorType and the names of every error code
//! ```
//!
//! Every structure has `parse` (from a [`Reader`] holding exactly it, or from the front
//! of a list) and `emit` (appending to a `Vec<u8>`, lengths patched on completion), and
//! `opaque_parts` where something may be carried opaquely.

use serde::{Deserialize, Serialize};

pub mod action;
#[cfg(test)]
pub(crate) mod arb;
mod entries;
pub mod error_codes;
pub mod flow;
pub mod group;
pub mod instruction;
pub mod meter;
pub mod multipart;
pub mod oxm;
pub mod port;
pub mod switch;
pub mod table_features;

pub use action::{Action, ActionType};
pub use error_codes::ErrorType;
pub use flow::{
    FlowMod, FlowModCommand, FlowRemoved, FlowRemovedReason, PacketIn, PacketInReason, PacketOut,
    OFPTT_ALL, OFPTT_MAX, OFP_NO_BUFFER,
};
pub use group::{Bucket, GroupMod, OFPG_ALL, OFPG_ANY, OFPG_MAX};
pub use instruction::{Instruction, InstructionType};
pub use meter::{MeterBand, MeterMod, OFPM_ALL, OFPM_CONTROLLER, OFPM_MAX, OFPM_SLOWPATH};
pub use oxm::{Match, Oxm, OxmField, OxmHeader, OxmValue};
pub use port::{
    port_name, Port, PortMod, PortStatus, OFPP_ALL, OFPP_ANY, OFPP_CONTROLLER, OFPP_FLOOD,
    OFPP_IN_PORT, OFPP_LOCAL, OFPP_MAX, OFPP_NORMAL, OFPP_TABLE,
};

pub use switch::{
    AsyncConfig, ControllerRole, Experimenter, FeaturesReply, PacketQueue, QueueGetConfigReply,
    QueueGetConfigRequest, Role, TableMod,
};

use crate::common::{ErrorBody, Hello, SwitchConfig};
use crate::error::{DecodeResult, EncodeResult};
use crate::open_enum;
use crate::wire::{Put, Reader};

/// Wire version byte.
pub const VERSION: u8 = 0x04;

/// The Open Networking Foundation's experimenter id (`ONF_EXPERIMENTER_ID`).
pub const ONF_EXPERIMENTER_ID: u32 = 0x4f4e_4600;

open_enum! {
    /// `ofp_type` for OpenFlow 1.3.
    pub enum MsgType: u8 {
        Hello = 0 => "HELLO",
        Error = 1 => "ERROR",
        EchoRequest = 2 => "ECHO_REQUEST",
        EchoReply = 3 => "ECHO_REPLY",
        Experimenter = 4 => "EXPERIMENTER",
        FeaturesRequest = 5 => "FEATURES_REQUEST",
        FeaturesReply = 6 => "FEATURES_REPLY",
        GetConfigRequest = 7 => "GET_CONFIG_REQUEST",
        GetConfigReply = 8 => "GET_CONFIG_REPLY",
        SetConfig = 9 => "SET_CONFIG",
        PacketIn = 10 => "PACKET_IN",
        FlowRemoved = 11 => "FLOW_REMOVED",
        PortStatus = 12 => "PORT_STATUS",
        PacketOut = 13 => "PACKET_OUT",
        FlowMod = 14 => "FLOW_MOD",
        GroupMod = 15 => "GROUP_MOD",
        PortMod = 16 => "PORT_MOD",
        TableMod = 17 => "TABLE_MOD",
        MultipartRequest = 18 => "MULTIPART_REQUEST",
        MultipartReply = 19 => "MULTIPART_REPLY",
        BarrierRequest = 20 => "BARRIER_REQUEST",
        BarrierReply = 21 => "BARRIER_REPLY",
        QueueGetConfigRequest = 22 => "QUEUE_GET_CONFIG_REQUEST",
        QueueGetConfigReply = 23 => "QUEUE_GET_CONFIG_REPLY",
        RoleRequest = 24 => "ROLE_REQUEST",
        RoleReply = 25 => "ROLE_REPLY",
        GetAsyncRequest = 26 => "GET_ASYNC_REQUEST",
        GetAsyncReply = 27 => "GET_ASYNC_REPLY",
        SetAsync = 28 => "SET_ASYNC",
        MeterMod = 29 => "METER_MOD",
    }
}

/// An OpenFlow 1.3 message body (the header's version, type and length are implied;
/// the xid travels beside it, see [`crate::Envelope`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Message {
    /// HELLO, with its version-bitmap elements.
    Hello(Hello),
    /// ERROR; see [`error_codes`] for the meaning of type and code.
    Error(ErrorBody),
    /// ECHO_REQUEST, with arbitrary data to be echoed.
    EchoRequest {
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    /// ECHO_REPLY, with the request's data.
    EchoReply {
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    /// EXPERIMENTER: a vendor message.
    Experimenter(Experimenter),
    /// FEATURES_REQUEST (no body).
    FeaturesRequest,
    /// FEATURES_REPLY: datapath id, buffers, tables, capabilities.
    FeaturesReply(FeaturesReply),
    /// GET_CONFIG_REQUEST (no body).
    GetConfigRequest,
    /// GET_CONFIG_REPLY.
    GetConfigReply(SwitchConfig),
    /// SET_CONFIG.
    SetConfig(SwitchConfig),
    /// PACKET_IN: a packet for the controller.
    PacketIn(PacketIn),
    /// FLOW_REMOVED: a flow expired or was deleted.
    FlowRemoved(FlowRemoved),
    /// PORT_STATUS: a port was added, removed or changed.
    PortStatus(PortStatus),
    /// PACKET_OUT: send a packet.
    PacketOut(PacketOut),
    /// FLOW_MOD: add, modify or delete flows.
    FlowMod(FlowMod),
    /// GROUP_MOD: add, modify or delete a group.
    GroupMod(GroupMod),
    /// PORT_MOD: change a port's configuration.
    PortMod(PortMod),
    /// TABLE_MOD.
    TableMod(TableMod),
    /// MULTIPART_REQUEST: statistics and descriptions.
    MultipartRequest(multipart::MultipartRequest),
    /// MULTIPART_REPLY.
    MultipartReply(multipart::MultipartReply),
    /// BARRIER_REQUEST (no body).
    BarrierRequest,
    /// BARRIER_REPLY (no body).
    BarrierReply,
    /// QUEUE_GET_CONFIG_REQUEST.
    QueueGetConfigRequest(QueueGetConfigRequest),
    /// QUEUE_GET_CONFIG_REPLY: a port's queues.
    QueueGetConfigReply(QueueGetConfigReply),
    /// ROLE_REQUEST: change or query this controller's role.
    RoleRequest(Role),
    /// ROLE_REPLY.
    RoleReply(Role),
    /// GET_ASYNC_REQUEST (no body).
    GetAsyncRequest,
    /// GET_ASYNC_REPLY.
    GetAsyncReply(AsyncConfig),
    /// SET_ASYNC: choose the asynchronous messages of this channel.
    SetAsync(AsyncConfig),
    /// METER_MOD: add, modify or delete a meter.
    MeterMod(MeterMod),
    /// A message type this codec does not know, carried opaquely.
    Unknown {
        msg_type: u8,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl Message {
    /// Parses the body of a message of type `msg_type`; `r` holds exactly the body
    /// (absolute offset 8).
    pub fn parse(msg_type: u8, r: &mut Reader<'_>) -> DecodeResult<Message> {
        let kind = MsgType::from_raw(msg_type);
        let mut body = r.clone().with_layer(match kind {
            MsgType::FeaturesReply => "ofp_switch_features",
            MsgType::GetConfigReply | MsgType::SetConfig => "ofp_switch_config",
            MsgType::PacketIn => "ofp_packet_in",
            MsgType::FlowRemoved => "ofp_flow_removed",
            MsgType::PortStatus => "ofp_port_status",
            MsgType::PacketOut => "ofp_packet_out",
            MsgType::FlowMod => "ofp_flow_mod",
            MsgType::GroupMod => "ofp_group_mod",
            MsgType::PortMod => "ofp_port_mod",
            MsgType::TableMod => "ofp_table_mod",
            MsgType::MultipartRequest => "ofp_multipart_request",
            MsgType::MultipartReply => "ofp_multipart_reply",
            MsgType::QueueGetConfigRequest => "ofp_queue_get_config_request",
            MsgType::QueueGetConfigReply => "ofp_queue_get_config_reply",
            MsgType::RoleRequest | MsgType::RoleReply => "ofp_role_request",
            MsgType::GetAsyncReply | MsgType::SetAsync => "ofp_async_config",
            MsgType::MeterMod => "ofp_meter_mod",
            MsgType::Experimenter => "ofp_experimenter_header",
            MsgType::Error => "ofp_error_msg",
            MsgType::Hello => "ofp_hello",
            other => other.name().unwrap_or("message"),
        });
        let r = &mut body;
        let m = match kind {
            MsgType::Hello => Message::Hello(Hello::parse(r)?),
            MsgType::Error => Message::Error(ErrorBody::parse(r, true)?),
            MsgType::EchoRequest => Message::EchoRequest {
                data: r.rest().to_vec(),
            },
            MsgType::EchoReply => Message::EchoReply {
                data: r.rest().to_vec(),
            },
            MsgType::Experimenter => Message::Experimenter(Experimenter::parse(r)?),
            MsgType::FeaturesRequest => Message::FeaturesRequest,
            MsgType::FeaturesReply => Message::FeaturesReply(FeaturesReply::parse(r)?),
            MsgType::GetConfigRequest => Message::GetConfigRequest,
            MsgType::GetConfigReply => Message::GetConfigReply(SwitchConfig::parse(r)?),
            MsgType::SetConfig => Message::SetConfig(SwitchConfig::parse(r)?),
            MsgType::PacketIn => Message::PacketIn(PacketIn::parse(r)?),
            MsgType::FlowRemoved => Message::FlowRemoved(FlowRemoved::parse(r)?),
            MsgType::PortStatus => Message::PortStatus(PortStatus::parse(r)?),
            MsgType::PacketOut => Message::PacketOut(PacketOut::parse(r)?),
            MsgType::FlowMod => Message::FlowMod(FlowMod::parse(r)?),
            MsgType::GroupMod => Message::GroupMod(GroupMod::parse(r)?),
            MsgType::PortMod => Message::PortMod(PortMod::parse(r)?),
            MsgType::TableMod => Message::TableMod(TableMod::parse(r)?),
            MsgType::MultipartRequest => {
                Message::MultipartRequest(multipart::MultipartRequest::parse(r)?)
            }
            MsgType::MultipartReply => {
                Message::MultipartReply(multipart::MultipartReply::parse(r)?)
            }
            MsgType::BarrierRequest => Message::BarrierRequest,
            MsgType::BarrierReply => Message::BarrierReply,
            MsgType::QueueGetConfigRequest => {
                Message::QueueGetConfigRequest(QueueGetConfigRequest::parse(r)?)
            }
            MsgType::QueueGetConfigReply => {
                Message::QueueGetConfigReply(QueueGetConfigReply::parse(r)?)
            }
            MsgType::RoleRequest => Message::RoleRequest(Role::parse(r)?),
            MsgType::RoleReply => Message::RoleReply(Role::parse(r)?),
            MsgType::GetAsyncRequest => Message::GetAsyncRequest,
            MsgType::GetAsyncReply => Message::GetAsyncReply(AsyncConfig::parse(r)?),
            MsgType::SetAsync => Message::SetAsync(AsyncConfig::parse(r)?),
            MsgType::MeterMod => Message::MeterMod(MeterMod::parse(r)?),
            MsgType::Unknown(_) => Message::Unknown {
                msg_type,
                body: r.rest().to_vec(),
            },
        };
        // Every message must account for its whole body: bodiless messages must have
        // none, and a body longer than its content is an error, not something to skip.
        r.finish()?;
        Ok(m)
    }

    /// The `ofp_type` of this message.
    pub fn msg_type(&self) -> u8 {
        let t = match self {
            Message::Hello(_) => MsgType::Hello,
            Message::Error(_) => MsgType::Error,
            Message::EchoRequest { .. } => MsgType::EchoRequest,
            Message::EchoReply { .. } => MsgType::EchoReply,
            Message::Experimenter(_) => MsgType::Experimenter,
            Message::FeaturesRequest => MsgType::FeaturesRequest,
            Message::FeaturesReply(_) => MsgType::FeaturesReply,
            Message::GetConfigRequest => MsgType::GetConfigRequest,
            Message::GetConfigReply(_) => MsgType::GetConfigReply,
            Message::SetConfig(_) => MsgType::SetConfig,
            Message::PacketIn(_) => MsgType::PacketIn,
            Message::FlowRemoved(_) => MsgType::FlowRemoved,
            Message::PortStatus(_) => MsgType::PortStatus,
            Message::PacketOut(_) => MsgType::PacketOut,
            Message::FlowMod(_) => MsgType::FlowMod,
            Message::GroupMod(_) => MsgType::GroupMod,
            Message::PortMod(_) => MsgType::PortMod,
            Message::TableMod(_) => MsgType::TableMod,
            Message::MultipartRequest(_) => MsgType::MultipartRequest,
            Message::MultipartReply(_) => MsgType::MultipartReply,
            Message::BarrierRequest => MsgType::BarrierRequest,
            Message::BarrierReply => MsgType::BarrierReply,
            Message::QueueGetConfigRequest(_) => MsgType::QueueGetConfigRequest,
            Message::QueueGetConfigReply(_) => MsgType::QueueGetConfigReply,
            Message::RoleRequest(_) => MsgType::RoleRequest,
            Message::RoleReply(_) => MsgType::RoleReply,
            Message::GetAsyncRequest => MsgType::GetAsyncRequest,
            Message::GetAsyncReply(_) => MsgType::GetAsyncReply,
            Message::SetAsync(_) => MsgType::SetAsync,
            Message::MeterMod(_) => MsgType::MeterMod,
            Message::Unknown { msg_type, .. } => MsgType::Unknown(*msg_type),
        };
        t.to_raw()
    }

    /// The spec's name of the message type (`"FLOW_MOD"`), or `"UNKNOWN"`.
    pub fn name(&self) -> &'static str {
        MsgType::from_raw(self.msg_type())
            .name()
            .unwrap_or("UNKNOWN")
    }

    /// Appends the body (everything after the header) to `out`.
    pub fn emit_body(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        match self {
            Message::Hello(h) => h.emit(out),
            Message::Error(e) => {
                e.emit(out);
                Ok(())
            }
            Message::EchoRequest { data } | Message::EchoReply { data } => {
                out.put_slice(data);
                Ok(())
            }
            Message::Experimenter(m) => m.emit(out),
            Message::FeaturesRequest
            | Message::GetConfigRequest
            | Message::BarrierRequest
            | Message::BarrierReply
            | Message::GetAsyncRequest => Ok(()),
            Message::FeaturesReply(m) => m.emit(out),
            Message::GetConfigReply(c) | Message::SetConfig(c) => {
                c.emit(out);
                Ok(())
            }
            Message::PacketIn(m) => m.emit(out),
            Message::FlowRemoved(m) => m.emit(out),
            Message::PortStatus(m) => m.emit(out),
            Message::PacketOut(m) => m.emit(out),
            Message::FlowMod(m) => m.emit(out),
            Message::GroupMod(m) => m.emit(out),
            Message::PortMod(m) => m.emit(out),
            Message::TableMod(m) => m.emit(out),
            Message::MultipartRequest(m) => m.emit(out),
            Message::MultipartReply(m) => m.emit(out),
            Message::QueueGetConfigRequest(m) => m.emit(out),
            Message::QueueGetConfigReply(m) => m.emit(out),
            Message::RoleRequest(m) | Message::RoleReply(m) => m.emit(out),
            Message::GetAsyncReply(m) | Message::SetAsync(m) => m.emit(out),
            Message::MeterMod(m) => m.emit(out),
            Message::Unknown { body, .. } => {
                out.put_slice(body);
                Ok(())
            }
        }
    }

    /// Appends a description of each part carried opaquely to `out`.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        match self {
            Message::Experimenter(m) => m.opaque_parts(out),
            Message::PacketIn(m) => m.opaque_parts(out),
            Message::FlowRemoved(m) => m.opaque_parts(out),
            Message::PacketOut(m) => m.opaque_parts(out),
            Message::FlowMod(m) => m.opaque_parts(out),
            Message::GroupMod(m) => m.opaque_parts(out),
            Message::MultipartRequest(m) => m.opaque_parts(out),
            Message::MultipartReply(m) => m.opaque_parts(out),
            Message::QueueGetConfigReply(m) => m.opaque_parts(out),
            Message::MeterMod(m) => m.opaque_parts(out),
            Message::Error(ErrorBody::Experimenter { experimenter, .. }) => {
                out.push(format!("experimenter error 0x{experimenter:08x}"))
            }
            Message::Hello(h) => {
                for e in &h.elements {
                    if let crate::common::HelloElement::Unknown { elem_type, .. } = e {
                        out.push(format!("unknown hello element type {elem_type}"));
                    }
                }
            }
            Message::Unknown { msg_type, body } => out.push(format!(
                "unknown message type {msg_type} ({} body bytes)",
                body.len()
            )),
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
