//! The version-neutral model apps are written against: [`Match`], [`Action`],
//! [`FlowMod`] and [`PacketOut`], encoded for whichever version a switch negotiated.
//!
//! An app writes a flow once:
//!
//! ```
//! use openflow::model::{Action, FlowMod, Match, PortNo};
//! use openflow::{MacAddr, Version};
//!
//! let m = Match { in_port: Some(1), eth_dst: Some(MacAddr([2, 0, 0, 0, 0, 9])), ..Match::default() };
//! let actions = [Action::output(PortNo::Physical(2))];
//! let fm = FlowMod::add(m, &actions).idle_timeout(10).priority(100);
//! let mut out = Vec::new();
//! fm.encode(Version::V1_0, 1, &mut out).unwrap(); // 80 bytes of OpenFlow 1.0
//! fm.encode(Version::V1_3, 2, &mut out).unwrap(); // 1.3: OXM match + APPLY_ACTIONS
//! ```
//!
//! What one version cannot express is an [`EncodeError::NotExpressible`] naming it
//! (a masked Ethernet address or an IPv6 field in 1.0, a group action in 1.0, a
//! transport port in 1.3 without the IP protocol that says which header it is in).
//!
//! Encoding writes straight into the caller's buffer and allocates nothing when the
//! buffer has room: this is the controller's hot path.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::cookie::CookieOwner;
use crate::error::{EncodeError, EncodeResult};
use crate::header::{self, Version};
use crate::msg_type::{FLOW_MOD, PACKET_OUT};
use crate::types::MacAddr;
use crate::view::PacketIn;
use crate::wire::{length_field, pad_to, Fill, LenMark, Put};
use crate::{of10, of13};

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

/// VLAN matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vlan {
    /// Only packets without an 802.1Q tag.
    Untagged,
    /// Packets tagged with this VLAN id (12 bits).
    Id(u16),
}

/// An IPv4 address with a prefix length (32 = exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ipv4Prefix {
    pub addr: Ipv4Addr,
    pub len: u8,
}

impl Ipv4Prefix {
    pub fn exact(addr: Ipv4Addr) -> Self {
        Ipv4Prefix { addr, len: 32 }
    }

    fn mask(&self) -> u32 {
        match self.len {
            0 => 0,
            l if l >= 32 => u32::MAX,
            l => u32::MAX << (32 - l),
        }
    }
}

/// An IPv6 address with a prefix length (128 = exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ipv6Prefix {
    pub addr: Ipv6Addr,
    pub len: u8,
}

impl Ipv6Prefix {
    fn mask(&self) -> u128 {
        match self.len {
            0 => 0,
            l if l >= 128 => u128::MAX,
            l => u128::MAX << (128 - l),
        }
    }
}

/// What a flow matches. `None` means "any value". Field meanings follow 1.0's `ofp_match`
/// (so ARP's opcode is `ip_proto` and its addresses `ipv4_src`/`ipv4_dst` when
/// `eth_type` is 0x0806, and ICMP's type and code are `tp_src`/`tp_dst`); the 1.3
/// encoding turns them into the matching OXM fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Match {
    pub in_port: Option<u32>,
    pub eth_src: Option<MacAddr>,
    pub eth_dst: Option<MacAddr>,
    pub eth_type: Option<u16>,
    pub vlan: Option<Vlan>,
    pub vlan_pcp: Option<u8>,
    /// IP DSCP (6 bits; 1.0's `nw_tos` holds it shifted left by 2).
    pub ip_dscp: Option<u8>,
    /// IP protocol, or the ARP opcode's low byte for ARP.
    pub ip_proto: Option<u8>,
    pub ipv4_src: Option<Ipv4Prefix>,
    pub ipv4_dst: Option<Ipv4Prefix>,
    /// TCP/UDP/SCTP source port, or the ICMP type.
    pub tp_src: Option<u16>,
    /// TCP/UDP/SCTP destination port, or the ICMP code.
    pub tp_dst: Option<u16>,
    /// 1.3 only.
    pub ipv6_src: Option<Ipv6Prefix>,
    /// 1.3 only.
    pub ipv6_dst: Option<Ipv6Prefix>,
    /// 1.3 only: a mask on `eth_src` (`None` = exact).
    pub eth_src_mask: Option<MacAddr>,
    /// 1.3 only: a mask on `eth_dst` (`None` = exact).
    pub eth_dst_mask: Option<MacAddr>,
    /// 1.3 only: the pipeline metadata register.
    pub metadata: Option<u64>,
}

/// What a flow does with a packet (applied in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Send out a port; `max_len` bytes go to the controller when the port is `Controller`.
    Output {
        port: PortNo,
        max_len: u16,
    },
    /// Set the 802.1Q VLAN id (1.3: a set-field; push a tag first on untagged packets).
    SetVlanVid {
        vid: u16,
    },
    SetVlanPcp {
        pcp: u8,
    },
    /// Remove the outer 802.1Q tag (1.0 STRIP_VLAN, 1.3 POP_VLAN).
    PopVlan,
    /// Push a new 802.1Q tag with this TPID (1.3 only).
    PushVlan {
        ethertype: u16,
    },
    SetEthSrc {
        addr: MacAddr,
    },
    SetEthDst {
        addr: MacAddr,
    },
    SetIpv4Src {
        addr: Ipv4Addr,
    },
    SetIpv4Dst {
        addr: Ipv4Addr,
    },
    /// Set the DSCP bits (1.0 SET_NW_TOS with the value shifted left by 2).
    SetIpDscp {
        dscp: u8,
    },
    SetTcpSrc {
        port: u16,
    },
    SetTcpDst {
        port: u16,
    },
    SetUdpSrc {
        port: u16,
    },
    SetUdpDst {
        port: u16,
    },
    /// Send through a queue of a port (1.0 ENQUEUE, 1.3 SET_QUEUE then OUTPUT).
    Enqueue {
        port: PortNo,
        queue_id: u32,
    },
    /// Process through a group (1.3 only).
    Group {
        group_id: u32,
    },
    /// Decrement the IP TTL (1.3 only).
    DecNwTtl,
}

