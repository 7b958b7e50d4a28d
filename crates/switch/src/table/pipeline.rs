//! The pipeline: flows stored in a slab, one [`Classifier`] per table, FLOW_MOD
//! semantics of 1.0 and 1.3, and the walk of a frame through the tables.

use std::time::Instant;

use openflow::model::{FlowModCommand, PortNo};
use openflow::ofctl::{Flow, FlowAction, FlowCounters, FlowEntry};
use openflow::Version;

use super::actions::{self, set_kind, ActionSet, Frame};
use super::cache::{self, FlowCache};
use super::classifier::Classifier;
use super::groups::{self, Change, GroupModError, GroupModRequest, Groups};
use super::key::{exact_v10_mask, Key, MatchKey};
use super::{
    FlowModError, FlowModRequest, PipelineConfig, RemovedFlow, RemovedReason, StatsFilter,
    TableStats,
};
use crate::{Egress, Sink, ToController};

/// A flow in its table: what FLOW_MODs, statistics and timeouts read.
struct Stored {
    /// The flow as added (table set, cookie mask cleared), what stats report.
    flow: Flow,
    /// Its match, packed.
    mk: MatchKey,
    created: Instant,
}

/// What a frame reads and writes of the flow it hits, and what the timeout scan reads,
/// in one cache line apart from the rest ([`Stored`]): a table of many flows keeps its
/// hot part small, and `expire` walks these lines in order without touching the rest.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Hot {
    packets: u64,
    bytes: u64,
    /// When a frame last hit the flow (or it was added), in milliseconds since the
    /// pipeline's epoch.
    used_ms: u64,
    cookie: u64,
    /// When the hard timeout ends, in milliseconds since the epoch (`u64::MAX`: no hard
    /// timeout, or a free slot).
    hard_deadline_ms: u64,
    /// The flow's only action, when `simple`.
    action: Option<FlowAction>,
    /// The idle timeout in seconds (0: none, or a free slot).
    idle_s: u16,
    /// At most one action and no other instruction: `action` says it all, and the
    /// frame never reads [`Stored`].
    simple: bool,
    /// 1.3's table-miss flow (priority 0, no field matched): its output to the
    /// controller is a PACKET_IN with reason "no match".
    miss: bool,
}

impl Hot {
    /// A free slot: never hit, never expiring.
    const FREE: Hot = Hot {
        packets: 0,
        bytes: 0,
        used_ms: 0,
        cookie: 0,
        hard_deadline_ms: u64::MAX,
        action: None,
        idle_s: 0,
        simple: false,
        miss: false,
    };

    /// A flow added at `now_ms`.
    fn new(f: &Flow, miss: bool, now_ms: u64) -> Hot {
        let simple = f.actions.len() <= 1 && !f.has_instructions();
        Hot {
            packets: 0,
            bytes: 0,
            used_ms: now_ms,
            cookie: f.cookie,
            hard_deadline_ms: match f.hard_timeout {
                0 => u64::MAX,
                t => now_ms + u64::from(t) * 1000,
            },
            action: if simple {
                f.actions.first().copied()
            } else {
                None
            },
            idle_s: f.idle_timeout,
            simple,
            miss,
        }
    }
}

struct Table {
    classifier: Classifier,
    /// Flows in this table.
    count: usize,
    lookups: u64,
    matched: u64,
}

/// The switch's flow tables.
pub struct Pipeline {
    config: PipelineConfig,
    v10: bool,
    tables: Vec<Table>,
    /// Every flow, by id (a flow's id is its index; freed slots are reused).
    flows: Vec<Option<Stored>>,
    /// The per-frame part of each flow, by id.
    hot: Vec<Hot>,
    /// The origin of `Hot::used_ms`.
    epoch: Instant,
    /// Recent lookups of tables with several wildcard subtables.
    cache: FlowCache,
    free: Vec<u32>,
    /// Scratch frame buffers (one per frame in flight: a PACKET_OUT to TABLE has two).
    scratch: Vec<Vec<u8>>,
    /// The group table (1.3).
    groups: Groups,
    /// The scratch buffer of a group's bucket (its own copy of the frame).
    bucket_buf: Vec<u8>,
}

/// What an action list needs to know about where it runs.
#[derive(Clone, Copy)]
struct Ctx {
    in_port: u32,
    table_id: u8,
    cookie: u64,
    reason: ToController,
    v10: bool,
}

