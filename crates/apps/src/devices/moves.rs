//! When a host has moved: the rule that tells a host plugged in somewhere else from a
//! copy of its frame that crossed a cable discovery has not found yet.
//!
//! **What an echo looks like.** Until discovery has seen a loop's cables (switches just
//! connected, a cable just plugged in), their ports look like edge ports, and a flooded
//! broadcast reaches other switches on them, from the same MAC, milliseconds after the
//! original was seen at the host's own port. Taken for moves (a ring at start-up showed
//! about fifty in 20 ms), they place the host inside the network, so its traffic goes
//! there, and then it is forgotten when the link under it is discovered.
//!
//! **What a move looks like.** The host leaves its old port (its frames stop there: a
//! cable unplugged, a VM migrating) and speaks on a new port, where no link is and none
//! will be found. A move whose old port went down or was deleted is not a move at all
//! for the table: the host went with its port and the new sighting adds it.
//!
//! **The rule.** A known host seen on another port (not a known link port: those teach
//! nothing) has moved there only if
//!
//! 1. it has been quiet at its old place for `quiet` or more (an echo follows the
//!    original by milliseconds), or
//! 2. the new port is a confirmed edge port: up for `quiet` or more, no switch joined in
//!    that time, and still no link on it. The topology app probes a switch's ports as
//!    soon as it joins and a port as soon as it comes up, so a cable there would have
//!    been found within a round trip; a switch joining anywhere resets the clock, since
//!    its cables reach ports of switches that were there before.
//!
//! Otherwise the sighting is an echo: ignored and counted; the host stays where it was.
//! `quiet` 0 makes every sighting elsewhere a move (the rule off).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use super::table::{AttachmentPoint, Host};

/// Per switch: when its ports came up after it joined (few: ports flap rarely).
#[derive(Debug, Default)]
pub struct PortAges {
    /// (port, when it was added or came up), the latest per port.
    up_since: Vec<(u32, Instant)>,
}

impl PortAges {
    /// A port was added or came up at `now` (a port going down needs nothing: the hosts
    /// on it are removed with it).
    pub fn came_up(&mut self, port: u32, now: Instant) {
        match self.up_since.iter_mut().find(|(p, _)| *p == port) {
            Some(e) => e.1 = now,
            None => self.up_since.push((port, now)),
        }
    }

    fn up_since(&self, port: u32) -> Option<Instant> {
        self.up_since
            .iter()
            .find(|(p, _)| *p == port)
            .map(|&(_, t)| t)
    }
}

/// The rule (see the module doc), shared by every switch's handler.
#[derive(Debug)]
pub struct MoveRule {
    /// How long a host must be quiet, or a port up, for a sighting to be a move.
    quiet: Duration,
    /// Time zero of `last_join`.
    epoch: Instant,
    /// When a switch last joined: nanoseconds since `epoch`, plus one (0: none yet). An
    /// atomic, so the PACKET_IN path reads it without a lock.
    last_join: AtomicU64,
    /// Sightings refused as echoes.
    echoes: AtomicU64,
}

impl MoveRule {
    pub fn new(quiet: Duration) -> MoveRule {
        MoveRule {
            quiet,
            epoch: Instant::now(),
            last_join: AtomicU64::new(0),
            echoes: AtomicU64::new(0),
        }
    }

    /// A switch joined at `now`.
    pub fn joined(&self, now: Instant) {
        let nanos = now.saturating_duration_since(self.epoch).as_nanos();
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX - 1);
        self.last_join.fetch_max(nanos + 1, Relaxed);
    }

    fn last_join(&self) -> Option<Instant> {
        match self.last_join.load(Relaxed) {
            0 => None,
            n => Some(self.epoch + Duration::from_nanos(n - 1)),
        }
    }

    /// Whether `port` (of the switch `ages` belong to; not a known link port) is a
    /// confirmed edge port at `now`.
    pub fn is_edge(&self, ages: &PortAges, port: u32, now: Instant) -> bool {
        let since = match (self.last_join(), ages.up_since(port)) {
            (Some(j), Some(u)) => j.max(u),
            (j, u) => match j.or(u) {
                Some(t) => t,
                None => return true, // no switch ever joined: nothing to wait for
            },
        };
        now.saturating_duration_since(since) >= self.quiet
    }

    /// Whether a sighting of `host` (`None`: unknown) at `to`, on the switch `ages`
    /// belong to, may be recorded: a new host, the same place, or a move by the rule.
    /// A refusal is counted.
    pub fn allows(
        &self,
        ages: &PortAges,
        host: Option<&Host>,
        to: AttachmentPoint,
        now: Instant,
    ) -> bool {
        let Some(h) = host.filter(|h| h.attachment_point() != to) else {
            return true;
        };
        let ok = now.saturating_duration_since(h.last_seen()) >= self.quiet
            || self.is_edge(ages, to.port, now);
        if !ok {
            self.echoes.fetch_add(1, Relaxed);
        }
        ok
    }

    /// Sightings refused as echoes so far.
    pub fn echoes(&self) -> u64 {
        self.echoes.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::table::HostTable;
    use openflow::MacAddr;

    const Q: Duration = Duration::from_secs(1);

    fn ap(dpid: u64, port: u32) -> AttachmentPoint {
        AttachmentPoint::new(dpid, port)
    }

    #[test]
    fn an_echo_within_milliseconds_on_a_young_port_is_no_move() {
        let t = Instant::now();
        let rule = MoveRule::new(Q);
        rule.joined(t);
        let mut table = HostTable::default();
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        table.observe(mac, None, ap(1, 3), None, t);
        let h = table.get(mac, None);
        let ages = PortAges::default();
        let echo = t + Duration::from_millis(2);
        assert!(!rule.allows(&ages, h, ap(2, 1), echo));
        assert!(rule.allows(&ages, h, ap(1, 3), echo), "the same place");
        assert!(rule.allows(&ages, None, ap(2, 1), echo), "a new host");
        assert_eq!(rule.echoes(), 1);
        // Quiet at its old place for `Q`: a move, wherever it shows up.
        assert!(rule.allows(&ages, h, ap(2, 1), t + Q));
        // On a port up for `Q` since the last join: a move at once.
        let later = t + Q * 3;
        table.observe(mac, None, ap(1, 3), None, later);
        let h = table.get(mac, None);
        assert!(rule.allows(&ages, h, ap(2, 4), later));
        // Unless that port just came up, or a switch just joined.
        let mut ages = PortAges::default();
        ages.came_up(4, later - Q / 2);
        assert!(!rule.allows(&ages, h, ap(2, 4), later));
        rule.joined(later - Q / 2);
        assert!(!rule.allows(&PortAges::default(), h, ap(2, 4), later));
    }

    #[test]
    fn quiet_zero_makes_every_sighting_elsewhere_a_move() {
        let t = Instant::now();
        let rule = MoveRule::new(Duration::ZERO);
        rule.joined(t);
        let mut table = HostTable::default();
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        table.observe(mac, None, ap(1, 3), None, t);
        assert!(rule.allows(&PortAges::default(), table.get(mac, None), ap(2, 1), t));
    }
}
