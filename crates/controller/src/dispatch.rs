//! The app pipeline: the sans-IO boundary a worker calls for each switch.
//!
//! A [`Pipeline`] is built from the apps ([`Pipeline::build`] runs their `build` once
//! and starts them) and shared by every worker as `Arc<Pipeline>`; it keeps every app it
//! knows (each at an index never reused), the core's [`Switches`] service, and the
//! *plan* in force: the handlers of the running apps for each message kind in order,
//! their timers, a quarantine flag per app, under a generation number. Apps started,
//! stopped, re-ordered, added or removed make a new plan ([`crate::lifecycle`]). A
//! [`SwitchState`] is one per switch, owned by the worker serving it: the plan it runs
//! with, the switch's info (ports current), every app's per-switch state slot, the xid
//! counter, the pending requests and the timer schedule. No sockets and no clock reads:
//! the worker passes the bytes, an output buffer and `now`.
//!
//! ```text
//! (any call)     ─► generation moved? ─► migrate: the switch's slots, timers, requests
//!                                         to the new plan; started apps' initializers
//! handle(frame) ─┬─ PACKET_IN ─► view::PacketIn ─► Advise.. Direct.. (until Stop) ─► Observe..
//!                ├─ PORT_STATUS ─► ports updated (here and in Switches) ─► on_port_status..
//!                │                 ─► handlers of MessageKind::PortStatus (until Stop)
//!                ├─ xid pending ─► Message::decode ─► gather parts ─► requester's callback
//!                └─ other ─► Message::decode ─► handlers of its MessageKind (until Stop)
//! deliver        ─► messages from Switches::send, each with a fresh xid
//! request        ─► messages from Switches::request, fresh xids, one pending entry
//! tick(now)      ─► expired requests' callbacks (TimedOut), then due per-switch timers
//! switch_removed ─► unlisted from Switches ─► pending callbacks (SwitchGone) ─► listeners
//! global_tick    ─► due global timers (the controller's timer thread calls it)
//! ```
//!
//! Driven by hand (tests, no network), a pipeline works the same: switches made with
//! [`Pipeline::new_switch`] are listed in [`Switches`], and what others send them
//! through it (requests included) is collected by [`Pipeline::take_queued`].
//!
//! ## Panics
//!
//! Every handler call runs under `catch_unwind`. A handler that panics gets its app
//! quarantined: an atomic flag checked before every call, on every worker, so none of
//! the app's handlers (or pending callbacks) runs again; the panic is logged at error
//! level naming the app, the dpid and the message type, and counted. The other apps
//! and the switch carry on. An app's service subscriptions ([`Builder::subscribe`])
//! run under the same flag through its [`AppGuard`] (see [`crate::events`]): a
//! subscriber's panic quarantines the subscriber, not the app that published.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{Acquire, Relaxed},
};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};

use openflow::view::PacketIn;
use openflow::{Message, Version};
use serde::Serialize;

use crate::app::{
    AnyApp, App, AppCounter, Builder, Dpid, Fill, Flow, MessageKind, Order, PacketInHandler, Phase,
    SwitchCtx, Unsubscribe,
};
use crate::counters::lock;
use crate::events::{AppEvent, AppGuard, Publisher, Quarantine, Subscribers};
use crate::info::{PortInfo, PortReason, SwitchInfo};
use crate::requests::{Answer, Done, Owner, Requests};
use crate::services::{Services, StartError};
use crate::switches::{Queued, Route, Switches};
use crate::timers::{Period, Rng, Schedule};
use crate::timing::{HandlerTiming, Local, Timings};
use crate::worker::WorkerHandle;

/// A per-switch state slot, type-erased: the state and its type's id, taken once when
/// the slot is made. (`dyn Any`'s downcast asks the vtable for the id on every call and
/// reads it back from the stack: a store-to-load forward that stalled, three to five
/// times per PACKET_IN, about 8% of the default apps' time under cbench's load.)
struct Slot {
    id: TypeId,
    state: Box<dyn Any + Send>,
}

impl Slot {
    fn new(state: Box<dyn Any + Send>) -> Slot {
        // The id of the boxed value, not of the box.
        let id = (*state).type_id();
        Slot { id, state }
    }

    /// The state as a `T`, if it is one.
    #[inline]
    fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
        if self.id != TypeId::of::<T>() {
            return None;
        }
        let p: *mut (dyn Any + Send) = &mut *self.state;
        // SAFETY: `id` is the type id of the value `state` holds (taken from it in
        // `new`, and `state` is never replaced), so that value is a `T`; the borrow of
        // `self` is unique for the result's lifetime.
        Some(unsafe { &mut *p.cast::<T>() })
    }

    /// The state as a `T`, if it is one.
    #[inline]
    fn get<T: Any>(&self) -> Option<&T> {
        if self.id != TypeId::of::<T>() {
            return None;
        }
        let p: *const (dyn Any + Send) = &*self.state;
        // SAFETY: as in `get_mut`, shared.
        Some(unsafe { &*p.cast::<T>() })
    }
}
// Shared (`Arc`), not boxed: an app's handlers are made once and go into every plan
// while it runs.
type PacketInCall =
    Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &PacketIn<&[u8]>) -> Flow + Send + Sync>;
type PrefetchCall = Arc<dyn Fn(&Slot, &PacketIn<&[u8]>) + Send + Sync>;
type MessageCall = Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &Message) -> Flow + Send + Sync>;
type SwitchCall = Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot) + Send + Sync>;
type RemovedCall = Arc<dyn Fn(&SwitchInfo, Slot) + Send + Sync>;
type PortStatusCall =
    Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, PortReason, &PortInfo) + Send + Sync>;
type GlobalCall = Arc<dyn Fn(&Switches, Instant) + Send + Sync>;
type AdoptCall = Arc<
    dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &openflow::ofctl::FlowEntry) -> crate::reconcile::Adopt
        + Send
        + Sync,
>;

/// PACKET_IN is type 10 in every version.
const PACKET_IN: u8 = 10;
/// FLOW_REMOVED and PORT_STATUS: asynchronous, never replies to a request.
const FLOW_REMOVED: u8 = 11;
const PORT_STATUS: u8 = 12;
/// ERROR is type 1 in every version.
const ERROR: u8 = 1;

/// One registered handler.
#[derive(Clone)]
pub(crate) struct Handler<F> {
    /// The app's index (its quarantine flag and state slot).
    pub(crate) app: usize,
    pub(crate) order: Order,
    /// Its number among the pipeline's handlers, for its counts and time
    /// ([`crate::timing`]); given when the app is registered.
    pub(crate) id: usize,
    pub(crate) call: F,
}

/// The handlers one app's `build` registered, kept while the pipeline knows the app
/// (each plan takes clones of the running apps'). Opaque: apps only see it through
/// [`AnyApp::register`].
#[derive(Default)]
pub struct Registry {
    packet_in: Vec<Handler<PacketInCall>>,
    /// PACKET_IN prefetch hints with their app's index, in app order.
    prefetch: Vec<(usize, PrefetchCall)>,
    messages: Vec<(MessageKind, Handler<MessageCall>)>,
    initialize: Vec<Handler<SwitchCall>>,
    switch_added: Vec<Handler<SwitchCall>>,
    turn_end: Vec<Handler<SwitchCall>>,
    switch_removed: Vec<Handler<RemovedCall>>,
    /// Adopt hooks, one at most per app ([`crate::reconcile`]).
    adopt: Vec<Handler<AdoptCall>>,
    port_status: Vec<Handler<PortStatusCall>>,
    timers: Vec<(Period, Handler<SwitchCall>)>,
    global_timers: Vec<(Duration, Handler<GlobalCall>)>,
    /// The services the app provides.
    services: Services,
    /// The service subscriptions the app asked for: made just before each start.
    pub(crate) subscriptions: Vec<Subscription>,
    /// The services it requires (type id, type name).
    requires: Vec<(TypeId, &'static str)>,
    /// Fill its [`crate::app::Required`] handles before each start.
    pub(crate) fills: Vec<Fill>,
    /// The counters it publishes ([`crate::app::Builder::counter`]).
    pub(crate) counters: Vec<AppCounter>,
    /// The number of its `reply` handler (its requests' callbacks).
    reply_id: usize,
}

/// A subscription to make (under the guard of this start of the app) when the app
/// starts; returns what ends it.
pub(crate) type Subscription =
    Box<dyn Fn(&Services, &AppGuard) -> Result<Unsubscribe, StartError> + Send + Sync>;

fn slot<A: App>(s: &mut Slot) -> &mut A::State {
    // Slots are created by the app's own `new_state`, at the app's index: the types
    // always agree.
    s.get_mut::<A::State>()
        .expect("a state slot holds its app's State type")
}

impl Registry {
    /// True when the app provides no service.
    pub(crate) fn provides_nothing(&self) -> bool {
        self.services.is_empty()
    }

