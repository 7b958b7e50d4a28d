//! The harness of the end-to-end tests (`tests/lab.rs`, `tests/lab_apps.rs`): a Pharos
//! controller in the test process (any set of apps, plus an observer counting PACKET_INs
//! by kind and recording PORT_STATUS), `pharos lab` run as a user runs it, a guard that
//! always tears both down, the lab's topology as `pharos lab show --json` reports it, and
//! the programs around them (dumpcap, tshark, ovs-ofctl, iperf3).
//!
//! Everything here runs commands with a deadline, in their own process group, and kills
//! only that group on expiry: nothing it does can reach a process it did not start.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write as _};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use controller::app::{AnyApp, App, Builder, SwitchCtx};
use controller::controller::{Controller, Handle, NetConfig};
use controller::counters::CountersSnapshot;
use controller::dispatch::Pipeline;
use controller::info::{PortInfo, PortReason};
use controller::services::Services;

/// The programs the lab tests drive, each with the Debian package providing it.
pub const PROGRAMS: &[(&str, &str)] = &[
    ("ovsdb-tool", "openvswitch-switch"),
    ("ovsdb-server", "openvswitch-switch"),
    ("ovs-vswitchd", "openvswitch-switch"),
    ("ovs-vsctl", "openvswitch-switch"),
    ("ovs-ofctl", "openvswitch-switch"),
    ("ip", "iproute2"),
    ("ping", "iputils-ping"),
    ("ethtool", "ethtool"),
    ("iperf3", "iperf3"),
    ("tshark", "tshark"),
    ("dumpcap", "tshark"),
];

/// One test at a time: each lab burns both cores of the CI machine, and a test's timing
/// checks (reconnection within 5 s) mean nothing while another lab competes.
static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the serial lock (a test that panicked holding it does not poison the others).
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records that `test` did not run in full: `kind` is `SKIPPED` (it checked nothing)
/// or `SHORTENED` (it checked less than it is written to). Said on stderr, and appended
/// to the file `PHAROS_SKIP_LOG` names (scripts/test sets it, counts the lines at the
/// end, and fails the run under CI=true): a test that passes without having run must
/// never look like one that ran.
pub fn record_not_full(kind: &str, test: &str, why: &str) {
    let line = format!("{kind} {test}: {why}");
    // Straight to the stderr handle: libtest captures eprintln! of passing tests.
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Some(path) = std::env::var_os("PHAROS_SKIP_LOG") {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path);
        // One write per line, in append mode: lines from tests running at once do not
        // interleave.
        if let Err(e) = file.and_then(|mut f| f.write_all(format!("{line}\n").as_bytes())) {
            panic!("cannot record `{line}` in PHAROS_SKIP_LOG: {e}");
        }
    }
}

/// Whether the lab tests run here. `PHAROS_SKIP_LAB=1`: no, and the skip is recorded
/// ([`record_not_full`]). Otherwise they must be able to run: not root, or a program
/// missing, fails the test with the reason and the fix.
pub fn enabled(test: &str) -> bool {
    if std::env::var("PHAROS_SKIP_LAB").is_ok_and(|v| v == "1") {
        record_not_full("SKIPPED", test, "PHAROS_SKIP_LAB=1");
        return false;
    }
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert!(
        euid == 0,
        "the lab tests need root (network namespaces and Open vSwitch): run them as root, \
         or set PHAROS_SKIP_LAB=1 to skip them"
    );
    let missing: Vec<&str> = PROGRAMS
        .iter()
        .filter(|(p, _)| which(p).is_none())
        .map(|(_, pkg)| *pkg)
        .collect();
    if !missing.is_empty() {
        let mut pkgs = missing.clone();
        pkgs.dedup();
        panic!(
            "the lab tests need programs that are missing: run scripts/install-test-deps as root \
             (apt-get install {}), or set PHAROS_SKIP_LAB=1 to skip them",
            pkgs.join(" ")
        );
    }
    true
}

