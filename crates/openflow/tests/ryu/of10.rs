//! Ryu shape for OpenFlow 1.0 messages.

use openflow::of10::Message;
use serde_json::{json, Value};

use super::{b64, opaque, wrap};

pub fn message(m: &Message) -> Value {
    match m {
        Message::EchoRequest { data } => wrap("OFPEchoRequest", json!({ "data": b64(data) })),
        Message::EchoReply { data } => wrap("OFPEchoReply", json!({ "data": b64(data) })),
        Message::FeaturesRequest => wrap("OFPFeaturesRequest", json!({})),
        Message::BarrierRequest => wrap("OFPBarrierRequest", json!({})),
        Message::BarrierReply => wrap("OFPBarrierReply", json!({})),
        other => opaque(&format!("no ryu adapter for {}", other.name())),
    }
}
