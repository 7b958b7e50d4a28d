//! The handler tables: what each app registered, and the *plan* every switch runs.
//!
//! ```text
//! App::build ─► Builder<A> ─(crate::app erases the types)─► Registry (one per app)
//!                                                              │ the app host keeps it
//! running apps' Registries, in app order ─► Plan (generation) ─┴► PlanCell ─► workers
//! ```
//!
//! A [`Registry`] is one app's handlers, type-erased (the app and its state behind
//! `Arc<dyn Fn>`s that downcast a [`Slot`]), with the services it provides and requires
//! and the counters it publishes. A `Plan` is the handlers of the running apps for each
//! kind of call, sorted by [`Order`], under a generation number; it is immutable once
//! published in the `PlanCell`, which the app host writes and the dispatcher reads
//! (one relaxed load of the generation per message). Nothing here runs a handler: the
//! dispatcher does ([`crate::dispatch`]), through one runner.
//!
//! The vocabulary of ordering is here too, since handlers are sorted by it: [`Phase`],
//! [`Order`], [`Flow`], and [`MessageKind`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use openflow::{msg_type, of10, of13, Message, Version};

use crate::counters::AppCounter;
use crate::ctx::SwitchCtx;
use crate::events::AppGuard;
use crate::info::{PortInfo, PortReason, SwitchInfo};
use crate::packet_in::PacketIn;
use crate::reconcile::Adopt;
use crate::services::{Services, StartError};
use crate::switches::Switches;
use crate::timers::Period;

/// When a handler runs, coarsely: the bands of ONOS's packet processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Before the deciding apps: annotate, filter, drop (firewalls, ARP proxies).
    Advise,
    /// The apps that decide what happens to the packet (forwarding).
    Direct,
    /// After everything: statistics, logging. Always runs; cannot stop.
    Observe,
}

/// When a handler runs: a phase, then a number within it (lower first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Order {
    /// The band.
    pub phase: Phase,
    /// Position within the band, lower first.
    pub number: i32,
}

impl Order {
    /// In the advise phase.
    pub const fn advise(number: i32) -> Order {
        Order {
            phase: Phase::Advise,
            number,
        }
    }

    /// In the direct phase.
    pub const fn direct(number: i32) -> Order {
        Order {
            phase: Phase::Direct,
            number,
        }
    }

    /// In the observe phase.
    pub const fn observe(number: i32) -> Order {
        Order {
            phase: Phase::Observe,
            number,
        }
    }
}

/// `direct:10`, `advise:-5`, `observe:0`: how configuration, the REST API and
/// `pharos ctl` write an order.
impl std::fmt::Display for Order {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let phase = match self.phase {
            Phase::Advise => "advise",
            Phase::Direct => "direct",
            Phase::Observe => "observe",
        };
        write!(f, "{phase}:{}", self.number)
    }
}

impl std::str::FromStr for Order {
    type Err = String;

    /// `PHASE:NUMBER` (`direct:10`), or a phase alone (number 0).
    fn from_str(s: &str) -> Result<Order, String> {
        let (phase, number) = s.split_once(':').unwrap_or((s, "0"));
        let number: i32 = number
            .trim()
            .parse()
            .map_err(|_| format!("bad order {s:?}: the number after ':' must be an integer"))?;
        match phase.trim() {
            "advise" => Ok(Order::advise(number)),
            "direct" => Ok(Order::direct(number)),
            "observe" => Ok(Order::observe(number)),
            _ => Err(format!(
                "bad order {s:?}: the phase must be advise, direct or observe (direct:10)"
            )),
        }
    }
}

/// What a handler tells the dispatcher (Floodlight's `Command`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Let later handlers see the message.
    Continue,
    /// The message is dealt with: no later `Advise`/`Direct` handler sees it.
    Stop,
}

