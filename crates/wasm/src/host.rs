//! What a guest's imports do: the data of one instance's store.
//!
//! The guest's sends are queued here while an export runs and written to the switch
//! (through its `SwitchCtx`) when it returns, so no borrow of the worker's state
//! lives inside the store. The queues keep their capacity: after the first messages
//! a PACKET_IN queues and sends without allocating on the host's side (a FLOW_MOD's
//! action list is lifted into one small vector, the one allocation left).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use controller::app::Dpid;

use openflow::model::{self, PortNo};

use crate::bindings::pharos::app::{host, types as wit};
use crate::convert;

/// A send the guest queued.
pub(crate) enum Queued {
    /// A FLOW_MOD (its actions are `Outbox::actions[range]`).
    FlowMod(model::FlowMod<'static>, Range<usize>),
    /// A PACKET_OUT of bytes the guest made: in port, actions, bytes.
    PacketOut(PortNo, Range<usize>, Range<usize>),
    /// The PACKET_IN being handled, through these actions.
    Forward(Range<usize>),
    /// A BARRIER_REQUEST.
    Barrier,
}

/// The sends queued by one export call, in order.
#[derive(Default)]
pub(crate) struct Outbox {
    /// The sends, in order.
    pub(crate) queued: Vec<Queued>,
    /// Their actions, one range each.
    pub(crate) actions: Vec<model::Action>,
    /// The bytes of their PACKET_OUTs, one range each.
    pub(crate) bytes: Vec<u8>,
}

impl Outbox {
    fn actions(&mut self, actions: &[wit::Action]) -> Range<usize> {
        let start = self.actions.len();
        self.actions.extend(actions.iter().map(convert::action));
        start..self.actions.len()
    }

    pub(crate) fn clear(&mut self) {
        self.queued.clear();
        self.actions.clear();
        self.bytes.clear();
    }

    fn flow_mod(&mut self, fm: &wit::FlowMod) {
        let range = self.actions(&fm.actions);
        let head = convert::flow_mod(fm);
        self.queued.push(Queued::FlowMod(head, range));
    }

    fn packet_out(&mut self, po: &wit::PacketOut) {
        let actions = self.actions(&po.actions);
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&po.data);
        let bytes = start..self.bytes.len();
        let in_port = convert::port(po.in_port);
        self.queued.push(Queued::PacketOut(in_port, actions, bytes));
    }
}

/// A switch's PACKET_INs of one turn, for a batching app (`packet-ins`): kept in the
/// app's slot for the switch while the turn runs, in the store during the call.
#[derive(Default)]
pub(crate) struct Batch {
    /// The PACKET_INs as the guest gets them (`batch::RECORD` bytes each).
    pub(crate) records: Vec<u8>,
    /// For each: its buffer id, its in port, its bytes in `bytes` (to forward it).
    pub(crate) meta: Vec<(Option<u32>, PortNo, Range<usize>)>,
    /// Their bytes, one after the other.
    pub(crate) bytes: Vec<u8>,
}

impl Batch {
    pub(crate) fn len(&self) -> usize {
        self.meta.len()
    }

    /// Empties it, keeping the capacity.
    pub(crate) fn clear(&mut self) {
        self.records.clear();
        self.meta.clear();
        self.bytes.clear();
    }

    /// The PACKET_IN at `index` sent through `actions` (none past the end).
    pub(crate) fn packet_out<'a>(
        &'a self,
        index: u32,
        actions: &'a [model::Action],
    ) -> Option<model::PacketOut<'a>> {
        let (buffer_id, in_port, bytes) = self.meta.get(index as usize)?;
        Some(match buffer_id {
            Some(id) => model::PacketOut::buffered(*id, *in_port, actions),
            None => model::PacketOut::unbuffered(&self.bytes[bytes.clone()], *in_port, actions),
        })
    }
}

/// The memory of all of an app's instances, against its cap.
#[derive(Debug)]
pub(crate) struct MemoryAccount {
    /// Bytes of linear memory the app's instances hold together.
    pub(crate) used: AtomicUsize,
    /// The most they may hold.
    pub(crate) cap: usize,
}

/// One instance's store data.
pub(crate) struct HostState {
    /// The app's name (logs).
    pub(crate) app: &'static str,
    /// The switch the running export is for (logs).
    pub(crate) dpid: Dpid,
    /// Sends queued by the running export.
    pub(crate) outbox: Outbox,
    /// The bytes of the PACKET_IN being handled (empty otherwise).
    pub(crate) packet: Vec<u8>,
    /// Whether a PACKET_IN is being handled (`forward` is valid).
    pub(crate) in_packet_in: bool,
    /// The batch of the running `packet-ins` call (empty otherwise).
    pub(crate) batch: Batch,
    /// The switch's per-switch store, swapped in for the call (the switch's slot holds
    /// it between calls).
    pub(crate) kv: HashMap<u64, u64>,
    /// The controller's start, for `now-ms`.
    pub(crate) epoch: Instant,
    /// The worker's time for the message.
    pub(crate) now: Instant,
    /// The app's memory, shared by its instances.
    pub(crate) memory: Arc<MemoryAccount>,
    /// The bytes of `memory` this instance holds.
    pub(crate) mine: usize,
    /// Why the last memory growth was refused (the trap's cause).
    pub(crate) refused: Option<String>,
    /// The thread's CPU time at the running call's first deadline (`None` before it:
    /// reset before every call).
    pub(crate) cpu_mark: Option<Duration>,
    /// CPU time the call may use after `cpu_mark`.
    pub(crate) cpu_budget: Duration,
    /// CPU time the interrupted call had used since `cpu_mark` (the trap's report).
    pub(crate) cpu_used: Duration,
    /// The last error the running call logged (a guest's panic message, before its
    /// trap): added to the quarantine's reason.
    pub(crate) last_error: Option<String>,
}

