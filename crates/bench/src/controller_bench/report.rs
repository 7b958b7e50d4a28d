//! What `pharos bench controller` reports: per loop and overall, as a table or JSON.

use std::fmt::Write as _;

use openflow::Version;
use serde::Serialize;

use super::config::Mode;
use crate::flood::FloodReport;
use crate::stats::{percentile, rounded, Percentiles, Summary, SwitchRates};
use crate::switch::Counting;

/// How many entries of a long list of switches a report keeps (the count is always
/// whole).
pub const FIRST_FEW: usize = 8;

/// A list of switches that may be long (every one of 10,000 silent): its length and its
/// first [`FIRST_FEW`] entries, in dpid order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summarised<T> {
    /// How many there were.
    pub count: usize,
    /// The first few.
    pub first: Vec<T>,
}

impl<T> Default for Summarised<T> {
    fn default() -> Summarised<T> {
        Summarised {
            count: 0,
            first: Vec::new(),
        }
    }
}

impl<T> Summarised<T> {
    /// The summary of `all`.
    pub fn of(mut all: Vec<T>) -> Summarised<T> {
        let count = all.len();
        all.truncate(FIRST_FEW);
        Summarised { count, first: all }
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// ", and N more" when entries were left out, else nothing.
    fn more(&self) -> String {
        match self.count - self.first.len() {
            0 => String::new(),
            n => format!(", and {n} more"),
        }
    }
}

/// One loop of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopResult {
    /// Loop number, from 1 (as the progress lines and the table print it).
    pub number: usize,
    /// A warm-up loop: shown, left out of the overall figures.
    pub warmup: bool,
    /// With the flood in alternate loops (`--flood-alternate`): whether the flood ran
    /// during this loop (`None`: no alternation).
    pub flood: Option<bool>,
    /// With the flood in alternate loops: the first loop after the flood started or
    /// stopped, left out of every figure so that each measured loop is in a steady state.
    pub settle: bool,
    /// How long the loop really lasted.
    #[serde(serialize_with = "rounded::three")]
    pub elapsed_ms: f64,
    /// PACKET_INs sent during the loop, all switches.
    pub packet_ins: u64,
    /// Responses counted during the loop (under the run's counting rule), all switches.
    pub responses: u64,
    /// `responses` per second of `elapsed_ms`.
    #[serde(serialize_with = "rounded::three")]
    pub responses_per_sec: f64,
    /// Per-switch rates during the loop (switches that took part): min, max, Jain's index.
    pub switch_rates: SwitchRates,
    /// The generator's CPU time (user + system, all its threads) during the loop, per
    /// PACKET_IN sent and response counted, in nanoseconds.
    #[serde(serialize_with = "rounded::three_opt")]
    pub generator_cpu_ns_per_message: Option<f64>,
    /// Responses per switch, in dpid order (every switch; 0 for one not connected).
    pub per_switch: Vec<u64>,
}

impl LoopResult {
    /// Whether the loop counts in the overall figures: neither warm-up nor settling.
    pub fn measured(&self) -> bool {
        !self.warmup && !self.settle
    }

    /// What the table and the progress lines say of the loop, if anything: warm-up,
    /// or where it stands with the flood in alternate loops.
    pub fn note(&self) -> Option<&'static str> {
        Some(match (self.warmup, self.settle, self.flood) {
            (true, _, _) => "warm-up",
            (_, true, Some(true)) => "flood starting: not counted",
            (_, true, _) => "flood stopping: not counted",
            (_, _, Some(true)) => "flood",
            (_, _, Some(false)) => "no flood",
            (false, false, None) => return None,
        })
    }
}

/// With the flood in alternate loops (`--flood-alternate`): what the flood cost, from
/// pairs of measured loops of the same run, one without the flood and the next with it.
/// The same switches, connections and controller state on both sides of each pair, so
/// the run-to-run spread of separate runs stays out of the ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FloodEffect {
    /// Responses/s with the flood / without, per pair, in order.
    #[serde(serialize_with = "rounded::three_vec")]
    pub pairs: Vec<f64>,
    /// The median of `pairs`.
    #[serde(serialize_with = "rounded::three_opt")]
    pub median: Option<f64>,
    /// Mean responses/s of the measured loops without the flood.
    #[serde(serialize_with = "rounded::three")]
    pub without: f64,
    /// Mean responses/s of the measured loops with the flood.
    #[serde(serialize_with = "rounded::three")]
    pub with: f64,
}

