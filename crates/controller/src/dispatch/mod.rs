//! The dispatcher: the sans-IO side of every switch, which a worker drives.
//!
//! A [`Dispatcher`] runs the apps' handlers for each switch's messages, timers and
//! events, by the plan in force (published by the app host, [`crate::host`]), through
//! one runner (`runner.rs`: quarantine, timing, guard, call). It holds the core's
//! [`Switches`] directory, its counters and the handlers' timings, and reads no clock
//! of its own (the worker passes `now`; the timing layer reads the [`Clock`] it was
//! given). A [`SwitchState`] is one per switch, owned by the worker serving it.
//!
//! ```text
//! (any call)     ─► plan published since? ─► migrate (state.rs)
//! handle(frame) ─┬─ PACKET_IN ─► PacketIn::from_frame ─► Advise.. Direct.. (until Stop) ─► Observe..
//!                ├─ PORT_STATUS ─► ports updated (here and in Switches) ─► on_port_status..
//!                │                 ─► handlers of MessageKind::PortStatus (until Stop)
//!                ├─ xid pending ─► Message::decode ─► gather parts ─► requester's callback
//!                └─ other ─► Message::decode ─► handlers of its MessageKind (until Stop)
//! deliver        ─► messages from Switches::send, each with a fresh xid
//! request        ─► messages from Switches::request, fresh xids, one pending entry
//! tick(now)      ─► expired requests' callbacks (TimedOut), then due per-switch timers
//! disconnected   ─► unlisted from Switches ─► pending callbacks (SwitchGone) ─► listeners
//! global_tick    ─► due global timers (the controller's timer thread calls it)
//! ```
//!
//! Driven by hand (tests, no network), a dispatcher works the same: switches made with
//! [`Dispatcher::new_switch`] are listed in [`Switches`], and what others send them
//! through it (requests included) is collected by [`Dispatcher::take_queued`].
//!
//! ## Panics
//!
//! Every handler call runs under `catch_unwind` (the runner's guard layer). A handler
//! that panics gets its app quarantined: an atomic flag checked before every call, on
//! every worker, so none of the app's handlers (or pending callbacks) runs again; the
//! panic is logged at error level naming the app, the dpid and the message type, and
//! counted. The other apps and the switch carry on. An app's service subscriptions
//! ([`crate::app::Builder::subscribe`]) run under the same flag through its
//! [`crate::events::AppGuard`]: a subscriber's panic quarantines the subscriber, not the
//! app that published.

mod runner;
mod state;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openflow::{msg_type, Frame, Message};

pub use self::runner::Clock;
use self::runner::{guarded, skipped, Sampling};
pub use self::state::SwitchState;
use crate::command::{Route, WorkerHandle};
use crate::counters::PipelineCounters;
use crate::driver::{frames, Driver};
use crate::handlers::{Flow, MessageKind, PlanCell, Slot};
use crate::info::{Dpid, PortInfo, SwitchInfo};
use crate::output::{Output, Queue};
use crate::packet_in::PacketIn;
use crate::requests::{Answer, Done, Owner, Reply};
use crate::switches::{Queued, Switches};
use crate::timers::Schedule;
use crate::timing::Timings;

/// The apps' side of every switch (see the module doc). Shared by the workers as
/// `Arc<Dispatcher>`; the app host publishes the plans it runs.
pub struct Dispatcher {
    /// The plan in force, published by the app host.
    pub(crate) plans: Arc<PlanCell>,
    /// The core's directory of switches (also a service the apps require).
    pub(crate) switches: Arc<Switches>,
    /// Handler panics, decode and encode errors, replies (shared with the host, which
    /// reports them).
    pub(crate) counters: Arc<PipelineCounters>,
    /// Every handler's calls and time, as the workers last published them (shared with
    /// the host, which numbers the handlers and reports them).
    pub(crate) timings: Arc<Timings>,
    /// What the timing layer reads the time from.
    pub(crate) clock: Clock,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plan = self.plans.current();
        f.debug_struct("Dispatcher")
            .field("generation", &plan.generation)
            .field("packet_in_handlers", &plan.packet_in.len())
            .finish()
    }
}

