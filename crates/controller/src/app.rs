//! # The app API: what an app author writes and everything it uses
//!
//! An app is a type implementing [`App`], which registers handlers on a [`Builder`] and
//! sends through a [`SwitchCtx`]. This module is the one an app imports: besides its own
//! types it re-exports what handlers meet (the switch's [`SwitchInfo`] and ports, the
//! [`Switches`] directory, services, events, replies, cookies, adoption), so an app's
//! `use` lines name `controller::app` and nothing else of the core.
//!
//! ```
//! use controller::app::{App, Builder, Flow, Order, PacketIn, SwitchCtx};
//! use openflow::model::{Action, PacketOut, PortNo};
//!
//! /// Floods every packet (the whole of a hub).
//! struct Flooder;
//!
//! impl App for Flooder {
//!     type State = ();
//!     fn name(&self) -> &'static str { "flooder" }
//!     fn build(&self, b: &mut Builder<Self>) {
//!         b.on_packet_in(Order::direct(0), Flooder::packet_in);
//!     }
//! }
//!
//! impl Flooder {
//!     fn packet_in(&self, ctx: &mut SwitchCtx, _: &mut (), p: &PacketIn) -> Flow {
//!         // From the switch's buffer if it kept the packet, else its bytes.
//!         ctx.send_packet_out(&PacketOut::of_packet_in(p, &[Action::output(PortNo::Flood)]));
//!         Flow::Stop
//!     }
//! }
//! ```
//!
//! ## Order
//!
//! Handlers of one message kind run by [`Order`]: first by [`Phase`] (`Advise`, then
//! `Direct`, then `Observe`), then by number, lower first; ties keep the order the apps
//! were given in. A handler returning [`Flow::Stop`] ends the `Advise`/`Direct` handlers
//! for that message; `Observe` handlers always run and cannot stop.
//!
//! ## Sending
//!
//! [`SwitchCtx::send_flow_mod`], [`SwitchCtx::send_packet_out`] and [`SwitchCtx::send`]
//! encode straight into the switch's output buffer, in the switch's version, with a fresh
//! xid. An encoding error (say, a 1.3-only match on a 1.0 switch) is logged with the app
//! and dpid and counted, and nothing is sent; the send returns `None`.
//! [`SwitchCtx::request`] and [`SwitchCtx::barrier`] also register a callback that gets
//! the reply (multipart parts assembled), a timeout, or [`Reply::SwitchGone`] when the
//! switch leaves first, on this switch's worker, with the app's per-switch state.
//!
//! To reach another switch (or this one from another thread), use the core's
//! [`Switches`] service: [`SwitchCtx::switches`] in a handler, or
//! a [`Required<Switches>`](Required) from [`Builder::require`]. It encodes for the target's
//! version and queues the message to the worker serving it (see
//! [`crate::switches`] for the ordering rules).
//!
//! ## Ports
//!
//! The core applies every PORT_STATUS to the switch's port list before any handler
//! sees it, so [`SwitchCtx::info`] and [`Switches::info`] show the ports as they are.
//! [`Builder::on_port_status`] handlers get the change in version-neutral form
//! (reason, port), in app order; then the [`MessageKind::PortStatus`] handlers run.
//!
//! ## Services and the lifecycle
//!
//! An app declares what it uses in `build` with [`Builder::require`] (or
//! [`Builder::require_into`] for a handle among its fields): a [`Required`] handle,
//! filled before the app starts, that derefs to the service in every handler. The
//! pipeline knows from these (and from [`Builder::subscribe`]) which app depends on
//! which, so an app whose services running apps use is not stopped from under them.
//! Apps are started, stopped, restarted and re-ordered while switches are connected:
//! see [`crate::host`]. An app restarted gets fresh per-switch state, and its
//! initializers run again on every switch.
//!
//! ## Timers
//!
//! [`Builder::every`] runs a handler per switch, on the switch's worker, with the
//! app's state for it: first after a random delay in `[0, jitter]`, then every
//! `period ± jitter`, for as long as the switch is connected (LLDP probes).
//! [`Builder::every_global`] runs a function every `period` for the whole controller,
//! on the controller's timer thread, with [`Switches`] (aging links or hosts). Timers
//! sleep: an idle controller does not wake up for nothing. A panicking timer
//! quarantines its app like any handler. See [`crate::timers`].
//!
//! ```
//! use std::time::{Duration, Instant};
//! use controller::app::{App, Builder, PortInfo, PortReason, SwitchCtx, Switches};
//!
//! #[derive(Default)]
//! struct Probe;
//!
//! impl App for Probe {
//!     type State = Option<Instant>; // when this switch was last probed
//!     fn name(&self) -> &'static str { "probe" }
//!     fn build(&self, b: &mut Builder<Self>) {
//!         b.every(Duration::from_secs(1), Duration::from_millis(200), |_, ctx, last| {
//!             *last = Some(ctx.now()); // send probes out of ctx.info().ports here
//!         });
//!         b.every_global(Duration::from_secs(5), |_, switches: &Switches, _now| {
//!             let _ = switches.connected(); // age out what was not seen lately
//!         });
//!         b.on_port_status(|_, ctx, _, reason: PortReason, port: &PortInfo| {
//!             tracing::info!(dpid = %ctx.dpid(), port = port.port_no, ?reason, up = port.is_up());
//!         });
//!     }
//! }
//! ```