/// What a group action needs: the groups, and a buffer for a bucket's copy.
struct Env<'a> {
    groups: &'a Groups,
    buf: &'a mut Vec<u8>,
}

/// Groups in a switch at most.
pub const MAX_GROUPS: usize = 65_536;

impl Pipeline {
    pub fn new(config: PipelineConfig) -> Pipeline {
        let v10 = config.version == Version::V1_0;
        let n = if v10 { 1 } else { config.tables.max(1) };
        let tables = (0..n)
            .map(|_| Table {
                classifier: Classifier::new(v10.then(exact_v10_mask)),
                count: 0,
                lookups: 0,
                matched: 0,
            })
            .collect();
        Pipeline {
            config,
            v10,
            tables,
            flows: Vec::new(),
            hot: Vec::new(),
            epoch: Instant::now(),
            cache: FlowCache::new(),
            free: Vec::new(),
            scratch: vec![actions::scratch(), actions::scratch()],
            groups: Groups::new(MAX_GROUPS),
            bucket_buf: actions::scratch(),
        }
    }

    /// How the pipeline was built.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// Applies a FLOW_MOD. Flows it removes (delete) are appended to `removed`.
    pub fn flow_mod(
        &mut self,
        req: &FlowModRequest<'_>,
        now: Instant,
        removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), FlowModError> {
        let f = req.flow;
        match req.command {
            FlowModCommand::Add => {
                self.validate(f)?;
                self.add(f, now)
            }
            FlowModCommand::Modify | FlowModCommand::ModifyStrict => {
                self.validate(f)?;
                let strict = req.command == FlowModCommand::ModifyStrict;
                let mk = MatchKey::from_match(&f.matching);
                // out_port and out_group select for delete only (spec 1.0.0 §5.3.3,
                // 1.3.5 §7.3.4.1: "ignored by ... MODIFY and MODIFY_STRICT").
                let ids = self.select(Some(f.table), &mk, strict.then_some(f.priority), None, f);
                if ids.is_empty() {
                    // 1.0: "If no flow currently residing in the table matches, the
                    // MODIFY acts like an ADD" (spec 1.0.0 §4.6); 1.3 adds nothing.
                    return if self.v10 { self.add(f, now) } else { Ok(()) };
                }
                for id in ids {
                    let s = self.flows[id as usize].as_mut().expect("selected flow");
                    s.flow.actions = f.actions.clone();
                    let h = &mut self.hot[id as usize];
                    if !self.v10 {
                        s.flow.clear_actions = f.clear_actions;
                        s.flow.write_actions = f.write_actions.clone();
                        s.flow.write_metadata = f.write_metadata;
                        s.flow.goto_table = f.goto_table;
                        s.flow.meter = f.meter;
                        if f.flags.reset_counts {
                            h.packets = 0;
                            h.bytes = 0;
                        }
                    }
                    // Only the instructions change (counters and timeouts stay).
                    *h = Hot {
                        packets: h.packets,
                        bytes: h.bytes,
                        used_ms: h.used_ms,
                        hard_deadline_ms: h.hard_deadline_ms,
                        ..Hot::new(&s.flow, h.miss, 0)
                    };
                }
                Ok(())
            }
            FlowModCommand::Delete | FlowModCommand::DeleteStrict => {
                let all = self.v10 || f.table == 0xff;
                if !all && usize::from(f.table) >= self.tables.len() {
                    return Err(FlowModError::BadTableId(f.table));
                }
                let strict = req.command == FlowModCommand::DeleteStrict;
                let mk = MatchKey::from_match(&f.matching);
                let out = Out {
                    port: req.out_port.filter(|p| *p != PortNo::Any),
                    group: req.out_group.filter(|g| *g != 0xffff_ffff),
                };
                let table = (!all).then_some(f.table);
                let ids = self.select(table, &mk, strict.then_some(f.priority), Some(out), f);
                for id in ids {
                    removed.push(self.take(id, RemovedReason::Delete, now));
                }
                Ok(())
            }
        }
    }

