//! `pharos bench`: measuring controllers.
//!
//! * `pharos bench controller`: cbench's benchmark (emulated switches sending PACKET_INs
//!   over TCP after a learning phase; unbounded or windowed throughput, latency), a table
//!   or `--json` on standard output, a line per loop on standard error.
//! * `pharos bench responder`: a trivial controller answering every PACKET_IN with the
//!   messages an app would send (`--answer`), to measure the ceiling of the machine and
//!   of the generator.
//! * `pharos bench flood`: a connection flood, bounded in rate, connections and time.
//! * `pharos bench compare`: Pharos against Ryu, alternating runs (its own flags; see
//!   `pharos bench compare --help`).
//! * `pharos bench switch`: an OpenFlow switch measured as OFLOPS does (Pharos as its
//!   controller, probe traffic on its data ports): see [`switch_cmd`].
//!
//! A run that takes place exits 0, even when switches got no answer (the report counts
//! them under SILENT with the first few, and `silent_switches` in the JSON); bad settings, a generator that
//! cannot start, or no switch connected at all (the report is still printed) exit 1.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bench::flood::{run_flood, FloodConfig, FloodReport};
use bench::{
    run_controller_bench, run_responder_with, Answer, ControllerBenchConfig, Mode, ResponderOptions,
};
use clap::Subcommand;
use openflow::Version;
use signal_hook::consts::{SIGINT, SIGTERM};

/// Benchmark a controller, run a trivial one, flood one with connections, or compare
/// Pharos with Ryu.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Controller(ControllerArgs),
    Responder(ResponderArgs),
    Flood(FloodArgs),
    Fuzz(FuzzArgs),
    Soak(SoakArgs),
    Api(ApiArgs),
    Compare(CompareArgs),
    Switch(Box<switch_cmd::SwitchArgs>),
    Datapath(crate::bench_datapath::DatapathArgs),
}