impl Dispatcher {
    /// A dispatcher running the plans published in `plans`.
    pub(crate) fn new(
        plans: Arc<PlanCell>,
        switches: Arc<Switches>,
        counters: Arc<PipelineCounters>,
        timings: Arc<Timings>,
    ) -> Dispatcher {
        Dispatcher {
            plans,
            switches,
            counters,
            timings,
            clock: Instant::now,
        }
    }

    /// The timing layer reads the time from `clock` (a test's own, to pin what is
    /// measured).
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = clock;
    }

    /// The core's directory of switches.
    pub fn switches(&self) -> &Arc<Switches> {
        &self.switches
    }

    /// A fresh state for a switch driven by hand (no worker): listed in
    /// [`Switches`], where what is sent to it waits for [`Dispatcher::take_queued`]. Its
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

    /// The flows the switch had when it connected (`None`: not known), for
    /// [`Dispatcher::switch_added`] to have the apps adopt ([`crate::reconcile`]).
    pub fn set_found_flows(
        &self,
        sw: &mut SwitchState,
        flows: Option<Vec<openflow::ofctl::FlowEntry>>,
    ) {
        sw.found = flows;
    }

    /// The found flows adopted or deleted ([`crate::reconcile`]), then initializers,
    /// then switch-added listeners; what apps send goes to `out`. The switch's timers
    /// start now.
    pub fn switch_added(&self, sw: &mut SwitchState, out: &mut impl Queue, now: Instant) {
        let mut out = out.output();
        self.catch_up(sw, out.reborrow(), now);
        sw.added = true;
        let found = sw.found.take();
        let (mut run, schedule, rng) = sw.run(self, out, now);
        *schedule = Schedule::start(&run.plan.periods, now, rng);
        let adopted = found.map(|found| adopt_found(&mut run, found));
        run.ctx.adopted = adopted.as_deref();
        let plan = run.plan;
        for (handlers, what) in [
            (&plan.initialize, "initialize"),
            (&plan.switch_added, "switch_added"),
        ] {
            run.chain(handlers, what, Sampling::PerHandler, |call, c, s| {
                call(c, s);
                Flow::Continue
            });
        }
    }

    /// One whole message from the switch, exactly one frame, header included: its
    /// header is checked here (a frame from a worker was checked where it was framed:
    /// [`Driver::handle`]).
    pub fn handle(&self, sw: &mut SwitchState, frame: &[u8], out: &mut impl Queue, now: Instant) {
        match Frame::new_checked(frame) {
            Ok(f) => Driver::handle(self, sw, f, out, now),
            Err(e) => {
                // A change of the apps still reaches the switch before anything else.
                self.catch_up(sw, out.output(), now);
                sw.in_turn = true;
                self.decode_error(sw.info.dpid, &e.to_string());
            }
        }
    }

    /// The end of a turn of the switch's messages ([`Driver::turn_end`]), for a caller
    /// driving switches by hand after a group of [`Dispatcher::handle`] calls.
    pub fn turn_end(&self, sw: &mut SwitchState, out: &mut impl Queue, now: Instant) {
        Driver::turn_end(self, sw, out, now)
    }

    /// Brings switch `sw` to the current plan if a change came since it last ran (a
    /// caller driving switches by hand may call it to reach an idle switch).
    pub fn refresh(&self, sw: &mut SwitchState, out: &mut impl Queue, now: Instant) {
        self.catch_up(sw, out.output(), now);
    }

    /// Adds what switch `sw`'s handlers did since the last call to the totals the app
    /// host reads ([`crate::host::AppHost::handler_timings`]): a worker does it at its
    /// publish interval; a caller driving switches by hand calls it before reading.
    pub fn publish_timings(&self, sw: &mut SwitchState) {
        self.timings.publish(&mut sw.timing);
    }

    /// Moves what was sent to a hand-driven switch through [`Switches`] into `out`, in
    /// the order it was sent, each message with a fresh xid; requests
    /// ([`Switches::request`]) are registered as pending at `now` (a worker does this as
    /// the deliveries arrive).
    pub fn take_queued(&self, sw: &mut SwitchState, out: &mut impl Queue, now: Instant) {
        let mut out = out.output();
        let Some(queue) = &sw.queue else {
            return;
        };
        let Queued { bytes, requests } = std::mem::take(&mut *crate::sync::lock(queue));
        let mut from = 0;
        for r in requests {
            self.deliver(sw, &bytes[from..r.at], &mut out);
            from = r.at;
            self.request(sw, &r.messages, &mut out, now, r.timeout, r.answer);
        }
        self.deliver(sw, &bytes[from..], &mut out);
    }

    /// Runs the global timers due at `now` (the first call starts their clock: each
    /// first runs a period later); returns when the next one is due, `None` when
    /// there are none (left). Through the runner's quarantine and guard layers, each
    /// call timed.
    fn global_timers(&self, now: Instant) -> Option<Instant> {
        let plan = self.plans.current();
        if plan.global_timers.is_empty() {
            return None;
        }
        let mut due = crate::sync::lock(&self.plans.global_due);
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
                let started = (self.clock)();
                let guard = &plan.apps[h.app].guard;
                guarded(guard, None, "global timer", || (h.call)(switches, now));
                let nanos = runner::nanos((self.clock)() - started);
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

    /// A PACKET_IN, viewed in place, through the ordered handlers: the hot path.
    #[inline]
    fn packet_in(&self, sw: &mut SwitchState, frame: Frame<'_>, out: Output<'_>, now: Instant) {
        // Borrowed where `from_frame` left it, not moved: the move copied the view
        // with loads that straddle the callee's stores (a store-forwarding stall, 5%
        // of the worker's time in a profile of the learning switch).
        let parsed = PacketIn::from_frame(frame);
        let p = match &parsed {
            Ok(p) => p,
            Err(e) => return self.decode_error(sw.info.dpid, &e.to_string()),
        };
        if sw.plan.packet_in.is_empty() {
            self.counters.unhandled.fetch_add(1, Relaxed);
            return;
        }
        let (mut run, _, _) = sw.run(self, out, now);
        let plan = run.plan;
        run.chain(
            &plan.packet_in,
            "PACKET_IN",
            Sampling::PacketIn,
            |call, c, s| call(c, s, p),
        );
    }

    /// A message whose xid a request waits for: gathered, then given to the requester.
    fn reply(&self, sw: &mut SwitchState, frame: Frame<'_>, out: Output<'_>, now: Instant) {
        let Some(msg) = self.decode(sw, frame) else {
            return;
        };
        let multipart = matches!(
            MessageKind::from_wire(frame.version(), frame.msg_type()),
            Some(MessageKind::MultipartReply)
        );
        // ofp_stats_reply / ofp_multipart_reply: header(8) type(2) flags(2); the MORE
        // flag is bit 0 of flags in both versions (1.0 §5.3.5 OFPSF_REPLY_MORE, 1.3
        // §7.3.5 OFPMPF_REPLY_MORE).
        let b = frame.bytes();
        let more = multipart && b.len() >= 12 && b[11] & 1 != 0;
        let error = frame.msg_type() == msg_type::ERROR;
        if let Some(done) = sw.requests.on_reply(frame.xid(), msg, more, error) {
            self.counters.replies.fetch_add(1, Relaxed);
            self.answer(sw, done, out, now);
        }
    }

    /// Gives a finished request's callback its reply: an app's through the runner, with
    /// its state; an external one directly.
    fn answer(
        &self,
        sw: &mut SwitchState,
        done: Done<crate::ctx::Callback>,
        out: Output<'_>,
        now: Instant,
    ) {
        let Done { owner, reply } = done;
        let (app, callback) = match owner {
            Owner::App { app, callback } => (app, callback),
            Owner::External(answer) => return answer.send(reply),
        };
        let (mut run, _, _) = sw.run(self, out, now);
        let any = run.plan.apps[app].app.as_any();
        let id = run.plan.reply_ids[app];
        // The callback downcasts the state itself: the boxed state, not the slot (a
        // `&mut Slot` would coerce to `dyn Any` too, and never downcast).
        run.one(app, id, "reply", |c, s: &mut Slot| {
            callback(any, c, &mut *s.state, reply)
        });
    }

    /// The handlers of one message kind, in order, until one stops (observers always).
    fn messages(
        &self,
        sw: &mut SwitchState,
        kind: MessageKind,
        msg: &Message,
        out: Output<'_>,
        now: Instant,
    ) {
        let (mut run, _, _) = sw.run(self, out, now);
        let Some(handlers) = run.plan.handlers_of(kind) else {
            return;
        };
        run.chain(
            handlers,
            msg.type_name(),
            Sampling::PerHandler,
            |call, c, s| call(c, s, msg),
        );
    }

    /// PORT_STATUS: the port list is updated (here and in `Switches`) before any app
    /// hears of it; then the port-status handlers, then the message handlers.
    fn port_status(
        &self,
        sw: &mut SwitchState,
        frame: Frame<'_>,
        mut out: Output<'_>,
        now: Instant,
    ) {
        let Some(msg) = self.decode(sw, frame) else {
            return;
        };
        if let Some((reason, port)) = PortInfo::from_port_status(&msg) {
            let mut info = SwitchInfo::clone(&sw.info);
            info.apply_port_status(reason, &port);
            sw.info = Arc::new(info);
            self.switches
                .update(sw.uid, Arc::clone(&sw.info), reason, &port);
            let (mut run, _, _) = sw.run(self, out.reborrow(), now);
            let plan = run.plan;
            run.chain(
                &plan.port_status,
                "PORT_STATUS",
                Sampling::PerHandler,
                |call, c, s| {
                    call(c, s, reason, &port);
                    Flow::Continue
                },
            );
        }
        self.messages(sw, MessageKind::PortStatus, &msg, out, now);
    }

    fn decode(&self, sw: &SwitchState, frame: Frame<'_>) -> Option<Message> {
        match Message::decode(frame.bytes()) {
            Ok((_, m)) => Some(m),
            Err(e) => {
                self.decode_error(sw.info.dpid, &e.to_string());
                None
            }
        }
    }

    #[cold]
    fn decode_error(&self, dpid: Dpid, why: &str) {
        self.counters.decode_errors.fetch_add(1, Relaxed);
        tracing::warn!(dpid = %dpid, error = why, "message from switch not decoded; dropped");
    }
}

