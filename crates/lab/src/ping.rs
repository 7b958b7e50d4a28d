//! Pings between hosts: one pair (`ping`), or every ordered pair (`pingall`, with
//! Mininet's matrix), and reading ping's own output.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::{Lab, LabError};

/// The result of pinging one host from another.
#[derive(Debug, Clone, Serialize)]
pub struct PingResult {
    /// The host pinging (`h1`).
    pub from: String,
    /// The host pinged.
    pub to: String,
    /// Echo requests sent.
    pub transmitted: u32,
    /// Echo replies received.
    pub received: u32,
    /// Average round trip, when something came back.
    pub rtt_avg_ms: Option<f64>,
    /// ping's own output.
    pub output: String,
}

impl PingResult {
    pub fn ok(&self) -> bool {
        self.transmitted > 0 && self.received == self.transmitted
    }
}

/// Every ordered pair of hosts, one ping each.
#[derive(Debug, Clone, Serialize)]
pub struct PingAll {
    /// For each host, in order, the hosts it reached and did not reach.
    pub rows: Vec<PingRow>,
    /// Pings sent, one per ordered pair.
    pub sent: usize,
    /// Pings answered.
    pub received: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PingRow {
    /// The host pinging.
    pub from: String,
    /// (destination, reached)
    pub to: Vec<(String, bool)>,
}

impl PingAll {
    /// Percentage of pings lost, rounded down as Mininet does.
    pub fn dropped_pct(&self) -> usize {
        ((self.sent - self.received) * 100)
            .checked_div(self.sent)
            .unwrap_or(0)
    }

    pub fn all_ok(&self) -> bool {
        self.received == self.sent
    }
}

impl fmt::Display for PingAll {
    /// Mininet's matrix: `h1 -> h2 X h4`, then `*** Results: 0% dropped (12/12 received)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "*** Ping: testing ping reachability")?;
        for row in &self.rows {
            write!(f, "{} ->", row.from)?;
            for (to, ok) in &row.to {
                write!(f, " {}", if *ok { to.as_str() } else { "X" })?;
            }
            writeln!(f)?;
        }
        write!(
            f,
            "*** Results: {}% dropped ({}/{} received)",
            self.dropped_pct(),
            self.received,
            self.sent
        )
    }
}

impl Lab {
    /// `count` pings from host `a` to host `b` (0.2 s apart), each waiting up to `timeout`.
    pub fn ping(
        &self,
        a: &str,
        b: &str,
        count: u32,
        timeout: Duration,
    ) -> Result<PingResult, LabError> {
        let from = self.host_of(a)?;
        let to = self.host_of(b)?;
        let count = count.max(1);
        let wait = timeout.as_secs_f64().max(0.001);
        let c = self
            .ip()
            .args(["netns", "exec"])
            .arg(self.names.netns(from.num))
            .arg(&self.tools.ping)
            .args([
                "-n".to_string(),
                "-q".into(),
                "-c".into(),
                count.to_string(),
                "-i".into(),
                "0.2".into(),
                "-W".into(),
                format!("{wait:.3}"),
                to.ip.to_string(),
            ])
            .timeout(
                timeout + Duration::from_millis(200 * u64::from(count)) + Duration::from_secs(5),
            )
            .label(format!("ping {a} -> {b}"));
        let out = c.output(self.verbose)?;
        let (transmitted, received) = match parse_ping_counts(&out.stdout) {
            Some(counts) => counts,
            // ping could not send at all ("connect: Network is unreachable" when the host's
            // link is down): nothing came back, which is a result, not an error.
            None if ping_refused(&out.stderr) => (count, 0),
            None => return Err(c.failed(&out)),
        };
        let output = if out.stdout.trim().is_empty() {
            out.stderr
        } else {
            out.stdout
        };
        Ok(PingResult {
            from: from.name(),
            to: to.name(),
            transmitted,
            received,
            rtt_avg_ms: parse_ping_avg(&output),
            output,
        })
    }

