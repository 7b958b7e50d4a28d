//! Test 3, flow statistics (the paper's §4.3, figure 5): the response time of full-table
//! flow-stats requests at increasing polling rates, how the replies are segmented, and
//! what the polling does to forwarding.
//!
//! `flows` exact flows forward the probe (round robin over them) from the ingress to the
//! egress data port for the whole test. For each polling rate in turn (0 = a baseline
//! with no polling), requests go out open-loop for `seconds`: request `j` at `j / rate`
//! whatever became of the earlier ones, so a switch slower than the rate builds a queue
//! and shows it. For each request: the time to the first and to the last part of its
//! answer, the parts (STATS_REPLY / MULTIPART_REPLY messages) and the reads that brought
//! them (the paper counted TCP segments), and the flows reported. For the probe frames
//! sent in each window: the one-way delay through the switch and the loss.
//!
//! With `switch_pid` (a software switch on this machine), the CPU its process used in
//! each window, as the paper read its switches' CPU over SNMP (its figure 5b).
//!
//! The paper found near-constant response times for software switches, and no effect
//! of polling on their forwarding; hardware switches paced or aggregated their replies.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::channel::{Channel, ChannelError, FlowStatsCollector, FlowStatsReply, Received};
use super::flows::{install, reset_table, FlowSet, MatchKind, TestError};
use super::live::LiveProbe;
use super::probe::{Records, Spread, StreamSpec};
use super::report::{us, us_spread, Plot, Point, Series, Table, TestOutput};

/// Sends flow-stats requests open-loop at a rate and folds their answers, while handing
/// every other message to the caller.
pub struct Poller {
    rate: f64,
    start: Instant,
    sent: u64,
    pub collector: FlowStatsCollector,
    pub replies: Vec<FlowStatsReply>,
}

impl Poller {
    /// Polls at `rate` requests per second from now (0: never).
    pub fn new(rate: f64) -> Poller {
        Poller {
            rate,
            start: Instant::now(),
            sent: 0,
            collector: FlowStatsCollector::default(),
            replies: Vec::new(),
        }
    }

    fn next_due(&self) -> Option<Instant> {
        (self.rate > 0.0)
            .then(|| self.start + Duration::from_secs_f64(self.sent as f64 / self.rate))
    }

    /// Requests sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Polls and receives until `until` (or until `done` says so after a message). Every
    /// message that is not a flow-stats answer goes to `other`; an ERROR fails.
    pub fn pump(
        &mut self,
        ch: &mut Channel,
        until: Instant,
        polling: bool,
        mut other: impl FnMut(&Received) -> bool,
    ) -> Result<(), ChannelError> {
        loop {
            let now = Instant::now();
            if now >= until {
                return Ok(());
            }
            let mut wake = until;
            if polling {
                if let Some(due) = self.next_due() {
                    if now >= due {
                        let (xid, sent_ns) = ch.send_flow_stats_request()?;
                        self.collector.expect(xid, sent_ns);
                        self.sent += 1;
                        continue;
                    }
                    wake = wake.min(due);
                }
            }
            while let Some(r) = ch.recv(wake)? {
                if let Some(done) = self.collector.offer(&r)? {
                    self.replies.push(done);
                } else if let Some(e) = r.error() {
                    return Err(e);
                } else if r.msg_type != super::channel::msg_type::STATS_REPLY_10
                    && !(r.msg_type == super::channel::msg_type::MULTIPART_REPLY_13
                        && r.frame[0] == 4)
                    && other(&r)
                {
                    return Ok(());
                }
                if Instant::now() >= wake {
                    break;
                }
            }
        }
    }

