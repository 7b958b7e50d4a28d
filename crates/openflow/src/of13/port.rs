//! Ports (§7.2.1): `ofp_port`, the reserved port numbers, PORT_STATUS and PORT_MOD.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeResult, EncodeResult};
use crate::open_enum;
use crate::types::{FixedStr, MacAddr};
use crate::wire::{Put, Reader};

/// `OFPP_MAX`: the highest number of a physical or logical port.
pub const OFPP_MAX: u32 = 0xffff_ff00;
/// `OFPP_IN_PORT`: send the packet out the port it came in on.
pub const OFPP_IN_PORT: u32 = 0xffff_fff8;
/// `OFPP_TABLE`: submit the packet to the first flow table (packet-out only).
pub const OFPP_TABLE: u32 = 0xffff_fff9;
/// `OFPP_NORMAL`: the switch's non-OpenFlow forwarding.
pub const OFPP_NORMAL: u32 = 0xffff_fffa;
/// `OFPP_FLOOD`: all ports but the ingress and those flooding is disabled on.
pub const OFPP_FLOOD: u32 = 0xffff_fffb;
/// `OFPP_ALL`: all ports but the ingress.
pub const OFPP_ALL: u32 = 0xffff_fffc;
/// `OFPP_CONTROLLER`: to the controller, as a packet-in.
pub const OFPP_CONTROLLER: u32 = 0xffff_fffd;
/// `OFPP_LOCAL`: the switch's local networking stack.
pub const OFPP_LOCAL: u32 = 0xffff_fffe;
/// `OFPP_ANY`: wildcard (no port), in requests and `out_port` filters.
pub const OFPP_ANY: u32 = 0xffff_ffff;

/// The reserved name of a port number (`"CONTROLLER"`), or the number itself.
pub fn port_name(port: u32) -> String {
    match port {
        OFPP_IN_PORT => "IN_PORT".into(),
        OFPP_TABLE => "TABLE".into(),
        OFPP_NORMAL => "NORMAL".into(),
        OFPP_FLOOD => "FLOOD".into(),
        OFPP_ALL => "ALL".into(),
        OFPP_CONTROLLER => "CONTROLLER".into(),
        OFPP_LOCAL => "LOCAL".into(),
        OFPP_ANY => "ANY".into(),
        n => n.to_string(),
    }
}

/// `ofp_port_config` bits.
pub mod config {
    pub const PORT_DOWN: u32 = 1 << 0;
    pub const NO_RECV: u32 = 1 << 2;
    pub const NO_FWD: u32 = 1 << 5;
    pub const NO_PACKET_IN: u32 = 1 << 6;
}

/// `ofp_port_state` bits.
pub mod state {
    pub const LINK_DOWN: u32 = 1 << 0;
    pub const BLOCKED: u32 = 1 << 1;
    pub const LIVE: u32 = 1 << 2;
}

/// `ofp_port_features` bits (`curr`, `advertised`, `supported`, `peer`).
pub mod features {
    pub const F_10MB_HD: u32 = 1 << 0;
    pub const F_10MB_FD: u32 = 1 << 1;
    pub const F_100MB_HD: u32 = 1 << 2;
    pub const F_100MB_FD: u32 = 1 << 3;
    pub const F_1GB_HD: u32 = 1 << 4;
    pub const F_1GB_FD: u32 = 1 << 5;
    pub const F_10GB_FD: u32 = 1 << 6;
    pub const F_40GB_FD: u32 = 1 << 7;
    pub const F_100GB_FD: u32 = 1 << 8;
    pub const F_1TB_FD: u32 = 1 << 9;
    pub const F_OTHER: u32 = 1 << 10;
    pub const F_COPPER: u32 = 1 << 11;
    pub const F_FIBER: u32 = 1 << 12;
    pub const F_AUTONEG: u32 = 1 << 13;
    pub const F_PAUSE: u32 = 1 << 14;
    pub const F_PAUSE_ASYM: u32 = 1 << 15;
}

/// `ofp_port`: a port's description, 64 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Port {
    /// The port number (see the `OFPP_*` reserved numbers).
    pub port_no: u32,
    /// The port's Ethernet address.
    pub hw_addr: MacAddr,
    /// The port's name, NUL-padded.
    pub name: FixedStr<16>,
    /// `OFPPC_*` bits.
    pub config: u32,
    /// `OFPPS_*` bits.
    pub state: u32,
    /// `OFPPF_*` bits: current features.
    pub curr: u32,
    /// `OFPPF_*` bits advertised to the peer.
    pub advertised: u32,
    /// `OFPPF_*` bits the port supports.
    pub supported: u32,
    /// `OFPPF_*` bits the peer advertises.
    pub peer: u32,
    /// Current bitrate in kbps.
    pub curr_speed: u32,
    /// Maximum bitrate in kbps.
    pub max_speed: u32,
}

impl Port {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 64;

