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

mod summary;

use std::time::{Duration, Instant};

use openflow::model::{FlowMod, FlowModCommand};
use serde::Serialize;

use super::channel::Channel;
use super::flows::{install, reset_table, FlowSet, MatchKind, TestError, FLOW_PRIORITY};
use super::live::LiveProbe;
use super::probe::{FrameSpec, Records, RxRecord, Spread, StreamSpec};
use super::report::TestOutput;
pub use summary::summarise;

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

/// Parameters of test 2.
#[derive(Debug, Clone, Serialize)]
pub struct InsertConfig {
    /// Numbers of flows (the paper: 1 … 10,000).
    pub counts: Vec<usize>,
    /// Matches measured: exact and/or wildcard.
    pub kinds: Vec<MatchKind>,
    /// Operations measured: add, modify and/or delete.
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
    /// Flows added, modified or deleted.
    pub flows: usize,
    /// How they matched.
    pub kind: MatchKind,
    /// What the FLOW_MODs did.
    pub op: Op,
    /// The BARRIER_REPLY read.
    pub barrier_ns: i64,
    /// The last FLOW_MOD byte handed to the kernel.
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
    /// Flows per run.
    pub flows: usize,
    /// How they matched.
    pub kind: MatchKind,
    /// What the FLOW_MODs did.
    pub op: Op,
    /// Runs summed up.
    pub runs: usize,
    /// The runs' barrier times.
    pub barrier: Option<Spread>,
    /// Their transmission times.
    pub transmit: Option<Spread>,
    /// Their times to the last flow forwarding (runs where it did).
    pub last_flow: Option<Spread>,
    /// Their times to every flow forwarding (runs where all did).
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn run(op: Op, flows: usize, barrier_ms: i64, last_ms: Option<i64>) -> InsertRun {
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
}