impl Action {
    /// Output to a port, with the whole packet when that port is the controller.
    pub fn output(port: PortNo) -> Action {
        Action::Output {
            port,
            max_len: 0xffff,
        }
    }
}

/// `ofp_flow_mod_command`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowModCommand {
    Add,
    Modify,
    ModifyStrict,
    Delete,
    DeleteStrict,
}

impl FlowModCommand {
    fn wire(self) -> u8 {
        match self {
            FlowModCommand::Add => 0,
            FlowModCommand::Modify => 1,
            FlowModCommand::ModifyStrict => 2,
            FlowModCommand::Delete => 3,
            FlowModCommand::DeleteStrict => 4,
        }
    }
}

/// Flow-mod flags that mean the same in both versions (plus 1.3's counters flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowModFlags {
    /// Send FLOW_REMOVED when the flow expires or is deleted.
    pub send_flow_removed: bool,
    /// Refuse to add a flow overlapping one of the same priority.
    pub check_overlap: bool,
    /// 1.3 only: reset the counters of a modified flow.
    pub reset_counts: bool,
}

/// Adds, changes or removes flows; encodes to a 1.0 or 1.3 FLOW_MOD. Actions are
/// borrowed so that building and sending one allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowMod<'a> {
    pub command: FlowModCommand,
    pub matching: Match,
    pub actions: &'a [Action],
    pub cookie: u64,
    /// 1.3 only (1.0 needs 0): restricts modify/delete to cookies under this mask.
    pub cookie_mask: u64,
    /// 1.3 only (1.0 needs 0; 1.3 delete may use 0xff for all tables).
    pub table_id: u8,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub priority: u16,
    /// Apply the flow's actions to this buffered packet too.
    pub buffer_id: Option<u32>,
    /// Delete commands: only flows that output to this port.
    pub out_port: Option<PortNo>,
    pub flags: FlowModFlags,
}

impl<'a> FlowMod<'a> {
    /// OpenFlow's default priority (0x8000).
    pub const DEFAULT_PRIORITY: u16 = 0x8000;

    /// An ADD of `matching` → `actions`, priority 0x8000, no timeouts.
    pub fn add(matching: Match, actions: &'a [Action]) -> Self {
        FlowMod {
            command: FlowModCommand::Add,
            matching,
            actions,
            cookie: 0,
            cookie_mask: 0,
            table_id: 0,
            idle_timeout: 0,
            hard_timeout: 0,
            priority: Self::DEFAULT_PRIORITY,
            buffer_id: None,
            out_port: None,
            flags: FlowModFlags::default(),
        }
    }

    /// A DELETE of every flow matching `matching` (in every table for 1.3).
    pub fn delete(matching: Match) -> Self {
        FlowMod {
            command: FlowModCommand::Delete,
            table_id: 0xff,
            ..FlowMod::add(matching, &[])
        }
    }

    pub fn idle_timeout(mut self, secs: u16) -> Self {
        self.idle_timeout = secs;
        self
    }

    pub fn hard_timeout(mut self, secs: u16) -> Self {
        self.hard_timeout = secs;
        self
    }

    pub fn priority(mut self, p: u16) -> Self {
        self.priority = p;
        self
    }

    pub fn cookie(mut self, c: u64) -> Self {
        self.cookie = c;
        self
    }

    pub fn buffer_id(mut self, id: Option<u32>) -> Self {
        self.buffer_id = id;
        self
    }

    pub fn table_id(mut self, t: u8) -> Self {
        self.table_id = t;
        self
    }

    pub fn send_flow_removed(mut self) -> Self {
        self.flags.send_flow_removed = true;
        self
    }

    /// Appends the FLOW_MOD for `version` to `out`; on error `out` is unchanged.
    #[inline]
    pub fn encode(&self, version: Version, xid: u32, out: &mut Vec<u8>) -> EncodeResult<usize> {
        self.encode_owned(version, xid, CookieOwner::NONE, out)
    }

    /// [`FlowMod::encode`] with `owner`'s bits written into the cookie (and, on 1.3, into
    /// the cookie mask of a modify or delete): see [`crate::cookie`].
    #[inline]
    pub fn encode_owned(
        &self,
        version: Version,
        xid: u32,
        owner: CookieOwner,
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        match version {
            Version::V1_0 => self.encode_v10(xid, owner, out),
            Version::V1_3 => header::encode_with(out, of13::VERSION, FLOW_MOD, xid, |o| {
                self.emit_v13(owner, o)
            }),
        }
    }

