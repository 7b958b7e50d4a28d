//! `pharos bench datapath`: a switch's data path judged as the Linux OpenFlow study
//! judged its switch (`shared/papers/001_*`), in one run against the Linux bridge, Linux
//! IP forwarding and Open vSwitch's userspace data path (issue 17).
//!
//! Each device under test forwards between two veth pairs in a namespace of its own
//! (`bench::datapath::testbed`); the generator sends on one pair and receives on the
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
//! from the last, cycling through all of them).
//!
//! Then the paper's last two: wildcard against exact with a traffic mix (switches
//! only), and fairness. For the mix, 1,000 wildcard rules (each a /26 of source
//! addresses, spread over ten different sets of fields, so ten masks) cover 64,000
//! flows of traffic, and exact rules of a higher priority take a share of those flows
//! (1, 0.75, 0.5, 0.25, 0): the frames of that share match exactly, the others a
//! wildcard rule, interleaved frame by frame. For fairness, two streams enter the same
//! port (the paper's first scenario), then two ports (its second): one at a tenth of
//! the 64-byte capacity, the other raised until the device is overloaded; the figure
//! is the difference of their loss probabilities. Switches hold 64 K exact flows
//! meanwhile, as in the paper.

use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use afpacket::{napi_threads, wait_readable};
use anyhow::{bail, Context};
use bench::datapath::gen::{probe_frame, run_streams, Addresses, GenConfig, GenReport, Stream};
use bench::datapath::testbed::Testbed;
use bench::oflops::report::{Plot, Point as PlotPoint, Series, Table};
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
    /// Offered loads of the 64-byte test, as fractions of the measured capacity (no
    /// value: skip the test)
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "0.1,0.5,0.9,1.0,1.5")]
    loads: Vec<f64>,
    /// The core the generator runs on (the device under test gets --dut-cpu)
    #[arg(long, default_value_t = 1)]
    gen_cpu: usize,
    /// The core the device under test runs on
    #[arg(long, default_value_t = 0)]
    dut_cpu: usize,
    /// Exact-match table sizes of the table test (switches only; no value: skip it)
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "1,8192,65536,131072")]
    tables: Vec<u32>,
    /// Wildcard rules of the mix test, each covering 64 flows of traffic (0: skip it)
    #[arg(long, default_value_t = 1000)]
    wildcards: u32,
    /// Shares of the mix test's traffic matching exact rules (the rest: wildcard ones;
    /// no value: skip the test)
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "1,0.75,0.5,0.25,0")]
    exact_shares: Vec<f64>,
    /// The overloading stream's loads in the fairness test, as fractions of the 64-byte
    /// capacity (the other stream stays at 0.1; no value: skip the test)
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "0.4,0.6,0.9,1.2,1.5")]
    fair_loads: Vec<f64>,
    /// The executable run as the Pharos switch (`PATH switch --dpid 1 --port 1=d1 ...`,
    /// inside the device's namespace); by default this pharos. To compare two builds of
    /// the switch in one run's conditions, or to try a stand-in data path that takes the
    /// same arguments
    #[arg(long, value_name = "PATH")]
    switch_exe: Option<PathBuf>,
    /// The Pharos switch's data path (its --datapath): af_packet, af_xdp or
    /// af_xdp_generic
    #[arg(long, value_enum, default_value_t = crate::switch::Datapath::Packet)]
    switch_datapath: crate::switch::Datapath,
    /// The Pharos switch's --rt-priority (with --switch-datapath af_xdp): its thread and
    /// its NAPI threads real-time at this priority
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(u8).range(1..=99))]
    switch_rt_priority: Option<u8>,
    /// JSON instead of tables
    #[arg(long)]
    json: bool,
    /// Also draw the results as SVG plots into this directory
    #[arg(long)]
    plots: Option<PathBuf>,
}

/// One device under test's results.
#[derive(Debug, Serialize)]
struct DutResult {
    dut: String,
    /// The core the device under test ran on (its processes pinned, its interfaces'
    /// receive processing steered there), and the generator's; `None`: one core shared.
    dut_cpu: Option<usize>,
    gen_cpu: Option<usize>,
    /// Throughput of one flow, as fast as the generator sends, per frame size.
    sizes: Vec<Point>,
    /// 64-byte frames at fractions of the capacity measured in `sizes`.
    loads: Vec<Point>,
    /// 64-byte throughput with N exact flows and N flows of traffic (switches only).
    tables: Vec<TablePoint>,
    /// 64-byte throughput against the share of traffic matching exact rules, the rest
    /// matching wildcard ones (switches only).
    mix: Vec<MixPoint>,
    /// Two streams on one port, one at 0.1 of the capacity, one overloading.
    fairness: Vec<FairPoint>,
}

