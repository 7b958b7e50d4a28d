//! The flow statistics bodies: `ofp_flow_stats_request` (FLOW and AGGREGATE requests)
//! and `ofp_flow_stats`, one per flow entry in a FLOW reply.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeResult, EncodeResult};
use crate::of13::entries::entry;
use crate::of13::instruction::Instruction;
use crate::of13::oxm::Match;
use crate::wire::{LenMark, Put, Reader};

/// `ofp_flow_stats_request` and `ofp_aggregate_stats_request` (§7.3.5.2, §7.3.5.3):
/// which flow entries to report.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowStatsRequest {
    /// Table to read, or `OFPTT_ALL`.
    pub table_id: u8,
    /// Require an output action to this port; `OFPP_ANY` for no restriction.
    pub out_port: u32,
    /// Require an output to this group; `OFPG_ANY` for no restriction.
    pub out_group: u32,
    /// Require these cookie bits (under `cookie_mask`) to match.
    pub cookie: u64,
    pub cookie_mask: u64,
    /// Fields to match.
    #[serde(rename = "match")]
    pub match_: Match,
}

impl FlowStatsRequest {
    /// Bytes before the match.
    pub const FIXED_LEN: usize = 32;

    /// Parses the request from `r`; the match and its padding end it.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowStatsRequest> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let out_port = r.u32()?;
        let out_group = r.u32()?;
        r.skip(4)?;
        Ok(FlowStatsRequest {
            table_id,
            out_port,
            out_group,
            cookie: r.u64()?,
            cookie_mask: r.u64()?,
            match_: Match::parse(r)?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_u32(self.out_port);
        out.put_u32(self.out_group);
        out.put_zeros(4);
        out.put_u64(self.cookie);
        out.put_u64(self.cookie_mask);
        self.match_.emit(out)
    }
}

/// `ofp_flow_stats` (§7.3.5.2): one flow entry and its counters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowStats {
    pub table_id: u8,
    /// Time the flow entry has been alive: seconds, and nanoseconds beyond them.
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub priority: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// `OFPFF_*` bitmap.
    pub flags: u16,
    pub cookie: u64,
    pub packet_count: u64,
    pub byte_count: u64,
    #[serde(rename = "match")]
    pub match_: Match,
    pub instructions: Vec<Instruction>,
}

impl FlowStats {
    /// Bytes before the match.
    pub const FIXED_LEN: usize = 48;
    /// The smallest entry: the fixed part and an empty match padded to 8.
    pub const MIN_LEN: usize = 56;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowStats> {
        // §7.3.5.2, ofp_flow_stats: "uint16_t length; /* Length of this entry. */";
        // the entry holds the fixed part, the padded match and the instructions.
        let mut e = entry(r, "ofp_flow_stats", 0, Self::MIN_LEN)?;
        e.skip(2)?;
        let table_id = e.u8()?;
        e.skip(1)?;
        let duration_sec = e.u32()?;
        let duration_nsec = e.u32()?;
        let priority = e.u16()?;
        let idle_timeout = e.u16()?;
        let hard_timeout = e.u16()?;
        let flags = e.u16()?;
        e.skip(4)?;
        Ok(FlowStats {
            table_id,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            flags,
            cookie: e.u64()?,
            packet_count: e.u64()?,
            byte_count: e.u64()?,
            match_: Match::parse(&mut e)?,
            // The instructions fill the rest of the entry.
            instructions: Instruction::parse_list(&mut e)?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_flow_stats");
        out.put_u8(self.table_id);
        out.put_zeros(1);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.priority);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u16(self.flags);
        out.put_zeros(4);
        out.put_u64(self.cookie);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        self.match_.emit(out)?;
        Instruction::emit_list(&self.instructions, out)?;
        len.finish(out)?;
        Ok(())
    }
}
