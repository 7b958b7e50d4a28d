//! The run's counts turned into its report: per-switch rates over the measured loops,
//! the pooled round trips, the switches that never joined, went away or got nothing,
//! and the learning phase.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::config::{ControllerBenchConfig, Mode};
use super::report::{
    BenchReport, JoinReport, LearningReport, LoopResult, NotConnected, Summarised,
};
use super::worker::{Final, Published};
use crate::stats::{Percentiles, Summary, SwitchRates};
use crate::switch::{Counting, Totals};

/// Per switch that was ready when the learning phase began: (dpid, done).
pub(super) fn report_learned(published: &[Arc<Published>], took_part: &[bool]) -> Vec<(u64, bool)> {
    published
        .iter()
        .zip(took_part)
        .enumerate()
        .filter(|(_, (_, &t))| t)
        .map(|(i, (p, _))| (i as u64 + 1, p.learned.load(Ordering::Relaxed)))
        .collect()
}

fn learning_report(elapsed: Duration, learned: &[(u64, bool)], total: &Totals) -> LearningReport {
    let not_done: Vec<u64> = learned
        .iter()
        .filter(|(_, done)| !done)
        .map(|&(d, _)| d)
        .collect();
    LearningReport {
        elapsed_ms: elapsed.as_secs_f64() * 1000.0,
        switches_done: learned.len() - not_done.len(),
        not_done: Summarised::of(not_done),
        announced: total.announced,
        responses: total.learn_responses,
    }
}

pub(super) fn report(
    cfg: &ControllerBenchConfig,
    threads: usize,
    counting: Counting,
    loops: Vec<LoopResult>,
    finals: Vec<Final>,
    learning: Option<(Duration, Vec<(u64, bool)>)>,
) -> BenchReport {
    let rates: Vec<f64> = loops
        .iter()
        .filter(|l| l.measured())
        .map(|l| l.responses_per_sec)
        .collect();
    // Per switch, over the measured loops: what it was answered, per second.
    let measured_s: f64 = loops
        .iter()
        .filter(|l| l.measured())
        .map(|l| l.elapsed_ms / 1000.0)
        .sum();
    let mut per_switch_counts = vec![0u64; cfg.switches];
    for l in loops.iter().filter(|l| l.measured()) {
        for (c, n) in per_switch_counts.iter_mut().zip(&l.per_switch) {
            *c += n;
        }
    }
    let mut switch_rates = Vec::new();
    let mut samples: Vec<u32> = Vec::new();
    let mut not_connected = Vec::new();
    let mut disconnected = Vec::new();
    let mut silent = Vec::new();
    let mut total = Totals::default();
    for f in &finals {
        let t = &f.totals;
        total.packet_ins += t.packet_ins;
        total.responses += t.responses;
        total.packet_outs += t.packet_outs;
        total.answered += t.answered;
        total.timeouts += t.timeouts;
        total.other += t.other;
        total.announced += t.announced;
        total.learn_responses += t.learn_responses;
        if !f.took_part {
            not_connected.push(NotConnected {
                dpid: f.dpid,
                reason: f.status.clone(),
            });
        } else {
            if f.closed {
                disconnected.push(NotConnected {
                    dpid: f.dpid,
                    reason: f.status.clone(),
                });
            }
            if measured_s > 0.0 {
                let i = (f.dpid - 1) as usize;
                switch_rates
                    .push(per_switch_counts.get(i).copied().unwrap_or(0) as f64 / measured_s);
            }
        }
        if t.counted(counting) == 0 {
            silent.push(f.dpid);
        }
    }
    for f in finals.iter().filter(|f| f.took_part) {
        samples.extend_from_slice(&f.samples);
    }
    BenchReport {
        mode: cfg.mode,
        version: cfg.version,
        counting,
        switches: cfg.switches,
        connected: finals.iter().filter(|f| f.took_part).count(),
        macs: cfg.macs,
        window: match cfg.mode {
            Mode::Throughput => cfg.window,
            Mode::Latency => 1,
        },
        buffered: cfg.buffered,
        threads,
        overall: Summary::of(&rates),
        switch_rates: SwitchRates::of(&switch_rates),
        latency: match cfg.mode {
            Mode::Latency => Percentiles::of(&mut samples),
            Mode::Throughput => None,
        },
        loops,
        packet_ins_sent: total.packet_ins,
        responses_total: total.counted(counting),
        cbench_responses: total.responses,
        flow_mods: total.responses - total.packet_outs,
        packet_outs: total.packet_outs,
        packet_ins_answered: total.answered,
        timeouts: total.timeouts,
        other_messages: total.other,
        join: JoinReport::of(
            cfg.source_addrs,
            &finals
                .iter()
                .map(|f| (f.attempts, f.joined))
                .collect::<Vec<_>>(),
        ),
        learning: learning.map(|(elapsed, learned)| learning_report(elapsed, &learned, &total)),
        generator_cpu_s: 0.0,
        generator_cpu_ns_per_message: None,
        silent_switches: Summarised::of(silent),
        not_connected: Summarised::of(not_connected),
        disconnected: Summarised::of(disconnected),
        flood: None,
        flood_effect: None,
    }
}