/// The kinds of message a switch sends that apps can handle with
/// [`crate::app::Builder::on_message`] (PACKET_IN has its own zero-copy path,
/// [`crate::app::Builder::on_packet_in`]; echo is answered by the connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// ERROR not answering a request of ours.
    Error,
    /// 1.0 VENDOR, 1.3 EXPERIMENTER.
    Experimenter,
    /// FEATURES_REPLY.
    FeaturesReply,
    /// GET_CONFIG_REPLY.
    GetConfigReply,
    /// FLOW_REMOVED.
    FlowRemoved,
    /// PORT_STATUS.
    PortStatus,
    /// 1.0 STATS_REPLY, 1.3 MULTIPART_REPLY.
    MultipartReply,
    /// BARRIER_REPLY.
    BarrierReply,
    /// QUEUE_GET_CONFIG_REPLY.
    QueueGetConfigReply,
    /// ROLE_REPLY (1.3).
    RoleReply,
    /// GET_ASYNC_REPLY (1.3).
    GetAsyncReply,
    /// Anything else a switch sends (HELLO after the handshake, a controller-to-switch
    /// type, an unknown type).
    Other,
}

impl MessageKind {
    /// The kind of a message of wire type `t` in `version`; `None` for PACKET_IN,
    /// which has its own path.
    pub fn from_wire(version: Version, t: u8) -> Option<MessageKind> {
        use MessageKind::*;
        Some(match t {
            msg_type::PACKET_IN => return None,
            msg_type::ERROR => Error,
            msg_type::EXPERIMENTER => Experimenter,
            msg_type::FEATURES_REPLY => FeaturesReply,
            msg_type::GET_CONFIG_REPLY => GetConfigReply,
            msg_type::FLOW_REMOVED => FlowRemoved,
            msg_type::PORT_STATUS => PortStatus,
            t => match version {
                Version::V1_0 => match of10::MsgType::from_raw(t) {
                    of10::MsgType::StatsReply => MultipartReply,
                    of10::MsgType::BarrierReply => BarrierReply,
                    of10::MsgType::QueueGetConfigReply => QueueGetConfigReply,
                    _ => Other,
                },
                Version::V1_3 => match of13::MsgType::from_raw(t) {
                    of13::MsgType::MultipartReply => MultipartReply,
                    of13::MsgType::BarrierReply => BarrierReply,
                    of13::MsgType::QueueGetConfigReply => QueueGetConfigReply,
                    of13::MsgType::RoleReply => RoleReply,
                    of13::MsgType::GetAsyncReply => GetAsyncReply,
                    _ => Other,
                },
            },
        })
    }

    /// The kind's name as a handler's, in timings and logs (`FLOW_REMOVED`).
    pub fn name(self) -> &'static str {
        match self {
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
}

/// An app with its type erased, as the core holds it: every [`crate::app::App`] is one
/// (the blanket impl is in [`crate::app`]). Configuration and `pharos run --apps` hand
/// these to [`crate::host::AppHost::build`].
pub trait AnyApp: Send + Sync + 'static {
    // The methods are named apart from App's, so a file that imports both traits can
    // still call `self.name()` on an app without ambiguity.
    /// [`crate::app::App::name`].
    fn app_name(&self) -> &'static str;
    /// [`crate::app::App::start`].
    fn start_app(&self, services: &Services) -> Result<(), StartError>;
    /// [`crate::app::App::stop`].
    fn stop_app(&self);
    /// A fresh per-switch state.
    fn new_state(&self) -> Box<dyn Any + Send>;
    /// The app itself, for request callbacks to find their `&A`.
    fn as_any(&self) -> &dyn Any;
    /// Runs [`crate::app::App::build`] and registers the handlers under app number
    /// `index`.
    fn register(self: Arc<Self>, index: usize, registry: &mut Registry) -> Result<(), StartError>;
}

/// A per-switch state slot, type-erased: the state and its type's id, taken once when
/// the slot is made. (`dyn Any`'s downcast asks the vtable for the id on every call and
/// reads it back from the stack: a store-to-load forward that stalled, three to five
/// times per PACKET_IN, about 8% of the default apps' time under cbench's load.)
pub struct Slot {
    /// The type id of the value `state` holds.
    id: TypeId,
    /// The app's state for one switch.
    pub(crate) state: Box<dyn Any + Send>,
}

