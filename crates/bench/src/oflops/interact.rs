//! Test 4, interaction (the paper's §4.4, figure 6): `flows` exact flows installed (1,024
//! in the paper), `modified` of them (100) changed while full-table statistics are
//! polled at a rate: the time until the modified flows are active, per polling rate.
//!
//! A run: the table holds `flows` exact flows, the first `modified` of them dropping and
//! the rest forwarding to the egress data port. The probe targets the modified flows
//! (alternating the last of them and each in turn, as in [`super::insert`]). Polling
//! starts at the run's rate; after a warm-up the `modified` MODIFY_STRICTs (output to the
//! egress port) and a BARRIER_REQUEST go out while the polling goes on; the run ends when
//! every modified flow has forwarded a probe (or at the timeout). Times are from the
//! first FLOW_MOD: the barrier reply, the first probe of the last modified flow, the
//! latest first probe over the modified flows. The paper saw OVS's median barely move
//! with polling, its variance grow, and a hardware switch slow down markedly.

use std::time::{Duration, Instant};

use openflow::model::{FlowMod, FlowModCommand};
use serde::Serialize;

use super::channel::msg_type;
use super::flows::{install, reset_table, FlowSet, MatchKind, TestError, FLOW_PRIORITY};
use super::live::LiveProbe;
use super::probe::{FrameSpec, Spread, StreamSpec};
use super::report::{ms, ms_spread, us_spread, Plot, Point, Series, Table, TestOutput};
use super::stats::Poller;

/// Parameters of test 4.
#[derive(Debug, Clone, Serialize)]
pub struct InteractConfig {
    pub flows: usize,
    pub modified: usize,
    /// Flow-stats requests per second; 0 = no polling.
    pub rates: Vec<f64>,
    pub reps: usize,
    pub probe_rate: f64,
    /// Polling before the modifications.
    pub warmup: Duration,
    pub run_timeout: Duration,
    /// The switch's process on this machine, whose CPU use is reported per rate.
    pub switch_pid: Option<u32>,
}

impl Default for InteractConfig {
    fn default() -> InteractConfig {
        InteractConfig {
            flows: 1024,
            modified: 100,
            rates: vec![0.0, 1.0, 10.0, 50.0, 100.0],
            reps: 5,
            probe_rate: 10_000.0,
            warmup: Duration::from_millis(300),
            run_timeout: Duration::from_secs(10),
            switch_pid: None,
        }
    }
}

/// One run, ns from the first FLOW_MOD.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct InteractRun {
    pub rate: f64,
    pub barrier_ns: Option<i64>,
    pub last_flow_ns: Option<i64>,
    pub all_flows_ns: Option<i64>,
    pub flows_active: usize,
    pub stats_requests: u64,
    pub stats_answered: usize,
    /// Median flow-stats response in this run.
    pub stats_response_ns: Option<i64>,
    /// The switch's CPU from the start of the polling to the end of the run, % of a core.
    pub switch_cpu: Option<f64>,
}

/// One polling rate's figures.
#[derive(Debug, Clone, Serialize)]
pub struct InteractPoint {
    pub rate: f64,
    pub runs: usize,
    pub barrier: Option<Spread>,
    pub last_flow: Option<Spread>,
    pub all_flows: Option<Spread>,
    pub stats_response: Option<Spread>,
    pub never_active: usize,
    /// Mean over the runs of the switch's CPU, % of a core.
    pub switch_cpu: Option<f64>,
}

