//! Checking the probe's timestamp path against known delays (this kernel has no netem).
//!
//! * [`VethPair`]: a direct veth pair in the root namespace; the probe sends on one end
//!   and captures on the other. What it measures is the floor of the path: the kernel's
//!   own cost from the transmit stamp (in `veth_xmit`) to the receive stamp.
//! * [`DelayLine`]: the test's own forwarder, in a network namespace of its own on the
//!   probe path: `pbd-TAG-a` (root) ↔ `in0` (namespace) → forwarder → `out0` (namespace) ↔
//!   `pbd-TAG-b` (root) (the namespace ends are `in0` and `out0`). The forwarder thread enters the namespace (`setns`, for itself
//!   only), captures on `in0` with kernel receive stamps, holds each frame until its receive
//!   stamp plus the hold, then sends it on `out0`. A probe stream sent on `pbd-TAG-a` and
//!   captured on `pbd-TAG-b` must measure the hold plus the floor.
//! * [`calibrate`] runs both and reports the error against the known hold.
//!
//! Both clean up when dropped (namespace and veths deleted).

use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::probe::{
    self, CaptureOptions, FrameSpec, Iface, ProbeError, Records, Session, Spread, StreamSpec,
    TsSource,
};

fn ip(args: &[&str]) -> Result<(), ProbeError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| ProbeError::Io {
            context: format!("run ip {}", args.join(" ")),
            source: e,
        })?;
    if !out.status.success() {
        return Err(ProbeError::Invalid(format!(
            "ip {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

fn ip_quiet(args: &[&str]) {
    let _ = Command::new("ip").args(args).output();
}

fn no_ipv6(iface: &str) {
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{iface}/disable_ipv6"), "1");
}

fn check_tag(tag: &str) -> Result<(), ProbeError> {
    let ok = !tag.is_empty()
        && tag.len() <= 6
        && tag
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(ProbeError::Invalid(format!(
            "bad tag {tag:?}: 1 to 6 lowercase letters or digits (it names interfaces)"
        )))
    }
}

/// A veth pair in the root namespace, deleted when dropped.
pub struct VethPair {
    /// One end (send here).
    pub a: String,
    /// The other end (capture here).
    pub b: String,
}

impl VethPair {
    /// Makes `pbv-TAG-a` ↔ `pbv-TAG-b`, both up, IPv6 off.
    pub fn create(tag: &str) -> Result<VethPair, ProbeError> {
        check_tag(tag)?;
        let p = VethPair {
            a: format!("pbv-{tag}-a"),
            b: format!("pbv-{tag}-b"),
        };
        ip(&["link", "add", &p.a, "type", "veth", "peer", "name", &p.b])?;
        for i in [&p.a, &p.b] {
            no_ipv6(i);
            ip(&["link", "set", i, "up"])?;
        }
        Ok(p)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        ip_quiet(&["link", "del", &self.a]);
    }
}

/// What the forwarder did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct ForwarderStats {
    /// Frames forwarded.
    pub forwarded: u64,
    /// Frames sent later than due by more than 100 µs (the forwarder fell behind).
    pub late: u64,
    /// Frames whose receive had no kernel stamp (held from the user-space time instead).
    pub unstamped: u64,
}

/// The test's own delay forwarder in its own namespace (see the module doc). Dropping it
/// stops the forwarder and deletes the namespace and the veths.
pub struct DelayLine {
    /// `pbd-TAG`.
    netns: String,
    /// The root-namespace end to send on.
    tx: String,
    /// The root-namespace end to capture on.
    rx: String,
    /// Ends the forwarder thread.
    stop: Arc<AtomicBool>,
    /// The forwarder thread.
    thread: Option<JoinHandle<Result<ForwarderStats, ProbeError>>>,
    /// Frames forwarded so far (live).
    forwarded: Arc<AtomicU64>,
}

impl DelayLine {
    /// Builds the namespace `pbd-TAG`, the veths `pbd-TAG-a`/`pbd-TAG-b` and starts the
    /// forwarder holding each frame for `hold`.
    pub fn create(tag: &str, hold: Duration) -> Result<DelayLine, ProbeError> {
        check_tag(tag)?;
        let netns = format!("pbd-{tag}");
        let mut line = DelayLine {
            tx: format!("pbd-{tag}-a"),
            rx: format!("pbd-{tag}-b"),
            netns,
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
            forwarded: Arc::new(AtomicU64::new(0)),
        };
        // From here on Drop removes whatever was made.
        ip(&["netns", "add", &line.netns])?;
        ip(&[
            "link",
            "add",
            &line.tx,
            "type",
            "veth",
            "peer",
            "name",
            "in0",
            "netns",
            &line.netns,
        ])?;
        ip(&[
            "link",
            "add",
            &line.rx,
            "type",
            "veth",
            "peer",
            "name",
            "out0",
            "netns",
            &line.netns,
        ])?;
        for i in [&line.tx, &line.rx] {
            no_ipv6(i);
            ip(&["link", "set", i, "up"])?;
        }
        for i in ["in0", "out0", "lo"] {
            ip(&["-n", &line.netns, "link", "set", i, "up"])?;
        }
        ip_quiet(&[
            "netns",
            "exec",
            &line.netns,
            "sysctl",
            "-qw",
            "net.ipv6.conf.all.disable_ipv6=1",
        ]);
        let ns_path = format!("/run/netns/{}", line.netns);
        let ns = std::fs::File::open(&ns_path).map_err(|e| ProbeError::Io {
            context: format!("open {ns_path}"),
            source: e,
        })?;
        let stop = line.stop.clone();
        let forwarded = line.forwarded.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("delay-forwarder".into())
            .spawn(move || {
                // SAFETY: setns on a namespace fd, for this thread only.
                if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    let e = ProbeError::Io {
                        context: "setns into the delay namespace".into(),
                        source: std::io::Error::last_os_error(),
                    };
                    let _ = ready_tx.send(Err(e.to_string()));
                    return Err(e);
                }
                forward(hold, &stop, &forwarded, ready_tx)
            })
            .map_err(|e| ProbeError::Io {
                context: "spawn the delay forwarder".into(),
                source: e,
            })?;
        line.thread = Some(thread);
        match ready_rx.recv_timeout(Duration::from_secs(5)) {
            Ok(Ok(())) => Ok(line),
            Ok(Err(e)) => Err(ProbeError::Invalid(format!("delay forwarder: {e}"))),
            Err(_) => Err(ProbeError::Invalid(
                "delay forwarder did not start in 5 s".into(),
            )),
        }
    }

    /// The interface to send probes on.
    pub fn tx_iface(&self) -> &str {
        &self.tx
    }

    /// The interface to capture the delayed probes on.
    pub fn rx_iface(&self) -> &str {
        &self.rx
    }

    /// Frames forwarded so far.
    pub fn forwarded(&self) -> u64 {
        self.forwarded.load(Ordering::Relaxed)
    }

    /// Stops the forwarder and removes everything; returns what it did.
    pub fn close(mut self) -> Result<ForwarderStats, ProbeError> {
        self.stop.store(true, Ordering::SeqCst);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(ProbeError::Panicked("delay forwarder".into())),
            None => Ok(ForwarderStats::default()),
        }
    }
}

