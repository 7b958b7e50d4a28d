//! Issue 14's acceptance for the web UI, in a real browser: Debian's `chromium`, driven
//! by playwright-core from `crates/api/ui-tests/acceptance.mjs` (Node), against a real
//! `pharos run` (default apps, `--api 127.0.0.1:PORT`, the token from
//! `PHAROS_API_TOKEN`) with an Open vSwitch `fattree,4` lab (OpenFlow 1.3) behind it.
//!
//! ```text
//! topology   20 switches, 32 switch links, and with "Show hosts" 16 hosts drawn
//!            (the canvas's data-* counts), after a pingall made the hosts known
//! live       a cable taken down in the lab (`pharos lab link A B down`) leaves the
//!            view within 2 s, with no reload; back up, it comes back
//! hosts      the 16 hosts in the virtualised list (the last one scrolled to)
//! URL        the topology's selection, the switch page's tab and the hosts' search
//!            are in the URL and survive a reload
//! flows      a flow added on a switch page is in `ovs-ofctl dump-flows`, deleted it
//!            leaves; a bad one shows the server's error with the token marked
//! token      the first write asks for the token, later ones in the session do not; a
//!            new session asks again, and a wrong token is asked again with the error
//! apps       routing stopped in the UI shows stopped (and the API agrees), started
//!            again: keyboard only, as is opening a switch's page
//! banner     Pharos killed: the stale banner shows; a cable taken down meanwhile, and
//!            Pharos restarted on the same port: the banner goes, and the view shows the
//!            new Pharos's network (that cable gone), with no reload
//! guards     no console error, no uncaught exception, no request to another origin,
//!            no serious or critical axe-core violation on any page
//! ```
//!
//! Screenshots of each page go to `target/ui-artefacts/` (look at them). A second test
//! type-checks the UI's JavaScript with `tsc --noEmit --checkJs`
//! (`crates/api/ui-tests/tsconfig.json`).
//!
//! The browser script asks this test for what it cannot do itself with `@@ctl {json}`
//! lines on its stdout (take a cable down or up, dump a switch's flows, kill or restart
//! Pharos); the answer is one JSON line on its stdin.
//!
//! Needs root, Open vSwitch, chromium, Node and the UI tests' Node packages
//! (`scripts/install-test-deps` installs them all); `PHAROS_SKIP_LAB=1` skips it, saying
//! so and recording it. Own lab name (`i14u`) and `PHAROS_LAB_DIR`.
//!
//! Alone: `cargo test -p pharos --test lab_ui -- --nocapture`.

mod common;
use common::lab as harness;

use std::io::{BufRead, BufReader, Write as _};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use harness::{
    enabled, flow_lines, free_port, ofctl, parse_topo, record_not_full, run, serial, wait_until,
    Lab, Of, Topo,
};
use serde_json::{json, Value};
use testkit::http;

const TOKEN: &str = "lab-ui-token-3f9a1d27";
/// The whole browser run; acceptance.mjs gives up at 170 s on its own.
const BROWSER_DEADLINE: Duration = Duration::from_secs(200);
const CHROMIUM: &str = "/usr/bin/chromium";

/// `crates/api/ui-tests`.
fn ui_tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../api/ui-tests")
}

/// Where the screenshots go: `target/ui-artefacts` (or under `CARGO_TARGET_DIR`).
fn artefacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("ui-artefacts")
}

/// Whether Node, the UI tests' Node packages (and with `browser`, chromium) are here.
/// Missing: with `PHAROS_SKIP_LAB=1` the skip is recorded and false returned; otherwise
/// the test fails with the fix (scripts/install-test-deps installs them).
fn node_ready(test: &str, browser: bool) -> bool {
    let mut missing = Vec::new();
    if harness::which("node").is_none() {
        missing.push("node (Debian's nodejs)".to_string());
    }
    let modules = ui_tests_dir().join("node_modules");
    for pkg in ["playwright-core", "axe-core", "typescript"] {
        if !modules.join(pkg).join("package.json").is_file() {
            missing.push(format!("{} (npm ci in crates/api/ui-tests)", pkg));
        }
    }
    if browser && !Path::new(CHROMIUM).is_file() {
        missing.push(format!("{CHROMIUM} (Debian's chromium)"));
    }
    if missing.is_empty() {
        return true;
    }
    let why = format!("missing {}", missing.join(", "));
    if std::env::var("PHAROS_SKIP_LAB").is_ok_and(|v| v == "1") {
        record_not_full("SKIPPED", test, &format!("PHAROS_SKIP_LAB=1 and {why}"));
        return false;
    }
    panic!("{test}: {why}: run scripts/install-test-deps as root (or set PHAROS_SKIP_LAB=1)");
}

#[test]
fn ui_javascript_type_checks() {
    let test = "lab_ui::ui_javascript_type_checks";
    if !node_ready(test, false) {
        return;
    }
    let dir = ui_tests_dir();
    let out = run(
        Command::new("node")
            .arg(dir.join("node_modules/typescript/bin/tsc"))
            .arg("-p")
            .arg(dir.join("tsconfig.json"))
            .current_dir(&dir),
        Duration::from_secs(180),
    );
    assert!(
        out.ok(),
        "tsc --noEmit --checkJs over crates/api/ui found type errors:\n{out}"
    );
}

