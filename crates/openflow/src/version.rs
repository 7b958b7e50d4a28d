//! The protocol versions this codec speaks, and the name of any version byte.
//!
//! This sits below [`crate::error`], which names the version an encode error is about;
//! reading a version byte, which can fail with a [`crate::DecodeError`], is the header's
//! business: [`Version::from_wire`] is written in [`crate::header`].

use std::fmt;

use serde::{Deserialize, Serialize};

/// A protocol version this codec speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Version {
    /// OpenFlow 1.0, wire version 0x01.
    #[serde(rename = "1.0")]
    V1_0,
    /// OpenFlow 1.3, wire version 0x04.
    #[serde(rename = "1.3")]
    V1_3,
}

impl Version {
    pub const fn wire(self) -> u8 {
        match self {
            Version::V1_0 => 0x01,
            Version::V1_3 => 0x04,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Version::V1_0 => "1.0",
            Version::V1_3 => "1.3",
        })
    }
}

/// The protocol name of a wire version byte, known or not.
pub fn version_name(v: u8) -> &'static str {
    match v {
        0x01 => "OpenFlow 1.0",
        0x02 => "OpenFlow 1.1",
        0x03 => "OpenFlow 1.2",
        0x04 => "OpenFlow 1.3",
        0x05 => "OpenFlow 1.4",
        0x06 => "OpenFlow 1.5",
        0x07 => "OpenFlow 1.6",
        _ => "not an OpenFlow version",
    }
}
