//! The one handler runner: every handler of every kind, every timer, callback and hook
//! an app registered runs through [`Run::one`], inside the same layers.
//!
//! ```text
//! Run::one(app, handler, what, call)
//!   1. quarantine   the app is quarantined?  ─► skipped (None)
//!                   else the context is pointed at the app (its name, cookie owner)
//!   2. timing       counted; one call in SAMPLE_EVERY (or one PACKET_IN in
//!                   PACKET_IN_SAMPLE_EVERY, for the whole chain) timed by the clock
//!                   the dispatcher was given
//!   3. guard        catch_unwind: a panic quarantines the app, logged and counted
//!   4. call         the app's code, with the context and its state for this switch
//! Run::chain(handlers)   handlers in order, through `one`, until one returns Stop
//!                        (Observe-phase handlers always run and cannot stop)
//! ```
//!
//! The layers are cross-cutting concerns in tower's sense: they wrap the call and the
//! app's code never contains them. They are written once, here; the global timers
//! (no switch, no state) and the PACKET_IN prefetch hints (no context, no timing) use
//! the same quarantine and guard layers ([`skipped`], [`guarded`]).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use crate::ctx::SwitchCtx;
use crate::events::AppGuard;
use crate::handlers::{Flow, Handler, Phase, Plan, Slot};
use crate::info::Dpid;
use crate::timing::Local;

/// What reads the time for the timing layer (`Instant::now` in a controller; a test
/// may hand in its own): the dispatcher reads no clock of its own.
pub type Clock = fn() -> Instant;

/// One run of handlers on one switch: the plan, the switch's slots and handler
/// counts, and the context the handlers get.
pub(crate) struct Run<'r> {
    /// The plan the switch runs with.
    pub(crate) plan: &'r Plan,
    /// The apps' state slots for this switch, by app index.
    pub(crate) slots: &'r mut [Slot],
    /// This switch's handler counts and timed calls.
    pub(crate) timing: &'r mut Local,
    /// The context handed to each handler, pointed at its app in turn.
    pub(crate) ctx: SwitchCtx<'r>,
    /// The timing layer's clock.
    pub(crate) clock: Clock,
}

/// How the timing layer samples a chain of handlers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sampling {
    /// Each handler on its own: one call in [`crate::timing::SAMPLE_EVERY`].
    PerHandler,
    /// The PACKET_IN chain: one packet in [`crate::timing::PACKET_IN_SAMPLE_EVERY`] has
    /// all its handlers timed, one clock read before the first and one after each.
    PacketIn,
}

impl<'r> Run<'r> {
    /// Whether app `app` is quarantined (its code is skipped).
    #[inline]
    pub(crate) fn is_quarantined(&self, app: usize) -> bool {
        skipped(self.plan, app)
    }

    /// Runs one handler, number `id` of app `app`, named `what` in the log, through
    /// the layers (see the module doc); `None` when it was skipped or panicked.
    #[inline(always)]
    pub(crate) fn one<R>(
        &mut self,
        app: usize,
        id: usize,
        what: &str,
        call: impl FnOnce(&mut SwitchCtx<'r>, &mut Slot) -> R,
    ) -> Option<R> {
        // 1. quarantine
        if skipped(self.plan, app) {
            return None;
        }
        let a = &self.plan.apps[app];
        self.ctx.run_as(app, a.name, a.tag);
        // 2. timing
        let started = self.timing.count(id).then(self.clock);
        // 3. guard, 4. call
        let (ctx, slot) = (&mut self.ctx, &mut self.slots[app]);
        let dpid = Some(ctx.dpid());
        let r = guarded(&a.guard, dpid, what, || call(ctx, slot));
        if let Some(started) = started {
            self.timing.timed(id, nanos((self.clock)() - started));
        }
        r
    }

    /// Runs `handlers` in order through the layers, each with `call`, until one
    /// returns [`Flow::Stop`]: then only the `Observe`-phase handlers after it run
    /// (their `Stop` is ignored). Handlers that cannot stop return `Continue`.
    #[inline(always)]
    pub(crate) fn chain<'h, F: 'h>(
        &mut self,
        handlers: impl IntoIterator<Item = &'h Handler<F>>,
        what: &str,
        sampling: Sampling,
        mut call: impl FnMut(&F, &mut SwitchCtx<'r>, &mut Slot) -> Flow,
    ) {
        if sampling == Sampling::PacketIn {
            return self.packet_in_chain(handlers, what, call);
        }
        let mut stopped = false;
        for h in handlers {
            if stopped && h.order.phase != Phase::Observe {
                continue;
            }
            let flow = self.one(h.app, h.id, what, |c, s| call(&h.call, c, s));
            if flow == Some(Flow::Stop) && h.order.phase != Phase::Observe {
                stopped = true;
            }
        }
    }

    /// [`Run::chain`] for the PACKET_IN handlers: the same layers, sampled per packet
    /// ([`Sampling::PacketIn`]): the hot path reads no clock for 1023 packets in 1024.
    #[inline(always)]
    fn packet_in_chain<'h, F: 'h>(
        &mut self,
        handlers: impl IntoIterator<Item = &'h Handler<F>>,
        what: &str,
        mut call: impl FnMut(&F, &mut SwitchCtx<'r>, &mut Slot) -> Flow,
    ) {
        let mut stopped = false;
        let mut clock = self.timing.sample_packet_in().then(self.clock);
        let dpid = Some(self.ctx.dpid());
        for h in handlers {
            let observe = h.order.phase == Phase::Observe;
            if (stopped && !observe) || skipped(self.plan, h.app) {
                continue;
            }
            let a = &self.plan.apps[h.app];
            self.ctx.run_as(h.app, a.name, a.tag);
            self.timing.count_only(h.id);
            let (ctx, slot) = (&mut self.ctx, &mut self.slots[h.app]);
            let flow = guarded(&a.guard, dpid, what, || call(&h.call, ctx, slot));
            if let Some(before) = clock {
                let after = (self.clock)();
                self.timing.timed_since(h.id, nanos(after - before));
                clock = Some(after);
            }
            if flow == Some(Flow::Stop) && !observe {
                stopped = true;
            }
        }
    }
}

/// The quarantine layer: whether app `app`'s code is skipped.
#[inline(always)]
pub(crate) fn skipped(plan: &Plan, app: usize) -> bool {
    crate::events::is_quarantined(&plan.apps[app].quarantined)
}

/// The guard layer: runs `f`; a panic quarantines the app `guard` guards (logged
/// naming the app, the dpid and `what`, and counted) and gives `None`.
#[inline(always)]
pub(crate) fn guarded<R>(
    guard: &AppGuard,
    dpid: Option<Dpid>,
    what: &str,
    f: impl FnOnce() -> R,
) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            quarantine(guard, dpid, what, payload.as_ref());
            None
        }
    }
}

/// App `guard`'s code panicked with `payload`: quarantined (see [`crate::events`]).
#[cold]
fn quarantine(guard: &AppGuard, dpid: Option<Dpid>, what: &str, payload: &(dyn Any + Send)) {
    crate::events::quarantine(guard.health(), dpid, what, payload);
}

/// A duration in whole nanoseconds (saturating).
#[inline]
pub(crate) fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