/// `pharos run` with the REST API and the UI: killed on drop, restartable on its ports.
struct Pharos {
    child: Option<Child>,
    of: SocketAddr,
    api: SocketAddr,
    dir: PathBuf,
}

impl Pharos {
    fn start(dir: &Path) -> Pharos {
        let mut p = Pharos {
            child: None,
            of: SocketAddr::from(([127, 0, 0, 1], free_port())),
            api: SocketAddr::from(([127, 0, 0, 1], free_port())),
            dir: dir.to_path_buf(),
        };
        // The default config: the default apps.
        std::fs::write(dir.join("pharos.toml"), "").unwrap();
        for d in ["xdg-runtime", "xdg-config", "xdg-state", "xdg-data"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        p.spawn();
        p
    }

    /// Starts `pharos run` on the ports chosen at first; returns once the API answers.
    /// A port just freed by the kill may be refused a moment: tried again for 10 s.
    fn spawn(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.dir.join("pharos.log"))
                .unwrap();
            let mut child = Command::new(env!("CARGO_BIN_EXE_pharos"))
                .args(["run", "--listen", &self.of.to_string(), "--workers", "1"])
                .args(["--api", &self.api.to_string(), "--config"])
                .arg(self.dir.join("pharos.toml"))
                .env("PHAROS_API_TOKEN", TOKEN)
                .env("XDG_RUNTIME_DIR", self.dir.join("xdg-runtime"))
                .env("XDG_CONFIG_HOME", self.dir.join("xdg-config"))
                .env("XDG_STATE_HOME", self.dir.join("xdg-state"))
                .env("XDG_DATA_HOME", self.dir.join("xdg-data"))
                .env_remove("RUST_LOG")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("start pharos run");
            let up = wait_until(Duration::from_secs(10), || {
                matches!(child.try_wait(), Ok(Some(_)))
                    || std::net::TcpStream::connect(self.api).is_ok()
            });
            if up && matches!(child.try_wait(), Ok(None)) {
                self.child = Some(child);
                return;
            }
            let _ = child.kill();
            let status = child.wait();
            assert!(
                Instant::now() < deadline,
                "pharos run did not serve its API on {} ({status:?}); its log:\n{}",
                self.api,
                self.log_tail()
            );
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// SIGKILL, as a crash would.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("pharos.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// GET `/api/v1{path}` as JSON (Null when it does not answer 200).
    fn get(&self, path: &str) -> Value {
        let auth = format!("Bearer {TOKEN}");
        let r = http::request(
            self.api,
            "GET",
            &format!("/api/v1{path}"),
            &[("Authorization", auth.as_str())],
            None,
        );
        if r.status != 200 {
            return Value::Null;
        }
        serde_json::from_slice(&r.body).unwrap_or(Value::Null)
    }

    fn count(&self, path: &str) -> usize {
        self.get(path).as_array().map_or(0, Vec::len)
    }
}

impl Drop for Pharos {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What the browser script asks for, done.
fn control(req: &Value, lab: &Lab, topo: &Topo, pharos: &mut Pharos, cable: (&str, &str)) -> Value {
    let op = req["op"].as_str().unwrap_or("");
    let fail = |e: String| json!({"ok": false, "error": e});
    match op {
        "link" => {
            let state = req["state"].as_str().unwrap_or("");
            let out = lab.lab("link", &[cable.0, cable.1, state]);
            if !out.ok() {
                return fail(format!("{out}"));
            }
            eprintln!("lab_ui: cable {}-{} {state}", cable.0, cable.1);
            json!({"ok": true, "what": format!("cable {}-{} {state}", cable.0, cable.1)})
        }
        "dump-flows" => {
            let name = req["switch"].as_str().unwrap_or("");
            let Some(sw) = topo.switches.get(name) else {
                return fail(format!("no switch {name}"));
            };
            let out = ofctl(
                &topo.run_dir,
                openflow::Version::V1_3,
                &["--no-names", "dump-flows", &sw.bridge],
            );
            if !out.ok() {
                return fail(format!("{out}"));
            }
            json!({"ok": true, "lines": flow_lines(&out)})
        }
        "pharos" => match req["state"].as_str() {
            Some("stop") => {
                pharos.kill();
                eprintln!("lab_ui: pharos killed");
                json!({"ok": true})
            }
            Some("start") => {
                pharos.spawn();
                eprintln!("lab_ui: pharos started again on {}", pharos.api);
                json!({"ok": true})
            }
            other => fail(format!("pharos {other:?}")),
        },
        _ => fail(format!("unknown op {op}")),
    }
}

/// pingall until 100%, for 90 s (the first may race discovery).
fn pingall_ok(lab: &Lab) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let out = lab.pingall();
        if out.ok() {
            return;
        }
        assert!(Instant::now() < deadline, "pingall is not 100%:\n{out}");
    }
}