use std::any::{type_name, Any, TypeId};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use openflow::{Message, Version};

use crate::counters::AppCounter;
use crate::ctx::Callback;
use crate::handlers::{
    AdoptCall, Fill, GlobalCall, Handler, MessageCall, PacketInCall, PortStatusCall, PrefetchCall,
    Registry, RemovedCall, Slot, SwitchCall, Unsubscribe,
};
use crate::timers::Period;

pub use crate::cookie::{app_tag, tag_of, with_tag, OWN_MASK, TAG_MASK};
pub use crate::counters::Counter;
pub use crate::ctx::{AppSwitches, SwitchCtx};
pub use crate::events::{AppGuard, Publisher, Subscribers};
pub use crate::handlers::{AnyApp, Flow, MessageKind, Order, Phase};
pub use crate::info::{Dpid, PortInfo, PortReason, SwitchInfo};
pub use crate::packet_in::PacketIn;
pub use crate::reconcile::{has_table_miss, is_table_miss, keep_if_outputs_up, Adopt};
pub use crate::requests::{Reply, ReplyFn};
pub use crate::services::{Services, StartError};
pub use crate::switches::{SendError, SwitchEvent, Switches};

/// An app's parameters and its part of `pharos.toml`, read as the core reads its own:
/// durations as people write them (`deserialize_with` helpers for a typed `serde`
/// params struct), a refused setting with its key and line, and the known name a slip
/// of the finger away.
///
/// ```
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Params {
///     /// `2`, `0.5`, `"2s"` or `"500ms"`.
///     #[serde(deserialize_with = "controller::app::settings::seconds::deserialize")]
///     interval: f64,
/// }
/// let p: Params = toml::from_str("interval = \"500ms\"").unwrap();
/// assert_eq!(p.interval, 0.5);
/// ```
pub mod settings {
    pub use crate::settings::{did_you_mean, from_toml_str, ConfigError};
    pub use crate::units::{duration, seconds, whole_seconds};
}

/// One app: a type with handlers, per-switch state, and optionally services.
///
/// `build` registers handlers and provides services and calls no one; `start` may look
/// up services (a missing one fails start-up loudly); `stop` undoes `start`.
pub trait App: Send + Sync + 'static {
    /// Per-switch state: one per switch, created with `Default` when the switch
    /// connects, handed `&mut` to every handler for that switch (no lock: a switch is
    /// served by one worker), dropped (or given to `on_switch_removed`) when it leaves.
    type State: Default + Send + 'static;

    /// The app's name, in logs, counters and configuration.
    fn name(&self) -> &'static str;

    /// Registers handlers and provided services.
    fn build(&self, b: &mut Builder<Self>)
    where
        Self: Sized;

    /// Runs when the app starts: at start-up after every app is built, in app order,
    /// and again each time it is started at run time ([`crate::host`]); may use
    /// services. Its [`Required`] handles are filled and its subscriptions made before.
    fn start(&self, services: &Services) -> Result<(), StartError> {
        let _ = services;
        Ok(())
    }

    /// Runs when the app stops: stopped at run time (after its handlers left every
    /// switch and its subscriptions ended), or at shutdown, in reverse app order. A
    /// later start finds the same app object: `stop` leaves it ready to start again.
    fn stop(&self) {}
}

