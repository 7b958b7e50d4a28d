//! `pharos bench compare`: Pharos against Ryu's `simple_switch`, back to back, under the
//! same load.
//!
//! One comparison is `rounds` rounds; each round runs every contender once, in order
//! (Pharos, then Ryu), so the two alternate and share the machine's slow drifts. One run:
//!
//! 1. pick a free loopback port;
//! 2. start the contender's controller, pinned with `taskset -c 0` (Pharos: `pharos run
//!    --workers 1 --apps learning_switch`; Ryu: `ryu-manager ryu.app.simple_switch`, or
//!    `simple_switch_13` for `--of 1.3`), its output going to a log file;
//! 3. wait until the port is in LISTEN state (read from `/proc/net/tcp`, so the probe
//!    makes no connection the controller would see as a switch);
//! 4. run the generator, `pharos bench controller --json`, pinned with `taskset -c 1`,
//!    and read its JSON report;
//! 5. stop the controller (SIGTERM, then SIGKILL after two seconds).
//!
//! The report gives every run, the median per contender and the ratio of the first
//! contender to the second (Pharos / Ryu): above 1 is Pharos ahead for throughput, below 1
//! is Pharos ahead for latency.
//!
//! Ryu comes from PyPI into a virtual environment created on demand (see [`ensure_venv`]
//! for the exact, pinned recipe and why each pin is there). Nothing is built here: the
//! `pharos` binary is the running one ([`std::env::current_exe`]).

//! ## Layout
//!
//! ```text
//! mod.rs   CompareConfig, ControllerSpec, CompareError; run_compare: the rounds, each
//!          run's controller started, waited for, measured and stopped
//! ryu      Ryu's pinned virtual environment and launcher (ensure_venv)
//! process  commands behind taskset, stopping a controller, the generator with a time
//!          budget, free ports and the LISTEN check in /proc/net/tcp
//! report   RunResult, CompareReport: medians, ratios, the table; the generator's JSON
//! ```
//!
//! The command line (`pharos bench compare`, clap) is the `pharos` binary's, as for
//! every other `pharos bench` command.

mod process;
mod report;
mod ryu;

use std::fs::{self, File};
use std::io;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;

use process::{
    command_for, describe, free_port, run_with_timeout, tail, taskset_works, wait_listening,
    Running,
};
pub use report::{
    median, parse_generator_json, summarize, CompareReport, ContenderSummary, Ratios, RunResult,
};
use ryu::venv_python;
pub use ryu::{ensure_venv, RYU_CHECK, RYU_LAUNCHER, RYU_PINS, VENV_BUILD_PINS};

/// `{port}` in a command template becomes the run's port.
pub const PORT: &str = "{port}";
/// `{addr}` in a command template becomes `127.0.0.1:{port}`.
pub const ADDR: &str = "{addr}";

/// A controller to benchmark: how to start it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControllerSpec {
    /// Name in the report ("pharos", "ryu").
    pub name: String,
    /// Program and arguments; [`PORT`] and [`ADDR`] are replaced in each.
    pub argv: Vec<String>,
    /// Extra environment variables for the process; [`PORT`] and [`ADDR`] are replaced
    /// in the values.
    pub env: Vec<(String, String)>,
}

/// What to compare and under which load.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// Rounds; each runs every contender once (`--rounds`, default 3).
    pub rounds: usize,
    /// Generator loops per run, warm-up included (`--loops`, default 10).
    pub loops: usize,
    /// Milliseconds per loop (`--ms`, default 1000).
    pub loop_ms: u64,
    /// Emulated switches (`--switches`, default 16).
    pub switches: usize,
    /// OpenFlow version, `"1.0"` or `"1.3"` (`--of`, default 1.0).
    pub version: String,
    /// Generator mode, `"throughput"` or `"latency"` (`--mode`, default throughput).
    pub mode: String,
    /// Ryu's virtual environment (`--venv`, default `target/bench-venv`); created when
    /// missing.
    pub venv: PathBuf,
    /// The `pharos` binary, for the Pharos controller and the generator.
    pub pharos: PathBuf,
    /// Cores for (controller, generator), through `taskset -c`; `None` does not pin
    /// (`--no-pin`). Default (0, 1).
    pub cores: Option<(usize, usize)>,
    /// The contenders, in the order they run in each round. `None`: Pharos and Ryu
    /// ([`CompareConfig::default_contenders`]). Tests put stand-ins here.
    pub contenders: Option<Vec<ControllerSpec>>,
    /// The generator's command; `None`: `pharos bench controller --json` with the load
    /// flags. [`ADDR`] and [`PORT`] are replaced. Tests put a stand-in here.
    pub generator: Option<ControllerSpec>,
    /// How long a controller may take to listen (default 30 s; Ryu imports for a while).
    pub start_timeout: Duration,
    /// Where the controllers' logs go (default: a directory under the system temporary
    /// directory, named after this process).
    pub log_dir: PathBuf,
    /// Keep the logs after a successful comparison (`--keep-logs`); a failed one always
    /// keeps them, and the error names the file.
    pub keep_logs: bool,
}

