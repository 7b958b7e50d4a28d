//! `pharos bench controller`: emulated switches sending PACKET_INs to a controller over
//! real TCP, counting its answers, as cbench does.
//!
//! ## How a run goes
//!
//! 1. `threads` generator threads each own a share of the switches (switch `i` goes to
//!    thread `i % threads`), on a `mio` event loop of their own. Every switch connects,
//!    sends a HELLO (its version, with a bitmap), and answers the controller's handshake
//!    like a switch: FEATURES_REPLY, PORT_DESC (1.3), GET_CONFIG_REPLY, BARRIER_REPLY,
//!    ECHO_REPLY. A switch is ready when its FEATURES_REPLY is out and a BARRIER_REQUEST
//!    after it was answered, or 200 ms passed with none.
//! 2. The run waits until every switch is ready, or `connect_timeout`; those that are not
//!    take no part and are reported (with what was missing).
//! 3. The learning phase (unless turned off): every switch announces each of its `macs`
//!    addresses once, as fast as its socket takes them, then waits for the controller's
//!    answer to an ECHO_REQUEST sent after them (see [`crate::switch`]); up to
//!    `learn_timeout`, after which the switches not done are reported.
//! 4. `loops` loops of `loop_ms` each. In throughput mode with a window, every ready
//!    switch keeps up to `window` PACKET_INs in flight; with window 0 (cbench's mode,
//!    the default), it keeps its socket full: it fills a 64 KiB buffer with PACKET_INs
//!    (as cbench does) and writes it whenever the socket takes bytes, reading answers as
//!    they come. In latency mode it keeps exactly one in flight (the next leaves when
//!    the answer to the last arrives).
//!    PACKET_INs are queued from a pre-encoded template and written with one
//!    `write(2)` per buffer-full. The first `warmup` loops are shown and left out of the
//!    overall figures.
//! 5. Then no more PACKET_INs; the answers still in flight are waited for (up to the
//!    response timeout), so that the totals count every answer the controller sent.
//!
//! Per loop and overall, the report gives the per-switch rates (min, max and Jain's
//! fairness index over the switches that took part) and the generator's own CPU time
//! per message (its threads' user + system time, read from their CPU clocks at loop
//! boundaries, over PACKET_INs sent plus answers counted), so that a run shows whether
//! the generator, not the controller, was the limit.
//!
//! With a window, a PACKET_IN unanswered for `response_timeout` is given up and counted in
//! `timeouts`, so a controller that drops some does not stall a switch for ever. The
//! switches that got no response at all are counted in `silent_switches` (the first few
//! listed); the run always ends after its loops, whatever the controller does.
//!
//! Round trips (latency mode) are measured per PACKET_IN, from the moment it was queued
//! for writing to the moment its answer was read (see [`crate::switch::Counting`] for
//! which answer that is), and every sample is kept.

//!
//! ## Layout
//!
//! ```text
//! mod.rs    run_controller_bench: the coordinator (threads, phases, loops, drain,
//!           CPU clocks) and the flood beside the loops
//! config    Mode, ControllerBenchConfig, BenchError
//! connect   source addresses, backoff, a switch's connection (TLS or not)
//! worker    one generator thread's event loop, and what it shares with the coordinator
//! summary   the counts turned into the report
//! report    BenchReport, LoopResult and the rest: the table and the JSON
//! ```
//!
//! Arrows point down the list from `mod.rs`; `report` knows only `config`.

mod config;
mod connect;
pub mod report;
mod summary;
mod worker;

use std::os::unix::thread::JoinHandleExt as _;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub use config::{BenchError, ControllerBenchConfig, Mode};
pub use connect::source_addr;
use connect::Connecting;
pub(crate) use connect::{backoff, connect_from};
use report::{BenchReport, FloodEffect, LoopResult};
use summary::{report, report_learned};
use worker::{worker, Control, Published, CONNECT, CONNECTING, DRAIN, LEARN, READY, RUN, STOP};

use crate::flood::{run_flood_in_background, FloodConfig, FloodReport};
use crate::stats::SwitchRates;
use crate::switch::{Behaviour, Counting};
use crate::topo::Wiring;

