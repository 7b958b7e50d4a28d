//! Whole messages of either version: [`Message::decode`] and [`Message::encode`].

use serde::{Deserialize, Serialize};

use crate::cookie::CookieOwner;
use crate::error::{DecodeResult, EncodeResult};
use crate::header::{self, Version, HEADER_LEN};
use crate::wire::Reader;
use crate::{of10, of13};

/// An owned OpenFlow message of a version this codec speaks.
///
/// In JSON a message reads `{"version": "1.3", "type": "FLOW_MOD", ...fields}`; see
/// [`Envelope`] for the form with the xid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "version")]
pub enum Message {
    #[serde(rename = "1.0")]
    V10(of10::Message),
    #[serde(rename = "1.3")]
    V13(of13::Message),
}

/// A message and its transaction id: the unit `pharos ofp` prints and reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub xid: u32,
    #[serde(flatten)]
    pub message: Message,
}

impl Message {
    /// Decodes exactly one message: `frame` must hold the whole message and nothing else
    /// (use [`header::frame_len`] to cut a stream into frames). Returns the xid and the
    /// message.
    pub fn decode(frame: &[u8]) -> DecodeResult<(u32, Message)> {
        // The version first: a peer speaking another version is told so, whatever the
        // rest of its message looks like.
        if let Some(&v) = frame.first() {
            Version::from_wire(v)?;
        }
        let h = header::check_frame(frame)?;
        let version = Version::from_wire(h.version())?;
        let mut body = Reader::new(&frame[HEADER_LEN..], HEADER_LEN, "ofp_message body");
        let msg = match version {
            Version::V1_0 => Message::V10(of10::Message::parse(h.msg_type(), &mut body)?),
            Version::V1_3 => Message::V13(of13::Message::parse(h.msg_type(), &mut body)?),
        };
        Ok((h.xid(), msg))
    }

    /// Appends the encoded message to `out`. On error `out` is left as it was.
    pub fn encode(&self, xid: u32, out: &mut Vec<u8>) -> EncodeResult<usize> {
        let version = self.version().wire();
        match self {
            Message::V10(m) => {
                header::encode_with(out, version, m.msg_type(), xid, |o| m.emit_body(o))
            }
            Message::V13(m) => {
                header::encode_with(out, version, m.msg_type(), xid, |o| m.emit_body(o))
            }
        }
    }

    /// [`Message::encode`] with `owner`'s bits written into a FLOW_MOD's cookie (and, on
    /// 1.3, into the cookie mask of a modify or delete), see [`crate::cookie`]; any other
    /// message is encoded as it is.
    pub fn encode_owned(
        &self,
        xid: u32,
        owner: CookieOwner,
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        if owner == CookieOwner::NONE {
            return self.encode(xid, out);
        }
        match self {
            Message::V10(of10::Message::FlowMod(fm)) => {
                let fm = of10::flow::FlowMod {
                    cookie: owner.cookie(fm.cookie),
                    ..fm.clone()
                };
                Message::V10(of10::Message::FlowMod(fm)).encode(xid, out)
            }
            Message::V13(of13::Message::FlowMod(fm)) => {
                use of13::flow::FlowModCommand as C;
                let restricts = matches!(
                    fm.command,
                    C::Modify | C::ModifyStrict | C::Delete | C::DeleteStrict
                );
                let fm = of13::flow::FlowMod {
                    cookie: owner.cookie(fm.cookie),
                    cookie_mask: owner.cookie_mask(restricts, fm.cookie_mask),
                    ..fm.clone()
                };
                Message::V13(of13::Message::FlowMod(fm)).encode(xid, out)
            }
            _ => self.encode(xid, out),
        }
    }

    /// The encoded message as a new vector.
    pub fn to_bytes(&self, xid: u32) -> EncodeResult<Vec<u8>> {
        let mut out = Vec::new();
        self.encode(xid, &mut out)?;
        Ok(out)
    }

    pub fn version(&self) -> Version {
        match self {
            Message::V10(_) => Version::V1_0,
            Message::V13(_) => Version::V1_3,
        }
    }

    /// The message's type byte on the wire, in its version.
    pub fn msg_type(&self) -> u8 {
        match self {
            Message::V10(m) => m.msg_type(),
            Message::V13(m) => m.msg_type(),
        }
    }

    /// The spec's name of the message type, without `OFPT_` (`"FLOW_MOD"`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Message::V10(m) => m.name(),
            Message::V13(m) => m.name(),
        }
    }

    /// What in this message was carried opaquely, because this codec does not know it
    /// (an unknown message type, a vendor action, a Nicira match field, an experimenter
    /// body). Empty when the codec understood every byte.
    pub fn opaque_parts(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Message::V10(m) => m.opaque_parts(&mut out),
            Message::V13(m) => m.opaque_parts(&mut out),
        }
        out
    }
}

impl Envelope {
    pub fn decode(frame: &[u8]) -> DecodeResult<Envelope> {
        let (xid, message) = Message::decode(frame)?;
        Ok(Envelope { xid, message })
    }

    pub fn encode(&self, out: &mut Vec<u8>) -> EncodeResult<usize> {
        self.message.encode(self.xid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_json_round_trips() {
        for frame in [
            &[4u8, 2, 0, 12, 0, 0, 0, 7, 1, 2, 3, 4][..],
            &[1u8, 9, 0, 12, 0, 0, 0, 1, 0, 0, 0, 128][..],
            &[4u8, 0, 0, 16, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0x10][..],
            &[4u8, 200, 0, 9, 0, 0, 0, 0, 0xaa][..],
        ] {
            let env = Envelope::decode(frame).unwrap();
            let json = serde_json::to_string(&env).unwrap();
            let back: Envelope = serde_json::from_str(&json).unwrap();
            assert_eq!(back, env, "{json}");
            let mut out = Vec::new();
            back.encode(&mut out).unwrap();
            assert_eq!(out, frame, "{json}");
        }
    }

    #[test]
    fn unsupported_versions_are_refused_cleanly() {
        let e = Message::decode(&[5, 0, 0, 8, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e, crate::DecodeError::UnsupportedVersion { version: 5 });
        assert!(e.to_string().contains("OpenFlow 1.4"));
    }
}
