//! Timers, with no thread and no clock of their own: the dispatcher keeps when each timer
//! is next due, the worker (per-switch timers) or the controller's timer thread (global
//! timers) asks for the earliest deadline, sleeps in its poll until then, and calls the
//! dispatcher's `tick` with the time. Nothing wakes up unless a timer is due.
//!
//! - **Per switch** ([`crate::app::Builder::every`]): each switch has its own schedule,
//!   run on the worker that serves the switch, with the app's state for it. The first
//!   run comes after a random delay in `[0, jitter]`, each next one `period ± jitter`
//!   after the previous run (drawn uniformly), so that a thousand switches connected at
//!   once do not send their LLDP in the same millisecond. The schedule starts when the
//!   switch is added and ends with it.
//! - **Global** ([`crate::app::Builder::every_global`]): one schedule per timer for the
//!   whole controller, run on the controller's `pharos-timers` thread, every `period`
//!   from the controller's start (for aging: links, hosts). Global timers never run on a
//!   worker, so a slow one delays no switch; what they share with handlers they share
//!   through the app's own synchronization, as handlers on two workers already do.
//!
//! Periods below [`MIN_PERIOD`] are raised to it, and a jitter is capped at the period,
//! so a timer cannot spin.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

/// The shortest period a timer may have.
pub const MIN_PERIOD: Duration = Duration::from_millis(1);

/// A timer's period and jitter, cleaned up (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// How long between runs, on average.
    pub period: Duration,
    /// How far a run may stray from `period` either way (at most `period`).
    pub jitter: Duration,
}

impl Period {
    /// `period` (at least [`MIN_PERIOD`]) with `jitter` capped at it.
    pub fn new(period: Duration, jitter: Duration) -> Period {
        let period = period.max(MIN_PERIOD);
        Period {
            period,
            jitter: jitter.min(period),
        }
    }

    /// The delay before the first run: uniform in `[0, jitter]`.
    pub fn first(&self, rng: &mut Rng) -> Duration {
        rng.up_to(self.jitter)
    }

    /// The delay before the next run: uniform in `[period - jitter, period + jitter]`,
    /// at least [`MIN_PERIOD`].
    pub fn next(&self, rng: &mut Rng) -> Duration {
        (self.period - self.jitter + rng.up_to(self.jitter * 2)).max(MIN_PERIOD)
    }
}

/// A small random number generator for jitter (SplitMix64): not for secrets, only to
/// spread timers apart. Seeded from the process's random hash keys, so two controllers
/// started together do not jitter alike.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from the process's randomness and `salt` (a dpid, say).
    pub fn new(salt: u64) -> Rng {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(salt);
        Rng(h.finish())
    }

    /// A generator with a fixed seed (tests).
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A duration uniform in `[0, max]` (nanosecond grain).
    pub fn up_to(&mut self, max: Duration) -> Duration {
        let n = max.as_nanos().min(u64::MAX as u128 - 1) as u64;
        if n == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.next_u64() % (n + 1))
    }
}

/// One switch's timer schedule: when each of the plan's per-switch timers is next
/// due (by timer index), and the earliest of them.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    /// By timer index; `None` for a timer that no longer runs (its app quarantined).
    due: Vec<Option<Instant>>,
    /// The earliest of `due`, kept so the worker's per-read deadline check is one load.
    next: Option<Instant>,
}

impl Schedule {
    /// Schedules every timer's first run from `now`.
    pub fn start(periods: &[Period], now: Instant, rng: &mut Rng) -> Schedule {
        let due = periods.iter().map(|p| Some(now + p.first(rng))).collect();
        let mut s = Schedule { due, next: None };
        s.recompute();
        s
    }

    /// A schedule from when each timer is due (`None`: it does not run), by timer
    /// index: a switch moving to a new plan keeps its running timers' times.
    pub fn from_due(due: Vec<Option<Instant>>) -> Schedule {
        let mut s = Schedule { due, next: None };
        s.recompute();
        s
    }

