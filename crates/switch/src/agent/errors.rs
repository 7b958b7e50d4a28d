//! Why a request is refused, and the ERROR message each version says it with (1.0.0
//! §5.4.4, 1.3.3 §7.4.4). The numbers of the codes used here are the same in both
//! versions except where [`Refusal::wire`] says otherwise.

use openflow::common::ErrorBody;
use openflow::header::Version;
use openflow::{of10, of13, Message};

use crate::table::FlowModError;

/// `ofp_bad_request_code`s (the same numbers in 1.0 and 1.3).
pub mod bad_request {
    pub const BAD_VERSION: u16 = 0;
    pub const BAD_TYPE: u16 = 1;
    /// BAD_STAT in 1.0, BAD_MULTIPART in 1.3.
    pub const BAD_STAT: u16 = 2;
    /// BAD_VENDOR in 1.0, BAD_EXPERIMENTER in 1.3.
    pub const BAD_VENDOR: u16 = 3;
    pub const BAD_LEN: u16 = 6;
    pub const BUFFER_EMPTY: u16 = 7;
    pub const BUFFER_UNKNOWN: u16 = 8;
}

/// `ofp_bad_action_code`s (the same numbers in 1.0 and 1.3).
pub mod bad_action {
    pub const BAD_TYPE: u16 = 0;
    pub const BAD_OUT_PORT: u16 = 4;
    pub const BAD_QUEUE: u16 = 8;
    /// 1.3 only.
    pub const BAD_OUT_GROUP: u16 = 9;
}

/// What is wrong, version-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    HelloIncompatible,
    BadRequest(u16),
    BadAction(u16),
    FlowMod(FlowModError),
    FlowModBadCommand,
    PortModBadPort,
    PortModBadHwAddr,
    /// 1.3 GROUP_MOD refused: its `OFPGMFC_*` code.
    GroupMod(u16),
    /// 1.3 METER_MOD: meters are not supported.
    MeterMod,
}

/// A refusal: the error to send, and the reason for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: Kind,
    pub why: String,
}

impl Refusal {
    pub fn new(kind: Kind, why: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            why: why.into(),
        }
    }

    pub fn bad_request(code: u16, why: impl Into<String>) -> Refusal {
        Refusal::new(Kind::BadRequest(code), why)
    }

    pub fn bad_action(code: u16, why: impl Into<String>) -> Refusal {
        Refusal::new(Kind::BadAction(code), why)
    }

    /// `(type, code)` of the ERROR in `version`.
    pub fn wire(&self, version: Version) -> (u16, u16) {
        use FlowModError as F;
        let v10 = version == Version::V1_0;
        match &self.kind {
            Kind::HelloIncompatible => (0, 0),
            Kind::BadRequest(c) => (1, *c),
            // 1.0 has no BAD_OUT_GROUP: no group exists there either.
            Kind::BadAction(bad_action::BAD_OUT_GROUP) if v10 => (2, bad_action::BAD_TYPE),
            Kind::BadAction(c) => (2, *c),
            Kind::FlowModBadCommand => {
                if v10 {
                    (3, 4)
                } else {
                    (5, 6)
                }
            }
            Kind::FlowMod(e) => match (v10, e) {
                (true, F::TableFull(_)) => (3, 0),
                (true, F::Overlap) => (3, 1),
                (true, _) => (3, 5),
                (false, F::TableFull(_)) => (5, 1),
                (false, F::BadTableId(_)) => (5, 2),
                (false, F::Overlap) => (5, 3),
                // OFPET_BAD_INSTRUCTION / OFPBIC_BAD_TABLE_ID.
                (false, F::BadGoto(_)) => (3, 2),
                (false, F::Unsupported(_)) => (5, 0),
                // OFPET_BAD_ACTION / OFPBAC_BAD_OUT_GROUP.
                (false, F::UnknownGroup(_)) => (2, bad_action::BAD_OUT_GROUP),
            },
            Kind::PortModBadPort => (if v10 { 4 } else { 7 }, 0),
            Kind::PortModBadHwAddr => (if v10 { 4 } else { 7 }, 1),
            // OFPET_GROUP_MOD_FAILED (1.0 has no such message).
            Kind::GroupMod(code) => (6, *code),
            // OFPET_METER_MOD_FAILED / OFPMMFC_UNKNOWN.
            Kind::MeterMod => (12, 0),
        }
    }

    /// The ERROR message in `version`, carrying the start of the request (both specs:
    /// "at least 64 bytes of the failed request").
    pub fn message(&self, version: Version, request: &[u8]) -> Message {
        let (err_type, code) = self.wire(version);
        let body = ErrorBody::Standard {
            err_type,
            code,
            data: request[..request.len().min(64)].to_vec(),
        };
        match version {
            Version::V1_0 => Message::V10(of10::Message::Error(body)),
            Version::V1_3 => Message::V13(of13::Message::Error(body)),
        }
    }
}
