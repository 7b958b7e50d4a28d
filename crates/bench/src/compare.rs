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

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Read as _};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

/// The PyPI packages the Ryu virtual environment gets, installed with
/// `pip install --no-build-isolation` after [`VENV_BUILD_PINS`].
///
/// - `ryu==4.34`: the last Ryu release, which still ships `ryu/app/simple_switch.py` and
///   `simple_switch_13.py` and `ryu-manager`. Its maintained fork os-ken does not do:
///   os-ken 4.x ships neither the example apps nor a manager, and 2.x/3.x ship
///   `osken-manager` but no `simple_switch`.
/// - `eventlet==0.33.3`: eventlet 0.30.2, the last with `eventlet.wsgi.ALREADY_HANDLED`
///   (which `ryu.app.wsgi` imports at start-up), does not import on Python 3.10+
///   (`socket.timeout` became the immutable `TimeoutError`); 0.33.3 imports, and
///   [`RYU_LAUNCHER`] supplies the missing name.
/// - `dnspython==2.6.1`: eventlet greens dnspython, and 1.x (what pip picks for Ryu's
///   old bounds) uses `collections.MutableMapping`, gone in Python 3.10.
pub const RYU_PINS: &[&str] = &["ryu==4.34", "eventlet==0.33.3", "dnspython==2.6.1"];

/// Installed first: Ryu 4.34's `setup.py` calls `easy_install.get_script_args`, which
/// current setuptools no longer has, hence an old setuptools and no build isolation.
pub const VENV_BUILD_PINS: &[&str] = &["setuptools==65.5.0", "wheel==0.45.1"];

/// `python -c` program that starts `ryu-manager` with its command line: it defines
/// `eventlet.wsgi.ALREADY_HANDLED` (removed in eventlet 0.30.3, imported by Ryu 4.34 at
/// start-up and used only by Ryu's websocket responses, which `simple_switch` never
/// sends), then calls Ryu's own `main`. Ryu's files are not modified.
pub const RYU_LAUNCHER: &str = "import sys, eventlet.wsgi; \
eventlet.wsgi.ALREADY_HANDLED = object(); \
sys.argv[0] = 'ryu-manager'; \
from ryu.cmd.manager import main; main()";

/// `python -c` program that succeeds when the environment can run both apps: the same
/// `ALREADY_HANDLED` shim as [`RYU_LAUNCHER`], then the imports.
pub const RYU_CHECK: &str = "import eventlet.wsgi; \
eventlet.wsgi.ALREADY_HANDLED = object(); \
import ryu.cmd.manager, ryu.app.simple_switch, ryu.app.simple_switch_13";

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

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// What went wrong, with what to look at.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A command-line flag was wrong.
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

/// One generator run against one contender.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    /// The contender.
    pub name: String,
    /// Round, from 1.
    pub round: usize,
    /// Responses per second, mean over the measured loops (`overall.mean`).
    pub responses_per_s: f64,
    /// Median latency in microseconds, latency mode only.
    pub p50_us: Option<f64>,
    /// 99th percentile latency in microseconds, latency mode only.
    pub p99_us: Option<f64>,
    /// Switches that got no response at all.
    pub silent_switches: usize,
}

/// Medians of one contender's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContenderSummary {
    /// The contender.
    pub name: String,
    /// Median of the runs' responses per second.
    pub responses_per_s: f64,
    /// Median of the runs' p50 latency, when every run has one.
    pub p50_us: Option<f64>,
    /// Median of the runs' p99 latency, when every run has one.
    pub p99_us: Option<f64>,
    /// Every run's responses per second, in round order.
    pub runs: Vec<f64>,
}

/// First contender over second (Pharos / Ryu), on the medians.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratios {
    /// Throughput ratio: above 1, the first answers more per second.
    pub responses_per_s: f64,
    /// p50 latency ratio: below 1, the first is faster.
    pub p50_us: Option<f64>,
    /// p99 latency ratio: below 1, the first is faster.
    pub p99_us: Option<f64>,
}

