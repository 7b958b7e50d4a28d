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

use std::fmt;
use std::net::SocketAddr;
use std::os::unix::thread::JoinHandleExt as _;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use crate::tls::{SocketAddrName, Transport};
use mio::{Events, Interest, Poll, Token};
use openflow::Version;
use serde::Serialize;

use crate::flood::{run_flood_in_background, FloodConfig, FloodReport};
use crate::report::{
    BenchReport, FloodEffect, JoinReport, LearningReport, LoopResult, NotConnected, Summarised,
};
use crate::stats::{Percentiles, Summary, SwitchRates};
use crate::switch::{Behaviour, Counting, Phase, State, Switch, Totals};
use crate::topo::{Shape, Wiring};

/// Throughput or latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every switch keeps `window` PACKET_INs in flight.
    Throughput,
    /// Every switch keeps one PACKET_IN in flight.
    Latency,
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "throughput" | "t" => Ok(Mode::Throughput),
            "latency" | "l" => Ok(Mode::Latency),
            other => Err(format!(
                "unknown mode {other:?}: expected throughput or latency"
            )),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Throughput => "throughput",
            Mode::Latency => "latency",
        })
    }
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct ControllerBenchConfig {
    /// The controller.
    pub addr: SocketAddr,
    /// Switches emulated.
    pub switches: usize,
    /// Unique source MAC addresses per switch (at most 2^24).
    pub macs: usize,
    /// Loops.
    pub loops: usize,
    /// Milliseconds per loop.
    pub loop_ms: u64,
    /// Loops at the start left out of the overall figures.
    pub warmup: usize,
    /// Throughput or latency.
    pub mode: Mode,
    /// The OpenFlow version the switches speak.
    pub version: Version,
    /// PACKET_INs in flight per switch in throughput mode; 0: unbounded (keep the socket
    /// full, as cbench does).
    pub window: usize,
    /// PACKET_INs carry buffer ids (as cbench's do); otherwise `NO_BUFFER`.
    pub buffered: bool,
    /// Announce every address before the loops (the learning phase).
    pub learn: bool,
    /// The learning phase ends by then, done or not.
    pub learn_timeout: Duration,
    /// Generator threads (at most one per switch).
    pub threads: usize,
    /// Count PACKET_INs answered instead of FLOW_MODs and PACKET_OUTs.
    pub per_packet_in: bool,
    /// Switches not ready by then take no part and are reported.
    pub connect_timeout: Duration,
    /// A PACKET_IN unanswered this long is given up.
    pub response_timeout: Duration,
    /// A connection flood run during the loops (`--flood RATE,STYLE`): how well the
    /// controller serves its switches while under attack. Its duration is cut short
    /// when the loops end.
    pub flood: Option<FloodConfig>,
    /// Run the flood in alternate loops instead of through all of them
    /// (`--flood-alternate`), in cycles of four after the warm-up: a loop for the
    /// flood's end to settle, one measured without it, a loop for its start to settle,
    /// one measured with it. The report pairs each measured loop without the flood with
    /// the next one with it ([`crate::report::FloodEffect`]).
    pub flood_alternate: bool,
    /// Wire the switches into this shape (`--topology`, see [`crate::topo`]): LLDP
    /// frames are relayed between them, port statistics answered. All switches then
    /// run on one generator thread (a relay is a hand-over between two of them).
    pub topology: Option<Shape>,
    /// After the learning phase, keep the switches connected, sending nothing of their
    /// own, this long before the loops (`--hold`): a network to look at, for the web UI.
    pub hold: Duration,
    /// Spread the switches over this many loopback source addresses (switch `i` from
    /// the `i % n`-th of 127.0.0.1, 127.0.0.2, ...); 0: the system's choice.
    pub source_addrs: usize,
    /// A switch whose connection is refused (closed or reset before the controller's
    /// HELLO) connects again after a backoff (100 ms, doubling to 2 s, ±25%), as a real
    /// switch does, until `connect_timeout`.
    pub retry: bool,
    /// Connect over TLS with this client configuration (`--tls-cert`, `--tls-key`,
    /// `--tls-ca`; see [`crate::tls`]); `None`: clear text.
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

/// The loopback source address of switch `i` of `n` addresses: 127.0.0.1 first, then
/// upwards through 127.0.0.0/8 (skipping .0 and .255 in the last byte).
pub fn source_addr(i: usize, n: usize) -> std::net::IpAddr {
    let k = (i % n.max(1)) as u32;
    let (hi, lo) = (k / 254, k % 254 + 1);
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(
        127,
        (hi >> 8) as u8,
        hi as u8,
        lo as u8,
    ))
}