    /// Parses one 64-byte `ofp_port` from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Port> {
        r.need(Self::LEN)?;
        let port_no = r.u32()?;
        r.skip(4)?;
        let hw_addr = MacAddr(r.array()?);
        r.skip(2)?;
        Ok(Port {
            port_no,
            hw_addr,
            name: FixedStr(r.array()?),
            config: r.u32()?,
            state: r.u32()?,
            curr: r.u32()?,
            advertised: r.u32()?,
            supported: r.u32()?,
            peer: r.u32()?,
            curr_speed: r.u32()?,
            max_speed: r.u32()?,
        })
    }

    /// Parses ports until `r` is empty (the PORT_DESC reply body).
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<Port>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Port::parse(
                &mut r.sub(Self::LEN.min(r.remaining()), "ofp_port")?,
            )?);
        }
        Ok(out)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.port_no);
        out.put_zeros(4);
        out.put_slice(&self.hw_addr.0);
        out.put_zeros(2);
        out.put_slice(&self.name.0);
        for v in [
            self.config,
            self.state,
            self.curr,
            self.advertised,
            self.supported,
            self.peer,
            self.curr_speed,
            self.max_speed,
        ] {
            out.put_u32(v);
        }
        Ok(())
    }

    /// Nothing in `ofp_port` is opaque; present for uniformity.
    pub fn opaque_parts(&self, _out: &mut Vec<String>) {}
}

open_enum! {
    /// `ofp_port_reason`.
    pub enum PortReason: u8 {
        Add = 0 => "ADD",
        Delete = 1 => "DELETE",
        Modify = 2 => "MODIFY",
    }
}

/// PORT_STATUS (`ofp_port_status`): a port was added, removed or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortStatus {
    /// What happened to the port.
    pub reason: PortReason,
    /// The port as it now is (or was, when deleted).
    pub desc: Port,
}

impl PortStatus {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 8 + Port::LEN;

    /// Parses a `PortStatus` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PortStatus> {
        let reason = PortReason::from_raw(r.u8()?);
        r.skip(7)?;
        let desc = Port::parse(r)?;
        r.finish()?;
        Ok(PortStatus { reason, desc })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u8(self.reason.to_raw());
        out.put_zeros(7);
        self.desc.emit(out)
    }
}

/// PORT_MOD (`ofp_port_mod`): change a port's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PortMod {
    /// The port to change.
    pub port_no: u32,
    /// Must match the port's; a safety check against a reassigned port number.
    pub hw_addr: MacAddr,
    /// `OFPPC_*` bits to set.
    pub config: u32,
    /// Which `config` bits to change.
    pub mask: u32,
    /// `OFPPF_*` bits to advertise; zero leaves them as they are.
    pub advertise: u32,
}

impl PortMod {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 32;

    /// Parses a `PortMod` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PortMod> {
        let port_no = r.u32()?;
        r.skip(4)?;
        let hw_addr = MacAddr(r.array()?);
        r.skip(2)?;
        let m = PortMod {
            port_no,
            hw_addr,
            config: r.u32()?,
            mask: r.u32()?,
            advertise: r.u32()?,
        };
        r.skip(4)?;
        r.finish()?;
        Ok(m)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.port_no);
        out.put_zeros(4);
        out.put_slice(&self.hw_addr.0);
        out.put_zeros(2);
        out.put_u32(self.config);
        out.put_u32(self.mask);
        out.put_u32(self.advertise);
        out.put_zeros(4);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DecodeError;

    #[test]
    fn port_round_trips_and_is_exactly_64_bytes() {
        let p = Port {
            port_no: 7,
            hw_addr: "f2:0b:a4:d0:3f:70".parse().unwrap(),
            name: FixedStr::new("eth7").unwrap(),
            config: config::NO_FWD,
            state: state::LIVE,
            curr: features::F_1GB_FD,
            advertised: 1,
            supported: 2,
            peer: 3,
            curr_speed: 5000,
            max_speed: 5000,
        };
        let mut out = Vec::new();
        p.emit(&mut out).unwrap();
        assert_eq!(out.len(), Port::LEN);
        assert_eq!(&out[..4], &[0, 0, 0, 7]);
        assert_eq!(&out[8..14], &[0xf2, 0x0b, 0xa4, 0xd0, 0x3f, 0x70]);
        assert_eq!(&out[16..20], b"eth7");
        let back = Port::parse_list(&mut Reader::new(&out, 0, "t")).unwrap();
        assert_eq!(back, vec![p]);
        // A list whose last port is short.
        assert!(matches!(
            Port::parse_list(&mut Reader::new(&out[..60], 0, "t")),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn port_status_and_mod_are_fixed_size() {
        let s = PortStatus {
            reason: PortReason::Modify,
            desc: Port::default(),
        };
        let mut out = Vec::new();
        s.emit(&mut out).unwrap();
        assert_eq!(out.len(), PortStatus::LEN);
        assert_eq!(
            PortStatus::parse(&mut Reader::new(&out, 8, "t")).unwrap(),
            s
        );
        out.push(0);
        assert!(matches!(
            PortStatus::parse(&mut Reader::new(&out, 8, "t")),
            Err(DecodeError::LengthMismatch { .. })
        ));
        let m = PortMod {
            port_no: 1,
            hw_addr: MacAddr([1, 2, 3, 4, 5, 6]),
            config: 1,
            mask: 1,
            advertise: 0,
        };
        let mut out = Vec::new();
        m.emit(&mut out).unwrap();
        assert_eq!(out.len(), PortMod::LEN);
        assert_eq!(PortMod::parse(&mut Reader::new(&out, 8, "t")).unwrap(), m);
        assert!(PortMod::parse(&mut Reader::new(&out[..31], 8, "t")).is_err());
    }

    #[test]
    fn reserved_port_names() {
        assert_eq!(port_name(OFPP_CONTROLLER), "CONTROLLER");
        assert_eq!(port_name(3), "3");
    }
}