/// The whole comparison (`--json` prints it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// OpenFlow version of the load.
    pub version: String,
    /// Generator mode.
    pub mode: String,
    /// Emulated switches.
    pub switches: usize,
    /// Loops per run.
    pub loops: usize,
    /// Milliseconds per loop.
    pub loop_ms: u64,
    /// Cores of (controller, generator), when pinned.
    pub cores: Option<(usize, usize)>,
    /// Every run, in the order they ran.
    pub runs: Vec<RunResult>,
    /// Medians per contender, in contender order.
    pub summaries: Vec<ContenderSummary>,
    /// First / second contender, when there are two.
    pub ratio: Option<Ratios>,
}

/// The median of `values` (mean of the middle two for an even count); `None` if empty.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

/// Medians per contender (in `names` order) and the first/second ratios.
pub fn summarize(names: &[String], runs: &[RunResult]) -> (Vec<ContenderSummary>, Option<Ratios>) {
    let summaries: Vec<ContenderSummary> = names
        .iter()
        .map(|name| {
            let mine: Vec<&RunResult> = runs.iter().filter(|r| &r.name == name).collect();
            let tput: Vec<f64> = mine.iter().map(|r| r.responses_per_s).collect();
            let all = |f: fn(&RunResult) -> Option<f64>| -> Option<f64> {
                let v: Option<Vec<f64>> = mine.iter().map(|r| f(r)).collect();
                v.and_then(|v| median(&v))
            };
            ContenderSummary {
                name: name.clone(),
                responses_per_s: median(&tput).unwrap_or(0.0),
                p50_us: all(|r| r.p50_us),
                p99_us: all(|r| r.p99_us),
                runs: tput,
            }
        })
        .collect();
    let ratios = match summaries.as_slice() {
        [a, b, ..] => Some(Ratios {
            responses_per_s: if b.responses_per_s != 0.0 {
                a.responses_per_s / b.responses_per_s
            } else {
                f64::INFINITY
            },
            p50_us: ratio(a.p50_us, b.p50_us),
            p99_us: ratio(a.p99_us, b.p99_us),
        }),
        _ => None,
    };
    (summaries, ratios)
}

impl CompareReport {
    /// The report as a table: the runs, the medians, the ratio.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let pin = match self.cores {
            Some((c, g)) => format!("controller on core {c}, generator on core {g}"),
            None => "not pinned".to_string(),
        };
        let _ = writeln!(
            out,
            "OpenFlow {}, {} mode, {} switches, {} loops of {} ms, {pin}",
            self.version, self.mode, self.switches, self.loops, self.loop_ms
        );
        let _ = writeln!(
            out,
            "{:<10} {:>5} {:>16} {:>10} {:>10} {:>7}",
            "controller", "round", "responses/s", "p50 us", "p99 us", "silent"
        );
        for r in &self.runs {
            let _ = writeln!(
                out,
                "{:<10} {:>5} {:>16.1} {:>10} {:>10} {:>7}",
                r.name,
                r.round,
                r.responses_per_s,
                opt(r.p50_us),
                opt(r.p99_us),
                r.silent_switches
            );
        }
        let _ = writeln!(out, "median:");
        for s in &self.summaries {
            let _ = writeln!(
                out,
                "{:<10} {:>5} {:>16.1} {:>10} {:>10}",
                s.name,
                "",
                s.responses_per_s,
                opt(s.p50_us),
                opt(s.p99_us)
            );
        }
        if let (Some(r), [a, b, ..]) = (&self.ratio, self.summaries.as_slice()) {
            let _ = writeln!(
                out,
                "{}/{}: throughput {:.2}x, p50 {}, p99 {}",
                a.name,
                b.name,
                r.responses_per_s,
                opt_ratio(r.p50_us),
                opt_ratio(r.p99_us)
            );
        }
        out
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

fn opt_ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}x"))
}

fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// Makes sure `venv` holds a Python virtual environment that can run Ryu's
/// `simple_switch`; creates it if not: `python3 -m venv VENV`, `VENV/bin/pip install`
/// [`VENV_BUILD_PINS`], then `VENV/bin/pip install --no-build-isolation` [`RYU_PINS`].
/// Needs PyPI; tested with Python 3.11.
pub fn ensure_venv(venv: &Path) -> Result<(), CompareError> {
    let python = venv_python(venv);
    let check = |python: &Path| {
        Command::new(python)
            .args(["-c", RYU_CHECK])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if python.exists() && check(&python) {
        return Ok(());
    }
    eprintln!(
        "pharos bench compare: installing Ryu into {} (once)",
        venv.display()
    );
    let pip = venv.join("bin").join("pip");
    let venv_arg = venv.to_string_lossy().into_owned();
    let mut steps: Vec<Vec<String>> = vec![strings(&["python3", "-m", "venv", &venv_arg])];
    let mut build = strings(&[&pip.to_string_lossy(), "install", "--quiet"]);
    build.extend(strings(VENV_BUILD_PINS));
    steps.push(build);
    let mut ryu = strings(&[
        &pip.to_string_lossy(),
        "install",
        "--quiet",
        "--no-build-isolation",
    ]);
    ryu.extend(strings(RYU_PINS));
    steps.push(ryu);
    for step in steps {
        let line = step.join(" ");
        let out = Command::new(&step[0])
            .args(&step[1..])
            .output()
            .map_err(|e| CompareError::Venv {
                venv: venv.to_path_buf(),
                step: line.clone(),
                output: e.to_string(),
            })?;
        if !out.status.success() {
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&out.stderr));
            return Err(CompareError::Venv {
                venv: venv.to_path_buf(),
                step: line,
                output: tail(&text, 30),
            });
        }
    }
    if !check(&python) {
        return Err(CompareError::Venv {
            venv: venv.to_path_buf(),
            step: format!("{} -c 'import ryu.app.simple_switch'", python.display()),
            output: "the installed Ryu does not import".to_string(),
        });
    }
    Ok(())
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