/// The path of program `name` on PATH or in the sbin directories.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// What a finished command said.
#[derive(Debug)]
pub struct Out {
    /// The command line, for messages.
    pub what: String,
    /// Exit status; `None` when killed (by us at the deadline, or by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
    /// Killed at the deadline.
    pub timed_out: bool,
}

impl Out {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Panics, with everything the command said, unless it exited 0.
    #[track_caller]
    pub fn expect_ok(&self) -> &Out {
        assert!(self.ok(), "{} failed:\n{self}", self.what);
        self
    }
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "$ {}\n  exit {:?}{} after {:.1?}\n--- stdout\n{}--- stderr\n{}---",
            self.what,
            self.code,
            if self.timed_out {
                " (killed at the deadline)"
            } else {
                ""
            },
            self.took,
            self.stdout,
            self.stderr
        )
    }
}

/// Reads a pipe to the end on a thread.
fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Kills the process group of a child started with `process_group(0)`: the child and
/// whatever it started (`ip netns exec` → the command), nothing else.
fn kill_group(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on the process group our own child leads.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), sig);
    }
}

/// Runs `cmd` to completion, or kills its process group at `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> Out {
    let what = describe(cmd);
    let start = Instant::now();
    let mut child = match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!("cannot start {what}: {e}"),
    };
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for a child") {
            break s;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            kill_group(&child, libc::SIGKILL);
            break child.wait().expect("wait for a killed child");
        }
        thread::sleep(Duration::from_millis(5));
    };
    // A grandchild still holding the pipes must not hang us: the group is ours, end it.
    kill_group(&child, libc::SIGKILL);
    Out {
        what,
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        took: start.elapsed(),
        timed_out,
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Polls `cond` every 20 ms until it holds (true) or `timeout` passes (false).
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// How often the in-process controller publishes its counters: a snapshot is at most
/// this old.
pub const COUNTERS_EVERY: Duration = Duration::from_millis(100);

/// PACKET_INs by what they carry, counted by an observer after the apps (observers see
/// every PACKET_IN, even one an app stopped, and cannot change what happens to it); and
/// every PORT_STATUS, with the time it was handled.
///
/// IPv4 and ARP are the pingall's own traffic; LLDP is topology discovery's; the rest is
/// the hosts' kernels talking on their own (IPv6 router solicitations, MLD reports), or
/// frames a test sends, which a check about the pingall's pairs must not count.
#[derive(Debug, Default)]
pub struct PacketInKinds {
    pub ipv4_arp: AtomicU64,
    pub lldp: AtomicU64,
    pub other: AtomicU64,
    /// LLDP PACKET_INs by (dpid, in_port).
    pub lldp_at: Mutex<BTreeMap<(u64, u32), u64>>,
    /// Every PORT_STATUS, in the order handled.
    pub port_status: Mutex<Vec<PortStatusSeen>>,
}

/// One PORT_STATUS as the observer saw it.
#[derive(Debug, Clone)]
pub struct PortStatusSeen {
    pub at: Instant,
    pub dpid: u64,
    pub reason: PortReason,
    pub port: PortInfo,
}

impl PortStatusSeen {
    /// The port's link is down (`OFPPS_LINK_DOWN`, bit 0 in both versions) or it is
    /// administratively down (`OFPPC_PORT_DOWN`, bit 0), or it was deleted.
    pub fn down(&self) -> bool {
        self.reason == PortReason::Delete || self.port.state & 1 != 0 || self.port.config & 1 != 0
    }
}

/// The observer app feeding [`PacketInKinds`].
struct CountKinds(Arc<PacketInKinds>);

impl App for CountKinds {
    type State = ();

    fn name(&self) -> &'static str {
        "e2e_count_kinds"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.observe_packet_in(0, |app, ctx: &mut SwitchCtx, _, p| {
            let data = p.data();
            let ethertype = data.get(12..14).map(|t| u16::from_be_bytes([t[0], t[1]]));
            let counter = match ethertype {
                Some(0x0800 | 0x0806) => &app.0.ipv4_arp,
                Some(0x88cc) => {
                    *app.0
                        .lldp_at
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .entry((ctx.dpid(), p.in_port()))
                        .or_default() += 1;
                    &app.0.lldp
                }
                _ => &app.0.other,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        });
        b.on_port_status(|app, ctx: &mut SwitchCtx, _, reason, port| {
            let seen = PortStatusSeen {
                at: Instant::now(),
                dpid: ctx.dpid(),
                reason,
                port: port.clone(),
            };
            app.0
                .port_status
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(seen);
        });
    }
}

/// Makes the apps of a controller, afresh for every start (a restart gets new state).
pub type AppSet = Arc<dyn Fn() -> Vec<Box<dyn AnyApp>> + Send + Sync>;

/// The learning switch with its defaults, as `pharos run --apps learning_switch` has it.
pub fn learning_switch() -> AppSet {
    apps_by_name(&["learning_switch"])
}

/// The apps `names`, in order, each with its default parameters (`apps::by_name`).
pub fn apps_by_name(names: &[&'static str]) -> AppSet {
    let names = names.to_vec();
    Arc::new(move || {
        names
            .iter()
            .map(|n| apps::by_name(n, &toml::Table::new()).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    })
}

/// Pharos in the test process: the apps of an [`AppSet`] (by default the learning switch)
/// and the [`PacketInKinds`] observer, one worker, on 127.0.0.1.
pub struct Ctl {
    handle: Option<Arc<Handle>>,
    /// The REST API on this controller, when [`Ctl::start_api`] started it.
    api: Option<api::Server>,
    /// Its token and address, to start it again on a restart.
    api_at: Option<(String, SocketAddr)>,
    pipeline: Option<Arc<Pipeline>>,
    /// What it runs (again, on a restart).
    apps: AppSet,
    /// PACKET_INs by kind, since this start.
    pub kinds: Arc<PacketInKinds>,
    /// The port it listens on (the same across restarts).
    pub port: u16,
}

impl Ctl {
    /// Starts the learning switch on `port` (0: a free one). A port just released can be
    /// refused for a moment: retried for 5 s.
    pub fn start(port: u16) -> Ctl {
        Ctl::start_with(port, learning_switch())
    }

    /// Starts `apps` on `port` (0: a free one), as [`Ctl::start`].
    pub fn start_with(port: u16, apps: AppSet) -> Ctl {
        let kinds = Arc::new(PacketInKinds::default());
        let observer = Box::new(CountKinds(Arc::clone(&kinds)));
        let mut set = apps();
        set.push(observer);
        let pipeline = Arc::new(Pipeline::build(set, Services::new()).expect("pipeline"));
        let config = NetConfig {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], port))],
            workers: 1,
            counters_interval: COUNTERS_EVERY,
            ..NetConfig::default()
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let handle = loop {
            match Controller::start(&config, Arc::clone(&pipeline)) {
                Ok(h) => break h,
                Err(e) if Instant::now() < deadline => {
                    eprintln!("controller start on port {port}: {e}; retrying");
                    thread::sleep(Duration::from_millis(100));
                }
                Err(e) => {
                    pipeline.stop();
                    panic!("cannot start the controller on port {port}: {e}");
                }
            }
        };
        let port = handle.local_addrs()[0].port();
        Ctl {
            handle: Some(Arc::new(handle)),
            api: None,
            api_at: None,
            pipeline: Some(pipeline),
            apps,
            kinds,
            port,
        }
    }

    /// The running pipeline (its services: `pipeline().services().get::<T>()`).
    pub fn pipeline(&self) -> &Arc<Pipeline> {
        self.pipeline.as_ref().expect("the controller is running")
    }

    /// LLDP PACKET_INs so far.
    pub fn lldp_packet_ins(&self) -> u64 {
        self.kinds.lldp.load(Ordering::Relaxed)
    }

    /// LLDP PACKET_INs so far from port `port` of switch `dpid`.
    pub fn lldp_packet_ins_at(&self, dpid: u64, port: u32) -> u64 {
        self.kinds
            .lldp_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(dpid, port))
            .copied()
            .unwrap_or(0)
    }

    /// The PORT_STATUS messages handled so far.
    pub fn port_status(&self) -> Vec<PortStatusSeen> {
        self.kinds
            .port_status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `tcp:127.0.0.1:PORT`, for `pharos lab up --controller`.
    pub fn target(&self) -> String {
        format!("tcp:127.0.0.1:{}", self.port)
    }

    /// The counters (at most [`COUNTERS_EVERY`] old); empty once stopped.
    pub fn counters(&self) -> CountersSnapshot {
        self.handle
            .as_ref()
            .map(|h| h.counters())
            .unwrap_or_default()
    }

    /// IPv4 and ARP PACKET_INs so far (exact, no publishing delay).
    pub fn ipv4_arp_packet_ins(&self) -> u64 {
        self.kinds.ipv4_arp.load(Ordering::Relaxed)
    }

    /// Other PACKET_INs so far (IPv6 and the like; not LLDP).
    pub fn other_packet_ins(&self) -> u64 {
        self.kinds.other.load(Ordering::Relaxed)
    }

    /// The counters once `Handle::counters()` has caught up with the observer: its
    /// `packet_ins` equal to every PACKET_IN the observer saw (the snapshot is
    /// published every [`COUNTERS_EVERY`]; the hosts' chatter can land in between, so
    /// it is read again until both agree). Panics if they never agree within 3 s.
    pub fn agreeing_counters(&self) -> CountersSnapshot {
        let mut last = (0, 0);
        let agreed = wait_until(Duration::from_secs(3), || {
            let seen =
                self.ipv4_arp_packet_ins() + self.lldp_packet_ins() + self.other_packet_ins();
            let counted = self.counters().total.packet_ins;
            last = (counted, seen);
            counted == seen
        });
        assert!(
            agreed,
            "Handle::counters() says {} PACKET_INs, the observer saw {}",
            last.0, last.1
        );
        self.counters()
    }

    /// Stops it as `pharos run` does on SIGTERM (switches closed, threads joined, apps
    /// stopped). Harmless twice.
    pub fn stop(&mut self) {
        if let Some(api) = self.api.take() {
            api.shutdown();
        }
        if let Some(h) = self.handle.take() {
            h.shutdown();
        }
        if let Some(p) = self.pipeline.take() {
            p.stop();
        }
    }

    /// Stops it and starts a new one (new app state, new counters) on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let api_at = self.api_at.take();
        *self = Ctl::start_with(self.port, Arc::clone(&self.apps));
        if let Some((token, at)) = api_at {
            self.start_api_on(&token, at);
        }
    }

    /// Serves the REST API of this controller on a free loopback port with `token`
    /// (as `pharos run --api` does); returns its address. A restart serves it again on
    /// the same address.
    pub fn start_api(&mut self, token: &str) -> SocketAddr {
        self.start_api_on(token, SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    fn start_api_on(&mut self, token: &str, listen: SocketAddr) -> SocketAddr {
        let core = api::Core {
            pipeline: Arc::clone(self.pipeline()),
            controller: Arc::clone(self.handle.as_ref().expect("the controller is running")),
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let server = loop {
            let settings = api::Settings {
                listen,
                token: api::auth::Token::new(token, api::auth::TokenSource::Env),
                read_auth: false,
                switch_timeout: Duration::from_secs(5),
                tls: None,
            };
            match api::Server::start(settings, core.clone()) {
                Ok(s) => break s,
                // The port of the API just stopped by a restart can be refused a moment.
                Err(e) if Instant::now() < deadline => {
                    eprintln!("API start on {listen}: {e}; retrying");
                    thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("cannot start the API on {listen}: {e}"),
            }
        };
        let at = server.local_addr();
        self.api = Some(server);
        self.api_at = Some((token.to_string(), at));
        at
    }

    /// Waits until `n` switches are connected; false at the deadline.
    pub fn wait_connected(&self, n: usize, timeout: Duration) -> bool {
        wait_until(timeout, || self.counters().switches.len() >= n)
    }
}

impl Drop for Ctl {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An OpenFlow version as the lab tests use it: every switch 1.0, every switch 1.3, or
/// mixed (`pharos lab up --of mixed`: odd-numbered switches 1.0, even-numbered 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    V10,
    V13,
    Mixed,
}

impl Of {
    /// `pharos lab up --of`.
    pub fn flag(self) -> &'static str {
        match self {
            Of::V10 => "1.0",
            Of::V13 => "1.3",
            Of::Mixed => "mixed",
        }
    }

    /// `ovs-ofctl -O` (for a mixed lab, the list that talks to either kind).
    pub fn ofctl(self) -> &'static str {
        match self {
            Of::V10 => "OpenFlow10",
            Of::V13 => "OpenFlow13",
            Of::Mixed => "OpenFlow10,OpenFlow13",
        }
    }

    /// tshark's protocol filter for this version.
    pub fn tshark_proto(self) -> &'static str {
        match self {
            Of::V10 => "openflow_v1",
            Of::V13 => "openflow_v4",
            Of::Mixed => "openflow_v1 || openflow_v4",
        }
    }

    /// The version the controller negotiates with every switch of the lab (not for a
    /// mixed lab: see [`Of::version_of`]).
    pub fn version(self) -> openflow::Version {
        match self {
            Of::V10 => openflow::Version::V1_0,
            Of::V13 => openflow::Version::V1_3,
            Of::Mixed => panic!("a mixed lab has no one version: Of::version_of(dpid)"),
        }
    }

    /// The version the controller negotiates with the switch of datapath id `dpid`
    /// (switch sN has dpid N).
    pub fn version_of(self, dpid: u64) -> openflow::Version {
        match self {
            Of::Mixed if dpid % 2 == 1 => openflow::Version::V1_0,
            Of::Mixed => openflow::Version::V1_3,
            v => v.version(),
        }
    }
}