    /// The services the app requires (type id, type name).
    pub(crate) fn requires(&self) -> &[(TypeId, &'static str)] {
        &self.requires
    }

    /// Erases the handlers of app `index` and adds them.
    pub(crate) fn add<A: App>(
        &mut self,
        app: Arc<A>,
        index: usize,
        b: Builder<A>,
    ) -> Result<(), StartError> {
        if let Some(e) = b.service_error {
            return Err(e);
        }
        for subscribe in b.subscriptions {
            let weak = Arc::downgrade(&app);
            self.subscriptions.push(Box::new(move |services, guard| {
                subscribe(Weak::clone(&weak), services, guard)
            }));
        }
        self.requires.extend(b.requires);
        self.fills.extend(b.fills);
        self.counters.extend(b.counters);
        for (order, h) in b.packet_in {
            let a = Arc::clone(&app);
            let call: PacketInCall = match h {
                PacketInHandler::Handle(f) => {
                    Arc::new(move |ctx, s, p| f(&a, ctx, slot::<A>(s), p))
                }
                PacketInHandler::Observe(f) => Arc::new(move |ctx, s, p| {
                    f(&a, ctx, slot::<A>(s), p);
                    Flow::Continue
                }),
            };
            self.packet_in.push(Handler {
                app: index,
                order,
                id: 0,
                call,
            });
        }
        for f in b.prefetch {
            let a = Arc::clone(&app);
            let call: PrefetchCall = Arc::new(move |s, p| {
                if let Some(s) = s.get::<A::State>() {
                    f(&a, s, p)
                }
            });
            self.prefetch.push((index, call));
        }
        for (kind, order, f) in b.messages {
            let a = Arc::clone(&app);
            let call: MessageCall = Arc::new(move |ctx, s, m| f(&a, ctx, slot::<A>(s), m));
            self.messages.push((
                kind,
                Handler {
                    app: index,
                    order,
                    id: 0,
                    call,
                },
            ));
        }
        for (list, fs) in [
            (&mut self.initialize, b.initialize),
            (&mut self.switch_added, b.switch_added),
            (&mut self.turn_end, b.turn_end),
        ] {
            for f in fs {
                let a = Arc::clone(&app);
                let call: SwitchCall = Arc::new(move |ctx, s| f(&a, ctx, slot::<A>(s)));
                list.push(Handler {
                    app: index,
                    order: Order::direct(0),
                    id: 0,
                    call,
                });
            }
        }
        for f in b.port_status {
            let a = Arc::clone(&app);
            let call: PortStatusCall =
                Arc::new(move |ctx, s, reason, port| f(&a, ctx, slot::<A>(s), reason, port));
            self.port_status.push(Handler {
                app: index,
                order: Order::direct(0),
                id: 0,
                call,
            });
        }
        for (period, f) in b.timers {
            let a = Arc::clone(&app);
            let call: SwitchCall = Arc::new(move |ctx, s| f(&a, ctx, slot::<A>(s)));
            let order = Order::direct(0);
            self.timers.push((
                period,
                Handler {
                    app: index,
                    order,
                    id: 0,
                    call,
                },
            ));
        }
        for (period, f) in b.global_timers {
            let a = Arc::clone(&app);
            let call: GlobalCall = Arc::new(move |switches, now| f(&a, switches, now));
            let order = Order::direct(0);
            self.global_timers.push((
                period,
                Handler {
                    app: index,
                    order,
                    id: 0,
                    call,
                },
            ));
        }
        if let Some(f) = b.adopt {
            let a = Arc::clone(&app);
            let call: AdoptCall = Arc::new(move |ctx, s, e| f(&a, ctx, slot::<A>(s), e));
            self.adopt.push(Handler {
                app: index,
                order: Order::direct(0),
                id: 0,
                call,
            });
        }
        if let Some(f) = b.switch_removed {
            let a = Arc::clone(&app);
            let call: RemovedCall = Arc::new(move |info, s| match s.state.downcast::<A::State>() {
                Ok(state) => f(&a, info, *state),
                Err(_) => state_type_mismatch(App::name(&*a)),
            });
            self.switch_removed.push(Handler {
                app: index,
                order: Order::direct(0),
                id: 0,
                call,
            });
        }
        self.services.merge(b.services)
    }
}

#[cold]
fn state_type_mismatch(app: &str) {
    tracing::error!(app, "a state slot held another type; state dropped");
}

/// An app as a plan holds it.
#[derive(Clone)]
pub(crate) struct PlanApp {
    pub(crate) app: Arc<dyn AnyApp>,
    pub(crate) name: &'static str,
    /// The cookie tag stamped on its flows ([`crate::cookie::app_tag`] of `name`).
    pub(crate) tag: u16,
    /// Its handlers are in this plan.
    pub(crate) running: bool,
    /// Which start of the app this is: a switch that ran an earlier one drops its
    /// state for the app and runs its initializers again (a restart is fresh).
    pub(crate) start: u64,
    /// Set when a handler panicked: the app's handlers are skipped on every worker.
    /// This start's (shared with its [`AppGuard`], which its subscriptions run under).
    pub(crate) quarantined: Arc<AtomicBool>,
    /// This start's guard.
    pub(crate) guard: AppGuard,
    /// Its panics over all its starts.
    pub(crate) panics: Arc<AtomicU64>,
    /// Added at run time.
    pub(crate) loaded: bool,
    /// The apps whose services it requires (app indexes).
    pub(crate) requires: Vec<usize>,
    /// The counters it publishes.
    pub(crate) counters: Vec<AppCounter>,
}

/// A counter an app publishes, read now ([`Pipeline::app_counters`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppCounterValue {
    /// The app.
    pub app: &'static str,
    /// The counter's name, as the app gave it.
    pub name: &'static str,
    /// What it counts, in the app's words.
    pub help: &'static str,
    /// Its value.
    pub value: u64,
}

/// What runs: the handlers of the running apps, in order, under one generation.
/// Immutable once published; every switch holds the plan it runs with and moves to a
/// newer one between two messages (see [`crate::lifecycle`]).
pub(crate) struct Plan {
    /// Raised by every change.
    pub(crate) generation: u64,
    /// Every app the pipeline knows, by app index (stopped and removed ones too).
    pub(crate) apps: Vec<PlanApp>,
    /// The app order: app indexes, removed apps left out (readers of the apps' state
    /// use the plan, never the lifecycle's lock, which a change holds).
    pub(crate) order: Vec<usize>,
    /// Sorted by order; ties in app order.
    packet_in: Vec<Handler<PacketInCall>>,
    /// PACKET_IN prefetch hints with their app's index, in app order.
    prefetch: Vec<(usize, PrefetchCall)>,
    /// Per kind, sorted by order.
    messages: Vec<(MessageKind, Vec<Handler<MessageCall>>)>,
    /// App order.
    initialize: Vec<Handler<SwitchCall>>,
    switch_added: Vec<Handler<SwitchCall>>,
    /// App order.
    turn_end: Vec<Handler<SwitchCall>>,
    switch_removed: Vec<Handler<RemovedCall>>,
    /// Adopt hooks, by app ([`crate::reconcile`]).
    adopt: Vec<Handler<AdoptCall>>,
    /// App order.
    port_status: Vec<Handler<PortStatusCall>>,
    /// Per-switch timers, by timer index (the schedules in `SwitchState` use it).
    timers: Vec<Handler<SwitchCall>>,
    /// Their periods, by timer index.
    periods: Vec<Period>,
    /// Global timers, with their periods.
    global_timers: Vec<(Duration, Handler<GlobalCall>)>,
    /// The number of each app's `reply` handler (its requests' callbacks), by app.
    reply_ids: Vec<usize>,
}

impl Plan {
    /// The plan of `apps`: the handlers of the running ones, in app order, sorted by
    /// their `Order` (stable: ties keep app order).
    fn new(generation: u64, apps: &Apps, mut requires: Vec<Vec<usize>>) -> Plan {
        requires.resize(apps.known.len(), Vec::new());
        let mut plan = Plan {
            generation,
            order: apps.order.clone(),
            apps: apps
                .known
                .iter()
                .zip(requires)
                .map(|(k, requires)| PlanApp {
                    app: Arc::clone(&k.app),
                    name: k.name,
                    tag: k.tag,
                    running: k.running,
                    start: k.starts,
                    quarantined: Arc::clone(&k.guard.health().quarantined),
                    guard: k.guard.clone(),
                    panics: Arc::clone(&k.panics),
                    loaded: k.loaded,
                    requires,
                    counters: k.reg.counters.clone(),
                })
                .collect(),
            packet_in: Vec::new(),
            prefetch: Vec::new(),
            messages: Vec::new(),
            initialize: Vec::new(),
            switch_added: Vec::new(),
            turn_end: Vec::new(),
            switch_removed: Vec::new(),
            adopt: Vec::new(),
            port_status: Vec::new(),
            timers: Vec::new(),
            periods: Vec::new(),
            global_timers: Vec::new(),
            reply_ids: apps.known.iter().map(|k| k.reg.reply_id).collect(),
        };
        for &i in &apps.order {
            let k = &apps.known[i];
            if !k.running {
                continue;
            }
            let r = &k.reg;
            plan.packet_in.extend(r.packet_in.iter().cloned());
            plan.prefetch.extend(r.prefetch.iter().cloned());
            for (kind, h) in &r.messages {
                match plan.messages.iter_mut().find(|(k, _)| k == kind) {
                    Some((_, list)) => list.push(h.clone()),
                    None => plan.messages.push((*kind, vec![h.clone()])),
                }
            }
            plan.initialize.extend(r.initialize.iter().cloned());
            plan.switch_added.extend(r.switch_added.iter().cloned());
            plan.turn_end.extend(r.turn_end.iter().cloned());
            plan.switch_removed.extend(r.switch_removed.iter().cloned());
            plan.adopt.extend(r.adopt.iter().cloned());
            plan.port_status.extend(r.port_status.iter().cloned());
            for (period, h) in &r.timers {
                plan.periods.push(*period);
                plan.timers.push(h.clone());
            }
            plan.global_timers.extend(r.global_timers.iter().cloned());
        }
        plan.packet_in.sort_by_key(|h| h.order);
        for (_, list) in &mut plan.messages {
            list.sort_by_key(|h| h.order);
        }
        plan
    }