/// Load a controller's REST API with a steady rate of GET requests and report latency
///
/// Open-loop: request j is due at j/RATE seconds whatever became of the ones before, and
/// its latency counts from when it was due, so a stall of the server shows in every
/// request behind it. Requests are dealt round-robin to --connections threads, each with
/// a keep-alive connection. Bounded in count (RATE x DURATION) and time; loopback only
/// unless --allow-remote. Run it beside `pharos bench controller` to see what API
/// traffic costs the switches.
#[derive(Debug, clap::Args)]
pub struct ApiArgs {
    /// The API's base URL
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    api: String,
    /// The path requested
    #[arg(long, default_value = "/api/v1/switches")]
    path: String,
    /// Requests per second
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// Seconds of load
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    duration: f64,
    /// Threads, each with its own connection
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Seconds one request may take
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    timeout: f64,
    /// Sent as a bearer token (else PHAROS_API_TOKEN, if set; reads on loopback need none)
    #[arg(long)]
    token: Option<String>,
    /// Allow an API that is not on a loopback address
    #[arg(long)]
    allow_remote: bool,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

/// The emulated switches' TLS, for `controller` and `fuzz`.
#[derive(Debug, clap::Args)]
pub struct TlsClientArgs {
    /// Connect over TLS, presenting this certificate (PEM) as every switch's; with
    /// --tls-key and --tls-ca. The controller's certificate is checked against
    /// --tls-ca, not against a name (as Open vSwitch's ssl: connections do)
    #[arg(long, value_name = "FILE", requires_all = ["tls_key", "tls_ca"])]
    tls_cert: Option<std::path::PathBuf>,
    /// The switches' private key (PEM) for --tls-cert
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// The CA certificate (PEM) the controller's certificate must be signed by
    /// (--tls-cert)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_ca: Option<std::path::PathBuf>,
}

impl TlsClientArgs {
    /// The client configuration, if TLS was asked for; an error names the file.
    fn config(&self) -> anyhow::Result<Option<std::sync::Arc<bench::tls::ClientConfig>>> {
        match (&self.tls_cert, &self.tls_key, &self.tls_ca) {
            (Some(cert), Some(key), Some(ca)) => Ok(Some(
                bench::tls::client_config(cert, key, ca)
                    .map_err(|e| anyhow::anyhow!("--tls-cert/--tls-key/--tls-ca: {e}"))?,
            )),
            _ => Ok(None),
        }
    }
}

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

/// A trivial controller: handshake, then canned messages for every PACKET_IN
///
/// It measures the ceiling of this machine and of the generator, nothing more: it has
/// no admission tier and handshakes every connection it accepts, so a connection flood
/// (`pharos bench flood`, `--flood`) collapses its throughput. Benchmark floods
/// against a real controller.
#[derive(Debug, clap::Args)]
pub struct ResponderArgs {
    /// Where to accept switches
    #[arg(long, default_value = "127.0.0.1:6653", value_name = "ADDR:PORT")]
    listen: SocketAddr,
    /// What each PACKET_IN is answered with: flow-mod (one FLOW_MOD carrying its buffer
    /// id), packet-out (one PACKET_OUT, of the buffer or carrying the packet),
    /// flow-mod,packet-out (both: what a learning switch sends for an unbuffered
    /// packet), or learning-switch (one buffered FLOW_MOD for a buffered packet, both
    /// for an unbuffered one)
    #[arg(long, default_value = "flow-mod", value_name = "MESSAGES", value_parser = parse_answer)]
    answer: Answer,
    /// Hold each answer this many microseconds (a held PACKET_OUT carries no packet)
    #[arg(long, value_name = "N")]
    delay_us: Option<u64>,
    /// Worker threads [default: one per core]
    #[arg(long)]
    threads: Option<usize>,
    /// Stop after this many seconds [default: at Ctrl-C]
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
}

/// Open connections to a controller at a steady rate, and misbehave on each
#[derive(Debug, clap::Args)]
pub struct FloodArgs {
    /// RATE,STYLE: connections per second and what each does (silent, garbage,
    /// half-handshake, handshake-silent, tls-hello)
    #[arg(value_name = "RATE,STYLE")]
    flood: FloodConfig,
    /// The controller, if not 127.0.0.1:6653; naming it allows a non-loopback target
    #[arg(long, value_name = "ADDR:PORT")]
    target: Option<SocketAddr>,
    /// Connections held open at most (the oldest is closed for each new one)
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Seconds to flood
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

/// Fuzz a running controller over its OpenFlow channel, checking it keeps serving
///
/// Each round, --connections connections at once complete a switch's handshake
/// (OpenFlow 1.0 and 1.3 alternately) and send --messages messages each, made from seed
/// messages by random mutations (bits flipped, edge values, length, type and version
/// changed, cut short, padded, spliced). Two well-behaved switches (1.0 and 1.3) stay
/// connected throughout: after each round each must answer an echo within
/// --answer-within. If one does not, the controller stopped serving a switch that did
/// nothing wrong: the round's inputs are written to --save (replay them with --replay)
/// and the exit status is 1. Seeds: built by the codec, plus every *.packet file under
/// each --vectors directory (e.g. ../shared/openflow-vectors). Repeatable by --seed;
/// fuzzers side by side against one controller need different seeds (their switches'
/// datapath ids carry it). With --tls-cert, every connection first completes a TLS
/// handshake (a TLS port), and one in eight writes forged records under its session.
/// Loopback only unless --target names another address.
#[derive(Debug, clap::Args)]
pub struct FuzzArgs {
    /// The controller, if not 127.0.0.1:6653; naming it allows a non-loopback target
    #[arg(long, value_name = "ADDR:PORT")]
    target: Option<SocketAddr>,
    /// Rounds to run
    #[arg(long, default_value_t = 100)]
    rounds: u64,
    /// Fuzzing connections per round, at once
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Mutated messages per connection
    #[arg(long, default_value_t = 64)]
    messages: usize,
    /// The random generator's seed
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A directory of seed messages (*.packet files, searched recursively); repeatable
    #[arg(long, value_name = "DIR")]
    vectors: Vec<std::path::PathBuf>,
    /// Where to write the inputs of a round after which the controller failed
    #[arg(long, value_name = "DIR")]
    save: Option<std::path::PathBuf>,
    /// Write every round's inputs to DIR too (to make a corpus for --replay)
    #[arg(long, value_name = "DIR")]
    keep: Option<std::path::PathBuf>,
    /// Instead of fuzzing, send the saved streams of DIR (*.bin) and check the same
    #[arg(long, value_name = "DIR")]
    replay: Option<std::path::PathBuf>,
    /// Seconds a well-behaved switch has to answer after a round
    #[arg(long, value_name = "SECS", default_value_t = 2.0)]
    answer_within: f64,
    /// Bound on the whole run, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    max_seconds: f64,
    #[command(flatten)]
    tls: TlsClientArgs,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

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

/// Compare Pharos with Ryu's simple_switch (see `pharos bench compare --help`)
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct CompareArgs {
    /// Passed to the comparison as they are
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn parse_answer(s: &str) -> Result<Answer, String> {
    s.parse()
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

fn parse_version(s: &str) -> Result<Version, String> {
    match s {
        "1.0" | "10" | "1" => Ok(Version::V1_0),
        "1.3" | "13" | "4" => Ok(Version::V1_3),
        other => Err(format!(
            "unknown OpenFlow version {other:?}: expected 1.0 or 1.3"
        )),
    }
}

fn seconds(s: f64, what: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("{what}: {s} is not a duration"))
}

/// Runs `pharos bench ...`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Controller(a) => controller(a),
        Command::Responder(a) => responder(a),
        Command::Flood(a) => flood(a),
        Command::Fuzz(a) => fuzz(a),
        Command::Soak(a) => soak(a),
        Command::Api(a) => api_load(a),
        Command::Compare(a) => Ok(bench::compare::main(&a.args)),
        Command::Switch(a) => switch_cmd::run(*a),
        Command::Datapath(a) => crate::bench_datapath::run_cmd(a),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn controller(a: ControllerArgs) -> anyhow::Result<ExitCode> {
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

/// A stop flag set by Ctrl-C or SIGTERM.
fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("installing signal handlers")?;
    }
    Ok(stop)
}

fn responder(a: ResponderArgs) -> anyhow::Result<ExitCode> {
    let stop = stop_on_signals()?;
    let delay = a.delay_us.map(Duration::from_micros);
    let until = a
        .duration
        .map(|s| seconds(s, "--duration"))
        .transpose()?
        .map(|d| Instant::now() + d);
    let threads = a.threads.unwrap_or_else(cores);
    let opts = ResponderOptions {
        answer: a.answer,
        delay,
        threads,
        ..ResponderOptions::default()
    };
    let handle = run_responder_with(a.listen, opts, Arc::clone(&stop))
        .with_context(|| format!("listening on {}", a.listen))?;
    eprintln!(
        "pharos bench responder: listening on {} ({threads} threads{}); Ctrl-C to stop",
        handle.local_addr(),
        delay.map_or(String::new(), |d| format!(
            ", answers held {} µs",
            d.as_micros()
        ))
    );
    let start = Instant::now();
    let mut last = (Instant::now(), 0);
    while !stop.load(Ordering::SeqCst) && until.is_none_or(|u| Instant::now() < u) {
        std::thread::sleep(Duration::from_millis(100));
        let now = Instant::now();
        if now.duration_since(last.0) >= Duration::from_secs(1) {
            let answers = handle.answers_sent();
            eprintln!(
                "{} switches, {:.0} answers/s, {} answers",
                handle.accepted(),
                (answers - last.1) as f64 / now.duration_since(last.0).as_secs_f64(),
                answers
            );
            last = (now, answers);
        }
    }
    let (answers, packet_ins) = (handle.answers_sent(), handle.packet_ins_received());
    let messages = handle.messages_sent();
    handle.stop();
    eprintln!(
        "pharos bench responder: {packet_ins} PACKET_INs, {answers} answered with {messages} messages in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn flood(a: FloodArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = a.flood;
    if let Some(t) = a.target {
        cfg.addr = t;
        cfg.allow_non_loopback = true;
    }
    if let Some(n) = a.max_connections {
        cfg.max_connections = n;
    }
    if let Some(s) = a.duration {
        cfg.duration = seconds(s, "--duration")?;
    }
    let stop = stop_on_signals()?;
    eprintln!(
        "pharos bench flood: {} connections/s ({}) to {} for {:.1} s, at most {} open",
        cfg.rate,
        cfg.style,
        cfg.addr,
        cfg.duration.as_secs_f64(),
        cfg.max_connections
    );
    let report = run_flood(&cfg, stop).context("flood")?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", flood_table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn soak(a: SoakArgs) -> anyhow::Result<ExitCode> {
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

fn fuzz(a: FuzzArgs) -> anyhow::Result<ExitCode> {
    let addr = match a.target {
        Some(t) => t,
        None => bench::flood::FloodConfig::DEFAULT_ADDR,
    };
    let mut cfg = bench::live_fuzz::FuzzConfig::new(addr);
    cfg.rounds = a.rounds;
    cfg.connections = a.connections.max(1);
    cfg.messages = a.messages;
    cfg.seed = a.seed;
    cfg.vectors = a.vectors;
    cfg.save = a.save;
    cfg.keep = a.keep;
    cfg.answer_within = seconds(a.answer_within, "--answer-within")?;
    cfg.max_time = seconds(a.max_seconds, "--max-seconds")?;
    cfg.tls = a.tls.config()?;
    let report = match &a.replay {
        Some(dir) => {
            eprintln!("pharos bench fuzz: replaying {} against {addr}", dir.display());
            bench::live_fuzz::replay(&cfg, dir)
        }
        None => {
            eprintln!(
                "pharos bench fuzz: {} rounds of {} connections x {} messages against {addr}{}, seed {}",
                cfg.rounds,
                cfg.connections,
                cfg.messages,
                if cfg.tls.is_some() { " over TLS" } else { "" },
                cfg.seed
            );
            bench::live_fuzz::run(&cfg, |line| eprintln!("pharos bench fuzz: {line}"))
        }
    }
    .map_err(|e| anyhow::anyhow!(e))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "seeds {} (1.0) + {} (1.3); rounds {}; connections {} ({} handshakes done); messages {}; \
             closed by the controller {}; slowest answer to a well-behaved switch {:.1} ms{}",
            report.seeds[0],
            report.seeds[1],
            report.rounds,
            report.connections,
            report.handshakes,
            report.messages,
            report.closed_by_controller,
            report.slowest_answer_ms,
            if report.replayed > 0 {
                format!("; {} streams replayed", report.replayed)
            } else {
                String::new()
            }
        );
        for f in &report.findings {
            println!("FINDING after round {}: {}", f.round, f.what);
            if let Some(p) = &f.saved {
                println!(
                    "  the round's inputs: {} (replay with --replay)",
                    p.display()
                );
            }
        }
    }
    Ok(if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn api_load(a: ApiArgs) -> anyhow::Result<ExitCode> {
    let cfg = bench::api_load::ApiLoadConfig {
        url: a.api,
        path: a.path,
        rate: a.rate,
        duration: seconds(a.duration, "--duration")?,
        connections: a.connections,
        token: a.token.or_else(|| {
            std::env::var("PHAROS_API_TOKEN")
                .ok()
                .filter(|t| !t.is_empty())
        }),
        timeout: seconds(a.timeout, "--timeout")?,
        allow_remote: a.allow_remote,
    };
    let stop = stop_on_signals()?;
    let report = bench::api_load::run_api_load(&cfg, &stop)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        bench::api_load::print_report(&report);
    }
    Ok(if report.ok == report.sent && report.unsent == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn flood_table(r: &FloodReport) -> String {
    let mut s = format!(
        "flood {} to {}: {} connections/s requested, {:.0}/s achieved over {:.1} s ({:?})\n",
        r.style, r.addr, r.rate_requested, r.rate_achieved, r.elapsed_s, r.ended_by
    );
    s += &format!(
        "attempted {}  connected {}  failed {}  abandoned {}\n",
        r.attempted, r.connected, r.failed, r.abandoned
    );
    s += &format!(
        "closed by the controller {}  closed for the cap {}  open at the end {}  peak open {}  handshakes completed {}\n",
        r.closed_by_peer, r.closed_for_cap, r.open_at_end, r.peak_open, r.handshakes_completed
    );
    for (why, n) in &r.failed_by_reason {
        s += &format!("failed: {n} x {why}\n");
    }
    if r.fd_limited {
        s += &format!(
            "note: the open-file limit ({}) bounded the connections held to {}\n",
            r.fd_limit, r.max_connections
        );
    }
    s
}

fn parse_shape(s: &str) -> Result<bench::topo::Shape, String> {
    s.parse()
}

/// `pharos bench switch`: the OFLOPS tests against one switch.
pub mod switch_cmd {
    use std::net::SocketAddr;
    use std::path::PathBuf;
    use std::process::ExitCode;
    use std::time::Instant;

    use anyhow::{bail, Context as _};
    use bench::oflops::channel::{Channel, ChannelConfig, DataPort, Endpoint};
    use bench::oflops::insert::{FlowSet, InsertConfig, MatchKind, Op};
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
}