    /// The 1.0 message (1.0.0 §5.3.3): header, match and body have a fixed size (72
    /// bytes), written at fixed offsets straight into `out` with the first action when
    /// it is an output (what nearly every FLOW_MOD carries): no capacity or bounds check
    /// per field, no length patched afterwards ([`append_fixed`]). A learning switch
    /// sends one per PACKET_IN.
    fn encode_v10(&self, xid: u32, owner: CookieOwner, out: &mut Vec<u8>) -> EncodeResult<usize> {
        const V: Version = Version::V1_0;
        if self.cookie_mask != 0 {
            return Err(not_in(V, "a cookie mask"));
        }
        // 1.0 flow_mod has no table_id; 0xff ("all tables") is what 1.0 deletes do anyway.
        if self.table_id != 0 && !(self.table_id == 0xff && self.is_delete()) {
            return Err(not_in(V, "a table id other than 0"));
        }
        if self.flags.reset_counts {
            return Err(not_in(V, "the reset_counts flag"));
        }
        let out_port = self.out_port.unwrap_or(PortNo::Any).to_v10()?;
        let (first, rest) = match self.actions {
            [Action::Output { port, max_len }, rest @ ..] => {
                (Some((port.to_v10()?, *max_len)), rest)
            }
            all => (None, all),
        };
        let start = out.len();
        let b = append_fixed::<80>(out);
        b[0] = of10::VERSION;
        b[1] = FLOW_MOD;
        b[4..8].copy_from_slice(&xid.to_be_bytes());
        if let Err(e) = write_match_v10(&self.matching, sub(&mut b[8..])) {
            out.truncate(start);
            return Err(e);
        }
        b[48..56].copy_from_slice(&owner.cookie(self.cookie).to_be_bytes());
        b[56..58].copy_from_slice(&(self.command.wire() as u16).to_be_bytes());
        b[58..60].copy_from_slice(&self.idle_timeout.to_be_bytes());
        b[60..62].copy_from_slice(&self.hard_timeout.to_be_bytes());
        b[62..64].copy_from_slice(&self.priority.to_be_bytes());
        b[64..68].copy_from_slice(&self.buffer_id.unwrap_or(NO_BUFFER).to_be_bytes());
        b[68..70].copy_from_slice(&out_port.to_be_bytes());
        let flags = self.flags.send_flow_removed as u16 | (self.flags.check_overlap as u16) << 1;
        b[70..72].copy_from_slice(&flags.to_be_bytes());
        let fixed = match first {
            Some((port, max_len)) => {
                write_output_v10(port, max_len, sub(&mut b[72..]));
                80
            }
            None => 72,
        };
        // The length, final unless more actions follow (then patched at the end).
        b[2..4].copy_from_slice(&(fixed as u16).to_be_bytes());
        out.truncate(start + fixed);
        if rest.is_empty() {
            return Ok(fixed);
        }
        let len = LenMark::placed(start, start + 2, "ofp_header");
        emit_actions_v10(rest, out)
            .and_then(|()| len.finish(out))
            .inspect_err(|_| out.truncate(start))
    }

    fn emit_v13(&self, owner: CookieOwner, out: &mut Vec<u8>) -> EncodeResult<()> {
        let restricts = self.command != FlowModCommand::Add;
        out.put_u64(owner.cookie(self.cookie));
        out.put_u64(owner.cookie_mask(restricts, self.cookie_mask));
        out.put_u8(self.table_id);
        out.put_u8(self.command.wire());
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u16(self.priority);
        out.put_u32(self.buffer_id.unwrap_or(NO_BUFFER));
        out.put_u32(self.out_port.unwrap_or(PortNo::Any).to_v13()?);
        out.put_u32(0xffff_ffff); // out_group: OFPG_ANY
        out.put_u16(
            self.flags.send_flow_removed as u16
                | (self.flags.check_overlap as u16) << 1
                | (self.flags.reset_counts as u16) << 2,
        );
        out.put_zeros(2);
        emit_match_v13(&self.matching, out)?;
        if !self.actions.is_empty() && !self.is_delete() {
            emit_apply_actions_v13(self.actions, out)?;
        }
        Ok(())
    }

    fn is_delete(&self) -> bool {
        matches!(
            self.command,
            FlowModCommand::Delete | FlowModCommand::DeleteStrict
        )
    }
}

/// Sends a packet (given, or buffered on the switch) through a list of actions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketOut<'a> {
    /// The switch buffer holding the packet; `data` is then ignored by the switch.
    pub buffer_id: Option<u32>,
    /// The port the packet is considered to have come in on.
    pub in_port: PortNo,
    pub actions: &'a [Action],
    pub data: &'a [u8],
}

impl<'a> PacketOut<'a> {
    /// Sends a packet held in a switch buffer.
    pub fn buffered(buffer_id: u32, in_port: PortNo, actions: &'a [Action]) -> Self {
        PacketOut {
            buffer_id: Some(buffer_id),
            in_port,
            actions,
            data: &[],
        }
    }

    /// Sends the packet `data`.
    pub fn unbuffered(data: &'a [u8], in_port: PortNo, actions: &'a [Action]) -> Self {
        PacketOut {
            buffer_id: None,
            in_port,
            actions,
            data,
        }
    }

    /// Sends the packet of a PACKET_IN through `actions`: from the switch's buffer when
    /// the switch kept it there, else its bytes; in on the port it came in on. What
    /// every forwarding app answers a PACKET_IN with (`ctx.send_packet_out(..)`).
    pub fn of_packet_in<T: AsRef<[u8]>>(p: &'a PacketIn<T>, actions: &'a [Action]) -> Self {
        let in_port = PortNo::from_u32(p.in_port());
        match p.buffer_id() {
            Some(id) => PacketOut::buffered(id, in_port, actions),
            None => PacketOut::unbuffered(p.data(), in_port, actions),
        }
    }

    /// Appends the PACKET_OUT for `version` to `out`; on error `out` is unchanged.
    pub fn encode(&self, version: Version, xid: u32, out: &mut Vec<u8>) -> EncodeResult<usize> {
        self.encode_parts(version, xid, [&[], &[]], out)
    }

