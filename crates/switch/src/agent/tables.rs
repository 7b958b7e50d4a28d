//! What the agent asks of the flow tables: [`Tables`], which [`Pipeline`] implements by
//! forwarding each call. The agent is generic over it so that its protocol logic can be
//! tested on its own; the switch always runs on [`Pipeline`].

use std::time::Instant;

use openflow::ofctl::{FlowAction, FlowEntry};

use crate::table::{
    FlowModError, FlowModRequest, GroupDesc, GroupModError, GroupModRequest, GroupStats, Pipeline,
    PipelineConfig, RemovedFlow, StatsFilter, TableStats,
};
use crate::Sink;

/// The flow tables as the agent uses them (the methods of [`Pipeline`]).
pub trait Tables {
    fn create(config: PipelineConfig) -> Self
    where
        Self: Sized;
    fn flow_mod(
        &mut self,
        req: &FlowModRequest<'_>,
        now: Instant,
        removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), FlowModError>;
    fn process<S: Sink>(&mut self, in_port: u32, frame: &[u8], now: Instant, sink: &mut S);
    fn execute<S: Sink>(
        &mut self,
        actions: &[FlowAction],
        in_port: u32,
        frame: &[u8],
        now: Instant,
        sink: &mut S,
    );
    fn expire(&mut self, now: Instant, removed: &mut Vec<RemovedFlow>);
    fn flows(&self, filter: &StatsFilter<'_>, now: Instant) -> Vec<FlowEntry>;
    fn table_stats(&self) -> Vec<TableStats>;
    fn group_mod(
        &mut self,
        req: &GroupModRequest<'_>,
        now: Instant,
        removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), GroupModError>;
    fn has_group(&self, id: u32) -> bool;
    fn group_stats(&self, id: u32, now: Instant) -> Vec<GroupStats>;
    fn group_desc(&self) -> Vec<GroupDesc>;
}

impl Tables for Pipeline {
    fn create(config: PipelineConfig) -> Self {
        Pipeline::new(config)
    }

    fn flow_mod(
        &mut self,
        req: &FlowModRequest<'_>,
        now: Instant,
        removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), FlowModError> {
        Pipeline::flow_mod(self, req, now, removed)
    }

    #[inline]
    fn process<S: Sink>(&mut self, in_port: u32, frame: &[u8], now: Instant, sink: &mut S) {
        Pipeline::process(self, in_port, frame, now, sink)
    }

    fn execute<S: Sink>(
        &mut self,
        actions: &[FlowAction],
        in_port: u32,
        frame: &[u8],
        now: Instant,
        sink: &mut S,
    ) {
        Pipeline::execute(self, actions, in_port, frame, now, sink)
    }

    fn expire(&mut self, now: Instant, removed: &mut Vec<RemovedFlow>) {
        Pipeline::expire(self, now, removed)
    }

    fn flows(&self, filter: &StatsFilter<'_>, now: Instant) -> Vec<FlowEntry> {
        Pipeline::flows(self, filter, now)
    }

    fn table_stats(&self) -> Vec<TableStats> {
        Pipeline::table_stats(self)
    }

    fn group_mod(
        &mut self,
        req: &GroupModRequest<'_>,
        now: Instant,
        removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), GroupModError> {
        Pipeline::group_mod(self, req, now, removed)
    }

    fn has_group(&self, id: u32) -> bool {
        Pipeline::has_group(self, id)
    }

    fn group_stats(&self, id: u32, now: Instant) -> Vec<GroupStats> {
        Pipeline::group_stats(self, id, now)
    }

    fn group_desc(&self) -> Vec<GroupDesc> {
        Pipeline::group_desc(self)
    }
}