    /// Waits for the answers still outstanding, as long as they keep coming: a switch
    /// slower than the polling rate has a queue of requests to work through (and would
    /// answer the next barrier only after it). Gives up when no answer has come for
    /// `quiet`: a switch that stopped answering is reported (an error naming the
    /// requests never answered), not waited for.
    pub fn settle(&mut self, ch: &mut Channel, quiet: Duration) -> Result<(), ChannelError> {
        let mut answered = self.replies.len();
        let mut progress = Instant::now();
        while self.collector.outstanding() > 0 {
            let step = Instant::now() + Duration::from_millis(20);
            self.pump(ch, step, false, |_| false)?;
            if self.replies.len() != answered {
                answered = self.replies.len();
                progress = Instant::now();
            } else if progress.elapsed() >= quiet {
                return Err(ChannelError::Timeout {
                    what: format!(
                        "{} flow-stats requests (nothing for {:?})",
                        self.collector.outstanding(),
                        quiet
                    ),
                    after: quiet,
                });
            }
        }
        Ok(())
    }
}

/// CPU time (user + system, seconds) process `pid` has used, from `/proc/PID/stat`.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name (in parentheses, which may hold spaces): state is field 3,
    // utime and stime fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks as f64 / hz as f64)
}

/// Measures the CPU a process uses over an interval, as a percentage of one core (the
/// paper read its switches' CPU over SNMP; a software switch on this machine is read
/// from `/proc`).
#[derive(Debug, Clone, Copy)]
pub struct CpuMeter {
    pid: u32,
    cpu0: f64,
    t0: Instant,
}

impl CpuMeter {
    /// Starts measuring `pid` (`None` if there is no such process).
    pub fn start(pid: u32) -> Option<CpuMeter> {
        Some(CpuMeter {
            pid,
            cpu0: cpu_seconds(pid)?,
            t0: Instant::now(),
        })
    }

    /// Percent of one core used since the start.
    pub fn percent(&self) -> Option<f64> {
        let used = cpu_seconds(self.pid)? - self.cpu0;
        let wall = self.t0.elapsed().as_secs_f64();
        (wall > 0.0).then(|| 100.0 * used / wall)
    }
}

/// Parameters of test 3.
#[derive(Debug, Clone, Serialize)]
pub struct StatsConfig {
    /// Flows in the table (all hit by the probe).
    pub flows: usize,
    /// Requests per second; 0 is the no-polling baseline.
    pub rates: Vec<f64>,
    /// Seconds of polling per rate.
    pub seconds: f64,
    /// Probe frames per second.
    pub probe_rate: f64,
    /// The switch's process on this machine, whose CPU use is reported per rate.
    pub switch_pid: Option<u32>,
}

impl Default for StatsConfig {
    fn default() -> StatsConfig {
        StatsConfig {
            flows: 100,
            rates: vec![0.0, 1.0, 10.0, 50.0, 100.0, 500.0],
            seconds: 3.0,
            probe_rate: 10_000.0,
            switch_pid: None,
        }
    }
}

/// One polling rate's figures.
#[derive(Debug, Clone, Serialize)]
pub struct StatsPoint {
    pub rate: f64,
    pub requests: u64,
    pub answered: usize,
    /// Request to last part (ns).
    pub response: Option<Spread>,
    /// Request to first part (ns).
    pub first_part: Option<Spread>,
    pub parts_per_reply: f64,
    pub reads_per_reply: f64,
    pub flows_per_reply: f64,
    pub bytes_per_reply: f64,
    /// Probe one-way delay in the window (ns).
    pub probe_delay: Option<Spread>,
    pub probes_sent: u64,
    pub probes_lost: u64,
    /// CPU of the switch's process over the window, % of one core (`--switch-pid`).
    pub switch_cpu: Option<f64>,
}