/// dumpcap on loopback, filtered to one TCP port, writing a pcapng file.
pub struct Capture {
    child: Option<Child>,
    pub file: PathBuf,
    stderr: Option<thread::JoinHandle<String>>,
}

impl Capture {
    /// Starts capturing and waits until dumpcap has written the file header (it
    /// captures from then on; about 30 ms).
    pub fn start(port: u16, file: &Path) -> Capture {
        let filter = format!("tcp port {port}");
        let mut child = Command::new(which("dumpcap").expect("dumpcap"))
            .args(["-q", "-i", "lo", "-f", &filter, "-w"])
            .arg(file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start dumpcap");
        let stderr = drain(child.stderr.take());
        let mut cap = Capture {
            child: Some(child),
            file: file.to_path_buf(),
            stderr: Some(stderr),
        };
        let started = wait_until(Duration::from_secs(10), || {
            std::fs::metadata(file).is_ok_and(|m| m.len() > 0)
        });
        if !started {
            let why = cap.stop();
            panic!("dumpcap did not start writing {}: {why}", file.display());
        }
        cap
    }

    /// Stops dumpcap (SIGINT: it writes out what it holds and exits) and returns what it
    /// said on stderr. Harmless twice.
    pub fn stop(&mut self) -> String {
        let Some(mut child) = self.child.take() else {
            return String::new();
        };
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let exited = wait_until(Duration::from_secs(5), || {
            child.try_wait().ok().flatten().is_some()
        });
        if !exited {
            kill_group(&child, libc::SIGKILL);
        }
        let _ = child.wait();
        self.stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop();
    }
}

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

// ---------------------------------------------------------------------------------------
// The topology as `pharos lab show --json` reports it.

/// What the checks need of a lab's topology.
#[derive(Debug, Clone)]
pub struct Topo {
    /// Open vSwitch's run directory (`OVS_RUNDIR` for ovs-ofctl).
    pub run_dir: String,
    /// Short name (`s1`) → bridge name, dpid and ports.
    pub switches: BTreeMap<String, Switch>,
    /// Short name (`h1`) → address, MAC and the switch port it hangs off.
    pub hosts: BTreeMap<String, Host>,
    /// Switch-to-switch links.
    pub links: Vec<SwitchLink>,
}

#[derive(Debug, Clone)]
pub struct Switch {
    pub bridge: String,
    pub dpid: u64,
    /// Port number → its interface in the root namespace (`NAME-s1-eth2`).
    pub ports: BTreeMap<u32, String>,
}

#[derive(Debug, Clone)]
pub struct Host {
    pub ip: String,
    /// Lower case, `00:00:00:00:00:01`.
    pub mac: String,
    pub switch: String,
    pub port: u32,
}

impl Host {
    /// The MAC as bytes.
    pub fn mac_bytes(&self) -> [u8; 6] {
        let mut m = [0u8; 6];
        for (i, part) in self.mac.split(':').enumerate() {
            m[i] = u8::from_str_radix(part, 16).expect("a MAC of show --json");
        }
        m
    }
}

/// A cable between two switch ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchLink {
    pub a: String,
    pub port_a: u32,
    pub b: String,
    pub port_b: u32,
    /// Both ends up (as `show` saw them).
    pub up: bool,
}

