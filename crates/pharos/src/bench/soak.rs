//! `pharos bench soak`: many switches connected for a long time, some churning.

use std::net::SocketAddr;
use std::process::ExitCode;

use openflow::Version;

use super::{parse_version, seconds};

/// Keep many switches connected to a controller for a long time, some of them churning,
/// and check it serves every one with a flat footprint
///
/// --switches switches connect (spread over --source-addrs loopback addresses) and stay,
/// each sending an ECHO_REQUEST every --probe-interval; one whose probe waits longer is
/// unserved. --churn of them (a share, per minute) close and connect again at once, as a
/// restarting switch does; a refused connection is retried with backoff. Every --sample
/// seconds a line gives switches ready, unserved, churned, rejoin times, and with --pid
/// the controller's resident memory, file descriptors and threads. The verdict: every
/// switch served throughout, and memory flat after --warmup (growth under --max-growth)
/// with descriptors and threads not growing; exit status 1 if not. Load is another
/// process's job: run `pharos bench controller` beside it on a few switches.
#[derive(Debug, clap::Args)]
pub struct SoakArgs {
    /// The controller, if not 127.0.0.1:6653; naming it allows a non-loopback target
    #[arg(long, value_name = "ADDR:PORT")]
    target: Option<SocketAddr>,
    /// Switches
    #[arg(short = 's', long, default_value_t = 1000)]
    switches: usize,
    /// The first switch's datapath id (the others follow): keep clear of the switches
    /// of a `pharos bench controller` run beside it, which are 1, 2, ...
    #[arg(long, value_name = "DPID", default_value_t = openflow::Dpid(1))]
    first_dpid: openflow::Dpid,
    /// Loopback source addresses to spread the switches over (127.0.0.1 upwards)
    #[arg(long, value_name = "N", default_value_t = 10)]
    source_addrs: usize,
    /// OpenFlow version of the switches
    #[arg(long = "of", default_value = "1.3", value_parser = parse_version)]
    version: Version,
    /// Seconds the run lasts once the switches are in
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    duration: f64,
    /// Share of the switches disconnecting and reconnecting per minute (0.1: 10%)
    #[arg(long, value_name = "SHARE", default_value_t = 0.1)]
    churn: f64,
    /// Seconds between two probes of a switch (and the longest a probe may wait)
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    probe_interval: f64,
    /// Seconds between two samples
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    sample: f64,
    /// The controller's process id, to sample its memory, descriptors and threads
    #[arg(long)]
    pid: Option<u32>,
    /// Seconds into the run from which memory must stay flat
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    warmup: f64,
    /// The most resident memory may grow after the warm-up (0.05: 5%)
    #[arg(long, value_name = "SHARE", default_value_t = 0.05)]
    max_growth: f64,
    /// Seconds the switches have to get in at first
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    connect_timeout: f64,
    /// Write a plot of resident memory over time as DIR/soak.svg
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub(super) fn run(a: SoakArgs) -> anyhow::Result<ExitCode> {
    let addr = a.target.unwrap_or(bench::flood::FloodConfig::DEFAULT_ADDR);
    if !(0.0..=60.0).contains(&a.churn) {
        anyhow::bail!(
            "--churn {} is not a share between 0 and 1 (per minute)",
            a.churn
        );
    }
    let mut cfg = bench::soak::SoakConfig::new(addr);
    cfg.switches = a.switches;
    cfg.first_dpid = a.first_dpid.0.max(1);
    cfg.source_addrs = a.source_addrs;
    cfg.version = a.version;
    cfg.duration = seconds(a.duration, "--duration")?;
    cfg.churn_per_minute = a.churn;
    cfg.probe_interval = seconds(a.probe_interval, "--probe-interval")?;
    cfg.sample_interval = seconds(a.sample, "--sample")?;
    cfg.pid = a.pid;
    cfg.warmup = seconds(a.warmup, "--warmup")?;
    cfg.max_growth = a.max_growth;
    cfg.connect_timeout = seconds(a.connect_timeout, "--connect-timeout")?;
    if cfg.probe_interval.is_zero() || cfg.sample_interval.is_zero() {
        anyhow::bail!("--probe-interval and --sample must be more than 0");
    }
    eprintln!(
        "pharos bench soak: {} switches from {} addresses against {addr} for {:.0} s",
        cfg.switches,
        cfg.source_addrs.max(1),
        cfg.duration.as_secs_f64()
    );
    let quiet = a.json;
    let report = bench::soak::run_soak(&cfg, &mut |s| {
        if !quiet {
            let p = s
                .process
                .map(|p| {
                    format!(
                        "; RSS {} KiB, {} fds, {} threads",
                        p.rss_kib, p.fds, p.threads
                    )
                })
                .unwrap_or_default();
            eprintln!(
                "pharos bench soak: {:.0} s: {} ready, {} connecting, {} unserved, {} churned{p}",
                s.at_s, s.ready, s.connecting, s.unserved, s.churned
            );
        }
    })
    .map_err(|e| anyhow::anyhow!("pharos bench soak: {e}"))?;
    if let Some(dir) = &a.plot {
        let path = report.plot(dir)?;
        eprintln!("pharos bench soak: plot written to {}", path.display());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render());
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
