//! The info lines about hosts: learned, moved, given an address, forgotten. One line
//! each, readable
//! (`host learned: 02:00:00:00:00:01 10.0.0.1 at 00:00:00:00:00:00:00:01:3`), and at
//! most [`LINES_PER_SECOND`] a second: a network where hosts come by the thousand a
//! second (a benchmark spraying source MACs, a scan) would otherwise flood
//! the log and slow the workers that learn them. Beyond the budget, changes are counted,
//! and once the second is over one line says how many went unlogged (written with the
//! next host change or the next expiry check, at most 10 s later); the Devices service
//! holds every host all the same.
//!
//! Nothing is formatted unless a line is written: with info off for this module the
//! cost is one check of the level per batch, and beyond the budget, two atomic adds.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use super::table::{AttachmentPoint, HostEvent, HostKey};

/// Host lines written per second at most.
pub const LINES_PER_SECOND: u32 = 20;

/// Why hosts were forgotten, for the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Seen in a PACKET_IN (no host is forgotten then).
    Seen,
    /// Silent for `host_timeout`.
    Silent,
    /// Their port went down or was deleted.
    PortDown,
    /// Their port turned out to be an inter-switch link.
    LinkPort,
    /// Their switch left.
    SwitchLeft,
}

impl Why {
    fn text(self) -> &'static str {
        match self {
            Why::Seen => "seen",
            Why::Silent => "silent for host_timeout",
            Why::PortDown => "port down",
            Why::LinkPort => "the port is an inter-switch link",
            Why::SwitchLeft => "switch left",
        }
    }
}

/// The per-second budget of host lines, shared by every worker.
#[derive(Debug)]
pub struct HostLog {
    /// Seconds are counted from here.
    epoch: Instant,
    /// The second the budget is for.
    second: AtomicU64,
    /// Lines taken in that second (may run past the budget: only the count matters).
    used: AtomicU32,
    /// Changes not logged since the last summary.
    skipped: AtomicU64,
}

impl HostLog {
    pub fn new(epoch: Instant) -> HostLog {
        HostLog {
            epoch,
            second: AtomicU64::new(0),
            used: AtomicU32::new(0),
            skipped: AtomicU64::new(0),
        }
    }

    /// Logs `events` (hosts `why` changed; `new_ip` is the address a newly learned host
    /// was seen with), within the budget.
    pub fn log(&self, events: &[HostEvent], now: Instant, why: Why, new_ip: Option<IpAddr>) {
        if events.is_empty() || !tracing::enabled!(tracing::Level::INFO) {
            return;
        }
        for e in events {
            if self.take(now) {
                line(e, why, new_ip);
            }
        }
    }

    /// Starts a new second when `now` is in one, first saying how many changes the
    /// last went without. Called by [`HostLog::log`] and by the expiry timer, so that
    /// a burst's summary is not held back until the next host changes.
    pub fn roll(&self, now: Instant) {
        let second = now.saturating_duration_since(self.epoch).as_secs();
        let was = self.second.load(Relaxed);
        if second > was
            && self
                .second
                .compare_exchange(was, second, Relaxed, Relaxed)
                .is_ok()
        {
            self.used.store(0, Relaxed);
            let skipped = self.skipped.swap(0, Relaxed);
            if skipped > 0 {
                tracing::info!(
                    "{skipped} more host changes not logged (at most {LINES_PER_SECOND} host lines a second)"
                );
            }
        }
    }

    /// Whether one more line fits this second's budget; counted as skipped if not.
    fn take(&self, now: Instant) -> bool {
        self.roll(now);
        if self.used.fetch_add(1, Relaxed) < LINES_PER_SECOND {
            true
        } else {
            self.skipped.fetch_add(1, Relaxed);
            false
        }
    }
}

/// `02:00:00:00:00:01` or `02:00:00:00:00:01 vlan 10`.
struct Mac<'a>(&'a HostKey);

impl std::fmt::Display for Mac<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.mac)?;
        match self.0.vlan {
            Some(v) => write!(f, " vlan {v}"),
            None => Ok(()),
        }
    }
}

/// `00:00:00:00:00:00:00:01:3`, as links show their ends.
struct At(AttachmentPoint);

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.0.dpid, self.0.port)
    }
}

/// ` 10.0.0.1` or ` 10.0.0.1 fe80::1`; nothing for no address.
struct Ips<'a>(&'a [IpAddr]);

impl std::fmt::Display for Ips<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|ip| write!(f, " {ip}"))
    }
}

