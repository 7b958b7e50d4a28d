//! Test 2, flow insertion delay (the paper's §4.2, figures 3 and 4): for N flows
//! (exact or wildcard; added, or modified from an existing drop), the time from the first
//! FLOW_MOD to the BARRIER_REPLY, the transmission time of the FLOW_MODs, and the time
//! until the data plane forwards a probe on the last new flow. The paper's key finding
//! is checked on every run: does the barrier reply come before the flows are active?
//!
//! ## A run
//!
//! The table is emptied and a priority-0 drop installed (no table-miss PACKET_INs). For
//! `modify`, the N flows are installed first with no actions (drop) and a barrier. A
//! probe stream then starts on the ingress data port, its frames alternating between the
//! last flow and each flow in turn (templates `last, 0, last, 1, ...`), so that the last
//! flow is probed every `2 / rate` seconds and every flow every `2N / rate`. After a
//! short warm-up (probes dropped), the N FLOW_MODs (output to the egress data port) go
//! out in one write, then a BARRIER_REQUEST. The run ends when a probe of every flow has
//! come out of the egress port, or at the run timeout.
//!
//! `delete` is the other way round: N forwarding flows are deleted (DELETE_STRICT each)
//! while probed, and the times are until the data plane stops forwarding (no probe for
//! [`DELETE_QUIET`]): a switch whose barrier reply means "done" forwards nothing after it.
//!
//! Times are from the first FLOW_MOD handed to the kernel (`t0`):
//! * `barrier`: the BARRIER_REPLY read;
//! * `transmit`: the last FLOW_MOD byte handed to the kernel;
//! * `last flow`: the first probe of flow N-1 captured at the egress port (kernel stamp);
//!   its resolution is the probe spacing on that flow, `2 / rate`;
//! * `all flows`: the latest of the flows' first probes (resolution `2N / rate`).
//!
//! Flows are matched on the probe's headers: `exact` on every 1.0 field (ingress port,
//! Ethernet addresses and type, no VLAN, IP addresses, protocol and DSCP, UDP ports);
//! `wildcard` on the ingress port, the Ethernet type and the IP destination only. Flow
//! `i` is the probe to `10.B.0.0 + i`, with `B` different in every run
//! ([`FlowSet::for_run`]): Open vSwitch's datapath keeps forwarding with deleted flows for
//! a while (until its revalidator runs), and a run that reused the last run's addresses
//! would see its probes forwarded before its first FLOW_MOD (a run checks that none are).

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use openflow::model::{Action, FlowMod, FlowModCommand, Ipv4Prefix, Match, PortNo, Vlan};
use openflow::MacAddr;
use serde::Serialize;

use super::channel::{BarrierTiming, Channel, ChannelError, DataPort};
use super::probe::{
    self, Capture, CaptureOptions, FrameSpec, ProbeError, Records, RxRecord, Sender, Spread,
    StreamSpec, TxRecord,
};
use super::report::{ms, ms_spread, Plot, Point, Series, Table, TestOutput};

/// What went wrong in a test: on the channel, or with the probes.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    #[error(transparent)]
    Channel(#[from] ChannelError),
    #[error("probe: {0}")]
    Probe(#[from] ProbeError),
    #[error("{0}")]
    Setup(String),
}

/// The priority of the test flows; the drop-all under them is priority 0.
pub const FLOW_PRIORITY: u16 = 100;
/// The destination MAC of every probe frame.
pub const PROBE_DST_MAC: [u8; 6] = [0x02, 0x0f, 0x1a, 0x00, 0x00, 0x02];
/// The source IP of every probe frame; flow `i` goes to `FLOW_DST_BASE + i`.
pub const PROBE_SRC_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub const FLOW_DST_BASE: u32 = 0x0a01_0000;

/// How flows match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    Exact,
    Wildcard,
}

impl MatchKind {
    pub fn name(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Wildcard => "wildcard",
        }
    }
}

/// Whether the measured FLOW_MODs add new flows or modify existing ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Add,
    Modify,
    /// Remove forwarding flows: the times are until the data plane stops forwarding.
    Delete,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Modify => "modify",
            Op::Delete => "delete",
        }
    }
}

/// How long the data plane must stay quiet for a deletion to count as complete.
pub const DELETE_QUIET: Duration = Duration::from_millis(1000);

/// The probe frames and the flows for them, between an ingress and an egress data port.
#[derive(Debug, Clone)]
pub struct FlowSet {
    pub ingress: DataPort,
    pub egress: DataPort,
    /// The ingress interface's MAC (the probes' source).
    pub src_mac: [u8; 6],
}

