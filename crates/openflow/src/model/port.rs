//! Ports as apps name them ([`PortNo`]), the same in every version, and `OFP_NO_BUFFER`.

use serde::{Deserialize, Serialize};

use crate::error::{EncodeError, EncodeResult};

/// `OFP_NO_BUFFER`.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// A switch port as apps name it, the same in every version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortNo {
    /// A physical or logical port number (below 0xff00 in 1.0, below 0xffffff00 in 1.3).
    Physical(u32),
    /// Send the packet out the port it came in on.
    InPort,
    /// Submit the packet to the first flow table (PACKET_OUT only).
    Table,
    /// The switch's traditional non-OpenFlow forwarding.
    Normal,
    /// All ports except the input port and those disabled by STP / flooding config.
    Flood,
    /// All ports except the input port.
    All,
    /// To the controller, as a PACKET_IN.
    Controller,
    /// The switch's local networking stack.
    Local,
    /// No port (1.0 `OFPP_NONE`, 1.3 `OFPP_ANY`): wildcards in requests, "none" elsewhere.
    Any,
}

impl PortNo {
    /// The 1.0 wire value.
    pub fn to_v10(self) -> EncodeResult<u16> {
        Ok(match self {
            PortNo::Physical(p) if p < 0xff00 => p as u16,
            PortNo::Physical(p) => {
                return Err(EncodeError::BadValue {
                    layer: "ofp_port",
                    field: "port_no",
                    value: p as u64,
                    reason: "1.0 port numbers are below 0xff00",
                })
            }
            PortNo::InPort => 0xfff8,
            PortNo::Table => 0xfff9,
            PortNo::Normal => 0xfffa,
            PortNo::Flood => 0xfffb,
            PortNo::All => 0xfffc,
            PortNo::Controller => 0xfffd,
            PortNo::Local => 0xfffe,
            PortNo::Any => 0xffff,
        })
    }

    /// The 1.3 wire value.
    pub fn to_v13(self) -> EncodeResult<u32> {
        Ok(match self {
            PortNo::Physical(p) if p < 0xffff_ff00 => p,
            PortNo::Physical(p) => {
                return Err(EncodeError::BadValue {
                    layer: "ofp_port",
                    field: "port_no",
                    value: p as u64,
                    reason: "1.3 port numbers are below 0xffffff00",
                })
            }
            PortNo::InPort => 0xffff_fff8,
            PortNo::Table => 0xffff_fff9,
            PortNo::Normal => 0xffff_fffa,
            PortNo::Flood => 0xffff_fffb,
            PortNo::All => 0xffff_fffc,
            PortNo::Controller => 0xffff_fffd,
            PortNo::Local => 0xffff_fffe,
            PortNo::Any => 0xffff_ffff,
        })
    }

    /// The port for a 32-bit number as [`crate::view::PacketIn::in_port`] reports it
    /// (1.0 reserved ports already widened to their 1.3 values).
    pub fn from_u32(p: u32) -> PortNo {
        match p {
            0xffff_fff8 => PortNo::InPort,
            0xffff_fff9 => PortNo::Table,
            0xffff_fffa => PortNo::Normal,
            0xffff_fffb => PortNo::Flood,
            0xffff_fffc => PortNo::All,
            0xffff_fffd => PortNo::Controller,
            0xffff_fffe => PortNo::Local,
            0xffff_ffff => PortNo::Any,
            p => PortNo::Physical(p),
        }
    }
}
