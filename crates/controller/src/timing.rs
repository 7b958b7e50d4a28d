//! Per-handler call counts and time, measured without slowing the PACKET_IN path.
//!
//! A handler is an app's code for one kind of call: `PACKET_IN`, a message type
//! (`FLOW_REMOVED`), `PORT_STATUS`, `timer`, `initialize`, `switch_added`,
//! `switch_removed`, `reply` (its requests' callbacks), `global timer`. The pipeline
//! numbers them as each app is registered (`Names`, grown when an app is added at
//! run time; a switch's `Local` grows as it migrates to a new plan).
//!
//! **How it is measured.** Each switch's state (`Local`, owned by the worker serving
//! the switch, like the apps' slots) counts its handlers' calls in plain `u64`s: no
//! atomic, no lock, no clock. One call in [`SAMPLE_EVERY`] of each handler on each
//! switch (the 1st, the 65th, the 129th...) is timed with two reads of the dispatcher's clock
//! around it, and stands for the calls since the previous timed one (the first for
//! itself): its duration, weighted so, goes into the handler's time and histogram.
//! The worker adds each switch's counts to the pipeline's totals (`Timings`, one
//! lock) at its counters' publish interval (and when the switch leaves), so readers see
//! them at most that old. Global timers run on the timer thread, rarely: each call is
//! timed and added at once. Not counted: apps' service subscriptions (they run on
//! the publisher's thread, under the app's guard, with no switch state at hand) and
//! the PACKET_IN prefetch hints.
//!
//! The PACKET_IN chain is sampled per packet instead: one PACKET_IN in
//! [`PACKET_IN_SAMPLE_EVERY`] per switch (the first, then every 1024th) has each of its
//! handlers timed (one clock read before the first and one after each), and each timed
//! call stands for that handler's calls since its last timed one. Per-handler sampling
//! at 1 in 64 cost the default apps about 5% of their PACKET_IN throughput (issue 10's
//! benchmark, A/B against the commit before it); this costs one decrement per packet.
//!
//! **What it costs.** Per handler call: an increment (and for the other handlers a
//! compare) in memory the worker already owns (about a nanosecond; a PACKET_IN through
//! the default apps makes three calls); per 64 calls of a handler on a switch (1024
//! PACKET_INs for the PACKET_IN chain), clock reads (some 25 ns each through the vDSO)
//! and a few additions. Per switch per publish interval, one
//! lock and a pass over the handlers.
//!
//! **What it means.** Calls are exact (as of the last publish). Time and the
//! histogram are estimates from one call in 64: right on average over many calls, and
//! the histogram's count trails the calls by up to 63 per switch and handler (the
//! calls since a handler's last timed one are not in it yet).

use crate::sync::lock;
use std::sync::Mutex;

/// One call in this many, per handler and switch, is timed.
pub const SAMPLE_EVERY: u64 = 64;

/// One PACKET_IN in this many, per switch, has its handlers timed (the PACKET_IN chain
/// runs millions of times a second: its clock reads are made rarer than the others').
pub const PACKET_IN_SAMPLE_EVERY: u32 = 1024;

/// The histogram's bucket bounds, in nanoseconds (factors of 4, from 1 µs to about
/// 1 s); a last bucket, `+Inf`, follows.
pub const BUCKETS: [u64; 11] = [
    1_000,
    4_000,
    16_000,
    64_000,
    256_000,
    1_024_000,
    4_096_000,
    16_384_000,
    65_536_000,
    262_144_000,
    1_048_576_000,
];

/// The bucket of a duration of `nanos`: the first bound at or above it (the last,
/// `+Inf`, when none is).
fn bucket(nanos: u64) -> usize {
    BUCKETS
        .iter()
        .position(|&b| nanos <= b)
        .unwrap_or(BUCKETS.len())
}

/// Timed calls of one handler, weighted (see the module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Timed {
    /// Calls the timed ones stand for.
    weight: u64,
    /// Their durations times their weights.
    nanos: u64,
    /// Weights by bucket (not cumulative), `+Inf` last.
    buckets: [u64; BUCKETS.len() + 1],
}

impl Timed {
    fn add(&mut self, nanos: u64, weight: u64) {
        self.weight += weight;
        self.nanos = self.nanos.saturating_add(nanos.saturating_mul(weight));
        self.buckets[bucket(nanos)] += weight;
    }

    fn merge(&mut self, other: &Timed) {
        self.weight += other.weight;
        self.nanos = self.nanos.saturating_add(other.nanos);
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
    }
}