impl FlowSet {
    pub fn new(ingress: &DataPort, egress: &DataPort) -> Result<FlowSet, TestError> {
        let iface = probe::Iface::lookup(&ingress.iface)?;
        Ok(FlowSet {
            ingress: ingress.clone(),
            egress: egress.clone(),
            src_mac: iface.mac,
        })
    }

    /// The flows of run `run`, in an address block of their own (`10.B.0.0/16`,
    /// B = 1 + run % 250; run 0 is this set's own block, [`FLOW_DST_BASE`]): a switch
    /// whose data path keeps forwarding with flows deleted a moment ago (Open vSwitch's
    /// datapath flow cache, until its revalidator runs) cannot forward this run's probes
    /// with the last run's flows.
    pub fn for_run(&self, run: u32) -> RunFlows<'_> {
        RunFlows {
            set: self,
            base: 0x0a00_0000 + ((1 + run % 250) << 16),
        }
    }

    /// The probe frame of flow `i` of the block at `base`.
    fn frame_in(&self, base: u32, i: usize) -> FrameSpec {
        FrameSpec::udp(
            self.src_mac,
            PROBE_DST_MAC,
            PROBE_SRC_IP,
            Ipv4Addr::from(base + i as u32),
        )
    }

    /// The probe frame of flow `i`.
    pub fn frame(&self, i: usize) -> FrameSpec {
        self.frame_in(FLOW_DST_BASE, i)
    }

    /// The match of flow `i`.
    pub fn matching(&self, i: usize, kind: MatchKind) -> Match {
        self.matching_in(FLOW_DST_BASE, i, kind)
    }

    fn matching_in(&self, base: u32, i: usize, kind: MatchKind) -> Match {
        let dst = Ipv4Prefix::exact(Ipv4Addr::from(base + i as u32));
        match kind {
            MatchKind::Wildcard => Match {
                in_port: Some(self.ingress.port_no),
                eth_type: Some(0x0800),
                ipv4_dst: Some(dst),
                ..Match::default()
            },
            MatchKind::Exact => Match {
                in_port: Some(self.ingress.port_no),
                eth_src: Some(MacAddr(self.src_mac)),
                eth_dst: Some(MacAddr(PROBE_DST_MAC)),
                eth_type: Some(0x0800),
                vlan: Some(Vlan::Untagged),
                ip_dscp: Some(0),
                ip_proto: Some(17),
                ipv4_src: Some(Ipv4Prefix::exact(PROBE_SRC_IP)),
                ipv4_dst: Some(dst),
                tp_src: Some(probe::DEFAULT_SRC_PORT),
                tp_dst: Some(probe::DEFAULT_DST_PORT),
                ..Match::default()
            },
        }
    }

    /// Output to the egress port.
    pub fn forward(&self) -> [Action; 1] {
        [Action::output(PortNo::Physical(self.egress.port_no))]
    }
}

/// The flows of one run: a [`FlowSet`]'s frames and matches in the run's address block
/// ([`FlowSet::for_run`]).
#[derive(Debug, Clone, Copy)]
pub struct RunFlows<'a> {
    pub set: &'a FlowSet,
    /// Flow `i` is the probe to `base + i`.
    pub base: u32,
}

impl RunFlows<'_> {
    pub fn frame(&self, i: usize) -> FrameSpec {
        self.set.frame_in(self.base, i)
    }

    pub fn matching(&self, i: usize, kind: MatchKind) -> Match {
        self.set.matching_in(self.base, i, kind)
    }

    pub fn forward(&self) -> [Action; 1] {
        self.set.forward()
    }
}

/// Empties the table and installs a priority-0 drop under everything, then a barrier.
pub fn reset_table(ch: &mut Channel) -> Result<BarrierTiming, ChannelError> {
    ch.delete_all_flows()?;
    let drop = FlowMod::add(Match::default(), &[]).priority(0);
    ch.send_flow_mods(&[drop])?;
    ch.barrier()
}

/// Installs flows `range` of the run `set` with `actions` (one write), then a barrier.
pub fn install(
    ch: &mut Channel,
    set: &RunFlows,
    range: std::ops::Range<usize>,
    kind: MatchKind,
    actions: &[Action],
) -> Result<BarrierTiming, ChannelError> {
    let fms: Vec<FlowMod> = range
        .map(|i| FlowMod::add(set.matching(i, kind), actions).priority(FLOW_PRIORITY))
        .collect();
    ch.send_flow_mods(&fms)?;
    ch.barrier()
}

