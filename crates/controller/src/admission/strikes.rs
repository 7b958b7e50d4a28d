//! Failed handshakes per source address: the score that takes a flood's waiting places.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// An address whose failed handshakes (decayed, see [`Strikes`]) reach this score gets
/// no waiting place: past its handshake slots it is refused at accept.
pub(super) const FAILING_SCORE: f64 = 64.0;
/// Failed handshakes count half as much after this long.
pub(super) const STRIKE_HALF_LIFE: Duration = Duration::from_secs(10);
/// Handshakes a failing address may start per second (and at once, after a lull): a
/// flood of connections that open like switches (TLS ClientHellos, whose answer costs a
/// signature each) gets no more of the workers' core than this.
pub(super) const FAILING_STARTS_PER_SEC: f64 = 32.0;

/// Failed handshakes per source address (and, once it is failing, connections refused
/// for it), each weighing less with time (halved every [`STRIKE_HALF_LIFE`]); a
/// completed handshake takes one away.
///
/// Waiting is for switches that will complete their handshake once a slot frees: a lab
/// of a thousand switches on one host. An address whose handshakes keep failing (a
/// flood of silent or garbage connections, or connections already reset by the time
/// their turn came) would only fill its queue with more of the same, each costing an
/// accept, a registration, a HELLO, a read and a close on the core the workers need;
/// once its score reaches [`FAILING_SCORE`] it waits no more, and what its slots cannot
/// take is refused in batches at accept (then left in the kernel's backlog), which
/// costs a fraction of that.
#[derive(Debug, Default)]
pub(super) struct Strikes {
    /// Each address's score and when it was last counted.
    by_ip: HashMap<IpAddr, (f64, Instant)>,
    /// Handshake starts left to each failing address, and when that was counted.
    starts: HashMap<IpAddr, (f64, Instant)>,
}

impl Strikes {
    fn decayed(score: f64, since: Instant, now: Instant) -> f64 {
        let halvings =
            now.saturating_duration_since(since).as_secs_f64() / STRIKE_HALF_LIFE.as_secs_f64();
        score * 0.5f64.powf(halvings)
    }

    /// The address's score now.
    pub(super) fn score(&self, ip: IpAddr, now: Instant) -> f64 {
        self.by_ip
            .get(&ip)
            .map_or(0.0, |&(s, t)| Strikes::decayed(s, t, now))
    }

    /// One more failed handshake from `ip`.
    pub(super) fn fail(&mut self, ip: IpAddr, now: Instant) {
        let e = self.by_ip.entry(ip).or_insert((0.0, now));
        *e = (Strikes::decayed(e.0, e.1, now) + 1.0, now);
    }

    /// A handshake from `ip` completed.
    pub(super) fn succeed(&mut self, ip: IpAddr, now: Instant) {
        if let Some(e) = self.by_ip.get_mut(&ip) {
            *e = ((Strikes::decayed(e.0, e.1, now) - 1.0).max(0.0), now);
        }
    }

    /// Whether `ip` has lost its waiting places.
    pub(super) fn failing(&self, ip: IpAddr, now: Instant) -> bool {
        self.score(ip, now) >= FAILING_SCORE
    }

    /// Whether `ip` may start a handshake now: always, unless it is failing, then at
    /// most [`FAILING_STARTS_PER_SEC`] a second (a token bucket of as many).
    pub(super) fn take_start(&mut self, ip: IpAddr, now: Instant) -> bool {
        if !self.failing(ip, now) {
            return true;
        }
        let e = self
            .starts
            .entry(ip)
            .or_insert((FAILING_STARTS_PER_SEC, now));
        let refill = now.saturating_duration_since(e.1).as_secs_f64() * FAILING_STARTS_PER_SEC;
        let tokens = (e.0 + refill).min(FAILING_STARTS_PER_SEC);
        if tokens >= 1.0 {
            *e = (tokens - 1.0, now);
            true
        } else {
            *e = (tokens, now);
            false
        }
    }

    /// Forgets addresses whose score has decayed below one failure.
    pub(super) fn prune(&mut self, now: Instant) {
        self.by_ip
            .retain(|_, &mut (s, t)| Strikes::decayed(s, t, now) >= 1.0);
        let by_ip = &self.by_ip;
        self.starts.retain(|ip, _| by_ip.contains_key(ip));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_add_up_decay_and_are_paid_back_by_handshakes() {
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let t0 = Instant::now();
        let mut s = Strikes::default();
        for _ in 0..63 {
            s.fail(ip, t0);
        }
        assert!(
            !s.failing(ip, t0),
            "63 failures are not yet a failing address"
        );
        s.fail(ip, t0);
        assert!(s.failing(ip, t0));
        assert!(!s.failing(other, t0), "one address's failures are its own");
        // Halved after a half-life: no longer failing, still remembered.
        let later = t0 + STRIKE_HALF_LIFE;
        assert!((s.score(ip, later) - 32.0).abs() < 1e-6);
        assert!(!s.failing(ip, later));
        // A completed handshake takes one away; never below zero.
        s.succeed(ip, later);
        assert!((s.score(ip, later) - 31.0).abs() < 1e-6);
        s.succeed(other, later);
        assert_eq!(s.score(other, later), 0.0);
        // Forgotten once below one failure's weight.
        s.prune(later + STRIKE_HALF_LIFE * 4);
        assert_eq!(s.by_ip.len(), 1);
        s.prune(later + STRIKE_HALF_LIFE * 6);
        assert!(s.by_ip.is_empty());
    }

    #[test]
    fn a_failing_address_starts_a_bounded_number_of_handshakes_a_second() {
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let t0 = Instant::now();
        let mut s = Strikes::default();
        assert!(
            (0..1000).all(|_| s.take_start(ip, t0)),
            "not failing: no bound"
        );
        for _ in 0..100 {
            s.fail(ip, t0);
        }
        let n = FAILING_STARTS_PER_SEC as usize;
        let started = (0..1000).filter(|_| s.take_start(ip, t0)).count();
        assert_eq!(started, n, "a burst of one second's worth");
        let later = t0 + Duration::from_millis(500);
        let started = (0..1000).filter(|_| s.take_start(ip, later)).count();
        assert_eq!(started, n / 2, "then the rate");
        // Forgotten with its strikes.
        s.prune(t0 + STRIKE_HALF_LIFE * 8);
        assert!(s.starts.is_empty() && s.by_ip.is_empty());
    }
}
