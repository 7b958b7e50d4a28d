//! `pharos bench switch`: the OFLOPS tests against one switch.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context as _};
use bench::oflops::channel::{Channel, ChannelConfig, DataPort, Endpoint};
use bench::oflops::flows::{FlowSet, MatchKind};
use bench::oflops::insert::{InsertConfig, Op};
use bench::oflops::report::TestOutput;
use bench::oflops::{basics, insert, interact, modify, stats};
use openflow::Version;

use super::{parse_version, seconds};

const TESTS: [&str; 5] = ["modify", "insert", "stats", "interact", "basics"];

/// Measure an OpenFlow switch: Pharos as its only controller, probe traffic on its
/// data ports (OFLOPS, Rotsos et al., PAM 2012)
///
/// Pharos plays the controller on the switch's control channel (--switch-listen: wait
/// for the switch to connect; --switch-connect: connect to a switch listening, OVS
/// ptcp:), and sends and captures probe frames (100-byte UDP, each stamped with a
/// stream id and sequence number, kernel timestamps) on Linux interfaces wired to the
/// switch's data ports (--data-port SWITCH_PORT=IFACE; the first is where probes go
/// in, the second where they come out). No other controller may be connected; all
/// traffic stays on the interfaces named.
///
/// Tests (--test, repeatable or comma-separated; default all):
///
/// modify: packet modification latency per action against a plain output, and loss
/// (the paper's table 2).
///
/// insert: flow insertion delay for N flows (exact and wildcard; add, and modify of
/// existing flows): from the first FLOW_MOD to the BARRIER_REPLY, the FLOW_MODs'
/// transmission time, and the time until the data plane forwards a probe on the last
/// new flow; median and 10th/90th percentiles over --insert-reps runs; whether the
/// barrier reply came before the flows were active (figures 3 and 4). And delete:
/// how long the data plane goes on forwarding after flows are deleted.
///
/// stats: response time of full-table flow-stats requests at rising polling rates,
/// reply segmentation, and the probe's delay and loss meanwhile (figure 5).
///
/// interact: --interact-flows exact flows, --interact-modified of them modified while
/// statistics are polled at each rate: the time until the modified flows are active
/// (figure 6).
///
/// basics: echo and barrier round trips, PACKET_IN latency and rate for table misses
/// at rising probe rates, PACKET_OUT latency and throughput.
///
/// Each test prints a table and its findings; --json prints everything as JSON
/// instead; --plots DIR writes the figures as SVG. --max-seconds bounds the run: no
/// new measurement starts after it (the report says what was cut). Example, against
/// Open vSwitch in a lab:
///
///   pharos lab up --topo single,2 --controller tcp:127.0.0.1:6653 --probe
///   pharos bench switch --switch-listen 127.0.0.1:6653 --data-port lab-s1-eth1=pb-lab-1 --data-port lab-s1-eth2=pb-lab-2
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct SwitchArgs {
    /// Listen here for the switch to connect (the switch's controller target)
    #[arg(
        long,
        value_name = "ADDR:PORT",
        conflicts_with = "switch_connect",
        required_unless_present = "switch_connect"
    )]
    switch_listen: Option<SocketAddr>,
    /// Connect to a switch listening here (OVS `ptcp:`)
    #[arg(long, value_name = "ADDR:PORT")]
    switch_connect: Option<SocketAddr>,
    /// OpenFlow version to speak
    #[arg(long = "of", default_value = "1.3", value_parser = parse_version)]
    version: Version,
    /// A switch port and the Linux interface wired to it, SWITCH_PORT=IFACE (the
    /// switch's port name, as `ovs-vsctl list-ports` gives it). The first is the
    /// probes' ingress, the second their egress. Without two, only the echo and
    /// barrier parts of basics run
    #[arg(long = "data-port", value_name = "NAME=IFACE")]
    data_ports: Vec<String>,
    /// Tests to run: modify, insert, stats, interact, basics, all
    #[arg(long = "test", value_delimiter = ',', default_value = "all")]
    tests: Vec<String>,
    /// Print JSON instead of tables
    #[arg(long)]
    json: bool,
    /// Write the figures as SVG files into this directory
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
    /// Start no new measurement after this many seconds
    #[arg(long, value_name = "SECS")]
    max_seconds: Option<f64>,
    /// Seconds any one exchange may take (a barrier, an echo, a stats reply) before
    /// the switch is reported as not answering
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    timeout: f64,
    /// Seconds to wait for the switch to connect (or to accept)
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    connect_timeout: f64,

    /// modify: actions measured (output, eth_src, eth_dst, ip_src, ip_dst, dscp,
    /// dec_ttl, udp_src, udp_dst, vlan_push, vlan_vid, vlan_pcp, vlan_pop,
    /// eth_src+dst, ip+ports, all); the plain output baseline is always run first
    #[arg(long, value_delimiter = ',', default_value = "all-cases")]
    modify_actions: Vec<String>,
    /// modify: probe frames per second
    #[arg(long, default_value_t = 125_000.0)]
    modify_rate: f64,
    /// modify: probe frame length in bytes
    #[arg(long, default_value_t = 100)]
    modify_frame_len: usize,
    /// modify: seconds of probe per action
    #[arg(long, default_value_t = 2.0)]
    modify_seconds: f64,
    /// modify: passes over all actions
    #[arg(long, default_value_t = 1)]
    modify_reps: usize,
    /// modify: busy-wait each frame's due time (constant spacing, a whole core)
    /// instead of small bursts
    #[arg(long)]
    modify_spin: bool,

    /// insert: numbers of flows
    #[arg(long, value_delimiter = ',', default_value = "1,10,100,1000,10000")]
    insert_flows: Vec<usize>,
    /// insert: matches, exact and/or wildcard
    #[arg(long, value_delimiter = ',', default_value = "exact,wildcard")]
    insert_match: Vec<String>,
    /// insert: operations: add (new flows), modify (existing dropping flows made to
    /// forward), delete (forwarding flows removed: the times are until the data plane
    /// stops forwarding, quiet for 1 s)
    #[arg(long, value_delimiter = ',', default_value = "add,modify,delete")]
    insert_op: Vec<String>,
    /// insert: runs per point
    #[arg(long, default_value_t = 5)]
    insert_reps: usize,
    /// insert: probe frames per second (alternating the last flow and each flow)
    #[arg(long, default_value_t = 10_000.0)]
    insert_probe_rate: f64,
    /// insert: seconds a run may wait for the data plane
    #[arg(long, default_value_t = 10.0)]
    insert_timeout: f64,

    /// stats: flows in the table, all hit by the probe
    #[arg(long, default_value_t = 100)]
    stats_flows: usize,
    /// stats: flow-stats requests per second, in turn (0 = no polling, the baseline)
    #[arg(long, value_delimiter = ',', default_value = "0,1,10,50,100,500")]
    stats_rates: Vec<f64>,
    /// stats: seconds per rate
    #[arg(long, default_value_t = 3.0)]
    stats_seconds: f64,
    /// stats: probe frames per second
    #[arg(long, default_value_t = 10_000.0)]
    stats_probe_rate: f64,
    /// stats, interact: the switch's process on this machine, a process id or a pid
    /// file read when the test starts (for a `pharos lab`: NAME/ovs-vswitchd.pid in
    /// its directory), whose CPU use is reported per polling rate (the paper's
    /// figure 5b, read over SNMP there)
    #[arg(long, value_name = "PID|FILE")]
    switch_pid: Option<String>,

    /// interact: exact flows installed
    #[arg(long, default_value_t = 1024)]
    interact_flows: usize,
    /// interact: flows modified while polling
    #[arg(long, default_value_t = 100)]
    interact_modified: usize,
    /// interact: flow-stats requests per second, in turn (0 = no polling)
    #[arg(long, value_delimiter = ',', default_value = "0,1,10,50,100")]
    interact_rates: Vec<f64>,
    /// interact: runs per rate
    #[arg(long, default_value_t = 5)]
    interact_reps: usize,
    /// interact: probe frames per second
    #[arg(long, default_value_t = 10_000.0)]
    interact_probe_rate: f64,

    /// basics: echo (and barrier) round trips
    #[arg(long, default_value_t = 1000)]
    echo_count: usize,
    /// basics: probe frames per second offered as table misses, in turn
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "100,1000,5000,10000,20000,50000"
    )]
    packet_in_rates: Vec<f64>,
    /// basics: seconds per PACKET_IN rate
    #[arg(long, default_value_t = 2.0)]
    packet_in_seconds: f64,
    /// basics: PACKET_OUTs in the burst
    #[arg(long, default_value_t = 10_000)]
    packet_out_count: usize,
}