    /// [`PacketOut::encode`], with actions encoded beforehand: `pre`'s, all but its
    /// action number `skip`, then this PACKET_OUT's own (usually none). For an app
    /// that sends the same actions with many packets: the routing app floods each
    /// packet out of its switch's flood ports but the one it came in by. An error if
    /// `pre` was encoded for another version.
    ///
    /// ```
    /// use openflow::model::{Action, EncodedActions, PacketOut, PortNo};
    /// use openflow::Version;
    ///
    /// let ports = [1, 2, 3].map(|n| Action::output(PortNo::Physical(n)));
    /// let flood = EncodedActions::new(Version::V1_0, &ports).unwrap();
    /// // A packet that came in by port 2 goes out of 1 and 3.
    /// let po = PacketOut::buffered(7, PortNo::Physical(2), &[]);
    /// let (mut a, mut b) = (Vec::new(), Vec::new());
    /// po.encode_with(Version::V1_0, 9, &flood, Some(1), &mut a).unwrap();
    /// let out = [ports[0], ports[2]];
    /// PacketOut::buffered(7, PortNo::Physical(2), &out).encode(Version::V1_0, 9, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    pub fn encode_with(
        &self,
        version: Version,
        xid: u32,
        pre: &EncodedActions,
        skip: Option<usize>,
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        if pre.version != Some(version) && !pre.is_empty() {
            return Err(not_in(version, "actions encoded for another version"));
        }
        self.encode_parts(version, xid, pre.without(skip), out)
    }

    /// The PACKET_OUT with the encoded actions `pre` before its own.
    fn encode_parts(
        &self,
        version: Version,
        xid: u32,
        pre: [&[u8]; 2],
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        match version {
            Version::V1_0 => self.encode_v10(xid, pre, out),
            Version::V1_3 => header::encode_with(out, of13::VERSION, PACKET_OUT, xid, |o| {
                o.put_u32(self.buffer_id.unwrap_or(NO_BUFFER));
                o.put_u32(self.in_port.to_v13()?);
                let start = o.len();
                let len = LenMark::new(o, start + 8, "ofp_packet_out.actions_len");
                o.put_zeros(6);
                pre.iter().for_each(|b| o.put_slice(b));
                for a in self.actions {
                    emit_action_v13(a, o)?;
                }
                len.finish(o)?;
                o.put_slice(self.data);
                Ok(())
            }),
        }
    }
}

/// Actions encoded once for one OpenFlow version, to be sent with many packets
/// ([`PacketOut::encode_with`]): encoding is then a copy of their bytes, not a pass
/// over each action. The default is the empty list, of no version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodedActions {
    version: Option<Version>,
    bytes: Vec<u8>,
    /// Where each action ends in `bytes`.
    ends: Vec<usize>,
}

impl EncodedActions {
    /// `actions` encoded for `version`; the error of the first that cannot be.
    pub fn new(version: Version, actions: &[Action]) -> EncodeResult<Self> {
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(actions.len());
        for a in actions {
            match version {
                Version::V1_0 => emit_actions_v10(std::slice::from_ref(a), &mut bytes)?,
                Version::V1_3 => emit_action_v13(a, &mut bytes)?,
            }
            ends.push(bytes.len());
        }
        Ok(EncodedActions {
            version: Some(version),
            bytes,
            ends,
        })
    }

    /// The version they were encoded for (`None`: the empty default).
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    /// How many actions.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of every action but number `skip` (if there is one): those before
    /// it and those after it.
    #[inline]
    fn without(&self, skip: Option<usize>) -> [&[u8]; 2] {
        match skip.filter(|&i| i < self.ends.len()) {
            Some(i) => {
                let from = if i == 0 { 0 } else { self.ends[i - 1] };
                [&self.bytes[..from], &self.bytes[self.ends[i]..]]
            }
            None => [&self.bytes, &[]],
        }
    }
}

impl PacketOut<'_> {
    /// The 1.0 message (1.0.0 §5.3.6): its 16 fixed bytes written at fixed offsets
    /// straight into `out` ([`append_fixed`]), the lengths set at the end (the flood of
    /// the default apps sends one per PACKET_IN).
    fn encode_v10(&self, xid: u32, pre: [&[u8]; 2], out: &mut Vec<u8>) -> EncodeResult<usize> {
        let in_port = self.in_port.to_v10()?;
        if self.actions.is_empty() {
            return self.encode_v10_encoded(xid, in_port, pre, out);
        }
        let start = out.len();
        let b = append_fixed::<16>(out);
        b[0] = of10::VERSION;
        b[1] = PACKET_OUT;
        b[4..8].copy_from_slice(&xid.to_be_bytes());
        b[8..12].copy_from_slice(&self.buffer_id.unwrap_or(NO_BUFFER).to_be_bytes());
        b[12..14].copy_from_slice(&in_port.to_be_bytes());
        let actions_len = LenMark::placed(start + 16, start + 14, "ofp_packet_out.actions_len");
        let len = LenMark::placed(start, start + 2, "ofp_header");
        out.extend_from_slice(pre[0]);
        out.extend_from_slice(pre[1]);
        // The same errors as the general path: the actions' length first.
        emit_actions_v10(self.actions, out)
            .and_then(|()| actions_len.finish(out))
            .and_then(|_| {
                out.extend_from_slice(self.data);
                len.finish(out)
            })
            .inspect_err(|_| out.truncate(start))
    }

    /// [`PacketOut::encode_v10`] when every action is already encoded (`pre`): the
    /// lengths are known before anything is written, so the message goes out as two
    /// 8-byte words and three copies (the routing app's flood; through the general
    /// path, `out`'s length and address were reloaded after each of its writes).
    fn encode_v10_encoded(
        &self,
        xid: u32,
        in_port: u16,
        pre: [&[u8]; 2],
        out: &mut Vec<u8>,
    ) -> EncodeResult<usize> {
        let actions_len = pre[0].len() + pre[1].len();
        let len = 16 + actions_len + self.data.len();
        // The general path's errors, in its order.
        let actions_field = length_field("ofp_packet_out.actions_len", actions_len)?;
        let len_field = length_field("ofp_header", len)?;
        // version 1, type 13 (OFPT_PACKET_OUT), length, xid; buffer_id, in_port,
        // actions_len (1.0.0 §5.3.6).
        let head = u64::from(of10::VERSION) << 56
            | u64::from(PACKET_OUT) << 48
            | u64::from(len_field) << 32
            | u64::from(xid);
        let buffer_id = self.buffer_id.unwrap_or(NO_BUFFER);
        let fixed =
            u64::from(buffer_id) << 32 | u64::from(in_port) << 16 | u64::from(actions_field);
        out.reserve(len);
        out.extend_from_slice(&head.to_be_bytes());
        out.extend_from_slice(&fixed.to_be_bytes());
        out.extend_from_slice(pre[0]);
        out.extend_from_slice(pre[1]);
        out.extend_from_slice(self.data);
        Ok(len)
    }
}

