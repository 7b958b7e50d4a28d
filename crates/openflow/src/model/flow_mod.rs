//! [`FlowMod`]: adds, changes or removes flows, encoded to a 1.0 or 1.3 FLOW_MOD. The
//! 1.0 encoder writes at fixed offsets: a learning switch sends one per PACKET_IN.

use serde::{Deserialize, Serialize};

use super::action::Action;
use super::matching::Match;
use super::port::{PortNo, NO_BUFFER};
use super::v10::{append_fixed, emit_actions_v10, sub, write_match_v10, write_output_v10};
use super::v13::{emit_apply_actions_v13, emit_match_v13};
use crate::cookie::CookieOwner;
use crate::error::{not_in, EncodeResult};
use crate::header::{self, Version};
use crate::msg_type::FLOW_MOD;
use crate::wire::{LenMark, Put};
use crate::{of10, of13};

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
