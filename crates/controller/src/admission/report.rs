//! The periodic counters line admission logs at info level (skipped while nothing is
//! connected or moving).

use std::time::Instant;

use tracing::info;

use super::Admission;

impl Admission {
    /// The periodic info-level counters line.
    pub(super) fn report(&mut self, now: Instant) {
        let s = self.published.snapshot();
        let t = &s.total;
        let secs = (now - self.last_report).as_secs_f64();
        let rate = if secs > 0.0 {
            t.packet_ins.saturating_sub(self.last_packet_ins) as f64 / secs
        } else {
            0.0
        };
        self.last_packet_ins = t.packet_ins;
        self.last_report = now;
        self.next_report = now + self.cfg.counters_interval;
        self.strikes.prune(now);
        let msgs_in: u64 = t.msgs_in.values().sum();
        let msgs_out: u64 = t.msgs_out.values().sum();
        let activity = activity(t);
        let idle = is_idle(t, self.last_activity);
        self.last_activity = activity;
        if idle {
            return;
        }
        info!(
            switches = t.connected_switches,
            pending = t.pending_handshakes,
            waiting = t.waiting_handshakes,
            packet_ins_per_sec = format_args!("{rate:.1}"),
            msgs_in,
            msgs_out,
            drops = t.drops,
            disconnects = ?t.disconnects,
            handshake_failures = ?t.handshake_failures,
            refused = ?t.refused,
            "counters"
        );
    }
}

/// What moved since the start: connections accepted and refused, handshakes failed,
/// messages, drops.
fn activity(t: &crate::counters::TotalSnapshot) -> u64 {
    let sum = |m: &std::collections::BTreeMap<String, u64>| m.values().sum::<u64>();
    t.accepted
        + sum(&t.refused)
        + sum(&t.handshake_failures)
        + sum(&t.msgs_in)
        + sum(&t.msgs_out)
        + t.drops
}

/// Whether the counters line has nothing to say: no switch connected, none
/// handshaking, and nothing moved since the previous line (whose activity was `last`).
fn is_idle(t: &crate::counters::TotalSnapshot, last: u64) -> bool {
    t.connected_switches == 0
        && t.pending_handshakes == 0
        && t.waiting_handshakes == 0
        && activity(t) == last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::TotalSnapshot;

    #[test]
    fn the_counters_line_is_skipped_only_while_nothing_is_connected_or_moving() {
        let idle = TotalSnapshot::default();
        assert!(is_idle(&idle, 0));
        let one_switch = TotalSnapshot {
            connected_switches: 1,
            ..TotalSnapshot::default()
        };
        assert!(!is_idle(&one_switch, 0));
        let handshaking = TotalSnapshot {
            pending_handshakes: 1,
            ..TotalSnapshot::default()
        };
        assert!(!is_idle(&handshaking, 0));
        // The last switch left since the previous line: said once more, then quiet.
        let mut left = TotalSnapshot {
            accepted: 1,
            ..TotalSnapshot::default()
        };
        left.msgs_in.insert("1.3 PACKET_IN".into(), 5);
        left.disconnects.insert("closed_by_peer".into(), 1);
        assert!(!is_idle(&left, 0));
        assert!(is_idle(&left, activity(&left)));
        // Refused connections with no switch: reported.
        let mut refused = left.clone();
        refused.refused.insert("max_pending".into(), 3);
        assert!(!is_idle(&refused, activity(&left)));
    }
}
