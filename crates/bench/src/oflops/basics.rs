//! Test 5, control-channel basics (the paper's §4.2 measured the channel's overheads):
//! echo and barrier round trips on an idle switch, PACKET_IN latency and rate for table
//! misses, PACKET_OUT latency and throughput.
//!
//! * **echo / barrier**: `echo_count` round trips each, one at a time.
//! * **PACKET_IN**: the table holds one flow, a priority-0 table miss to the controller
//!   (whole frames). The probe sends to the ingress data port at each rate of
//!   `packet_in_rates` for `packet_in_seconds`; each PACKET_IN is matched to its probe
//!   frame by the stamp in its data: latency is from the frame's kernel transmit stamp to
//!   the `read` that delivered the PACKET_IN; rate is PACKET_INs received per second.
//! * **PACKET_OUT**: each carrying a stamped probe frame, out of the egress data port,
//!   the frames captured on the egress interface: [`PACKET_OUT_PACED`] one at a time
//!   (1 ms apart) for the latency, from just before the message's `write` to the frame's
//!   kernel receive stamp; then `packet_out_count` as fast as the socket takes them, for
//!   the throughput (frames out per second, from the burst's first write to its last
//!   frame out).
//!
//! Without data ports only the echo and barrier parts run.

use std::time::{Duration, Instant};

use openflow::model::{Action, FlowMod, Match, PortNo};
use serde::Serialize;

use super::channel::{msg_type, now_ns, Channel};
use super::flows::{reset_table, FlowSet, TestError};
use super::live::LiveProbe;
use super::probe::{parse_stamp, Spread, Stamp, StreamSpec};
use super::report::{us, us_spread, Plot, Point, Series, Table, TestOutput};

/// Parameters of test 5.
#[derive(Debug, Clone, Serialize)]
pub struct BasicsConfig {
    pub echo_count: usize,
    pub packet_in_rates: Vec<f64>,
    pub packet_in_seconds: f64,
    pub packet_out_count: usize,
}

impl Default for BasicsConfig {
    fn default() -> BasicsConfig {
        BasicsConfig {
            echo_count: 1000,
            packet_in_rates: vec![100.0, 1000.0, 5000.0, 10_000.0, 20_000.0, 50_000.0],
            packet_in_seconds: 2.0,
            packet_out_count: 10_000,
        }
    }
}

/// PACKET_INs at one offered rate.
#[derive(Debug, Clone, Serialize)]
pub struct PacketInPoint {
    pub offered_pps: f64,
    pub probes_sent: u64,
    pub packet_ins: u64,
    pub received_pps: f64,
    /// Probe transmit to PACKET_IN read (ns).
    pub latency: Option<Spread>,
}

/// PACKET_OUTs: one at a time for latency, then a burst for throughput.
#[derive(Debug, Clone, Serialize)]
pub struct PacketOutResult {
    /// PACKET_OUTs sent one at a time, 1 ms apart.
    pub paced: usize,
    pub paced_received: usize,
    /// Write to the frame's receive stamp, one at a time (ns).
    pub latency: Option<Spread>,
    /// PACKET_OUTs in the burst.
    pub sent: usize,
    pub received: usize,
    pub send_seconds: f64,
    pub out_pps: f64,
    /// Write to the frame's receive stamp in the burst (ns): mostly queueing.
    pub burst_latency: Option<Spread>,
}

/// PACKET_OUTs sent one at a time for the latency.
pub const PACKET_OUT_PACED: usize = 200;