fn line(e: &HostEvent, why: Why, new_ip: Option<IpAddr>) {
    match e {
        HostEvent::Added { key, ap } => {
            let ip = new_ip.map(|ip| [ip]);
            let ips = Ips(ip.as_ref().map_or(&[], |a| &a[..]));
            tracing::info!("host learned: {}{ips} at {}", Mac(key), At(*ap));
        }
        HostEvent::Moved { key, from, to } => {
            tracing::info!("host moved: {} from {} to {}", Mac(key), At(*from), At(*to));
        }
        HostEvent::IpAdded { key, ip, from } => match from {
            Some(old) => tracing::info!(
                "host address: {} now has {ip}, which {} had",
                Mac(key),
                Mac(old)
            ),
            None => tracing::info!("host address: {} has {ip}", Mac(key)),
        },
        HostEvent::Removed { host } => {
            let key = HostKey {
                mac: host.mac(),
                vlan: host.vlan(),
            };
            tracing::info!(
                "host forgotten: {}{} at {} ({})",
                Mac(&key),
                Ips(host.ips()),
                At(host.attachment_point()),
                why.text()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use openflow::MacAddr;
    use tracing::Level;

    use super::*;
    use crate::devices::table::HostTable;

    fn key(n: u8) -> HostKey {
        HostKey {
            mac: MacAddr([2, 0, 0, 0, 0, n]),
            vlan: None,
        }
    }

    fn at(dpid: u64, port: u32) -> AttachmentPoint {
        AttachmentPoint::new(dpid, port)
    }

    #[test]
    fn each_change_is_one_readable_line() {
        let t0 = Instant::now();
        let log = HostLog::new(t0);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let mut table = HostTable::new(Default::default());
        table.observe(key(1).mac, None, at(1, 3), Some(ip), t0);
        let gone = table.expire(t0 + Duration::from_secs(10), Duration::from_secs(1));
        let out = crate::logged(Level::INFO, || {
            log.log(
                &[HostEvent::Added {
                    key: key(1),
                    ap: at(1, 3),
                }],
                t0,
                Why::Seen,
                Some(ip),
            );
            let moved = HostEvent::Moved {
                key: HostKey {
                    vlan: Some(10),
                    ..key(1)
                },
                from: at(1, 3),
                to: at(2, 1),
            };
            log.log(&[moved], t0, Why::Seen, None);
            let taken = HostEvent::IpAdded {
                key: key(1),
                ip,
                from: Some(key(2)),
            };
            log.log(&[taken], t0, Why::Seen, None);
            log.log(&gone, t0, Why::Silent, None);
        });
        let lines: Vec<&str> = out
            .lines()
            .map(|l| l.trim_start_matches(" INFO "))
            .collect();
        assert_eq!(
            lines,
            [
                "host learned: 02:00:00:00:00:01 10.0.0.1 at 00:00:00:00:00:00:00:01:3",
                "host moved: 02:00:00:00:00:01 vlan 10 from 00:00:00:00:00:00:00:01:3 to 00:00:00:00:00:00:00:02:1",
                "host address: 02:00:00:00:00:01 now has 10.0.0.1, which 02:00:00:00:00:02 had",
                "host forgotten: 02:00:00:00:00:01 10.0.0.1 at 00:00:00:00:00:00:00:01:3 (silent for host_timeout)",
            ],
            "{out}"
        );
    }

    #[test]
    fn beyond_the_budget_changes_are_counted_and_summed_up_once_a_second() {
        let t0 = Instant::now();
        let log = HostLog::new(t0);
        let burst: Vec<HostEvent> = (0..250u32)
            .map(|n| HostEvent::Added {
                key: key(n as u8),
                ap: at(1, n),
            })
            .collect();
        let out = crate::logged(Level::INFO, || {
            log.log(&burst, t0, Why::Seen, None);
            // Still the same second: nothing more.
            log.log(
                &burst[..5],
                t0 + Duration::from_millis(900),
                Why::Seen,
                None,
            );
            // The next second: the summary first, then lines again.
            log.log(
                &burst[..1],
                t0 + Duration::from_millis(1100),
                Why::Seen,
                None,
            );
            // A quiet second later, the timer's roll says nothing (nothing skipped).
            log.roll(t0 + Duration::from_secs(3));
        });
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), LINES_PER_SECOND as usize + 2, "{out}");
        assert!(
            lines[..20].iter().all(|l| l.contains("host learned")),
            "{out}"
        );
        assert!(
            lines[20]
                .ends_with("235 more host changes not logged (at most 20 host lines a second)"),
            "{out}"
        );
        assert!(lines[21].contains("host learned"), "{out}");
    }

    #[test]
    fn with_info_off_nothing_is_taken_from_the_budget() {
        let t0 = Instant::now();
        let log = HostLog::new(t0);
        let burst = [HostEvent::Added {
            key: key(1),
            ap: at(1, 1),
        }];
        let out = crate::logged(Level::WARN, || {
            for _ in 0..100 {
                log.log(&burst, t0, Why::Seen, None);
            }
        });
        assert_eq!(out, "");
        assert_eq!(log.used.load(Relaxed), 0);
        assert_eq!(log.skipped.load(Relaxed), 0);
    }
}