    /// True when app `app` is quarantined; otherwise points `ctx` at it.
    #[inline]
    fn skip(&self, app: usize, ctx: &mut SwitchCtx<'_>) -> bool {
        let e = &self.apps[app];
        if crate::events::is_quarantined(&e.quarantined) {
            return true;
        }
        ctx.app = app;
        ctx.app_name = e.name;
        ctx.tag = e.tag;
        false
    }

    /// Whether app `i` runs the same start in `self` and `newer` (its state goes on).
    fn same_start(&self, newer: &Plan, i: usize) -> bool {
        match (self.apps.get(i), newer.apps.get(i)) {
            (Some(a), Some(b)) => a.running && b.running && a.start == b.start,
            _ => false,
        }
    }

    /// The index of the app named `name` (not removed).
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.order
            .iter()
            .copied()
            .find(|&i| self.apps[i].name == name)
    }

    fn handlers_of(&self, kind: MessageKind) -> Option<&[Handler<MessageCall>]> {
        self.messages
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, list)| list.as_slice())
    }
}

/// An app the pipeline knows: its handlers (built once), its state and, while it runs,
/// how to end its subscriptions.
pub(crate) struct Known {
    pub(crate) app: Arc<dyn AnyApp>,
    pub(crate) name: &'static str,
    /// The cookie tag stamped on its flows ([`crate::cookie::app_tag`] of `name`).
    pub(crate) tag: u16,
    /// Its handlers, services, subscriptions and requirements, from `build`.
    pub(crate) reg: Registry,
    /// Started (and not stopped since). A quarantined app still "runs" until stopped.
    pub(crate) running: bool,
    /// Removed at run time: it stays at its index (never reused), out of the order.
    pub(crate) removed: bool,
    /// Added at run time (it can be removed or replaced).
    pub(crate) loaded: bool,
    /// Times it was started.
    pub(crate) starts: u64,
    /// The guard of its current (or last) start.
    pub(crate) guard: AppGuard,
    /// Ends its service subscriptions (while it runs).
    pub(crate) unsubscribe: Vec<Unsubscribe>,
    /// Its panics over all its starts.
    pub(crate) panics: Arc<AtomicU64>,
}

/// The apps, as the lifecycle changes them (under the pipeline's lock).
pub(crate) struct Apps {
    /// By app index.
    pub(crate) known: Vec<Known>,
    /// The app order: app indexes, removed apps left out.
    pub(crate) order: Vec<usize>,
    /// The last plan's generation.
    pub(crate) generation: u64,
}

impl Apps {
    /// The index of the app named `name` (not removed).
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.order
            .iter()
            .copied()
            .find(|&i| self.known[i].name == name)
    }
}

/// Pipeline-wide counters (atomics: every worker adds to them).
#[derive(Debug, Default)]
pub struct PipelineCounters {
    /// Shared with the apps' guards, which count their subscriptions' panics.
    pub(crate) handler_panics: Arc<AtomicU64>,
    encode_errors: AtomicU64,
    decode_errors: AtomicU64,
    unhandled: AtomicU64,
    replies: AtomicU64,
    request_timeouts: AtomicU64,
}

/// A copy of [`PipelineCounters`], for logs and the REST API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PipelineCountersSnapshot {
    /// Handler panics caught (each quarantines its app).
    pub handler_panics: u64,
    /// Messages apps tried to send that could not be encoded for their switch.
    pub encode_errors: u64,
    /// Messages from switches the pipeline could not decode (dropped).
    pub decode_errors: u64,
    /// Messages no handler was registered for.
    pub unhandled: u64,
    /// Replies delivered to requesters (a multipart reply counts once).
    pub replies: u64,
    /// Requests that timed out.
    pub request_timeouts: u64,
}

impl PipelineCounters {
    pub(crate) fn count_encode_error(&self) {
        self.encode_errors.fetch_add(1, Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> PipelineCountersSnapshot {
        PipelineCountersSnapshot {
            handler_panics: self.handler_panics.load(Relaxed),
            encode_errors: self.encode_errors.load(Relaxed),
            decode_errors: self.decode_errors.load(Relaxed),
            unhandled: self.unhandled.load(Relaxed),
            replies: self.replies.load(Relaxed),
            request_timeouts: self.request_timeouts.load(Relaxed),
        }
    }
}

/// The apps and the plan of their handlers, shared by all workers.
pub struct Pipeline {
    /// The published plan's generation: the one relaxed load per message that tells a
    /// switch its plan is out of date.
    generation: AtomicU64,
    /// The plan now in force (read only when a switch migrates).
    plan: RwLock<Arc<Plan>>,
    /// The apps, changed by the lifecycle (one change at a time: this lock).
    pub(crate) apps: Mutex<Apps>,
    /// When each global timer is next due, by handler number (`None` inside: stopped,
    /// its app quarantined); a timer not in it starts its clock at its first tick.
    global_due: Mutex<HashMap<usize, Option<Instant>>>,
    /// The core's directory of switches, also in `services`.
    switches: Arc<Switches>,
    services: Services,
    pub(crate) counters: PipelineCounters,
    /// Told of each app's quarantine (shared with the guards), start and stop.
    pub(crate) app_events: Arc<Subscribers<AppEvent>>,
    /// Every handler's calls and time, as the workers last published them.
    timings: Timings,
    /// The workers, to tell of a change (none for a pipeline driven by hand).
    workers: OnceLock<Vec<WorkerHandle>>,
    /// Wakes the controller's timer thread (an app started may bring global timers).
    timer_waker: OnceLock<Box<dyn Fn() + Send + Sync>>,
    /// How long a stopped app's flows may take to leave each switch, in ms.
    flow_removal_ms: AtomicU64,
    /// Makes apps from modules uploaded at run time ([`crate::lifecycle::AppLoader`]).
    pub(crate) loader: Mutex<Option<Arc<dyn crate::lifecycle::AppLoader>>>,
}

/// How long a stopped app's flows may take to leave each switch, unless set.
pub const FLOW_REMOVAL_TIMEOUT: Duration = Duration::from_secs(5);

/// A message kind's name as a handler's (`FLOW_REMOVED`).
fn kind_name(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::Error => "ERROR",
        MessageKind::Experimenter => "EXPERIMENTER",
        MessageKind::FeaturesReply => "FEATURES_REPLY",
        MessageKind::GetConfigReply => "GET_CONFIG_REPLY",
        MessageKind::FlowRemoved => "FLOW_REMOVED",
        MessageKind::PortStatus => "PORT_STATUS",
        MessageKind::MultipartReply => "MULTIPART_REPLY",
        MessageKind::BarrierReply => "BARRIER_REPLY",
        MessageKind::QueueGetConfigReply => "QUEUE_GET_CONFIG_REPLY",
        MessageKind::RoleReply => "ROLE_REPLY",
        MessageKind::GetAsyncReply => "GET_ASYNC_REPLY",
        MessageKind::Other => "other messages",
    }
}

/// Apps quarantined, as they happen (the REST API's event stream subscribes).
impl Publisher<AppEvent> for Pipeline {
    fn subscribers(&self) -> &Subscribers<AppEvent> {
        &self.app_events
    }
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("apps", &self.app_names())
            .field("packet_in_handlers", &self.current_plan().packet_in.len())
            .finish()
    }
}