/// The found flows, each kept or deleted by its owner (see [`crate::reconcile`]); the
/// deletes go to the run's output. Returns the flows kept.
fn adopt_found(
    run: &mut runner::Run<'_>,
    found: Vec<openflow::ofctl::FlowEntry>,
) -> Vec<openflow::ofctl::FlowEntry> {
    let plan = run.plan;
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
            Some(app) if !run.is_quarantined(app) => {
                match plan.adopt.iter().find(|h| h.app == app) {
                    Some(h) => {
                        let r = run.one(app, h.id, "adopt", |c, s| (h.call)(c, s, &e));
                        r == Some(crate::reconcile::Adopt::Keep)
                    }
                    None => true,
                }
            }
            _ => false,
        };
        if keep {
            kept.push(e);
        } else if let Some(m) = crate::removal::delete_strict(&e.flow, run.ctx.version()) {
            let xid = run.ctx.next_xid();
            if run
                .ctx
                .out
                .push(m.version().wire(), m.msg_type(), |b| m.encode(xid, b))
                .is_ok()
            {
                deleted += 1;
            }
        }
    }
    tracing::info!(
        dpid = %run.ctx.dpid(),
        kept = kept.len(),
        deleted,
        "flows found on the switch adopted by their apps; the others deleted"
    );
    kept
}