impl Slot {
    /// A slot holding `state`.
    pub(crate) fn new(state: Box<dyn Any + Send>) -> Slot {
        // The id of the boxed value, not of the box.
        let id = (*state).type_id();
        Slot { id, state }
    }

    /// The state slot of an app with no state on this switch (stopped): zero-sized, so
    /// no allocation.
    pub(crate) fn empty() -> Slot {
        Slot::new(Box::new(()))
    }

    /// The state as a `T`, if it is one.
    #[inline]
    pub(crate) fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
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
    pub(crate) fn get<T: Any>(&self) -> Option<&T> {
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
/// A PACKET_IN handler, erased.
pub(crate) type PacketInCall =
    Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &PacketIn<'_>) -> Flow + Send + Sync>;
/// A PACKET_IN prefetch hint, erased.
pub(crate) type PrefetchCall = Arc<dyn Fn(&Slot, &PacketIn<'_>) + Send + Sync>;
/// A handler of decoded messages, erased.
pub(crate) type MessageCall =
    Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &Message) -> Flow + Send + Sync>;
/// An initializer, switch-added listener, turn-end handler or per-switch timer, erased.
pub(crate) type SwitchCall = Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot) + Send + Sync>;
/// A switch-removed listener, erased: gets the state by value.
pub(crate) type RemovedCall = Arc<dyn Fn(&SwitchInfo, Slot) + Send + Sync>;
/// A PORT_STATUS handler, erased.
pub(crate) type PortStatusCall =
    Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, PortReason, &PortInfo) + Send + Sync>;