/// A non-blocking connection to `addr` from `source` (any port), for mio.
pub(crate) fn connect_from(
    addr: SocketAddr,
    source: Option<std::net::IpAddr>,
) -> std::io::Result<TcpStream> {
    let Some(ip) = source else {
        return TcpStream::connect(addr);
    };
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::new(ip, 0).into())?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(socket.into()))
}

/// The pause before connection attempt `attempt` (1 = the first retry).
pub(crate) fn backoff(attempt: u32, dpid: u64) -> Duration {
    let base = 100u64 << attempt.saturating_sub(1).min(5);
    let base = base.min(2000);
    // ±25%, from the dpid and the attempt: no two switches retry in lockstep.
    let h = (dpid ^ u64::from(attempt) << 32).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 33;
    let jitter = (h % 51) as i64 - 25;
    Duration::from_millis((base as i64 + base as i64 * jitter / 100) as u64)
}

impl ControllerBenchConfig {
    /// cbench's defaults (16 switches, 100,000 MACs, 16 loops of 1 s, 1 warm-up,
    /// OpenFlow 1.0, throughput with the socket kept full, buffered PACKET_INs, a
    /// learning phase) against `addr`.
    pub fn new(addr: SocketAddr) -> ControllerBenchConfig {
        ControllerBenchConfig {
            addr,
            switches: 16,
            macs: 100_000,
            loops: 16,
            loop_ms: 1000,
            warmup: 1,
            mode: Mode::Throughput,
            version: Version::V1_0,
            window: 0,
            buffered: true,
            learn: true,
            learn_timeout: Duration::from_secs(60),
            threads: thread::available_parallelism().map_or(1, |n| n.get()),
            per_packet_in: false,
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(1),
            flood: None,
            flood_alternate: false,
            topology: None,
            hold: Duration::ZERO,
            source_addrs: 0,
            retry: true,
            tls: None,
        }
    }
}

/// Why a run could not take place.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A setting out of range.
    #[error("invalid setting: {0}")]
    Config(String),
    /// The generator could not start (threads, event loops).
    #[error("the generator could not start: {0}")]
    Io(#[from] std::io::Error),
    /// The flood could not run.
    #[error("the flood failed: {0}")]
    Flood(std::io::Error),
}

/// What the coordinator tells the threads (they read it every turn).
struct Control {
    /// What the switches do now: CONNECT, RUN, DRAIN or STOP.
    phase: AtomicU8,
    /// Record round trips: off during the warm-up loops.
    recording: AtomicBool,
}

const CONNECT: u8 = 0;
const LEARN: u8 = 1;
const RUN: u8 = 2;
const DRAIN: u8 = 3;
const STOP: u8 = 4;

/// `Published::state` values.
const CONNECTING: u8 = 0;
const READY: u8 = 1;
const CLOSED: u8 = 2;

/// One switch's counts as its thread last published them (after every turn), read by
/// the coordinator at loop boundaries: plain stores, no read-modify-write on the hot path.
#[derive(Default)]
struct Published {
    /// CONNECTING, READY or CLOSED: when everyone is connected, the loops begin.
    state: AtomicU8,
    /// The controller answered the echo after the announcements: the learning phase
    /// ends when every ready switch has this.
    learned: AtomicBool,
    /// PACKET_INs sent so far, for the per-loop figures.
    packet_ins: AtomicU64,
    /// Responses so far under the run's counting rule, for the per-loop figures.
    counted: AtomicU64,
    /// PACKET_INs in flight: the drain after the last loop waits for 0.
    in_flight: AtomicU64,
}

/// What a thread hands back about one switch when the run ends.
struct Final {
    /// Which switch.
    dpid: u64,
    /// Ready when the loops began (the others sent nothing and are reported).
    took_part: bool,
    /// Its exact counts (the published ones may be a turn old).
    totals: Totals,
    /// The reason the connection ended, or where the handshake stood.
    status: String,
    /// Whether the connection ended.
    closed: bool,
    /// Its round trips (nanoseconds), pooled for the percentiles.
    samples: Vec<u32>,
    /// Connection attempts, and the time from the first to ready (if it got there).
    attempts: u32,
    joined: Option<Duration>,
}

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