impl HostState {
    pub(crate) fn new(
        app: &'static str,
        epoch: Instant,
        memory: Arc<MemoryAccount>,
        cpu_budget: Duration,
    ) -> Self {
        HostState {
            app,
            dpid: Dpid(0),
            outbox: Outbox::default(),
            packet: Vec::new(),
            in_packet_in: false,
            batch: Batch::default(),
            kv: HashMap::new(),
            epoch,
            now: epoch,
            memory,
            mine: 0,
            refused: None,
            cpu_mark: None,
            cpu_budget,
            cpu_used: Duration::ZERO,
            last_error: None,
        }
    }

    /// The epoch deadline of the running call was reached: interrupt it if it used its
    /// CPU budget since the first deadline, else check again a tick later.
    pub(crate) fn deadline(&mut self) -> wasmtime::UpdateDeadline {
        let now = crate::sandbox::thread_cpu_time();
        let mark = *self.cpu_mark.get_or_insert(now);
        self.cpu_used = now.saturating_sub(mark);
        if self.cpu_used >= self.cpu_budget {
            wasmtime::UpdateDeadline::Interrupt
        } else {
            wasmtime::UpdateDeadline::Continue(1)
        }
    }
}

impl Drop for HostState {
    fn drop(&mut self) {
        self.memory.used.fetch_sub(self.mine, Relaxed);
    }
}

impl wasmtime::ResourceLimiter for HostState {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let more = desired.saturating_sub(current);
        let before = self.memory.used.fetch_add(more, Relaxed);
        if before + more > self.memory.cap {
            self.memory.used.fetch_sub(more, Relaxed);
            let why = format!(
                "memory cap reached: the app asked for {} KiB more with {} KiB in use (cap {} KiB)",
                more / 1024,
                before / 1024,
                self.memory.cap / 1024
            );
            self.refused = Some(why.clone());
            return Err(wasmtime::Error::msg(why));
        }
        self.mine += more;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Function tables of a few hundred entries are normal; a million is an attack.
        Ok(desired <= 100_000)
    }

    fn instances(&self) -> usize {
        // A component of a Rust guest holds a handful of core instances (the app, its
        // WASI adapter, shims).
        64
    }

    fn tables(&self) -> usize {
        64
    }

    fn memories(&self) -> usize {
        8
    }
}

impl wit::Host for HostState {}

impl host::Host for HostState {
    fn send_flow_mod(&mut self, fm: wit::FlowMod) {
        self.outbox.flow_mod(&fm);
    }

    fn send_packet_out(&mut self, po: wit::PacketOut) {
        self.outbox.packet_out(&po);
    }

    fn forward(&mut self, actions: Vec<wit::Action>) {
        if self.in_packet_in {
            let range = self.outbox.actions(&actions);
            self.outbox.queued.push(Queued::Forward(range));
        }
    }

    fn barrier(&mut self) {
        self.outbox.queued.push(Queued::Barrier);
    }

    fn packet_data(&mut self) -> Vec<u8> {
        self.packet.clone()
    }

    fn packet_data_at(&mut self, index: u32) -> Vec<u8> {
        let b = &self.batch;
        b.meta
            .get(index as usize)
            .map(|(_, _, bytes)| b.bytes[bytes.clone()].to_vec())
            .unwrap_or_default()
    }

    fn state_get(&mut self, key: u64) -> Option<u64> {
        self.kv.get(&key).copied()
    }

    fn state_set(&mut self, key: u64, value: u64) {
        self.kv.insert(key, value);
    }

    fn state_remove(&mut self, key: u64) -> Option<u64> {
        self.kv.remove(&key)
    }

    fn now_ms(&mut self) -> u64 {
        self.now.saturating_duration_since(self.epoch).as_millis() as u64
    }

    fn log(&mut self, level: wit::Level, message: String) {
        // A guest cannot flood the log with one enormous line.
        let message = match message.char_indices().nth(1024) {
            Some((at, _)) => &message[..at],
            None => &message,
        };
        let (app, dpid) = (self.app, self.dpid);
        match level {
            wit::Level::Error => {
                tracing::error!(app, %dpid, "{message}");
                self.last_error = Some(message.to_string());
            }
            wit::Level::Warn => tracing::warn!(app, %dpid, "{message}"),
            wit::Level::Info => tracing::info!(app, %dpid, "{message}"),
            wit::Level::Debug => tracing::debug!(app, %dpid, "{message}"),
        }
    }
}