/// Runs test 3.
pub fn run(
    ch: &mut Channel,
    set: &FlowSet,
    cfg: &StatsConfig,
    deadline: Option<Instant>,
) -> Result<TestOutput, TestError> {
    if cfg.flows == 0 {
        return Err(TestError::Setup("--stats-flows must be at least 1".into()));
    }
    reset_table(ch)?;
    install(
        ch,
        &set.for_run(0),
        0..cfg.flows,
        MatchKind::Exact,
        &set.forward(),
    )?;
    let stream = 0x3000;
    let templates = (0..cfg.flows).map(|i| set.for_run(0).frame(i)).collect();
    let total = Duration::from_secs_f64(cfg.seconds * cfg.rates.len() as f64 + 30.0);
    let spec = StreamSpec::new(stream, templates)
        .rate(cfg.probe_rate)
        .duration(total);
    let live = LiveProbe::start(&set.ingress.iface, spec, &[set.egress.iface.as_str()])?;
    std::thread::sleep(Duration::from_millis(100));
    let mut windows = Vec::new();
    let mut pollers = Vec::new();
    let mut cut = false;
    for &rate in &cfg.rates {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            cut = true;
            break;
        }
        let from = super::channel::now_ns() as i64;
        let cpu = cfg.switch_pid.and_then(CpuMeter::start);
        let mut p = Poller::new(rate);
        let until = Instant::now() + Duration::from_secs_f64(cfg.seconds);
        p.pump(ch, until, true, |_| false)?;
        let to = super::channel::now_ns() as i64;
        let cpu = cpu.and_then(|c| c.percent());
        p.settle(ch, ch.timeout())?;
        windows.push((rate, from, to, cpu));
        pollers.push(p);
    }
    let records = live.finish(Duration::from_millis(50))?;
    reset_table(ch)?;
    let points: Vec<StatsPoint> = windows
        .iter()
        .zip(&pollers)
        .map(|(&(rate, from, to, cpu), p)| StatsPoint {
            switch_cpu: cpu,
            ..point(rate, p, &records, stream, from, to)
        })
        .collect();
    Ok(summarise(cfg, points, cut))
}

fn point(rate: f64, p: &Poller, rec: &Records, stream: u32, from: i64, to: i64) -> StatsPoint {
    let r = &p.replies;
    let n = r.len().max(1) as f64;
    let mut delays = Vec::new();
    let (mut sent, mut lost) = (0, 0);
    for (tx, rx) in rec.joined(stream, None) {
        let t = tx.tx_ns();
        if t < from || t >= to {
            continue;
        }
        sent += 1;
        match rx {
            Some(rx) => delays.push(rx.rx_ns - t),
            None => lost += 1,
        }
    }
    let resp: Vec<i64> = r.iter().map(|x| x.response_ns() as i64).collect();
    let first: Vec<i64> = r
        .iter()
        .map(|x| x.first_part_ns.saturating_sub(x.sent_ns) as i64)
        .collect();
    StatsPoint {
        rate,
        requests: p.sent(),
        answered: r.len(),
        response: Spread::of(&resp),
        first_part: Spread::of(&first),
        parts_per_reply: r.iter().map(|x| x.parts as f64).sum::<f64>().max(0.0) / n,
        reads_per_reply: r.iter().map(|x| x.reads as f64).sum::<f64>().max(0.0) / n,
        flows_per_reply: r.iter().map(|x| x.flows as f64).sum::<f64>().max(0.0) / n,
        bytes_per_reply: r.iter().map(|x| x.bytes as f64).sum::<f64>().max(0.0) / n,
        probe_delay: Spread::of(&delays),
        probes_sent: sent,
        probes_lost: lost,
        switch_cpu: None,
    }
}

