//! The `pharos` command.
//!
//! Each subcommand lives in its own module and exposes an `Args` type (clap) and a `run`
//! function returning the process exit code; `main` only parses the command line and
//! dispatches. Adding a subcommand is one variant here and one module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod ofp;

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
    Ofp(ofp::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ofp(args) => ofp::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pharos: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
