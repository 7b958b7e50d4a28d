//! Ports (spec 1.0.0 §5.2.1): port numbers, `ofp_phy_port`, PORT_STATUS and PORT_MOD.
//!
//! Port numbers, config, state and feature bits stay raw integers in the structures (so
//! every value round-trips); the constants here name the bits.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeResult, EncodeResult};
use crate::open_enum;
use crate::types::{FixedStr, MacAddr};
use crate::wire::{Put, Reader};

/// `ofp_port`: the highest number of a physical port.
pub const OFPP_MAX: u16 = 0xff00;
/// Send the packet out the input port (which must be given explicitly to output there).
pub const OFPP_IN_PORT: u16 = 0xfff8;
/// Perform the actions in the flow table (PACKET_OUT only).
pub const OFPP_TABLE: u16 = 0xfff9;
/// Process with normal L2/L3 switching.
pub const OFPP_NORMAL: u16 = 0xfffa;
/// All physical ports except the input port and those disabled by STP.
pub const OFPP_FLOOD: u16 = 0xfffb;
/// All physical ports except the input port.
pub const OFPP_ALL: u16 = 0xfffc;
/// Send to the controller.
pub const OFPP_CONTROLLER: u16 = 0xfffd;
/// The local openflow "port".
pub const OFPP_LOCAL: u16 = 0xfffe;
/// Not associated with a physical port (also "any port" in requests).
pub const OFPP_NONE: u16 = 0xffff;

/// The name of a reserved port number (`"CONTROLLER"`), if it is one.
pub fn port_name(port: u16) -> Option<&'static str> {
    Some(match port {
        OFPP_IN_PORT => "IN_PORT",
        OFPP_TABLE => "TABLE",
        OFPP_NORMAL => "NORMAL",
        OFPP_FLOOD => "FLOOD",
        OFPP_ALL => "ALL",
        OFPP_CONTROLLER => "CONTROLLER",
        OFPP_LOCAL => "LOCAL",
        OFPP_NONE => "NONE",
        _ => return None,
    })
}

/// `ofp_port_config`: port is administratively down.
pub const OFPPC_PORT_DOWN: u32 = 1 << 0;
/// Disable 802.1D spanning tree on the port.
pub const OFPPC_NO_STP: u32 = 1 << 1;
/// Drop all packets except 802.1D spanning tree packets.
pub const OFPPC_NO_RECV: u32 = 1 << 2;
/// Drop received 802.1D STP packets.
pub const OFPPC_NO_RECV_STP: u32 = 1 << 3;
/// Do not include this port when flooding.
pub const OFPPC_NO_FLOOD: u32 = 1 << 4;
/// Drop packets forwarded to the port.
pub const OFPPC_NO_FWD: u32 = 1 << 5;
/// Do not send packet-in messages for the port.
pub const OFPPC_NO_PACKET_IN: u32 = 1 << 6;

/// `ofp_port_state`: no physical link present.
pub const OFPPS_LINK_DOWN: u32 = 1 << 0;
/// STP state: not learning or relaying frames.
pub const OFPPS_STP_LISTEN: u32 = 0 << 8;
/// STP state: learning but not relaying frames.
pub const OFPPS_STP_LEARN: u32 = 1 << 8;
/// STP state: learning and relaying frames.
pub const OFPPS_STP_FORWARD: u32 = 2 << 8;
/// STP state: not part of the spanning tree.
pub const OFPPS_STP_BLOCK: u32 = 3 << 8;
/// The bits of the STP state.
pub const OFPPS_STP_MASK: u32 = 3 << 8;

/// `ofp_port_features`: 10 Mb half-duplex rate support.
pub const OFPPF_10MB_HD: u32 = 1 << 0;
/// 10 Mb full-duplex rate support.
pub const OFPPF_10MB_FD: u32 = 1 << 1;
/// 100 Mb half-duplex rate support.
pub const OFPPF_100MB_HD: u32 = 1 << 2;
/// 100 Mb full-duplex rate support.
pub const OFPPF_100MB_FD: u32 = 1 << 3;
/// 1 Gb half-duplex rate support.
pub const OFPPF_1GB_HD: u32 = 1 << 4;
/// 1 Gb full-duplex rate support.
pub const OFPPF_1GB_FD: u32 = 1 << 5;
/// 10 Gb full-duplex rate support.
pub const OFPPF_10GB_FD: u32 = 1 << 6;
/// Copper medium.
pub const OFPPF_COPPER: u32 = 1 << 7;
/// Fiber medium.
pub const OFPPF_FIBER: u32 = 1 << 8;
/// Auto-negotiation.
pub const OFPPF_AUTONEG: u32 = 1 << 9;
/// Pause.
pub const OFPPF_PAUSE: u32 = 1 << 10;
/// Asymmetric pause.
pub const OFPPF_PAUSE_ASYM: u32 = 1 << 11;

