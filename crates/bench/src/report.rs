//! What `pharos bench controller` reports: per loop and overall, as a table or JSON.

use std::fmt::Write as _;

use openflow::Version;
use serde::Serialize;

use crate::controller_bench::Mode;
use crate::flood::FloodReport;
use crate::stats::{Percentiles, Summary};
use crate::switch::Counting;

/// One loop of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopResult {
    /// Loop number, from 0.
    pub index: usize,
    /// A warm-up loop: shown, left out of the overall figures.
    pub warmup: bool,
    /// How long the loop really lasted.
    pub elapsed_ms: f64,
    /// PACKET_INs sent during the loop, all switches.
    pub packet_ins: u64,
    /// Responses counted during the loop (under the run's counting rule), all switches.
    pub responses: u64,
    /// `responses` per second of `elapsed_ms`.
    pub responses_per_sec: f64,
    /// Responses per switch, in dpid order (every switch; 0 for one not connected).
    pub per_switch: Vec<u64>,
}

/// A switch that never finished connecting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotConnected {
    /// Its datapath id.
    pub dpid: u64,
    /// What went wrong (the handshake never finished, a refused connection, ...).
    pub reason: String,
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
    /// PACKET_INs in flight per switch at most.
    pub window: usize,
    /// Generator threads.
    pub threads: usize,
    /// Every loop, warm-up ones included.
    pub loops: Vec<LoopResult>,
    /// Responses/s over the loops after the warm-up.
    pub overall: Summary,
    /// Round trips measured after the warm-up (latency mode only).
    pub latency: Option<Percentiles>,
    /// PACKET_INs sent, whole run.
    pub packet_ins_sent: u64,
    /// Responses counted, whole run (loops and the drain after the last one).
    pub responses_total: u64,
    /// PACKET_INs given up after the response timeout.
    pub timeouts: u64,
    /// Messages from the controller that were not responses (echo and barrier
    /// requests, errors, ...), during the loops.
    pub other_messages: u64,
    /// Switches that got no response at all during the run, connected or not (dpid).
    pub silent_switches: Vec<u64>,
    /// Switches that never finished connecting, and why.
    pub not_connected: Vec<NotConnected>,
    /// Switches whose connection ended during the run, and why.
    pub disconnected: Vec<NotConnected>,
    /// The flood run during the loops, if any.
    pub flood: Option<FloodReport>,
}

impl BenchReport {
    /// The report as a human-readable table.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let unit = match self.counting {
            Counting::Cbench => "responses/s",
            Counting::PerPacketIn => "PACKET_INs answered/s",
        };
        let _ = writeln!(
            s,
            "pharos bench controller: {} mode, OpenFlow {}, {} switches ({} connected), {} MACs each, {} threads, window {}",
            self.mode, self.version, self.switches, self.connected, self.macs, self.threads, self.window
        );
        if self.loops.is_empty() {
            let _ = writeln!(s, "no loop ran: no switch finished connecting");
        } else {
            let _ = writeln!(
                s,
                "{:>5}  {:>10}  {:>12}  {:>12}  {:>14}",
                "loop", "ms", "packet_ins", "responses", unit
            );
            for l in &self.loops {
                let _ = writeln!(
                    s,
                    "{:>5}  {:>10.1}  {:>12}  {:>12}  {:>14.0}{}",
                    l.index,
                    l.elapsed_ms,
                    l.packet_ins,
                    l.responses,
                    l.responses_per_sec,
                    if l.warmup { "  (warm-up)" } else { "" }
                );
            }
        }
        let o = &self.overall;
        let _ = writeln!(
            s,
            "{unit}: mean {:.0}  min {:.0}  max {:.0}  stddev {:.0}",
            o.mean, o.min, o.max, o.stddev
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
            "total: {} PACKET_INs sent, {} responses, {} timed out, {} other messages",
            self.packet_ins_sent, self.responses_total, self.timeouts, self.other_messages
        );
        if let Some(f) = &self.flood {
            let _ = writeln!(
                s,
                "flood: {} at {}/s requested, {:.0}/s achieved: {} attempted, {} connected, {} failed, {} closed by the controller",
                f.style, f.rate_requested, f.rate_achieved, f.attempted, f.connected, f.failed, f.closed_by_peer
            );
        }
        for n in &self.not_connected {
            let _ = writeln!(s, "NOT CONNECTED: switch {:#x}: {}", n.dpid, n.reason);
        }
        for n in &self.disconnected {
            let _ = writeln!(s, "DISCONNECTED: switch {:#x}: {}", n.dpid, n.reason);
        }
        if !self.silent_switches.is_empty() {
            let list: Vec<String> = self
                .silent_switches
                .iter()
                .map(|d| format!("{d:#x}"))
                .collect();
            let _ = writeln!(
                s,
                "SILENT: {} of {} switches got no response: {}",
                self.silent_switches.len(),
                self.switches,
                list.join(", ")
            );
        }
        s
    }
}