impl Drop for DelayLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Deleting the namespace deletes its veth ends, and so the pairs.
        ip_quiet(&["netns", "del", &self.netns]);
        ip_quiet(&["link", "del", &self.tx]);
        ip_quiet(&["link", "del", &self.rx]);
    }
}

/// The forwarder, inside the namespace: capture on `in0`, hold, send on `out0`.
fn forward(
    hold: Duration,
    stop: &AtomicBool,
    forwarded: &AtomicU64,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) -> Result<ForwarderStats, ProbeError> {
    let opened = (|| -> Result<_, ProbeError> {
        let capture = probe::Capture::open(
            &["in0"],
            CaptureOptions {
                keep_bytes: usize::MAX,
                linger: Duration::ZERO,
            },
        )?;
        let sender = probe::Sender::open_unstamped("out0")?;
        Ok((capture, sender))
    })();
    let (mut capture, mut sender) = match opened {
        Ok(x) => {
            let _ = ready.send(Ok(()));
            x
        }
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return Err(e);
        }
    };
    // SAFETY: prctl with plain integers, for this thread only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
    let hold_ns = hold.as_nanos() as i64;
    let mut stats = ForwarderStats::default();
    let mut queue: VecDeque<(i64, Vec<u8>)> = VecDeque::new();
    let mut got = Vec::new();
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut buf = vec![0u8; 9216];
    while !stop.load(Ordering::Relaxed) {
        got.clear();
        capture.poll_into(&mut got, &mut buf);
        for r in got.drain(..) {
            if r.source == TsSource::User {
                stats.unstamped += 1;
            }
            if let Some(b) = r.bytes {
                queue.push_back((r.rx_ns + hold_ns, b));
            }
        }
        let now = probe::now_ns();
        while queue.front().is_some_and(|(due, _)| *due <= now) && out.len() < 64 {
            let (due, frame) = queue.pop_front().expect("front exists");
            if now - due > 100_000 {
                stats.late += 1;
            }
            out.push(frame);
        }
        if !out.is_empty() {
            // Frames the kernel did not take (queue full) are dropped, as a link would.
            sender.send_raw_many(&mut out)?;
            stats.forwarded += out.len() as u64;
            forwarded.fetch_add(out.len() as u64, Ordering::Relaxed);
            out.clear();
            continue;
        }
        // Sleep until the next frame is due, at most 200 µs (new arrivals are polled);
        // the last 30 µs are spun, for precision.
        let wait = queue
            .front()
            .map(|(due, _)| due - probe::now_ns())
            .unwrap_or(200_000)
            .clamp(0, 200_000);
        if wait > 30_000 {
            std::thread::sleep(Duration::from_nanos((wait - 30_000) as u64));
        } else {
            std::hint::spin_loop();
        }
    }
    Ok(stats)
}

