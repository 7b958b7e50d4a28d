//! What the channel hands back: a message received with its stamps ([`Received`]),
//! what a send took ([`Sent`]), a barrier's round trip ([`BarrierTiming`]).

use openflow::{of10, of13, view, Message, Version, HEADER_LEN};
use serde::Serialize;

use super::{msg_type, ChannelError, Result};

/// When bytes went to the kernel: before the first, after the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sent {
    /// Just before the first byte was handed to the kernel.
    pub first_ns: u64,
    /// Just after the kernel took the last byte.
    pub last_ns: u64,
    /// The xid of the first message sent; the others follow it by one each.
    pub first_xid: u32,
    /// Messages sent.
    pub messages: usize,
    /// Their bytes.
    pub bytes: usize,
}

/// One barrier round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BarrierTiming {
    /// The BARRIER_REQUEST's xid.
    pub xid: u32,
    /// When the request was handed to the kernel.
    pub sent_ns: u64,
    /// When the reply was read (its read's stamp).
    pub reply_ns: u64,
}

impl BarrierTiming {
    pub fn rtt_ns(&self) -> u64 {
        self.reply_ns.saturating_sub(self.sent_ns)
    }
}

/// One message from the switch: its raw frame and when it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// When its read completed: the kernel's receive stamp where there is one.
    pub at_ns: u64,
    /// The number of the `read` that completed it (messages of one read share it).
    pub read_no: u64,
    /// Its header's xid.
    pub xid: u32,
    /// Its header's type, in its version's numbering.
    pub msg_type: u8,
    /// The whole message, header included.
    pub frame: Vec<u8>,
}

impl Received {
    /// Decodes the message.
    pub fn message(&self) -> Result<Message> {
        Message::decode(&self.frame)
            .map(|(_, m)| m)
            .map_err(|e| ChannelError::Protocol(e.to_string()))
    }

    /// A zero-copy view of a PACKET_IN; `None` for any other message.
    pub fn packet_in(&self) -> Option<view::PacketIn<&[u8]>> {
        if self.msg_type != msg_type::PACKET_IN {
            return None;
        }
        view::PacketIn::new_checked(&self.frame[..]).ok()
    }

    /// For an ERROR: the [`ChannelError::Refused`] it means; `None` for other messages.
    pub fn error(&self) -> Option<ChannelError> {
        if self.msg_type != msg_type::ERROR {
            return None;
        }
        let (error, data) = match self.message() {
            Ok(Message::V10(of10::Message::Error(e))) => match &e {
                openflow::common::ErrorBody::Standard {
                    err_type,
                    code,
                    data,
                } => (
                    of10::error_codes::describe_error(*err_type, *code),
                    data.clone(),
                ),
                openflow::common::ErrorBody::Experimenter { data, .. } => {
                    (format!("{e:?}"), data.clone())
                }
            },
            Ok(Message::V13(of13::Message::Error(e))) => {
                let data = match &e {
                    openflow::common::ErrorBody::Standard { data, .. }
                    | openflow::common::ErrorBody::Experimenter { data, .. } => data.clone(),
                };
                (of13::error_codes::describe(&e), data)
            }
            _ => ("an undecodable ERROR".to_string(), Vec::new()),
        };
        // The data is (the start of) the message refused: name its type.
        let refused = if data.len() >= HEADER_LEN {
            type_name(data[0], data[1])
        } else {
            "a message".to_string()
        };
        Some(ChannelError::Refused {
            refused,
            xid: self.xid,
            error,
        })
    }
}

/// `FLOW_MOD` for wire version `v` and type `t` (numbers when unknown).
pub(super) fn type_name(v: u8, t: u8) -> String {
    let name = match Version::from_wire(v) {
        Ok(Version::V1_0) => of10::MsgType::from_raw(t).to_string(),
        Ok(Version::V1_3) => of13::MsgType::from_raw(t).to_string(),
        Err(_) => format!("type {t}"),
    };
    name
}