    /// One ping for every ordered pair of hosts, each waiting up to `timeout`; hosts ping
    /// in parallel (each its destinations in order), the matrix comes back in host order.
    pub fn pingall(&self, timeout: Duration) -> Result<PingAll, LabError> {
        let hosts: Vec<String> = self.topo.hosts.iter().map(|h| h.name()).collect();
        let threads = hosts.len().clamp(1, 8);
        let chunk = hosts.len().div_ceil(threads).max(1);
        let rows: Vec<Result<PingRow, LabError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = hosts
                .chunks(chunk)
                .map(|part| {
                    let hosts = &hosts;
                    scope.spawn(move || {
                        part.iter()
                            .map(|from| {
                                let mut to = Vec::new();
                                for dst in hosts.iter().filter(|d| *d != from) {
                                    let r = self.ping(from, dst, 1, timeout)?;
                                    to.push((dst.clone(), r.ok()));
                                }
                                Ok(PingRow {
                                    from: from.clone(),
                                    to,
                                })
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| {
                    h.join().unwrap_or_else(|_| {
                        vec![Err(LabError::Other("ping thread panicked".into()))]
                    })
                })
                .collect()
        });
        let rows = rows.into_iter().collect::<Result<Vec<_>, _>>()?;
        let sent = rows.iter().map(|r| r.to.len()).sum();
        let received = rows
            .iter()
            .map(|r| r.to.iter().filter(|t| t.1).count())
            .sum();
        Ok(PingAll {
            rows,
            sent,
            received,
        })
    }
}

/// "3 packets transmitted, 3 received, ..." → (3, 3).
fn parse_ping_counts(out: &str) -> Option<(u32, u32)> {
    let line = out.lines().find(|l| l.contains("packets transmitted"))?;
    let mut nums = line.split(',').map(|part| {
        part.split_whitespace()
            .next()
            .and_then(|n| n.parse::<u32>().ok())
    });
    let tx = nums.next()??;
    let rx = nums.next()??;
    Some((tx, rx))
}

/// Whether ping's standard error says it could not send (no route, interface down), as
/// opposed to ping or the namespace not running at all.
fn ping_refused(stderr: &str) -> bool {
    stderr.contains("ping: connect:") || stderr.contains("ping: sendmsg:")
}

/// "rtt min/avg/max/mdev = 0.045/0.061/0.080/0.014 ms" → 0.061.
fn parse_ping_avg(out: &str) -> Option<f64> {
    let line = out
        .lines()
        .find(|l| l.starts_with("rtt ") || l.starts_with("round-trip"))?;
    let values = line.split('=').nth(1)?.trim();
    values.split('/').nth(1)?.trim().parse().ok()
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_output() {
        let out =
            "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n\n--- 10.0.0.2 ping statistics ---\n\
                   3 packets transmitted, 2 received, 33.3333% packet loss, time 401ms\n\
                   rtt min/avg/max/mdev = 0.045/0.061/0.080/0.014 ms\n";
        assert_eq!(parse_ping_counts(out), Some((3, 2)));
        assert_eq!(parse_ping_avg(out), Some(0.061));
        let lost = "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n";
        assert_eq!(parse_ping_counts(lost), Some((1, 0)));
        assert_eq!(parse_ping_avg(lost), None);
        assert_eq!(
            parse_ping_counts("ping: connect: Network is unreachable"),
            None
        );
        assert!(ping_refused(
            "/usr/bin/ping: connect: Network is unreachable\n"
        ));
        assert!(ping_refused("ping: sendmsg: No route to host"));
        assert!(!ping_refused(
            "Cannot open network namespace \"t1-h1\": No such file"
        ));
    }

    #[test]
    fn pingall_matrix_is_mininets() {
        let p = PingAll {
            rows: vec![
                PingRow {
                    from: "h1".into(),
                    to: vec![("h2".into(), true), ("h3".into(), false)],
                },
                PingRow {
                    from: "h2".into(),
                    to: vec![("h1".into(), true), ("h3".into(), true)],
                },
                PingRow {
                    from: "h3".into(),
                    to: vec![("h1".into(), false), ("h2".into(), true)],
                },
            ],
            sent: 6,
            received: 4,
        };
        assert_eq!(
            p.to_string(),
            "*** Ping: testing ping reachability\nh1 -> h2 X\nh2 -> h1 h3\nh3 -> X h2\n\
             *** Results: 33% dropped (4/6 received)"
        );
        assert!(!p.all_ok());
    }
}
