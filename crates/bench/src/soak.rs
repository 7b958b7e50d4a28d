//! `pharos bench soak`: many switches connected for a long time, some of them churning,
//! while the controller's memory, file descriptors and threads are sampled.
//!
//! Every switch connects (from one of `--source-addrs` loopback addresses), completes its
//! handshake and then stays, answering what a switch answers. Each one sends an
//! ECHO_REQUEST every `--probe-interval` (spread over the interval, so the controller
//! sees a steady trickle) and expects the reply: a switch whose probe waits longer than
//! the interval is *unserved*. A fraction of the switches (`--churn`, per minute) close
//! their connection and connect again at once, as a switch that restarts does; the time
//! each takes to be ready again is recorded. A switch refused on the way in (closed or
//! reset before the controller's HELLO) tries again after a backoff.
//!
//! Every `--sample` seconds a line says: switches ready, not ready, unserved, churned,
//! the rejoin times of the interval, probes answered, and, with `--pid`, the
//! controller's resident memory, open file descriptors and threads (from `/proc`). The
//! verdict at the end: every switch served (no unserved one in any sample after the
//! first connections, all ready at the end), and resident memory flat after the warm-up
//! (growth under `--max-growth`), with descriptors and threads not growing either.
//!
//! The load itself is another process's job (`pharos bench controller` on some of the
//! switches' addresses): this one measures endurance, not speed.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use openflow::Version;
use serde::Serialize;

use crate::controller_bench::{backoff, connect_from, source_addr};
use crate::oflops::report::{Plot, Point, Series};
use crate::switch::{Behaviour, Counting, Phase, State, Switch};

/// The xids of probes: `PROBE_XID + n` (clear of the bench's other ranges).
const PROBE_XID: u32 = 0x0e00_0000;

/// A soak run's settings.
#[derive(Debug, Clone)]
pub struct SoakConfig {
    /// The controller.
    pub addr: SocketAddr,
    /// Switches.
    pub switches: usize,
    /// The first switch's datapath id; the others follow (so that a `pharos bench
    /// controller` beside the soak, whose switches are 1, 2, ..., can keep its own).
    pub first_dpid: u64,
    /// Loopback source addresses to spread them over (0: the system's choice).
    pub source_addrs: usize,
    /// The OpenFlow version the switches speak.
    pub version: Version,
    /// How long the run lasts once every switch has connected (or `connect_timeout`).
    pub duration: Duration,
    /// The share of the switches that disconnect and reconnect per minute (0.1: 10%).
    pub churn_per_minute: f64,
    /// Each switch sends a probe (ECHO_REQUEST) this often; one unanswered this long
    /// makes it unserved.
    pub probe_interval: Duration,
    /// How often a sample is taken.
    pub sample_interval: Duration,
    /// The controller's process, to sample its memory, descriptors and threads.
    pub pid: Option<u32>,
    /// Memory is judged from the first sample at or after this time into the run.
    pub warmup: Duration,
    /// The most resident memory may grow after the warm-up (0.05: 5%).
    pub max_growth: f64,
    /// The first connections: switches not ready by then are reported.
    pub connect_timeout: Duration,
}

impl SoakConfig {
    /// Defaults against `addr`: 1,000 switches from 10 addresses, 2 minutes, 10% churn
    /// per minute, a probe every 10 s, a sample every 10 s, 30 s warm-up, 5% growth.
    pub fn new(addr: SocketAddr) -> SoakConfig {
        SoakConfig {
            addr,
            switches: 1000,
            first_dpid: 1,
            source_addrs: 10,
            version: Version::V1_3,
            duration: Duration::from_secs(120),
            churn_per_minute: 0.1,
            probe_interval: Duration::from_secs(10),
            sample_interval: Duration::from_secs(10),
            pid: None,
            warmup: Duration::from_secs(30),
            max_growth: 0.05,
            connect_timeout: Duration::from_secs(60),
        }
    }
}