impl Driver for Dispatcher {
    type State = SwitchState;

    fn connected(
        &self,
        info: SwitchInfo,
        route: Route,
        flows: Option<Vec<openflow::ofctl::FlowEntry>>,
        out: &mut impl Queue,
        now: Instant,
    ) -> SwitchState {
        let mut sw = self.new_switch_at(info, route);
        sw.found = flows;
        self.switch_added(&mut sw, out, now);
        sw
    }

    /// One whole message from the switch, its header checked where it was framed: only
    /// its type and xid are read here. A change of the apps reaches this switch here,
    /// between two messages: one relaxed load per message, the migration out of line.
    #[inline]
    fn handle(&self, sw: &mut SwitchState, frame: Frame<'_>, out: &mut impl Queue, now: Instant) {
        let mut out = out.output();
        self.catch_up(sw, out.reborrow(), now);
        sw.in_turn = true;
        let t = frame.msg_type();
        if t == msg_type::PACKET_IN {
            return self.packet_in(sw, frame, out, now);
        }
        if t == msg_type::PORT_STATUS {
            return self.port_status(sw, frame, out, now);
        }
        if t != msg_type::FLOW_REMOVED && sw.requests.is_pending(frame.xid()) {
            return self.reply(sw, frame, out, now);
        }
        let Some(kind) = MessageKind::from_wire(frame.version(), t) else {
            return;
        };
        if sw.plan.handlers_of(kind).is_none() {
            self.counters.unhandled.fetch_add(1, Relaxed);
            return;
        }
        let Some(msg) = self.decode(sw, frame) else {
            return;
        };
        self.messages(sw, kind, &msg, out, now);
    }

