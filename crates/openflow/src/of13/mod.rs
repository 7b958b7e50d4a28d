//! OpenFlow 1.3 (wire version 0x04): every message, parse and emit.
//!
//! Spec: OpenFlow Switch Specification 1.3.5 (ONF TS-023).

use serde::{Deserialize, Serialize};

pub mod action;
pub mod group;
pub mod instruction;
pub mod meter;
pub mod oxm;
pub mod port;

pub use action::{Action, ActionType};
pub use group::{Bucket, OFPG_ALL, OFPG_ANY, OFPG_MAX};
pub use instruction::{Instruction, InstructionType};
pub use meter::{MeterBand, OFPM_ALL, OFPM_CONTROLLER, OFPM_MAX, OFPM_SLOWPATH};
pub use oxm::{Match, Oxm, OxmField, OxmHeader, OxmValue};
pub use port::{
    port_name, Port, OFPP_ALL, OFPP_ANY, OFPP_CONTROLLER, OFPP_FLOOD, OFPP_IN_PORT, OFPP_LOCAL,
    OFPP_MAX, OFPP_NORMAL, OFPP_TABLE,
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
    Hello(Hello),
    Error(ErrorBody),
    EchoRequest {
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    EchoReply {
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    FeaturesRequest,
    GetConfigRequest,
    GetConfigReply(SwitchConfig),
    SetConfig(SwitchConfig),
    BarrierRequest,
    BarrierReply,
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
        let m = match MsgType::from_raw(msg_type) {
            MsgType::Hello => Message::Hello(Hello::parse(r)?),
            MsgType::Error => Message::Error(ErrorBody::parse(r, true)?),
            MsgType::EchoRequest => Message::EchoRequest {
                data: r.rest().to_vec(),
            },
            MsgType::EchoReply => Message::EchoReply {
                data: r.rest().to_vec(),
            },
            MsgType::FeaturesRequest => Message::FeaturesRequest,
            MsgType::GetConfigRequest => Message::GetConfigRequest,
            MsgType::GetConfigReply => Message::GetConfigReply(SwitchConfig::parse(r)?),
            MsgType::SetConfig => Message::SetConfig(SwitchConfig::parse(r)?),
            MsgType::BarrierRequest => Message::BarrierRequest,
            MsgType::BarrierReply => Message::BarrierReply,
            _ => Message::Unknown {
                msg_type,
                body: r.rest().to_vec(),
            },
        };
        // Bodiless messages must have no body: a header length that disagrees with the
        // body is an error, not something to skip over.
        r.clone()
            .with_layer(MsgType::from_raw(msg_type).name().unwrap_or("message"))
            .finish()?;
        Ok(m)
    }

    /// The `ofp_type` of this message.
    pub fn msg_type(&self) -> u8 {
        let t = match self {
            Message::Hello(_) => MsgType::Hello,
            Message::Error(_) => MsgType::Error,
            Message::EchoRequest { .. } => MsgType::EchoRequest,
            Message::EchoReply { .. } => MsgType::EchoReply,
            Message::FeaturesRequest => MsgType::FeaturesRequest,
            Message::GetConfigRequest => MsgType::GetConfigRequest,
            Message::GetConfigReply(_) => MsgType::GetConfigReply,
            Message::SetConfig(_) => MsgType::SetConfig,
            Message::BarrierRequest => MsgType::BarrierRequest,
            Message::BarrierReply => MsgType::BarrierReply,
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
            Message::Hello(h) => h.emit(out)?,
            Message::Error(e) => e.emit(out),
            Message::EchoRequest { data } | Message::EchoReply { data } => out.put_slice(data),
            Message::FeaturesRequest
            | Message::GetConfigRequest
            | Message::BarrierRequest
            | Message::BarrierReply => {}
            Message::GetConfigReply(c) | Message::SetConfig(c) => c.emit(out),
            Message::Unknown { body, .. } => out.put_slice(body),
        }
        Ok(())
    }

    /// Appends a description of each part carried opaquely to `out`.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        if let Message::Unknown { msg_type, body } = self {
            out.push(format!(
                "unknown message type {msg_type} ({} body bytes)",
                body.len()
            ));
        }
    }
}
