//! The group bodies of a MULTIPART_REPLY: `ofp_group_stats`, `ofp_group_desc` and
//! `ofp_group_features`.

use serde::{Deserialize, Serialize};

use super::stats::Counter;
use crate::error::{DecodeResult, EncodeResult};
use crate::of13::entries::entry;
use crate::of13::group::{Bucket, GroupType};
use crate::wire::{LenMark, Put, Reader};

/// `ofp_group_stats` (§7.3.5.9): one group's counters, and one [`Counter`] per bucket.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupStats {
    pub group_id: u32,
    /// Flow entries or groups that forward to this group.
    pub ref_count: u32,
    pub packet_count: u64,
    pub byte_count: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub bucket_stats: Vec<Counter>,
}

impl GroupStats {
    /// Bytes before the bucket counters.
    pub const FIXED_LEN: usize = 40;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<GroupStats> {
        // §7.3.5.9, ofp_group_stats: "uint16_t length; /* Length of this entry. */";
        // what follows the fixed part is "struct ofp_bucket_counter bucket_stats[0]".
        let mut e = entry(r, "ofp_group_stats", 0, Self::FIXED_LEN)?;
        e.skip(4)?;
        let group_id = e.u32()?;
        let ref_count = e.u32()?;
        e.skip(4)?;
        Ok(GroupStats {
            group_id,
            ref_count,
            packet_count: e.u64()?,
            byte_count: e.u64()?,
            duration_sec: e.u32()?,
            duration_nsec: e.u32()?,
            bucket_stats: Counter::parse_rest(&mut e, "ofp_bucket_counter")?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_group_stats");
        out.put_zeros(2);
        out.put_u32(self.group_id);
        out.put_u32(self.ref_count);
        out.put_zeros(4);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        self.bucket_stats.iter().for_each(|c| c.emit(out));
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_group_desc` (§7.3.5.10): one group's type and buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDesc {
    pub group_type: GroupType,
    pub group_id: u32,
    pub buckets: Vec<Bucket>,
}

impl GroupDesc {
    /// Bytes before the buckets.
    pub const FIXED_LEN: usize = 8;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<GroupDesc> {
        // §7.3.5.10, ofp_group_desc: "uint16_t length; /* Length of this entry. */",
        // the buckets filling it ("List of buckets - 0 or more").
        let mut e = entry(r, "ofp_group_desc", 0, Self::FIXED_LEN)?;
        e.skip(2)?;
        let group_type = GroupType::from_raw(e.u8()?);
        e.skip(1)?;
        Ok(GroupDesc {
            group_type,
            group_id: e.u32()?,
            // The buckets fill the rest of the entry.
            buckets: Bucket::parse_list(&mut e)?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_group_desc");
        out.put_u8(self.group_type.to_raw());
        out.put_zeros(1);
        out.put_u32(self.group_id);
        Bucket::emit_list(&self.buckets, out)?;
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_group_features` (§7.3.5.11): 40 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupFeatures {
    /// Bitmap of `OFPGT_*` group types supported.
    pub types: u32,
    /// `OFPGFC_*` capability bitmap.
    pub capabilities: u32,
    /// Maximum number of groups of each type (all, select, indirect, fast failover).
    pub max_groups: [u32; 4],
    /// Bitmaps of `OFPAT_*` action types supported, per group type.
    pub actions: [u32; 4],
}

impl GroupFeatures {
    /// Bytes on the wire.
    pub const LEN: usize = 40;

    /// Parses the structure from `r` (which the caller has sized).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<GroupFeatures> {
        let mut g = GroupFeatures {
            types: r.u32()?,
            capabilities: r.u32()?,
            ..GroupFeatures::default()
        };
        for m in &mut g.max_groups {
            *m = r.u32()?;
        }
        for a in &mut g.actions {
            *a = r.u32()?;
        }
        Ok(g)
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.types);
        out.put_u32(self.capabilities);
        self.max_groups.iter().for_each(|m| out.put_u32(*m));
        self.actions.iter().for_each(|a| out.put_u32(*a));
    }
}