impl SwitchLink {
    /// Whether it joins `x` and `y`, in either order.
    pub fn joins(&self, x: &str, y: &str) -> bool {
        (self.a == x && self.b == y) || (self.a == y && self.b == x)
    }
}

fn str_field<'a>(v: &'a serde_json::Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("show --json: no string {key:?} in {v}"))
}

fn num_field(v: &serde_json::Value, key: &str) -> u32 {
    v[key]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or_else(|| panic!("show --json: no number {key:?} in {v}"))
}

/// The topology in `pharos lab show --json`'s output.
pub fn parse_topo(show: &serde_json::Value) -> Topo {
    let run_dir = str_field(&show["env"], "OVS_RUNDIR").to_string();
    let mut switches = BTreeMap::new();
    for s in show["switches"].as_array().expect("show --json: switches") {
        let dpid = &s["dpid"];
        let dpid = dpid
            .as_u64()
            .or_else(|| {
                let d = dpid.as_str()?.parse::<openflow::Dpid>().ok()?;
                Some(d.0)
            })
            .unwrap_or_else(|| panic!("show --json: dpid {dpid}"));
        let ports = s["ports"]
            .as_array()
            .expect("show --json: ports")
            .iter()
            .map(|p| (num_field(p, "port"), str_field(p, "interface").to_string()))
            .collect();
        switches.insert(
            str_field(s, "name").to_string(),
            Switch {
                bridge: str_field(s, "bridge").to_string(),
                dpid,
                ports,
            },
        );
    }
    let mut hosts = BTreeMap::new();
    for h in show["hosts"].as_array().expect("show --json: hosts") {
        let ip = str_field(h, "ip");
        hosts.insert(
            str_field(h, "name").to_string(),
            Host {
                ip: ip.split('/').next().unwrap_or(ip).to_string(),
                mac: str_field(h, "mac").to_ascii_lowercase(),
                switch: str_field(h, "switch").to_string(),
                port: num_field(h, "port"),
            },
        );
    }
    let mut links = Vec::new();
    for l in show["links"].as_array().expect("show --json: links") {
        let (a, b) = (str_field(l, "a"), str_field(l, "b"));
        if switches.contains_key(a) && switches.contains_key(b) {
            links.push(SwitchLink {
                a: a.to_string(),
                port_a: num_field(l, "port_a"),
                b: b.to_string(),
                port_b: num_field(l, "port_b"),
                up: l["up"].as_bool().unwrap_or(false),
            });
        }
    }
    Topo {
        run_dir,
        switches,
        hosts,
        links,
    }
}