/// The controller's process as `/proc` shows it.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct ProcessSample {
    /// Resident memory, KiB (`VmRSS`).
    pub rss_kib: u64,
    /// Open file descriptors.
    pub fds: u64,
    /// Threads.
    pub threads: u64,
}

impl ProcessSample {
    /// Reads `/proc/PID`; `None` once the process is gone.
    pub fn read(pid: u32) -> Option<ProcessSample> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
        Some(ProcessSample {
            rss_kib: field("VmRSS:")?,
            fds,
            threads: field("Threads:")?,
        })
    }
}

/// One sample of the run.
#[derive(Debug, Clone, Serialize)]
pub struct SoakSample {
    /// Seconds since the run (after the first connections) began.
    pub at_s: f64,
    /// Switches ready.
    pub ready: usize,
    /// Switches connecting (churned ones on their way back, refused ones waiting).
    pub connecting: usize,
    /// Ready switches whose probe has waited longer than the probe interval, plus
    /// switches not ready for longer than it.
    pub unserved: usize,
    /// Disconnections made by the churn since the start.
    pub churned: u64,
    /// Rejoin times (disconnect to ready again) of the interval: median and maximum, ms.
    pub rejoin_p50_ms: Option<f64>,
    pub rejoin_max_ms: Option<f64>,
    /// Probes answered in the interval.
    pub probes_answered: u64,
    /// The controller's process, if sampled.
    pub process: Option<ProcessSample>,
}

