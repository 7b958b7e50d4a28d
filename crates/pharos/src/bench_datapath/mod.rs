//! `pharos bench datapath`: a switch's data path judged as the Linux OpenFlow study
//! judged its switch (`shared/papers/001_*`), in one run against the Linux bridge, Linux
//! IP forwarding and Open vSwitch's userspace data path (issue 17).
//!
//! Each device under test forwards between two veth pairs in a namespace of its own
//! (`ofswitch::datapath::testbed`); the generator sends on one pair and receives on the
//! other, from its own namespace. On a machine of two or more cores the generator runs
//! on one core and the device under test on another: its process pinned there, and the
//! receive processing of its two interfaces (where the kernel's bridge and forwarding do
//! their work, and where a switch's packet sockets are fed) steered there with RPS, so
//! that every kind gets one core, whichever way it forwards.
//!
//! It runs the paper's first three tests: throughput of one flow against frame size;
//! 64-byte throughput and latency against offered load, under and over the capacity
//! measured; and, for the switches, 64-byte throughput with 1 to 128 K exact-match
//! flows and as many distinct flows of traffic (each frame a different source address
//! from the last, cycling through all of them). Not yet: wildcard against exact and a
//! traffic mix, and the fairness test.

use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use ofswitch::datapath::gen::{probe_frame, run, Addresses, GenConfig, GenReport};
use ofswitch::datapath::testbed::Testbed;
use ofswitch::datapath::wait_readable;
use serde::Serialize;

/// Judge a switch's data path against the Linux bridge, IP forwarding and Open vSwitch
///
/// Needs root, iproute2, and Open vSwitch for `ovs` and `pharos` (ovs-ofctl installs the
/// Pharos switch's flow). Frame sizes count the FCS (64..1518).
#[derive(Debug, clap::Args)]
pub struct DatapathArgs {
    /// Devices under test, in order: pharos, ovs, bridge, ip (comma-separated)
    #[arg(long, value_delimiter = ',', default_value = "pharos,ovs,bridge,ip")]
    dut: Vec<String>,
    /// Seconds of traffic per measurement
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Frame sizes of the throughput test
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,128,256,512,1024,1280,1518"
    )]
    sizes: Vec<usize>,
    /// Offered loads of the 64-byte test, as fractions of the measured capacity
    #[arg(long, value_delimiter = ',', default_value = "0.1,0.5,0.9,1.0,1.5")]
    loads: Vec<f64>,
    /// The core the generator runs on (the device under test gets --dut-cpu)
    #[arg(long, default_value_t = 1)]
    gen_cpu: usize,
    /// The core the device under test runs on
    #[arg(long, default_value_t = 0)]
    dut_cpu: usize,
    /// Exact-match table sizes of the table test (switches only; empty: skip it)
    #[arg(long, value_delimiter = ',', default_value = "1,8192,65536,131072")]
    tables: Vec<u32>,
    /// JSON instead of tables
    #[arg(long)]
    json: bool,
}

/// One device under test's results.
#[derive(Debug, Serialize)]
struct DutResult {
    dut: String,
    /// Throughput of one flow, as fast as the generator sends, per frame size.
    sizes: Vec<Point>,
    /// 64-byte frames at fractions of the capacity measured in `sizes`.
    loads: Vec<Point>,
    /// 64-byte throughput with N exact flows and N flows of traffic (switches only).
    tables: Vec<TablePoint>,
}

#[derive(Debug, Serialize)]
struct TablePoint {
    flows: u32,
    point: Point,
    /// Received pps against the smallest table's.
    of_smallest: f64,
}

#[derive(Debug, Serialize)]
struct Point {
    size: usize,
    /// The offered load as a fraction of the capacity (`None`: as fast as possible).
    load: Option<f64>,
    offered_pps: f64,
    received_pps: f64,
    received_mbps: f64,
    loss: f64,
    /// Latency in µs: p50, p90, p99, p99.9, max.
    latency_us: [f64; 5],
}

impl Point {
    fn of(r: &GenReport, load: Option<f64>) -> Point {
        Point {
            size: r.size,
            load,
            offered_pps: r.offered_pps,
            received_pps: r.received_pps,
            received_mbps: r.received_mbps(),
            loss: r.loss,
            latency_us: r.latency_ns.map(|n| n as f64 / 1e3),
        }
    }
}