fn tests_of(a: &SwitchArgs) -> anyhow::Result<Vec<&'static str>> {
    let mut out = Vec::new();
    for t in &a.tests {
        if t == "all" {
            out.extend(TESTS);
            continue;
        }
        match TESTS.iter().find(|x| **x == t.as_str()) {
            Some(x) => out.push(*x),
            None => bail!(
                "unknown test {t:?}: expected one of {} or all",
                TESTS.join(", ")
            ),
        }
    }
    out.dedup();
    Ok(out)
}

pub fn run(a: SwitchArgs) -> anyhow::Result<ExitCode> {
    let tests = tests_of(&a)?;
    let started = Instant::now();
    let deadline = a
        .max_seconds
        .map(|s| seconds(s, "--max-seconds").map(|d| started + d))
        .transpose()?;
    let kinds = a
        .insert_match
        .iter()
        .map(|k| match k.as_str() {
            "exact" => Ok(MatchKind::Exact),
            "wildcard" => Ok(MatchKind::Wildcard),
            o => bail!("--insert-match {o:?}: expected exact or wildcard"),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let ops = a
        .insert_op
        .iter()
        .map(|k| match k.as_str() {
            "add" => Ok(Op::Add),
            "modify" => Ok(Op::Modify),
            "delete" => Ok(Op::Delete),
            o => bail!("--insert-op {o:?}: expected add, modify or delete"),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if a.insert_flows.contains(&0) {
        bail!("--insert-flows: counts start at 1");
    }
    let endpoint = match (a.switch_listen, a.switch_connect) {
        (Some(l), _) => Endpoint::Listen(l),
        (None, Some(c)) => Endpoint::Connect(c),
        (None, None) => bail!("--switch-listen or --switch-connect is needed"),
    };
    let mut cfg = ChannelConfig::new(endpoint, a.version);
    cfg.timeout = seconds(a.timeout, "--timeout")?;
    cfg.connect_timeout = seconds(a.connect_timeout, "--connect-timeout")?;
    // Table-miss PACKET_INs carry whole probe frames.
    cfg.miss_send_len = 0xffff;
    eprintln!(
        "pharos bench switch: {} for the switch (OpenFlow {}), tests {}",
        match endpoint {
            Endpoint::Listen(l) => format!("listening on {l}"),
            Endpoint::Connect(c) => format!("connecting to {c}"),
        },
        a.version,
        tests.join(", ")
    );
    let mut ch = Channel::open(&cfg).context("opening the control channel")?;
    let info = ch.info().clone();
    eprintln!(
        "switch {}: {} tables, ports {}",
        openflow::Dpid(info.datapath_id),
        info.n_tables,
        info.ports
            .iter()
            .map(|p| format!("{}={}", p.name, p.port_no))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let ports = a
        .data_ports
        .iter()
        .map(|d| DataPort::resolve(&info, d))
        .collect::<Result<Vec<_>, _>>()?;
    let set = match ports.as_slice() {
        [i, e, ..] => Some(FlowSet::new(i, e).context("the data ports")?),
        _ => None,
    };
    let need_probe = |t: &str| t != "basics";
    let mut outputs: Vec<TestOutput> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for t in &tests {
        if need_probe(t) && set.is_none() {
            failed.push(format!("{t}: needs two --data-port"));
            continue;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            failed.push(format!("{t}: not run, --max-seconds reached"));
            continue;
        }
        eprintln!("test {t} ...");
        let t0 = Instant::now();
        let r: anyhow::Result<TestOutput> = match *t {
            "insert" => insert::run(
                &mut ch,
                set.as_ref().unwrap(),
                &InsertConfig {
                    counts: a.insert_flows.clone(),
                    kinds: kinds.clone(),
                    ops: ops.clone(),
                    reps: a.insert_reps,
                    probe_rate: a.insert_probe_rate,
                    run_timeout: seconds(a.insert_timeout, "--insert-timeout")?,
                },
                deadline,
            )
            .map_err(Into::into),
            "stats" => stats::run(
                &mut ch,
                set.as_ref().unwrap(),
                &stats::StatsConfig {
                    flows: a.stats_flows,
                    rates: a.stats_rates.clone(),
                    seconds: a.stats_seconds,
                    probe_rate: a.stats_probe_rate,
                    switch_pid: switch_pid(a.switch_pid.as_deref())?,
                },
                deadline,
            )
            .map_err(Into::into),
            "interact" => interact::run(
                &mut ch,
                set.as_ref().unwrap(),
                &interact::InteractConfig {
                    flows: a.interact_flows,
                    modified: a.interact_modified,
                    rates: a.interact_rates.clone(),
                    reps: a.interact_reps,
                    probe_rate: a.interact_probe_rate,
                    switch_pid: switch_pid(a.switch_pid.as_deref())?,
                    ..interact::InteractConfig::default()
                },
                deadline,
            )
            .map_err(Into::into),
            "basics" => basics::run(
                &mut ch,
                set.as_ref(),
                &basics::BasicsConfig {
                    echo_count: a.echo_count,
                    packet_in_rates: a.packet_in_rates.clone(),
                    packet_in_seconds: a.packet_in_seconds,
                    packet_out_count: a.packet_out_count,
                },
                deadline,
            )
            .map_err(Into::into),
            "modify" => modify::run(
                &mut ch,
                set.as_ref().unwrap(),
                &modify_config(&a)?,
                deadline,
            )
            .map_err(Into::into),
            _ => unreachable!(),
        };
        match r {
            Ok(o) => {
                eprintln!("test {t} done in {:.1} s", t0.elapsed().as_secs_f64());
                if !a.json {
                    println!("{}", o.render());
                }
                outputs.push(o);
            }
            Err(e) => {
                eprintln!("test {t} failed: {e:#}");
                failed.push(format!("{t}: {e:#}"));
                // A channel that broke is not worth going on with.
                if ch.barrier().is_err() {
                    failed.push("the control channel no longer answers: stopped".into());
                    break;
                }
            }
        }
    }
    if let Some(dir) = &a.plots {
        for o in &outputs {
            for p in &o.plots {
                let path = p.write_svg(dir)?;
                eprintln!("wrote {}", path.display());
            }
        }
    }
    if a.json {
        let doc = serde_json::json!({
            "switch": info,
            "control_rx_stamps": if ch.kernel_rx_stamps() { "kernel" } else { "user" },
            "version": a.version,
            "data_ports": ports,
            "seconds": started.elapsed().as_secs_f64(),
            "tests": outputs,
            "failed": failed,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    }
    for f in &failed {
        eprintln!("NOT MEASURED {f}");
    }
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--switch-pid`: a number, or a file holding one.
fn switch_pid(arg: Option<&str>) -> anyhow::Result<Option<u32>> {
    let Some(arg) = arg else { return Ok(None) };
    if let Ok(pid) = arg.parse() {
        return Ok(Some(pid));
    }
    let text = std::fs::read_to_string(arg).with_context(|| format!("--switch-pid {arg}"))?;
    let pid = text
        .trim()
        .parse()
        .with_context(|| format!("--switch-pid {arg}: {text:?} is not a process id"))?;
    Ok(Some(pid))
}

fn modify_config(a: &SwitchArgs) -> anyhow::Result<modify::ModifyConfig> {
    let mut cases = Vec::new();
    for c in &a.modify_actions {
        if c == "all-cases" {
            cases.extend(modify::Case::ALL);
            continue;
        }
        match modify::Case::parse(c) {
            Some(x) => cases.push(x),
            None => bail!(
                "--modify-actions {c:?}: expected one of {}",
                modify::Case::ALL.map(|c| c.name()).join(", ")
            ),
        }
    }
    Ok(modify::ModifyConfig {
        cases,
        rate_pps: a.modify_rate,
        frame_len: a.modify_frame_len,
        duration: seconds(a.modify_seconds, "--modify-seconds")?,
        reps: a.modify_reps,
        spin: a.modify_spin,
        ..modify::ModifyConfig::default()
    })
}