impl Topo {
    /// The short name of the switch with datapath id `dpid`.
    pub fn switch_by_dpid(&self, dpid: u64) -> Option<&str> {
        self.switches
            .iter()
            .find(|(_, s)| s.dpid == dpid)
            .map(|(n, _)| n.as_str())
    }

    /// The cable between switches `a` and `b`.
    pub fn link(&self, a: &str, b: &str) -> &SwitchLink {
        self.links
            .iter()
            .find(|l| l.joins(a, b))
            .unwrap_or_else(|| panic!("no link {a} - {b} in the lab"))
    }
}

// ---------------------------------------------------------------------------------------
// ovs-ofctl

/// One line of `ovs-ofctl dump-flows`.
#[derive(Debug, Clone)]
pub struct FlowEntry {
    pub priority: u32,
    pub n_packets: u64,
    pub dl_src: Option<String>,
    pub dl_dst: Option<String>,
    pub actions: String,
    pub line: String,
}

/// `ovs-ofctl -O VERSION --no-names dump-flows BRIDGE` against the lab's own Open vSwitch.
pub fn dump_flows(lab: &Lab, topo: &Topo, switch: &str) -> Vec<FlowEntry> {
    let bridge = &topo.switches[switch].bridge;
    let out = run(
        Command::new("ovs-ofctl")
            .args(["-O", lab.of.ofctl(), "--no-names", "dump-flows", bridge])
            .env("OVS_RUNDIR", &topo.run_dir),
        Duration::from_secs(15),
    );
    out.expect_ok();
    out.stdout
        .lines()
        .filter(|l| l.contains("actions="))
        .map(parse_flow)
        .collect()
}