/// A PACKET_IN handler.
pub type PacketInFn<A> = fn(&A, &mut SwitchCtx<'_>, &mut <A as App>::State, &PacketIn<'_>) -> Flow;
/// A PACKET_IN prefetch hint ([`Builder::prefetch_packet_in`]).
pub type PrefetchFn<A> = fn(&A, &<A as App>::State, &PacketIn<'_>);
/// A PACKET_IN observer.
pub type ObserveFn<A> = fn(&A, &mut SwitchCtx<'_>, &mut <A as App>::State, &PacketIn<'_>);
/// A handler of decoded messages of one [`MessageKind`].
pub type MessageFn<A> = fn(&A, &mut SwitchCtx<'_>, &mut <A as App>::State, &Message) -> Flow;
/// A switch initializer or switch-added listener.
pub type SwitchFn<A> = fn(&A, &mut SwitchCtx<'_>, &mut <A as App>::State);
/// An adopt hook ([`Builder::on_adopt`]): keeps or deletes a flow of the app's found
/// on a switch that connects.
pub type AdoptFn<A> =
    fn(&A, &mut SwitchCtx<'_>, &mut <A as App>::State, &openflow::ofctl::FlowEntry) -> Adopt;
/// A switch-removed listener: gets the app's state for the switch, by value.
pub type RemovedFn<A> = fn(&A, &SwitchInfo, <A as App>::State);
/// A PORT_STATUS handler: what happened, and the port (as it is now, or as it was when
/// deleted). The switch's port list already shows the change.
pub type PortStatusFn<A> =
    fn(&A, &mut SwitchCtx<'_>, &mut <A as App>::State, PortReason, &PortInfo);
/// A timer not tied to a switch: gets the switches and the time.
pub type GlobalTimerFn<A> = fn(&A, &Switches, Instant);
/// A subscriber to a service's events ([`Builder::subscribe`]).
pub type EventFn<A, E> = fn(&A, &E);
/// A subscription waiting for the services: made with the app (weakly held: the
/// service's list must not keep the app alive) under the guard of this start of the
/// app, each time the app starts; what it returns ends it when the app stops.
pub(crate) type Subscribe<A> =
    Box<dyn Fn(Weak<A>, &Services, &AppGuard) -> Result<Unsubscribe, StartError> + Send + Sync>;

/// A service an app declared in [`Builder::require`]: usable in every handler, as
/// `&T` (it derefs), from the app's start on. No `OnceLock` in the app and no "not
/// started" branch: handlers only run once the app started, and the pipeline fills the
/// handle before it starts the app (a missing service fails the start, naming it).
pub struct Required<T: ?Sized> {
    cell: Arc<OnceLock<Arc<T>>>,
}

impl<T: ?Sized> Clone for Required<T> {
    fn clone(&self) -> Self {
        Required {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<T: ?Sized> Default for Required<T> {
    fn default() -> Self {
        Required::new()
    }
}

impl<T: ?Sized> Required<T> {
    /// An empty handle, declared in `build` with [`Builder::require_into`].
    pub fn new() -> Required<T> {
        Required {
            cell: Arc::new(OnceLock::new()),
        }
    }

    /// The service; `None` only before the app's first start (in `build`).
    pub fn get(&self) -> Option<&Arc<T>> {
        self.cell.get()
    }
}

impl<T: ?Sized> std::ops::Deref for Required<T> {
    type Target = T;

    /// The service.
    ///
    /// # Panics
    ///
    /// In [`App::build`], before the pipeline filled it (handlers, timers, subscribers,
    /// `start` and `stop` always find it filled).
    fn deref(&self) -> &T {
        match self.cell.get() {
            Some(s) => s,
            None => panic!(
                "a required {} was used before its app started",
                std::any::type_name::<T>()
            ),
        }
    }
}

impl<T: ?Sized> std::fmt::Debug for Required<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Required")
            .field("service", &std::any::type_name::<T>())
            .field("filled", &self.cell.get().is_some())
            .finish()
    }
}

/// A registered PACKET_IN handler or observer.
#[derive(Clone, Copy)]
pub(crate) enum PacketInHandler<A: App> {
    Handle(PacketInFn<A>),
    Observe(ObserveFn<A>),
}

/// What an app registers in [`App::build`]. Plain function pointers, no strings.
pub struct Builder<A: App> {
    pub(crate) packet_in: Vec<(Order, PacketInHandler<A>)>,
    /// PACKET_IN prefetch hints, called for the next PACKET_IN before the current one.
    pub(crate) prefetch: Vec<PrefetchFn<A>>,
    pub(crate) messages: Vec<(MessageKind, Order, MessageFn<A>)>,
    pub(crate) initialize: Vec<SwitchFn<A>>,
    pub(crate) switch_added: Vec<SwitchFn<A>>,
    /// Run after a turn of the switch's messages ([`Builder::on_turn_end`]).
    pub(crate) turn_end: Vec<SwitchFn<A>>,
    pub(crate) switch_removed: Option<RemovedFn<A>>,
    /// Judges the app's flows found on a switch that connects ([`crate::reconcile`]).
    pub(crate) adopt: Option<AdoptFn<A>>,
    pub(crate) port_status: Vec<PortStatusFn<A>>,
    pub(crate) timers: Vec<(Period, SwitchFn<A>)>,
    pub(crate) global_timers: Vec<(Duration, GlobalTimerFn<A>)>,
    pub(crate) services: Services,
    pub(crate) name: &'static str,
    pub(crate) service_error: Option<StartError>,
    /// Subscriptions to services' events, made before each start of the app.
    pub(crate) subscriptions: Vec<Subscribe<A>>,
    /// The services the app requires (from [`Builder::require`] and
    /// [`Builder::subscribe`]): while it runs, their providers cannot stop.
    pub(crate) requires: Vec<(TypeId, &'static str)>,
    /// Fill the app's [`Required`] handles before it starts.
    pub(crate) fills: Vec<Fill>,
    /// The counters the app publishes ([`Builder::counter`]).
    pub(crate) counters: Vec<AppCounter>,
}

impl<A: App> Builder<A> {
    pub(crate) fn new(name: &'static str) -> Builder<A> {
        Builder {
            subscriptions: Vec::new(),
            requires: Vec::new(),
            fills: Vec::new(),
            counters: Vec::new(),
            packet_in: Vec::new(),
            prefetch: Vec::new(),
            messages: Vec::new(),
            initialize: Vec::new(),
            switch_added: Vec::new(),
            turn_end: Vec::new(),
            switch_removed: None,
            adopt: None,
            port_status: Vec::new(),
            timers: Vec::new(),
            global_timers: Vec::new(),
            services: Services::new(),
            name,
            service_error: None,
        }
    }

    /// Publishes `counter` as the app's counter `name` (lower-case letters, digits and
    /// `_`), described by `help`: `GET /metrics` shows it as
    /// `pharos_app_events_total{app="..",counter="name"}` and `GET /api/v1/apps` with
    /// the app. The app keeps the [`Counter`] (a field) and adds to it from any
    /// handler or thread; it is not reset when the app stops or restarts. A name
    /// published twice by one app keeps the first.
    pub fn counter(
        &mut self,
        name: &'static str,
        help: &'static str,
        counter: &Counter,
    ) -> &mut Self {
        debug_assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "a counter's name is lower-case letters, digits and _: {name:?}"
        );
        if !self.counters.iter().any(|c| c.name == name) {
            self.counters.push(AppCounter {
                name,
                help,
                counter: counter.clone(),
            });
        }
        self
    }

    /// Handles PACKET_IN, zero-copy. An `Observe`-phase order makes it an observer
    /// (its `Stop` is ignored).
    pub fn on_packet_in(&mut self, order: Order, f: PacketInFn<A>) -> &mut Self {
        self.packet_in.push((order, PacketInHandler::Handle(f)));
        self
    }

    /// A hint about the switch's next PACKET_IN, already read, given before the current
    /// one is handled: an app whose handler reads memory that is likely cold (a table
    /// larger than the caches) may prefetch it here, so that the misses of the next
    /// packet overlap the work on this one. The state is read-only and nothing can be
    /// sent; the hint may come for a packet that is then never handled (the switch
    /// disconnected) and a packet may be handled without one, so it must change
    /// nothing an app relies on.
    pub fn prefetch_packet_in(&mut self, f: PrefetchFn<A>) -> &mut Self {
        self.prefetch.push(f);
        self
    }

    /// Observes PACKET_IN after every other handler, even when one stopped it.
    pub fn observe_packet_in(&mut self, number: i32, f: ObserveFn<A>) -> &mut Self {
        self.packet_in
            .push((Order::observe(number), PacketInHandler::Observe(f)));
        self
    }

    /// Handles messages of `kind`, decoded into [`Message`].
    pub fn on_message(&mut self, kind: MessageKind, order: Order, f: MessageFn<A>) -> &mut Self {
        self.messages.push((kind, order, f));
        self
    }

    /// Runs when a switch connects, before any switch-added listener (install the
    /// table-miss entry if [`SwitchCtx::adopted`] lacks it). Initializers run in app
    /// order, after the switch's flows were adopted or deleted ([`crate::reconcile`]);
    /// they must not empty the table, or a controller restart cuts traffic.
    pub fn on_initialize(&mut self, f: SwitchFn<A>) -> &mut Self {
        self.initialize.push(f);
        self
    }

    /// Runs when a switch connects, before the initializers, once for each flow of
    /// this app's (its cookie carries the app's tag, see [`crate::cookie`]) found on
    /// the switch: [`crate::reconcile::Adopt::Keep`] leaves it,
    /// [`crate::reconcile::Adopt::Delete`] has the core delete exactly it. Without a
    /// hook every flow of the app is kept. One per app (a second call replaces the
    /// first). See [`crate::reconcile`].
    pub fn on_adopt(&mut self, f: AdoptFn<A>) -> &mut Self {
        self.adopt = Some(f);
        self
    }

    /// Runs when a switch connects, after every initializer, in app order.
    pub fn on_switch_added(&mut self, f: SwitchFn<A>) -> &mut Self {
        self.switch_added.push(f);
        self
    }

    /// Runs after each turn in which the switch's messages were handled: a worker reads
    /// a switch's messages in turns (up to [`crate::conn::TURN_BUDGET`] of them, read
    /// together, handled one by one), and after the last of a turn, before the answers
    /// are written, runs these in app order. For an app that does a turn's work at once
    /// (a batch: one call into a WebAssembly guest for a turn's PACKET_INs, say): what it
    /// sends here goes out after the answers to that turn's messages. A switch driven by
    /// hand ([`crate::dispatch::Dispatcher::handle`]) ends its turns with
    /// [`crate::dispatch::Dispatcher::turn_end`].
    pub fn on_turn_end(&mut self, f: SwitchFn<A>) -> &mut Self {
        self.turn_end.push(f);
        self
    }

    /// Runs when a switch leaves, with the app's state for it. One per app (a second
    /// call replaces the first). Without one, the state is simply dropped.
    pub fn on_switch_removed(&mut self, f: RemovedFn<A>) -> &mut Self {
        self.switch_removed = Some(f);
        self
    }

    /// Handles PORT_STATUS in version-neutral form, after the core has applied it to
    /// the switch's port list; handlers run in app order, before the
    /// [`MessageKind::PortStatus`] handlers, and cannot stop anything.
    pub fn on_port_status(&mut self, f: PortStatusFn<A>) -> &mut Self {
        self.port_status.push(f);
        self
    }

    /// Runs `f` on every switch, on its worker, with the app's state for it: first
    /// after a random delay in `[0, jitter]` from the switch's arrival, then every
    /// `period ± jitter` (uniform), until the switch leaves. A jitter beyond the period
    /// is cut to it; periods under a millisecond are raised to one.
    pub fn every(&mut self, period: Duration, jitter: Duration, f: SwitchFn<A>) -> &mut Self {
        self.timers.push((Period::new(period, jitter), f));
        self
    }

    /// Runs `f` every `period` (from the controller's start), once for the whole
    /// controller, on the controller's timer thread (never on a worker: a slow timer
    /// delays no switch). For work across switches, such as aging links or hosts.
    pub fn every_global(&mut self, period: Duration, f: GlobalTimerFn<A>) -> &mut Self {
        self.global_timers
            .push((period.max(crate::timers::MIN_PERIOD), f));
        self
    }

    /// Calls `f` with every event the service `S` publishes (the topology's, the
    /// device table's), on the thread that made the change, once it is in place and
    /// in the order changes were made. The subscription is made just before the app's
    /// `start` (a missing service fails start-up, naming it), so `start` may read the
    /// service's state without missing a later change. `f` runs under this app's panic
    /// guard, not the publisher's: a panic in it quarantines this app, and the app that
    /// made the change carries on. Keep it quick, and do not change `S` from it (the
    /// service's order lock is held: that would deadlock).
    pub fn subscribe<S, E>(&mut self, f: EventFn<A, E>) -> &mut Self
    where
        S: Publisher<E> + ?Sized,
        E: 'static,
    {
        let name = self.name;
        self.requires.push((TypeId::of::<S>(), type_name::<S>()));
        self.subscriptions
            .push(Box::new(move |app, services, guard| {
                let service = services.require::<S>(name)?;
                let call = move |e: &E| {
                    if let Some(app) = app.upgrade() {
                        f(&app, e)
                    }
                };
                let id = service
                    .subscribers()
                    .subscribe_guarded(guard.clone(), Box::new(call));
                Ok(Box::new(move || service.subscribers().unsubscribe(id)) as Unsubscribe)
            }));
        self
    }

    /// Declares that the app requires the service `T` (provided by another app or by
    /// the core, as [`Switches`]) and returns a handle to it, filled before the app
    /// starts and usable in every handler. While the app runs, the app providing `T`
    /// cannot be stopped (unless cascading). An app usually makes its handles with its
    /// fields ([`Required::new`]) and declares them with [`Builder::require_into`].
    pub fn require<T: ?Sized + Send + Sync + 'static>(&mut self) -> Required<T> {
        let handle = Required::new();
        self.require_into(&handle);
        handle
    }

    /// [`Builder::require`] for a handle the app already holds (one of its fields).
    ///
    /// ```
    /// use controller::app::{App, Builder, Required};
    /// use controller::switches::Switches;
    ///
    /// #[derive(Default)]
    /// struct Counter { switches: Required<Switches> }
    /// impl App for Counter {
    ///     type State = ();
    ///     fn name(&self) -> &'static str { "counter" }
    ///     fn build(&self, b: &mut Builder<Self>) {
    ///         b.require_into(&self.switches);
    ///         b.on_switch_added(|app, _, _| {
    ///             tracing::info!(n = app.switches.connected().len(), "switches");
    ///         });
    ///     }
    /// }
    /// ```
    pub fn require_into<T: ?Sized + Send + Sync + 'static>(&mut self, handle: &Required<T>) {
        let (filled, name) = (Arc::clone(&handle.cell), self.name);
        self.requires.push((TypeId::of::<T>(), type_name::<T>()));
        self.fills.push(Box::new(move |services| {
            let service = services.require::<T>(name)?;
            let _ = filled.set(service);
            Ok(())
        }));
    }

    /// Provides the service `T` to every app's `start`.
    pub fn provide<T: ?Sized + Send + Sync + 'static>(&mut self, service: Arc<T>) -> &mut Self {
        if let Err(e) = self.services.provide(service, self.name) {
            self.service_error.get_or_insert(e);
        }
        self
    }

    /// Erases the handlers of app `index` (the app `app`) and adds them to `reg`.
    pub(crate) fn into_registry(
        self,
        app: Arc<A>,
        index: usize,
        reg: &mut Registry,
    ) -> Result<(), StartError> {
        let b = self;
        if let Some(e) = b.service_error {
            return Err(e);
        }
        for subscribe in b.subscriptions {
            let weak = Arc::downgrade(&app);
            reg.subscriptions.push(Box::new(move |services, guard| {
                subscribe(Weak::clone(&weak), services, guard)
            }));
        }
        reg.requires.extend(b.requires);
        reg.fills.extend(b.fills);
        reg.counters.extend(b.counters);
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
            reg.packet_in.push(Handler::new(index, order, call));
        }
        for f in b.prefetch {
            let a = Arc::clone(&app);
            let call: PrefetchCall = Arc::new(move |s, p| {
                if let Some(s) = s.get::<A::State>() {
                    f(&a, s, p)
                }
            });
            reg.prefetch.push((index, call));
        }
        for (kind, order, f) in b.messages {
            let a = Arc::clone(&app);
            let call: MessageCall = Arc::new(move |ctx, s, m| f(&a, ctx, slot::<A>(s), m));
            reg.messages.push((kind, Handler::new(index, order, call)));
        }
        for (list, fs) in [
            (&mut reg.initialize, b.initialize),
            (&mut reg.switch_added, b.switch_added),
            (&mut reg.turn_end, b.turn_end),
        ] {
            for f in fs {
                let a = Arc::clone(&app);
                let call: SwitchCall = Arc::new(move |ctx, s| f(&a, ctx, slot::<A>(s)));
                list.push(Handler::new(index, Order::direct(0), call));
            }
        }
        for f in b.port_status {
            let a = Arc::clone(&app);
            let call: PortStatusCall =
                Arc::new(move |ctx, s, reason, port| f(&a, ctx, slot::<A>(s), reason, port));
            reg.port_status
                .push(Handler::new(index, Order::direct(0), call));
        }
        for (period, f) in b.timers {
            let a = Arc::clone(&app);
            let call: SwitchCall = Arc::new(move |ctx, s| f(&a, ctx, slot::<A>(s)));
            let order = Order::direct(0);
            reg.timers.push((period, Handler::new(index, order, call)));
        }
        for (period, f) in b.global_timers {
            let a = Arc::clone(&app);
            let call: GlobalCall = Arc::new(move |switches, now| f(&a, switches, now));
            let order = Order::direct(0);
            reg.global_timers
                .push((period, Handler::new(index, order, call)));
        }
        if let Some(f) = b.adopt {
            let a = Arc::clone(&app);
            let call: AdoptCall = Arc::new(move |ctx, s, e| f(&a, ctx, slot::<A>(s), e));
            reg.adopt.push(Handler::new(index, Order::direct(0), call));
        }
        if let Some(f) = b.switch_removed {
            let a = Arc::clone(&app);
            let call: RemovedCall =
                Arc::new(move |info, s: Slot| match s.state.downcast::<A::State>() {
                    Ok(state) => f(&a, info, *state),
                    Err(_) => state_type_mismatch(App::name(&*a)),
                });
            reg.switch_removed
                .push(Handler::new(index, Order::direct(0), call));
        }
        reg.services.merge(b.services)
    }
}

fn slot<A: App>(s: &mut Slot) -> &mut A::State {
    // Slots are created by the app's own `new_state`, at the app's index: the types
    // always agree.
    s.get_mut::<A::State>()
        .expect("a state slot holds its app's State type")
}

#[cold]
fn state_type_mismatch(app: &str) {
    tracing::error!(app, "a state slot held another type; state dropped");
}

impl<A: App> AnyApp for A {
    fn app_name(&self) -> &'static str {
        App::name(self)
    }

    fn start_app(&self, services: &Services) -> Result<(), StartError> {
        App::start(self, services)
    }

    fn stop_app(&self) {
        App::stop(self)
    }

    fn new_state(&self) -> Box<dyn Any + Send> {
        Box::new(A::State::default())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn register(self: Arc<Self>, index: usize, registry: &mut Registry) -> Result<(), StartError> {
        let name = App::name(&*self);
        let mut b = Builder::<A>::new(name);
        self.build(&mut b);
        b.into_registry(self, index, registry)
    }
}

impl SwitchCtx<'_> {
    /// Sends `msg` and calls `callback` with the reply (all parts of a multipart
    /// reply, or the switch's ERROR), with [`Reply::TimedOut`] after `timeout`, or with
    /// [`Reply::SwitchGone`] if the switch leaves first, on this switch, with the app's
    /// state for it: the callback runs exactly once. `A` must be the app whose handler is
    /// running. Returns the request's xid, or `None` if it could not be sent.
    pub fn request<A: App>(
        &mut self,
        msg: &Message,
        timeout: Duration,
        callback: impl FnOnce(&A, &mut SwitchCtx<'_>, &mut A::State, Reply) + Send + 'static,
    ) -> Option<u32> {
        let xid = self.next_xid();
        self.send_with_xid(msg, xid)?;
        let app_name = self.app_name;
        let erased: Callback = Box::new(move |app, ctx, state, reply| {
            match (app.downcast_ref::<A>(), state.downcast_mut::<A::State>()) {
                (Some(app), Some(state)) => callback(app, ctx, state, reply),
                _ => {
                    tracing::error!(
                        app = app_name,
                        dpid = %ctx.dpid(),
                        "a request callback was registered for another app type; reply dropped"
                    );
                }
            }
        });
        self.pending(xid, timeout, erased);
        Some(xid)
    }

    /// Sends a BARRIER_REQUEST; `callback` gets the BARRIER_REPLY or a timeout.
    pub fn barrier<A: App>(
        &mut self,
        timeout: Duration,
        callback: impl FnOnce(&A, &mut SwitchCtx<'_>, &mut A::State, Reply) + Send + 'static,
    ) -> Option<u32> {
        let msg = match self.version() {
            Version::V1_0 => Message::V10(openflow::of10::Message::BarrierRequest),
            Version::V1_3 => Message::V13(openflow::of13::Message::BarrierRequest),
        };
        self.request(&msg, timeout, callback)
    }
}