#[derive(Debug, Serialize)]
struct MixPoint {
    /// The share of frames that match an exact rule.
    exact_share: f64,
    exact_rules: u32,
    wildcard_rules: u32,
    point: Point,
    /// 1e9 / received pps: the device's core time per frame, when the generator
    /// saturates it (loss above 0).
    ns_per_frame: f64,
}

#[derive(Debug, Serialize)]
struct FairPoint {
    /// Input ports: 1, both streams on the same port (the paper's first scenario); 2,
    /// each on its own (the second).
    inputs: u8,
    /// The overloading stream's load, as a fraction of the capacity.
    load: f64,
    /// The steady stream (0.1 of the capacity).
    steady: Point,
    /// The overloading one.
    heavy: Point,
    /// Loss probability of the steady stream minus the heavy one's (positive: the heavy
    /// stream got more than its share).
    loss_difference: f64,
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

/// The machine's online cores (not `available_parallelism`, which counts the cores
/// this thread may run on: one, once the generator is pinned).
fn online_cpus() -> usize {
    // SAFETY: sysconf reads a constant.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// Whether the generator and the device under test get cores of their own.
fn separate_cores(a: &DatapathArgs) -> bool {
    online_cpus() > a.gen_cpu.max(a.dut_cpu) && a.gen_cpu != a.dut_cpu
}

/// One generator run of `streams` (the first sent on `g1`, the others as they say).
fn measured_run(bed: &mut Testbed, streams: &[Stream]) -> Vec<GenReport> {
    let Testbed { tx, tx3, rx, .. } = bed;
    run_streams(&mut [tx, tx3], rx, streams)
}

/// One stream from `g1` measured into a [`Point`].
fn point(bed: &mut Testbed, addrs: &Addresses, cfg: GenConfig, load: Option<f64>) -> Point {
    let stream = Stream {
        port: 0,
        addrs: *addrs,
        cfg,
    };
    Point::of(&measured_run(bed, &[stream])[0], load)
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
    wait_forwarding_from(bed, addrs, 0, false)
}

/// [`wait_forwarding`] with a probe of flow `flow` (source address `src_ip + flow`),
/// sent on the generator's second port `g3` if `third`.
fn wait_forwarding_from(
    bed: &mut Testbed,
    addrs: &Addresses,
    flow: u32,
    third: bool,
) -> anyhow::Result<()> {
    let mut from = *addrs;
    from.src_ip = u32::from_be_bytes(addrs.src_ip)
        .wrapping_add(flow)
        .to_be_bytes();
    let probe = probe_frame(&from, 64);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let tx = if third { &mut bed.tx3 } else { &mut bed.tx };
        tx.send(&probe);
        tx.flush()?;
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
        "pharos" => bed
            .pharos_switch_with(
                exe,
                &switch_args(a)
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            )
            .context("pharos switch")?,
        other => bail!("unknown device under test {other:?}: expected pharos, ovs, bridge or ip"),
    };
    let separate = separate_cores(a);
    let dut_cpu = separate.then_some(a.dut_cpu);
    if separate {
        bed.steer_dut_receive(a.dut_cpu)?;
        bed.steer_generator_receive(a.gen_cpu)?;
        let pids = bed.dut_pids();
        if pids.is_empty() && matches!(dut, "pharos" | "ovs") {
            bail!("{dut}: no process id to pin to core {}", a.dut_cpu);
        }
        for pid in pids {
            pin_process(pid, a.dut_cpu)?;
        }
        // Threaded NAPI of the device's interfaces (an AF_XDP switch turns it on: on veth
        // its XDP work runs there): receive processing, so on the device's core too.
        for pid in ["d1", "d2", "d3"].into_iter().flat_map(napi_threads) {
            pin_process(pid, a.dut_cpu)?;
        }
    }
    wait_forwarding(&mut bed, &addrs).with_context(|| format!("{dut} does not forward"))?;
    let duration = Duration::from_secs_f64(a.seconds);
    let mut sizes = Vec::new();
    let mut capacity = 0.0;
    for &size in &a.sizes {
        let p = point(
            &mut bed,
            &addrs,
            GenConfig {
                size,
                duration,
                ..GenConfig::default()
            },
            None,
        );
        if size == 64 {
            capacity = p.received_pps;
        }
        sizes.push(p);
    }
    if capacity == 0.0 {
        let p = point(
            &mut bed,
            &addrs,
            GenConfig {
                size: 64,
                duration,
                ..GenConfig::default()
            },
            None,
        );
        capacity = p.received_pps;
    }
    let mut loads = Vec::new();
    for &load in &a.loads {
        let rate = (capacity * load).max(1.0) as u64;
        let p = point(
            &mut bed,
            &addrs,
            GenConfig {
                size: 64,
                rate_pps: rate,
                duration,
                batch: 16,
                ..GenConfig::default()
            },
            Some(load),
        );
        loads.push(p);
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
            let p = point(
                &mut bed,
                &addrs,
                GenConfig {
                    size: 64,
                    duration,
                    flows: n,
                    ..GenConfig::default()
                },
                None,
            );
            let first = tables
                .first()
                .map_or(p.received_pps, |t| t.point.received_pps);
            tables.push(TablePoint {
                flows: n,
                of_smallest: p.received_pps / first,
                point: p,
            });
        }
    }
    let mut mix: Vec<MixPoint> = Vec::new();
    if matches!(dut, "pharos" | "ovs") && a.wildcards > 0 {
        // The traffic's first source address aligned to 64, so that each /26 rule
        // covers 64 flows of traffic.
        let src = u32::from_be_bytes(addrs.src_ip);
        let first_flow = src.next_multiple_of(64) - src;
        let flows = a.wildcards * 64;
        for &share in &a.exact_shares {
            let (file, exact_rules) = mix_flows_file(&addrs, first_flow, a.wildcards, share)?;
            let replaced = bed.replace_flows(&file);
            let _ = std::fs::remove_file(&file);
            replaced.with_context(|| format!("the mix flows into {dut}"))?;
            wait_forwarding_from(&mut bed, &addrs, first_flow, false)
                .with_context(|| format!("{dut} with the mix flows"))?;
            let p = point(
                &mut bed,
                &addrs,
                GenConfig {
                    size: 64,
                    duration,
                    flows,
                    first_flow,
                    ..GenConfig::default()
                },
                None,
            );
            mix.push(MixPoint {
                exact_share: share,
                exact_rules,
                wildcard_rules: a.wildcards,
                ns_per_frame: 1e9 / p.received_pps.max(1.0),
                point: p,
            });
        }
    }
    let mut fairness = Vec::new();
    if !a.fair_loads.is_empty() {
        let addrs3 = bed
            .addrs3
            .context("the test bed's second input has no addresses")?;
        if matches!(dut, "pharos" | "ovs") {
            // 64 K exact flows as in the paper: half for each input.
            let file = exact_flows_file_of(&[(&addrs, 32768, 1), (&addrs3, 32768, 3)])?;
            let replaced = bed.replace_flows(&file);
            let _ = std::fs::remove_file(&file);
            replaced.with_context(|| format!("64 K exact flows into {dut}"))?;
            wait_forwarding(&mut bed, &addrs)
                .with_context(|| format!("{dut} with 64 K exact flows"))?;
            wait_forwarding_from(&mut bed, &addrs3, 0, true)
                .with_context(|| format!("{dut} with 64 K exact flows, from its third port"))?;
        }
        let steady = GenConfig {
            size: 64,
            rate_pps: ((capacity * 0.1) as u64).max(1),
            duration,
            batch: 16,
            ..GenConfig::default()
        };
        for inputs in [1, 2] {
            for &load in &a.fair_loads {
                let heavy = GenConfig {
                    rate_pps: ((capacity * load) as u64).max(1),
                    // On one port, the heavy stream is told apart by its source address.
                    first_flow: if inputs == 1 { 1 } else { 0 },
                    ..steady
                };
                let (port, from) = if inputs == 1 { (0, addrs) } else { (1, addrs3) };
                let streams = [
                    Stream {
                        port: 0,
                        addrs,
                        cfg: steady,
                    },
                    Stream {
                        port,
                        addrs: from,
                        cfg: heavy,
                    },
                ];
                let r = measured_run(&mut bed, &streams);
                fairness.push(FairPoint {
                    inputs,
                    load,
                    loss_difference: r[0].loss - r[1].loss,
                    steady: Point::of(&r[0], Some(0.1)),
                    heavy: Point::of(&r[1], Some(load)),
                });
            }
        }
    }
    Ok(DutResult {
        dut: dut.to_string(),
        dut_cpu,
        gen_cpu: separate.then_some(a.gen_cpu),
        sizes,
        loads,
        tables,
        mix,
        fairness,
    })
}