    /// Gives the apps' PACKET_IN prefetch hints the switch's next message, if it is a
    /// PACKET_IN ([`crate::app::Builder::prefetch_packet_in`]).
    #[inline]
    fn prefetch(&self, sw: &SwitchState, frame: Frame<'_>) {
        let plan = &*sw.plan;
        if plan.prefetch.is_empty() || frame.msg_type() != msg_type::PACKET_IN {
            return;
        }
        let Ok(p) = PacketIn::from_frame(frame) else {
            return;
        };
        for (app, call) in &plan.prefetch {
            if skipped(plan, *app) {
                continue;
            }
            let s = &sw.slots[*app];
            let guard = &plan.apps[*app].guard;
            guarded(guard, Some(sw.info.dpid), "PACKET_IN prefetch", || {
                call(s, &p)
            });
        }
    }

    /// Runs the apps' turn-end handlers ([`crate::app::Builder::on_turn_end`]) if a
    /// message was handled since the last call.
    #[inline]
    fn turn_end(&self, sw: &mut SwitchState, out: &mut impl Queue, now: Instant) {
        if !std::mem::take(&mut sw.in_turn) || sw.plan.turn_end.is_empty() {
            return;
        }
        let (mut run, _, _) = sw.run(self, out.output(), now);
        let plan = run.plan;
        run.chain(
            &plan.turn_end,
            "turn end",
            Sampling::PerHandler,
            |call, c, s| {
                call(c, s);
                Flow::Continue
            },
        );
    }

    /// Times out the requests whose deadline is at or before `now`, then runs the
    /// per-switch timers due by `now`.
    fn tick(&self, sw: &mut SwitchState, out: &mut impl Queue, now: Instant) {
        let mut out = out.output();
        self.catch_up(sw, out.reborrow(), now);
        while let Some(done) = sw.requests.pop_expired(now) {
            self.counters.request_timeouts.fetch_add(1, Relaxed);
            let app = match &done.owner {
                Owner::App { app, .. } => sw.plan.apps[*app].name,
                Owner::External(_) => "(external)",
            };
            tracing::debug!(app, dpid = %sw.info.dpid, "request timed out");
            self.answer(sw, done, out.reborrow(), now);
        }
        let (mut run, schedule, rng) = sw.run(self, out, now);
        let plan = run.plan;
        while let Some(i) = schedule.due(now) {
            let h = &plan.timers[i];
            if run.is_quarantined(h.app) {
                schedule.stop(i);
                continue;
            }
            // Rescheduled first: a timer that panics is not run again at once (nor
            // ever, as its app is quarantined).
            schedule.ran(i, &plan.periods[i], now, rng);
            run.one(h.app, h.id, "timer", |c, s| (h.call)(c, s));
        }
    }

