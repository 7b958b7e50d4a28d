//! `pharos bench`: measuring controllers and switches.
//!
//! * `pharos bench controller`: cbench's benchmark (emulated switches sending PACKET_INs
//!   over TCP after a learning phase; unbounded or windowed throughput, latency), a table
//!   or `--json` on standard output, a line per loop on standard error.
//! * `pharos bench responder`: a trivial controller answering every PACKET_IN with the
//!   messages an app would send (`--answer`), to measure the ceiling of the machine and
//!   of the generator.
//! * `pharos bench flood`: a connection flood, bounded in rate, connections and time.
//! * `pharos bench fuzz`, `soak`, `api`: a running controller fuzzed, kept busy for a
//!   long time, its REST API loaded.
//! * `pharos bench compare`: Pharos against Ryu, alternating runs.
//! * `pharos bench switch`: an OpenFlow switch measured as OFLOPS does (Pharos as its
//!   controller, probe traffic on its data ports): see [`switch_cmd`].
//! * `pharos bench datapath`: a switch's data path against the Linux bridge, IP
//!   forwarding and Open vSwitch (`crate::bench_datapath`).
//!
//! A run that takes place exits 0, even when switches got no answer (the report counts
//! them under SILENT with the first few, and `silent_switches` in the JSON); bad settings, a generator that
//! cannot start, or no switch connected at all (the report is still printed) exit 1.
//!
//! Each command is a module: its clap arguments (`...Args`) and its `run`, which turns
//! them into the bench library's configuration, runs it and prints the report.
//!
//! ```text
//! controller  ControllerArgs: pharos bench controller
//! responder   ResponderArgs: pharos bench responder
//! flood       FloodArgs: pharos bench flood
//! fuzz        FuzzArgs: pharos bench fuzz
//! soak        SoakArgs: pharos bench soak
//! api         ApiArgs: pharos bench api
//! compare     CompareArgs: pharos bench compare
//! switch_cmd  SwitchArgs: pharos bench switch (the OFLOPS tests)
//! mod.rs      the subcommands, and what they share: the switches' TLS flags, parsers
//!             of versions and durations, the signal-set stop flag
//! ```

mod api;
mod compare;
mod controller;
mod flood;
mod fuzz;
mod responder;
mod soak;
pub mod switch_cmd;

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bench::{Answer, Mode};
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
    Controller(controller::ControllerArgs),
    Responder(responder::ResponderArgs),
    Flood(flood::FloodArgs),
    Fuzz(fuzz::FuzzArgs),
    Soak(soak::SoakArgs),
    Api(api::ApiArgs),
    Compare(compare::CompareArgs),
    Switch(Box<switch_cmd::SwitchArgs>),
    Datapath(crate::bench_datapath::DatapathArgs),
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
    pub(super) fn config(
        &self,
    ) -> anyhow::Result<Option<std::sync::Arc<bench::tls::ClientConfig>>> {
        match (&self.tls_cert, &self.tls_key, &self.tls_ca) {
            (Some(cert), Some(key), Some(ca)) => Ok(Some(
                bench::tls::client_config(cert, key, ca)
                    .map_err(|e| anyhow::anyhow!("--tls-cert/--tls-key/--tls-ca: {e}"))?,
            )),
            _ => Ok(None),
        }
    }
}

pub(super) fn parse_answer(s: &str) -> Result<Answer, String> {
    s.parse()
}

pub(super) fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

pub(super) fn parse_version(s: &str) -> Result<Version, String> {
    match s {
        "1.0" | "10" | "1" => Ok(Version::V1_0),
        "1.3" | "13" | "4" => Ok(Version::V1_3),
        other => Err(format!(
            "unknown OpenFlow version {other:?}: expected 1.0 or 1.3"
        )),
    }
}

pub(super) fn seconds(s: f64, what: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("{what}: {s} is not a duration"))
}

/// Runs `pharos bench ...`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Controller(a) => controller::run(a),
        Command::Responder(a) => responder::run(a),
        Command::Flood(a) => flood::run(a),
        Command::Fuzz(a) => fuzz::run(a),
        Command::Soak(a) => soak::run(a),
        Command::Api(a) => api::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Switch(a) => switch_cmd::run(*a),
        Command::Datapath(a) => crate::bench_datapath::run_cmd(a),
    }
}

pub(super) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A stop flag set by Ctrl-C or SIGTERM.
pub(super) fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("installing signal handlers")?;
    }
    Ok(stop)
}

pub(super) fn parse_shape(s: &str) -> Result<bench::topo::Shape, String> {
    s.parse()
}
