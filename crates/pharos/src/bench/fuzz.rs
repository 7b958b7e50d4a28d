//! `pharos bench fuzz`: a running controller fuzzed over its OpenFlow channel.

use std::net::SocketAddr;
use std::process::ExitCode;

use super::{seconds, TlsClientArgs};

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

pub(super) fn run(a: FuzzArgs) -> anyhow::Result<ExitCode> {
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