impl FloodEffect {
    /// From the loops of a run with the flood in alternate loops: each measured loop
    /// without the flood paired with the next measured loop, if that one had it.
    pub fn of(loops: &[LoopResult]) -> FloodEffect {
        let measured: Vec<&LoopResult> = loops.iter().filter(|l| l.measured()).collect();
        let mean = |on: bool| {
            let v: Vec<f64> = measured
                .iter()
                .filter(|l| l.flood == Some(on))
                .map(|l| l.responses_per_sec)
                .collect();
            Summary::of(&v).mean
        };
        let pairs: Vec<f64> = measured
            .windows(2)
            .filter(|w| w[0].flood == Some(false) && w[1].flood == Some(true))
            .filter(|w| w[0].responses_per_sec > 0.0)
            .map(|w| w[1].responses_per_sec / w[0].responses_per_sec)
            .collect();
        FloodEffect {
            median: crate::compare::median(&pairs),
            pairs,
            without: mean(false),
            with: mean(true),
        }
    }
}

/// A switch that never finished connecting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotConnected {
    /// Its datapath id.
    pub dpid: u64,
    /// What went wrong (the handshake never finished, a refused connection, ...).
    pub reason: String,
}

/// How the switches got in: how long from each one's first connection attempt to ready,
/// and how many attempts it took (a refused switch tries again after a backoff).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JoinReport {
    /// Loopback source addresses the switches were spread over (0: the system's choice).
    pub source_addrs: usize,
    /// Switches that became ready.
    pub joined: usize,
    /// Time to ready over those, in milliseconds: the median (nearest rank).
    #[serde(serialize_with = "rounded::three")]
    pub p50_ms: f64,
    /// The 90th percentile.
    #[serde(serialize_with = "rounded::three")]
    pub p90_ms: f64,
    /// The 99th percentile.
    #[serde(serialize_with = "rounded::three")]
    pub p99_ms: f64,
    /// The slowest.
    #[serde(serialize_with = "rounded::three")]
    pub max_ms: f64,
    /// Switches that needed more than one attempt.
    pub retried: usize,
    /// Connection attempts over all switches.
    pub attempts: u64,
}

impl JoinReport {
    /// From each switch's attempts and time to ready (`None`: never ready).
    pub fn of(source_addrs: usize, switches: &[(u32, Option<std::time::Duration>)]) -> JoinReport {
        let mut ms: Vec<f64> = switches
            .iter()
            .filter_map(|(_, j)| j.map(|d| d.as_secs_f64() * 1e3))
            .collect();
        ms.sort_by(f64::total_cmp);
        // Nearest rank, as every percentile of the bench; 0 when none joined.
        let at = |p: f64| percentile(&ms, p).unwrap_or(0.0);
        JoinReport {
            source_addrs,
            joined: ms.len(),
            p50_ms: at(50.0),
            p90_ms: at(90.0),
            p99_ms: at(99.0),
            max_ms: at(100.0),
            retried: switches.iter().filter(|(a, _)| *a > 1).count(),
            attempts: switches.iter().map(|(a, _)| u64::from(*a)).sum(),
        }
    }
}

/// The learning phase: every switch announcing each of its addresses once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LearningReport {
    /// How long it took (up to the learning timeout).
    #[serde(serialize_with = "rounded::three")]
    pub elapsed_ms: f64,
    /// Switches whose announcements the controller had all handled (its echo came back).
    pub switches_done: usize,
    /// Switches still waiting when the phase ended (dpids).
    pub not_done: Summarised<u64>,
    /// Announcements sent, all switches.
    pub announced: u64,
    /// FLOW_MODs and PACKET_OUTs received during the phase (not counted as responses).
    pub responses: u64,
}