#[test]
fn ui_acceptance_in_chromium_on_fattree4() {
    let test = "lab_ui::ui_acceptance_in_chromium_on_fattree4";
    if !enabled(test) || !node_ready(test, true) {
        return;
    }
    let _lock = serial();
    let started = Instant::now();
    let lab = Lab::new("i14u", Of::V13, false);
    let mut pharos = Pharos::start(lab.lab_dir());
    let target = format!("tcp:{}", pharos.of);
    lab.lab(
        "up",
        &[
            "--topo",
            "fattree,4",
            "--of",
            "1.3",
            "--controller",
            &target,
        ],
    )
    .expect_ok();
    let topo = parse_topo(&lab.show());
    let (n_switches, n_links, n_hosts) = (topo.switches.len(), topo.links.len(), topo.hosts.len());
    assert_eq!(
        (n_switches, n_links, n_hosts),
        (20, 32, 16),
        "fattree,4 is 20 switches, 32 cables, 16 hosts"
    );
    assert!(
        wait_until(Duration::from_secs(30), || pharos.count("/switches")
            == n_switches),
        "the 20 switches did not connect; pharos log:\n{}",
        pharos.log_tail()
    );
    assert!(
        wait_until(Duration::from_secs(30), || pharos.count("/links")
            == 2 * n_links),
        "discovery did not find the 32 cables (/links has {})",
        pharos.count("/links")
    );
    pingall_ok(&lab);
    assert!(
        wait_until(Duration::from_secs(15), || pharos.count("/hosts")
            == n_hosts),
        "/hosts has {} hosts after pingall, not {n_hosts}",
        pharos.count("/hosts")
    );
    eprintln!(
        "lab_ui: fattree,4 up, discovered and pinged in {:.1?}",
        started.elapsed()
    );

    // A cable between an aggregation and an edge switch: any cable will do, the first.
    let cable = (topo.links[0].a.clone(), topo.links[0].b.clone());
    let flow_switch = "s1";
    let lab_facts = json!({
        "switches": n_switches,
        "links": n_links,
        "hosts": n_hosts,
        "flow_switch": flow_switch,
        "flow_dpid": api::dpid::format(topo.switches[flow_switch].dpid),
        "host_mac": topo.hosts["h1"].mac,
        "host_macs": topo.hosts.values().map(|h| h.mac.clone()).collect::<Vec<_>>(),
    });
    let artefacts = artefacts_dir();
    let _ = std::fs::remove_dir_all(&artefacts);
    std::fs::create_dir_all(&artefacts).unwrap();

    let dir = ui_tests_dir();
    let mut node = Command::new("node")
        .arg(dir.join("acceptance.mjs"))
        .current_dir(&dir)
        .env("PHAROS_UI_URL", format!("http://{}", pharos.api))
        .env("PHAROS_UI_TOKEN", TOKEN)
        .env("PHAROS_UI_LAB", lab_facts.to_string())
        .env("PHAROS_UI_ARTEFACTS", &artefacts)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("start node");
    let pid = node.id() as libc::pid_t;
    // The deadline: node and the chromium it started are one process group, ended
    // together.
    let done = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (done, timed_out) = (Arc::clone(&done), Arc::clone(&timed_out));
        thread::spawn(move || {
            let end = Instant::now() + BROWSER_DEADLINE;
            while !done.load(Ordering::Relaxed) {
                if Instant::now() > end {
                    timed_out.store(true, Ordering::Relaxed);
                    // SAFETY: kill(2) on the process group our own child leads.
                    unsafe {
                        libc::kill(-pid, libc::SIGKILL);
                    }
                    return;
                }
                thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let stderr = node.stderr.take().unwrap();
    let log = thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // Said as it happens (seen with --nocapture), and kept for the failure.
            let _ = writeln!(std::io::stderr(), "  ui| {line}");
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let mut stdin = node.stdin.take().unwrap();
    let stdout = BufReader::new(node.stdout.take().unwrap());
    for line in stdout.lines().map_while(Result::ok) {
        let Some(req) = line.strip_prefix("@@ctl ") else {
            eprintln!("  ui> {line}");
            continue;
        };
        let req: Value = serde_json::from_str(req).unwrap_or(Value::Null);
        let answer = control(&req, &lab, &topo, &mut pharos, (&cable.0, &cable.1));
        if writeln!(stdin, "{answer}").is_err() {
            break;
        }
    }
    drop(stdin);
    let status = node.wait().expect("wait for node");
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    // Whatever node left (a chromium it could not close) goes with its group.
    // SAFETY: kill(2) on the process group our own child led.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    let said = log.join().unwrap_or_default();
    eprintln!(
        "lab_ui: whole test {:.1?}; screenshots in {}",
        started.elapsed(),
        artefacts.display()
    );
    assert!(
        !timed_out.load(Ordering::Relaxed),
        "the browser test passed its deadline of {BROWSER_DEADLINE:?}:\n{said}"
    );
    assert!(
        status.success(),
        "the UI acceptance failed ({status}); pharos log tail:\n{}\n--- acceptance.mjs:\n{said}",
        pharos.log_tail()
    );
    drop(pharos);
    drop(lab);
}
