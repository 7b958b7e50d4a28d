//! OpenFlow 1.0 (wire version 0x01): every message, parse and emit.
//!
//! Spec: OpenFlow Switch Specification 1.0.0 (ONF TS-001).

use serde::{Deserialize, Serialize};

use crate::common::{ErrorBody, Hello, SwitchConfig};
use crate::error::{DecodeResult, EncodeResult};
use crate::open_enum;
use crate::wire::{Put, Reader};

/// Wire version byte.
pub const VERSION: u8 = 0x01;

open_enum! {
    /// `ofp_type` for OpenFlow 1.0.
    pub enum MsgType: u8 {
        Hello = 0 => "HELLO",
        Error = 1 => "ERROR",
        EchoRequest = 2 => "ECHO_REQUEST",
        EchoReply = 3 => "ECHO_REPLY",
        Vendor = 4 => "VENDOR",
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
        PortMod = 15 => "PORT_MOD",
        StatsRequest = 16 => "STATS_REQUEST",
        StatsReply = 17 => "STATS_REPLY",
        BarrierRequest = 18 => "BARRIER_REQUEST",
        BarrierReply = 19 => "BARRIER_REPLY",
        QueueGetConfigRequest = 20 => "QUEUE_GET_CONFIG_REQUEST",
        QueueGetConfigReply = 21 => "QUEUE_GET_CONFIG_REPLY",
    }
}

/// An OpenFlow 1.0 message body (the header's version, type and length are implied;
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
            MsgType::Hello => Message::Hello(Hello::parse_lenient(r)),
            MsgType::Error => Message::Error(ErrorBody::parse(r, false)?),
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