/// The whole result of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    /// Throughput or latency.
    pub mode: Mode,
    /// The OpenFlow version spoken.
    pub version: Version,
    /// What counted as a response.
    pub counting: Counting,
    /// Switches emulated.
    pub switches: usize,
    /// Switches that finished the handshake before the first loop.
    pub connected: usize,
    /// Unique source MACs per switch.
    pub macs: usize,
    /// PACKET_INs in flight per switch at most; 0: unbounded (the socket kept full).
    pub window: usize,
    /// PACKET_INs carried buffer ids.
    pub buffered: bool,
    /// Generator threads.
    pub threads: usize,
    /// How the switches got in.
    pub join: JoinReport,
    /// The learning phase, if there was one.
    pub learning: Option<LearningReport>,
    /// Every loop, warm-up ones included.
    pub loops: Vec<LoopResult>,
    /// Responses/s over the loops after the warm-up.
    pub overall: Summary,
    /// Per-switch rates over the loops after the warm-up (responses/s of each switch
    /// that took part): min, max and Jain's fairness index.
    pub switch_rates: SwitchRates,
    /// Round trips measured after the warm-up (latency mode only).
    pub latency: Option<Percentiles>,
    /// PACKET_INs sent, whole run.
    pub packet_ins_sent: u64,
    /// Responses counted under the run's rule, whole run (loops and the drain after the
    /// last one).
    pub responses_total: u64,
    /// FLOW_MODs and PACKET_OUTs received, whole run (cbench's count).
    pub cbench_responses: u64,
    /// Of those, FLOW_MODs.
    pub flow_mods: u64,
    /// Of those, PACKET_OUTs.
    pub packet_outs: u64,
    /// PACKET_INs answered, each once, whole run (see `Counting::PerPacketIn`; with a
    /// window under cbench's rule, one per response).
    pub packet_ins_answered: u64,
    /// PACKET_INs given up after the response timeout.
    pub timeouts: u64,
    /// Messages from the controller that were not responses (echo and barrier
    /// requests, errors, ...), during the loops.
    pub other_messages: u64,
    /// The generator's CPU time over the loops after the warm-up (user + system, all
    /// its threads), in seconds.
    #[serde(serialize_with = "rounded::three")]
    pub generator_cpu_s: f64,
    /// `generator_cpu_s` per PACKET_IN sent and response counted in those loops, in
    /// nanoseconds: what the generator costs, to tell whether it was the limit.
    #[serde(serialize_with = "rounded::three_opt")]
    pub generator_cpu_ns_per_message: Option<f64>,
    /// Switches that got no response at all during the run, connected or not (dpid).
    pub silent_switches: Summarised<u64>,
    /// Switches that never finished connecting, and why.
    pub not_connected: Summarised<NotConnected>,
    /// Switches whose connection ended during the run, and why.
    pub disconnected: Summarised<NotConnected>,
    /// The flood run during the loops, if any (with `--flood-alternate`, its runs
    /// added up).
    pub flood: Option<FloodReport>,
    /// With the flood in alternate loops: what it cost, pair by pair.
    pub flood_effect: Option<FloodEffect>,
}

/// A rate as a short figure: 12.3M, 456K, 789.
fn short(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2}M", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1}K", rate / 1e3)
    } else {
        format!("{rate:.0}")
    }
}

/// "min 1.2K  max 3.4K  Jain 0.987" (or "Jain -" when nothing was answered).
fn rates(r: &SwitchRates) -> String {
    format!(
        "min {}  max {}  Jain {}",
        short(r.min),
        short(r.max),
        r.jain.map_or("-".into(), |j| format!("{j:.3}"))
    )
}