/// Per switch that was ready when the learning phase began: (dpid, done).
fn report_learned(published: &[Arc<Published>], took_part: &[bool]) -> Vec<(u64, bool)> {
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

fn report(
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

/// The flood beside the loops: started once (through all of them) or at each cycle
/// of `--flood-alternate`, its runs' reports added up.
#[derive(Default)]
struct Flooding {
    running: Option<(Arc<AtomicBool>, JoinHandle<std::io::Result<FloodReport>>)>,
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

/// How the switches connect.
#[derive(Debug, Clone)]
struct Connecting {
    /// Loopback source addresses to spread them over (0: the system's choice).
    source_addrs: usize,
    /// Connect again after a refusal, with backoff.
    retry: bool,
    /// TLS, or clear text.
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl Connecting {
    fn source(&self, dpid: u64) -> Option<std::net::IpAddr> {
        (self.source_addrs > 0).then(|| source_addr(dpid as usize - 1, self.source_addrs))
    }

    /// Switch `dpid`'s connection to `addr` (its TLS session started, if TLS).
    fn open(&self, addr: SocketAddr, dpid: u64) -> std::io::Result<Transport> {
        let tcp = connect_from(addr, self.source(dpid))?;
        let _ = tcp.set_nodelay(true);
        Transport::new(tcp, self.tls.as_ref(), SocketAddrName(addr.ip()))
    }
}

/// A switch's way in: its attempts, the next one, and when it was first ready.
struct Joining {
    first: Instant,
    attempts: u32,
    next: Option<Instant>,
    joined: Option<Duration>,
}

/// One generator thread: its switches, until the coordinator says stop.
fn worker(
    addr: SocketAddr,
    how: Connecting,
    mine: Vec<(u64, Arc<Published>)>,
    behaviour: Behaviour,
    wiring: Option<&Wiring>,
    ctl: &Control,
) -> std::io::Result<Vec<Final>> {
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(1024);
    let mut switches: Vec<(Switch<Transport>, Arc<Published>)> = Vec::new();
    let mut joining: Vec<Joining> = Vec::new();
    let mut finals = Vec::new();
    for (dpid, published) in mine {
        let first = Instant::now();
        match how.open(addr, dpid) {
            Ok(mut stream) => {
                let token = Token(switches.len());
                poll.registry().register(
                    &mut stream,
                    token,
                    Interest::READABLE | Interest::WRITABLE,
                )?;
                switches.push((Switch::new(dpid, stream, behaviour), published));
                joining.push(Joining {
                    first,
                    attempts: 1,
                    next: None,
                    joined: None,
                });
            }
            Err(e) => {
                published.state.store(CLOSED, Ordering::Relaxed);
                finals.push(Final {
                    dpid,
                    took_part: false,
                    totals: Totals::default(),
                    status: format!("connect: {e}"),
                    closed: true,
                    samples: Vec::new(),
                    attempts: 1,
                    joined: None,
                });
            }
        }
    }
    // Where each switch is in `switches`, for the relays.
    let by_dpid: std::collections::HashMap<u64, usize> = switches
        .iter()
        .enumerate()
        .map(|(i, (sw, _))| (sw.dpid, i))
        .collect();
    // Ready when the loops began, per switch.
    let mut took_part = vec![false; switches.len()];
    let mut started = false;
    loop {
        let phase = match ctl.phase.load(Ordering::SeqCst) {
            CONNECT => Phase::Connect,
            LEARN => Phase::Learn,
            RUN => Phase::Run,
            DRAIN => Phase::Drain,
            _ => break,
        };
        if phase != Phase::Connect && !started {
            started = true;
            for (i, (sw, _)) in switches.iter().enumerate() {
                took_part[i] = sw.state == State::Ready;
            }
        }
        // A switch left with bytes to read (the per-turn cap), or with a socket still
        // taking PACKET_INs, gets its next turn at once.
        let busy = switches.iter().enumerate().any(|(i, (sw, _))| {
            sw.busy(if started && !took_part[i] {
                Phase::Connect
            } else {
                phase
            })
        });
        let timeout = if busy {
            Duration::ZERO
        } else {
            Duration::from_millis(1)
        };
        match poll.poll(&mut events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        for ev in &events {
            if let Some((sw, _)) = switches.get_mut(ev.token().0) {
                if ev.is_read_closed() || ev.is_error() {
                    sw.read_closed = true;
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    sw.readable = true;
                }
                if ev.is_writable() || ev.is_write_closed() {
                    sw.writable = true;
                }
            }
        }
        let recording = ctl.recording.load(Ordering::Relaxed);
        for (i, (sw, published)) in switches.iter_mut().enumerate() {
            // A switch that was not ready when the loops began takes no part in them.
            let phase = if started && !took_part[i] {
                Phase::Connect
            } else {
                phase
            };
            sw.turn(phase, recording);
            let j = &mut joining[i];
            if sw.state == State::Ready && j.joined.is_none() {
                j.joined = Some(j.first.elapsed());
            }
            // Refused (closed or reset before the controller's HELLO) while switches
            // are still connecting: it tries again after a backoff, as a real switch
            // does. A controller that spoke and then closed is reported at once.
            let retrying = how.retry
                && !started
                && phase == Phase::Connect
                && sw.state == State::Closed
                && !sw.heard_hello()
                && j.joined.is_none();
            if retrying {
                let now = Instant::now();
                match j.next {
                    None => j.next = Some(now + backoff(j.attempts, sw.dpid)),
                    Some(due) if now >= due => {
                        j.attempts += 1;
                        j.next = None;
                        let _ = poll.registry().deregister(sw.stream());
                        let fresh = how.open(addr, sw.dpid).and_then(|mut s| {
                            poll.registry().register(
                                &mut s,
                                Token(i),
                                Interest::READABLE | Interest::WRITABLE,
                            )?;
                            Ok(s)
                        });
                        match fresh {
                            Ok(stream) => *sw = Switch::new(sw.dpid, stream, behaviour),
                            Err(_) => j.next = Some(now + backoff(j.attempts, sw.dpid)),
                        }
                    }
                    Some(_) => {}
                }
            }
            let counted = sw.totals.counted(behaviour.counting);
            published.state.store(
                match sw.state {
                    _ if retrying => CONNECTING,
                    State::Connecting => CONNECTING,
                    State::Ready => READY,
                    State::Closed => CLOSED,
                },
                Ordering::Relaxed,
            );
            published.learned.store(sw.learned, Ordering::Relaxed);
            published
                .packet_ins
                .store(sw.totals.packet_ins, Ordering::Relaxed);
            published.counted.store(counted, Ordering::Relaxed);
            published
                .in_flight
                .store(sw.totals.in_flight, Ordering::Relaxed);
        }
        if let Some(w) = wiring {
            relay(w, &mut switches, &by_dpid);
        }
    }
    if !started {
        for (i, (sw, _)) in switches.iter().enumerate() {
            took_part[i] = sw.state == State::Ready;
        }
    }
    for (i, (mut sw, _)) in switches.into_iter().enumerate() {
        let _ = poll.registry().deregister(sw.stream());
        finals.push(Final {
            dpid: sw.dpid,
            took_part: took_part[i],
            totals: sw.totals,
            status: sw.handshake_status(),
            closed: sw.state == State::Closed,
            samples: std::mem::take(&mut sw.samples),
            attempts: joining[i].attempts,
            joined: joining[i].joined,
        });
    }
    Ok(finals)
}

/// Hands each LLDP frame a switch was told to send to the switch wired to that port,
/// as a PACKET_IN from its own port (written at its next turn).
fn relay(
    wiring: &Wiring,
    switches: &mut [(Switch<Transport>, Arc<Published>)],
    by_dpid: &std::collections::HashMap<u64, usize>,
) {
    for i in 0..switches.len() {
        if switches[i].0.relays.is_empty() {
            continue;
        }
        let from = switches[i].0.dpid;
        for (port, frame) in std::mem::take(&mut switches[i].0.relays) {
            let Some((to, to_port)) = wiring.peer(from, port) else {
                continue;
            };
            if let Some(&j) = by_dpid.get(&to) {
                let peer = &mut switches[j].0;
                // Written at its next turn.
                peer.inject(to_port, &frame);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_addresses_walk_up_127_0_0_0_8_and_wrap() {
        assert_eq!(source_addr(0, 100).to_string(), "127.0.0.1");
        assert_eq!(source_addr(99, 100).to_string(), "127.0.0.100");
        assert_eq!(source_addr(100, 100).to_string(), "127.0.0.1", "wraps at n");
        assert_eq!(source_addr(253, 1000).to_string(), "127.0.0.254");
        assert_eq!(
            source_addr(254, 1000).to_string(),
            "127.0.1.1",
            "no .255, no .0"
        );
    }

    #[test]
    fn backoff_doubles_to_two_seconds_with_jitter() {
        for dpid in 1..50 {
            let ms = |a| backoff(a, dpid).as_millis() as u64;
            assert!((75..=125).contains(&ms(1)), "{}", ms(1));
            assert!((150..=250).contains(&ms(2)), "{}", ms(2));
            assert!((1500..=2500).contains(&ms(9)), "{}", ms(9));
        }
        let firsts: std::collections::HashSet<_> = (1..50).map(|d| backoff(1, d)).collect();
        assert!(firsts.len() > 10, "switches do not retry in lockstep");
    }
}