/// Runs test 5; `set` is `None` without data ports.
pub fn run(
    ch: &mut Channel,
    set: Option<&FlowSet>,
    cfg: &BasicsConfig,
    deadline: Option<Instant>,
) -> Result<TestOutput, TestError> {
    let mut echo = Vec::new();
    let mut barrier = Vec::new();
    for _ in 0..cfg.echo_count {
        echo.push(ch.echo(0)? as i64);
        barrier.push(ch.barrier()?.rtt_ns() as i64);
    }
    let echo = Spread::of(&echo);
    let barrier = Spread::of(&barrier);
    let mut pin = Vec::new();
    let mut pout = None;
    let mut cut = false;
    if let Some(set) = set {
        reset_table(ch)?;
        let to_ctl = [Action::output(PortNo::Controller)];
        ch.send_flow_mods(&[FlowMod::add(Match::default(), &to_ctl).priority(0)])?;
        ch.barrier()?;
        for (i, &rate) in cfg.packet_in_rates.iter().enumerate() {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                cut = true;
                break;
            }
            pin.push(packet_ins(
                ch,
                set,
                rate,
                cfg.packet_in_seconds,
                0x5000 + i as u32,
            )?);
        }
        reset_table(ch)?;
        if !cut && cfg.packet_out_count > 0 {
            pout = Some(packet_outs(ch, set, cfg.packet_out_count)?);
        }
    }
    let mut out = TestOutput::new("basics");
    let mut t = Table::new(
        "Control channel (test 5): round trips on an idle switch, µs",
        &["exchange", "count", "median", "p10", "p90", "p99"],
    );
    for (name, s) in [("ECHO", echo), ("BARRIER", barrier)] {
        if let Some(s) = s {
            t.row(vec![
                name.into(),
                s.n.to_string(),
                us(s.median as f64),
                us(s.p10 as f64),
                us(s.p90 as f64),
                us(s.p99 as f64),
            ]);
        }
    }
    out.tables.push(t);
    if !pin.is_empty() {
        let mut t = Table::new(
            "PACKET_IN for table misses: probe frames offered, PACKET_INs received",
            &[
                "offered/s",
                "probes sent",
                "PACKET_INs",
                "received/s",
                "latency µs, median [p10, p90]",
            ],
        );
        for p in &pin {
            t.row(vec![
                format!("{}", p.offered_pps),
                p.probes_sent.to_string(),
                p.packet_ins.to_string(),
                format!("{:.0}", p.received_pps),
                us_spread(p.latency.as_ref()),
            ]);
        }
        t.note = Some(
            "latency: probe frame's kernel transmit stamp to the read that delivered its PACKET_IN"
                .into(),
        );
        out.tables.push(t);
        let best = pin.iter().map(|p| p.received_pps).fold(0.0f64, f64::max);
        out.findings.push(format!(
            "table-miss PACKET_INs: at most {best:.0} per second received"
        ));
        out.plots.push(Plot {
            name: "basics-packet-in".into(),
            title: "PACKET_IN rate and latency for table misses".into(),
            x_label: "probe frames offered per second".into(),
            y_label: "PACKET_INs received per second".into(),
            log_x: true,
            log_y: true,
            series: vec![Series {
                name: "received".into(),
                points: pin
                    .iter()
                    .map(|p| Point {
                        x: p.offered_pps,
                        y: p.received_pps.max(1.0),
                        lo: None,
                        hi: None,
                    })
                    .collect(),
            }],
        });
    } else if set.is_none() {
        out.findings
            .push("no --data-port: PACKET_IN and PACKET_OUT not measured".into());
    }
    if let Some(p) = &pout {
        let mut t = Table::new(
            "PACKET_OUT out of the egress data port: one at a time, then a burst",
            &[
                "mode",
                "sent",
                "frames out",
                "frames out/s",
                "latency µs, median [p10, p90]",
            ],
        );
        t.row(vec![
            "1 ms apart".into(),
            p.paced.to_string(),
            p.paced_received.to_string(),
            "-".into(),
            us_spread(p.latency.as_ref()),
        ]);
        t.row(vec![
            "burst".into(),
            p.sent.to_string(),
            p.received.to_string(),
            format!("{:.0}", p.out_pps),
            us_spread(p.burst_latency.as_ref()),
        ]);
        t.note = Some(format!(
            "latency: just before the PACKET_OUT's write to the frame's kernel receive stamp \
             (in the burst, mostly queueing); the burst took {:.3} s to write",
            p.send_seconds
        ));
        out.tables.push(t);
        out.findings.push(format!(
            "PACKET_OUT: {} of {} frames out at {:.0} per second",
            p.received, p.sent, p.out_pps
        ));
    }
    if cut {
        out.findings
            .push("cut short by --max-seconds: not every PACKET_IN rate ran".into());
    }
    out.data = serde_json::json!({
        "config": cfg,
        "echo": echo,
        "barrier": barrier,
        "packet_in": pin,
        "packet_out": pout,
        "cut_by_max_seconds": cut,
    });
    Ok(out)
}

