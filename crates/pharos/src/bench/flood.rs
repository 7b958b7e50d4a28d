//! `pharos bench flood`: a connection flood, bounded in rate, connections and time.

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context as _;
use bench::flood::{run_flood, FloodConfig, FloodReport};

use super::{seconds, stop_on_signals};

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

pub(super) fn run(a: FloodArgs) -> anyhow::Result<ExitCode> {
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
