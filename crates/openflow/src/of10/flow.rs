//! Flow table messages (spec 1.0.0 §5.3.3, §5.4.2): FLOW_MOD and FLOW_REMOVED.

use serde::{Deserialize, Serialize};

use super::action::Action;
use super::flow_match::Match;
use crate::error::{DecodeResult, EncodeResult};
use crate::open_enum;
use crate::wire::{Put, Reader};

/// `OFP_DEFAULT_PRIORITY`.
pub const OFP_DEFAULT_PRIORITY: u16 = 0x8000;
/// `OFP_FLOW_PERMANENT`: an idle or hard timeout of zero never expires.
pub const OFP_FLOW_PERMANENT: u16 = 0;
/// A `buffer_id` meaning "no buffered packet" (-1).
pub const OFP_NO_BUFFER: u32 = 0xffff_ffff;

/// `ofp_flow_mod_flags`: send a FLOW_REMOVED when the flow expires or is deleted.
pub const OFPFF_SEND_FLOW_REM: u16 = 1 << 0;
/// Check for overlapping entries first.
pub const OFPFF_CHECK_OVERLAP: u16 = 1 << 1;
/// Remark this is for emergency.
pub const OFPFF_EMERG: u16 = 1 << 2;

open_enum! {
    /// `ofp_flow_mod_command`.
    pub enum FlowModCommand: u16 {
        /// New flow.
        Add = 0 => "ADD",
        /// Modify all matching flows.
        Modify = 1 => "MODIFY",
        /// Modify the entry strictly matching wildcards.
        ModifyStrict = 2 => "MODIFY_STRICT",
        /// Delete all matching flows.
        Delete = 3 => "DELETE",
        /// Strictly match wildcards and priority.
        DeleteStrict = 4 => "DELETE_STRICT",
    }
}

open_enum! {
    /// `ofp_flow_removed_reason`.
    pub enum FlowRemovedReason: u8 {
        /// Flow idle time exceeded `idle_timeout`.
        IdleTimeout = 0 => "IDLE_TIMEOUT",
        /// Time exceeded `hard_timeout`.
        HardTimeout = 1 => "HARD_TIMEOUT",
        /// Evicted by a DELETE flow mod.
        Delete = 2 => "DELETE",
    }
}

/// FLOW_MOD (`ofp_flow_mod`): add, change or delete flow entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowMod {
    /// Fields to match.
    #[serde(rename = "match")]
    pub match_: Match,
    /// Opaque controller-issued identifier.
    pub cookie: u64,
    /// What to do.
    pub command: FlowModCommand,
    /// Idle time before discarding (seconds).
    pub idle_timeout: u16,
    /// Max time before discarding (seconds).
    pub hard_timeout: u16,
    /// Priority level of the flow entry.
    pub priority: u16,
    /// Buffered packet to apply to, or [`OFP_NO_BUFFER`]. Not meaningful for deletes.
    pub buffer_id: u32,
    /// For deletes: require matching entries to include this as an output port;
    /// `OFPP_NONE` means no restriction.
    pub out_port: u16,
    /// `OFPFF_*` bits.
    pub flags: u16,
    /// The actions; the rest of the message.
    pub actions: Vec<Action>,
}

impl FlowMod {
    /// Body size before the actions.
    pub const FIXED_LEN: usize = Match::LEN + 24;

    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowMod> {
        let m = Match::parse(r)?;
        Ok(FlowMod {
            match_: m,
            cookie: r.u64()?,
            command: FlowModCommand::from_raw(r.u16()?),
            idle_timeout: r.u16()?,
            hard_timeout: r.u16()?,
            priority: r.u16()?,
            buffer_id: r.u32()?,
            out_port: r.u16()?,
            flags: r.u16()?,
            actions: Action::parse_list(r)?,
        })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        self.match_.emit(out);
        out.put_u64(self.cookie);
        out.put_u16(self.command.to_raw());
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u16(self.priority);
        out.put_u32(self.buffer_id);
        out.put_u16(self.out_port);
        out.put_u16(self.flags);
        Action::emit_list(&self.actions, out)
    }
}

/// FLOW_REMOVED (`ofp_flow_removed`): a flow entry expired or was deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowRemoved {
    /// The entry's match.
    #[serde(rename = "match")]
    pub match_: Match,
    /// The entry's cookie.
    pub cookie: u64,
    /// The entry's priority.
    pub priority: u16,
    /// Why it was removed.
    pub reason: FlowRemovedReason,
    /// Time the flow was alive, seconds part.
    pub duration_sec: u32,
    /// Time alive beyond `duration_sec`, nanoseconds.
    pub duration_nsec: u32,
    /// The entry's idle timeout.
    pub idle_timeout: u16,
    /// Packets matched.
    pub packet_count: u64,
    /// Bytes matched.
    pub byte_count: u64,
}

impl FlowRemoved {
    /// Body size.
    pub const LEN: usize = Match::LEN + 40;

    /// Parses the message body; its size is fixed.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowRemoved> {
        let m = Match::parse(r)?;
        let cookie = r.u64()?;
        let priority = r.u16()?;
        let reason = FlowRemovedReason::from_raw(r.u8()?);
        r.skip(1)?;
        let duration_sec = r.u32()?;
        let duration_nsec = r.u32()?;
        let idle_timeout = r.u16()?;
        r.skip(2)?;
        let f = FlowRemoved {
            match_: m,
            cookie,
            priority,
            reason,
            duration_sec,
            duration_nsec,
            idle_timeout,
            packet_count: r.u64()?,
            byte_count: r.u64()?,
        };
        r.finish()?;
        Ok(f)
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        self.match_.emit(out);
        out.put_u64(self.cookie);
        out.put_u16(self.priority);
        out.put_u8(self.reason.to_raw());
        out.put_zeros(1);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.idle_timeout);
        out.put_zeros(2);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        Ok(())
    }
}