/// Runs the benchmark; `progress` is called after each loop.
pub fn run_controller_bench(
    cfg: &ControllerBenchConfig,
    progress: &mut dyn FnMut(&LoopResult),
) -> Result<BenchReport, BenchError> {
    if cfg.switches == 0 || cfg.loops == 0 || cfg.loop_ms == 0 {
        return Err(BenchError::Config(
            "switches, loops and loop length must be at least 1".into(),
        ));
    }
    if cfg.warmup >= cfg.loops {
        return Err(BenchError::Config(format!(
            "{} warm-up loops leave none of the {} loops to measure",
            cfg.warmup, cfg.loops
        )));
    }
    if cfg.flood_alternate && (cfg.flood.is_none() || cfg.loops < cfg.warmup + 4) {
        return Err(BenchError::Config(format!(
            "--flood-alternate needs --flood and at least 4 loops after the warm-up (one cycle of settling, without, settling, with); got {} loops, {} of warm-up",
            cfg.loops, cfg.warmup
        )));
    }
    if cfg.macs == 0 || cfg.macs > 1 << 24 {
        return Err(BenchError::Config(format!(
            "--macs {} is not between 1 and 2^24",
            cfg.macs
        )));
    }
    let wiring = cfg
        .topology
        .map(|shape| Arc::new(Wiring::new(shape, cfg.switches as u64)));
    let threads = if wiring.is_some() {
        1
    } else {
        cfg.threads.clamp(1, cfg.switches)
    };
    let counting = if cfg.per_packet_in {
        Counting::PerPacketIn
    } else {
        Counting::Cbench
    };
    let behaviour = Behaviour {
        version: cfg.version,
        window: match cfg.mode {
            Mode::Throughput => cfg.window,
            Mode::Latency => 1,
        },
        macs: cfg.macs as u32,
        counting,
        buffered: cfg.buffered,
        record_latency: cfg.mode == Mode::Latency,
        response_timeout: cfg.response_timeout,
        settle: Duration::from_millis(200),
        ports: wiring.as_ref().map_or(4, |w| w.ports().max(4)),
        wired: wiring.is_some(),
    };
    let ctl = Arc::new(Control {
        phase: AtomicU8::new(CONNECT),
        recording: AtomicBool::new(false),
    });
    let published: Vec<Arc<Published>> = (0..cfg.switches)
        .map(|_| Arc::new(Published::default()))
        .collect();

    let mut workers = Vec::with_capacity(threads);
    for t in 0..threads {
        let mine: Vec<(u64, Arc<Published>)> = (t..cfg.switches)
            .step_by(threads)
            .map(|i| (i as u64 + 1, Arc::clone(&published[i])))
            .collect();
        let thread_ctl = Arc::clone(&ctl);
        let addr = cfg.addr;
        let wiring = wiring.clone();
        let how = Connecting {
            source_addrs: cfg.source_addrs,
            retry: cfg.retry,
            tls: cfg.tls.clone(),
        };
        let spawned = thread::Builder::new()
            .name(format!("bench-gen-{t}"))
            .spawn(move || worker(addr, how, mine, behaviour, wiring.as_deref(), &thread_ctl));
        match spawned {
            Ok(h) => workers.push(h),
            Err(e) => {
                ctl.phase.store(STOP, Ordering::SeqCst);
                for w in workers {
                    let _ = w.join();
                }
                return Err(e.into());
            }
        }
    }

    // 2. Wait for every switch, or the timeout.
    let deadline = Instant::now() + cfg.connect_timeout;
    loop {
        let connecting = published
            .iter()
            .filter(|p| p.state.load(Ordering::Relaxed) == CONNECTING)
            .count();
        if connecting == 0 || Instant::now() >= deadline {
            break;
        }
        thread::sleep(Duration::from_millis(5));
    }
    let any_ready = published
        .iter()
        .any(|p| p.state.load(Ordering::Relaxed) == READY);
    let clocks: Vec<libc::pthread_t> = workers.iter().map(|w| w.as_pthread_t()).collect();
    let cpu_now = || clocks.iter().filter_map(|&t| thread_cpu_ns(t)).sum::<u64>();

    // The switches ready now take part (as each thread decides when it sees the next
    // phase); one lost later counts, with what it got, in the per-switch rates.
    let took_part: Vec<bool> = published
        .iter()
        .map(|p| p.state.load(Ordering::Relaxed) == READY)
        .collect();

    // 3. The learning phase.
    let mut learning = None;
    if any_ready && cfg.learn {
        ctl.phase.store(LEARN, Ordering::SeqCst);
        let start = Instant::now();
        let deadline = start + cfg.learn_timeout;
        let pending = || {
            published.iter().any(|p| {
                p.state.load(Ordering::Relaxed) == READY && !p.learned.load(Ordering::Relaxed)
            })
        };
        while pending() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
        learning = Some(start.elapsed());
    }
    // The network stays up, quiet (LLDP still relayed), for a look at it.
    if any_ready && !cfg.hold.is_zero() {
        thread::sleep(cfg.hold);
    }

    // 4. The loops.
    let mut loops = Vec::with_capacity(cfg.loops);
    let mut flood = Flooding::default();
    let mut flood_error = None;
    let mut measured_cpu_ns = 0u64;
    if any_ready {
        if let (Some(f), false) = (&cfg.flood, cfg.flood_alternate) {
            flood_error = flood.start(f).err();
        }
        ctl.phase.store(RUN, Ordering::SeqCst);
        let snapshot = |p: &Published| {
            (
                p.packet_ins.load(Ordering::Relaxed),
                p.counted.load(Ordering::Relaxed),
            )
        };
        let mut before: Vec<(u64, u64)> = published.iter().map(|p| snapshot(p)).collect();
        let mut cpu_before = cpu_now();
        let loop_len = Duration::from_millis(cfg.loop_ms);
        let mut start = Instant::now();
        for index in 0..cfg.loops {
            if flood_error.is_some() {
                break;
            }
            let warmup = index < cfg.warmup;
            // Alternating: settle without, without, settle with, with.
            let phase = (!warmup && cfg.flood_alternate).then(|| (index - cfg.warmup) % 4);
            match (phase, &cfg.flood) {
                (Some(0), _) => flood.stop(),
                (Some(2), Some(f)) => flood_error = flood.start(f).err(),
                _ => {}
            }
            let settle = matches!(phase, Some(0 | 2));
            ctl.recording.store(!warmup && !settle, Ordering::SeqCst);
            let end = start + loop_len;
            let now = Instant::now();
            if end > now {
                thread::sleep(end - now);
            }
            let after: Vec<(u64, u64)> = published.iter().map(|p| snapshot(p)).collect();
            let cpu_after = cpu_now();
            let stop = Instant::now();
            let elapsed = stop.duration_since(start).as_secs_f64();
            let per_switch: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a.1 - b.1).collect();
            let responses = per_switch.iter().sum();
            let packet_ins = after.iter().zip(&before).map(|(a, b)| a.0 - b.0).sum();
            let cpu_ns = cpu_after.saturating_sub(cpu_before);
            if !warmup && !settle {
                measured_cpu_ns += cpu_ns;
            }
            let rates: Vec<f64> = per_switch
                .iter()
                .zip(&took_part)
                .filter(|(_, &t)| t)
                .map(|(&n, _)| n as f64 / elapsed)
                .collect();
            let r = LoopResult {
                number: index + 1,
                warmup,
                flood: phase.map(|p| p >= 2),
                settle,
                elapsed_ms: elapsed * 1000.0,
                packet_ins,
                responses,
                responses_per_sec: responses as f64 / elapsed,
                switch_rates: SwitchRates::of(&rates),
                generator_cpu_ns_per_message: per_message(cpu_ns, packet_ins + responses),
                per_switch,
            };
            progress(&r);
            loops.push(r);
            before = after;
            cpu_before = cpu_after;
            start = stop;
        }
        // 5. Drain.
        ctl.phase.store(DRAIN, Ordering::SeqCst);
        let deadline = Instant::now() + cfg.response_timeout;
        while Instant::now() < deadline
            && published
                .iter()
                .any(|p| p.in_flight.load(Ordering::Relaxed) > 0)
        {
            thread::sleep(Duration::from_millis(2));
        }
        // The last published counts may be one turn old: let every thread take a turn.
        thread::sleep(Duration::from_millis(10));
    }
    ctl.phase.store(STOP, Ordering::SeqCst);
    flood.stop();
    let flood = flood.finish();
    if let Some(e) = flood_error {
        return Err(e);
    }
    let flood = flood?;

    let mut finals = Vec::with_capacity(cfg.switches);
    for w in workers {
        match w.join() {
            Ok(Ok(f)) => finals.extend(f),
            Ok(Err(e)) => return Err(e.into()),
            Err(_) => {
                return Err(BenchError::Io(std::io::Error::other(
                    "a generator thread panicked",
                )))
            }
        }
    }
    finals.sort_by_key(|f| f.dpid);
    let learning = learning.map(|elapsed| (elapsed, report_learned(&published, &took_part)));
    let mut report = report(cfg, threads, counting, loops, finals, learning);
    report.flood = flood;
    report.flood_effect = cfg.flood_alternate.then(|| FloodEffect::of(&report.loops));
    let measured: Vec<&LoopResult> = report.loops.iter().filter(|l| l.measured()).collect();
    let messages: u64 = measured.iter().map(|l| l.packet_ins + l.responses).sum();
    report.generator_cpu_s = measured_cpu_ns as f64 / 1e9;
    report.generator_cpu_ns_per_message = per_message(measured_cpu_ns, messages);
    Ok(report)
}

