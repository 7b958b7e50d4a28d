//! The flow messages: FLOW_MOD, FLOW_REMOVED, PACKET_IN and PACKET_OUT (§7.3.4.1,
//! §7.4.2, §7.4.1, §7.3.7), and their constants.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::of13::action::Action;
use crate::of13::instruction::Instruction;
use crate::of13::oxm::Match;
use crate::open_enum;
use crate::wire::{LenMark, Put, Reader};

/// `OFP_NO_BUFFER`: the packet is not buffered on the switch (or, in a flow mod, there
/// is no buffered packet to apply the flow to).
pub const OFP_NO_BUFFER: u32 = 0xffff_ffff;
/// `OFPTT_MAX`: the last usable table number.
pub const OFPTT_MAX: u8 = 0xfe;
/// `OFPTT_ALL`: all tables (flow delete, stats, table mod).
pub const OFPTT_ALL: u8 = 0xff;

/// `ofp_flow_mod_flags` bits.
pub mod flow_mod_flags {
    /// Send a FLOW_REMOVED when the flow expires or is deleted.
    pub const SEND_FLOW_REM: u16 = 1 << 0;
    /// Refuse to add an overlapping flow.
    pub const CHECK_OVERLAP: u16 = 1 << 1;
    /// Reset the counters of a modified flow.
    pub const RESET_COUNTS: u16 = 1 << 2;
    /// Do not keep the packet count.
    pub const NO_PKT_COUNTS: u16 = 1 << 3;
    /// Do not keep the byte count.
    pub const NO_BYT_COUNTS: u16 = 1 << 4;
}

open_enum! {
    /// `ofp_flow_mod_command`.
    pub enum FlowModCommand: u8 {
        Add = 0 => "ADD",
        Modify = 1 => "MODIFY",
        ModifyStrict = 2 => "MODIFY_STRICT",
        Delete = 3 => "DELETE",
        DeleteStrict = 4 => "DELETE_STRICT",
    }
}

open_enum! {
    /// `ofp_packet_in_reason`.
    pub enum PacketInReason: u8 {
        NoMatch = 0 => "NO_MATCH",
        Action = 1 => "ACTION",
        InvalidTtl = 2 => "INVALID_TTL",
    }
}

open_enum! {
    /// `ofp_flow_removed_reason`.
    pub enum FlowRemovedReason: u8 {
        IdleTimeout = 0 => "IDLE_TIMEOUT",
        HardTimeout = 1 => "HARD_TIMEOUT",
        Delete = 2 => "DELETE",
        GroupDelete = 3 => "GROUP_DELETE",
    }
}

/// FLOW_MOD (`ofp_flow_mod`): add, change or delete flows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowMod {
    /// Opaque controller-issued identifier.
    pub cookie: u64,
    /// Which cookie bits must match (modify and delete only).
    pub cookie_mask: u64,
    /// The table to act on (`OFPTT_ALL` for delete).
    pub table_id: u8,
    /// Add, modify or delete.
    pub command: FlowModCommand,
    /// Seconds without a matching packet before the flow expires (0: never).
    pub idle_timeout: u16,
    /// Seconds before the flow expires whatever it matches (0: never).
    pub hard_timeout: u16,
    /// Higher numbers match first.
    pub priority: u16,
    /// A buffered packet to apply the flow to, or [`OFP_NO_BUFFER`].
    pub buffer_id: u32,
    /// Delete only: flows that output to this port ([`crate::of13::OFPP_ANY`] for all).
    pub out_port: u32,
    /// Delete only: flows that output to this group ([`crate::of13::OFPG_ANY`] for all).
    pub out_group: u32,
    /// `OFPFF_*` bits, see [`flow_mod_flags`].
    pub flags: u16,
    #[serde(rename = "match")]
    /// The fields to match.
    pub match_: Match,
    /// What matching packets go through.
    pub instructions: Vec<Instruction>,
}

impl Default for FlowMod {
    fn default() -> Self {
        FlowMod {
            cookie: 0,
            cookie_mask: 0,
            table_id: 0,
            command: FlowModCommand::Add,
            idle_timeout: 0,
            hard_timeout: 0,
            priority: 0x8000,
            buffer_id: OFP_NO_BUFFER,
            out_port: crate::of13::OFPP_ANY,
            out_group: crate::of13::OFPG_ANY,
            flags: 0,
            match_: Match::default(),
            instructions: Vec::new(),
        }
    }
}

impl FlowMod {
    /// Parses a `FlowMod` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowMod> {
        let cookie = r.u64()?;
        let cookie_mask = r.u64()?;
        let table_id = r.u8()?;
        let command = FlowModCommand::from_raw(r.u8()?);
        let idle_timeout = r.u16()?;
        let hard_timeout = r.u16()?;
        let priority = r.u16()?;
        let buffer_id = r.u32()?;
        let out_port = r.u32()?;
        let out_group = r.u32()?;
        let flags = r.u16()?;
        r.skip(2)?;
        Ok(FlowMod {
            cookie,
            cookie_mask,
            table_id,
            command,
            idle_timeout,
            hard_timeout,
            priority,
            buffer_id,
            out_port,
            out_group,
            flags,
            match_: Match::parse(r)?,
            instructions: Instruction::parse_list(r)?,
        })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u64(self.cookie);
        out.put_u64(self.cookie_mask);
        out.put_u8(self.table_id);
        out.put_u8(self.command.to_raw());
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u16(self.priority);
        out.put_u32(self.buffer_id);
        out.put_u32(self.out_port);
        out.put_u32(self.out_group);
        out.put_u16(self.flags);
        out.put_zeros(2);
        self.match_.emit(out)?;
        Instruction::emit_list(&self.instructions, out)
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        self.match_.opaque_parts(out);
        Instruction::list_opaque_parts(&self.instructions, out);
    }
}

