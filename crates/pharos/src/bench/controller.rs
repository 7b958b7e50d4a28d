//! `pharos bench controller`: the cbench-compatible benchmark.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use bench::flood::FloodConfig;
use bench::{run_controller_bench, ControllerBenchConfig, Mode};
use openflow::Version;

use super::{cores, parse_mode, parse_shape, parse_version, seconds, TlsClientArgs};

/// Emulate switches sending PACKET_INs to a controller and count its answers
/// (cbench-compatible: a response is a FLOW_MOD or a PACKET_OUT)
///
/// As cbench does by default, every switch first announces each of its -M addresses
/// (a gratuitous ARP each, as fast as the socket takes them, until the controller has
/// handled them all), then sends PACKET_INs between those addresses, carrying buffer
/// ids. In throughput mode each switch keeps its socket full of PACKET_INs, as cbench does
/// (`--window 0`, the default); `--window N` keeps at most N in flight per switch
/// instead, a load that never overloads a controller. The report gives per-switch rates (min, max, Jain's fairness
/// index) and the generator's own CPU time per message.
#[derive(Debug, clap::Args)]
pub struct ControllerArgs {
    /// The controller
    #[arg(long, default_value = "127.0.0.1:6653", value_name = "ADDR:PORT")]
    addr: SocketAddr,
    /// Switches to emulate
    #[arg(short = 's', long, default_value_t = 16)]
    switches: usize,
    /// Unique source MAC addresses per switch (each announced once before the loops,
    /// unless --no-learn)
    #[arg(short = 'M', long, default_value_t = 100_000)]
    macs: usize,
    /// Skip the learning phase (the controller meets the addresses in the loops)
    #[arg(long)]
    no_learn: bool,
    /// Seconds the learning phase may last; the switches not done by then are reported
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    learn_timeout: f64,
    /// PACKET_INs carry no buffer id (NO_BUFFER, the whole frame), so the controller
    /// must send each packet back in a PACKET_OUT [default: buffer ids, as cbench]
    #[arg(long)]
    no_buffer: bool,
    /// Loops
    #[arg(short = 'l', long, default_value_t = 16)]
    loops: usize,
    /// Milliseconds per loop
    #[arg(short = 'm', long = "ms", default_value_t = 1000)]
    loop_ms: u64,
    /// Loops at the start left out of the overall figures
    #[arg(short = 'w', long, default_value_t = 1)]
    warmup: usize,
    /// throughput (the socket kept full, or a window of PACKET_INs in flight per
    /// switch) or latency (one in flight)
    #[arg(long, default_value = "throughput", value_parser = parse_mode)]
    mode: Mode,
    /// OpenFlow version: 1.0 or 1.3
    #[arg(long = "of", default_value = "1.0", value_parser = parse_version)]
    version: Version,
    /// PACKET_INs in flight per switch in throughput mode; 0: unbounded, cbench's
    /// mode (keep the socket full, read answers as they come)
    #[arg(long, default_value_t = 0)]
    window: usize,
    /// Generator threads [default: one per core]
    #[arg(long)]
    threads: Option<usize>,
    /// Count PACKET_INs answered (each once, matched by the buffer id an answer names,
    /// the packet a PACKET_OUT sends back, or else its xid) instead of FLOW_MODs and
    /// PACKET_OUTs: the figure to compare controllers answering one PACKET_IN with
    /// different messages
    #[arg(long)]
    per_packet_in: bool,
    /// Seconds to wait for every switch to connect; those not connected are reported
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    connect_timeout: f64,
    /// Milliseconds after which an unanswered PACKET_IN is given up (with a window),
    /// and the longest wait for answers after the last loop
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    response_timeout_ms: u64,
    /// Run a connection flood against the same controller during the loops:
    /// RATE,STYLE (styles: silent, garbage, half-handshake, handshake-silent, tls-hello)
    #[arg(long, value_name = "RATE,STYLE")]
    flood: Option<FloodConfig>,
    /// Where --flood goes, if not --addr: another listener of the same controller (its
    /// TLS port, for a tls-hello flood while the switches use the plain one)
    #[arg(long, value_name = "ADDR:PORT", requires = "flood")]
    flood_target: Option<SocketAddr>,
    /// Run --flood in alternate loops, not through all: after the warm-up, cycles of a
    /// loop for the flood's end to settle, one without it, one for its start to settle,
    /// one with it; the report gives with / without per pair of measured loops, from the
    /// same switches and connections (needs at least 4 loops after the warm-up)
    #[arg(long, requires = "flood")]
    flood_alternate: bool,
    /// Wire the switches into a network the controller's link discovery finds: ring,
    /// tree or tree:FANOUT (LLDP frames relayed between wired ports, hosts behind ports
    /// 1 and 2, port statistics answered); the switches then share one thread
    #[arg(long, value_name = "SHAPE", value_parser = parse_shape)]
    topology: Option<bench::topo::Shape>,
    /// After the learning phase, keep the network up and quiet this many seconds before
    /// the loops (a network to look at, e.g. with the web UI)
    #[arg(long, default_value_t = 0.0, value_name = "SECS")]
    hold: f64,
    /// Spread the switches over N loopback source addresses (127.0.0.1, 127.0.0.2, ...),
    /// as switches on N hosts; the controller must be on loopback too
    #[arg(long, value_name = "N", default_value_t = 0)]
    source_addrs: usize,
    /// A switch refused (closed or reset before the controller's HELLO) gives up at once
    /// (by default it connects again after 100 ms, doubling to 2 s, until
    /// --connect-timeout, as a real switch does; the report says how long each took to
    /// get in)
    #[arg(long)]
    no_retry: bool,
    #[command(flatten)]
    tls: TlsClientArgs,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub(super) fn run(a: ControllerArgs) -> anyhow::Result<ExitCode> {
    let flood = a.flood.map(|mut f| {
        // The flood goes to the controller under test, for as long as the loops last
        // (the run stops it); the address was named, so it may be anywhere.
        f.addr = a.flood_target.unwrap_or(a.addr);
        f.allow_non_loopback = true;
        f.duration = Duration::from_secs(24 * 3600);
        f
    });
    let cfg = ControllerBenchConfig {
        addr: a.addr,
        switches: a.switches,
        macs: a.macs,
        loops: a.loops,
        loop_ms: a.loop_ms,
        warmup: a.warmup,
        mode: a.mode,
        version: a.version,
        window: a.window,
        buffered: !a.no_buffer,
        learn: !a.no_learn,
        learn_timeout: seconds(a.learn_timeout, "--learn-timeout")?,
        threads: a.threads.unwrap_or_else(cores),
        per_packet_in: a.per_packet_in,
        connect_timeout: seconds(a.connect_timeout, "--connect-timeout")?,
        response_timeout: Duration::from_millis(a.response_timeout_ms),
        flood,
        flood_alternate: a.flood_alternate,
        topology: a.topology,
        hold: seconds(a.hold, "--hold")?,
        source_addrs: a.source_addrs,
        retry: !a.no_retry,
        tls: a.tls.config()?,
    };
    if cfg.source_addrs > 0 && !a.addr.ip().is_loopback() {
        anyhow::bail!("--source-addrs spreads switches over loopback addresses: the controller must be on loopback too");
    }
    if let Some(shape) = cfg.topology {
        eprintln!(
            "pharos bench controller: the switches wired as a {shape}{}",
            if cfg.hold.is_zero() {
                String::new()
            } else {
                format!(", held {:.0} s after learning", cfg.hold.as_secs_f64())
            }
        );
    }
    eprintln!(
        "pharos bench controller: {} switches (OpenFlow {}{}, {} mode, window {}) to {}, {}{} loops of {} ms",
        cfg.switches,
        cfg.version,
        if cfg.tls.is_some() { " over TLS" } else { "" },
        cfg.mode,
        if cfg.window == 0 { "unbounded".to_string() } else { cfg.window.to_string() },
        cfg.addr,
        if cfg.learn {
            format!("{} addresses each announced, then ", cfg.macs)
        } else {
            String::new()
        },
        cfg.loops,
        cfg.loop_ms
    );
    let loops = cfg.loops;
    let report = run_controller_bench(&cfg, &mut |l| {
        eprintln!(
            "loop {}/{}: {:.0} responses/s ({} PACKET_INs, {} responses, Jain {}, generator {} ns/message){}",
            l.number,
            loops,
            l.responses_per_sec,
            l.packet_ins,
            l.responses,
            l.switch_rates.jain.map_or("-".into(), |j| format!("{j:.3}")),
            l.generator_cpu_ns_per_message
                .map_or("-".into(), |n| format!("{n:.1}")),
            l.note().map_or(String::new(), |n| format!(" {n}"))
        );
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_table());
    }
    if report.connected == 0 {
        eprintln!(
            "pharos bench controller: error: no switch could connect to {}",
            cfg.addr
        );
        return Ok(ExitCode::FAILURE);
    }
    if !report.silent_switches.is_empty() {
        eprintln!(
            "pharos bench controller: warning: {} of {} switches got no response",
            report.silent_switches.count, report.switches
        );
    }
    Ok(ExitCode::SUCCESS)
}
