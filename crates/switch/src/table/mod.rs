//! Flow tables (owned by helper `table`; this file gives the interface the agent codes
//! against).

use std::time::{Duration, Instant};

use openflow::model::{FlowModCommand, PortNo};
use openflow::ofctl::{Flow, FlowAction, FlowEntry};
use openflow::Version;

use crate::Sink;

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
    /// Delete and (1.3) modify only flows with an output to this port.
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
}

/// Why a flow left its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemovedReason {
    IdleTimeout,
    HardTimeout,
    Delete,
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

/// The switch's flow tables.
pub struct Pipeline {
    _private: (),
}

impl Pipeline {
    pub fn new(_config: PipelineConfig) -> Pipeline {
        unimplemented!("helper table")
    }

    /// Applies a FLOW_MOD. Flows it removes (delete) are appended to `removed`.
    pub fn flow_mod(
        &mut self,
        _req: &FlowModRequest<'_>,
        _now: Instant,
        _removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), FlowModError> {
        unimplemented!("helper table")
    }

    /// Runs a frame received on `in_port` through the tables; outputs go to `sink`.
    /// No allocation.
    pub fn process(&mut self, _in_port: u32, _frame: &[u8], _now: Instant, _sink: &mut impl Sink) {
        unimplemented!("helper table")
    }

    /// Applies an action list to a frame (PACKET_OUT); an output to `PortNo::Table` runs
    /// the frame through the tables.
    pub fn execute(
        &mut self,
        _actions: &[FlowAction],
        _in_port: u32,
        _frame: &[u8],
        _now: Instant,
        _sink: &mut impl Sink,
    ) {
        unimplemented!("helper table")
    }

    /// Removes flows whose idle or hard timeout has passed, appending them to `removed`.
    pub fn expire(&mut self, _now: Instant, _removed: &mut Vec<RemovedFlow>) {
        unimplemented!("helper table")
    }

    /// The flows a statistics request selects, with their counters.
    pub fn flows(&self, _filter: &StatsFilter<'_>, _now: Instant) -> Vec<FlowEntry> {
        unimplemented!("helper table")
    }

    /// Per-table counters, for table statistics.
    pub fn table_stats(&self) -> Vec<TableStats> {
        unimplemented!("helper table")
    }

    /// Flows in all tables.
    pub fn len(&self) -> usize {
        unimplemented!("helper table")
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