/// A file of flows for the mix test, in `ovs-ofctl add-flows` syntax: `wildcards`
/// rules of priority 100, rule `j` matching the /26 of source addresses from
/// `src_ip + first_flow + 64 j` plus one of ten sets of other fields (each matching the
/// generator's frames, so that the rules use ten masks), out of port 2; and, at
/// priority 200, one exact rule (every field of OpenFlow 1.0's match) for each flow
/// `k` of the traffic with `k % 100 < exact_share * 100`, also out of port 2. Returns
/// the path and the number of exact rules.
fn mix_flows_file(
    a: &Addresses,
    first_flow: u32,
    wildcards: u32,
    exact_share: f64,
) -> anyhow::Result<(PathBuf, u32)> {
    use std::io::Write as _;
    use std::net::Ipv4Addr;
    let path = std::env::temp_dir().join(format!("pharos-datapath-mix-{}", std::process::id()));
    let base = u32::from_be_bytes(a.src_ip).wrapping_add(first_flow);
    let dst = Ipv4Addr::from(a.dst_ip);
    let dst24 = Ipv4Addr::from(u32::from_be_bytes(a.dst_ip) & 0xffff_ff00);
    let (sp, dp) = (a.src_port, a.dst_port);
    let (smac, dmac) = (colon_mac(&a.src_mac), colon_mac(&a.dst_mac));
    let extras = [
        String::new(),
        format!(",tp_dst={dp}"),
        format!(",tp_src={sp}"),
        format!(",nw_dst={dst}"),
        format!(",dl_src={smac}"),
        format!(",dl_dst={dmac}"),
        ",in_port=1".to_string(),
        ",nw_tos=0".to_string(),
        format!(",tp_src={sp},tp_dst={dp}"),
        format!(",nw_dst={dst24}/24"),
    ];
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for j in 0..wildcards {
        writeln!(
            f,
            "priority=100,udp,nw_src={}/26{},actions=output:2",
            Ipv4Addr::from(base.wrapping_add(64 * j)),
            extras[j as usize % extras.len()]
        )?;
    }
    let percent = (exact_share * 100.0).round() as u32;
    let mut exact = 0;
    for k in (0..wildcards * 64).filter(|k| k % 100 < percent) {
        writeln!(
            f,
            "priority=200,in_port=1,dl_src={smac},dl_dst={dmac},vlan_tci=0x0000,udp,\
             nw_src={},nw_dst={dst},nw_tos=0,tp_src={sp},tp_dst={dp},actions=output:2",
            Ipv4Addr::from(base.wrapping_add(k)),
        )?;
        exact += 1;
    }
    f.flush()?;
    Ok((path, exact))
}