/// Why a flow was removed, in either version (1.0's reasons are 1.3's first three).
pub use crate::of13::flow::FlowRemovedReason;

/// A FLOW_REMOVED of either version: the fields apps act on (the match stays in the
/// message, in its version's form).
///
/// ```
/// use openflow::model::{FlowRemoved, FlowRemovedReason};
/// use openflow::{of10, Message};
///
/// let m = Message::V10(of10::Message::FlowRemoved(of10::FlowRemoved {
///     match_: of10::Match::default(),
///     cookie: 0x5254_0000_0000_0001,
///     priority: 0x8000,
///     reason: of10::FlowRemovedReason::IdleTimeout,
///     duration_sec: 3,
///     duration_nsec: 500_000_000,
///     idle_timeout: 10,
///     packet_count: 7,
///     byte_count: 700,
/// }));
/// let r = FlowRemoved::from_message(&m).unwrap();
/// assert_eq!((r.cookie, r.reason), (0x5254_0000_0000_0001, FlowRemovedReason::IdleTimeout));
/// assert_eq!(r.duration.as_millis(), 3_500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowRemoved {
    pub cookie: u64,
    pub priority: u16,
    pub reason: FlowRemovedReason,
    /// How long the flow was in the table.
    pub duration: std::time::Duration,
    pub idle_timeout: u16,
    /// Not in OpenFlow 1.0: 0 there.
    pub hard_timeout: u16,
    /// 1.0 has one table: 0 there.
    pub table_id: u8,
    pub packet_count: u64,
    pub byte_count: u64,
}

impl FlowRemoved {
    /// The FLOW_REMOVED in `m`, if it is one (either version).
    pub fn from_message(m: &crate::Message) -> Option<FlowRemoved> {
        let time = |s: u32, ns: u32| std::time::Duration::new(u64::from(s), ns.min(999_999_999));
        match m {
            crate::Message::V10(crate::of10::Message::FlowRemoved(f)) => Some(FlowRemoved {
                cookie: f.cookie,
                priority: f.priority,
                reason: FlowRemovedReason::from_raw(f.reason.to_raw()),
                duration: time(f.duration_sec, f.duration_nsec),
                idle_timeout: f.idle_timeout,
                hard_timeout: 0,
                table_id: 0,
                packet_count: f.packet_count,
                byte_count: f.byte_count,
            }),
            crate::Message::V13(crate::of13::Message::FlowRemoved(f)) => Some(FlowRemoved {
                cookie: f.cookie,
                priority: f.priority,
                reason: f.reason,
                duration: time(f.duration_sec, f.duration_nsec),
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                table_id: f.table_id,
                packet_count: f.packet_count,
                byte_count: f.byte_count,
            }),
            _ => None,
        }
    }
}

fn not_in(version: Version, what: &'static str) -> EncodeError {
    EncodeError::NotExpressible { what, version }
}

// ---------------------------------------------------------------------------------
// OpenFlow 1.0

use crate::of10::action::ActionType as A10;
use crate::of10::flow_match::{
    OFPFW_DL_DST, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_DL_VLAN, OFPFW_DL_VLAN_PCP, OFPFW_IN_PORT,
    OFPFW_NW_DST_SHIFT, OFPFW_NW_PROTO, OFPFW_NW_SRC_SHIFT, OFPFW_NW_TOS, OFPFW_TP_DST,
    OFPFW_TP_SRC,
};

/// `OFP_VLAN_NONE`: 1.0's dl_vlan for "no tag".
const OFP_VLAN_NONE: u16 = 0xffff;

/// Appends `N` zero bytes to `out` and returns them, for a fixed-size part of a message
/// to be written at fixed offsets. The fields go straight into the buffer: built in an
/// array on the stack and copied, they cost a stalled store-to-load forward per 16
/// bytes (the copy reads back, wide, what narrow stores had just written: a third of
/// the time of encoding a 1.0 FLOW_MOD in a profile).
#[inline(always)]
fn append_fixed<const N: usize>(out: &mut Vec<u8>) -> &mut [u8; N] {
    let start = out.len();
    out.extend_from_slice(&[0u8; N]);
    sub(&mut out[start..])
}

/// The first `N` bytes of `b` as an array (`b` holds at least `N`).
#[inline(always)]
fn sub<const N: usize>(b: &mut [u8]) -> &mut [u8; N] {
    (&mut b[..N]).try_into().expect("the slice holds N bytes")
}

/// An `ofp_action_output` (1.0.0 §5.2.4), at fixed offsets.
#[inline(always)]
fn write_output_v10(port: u16, max_len: u16, b: &mut [u8; 8]) {
    b[0..2].copy_from_slice(&A10::Output.to_raw().to_be_bytes());
    b[2..4].copy_from_slice(&8u16.to_be_bytes());
    b[4..6].copy_from_slice(&port.to_be_bytes());
    b[6..8].copy_from_slice(&max_len.to_be_bytes());
}