fn packet_ins(
    ch: &mut Channel,
    set: &FlowSet,
    rate: f64,
    seconds: f64,
    stream: u32,
) -> Result<PacketInPoint, TestError> {
    let spec = StreamSpec::new(stream, vec![set.frame(0)])
        .rate(rate)
        .duration(Duration::from_secs_f64(seconds));
    // Capture nothing: the frames come back over the control channel.
    let live = LiveProbe::start(&set.ingress.iface, spec, &[])?;
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds) + Duration::from_millis(300);
    let mut got: Vec<(u64, i64)> = Vec::new();
    while let Some(r) = ch.recv(until)? {
        if let Some(e) = r.error() {
            return Err(e.into());
        }
        if r.msg_type != msg_type::PACKET_IN {
            continue;
        }
        if let Some(p) = r.packet_in() {
            if let Some(s) = parse_stamp(p.data()).filter(|s| s.stream == stream) {
                got.push((s.seq, r.at_ns as i64));
            }
        }
    }
    let rec = live.finish(Duration::ZERO)?;
    let tx: std::collections::HashMap<u64, i64> = rec
        .tx
        .iter()
        .filter(|t| t.stream == stream)
        .map(|t| (t.seq, t.tx_ns()))
        .collect();
    let lat: Vec<i64> = got
        .iter()
        .filter_map(|(seq, at)| tx.get(seq).map(|t| at - t))
        .collect();
    Ok(PacketInPoint {
        offered_pps: rate,
        probes_sent: tx.len() as u64,
        packet_ins: got.len() as u64,
        received_pps: got.len() as f64 / seconds,
        latency: Spread::of(&lat),
    })
}

fn packet_outs(
    ch: &mut Channel,
    set: &FlowSet,
    count: usize,
) -> Result<PacketOutResult, TestError> {
    let stream = 0x5100;
    let live = LiveProbe::capture_only(&[set.egress.iface.as_str()])?;
    let frame = set.frame(0);
    let paced = PACKET_OUT_PACED;
    let mut sent_at = Vec::with_capacity(paced + count);
    let send = |ch: &mut Channel, seq: u64, sent_at: &mut Vec<i64>| -> Result<(), TestError> {
        let t = now_ns() as i64;
        let bytes = frame.build(&Stamp {
            stream,
            seq,
            template: 0,
            user_tx_ns: t,
        });
        let s = ch.packet_out(set.egress.port_no, &bytes)?;
        sent_at.push(s.first_ns as i64);
        Ok(())
    };
    for seq in 0..paced as u64 {
        send(ch, seq, &mut sent_at)?;
        std::thread::sleep(Duration::from_millis(1));
    }
    ch.barrier()?;
    let first = Instant::now();
    for seq in paced as u64..(paced + count) as u64 {
        send(ch, seq, &mut sent_at)?;
    }
    let send_seconds = first.elapsed().as_secs_f64();
    ch.barrier()?;
    let rec = live.finish(Duration::from_millis(200))?;
    let rx: Vec<_> = rec.rx.iter().filter(|r| r.stream == stream).collect();
    let lat = |burst: bool| -> Vec<i64> {
        rx.iter()
            .filter(|r| (r.seq as usize >= paced) == burst)
            .filter_map(|r| sent_at.get(r.seq as usize).map(|t| r.rx_ns - t))
            .collect()
    };
    let burst_rx: Vec<i64> = rx
        .iter()
        .filter(|r| r.seq as usize >= paced)
        .map(|r| r.rx_ns)
        .collect();
    let span = match (burst_rx.iter().min(), burst_rx.iter().max()) {
        (Some(_), Some(&b)) if sent_at.len() > paced && b > sent_at[paced] => {
            (b - sent_at[paced]) as f64 / 1e9
        }
        _ => send_seconds.max(1e-9),
    };
    Ok(PacketOutResult {
        paced,
        paced_received: rx.iter().filter(|r| (r.seq as usize) < paced).count(),
        latency: Spread::of(&lat(false)),
        sent: count,
        received: burst_rx.len(),
        send_seconds,
        out_pps: burst_rx.len() as f64 / span,
        burst_latency: Spread::of(&lat(true)),
    })
}