/// The result of [`calibrate`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct Calibration {
    /// The forwarder's hold, ns.
    pub hold_ns: i64,
    /// The probe rate used, frames per second.
    pub rate_pps: f64,
    /// One-way delay through the forwarder, ns.
    pub delayed: Spread,
    /// Its median's error against `hold + floor median`, percent of the hold.
    pub error_pct: f64,
    /// Frames lost through the forwarder.
    pub delayed_lost: u64,
    /// One-way delay across a direct veth pair: the floor, ns.
    pub floor: Spread,
    /// Frames lost on the direct pair.
    pub floor_lost: u64,
    /// The clock of the transmit stamps.
    pub tx_source: TsSource,
    /// The clock of the receive stamps.
    pub rx_source: TsSource,
    /// Fraction of frames with a kernel transmit stamp.
    pub tx_stamped: f64,
    /// What the forwarder did.
    pub forwarder: ForwarderStats,
}

fn stream(from: &str, rate: f64, duration: Duration) -> Result<StreamSpec, ProbeError> {
    let i = Iface::lookup(from)?;
    let spec = FrameSpec::udp(
        i.mac,
        [0x02, 0, 0, 0, 0, 0x02],
        [10, 255, 0, 1].into(),
        [10, 255, 0, 2].into(),
    );
    Ok(StreamSpec::new(1, vec![spec]).rate(rate).duration(duration))
}

fn run_through(
    tx: &str,
    rx: &str,
    rate: f64,
    duration: Duration,
) -> Result<(Records, Spread), ProbeError> {
    let s = Session::start(
        vec![(tx.to_string(), stream(tx, rate, duration)?)],
        &[rx],
        CaptureOptions::default(),
    )?;
    let r = s.wait()?;
    let spread = Spread::of(&r.delays_ns(1, None))
        .ok_or_else(|| ProbeError::Invalid(format!("no probe frame arrived on {rx}")))?;
    Ok((r, spread))
}

/// Measures the floor on a direct veth pair and the delay through a [`DelayLine`] holding
/// `hold`, each with a stream of `rate` frames per second for `duration`. `tag` names the
/// interfaces and the namespace (1 to 6 lowercase letters or digits; unique per caller).
pub fn calibrate(
    tag: &str,
    hold: Duration,
    rate: f64,
    duration: Duration,
) -> Result<Calibration, ProbeError> {
    let pair = VethPair::create(tag)?;
    let (floor_rec, floor) = run_through(&pair.a, &pair.b, rate, duration)?;
    drop(pair);
    let line = DelayLine::create(tag, hold)?;
    let (rec, delayed) = run_through(line.tx_iface(), line.rx_iface(), rate, duration)?;
    let forwarder = line.close()?;
    let hold_ns = hold.as_nanos() as i64;
    let error_pct =
        (delayed.median - floor.median - hold_ns) as f64 / hold_ns.max(1) as f64 * 100.0;
    let rx_source = rec.rx.first().map(|r| r.source).unwrap_or(TsSource::User);
    Ok(Calibration {
        hold_ns,
        rate_pps: rate,
        delayed,
        error_pct,
        delayed_lost: rec.lost(1),
        floor,
        floor_lost: floor_rec.lost(1),
        tx_source: rec.tx_source(),
        rx_source,
        tx_stamped: rec.tx_stamped_fraction(),
        forwarder,
    })
}
