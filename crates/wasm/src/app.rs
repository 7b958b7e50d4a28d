//! A loaded module as a controller [`App`].
//!
//! Workers call an app's handlers at the same time for different switches, and a
//! wasmtime `Store` is used by one thread at a time: the app keeps one instance per
//! worker thread, made on the first message of the first switch that worker brings
//! to it, and each switch's slot keeps a handle to its worker's instance. The
//! instance's mutex is only ever taken by that worker (uncontended: no wait), so the
//! PACKET_IN path is: one uncontended lock, the packet's fields passed as scalars (its
//! bytes copied into a host buffer that keeps its capacity, for `packet-data`; they
//! enter the guest only if it asks), one call, the queued sends encoded into the
//! switch's buffer.
//!
//! A trap, an interrupted call (too long) or a memory cap reached makes the handler
//! panic with the app, the handler and the cause: the dispatcher quarantines the app
//! (only it), and the instance is marked broken and replaced before any later call
//! (after a restart).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use controller::app::{
    App, Builder, Dpid, Flow, MessageKind, Order, PacketIn, PortInfo, PortReason, Services,
    StartError, SwitchCtx, SwitchInfo,
};
use openflow::model::{FlowRemoved, PacketOut};
use openflow::Message;
use wasmtime::{Store, Trap};

use crate::bindings::pharos::app::types as wit;
use crate::bindings::{App as Bindings, AppPre};
use crate::convert;
use crate::host::{Batch, HostState, MemoryAccount, Queued};
use crate::sandbox::{Limits, Runtime};

/// A compiled module, ready to instantiate.
pub(crate) struct Module {
    /// The engine it was compiled for (kept alive, and its epoch ticker, by the app).
    pub(crate) runtime: Arc<Runtime>,
    /// The component with its imports resolved: instantiating is cheap.
    pub(crate) pre: AppPre<HostState>,
    /// The app's parameters (JSON), given to `init` in every instance.
    pub(crate) params: String,
    /// The sandbox's bounds.
    pub(crate) limits: Limits,
    /// The memory of all of the app's instances, against the cap.
    pub(crate) memory: Arc<MemoryAccount>,
}

/// One instance and its store.
pub(crate) struct Guest {
    /// The instance's store: its memory, and the host's data for its imports.
    store: Store<HostState>,
    /// The instance's exports.
    bindings: Bindings,
    /// Trapped or interrupted: never called again (a later call gets a new instance).
    broken: bool,
}

/// A worker's instance, shared by the slots of that worker's switches.
type Shared = Arc<Mutex<Guest>>;

/// A WebAssembly app: a module loaded with a name, an order and parameters.
pub struct WasmApp {
    /// Its name (interned: reloads reuse it).
    name: &'static str,
    /// Where its handlers run.
    order: Order,
    /// Run `timer` on every switch this often (the guest's `init` said so).
    timer: Option<Duration>,
    /// PACKET_INs go to `packet-ins` a turn at a time (the guest's `init` asked).
    batch: bool,
    module: Module,
    /// The instance of each worker thread.
    instances: Mutex<Vec<(ThreadId, Shared)>>,
}

/// The app's per-switch slot.
#[derive(Default)]
pub struct SwitchSlot {
    /// The instance of the switch's worker (made on the first call).
    guest: Option<Shared>,
    /// The guest's per-switch store (`state-get` / `state-set`).
    kv: std::collections::HashMap<u64, u64>,
    /// The switch's PACKET_INs of the running turn, for a batching app.
    batch: Batch,
    /// Scratch space for the actions of the batch's answers (keeps its capacity).
    actions: Vec<openflow::model::Action>,
}

/// A batch is handed to the guest at the end of the switch's turn, or as soon as it
/// holds this many PACKET_INs (a pipeline driven by hand that never ends a turn): a
/// worker's turn is at most `TURN_BUDGET` messages.
const MAX_BATCH: usize = 4 * controller::conn::TURN_BUDGET;

