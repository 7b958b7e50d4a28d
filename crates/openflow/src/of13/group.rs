//! Groups (§7.3.4.2): buckets, GROUP_MOD and the group constants.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::of13::action::Action;
use crate::open_enum;
use crate::wire::{LenMark, Put, Reader};

/// `OFPG_MAX`: the last usable group number.
pub const OFPG_MAX: u32 = 0xffff_ff00;
/// `OFPG_ALL`: all groups (group delete, group stats).
pub const OFPG_ALL: u32 = 0xffff_fffc;
/// `OFPG_ANY`: wildcard (no group), in `out_group` filters and `watch_group`.
pub const OFPG_ANY: u32 = 0xffff_ffff;

open_enum! {
    /// `ofp_group_mod_command`.
    pub enum GroupModCommand: u16 {
        Add = 0 => "ADD",
        Modify = 1 => "MODIFY",
        Delete = 2 => "DELETE",
    }
}

open_enum! {
    /// `ofp_group_type`.
    pub enum GroupType: u8 {
        All = 0 => "ALL",
        Select = 1 => "SELECT",
        Indirect = 2 => "INDIRECT",
        FastFailover = 3 => "FF",
    }
}

/// `ofp_bucket`: a weight, liveness watches, and an action set.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bucket {
    /// Relative weight (select groups only).
    pub weight: u16,
    /// A port whose liveness decides whether the bucket is live (fast failover).
    pub watch_port: u32,
    /// A group whose liveness decides whether the bucket is live (fast failover).
    pub watch_group: u32,
    /// The bucket's action set.
    pub actions: Vec<Action>,
}

impl Bucket {
    /// The fixed part before the actions.
    pub const HEADER_LEN: usize = 16;

    /// Parses one bucket.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Bucket> {
        let offset = r.offset();
        // §7.3.4.2: "len ... Length of the bucket in bytes, including this header and
        // any padding to make it 64-bit aligned."
        let len = r.peek_u16(0).map_err(|_| r.truncated(Self::HEADER_LEN))? as usize;
        if len < Self::HEADER_LEN {
            return Err(DecodeError::LengthTooShort {
                layer: "ofp_bucket",
                offset,
                length: len,
                min: Self::HEADER_LEN,
            });
        }
        if len % 8 != 0 {
            return Err(DecodeError::Misaligned {
                layer: "ofp_bucket",
                offset,
                length: len,
                align: 8,
            });
        }
        let mut b = r.sub(len, "ofp_bucket")?;
        b.skip(2)?;
        let weight = b.u16()?;
        let watch_port = b.u32()?;
        let watch_group = b.u32()?;
        b.skip(4)?;
        Ok(Bucket {
            weight,
            watch_port,
            watch_group,
            actions: Action::parse_list(&mut b)?,
        })
    }

    /// Parses buckets until `r` is empty.
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<Bucket>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Bucket::parse(r)?);
        }
        Ok(out)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_bucket");
        out.put_u16(self.weight);
        out.put_u32(self.watch_port);
        out.put_u32(self.watch_group);
        out.put_zeros(4);
        Action::emit_list(&self.actions, out)?;
        len.finish(out)?;
        Ok(())
    }

    /// Appends every element of the list, in order.
    pub fn emit_list(buckets: &[Bucket], out: &mut Vec<u8>) -> EncodeResult<()> {
        buckets.iter().try_for_each(|b| b.emit(out))
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        Action::list_opaque_parts(&self.actions, out);
    }
}

/// GROUP_MOD (`ofp_group_mod`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupMod {
    /// Add, modify or delete.
    pub command: GroupModCommand,
    /// How the buckets are used (all, select, indirect, fast failover).
    pub group_type: GroupType,
    /// The group to act on.
    pub group_id: u32,
    /// The buckets (for delete: none).
    pub buckets: Vec<Bucket>,
}

impl GroupMod {
    /// Parses a `GroupMod` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<GroupMod> {
        let command = GroupModCommand::from_raw(r.u16()?);
        let group_type = GroupType::from_raw(r.u8()?);
        r.skip(1)?;
        let group_id = r.u32()?;
        Ok(GroupMod {
            command,
            group_type,
            group_id,
            buckets: Bucket::parse_list(r)?,
        })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u16(self.command.to_raw());
        out.put_u8(self.group_type.to_raw());
        out.put_zeros(1);
        out.put_u32(self.group_id);
        Bucket::emit_list(&self.buckets, out)
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        self.buckets.iter().for_each(|b| b.opaque_parts(out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_mod_round_trips() {
        // 4-21-ofp_group_mod.packet body.
        let body = [
            0, 0, 0, 0, 0, 0, 0, 1, // add, all, group 1
            0, 32, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, // bucket header
            0, 0, 0, 16, 0, 0, 0, 2, 0xff, 0xff, 0, 0, 0, 0, 0, 0, // output:2
        ];
        let g = GroupMod::parse(&mut Reader::new(&body, 8, "t")).unwrap();
        assert_eq!(g.buckets[0].actions, vec![Action::output(2)]);
        assert_eq!(g.buckets[0].watch_port, 1);
        let mut out = Vec::new();
        g.emit(&mut out).unwrap();
        assert_eq!(out, body);
    }

    #[test]
    fn bucket_lengths_are_checked() {
        let short = [0, 8, 0, 0, 0, 0, 0, 0];
        assert!(matches!(
            Bucket::parse_list(&mut Reader::new(&short, 0, "t")),
            Err(DecodeError::LengthTooShort { .. })
        ));
        let over = [0, 24, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0];
        assert!(matches!(
            Bucket::parse_list(&mut Reader::new(&over, 0, "t")),
            Err(DecodeError::LengthOverrun {
                layer: "ofp_bucket",
                ..
            })
        ));
        // An action overrunning its bucket.
        let inner = [
            0, 24, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 2, 0, 0, 0, 0,
            0, 0, 0, 0,
        ];
        assert!(matches!(
            Bucket::parse_list(&mut Reader::new(&inner, 0, "t")),
            Err(DecodeError::LengthOverrun {
                layer: "ofp_action",
                ..
            })
        ));
    }
}
