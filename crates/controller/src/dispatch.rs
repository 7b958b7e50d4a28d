//! The app pipeline: the sans-IO boundary a worker calls for each switch.
//!
//! A [`Pipeline`] is built once from the apps ([`Pipeline::build`] runs their `build`
//! and `start`) and shared by every worker as `Arc<Pipeline>`; it holds the handlers of
//! each message kind in order, the timers, the core's [`Switches`] service, and one
//! quarantine flag per app. A [`SwitchState`] is one per switch, owned by the worker
//! serving it: the switch's info (ports current), every app's per-switch state slot,
//! the xid counter, the pending requests and the timer schedule. No sockets and no
//! clock reads: the worker passes the bytes, an output buffer and `now`.
//!
//! ```text
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

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openflow::view::PacketIn;
use openflow::{Message, Version};
use serde::Serialize;

use crate::app::{
    AnyApp, App, Builder, Dpid, Flow, MessageKind, Order, PacketInHandler, Phase, SwitchCtx,
};
use crate::counters::lock;
use crate::events::{AppEvent, AppGuard, Publisher, Quarantine, Subscribers};
use crate::info::{PortInfo, PortReason, SwitchInfo};
use crate::requests::{Answer, Done, Owner, Requests};
use crate::services::{Services, StartError};
use crate::switches::{Queued, Route, Switches};
use crate::timers::{Period, Rng, Schedule};
use crate::timing::{HandlerTiming, Local, Names, Timings};

/// A per-switch state slot, type-erased (downcast to `A::State`, a type-id compare).
type Slot = dyn Any + Send;
type PacketInCall =
    Box<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &PacketIn<&[u8]>) -> Flow + Send + Sync>;
type PrefetchCall = Box<dyn Fn(&Slot, &PacketIn<&[u8]>) + Send + Sync>;
type MessageCall = Box<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &Message) -> Flow + Send + Sync>;
type SwitchCall = Box<dyn Fn(&mut SwitchCtx<'_>, &mut Slot) + Send + Sync>;
type RemovedCall = Box<dyn Fn(&SwitchInfo, Box<Slot>) + Send + Sync>;
type PortStatusCall =
    Box<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, PortReason, &PortInfo) + Send + Sync>;
type GlobalCall = Box<dyn Fn(&Switches, Instant) + Send + Sync>;
type AdoptCall = Box<
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
struct Handler<F> {
    /// The app's index (its quarantine flag and state slot).
    app: usize,
    order: Order,
    /// Its number among the pipeline's handlers, for its counts and time
    /// ([`crate::timing`]); given by `Pipeline::build`.
    id: usize,
    call: F,
}

/// Handlers collected from every app's `build`, before they are sorted into a pipeline.
/// Opaque: apps only see it through [`AnyApp::register`].
#[derive(Default)]
pub struct Registry {
    packet_in: Vec<Handler<PacketInCall>>,
    /// PACKET_IN prefetch hints with their app's index, in app order.
    prefetch: Vec<(usize, PrefetchCall)>,
    messages: Vec<(MessageKind, Handler<MessageCall>)>,
    initialize: Vec<Handler<SwitchCall>>,
    switch_added: Vec<Handler<SwitchCall>>,
    switch_removed: Vec<Handler<RemovedCall>>,
    /// Adopt hooks, one at most per app ([`crate::reconcile`]).
    adopt: Vec<Handler<AdoptCall>>,
    port_status: Vec<Handler<PortStatusCall>>,
    timers: Vec<(Period, Handler<SwitchCall>)>,
    global_timers: Vec<(Duration, Handler<GlobalCall>)>,
    services: Services,
    /// Each app's guard, by app index (its quarantine flag, for code the pipeline
    /// does not call itself: service subscriptions).
    guards: Vec<AppGuard>,
    /// The service subscriptions apps asked for, with the app's index: made just
    /// before that app's `start`.
    subscriptions: Vec<(usize, Subscription)>,
    /// Every app's panics (the pipeline's `handler_panics`), shared with the guards.
    all_panics: Arc<AtomicU64>,
    /// Told of quarantines by the guards (the pipeline's [`Publisher`] of
    /// [`AppEvent`]s).
    app_events: Arc<Subscribers<AppEvent>>,
}

/// A subscription to make once every service is provided.
pub(crate) type Subscription = Box<dyn FnOnce(&Services) -> Result<(), StartError> + Send>;