    /// When timer `i` is next due (`None`: it does not run, or no such timer).
    pub fn due_of(&self, i: usize) -> Option<Instant> {
        self.due.get(i).copied().flatten()
    }

    /// When the earliest timer is due.
    pub fn next(&self) -> Option<Instant> {
        self.next
    }

    /// The index of a timer due at or before `now`, if any (call again after
    /// [`Schedule::ran`] or [`Schedule::stop`] for the next one).
    pub fn due(&self, now: Instant) -> Option<usize> {
        if self.next? > now {
            return None;
        }
        self.due.iter().position(|d| d.is_some_and(|d| d <= now))
    }

    /// Timer `i` ran at `now`: schedules its next run.
    pub fn ran(&mut self, i: usize, period: &Period, now: Instant, rng: &mut Rng) {
        self.due[i] = Some(now + period.next(rng));
        self.recompute();
    }

    /// Timer `i` runs no more.
    pub fn stop(&mut self, i: usize) {
        self.due[i] = None;
        self.recompute();
    }

    fn recompute(&mut self) {
        self.next = self.due.iter().flatten().min().copied();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_cleaned_up() {
        let p = Period::new(Duration::ZERO, Duration::from_secs(1));
        assert_eq!(p.period, MIN_PERIOD);
        assert_eq!(p.jitter, MIN_PERIOD);
        let p = Period::new(Duration::from_secs(1), Duration::from_secs(5));
        assert_eq!(p.jitter, Duration::from_secs(1));
    }

    #[test]
    fn jitter_stays_in_bounds_and_spreads() {
        let p = Period::new(Duration::from_millis(100), Duration::from_millis(20));
        let mut rng = Rng::seeded(7);
        let (mut lo, mut hi) = (Duration::MAX, Duration::ZERO);
        for _ in 0..10_000 {
            let f = p.first(&mut rng);
            assert!(f <= Duration::from_millis(20));
            let n = p.next(&mut rng);
            assert!(n >= Duration::from_millis(80) && n <= Duration::from_millis(120));
            lo = lo.min(n);
            hi = hi.max(n);
        }
        // Spread over the whole range, not stuck at one end.
        assert!(lo < Duration::from_millis(82) && hi > Duration::from_millis(118));
        // No jitter: exactly the period, first run at once.
        let p = Period::new(Duration::from_millis(100), Duration::ZERO);
        assert_eq!(p.first(&mut rng), Duration::ZERO);
        assert_eq!(p.next(&mut rng), Duration::from_millis(100));
    }

    #[test]
    fn schedule_runs_due_timers_in_turn() {
        let periods = [
            Period::new(Duration::from_millis(10), Duration::ZERO),
            Period::new(Duration::from_millis(25), Duration::ZERO),
        ];
        let t0 = Instant::now();
        let mut rng = Rng::seeded(1);
        let mut s = Schedule::start(&periods, t0, &mut rng);
        assert_eq!(s.next(), Some(t0));
        let mut runs = Vec::new();
        let mut now = t0;
        while now <= t0 + Duration::from_millis(50) {
            while let Some(i) = s.due(now) {
                runs.push((i, (now - t0).as_millis()));
                s.ran(i, &periods[i], now, &mut rng);
            }
            now += Duration::from_millis(5);
        }
        let zero: Vec<u128> = runs.iter().filter(|r| r.0 == 0).map(|r| r.1).collect();
        let one: Vec<u128> = runs.iter().filter(|r| r.0 == 1).map(|r| r.1).collect();
        assert_eq!(zero, [0, 10, 20, 30, 40, 50]);
        assert_eq!(one, [0, 25, 50]);
        s.stop(0);
        s.stop(1);
        assert_eq!(s.next(), None);
        assert_eq!(s.due(now + Duration::from_secs(9)), None);
    }
}