/// A file of `n` flows in `ovs-ofctl add-flows` syntax, each matching exactly (every
/// field of OpenFlow 1.0's match) the generator's frames of one source address, out of
/// port 2.
fn exact_flows_file(a: &Addresses, n: u32) -> anyhow::Result<PathBuf> {
    exact_flows_file_of(&[(a, n, 1)])
}

/// [`exact_flows_file`] for several inputs: `n` flows of `a`'s frames entering port
/// `in_port`, for each `(a, n, in_port)`.
fn exact_flows_file_of(sets: &[(&Addresses, u32, u16)]) -> anyhow::Result<PathBuf> {
    use std::io::Write as _;
    let n: u32 = sets.iter().map(|s| s.1).sum();
    let path =
        std::env::temp_dir().join(format!("pharos-datapath-flows-{}-{n}", std::process::id()));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for &(a, n, in_port) in sets {
        let (smac, dmac) = (colon_mac(&a.src_mac), colon_mac(&a.dst_mac));
        let src = u32::from_be_bytes(a.src_ip);
        let dst = std::net::Ipv4Addr::from(a.dst_ip);
        for k in 0..n {
            writeln!(
                f,
                "priority=100,in_port={in_port},dl_src={smac},dl_dst={dmac},vlan_tci=0x0000,udp,\
                 nw_src={},nw_dst={dst},nw_tos=0,tp_src={},tp_dst={},actions=output:2",
                std::net::Ipv4Addr::from(src.wrapping_add(k)),
                a.src_port,
                a.dst_port
            )?;
        }
    }
    f.flush()?;
    Ok(path)
}

