//! A stand-in for the flow tables in the agent's tests, matching on `in_port` only:
//! enough to see which requests reach the tables and what comes back. The tables'
//! own semantics are tested in `table`; tests of both together use [`Pipeline`].
//!
//! [`Pipeline`]: crate::table::Pipeline

use std::time::{Duration, Instant};

use openflow::header::Version;
use openflow::ofctl::{Flow, FlowAction, FlowCounters, FlowEntry, FlowModCommand, PortNo};

use super::tables::Tables;
use crate::table::{
    FlowModError, FlowModRequest, GroupDesc, GroupModError, GroupModRequest, GroupStats,
    PipelineConfig, RemovedFlow, RemovedReason, StatsFilter, TableStats,
};
use crate::{Egress, Sink, ToController};

pub struct FakeTables {
    config: PipelineConfig,
    pub flows: Vec<Flow>,
}

impl FakeTables {
    fn run<S: Sink>(
        &mut self,
        actions: &[FlowAction],
        in_port: u32,
        frame: &[u8],
        now: Instant,
        sink: &mut S,
    ) {
        for a in actions {
            match a {
                FlowAction::Output {
                    port: PortNo::Table,
                } => self.process(in_port, frame, now, sink),
                FlowAction::Output { port } => {
                    if let Some(e) = Egress::from_port(*port) {
                        sink.emit(e, in_port, frame);
                    }
                }
                FlowAction::Controller { max_len } => sink.emit(
                    Egress::Controller {
                        max_len: *max_len,
                        reason: ToController::Action,
                        table_id: 0,
                        cookie: 0,
                    },
                    in_port,
                    frame,
                ),
                _ => {}
            }
        }
    }
}

impl Tables for FakeTables {
    fn create(config: PipelineConfig) -> Self {
        FakeTables {
            config,
            flows: Vec::new(),
        }
    }

    fn flow_mod(
        &mut self,
        req: &FlowModRequest<'_>,
        _now: Instant,
        removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), FlowModError> {
        let f = req.flow;
        match req.command {
            FlowModCommand::Add => {
                if f.table >= self.config.tables {
                    return Err(FlowModError::BadTableId(f.table));
                }
                if f.flags.check_overlap && self.flows.iter().any(|g| g.priority == f.priority) {
                    return Err(FlowModError::Overlap);
                }
                if let Some(g) = self
                    .flows
                    .iter_mut()
                    .find(|g| g.priority == f.priority && g.matching == f.matching)
                {
                    *g = f.clone();
                    return Ok(());
                }
                if self.flows.len() >= self.config.max_flows {
                    return Err(FlowModError::TableFull(self.config.max_flows));
                }
                self.flows.push(f.clone());
            }
            FlowModCommand::Delete | FlowModCommand::DeleteStrict => {
                let all = f.matching == Default::default();
                let (gone, kept) = std::mem::take(&mut self.flows)
                    .into_iter()
                    .partition(|g| all || g.matching == f.matching);
                self.flows = kept;
                removed.extend(gone.into_iter().map(|flow: Flow| RemovedFlow {
                    flow,
                    reason: RemovedReason::Delete,
                    duration: Duration::ZERO,
                    packets: 0,
                    bytes: 0,
                }));
            }
            _ => return Err(FlowModError::Unsupported("modify in the fake")),
        }
        Ok(())
    }

    fn process<S: Sink>(&mut self, in_port: u32, frame: &[u8], now: Instant, sink: &mut S) {
        let hit = self
            .flows
            .iter()
            .filter(|f| {
                f.matching
                    .in_port
                    .is_none_or(|p| p == PortNo::Physical(in_port))
            })
            .max_by_key(|f| f.priority)
            .map(|f| f.actions.clone());
        match hit {
            Some(actions) => self.run(&actions, in_port, frame, now, sink),
            None if self.config.version == Version::V1_0 => sink.emit(
                Egress::Controller {
                    max_len: 0xffff,
                    reason: ToController::NoMatch,
                    table_id: 0,
                    cookie: 0,
                },
                in_port,
                frame,
            ),
            None => {}
        }
    }

    fn execute<S: Sink>(
        &mut self,
        actions: &[FlowAction],
        in_port: u32,
        frame: &[u8],
        now: Instant,
        sink: &mut S,
    ) {
        self.run(actions, in_port, frame, now, sink)
    }

    fn expire(&mut self, _now: Instant, _removed: &mut Vec<RemovedFlow>) {}

    fn flows(&self, filter: &StatsFilter<'_>, _now: Instant) -> Vec<FlowEntry> {
        self.flows
            .iter()
            .filter(|f| filter.table.is_none_or(|t| t == f.table))
            .map(|f| FlowEntry {
                flow: f.clone(),
                counters: Some(FlowCounters {
                    duration_sec: 0,
                    duration_nsec: 0,
                    packet_count: 0,
                    byte_count: 0,
                }),
            })
            .collect()
    }

    fn table_stats(&self) -> Vec<TableStats> {
        (0..self.config.tables)
            .map(|t| TableStats {
                table_id: t,
                active: self.flows.iter().filter(|f| f.table == t).count() as u32,
                max_entries: self.config.max_flows as u32,
                ..TableStats::default()
            })
            .collect()
    }

    // Groups are the pipeline's (tested with it); the fake has none.
    fn group_mod(
        &mut self,
        _req: &GroupModRequest<'_>,
        _now: Instant,
        _removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), GroupModError> {
        Err(GroupModError {
            code: crate::table::groups::code::BAD_TYPE,
            why: "no groups in the fake".into(),
        })
    }

    fn has_group(&self, _id: u32) -> bool {
        false
    }

    fn group_stats(&self, _id: u32, _now: Instant) -> Vec<GroupStats> {
        Vec::new()
    }

    fn group_desc(&self) -> Vec<GroupDesc> {
        Vec::new()
    }
}