/// The PACKET_INs an export call is about.
#[derive(Clone, Copy)]
enum Packets<'a> {
    None,
    /// The one being handled (`packet-in`).
    One(&'a PacketIn<'a>),
    /// The slot's batch (`packet-ins`), swapped into the store for the call.
    Batch,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl WasmApp {
    /// Instantiates the module once to run its `init` (a refused init or a trap in it
    /// refuses the load); the instance is kept for the loading thread.
    pub(crate) fn new(name: &'static str, order: Order, module: Module) -> Result<WasmApp, String> {
        let mut app = WasmApp {
            name,
            order,
            timer: None,
            batch: false,
            module,
            instances: Mutex::new(Vec::new()),
        };
        let (guest, info) = app.instantiate()?;
        app.timer = info
            .timer_period_ms
            .map(|ms| Duration::from_millis(u64::from(ms.max(1))));
        app.batch = info.batch_packet_ins;
        lock(&app.instances).push((std::thread::current().id(), Arc::new(Mutex::new(guest))));
        Ok(app)
    }

    /// The app's order.
    pub fn order(&self) -> Order {
        self.order
    }

    /// Bytes of linear memory the app's instances hold together.
    pub fn memory_used(&self) -> usize {
        self.module
            .memory
            .used
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A new instance with `init` run: its info, or why not.
    fn instantiate(&self) -> Result<(Guest, wit::AppInfo), String> {
        let m = &self.module;
        let state = HostState::new(
            self.name,
            m.runtime.epoch,
            Arc::clone(&m.memory),
            m.limits.cpu,
        );
        let mut store = Store::new(&m.runtime.engine, state);
        store.limiter(|s| s as &mut dyn wasmtime::ResourceLimiter);
        store.epoch_deadline_callback(|mut s| Ok(s.data_mut().deadline()));
        store.set_epoch_deadline(m.limits.first_check_ticks);
        let bindings = m
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.cause(&store, "instantiate", &e, None))?;
        store.data_mut().cpu_mark = None;
        store.set_epoch_deadline(m.limits.first_check_ticks);
        let info = match bindings.call_init(&mut store, &m.params) {
            Ok(Ok(info)) => info,
            Ok(Err(refused)) => {
                return Err(format!("wasm app {}: init refused: {refused}", self.name))
            }
            Err(e) => return Err(self.cause(&store, "init", &e, None)),
        };
        Ok((
            Guest {
                store,
                bindings,
                broken: false,
            },
            info,
        ))
    }

    /// This thread's instance (made if it has none, or if its instance broke).
    fn worker_instance(&self) -> Shared {
        let me = std::thread::current().id();
        let mut all = lock(&self.instances);
        if let Some((_, g)) = all.iter().find(|(t, g)| *t == me && !lock(g).broken) {
            return Arc::clone(g);
        }
        all.retain(|(t, _)| *t != me);
        let guest = match self.instantiate() {
            Ok((guest, _)) => guest,
            // The handler's panic quarantines the app, naming the cause.
            Err(e) => panic!("{e}"),
        };
        let g = Arc::new(Mutex::new(guest));
        all.push((me, Arc::clone(&g)));
        g
    }

    /// What went wrong in a call, in words: the app, the export, the cause (and, for a
    /// call interrupted, how long it had run since `started`).
    fn cause(
        &self,
        store: &Store<HostState>,
        what: &str,
        e: &wasmtime::Error,
        started: Option<Instant>,
    ) -> String {
        let why = match e.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => {
                let ms = |d: Duration| d.as_secs_f64() * 1e3;
                let ran = started.map_or(String::new(), |t| {
                    format!(" after {:.1} ms", ms(t.elapsed()))
                });
                let limits = &self.module.limits;
                format!(
                    "interrupted{ran}: used {:.1} ms of CPU past its first {} ms, more than its {} ms (endless loop?)",
                    ms(store.data().cpu_used),
                    (limits.tick * limits.first_check_ticks as u32).as_millis(),
                    limits.cpu.as_millis(),
                )
            }
            Some(trap) => match &store.data().last_error {
                Some(said) => format!("{trap}; it logged before: {said}"),
                None => trap.to_string(),
            },
            None => match &store.data().refused {
                Some(refused) => refused.clone(),
                // A host error: a WASI import the sandbox links to a trap (files,
                // network, environment), say.
                None => format!("trapped: {}", e.root_cause()),
            },
        };
        format!("wasm app {} ({what}): {why}", self.name)
    }

    /// Calls an export for the switch of `slot`: the instance of this worker, the
    /// switch's store swapped in, a fresh deadline; then the queued sends go out
    /// through `ctx` (dropped when there is none: a switch-removed call). A failed call
    /// panics (the dispatcher quarantines the app) after the instance is marked broken.
    fn call<R>(
        &self,
        what: &'static str,
        dpid: Dpid,
        ctx: Option<&mut SwitchCtx<'_>>,
        slot: &mut SwitchSlot,
        packets: Packets<'_>,
        f: impl FnOnce(&Bindings, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> R {
        let shared = slot.guest.get_or_insert_with(|| self.worker_instance());
        let mut guard = lock(shared);
        if guard.broken {
            drop(guard);
            slot.guest = Some(self.worker_instance());
            return self.call(what, dpid, ctx, slot, packets, f);
        }
        let g = &mut *guard;
        let data = g.store.data_mut();
        data.dpid = dpid;
        // The worker's time for the message: when this call started, near enough (no
        // clock read per call); a failure measures from it.
        let started = ctx.as_ref().map(|ctx| ctx.now());
        if let Some(now) = started {
            data.now = now;
        }
        data.in_packet_in = matches!(packets, Packets::One(_));
        let batch = matches!(packets, Packets::Batch);
        if batch {
            std::mem::swap(&mut data.batch, &mut slot.batch);
        }
        std::mem::swap(&mut data.kv, &mut slot.kv);
        data.cpu_mark = None;
        if data.last_error.is_some() {
            data.last_error = None;
        }
        g.store
            .set_epoch_deadline(self.module.limits.first_check_ticks);
        let r = f(&g.bindings, &mut g.store);
        let data = g.store.data_mut();
        std::mem::swap(&mut data.kv, &mut slot.kv);
        data.packet.clear();
        data.in_packet_in = false;
        let packet = match packets {
            Packets::One(p) => Some(p),
            _ => None,
        };
        match r {
            Ok(r) => {
                if let Some(ctx) = ctx {
                    self.flush(ctx, data, packet);
                }
                data.outbox.clear();
                if batch {
                    // Back to the slot whole: the caller sends the answers for it.
                    std::mem::swap(&mut data.batch, &mut slot.batch);
                }
                r
            }
            Err(e) => {
                data.outbox.clear();
                if batch {
                    data.batch.clear();
                    std::mem::swap(&mut data.batch, &mut slot.batch);
                }
                g.broken = true;
                let why = self.cause(&g.store, what, &e, started);
                drop(guard);
                panic!("{why}");
            }
        }
    }

    /// Sends what the guest queued, in order.
    fn flush(&self, ctx: &mut SwitchCtx<'_>, data: &HostState, packet: Option<&PacketIn>) {
        let out = &data.outbox;
        for q in &out.queued {
            match q {
                Queued::FlowMod(head, actions) => {
                    let fm = openflow::model::FlowMod {
                        actions: &out.actions[actions.clone()],
                        ..*head
                    };
                    ctx.send_flow_mod(&fm);
                }
                Queued::PacketOut(in_port, actions, bytes) => {
                    let actions = &out.actions[actions.clone()];
                    let bytes = &out.bytes[bytes.clone()];
                    ctx.send_packet_out(&PacketOut::unbuffered(bytes, *in_port, actions));
                }
                Queued::Forward(actions) => {
                    if let Some(p) = packet {
                        let actions = &out.actions[actions.clone()];
                        ctx.send_packet_out(&PacketOut::of_packet_in(p, actions));
                    }
                }
                Queued::Barrier => {
                    // The reply is taken here (nobody else's handler sees it); the
                    // guest relies only on the ordering a barrier gives.
                    ctx.barrier::<WasmApp>(Duration::from_secs(10), |_, _, _, _| {});
                }
            }
        }
    }

    fn packet_in(&self, ctx: &mut SwitchCtx, slot: &mut SwitchSlot, p: &PacketIn) -> Flow {
        let sw = convert::switch(ctx.dpid(), ctx.version());
        let pkt = convert::packet_in(p);
        let flow = self.call(
            "packet-in",
            ctx.dpid(),
            Some(ctx),
            slot,
            Packets::One(p),
            |b, store| {
                // The bytes are there if the guest asks (`packet-data`): one copy into a
                // buffer that keeps its capacity.
                store.data_mut().packet.extend_from_slice(p.data());
                b.call_packet_in(store, sw, pkt)
            },
        );
        match flow {
            wit::Flow::Continue => Flow::Continue,
            wit::Flow::Stop => Flow::Stop,
        }
    }

    /// A batching app's PACKET_IN: kept for the end of the turn (the guest's verdict
    /// comes too late for the apps after it: they go on).
    fn queue_packet_in(&self, ctx: &mut SwitchCtx, slot: &mut SwitchSlot, p: &PacketIn) -> Flow {
        let b = &mut slot.batch;
        crate::batch::put_packet_in(p, &mut b.records);
        let start = b.bytes.len();
        b.bytes.extend_from_slice(p.data());
        let in_port = openflow::model::PortNo::from_u32(p.in_port());
        b.meta.push((p.buffer_id(), in_port, start..b.bytes.len()));
        if b.len() >= MAX_BATCH {
            self.packet_ins(ctx, slot);
        }
        Flow::Continue
    }

    /// The end of the switch's turn: its PACKET_INs to the guest in one call, then its
    /// answers sent (read from the bytes the call returned).
    fn packet_ins(&self, ctx: &mut SwitchCtx, slot: &mut SwitchSlot) {
        if slot.batch.len() == 0 {
            return;
        }
        let sw = convert::switch(ctx.dpid(), ctx.version());
        let answers = self.call(
            "packet-ins",
            ctx.dpid(),
            Some(&mut *ctx),
            slot,
            Packets::Batch,
            |b, store| {
                let records = std::mem::take(&mut store.data_mut().batch.records);
                let r = b.call_packet_ins(&mut *store, sw, &records);
                store.data_mut().batch.records = records;
                r
            },
        );
        let mut actions = std::mem::take(&mut slot.actions);
        let sent = crate::batch::send_answers(&answers, &slot.batch, &mut actions, ctx);
        slot.actions = actions;
        slot.batch.clear();
        if let Err(e) = sent {
            if let Some(g) = &slot.guest {
                lock(g).broken = true;
            }
            panic!(
                "wasm app {} (packet-ins): answered bytes the host cannot read: {e}",
                self.name
            );
        }
    }

    fn initialize(&self, ctx: &mut SwitchCtx, slot: &mut SwitchSlot) {
        let sw = convert::switch(ctx.dpid(), ctx.version());
        let ports: Vec<wit::PortInfo> = ctx.info().ports.iter().map(convert::port_info).collect();
        self.call(
            "initialize-switch",
            ctx.dpid(),
            Some(ctx),
            slot,
            Packets::None,
            |b, s| b.call_initialize_switch(s, sw, &ports),
        )
    }

    fn switch_added(&self, ctx: &mut SwitchCtx, slot: &mut SwitchSlot) {
        let sw = convert::switch(ctx.dpid(), ctx.version());
        self.call(
            "switch-added",
            ctx.dpid(),
            Some(ctx),
            slot,
            Packets::None,
            |b, s| b.call_switch_added(s, sw),
        )
    }

    fn switch_removed(&self, info: &SwitchInfo, mut slot: SwitchSlot) {
        if slot.guest.is_none() {
            // The app never ran for this switch on its worker: nothing to forget.
            return;
        }
        let sw = convert::switch(info.dpid, info.version);
        self.call(
            "switch-removed",
            info.dpid,
            None,
            &mut slot,
            Packets::None,
            |b, s| b.call_switch_removed(s, sw),
        )
    }

    fn port_status(
        &self,
        ctx: &mut SwitchCtx,
        slot: &mut SwitchSlot,
        reason: PortReason,
        port: &PortInfo,
    ) {
        let sw = convert::switch(ctx.dpid(), ctx.version());
        let (reason, port) = (convert::port_reason(reason), convert::port_info(port));
        self.call(
            "port-status",
            ctx.dpid(),
            Some(ctx),
            slot,
            Packets::None,
            |b, s| b.call_port_status(s, sw, reason, &port),
        )
    }

    fn flow_removed(&self, ctx: &mut SwitchCtx, slot: &mut SwitchSlot, m: &Message) -> Flow {
        if let Some(r) = FlowRemoved::from_message(m) {
            let sw = convert::switch(ctx.dpid(), ctx.version());
            let r = convert::flow_removed(&r);
            self.call(
                "flow-removed",
                ctx.dpid(),
                Some(ctx),
                slot,
                Packets::None,
                |b, s| b.call_flow_removed(s, sw, r),
            );
        }
        Flow::Continue
    }

    fn timer(&self, ctx: &mut SwitchCtx, slot: &mut SwitchSlot) {
        let sw = convert::switch(ctx.dpid(), ctx.version());
        self.call(
            "timer",
            ctx.dpid(),
            Some(ctx),
            slot,
            Packets::None,
            |b, s| b.call_timer(s, sw),
        )
    }
}

impl App for WasmApp {
    type State = SwitchSlot;

    fn name(&self) -> &'static str {
        self.name
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_initialize(WasmApp::initialize);
        b.on_switch_added(WasmApp::switch_added);
        b.on_switch_removed(WasmApp::switch_removed);
        if self.batch {
            b.on_packet_in(self.order, WasmApp::queue_packet_in);
            b.on_turn_end(WasmApp::packet_ins);
        } else {
            b.on_packet_in(self.order, WasmApp::packet_in);
        }
        b.on_port_status(WasmApp::port_status);
        b.on_message(MessageKind::FlowRemoved, self.order, WasmApp::flow_removed);
        if let Some(period) = self.timer {
            b.every(period, period / 10, WasmApp::timer);
        }
    }

    fn start(&self, _: &Services) -> Result<(), StartError> {
        Ok(())
    }

    fn stop(&self) {
        // A restart (stop, then start) begins with fresh instances: nothing of the run
        // before survives.
        lock(&self.instances).clear();
    }
}

/// A batch's answers go to the switch through the context (the sink of
/// [`crate::batch::send_answers`]); the barrier's reply is this app's to take.
impl crate::batch::Sink for SwitchCtx<'_> {
    fn flow_mod(&mut self, fm: &openflow::model::FlowMod<'_>) {
        self.send_flow_mod(fm);
    }
    fn packet_out(&mut self, po: &PacketOut<'_>) {
        self.send_packet_out(po);
    }
    fn barrier(&mut self) {
        // The reply is taken here (nobody else's handler sees it); the guest relies only
        // on the ordering a barrier gives.
        self.barrier::<WasmApp>(Duration::from_secs(10), |_, _, _, _| {});
    }
}
