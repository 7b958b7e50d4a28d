//! One switch's state in the dispatcher, and its move to a newer plan.
//!
//! A [`SwitchState`] is owned by the worker serving the switch: the plan it runs with,
//! its info (ports current), every app's state slot, its xid counter and pending
//! requests, its timers and its handler counts. When the app host publishes a new plan
//! (an app started, stopped, re-ordered), each switch *migrates* between two messages:
//! the slots, pending requests (callbacks not run) and timers of apps no longer running
//! (or restarted) are dropped; apps that started get fresh state, their timers start,
//! and (once the switch was added) their initializers then switch-added listeners run
//! on it. No message ever sees half a change.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::ctx::{Callback, SwitchCtx};
use crate::handlers::{Plan, Slot};
use crate::info::SwitchInfo;
use crate::output::Output;
use crate::requests::Requests;
use crate::switches::Queued;
use crate::timers::{Rng, Schedule};
use crate::timing::Local;

use super::runner::{Run, Sampling};
use super::Dispatcher;

/// One switch's state, owned by the worker serving the switch (see the module doc).
pub struct SwitchState {
    /// The plan this switch runs with (its generation is compared with the published
    /// one before each message).
    pub(crate) plan: Arc<Plan>,
    /// `plan`'s generation, kept beside the state rather than behind the plan's
    /// pointer: the one compare per message reads it.
    pub(crate) generation: u64,
    /// Switch-added ran (a migration then runs started apps' initializers).
    pub(crate) added: bool,
    /// The switch, ports current (replaced whole on PORT_STATUS; shared with
    /// `Switches`).
    pub(crate) info: Arc<SwitchInfo>,
    /// One state slot per app, by app index.
    pub(crate) slots: Vec<Slot>,
    /// The xid counter and the pending requests.
    pub(crate) requests: Requests<Callback>,
    /// When each per-switch timer runs next.
    pub(crate) schedule: Schedule,
    /// Jitter for the timers.
    pub(crate) rng: Rng,
    /// The uid this switch is listed under in `Switches`.
    pub(crate) uid: u64,
    /// For a switch driven by hand: what others sent it through `Switches`.
    pub(crate) queue: Option<Arc<Mutex<Queued>>>,
    /// Its handlers' calls and timed calls, added to the host's totals at each
    /// publish ([`crate::timing`]).
    pub(crate) timing: Local,
    /// The flows the switch had when it connected, until `switch_added` has the apps
    /// adopt them ([`crate::reconcile`]); `None`: not known.
    pub(crate) found: Option<Vec<openflow::ofctl::FlowEntry>>,
    /// A message was handled since the last turn end.
    pub(crate) in_turn: bool,
}

impl std::fmt::Debug for SwitchState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchState")
            .field("dpid", &self.info.dpid)
            .field("requests", &self.requests)
            .finish()
    }
}

impl SwitchState {
    /// When the earliest pending request times out or the earliest timer is due (the
    /// worker calls `tick` then).
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
    pub(crate) fn requests_mut(&mut self) -> &mut Requests<Callback> {
        &mut self.requests
    }

    /// A fresh xid for a message the core itself sends to this switch.
    pub fn next_xid(&mut self) -> u32 {
        self.requests.next_xid()
    }

    /// A run of handlers on this switch (see [`super::runner`]), what they send going
    /// to `out`; with the switch's timers, which a tick moves on.
    pub(crate) fn run<'a>(
        &'a mut self,
        d: &'a Dispatcher,
        out: Output<'a>,
        now: Instant,
    ) -> (Run<'a>, &'a mut Schedule, &'a mut Rng) {
        let SwitchState {
            plan,
            info,
            slots,
            requests,
            timing,
            schedule,
            rng,
            ..
        } = self;
        let ctx = SwitchCtx::new(info, out, requests, &d.counters, &d.switches, now);
        let run = Run {
            plan,
            slots,
            timing,
            ctx,
            clock: d.clock,
        };
        (run, schedule, rng)
    }
}

impl Dispatcher {
    /// A fresh state for the switch `info`, listed in `Switches` as `uid`; `queue`:
    /// driven by hand (its timers' jitter is then deterministic, so a test replays
    /// exactly).
    pub(crate) fn state(
        &self,
        info: Arc<SwitchInfo>,
        uid: u64,
        queue: Option<Arc<Mutex<Queued>>>,
    ) -> SwitchState {
        let rng = match queue {
            Some(_) => Rng::seeded(info.dpid.0 ^ uid),
            None => Rng::new(info.dpid.0 ^ uid),
        };
        let plan = self.plans.current();
        SwitchState {
            rng,
            info,
            slots: plan
                .apps
                .iter()
                .map(|e| match e.running {
                    true => Slot::new(e.app.new_state()),
                    false => Slot::empty(),
                })
                .collect(),
            generation: plan.generation,
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

    /// Brings `sw` to the published plan if a change came since it last ran.
    #[inline]
    pub(crate) fn catch_up(&self, sw: &mut SwitchState, out: Output<'_>, now: Instant) {
        if self.plans.generation() != sw.generation {
            self.migrate(sw, out, now);
        }
    }

    /// Moves `sw` to the published plan, between two messages (see the module doc).
    #[cold]
    #[inline(never)]
    fn migrate(&self, sw: &mut SwitchState, out: Output<'_>, now: Instant) {
        let new = self.plans.current();
        let old = std::mem::replace(&mut sw.plan, Arc::clone(&new));
        sw.generation = new.generation;
        sw.requests.drop_apps(|app| old.same_start(&new, app));
        sw.slots.resize_with(new.apps.len(), Slot::empty);
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
                false => Slot::empty(),
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
        let (mut run, _, _) = sw.run(self, out, now);
        let plan = &*new;
        for (handlers, what) in [
            (&plan.initialize, "initialize"),
            (&plan.switch_added, "switch_added"),
        ] {
            let started = handlers.iter().filter(|h| started.contains(&h.app));
            run.chain(started, what, Sampling::PerHandler, |call, c, s| {
                call(c, s);
                crate::handlers::Flow::Continue
            });
        }
    }
}