fn colon_mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The Pharos switch's options from the bench's.
fn switch_args(a: &DatapathArgs) -> Vec<String> {
    let mut v = vec![
        "--datapath".to_string(),
        a.switch_datapath.name().to_string(),
    ];
    if let Some(p) = a.switch_rt_priority {
        v.extend(["--rt-priority".to_string(), p.to_string()]);
    }
    v
}

/// Loss at full speed below which a device was not saturated by the generator.
const UNSATURATED_LOSS: f64 = 0.005;

fn name(dut: &str) -> &str {
    match dut {
        "pharos" => "pharos switch (one flow in_port=1 actions=output:2)",
        "ovs" => "Open vSwitch userspace (one flow in_port=1 actions=output:2)",
        "bridge" => "Linux bridge",
        "ip" => "Linux IP forwarding",
        other => other,
    }
}

/// A Markdown section: `## title`, then the table.
fn section(title: String, t: &Table) {
    print!("\n## {title}\n\n{}", t.markdown());
}

/// The points of a throughput or load test.
fn points_table(points: &[Point]) -> Table {
    let mut t = Table::new(
        "",
        &[
            "size",
            "load",
            "offered pps",
            "received pps",
            "Mbit/s",
            "loss",
            "p50 µs",
            "p99 µs",
            "max µs",
        ],
    );
    for p in points {
        t.row(vec![
            p.size.to_string(),
            p.load.map_or("max".to_string(), |l| format!("{l:.2}")),
            format!("{:.0}", p.offered_pps),
            format!("{:.0}", p.received_pps),
            format!("{:.0}", p.received_mbps),
            format!("{:.3}", p.loss),
            format!("{:.1}", p.latency_us[0]),
            format!("{:.1}", p.latency_us[2]),
            format!("{:.1}", p.latency_us[4]),
        ]);
    }
    t
}

/// The tables of one device under test, as Markdown sections.
fn print_result(r: &DutResult, a: &DatapathArgs) {
    let dut = name(&r.dut);
    section(
        format!("{dut}: one flow, as fast as the generator sends"),
        &points_table(&r.sizes),
    );
    section(
        format!("{dut}: 64-byte frames against offered load (of the 64-byte rate above)"),
        &points_table(&r.loads),
    );
    if !r.tables.is_empty() {
        let mut t = Table::new(
            "",
            &[
                "flows",
                "received pps",
                "of the smallest table's",
                "p50 µs",
                "p99 µs",
            ],
        );
        for x in &r.tables {
            t.row(vec![
                x.flows.to_string(),
                format!("{:.0}", x.point.received_pps),
                format!("{:.3}", x.of_smallest),
                format!("{:.1}", x.point.latency_us[0]),
                format!("{:.1}", x.point.latency_us[2]),
            ]);
        }
        section(
            format!("{dut}: 64-byte frames, N exact flows and N flows of traffic"),
            &t,
        );
    }
    if !r.mix.is_empty() {
        let mut t = Table::new(
            "",
            &[
                "exact share",
                "exact rules",
                "received pps",
                "ns per frame",
                "p50 µs",
                "p99 µs",
            ],
        );
        for m in &r.mix {
            t.row(vec![
                format!("{:.2}", m.exact_share),
                m.exact_rules.to_string(),
                format!("{:.0}", m.point.received_pps),
                format!("{:.0}", m.ns_per_frame),
                format!("{:.1}", m.point.latency_us[0]),
                format!("{:.1}", m.point.latency_us[2]),
            ]);
        }
        section(
            format!(
                "{dut}: 64-byte frames, {} wildcard rules (ten masks) and exact rules for a \
                 share of {} flows of traffic",
                a.wildcards,
                a.wildcards * 64
            ),
            &t,
        );
    }
    if !r.fairness.is_empty() {
        let mut t = Table::new(
            "",
            &[
                "inputs",
                "heavy load",
                "steady offered pps",
                "heavy offered pps",
                "steady loss",
                "heavy loss",
                "difference",
            ],
        );
        for f in &r.fairness {
            t.row(vec![
                f.inputs.to_string(),
                format!("{:.2}", f.load),
                format!("{:.0}", f.steady.offered_pps),
                format!("{:.0}", f.heavy.offered_pps),
                format!("{:.4}", f.steady.loss),
                format!("{:.4}", f.heavy.loss),
                format!("{:+.4}", f.loss_difference),
            ]);
        }
        section(
            format!(
                "{dut}: fairness, two 64-byte streams into one port, then into two (loads of \
                 the capacity)"
            ),
            &t,
        );
    }
}