impl CompareConfig {
    /// The defaults, with `pharos` as the binary to run.
    pub fn new(pharos: PathBuf) -> Self {
        Self {
            rounds: 3,
            loops: 10,
            loop_ms: 1000,
            switches: 16,
            version: "1.0".to_string(),
            mode: "throughput".to_string(),
            venv: PathBuf::from("target/bench-venv"),
            pharos,
            cores: Some((0, 1)),
            contenders: None,
            generator: None,
            start_timeout: Duration::from_secs(30),
            keep_logs: false,
            log_dir: std::env::temp_dir()
                .join(format!("pharos-bench-compare-{}", std::process::id())),
        }
    }

    /// Pharos (learning switch, one worker) and Ryu (`simple_switch` for 1.0,
    /// `simple_switch_13` for 1.3), listening on loopback only.
    pub fn default_contenders(&self) -> Vec<ControllerSpec> {
        let pharos = ControllerSpec {
            name: "pharos".to_string(),
            argv: strings(&[
                &self.pharos.to_string_lossy(),
                "run",
                "--workers",
                "1",
                "--listen",
                ADDR,
                "--apps",
                "learning_switch",
                "--log-level",
                "warn",
                // The REST API's port is one per machine, and the figures are the
                // controller's alone.
                "--api",
                "off",
            ]),
            env: Vec::new(),
        };
        let app = if self.version == "1.3" {
            "ryu.app.simple_switch_13"
        } else {
            "ryu.app.simple_switch"
        };
        let ryu = ControllerSpec {
            name: "ryu".to_string(),
            argv: strings(&[
                &venv_python(&self.venv).to_string_lossy(),
                "-c",
                RYU_LAUNCHER,
                "--ofp-listen-host",
                "127.0.0.1",
                "--ofp-tcp-listen-port",
                PORT,
                app,
            ]),
            env: Vec::new(),
        };
        vec![pharos, ryu]
    }

    /// `pharos bench controller --json` with this load.
    pub fn default_generator(&self) -> ControllerSpec {
        ControllerSpec {
            name: "generator".to_string(),
            argv: strings(&[
                &self.pharos.to_string_lossy(),
                "bench",
                "controller",
                "--json",
                "--addr",
                ADDR,
                "--switches",
                &self.switches.to_string(),
                "--loops",
                &self.loops.to_string(),
                "--ms",
                &self.loop_ms.to_string(),
                "--of",
                &self.version,
                "--mode",
                &self.mode,
                // The load this comparison has always measured: 64 PACKET_INs in flight
                // per switch, and no learning phase (Ryu would take minutes over
                // 100,000 announcements per switch).
                "--window",
                "64",
                "--no-learn",
            ]),
            env: Vec::new(),
        }
    }

    fn uses_ryu(&self) -> bool {
        self.contenders.is_none()
    }
}

pub(crate) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// What went wrong, with what to look at.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A setting was wrong (no rounds to run).
    #[error("{0}")]
    Usage(String),
    /// Creating Ryu's virtual environment failed; the step and its output.
    #[error("setting up Ryu in {venv}: `{step}` failed:\n{output}")]
    Venv {
        /// The virtual environment's directory.
        venv: PathBuf,
        /// The command that failed.
        step: String,
        /// The end of its output.
        output: String,
    },
    /// A process could not be started at all.
    #[error("starting `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        source: io::Error,
    },
    /// A controller exited, or never listened, before the run.
    #[error("{name} did not start listening on port {port} ({why}); its log, {log}:\n{tail}")]
    NotListening {
        /// The contender.
        name: String,
        /// The port it was given.
        port: u16,
        /// Exited (and how) or timed out.
        why: String,
        /// Its log file.
        log: String,
        /// The end of the log.
        tail: String,
    },
    /// The generator failed or printed something that is not its JSON report.
    #[error("the generator against {name} {why}; stderr:\n{stderr}")]
    Generator {
        /// The contender it was measuring.
        name: String,
        /// What happened.
        why: String,
        /// The end of its standard error.
        stderr: String,
    },
    /// Reading or writing logs.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Runs the comparison: every round runs every contender once, in order.
