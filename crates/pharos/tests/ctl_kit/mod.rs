//! What the `pharos ctl` tests share: a real `pharos run` with its API on a free port
//! ([`Controller`]), `pharos ctl` run as a user runs it ([`ctl_env`]), and two emulated
//! switches cabled together so discovery finds a link ([`Cable`]), from the test kit's
//! emulated switch (`testkit::emu`).
#![allow(dead_code)] // each test file uses a different part of it

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use openflow::{of10, of13, Message};
use testkit::emu::{self, Emu, Event, Spec};

pub const T: Duration = Duration::from_secs(20);
pub const PORT_CONFIG_DOWN: u32 = 1;

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A directory of its own under /tmp, removed at the end.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("pharos-ctl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `pharos run` with the API on a free port, a generated token and its state in a
/// directory of its own; its log goes to a file there (read when a test fails).
pub struct Controller {
    child: Child,
    pub of_addr: SocketAddr,
    pub api: SocketAddr,
    pub runtime: TempDir,
}

impl Controller {
    pub fn start(name: &str) -> Controller {
        let runtime = TempDir::new(name);
        let of_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let log = std::fs::File::create(runtime.path().join("run.log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["run", "--workers", "1", "--listen"])
            .arg(of_addr.to_string())
            .arg("--api")
            .arg(api.to_string())
            .env_remove("PHAROS_API_TOKEN")
            .env_remove("RUST_LOG")
            .env("XDG_RUNTIME_DIR", runtime.path())
            // Where state that outlives a run goes (static flows): not the user's.
            .env("XDG_STATE_HOME", runtime.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("pharos run starts");
        let mut c = Controller {
            child,
            of_addr,
            api,
            runtime,
        };
        let deadline = Instant::now() + T;
        while std::net::TcpStream::connect(api).is_err() {
            if let Some(status) = c.child.try_wait().unwrap() {
                panic!("pharos run exited with {status}:\n{}", c.log());
            }
            assert!(Instant::now() < deadline, "no API on {api}:\n{}", c.log());
            thread::sleep(Duration::from_millis(20));
        }
        c
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.runtime.path().join("run.log")).unwrap_or_default()
    }

    pub fn token(&self) -> String {
        let file = self.runtime.path().join("pharos").join("api-token");
        std::fs::read_to_string(file).unwrap().trim().to_string()
    }

    pub fn connect(&self, spec: Spec) -> Emu {
        Emu::connect_and_handshake(self.of_addr, spec, T).expect("the switch connects")
    }

    /// `pharos ctl --api ADDR args...` run where the controller wrote its token (so it
    /// finds it, as a user on the same machine does).
    pub fn ctl(&self, args: &[&str]) -> Out {
        ctl_env(
            &self.api.to_string(),
            args,
            &[("XDG_RUNTIME_DIR", self.runtime.path().to_str().unwrap())],
        )
    }

    /// Runs `ctl` until `done` holds for its output.
    pub fn ctl_until(&self, args: &[&str], done: impl Fn(&Out) -> bool) -> Out {
        let deadline = Instant::now() + T;
        loop {
            let out = self.ctl(args);
            if done(&out) {
                return out;
            }
            assert!(
                Instant::now() < deadline,
                "pharos ctl {args:?} never showed what was awaited:\n{out:?}\nlog:\n{}",
                self.log()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What `pharos ctl` did.
#[derive(Debug)]
pub struct Out {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// `pharos ctl --api API args...` with `PHAROS_API`, `PHAROS_API_TOKEN` and
/// `XDG_RUNTIME_DIR` unset unless `env` sets them, in an empty working directory (so no
/// `./pharos-api-token` is found by chance).
pub fn ctl_env(api: &str, args: &[&str], env: &[(&str, &str)]) -> Out {
    // Not the temporary directory itself: a `pharos run` started there (by hand, say)
    // leaves its generated token in it as `pharos-api-token`. One per call, removed
    // after it.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let cwd = std::env::temp_dir().join(format!("pharos-ctl-cwd-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&cwd).expect("an empty working directory");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pharos"));
    c.arg("ctl");
    if !api.is_empty() {
        c.args(["--api", api]);
    }
    let out = c
        .args(args)
        .current_dir(&cwd)
        .env_remove("PHAROS_API")
        .env_remove("PHAROS_API_TOKEN")
        .env_remove("XDG_RUNTIME_DIR")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("pharos ctl runs");
    let _ = std::fs::remove_dir(&cwd);
    Out {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The rows of a table whose first cell is `first`.
pub fn row<'a>(table: &'a str, first: &str) -> Option<Vec<&'a str>> {
    table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|cells| cells.first() == Some(&first))
}

pub const DP1: &str = "00:00:00:00:00:00:00:01";
pub const DP2: &str = "00:00:00:00:00:00:00:02";

/// Two emulated switches cabled port 1 to port 1: discovery frames one sends out of
/// port 1 arrive at the other as PACKET_IN on port 1, on a thread, until dropped.
pub struct Cable {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<(Emu, Emu)>>,
}

impl Cable {
    pub fn new(mut a: Emu, mut b: Emu) -> Cable {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            while !flag.load(Ordering::Acquire) {
                for a_to_b in [true, false] {
                    let (from, to) = if a_to_b {
                        (&mut a, &mut b)
                    } else {
                        (&mut b, &mut a)
                    };
                    if let Event::Message(_, m) = from.next(Duration::from_millis(5)) {
                        if let Some(frame) = lldp_out_of_port_1(&m) {
                            let _ = to.send_packet_in(1, &frame, None);
                        }
                    }
                }
            }
            (a, b)
        });
        Cable {
            stop,
            thread: Some(thread),
        }
    }

    pub fn take(mut self) -> (Emu, Emu) {
        self.stop.store(true, Ordering::Release);
        self.thread
            .take()
            .unwrap()
            .join()
            .expect("the cable thread")
    }
}

impl Drop for Cable {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// The frame of a PACKET_OUT of an LLDP frame (EtherType 0x88cc) out of port 1.
pub fn lldp_out_of_port_1(m: &Message) -> Option<Vec<u8>> {
    let (_, data) = emu::packet_out_parts(m)?;
    let lldp = data.get(12..14) == Some(&[0x88, 0xcc][..]);
    (lldp && emu::output_ports(m) == [1]).then(|| data.to_vec())
}

pub fn port_mod(m: &Message) -> Option<(u32, u32, u32)> {
    match m {
        Message::V10(of10::Message::PortMod(p)) => Some((u32::from(p.port_no), p.config, p.mask)),
        Message::V13(of13::Message::PortMod(p)) => Some((p.port_no, p.config, p.mask)),
        _ => None,
    }
}

/// The PORT_MODs the switch has received.
pub fn port_mods(sw: &Emu) -> Vec<(u32, u32, u32)> {
    sw.log.iter().filter_map(|(_, m)| port_mod(m)).collect()
}

/// The PORT_MOD after the first `before`, read now or awaited.
pub fn await_port_mod(sw: &mut Emu, before: usize) -> (u32, u32, u32) {
    if port_mods(sw).len() == before {
        sw.wait_for(T, |m| port_mod(m).is_some())
            .expect("a PORT_MOD");
    }
    let all = port_mods(sw);
    assert_eq!(all.len(), before + 1, "{all:?}");
    all[before]
}