fn slot<A: App>(s: &mut Slot) -> &mut A::State {
    // Slots are created by the app's own `new_state`, at the app's index: the types
    // always agree.
    s.downcast_mut::<A::State>()
        .expect("a state slot holds its app's State type")
}

impl Registry {
    /// The guard of the app `name`, to be registered next (at index `guards.len()`).
    pub(crate) fn new_guard(&mut self, name: &'static str) -> AppGuard {
        let g = AppGuard::new(
            name,
            Arc::clone(&self.all_panics),
            Arc::clone(&self.app_events),
        );
        self.guards.push(g.clone());
        g
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
            self.subscriptions
                .push((index, Box::new(move |services| subscribe(weak, services))));
        }
        for (order, h) in b.packet_in {
            let a = Arc::clone(&app);
            let call: PacketInCall = match h {
                PacketInHandler::Handle(f) => {
                    Box::new(move |ctx, s, p| f(&a, ctx, slot::<A>(s), p))
                }
                PacketInHandler::Observe(f) => Box::new(move |ctx, s, p| {
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
            let call: PrefetchCall = Box::new(move |s, p| {
                if let Some(s) = s.downcast_ref::<A::State>() {
                    f(&a, s, p)
                }
            });
            self.prefetch.push((index, call));
        }
        for (kind, order, f) in b.messages {
            let a = Arc::clone(&app);
            let call: MessageCall = Box::new(move |ctx, s, m| f(&a, ctx, slot::<A>(s), m));
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
        ] {
            for f in fs {
                let a = Arc::clone(&app);
                let call: SwitchCall = Box::new(move |ctx, s| f(&a, ctx, slot::<A>(s)));
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
                Box::new(move |ctx, s, reason, port| f(&a, ctx, slot::<A>(s), reason, port));
            self.port_status.push(Handler {
                app: index,
                order: Order::direct(0),
                id: 0,
                call,
            });
        }
        for (period, f) in b.timers {
            let a = Arc::clone(&app);
            let call: SwitchCall = Box::new(move |ctx, s| f(&a, ctx, slot::<A>(s)));
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
            let call: GlobalCall = Box::new(move |switches, now| f(&a, switches, now));
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
            let call: AdoptCall = Box::new(move |ctx, s, e| f(&a, ctx, slot::<A>(s), e));
            self.adopt.push(Handler {
                app: index,
                order: Order::direct(0),
                id: 0,
                call,
            });
        }
        if let Some(f) = b.switch_removed {
            let a = Arc::clone(&app);
            let call: RemovedCall = Box::new(move |info, s| match s.downcast::<A::State>() {
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

/// An app as the pipeline holds it.
struct AppEntry {
    app: Arc<dyn AnyApp>,
    name: &'static str,
    /// The cookie tag stamped on its flows ([`crate::cookie::app_tag`] of `name`).
    tag: u16,
    /// Set when a handler panicked: the app's handlers are skipped on every worker.
    /// Shared with the app's [`AppGuard`] (its subscriptions).
    quarantined: Arc<AtomicBool>,
    /// Panics caught in this app's handlers and subscriptions (shared likewise).
    panics: Arc<AtomicU64>,
}

/// Pipeline-wide counters (atomics: every worker adds to them).
#[derive(Debug, Default)]
pub struct PipelineCounters {
    /// Shared with the apps' guards, which count their subscriptions' panics.
    handler_panics: Arc<AtomicU64>,
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

/// The ordered handlers of every app, shared by all workers.
pub struct Pipeline {
    apps: Vec<AppEntry>,
    /// Sorted by order; ties in app order.
    packet_in: Vec<Handler<PacketInCall>>,
    /// PACKET_IN prefetch hints with their app's index, in app order.
    prefetch: Vec<(usize, PrefetchCall)>,
    /// Per kind, sorted by order.
    messages: Vec<(MessageKind, Vec<Handler<MessageCall>>)>,
    /// App order.
    initialize: Vec<Handler<SwitchCall>>,
    switch_added: Vec<Handler<SwitchCall>>,
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
    /// When each global timer is next due, by index (`None` inside: stopped, its app
    /// quarantined); `None` until the first `global_tick`, which starts the clock.
    global_due: Mutex<Option<Vec<Option<Instant>>>>,
    /// The core's directory of switches, also in `services`.
    switches: Arc<Switches>,
    services: Services,
    counters: PipelineCounters,
    /// Each app's guard, by app index: its name and panic counts for the log.
    guards: Vec<AppGuard>,
    /// Told of each app's quarantine (shared with the guards).
    app_events: Arc<Subscribers<AppEvent>>,
    /// Every handler's calls and time, as the workers last published them.
    timings: Timings,
    /// The number of each app's `reply` handler (its requests' callbacks), by app.
    reply_ids: Vec<usize>,
}

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
            .field("packet_in_handlers", &self.packet_in.len())
            .finish()
    }
}

/// One switch's pipeline state, owned by the worker serving the switch.
pub struct SwitchState {
    /// The switch, ports current (replaced whole on PORT_STATUS; shared with
    /// `Switches`).
    info: Arc<SwitchInfo>,
    /// One state slot per app, by app index.
    slots: Vec<Box<Slot>>,
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
        let mut reg = Registry {
            services,
            ..Registry::default()
        };
        let mut entries: Vec<AppEntry> = Vec::with_capacity(apps.len());
        for (index, app) in apps.into_iter().enumerate() {
            let app: Arc<dyn AnyApp> = Arc::from(app);
            let name = app.app_name();
            if entries.iter().any(|e| e.name == name) {
                return Err(StartError::DuplicateApp { app: name });
            }
            let tag = crate::cookie::app_tag(name);
            if let Some(e) = entries.iter().find(|e| e.tag == tag) {
                return Err(StartError::CookieTagCollision {
                    first: e.name,
                    second: name,
                });
            }
            Arc::clone(&app).register(index, &mut reg)?;
            let health = reg.guards[index].health();
            entries.push(AppEntry {
                app,
                name,
                tag,
                quarantined: Arc::clone(&health.quarantined),
                panics: Arc::clone(&health.panics),
            });
        }
        let Registry {
            mut packet_in,
            prefetch,
            messages,
            mut initialize,
            mut switch_added,
            mut switch_removed,
            mut adopt,
            mut port_status,
            timers,
            mut global_timers,
            services,
            guards,
            subscriptions,
            all_panics,
            app_events,
        } = reg;
        let (periods, mut timers): (Vec<Period>, Vec<Handler<SwitchCall>>) =
            timers.into_iter().unzip();
        // Stable: equal orders keep app order.
        packet_in.sort_by_key(|h| h.order);
        let mut by_kind: Vec<(MessageKind, Vec<Handler<MessageCall>>)> = Vec::new();
        for (kind, h) in messages {
            match by_kind.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, list)) => list.push(h),
                None => by_kind.push((kind, vec![h])),
            }
        }
        for (_, list) in &mut by_kind {
            list.sort_by_key(|h| h.order);
        }
        // Every handler numbered by (app, kind of call), for its counts and time.
        let mut names = Names::default();
        for h in &mut packet_in {
            h.id = names.id(h.app, "PACKET_IN");
        }
        for (kind, list) in &mut by_kind {
            for h in list {
                h.id = names.id(h.app, kind_name(*kind));
            }
        }
        for (list, name) in [
            (&mut initialize, "initialize"),
            (&mut switch_added, "switch_added"),
            (&mut timers, "timer"),
        ] {
            for h in list {
                h.id = names.id(h.app, name);
            }
        }
        for h in &mut port_status {
            h.id = names.id(h.app, "PORT_STATUS");
        }
        for h in &mut switch_removed {
            h.id = names.id(h.app, "switch_removed");
        }
        for h in &mut adopt {
            h.id = names.id(h.app, "adopt");
        }
        for (_, h) in &mut global_timers {
            h.id = names.id(h.app, "global timer");
        }
        let reply_ids = (0..entries.len()).map(|a| names.id(a, "reply")).collect();
        // In app order, as the apps were registered.
        let mut subscriptions = subscriptions.into_iter().peekable();
        for (i, e) in entries.iter().enumerate() {
            // The app's subscriptions first: its `start` may read the service's state,
            // and must not miss a change made after it read.
            let mut started = Ok(());
            while let Some((_, subscribe)) = subscriptions.next_if(|(app, _)| *app == i) {
                started = started.and_then(|()| subscribe(&services));
            }
            if let Err(err) = started.and_then(|()| e.app.start_app(&services)) {
                // Not logged here: the caller reports the error it gets, once.
                for started in entries[..i].iter().rev() {
                    started.app.stop_app();
                }
                return Err(err);
            }
            tracing::debug!(app = e.name, "app started");
        }
        Ok(Pipeline {
            apps: entries,
            packet_in,
            prefetch,
            messages: by_kind,
            initialize,
            switch_added,
            switch_removed,
            adopt,
            port_status,
            timers,
            periods,
            global_timers,
            global_due: Mutex::new(None),
            guards,
            app_events,
            timings: Timings::new(names),
            reply_ids,
            switches,
            services,
            counters: PipelineCounters {
                handler_panics: all_panics,
                ..PipelineCounters::default()
            },
        })
    }

    /// Stops every app, in reverse order (at controller shutdown, after the switches).
    pub fn stop(&self) {
        for e in self.apps.iter().rev() {
            e.app.stop_app();
        }
    }

    /// The apps' names, in order.
    pub fn app_names(&self) -> Vec<&'static str> {
        self.apps.iter().map(|e| e.name).collect()
    }

    /// Whether the app named `name` is quarantined (`None`: no such app).
    pub fn is_quarantined(&self, name: &str) -> Option<bool> {
        self.apps
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.quarantined.load(Relaxed))
    }

    /// Why the app named `name` is quarantined: its first panic (`None`: it runs, or
    /// there is no such app).
    pub fn quarantine_reason(&self, name: &str) -> Option<Quarantine> {
        let i = self.apps.iter().position(|e| e.name == name)?;
        self.guards[i].quarantine_reason()
    }

    /// Adds what switch `sw`'s handlers did since the last call to the totals
    /// [`Pipeline::handler_timings`] reads: the worker calls it at its counters'
    /// publish interval (and the pipeline when the switch leaves); a caller driving
    /// switches by hand calls it before reading.
    pub fn publish_timings(&self, sw: &mut SwitchState) {
        self.timings.publish(&mut sw.timing);
    }

    /// Every handler's calls and time, by app then handler, as last published (see
    /// [`crate::timing`] for how they are measured). An app's `reply` handler shows
    /// once it was called.
    pub fn handler_timings(&self) -> Vec<HandlerTiming> {
        let mut v = self.timings.snapshot(|app| self.apps[app].name);
        v.retain(|t| t.handler != "reply" || t.calls > 0);
        let order = |t: &HandlerTiming| self.apps.iter().position(|e| e.name == t.app);
        v.sort_by_key(order);
        v
    }

    /// Panics caught in the handlers of the app named `name`.
    pub fn panics(&self, name: &str) -> Option<u64> {
        self.apps
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.panics.load(Relaxed))
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
        SwitchState {
            rng,
            info,
            slots: self.apps.iter().map(|e| e.app.new_state()).collect(),
            requests: Requests::new(),
            schedule: Schedule::default(),
            uid,
            queue,
            timing: self.timings.local(),
            found: None,
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
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let mut ctx = self.ctx(info, out, requests, now);
        let mut kept = Vec::with_capacity(found.len());
        let mut deleted = 0usize;
        for e in found {
            let tag = crate::cookie::tag_of(e.flow.cookie);
            let owner = self.apps.iter().position(|a| tag != 0 && a.tag == tag);
            let keep = match owner {
                Some(app) if !self.skip(app, &mut ctx) => {
                    match self.adopt.iter().find(|h| h.app == app) {
                        Some(h) => {
                            let (s, c, f) = (&mut *slots[app], &mut ctx, &e);
                            let what = "adopt";
                            let r = self.timed(timing, h.id, app, Some(info.dpid), what, || {
                                (h.call)(c, s, f)
                            });
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
        let adopted = self.adopt_found(sw, out, now);
        let SwitchState {
            info,
            timing,
            slots,
            requests,
            schedule,
            rng,
            ..
        } = sw;
        *schedule = Schedule::start(&self.periods, now, rng);
        let mut ctx = self.ctx(info, out, requests, now);
        ctx.adopted = adopted.as_deref();
        for (handlers, what) in [
            (&self.initialize, "initialize"),
            (&self.switch_added, "switch_added"),
        ] {
            for h in handlers {
                if self.skip(h.app, &mut ctx) {
                    continue;
                }
                let s = &mut *slots[h.app];
                let c = &mut ctx;
                let dpid = info.dpid;
                self.timed(timing, h.id, h.app, Some(dpid), what, || (h.call)(c, s));
            }
        }
    }

    /// One whole message from the switch (exactly one frame, header included).
    pub fn handle(&self, sw: &mut SwitchState, frame: &[u8], out: &mut Vec<u8>, now: Instant) {
        // The worker framed this message and checked its header (conn.rs): only a
        // length guard is left here, for callers that did not (tests, simulations).
        // PACKET_IN, the hot path, goes straight to its view.
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
        let Some(handlers) = self.handlers_of(kind) else {
            self.counters.unhandled.fetch_add(1, Relaxed);
            return;
        };
        let Some(msg) = self.decode(sw, frame) else {
            return;
        };
        self.run_message_handlers(sw, handlers, &msg, out, now);
    }

    fn handlers_of(&self, kind: MessageKind) -> Option<&[Handler<MessageCall>]> {
        self.messages
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, list)| list.as_slice())
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
        handlers: &[Handler<MessageCall>],
        msg: &Message,
        out: &mut Vec<u8>,
        now: Instant,
    ) {
        let SwitchState {
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let mut ctx = self.ctx(info, out, requests, now);
        let mut stopped = false;
        for h in handlers {
            if (stopped && h.order.phase != Phase::Observe) || self.skip(h.app, &mut ctx) {
                continue;
            }
            let s = &mut *slots[h.app];
            let c = &mut ctx;
            let flow = self.timed(
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
                info,
                timing,
                slots,
                requests,
                ..
            } = &mut *sw;
            let mut ctx = self.ctx(info, out, requests, now);
            for h in &self.port_status {
                if self.skip(h.app, &mut ctx) {
                    continue;
                }
                let s = &mut *slots[h.app];
                let c = &mut ctx;
                let p = &port;
                self.timed(timing, h.id, h.app, Some(info.dpid), "PORT_STATUS", || {
                    (h.call)(c, s, reason, p)
                });
            }
        }
        if let Some(handlers) = self.handlers_of(MessageKind::PortStatus) {
            self.run_message_handlers(sw, handlers, &msg, out, now);
        }
    }

    /// The hot path: a PACKET_IN, viewed in place, through the ordered handlers.
    /// Gives `frame`, the switch's next message, to the apps' PACKET_IN prefetch hints
    /// ([`crate::app::Builder::prefetch_packet_in`]) if it is a PACKET_IN.
    #[inline]
    pub fn prefetch(&self, sw: &SwitchState, frame: &[u8]) {
        if self.prefetch.is_empty() || frame.get(1) != Some(&PACKET_IN) {
            return;
        }
        let Ok(p) = PacketIn::new_checked(frame) else {
            return;
        };
        for (app, call) in &self.prefetch {
            if self.apps[*app].quarantined.load(Relaxed) {
                continue;
            }
            let s = &*sw.slots[*app];
            self.guarded(*app, Some(sw.info.dpid), "PACKET_IN prefetch", || {
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
        if self.packet_in.is_empty() {
            self.counters.unhandled.fetch_add(1, Relaxed);
            return;
        }
        let SwitchState {
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let mut ctx = self.ctx(info, out, requests, now);
        let mut stopped = false;
        // One PACKET_IN in PACKET_IN_SAMPLE_EVERY has its handlers timed (crate::timing).
        let mut clock = timing.sample_packet_in().then(Instant::now);
        for h in &self.packet_in {
            if (stopped && h.order.phase != Phase::Observe) || self.skip(h.app, &mut ctx) {
                continue;
            }
            let s = &mut *slots[h.app];
            let c = &mut ctx;
            timing.count_only(h.id);
            let flow = self.guarded(h.app, Some(info.dpid), "PACKET_IN", || (h.call)(c, s, p));
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
        while let Some(done) = sw.requests.pop_expired(now) {
            self.counters.request_timeouts.fetch_add(1, Relaxed);
            let app = match &done.owner {
                Owner::App { app, .. } => self.apps[*app].name,
                Owner::External(_) => "(external)",
            };
            tracing::debug!(app, dpid = %Dpid(sw.info.dpid), "request timed out");
            self.answer(sw, done, out, now);
        }
        let SwitchState {
            info,
            timing,
            slots,
            requests,
            schedule,
            rng,
            ..
        } = sw;
        let mut ctx = self.ctx(info, out, requests, now);
        while let Some(i) = schedule.due(now) {
            let h = &self.timers[i];
            if self.skip(h.app, &mut ctx) {
                schedule.stop(i);
                continue;
            }
            // Rescheduled first: a timer that panics is not run again at once (nor
            // ever, as its app is quarantined).
            schedule.ran(i, &self.periods[i], now, rng);
            let s = &mut *slots[h.app];
            let c = &mut ctx;
            self.timed(timing, h.id, h.app, Some(info.dpid), "timer", || {
                (h.call)(c, s)
            });
        }
    }

    /// Runs the global timers due at `now` (the first call starts their clock: each
    /// first runs a period later); returns when the next one is due, `None` when
    /// there are none (left).
    pub fn global_tick(&self, now: Instant) -> Option<Instant> {
        if self.global_timers.is_empty() {
            return None;
        }
        let mut due = lock(&self.global_due);
        let due = due.get_or_insert_with(|| {
            self.global_timers
                .iter()
                .map(|(period, _)| Some(now + *period))
                .collect()
        });
        for (i, (period, h)) in self.global_timers.iter().enumerate() {
            if self.apps[h.app].quarantined.load(Relaxed) {
                due[i] = None;
                continue;
            }
            if due[i].is_some_and(|d| d <= now) {
                due[i] = Some(now + *period);
                let switches = &*self.switches;
                let started = Instant::now();
                self.guarded(h.app, None, "global timer", || (h.call)(switches, now));
                let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                self.timings.add_one(h.id, nanos);
                // The timer may have got its app quarantined.
                if self.apps[h.app].quarantined.load(Relaxed) {
                    due[i] = None;
                }
            }
        }
        due.iter().flatten().min().copied()
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
            info,
            timing,
            slots,
            requests,
            ..
        } = sw;
        let mut ctx = self.ctx(info, out, requests, now);
        if self.skip(app, &mut ctx) {
            return;
        }
        let any = self.apps[app].app.as_any();
        let s = &mut *slots[app];
        let c = &mut ctx;
        let id = self.reply_ids[app];
        self.timed(timing, id, app, Some(info.dpid), "reply", || {
            callback(any, c, s, reply)
        });
    }

    /// The switch left: it is unlisted from [`Switches`], its pending requests' callbacks
    /// get [`crate::requests::Reply::SwitchGone`] (what they send to it is discarded),
    /// the switch-removed listeners run, and the state (every app's slot, the timers)
    /// is dropped.
    pub fn switch_removed(&self, mut sw: SwitchState, reason: &str, now: Instant) {
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
            info,
            mut slots,
            mut timing,
            ..
        } = sw;
        for h in &self.switch_removed {
            if self.apps[h.app].quarantined.load(Relaxed) {
                continue;
            }
            // A zero-sized placeholder: no allocation.
            let state = std::mem::replace(&mut slots[h.app], Box::new(()));
            let i = &*info;
            self.timed(
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

    /// True when app `app` is quarantined; otherwise points `ctx` at it.
    #[inline]
    fn skip(&self, app: usize, ctx: &mut SwitchCtx<'_>) -> bool {
        let e = &self.apps[app];
        if e.quarantined.load(Relaxed) {
            return true;
        }
        ctx.app = app;
        ctx.app_name = e.name;
        ctx.tag = e.tag;
        false
    }

    /// Runs handler `id` of app `app` through [`Pipeline::guarded`], counted in
    /// `timing` and, one call in [`crate::timing::SAMPLE_EVERY`], timed: no clock read
    /// and no shared write for the others (see [`crate::timing`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn timed<R>(
        &self,
        timing: &mut Local,
        id: usize,
        app: usize,
        dpid: Option<u64>,
        what: &str,
        f: impl FnOnce() -> R,
    ) -> Option<R> {
        let started = timing.count(id).then(Instant::now);
        let r = self.guarded(app, dpid, what, f);
        if let Some(started) = started {
            timing.timed(id, started);
        }
        r
    }

    /// Runs `f`; a panic quarantines app `app` and is logged and counted.
    #[inline]
    fn guarded<R>(
        &self,
        app: usize,
        dpid: Option<u64>,
        what: &str,
        f: impl FnOnce() -> R,
    ) -> Option<R> {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => Some(r),
            Err(payload) => {
                self.quarantine(app, dpid, what, payload.as_ref());
                None
            }
        }
    }

    #[cold]
    fn quarantine(&self, app: usize, dpid: Option<u64>, what: &str, payload: &(dyn Any + Send)) {
        crate::events::quarantine(self.guards[app].health(), dpid, what, payload);
    }

    #[cold]
    fn decode_error(&self, dpid: u64, why: &str) {
        self.counters.decode_errors.fetch_add(1, Relaxed);
        tracing::warn!(dpid = %Dpid(dpid), error = why, "message from switch not decoded; dropped");
    }
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