/// Pins the calling thread to `cpu`.
fn pin_self(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET within its size; the call reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Pins every thread of process `pid` to `cpu` (`taskset -a`).
fn pin_process(pid: i32, cpu: usize) -> anyhow::Result<()> {
    let out = std::process::Command::new("taskset")
        .args(["-a", "-p", "-c", &cpu.to_string(), &pid.to_string()])
        .output()
        .context("taskset (util-linux)")?;
    if !out.status.success() {
        bail!(
            "taskset -a -p -c {cpu} {pid}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Sends a probe until one comes out (a flow reaches a switch's data path a moment after
/// it is added), for up to 10 s.
fn wait_forwarding(bed: &mut Testbed, addrs: &Addresses) -> anyhow::Result<()> {
    let probe = probe_frame(addrs, 64);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        bed.tx.send(&probe);
        bed.tx.flush()?;
        wait_readable(bed.rx.as_raw_fd(), 50);
        let mut through = false;
        // The UDP payload (after Ethernet, IPv4 and UDP headers): IP forwarding rewrites
        // the addresses, the TTL and the checksum in front of it.
        bed.rx.recv_batch(64, |f| {
            through |= f.len() == probe.len() && f[42..] == probe[42..]
        });
        if through {
            return Ok(());
        }
    }
    bail!("nothing came through in 10 s")
}

fn measure(dut: &str, a: &DatapathArgs, exe: &std::path::Path) -> anyhow::Result<DutResult> {
    let mut bed = Testbed::new().context("the test bed (root and iproute2 needed)")?;
    let addrs = match dut {
        "bridge" => bed.linux_bridge()?,
        "ip" => bed.ip_forwarding()?,
        "ovs" => bed.ovs_userspace().context("Open vSwitch userspace")?,
        "pharos" => bed.pharos_switch(exe).context("pharos switch")?,
        other => bail!("unknown device under test {other:?}: expected pharos, ovs, bridge or ip"),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > a.gen_cpu.max(a.dut_cpu) && a.gen_cpu != a.dut_cpu {
        bed.steer_dut_receive(a.dut_cpu)?;
        for pid in bed.dut_pids() {
            pin_process(pid, a.dut_cpu)?;
        }
    }
    wait_forwarding(&mut bed, &addrs).with_context(|| format!("{dut} does not forward"))?;
    let duration = Duration::from_secs_f64(a.seconds);
    let mut sizes = Vec::new();
    let mut capacity = 0.0;
    for &size in &a.sizes {
        let r = run(
            &mut bed.tx,
            &mut bed.rx,
            &addrs,
            &GenConfig {
                size,
                duration,
                ..GenConfig::default()
            },
        );
        if size == 64 {
            capacity = r.received_pps;
        }
        sizes.push(Point::of(&r, None));
    }
    if capacity == 0.0 {
        let r = run(
            &mut bed.tx,
            &mut bed.rx,
            &addrs,
            &GenConfig {
                size: 64,
                duration,
                ..GenConfig::default()
            },
        );
        capacity = r.received_pps;
    }
    let mut loads = Vec::new();
    for &load in &a.loads {
        let rate = (capacity * load).max(1.0) as u64;
        let r = run(
            &mut bed.tx,
            &mut bed.rx,
            &addrs,
            &GenConfig {
                size: 64,
                rate_pps: rate,
                duration,
                batch: 16,
                ..GenConfig::default()
            },
        );
        loads.push(Point::of(&r, Some(load)));
    }
    let mut tables: Vec<TablePoint> = Vec::new();
    if matches!(dut, "pharos" | "ovs") {
        for &n in &a.tables {
            let file = exact_flows_file(&addrs, n)?;
            let replaced = bed.replace_flows(&file);
            let _ = std::fs::remove_file(&file);
            replaced.with_context(|| format!("{n} exact flows into {dut}"))?;
            wait_forwarding(&mut bed, &addrs)
                .with_context(|| format!("{dut} with {n} exact flows"))?;
            let r = run(
                &mut bed.tx,
                &mut bed.rx,
                &addrs,
                &GenConfig {
                    size: 64,
                    duration,
                    flows: n,
                    ..GenConfig::default()
                },
            );
            let first = tables
                .first()
                .map_or(r.received_pps, |t| t.point.received_pps);
            tables.push(TablePoint {
                flows: n,
                of_smallest: r.received_pps / first,
                point: Point::of(&r, None),
            });
        }
    }
    Ok(DutResult {
        dut: dut.to_string(),
        sizes,
        loads,
        tables,
    })
}

/// A file of `n` flows in `ovs-ofctl add-flows` syntax, each matching exactly (every
/// field of OpenFlow 1.0's match) the generator's frames of one source address, out of
/// port 2.
fn exact_flows_file(a: &Addresses, n: u32) -> anyhow::Result<PathBuf> {
    use std::io::Write as _;
    let path =
        std::env::temp_dir().join(format!("pharos-datapath-flows-{}-{n}", std::process::id()));
    let mac = |m: &[u8; 6]| {
        m.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    let src = u32::from_be_bytes(a.src_ip);
    let dst = std::net::Ipv4Addr::from(a.dst_ip);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for k in 0..n {
        writeln!(
            f,
            "priority=100,in_port=1,dl_src={},dl_dst={},vlan_tci=0x0000,udp,nw_src={},nw_dst={dst},\
             nw_tos=0,tp_src={},tp_dst={},actions=output:2",
            mac(&a.src_mac),
            mac(&a.dst_mac),
            std::net::Ipv4Addr::from(src.wrapping_add(k)),
            a.src_port,
            a.dst_port
        )?;
    }
    f.flush()?;
    Ok(path)
}

fn name(dut: &str) -> &str {
    match dut {
        "pharos" => "pharos switch (one flow in_port=1 actions=output:2)",
        "ovs" => "Open vSwitch userspace (one flow in_port=1 actions=output:2)",
        "bridge" => "Linux bridge",
        "ip" => "Linux IP forwarding",
        other => other,
    }
}

fn table(points: &[Point]) {
    println!(
        "| size | load | offered pps | received pps | Mbit/s | loss | p50 µs | p99 µs | max µs |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in points {
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.3} | {:.1} | {:.1} | {:.1} |",
            p.size,
            p.load.map_or("max".to_string(), |l| format!("{l:.2}")),
            p.offered_pps,
            p.received_pps,
            p.received_mbps,
            p.loss,
            p.latency_us[0],
            p.latency_us[2],
            p.latency_us[4]
        );
    }
}

pub fn run_cmd(a: DatapathArgs) -> anyhow::Result<ExitCode> {
    if a.seconds <= 0.0 || !a.seconds.is_finite() {
        bail!("--seconds must be above 0, got {}", a.seconds);
    }
    if let Some(s) = a.sizes.iter().find(|s| !(64..=1518).contains(*s)) {
        bail!("--sizes: {s} is not a frame size from 64 to 1518");
    }
    let exe: PathBuf = std::env::current_exe().context("where this pharos is")?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > a.gen_cpu {
        pin_self(a.gen_cpu).context("pinning the generator")?;
    }
    let mut results = Vec::new();
    for dut in &a.dut {
        let r = measure(dut, &a, &exe)?;
        if !a.json {
            println!(
                "\n## {}: one flow, as fast as the generator sends\n",
                name(dut)
            );
            table(&r.sizes);
            println!(
                "\n## {}: 64-byte frames against offered load (of the 64-byte rate above)\n",
                name(dut)
            );
            table(&r.loads);
            if !r.tables.is_empty() {
                println!(
                    "\n## {}: 64-byte frames, N exact flows and N flows of traffic\n",
                    name(dut)
                );
                println!("| flows | received pps | of the smallest table's | p50 µs | p99 µs |");
                println!("|---:|---:|---:|---:|---:|");
                for t in &r.tables {
                    println!(
                        "| {} | {:.0} | {:.3} | {:.1} | {:.1} |",
                        t.flows,
                        t.point.received_pps,
                        t.of_smallest,
                        t.point.latency_us[0],
                        t.point.latency_us[2]
                    );
                }
            }
        }
        results.push(r);
    }
    let base = |d: &str| {
        results
            .iter()
            .find(|r| r.dut == d)
            .and_then(|r| r.sizes.iter().find(|p| p.size == 64))
            .map(|p| p.received_pps)
    };
    let ratios: Vec<(String, f64)> = match base("pharos") {
        Some(ours) => ["ovs", "bridge", "ip"]
            .iter()
            .filter_map(|d| base(d).map(|b| (format!("pharos / {d}"), ours / b)))
            .collect(),
        None => Vec::new(),
    };
    if a.json {
        let ratios: serde_json::Map<String, serde_json::Value> = ratios
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::json!(v)))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "seconds": a.seconds,
                "results": results,
                "ratios_64_byte_throughput": ratios,
            }))?
        );
    } else if !ratios.is_empty() {
        println!("\n## 64-byte throughput, ratios in this run\n");
        for (k, v) in &ratios {
            println!("- {k}: {v:.3}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
