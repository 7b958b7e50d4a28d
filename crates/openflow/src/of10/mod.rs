//! OpenFlow 1.0 (wire version 0x01): every message, parse and emit.
//!
//! Spec: OpenFlow Switch Specification 1.0.0 (ONF TS-001).
//!
//! ```text
//! mod          Message (one variant per message type), MsgType, dispatch
//! flow_match   ofp_match (Match), the OFPFW_* wildcard bits, ovs-ofctl style Display
//! action       Action (every OFPAT_*, vendor actions kept opaque), parse_list/emit_list
//! port         port numbers (OFPP_*), config/state/feature bits, ofp_phy_port, PORT_STATUS, PORT_MOD
//! features     FEATURES_REPLY, capability and config bits, VENDOR
//! packet       PACKET_IN, PACKET_OUT
//! flow         FLOW_MOD, FLOW_REMOVED, commands, flags and reasons
//! stats        STATS_REQUEST, STATS_REPLY and every statistics body
//! queue        QUEUE_GET_CONFIG_REQUEST/REPLY, ofp_packet_queue
//! error_codes  ErrorType and the names of every error code
//! ```
//!
//! Structures shared with 1.3 (HELLO, the ERROR body, switch config, desc and aggregate
//! statistics, queue properties) come from [`crate::common`].

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};

use crate::common::{ErrorBody, Hello, HelloElement, QueueProperty, SwitchConfig};
use crate::error::{DecodeResult, EncodeResult};
use crate::open_enum;
use crate::wire::{Put, Reader};

pub mod action;
pub mod error_codes;
pub mod features;
pub mod flow;
pub mod flow_match;
pub mod packet;
pub mod port;
pub mod queue;
pub mod stats;

#[cfg(test)]
#[path = "message_tests.rs"]
mod message_tests;
#[cfg(test)]
#[path = "roundtrip_tests.rs"]
mod roundtrip_tests;

pub use action::{Action, ActionType};
pub use error_codes::{error_code_name, ErrorType};
pub use features::{SwitchFeatures, Vendor};
pub use flow::{FlowMod, FlowModCommand, FlowRemoved, FlowRemovedReason};
pub use flow_match::Match;
pub use packet::{PacketIn, PacketInReason, PacketOut};
pub use port::{PhyPort, PortMod, PortReason, PortStatus};
pub use queue::{PacketQueue, QueueGetConfigReply, QueueGetConfigRequest};
pub use stats::{StatsReply, StatsReplyBody, StatsRequest, StatsRequestBody, StatsType};

/// Wire version byte.
pub const VERSION: u8 = 0x01;

open_enum! {
    /// `ofp_type` for OpenFlow 1.0.
    pub enum MsgType: u8 {
        /// Symmetric: version negotiation.
        Hello = 0 => "HELLO",
        /// Symmetric: an error report.
        Error = 1 => "ERROR",
        /// Symmetric: liveness request.
        EchoRequest = 2 => "ECHO_REQUEST",
        /// Symmetric: liveness reply.
        EchoReply = 3 => "ECHO_REPLY",
        /// Symmetric: vendor extension.
        Vendor = 4 => "VENDOR",
        /// Controller to switch: ask for the features.
        FeaturesRequest = 5 => "FEATURES_REQUEST",
        /// Switch to controller: datapath id, capabilities, ports.
        FeaturesReply = 6 => "FEATURES_REPLY",
        /// Controller to switch: ask for the configuration.
        GetConfigRequest = 7 => "GET_CONFIG_REQUEST",
        /// Switch to controller: the configuration.
        GetConfigReply = 8 => "GET_CONFIG_REPLY",
        /// Controller to switch: set the configuration.
        SetConfig = 9 => "SET_CONFIG",
        /// Async: a packet for the controller.
        PacketIn = 10 => "PACKET_IN",
        /// Async: a flow entry went away.
        FlowRemoved = 11 => "FLOW_REMOVED",
        /// Async: a port changed.
        PortStatus = 12 => "PORT_STATUS",
        /// Controller to switch: send a packet.
        PacketOut = 13 => "PACKET_OUT",
        /// Controller to switch: change the flow table.
        FlowMod = 14 => "FLOW_MOD",
        /// Controller to switch: change a port.
        PortMod = 15 => "PORT_MOD",
        /// Controller to switch: ask for statistics.
        StatsRequest = 16 => "STATS_REQUEST",
        /// Switch to controller: statistics.
        StatsReply = 17 => "STATS_REPLY",
        /// Controller to switch: finish everything before this first.
        BarrierRequest = 18 => "BARRIER_REQUEST",
        /// Switch to controller: everything before the barrier is done.
        BarrierReply = 19 => "BARRIER_REPLY",
        /// Controller to switch: ask for a port's queues.
        QueueGetConfigRequest = 20 => "QUEUE_GET_CONFIG_REQUEST",
        /// Switch to controller: a port's queues.
        QueueGetConfigReply = 21 => "QUEUE_GET_CONFIG_REPLY",
    }
}