/// The 40 bytes of `ofp_match` for `m` (see [`write_match_v10`]).
#[cfg(test)]
fn match_v10_bytes(m: &Match) -> EncodeResult<[u8; 40]> {
    let mut b = [0u8; 40];
    write_match_v10(m, &mut b)?;
    Ok(b)
}

/// Writes the `ofp_match` for `m` into `b` (zeroed), at fixed offsets (1.0.0 §5.2.3).
#[inline]
fn write_match_v10(m: &Match, b: &mut [u8; 40]) -> EncodeResult<()> {
    const V: Version = Version::V1_0;
    if m.ipv6_src.is_some() || m.ipv6_dst.is_some() {
        return Err(not_in(V, "an IPv6 address match"));
    }
    if m.eth_src_mask.is_some() || m.eth_dst_mask.is_some() {
        return Err(not_in(V, "a masked Ethernet address match"));
    }
    if m.metadata.is_some() {
        return Err(not_in(V, "a metadata match"));
    }
    let mut w = 0u32;
    let in_port = match m.in_port {
        Some(p) => PortNo::from_u32(p).to_v10()?,
        None => {
            w |= OFPFW_IN_PORT;
            0
        }
    };
    let dl_vlan = match m.vlan {
        Some(Vlan::Untagged) => OFP_VLAN_NONE,
        Some(Vlan::Id(v)) => v & 0x0fff,
        None => {
            w |= OFPFW_DL_VLAN;
            0
        }
    };
    let mut opt = |present: bool, bit: u32| {
        if !present {
            w |= bit;
        }
    };
    opt(m.eth_src.is_some(), OFPFW_DL_SRC);
    opt(m.eth_dst.is_some(), OFPFW_DL_DST);
    opt(m.eth_type.is_some(), OFPFW_DL_TYPE);
    opt(m.ip_proto.is_some(), OFPFW_NW_PROTO);
    opt(m.tp_src.is_some(), OFPFW_TP_SRC);
    opt(m.tp_dst.is_some(), OFPFW_TP_DST);
    opt(m.vlan_pcp.is_some(), OFPFW_DL_VLAN_PCP);
    opt(m.ip_dscp.is_some(), OFPFW_NW_TOS);
    // The nw_src/nw_dst wildcard fields count the low bits to ignore (>= 32: all).
    let src_wild = m.ipv4_src.map_or(32, |p| 32 - p.len.min(32) as u32);
    let dst_wild = m.ipv4_dst.map_or(32, |p| 32 - p.len.min(32) as u32);
    w |= src_wild << OFPFW_NW_SRC_SHIFT | dst_wild << OFPFW_NW_DST_SHIFT;

    b[0..4].copy_from_slice(&w.to_be_bytes());
    b[4..6].copy_from_slice(&in_port.to_be_bytes());
    b[6..12].copy_from_slice(&m.eth_src.unwrap_or_default().0);
    b[12..18].copy_from_slice(&m.eth_dst.unwrap_or_default().0);
    b[18..20].copy_from_slice(&dl_vlan.to_be_bytes());
    b[20] = m.vlan_pcp.unwrap_or(0);
    b[22..24].copy_from_slice(&m.eth_type.unwrap_or(0).to_be_bytes());
    b[24] = m.ip_dscp.unwrap_or(0) << 2;
    b[25] = m.ip_proto.unwrap_or(0);
    let nw_src = m.ipv4_src.map_or(0, |p| u32::from(p.addr) & p.mask());
    let nw_dst = m.ipv4_dst.map_or(0, |p| u32::from(p.addr) & p.mask());
    b[28..32].copy_from_slice(&nw_src.to_be_bytes());
    b[32..36].copy_from_slice(&nw_dst.to_be_bytes());
    b[36..38].copy_from_slice(&m.tp_src.unwrap_or(0).to_be_bytes());
    b[38..40].copy_from_slice(&m.tp_dst.unwrap_or(0).to_be_bytes());
    Ok(())
}

/// Appends `actions`, each written in place (at most 16 bytes, see `Fill`).
fn emit_actions_v10(actions: &[Action], out: &mut Vec<u8>) -> EncodeResult<()> {
    for a in actions {
        // The common action, at fixed offsets (1.0.0 §5.2.4, `ofp_action_output`).
        if let Action::Output { port, max_len } = *a {
            let port = port.to_v10()?;
            write_output_v10(port, max_len, append_fixed(out));
            continue;
        }
        let at = out.len();
        let mut f = Fill::append(out, 16);
        emit_action_v10(a, &mut f)?;
        let n = f.len();
        out.truncate(at + n);
    }
    Ok(())
}