impl BenchReport {
    /// The report as a human-readable table.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let unit = match self.counting {
            Counting::Cbench => "responses/s",
            Counting::PerPacketIn => "PACKET_INs answered/s",
        };
        let window = match self.window {
            0 => "unbounded".to_string(),
            w => w.to_string(),
        };
        let _ = writeln!(
            s,
            "pharos bench controller: {} mode, OpenFlow {}, {} switches ({} connected), {} MACs each, {} threads, window {window}, {}",
            self.mode, self.version, self.switches, self.connected, self.macs, self.threads,
            if self.buffered { "buffered PACKET_INs" } else { "unbuffered PACKET_INs" }
        );
        let j = &self.join;
        let _ = writeln!(
            s,
            "joined: {} switches{}, time to ready p50 {:.1} ms, p90 {:.1}, p99 {:.1}, max {:.1}; {} retried ({} attempts in all)",
            j.joined,
            if j.source_addrs > 0 {
                format!(" from {} source addresses", j.source_addrs)
            } else {
                String::new()
            },
            j.p50_ms,
            j.p90_ms,
            j.p99_ms,
            j.max_ms,
            j.retried,
            j.attempts
        );
        if let Some(l) = &self.learning {
            let _ = writeln!(
                s,
                "learning: {} addresses announced in {:.0} ms, {} of {} switches done, {} answers{}",
                l.announced,
                l.elapsed_ms,
                l.switches_done,
                l.switches_done + l.not_done.count,
                l.responses,
                if l.not_done.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; NOT DONE: {}{}",
                        dpids(&l.not_done.first),
                        l.not_done.more()
                    )
                }
            );
        }
        if self.loops.is_empty() {
            // Nothing was measured: no table of zeros, only why (the lists below).
            let _ = writeln!(s, "no loop ran: no switch finished connecting");
            self.problems(&mut s);
            return s;
        }
        let _ = writeln!(
            s,
            "{:>5}  {:>8}  {:>11}  {:>11}  {:>13}  {:>9}  {:>9}  {:>6}  {:>7}",
            "loop", "ms", "packet_ins", "responses", unit, "sw min/s", "sw max/s", "Jain", "ns/msg"
        );
        for l in &self.loops {
            let _ = writeln!(
                s,
                "{:>5}  {:>8.1}  {:>11}  {:>11}  {:>13.0}  {:>9}  {:>9}  {:>6}  {:>7}{}",
                l.number,
                l.elapsed_ms,
                l.packet_ins,
                l.responses,
                l.responses_per_sec,
                short(l.switch_rates.min),
                short(l.switch_rates.max),
                l.switch_rates
                    .jain
                    .map_or("-".into(), |j| format!("{j:.3}")),
                l.generator_cpu_ns_per_message
                    .map_or("-".into(), |n| format!("{n:.1}")),
                l.note().map_or(String::new(), |n| format!("  ({n})"))
            );
        }
        let o = &self.overall;
        let _ = writeln!(
            s,
            "{unit}: mean {:.0}  min {:.0}  max {:.0}  stddev {:.0}",
            o.mean, o.min, o.max, o.stddev
        );
        let _ = writeln!(
            s,
            "per switch ({} switches): {}",
            self.switch_rates.switches,
            rates(&self.switch_rates)
        );
        let _ = writeln!(
            s,
            "generator CPU: {:.3} s, {} ns per PACKET_IN sent and response counted",
            self.generator_cpu_s,
            self.generator_cpu_ns_per_message
                .map_or("-".into(), |n| format!("{n:.1}"))
        );
        if let Some(p) = &self.latency {
            let _ = writeln!(
                s,
                "round trip (µs, {} samples): p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  mean {:.1}",
                p.samples, p.p50_us, p.p90_us, p.p99_us, p.p999_us, p.max_us, p.mean_us
            );
        }
        let _ = writeln!(
            s,
            "total: {} PACKET_INs sent, {} answered, {} responses ({} FLOW_MODs, {} PACKET_OUTs), {} timed out, {} other messages",
            self.packet_ins_sent,
            self.packet_ins_answered,
            self.cbench_responses,
            self.flow_mods,
            self.packet_outs,
            self.timeouts,
            self.other_messages
        );
        if let Some(f) = &self.flood {
            let _ = writeln!(
                s,
                "flood: {} at {}/s requested, {:.0}/s achieved: {} attempted, {} connected, {} failed, {} closed by the controller",
                f.style, f.rate_requested, f.rate_achieved, f.attempted, f.connected, f.failed, f.closed_by_peer
            );
        }
        if let Some(e) = &self.flood_effect {
            let pairs: Vec<String> = e.pairs.iter().map(|r| format!("{r:.3}")).collect();
            let _ = writeln!(
                s,
                "flood in alternate loops: with / without, per pair: {}; median {}; means {:.0} with, {:.0} without",
                pairs.join(" "),
                e.median.map_or("-".into(), |m| format!("{m:.3}")),
                e.with,
                e.without
            );
        }
        self.problems(&mut s);
        s
    }

    /// The switches that did not connect, were disconnected or got nothing.
    fn problems(&self, s: &mut String) {
        for (what, list) in [
            ("NOT CONNECTED", &self.not_connected),
            ("DISCONNECTED", &self.disconnected),
        ] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(s, "{what}: {} of {} switches", list.count, self.switches);
            for n in &list.first {
                let _ = writeln!(s, "  switch {}: {}", openflow::Dpid(n.dpid), n.reason);
            }
            if list.count > list.first.len() {
                let _ = writeln!(s, "  ... and {} more", list.count - list.first.len());
            }
        }
        // (With no switch connected, every switch is silent: NOT CONNECTED said it.)
        if !self.silent_switches.is_empty() && self.connected > 0 {
            let _ = writeln!(
                s,
                "SILENT: {} of {} switches got no response: {}{}",
                self.silent_switches.count,
                self.switches,
                dpids(&self.silent_switches.first),
                self.silent_switches.more()
            );
        }
    }
}

fn dpids(list: &[u64]) -> String {
    list.iter()
        .map(|&d| openflow::Dpid(d).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_summarised() {
        let s = Summarised::of((1..=1000u64).collect());
        assert_eq!(s.count, 1000);
        assert_eq!(s.first, (1..=FIRST_FEW as u64).collect::<Vec<_>>());
        assert_eq!(s.more(), format!(", and {} more", 1000 - FIRST_FEW));
        let short = Summarised::of(vec![3u64, 4]);
        assert_eq!((short.count, short.first.len()), (2, 2));
        assert_eq!(short.more(), "");
        assert!(Summarised::<u64>::of(Vec::new()).is_empty());
    }
}