/// An OpenFlow 1.0 message body (the header's version, type and length are implied;
/// the xid travels beside it, see [`crate::Envelope`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Message {
    /// HELLO: 1.0 defines no body; one that is present is kept (see [`Hello::parse_lenient`]).
    Hello(Hello),
    /// ERROR: type, code and data (see [`error_codes`] for the names).
    Error(ErrorBody),
    /// ECHO_REQUEST with its arbitrary data.
    EchoRequest {
        /// Echoed back by the reply.
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    /// ECHO_REPLY with the request's data.
    EchoReply {
        /// The request's data.
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    /// VENDOR: a vendor extension, carried opaquely.
    Vendor(Vendor),
    /// FEATURES_REQUEST (no body).
    FeaturesRequest,
    /// FEATURES_REPLY (`ofp_switch_features`).
    FeaturesReply(SwitchFeatures),
    /// GET_CONFIG_REQUEST (no body).
    GetConfigRequest,
    /// GET_CONFIG_REPLY (`ofp_switch_config`).
    GetConfigReply(SwitchConfig),
    /// SET_CONFIG (`ofp_switch_config`).
    SetConfig(SwitchConfig),
    /// PACKET_IN (`ofp_packet_in`).
    PacketIn(PacketIn),
    /// FLOW_REMOVED (`ofp_flow_removed`).
    FlowRemoved(FlowRemoved),
    /// PORT_STATUS (`ofp_port_status`).
    PortStatus(PortStatus),
    /// PACKET_OUT (`ofp_packet_out`).
    PacketOut(PacketOut),
    /// FLOW_MOD (`ofp_flow_mod`).
    FlowMod(FlowMod),
    /// PORT_MOD (`ofp_port_mod`).
    PortMod(PortMod),
    /// STATS_REQUEST (`ofp_stats_request`).
    StatsRequest(StatsRequest),
    /// STATS_REPLY (`ofp_stats_reply`).
    StatsReply(StatsReply),
    /// BARRIER_REQUEST (no body).
    BarrierRequest,
    /// BARRIER_REPLY (no body).
    BarrierReply,
    /// QUEUE_GET_CONFIG_REQUEST (`ofp_queue_get_config_request`).
    QueueGetConfigRequest(QueueGetConfigRequest),
    /// QUEUE_GET_CONFIG_REPLY (`ofp_queue_get_config_reply`).
    QueueGetConfigReply(QueueGetConfigReply),
    /// A message type this codec does not know, carried opaquely.
    Unknown {
        /// The header's type byte.
        msg_type: u8,
        /// The whole body.
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl Message {
    /// Parses the body of a message of type `msg_type`; `r` holds exactly the body
    /// (absolute offset 8).
    pub fn parse(msg_type: u8, r: &mut Reader<'_>) -> DecodeResult<Message> {
        let t = MsgType::from_raw(msg_type);
        // Errors inside a body name the spec's structure for it.
        let b = &mut r.clone().with_layer(body_layer(t));
        let m = match t {
            MsgType::Hello => Message::Hello(Hello::parse_lenient(b)),
            MsgType::Error => Message::Error(ErrorBody::parse(b, false)?),
            MsgType::EchoRequest => Message::EchoRequest {
                data: b.rest().to_vec(),
            },
            MsgType::EchoReply => Message::EchoReply {
                data: b.rest().to_vec(),
            },
            MsgType::Vendor => Message::Vendor(Vendor::parse(b)?),
            MsgType::FeaturesRequest => Message::FeaturesRequest,
            MsgType::FeaturesReply => Message::FeaturesReply(SwitchFeatures::parse(b)?),
            MsgType::GetConfigRequest => Message::GetConfigRequest,
            MsgType::GetConfigReply => Message::GetConfigReply(SwitchConfig::parse(b)?),
            MsgType::SetConfig => Message::SetConfig(SwitchConfig::parse(b)?),
            MsgType::PacketIn => Message::PacketIn(PacketIn::parse(b)?),
            MsgType::FlowRemoved => Message::FlowRemoved(FlowRemoved::parse(b)?),
            MsgType::PortStatus => Message::PortStatus(PortStatus::parse(b)?),
            MsgType::PacketOut => Message::PacketOut(PacketOut::parse(b)?),
            MsgType::FlowMod => Message::FlowMod(FlowMod::parse(b)?),
            MsgType::PortMod => Message::PortMod(PortMod::parse(b)?),
            MsgType::StatsRequest => Message::StatsRequest(StatsRequest::parse(b)?),
            MsgType::StatsReply => Message::StatsReply(StatsReply::parse(b)?),
            MsgType::BarrierRequest => Message::BarrierRequest,
            MsgType::BarrierReply => Message::BarrierReply,
            MsgType::QueueGetConfigRequest => {
                Message::QueueGetConfigRequest(QueueGetConfigRequest::parse(b)?)
            }
            MsgType::QueueGetConfigReply => {
                Message::QueueGetConfigReply(QueueGetConfigReply::parse(b)?)
            }
            MsgType::Unknown(_) => Message::Unknown {
                msg_type,
                body: b.rest().to_vec(),
            },
        };
        // Bodiless and fixed-size messages must have exactly their size: a header
        // length that disagrees with the body is an error, not something to skip over.
        b.finish()?;
        r.rest();
        Ok(m)
    }

    /// The `ofp_type` of this message.
    pub fn msg_type(&self) -> u8 {
        let t = match self {
            Message::Hello(_) => MsgType::Hello,
            Message::Error(_) => MsgType::Error,
            Message::EchoRequest { .. } => MsgType::EchoRequest,
            Message::EchoReply { .. } => MsgType::EchoReply,
            Message::Vendor(_) => MsgType::Vendor,
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
            Message::PortMod(_) => MsgType::PortMod,
            Message::StatsRequest(_) => MsgType::StatsRequest,
            Message::StatsReply(_) => MsgType::StatsReply,
            Message::BarrierRequest => MsgType::BarrierRequest,
            Message::BarrierReply => MsgType::BarrierReply,
            Message::QueueGetConfigRequest(_) => MsgType::QueueGetConfigRequest,
            Message::QueueGetConfigReply(_) => MsgType::QueueGetConfigReply,
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
            Message::Vendor(m) => m.emit(out)?,
            Message::FeaturesReply(m) => m.emit(out)?,
            Message::PacketIn(m) => m.emit(out)?,
            Message::FlowRemoved(m) => m.emit(out)?,
            Message::PortStatus(m) => m.emit(out)?,
            Message::PacketOut(m) => m.emit(out)?,
            Message::FlowMod(m) => m.emit(out)?,
            Message::PortMod(m) => m.emit(out)?,
            Message::StatsRequest(m) => m.emit(out)?,
            Message::StatsReply(m) => m.emit(out)?,
            Message::QueueGetConfigRequest(m) => m.emit(out)?,
            Message::QueueGetConfigReply(m) => m.emit(out)?,
            Message::Unknown { body, .. } => out.put_slice(body),
        }
        Ok(())
    }

    /// Appends a description of each part carried opaquely to `out`: vendor and unknown
    /// actions, vendor messages and statistics, unknown statistics and message types,
    /// unknown queue properties and HELLO bodies 1.0 gives no meaning to.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        let actions = |list: &[Action], out: &mut Vec<String>| {
            out.extend(list.iter().filter_map(Action::opaque_part));
        };
        match self {
            Message::Hello(h) => {
                for e in &h.elements {
                    match e {
                        HelloElement::Raw { bytes } => {
                            out.push(format!("HELLO body ({} bytes)", bytes.len()))
                        }
                        HelloElement::Unknown { elem_type, body } => out.push(format!(
                            "unknown hello element type {elem_type} ({} body bytes)",
                            body.len()
                        )),
                        HelloElement::VersionBitmap { .. } => {}
                    }
                }
            }
            Message::Vendor(v) => out.push(format!(
                "vendor message, vendor {:#010x} ({} data bytes)",
                v.vendor,
                v.data.len()
            )),
            Message::FlowMod(m) => actions(&m.actions, out),
            Message::PacketOut(m) => actions(&m.actions, out),
            Message::StatsRequest(m) => match &m.body {
                StatsRequestBody::Vendor { vendor, data } => out.push(format!(
                    "vendor stats request, vendor {vendor:#010x} ({} data bytes)",
                    data.len()
                )),
                StatsRequestBody::Unknown { raw_type, body } => out.push(format!(
                    "unknown stats request type {raw_type} ({} body bytes)",
                    body.len()
                )),
                _ => {}
            },
            Message::StatsReply(m) => match &m.body {
                StatsReplyBody::Flow { stats } => {
                    for s in stats {
                        actions(&s.actions, out);
                    }
                }
                StatsReplyBody::Vendor { vendor, data } => out.push(format!(
                    "vendor stats reply, vendor {vendor:#010x} ({} data bytes)",
                    data.len()
                )),
                StatsReplyBody::Unknown { raw_type, body } => out.push(format!(
                    "unknown stats reply type {raw_type} ({} body bytes)",
                    body.len()
                )),
                _ => {}
            },
            Message::QueueGetConfigReply(m) => {
                for q in &m.queues {
                    for p in &q.properties {
                        match p {
                            QueueProperty::Unknown { prop_type, body } => out.push(format!(
                                "queue {} property type {prop_type} ({} body bytes)",
                                q.queue_id,
                                body.len()
                            )),
                            QueueProperty::Experimenter { experimenter, data } => {
                                out.push(format!(
                                    "queue {} experimenter property {experimenter:#010x} ({} data bytes)",
                                    q.queue_id,
                                    data.len()
                                ))
                            }
                            QueueProperty::MinRate { .. } | QueueProperty::MaxRate { .. } => {}
                        }
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

/// The spec's structure name for the body of a message type, for error reports.
fn body_layer(t: MsgType) -> &'static str {
    match t {
        MsgType::Error => "ofp_error_msg",
        MsgType::Vendor => "ofp_vendor_header",
        MsgType::FeaturesReply => "ofp_switch_features",
        MsgType::GetConfigReply | MsgType::SetConfig => "ofp_switch_config",
        MsgType::PacketIn => "ofp_packet_in",
        MsgType::FlowRemoved => "ofp_flow_removed",
        MsgType::PortStatus => "ofp_port_status",
        MsgType::PacketOut => "ofp_packet_out",
        MsgType::FlowMod => "ofp_flow_mod",
        MsgType::PortMod => "ofp_port_mod",
        MsgType::StatsRequest => "ofp_stats_request",
        MsgType::StatsReply => "ofp_stats_reply",
        MsgType::QueueGetConfigRequest => "ofp_queue_get_config_request",
        MsgType::QueueGetConfigReply => "ofp_queue_get_config_reply",
        other => other.name().unwrap_or("message"),
    }
}
