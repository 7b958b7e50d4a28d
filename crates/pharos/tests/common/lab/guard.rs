//! The lab under test ([`Lab`]): the controller, `PHAROS_LAB_DIR`, the lab's name,
//! optionally a capture, and `pharos lab` run as a user runs it; a guard that always tears
//! them down and checks that nothing of the lab is left.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use super::capture::Capture;
use super::command::{kill_group, run, Out};
use super::ctl::{learning_switch, AppSet, Ctl};
use super::of::Of;
use testkit::wait_until;

/// A temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `/tmp/pharos-e2e-PID-TAG` (short: Open vSwitch's socket paths live under it and
    /// a Unix socket path has 107 bytes at most).
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("pharos-e2e-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A lab under test: the controller, `PHAROS_LAB_DIR`, the lab's name, and optionally a
/// capture of the controller's port. Dropping it (test passed or panicked) runs
/// `pharos lab down`, stops the controller and the capture, and checks that nothing of
/// the lab is left.
pub struct Lab {
    /// `--name` (≤ 4 characters, unique per test).
    pub name: String,
    pub of: Of,
    pub ctl: Ctl,
    /// `PHAROS_LAB_DIR`.
    dir: TempDir,
    capture: Option<Capture>,
    /// Background commands (`pharos lab exec h3 -- iperf3 -s`), killed on drop.
    background: Vec<Child>,
    /// `down` already ran and succeeded.
    down_done: bool,
    /// `--switch`: `ovs` or `pharos`.
    pub switch: &'static str,
    /// Pharos switches' `--switch-datapath`, when not their default.
    pub datapath: Option<&'static str>,
}

/// How long one `pharos lab` command may take before the test calls it hung.
pub const LAB_CMD_TIMEOUT: Duration = Duration::from_secs(60);

impl Lab {
    /// Starts the controller (the learning switch) on a free port; with `capture`,
    /// dumpcap on that port too (started before any switch connects, so every session is
    /// captured whole).
    pub fn new(name: &str, of: Of, capture: bool) -> Lab {
        Lab::with_apps(name, of, learning_switch(), capture)
    }

    /// [`Lab::new`] with a controller running `apps`.
    pub fn with_apps(name: &str, of: Of, apps: AppSet, capture: bool) -> Lab {
        assert!(name.len() <= 4, "lab names have at most 4 characters");
        let dir = TempDir::new(name);
        let ctl = Ctl::start_with(0, apps);
        let capture = capture.then(|| Capture::start(ctl.port, &dir.0.join("of.pcapng")));
        Lab {
            name: name.to_string(),
            of,
            ctl,
            dir,
            capture,
            background: Vec::new(),
            down_done: false,
            switch: "ovs",
            datapath: None,
        }
    }

    /// This lab's switches are Pharos switches (`pharos lab up --switch pharos`).
    pub fn pharos_switch(mut self) -> Lab {
        self.switch = "pharos";
        self
    }

    /// Pharos switches on `datapath` (`--switch pharos --switch-datapath DATAPATH`).
    pub fn pharos_switch_on(mut self, datapath: &'static str) -> Lab {
        self.switch = "pharos";
        self.datapath = Some(datapath);
        self
    }

    /// `PHAROS_LAB_DIR`.
    pub fn lab_dir(&self) -> &Path {
        &self.dir.0
    }

    /// `pharos lab SUB --name NAME ARGS...` with this lab's `PHAROS_LAB_DIR`.
    pub fn command(&self, sub: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pharos"));
        cmd.args(["lab", sub, "--name", &self.name])
            .args(args)
            .env("PHAROS_LAB_DIR", self.lab_dir())
            .env_remove("RUST_LOG");
        cmd
    }

    /// Runs `pharos lab SUB ...` (see [`Lab::command`]) with a deadline.
    pub fn lab(&self, sub: &str, args: &[&str]) -> Out {
        let out = run(&mut self.command(sub, args), LAB_CMD_TIMEOUT);
        assert!(
            !out.stderr.contains("panicked"),
            "pharos lab panicked:\n{out}"
        );
        out
    }

    /// `pharos lab up --topo TOPO --of V --controller tcp:127.0.0.1:PORT`, which must
    /// succeed.
    pub fn up(&self, topo: &str) -> Out {
        let target = self.ctl.target();
        let mut args = vec![
            "--topo",
            topo,
            "--of",
            self.of.flag(),
            "--controller",
            &target,
            "--switch",
            self.switch,
        ];
        if let Some(d) = self.datapath {
            args.extend(["--switch-datapath", d]);
        }
        let out = self.lab("up", &args);
        out.expect_ok();
        out
    }

    /// `pharos lab pingall` (exit 0 iff 100%).
    pub fn pingall(&self) -> Out {
        self.lab("pingall", &[])
    }

    /// `pharos lab show --json`, parsed.
    pub fn show(&self) -> serde_json::Value {
        let out = self.lab("show", &["--json"]);
        out.expect_ok();
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("pharos lab show --json is not JSON ({e}):\n{out}"))
    }

    /// Starts `pharos lab exec HOST -- ARGV` in the background (stdout and stderr to a
    /// file in the lab dir); killed when the lab is dropped.
    pub fn spawn_exec(&mut self, host: &str, argv: &[&str], log: &str) -> usize {
        let path = self.lab_dir().join(log);
        let file = std::fs::File::create(&path).expect("create a log file");
        let mut args = vec![host, "--"];
        args.extend_from_slice(argv);
        let child = self
            .command("exec", &args)
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .process_group(0)
            .spawn()
            .expect("start pharos lab exec");
        self.background.push(child);
        self.background.len() - 1
    }

    /// Waits for background command `i` to exit; its exit code and log.
    pub fn wait_background(
        &mut self,
        i: usize,
        log: &str,
        timeout: Duration,
    ) -> (Option<i32>, String) {
        let child = &mut self.background[i];
        let done = wait_until(timeout, || child.try_wait().ok().flatten().is_some());
        if !done {
            kill_group(child, libc::SIGKILL);
        }
        let code = child.wait().ok().and_then(|s| s.code());
        let text = std::fs::read_to_string(self.lab_dir().join(log)).unwrap_or_default();
        (code, text)
    }

    /// `pharos lab down`, once; later calls do nothing.
    pub fn down(&mut self) -> Out {
        let out = self.lab("down", &[]);
        if out.ok() {
            self.down_done = true;
        }
        out
    }

    /// Stops the capture and returns its file (after `down` and `ctl.stop()`, so that
    /// every session in it is complete).
    pub fn stop_capture(&mut self) -> PathBuf {
        let mut cap = self.capture.take().expect("this lab has no capture");
        let said = cap.stop();
        let file = cap.file.clone();
        assert!(
            std::fs::metadata(&file).is_ok_and(|m| m.len() > 0),
            "no capture in {}; dumpcap said: {said}",
            file.display()
        );
        file
    }

    /// What of this lab is still there: namespaces, interfaces and /etc/netns entries
    /// named `NAME-…`, and processes whose command line mentions the lab dir.
    pub fn leftovers(&self) -> Vec<String> {
        let prefix = format!("{}-", self.name);
        let mut left = Vec::new();
        let netns = run(
            Command::new("ip").args(["netns", "list"]),
            Duration::from_secs(10),
        );
        for line in netns.stdout.lines() {
            let ns = line.split_whitespace().next().unwrap_or("");
            if ns.starts_with(&prefix) {
                left.push(format!("netns {ns}"));
            }
        }
        let links = run(
            Command::new("ip").args(["-o", "link", "show"]),
            Duration::from_secs(10),
        );
        for line in links.stdout.lines() {
            let Some(name) = line.split(": ").nth(1) else {
                continue;
            };
            let name = name.split('@').next().unwrap_or(name);
            if name.starts_with(&prefix) {
                left.push(format!("link {name}"));
            }
        }
        if let Ok(entries) = std::fs::read_dir("/etc/netns") {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&prefix) {
                    left.push(format!("/etc/netns/{n}"));
                }
            }
        }
        let dir = self.lab_dir().to_string_lossy().into_owned();
        if let Ok(procs) = std::fs::read_dir("/proc") {
            for p in procs.flatten() {
                let pid = p.file_name().to_string_lossy().into_owned();
                if !pid.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                let Ok(cmdline) = std::fs::read(p.path().join("cmdline")) else {
                    continue;
                };
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                if cmdline.contains(&dir) && pid != std::process::id().to_string() {
                    left.push(format!("process {pid}: {}", cmdline.trim()));
                }
            }
        }
        left
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let panicking = thread::panicking();
        for child in &mut self.background {
            kill_group(child, libc::SIGKILL);
            let _ = child.wait();
        }
        let down = (!self.down_done).then(|| self.lab("down", &[]));
        self.ctl.stop();
        if let Some(mut cap) = self.capture.take() {
            cap.stop();
        }
        let left = self.leftovers();
        let mut problems = Vec::new();
        if let Some(out) = down.filter(|o| !o.ok()) {
            problems.push(format!("pharos lab down failed:\n{out}"));
        }
        if !left.is_empty() {
            problems.push(format!(
                "lab {} left behind:\n  {}",
                self.name,
                left.join("\n  ")
            ));
        }
        if problems.is_empty() {
            return;
        }
        // Keep PHAROS_LAB_DIR (its state.json) for a manual `pharos lab down`.
        let kept = std::mem::replace(&mut self.dir.0, PathBuf::new());
        let msg = format!(
            "{}\n(PHAROS_LAB_DIR={} pharos lab down --name {} cleans up)",
            problems.join("\n"),
            kept.display(),
            self.name
        );
        if panicking {
            eprintln!("{msg}");
        } else {
            panic!("{msg}");
        }
    }
}