/// A global timer, erased.
pub(crate) type GlobalCall = Arc<dyn Fn(&Switches, Instant) + Send + Sync>;
/// An adopt hook, erased.
pub(crate) type AdoptCall =
    Arc<dyn Fn(&mut SwitchCtx<'_>, &mut Slot, &openflow::ofctl::FlowEntry) -> Adopt + Send + Sync>;
/// Ends one service subscription.
pub(crate) type Unsubscribe = Box<dyn FnOnce() + Send + Sync>;
/// A subscription to make (under the guard of this start of the app) when the app
/// starts; returns what ends it.
pub(crate) type Subscription =
    Box<dyn Fn(&Services, &AppGuard) -> Result<Unsubscribe, StartError> + Send + Sync>;
/// Fills one of an app's [`crate::app::Required`] handles from the services, before
/// the app starts.
pub(crate) type Fill = Box<dyn Fn(&Services) -> Result<(), StartError> + Send + Sync>;

/// One registered handler.
#[derive(Clone)]
pub(crate) struct Handler<F> {
    /// The app's index (its quarantine flag and state slot).
    pub(crate) app: usize,
    /// Where it runs among the handlers of its kind.
    pub(crate) order: Order,
    /// Its number among the core's handlers, for its counts and time
    /// ([`crate::timing`]); given when the app is registered.
    pub(crate) id: usize,
    /// The call.
    pub(crate) call: F,
}

impl<F> Handler<F> {
    /// App `app`'s handler `call`, at `order` (numbered later, by [`Registry::number`]).
    pub(crate) fn new(app: usize, order: Order, call: F) -> Handler<F> {
        Handler {
            app,
            order,
            id: 0,
            call,
        }
    }
}

/// The handlers one app's `build` registered, kept while the core knows the app (each
/// plan takes clones of the running apps'), with what the app provides, requires and
/// publishes. Opaque to apps: they fill it through [`crate::app::Builder`].
#[derive(Default)]
pub struct Registry {
    /// PACKET_IN handlers and observers.
    pub(crate) packet_in: Vec<Handler<PacketInCall>>,
    /// PACKET_IN prefetch hints with their app's index, in app order.
    pub(crate) prefetch: Vec<(usize, PrefetchCall)>,
    /// Handlers of decoded messages, by kind.
    pub(crate) messages: Vec<(MessageKind, Handler<MessageCall>)>,
    /// Initializers.
    pub(crate) initialize: Vec<Handler<SwitchCall>>,
    /// Switch-added listeners.
    pub(crate) switch_added: Vec<Handler<SwitchCall>>,
    /// Turn-end handlers.
    pub(crate) turn_end: Vec<Handler<SwitchCall>>,
    /// Switch-removed listeners.
    pub(crate) switch_removed: Vec<Handler<RemovedCall>>,
    /// Adopt hooks, one at most per app ([`crate::reconcile`]).
    pub(crate) adopt: Vec<Handler<AdoptCall>>,
    /// PORT_STATUS handlers (version-neutral).
    pub(crate) port_status: Vec<Handler<PortStatusCall>>,
    /// Per-switch timers, with their periods.
    pub(crate) timers: Vec<(Period, Handler<SwitchCall>)>,
    /// Global timers, with their periods.
    pub(crate) global_timers: Vec<(Duration, Handler<GlobalCall>)>,
    /// The services the app provides.
    pub(crate) services: Services,
    /// The service subscriptions the app asked for: made just before each start.
    pub(crate) subscriptions: Vec<Subscription>,
    /// The services it requires (type id, type name).
    pub(crate) requires: Vec<(TypeId, &'static str)>,
    /// Fill its [`crate::app::Required`] handles before each start.
    pub(crate) fills: Vec<Fill>,
    /// The counters it publishes ([`crate::app::Builder::counter`]).
    pub(crate) counters: Vec<AppCounter>,
    /// The number of its `reply` handler (its requests' callbacks).
    pub(crate) reply_id: usize,
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

    /// Numbers every handler of app `index` for its counts and time: `id(app, name)`
    /// gives the number of a handler named `name` (see [`crate::timing`]).
    pub(crate) fn number(
        &mut self,
        index: usize,
        mut id: impl FnMut(usize, &'static str) -> usize,
    ) {
        for h in &mut self.packet_in {
            h.id = id(index, "PACKET_IN");
        }
        for (kind, h) in &mut self.messages {
            h.id = id(index, kind.name());
        }
        for (list, name) in [
            (&mut self.initialize, "initialize"),
            (&mut self.switch_added, "switch_added"),
            (&mut self.turn_end, "turn_end"),
        ] {
            for h in list {
                h.id = id(index, name);
            }
        }
        for (_, h) in &mut self.timers {
            h.id = id(index, "timer");
        }
        for h in &mut self.port_status {
            h.id = id(index, "PORT_STATUS");
        }
        for h in &mut self.switch_removed {
            h.id = id(index, "switch_removed");
        }
        for h in &mut self.adopt {
            h.id = id(index, "adopt");
        }
        for (_, h) in &mut self.global_timers {
            h.id = id(index, "global timer");
        }
        self.reply_id = id(index, "reply");
    }
}

/// An app as a plan holds it.
#[derive(Clone)]
pub(crate) struct PlanApp {
    /// The app.
    pub(crate) app: Arc<dyn AnyApp>,
    /// Its name.
    pub(crate) name: &'static str,
    /// The cookie tag marked on its flows ([`crate::cookie::app_tag`] of `name`).
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

/// What runs: the handlers of the running apps, in order, under one generation.
/// Immutable once published; every switch holds the plan it runs with and moves to a
/// newer one between two messages (see [`crate::host`]).
pub(crate) struct Plan {
    /// Raised by every change.
    pub(crate) generation: u64,
    /// Every app the core knows, by app index (stopped and removed ones too).
    pub(crate) apps: Vec<PlanApp>,
    /// The app order: app indexes, removed apps left out (readers of the apps' state
    /// use the plan, never the host's lock, which a change holds).
    pub(crate) order: Vec<usize>,
    /// Sorted by order; ties in app order.
    pub(crate) packet_in: Vec<Handler<PacketInCall>>,
    /// PACKET_IN prefetch hints with their app's index, in app order.
    pub(crate) prefetch: Vec<(usize, PrefetchCall)>,
    /// Per kind, sorted by order.
    pub(crate) messages: Vec<(MessageKind, Vec<Handler<MessageCall>>)>,
    /// App order.
    pub(crate) initialize: Vec<Handler<SwitchCall>>,
    /// App order.
    pub(crate) switch_added: Vec<Handler<SwitchCall>>,
    /// App order.
    pub(crate) turn_end: Vec<Handler<SwitchCall>>,
    /// App order.
    pub(crate) switch_removed: Vec<Handler<RemovedCall>>,
    /// Adopt hooks, by app ([`crate::reconcile`]).
    pub(crate) adopt: Vec<Handler<AdoptCall>>,
    /// App order.
    pub(crate) port_status: Vec<Handler<PortStatusCall>>,
    /// Per-switch timers, by timer index (the schedules of the switches use it).
    pub(crate) timers: Vec<Handler<SwitchCall>>,
    /// Their periods, by timer index.
    pub(crate) periods: Vec<Period>,
    /// Global timers, with their periods.
    pub(crate) global_timers: Vec<(Duration, Handler<GlobalCall>)>,
    /// The number of each app's `reply` handler (its requests' callbacks), by app.
    pub(crate) reply_ids: Vec<usize>,
}

impl Plan {
    /// The plan of `apps` (by app index, each with its registry) in app order `order`:
    /// the handlers of the running ones, in app order, sorted by their `Order`
    /// (stable: ties keep app order).
    pub(crate) fn new(generation: u64, apps: Vec<(PlanApp, &Registry)>, order: Vec<usize>) -> Plan {
        let reply_ids = apps.iter().map(|(_, r)| r.reply_id).collect();
        let mut plan = Plan {
            generation,
            order,
            apps: Vec::with_capacity(apps.len()),
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
            reply_ids,
        };
        for &i in &plan.order.clone() {
            let (a, r) = &apps[i];
            if !a.running {
                continue;
            }
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
        plan.apps = apps.into_iter().map(|(a, _)| a).collect();
        plan
    }

    /// Whether app `app` runs the same start in `self` and `newer` (its state goes on).
    pub(crate) fn same_start(&self, newer: &Plan, app: usize) -> bool {
        match (self.apps.get(app), newer.apps.get(app)) {
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

    /// The handlers of messages of `kind`, in order, if any app registered one.
    #[inline]
    pub(crate) fn handlers_of(&self, kind: MessageKind) -> Option<&[Handler<MessageCall>]> {
        self.messages
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, list)| list.as_slice())
    }
}

/// The plan in force, shared by the app host (which publishes each new one) and the
/// dispatcher (which compares each switch's plan's generation with it before every
/// message), with what both need to agree on about global timers.
pub(crate) struct PlanCell {
    /// The published plan's generation: the one relaxed load per message that tells a
    /// switch its plan is out of date.
    generation: AtomicU64,
    /// The plan now in force (read only when a switch migrates, and by readers).
    plan: RwLock<Arc<Plan>>,
    /// When each global timer is next due, by handler number (`None` inside: stopped,
    /// its app quarantined); a timer not in it starts its clock at its first tick. The
    /// host forgets a stopped app's; the dispatcher's global tick reads and sets them.
    pub(crate) global_due: Mutex<HashMap<usize, Option<Instant>>>,
    /// Wakes the controller's timer thread (a plan published may bring global timers).
    timer_waker: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl PlanCell {
    /// A cell holding `plan`.
    pub(crate) fn new(plan: Plan) -> PlanCell {
        PlanCell {
            generation: AtomicU64::new(plan.generation),
            plan: RwLock::new(Arc::new(plan)),
            global_due: Mutex::new(HashMap::new()),
            timer_waker: OnceLock::new(),
        }
    }

    /// The published plan's generation.
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Relaxed)
    }

    /// The plan in force.
    pub(crate) fn current(&self) -> Arc<Plan> {
        Arc::clone(&self.plan.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes `plan` the one in force; switches move to it before their next message,
    /// or when their worker is told. Wakes the timer thread.
    pub(crate) fn publish(&self, plan: Plan) {
        let generation = plan.generation;
        *self.plan.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(plan);
        self.generation.store(generation, Relaxed);
        if let Some(wake) = self.timer_waker.get() {
            wake();
        }
    }

    /// How to wake the controller's timer thread (set once).
    pub(crate) fn set_timer_waker(&self, wake: Box<dyn Fn() + Send + Sync>) {
        let _ = self.timer_waker.set(wake);
    }
}