/// The handlers of a pipeline: (app index, handler name) by handler number.
#[derive(Debug, Default, Clone)]
pub(crate) struct Names(Vec<(usize, &'static str)>);

impl Names {
    /// The number of app `app`'s handler `name`, numbered now if new.
    pub(crate) fn id(&mut self, app: usize, name: &'static str) -> usize {
        match self.0.iter().position(|&n| n == (app, name)) {
            Some(i) => i,
            None => {
                self.0.push((app, name));
                self.0.len() - 1
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

impl Local {
    /// Makes room for handlers numbered since this state was made (apps started at
    /// run time).
    pub(crate) fn grow(&mut self, handlers: usize) {
        if self.calls.len() < handlers {
            self.calls.resize(handlers, 0);
            self.published.resize(handlers, 0);
            self.timed.resize(handlers, Timed::default());
            self.last_timed.resize(handlers, 0);
        }
    }
}

/// One switch's counts, owned by its worker (in the switch's pipeline state).
#[derive(Debug, Clone, Default)]
pub(crate) struct Local {
    /// Calls by handler number, ever (the sampling reads them).
    calls: Vec<u64>,
    /// `calls` as last added to the totals.
    published: Vec<u64>,
    /// Timed calls since last added to the totals.
    timed: Vec<Timed>,
    /// `calls` when each PACKET_IN handler was last timed: a timed call stands for the
    /// calls since.
    last_timed: Vec<u64>,
    /// PACKET_INs until the next one whose handlers are timed (0: this one).
    packet_in_countdown: u32,
}

impl Local {
    pub(crate) fn new(handlers: usize) -> Local {
        Local {
            calls: vec![0; handlers],
            published: vec![0; handlers],
            timed: vec![Timed::default(); handlers],
            last_timed: vec![0; handlers],
            packet_in_countdown: 0,
        }
    }

    /// A PACKET_IN arrives: true when its handlers are to be timed (the first, then one
    /// in [`PACKET_IN_SAMPLE_EVERY`]). Its handlers' calls are counted with
    /// [`Local::count_only`] and the timed ones given with [`Local::timed_since`].
    #[inline(always)]
    pub(crate) fn sample_packet_in(&mut self) -> bool {
        match self.packet_in_countdown.checked_sub(1) {
            Some(left) => {
                self.packet_in_countdown = left;
                false
            }
            None => {
                self.packet_in_countdown = PACKET_IN_SAMPLE_EVERY - 1;
                true
            }
        }
    }

    /// Counts a call of handler `id`, not timed.
    #[inline(always)]
    pub(crate) fn count_only(&mut self, id: usize) {
        self.calls[id] += 1;
    }

    /// Handler `id`'s call just counted took `nanos`; it stands for its calls since it
    /// was last timed this way.
    #[cold]
    pub(crate) fn timed_since(&mut self, id: usize, nanos: u64) {
        let weight = self.calls[id] - self.last_timed[id];
        self.last_timed[id] = self.calls[id];
        self.timed[id].add(nanos, weight.max(1));
    }

    /// Counts a call of handler `id`; true when this one is to be timed (then
    /// [`Local::timed`] gets its duration).
    #[inline(always)]
    pub(crate) fn count(&mut self, id: usize) -> bool {
        let c = &mut self.calls[id];
        *c += 1;
        *c % SAMPLE_EVERY == 1
    }

    /// Records the duration (`nanos`) of the timed call of handler `id` just counted.
    #[cold]
    pub(crate) fn timed(&mut self, id: usize, nanos: u64) {
        let weight = if self.calls[id] == 1 { 1 } else { SAMPLE_EVERY };
        self.timed[id].add(nanos, weight);
    }
}

/// Every handler's totals, as published.
#[derive(Debug)]
pub(crate) struct Timings {
    /// Who each handler is (grows as apps are added at run time).
    names: Mutex<Names>,
    /// (calls, timed) by handler number.
    totals: Mutex<Vec<(u64, Timed)>>,
}

/// One handler's totals: [`crate::host::AppHost::handler_timings`].
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerTiming {
    /// The app.
    pub app: &'static str,
    /// The handler (see the module doc).
    pub handler: &'static str,
    /// Calls, exact as of the workers' last publish.
    pub calls: u64,
    /// Time spent in them, in seconds: an estimate from the timed calls.
    pub time_secs: f64,
    /// Calls the histogram stands for (at most `calls`).
    pub timed_calls: u64,
    /// The histogram: for each bound of [`BUCKETS`] (in seconds here) then `+Inf`,
    /// the calls above the bound before and at or below this one (not cumulative:
    /// `prometheus-client` adds them up as it writes them).
    pub buckets: Vec<(f64, u64)>,
}

impl Timings {
    pub(crate) fn new() -> Timings {
        Timings {
            names: Mutex::new(Names::default()),
            totals: Mutex::new(Vec::new()),
        }
    }

    /// The number of app `app`'s handler `name`, numbered now if new.
    pub(crate) fn id(&self, app: usize, name: &'static str) -> usize {
        let mut names = lock(&self.names);
        let id = names.id(app, name);
        let n = names.len();
        drop(names);
        let mut totals = lock(&self.totals);
        if totals.len() < n {
            totals.resize(n, (0, Timed::default()));
        }
        id
    }

    /// How many handlers are numbered.
    pub(crate) fn len(&self) -> usize {
        lock(&self.names).len()
    }

    pub(crate) fn local(&self) -> Local {
        Local::new(self.len())
    }

    /// Adds what `local` counted since its last publish.
    pub(crate) fn publish(&self, local: &mut Local) {
        if local.calls == local.published {
            return;
        }
        let mut totals = lock(&self.totals);
        for (id, total) in totals.iter_mut().enumerate().take(local.calls.len()) {
            total.0 += local.calls[id] - local.published[id];
            total.1.merge(&local.timed[id]);
        }
        drop(totals);
        local.published.copy_from_slice(&local.calls);
        local.timed.fill(Timed::default());
    }

    /// A call of handler `id` that took `nanos`, counted and timed at once (global
    /// timers).
    pub(crate) fn add_one(&self, id: usize, nanos: u64) {
        let mut totals = lock(&self.totals);
        totals[id].0 += 1;
        totals[id].1.add(nanos, 1);
    }

    /// Every handler's totals, in handler-number order, named with `app_name`.
    pub(crate) fn snapshot(&self, app_name: impl Fn(usize) -> &'static str) -> Vec<HandlerTiming> {
        let totals = lock(&self.totals).clone();
        let names = lock(&self.names).clone();
        names
            .0
            .iter()
            .zip(totals)
            .map(|(&(app, handler), (calls, t))| {
                let bounds = BUCKETS
                    .iter()
                    .map(|&n| n as f64 / 1e9)
                    .chain([f64::INFINITY]);
                let buckets = bounds.zip(t.buckets).collect();
                HandlerTiming {
                    app: app_name(app),
                    handler,
                    calls,
                    time_secs: t.nanos as f64 * 1e-9,
                    timed_calls: t.weight,
                    buckets,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_in_64_is_timed_and_stands_for_the_calls_since_the_last() {
        let timings = Timings::new();
        assert_eq!(timings.id(0, "PACKET_IN"), 0);
        assert_eq!(timings.id(1, "PACKET_IN"), 1);
        assert_eq!(timings.id(0, "PACKET_IN"), 0);
        let mut l = timings.local();
        let mut timed = Vec::new();
        for call in 1..=130u64 {
            if l.count(0) {
                timed.push(call);
                l.timed(0, 1_000);
            }
        }
        assert_eq!(timed, [1, 65, 129]);
        timings.publish(&mut l);
        let s = timings.snapshot(|a| ["a", "b"][a]);
        assert_eq!(
            (s[0].app, s[0].handler, s[0].calls),
            ("a", "PACKET_IN", 130)
        );
        assert_eq!(s[0].timed_calls, 1 + 64 + 64);
        assert_eq!(s[0].buckets.iter().map(|b| b.1).sum::<u64>(), 129);
        assert_eq!((s[1].app, s[1].calls, s[1].timed_calls), ("b", 0, 0));
        // Published counts are not added twice.
        timings.publish(&mut l);
        assert_eq!(timings.snapshot(|a| ["a", "b"][a])[0].calls, 130);
    }

    #[test]
    fn durations_fall_in_the_first_bucket_at_or_above_them() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1_000), 0);
        assert_eq!(bucket(1_001), 1);
        assert_eq!(bucket(50_000), 3);
        assert_eq!(bucket(5_000_000_000), BUCKETS.len());
        let timings = Timings::new();
        timings.id(0, "timer");
        timings.add_one(0, 50_000);
        let s = &timings.snapshot(|_| "a")[0];
        let counts: Vec<u64> = s.buckets.iter().map(|b| b.1).collect();
        assert_eq!(counts, [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!((s.buckets[0].0, s.buckets[3].0), (1e-6, 64e-6));
        assert!((s.time_secs - 50e-6).abs() < 1e-12);
    }
}