    /// Refuses what this switch cannot do with the flow, before anything changes.
    fn validate(&self, f: &Flow) -> Result<(), FlowModError> {
        let n = self.tables.len();
        if usize::from(f.table) >= n {
            return Err(FlowModError::BadTableId(f.table));
        }
        if let Some(g) = f.goto_table {
            if self.v10 {
                return Err(FlowModError::Unsupported("goto-table in OpenFlow 1.0"));
            }
            if g <= f.table {
                return Err(FlowModError::BadGoto(g));
            }
            if usize::from(g) >= n {
                return Err(FlowModError::BadTableId(g));
            }
        }
        if f.meter.is_some() {
            return Err(FlowModError::Unsupported("meters"));
        }
        let lists = std::iter::once(&f.actions).chain(f.write_actions.as_ref());
        for a in lists.flatten() {
            match a {
                FlowAction::Group { group_id } if !self.groups.contains(*group_id) => {
                    return Err(FlowModError::UnknownGroup(*group_id))
                }
                FlowAction::Output { port } | FlowAction::Enqueue { port, .. }
                    if matches!(port, PortNo::Table | PortNo::Normal | PortNo::Any) =>
                {
                    return Err(FlowModError::Unsupported(
                        "output to TABLE, NORMAL or ANY in a flow",
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn add(&mut self, f: &Flow, now: Instant) -> Result<(), FlowModError> {
        let t = usize::from(f.table);
        let mk = MatchKey::from_match(&f.matching);
        let existing = self.tables[t].classifier.find(&mk, f.priority);
        if f.flags.check_overlap && self.tables[t].classifier.overlaps(&mk, f.priority) {
            return Err(FlowModError::Overlap);
        }
        if existing.is_none() && self.tables[t].count >= self.config.max_flows {
            return Err(FlowModError::TableFull(self.config.max_flows));
        }
        // The replaced flow's counters: 1.0 clears them ("including its counters",
        // spec 1.0.0 §4.6); 1.3 copies them unless reset_counts (spec 1.3.5 §6.4).
        let (packets, bytes) = match existing {
            Some(id) => {
                let (_, old) = self.remove(id);
                if self.v10 || f.flags.reset_counts {
                    (0, 0)
                } else {
                    (old.packets, old.bytes)
                }
            }
            None => (0, 0),
        };
        let mut flow = f.clone();
        flow.cookie_mask = 0;
        let hot = Hot {
            packets,
            bytes,
            ..Hot::new(
                &flow,
                !self.v10 && f.priority == 0 && mk.is_catch_all(),
                self.ms(now),
            )
        };
        let stored = Stored {
            flow,
            mk,
            created: now,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.flows[id as usize] = Some(stored);
                self.hot[id as usize] = hot;
                id
            }
            None => {
                self.flows.push(Some(stored));
                self.hot.push(hot);
                (self.flows.len() - 1) as u32
            }
        };
        let table = &mut self.tables[t];
        table.classifier.insert(&mk, f.priority, id);
        table.count += 1;
        self.cache.invalidate();
        Ok(())
    }

    /// The ids of the flows a modify or delete selects: in `table` (all: `None`),
    /// covered by `mk` (non-strict) or identical to it at `priority` (strict), with the
    /// request's cookie under its mask (1.3), and for a delete with an output to
    /// `out.port`.
    fn select(
        &self,
        table: Option<u8>,
        mk: &MatchKey,
        strict: Option<u16>,
        out: Option<Out>,
        f: &Flow,
    ) -> Vec<u32> {
        let mut ids = Vec::new();
        if let (Some(t), Some(p)) = (table, strict) {
            if let Some(id) = self.tables[usize::from(t)].classifier.find(mk, p) {
                if self.selects(self.flows[id as usize].as_ref().expect("found"), f, out) {
                    ids.push(id);
                }
            }
            return ids;
        }
        for (id, s) in self.flows.iter().enumerate() {
            let Some(s) = s else { continue };
            if table.is_some_and(|t| t != s.flow.table) {
                continue;
            }
            let chosen = match strict {
                Some(p) => s.flow.priority == p && s.mk == *mk,
                None => s.mk.covered_by(mk),
            };
            if chosen && self.selects(s, f, out) {
                ids.push(id as u32);
            }
        }
        ids
    }

    fn selects(&self, s: &Stored, f: &Flow, out: Option<Out>) -> bool {
        if !self.v10 && (s.flow.cookie ^ f.cookie) & f.cookie_mask != 0 {
            return false;
        }
        match out {
            Some(out) => out.selects(&s.flow),
            None => true,
        }
    }

    fn remove(&mut self, id: u32) -> (Stored, Hot) {
        let s = self.flows[id as usize].take().expect("a stored flow");
        let t = &mut self.tables[usize::from(s.flow.table)];
        t.classifier.remove(&s.mk, s.flow.priority, id);
        t.count -= 1;
        self.cache.invalidate();
        self.free.push(id);
        let h = std::mem::replace(&mut self.hot[id as usize], Hot::FREE);
        (s, h)
    }

    /// Removes flow `id`, for `reason`: what FLOW_REMOVED says of it.
    fn take(&mut self, id: u32, reason: RemovedReason, now: Instant) -> RemovedFlow {
        let (s, h) = self.remove(id);
        RemovedFlow {
            duration: now.saturating_duration_since(s.created),
            flow: s.flow,
            reason,
            packets: h.packets,
            bytes: h.bytes,
        }
    }

    /// Table `t`'s flow for `key`: 1.0's exact-match flows first, then the cache when
    /// the table has enough subtables for it to pay, then the classifier.
    #[inline]
    fn lookup(&mut self, t: usize, key: &Key) -> Option<u32> {
        let c = &self.tables[t].classifier;
        if let Some(id) = c.exact(key) {
            return Some(id);
        }
        if c.wildcard_subtables() <= 2 {
            return c.wildcard(key);
        }
        let h = cache::hash(key, t as u8);
        if let Some(id) = self.cache.get(t as u8, key, h) {
            return (id != cache::NONE).then_some(id);
        }
        let found = c.wildcard(key);
        self.cache
            .put(t as u8, key, h, found.unwrap_or(cache::NONE));
        found
    }

    /// `now` in milliseconds since the epoch.
    #[inline]
    fn ms(&self, now: Instant) -> u64 {
        let d = now.saturating_duration_since(self.epoch);
        d.as_secs() * 1000 + u64::from(d.subsec_millis())
    }

    /// Runs a frame received on `in_port` through the tables; outputs go to `sink`.
    /// No allocation.
    pub fn process(&mut self, in_port: u32, frame: &[u8], now: Instant, sink: &mut impl Sink) {
        let mut buf = self.scratch.pop().unwrap_or_else(actions::scratch);
        let mut f = Frame::new(frame, &mut buf);
        self.run(in_port, &mut f, 0, now, sink);
        self.scratch.push(buf);
    }

    fn run(
        &mut self,
        in_port: u32,
        f: &mut Frame<'_>,
        first: u8,
        now: Instant,
        sink: &mut impl Sink,
    ) {
        let v10 = self.v10;
        let mut key = Key::from_frame(f.bytes(), in_port);
        // 1.3's action set, made on the first write-actions (it is a few hundred
        // bytes: most frames never need one).
        let mut set: Option<ActionSet> = None;
        let mut t = usize::from(first);
        let len = f.bytes().len() as u64;
        let now_ms = self.ms(now);
        loop {
            let found = self.lookup(t, &key);
            let table = &mut self.tables[t];
            table.lookups += 1;
            let Some(id) = found else {
                if v10 {
                    let c = Egress::Controller {
                        max_len: 0xffff,
                        reason: ToController::NoMatch,
                        table_id: 0,
                        cookie: 0,
                    };
                    sink.emit(c, in_port, f.bytes());
                }
                // 1.3 with no table-miss flow: dropped, the action set with it.
                return;
            };
            table.matched += 1;
            let h = &mut self.hot[id as usize];
            h.packets += 1;
            h.bytes += len;
            h.used_ms = now_ms;
            let ctx = Ctx {
                in_port,
                table_id: t as u8,
                cookie: h.cookie,
                reason: if h.miss {
                    ToController::NoMatch
                } else {
                    ToController::Action
                },
                v10,
            };
            let mut env = Env {
                groups: &self.groups,
                buf: &mut self.bucket_buf,
            };
            if h.simple {
                // One action or none, no instruction: the end of the pipeline.
                if let Some(a) = &h.action {
                    if !apply_list(std::slice::from_ref(a), f, &ctx, Some(&mut env), sink) {
                        return;
                    }
                }
                if let Some(set) = &set {
                    apply_set(set, f, &ctx, &mut env, sink);
                }
                return;
            }
            let s = self.flows[id as usize].as_ref().expect("a classified flow");
            let before = f.generation();
            if !apply_list(&s.flow.actions, f, &ctx, Some(&mut env), sink) {
                return;
            }
            if v10 {
                return;
            }
            if s.flow.clear_actions {
                set = None;
            }
            if let Some(w) = &s.flow.write_actions {
                let set = set.get_or_insert_with(ActionSet::default);
                for a in w {
                    write_action(set, a);
                }
            }
            if let Some(m) = s.flow.write_metadata {
                let mask = m.mask.unwrap_or(u64::MAX);
                key.set_metadata((key.metadata() & !mask) | (m.value & mask));
            }
            match s.flow.goto_table {
                Some(g) => {
                    if f.generation() != before {
                        // Later tables match the frame as the actions left it.
                        let meta = key.metadata();
                        key = Key::from_frame(f.bytes(), in_port);
                        key.set_metadata(meta);
                    }
                    t = usize::from(g);
                }
                None => {
                    if let Some(set) = &set {
                        apply_set(set, f, &ctx, &mut env, sink);
                    }
                    return;
                }
            }
        }
    }

    /// Applies an action list to a frame (PACKET_OUT); an output to `PortNo::Table` runs
    /// the frame through the tables.
    pub fn execute(
        &mut self,
        actions: &[FlowAction],
        in_port: u32,
        frame: &[u8],
        now: Instant,
        sink: &mut impl Sink,
    ) {
        let mut buf = self.scratch.pop().unwrap_or_else(actions::scratch);
        let mut f = Frame::new(frame, &mut buf);
        let ctx = Ctx {
            in_port,
            table_id: 0xff,
            cookie: u64::MAX,
            reason: ToController::Action,
            v10: self.v10,
        };
        for a in actions {
            match a {
                FlowAction::Output {
                    port: PortNo::Table,
                } => {
                    let mut buf2 = self.scratch.pop().unwrap_or_else(actions::scratch);
                    let mut f2 = Frame::new(f.bytes(), &mut buf2);
                    self.run(in_port, &mut f2, 0, now, sink);
                    self.scratch.push(buf2);
                }
                a => {
                    let mut env = Env {
                        groups: &self.groups,
                        buf: &mut self.bucket_buf,
                    };
                    if !apply_list(std::slice::from_ref(a), &mut f, &ctx, Some(&mut env), sink) {
                        break;
                    }
                }
            }
        }
        self.scratch.push(buf);
    }

    /// Applies a GROUP_MOD (1.3). Deleting a group removes the flows that forward to it,
    /// appended to `removed` (reason [`RemovedReason::GroupDelete`]).
    pub fn group_mod(
        &mut self,
        req: &GroupModRequest<'_>,
        now: Instant,
        removed: &mut Vec<RemovedFlow>,
    ) -> Result<(), GroupModError> {
        if let Change::Deleted(gone) = self.groups.group_mod(req, now)? {
            let ids: Vec<u32> = self
                .flows
                .iter()
                .enumerate()
                .filter_map(|(id, s)| {
                    let s = s.as_ref()?;
                    gone.iter()
                        .any(|g| {
                            Out {
                                port: None,
                                group: Some(*g),
                            }
                            .selects(&s.flow)
                        })
                        .then_some(id as u32)
                })
                .collect();
            for id in ids {
                removed.push(self.take(id, RemovedReason::GroupDelete, now));
            }
        }
        Ok(())
    }

    /// Whether group `id` exists.
    pub fn has_group(&self, id: u32) -> bool {
        self.groups.contains(id)
    }

    /// Group statistics of `id` (`OFPG_ALL`: every group).
    pub fn group_stats(&self, id: u32, now: Instant) -> Vec<groups::GroupStats> {
        let refs = |g: u32| {
            let out = Out {
                port: None,
                group: Some(g),
            };
            self.flows
                .iter()
                .flatten()
                .filter(|s| out.selects(&s.flow))
                .count() as u32
        };
        self.groups.stats(id, now, refs)
    }

    /// Every group's description.
    pub fn group_desc(&self) -> Vec<groups::GroupDesc> {
        self.groups.desc()
    }

    /// Groups in the table.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The flow id table `table`'s classifier picks for `key`, with no side effect (the
    /// lookup alone, for benchmarks and tests).
    #[doc(hidden)]
    pub fn classify(&self, table: u8, key: &Key) -> Option<u32> {
        self.tables[usize::from(table)].classifier.lookup(key)
    }

    /// Removes flows whose idle or hard timeout has passed, appending them to `removed`.
    pub fn expire(&mut self, now: Instant, removed: &mut Vec<RemovedFlow>) {
        let now_ms = self.ms(now);
        for id in 0..self.hot.len() {
            let h = &self.hot[id];
            let reason = if h.hard_deadline_ms <= now_ms {
                RemovedReason::HardTimeout
            } else if h.idle_s > 0 && now_ms.saturating_sub(h.used_ms) >= u64::from(h.idle_s) * 1000
            {
                RemovedReason::IdleTimeout
            } else {
                continue;
            };
            if self.flows[id].is_none() {
                continue;
            }
            removed.push(self.take(id as u32, reason, now));
        }
    }

    /// The flows a statistics request selects, with their counters.
    pub fn flows(&self, filter: &StatsFilter<'_>, now: Instant) -> Vec<FlowEntry> {
        let mk = MatchKey::from_match(filter.matching);
        let out = Out {
            port: filter.out_port.filter(|p| *p != PortNo::Any),
            group: filter.out_group.filter(|g| *g != 0xffff_ffff),
        };
        let table = filter.table.filter(|t| *t != 0xff);
        self.flows
            .iter()
            .zip(&self.hot)
            .filter_map(|(s, h)| Some((s.as_ref()?, h)))
            .filter(|(s, _)| table.is_none_or(|t| t == s.flow.table))
            .filter(|(s, _)| s.mk.covered_by(&mk))
            .filter(|(s, _)| (s.flow.cookie ^ filter.cookie) & filter.cookie_mask == 0)
            .filter(|(s, _)| out.selects(&s.flow))
            .map(|(s, h)| {
                let d = now.saturating_duration_since(s.created);
                FlowEntry {
                    flow: s.flow.clone(),
                    counters: Some(FlowCounters {
                        duration_sec: d.as_secs() as u32,
                        duration_nsec: d.subsec_nanos(),
                        packet_count: h.packets,
                        byte_count: h.bytes,
                    }),
                }
            })
            .collect()
    }

    /// Per-table counters, for table statistics.
    pub fn table_stats(&self) -> Vec<TableStats> {
        self.tables
            .iter()
            .enumerate()
            .map(|(i, t)| TableStats {
                table_id: i as u8,
                active: t.count as u32,
                lookups: t.lookups,
                matched: t.matched,
                max_entries: self.config.max_flows.min(u32::MAX as usize) as u32,
            })
            .collect()
    }

    /// Flows in all tables.
    pub fn len(&self) -> usize {
        self.tables.iter().map(|t| t.count).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A delete's (or flow stats') output filter.
#[derive(Clone, Copy)]
struct Out {
    port: Option<PortNo>,
    group: Option<u32>,
}

impl Out {
    fn selects(&self, f: &Flow) -> bool {
        let lists = || std::iter::once(&f.actions).chain(f.write_actions.as_ref());
        let port_ok = match self.port {
            None => true,
            Some(p) => lists().flatten().any(|a| match a {
                FlowAction::Output { port } | FlowAction::Enqueue { port, .. } => *port == p,
                FlowAction::Controller { .. } => p == PortNo::Controller,
                _ => false,
            }),
        };
        let group_ok = match self.group {
            None => true,
            Some(g) => lists()
                .flatten()
                .any(|a| matches!(a, FlowAction::Group { group_id } if *group_id == g)),
        };
        port_ok && group_ok
    }
}

/// Applies actions in order. False when the frame is dropped (dec-TTL of a TTL of 1).
/// A group action runs its bucket(s) with `env` (a bucket's own list has none).
fn apply_list(
    list: &[FlowAction],
    f: &mut Frame<'_>,
    ctx: &Ctx,
    mut env: Option<&mut Env<'_>>,
    sink: &mut impl Sink,
) -> bool {
    for a in list {
        match a {
            FlowAction::Output { port } | FlowAction::Enqueue { port, .. } => {
                output(*port, 0xffff, f, ctx, sink)
            }
            FlowAction::Controller { max_len } => {
                output(PortNo::Controller, *max_len, f, ctx, sink)
            }
            FlowAction::Group { group_id } => {
                if let Some(env) = env.as_deref_mut() {
                    apply_group(*group_id, f, ctx, env, sink);
                }
            }
            FlowAction::SetQueue { .. } => {}
            FlowAction::PushVlan { ethertype } => f.push_vlan_13(*ethertype),
            FlowAction::PopVlan => f.pop_vlan(),
            FlowAction::Set(sf) => f.set_field(sf, ctx.v10),
            FlowAction::DecTtl => {
                if !f.dec_ttl() {
                    return false;
                }
            }
        }
    }
    true
}

fn output(port: PortNo, max_len: u16, f: &Frame<'_>, ctx: &Ctx, sink: &mut impl Sink) {
    let e = match Egress::from_port(port) {
        Some(Egress::Controller { .. }) => Egress::Controller {
            max_len,
            reason: ctx.reason,
            table_id: ctx.table_id,
            cookie: ctx.cookie,
        },
        Some(e) => e,
        None => return,
    };
    sink.emit(e, ctx.in_port, f.bytes());
}

/// Merges an action into the action set (write-actions): one per kind, the later one
/// replacing the earlier.
fn write_action(set: &mut ActionSet, a: &FlowAction) {
    match a {
        FlowAction::Output { .. } | FlowAction::Controller { .. } => set.output = Some(*a),
        FlowAction::Enqueue { port, queue } => {
            set.queue = Some(*queue);
            set.output = Some(FlowAction::Output { port: *port });
        }
        FlowAction::SetQueue { queue } => set.queue = Some(*queue),
        FlowAction::PushVlan { ethertype } => set.push_vlan = Some(*ethertype),
        FlowAction::PopVlan => set.pop_vlan = true,
        FlowAction::Set(sf) => set.sets[set_kind(sf)] = Some(*sf),
        FlowAction::DecTtl => set.dec_ttl = true,
        FlowAction::Group { group_id } => set.group = Some(*group_id),
    }
}

/// Runs group `id` on a frame: each bucket (type all) or the one chosen (select,
/// indirect) on its own copy of the frame as it is now, so that one bucket's writes
/// are not another's, nor the rest of the pipeline's.
fn apply_group(id: u32, f: &Frame<'_>, ctx: &Ctx, env: &mut Env<'_>, sink: &mut impl Sink) {
    let Some(g) = env.groups.get(id) else {
        // Deleted groups take their flows with them; a PACKET_OUT's is checked.
        return;
    };
    let len = f.bytes().len() as u64;
    g.packets.set(g.packets.get() + 1);
    g.bytes.set(g.bytes.get() + len);
    let mut run = |b: &groups::GroupBucket| {
        b.packets.set(b.packets.get() + 1);
        b.bytes.set(b.bytes.get() + len);
        let mut copy = Frame::new(f.bytes(), env.buf);
        apply_list(&b.actions, &mut copy, ctx, None, sink);
    };
    match g.kind {
        groups::Kind::All => g.buckets.iter().for_each(run),
        groups::Kind::Indirect => g.buckets.iter().take(1).for_each(run),
        groups::Kind::Select => {
            // The flow's fields pick the bucket: every frame of a flow takes the same.
            let key = Key::from_frame(f.bytes(), ctx.in_port);
            if let Some(b) = g.pick(cache::hash(&key, 0)) {
                run(b);
            }
        }
    }
}

/// Executes the action set in the spec's order (1.3.5 §5.10).
fn apply_set(
    set: &ActionSet,
    f: &mut Frame<'_>,
    ctx: &Ctx,
    env: &mut Env<'_>,
    sink: &mut impl Sink,
) {
    if set.pop_vlan {
        f.pop_vlan();
    }
    if let Some(t) = set.push_vlan {
        f.push_vlan_13(t);
    }
    if set.dec_ttl && !f.dec_ttl() {
        return;
    }
    for sf in set.sets.iter().flatten() {
        f.set_field(sf, false);
    }
    // "If both an output action and a group action are specified in an action set,
    // the output action is ignored and the group action takes precedence."
    if let Some(g) = set.group {
        apply_group(g, f, ctx, env, sink);
    } else if let Some(o) = &set.output {
        apply_list(std::slice::from_ref(o), f, ctx, None, sink);
    }
}