pub fn parse_flow(line: &str) -> FlowEntry {
    let (fields, actions) = line.rsplit_once("actions=").expect("actions=");
    let mut e = FlowEntry {
        priority: 32768,
        n_packets: 0,
        dl_src: None,
        dl_dst: None,
        actions: actions.trim().to_string(),
        line: line.trim().to_string(),
    };
    for part in fields.split([',', ' ']).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        match k {
            "priority" => e.priority = v.parse().expect("priority"),
            "n_packets" => e.n_packets = v.parse().expect("n_packets"),
            "dl_src" => e.dl_src = Some(v.to_ascii_lowercase()),
            "dl_dst" => e.dl_dst = Some(v.to_ascii_lowercase()),
            _ => {}
        }
    }
    e
}

// ---------------------------------------------------------------------------------------
// Open vSwitch's own tools, and ports.

/// How long one `ovs-ofctl` command may take.
pub const OFCTL_TIMEOUT: Duration = Duration::from_secs(15);

/// `ovs-ofctl -O VERSION ARGS...` against the lab's Open vSwitch (`OVS_RUNDIR`).
pub fn ofctl(run_dir: &str, version: openflow::Version, args: &[&str]) -> Out {
    let proto = match version {
        openflow::Version::V1_0 => "OpenFlow10",
        openflow::Version::V1_3 => "OpenFlow13",
    };
    run(
        Command::new("ovs-ofctl")
            .args(["-O", proto])
            .args(args)
            .env("OVS_RUNDIR", run_dir),
        OFCTL_TIMEOUT,
    )
}

/// The flow lines of `ovs-ofctl dump-flows`.
pub fn flow_lines(dump: &Out) -> Vec<String> {
    dump.stdout
        .lines()
        .filter(|l| l.contains("actions="))
        .map(|l| l.trim().to_string())
        .collect()
}

/// A loopback port free a moment ago (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
