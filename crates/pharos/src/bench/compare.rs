//! `pharos bench compare`: Pharos against Ryu's `simple_switch`, back to back, under the
//! same load (the orchestration is `bench::compare`'s).

use std::path::PathBuf;
use std::process::ExitCode;

use bench::compare::{run_compare, CompareConfig};

/// Compare Pharos with Ryu's simple_switch, back to back
///
/// Benchmarks Pharos (learning switch, one worker, pinned to core 0) and Ryu's
/// simple_switch (pinned to core 0) back to back with `pharos bench controller` (pinned
/// to core 1), alternating, and prints every run, the medians and the ratios Pharos/Ryu.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Rounds, each running Pharos then Ryu once
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = at_least_one::<usize>)]
    rounds: usize,
    /// Generator loops per run, warm-up included
    #[arg(short = 'l', long, value_name = "N", default_value_t = 10, value_parser = at_least_one::<usize>)]
    loops: usize,
    /// Milliseconds per loop
    #[arg(short = 'm', long, value_name = "MS", default_value_t = 1000, value_parser = at_least_one::<u64>)]
    ms: u64,
    /// Emulated switches
    #[arg(short = 's', long, value_name = "N", default_value_t = 16, value_parser = at_least_one::<usize>)]
    switches: usize,
    /// OpenFlow version: 1.0 or 1.3
    #[arg(long = "of", value_name = "VERSION", default_value = "1.0", value_parser = parse_of)]
    version: String,
    /// throughput or latency
    #[arg(long, value_name = "MODE", default_value = "throughput", value_parser = ["throughput", "latency"])]
    mode: String,
    /// Ryu's virtual environment, created if missing
    #[arg(long, value_name = "PATH", default_value = "target/bench-venv")]
    venv: PathBuf,
    /// Do not pin with taskset
    #[arg(long)]
    no_pin: bool,
    /// Keep the controllers' logs (kept anyway when a run fails)
    #[arg(long)]
    keep_logs: bool,
    /// Print the report as JSON instead of a table
    #[arg(long)]
    json: bool,
}

/// A count of at least 1 (`--rounds`, `--loops`, `--ms`, `--switches`).
fn at_least_one<T: std::str::FromStr + PartialEq + From<u8>>(v: &str) -> Result<T, String> {
    let n: T = v
        .parse()
        .map_err(|_| format!("expected a number, not {v:?}"))?;
    if n == T::from(0) {
        return Err("must be at least 1".to_string());
    }
    Ok(n)
}

/// `--of`: 1.0 (also 1, 10) or 1.3 (also 13), in the form the generator takes.
fn parse_of(v: &str) -> Result<String, String> {
    match v {
        "1.0" | "1" | "10" => Ok("1.0".to_string()),
        "1.3" | "13" => Ok("1.3".to_string()),
        _ => Err(format!("1.0 or 1.3, not {v:?}")),
    }
}

impl CompareArgs {
    /// The comparison's configuration; `pharos` is the binary run as the Pharos
    /// controller and as the generator.
    fn config(&self, pharos: PathBuf) -> CompareConfig {
        let mut cfg = CompareConfig::new(pharos);
        cfg.rounds = self.rounds;
        cfg.loops = self.loops;
        cfg.loop_ms = self.ms;
        cfg.switches = self.switches;
        cfg.version = self.version.clone();
        cfg.mode = self.mode.clone();
        cfg.venv = self.venv.clone();
        if self.no_pin {
            cfg.cores = None;
        }
        cfg.keep_logs = self.keep_logs;
        cfg
    }
}

/// Runs the comparison: the table (or JSON) on standard output, progress and errors on
/// standard error.
pub(super) fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    let pharos = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pharos bench compare: cannot find the pharos binary: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    match run_compare(&a.config(pharos)) {
        Ok(report) => {
            if a.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.table());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("pharos bench compare: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// `pharos bench compare` alone, as the binary parses it.
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: CompareArgs,
    }

    fn parse(line: &str) -> Result<CompareArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("compare").chain(line.split_whitespace()))
            .map(|c| c.args)
    }

    #[test]
    fn parses_flags_with_defaults() {
        let a = parse("").unwrap();
        assert!(!a.json);
        let config = a.config(PathBuf::from("/bin/pharos"));
        assert_eq!(
            (config.rounds, config.loops, config.loop_ms, config.switches),
            (3, 10, 1000, 16)
        );
        assert_eq!(config.version, "1.0");
        assert_eq!(config.mode, "throughput");
        assert_eq!(config.venv, PathBuf::from("target/bench-venv"));
        assert_eq!(config.cores, Some((0, 1)));
        assert!(!config.keep_logs);

        let a = parse(
            "--rounds 5 -l 3 --ms=500 -s 4 --of 1.3 --mode latency --venv /v --no-pin --json --keep-logs",
        )
        .unwrap();
        assert!(a.json);
        let config = a.config(PathBuf::from("/bin/pharos"));
        assert_eq!(
            (config.rounds, config.loops, config.loop_ms, config.switches),
            (5, 3, 500, 4)
        );
        assert_eq!(config.version, "1.3");
        assert_eq!(config.mode, "latency");
        assert_eq!(config.venv, PathBuf::from("/v"));
        assert_eq!(config.cores, None);
        assert!(config.keep_logs);
        assert_eq!(parse("--of 13").unwrap().version, "1.3");
        assert_eq!(parse("--of 1").unwrap().version, "1.0");
    }

    #[test]
    fn rejects_bad_flags() {
        for (bad, says) in [
            ("--of 1.4", "1.0 or 1.3, not \"1.4\""),
            ("--mode fast", "fast"),
            ("--rounds 0", "must be at least 1"),
            ("--switches 0", "must be at least 1"),
            ("-l x", "expected a number, not \"x\""),
            ("--bogus", "--bogus"),
            ("--ms", "a value is required"),
        ] {
            let e = parse(bad).unwrap_err();
            assert_ne!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{bad}");
            assert_eq!(e.exit_code(), 2, "{bad}: a usage error");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
        assert_eq!(
            parse("-h").unwrap_err().kind(),
            clap::error::ErrorKind::DisplayHelp
        );
    }
}