/// A probe stream sent on one thread and captured on another while the caller works the
/// control channel; what is captured so far can be looked at any time.
pub struct LiveProbe {
    stop: Arc<AtomicBool>,
    cap_stop: Arc<AtomicBool>,
    sender: Option<JoinHandle<Result<Vec<TxRecord>, ProbeError>>>,
    capture: Option<JoinHandle<(Vec<String>, u64)>>,
    rx: Arc<Mutex<Vec<RxRecord>>>,
}

impl LiveProbe {
    /// Opens the capture on `rx_ifaces`, then starts sending `spec` on `tx_iface`.
    pub fn start(
        tx_iface: &str,
        spec: StreamSpec,
        rx_ifaces: &[&str],
    ) -> Result<LiveProbe, ProbeError> {
        LiveProbe::open(Some((tx_iface, spec)), rx_ifaces)
    }

    /// A capture alone (frames sent by someone else: PACKET_OUTs).
    pub fn capture_only(rx_ifaces: &[&str]) -> Result<LiveProbe, ProbeError> {
        LiveProbe::open(None, rx_ifaces)
    }

    fn open(tx: Option<(&str, StreamSpec)>, rx_ifaces: &[&str]) -> Result<LiveProbe, ProbeError> {
        let mut capture = Capture::open(
            rx_ifaces,
            CaptureOptions {
                keep_bytes: 0,
                linger: Duration::ZERO,
            },
        )?;
        let sender = match tx {
            Some((iface, spec)) => Some((Sender::open(iface)?, spec)),
            None => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let cap_stop = Arc::new(AtomicBool::new(false));
        let rx = Arc::new(Mutex::new(Vec::new()));
        let (rx2, cs) = (rx.clone(), cap_stop.clone());
        let capture = std::thread::Builder::new()
            .name("probe-capture".into())
            .spawn(move || {
                let mut buf = vec![0u8; 9216];
                let mut local = Vec::new();
                loop {
                    let stopping = cs.load(Ordering::Relaxed);
                    capture.poll_into(&mut local, &mut buf);
                    if !local.is_empty() {
                        rx2.lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .append(&mut local);
                    }
                    if stopping {
                        break;
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                (capture.ports(), capture.other_frames())
            })
            .map_err(|e| ProbeError::Io {
                context: "spawn capture thread".into(),
                source: e,
            })?;
        let s2 = stop.clone();
        let sender = match sender {
            Some((mut sender, spec)) => Some(
                std::thread::Builder::new()
                    .name("probe-send".into())
                    .spawn(move || sender.run(&spec, &s2))
                    .map_err(|e| ProbeError::Io {
                        context: "spawn sender thread".into(),
                        source: e,
                    })?,
            ),
            None => None,
        };
        Ok(LiveProbe {
            stop,
            cap_stop,
            sender,
            capture: Some(capture),
            rx,
        })
    }

    /// Runs `f` on what has been captured so far.
    pub fn with_rx<T>(&self, f: impl FnOnce(&[RxRecord]) -> T) -> T {
        f(&self.rx.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Stops the sender, captures `linger` more, and returns everything.
    pub fn finish(mut self, linger: Duration) -> Result<Records, ProbeError> {
        self.stop.store(true, Ordering::SeqCst);
        let tx = match self.sender.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(ProbeError::Panicked("probe sender".into())),
            None => Ok(Vec::new()),
        };
        std::thread::sleep(linger);
        self.cap_stop.store(true, Ordering::SeqCst);
        let (ports, other_frames) = self
            .capture
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let tx = tx?;
        let rx = std::mem::take(&mut *self.rx.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Records {
            ports,
            tx,
            rx,
            other_frames,
        })
    }
}

impl Drop for LiveProbe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.cap_stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.sender.take() {
            let _ = h.join();
        }
        if let Some(h) = self.capture.take() {
            let _ = h.join();
        }
    }
}

/// Parameters of test 2.
#[derive(Debug, Clone, Serialize)]
pub struct InsertConfig {
    /// Numbers of flows (the paper: 1 … 10,000).
    pub counts: Vec<usize>,
    pub kinds: Vec<MatchKind>,
    pub ops: Vec<Op>,
    /// Runs per point (the paper: 100).
    pub reps: usize,
    /// Probe frames per second (the paper: 10 Mb/s of 100-byte frames, ~12.5 kpps).
    pub probe_rate: f64,
    /// Longest a run may wait for the data plane.
    pub run_timeout: Duration,
}

impl Default for InsertConfig {
    fn default() -> InsertConfig {
        InsertConfig {
            counts: vec![1, 10, 100, 1000, 10000],
            kinds: vec![MatchKind::Exact, MatchKind::Wildcard],
            ops: vec![Op::Add, Op::Modify, Op::Delete],
            reps: 5,
            probe_rate: 10_000.0,
            run_timeout: Duration::from_secs(10),
        }
    }
}

/// One run, times in ns from the first FLOW_MOD.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct InsertRun {
    pub flows: usize,
    pub kind: MatchKind,
    pub op: Op,
    pub barrier_ns: i64,
    pub transmit_ns: i64,
    /// First probe of the last flow out of the egress port (`None`: never, in the timeout).
    pub last_flow_ns: Option<i64>,
    /// Latest first probe over all flows (`None`: some flow never forwarded).
    pub all_flows_ns: Option<i64>,
    /// Flows that forwarded a probe within the timeout.
    pub flows_active: usize,
    /// Probes of the new flows captured before the BARRIER_REPLY was read.
    pub probes_before_barrier: usize,
    /// Probes that show the BARRIER_REPLY ahead of the data path: adding or modifying,
    /// those sent after the reply was read that did not come out although a probe sent
    /// later did ([`lost_after`]); deleting, those sent after the reply that still came
    /// out. A switch whose reply means "in the data path" has none, whatever the probe
    /// rate; the order of the reply and the last flow's first probe
    /// ([`InsertRun::barrier_first`]) depends on the rate the probes sample at.
    pub barrier_violations: usize,
}

/// Probes of `stream` sent at or after `t_ns` that were not captured, among those sent
/// before the latest probe of the stream that was: the order a veth keeps means each
/// was dropped by the switch, not still in flight.
pub fn lost_after(records: &Records, stream: u32, t_ns: i64) -> usize {
    let out: std::collections::HashSet<u64> = records
        .rx
        .iter()
        .filter(|r| r.stream == stream)
        .map(|r| r.seq)
        .collect();
    let Some(latest) = records
        .rx
        .iter()
        .filter(|r| r.stream == stream)
        .map(|r| r.user_tx_ns)
        .max()
    else {
        return 0;
    };
    records
        .tx
        .iter()
        .filter(|t| t.stream == stream && t.user_ns >= t_ns && t.user_ns < latest)
        .filter(|t| !out.contains(&t.seq))
        .count()
}

impl InsertRun {
    /// The paper's finding: the barrier reply came before the last flow forwarded.
    pub fn barrier_first(&self) -> Option<bool> {
        self.last_flow_ns.map(|d| self.barrier_ns < d)
    }
}

/// Median and percentiles of a point.
#[derive(Debug, Clone, Serialize)]
pub struct InsertPoint {
    pub flows: usize,
    pub kind: MatchKind,
    pub op: Op,
    pub runs: usize,
    pub barrier: Option<Spread>,
    pub transmit: Option<Spread>,
    pub last_flow: Option<Spread>,
    pub all_flows: Option<Spread>,
    /// Runs where the barrier reply came before the last flow forwarded.
    pub barrier_first: usize,
    /// Runs where the last flow never forwarded within the timeout.
    pub never_active: usize,
}

/// One run of `n` flows.
pub fn run_once(
    ch: &mut Channel,
    set: &FlowSet,
    n: usize,
    kind: MatchKind,
    op: Op,
    cfg: &InsertConfig,
    stream_id: u32,
) -> Result<InsertRun, TestError> {
    assert!(n > 0);
    let set = &set.for_run(stream_id);
    reset_table(ch)?;
    let forward = set.forward();
    match op {
        Op::Add => {}
        Op::Modify => {
            install(ch, set, 0..n, kind, &[])?;
        }
        Op::Delete => {
            install(ch, set, 0..n, kind, &forward)?;
        }
    }
    let fms: Vec<FlowMod> = (0..n)
        .map(|i| {
            let mut fm = FlowMod::add(set.matching(i, kind), &forward).priority(FLOW_PRIORITY);
            match op {
                Op::Add => {}
                Op::Modify => fm.command = FlowModCommand::ModifyStrict,
                Op::Delete => {
                    fm.command = FlowModCommand::DeleteStrict;
                    fm.actions = &[];
                }
            }
            fm
        })
        .collect();
    // Templates: last, 0, last, 1, ... (one template for a single flow).
    let templates: Vec<FrameSpec> = if n == 1 {
        vec![set.frame(0)]
    } else {
        (0..n)
            .flat_map(|i| [set.frame(n - 1), set.frame(i)])
            .collect()
    };
    let flow_of = |t: u32| -> usize {
        if n == 1 || t % 2 == 0 {
            n - 1
        } else {
            (t / 2) as usize
        }
    };
    let spec = StreamSpec::new(stream_id, templates)
        .rate(cfg.probe_rate)
        .duration(cfg.run_timeout + Duration::from_secs(1));
    let live = LiveProbe::start(
        &set.set.ingress.iface,
        spec,
        &[set.set.egress.iface.as_str()],
    )?;
    // Warm-up: the stream is flowing (and dropped, but for deletions) before the first
    // FLOW_MOD.
    std::thread::sleep(Duration::from_millis(if op == Op::Delete {
        100
    } else {
        30
    }));
    let early = live.with_rx(|rx| rx.iter().filter(|r| r.stream == stream_id).count());
    if op == Op::Delete {
        return finish_delete(ch, live, &fms, n, kind, cfg, stream_id, early, &flow_of);
    }
    if early > 0 {
        return Err(TestError::Setup(format!(
            "{early} probes came out of {} before any flow was installed: \
             is another controller or a NORMAL flow forwarding them?",
            set.set.egress.name
        )));
    }
    let sent = ch.send_flow_mods(&fms)?;
    let (bxid, _) = ch.send_barrier()?;
    let deadline = Instant::now() + cfg.run_timeout;
    let reply_ns = ch.wait_barrier(bxid, deadline)? as i64;
    let t0 = sent.first_ns as i64;
    // Wait for every flow to forward (or the timeout).
    let mut first = vec![i64::MAX; n];
    let mut seen = 0usize;
    let mut scanned = 0usize;
    loop {
        live.with_rx(|rx| {
            for r in &rx[scanned..] {
                if r.stream != stream_id {
                    continue;
                }
                let f = flow_of(r.template);
                if first[f] == i64::MAX {
                    seen += 1;
                }
                first[f] = first[f].min(r.rx_ns);
            }
            scanned = rx.len();
        });
        if seen == n || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let records = live.finish(Duration::from_millis(5))?;
    let probes_before_barrier = records
        .rx
        .iter()
        .filter(|r| r.stream == stream_id && r.rx_ns < reply_ns)
        .count();
    let last = first[n - 1];
    Ok(InsertRun {
        flows: n,
        kind,
        op,
        barrier_ns: reply_ns - t0,
        transmit_ns: sent.last_ns as i64 - t0,
        last_flow_ns: (last != i64::MAX).then(|| last - t0),
        all_flows_ns: (seen == n).then(|| first.iter().max().copied().unwrap_or(0) - t0),
        flows_active: seen,
        probes_before_barrier,
        barrier_violations: lost_after(&records, stream_id, reply_ns),
    })
}

/// The rest of a deletion run: the FLOW_MODs, the barrier, then the probes until the
/// data plane has been quiet for [`DELETE_QUIET`]. `last_flow_ns` is the last probe of
/// the last flow forwarded (0 when none was after the first FLOW_MOD), `all_flows_ns`
/// the last probe of any flow.
#[allow(clippy::too_many_arguments)]
fn finish_delete(
    ch: &mut Channel,
    live: LiveProbe,
    fms: &[FlowMod],
    n: usize,
    kind: MatchKind,
    cfg: &InsertConfig,
    stream_id: u32,
    forwarded_before: usize,
    flow_of: &dyn Fn(u32) -> usize,
) -> Result<InsertRun, TestError> {
    if forwarded_before == 0 {
        return Err(TestError::Setup(format!(
            "no probe came out of the egress port in the 100 ms before the deletion of {n} \
             forwarding flows"
        )));
    }
    let sent = ch.send_flow_mods(fms)?;
    let (bxid, _) = ch.send_barrier()?;
    let deadline = Instant::now() + cfg.run_timeout;
    let reply_ns = ch.wait_barrier(bxid, deadline)? as i64;
    let t0 = sent.first_ns as i64;
    let mut count = 0;
    let mut last_change = Instant::now();
    loop {
        let c = live.with_rx(|rx| rx.iter().filter(|r| r.stream == stream_id).count());
        if c != count {
            count = c;
            last_change = Instant::now();
        }
        if last_change.elapsed() >= DELETE_QUIET || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let stopped = last_change.elapsed() >= DELETE_QUIET;
    let records = live.finish(Duration::from_millis(5))?;
    let mut last = vec![i64::MIN; n];
    for r in records.rx.iter().filter(|r| r.stream == stream_id) {
        let f = flow_of(r.template);
        last[f] = last[f].max(r.rx_ns);
    }
    let after: Vec<&RxRecord> = records
        .rx
        .iter()
        .filter(|r| r.stream == stream_id && r.rx_ns >= t0)
        .collect();
    let still = (0..n).filter(|&f| last[f] >= t0).count();
    let rel = |t: i64| (t - t0).max(0);
    Ok(InsertRun {
        flows: n,
        kind,
        op: Op::Delete,
        barrier_ns: reply_ns - t0,
        transmit_ns: sent.last_ns as i64 - t0,
        last_flow_ns: stopped.then(|| rel(last[n - 1])),
        all_flows_ns: stopped.then(|| rel(last.iter().copied().max().unwrap_or(t0))),
        flows_active: still,
        probes_before_barrier: after.iter().filter(|r| r.rx_ns >= reply_ns).count(),
        barrier_violations: after.iter().filter(|r| r.user_tx_ns >= reply_ns).count(),
    })
}

/// Runs test 2: every (op, kind, count) point `reps` times, round-robin over the points so
/// that a slow spell of a shared machine spreads over all of them; stops starting runs at
/// `deadline`.
pub fn run(
    ch: &mut Channel,
    set: &FlowSet,
    cfg: &InsertConfig,
    deadline: Option<Instant>,
) -> Result<TestOutput, TestError> {
    let mut runs: Vec<InsertRun> = Vec::new();
    let mut cut = false;
    let mut stream_id = 0x2000u32;
    'reps: for _ in 0..cfg.reps {
        for &op in &cfg.ops {
            for &kind in &cfg.kinds {
                for &n in &cfg.counts {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        cut = true;
                        break 'reps;
                    }
                    stream_id += 1;
                    runs.push(run_once(ch, set, n, kind, op, cfg, stream_id)?);
                }
            }
        }
    }
    reset_table(ch)?;
    Ok(summarise(cfg, &runs, cut))
}

fn spread_of(v: impl Iterator<Item = i64>) -> Option<Spread> {
    let v: Vec<i64> = v.collect();
    Spread::of(&v)
}

/// The points, tables, plots and findings of a set of runs.
pub fn summarise(cfg: &InsertConfig, runs: &[InsertRun], cut: bool) -> TestOutput {
    let mut points = Vec::new();
    for &op in &cfg.ops {
        for &kind in &cfg.kinds {
            for &n in &cfg.counts {
                let rs: Vec<&InsertRun> = runs
                    .iter()
                    .filter(|r| r.op == op && r.kind == kind && r.flows == n)
                    .collect();
                if rs.is_empty() {
                    continue;
                }
                points.push(InsertPoint {
                    flows: n,
                    kind,
                    op,
                    runs: rs.len(),
                    barrier: spread_of(rs.iter().map(|r| r.barrier_ns)),
                    transmit: spread_of(rs.iter().map(|r| r.transmit_ns)),
                    last_flow: spread_of(rs.iter().filter_map(|r| r.last_flow_ns)),
                    all_flows: spread_of(rs.iter().filter_map(|r| r.all_flows_ns)),
                    barrier_first: rs
                        .iter()
                        .filter(|r| r.barrier_first() == Some(true))
                        .count(),
                    never_active: rs.iter().filter(|r| r.last_flow_ns.is_none()).count(),
                });
            }
        }
    }
    let mut out = TestOutput::new("insert");
    let mut t = Table::new(
        "Flow insertion (test 2): ms from the first FLOW_MOD, median [p10, p90]",
        &[
            "op",
            "match",
            "flows",
            "runs",
            "transmit",
            "barrier reply",
            "last flow forwards",
            "all flows forward",
            "barrier first",
        ],
    );
    for p in &points {
        t.row(vec![
            p.op.name().into(),
            p.kind.name().into(),
            p.flows.to_string(),
            p.runs.to_string(),
            ms_spread(p.transmit.as_ref()),
            ms_spread(p.barrier.as_ref()),
            ms_spread(p.last_flow.as_ref()),
            ms_spread(p.all_flows.as_ref()),
            format!(
                "{}/{}{}",
                p.barrier_first,
                p.runs,
                if p.never_active > 0 {
                    format!(" ({} never forwarded)", p.never_active)
                } else {
                    String::new()
                }
            ),
        ]);
    }
    t.note = Some(format!(
        "probe {} frames/s, alternating the last flow and each flow in turn: \
         last-flow resolution {} ms, all-flows resolution 2N/rate; \
         'barrier first' = runs where the BARRIER_REPLY was read before the last flow forwarded; \
         delete rows: until the LAST probe forwarded (0 = none after the first FLOW_MOD), \
         'barrier first' = probes still forwarded after the BARRIER_REPLY",
        cfg.probe_rate,
        ms(2e9 / cfg.probe_rate)
    ));
    out.tables.push(t);
    let up: Vec<&InsertRun> = runs.iter().filter(|r| r.op != Op::Delete).collect();
    let total = up.len();
    let first = up
        .iter()
        .filter(|r| r.barrier_first() == Some(true))
        .count();
    let after = up
        .iter()
        .filter(|r| r.barrier_first() == Some(false))
        .count();
    let never = up.iter().filter(|r| r.last_flow_ns.is_none()).count();
    out.findings.push(format!(
        "the BARRIER_REPLY came before the last new flow forwarded a probe in {first} of {total} runs \
         (after it in {after}; {never} runs never saw the last flow forward)"
    ));
    let violated: Vec<&InsertRun> = runs.iter().filter(|r| r.barrier_violations > 0).collect();
    out.findings.push(format!(
        "the BARRIER_REPLY was ahead of the data path in {} of {} runs: probes sent after it \
         were dropped by a new flow, or forwarded by a deleted one ({} probes in all)",
        violated.len(),
        runs.len(),
        violated.iter().map(|r| r.barrier_violations).sum::<usize>()
    ));
    let del: Vec<&InsertRun> = runs.iter().filter(|r| r.op == Op::Delete).collect();
    if !del.is_empty() {
        let stale = del
            .iter()
            .filter(|r| r.all_flows_ns.is_some_and(|t| t > r.barrier_ns))
            .count();
        let worst = del.iter().filter_map(|r| r.all_flows_ns).max().unwrap_or(0);
        let unstopped = del.iter().filter(|r| r.all_flows_ns.is_none()).count();
        out.findings.push(format!(
            "after deletions, probes were still forwarded after the BARRIER_REPLY in {stale} of {} runs \
             (the last up to {} ms after the first FLOW_MOD{})",
            del.len(),
            ms(worst as f64),
            if unstopped > 0 {
                format!("; {unstopped} runs never went quiet within the timeout")
            } else {
                String::new()
            }
        ));
    }
    let kind0 = cfg.kinds.first().copied().unwrap_or(MatchKind::Exact);
    let growth = |p: &&InsertPoint| p.op == Op::Add && p.kind == kind0 && p.last_flow.is_some();
    if let (Some(a), Some(b)) = (points.iter().find(growth), points.iter().rev().find(growth)) {
        if b.flows > a.flows {
            let (la, lb) = (
                a.last_flow.unwrap().median as f64,
                b.last_flow.unwrap().median as f64,
            );
            out.findings.push(format!(
                "adding {} {} flows took {} ms to the data plane, {} flows {} ms: {:.1} µs per extra flow",
                a.flows,
                kind0.name(),
                ms(la),
                b.flows,
                ms(lb),
                (lb - la) / 1000.0 / (b.flows - a.flows) as f64
            ));
        }
    }
    if cut {
        out.findings
            .push("cut short by --max-seconds: not every point has every run".into());
    }
    // Figure 3: the three times against N (exact add); figure 4: data plane, add vs modify.
    for &kind in &cfg.kinds {
        let sel = |op: Op, f: &dyn Fn(&InsertPoint) -> Option<Spread>| -> Vec<Point> {
            points
                .iter()
                .filter(|p| p.op == op && p.kind == kind)
                .filter_map(|p| f(p).map(|s| Point::of_spread(p.flows as f64, &s, 1e-6)))
                .collect()
        };
        if cfg.ops.contains(&Op::Add) {
            out.plots.push(Plot {
                name: format!("insert-{}-add", kind.name()),
                title: format!("Flow insertion, {} match (paper fig. 3)", kind.name()),
                x_label: "flows inserted".into(),
                y_label: "ms from the first FLOW_MOD".into(),
                log_x: true,
                log_y: true,
                series: vec![
                    Series {
                        name: "barrier reply".into(),
                        points: sel(Op::Add, &|p| p.barrier),
                    },
                    Series {
                        name: "transmission".into(),
                        points: sel(Op::Add, &|p| p.transmit),
                    },
                    Series {
                        name: "first packet, last flow".into(),
                        points: sel(Op::Add, &|p| p.last_flow),
                    },
                ],
            });
        }
    }
    let mut fig4 = Vec::new();
    for &op in &cfg.ops {
        for &kind in &cfg.kinds {
            fig4.push(Series {
                name: format!("{} {}", op.name(), kind.name()),
                points: points
                    .iter()
                    .filter(|p| p.op == op && p.kind == kind)
                    .filter_map(|p| {
                        p.last_flow
                            .map(|s| Point::of_spread(p.flows as f64, &s, 1e-6))
                    })
                    .collect(),
            });
        }
    }
    out.plots.push(Plot {
        name: "insert-add-vs-modify".into(),
        title: "Insertion and modification, data plane (paper fig. 4)".into(),
        x_label: "flows".into(),
        y_label: "ms to the last flow's first packet".into(),
        log_x: true,
        log_y: true,
        series: fig4,
    });
    out.data = serde_json::json!({
        "config": cfg,
        "points": points,
        "runs": runs,
        "barrier_first_runs": first,
        "barrier_violation_runs": violated.len(),
        "delete_runs": del.len(),
        "barrier_after_runs": after,
        "never_active_runs": never,
        "cut_by_max_seconds": cut,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: Op, flows: usize, barrier_ms: i64, last_ms: Option<i64>) -> InsertRun {
        InsertRun {
            flows,
            kind: MatchKind::Exact,
            op,
            barrier_ns: barrier_ms * 1_000_000,
            transmit_ns: 10_000,
            last_flow_ns: last_ms.map(|m| m * 1_000_000),
            all_flows_ns: last_ms.map(|m| m * 1_000_000),
            flows_active: if last_ms.is_some() { flows } else { 0 },
            probes_before_barrier: 0,
            barrier_violations: 0,
        }
    }

    #[test]
    fn probes_lost_after_the_barrier_are_counted_but_not_those_still_in_flight() {
        use super::super::probe::{RxRecord, TsSource, TxRecord};
        // Probes 0..10 of stream 7 sent 1 µs apart; the barrier reply read at 4 µs.
        let tx = (0..10u64)
            .map(|seq| TxRecord {
                stream: 7,
                seq,
                template: 0,
                user_ns: seq as i64 * 1000,
                kernel_ns: None,
                source: TsSource::User,
            })
            .collect();
        let rx = |seqs: &[u64]| -> Vec<RxRecord> {
            seqs.iter()
                .map(|&seq| RxRecord {
                    stream: 7,
                    seq,
                    template: 0,
                    user_tx_ns: seq as i64 * 1000,
                    port: 0,
                    rx_ns: seq as i64 * 1000 + 500,
                    source: TsSource::User,
                    len: 64,
                    bytes: None,
                })
                .collect()
        };
        let mut records = Records {
            ports: vec!["eg".into()],
            tx,
            rx: rx(&[2, 3, 6, 7]),
            other_frames: 0,
        };
        // 4 and 5 were sent after the reply and dropped (7, sent later, came out); 8 and
        // 9 may still be on their way; 0 and 1 went before the reply.
        assert_eq!(lost_after(&records, 7, 4000), 2);
        records.rx = rx(&[4, 5, 6, 7]);
        assert_eq!(lost_after(&records, 7, 4000), 0);
        assert_eq!(lost_after(&records, 8, 4000), 0, "another stream");
    }

    #[test]
    fn the_summary_counts_barriers_before_the_data_plane() {
        let cfg = InsertConfig {
            counts: vec![1, 100],
            kinds: vec![MatchKind::Exact],
            ops: vec![Op::Add, Op::Delete],
            reps: 2,
            ..InsertConfig::default()
        };
        let runs = [
            run(Op::Add, 1, 1, Some(5)),     // barrier first
            run(Op::Add, 1, 6, Some(5)),     // data plane first
            run(Op::Add, 100, 3, Some(4)),   // barrier first
            run(Op::Add, 100, 3, None),      // never forwarded
            run(Op::Delete, 1, 1, Some(40)), // forwarded 39 ms after the barrier
            run(Op::Delete, 1, 2, Some(0)),  // stopped at once
        ];
        let out = summarise(&cfg, &runs, false);
        assert_eq!(out.data["barrier_first_runs"], 2);
        assert_eq!(out.data["barrier_after_runs"], 1);
        assert_eq!(out.data["never_active_runs"], 1);
        assert_eq!(out.data["delete_runs"], 2);
        let f = out.findings.join("\n");
        assert!(
            f.contains("in 2 of 4 runs (after it in 1; 1 runs never"),
            "{f}"
        );
        assert!(f.contains("after the BARRIER_REPLY in 1 of 2 runs"), "{f}");
        // One row per point that has runs; the 100-flow add row says one never forwarded.
        let table = out.tables[0].render();
        assert!(table.contains("1/2 (1 never forwarded)"), "{table}");
        assert_eq!(out.tables[0].rows.len(), 3, "{table}");
    }
}