/// One switch's pipeline state, owned by the worker serving the switch.
pub struct SwitchState {
    /// The plan this switch runs with, and its generation (compared with the
    /// pipeline's before each message).
    plan: Arc<Plan>,
    generation: u64,
    /// Switch-added ran (a migration then runs started apps' initializers).
    added: bool,
    /// The switch, ports current (replaced whole on PORT_STATUS; shared with
    /// `Switches`).
    info: Arc<SwitchInfo>,
    /// One state slot per app, by app index.
    slots: Vec<Slot>,
    /// The xid counter and the pending requests.
    requests: Requests,
    /// When each per-switch timer runs next.
    schedule: Schedule,
    /// Jitter for the timers.
    rng: Rng,
    /// The uid this switch is listed under in `Switches`.
    uid: u64,
    /// For a switch driven by hand: what others sent it through `Switches`.
    queue: Option<Arc<Mutex<Queued>>>,
    /// Its handlers' calls and timed calls, added to the pipeline's totals at each
    /// publish ([`crate::timing`]).
    timing: Local,
    /// The flows the switch had when it connected, until `switch_added` has the apps
    /// adopt them ([`crate::reconcile`]); `None`: not known.
    found: Option<Vec<openflow::ofctl::FlowEntry>>,
    /// A message was handled since the last [`Pipeline::turn_end`].
    in_turn: bool,
}

impl std::fmt::Debug for SwitchState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchState")
            .field("dpid", &Dpid(self.info.dpid))
            .field("requests", &self.requests)
            .finish()
    }
}