open_enum! {
    /// `ofp_port_reason`: why a PORT_STATUS was sent.
    pub enum PortReason: u8 {
        /// The port was added.
        Add = 0 => "ADD",
        /// The port was removed.
        Delete = 1 => "DELETE",
        /// Some attribute of the port has changed.
        Modify = 2 => "MODIFY",
    }
}

/// `ofp_phy_port`: the description of a physical port (48 bytes).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PhyPort {
    /// Port number.
    pub port_no: u16,
    /// Ethernet address of the port.
    pub hw_addr: MacAddr,
    /// Human-readable name, NUL-padded.
    pub name: FixedStr<16>,
    /// `OFPPC_*` bits.
    pub config: u32,
    /// `OFPPS_*` bits.
    pub state: u32,
    /// Current features (`OFPPF_*`); zero if unsupported or unavailable.
    pub curr: u32,
    /// Features being advertised by the port.
    pub advertised: u32,
    /// Features supported by the port.
    pub supported: u32,
    /// Features advertised by the peer.
    pub peer: u32,
}

impl PhyPort {
    /// Wire size of `ofp_phy_port`.
    pub const LEN: usize = 48;

    /// Parses one port from exactly [`PhyPort::LEN`] bytes.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PhyPort> {
        let p = PhyPort {
            port_no: r.u16()?,
            hw_addr: MacAddr(r.array()?),
            name: FixedStr(r.array()?),
            config: r.u32()?,
            state: r.u32()?,
            curr: r.u32()?,
            advertised: r.u32()?,
            supported: r.u32()?,
            peer: r.u32()?,
        };
        r.finish()?;
        Ok(p)
    }

    /// Parses a list of ports filling `r`.
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<PhyPort>> {
        let mut ports = Vec::with_capacity(r.remaining() / PhyPort::LEN);
        while !r.is_empty() {
            ports.push(PhyPort::parse(&mut r.sub(PhyPort::LEN, "ofp_phy_port")?)?);
        }
        Ok(ports)
    }

    /// Appends the 48-byte port.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.port_no);
        out.put_slice(&self.hw_addr.0);
        out.put_slice(&self.name.0);
        out.put_u32(self.config);
        out.put_u32(self.state);
        out.put_u32(self.curr);
        out.put_u32(self.advertised);
        out.put_u32(self.supported);
        out.put_u32(self.peer);
    }
}

/// PORT_STATUS (`ofp_port_status`): a port was added, removed or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortStatus {
    /// Why the message was sent.
    pub reason: PortReason,
    /// The port as it now is.
    pub desc: PhyPort,
}

impl PortStatus {
    /// Body size: reason, 7 bytes of padding, the port.
    pub const LEN: usize = 8 + PhyPort::LEN;

    /// Parses the message body; its size is fixed.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PortStatus> {
        let reason = PortReason::from_raw(r.u8()?);
        r.skip(7)?;
        let desc = PhyPort::parse(r)?;
        Ok(PortStatus { reason, desc })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u8(self.reason.to_raw());
        out.put_zeros(7);
        self.desc.emit(out);
        Ok(())
    }
}

/// PORT_MOD (`ofp_port_mod`): change the behaviour of a physical port.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PortMod {
    /// The port to change.
    pub port_no: u16,
    /// Must match the port's address; a sanity check against stale port numbers.
    pub hw_addr: MacAddr,
    /// `OFPPC_*` bits to set, for the bits selected by `mask`.
    pub config: u32,
    /// `OFPPC_*` bits to change.
    pub mask: u32,
    /// `OFPPF_*` bits to advertise; zero leaves the advertisement unchanged.
    pub advertise: u32,
}

impl PortMod {
    /// Body size.
    pub const LEN: usize = 24;

    /// Parses the message body; its size is fixed.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PortMod> {
        let m = PortMod {
            port_no: r.u16()?,
            hw_addr: MacAddr(r.array()?),
            config: r.u32()?,
            mask: r.u32()?,
            advertise: r.u32()?,
        };
        r.skip(4)?;
        r.finish()?;
        Ok(m)
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u16(self.port_no);
        out.put_slice(&self.hw_addr.0);
        out.put_u32(self.config);
        out.put_u32(self.mask);
        out.put_u32(self.advertise);
        out.put_zeros(4);
        Ok(())
    }
}
