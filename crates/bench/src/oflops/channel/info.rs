//! What the switch told of itself at the handshake ([`SwitchInfo`], its ports), and
//! the data ports a test names ([`DataPort`]).

use openflow::MacAddr;
use serde::Serialize;

use super::{ChannelError, Result};

/// A switch port, from FEATURES_REPLY (1.0) or PORT_DESC (1.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortInfo {
    /// Its OpenFlow number.
    pub port_no: u32,
    /// Its name (as `ovs-vsctl list-ports` gives it): what `--data-port` names.
    pub name: String,
    /// Its hardware address.
    pub hw_addr: MacAddr,
}

/// A switch port the bench sends and captures probes on: the switch's name for it
/// (`--data-port NAME=IFACE`), its OpenFlow number, and the Linux interface wired to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataPort {
    /// The switch's name for the port (`ovs-vsctl list-ports`).
    pub name: String,
    /// Its OpenFlow port number.
    pub port_no: u32,
    /// The Linux interface on this machine wired to it.
    pub iface: String,
}

impl DataPort {
    /// Parses `NAME=IFACE` and finds NAME among the switch's ports.
    pub fn resolve(info: &SwitchInfo, spec: &str) -> Result<DataPort> {
        let (name, iface) = spec.split_once('=').ok_or_else(|| {
            ChannelError::Protocol(format!("--data-port {spec:?}: expected NAME=IFACE"))
        })?;
        let port_no = info
            .ports
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.port_no)
            .ok_or_else(|| {
                ChannelError::Protocol(format!(
                    "the switch has no port named {name:?} (it has {})",
                    info.ports
                        .iter()
                        .map(|p| format!("{}={}", p.name, p.port_no))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        Ok(DataPort {
            name: name.to_string(),
            port_no,
            iface: iface.to_string(),
        })
    }
}

/// What the switch said of itself when the channel opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchInfo {
    /// Its datapath id, from FEATURES_REPLY.
    pub datapath_id: u64,
    /// Packets it can buffer for PACKET_IN.
    pub n_buffers: u32,
    /// Its flow tables.
    pub n_tables: u8,
    /// Its ports (LOCAL included).
    pub ports: Vec<PortInfo>,
}

impl SwitchInfo {
    /// The numbers of the physical ports (not LOCAL), in the order the switch gave.
    pub fn physical_ports(&self) -> Vec<u32> {
        self.ports
            .iter()
            .filter(|p| p.port_no < 0xff00)
            .map(|p| p.port_no)
            .collect()
    }
}
