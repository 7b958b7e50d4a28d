//! What everyone knows about a connected switch: [`SwitchInfo`], built by the handshake
//! from FEATURES_REPLY (and, for OpenFlow 1.3, the PORT_DESC multipart reply), then
//! handed to the worker and to every app through the pipeline.

use std::net::SocketAddr;

use openflow::{MacAddr, Version};
use serde::Serialize;

/// A switch that completed the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchInfo {
    /// The datapath id: how apps, logs and counters name the switch, and the key that
    /// makes a second connection of the same switch replace the first.
    pub dpid: u64,
    /// The negotiated OpenFlow version: every message to this switch is encoded in it.
    pub version: Version,
    /// Packets the switch can buffer (PACKET_OUT by buffer_id is only possible if > 0).
    pub n_buffers: u32,
    /// Flow tables the switch has (1.3 apps may target tables beyond 0).
    pub n_tables: u8,
    /// `OFPC_*` capability bits, as the switch sent them.
    pub capabilities: u32,
    /// The switch's ports at handshake time (1.0 FEATURES_REPLY, 1.3 PORT_DESC reply).
    pub ports: Vec<PortInfo>,
    /// The peer's address: for logs, and to tell two connections with one dpid apart.
    pub peer: SocketAddr,
}

/// One port of a switch, in version-neutral form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortInfo {
    /// The port number, widened to 32 bits: 1.0 reserved ports (0xff00..) are mapped to
    /// their 1.3 values like `openflow::view::widen_port`, so apps compare one number.
    pub port_no: u32,
    /// The port's Ethernet address (source address of LLDP, for example).
    pub hw_addr: MacAddr,
    /// The port's name, NULs stripped, lossy UTF-8 (for humans and logs).
    pub name: String,
    /// `OFPPC_*` bits: administrative settings such as port down or no-flood.
    pub config: u32,
    /// `OFPPS_*` bits: link state such as link down.
    pub state: u32,
}

impl PortInfo {
    /// From an OpenFlow 1.0 `ofp_phy_port`.
    pub fn from_v10(p: &openflow::of10::PhyPort) -> PortInfo {
        PortInfo {
            port_no: openflow::view::widen_port(p.port_no),
            hw_addr: p.hw_addr,
            name: p.name.to_string_lossy(),
            config: p.config,
            state: p.state,
        }
    }

    /// From an OpenFlow 1.3 `ofp_port`.
    pub fn from_v13(p: &openflow::of13::port::Port) -> PortInfo {
        PortInfo {
            port_no: p.port_no,
            hw_addr: p.hw_addr,
            name: p.name.to_string_lossy(),
            config: p.config,
            state: p.state,
        }
    }
}

/// A datapath id formatted the way every log line shows it: 16 hex digits, no
/// allocation (`tracing::info!(dpid = %Dpid(id), ...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dpid(pub u64);

impl std::fmt::Display for Dpid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}
