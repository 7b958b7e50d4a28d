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
//!
//! ```text
//! mod.rs    DatapathArgs, run_cmd: the devices measured in turn, the ratios, the JSON
//! measure   one device under test: its test bed, pinning, the tests in order
//! flows     the flow files of the table and mix tests (ovs-ofctl syntax)
//! results   what a device measured (DutResult and its points)
//! print     Markdown tables and SVG plots
//! ```
//!
//! The generator and the test bed are the bench library's (`bench::datapath`); this
//! command sits in the binary because it drives `pharos switch`, Open vSwitch and the
//! kernel as subjects.

mod flows;
mod measure;
mod print;
mod results;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};

use measure::{measure, online_cpus, pin_self, separate_cores, switch_args};
use print::{plots, print_result};

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

/// Loss at full speed below which a device was not saturated by the generator.
const UNSATURATED_LOSS: f64 = 0.005;

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