/// FLOW_REMOVED (`ofp_flow_removed`): a flow expired or was deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowRemoved {
    /// The flow's cookie.
    pub cookie: u64,
    /// The flow's priority.
    pub priority: u16,
    /// Why the flow was removed.
    pub reason: FlowRemovedReason,
    /// The table the flow was in.
    pub table_id: u8,
    /// How long the flow lived: seconds ...
    pub duration_sec: u32,
    /// ... and nanoseconds beyond `duration_sec`.
    pub duration_nsec: u32,
    /// The flow's idle timeout, from its FLOW_MOD.
    pub idle_timeout: u16,
    /// The flow's hard timeout, from its FLOW_MOD.
    pub hard_timeout: u16,
    /// Packets the flow matched.
    pub packet_count: u64,
    /// Bytes the flow matched.
    pub byte_count: u64,
    #[serde(rename = "match")]
    /// The flow's match.
    pub match_: Match,
}

impl FlowRemoved {
    /// Parses a `FlowRemoved` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowRemoved> {
        let m = FlowRemoved {
            cookie: r.u64()?,
            priority: r.u16()?,
            reason: FlowRemovedReason::from_raw(r.u8()?),
            table_id: r.u8()?,
            duration_sec: r.u32()?,
            duration_nsec: r.u32()?,
            idle_timeout: r.u16()?,
            hard_timeout: r.u16()?,
            packet_count: r.u64()?,
            byte_count: r.u64()?,
            match_: Match::parse(r)?,
        };
        // The match (with its padding) is the last thing in the message.
        r.finish()?;
        Ok(m)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u64(self.cookie);
        out.put_u16(self.priority);
        out.put_u8(self.reason.to_raw());
        out.put_u8(self.table_id);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        self.match_.emit(out)
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        self.match_.opaque_parts(out);
    }
}

/// PACKET_IN (`ofp_packet_in`): a packet sent to the controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketIn {
    /// Where the switch buffered the packet, or [`OFP_NO_BUFFER`].
    pub buffer_id: u32,
    /// Length of the whole frame (`data` may be a prefix of it).
    pub total_len: u16,
    /// Why the packet was sent.
    pub reason: PacketInReason,
    /// The table that sent it.
    pub table_id: u8,
    /// The cookie of the flow that sent the packet.
    pub cookie: u64,
    /// The packet's pipeline fields (`in_port`, `metadata`, `tunnel_id`, ...).
    #[serde(rename = "match")]
    pub match_: Match,
    /// The frame, from its Ethernet header.
    #[serde(with = "crate::types::hex")]
    pub data: Vec<u8>,
}

impl PacketIn {
    /// Parses a `PacketIn` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PacketIn> {
        let buffer_id = r.u32()?;
        let total_len = r.u16()?;
        let reason = PacketInReason::from_raw(r.u8()?);
        let table_id = r.u8()?;
        let cookie = r.u64()?;
        let match_ = Match::parse(r)?;
        // §7.4.1: "uint8_t pad[2]; /* Align to 64 bit + 16 bit */" between the match
        // and the frame.
        r.skip(2)?;
        Ok(PacketIn {
            buffer_id,
            total_len,
            reason,
            table_id,
            cookie,
            match_,
            data: r.rest().to_vec(),
        })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.buffer_id);
        out.put_u16(self.total_len);
        out.put_u8(self.reason.to_raw());
        out.put_u8(self.table_id);
        out.put_u64(self.cookie);
        self.match_.emit(out)?;
        out.put_zeros(2);
        out.put_slice(&self.data);
        Ok(())
    }

    /// The ingress port from the match, if the switch sent one (it must, §7.4.1).
    pub fn in_port(&self) -> Option<u32> {
        match self.match_.get(crate::of13::OxmField::InPort)?.value {
            crate::of13::OxmValue::Int(p) => Some(p as u32),
            _ => None,
        }
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        self.match_.opaque_parts(out);
    }
}

/// PACKET_OUT (`ofp_packet_out`): send a packet out of the switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketOut {
    /// A buffered packet to send, or [`OFP_NO_BUFFER`] to send `data`.
    pub buffer_id: u32,
    /// The port the packet counts as having come in on (or `OFPP_CONTROLLER`).
    pub in_port: u32,
    /// What to do with the packet.
    pub actions: Vec<Action>,
    /// The frame, when `buffer_id` is [`OFP_NO_BUFFER`].
    #[serde(with = "crate::types::hex")]
    pub data: Vec<u8>,
}

impl PacketOut {
    /// Parses a `PacketOut` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PacketOut> {
        let buffer_id = r.u32()?;
        let in_port = r.u32()?;
        let offset = r.offset();
        let actions_len = r.u16()? as usize;
        r.skip(6)?;
        // §7.3.7: "actions_len ... Size of action array in bytes."
        let mut a = r.sub(actions_len, "ofp_packet_out actions").map_err(|_| {
            DecodeError::LengthOverrun {
                layer: "ofp_packet_out",
                offset,
                length: actions_len,
                available: r.remaining(),
            }
        })?;
        Ok(PacketOut {
            buffer_id,
            in_port,
            actions: Action::parse_list(&mut a)?,
            data: r.rest().to_vec(),
        })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.buffer_id);
        out.put_u32(self.in_port);
        let len = LenMark::new(out, out.len() + 8, "ofp_packet_out actions");
        out.put_zeros(6);
        Action::emit_list(&self.actions, out)?;
        len.finish(out)?;
        out.put_slice(&self.data);
        Ok(())
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        Action::list_opaque_parts(&self.actions, out);
    }
}

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
