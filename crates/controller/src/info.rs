//! What everyone knows about a connected switch: [`SwitchInfo`], built by the handshake
//! from FEATURES_REPLY (and, for OpenFlow 1.3, the PORT_DESC multipart reply), then
//! handed to the worker and to every app through the dispatcher.
//!
//! The port list stays current: every PORT_STATUS the switch sends is applied
//! ([`SwitchInfo::apply_port_status`]) before any app's handler sees the message, so
//! `ctx.info().ports` and `Switches::info(dpid)` show the ports as they are now.

use std::net::SocketAddr;

use openflow::{MacAddr, Version};
use serde::Serialize;

/// A switch that completed the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchInfo {
    /// The datapath id: how apps, logs and counters name the switch, and the key that
    /// makes a second connection of the same switch replace the first.
    pub dpid: Dpid,
    /// The negotiated OpenFlow version: every message to this switch is encoded in it.
    pub version: Version,
    /// Packets the switch can buffer (PACKET_OUT by buffer_id is only possible if > 0).
    pub n_buffers: u32,
    /// Flow tables the switch has (1.3 apps may target tables beyond 0).
    pub n_tables: u8,
    /// `OFPC_*` capability bits, as the switch sent them.
    pub capabilities: u32,
    /// The switch's ports: those of the handshake (1.0 FEATURES_REPLY, 1.3 PORT_DESC
    /// reply), with every PORT_STATUS since applied, in port-number order of arrival.
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

impl SwitchInfo {
    /// A switch as tests, simulations and benchmarks make one, with the handshake's
    /// plainest answers: no buffers, one table on 1.0 and 254 on 1.3, no capability
    /// bits, no ports, peer `127.0.0.1:1`. The fields are public, so a fixture names
    /// only what differs: `SwitchInfo { ports, ..SwitchInfo::new(dpid, version) }`.
    pub fn new(dpid: Dpid, version: Version) -> SwitchInfo {
        SwitchInfo {
            dpid,
            version,
            n_buffers: 0,
            n_tables: if version == Version::V1_0 { 1 } else { 254 },
            capabilities: 0,
            ports: Vec::new(),
            peer: SocketAddr::from(([127, 0, 0, 1], 1)),
        }
    }

    /// The port numbered `port_no`, if the switch has it.
    pub fn port(&self, port_no: u32) -> Option<&PortInfo> {
        self.ports.iter().find(|p| p.port_no == port_no)
    }

    /// Applies a PORT_STATUS to the port list: `Add` and `Modify` put the description
    /// in place of the port with its number (appending it if there is none: a MODIFY
    /// for a port we never saw still tells us it exists), `Delete` removes it. An
    /// unknown reason leaves the list as it is (we cannot tell what happened).
    pub fn apply_port_status(&mut self, reason: PortReason, port: &PortInfo) {
        let at = self.ports.iter().position(|p| p.port_no == port.port_no);
        match (reason, at) {
            (PortReason::Add | PortReason::Modify, Some(i)) => self.ports[i] = port.clone(),
            (PortReason::Add | PortReason::Modify, None) => self.ports.push(port.clone()),
            (PortReason::Delete, Some(i)) => {
                self.ports.remove(i);
            }
            (PortReason::Delete, None) | (PortReason::Unknown(_), _) => {}
        }
    }
}

/// Why a switch sent PORT_STATUS, in version-neutral form (`ofp_port_reason`, the same
/// values in 1.0 §5.4.3 and 1.3 §7.4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PortReason {
    /// The port was added.
    Add,
    /// The port was removed (the description is the port as it was).
    Delete,
    /// Some attribute of the port changed (config or link state, typically).
    Modify,
    /// A reason value neither version defines, kept as sent.
    Unknown(u8),
}

impl PortReason {
    /// From the wire value.
    pub fn from_raw(v: u8) -> PortReason {
        match v {
            0 => PortReason::Add,
            1 => PortReason::Delete,
            2 => PortReason::Modify,
            v => PortReason::Unknown(v),
        }
    }