/// The paper's figures: throughput against frame size, latency against offered load,
/// throughput against table size and against the traffic mix, fairness.
fn plots(results: &[DutResult]) -> Vec<Plot> {
    let xy = |x: f64, y: f64| PlotPoint {
        x,
        y,
        lo: None,
        hi: None,
    };
    let plot = |name: &str, title: &str, x: &str, y: &str, log: (bool, bool), series| Plot {
        name: name.to_string(),
        title: title.to_string(),
        x_label: x.to_string(),
        y_label: y.to_string(),
        log_x: log.0,
        log_y: log.1,
        series,
    };
    let per_dut = |f: &dyn Fn(&DutResult) -> Vec<PlotPoint>| -> Vec<Series> {
        results
            .iter()
            .map(|r| Series {
                name: r.dut.clone(),
                points: f(r),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let mut out = vec![
        plot(
            "datapath-sizes",
            "Throughput of one flow against frame size",
            "frame size (bytes)",
            "received (kframes/s)",
            (false, false),
            per_dut(&|r| {
                r.sizes
                    .iter()
                    .map(|p| xy(p.size as f64, p.received_pps / 1e3))
                    .collect()
            }),
        ),
        plot(
            "datapath-latency",
            "64-byte latency (p50) against offered load",
            "offered (kframes/s)",
            "latency p50 (µs)",
            (false, true),
            per_dut(&|r| {
                r.loads
                    .iter()
                    .map(|p| xy(p.offered_pps / 1e3, p.latency_us[0]))
                    .collect()
            }),
        ),
        plot(
            "datapath-tables",
            "64-byte throughput against exact-match flows (as many flows of traffic)",
            "exact flows",
            "received (kframes/s)",
            (true, false),
            per_dut(&|r| {
                r.tables
                    .iter()
                    .map(|t| xy(f64::from(t.flows), t.point.received_pps / 1e3))
                    .collect()
            }),
        ),
        plot(
            "datapath-mix",
            "64-byte throughput against the share of traffic matching exact rules",
            "share matching exact rules (the rest: wildcard)",
            "received (kframes/s)",
            (false, false),
            per_dut(&|r| {
                r.mix
                    .iter()
                    .map(|m| xy(m.exact_share, m.point.received_pps / 1e3))
                    .collect()
            }),
        ),
    ];
    for inputs in [1u8, 2] {
        out.push(plot(
            &format!("datapath-fairness-{inputs}"),
            &format!(
                "Loss difference (steady - heavy), {}",
                if inputs == 1 {
                    "one input"
                } else {
                    "two inputs"
                }
            ),
            "heavy stream's load (of the capacity)",
            "loss difference",
            (false, false),
            per_dut(&|r| {
                r.fairness
                    .iter()
                    .filter(|f| f.inputs == inputs)
                    .map(|f| xy(f.load, f.loss_difference))
                    .collect()
            }),
        ));
    }
    out.retain(|p| !p.series.is_empty());
    out
}

pub fn run_cmd(a: DatapathArgs) -> anyhow::Result<ExitCode> {
    if a.seconds <= 0.0 || !a.seconds.is_finite() {
        bail!("--seconds must be above 0, got {}", a.seconds);
    }
    if let Some(s) = a.sizes.iter().find(|s| !(64..=1518).contains(*s)) {
        bail!("--sizes: {s} is not a frame size from 64 to 1518");
    }
    let exe: PathBuf = match &a.switch_exe {
        Some(p) => {
            // Checked before any namespace is made: a typo should cost nothing.
            let meta =
                std::fs::metadata(p).with_context(|| format!("--switch-exe {}", p.display()))?;
            use std::os::unix::fs::PermissionsExt as _;
            if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
                bail!("--switch-exe {}: not an executable file", p.display());
            }
            std::fs::canonicalize(p).with_context(|| format!("--switch-exe {}", p.display()))?
        }
        None => std::env::current_exe().context("where this pharos is")?,
    };
    if online_cpus() > a.gen_cpu {
        pin_self(a.gen_cpu).context("pinning the generator")?;
    }
    if !a.json {
        if separate_cores(&a) {
            println!(
                "Device under test on core {} (its processes pinned, its interfaces' receive \
                 processing steered there with RPS); generator on core {}.",
                a.dut_cpu, a.gen_cpu
            );
        } else {
            println!("One core for the device under test and the generator.");
        }
        if a.switch_exe.is_some() {
            println!("The Pharos switch run: {} switch ...", exe.display());
        }
        if a.dut.iter().any(|d| d == "pharos") {
            println!(
                "The Pharos switch's options: {}.",
                switch_args(&a).join(" ")
            );
        }
    }
    let mut results = Vec::new();
    for dut in &a.dut {
        let r = measure(dut, &a, &exe)?;
        if !a.json {
            print_result(&r, &a);
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
    let mut ratios: Vec<(String, f64)> = match base("pharos") {
        Some(ours) => ["ovs", "bridge", "ip"]
            .iter()
            .filter_map(|d| base(d).map(|b| (format!("pharos / {d}"), ours / b)))
            .collect(),
        None => Vec::new(),
    };
    for r in &results {
        if let [first, .., last] = &r.tables[..] {
            ratios.push((
                format!(
                    "{}: {} exact flows / {} (throughput)",
                    r.dut, last.flows, first.flows
                ),
                last.of_smallest,
            ));
        }
        let share = |s: f64| r.mix.iter().find(|m| m.exact_share == s);
        if let (Some(exact), Some(wild)) = (share(1.0), share(0.0)) {
            ratios.push((
                format!(
                    "{}: cost of a frame matching one of {} wildcard rules / an exact one (ns per frame)",
                    r.dut, wild.wildcard_rules
                ),
                wild.ns_per_frame / exact.ns_per_frame,
            ));
        }
        for inputs in [1, 2] {
            if let Some(worst) = r
                .fairness
                .iter()
                .filter(|f| f.inputs == inputs)
                .map(|f| f.loss_difference.abs())
                .reduce(f64::max)
            {
                ratios.push((
                    format!(
                        "{}: largest difference of loss probabilities, {inputs} input(s)",
                        r.dut
                    ),
                    worst,
                ));
            }
        }
    }
    // A device that lost (almost) nothing at full speed forwarded what the generator
    // offered it: its figure is the generator's limit, not its capacity, and a ratio
    // against it says how much each was offered as much as how fast each forwards.
    let unsaturated: Vec<(String, f64)> = results
        .iter()
        .filter_map(|r| {
            let p = r.sizes.iter().find(|p| p.size == 64 && p.load.is_none())?;
            (p.loss < UNSATURATED_LOSS).then(|| (r.dut.clone(), p.loss))
        })
        .collect();
    if let Some(dir) = &a.plots {
        for plot in plots(&results) {
            let path = plot
                .write_svg(dir)
                .with_context(|| format!("plotting {}", plot.name))?;
            if !a.json {
                println!("plot: {}", path.display());
            }
        }
    }
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
                "ratios": ratios,
                "unsaturated_at_64": unsaturated.iter().map(|(d, _)| d).collect::<Vec<_>>(),
            }))?
        );
    } else if !ratios.is_empty() {
        println!("\n## Ratios in this run\n");
        for (k, v) in &ratios {
            println!("- {k}: {v:.3}");
        }
        for (d, loss) in &unsaturated {
            println!(
                "- not saturated: {d} lost {:.2}% at 64 bytes, as fast as the generator \
                 sends; its figure is what it was offered, not its capacity",
                loss * 100.0
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
