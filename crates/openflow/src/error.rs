//! Decode and encode errors.
//!
//! One variant per rule a message can break. Every decode error names the structure
//! (`layer`, the spec's struct name such as `ofp_action_output`) and the absolute byte
//! offset within the message where the problem starts, so that a logged error is enough
//! to find the bad byte in a capture.

use crate::version::Version;

/// Why a message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The buffer ends before a structure does.
    #[error("{layer}: needs {needed} bytes at offset {offset}, only {available} present")]
    Truncated {
        layer: &'static str,
        offset: usize,
        needed: usize,
        available: usize,
    },
    /// A length field is smaller than the fixed part of the structure it describes.
    #[error("{layer}: length {length} at offset {offset} is below the minimum of {min}")]
    LengthTooShort {
        layer: &'static str,
        offset: usize,
        length: usize,
        min: usize,
    },
    /// A length field claims more bytes than its container has left.
    #[error("{layer}: length {length} at offset {offset} runs past its container ({available} bytes left)")]
    LengthOverrun {
        layer: &'static str,
        offset: usize,
        length: usize,
        available: usize,
    },
    /// A length field disagrees with the size the content has (fixed-size bodies,
    /// the header length against the bytes given, a list that does not fill its container).
    #[error("{layer}: length {length} at offset {offset} disagrees with the {expected} bytes its content takes")]
    LengthMismatch {
        layer: &'static str,
        offset: usize,
        length: usize,
        expected: usize,
    },
    /// A length that must be a multiple of `align` (actions, instructions: 8) is not.
    #[error("{layer}: length {length} at offset {offset} is not a multiple of {align}")]
    Misaligned {
        layer: &'static str,
        offset: usize,
        length: usize,
        align: usize,
    },
    /// The header's version byte is not one this codec speaks.
    #[error("unsupported OpenFlow version 0x{version:02x} ({}); Pharos speaks 1.0 (0x01) and 1.3 (0x04)", crate::version::version_name(*.version))]
    UnsupportedVersion { version: u8 },
    /// A field holds a value the structure cannot have (for example an OXM field of a
    /// known type with the wrong payload width, or a match type other than OXM in 1.3).
    #[error("{layer}: bad {field} {value:#x} at offset {offset}: {reason}")]
    BadValue {
        layer: &'static str,
        field: &'static str,
        offset: usize,
        value: u64,
        reason: &'static str,
    },
    /// A typed view was built over a message of another type or version.
    #[error("expected {expected}, found version 0x{version:02x} type {msg_type}")]
    WrongMessage {
        expected: &'static str,
        version: u8,
        msg_type: u8,
    },
}

impl DecodeError {
    /// The absolute offset the error points at, when it has one.
    pub fn offset(&self) -> Option<usize> {
        match *self {
            DecodeError::Truncated { offset, .. }
            | DecodeError::LengthTooShort { offset, .. }
            | DecodeError::LengthOverrun { offset, .. }
            | DecodeError::LengthMismatch { offset, .. }
            | DecodeError::Misaligned { offset, .. }
            | DecodeError::BadValue { offset, .. } => Some(offset),
            DecodeError::UnsupportedVersion { .. } => Some(0),
            DecodeError::WrongMessage { .. } => None,
        }
    }
}

/// Why a message could not be encoded. Encoding never leaves a partial message in the
/// caller's buffer: on error the buffer is truncated back to where the message began.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The encoded structure does not fit its 16-bit length field.
    #[error("{layer}: {length} bytes do not fit its 16-bit length field (max {max})")]
    TooLong {
        layer: &'static str,
        length: usize,
        max: usize,
    },
    /// The version-neutral model holds something the target version cannot express.
    #[error("{what} cannot be expressed in OpenFlow {version}")]
    NotExpressible {
        what: &'static str,
        version: Version,
    },
    /// A value does not fit the wire field it goes to.
    #[error("{layer}: {field} value {value:#x} does not fit: {reason}")]
    BadValue {
        layer: &'static str,
        field: &'static str,
        value: u64,
        reason: &'static str,
    },
}

/// The [`EncodeError::NotExpressible`] for `what`, which `version` cannot say (the
/// version-neutral model's and the ofctl syntax's one way of refusing).
pub(crate) fn not_in(version: Version, what: &'static str) -> EncodeError {
    EncodeError::NotExpressible { what, version }
}

pub type DecodeResult<T> = Result<T, DecodeError>;
pub type EncodeResult<T> = Result<T, EncodeError>;