/// Whether `taskset -c core` can run a program here (the core exists and we may use it).
fn taskset_works(core: usize) -> bool {
    Command::new("taskset")
        .args(["-c", &core.to_string(), "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The spec's command with the port filled in, behind `taskset -c core` when pinned.
fn command_for(spec: &ControllerSpec, port: u16, core: Option<usize>) -> Command {
    let addr = format!("127.0.0.1:{port}");
    let argv: Vec<String> = spec
        .argv
        .iter()
        .map(|a| a.replace(ADDR, &addr).replace(PORT, &port.to_string()))
        .collect();
    let mut cmd = match core {
        Some(core) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(core.to_string()).args(&argv);
            c
        }
        None => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
    };
    cmd.envs(
        spec.env
            .iter()
            .map(|(k, v)| (k, v.replace(ADDR, &addr).replace(PORT, &port.to_string()))),
    );
    cmd
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Kills the controller when dropped, whatever happened to the run.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        stop(&mut self.0);
    }
}

/// SIGTERM, two seconds to leave, then SIGKILL.
fn stop(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on our own child's pid, which we have not yet waited for, so
        // it cannot have been reused.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
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

/// Reads a `pharos bench controller --json` report: `overall.mean`, `latency.p50_us`,
/// `latency.p99_us`, `silent_switches`. The report is the whole output or, failing that,
/// its last line that is a JSON object (for generators that print more).
pub fn parse_generator_json(text: &str, name: &str, round: usize) -> Result<RunResult, String> {
    let whole = serde_json::from_str::<serde_json::Value>(text.trim());
    let v = whole.or_else(|e| {
        text.lines()
            .rev()
            .map(str::trim)
            .filter(|l| l.starts_with('{'))
            .find_map(|l| serde_json::from_str(l).ok())
            .ok_or(e)
    });
    let v = v.map_err(|e| {
        format!(
            "printed something that is not JSON ({e}): {}",
            tail(text, 5)
        )
    })?;
    let mean = v
        .pointer("/overall/mean")
        .and_then(serde_json::Value::as_f64)
        .ok_or_else(|| "printed JSON without a number at overall.mean".to_string())?;
    let lat = |k: &str| {
        v.pointer(&format!("/latency/{k}"))
            .and_then(serde_json::Value::as_f64)
    };
    let silent = v
        .pointer("/silent_switches/count")
        .and_then(serde_json::Value::as_u64)
        .map_or(0, |n| n as usize);
    Ok(RunResult {
        name: name.to_string(),
        round,
        responses_per_s: mean,
        p50_us: lat("p50_us"),
        p99_us: lat("p99_us"),
        silent_switches: silent,
    })
}

/// Runs `cmd` to completion or until `budget`; returns (status if it finished, stdout,
/// stderr). Both pipes are drained on threads so a chatty child never blocks.
fn run_with_timeout(
    cmd: &mut Command,
    budget: Duration,
) -> Result<(Option<std::process::ExitStatus>, String, String), CompareError> {
    let mut child = cmd.spawn().map_err(|source| CompareError::Spawn {
        command: describe(cmd),
        source,
    })?;
    let drain = |pipe: Option<Box<dyn io::Read + Send>>| {
        thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
    );
    let deadline = Instant::now() + budget;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok((status, stdout, stderr))
}

/// A loopback port nobody listens on right now (bound, then released).
fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// Waits until something listens on `port`, or `child` exits, or `timeout`.
fn wait_listening(child: &mut Child, port: u16, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Err(format!("exited with {status}")),
            Ok(None) => {}
            Err(e) => return Err(format!("cannot be waited for: {e}")),
        }
        // And the controller still running once it is seen: a port found listening
        // just as the controller exited is someone else's.
        if is_listening(port) && matches!(child.try_wait(), Ok(None)) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("not listening after {} s", timeout.as_secs()));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a socket listens on `port` (any IPv4 or IPv6 address). Reads
/// `/proc/net/tcp{,6}` so that checking makes no connection; where those do not exist,
/// falls back to connecting.
fn is_listening(port: u16) -> bool {
    let mut any_table = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = fs::read_to_string(table) {
            any_table = true;
            if listens_in_proc_table(&text, port) {
                return true;
            }
        }
    }
    if any_table {
        return false;
    }
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// Whether a `/proc/net/tcp` table has a LISTEN (state `0A`) socket on `port`.
fn listens_in_proc_table(text: &str, port: u16) -> bool {
    text.lines().skip(1).any(|line| {
        let mut f = line.split_whitespace();
        let (Some(_), Some(local), Some(_), Some(state)) = (f.next(), f.next(), f.next(), f.next())
        else {
            return false;
        };
        state == "0A"
            && local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                == Some(port)
    })
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Usage of `pharos bench compare`.
pub const USAGE: &str = "\
Usage: pharos bench compare [OPTIONS]

Benchmarks Pharos (learning switch, one worker, pinned to core 0) and Ryu's simple_switch
(pinned to core 0) back to back with `pharos bench controller` (pinned to core 1),
alternating, and prints every run, the medians and the ratios Pharos/Ryu.

Options:
      --rounds N        Rounds, each running Pharos then Ryu once [default: 3]
  -l, --loops N         Generator loops per run, warm-up included [default: 10]
  -m, --ms MS           Milliseconds per loop [default: 1000]
  -s, --switches N      Emulated switches [default: 16]
      --of VERSION      OpenFlow version: 1.0 or 1.3 [default: 1.0]
      --mode MODE       throughput or latency [default: throughput]
      --venv PATH       Ryu's virtual environment, created if missing [default: target/bench-venv]
      --no-pin          Do not pin with taskset
      --keep-logs       Keep the controllers' logs (kept anyway when a run fails)
      --json            Print the report as JSON instead of a table
  -h, --help            Print this help
";

/// A parsed `pharos bench compare` command line.
#[derive(Debug)]
pub enum Cli {
    /// Run with this configuration; `json` selects the output.
    Run {
        /// The comparison.
        config: Box<CompareConfig>,
        /// `--json`.
        json: bool,
    },
    /// `--help`.
    Help,
}

/// Parses the flags after `pharos bench compare` (see [`USAGE`]); `pharos` is the binary
/// to run.
pub fn parse_args(args: &[String], pharos: PathBuf) -> Result<Cli, CompareError> {
    let mut cfg = CompareConfig::new(pharos);
    let mut json = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, CompareError> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| CompareError::Usage(format!("{name} needs a value\n\n{USAGE}")))
        };
        match flag {
            "-h" | "--help" => return Ok(Cli::Help),
            "--json" => json = true,
            "--no-pin" => cfg.cores = None,
            "--keep-logs" => cfg.keep_logs = true,
            "--rounds" => cfg.rounds = number(flag, &value(flag)?)?,
            "-l" | "--loops" => cfg.loops = number(flag, &value(flag)?)?,
            "-m" | "--ms" => cfg.loop_ms = number(flag, &value(flag)?)?,
            "-s" | "--switches" => cfg.switches = number(flag, &value(flag)?)?,
            "--venv" => cfg.venv = PathBuf::from(value(flag)?),
            "--of" => {
                let v = value(flag)?;
                cfg.version = match v.as_str() {
                    "1.0" | "1" | "10" => "1.0".to_string(),
                    "1.3" | "13" => "1.3".to_string(),
                    _ => return Err(CompareError::Usage(format!("--of: 1.0 or 1.3, not {v:?}"))),
                };
            }
            "--mode" => {
                let v = value(flag)?;
                if v != "throughput" && v != "latency" {
                    return Err(CompareError::Usage(format!(
                        "--mode: throughput or latency, not {v:?}"
                    )));
                }
                cfg.mode = v;
            }
            other => {
                return Err(CompareError::Usage(format!(
                    "unknown argument {other:?}\n\n{USAGE}"
                )))
            }
        }
    }
    if cfg.rounds == 0 || cfg.loops == 0 || cfg.loop_ms == 0 || cfg.switches == 0 {
        return Err(CompareError::Usage(
            "--rounds, --loops, --ms and --switches must be at least 1".to_string(),
        ));
    }
    Ok(Cli::Run {
        config: Box::new(cfg),
        json,
    })
}

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, CompareError> {
    v.parse()
        .map_err(|_| CompareError::Usage(format!("{flag}: expected a number, not {v:?}")))
}