    /// The wire value.
    pub fn to_raw(self) -> u8 {
        match self {
            PortReason::Add => 0,
            PortReason::Delete => 1,
            PortReason::Modify => 2,
            PortReason::Unknown(v) => v,
        }
    }
}

/// `OFPPC_PORT_DOWN`: bit 0 of `ofp_port_config` in 1.0 and 1.3 alike.
pub const PORT_CONFIG_DOWN: u32 = 1 << 0;
/// `OFPPS_LINK_DOWN`: bit 0 of `ofp_port_state` in 1.0 and 1.3 alike.
pub const PORT_STATE_LINK_DOWN: u32 = 1 << 0;

impl PortInfo {
    /// Whether the port can carry traffic: not administratively down
    /// (`OFPPC_PORT_DOWN` in `config`) and its link not down (`OFPPS_LINK_DOWN` in
    /// `state`).
    pub fn is_up(&self) -> bool {
        self.config & PORT_CONFIG_DOWN == 0 && self.state & PORT_STATE_LINK_DOWN == 0
    }

    /// The reason and port of a PORT_STATUS message of either version; `None` for any
    /// other message.
    pub fn from_port_status(msg: &openflow::Message) -> Option<(PortReason, PortInfo)> {
        use openflow::{of10, of13, Message};
        match msg {
            Message::V10(of10::Message::PortStatus(s)) => Some((
                PortReason::from_raw(s.reason.to_raw()),
                PortInfo::from_v10(&s.desc),
            )),
            Message::V13(of13::Message::PortStatus(s)) => Some((
                PortReason::from_raw(s.reason.to_raw()),
                PortInfo::from_v13(&s.desc),
            )),
            _ => None,
        }
    }

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

/// The datapath-id type ([`crate::dpid::Dpid`]; one type wherever it is named).
pub use crate::dpid::Dpid;

#[cfg(test)]
mod tests {
    use super::*;

    fn port(port_no: u32, config: u32, state: u32) -> PortInfo {
        PortInfo {
            port_no,
            hw_addr: MacAddr([2, 0, 0, 0, 0, port_no as u8]),
            name: format!("eth{port_no}"),
            config,
            state,
        }
    }

    #[test]
    fn a_port_is_up_unless_configured_down_or_its_link_is_down() {
        assert!(port(1, 0, 0).is_up());
        // OFPPC_NO_FLOOD (1.0) / OFPPC_NO_RECV (1.3) and OFPPS_BLOCKED / LIVE: still up.
        assert!(port(1, 0x10, 0x4).is_up());
        assert!(!port(1, PORT_CONFIG_DOWN, 0).is_up());
        assert!(!port(1, 0, PORT_STATE_LINK_DOWN).is_up());
    }

    #[test]
    fn port_status_adds_modifies_and_deletes() {
        let mut info = SwitchInfo {
            n_tables: 1,
            ports: vec![port(1, 0, 0), port(2, 0, 0)],
            ..SwitchInfo::new(openflow::Dpid(1), Version::V1_3)
        };
        info.apply_port_status(PortReason::Add, &port(3, 0, 0));
        info.apply_port_status(PortReason::Modify, &port(1, 0, PORT_STATE_LINK_DOWN));
        info.apply_port_status(PortReason::Delete, &port(2, 0, 0));
        info.apply_port_status(PortReason::Delete, &port(9, 0, 0));
        info.apply_port_status(PortReason::Unknown(7), &port(4, 0, 0));
        let nos: Vec<u32> = info.ports.iter().map(|p| p.port_no).collect();
        assert_eq!(nos, [1, 3]);
        assert!(!info.port(1).unwrap().is_up());
        // A MODIFY for a port never seen adds it; an ADD of a known port replaces it.
        info.apply_port_status(PortReason::Modify, &port(5, 0, 0));
        info.apply_port_status(PortReason::Add, &port(3, PORT_CONFIG_DOWN, 0));
        assert_eq!(info.ports.len(), 3);
        assert!(!info.port(3).unwrap().is_up());
        assert_eq!(PortReason::from_raw(2), PortReason::Modify);
        assert_eq!(PortReason::from_raw(9).to_raw(), 9);
    }
}
