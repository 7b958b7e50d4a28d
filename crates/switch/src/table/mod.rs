//! Flow tables: what a frame matches and what is done to it.
//!
//! ```text
//! key.rs         the packed lookup key (twelve 64-bit words) built from a frame,
//!                and a flow's match as a value and a mask over it
//! exact.rs       the hash table keyed by masked keys (hashes only the words a
//!                mask uses; no allocation on lookup)
//! classifier.rs  tuple-space search: one hash table per mask, by priority
//! cache.rs       a microflow cache in front of tables with many masks
//! actions.rs     the copy-on-write frame, field writes with checksum fixes,
//!                1.3's action set
//! pipeline.rs    flows and tables, FLOW_MOD semantics, the walk through the tables
//! groups.rs      1.3's group table: GROUP_MOD semantics, all/select/indirect
//! testutil.rs    frames and sinks for tests and the bench (hidden)
//! ```
//!
//! ## A frame's way
//!
//! [`Pipeline::process`] builds the packed key (a short parse for untagged or singly
//! tagged IPv4 and plain EtherTypes, [`packet::FlowKey::extract`] for the rest), looks
//! it up (1.0: the exact-match table first, spec 1.0.0 §3.4; then the microflow cache
//! when the table has more than two wildcard masks; then the tuple-space classifier),
//! counts, and applies the flow's actions to a copy-on-write frame: the received bytes
//! go out as they are until an action writes, then a scratch copy with headroom for
//! pushed tags is written instead. Nothing is allocated per frame (tested:
//! `tests/table_no_alloc.rs`). 1.3 walks the tables with goto-table, applying
//! apply-actions at once, gathering write-actions in the action set (executed in the
//! spec's order at the end) and write-metadata into the key; a later table matches the
//! frame as the earlier actions left it. A 1.0 miss goes to the controller (the agent
//! applies `miss_send_len`); a 1.3 miss without a table-miss flow is dropped.
//!
//! ## FLOW_MOD semantics
//!
//! * Add replaces a flow of identical match and priority (in the same table): 1.0
//!   clears its counters, 1.3 keeps them unless `reset_counts` (spec 1.3.5 §6.4).
//!   `check_overlap` refuses a flow of the same priority some frame would match with
//!   an existing one. A table at `max_flows` refuses a new flow (replacing needs no
//!   room). Every error leaves the tables unchanged.
//! * Modify (non-strict: every flow the request's match covers; strict: identical
//!   match and priority) replaces the instructions, keeps counters (1.3: cleared with
//!   `reset_counts`) and timeouts; 1.0 adds the flow when none is selected, 1.3 does
//!   nothing. The cookie under `cookie_mask` selects too (1.3).
//! * Delete and delete-strict select likewise, plus `out_port` / `out_group`; table
//!   0xff is every table (1.3). Deleted flows are returned for FLOW_REMOVED.
//! * Refused: meters (`Unsupported`), a group that does not exist (`UnknownGroup`),
//!   goto-table backwards (`BadGoto`) or to a missing table, output to
//!   TABLE/NORMAL/ANY in a flow.
//!
//! ## Groups
//!
//! A group action (in apply-actions, or in the action set, where it takes precedence
//! over an output) runs every bucket of an *all* group, one bucket of a *select* group
//! (a hash of the frame's flow fields, weighted) or the one bucket of an *indirect*
//! group, each bucket on its own copy of the frame. See [`groups`].
//!
//! ## Not done
//!
//! Fast-failover groups and chained groups, meters and queues (set-queue and enqueue
//! send out the port, no queueing);
//! MPLS and PBB actions; TTL copy actions; the SCTP checksum (CRC32c) after a port
//! write; behind IPv6 extension headers, port writes are skipped and an address write
//! leaves the transport checksum as it was; 1.0 emergency flows; per-table features
//! (every table matches every field); `OFPC_INVALID_TTL_TO_CONTROLLER` (a dec-TTL
//! that reaches zero drops the frame).

mod actions;
mod cache;
mod classifier;
mod exact;
pub mod groups;
pub mod key;
mod pipeline;
#[doc(hidden)]
pub mod testutil;

#[cfg(test)]
mod group_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tests;

pub use classifier::Classifier;
pub use groups::{GroupDesc, GroupModError, GroupModRequest, GroupStats};
pub use pipeline::{Pipeline, MAX_GROUPS};

use std::time::Duration;

use openflow::model::{FlowModCommand, PortNo};
use openflow::ofctl::Flow;
use openflow::Version;

/// How a pipeline is built.
#[derive(Debug, Clone, Copy)]
pub struct PipelineConfig {
    /// 1.0: one table, exact-match flows take precedence over wildcard ones (spec 1.0.0
    /// §3.4). 1.3: `tables` tables, the table-miss behaviour of 1.3 (drop when there is
    /// no table-miss flow).
    pub version: Version,
    /// How many tables (1 for 1.0).
    pub tables: u8,
    /// Flows per table before an ADD fails with the table-full error.
    pub max_flows: usize,
}

/// A FLOW_MOD as the pipeline takes it.
#[derive(Debug, Clone, Copy)]
pub struct FlowModRequest<'a> {
    pub command: FlowModCommand,
    pub flow: &'a Flow,
    /// Delete only flows with an output to this port (ignored by add and modify, as
    /// both specs say).
    pub out_port: Option<PortNo>,
    /// Delete only flows with a group action for this group (1.3).
    pub out_group: Option<u32>,
}

/// Why a FLOW_MOD was refused; the agent turns it into each version's error message.
/// The tables are unchanged after any error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlowModError {
    #[error("the table is full ({0} flows)")]
    TableFull(usize),
    #[error("no table {0}")]
    BadTableId(u8),
    #[error("overlaps an existing flow of the same priority (check_overlap)")]
    Overlap,
    #[error("goto-table {0} does not go forward")]
    BadGoto(u8),
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    #[error("no group {0}")]
    UnknownGroup(u32),
}

/// Why a flow left its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemovedReason {
    IdleTimeout,
    HardTimeout,
    Delete,
    /// The group the flow forwarded to was deleted (1.3).
    GroupDelete,
}

/// A flow that left its table, with its final counters (FLOW_REMOVED when its
/// `send_flow_rem` flag is set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedFlow {
    pub flow: Flow,
    pub reason: RemovedReason,
    pub duration: Duration,
    pub packets: u64,
    pub bytes: u64,
}

/// A flow or aggregate statistics request's selection.
#[derive(Debug, Clone, Copy)]
pub struct StatsFilter<'a> {
    /// `None`: every table.
    pub table: Option<u8>,
    /// Flows this match covers (non-strict, as delete does).
    pub matching: &'a openflow::ofctl::FlowMatch,
    pub out_port: Option<PortNo>,
    pub out_group: Option<u32>,
    pub cookie: u64,
    pub cookie_mask: u64,
}

/// One table's counters (table statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableStats {
    pub table_id: u8,
    pub active: u32,
    pub lookups: u64,
    pub matched: u64,
    pub max_entries: u32,
}