/// Nanoseconds of CPU per message, if there were messages.
fn per_message(cpu_ns: u64, messages: u64) -> Option<f64> {
    (messages > 0).then(|| cpu_ns as f64 / messages as f64)
}

/// The CPU time (user + system) thread `t` has used, in nanoseconds, from its CPU
/// clock; `None` if the clock cannot be read.
fn thread_cpu_ns(t: libc::pthread_t) -> Option<u64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `t` is a thread of this process that has not been joined (its handle is
    // held until after the last read), so its id is valid; `clock` is a valid out-pointer.
    if unsafe { libc::pthread_getcpuclockid(t, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a clock id from pthread_getcpuclockid and a valid out-pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The flood beside the loops: started once (through all of them) or at each cycle
/// of `--flood-alternate`, its runs' reports added up.
#[derive(Default)]
struct Flooding {
    /// The run under way, if any: its stop flag and its thread.
    running: Option<(Arc<AtomicBool>, JoinHandle<std::io::Result<FloodReport>>)>,
    /// The finished runs' reports, added up.
    report: Option<FloodReport>,
}

impl Flooding {
    /// Starts a run of `f` (after joining the one before, which must be stopped).
    fn start(&mut self, f: &FloodConfig) -> Result<(), BenchError> {
        self.join()?;
        let stop = Arc::new(AtomicBool::new(false));
        self.running = Some((Arc::clone(&stop), run_flood_in_background(f.clone(), stop)));
        Ok(())
    }

    /// Tells the running flood, if any, to stop; it is joined at the next start or at
    /// the end, so that its closing sockets do not hold the loop up.
    fn stop(&self) {
        if let Some((stop, _)) = &self.running {
            stop.store(true, Ordering::SeqCst);
        }
    }

    fn join(&mut self) -> Result<(), BenchError> {
        let Some((_, handle)) = self.running.take() else {
            return Ok(());
        };
        let r = match handle.join() {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(BenchError::Flood(e)),
            Err(_) => {
                return Err(BenchError::Flood(std::io::Error::other(
                    "the flood thread panicked",
                )))
            }
        };
        match &mut self.report {
            Some(all) => all.add(&r),
            None => self.report = Some(r),
        }
        Ok(())
    }

    /// Joins the last run (stopped) and returns every run's report added up.
    fn finish(mut self) -> Result<Option<FloodReport>, BenchError> {
        self.join()?;
        Ok(self.report)
    }
}