impl SwitchState {
    /// When the earliest pending request times out or the earliest timer is due (the
    /// worker calls [`Pipeline::tick`] then).
    pub fn next_deadline(&self) -> Option<Instant> {
        match (self.requests.next_deadline(), self.schedule.next()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The switch.
    pub fn info(&self) -> &SwitchInfo {
        &self.info
    }

    /// Requests waiting for a reply.
    pub fn pending_requests(&self) -> usize {
        self.requests.len()
    }

    /// The xid counter and pending requests (tests near the wrap).
    #[cfg(test)]
    pub(crate) fn requests_mut(&mut self) -> &mut Requests {
        &mut self.requests
    }

    /// A fresh xid for a message the core itself sends to this switch.
    pub fn next_xid(&mut self) -> u32 {
        self.requests.next_xid()
    }
}

impl Pipeline {
    /// Builds every app (in order), merges the services they and the caller provide,
    /// then starts every app in order. A failing start stops the apps already started
    /// (in reverse) and returns the error.
    ///
    /// The core's [`Switches`] is among the services every app's `start` sees.
    pub fn build(
        apps: Vec<Box<dyn AnyApp>>,
        mut services: Services,
    ) -> Result<Pipeline, StartError> {
        let switches = Arc::new(Switches::new());
        services.provide(Arc::clone(&switches), "controller")?;
        let all_panics = Arc::new(AtomicU64::new(0));
        let app_events: Arc<Subscribers<AppEvent>> = Arc::default();
        let timings = Timings::new();
        let mut known: Vec<Known> = Vec::with_capacity(apps.len());
        for (index, app) in apps.into_iter().enumerate() {
            let app: Arc<dyn AnyApp> = Arc::from(app);
            let name = app.app_name();
            if known.iter().any(|k| k.name == name) {
                return Err(StartError::DuplicateApp { app: name });
            }
            let tag = crate::cookie::app_tag(name);
            if let Some(k) = known.iter().find(|k| k.tag == tag) {
                return Err(StartError::CookieTagCollision {
                    first: k.name,
                    second: name,
                });
            }
            let mut reg = register(&app, index, &timings)?;
            services.merge(std::mem::take(&mut reg.services))?;
            let panics = Arc::new(AtomicU64::new(0));
            let guard = AppGuard::new(
                name,
                Arc::clone(&panics),
                Arc::clone(&all_panics),
                Arc::clone(&app_events),
            );
            known.push(Known {
                app,
                name,
                tag,
                reg,
                running: false,
                removed: false,
                loaded: false,
                starts: 0,
                guard,
                unsubscribe: Vec::new(),
                panics,
            });
        }
        let order = (0..known.len()).collect();
        let apps = Apps {
            known,
            order,
            generation: 0,
        };
        let plan = Plan::new(0, &apps, Vec::new());
        let pipeline = Pipeline {
            generation: AtomicU64::new(0),
            plan: RwLock::new(Arc::new(plan)),
            apps: Mutex::new(apps),
            global_due: Mutex::new(HashMap::new()),
            switches,
            services,
            counters: PipelineCounters {
                handler_panics: all_panics,
                ..PipelineCounters::default()
            },
            app_events,
            timings,
            workers: OnceLock::new(),
            timer_waker: OnceLock::new(),
            flow_removal_ms: AtomicU64::new(FLOW_REMOVAL_TIMEOUT.as_millis() as u64),
            loader: Mutex::new(None),
        };
        {
            let mut apps = lock(&pipeline.apps);
            for i in 0..apps.known.len() {
                if let Err(err) = pipeline.start_index(&mut apps, i) {
                    // Not logged here: the caller reports the error it gets, once.
                    for j in (0..i).rev() {
                        pipeline.stop_index(&mut apps, j);
                    }
                    return Err(err);
                }
                tracing::debug!(app = apps.known[i].name, "app started");
            }
            pipeline.publish_plan(&mut apps);
        }
        Ok(pipeline)
    }

    /// Stops every running app, in reverse order (at controller shutdown, after the
    /// switches).
    pub fn stop(&self) {
        let mut apps = lock(&self.apps);
        for i in apps.order.clone().into_iter().rev() {
            if apps.known[i].running {
                self.stop_index(&mut apps, i);
            }
        }
        self.publish_plan(&mut apps);
    }

    /// Makes the running apps' plan the current one (a new generation); switches
    /// move to it before their next message, or when their worker is told.
    pub(crate) fn publish_plan(&self, apps: &mut Apps) -> u64 {
        apps.generation += 1;
        let requires = (0..apps.known.len())
            .map(|i| self.providers(apps, i))
            .collect();
        let plan = Arc::new(Plan::new(apps.generation, apps, requires));
        *self.plan.write().unwrap_or_else(|e| e.into_inner()) = plan;
        self.generation.store(apps.generation, Relaxed);
        if let Some(wake) = self.timer_waker.get() {
            wake();
        }
        apps.generation
    }

    /// The plan in force.
    pub(crate) fn current_plan(&self) -> Arc<Plan> {
        Arc::clone(&self.plan.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The workers the lifecycle tells of a change ([`crate::worker::Command::Refresh`]).
    pub fn attach_workers(&self, workers: &[WorkerHandle]) {
        let _ = self.workers.set(workers.to_vec());
    }

    /// How to wake the controller's timer thread.
    pub fn set_timer_waker(&self, wake: Box<dyn Fn() + Send + Sync>) {
        let _ = self.timer_waker.set(wake);
    }

    /// How long a stopped app's flows may take to leave each switch (a test driving
    /// switches by hand sets it short: nobody answers them).
    pub fn set_flow_removal_timeout(&self, timeout: Duration) {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.flow_removal_ms.store(ms, Relaxed);
    }

    pub(crate) fn flow_removal_timeout(&self) -> Duration {
        Duration::from_millis(self.flow_removal_ms.load(Relaxed))
    }

    pub(crate) fn timings(&self) -> &Timings {
        &self.timings
    }

    /// The workers (empty for a pipeline driven by hand).
    pub(crate) fn worker_handles(&self) -> &[WorkerHandle] {
        self.workers.get().map_or(&[], Vec::as_slice)
    }

    /// Forgets when the global timers of app `app` are due (it stopped: a restart
    /// starts their clock again). Waits for a global tick in progress to end.
    pub(crate) fn forget_global_timers(&self, reg: &Registry) {
        let mut due = lock(&self.global_due);
        for (_, h) in &reg.global_timers {
            due.remove(&h.id);
        }
    }

    /// The apps' names, in app order (removed apps left out).
    pub fn app_names(&self) -> Vec<&'static str> {
        let plan = self.current_plan();
        plan.order.iter().map(|&i| plan.apps[i].name).collect()
    }

    /// Whether the app named `name` is quarantined (`None`: no such app).
    pub fn is_quarantined(&self, name: &str) -> Option<bool> {
        let plan = self.current_plan();
        let i = plan.index(name)?;
        // Acquire pairs with the quarantine's Release: once this reads true, the
        // reason is there too.
        Some(plan.apps[i].quarantined.load(Acquire))
    }

    /// Why the app named `name` is quarantined: its first panic since it last started
    /// (`None`: it runs, or there is no such app).
    pub fn quarantine_reason(&self, name: &str) -> Option<Quarantine> {
        let plan = self.current_plan();
        let i = plan.index(name)?;
        plan.apps[i].guard.quarantine_reason()
    }

    /// Adds what switch `sw`'s handlers did since the last call to the totals
    /// [`Pipeline::handler_timings`] reads: the worker calls it at its counters'
    /// publish interval (and the pipeline when the switch leaves); a caller driving
    /// switches by hand calls it before reading.
    pub fn publish_timings(&self, sw: &mut SwitchState) {
        self.timings.publish(&mut sw.timing);
    }

    /// Every handler's calls and time, by app (in app order) then handler, as last
    /// published (see [`crate::timing`] for how they are measured). An app's `reply`
    /// handler shows once it was called; removed apps' handlers do not show.
    pub fn handler_timings(&self) -> Vec<HandlerTiming> {
        let plan = self.current_plan();
        let name = |app: usize| plan.apps.get(app).map_or("(unknown)", |a| a.name);
        let mut v = self.timings.snapshot(name);
        v.retain(|t| t.handler != "reply" || t.calls > 0);
        let order = |t: &HandlerTiming| plan.order.iter().position(|&i| plan.apps[i].name == t.app);
        v.retain(|t| order(t).is_some());
        v.sort_by_key(order);
        v
    }

    /// The counters the apps publish ([`crate::app::Builder::counter`]), in app order
    /// (stopped apps' too; removed apps' not).
    pub fn app_counters(&self) -> Vec<AppCounterValue> {
        let plan = self.current_plan();
        plan.order
            .iter()
            .flat_map(|&i| {
                let app = &plan.apps[i];
                app.counters.iter().map(|c| AppCounterValue {
                    app: app.name,
                    name: c.name,
                    help: c.help,
                    value: c.counter.get(),
                })
            })
            .collect()
    }

    /// Panics caught in the handlers of the app named `name` (over all its starts).
    pub fn panics(&self, name: &str) -> Option<u64> {
        let plan = self.current_plan();
        let i = plan.index(name)?;
        Some(plan.apps[i].panics.load(Relaxed))
    }

    /// The services apps and the caller provided, and the core's [`Switches`].
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// The core's directory of switches (the [`Switches`] service).
    pub fn switches(&self) -> &Arc<Switches> {
        &self.switches
    }

    /// The pipeline's counters.
    pub fn counters(&self) -> PipelineCountersSnapshot {
        self.counters.snapshot()
    }

    /// A fresh state for a switch driven by hand (no worker): listed in
    /// [`Switches`], where what is sent to it waits for [`Pipeline::take_queued`]. Its
    /// timers' jitter is deterministic (seeded from the dpid and the order the
    /// hand-driven switches were made in), so a test replays exactly.
    pub fn new_switch(&self, info: SwitchInfo) -> SwitchState {
        let info = Arc::new(info);
        let (uid, queue) = self.switches.add_local(Arc::clone(&info));
        self.state(info, uid, Some(queue))
    }

    /// A fresh state for a switch that completed its handshake, served at `route`
    /// (listed in [`Switches`] under it, replacing an older connection of the dpid).
    pub fn new_switch_at(&self, info: SwitchInfo, route: Route) -> SwitchState {
        let info = Arc::new(info);
        self.switches.add_routed(Arc::clone(&info), route);
        self.state(info, route.uid, None)
    }

    fn state(
        &self,
        info: Arc<SwitchInfo>,
        uid: u64,
        queue: Option<Arc<Mutex<Queued>>>,
    ) -> SwitchState {
        // A switch driven by hand (a test) jitters the same way every run: its tests
        // replay exactly. A connection's jitter is seeded from the process's randomness.
        let rng = match queue {
            Some(_) => Rng::seeded(info.dpid ^ uid),
            None => Rng::new(info.dpid ^ uid),
        };
        let plan = self.current_plan();
        SwitchState {
            rng,
            info,
            generation: plan.generation,
            slots: plan
                .apps
                .iter()
                .map(|e| match e.running {
                    true => Slot::new(e.app.new_state()),
                    false => placeholder(),
                })
                .collect(),
            plan,
            added: false,
            requests: Requests::new(),
            schedule: Schedule::default(),
            uid,
            queue,
            timing: self.timings.local(),
            found: None,
            in_turn: false,
        }
    }

    /// Brings switch `sw` to the current plan if a change came since it last ran (a
    /// worker does it when told of a change, and before each message; a caller driving
    /// switches by hand may call it to reach an idle switch).
    pub fn refresh(&self, sw: &mut SwitchState, out: &mut Vec<u8>, now: Instant) {
        if self.generation.load(Relaxed) != sw.generation {
            self.migrate(sw, out, now);
        }
    }

    /// Moves switch `sw` to the current plan, between two messages: the slots, pending
    /// requests (callbacks not run) and timers of apps no longer running (or restarted)
    /// are dropped; apps that started get fresh state, their timers start, and (once
    /// the switch was added) their initializers then switch-added listeners run on it.
    #[cold]
    #[inline(never)]
    fn migrate(&self, sw: &mut SwitchState, out: &mut Vec<u8>, now: Instant) {
        let new = self.current_plan();
        let old = std::mem::replace(&mut sw.plan, Arc::clone(&new));
        sw.generation = new.generation;
        sw.requests.drop_apps(|app| old.same_start(&new, app));
        sw.slots.resize_with(new.apps.len(), placeholder);
        let mut started = Vec::new();
        for (i, slot) in sw.slots.iter_mut().enumerate() {
            if old.same_start(&new, i) {
                continue;
            }
            *slot = match new.apps[i].running {
                true => {
                    started.push(i);
                    Slot::new(new.apps[i].app.new_state())
                }
                false => placeholder(),
            };
        }
        sw.timing.grow(self.timings.len());
        if !sw.added {
            return;
        }
        // Timers: those of apps going on keep their times, those of apps started begin.
        let due = new
            .timers
            .iter()
            .zip(&new.periods)
            .map(|(h, period)| {
                let kept = old
                    .timers
                    .iter()
                    .position(|o| o.id == h.id)
                    .filter(|_| old.same_start(&new, h.app));
                match kept {
                    Some(j) => sw.schedule.due_of(j),
                    None => Some(now + period.first(&mut sw.rng)),
                }
            })
            .collect();
        sw.schedule = Schedule::from_due(due);
        if started.is_empty() {
            return;
        }
        let plan = &*new;
        let SwitchState {
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let mut ctx = self.ctx(info, out, requests, now);
        for (handlers, what) in [
            (&plan.initialize, "initialize"),
            (&plan.switch_added, "switch_added"),
        ] {
            for h in handlers.iter().filter(|h| started.contains(&h.app)) {
                if plan.skip(h.app, &mut ctx) {
                    continue;
                }
                let s = &mut slots[h.app];
                let c = &mut ctx;
                let dpid = info.dpid;
                self.timed(plan, timing, h.id, h.app, Some(dpid), what, || {
                    (h.call)(c, s)
                });
            }
        }
    }

    /// The switch's info.
    pub fn info<'a>(&self, sw: &'a SwitchState) -> &'a SwitchInfo {
        &sw.info
    }

    /// Moves what was sent to a hand-driven switch through [`Switches`] into `out`, in
    /// the order it was sent, each message with a fresh xid; requests
    /// ([`Switches::request`]) are registered as pending at `now` (a worker does this as
    /// the messages arrive).
    pub fn take_queued(&self, sw: &mut SwitchState, out: &mut Vec<u8>, now: Instant) {
        let Some(queue) = &sw.queue else {
            return;
        };
        let Queued { bytes, requests } = std::mem::take(&mut *lock(queue));
        let mut from = 0;
        for r in requests {
            self.deliver(sw, &bytes[from..r.at], out);
            from = r.at;
            self.request(sw, &r.messages, out, now, r.timeout, r.answer);
        }
        self.deliver(sw, &bytes[from..], out);
    }

    /// Appends a request from elsewhere ([`Switches::request`]: whole messages, xid 0)
    /// to `out`, the messages with consecutive fresh xids, and registers one pending
    /// entry for them that times out at `now + timeout` (see [`crate::requests`]).
    pub fn request(
        &self,
        sw: &mut SwitchState,
        messages: &[u8],
        out: &mut Vec<u8>,
        now: Instant,
        timeout: Duration,
        answer: Answer,
    ) {
        let n = frames(messages).count();
        let Ok(n) = u32::try_from(n) else {
            return answer.send(crate::requests::Reply::SwitchGone);
        };
        if n == 0 {
            // Switches::request never queues an empty request.
            return answer.send(crate::requests::Reply::SwitchGone);
        }
        let first = sw.requests.next_xids(n);
        // `first + n - 1` fits (the range never wraps); `(first..)` could step past it.
        for (i, frame) in (0..n).zip(frames(messages)) {
            let at = out.len();
            out.extend_from_slice(frame);
            out[at + 4..at + 8].copy_from_slice(&(first + i).to_be_bytes());
        }
        let last = first + (n - 1);
        sw.requests
            .insert_external(first, last, now + timeout, answer);
    }

    /// Appends messages sent from elsewhere (whole messages, xid 0) to `out`, each with
    /// a fresh xid from the switch's counter.
    pub fn deliver(&self, sw: &mut SwitchState, messages: &[u8], out: &mut Vec<u8>) {
        for frame in frames(messages) {
            let at = out.len();
            out.extend_from_slice(frame);
            let xid = sw.requests.next_xid();
            out[at + 4..at + 8].copy_from_slice(&xid.to_be_bytes());
        }
    }

    /// The flows the switch had when it connected (`None`: not known), for
    /// [`Pipeline::switch_added`] to have the apps adopt ([`crate::reconcile`]).
    pub fn set_found_flows(
        &self,
        sw: &mut SwitchState,
        flows: Option<Vec<openflow::ofctl::FlowEntry>>,
    ) {
        sw.found = flows;
    }

    /// The found flows, each kept or deleted by its owner (see [`crate::reconcile`]);
    /// the deletes go to `out`. Returns the flows kept (`None`: not known).
    fn adopt_found(
        &self,
        sw: &mut SwitchState,
        out: &mut Vec<u8>,
        now: Instant,
    ) -> Option<Vec<openflow::ofctl::FlowEntry>> {
        let found = sw.found.take()?;
        let SwitchState {
            plan,
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let plan = &**plan;
        let mut ctx = self.ctx(info, out, requests, now);
        let mut kept = Vec::with_capacity(found.len());
        let mut deleted = 0usize;
        for e in found {
            let tag = crate::cookie::tag_of(e.flow.cookie);
            // The owner: a running app with the flow's tag.
            let owner = plan
                .apps
                .iter()
                .position(|a| tag != 0 && a.running && a.tag == tag);
            let keep = match owner {
                Some(app) if !plan.skip(app, &mut ctx) => {
                    match plan.adopt.iter().find(|h| h.app == app) {
                        Some(h) => {
                            let (s, c, f) = (&mut slots[app], &mut ctx, &e);
                            let (what, dpid) = ("adopt", Some(info.dpid));
                            let r = self
                                .timed(plan, timing, h.id, app, dpid, what, || (h.call)(c, s, f));
                            r == Some(crate::reconcile::Adopt::Keep)
                        }
                        None => true,
                    }
                }
                _ => false,
            };
            if keep {
                kept.push(e);
            } else if let Some(m) = crate::removal::delete_strict(&e.flow, info.version) {
                let xid = ctx.requests.next_xid();
                if m.encode(xid, ctx.out).is_ok() {
                    deleted += 1;
                }
            }
        }
        tracing::info!(
            dpid = %Dpid(info.dpid),
            kept = kept.len(),
            deleted,
            "flows found on the switch adopted by their apps; the others deleted"
        );
        Some(kept)
    }

    /// The found flows adopted or deleted ([`crate::reconcile`]), then initializers,
    /// then switch-added listeners; what apps send goes to `out`. The switch's timers
    /// start now.
    pub fn switch_added(&self, sw: &mut SwitchState, out: &mut Vec<u8>, now: Instant) {
        self.refresh(sw, out, now);
        sw.added = true;
        let adopted = self.adopt_found(sw, out, now);
        let SwitchState {
            plan,
            info,
            timing,
            slots,
            requests,
            schedule,
            rng,
            ..
        } = sw;
        let plan = &**plan;
        *schedule = Schedule::start(&plan.periods, now, rng);
        let mut ctx = self.ctx(info, out, requests, now);
        ctx.adopted = adopted.as_deref();
        for (handlers, what) in [
            (&plan.initialize, "initialize"),
            (&plan.switch_added, "switch_added"),
        ] {
            for h in handlers {
                if plan.skip(h.app, &mut ctx) {
                    continue;
                }
                let s = &mut slots[h.app];
                let c = &mut ctx;
                let dpid = info.dpid;
                self.timed(plan, timing, h.id, h.app, Some(dpid), what, || {
                    (h.call)(c, s)
                });
            }
        }
    }

    /// The end of a turn of the switch's messages: runs the apps' turn-end handlers
    /// ([`crate::app::Builder::on_turn_end`]) if a message was handled since the last
    /// call. A worker calls it after each turn; a caller driving switches by hand calls
    /// it after a group of [`Pipeline::handle`] calls.
    #[inline]
    pub fn turn_end(&self, sw: &mut SwitchState, out: &mut Vec<u8>, now: Instant) {
        if !std::mem::take(&mut sw.in_turn) || sw.plan.turn_end.is_empty() {
            return;
        }
        self.run_turn_end(sw, out, now);
    }

    #[inline(never)]
    fn run_turn_end(&self, sw: &mut SwitchState, out: &mut Vec<u8>, now: Instant) {
        let SwitchState {
            plan,
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let plan = &**plan;
        let mut ctx = self.ctx(info, out, requests, now);
        for h in &plan.turn_end {
            if plan.skip(h.app, &mut ctx) {
                continue;
            }
            let s = &mut slots[h.app];
            let c = &mut ctx;
            let dpid = Some(info.dpid);
            self.timed(plan, timing, h.id, h.app, dpid, "turn end", || {
                (h.call)(c, s)
            });
        }
    }

    /// One whole message from the switch (exactly one frame, header included).
    pub fn handle(&self, sw: &mut SwitchState, frame: &[u8], out: &mut Vec<u8>, now: Instant) {
        // The worker framed this message and checked its header (conn.rs): only a
        // length guard is left here, for callers that did not (tests, simulations).
        // PACKET_IN, the hot path, goes straight to its view.
        // A change of the apps reaches this switch here, between two messages: one
        // relaxed load per message, the migration itself out of line.
        if self.generation.load(Relaxed) != sw.generation {
            self.migrate(sw, out, now);
        }
        sw.in_turn = true;
        if frame.len() < openflow::HEADER_LEN {
            self.decode_error(sw.info.dpid, "a frame shorter than ofp_header");
            return;
        }
        let msg_type = frame[1];
        if msg_type == PACKET_IN {
            return self.packet_in(sw, frame, out, now);
        }
        let xid = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        let Ok(version) = Version::from_wire(frame[0]) else {
            self.decode_error(sw.info.dpid, "an unsupported version");
            return;
        };
        if msg_type == PORT_STATUS {
            return self.port_status(sw, frame, out, now);
        }
        if msg_type != FLOW_REMOVED && sw.requests.is_pending(xid) {
            return self.reply(sw, version, msg_type, xid, frame, out, now);
        }
        let Some(kind) = MessageKind::from_wire(version, msg_type) else {
            return;
        };
        if sw.plan.handlers_of(kind).is_none() {
            self.counters.unhandled.fetch_add(1, Relaxed);
            return;
        }
        let Some(msg) = self.decode(sw, frame) else {
            return;
        };
        self.run_message_handlers(sw, kind, &msg, out, now);
    }

    fn decode(&self, sw: &SwitchState, frame: &[u8]) -> Option<Message> {
        match Message::decode(frame) {
            Ok((_, m)) => Some(m),
            Err(e) => {
                self.decode_error(sw.info.dpid, &e.to_string());
                None
            }
        }
    }

    /// The handlers of one message kind, in order, until one stops (observers always).
    fn run_message_handlers(
        &self,
        sw: &mut SwitchState,
        kind: MessageKind,
        msg: &Message,
        out: &mut Vec<u8>,
        now: Instant,
    ) {
        let SwitchState {
            plan,
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let plan = &**plan;
        let Some(handlers) = plan.handlers_of(kind) else {
            return;
        };
        let mut ctx = self.ctx(info, out, requests, now);
        let mut stopped = false;
        for h in handlers {
            if (stopped && h.order.phase != Phase::Observe) || plan.skip(h.app, &mut ctx) {
                continue;
            }
            let s = &mut slots[h.app];
            let c = &mut ctx;
            let flow = self.timed(
                plan,
                timing,
                h.id,
                h.app,
                Some(info.dpid),
                msg.type_name(),
                || (h.call)(c, s, msg),
            );
            if flow == Some(Flow::Stop) && h.order.phase != Phase::Observe {
                stopped = true;
            }
        }
    }

    /// PORT_STATUS: the port list is updated (here and in `Switches`) before any app
    /// hears of it; then the port-status handlers, then the message handlers.
    fn port_status(&self, sw: &mut SwitchState, frame: &[u8], out: &mut Vec<u8>, now: Instant) {
        let Some(msg) = self.decode(sw, frame) else {
            return;
        };
        if let Some((reason, port)) = PortInfo::from_port_status(&msg) {
            let mut info = SwitchInfo::clone(&sw.info);
            info.apply_port_status(reason, &port);
            sw.info = Arc::new(info);
            self.switches
                .update(sw.uid, Arc::clone(&sw.info), reason, &port);
            let SwitchState {
                plan,
                info,
                timing,
                slots,
                requests,
                ..
            } = &mut *sw;
            let plan = &**plan;
            let mut ctx = self.ctx(info, out, requests, now);
            for h in &plan.port_status {
                if plan.skip(h.app, &mut ctx) {
                    continue;
                }
                let s = &mut slots[h.app];
                let c = &mut ctx;
                let p = &port;
                let dpid = Some(info.dpid);
                self.timed(plan, timing, h.id, h.app, dpid, "PORT_STATUS", || {
                    (h.call)(c, s, reason, p)
                });
            }
        }
        self.run_message_handlers(sw, MessageKind::PortStatus, &msg, out, now);
    }

    /// The hot path: a PACKET_IN, viewed in place, through the ordered handlers.
    /// Gives `frame`, the switch's next message, to the apps' PACKET_IN prefetch hints
    /// ([`crate::app::Builder::prefetch_packet_in`]) if it is a PACKET_IN.
    #[inline]
    pub fn prefetch(&self, sw: &SwitchState, frame: &[u8]) {
        let plan = &*sw.plan;
        if plan.prefetch.is_empty() || frame.get(1) != Some(&PACKET_IN) {
            return;
        }
        let Ok(p) = PacketIn::new_checked(frame) else {
            return;
        };
        for (app, call) in &plan.prefetch {
            if crate::events::is_quarantined(&plan.apps[*app].quarantined) {
                continue;
            }
            let s = &sw.slots[*app];
            self.guarded(plan, *app, Some(sw.info.dpid), "PACKET_IN prefetch", || {
                call(s, &p)
            });
        }
    }

    fn packet_in(&self, sw: &mut SwitchState, frame: &[u8], out: &mut Vec<u8>, now: Instant) {
        // Borrowed where `new_checked` left it, not moved: the move copied the view
        // with loads that straddle the callee's stores (a store-forwarding stall, 5%
        // of the worker's time in a profile of the learning switch).
        let checked = PacketIn::new_checked(frame);
        let p = match &checked {
            Ok(p) => p,
            Err(e) => {
                self.decode_error(sw.info.dpid, &e.to_string());
                return;
            }
        };
        let SwitchState {
            plan,
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let plan = &**plan;
        if plan.packet_in.is_empty() {
            self.counters.unhandled.fetch_add(1, Relaxed);
            return;
        }
        let mut ctx = self.ctx(info, out, requests, now);
        let mut stopped = false;
        // One PACKET_IN in PACKET_IN_SAMPLE_EVERY has its handlers timed (crate::timing).
        let mut clock = timing.sample_packet_in().then(Instant::now);
        for h in &plan.packet_in {
            if (stopped && h.order.phase != Phase::Observe) || plan.skip(h.app, &mut ctx) {
                continue;
            }
            let s = &mut slots[h.app];
            let c = &mut ctx;
            timing.count_only(h.id);
            let dpid = Some(info.dpid);
            let flow = self.guarded(plan, h.app, dpid, "PACKET_IN", || (h.call)(c, s, p));
            if let Some(before) = clock {
                let after = Instant::now();
                let nanos = u64::try_from((after - before).as_nanos()).unwrap_or(u64::MAX);
                timing.timed_since(h.id, nanos);
                clock = Some(after);
            }
            if flow == Some(Flow::Stop) && h.order.phase != Phase::Observe {
                stopped = true;
            }
        }
    }

    /// A message whose xid a request waits for: gathered, then given to the requester.
    #[allow(clippy::too_many_arguments)]
    fn reply(
        &self,
        sw: &mut SwitchState,
        version: Version,
        msg_type: u8,
        xid: u32,
        frame: &[u8],
        out: &mut Vec<u8>,
        now: Instant,
    ) {
        let Some(msg) = self.decode(sw, frame) else {
            return;
        };
        let multipart = matches!(
            MessageKind::from_wire(version, msg_type),
            Some(MessageKind::MultipartReply)
        );
        // ofp_stats_reply / ofp_multipart_reply: header(8) type(2) flags(2); the MORE
        // flag is bit 0 of flags in both versions (1.0 §5.3.5 OFPSF_REPLY_MORE, 1.3
        // §7.3.5 OFPMPF_REPLY_MORE).
        let more = multipart && frame.len() >= 12 && frame[11] & 1 != 0;
        if let Some(done) = sw.requests.on_reply(xid, msg, more, msg_type == ERROR) {
            self.counters.replies.fetch_add(1, Relaxed);
            self.answer(sw, done, out, now);
        }
    }

    /// Times out the requests whose deadline is at or before `now`, then runs the
    /// per-switch timers due by `now`.
    pub fn tick(&self, sw: &mut SwitchState, out: &mut Vec<u8>, now: Instant) {
        self.refresh(sw, out, now);
        while let Some(done) = sw.requests.pop_expired(now) {
            self.counters.request_timeouts.fetch_add(1, Relaxed);
            let app = match &done.owner {
                Owner::App { app, .. } => sw.plan.apps[*app].name,
                Owner::External(_) => "(external)",
            };
            tracing::debug!(app, dpid = %Dpid(sw.info.dpid), "request timed out");
            self.answer(sw, done, out, now);
        }
        let SwitchState {
            plan,
            info,
            timing,
            slots,
            requests,
            schedule,
            rng,
            ..
        } = sw;
        let plan = &**plan;
        let mut ctx = self.ctx(info, out, requests, now);
        while let Some(i) = schedule.due(now) {
            let h = &plan.timers[i];
            if plan.skip(h.app, &mut ctx) {
                schedule.stop(i);
                continue;
            }
            // Rescheduled first: a timer that panics is not run again at once (nor
            // ever, as its app is quarantined).
            schedule.ran(i, &plan.periods[i], now, rng);
            let s = &mut slots[h.app];
            let c = &mut ctx;
            self.timed(plan, timing, h.id, h.app, Some(info.dpid), "timer", || {
                (h.call)(c, s)
            });
        }
    }

    /// Runs the global timers due at `now` (the first call starts their clock: each
    /// first runs a period later); returns when the next one is due, `None` when
    /// there are none (left).
    pub fn global_tick(&self, now: Instant) -> Option<Instant> {
        let plan = self.current_plan();
        if plan.global_timers.is_empty() {
            return None;
        }
        let mut due = lock(&self.global_due);
        let mut next: Option<Instant> = None;
        for (period, h) in &plan.global_timers {
            let d = due.entry(h.id).or_insert(Some(now + *period));
            if plan.apps[h.app].quarantined.load(Relaxed) {
                *d = None;
                continue;
            }
            if d.is_some_and(|d| d <= now) {
                *d = Some(now + *period);
                let switches = &*self.switches;
                let started = Instant::now();
                self.guarded(&plan, h.app, None, "global timer", || {
                    (h.call)(switches, now)
                });
                let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                self.timings.add_one(h.id, nanos);
                // The timer may have got its app quarantined.
                if plan.apps[h.app].quarantined.load(Relaxed) {
                    *d = None;
                }
            }
            if let Some(d) = *d {
                next = Some(next.map_or(d, |n| n.min(d)));
            }
        }
        next
    }

    /// Gives a finished request's callback its reply: an app's under its guard, with
    /// its state; an external one directly.
    fn answer(&self, sw: &mut SwitchState, done: Done, out: &mut Vec<u8>, now: Instant) {
        let Done { owner, reply } = done;
        let (app, callback) = match owner {
            Owner::App { app, callback } => (app, callback),
            Owner::External(answer) => return answer.send(reply),
        };
        let SwitchState {
            plan,
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let plan = &**plan;
        let mut ctx = self.ctx(info, out, requests, now);
        if plan.skip(app, &mut ctx) {
            return;
        }
        let any = plan.apps[app].app.as_any();
        // The callback downcasts the state itself: the boxed state, not the slot (a
        // `&mut Slot` would coerce to `dyn Any` too, and never downcast).
        let s = &mut *slots[app].state;
        let c = &mut ctx;
        let id = plan.reply_ids[app];
        self.timed(plan, timing, id, app, Some(info.dpid), "reply", || {
            callback(any, c, s, reply)
        });
    }

    /// The switch left: it is unlisted from [`Switches`], its pending requests' callbacks
    /// get [`crate::requests::Reply::SwitchGone`] (what they send to it is discarded),
    /// the switch-removed listeners run, and the state (every app's slot, the timers)
    /// is dropped.
    pub fn switch_removed(&self, mut sw: SwitchState, reason: &str, now: Instant) {
        // What migrating sends goes nowhere: the switch is gone.
        self.refresh(&mut sw, &mut Vec::new(), now);
        self.switches.remove(sw.info.dpid, sw.uid, reason);
        tracing::debug!(
            dpid = %Dpid(sw.info.dpid),
            reason,
            pending = sw.requests.len(),
            "switch removed"
        );
        let mut discarded = Vec::new();
        while let Some(done) = sw.requests.pop_gone() {
            self.answer(&mut sw, done, &mut discarded, now);
        }
        let SwitchState {
            plan,
            info,
            mut slots,
            mut timing,
            ..
        } = sw;
        for h in &plan.switch_removed {
            if plan.apps[h.app].quarantined.load(Relaxed) {
                continue;
            }
            let state = std::mem::replace(&mut slots[h.app], placeholder());
            let i = &*info;
            self.timed(
                &plan,
                &mut timing,
                h.id,
                h.app,
                Some(info.dpid),
                "switch_removed",
                || (h.call)(i, state),
            );
        }
        drop(slots);
        self.timings.publish(&mut timing);
    }

    fn ctx<'a>(
        &'a self,
        info: &'a SwitchInfo,
        out: &'a mut Vec<u8>,
        requests: &'a mut Requests,
        now: Instant,
    ) -> SwitchCtx<'a> {
        SwitchCtx {
            info,
            out,
            requests,
            counters: &self.counters,
            switches: &self.switches,
            now,
            app: 0,
            app_name: "",
            tag: 0,
            adopted: None,
        }
    }

    /// Runs handler `id` of app `app` through [`Pipeline::guarded`], counted in
    /// `timing` and, one call in [`crate::timing::SAMPLE_EVERY`], timed: no clock read
    /// and no shared write for the others (see [`crate::timing`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn timed<R>(
        &self,
        plan: &Plan,
        timing: &mut Local,
        id: usize,
        app: usize,
        dpid: Option<u64>,
        what: &str,
        f: impl FnOnce() -> R,
    ) -> Option<R> {
        let started = timing.count(id).then(Instant::now);
        let r = self.guarded(plan, app, dpid, what, f);
        if let Some(started) = started {
            timing.timed(id, started);
        }
        r
    }

    /// Runs `f`; a panic quarantines app `app` and is logged and counted.
    #[inline]
    fn guarded<R>(
        &self,
        plan: &Plan,
        app: usize,
        dpid: Option<u64>,
        what: &str,
        f: impl FnOnce() -> R,
    ) -> Option<R> {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => Some(r),
            Err(payload) => {
                quarantine(&plan.apps[app].guard, dpid, what, payload.as_ref());
                None
            }
        }
    }

    #[cold]
    fn decode_error(&self, dpid: u64, why: &str) {
        self.counters.decode_errors.fetch_add(1, Relaxed);
        tracing::warn!(dpid = %Dpid(dpid), error = why, "message from switch not decoded; dropped");
    }
}

/// App `guard`'s code panicked with `payload`: quarantined (see [`crate::events`]).
#[cold]
fn quarantine(guard: &AppGuard, dpid: Option<u64>, what: &str, payload: &(dyn Any + Send)) {
    crate::events::quarantine(guard.health(), dpid, what, payload);
}

/// The state slot of an app with no state on this switch (stopped): zero-sized, so
/// no allocation.
fn placeholder() -> Slot {
    Slot::new(Box::new(()))
}

/// Runs `app`'s `build` into a registry of its own (app number `index`), and numbers
/// its handlers for their counts and time.
pub(crate) fn register(
    app: &Arc<dyn AnyApp>,
    index: usize,
    timings: &Timings,
) -> Result<Registry, StartError> {
    let mut reg = Registry::default();
    Arc::clone(app).register(index, &mut reg)?;
    for h in &mut reg.packet_in {
        h.id = timings.id(index, "PACKET_IN");
    }
    for (kind, h) in &mut reg.messages {
        h.id = timings.id(index, kind_name(*kind));
    }
    for (list, name) in [
        (&mut reg.initialize, "initialize"),
        (&mut reg.switch_added, "switch_added"),
        (&mut reg.turn_end, "turn_end"),
    ] {
        for h in list {
            h.id = timings.id(index, name);
        }
    }
    for (_, h) in &mut reg.timers {
        h.id = timings.id(index, "timer");
    }
    for h in &mut reg.port_status {
        h.id = timings.id(index, "PORT_STATUS");
    }
    for h in &mut reg.switch_removed {
        h.id = timings.id(index, "switch_removed");
    }
    for h in &mut reg.adopt {
        h.id = timings.id(index, "adopt");
    }
    for (_, h) in &mut reg.global_timers {
        h.id = timings.id(index, "global timer");
    }
    reg.reply_id = timings.id(index, "reply");
    Ok(reg)
}

/// The whole messages in `bytes`, by their header's length (a length below the header's
/// is taken as the header's, one past the end as the rest: the bytes come from our own
/// encoders).
fn frames(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.len() < openflow::HEADER_LEN {
            return None;
        }
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        let (frame, tail) = rest.split_at(len.clamp(openflow::HEADER_LEN, rest.len()));
        rest = tail;
        Some(frame)
    })
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
