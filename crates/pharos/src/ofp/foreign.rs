//! HELLO and ERROR messages of the OpenFlow versions the codec does not speak (1.1, 1.2,
//! 1.4, 1.5).
//!
//! Version negotiation crosses versions: a 1.1 switch says HELLO in 1.1, and Pharos
//! answers HELLO_FAILED framed in the peer's version (OpenFlow 1.3.x §6.3.1; the ERROR
//! layout is the same in every version). A capture of that exchange is well formed, so
//! `decode` reads these two messages, whose layout every version shares (HELLO: a header
//! and optional elements; ERROR: type, code, data), and `encode` writes them back. Any
//! other message of those versions is still reported as an unsupported version.

use openflow::common::{ErrorBody, Hello};
use openflow::wire::Reader;
use openflow::{header, EncodeResult, HEADER_LEN};
use serde::{Deserialize, Serialize};

// OFPT_HELLO and OFPT_ERROR: types 0 and 1 in every version, 1.1 to 1.5 too.
use openflow::msg_type::{ERROR, HELLO};

/// A HELLO or ERROR of a version the codec does not speak, with its xid; its JSON is an
/// envelope like the codec's (`{"xid":1,"version":"1.1","type":"ERROR",...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Foreign {
    pub xid: u32,
    /// "1.1", "1.2", "1.4" or "1.5".
    pub version: String,
    #[serde(flatten)]
    pub message: ForeignMessage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ForeignMessage {
    #[serde(rename = "HELLO")]
    Hello(Hello),
    #[serde(rename = "ERROR")]
    Error(ErrorBody),
}

/// The versions this module reads: the OpenFlow releases the codec does not speak.
fn wire_of(name: &str) -> Option<u8> {
    match name {
        "1.1" => Some(0x02),
        "1.2" => Some(0x03),
        "1.4" => Some(0x05),
        "1.5" => Some(0x06),
        _ => None,
    }
}

fn name_of(wire: u8) -> Option<&'static str> {
    match wire {
        0x02 => Some("1.1"),
        0x03 => Some("1.2"),
        0x05 => Some("1.4"),
        0x06 => Some("1.5"),
        _ => None,
    }
}

impl Foreign {
    /// Reads `frame` (one whole message) if it is a HELLO or an ERROR of 1.1, 1.2, 1.4
    /// or 1.5 that re-encodes to the same bytes.
    pub fn decode(frame: &[u8]) -> Option<Foreign> {
        if frame.len() < HEADER_LEN {
            return None;
        }
        let version = name_of(frame[0])?;
        if usize::from(u16::from_be_bytes([frame[2], frame[3]])) != frame.len() {
            return None;
        }
        let xid = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        let mut body = Reader::new(&frame[HEADER_LEN..], HEADER_LEN, "ofp_message body");
        let message = match frame[1] {
            HELLO => ForeignMessage::Hello(Hello::parse_lenient(&mut body)),
            // 1.2 introduced the experimenter error layout (type 0xffff).
            ERROR => ForeignMessage::Error(ErrorBody::parse(&mut body, frame[0] >= 0x03).ok()?),
            _ => return None,
        };
        let f = Foreign {
            xid,
            version: version.to_string(),
            message,
        };
        let mut again = Vec::new();
        (f.encode(&mut again).is_ok() && again == frame).then_some(f)
    }

    /// Appends the message's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) -> EncodeResult<usize> {
        let wire = wire_of(&self.version).unwrap_or(0x02);
        match &self.message {
            ForeignMessage::Hello(h) => {
                header::encode_with(out, wire, HELLO, self.xid, |o| h.emit(o))
            }
            ForeignMessage::Error(e) => header::encode_with(out, wire, ERROR, self.xid, |o| {
                e.emit(o);
                Ok(())
            }),
        }
    }

    /// The header's version byte.
    pub fn wire(&self) -> u8 {
        wire_of(&self.version).unwrap_or(0x02)
    }

    pub fn type_name(&self) -> &'static str {
        match self.message {
            ForeignMessage::Hello(_) => "HELLO",
            ForeignMessage::Error(_) => "ERROR",
        }
    }

    /// Whether `version` (an envelope's "version") is one this module reads.
    pub fn is_foreign_version(version: &str) -> bool {
        wire_of(version).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_failed_to_a_1_1_peer_round_trips() {
        // What Pharos answers a 1.1-only switch: ERROR HELLO_FAILED/INCOMPATIBLE in 1.1.
        let mut frame = vec![0x02, 0x01, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0];
        frame.extend_from_slice(b"pharos speaks OpenFlow 1.0 and OpenFlow 1.3");
        let len = frame.len() as u16;
        frame[2..4].copy_from_slice(&len.to_be_bytes());
        let f = Foreign::decode(&frame).unwrap();
        assert_eq!(
            (f.version.as_str(), f.xid, f.type_name()),
            ("1.1", 9, "ERROR")
        );
        let json = serde_json::to_string(&f).unwrap();
        assert!(
            json.starts_with(
                r#"{"xid":9,"version":"1.1","type":"ERROR","err_type":0,"code":0,"data":"#
            ),
            "{json}"
        );
        let back: Foreign = serde_json::from_str(&json).unwrap();
        let mut out = Vec::new();
        back.encode(&mut out).unwrap();
        assert_eq!(out, frame);
        // A 1.1 HELLO, and what is not read here.
        let hello = [0x02, 0x00, 0, 8, 0, 0, 0, 1];
        assert_eq!(Foreign::decode(&hello).unwrap().type_name(), "HELLO");
        assert!(
            Foreign::decode(&[0x02, 0x05, 0, 8, 0, 0, 0, 1]).is_none(),
            "FEATURES_REQUEST"
        );
        assert!(
            Foreign::decode(&[0x04, 0x00, 0, 8, 0, 0, 0, 1]).is_none(),
            "1.3 is the codec's"
        );
        assert!(
            Foreign::decode(&[0x02, 0x01, 0, 10, 0, 0, 0, 1, 0, 0]).is_none(),
            "ERROR too short"
        );
    }
}