fn run_once(
    ch: &mut super::channel::Channel,
    set: &FlowSet,
    cfg: &InteractConfig,
    rate: f64,
    stream: u32,
) -> Result<InteractRun, TestError> {
    let m = cfg.modified;
    let set = &set.for_run(stream);
    reset_table(ch)?;
    install(ch, set, 0..m, MatchKind::Exact, &[])?;
    install(ch, set, m..cfg.flows, MatchKind::Exact, &set.forward())?;
    let templates: Vec<FrameSpec> = if m == 1 {
        vec![set.frame(0)]
    } else {
        (0..m)
            .flat_map(|i| [set.frame(m - 1), set.frame(i)])
            .collect()
    };
    let flow_of = |t: u32| -> usize {
        if m == 1 || t % 2 == 0 {
            m - 1
        } else {
            (t / 2) as usize
        }
    };
    let spec = StreamSpec::new(stream, templates)
        .rate(cfg.probe_rate)
        .duration(cfg.warmup + cfg.run_timeout + Duration::from_secs(1));
    let live = LiveProbe::start(
        &set.set.ingress.iface,
        spec,
        &[set.set.egress.iface.as_str()],
    )?;
    let cpu = cfg.switch_pid.and_then(super::stats::CpuMeter::start);
    let mut poller = Poller::new(rate);
    poller.pump(ch, Instant::now() + cfg.warmup, true, |_| false)?;
    let forward = set.forward();
    let fms: Vec<FlowMod> = (0..m)
        .map(|i| {
            let mut fm =
                FlowMod::add(set.matching(i, MatchKind::Exact), &forward).priority(FLOW_PRIORITY);
            fm.command = FlowModCommand::ModifyStrict;
            fm
        })
        .collect();
    let early = live.with_rx(|rx| rx.iter().filter(|r| r.stream == stream).count());
    if early > 0 {
        return Err(TestError::Setup(format!(
            "{early} probes of the flows to modify (which drop) came out of {} before \
             they were modified",
            set.set.egress.name
        )));
    }
    let sent = ch.send_flow_mods(&fms)?;
    let t0 = sent.first_ns as i64;
    let (bxid, _) = ch.send_barrier()?;
    let mut barrier_ns = None;
    let deadline = Instant::now() + cfg.run_timeout;
    let mut first = vec![i64::MAX; m];
    let mut seen = 0;
    let mut scanned = 0;
    loop {
        let step = (Instant::now() + Duration::from_millis(2)).min(deadline);
        poller.pump(ch, step, true, |r| {
            if r.xid == bxid
                && (r.msg_type == msg_type::BARRIER_REPLY_10
                    || r.msg_type == msg_type::BARRIER_REPLY_13)
            {
                barrier_ns = Some(r.at_ns as i64 - t0);
            }
            false
        })?;
        live.with_rx(|rx| {
            for r in &rx[scanned..] {
                if r.stream != stream {
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
        if (seen == m && barrier_ns.is_some()) || Instant::now() >= deadline {
            break;
        }
    }
    drop(live);
    let switch_cpu = cpu.and_then(|c| c.percent());
    // The switch answers the requests it has queued before anything else: wait for them,
    // so the next run's barrier is not behind them.
    let quiet = ch.timeout();
    poller.settle(ch, quiet)?;
    let resp: Vec<i64> = poller
        .replies
        .iter()
        .map(|r| r.response_ns() as i64)
        .collect();
    let last = first[m - 1];
    Ok(InteractRun {
        rate,
        barrier_ns,
        last_flow_ns: (last != i64::MAX).then(|| last - t0),
        all_flows_ns: (seen == m).then(|| first.iter().max().copied().unwrap_or(0) - t0),
        flows_active: seen,
        stats_requests: poller.sent(),
        stats_answered: poller.replies.len(),
        stats_response_ns: Spread::of(&resp).map(|s| s.median),
        switch_cpu,
    })
}

/// Runs test 4, the rates round robin within each repetition.
pub fn run(
    ch: &mut super::channel::Channel,
    set: &FlowSet,
    cfg: &InteractConfig,
    deadline: Option<Instant>,
) -> Result<TestOutput, TestError> {
    if cfg.modified == 0 || cfg.modified > cfg.flows {
        return Err(TestError::Setup(
            "--interact-modified must be between 1 and --interact-flows".into(),
        ));
    }
    let mut runs = Vec::new();
    let mut cut = false;
    let mut stream = 0x4000;
    'reps: for _ in 0..cfg.reps {
        for &rate in &cfg.rates {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                cut = true;
                break 'reps;
            }
            stream += 1;
            runs.push(run_once(ch, set, cfg, rate, stream)?);
        }
    }
    reset_table(ch)?;
    let points: Vec<InteractPoint> = cfg
        .rates
        .iter()
        .filter_map(|&rate| {
            let rs: Vec<&InteractRun> = runs.iter().filter(|r| r.rate == rate).collect();
            if rs.is_empty() {
                return None;
            }
            let sp = |f: &dyn Fn(&InteractRun) -> Option<i64>| {
                Spread::of(&rs.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
            };
            Some(InteractPoint {
                rate,
                runs: rs.len(),
                barrier: sp(&|r| r.barrier_ns),
                last_flow: sp(&|r| r.last_flow_ns),
                all_flows: sp(&|r| r.all_flows_ns),
                stats_response: sp(&|r| r.stats_response_ns),
                never_active: rs.iter().filter(|r| r.last_flow_ns.is_none()).count(),
                switch_cpu: {
                    let c: Vec<f64> = rs.iter().filter_map(|r| r.switch_cpu).collect();
                    (!c.is_empty()).then(|| c.iter().sum::<f64>() / c.len() as f64)
                },
            })
        })
        .collect();
    let mut out = TestOutput::new("interact");
    let mut t = Table::new(
        &format!(
            "Interaction (test 4): {} of {} exact flows modified while polling full-table stats; \
             ms from the first FLOW_MOD, median [p10, p90]",
            cfg.modified, cfg.flows
        ),
        &[
            "polls/s",
            "runs",
            "barrier reply",
            "last modified flow forwards",
            "all modified forward",
            "stats response µs",
            "switch CPU",
        ],
    );
    for p in &points {
        t.row(vec![
            format!("{}", p.rate),
            format!(
                "{}{}",
                p.runs,
                if p.never_active > 0 {
                    format!(" ({} never)", p.never_active)
                } else {
                    String::new()
                }
            ),
            ms_spread(p.barrier.as_ref()),
            ms_spread(p.last_flow.as_ref()),
            ms_spread(p.all_flows.as_ref()),
            us_spread(p.stats_response.as_ref()),
            p.switch_cpu.map_or("-".into(), |c| format!("{c:.0}%")),
        ]);
    }
    t.note = Some(format!(
        "probe {} frames/s over the modified flows (last-flow resolution {} ms); \
         polling {} ms before the modifications",
        cfg.probe_rate,
        ms(2e9 / cfg.probe_rate),
        cfg.warmup.as_millis()
    ));
    out.tables.push(t);
    if let (Some(a), Some(b)) = (points.first(), points.last()) {
        if let (Some(la), Some(lb)) = (a.last_flow, b.last_flow) {
            out.findings.push(format!(
                "modified flows active after {} ms (p90 {}) at {} polls/s, {} ms (p90 {}) at {} polls/s",
                ms(la.median as f64),
                ms(la.p90 as f64),
                a.rate,
                ms(lb.median as f64),
                ms(lb.p90 as f64),
                b.rate
            ));
        }
    }
    if cut {
        out.findings
            .push("cut short by --max-seconds: not every rate has every run".into());
    }
    // Rate 0 cannot sit on a log axis: plot it at 0.1.
    let x = |r: f64| if r > 0.0 { r } else { 0.1 };
    out.plots.push(Plot {
        name: "interact".into(),
        title: "Flow modification while polling statistics (paper fig. 6)".into(),
        x_label: "flow-stats requests per second (0.1 = none)".into(),
        y_label: "ms from the first FLOW_MOD".into(),
        log_x: true,
        log_y: false,
        series: vec![
            Series {
                name: "last modified flow forwards".into(),
                points: points
                    .iter()
                    .filter_map(|p| p.last_flow.map(|s| Point::of_spread(x(p.rate), &s, 1e-6)))
                    .collect(),
            },
            Series {
                name: "barrier reply".into(),
                points: points
                    .iter()
                    .filter_map(|p| p.barrier.map(|s| Point::of_spread(x(p.rate), &s, 1e-6)))
                    .collect(),
            },
        ],
    });
    out.data = serde_json::json!({
        "config": cfg, "points": points, "runs": runs, "cut_by_max_seconds": cut,
    });
    Ok(out)
}