fn emit_action_v10(a: &Action, out: &mut impl Put) -> EncodeResult<()> {
    const V: Version = Version::V1_0;
    fn tl(out: &mut impl Put, t: A10, len: u16) {
        out.put_u16(t.to_raw());
        out.put_u16(len);
    }
    match *a {
        Action::Output { port, max_len } => {
            tl(out, A10::Output, 8);
            out.put_u16(port.to_v10()?);
            out.put_u16(max_len);
        }
        Action::SetVlanVid { vid } => {
            tl(out, A10::SetVlanVid, 8);
            out.put_u16(vid & 0x0fff);
            out.put_zeros(2);
        }
        Action::SetVlanPcp { pcp } => {
            tl(out, A10::SetVlanPcp, 8);
            out.put_u8(pcp);
            out.put_zeros(3);
        }
        Action::PopVlan => {
            tl(out, A10::StripVlan, 8);
            out.put_zeros(4);
        }
        Action::SetEthSrc { addr } | Action::SetEthDst { addr } => {
            let t = match a {
                Action::SetEthSrc { .. } => A10::SetDlSrc,
                _ => A10::SetDlDst,
            };
            tl(out, t, 16);
            out.put_slice(&addr.0);
            out.put_zeros(6);
        }
        Action::SetIpv4Src { addr } | Action::SetIpv4Dst { addr } => {
            let t = match a {
                Action::SetIpv4Src { .. } => A10::SetNwSrc,
                _ => A10::SetNwDst,
            };
            tl(out, t, 8);
            out.put_u32(addr.into());
        }
        Action::SetIpDscp { dscp } => {
            tl(out, A10::SetNwTos, 8);
            out.put_u8(dscp << 2);
            out.put_zeros(3);
        }
        Action::SetTcpSrc { port } | Action::SetUdpSrc { port } => {
            tl(out, A10::SetTpSrc, 8);
            out.put_u16(port);
            out.put_zeros(2);
        }
        Action::SetTcpDst { port } | Action::SetUdpDst { port } => {
            tl(out, A10::SetTpDst, 8);
            out.put_u16(port);
            out.put_zeros(2);
        }
        Action::Enqueue { port, queue_id } => {
            tl(out, A10::Enqueue, 16);
            out.put_u16(port.to_v10()?);
            out.put_zeros(6);
            out.put_u32(queue_id);
        }
        Action::PushVlan { .. } => return Err(not_in(V, "a push-VLAN action")),
        Action::Group { .. } => return Err(not_in(V, "a group action")),
        Action::DecNwTtl => return Err(not_in(V, "a decrement-TTL action")),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// OpenFlow 1.3

use crate::of13::action::ActionType as A13;
use crate::of13::instruction::InstructionType;
use crate::of13::oxm::OxmField;

/// `OFPVID_PRESENT`: set in an OXM VLAN_VID value when a tag is present.
const VID_PRESENT: u16 = 0x1000;

/// Writes one OpenFlow-basic OXM TLV: header then value (and mask when given).
#[inline]
fn oxm(out: &mut Vec<u8>, field: OxmField, value: &[u8], mask: Option<&[u8]>) {
    let has_mask = mask.is_some() as u8;
    let len = value.len() * (1 + has_mask as usize);
    out.put_u16(0x8000);
    out.put_u8(field.to_raw() << 1 | has_mask);
    out.put_u8(len as u8);
    out.put_slice(value);
    if let Some(m) = mask {
        out.put_slice(m);
    }
}

fn emit_match_v13(m: &Match, out: &mut Vec<u8>) -> EncodeResult<()> {
    const V: Version = Version::V1_3;
    let start = out.len();
    out.put_u16(1); // OFPMT_OXM
    let len = LenMark::new(out, start, "ofp_match");
    if let Some(p) = m.in_port {
        oxm(out, OxmField::InPort, &p.to_be_bytes(), None);
    }
    if let Some(md) = m.metadata {
        oxm(out, OxmField::Metadata, &md.to_be_bytes(), None);
    }
    if let Some(a) = m.eth_dst {
        oxm(
            out,
            OxmField::EthDst,
            &a.0,
            m.eth_dst_mask.as_ref().map(|x| &x.0[..]),
        );
    } else if m.eth_dst_mask.is_some() {
        return Err(not_in(V, "an eth_dst mask without an eth_dst"));
    }
    if let Some(a) = m.eth_src {
        oxm(
            out,
            OxmField::EthSrc,
            &a.0,
            m.eth_src_mask.as_ref().map(|x| &x.0[..]),
        );
    } else if m.eth_src_mask.is_some() {
        return Err(not_in(V, "an eth_src mask without an eth_src"));
    }
    if let Some(t) = m.eth_type {
        oxm(out, OxmField::EthType, &t.to_be_bytes(), None);
    }
    match m.vlan {
        Some(Vlan::Untagged) => oxm(out, OxmField::VlanVid, &0u16.to_be_bytes(), None),
        Some(Vlan::Id(v)) => oxm(
            out,
            OxmField::VlanVid,
            &(VID_PRESENT | (v & 0x0fff)).to_be_bytes(),
            None,
        ),
        None => {}
    }
    if let Some(p) = m.vlan_pcp {
        // 1.3 §7.2.3.8: VLAN_PCP requires VLAN_VID != NONE.
        if !matches!(m.vlan, Some(Vlan::Id(_))) {
            return Err(not_in(V, "a vlan_pcp match without a VLAN id"));
        }
        oxm(out, OxmField::VlanPcp, &[p], None);
    }
    // §7.2.3.8 prerequisites: the IP fields need ETH_TYPE 0x0800 or 0x86dd, the ARP
    // fields 0x0806, and the transport fields an IP_PROTO saying which header.
    let is_ip = matches!(m.eth_type, Some(0x0800) | Some(0x86dd));
    let is_arp = m.eth_type == Some(0x0806);
    if let Some(d) = m.ip_dscp {
        if !is_ip {
            return Err(not_in(V, "an ip_dscp match without eth_type IPv4 or IPv6"));
        }
        oxm(out, OxmField::IpDscp, &[d], None);
    }
    if let Some(p) = m.ip_proto {
        if is_arp {
            oxm(out, OxmField::ArpOp, &(p as u16).to_be_bytes(), None);
        } else if is_ip {
            oxm(out, OxmField::IpProto, &[p], None);
        } else {
            return Err(not_in(
                V,
                "an ip_proto match without eth_type IPv4, IPv6 or ARP",
            ));
        }
    }
    for (pfx, ip_field, arp_field) in [
        (m.ipv4_src, OxmField::Ipv4Src, OxmField::ArpSpa),
        (m.ipv4_dst, OxmField::Ipv4Dst, OxmField::ArpTpa),
    ] {
        if let Some(p) = pfx {
            let field = match m.eth_type {
                Some(0x0800) => ip_field,
                Some(0x0806) => arp_field,
                _ => {
                    return Err(not_in(
                        V,
                        "an IPv4 address match without eth_type IPv4 or ARP",
                    ))
                }
            };
            let addr = (u32::from(p.addr) & p.mask()).to_be_bytes();
            let mask = p.mask().to_be_bytes();
            oxm(out, field, &addr, (p.len < 32).then_some(&mask[..]));
        }
    }
    for (pfx, field) in [
        (m.ipv6_src, OxmField::Ipv6Src),
        (m.ipv6_dst, OxmField::Ipv6Dst),
    ] {
        if let Some(p) = pfx {
            if m.eth_type != Some(0x86dd) {
                return Err(not_in(V, "an IPv6 address match without eth_type IPv6"));
            }
            let addr = (u128::from(p.addr) & p.mask()).to_be_bytes();
            let mask = p.mask().to_be_bytes();
            oxm(out, field, &addr, (p.len < 128).then_some(&mask[..]));
        }
    }
    if m.tp_src.is_some() || m.tp_dst.is_some() {
        let ((src, dst), narrow) = match (is_ip, m.ip_proto) {
            (true, Some(6)) => ((OxmField::TcpSrc, OxmField::TcpDst), false),
            (true, Some(17)) => ((OxmField::UdpSrc, OxmField::UdpDst), false),
            (true, Some(132)) => ((OxmField::SctpSrc, OxmField::SctpDst), false),
            (true, Some(1)) if m.eth_type == Some(0x0800) => {
                ((OxmField::Icmpv4Type, OxmField::Icmpv4Code), true)
            }
            (true, Some(58)) if m.eth_type == Some(0x86dd) => {
                ((OxmField::Icmpv6Type, OxmField::Icmpv6Code), true)
            }
            _ => {
                return Err(not_in(
                    V,
                    "a transport port match without ip_proto TCP, UDP, SCTP or ICMP",
                ))
            }
        };
        for (v, field) in [(m.tp_src, src), (m.tp_dst, dst)] {
            if let Some(v) = v {
                if narrow {
                    oxm(out, field, &[v as u8], None);
                } else {
                    oxm(out, field, &v.to_be_bytes(), None);
                }
            }
        }
    }
    len.finish(out)?;
    pad_to(out, start);
    Ok(())
}

/// Writes an `OFPIT_APPLY_ACTIONS` instruction holding `actions`.
fn emit_apply_actions_v13(actions: &[Action], out: &mut Vec<u8>) -> EncodeResult<()> {
    let start = out.len();
    out.put_u16(InstructionType::ApplyActions.to_raw());
    let len = LenMark::new(out, start, "ofp_instruction_actions");
    out.put_zeros(4);
    for a in actions {
        emit_action_v13(a, out)?;
    }
    len.finish(out)?;
    Ok(())
}

/// Writes an `OFPAT_SET_FIELD` action holding one OXM TLV, padded to 8.
fn set_field(out: &mut Vec<u8>, field: OxmField, value: &[u8]) -> EncodeResult<()> {
    let start = out.len();
    out.put_u16(A13::SetField.to_raw());
    let len = LenMark::new(out, start, "ofp_action_set_field");
    oxm(out, field, value, None);
    pad_to(out, start);
    len.finish(out)?;
    Ok(())
}

fn emit_action_v13(a: &Action, out: &mut Vec<u8>) -> EncodeResult<()> {
    let tl = |out: &mut Vec<u8>, t: A13, len: u16| {
        out.put_u16(t.to_raw());
        out.put_u16(len);
    };
    match *a {
        Action::Output { port, max_len } => {
            tl(out, A13::Output, 16);
            out.put_u32(port.to_v13()?);
            out.put_u16(max_len);
            out.put_zeros(6);
        }
        Action::SetVlanVid { vid } => set_field(
            out,
            OxmField::VlanVid,
            &(VID_PRESENT | (vid & 0x0fff)).to_be_bytes(),
        )?,
        Action::SetVlanPcp { pcp } => set_field(out, OxmField::VlanPcp, &[pcp])?,
        Action::PopVlan => {
            tl(out, A13::PopVlan, 8);
            out.put_zeros(4);
        }
        Action::PushVlan { ethertype } => {
            tl(out, A13::PushVlan, 8);
            out.put_u16(ethertype);
            out.put_zeros(2);
        }
        Action::SetEthSrc { addr } => set_field(out, OxmField::EthSrc, &addr.0)?,
        Action::SetEthDst { addr } => set_field(out, OxmField::EthDst, &addr.0)?,
        Action::SetIpv4Src { addr } => set_field(out, OxmField::Ipv4Src, &addr.octets())?,
        Action::SetIpv4Dst { addr } => set_field(out, OxmField::Ipv4Dst, &addr.octets())?,
        Action::SetIpDscp { dscp } => set_field(out, OxmField::IpDscp, &[dscp])?,
        Action::SetTcpSrc { port } => set_field(out, OxmField::TcpSrc, &port.to_be_bytes())?,
        Action::SetTcpDst { port } => set_field(out, OxmField::TcpDst, &port.to_be_bytes())?,
        Action::SetUdpSrc { port } => set_field(out, OxmField::UdpSrc, &port.to_be_bytes())?,
        Action::SetUdpDst { port } => set_field(out, OxmField::UdpDst, &port.to_be_bytes())?,
        Action::Enqueue { port, queue_id } => {
            tl(out, A13::SetQueue, 8);
            out.put_u32(queue_id);
            emit_action_v13(&Action::output(port), out)?;
        }
        Action::Group { group_id } => {
            tl(out, A13::Group, 8);
            out.put_u32(group_id);
        }
        Action::DecNwTtl => {
            tl(out, A13::DecNwTtl, 8);
            out.put_zeros(4);
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