pub fn run_compare(cfg: &CompareConfig) -> Result<CompareReport, CompareError> {
    if cfg.rounds == 0 {
        return Err(CompareError::Usage(
            "--rounds must be at least 1".to_string(),
        ));
    }
    if cfg.uses_ryu() {
        ensure_venv(&cfg.venv)?;
    }
    let contenders = cfg
        .contenders
        .clone()
        .unwrap_or_else(|| cfg.default_contenders());
    let generator = cfg
        .generator
        .clone()
        .unwrap_or_else(|| cfg.default_generator());
    let cores = cfg
        .cores
        .filter(|&(c, g)| taskset_works(c) && taskset_works(g));
    if cfg.cores.is_some() && cores.is_none() {
        eprintln!("pharos bench compare: taskset not usable here; running unpinned");
    }
    fs::create_dir_all(&cfg.log_dir)?;
    let names: Vec<String> = contenders.iter().map(|c| c.name.clone()).collect();
    let mut runs = Vec::new();
    for round in 1..=cfg.rounds {
        for spec in &contenders {
            let run = run_one(cfg, spec, &generator, round, cores)?;
            eprintln!(
                "pharos bench compare: round {round}, {}: {:.1} responses/s",
                run.name, run.responses_per_s
            );
            runs.push(run);
        }
    }
    let (summaries, ratio) = summarize(&names, &runs);
    if cfg.keep_logs {
        eprintln!("pharos bench compare: logs in {}", cfg.log_dir.display());
    } else {
        let _ = fs::remove_dir_all(&cfg.log_dir);
    }
    Ok(CompareReport {
        version: cfg.version.clone(),
        mode: cfg.mode.clone(),
        switches: cfg.switches,
        loops: cfg.loops,
        loop_ms: cfg.loop_ms,
        cores,
        runs,
        summaries,
        ratio,
    })
}

/// Starts the controller on a free port and waits until it listens. The port was free
/// when chosen but another process may take it before the controller binds it: then
/// (its log says `Address already in use`) another port is tried, three times at most.
fn start_controller(
    cfg: &CompareConfig,
    spec: &ControllerSpec,
    round: usize,
    cores: Option<(usize, usize)>,
) -> Result<(Running, u16), CompareError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let port = free_port()?;
        let log_path = cfg.log_dir.join(format!("{}-round{round}.log", spec.name));
        let log = File::create(&log_path)?;
        let mut cmd = command_for(spec, port, cores.map(|c| c.0));
        cmd.stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let child = cmd.spawn().map_err(|source| CompareError::Spawn {
            command: describe(&cmd),
            source,
        })?;
        let mut controller = Running(child);
        match wait_listening(&mut controller.0, port, cfg.start_timeout) {
            Ok(()) => return Ok((controller, port)),
            Err(why) => {
                let text = fs::read_to_string(&log_path).unwrap_or_default();
                if attempt < 3 && text.contains("Address already in use") {
                    continue;
                }
                return Err(CompareError::NotListening {
                    name: spec.name.clone(),
                    port,
                    why,
                    log: log_path.display().to_string(),
                    tail: tail(&text, 20),
                });
            }
        }
    }
}

fn run_one(
    cfg: &CompareConfig,
    spec: &ControllerSpec,
    generator: &ControllerSpec,
    round: usize,
    cores: Option<(usize, usize)>,
) -> Result<RunResult, CompareError> {
    let (mut controller, port) = start_controller(cfg, spec, round, cores)?;

    let mut gen = command_for(generator, port, cores.map(|c| c.1));
    gen.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let budget = Duration::from_millis(cfg.loop_ms.saturating_mul(cfg.loops as u64 + 1))
        + Duration::from_secs(60);
    let (status, stdout, stderr) = run_with_timeout(&mut gen, budget)?;
    let gen_err = |why: String| CompareError::Generator {
        name: spec.name.clone(),
        why,
        stderr: tail(&stderr, 20),
    };
    match status {
        None => return Err(gen_err(format!("ran longer than {} s", budget.as_secs()))),
        Some(s) if !s.success() => return Err(gen_err(format!("exited with {s}"))),
        Some(_) => {}
    }
    if let Ok(Some(s)) = controller.0.try_wait() {
        return Err(gen_err(format!(
            "finished, but the controller had exited ({s})"
        )));
    }
    drop(controller);
    parse_generator_json(&stdout, &spec.name, round).map_err(gen_err)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn default_commands_pin_nothing_themselves_and_pick_the_app_by_version() {
        let mut cfg = CompareConfig::new(PathBuf::from("/bin/pharos"));
        cfg.version = "1.3".into();
        let c = cfg.default_contenders();
        assert_eq!(c[0].name, "pharos");
        assert_eq!(
            c[0].argv[..7],
            args("/bin/pharos run --workers 1 --listen {addr} --apps")[..]
        );
        assert_eq!(c[1].argv.last().unwrap(), "ryu.app.simple_switch_13");
        assert_eq!(c[1].argv[0], "target/bench-venv/bin/python");
        let g = cfg.default_generator();
        assert!(g.argv.windows(2).any(|w| w == ["--of", "1.3"]));
        let cmd = command_for(&g, 6000, Some(1));
        let line = describe(&cmd);
        assert!(
            line.starts_with(
                "taskset -c 1 /bin/pharos bench controller --json --addr 127.0.0.1:6000"
            ),
            "{line}"
        );
    }
}