    fn next_deadline(&self, sw: &SwitchState) -> Option<Instant> {
        sw.next_deadline()
    }

    /// The switch left: it is unlisted from [`Switches`], its pending requests'
    /// callbacks get [`Reply::SwitchGone`] (what they send to it is discarded), the
    /// switch-removed listeners run, and the state (every app's slot, the timers) is
    /// dropped.
    fn disconnected(&self, mut sw: SwitchState, reason: &str, now: Instant) {
        // What migrating sends goes nowhere: the switch is gone.
        let mut discarded = Vec::new();
        self.catch_up(&mut sw, Output::from(&mut discarded), now);
        self.switches.remove(sw.info.dpid, sw.uid, reason);
        tracing::debug!(
            dpid = %sw.info.dpid,
            reason,
            pending = sw.requests.len(),
            "switch removed"
        );
        while let Some(done) = sw.requests.pop_gone() {
            self.answer(&mut sw, done, Output::from(&mut discarded), now);
        }
        let info = Arc::clone(&sw.info);
        {
            let (mut run, _, _) = sw.run(self, Output::from(&mut discarded), now);
            let plan = run.plan;
            for h in &plan.switch_removed {
                if plan.apps[h.app].quarantined.load(Relaxed) {
                    continue;
                }
                run.one(h.app, h.id, "switch_removed", |_, s| {
                    (h.call)(&info, std::mem::replace(s, Slot::empty()))
                });
            }
        }
        sw.slots.clear();
        self.timings.publish(&mut sw.timing);
    }

    /// Appends messages sent from elsewhere (whole messages, xid 0) to `out`, each with
    /// a fresh xid from the switch's counter.
    fn deliver(&self, sw: &mut SwitchState, messages: &[u8], out: &mut impl Queue) {
        let mut out = out.output();
        for frame in frames(messages) {
            let xid = sw.requests.next_xid();
            out.push_frame(frame, xid);
        }
    }

    /// Appends a request from elsewhere ([`Switches::request`]: whole messages, xid 0)
    /// to `out`, the messages with consecutive fresh xids, and registers one pending
    /// entry for them that times out at `now + timeout` (see [`crate::requests`]).
    fn request(
        &self,
        sw: &mut SwitchState,
        messages: &[u8],
        out: &mut impl Queue,
        now: Instant,
        timeout: Duration,
        answer: Answer,
    ) {
        let mut out = out.output();
        let n = frames(messages).count();
        let Ok(n) = u32::try_from(n) else {
            return answer.send(Reply::SwitchGone);
        };
        if n == 0 {
            // Switches::request never queues an empty request.
            return answer.send(Reply::SwitchGone);
        }
        let first = sw.requests.next_xids(n);
        // `first + n - 1` fits (the range never wraps); `(first..)` could step past it.
        for (i, frame) in (0..n).zip(frames(messages)) {
            out.push_frame(frame, first + i);
        }
        let last = first + (n - 1);
        sw.requests
            .insert_external(first, last, now + timeout, answer);
    }

    fn refresh(&self, sw: &mut SwitchState, out: &mut impl Queue, now: Instant) {
        self.catch_up(sw, out.output(), now);
    }

    fn publish(&self, sw: &mut SwitchState) {
        self.timings.publish(&mut sw.timing);
    }

    fn attach(&self, workers: &[WorkerHandle], timer_waker: Box<dyn Fn() + Send + Sync>) {
        self.switches.attach(workers);
        self.plans.set_timer_waker(timer_waker);
    }

    fn global_tick(&self, now: Instant) -> Option<Instant> {
        self.global_timers(now)
    }
}

#[cfg(test)]
mod tests;