fn summarise(cfg: &StatsConfig, points: Vec<StatsPoint>, cut: bool) -> TestOutput {
    let mut out = TestOutput::new("stats");
    let mut t = Table::new(
        &format!(
            "Flow statistics (test 3): {} flows, full-table requests; µs, median [p10, p90]",
            cfg.flows
        ),
        &[
            "requests/s",
            "sent",
            "answered",
            "response",
            "first part",
            "parts/reply",
            "reads/reply",
            "flows/reply",
            "probe delay",
            "probe loss",
            "switch CPU",
        ],
    );
    for p in &points {
        let per = |v: f64, digits: usize| {
            if p.answered == 0 {
                "-".to_string()
            } else {
                format!("{v:.digits$}")
            }
        };
        t.row(vec![
            format!("{}", p.rate),
            p.requests.to_string(),
            p.answered.to_string(),
            us_spread(p.response.as_ref()),
            us_spread(p.first_part.as_ref()),
            per(p.parts_per_reply, 1),
            per(p.reads_per_reply, 1),
            per(p.flows_per_reply, 0),
            us_spread(p.probe_delay.as_ref()),
            format!(
                "{:.2}%",
                100.0 * p.probes_lost as f64 / p.probes_sent.max(1) as f64
            ),
            p.switch_cpu.map_or("-".into(), |c| format!("{c:.0}%")),
        ]);
    }
    t.note = Some(format!(
        "{} s per rate, open-loop; probe {} frames/s round robin over the flows; \
         reads/reply = socket reads that delivered parts (a rough count of TCP segments)",
        cfg.seconds, cfg.probe_rate
    ));
    out.tables.push(t);
    let polled: Vec<&StatsPoint> = points.iter().filter(|p| p.rate > 0.0).collect();
    if let (Some(a), Some(b)) = (polled.first(), polled.last()) {
        if let (Some(ra), Some(rb)) = (a.response, b.response) {
            out.findings.push(format!(
                "flow-stats response {} µs at {} requests/s, {} µs at {}",
                us(ra.median as f64),
                a.rate,
                us(rb.median as f64),
                b.rate
            ));
        }
    }
    if let (Some(base), Some(top)) = (
        points.iter().find(|p| p.rate == 0.0),
        points.iter().rev().find(|p| p.rate > 0.0),
    ) {
        if let (Some(d0), Some(d1)) = (base.probe_delay, top.probe_delay) {
            out.findings.push(format!(
                "probe delay {} µs with no polling, {} µs at {} requests/s (p90 {} → {} µs)",
                us(d0.median as f64),
                us(d1.median as f64),
                top.rate,
                us(d0.p90 as f64),
                us(d1.p90 as f64)
            ));
        }
    }
    if cut {
        out.findings
            .push("cut short by --max-seconds: not every rate ran".into());
    }
    let series = |name: &str, f: &dyn Fn(&StatsPoint) -> Option<Spread>| Series {
        name: name.into(),
        points: points
            .iter()
            .filter(|p| p.rate > 0.0)
            .filter_map(|p| f(p).map(|s| Point::of_spread(p.rate, &s, 1e-3)))
            .collect(),
    };
    if points.iter().any(|p| p.switch_cpu.is_some()) {
        out.plots.push(Plot {
            name: "stats-cpu".into(),
            title: "Switch CPU while polling flow stats (paper fig. 5b)".into(),
            x_label: "requests per second (0.1 = none)".into(),
            y_label: "% of one core".into(),
            log_x: true,
            log_y: false,
            series: vec![Series {
                name: "switch process".into(),
                points: points
                    .iter()
                    .filter_map(|p| {
                        p.switch_cpu.map(|c| Point {
                            x: if p.rate > 0.0 { p.rate } else { 0.1 },
                            y: c,
                            lo: None,
                            hi: None,
                        })
                    })
                    .collect(),
            }],
        });
    }
    out.plots.push(Plot {
        name: "stats-response".into(),
        title: "Flow-stats response time (paper fig. 5a)".into(),
        x_label: "requests per second".into(),
        y_label: "µs".into(),
        log_x: true,
        log_y: true,
        series: vec![
            series("last part", &|p| p.response),
            series("first part", &|p| p.first_part),
            series("probe delay", &|p| p.probe_delay),
        ],
    });
    out.data = serde_json::json!({ "config": cfg, "points": points, "cut_by_max_seconds": cut });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_of_a_busy_process_is_measured() {
        let me = std::process::id();
        let m = CpuMeter::start(me).expect("this process");
        let until = Instant::now() + Duration::from_millis(200);
        let mut x = 0u64;
        while Instant::now() < until {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let pct = m.percent().unwrap();
        // A spinning thread: most of a core (less on a busy machine), never more than
        // the cores there are.
        assert!(pct > 20.0 && pct < 100.0 * 64.0, "{pct}");
        assert!(CpuMeter::start(u32::MAX).is_none());
    }
}