/// `pharos bench compare ARGS...`: parses, runs, prints the table (or JSON) on standard
/// output and progress and errors on standard error.
pub fn main(args: &[String]) -> ExitCode {
    let pharos = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pharos bench compare: cannot find the pharos binary: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (config, json) = match parse_args(args, pharos) {
        Ok(Cli::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Cli::Run { config, json }) => (config, json),
        Err(e) => {
            eprintln!("pharos bench compare: {e}");
            return ExitCode::from(2);
        }
    };
    match run_compare(&config) {
        Ok(report) => {
            if json {
                match serde_json::to_string_pretty(&report) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("pharos bench compare: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            } else {
                print!("{}", report.table());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pharos bench compare: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn run(name: &str, round: usize, tput: f64, p50: Option<f64>) -> RunResult {
        RunResult {
            name: name.to_string(),
            round,
            responses_per_s: tput,
            p50_us: p50,
            p99_us: p50.map(|p| p * 2.0),
            silent_switches: 0,
        }
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn summary_takes_medians_per_contender_and_first_over_second() {
        let names = vec!["pharos".to_string(), "ryu".to_string()];
        let runs = vec![
            run("pharos", 1, 100.0, Some(10.0)),
            run("ryu", 1, 10.0, Some(100.0)),
            run("pharos", 2, 300.0, Some(30.0)),
            run("ryu", 2, 30.0, Some(300.0)),
            run("pharos", 3, 200.0, Some(20.0)),
            run("ryu", 3, 25.0, Some(200.0)),
        ];
        let (s, r) = summarize(&names, &runs);
        assert_eq!(s[0].responses_per_s, 200.0);
        assert_eq!(s[0].runs, vec![100.0, 300.0, 200.0]);
        assert_eq!(s[1].responses_per_s, 25.0);
        assert_eq!(s[1].p50_us, Some(200.0));
        let r = r.expect("two contenders");
        assert_eq!(r.responses_per_s, 8.0);
        assert_eq!(r.p50_us, Some(0.1));
        assert_eq!(r.p99_us, Some(0.1));
    }

    #[test]
    fn latency_medians_need_every_run() {
        let names = vec!["a".to_string(), "b".to_string()];
        let runs = vec![
            run("a", 1, 1.0, Some(5.0)),
            run("a", 2, 1.0, None),
            run("b", 1, 0.0, None),
        ];
        let (s, r) = summarize(&names, &runs);
        assert_eq!(s[0].p50_us, None);
        let r = r.unwrap();
        assert_eq!(r.p50_us, None);
        assert!(r.responses_per_s.is_infinite());
    }

    #[test]
    fn table_shows_runs_medians_and_ratio() {
        let names = vec!["pharos".to_string(), "ryu".to_string()];
        let runs = vec![run("pharos", 1, 1000.0, None), run("ryu", 1, 250.0, None)];
        let (summaries, ratio) = summarize(&names, &runs);
        let report = CompareReport {
            version: "1.0".into(),
            mode: "throughput".into(),
            switches: 16,
            loops: 3,
            loop_ms: 500,
            cores: Some((0, 1)),
            runs,
            summaries,
            ratio,
        };
        let t = report.table();
        assert!(
            t.contains("controller on core 0, generator on core 1"),
            "{t}"
        );
        assert!(t.contains("1000.0"), "{t}");
        assert!(t.contains("pharos/ryu: throughput 4.00x"), "{t}");
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["ratio"]["responses_per_s"], 4.0);
        assert_eq!(json["summaries"][1]["name"], "ryu");
    }

    #[test]
    fn parses_the_generator_report() {
        let j = r#"{"mode":"latency","overall":{"mean":1234.5,"min":1,"max":2,"stddev":0},
                    "latency":{"p50_us":40.0,"p90_us":50,"p99_us":80.5,"p999_us":90,"max_us":99,"samples":10},
                    "silent_switches":{"count":2,"first":[7,9]}}"#;
        let r = parse_generator_json(j, "ryu", 2).unwrap();
        assert_eq!(r.responses_per_s, 1234.5);
        assert_eq!(r.p50_us, Some(40.0));
        assert_eq!(r.p99_us, Some(80.5));
        assert_eq!(r.silent_switches, 2);
        assert_eq!(r.round, 2);
        let r = parse_generator_json(
            r#"{"overall":{"mean":5},"latency":null,"silent_switches":{"count":0,"first":[]}}"#,
            "p",
            1,
        )
        .unwrap();
        assert_eq!(r.p50_us, None);
        let mixed = "running 1 test\n{\"overall\":{\"mean\":9.5}}\ntest x ... ok\n";
        assert_eq!(
            parse_generator_json(mixed, "p", 1).unwrap().responses_per_s,
            9.5
        );
        assert!(parse_generator_json("oops", "p", 1)
            .unwrap_err()
            .contains("not JSON"));
        assert!(parse_generator_json("{}", "p", 1)
            .unwrap_err()
            .contains("overall.mean"));
    }

    #[test]
    fn parses_flags_with_defaults() {
        let Cli::Run { config, json } = parse_args(&[], PathBuf::from("/bin/pharos")).unwrap()
        else {
            panic!("not a run");
        };
        assert!(!json);
        assert_eq!(
            (config.rounds, config.loops, config.loop_ms, config.switches),
            (3, 10, 1000, 16)
        );
        assert_eq!(config.version, "1.0");
        assert_eq!(config.mode, "throughput");
        assert_eq!(config.venv, PathBuf::from("target/bench-venv"));
        assert_eq!(config.cores, Some((0, 1)));

        let a =
            args("--rounds 5 -l 3 --ms=500 -s 4 --of 1.3 --mode latency --venv /v --no-pin --json --keep-logs");
        let Cli::Run { config, json } = parse_args(&a, PathBuf::from("/bin/pharos")).unwrap()
        else {
            panic!("not a run");
        };
        assert!(json);
        assert_eq!(
            (config.rounds, config.loops, config.loop_ms, config.switches),
            (5, 3, 500, 4)
        );
        assert_eq!(config.version, "1.3");
        assert_eq!(config.mode, "latency");
        assert_eq!(config.venv, PathBuf::from("/v"));
        assert_eq!(config.cores, None);
        assert!(config.keep_logs);
    }

    #[test]
    fn rejects_bad_flags() {
        for bad in [
            "--of 1.4",
            "--mode fast",
            "--rounds 0",
            "-l x",
            "--bogus",
            "--ms",
        ] {
            let e = parse_args(&args(bad), PathBuf::from("p")).unwrap_err();
            assert!(matches!(e, CompareError::Usage(_)), "{bad}: {e}");
        }
        assert!(matches!(
            parse_args(&args("-h"), PathBuf::from("p")).unwrap(),
            Cli::Help
        ));
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

    #[test]
    fn reads_listen_state_from_proc_tables() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue\n\
             0: 0100007F:19FD 00000000:0000 0A 00000000:00000000 00:00000000 00000000\n\
             1: 0100007F:1A0A 0100007F:D3C4 01 00000000:00000000 00:00000000 00000000\n";
        assert!(listens_in_proc_table(table, 0x19FD));
        assert!(
            !listens_in_proc_table(table, 0x1A0A),
            "established, not listening"
        );
        assert!(!listens_in_proc_table(table, 1));
    }
}
