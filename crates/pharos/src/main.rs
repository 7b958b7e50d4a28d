//! The `pharos` command.
//!
//! Each subcommand lives in its own module and exposes an `Args` type (clap) and a `run`
//! function returning the process exit code; `main` only parses the command line and
//! dispatches. Adding a subcommand is one variant here and one module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod bench_datapath;
mod config;
mod ctl;
mod lab;
mod ofp;
mod run;
mod switch;

#[derive(Debug, Parser)]
#[command(
    name = "pharos",
    version,
    about = "Pharos, an OpenFlow controller platform"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Bench(bench::Args),
    Ctl(ctl::Args),
    Lab(lab::Args),
    Ofp(ofp::Args),
    Run(run::Args),
    Switch(switch::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench::run(args),
        Command::Ctl(args) => ctl::run(args),
        Command::Lab(args) => lab::run(args),
        Command::Ofp(args) => ofp::run(args),
        Command::Run(args) => run::run(args),
        Command::Switch(args) => switch::run(args),
    };
    match result {
        Ok(code) => code,
        // The reader went away (`pharos ofp decode big.pcap | head`): stop quietly, with
        // the status a shell gives a process killed by SIGPIPE.
        Err(e) if is_broken_pipe(&e) => ExitCode::from(141),
        Err(e) => {
            eprintln!("pharos: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