/// The end of a run.
#[derive(Debug, Clone, Serialize)]
pub struct SoakVerdict {
    /// Switches not ready when the run began (after `connect_timeout`).
    pub never_ready: usize,
    /// The most switches unserved in any sample.
    pub max_unserved: usize,
    /// Switches not ready at the end.
    pub not_ready_at_end: usize,
    /// Every switch served throughout.
    pub served: bool,
    /// Resident memory at the first sample after the warm-up and at the end, KiB.
    pub rss_after_warmup_kib: Option<u64>,
    pub rss_end_kib: Option<u64>,
    /// (end / after warm-up) - 1.
    pub rss_growth: Option<f64>,
    /// Descriptors and threads, after the warm-up and at the end.
    pub fds: Option<(u64, u64)>,
    pub threads: Option<(u64, u64)>,
    /// Memory within `max_growth`, descriptors and threads not growing (descriptors
    /// may differ by the switches on their way back at either moment).
    pub flat: Option<bool>,
    /// Why the verdict fails, in words; empty when it passes.
    pub failures: Vec<String>,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct SoakReport {
    pub switches: usize,
    pub source_addrs: usize,
    pub duration_s: f64,
    pub churn_per_minute: f64,
    pub probe_interval_s: f64,
    /// Time until every switch was first ready (or the connect timeout), ms.
    pub first_connect_ms: f64,
    /// Connections refused on the way in and retried.
    pub retries: u64,
    pub samples: Vec<SoakSample>,
    pub verdict: SoakVerdict,
}

/// One switch of the run and its bookkeeping.
struct Slot {
    sw: Switch<TcpStream>,
    /// When its current connection began (for the rejoin time after a churn).
    since: Instant,
    /// Churned: measuring the rejoin.
    rejoining: bool,
    /// Refused: the next attempt, and how many so far.
    retry_at: Option<Instant>,
    attempts: u32,
    /// When its next probe is due.
    next_probe: Instant,
    /// The probe in flight: its xid and when it went.
    probe: Option<(u32, Instant)>,
}

/// Runs the soak; `progress` gets each sample as it is taken.
pub fn run_soak(
    cfg: &SoakConfig,
    progress: &mut dyn FnMut(&SoakSample),
) -> std::io::Result<SoakReport> {
    if cfg.switches == 0 {
        return Err(std::io::Error::other("at least one switch"));
    }
    let behaviour = Behaviour {
        version: cfg.version,
        window: 1,
        macs: 1,
        counting: Counting::Cbench,
        buffered: false,
        record_latency: false,
        response_timeout: Duration::from_secs(1),
        settle: Duration::from_millis(200),
        ports: 4,
        wired: false,
    };
    let first = cfg.first_dpid.max(1);
    let source = |dpid: u64| {
        (cfg.source_addrs > 0).then(|| source_addr((dpid - first) as usize, cfg.source_addrs))
    };
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(4096);
    let start = Instant::now();
    let mut slots = Vec::with_capacity(cfg.switches);
    for i in 0..cfg.switches {
        let dpid = first + i as u64;
        let mut stream = connect_from(cfg.addr, source(dpid))?;
        let _ = stream.set_nodelay(true);
        poll.registry().register(
            &mut stream,
            Token(i),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        // Probes spread evenly over the interval.
        let offset = cfg.probe_interval.mul_f64(i as f64 / cfg.switches as f64);
        slots.push(Slot {
            sw: Switch::new(dpid, stream, behaviour),
            since: start,
            rejoining: false,
            retry_at: None,
            attempts: 1,
            next_probe: start + offset,
            probe: None,
        });
    }
    let mut retries = 0u64;
    let mut answered = 0u64;
    let mut xid = PROBE_XID;
    // The first connections.
    let connect_deadline = start + cfg.connect_timeout;
    while Instant::now() < connect_deadline && slots.iter().any(|s| s.sw.state != State::Ready) {
        turn(
            &mut poll,
            &mut events,
            &mut slots,
            None,
            (&mut retries, &mut answered),
            cfg,
            &source,
            behaviour,
        )?;
    }
    let first_connect_ms = start.elapsed().as_secs_f64() * 1000.0;
    let never_ready = slots.iter().filter(|s| s.sw.state != State::Ready).count();

    // The run.
    let begin = Instant::now();
    let end = begin + cfg.duration;
    let churn_every = if cfg.churn_per_minute > 0.0 {
        Some(Duration::from_secs_f64(
            60.0 / (cfg.churn_per_minute * cfg.switches as f64),
        ))
    } else {
        None
    };
    let mut next_churn = churn_every.map(|d| begin + d);
    let mut churned = 0u64;
    // Churned in turn, a stride apart, so that every switch churns before any twice.
    let stride = coprime_stride(cfg.switches);
    let mut churn_index = 0usize;
    let mut next_sample = begin + cfg.sample_interval;
    let mut samples = Vec::new();
    let mut rejoins: Vec<f64> = Vec::new();
    let mut answered_before = answered;
    for s in &mut slots {
        s.next_probe = s.next_probe.max(begin);
    }
    loop {
        let now = Instant::now();
        // Churn what is due: close and connect again at once.
        while let Some(due) = next_churn {
            if now < due {
                break;
            }
            let i = churn_index % cfg.switches;
            churn_index = churn_index.wrapping_add(stride);
            let s = &mut slots[i];
            let _ = poll.registry().deregister(s.sw.stream());
            let dpid = s.sw.dpid;
            match connect_from(cfg.addr, source(dpid)) {
                Ok(mut stream) => {
                    let _ = stream.set_nodelay(true);
                    poll.registry().register(
                        &mut stream,
                        Token(i),
                        Interest::READABLE | Interest::WRITABLE,
                    )?;
                    s.sw = Switch::new(dpid, stream, behaviour);
                    s.retry_at = None;
                }
                Err(_) => s.retry_at = Some(now + backoff(1, dpid)),
            }
            s.since = now;
            s.rejoining = true;
            s.attempts = 1;
            s.probe = None;
            churned += 1;
            next_churn = Some(due + churn_every.unwrap_or_default());
        }
        turn(
            &mut poll,
            &mut events,
            &mut slots,
            Some(&mut xid),
            (&mut retries, &mut answered),
            cfg,
            &source,
            behaviour,
        )?;
        let now = Instant::now();
        for s in &mut slots {
            if s.rejoining && s.sw.state == State::Ready {
                s.rejoining = false;
                rejoins.push(now.duration_since(s.since).as_secs_f64() * 1000.0);
            }
        }
        if now >= next_sample || now >= end {
            let sample = take_sample(
                &slots,
                now.duration_since(begin),
                now,
                cfg,
                churned,
                &mut rejoins,
                answered - answered_before,
            );
            answered_before = answered;
            progress(&sample);
            samples.push(sample);
            next_sample += cfg.sample_interval;
            if now >= end {
                break;
            }
        }
    }
    let verdict = judge(cfg, &samples, never_ready, &slots);
    Ok(SoakReport {
        switches: cfg.switches,
        source_addrs: cfg.source_addrs,
        duration_s: cfg.duration.as_secs_f64(),
        churn_per_minute: cfg.churn_per_minute,
        probe_interval_s: cfg.probe_interval.as_secs_f64(),
        first_connect_ms,
        retries,
        samples,
        verdict,
    })
}

/// A step through the switches: coprime with `n`, near the golden ratio of it, so that
/// consecutive churns land far apart (different addresses, different workers).
fn coprime_stride(n: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    if n <= 2 {
        return 1;
    }
    let mut s = ((n as f64) * 0.618) as usize;
    while gcd(s, n) != 1 {
        s += 1;
    }
    s
}

/// One poll and a turn of every switch: events, handshakes, probes, retries.
#[allow(clippy::too_many_arguments)]
fn turn(
    poll: &mut Poll,
    events: &mut Events,
    slots: &mut [Slot],
    mut probing: Option<&mut u32>,
    (retries, answered): (&mut u64, &mut u64),
    cfg: &SoakConfig,
    source: &dyn Fn(u64) -> Option<std::net::IpAddr>,
    behaviour: Behaviour,
) -> std::io::Result<()> {
    match poll.poll(events, Some(Duration::from_millis(5))) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
        Err(e) => return Err(e),
    }
    for ev in events.iter() {
        if let Some(s) = slots.get_mut(ev.token().0) {
            if ev.is_read_closed() || ev.is_error() {
                s.sw.read_closed = true;
            }
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                s.sw.readable = true;
            }
            if ev.is_writable() || ev.is_write_closed() {
                s.sw.writable = true;
            }
        }
    }
    let now = Instant::now();
    for (i, s) in slots.iter_mut().enumerate() {
        if let Some(xid) = probing.as_deref_mut() {
            if s.sw.state == State::Ready && now >= s.next_probe && s.probe.is_none() {
                *xid = xid.wrapping_add(1).max(PROBE_XID);
                s.sw.echo(*xid);
                s.probe = Some((*xid, now));
                s.next_probe = now + cfg.probe_interval;
            }
        }
        if s.sw.readable || s.sw.wants_write() || s.sw.state == State::Connecting {
            s.sw.turn(Phase::Connect, false);
        }
        if let Some((x, _)) = s.probe {
            if s.sw.last_echo_reply == Some(x) {
                s.probe = None;
                *answered += 1;
            }
        }
        // Refused (closed or reset before the controller's HELLO): again after a
        // backoff. Closed later (a controller that hung up on a ready switch): connect
        // again at once, which the samples then show as unserved for a while.
        if s.sw.state == State::Closed {
            match s.retry_at {
                None => {
                    let wait = if s.sw.heard_hello() {
                        Duration::ZERO
                    } else {
                        backoff(s.attempts, s.sw.dpid)
                    };
                    s.retry_at = Some(now + wait);
                }
                Some(at) if now >= at => {
                    *retries += 1;
                    s.attempts += 1;
                    let _ = poll.registry().deregister(s.sw.stream());
                    let dpid = s.sw.dpid;
                    let fresh = connect_from(cfg.addr, source(dpid)).and_then(|mut st| {
                        let _ = st.set_nodelay(true);
                        poll.registry().register(
                            &mut st,
                            Token(i),
                            Interest::READABLE | Interest::WRITABLE,
                        )?;
                        Ok(st)
                    });
                    match fresh {
                        Ok(st) => {
                            s.sw = Switch::new(dpid, st, behaviour);
                            s.retry_at = None;
                            s.probe = None;
                        }
                        Err(_) => s.retry_at = Some(now + backoff(s.attempts, dpid)),
                    }
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// The state of the switches now, and of the controller's process.
fn take_sample(
    slots: &[Slot],
    at: Duration,
    now: Instant,
    cfg: &SoakConfig,
    churned: u64,
    rejoins: &mut Vec<f64>,
    probes_answered: u64,
) -> SoakSample {
    let ready = slots.iter().filter(|s| s.sw.state == State::Ready).count();
    let unserved = slots
        .iter()
        .filter(|s| match s.sw.state {
            State::Ready => s
                .probe
                .is_some_and(|(_, sent)| now.duration_since(sent) > cfg.probe_interval),
            _ => now.duration_since(s.since) > cfg.probe_interval,
        })
        .count();
    rejoins.sort_by(f64::total_cmp);
    let p50 = (!rejoins.is_empty()).then(|| rejoins[rejoins.len() / 2]);
    let max = rejoins.last().copied();
    rejoins.clear();
    SoakSample {
        at_s: at.as_secs_f64(),
        ready,
        connecting: slots.len() - ready,
        unserved,
        churned,
        rejoin_p50_ms: p50,
        rejoin_max_ms: max,
        probes_answered,
        process: cfg.pid.and_then(ProcessSample::read),
    }
}

/// The verdict (see the module doc).
fn judge(
    cfg: &SoakConfig,
    samples: &[SoakSample],
    never_ready: usize,
    slots: &[Slot],
) -> SoakVerdict {
    let max_unserved = samples.iter().map(|s| s.unserved).max().unwrap_or(0);
    let not_ready_at_end = slots.iter().filter(|s| s.sw.state != State::Ready).count();
    let mut failures = Vec::new();
    if never_ready > 0 {
        failures.push(format!("{never_ready} switches never got ready"));
    }
    if max_unserved > 0 {
        failures.push(format!(
            "up to {max_unserved} switches unserved in a sample"
        ));
    }
    // A switch churned in the last moments may still be on its way back.
    let churn_in_flight = (cfg.churn_per_minute * cfg.switches as f64 / 60.0 * 2.0).ceil() as usize;
    if not_ready_at_end > churn_in_flight {
        failures.push(format!("{not_ready_at_end} switches not ready at the end"));
    }
    let after = samples
        .iter()
        .find(|s| s.at_s >= cfg.warmup.as_secs_f64())
        .and_then(|s| s.process);
    let last = samples.last().and_then(|s| s.process);
    let (mut rss_growth, mut flat, mut fds, mut threads) = (None, None, None, None);
    if let (Some(a), Some(b)) = (after, last) {
        let growth = b.rss_kib as f64 / a.rss_kib.max(1) as f64 - 1.0;
        rss_growth = Some(growth);
        fds = Some((a.fds, b.fds));
        threads = Some((a.threads, b.threads));
        let mut ok = true;
        if growth > cfg.max_growth {
            ok = false;
            failures.push(format!(
                "resident memory grew {:.1}% after the warm-up ({} to {} KiB; at most {:.1}%)",
                growth * 100.0,
                a.rss_kib,
                b.rss_kib,
                cfg.max_growth * 100.0
            ));
        }
        if b.fds > a.fds + churn_in_flight as u64 {
            ok = false;
            failures.push(format!("file descriptors grew from {} to {}", a.fds, b.fds));
        }
        if b.threads > a.threads {
            ok = false;
            failures.push(format!("threads grew from {} to {}", a.threads, b.threads));
        }
        flat = Some(ok);
    }
    SoakVerdict {
        never_ready,
        max_unserved,
        not_ready_at_end,
        served: never_ready == 0 && max_unserved == 0 && not_ready_at_end <= churn_in_flight,
        rss_after_warmup_kib: after.map(|p| p.rss_kib),
        rss_end_kib: last.map(|p| p.rss_kib),
        rss_growth,
        fds,
        threads,
        flat,
        failures,
    }
}

impl SoakReport {
    /// Whether the verdict passes.
    pub fn passed(&self) -> bool {
        self.verdict.failures.is_empty()
    }

    /// The samples as a table, then the verdict.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{} switches from {} addresses, {:.0} s, {:.0}% churn per minute, a probe every {:.0} s; \
             all first ready in {:.0} ms ({} retries)",
            self.switches,
            self.source_addrs.max(1),
            self.duration_s,
            self.churn_per_minute * 100.0,
            self.probe_interval_s,
            self.first_connect_ms,
            self.retries
        );
        let _ = writeln!(
            o,
            "{:>8} {:>7} {:>6} {:>9} {:>8} {:>14} {:>9} {:>10} {:>6} {:>7}",
            "t (s)",
            "ready",
            "conn.",
            "unserved",
            "churned",
            "rejoin p50/max",
            "probes",
            "RSS (KiB)",
            "fds",
            "threads"
        );
        for s in &self.samples {
            let rejoin = match (s.rejoin_p50_ms, s.rejoin_max_ms) {
                (Some(a), Some(b)) => format!("{a:.0}/{b:.0} ms"),
                _ => "-".into(),
            };
            let (rss, fds, th) = match s.process {
                Some(p) => (
                    p.rss_kib.to_string(),
                    p.fds.to_string(),
                    p.threads.to_string(),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                o,
                "{:>8.0} {:>7} {:>6} {:>9} {:>8} {:>14} {:>9} {:>10} {:>6} {:>7}",
                s.at_s,
                s.ready,
                s.connecting,
                s.unserved,
                s.churned,
                rejoin,
                s.probes_answered,
                rss,
                fds,
                th
            );
        }
        let v = &self.verdict;
        if let Some(g) = v.rss_growth {
            let _ = writeln!(
                o,
                "resident memory after the warm-up {} KiB, at the end {} KiB: {:+.2}%",
                v.rss_after_warmup_kib.unwrap_or(0),
                v.rss_end_kib.unwrap_or(0),
                g * 100.0
            );
        }
        if v.failures.is_empty() {
            let _ = writeln!(
                o,
                "verdict: every switch served; the controller's footprint flat"
            );
        } else {
            for f in &v.failures {
                let _ = writeln!(o, "verdict: FAILED: {f}");
            }
        }
        o
    }

    /// Resident memory, and switches ready, over time, as `DIR/soak.svg`.
    pub fn plot(&self, dir: &Path) -> std::io::Result<std::path::PathBuf> {
        let rss: Vec<Point> = self
            .samples
            .iter()
            .filter_map(|s| {
                s.process.map(|p| Point {
                    x: s.at_s / 60.0,
                    y: p.rss_kib as f64 / 1024.0,
                    lo: None,
                    hi: None,
                })
            })
            .collect();
        Plot {
            name: "soak".into(),
            title: format!(
                "{} switches, {:.0}% churn per minute: the controller's resident memory",
                self.switches,
                self.churn_per_minute * 100.0
            ),
            x_label: "minutes".into(),
            y_label: "MiB".into(),
            log_x: false,
            log_y: false,
            series: vec![Series {
                name: "resident memory".into(),
                points: rss,
            }],
        }
        .write_svg(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_churn_stride_visits_every_switch_before_any_twice() {
        for n in [1usize, 2, 3, 10, 100, 1000, 10_000] {
            let s = coprime_stride(n);
            let mut seen = vec![false; n];
            let mut i = 0;
            for _ in 0..n {
                assert!(!seen[i % n], "n {n} stride {s}");
                seen[i % n] = true;
                i += s;
            }
        }
    }

    #[test]
    fn this_process_can_be_sampled() {
        let p = ProcessSample::read(std::process::id()).unwrap();
        assert!(p.rss_kib > 0 && p.fds > 2 && p.threads >= 1, "{p:?}");
        assert!(ProcessSample::read(u32::MAX).is_none());
    }
}
