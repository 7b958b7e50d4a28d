//! End to end on real Open vSwitch: `pharos lab` on a machine it shares.
//!
//! * What it says when its switches cannot connect. A real `pharos run` (the binary,
//!   with a small `max_pending_per_ip`, no waiting, and a long handshake deadline) is kept full by
//!   idle connections from 127.0.0.1, the address the lab's switches connect from too:
//!   `pharos lab restart s1` must say the controller accepted and reset the connection
//!   (not "is a controller listening there?"), and the switch must get back in once the
//!   idle connections go. With the controller gone, the hint says the connection is
//!   refused.
//! * A userspace Open vSwitch not made by `pharos lab` (its own database and daemons,
//!   a `netdev` bridge, so it holds the `ovs-netdev` interface) does not stop a lab from
//!   coming up and forwarding.
//!
//! Needs root and Open vSwitch like `tests/lab.rs`; own lab names (`i11h`, `i11f`) and
//! `PHAROS_LAB_DIR`s.

mod common;
use common::lab as harness;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness::{enabled, run, serial, wait_until, Lab, Of, TempDir};

/// `pharos run` on `port` with `config`, killed on drop.
struct Run(Child);

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How many switches `pharos lab show --json` says are connected.
fn connected(lab: &Lab) -> u64 {
    lab.show()["connected"].as_u64().unwrap_or(0)
}

#[test]
fn a_switch_refused_over_the_per_address_cap_is_told_so() {
    let _serial = serial();
    if !enabled("a_switch_refused_over_the_per_address_cap_is_told_so") {
        return;
    }
    const CAP: usize = 4;
    let dir = TempDir::new("cfgh");
    let config = dir.0.join("pharos.toml");
    std::fs::write(
        &config,
        // Waiting turned off: a connection past the cap is refused at once (with
        // waiting on, the switch would wait its turn, up to max_wait).
        format!(
            "[handshake]\ntimeout = \"120s\"\nmax_pending_per_ip = {CAP}\nmax_waiting_per_ip = 0\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let target = format!("tcp:{addr}");
    let mut run = Run(Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(["run", "--listen", &addr.to_string(), "--workers", "1"])
        .args(["--api", "off"])
        .args(["--apps", "hub", "--config"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    assert!(
        wait_until(Duration::from_secs(10), || TcpStream::connect(addr).is_ok()),
        "pharos run did not listen on {addr}"
    );

    let lab = Lab::new("i11h", Of::V13, false);
    let out = lab.lab("up", &["--topo", "single,1", "--controller", &target]);
    out.expect_ok();
    assert!(out.stdout.contains("1/1 switches connected"), "{out}");

    // Connections from 127.0.0.1 that say HELLO and then nothing fill the per-address
    // handshake slots (the long deadline keeps them there). A HELLO, so that they are
    // handed over at once, as the switch's is: the listener holds back a silent one
    // for a second.
    let flood: Vec<TcpStream> = (0..CAP)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            std::io::Write::write_all(&mut s, &[4, 0, 0, 8, 0, 0, 0, 1]).unwrap();
            s
        })
        .collect();
    // Their HELLOs answered: in their handshakes, holding the slots.
    for s in &flood {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 8];
        std::io::Read::read_exact(&mut &*s, &mut b).expect("the controller's HELLO");
    }
    let out = lab.lab("restart", &["s1"]);
    out.expect_ok();
    assert!(
        out.stderr.contains("0/1 switches connected")
            && out.stderr.contains(&format!(
                "{addr} accepted a connection and reset it before saying anything"
            ))
            && out.stderr.contains("max_pending_per_ip"),
        "{out}"
    );
    assert!(!out.stderr.contains("listening there"), "{out}");

    // The idle connections gone, the switch gets in on its next retry.
    drop(flood);
    assert!(
        wait_until(Duration::from_secs(10), || connected(&lab) == 1),
        "s1 should connect once the idle connections are closed"
    );

    // No controller at all: refused.
    let _ = run.0.kill();
    let _ = run.0.wait();
    let out = lab.lab("restart", &["s1"]);
    out.expect_ok();
    assert!(
        out.stderr.contains(&format!(
            "a connection to {addr} is refused: no controller listens there"
        )),
        "{out}"
    );
}

/// The foreign Open vSwitch's bridge (named unlike any lab's).
const FOREIGN_BRIDGE: &str = "fovs-br";

/// An Open vSwitch of its own (database, ovsdb-server, ovs-vswitchd in a temporary
/// directory) with one `netdev` bridge: a userspace datapath not made by `pharos lab`,
/// holding the `ovs-netdev` tap as any such Open vSwitch does. Its daemons are stopped
/// (by the pids they wrote) on drop.
struct ForeignOvs {
    dir: TempDir,
    /// `unix:DIR/db.sock`.
    sock: String,
    /// Labs made by earlier versions of pharos renamed `ovs-netdev` under this
    /// machine-wide lock; holding it while this datapath holds the name keeps such a lab
    /// (of another checkout on this machine) waiting instead of failing.
    _lock: Option<std::fs::File>,
}

impl ForeignOvs {
    fn start() -> ForeignOvs {
        let lock = lock_old_labs_out();
        let dir = TempDir::new("fovs");
        let d = dir.0.clone();
        let env = |c: &mut Command| {
            c.env("OVS_RUNDIR", &d)
                .env("OVS_LOGDIR", &d)
                .env("OVS_DBDIR", &d);
        };
        let t = Duration::from_secs(20);
        let db = d.join("conf.db");
        let sock = format!("unix:{}", d.join("db.sock").display());
        let mut c = Command::new("ovsdb-tool");
        c.arg("create")
            .arg(&db)
            .arg("/usr/share/openvswitch/vswitch.ovsschema");
        run(&mut c, t).expect_ok();
        let mut c = Command::new("ovsdb-server");
        c.arg(&db)
            .arg(format!("--remote=p{sock}"))
            .arg(format!(
                "--pidfile={}",
                d.join("ovsdb-server.pid").display()
            ))
            .arg(format!(
                "--log-file={}",
                d.join("ovsdb-server.log").display()
            ))
            .args(["--detach", "--no-chdir"]);
        env(&mut c);
        run(&mut c, t).expect_ok();
        let foreign = ForeignOvs {
            dir,
            sock: sock.clone(),
            _lock: lock,
        };
        let mut c = Command::new("ovs-vsctl");
        c.arg(format!("--db={sock}")).args(["--no-wait", "init"]);
        env(&mut c);
        run(&mut c, t).expect_ok();
        let mut c = Command::new("ovs-vswitchd");
        c.arg(&sock)
            .arg(format!(
                "--pidfile={}",
                d.join("ovs-vswitchd.pid").display()
            ))
            .arg(format!(
                "--log-file={}",
                d.join("ovs-vswitchd.log").display()
            ))
            .args(["--detach", "--no-chdir"]);
        env(&mut c);
        run(&mut c, t).expect_ok();
        let mut c = Command::new("ovs-vsctl");
        c.arg(format!("--db={sock}"))
            .args([
                "add-br",
                FOREIGN_BRIDGE,
                "--",
                "set",
                "bridge",
                FOREIGN_BRIDGE,
            ])
            .arg("datapath_type=netdev");
        env(&mut c);
        run(&mut c, t).expect_ok();
        assert!(
            wait_until(Duration::from_secs(10), || std::path::Path::new(
                "/sys/class/net/ovs-netdev"
            )
            .exists()),
            "the foreign Open vSwitch should hold ovs-netdev"
        );
        foreign
    }
}

impl Drop for ForeignOvs {
    fn drop(&mut self) {
        // The bridge first: its tap and the datapath's (`ovs-netdev`) are persistent and
        // would outlive the daemons.
        let mut c = Command::new("ovs-vsctl");
        c.arg(format!("--db={}", self.sock))
            .args(["--if-exists", "del-br", FOREIGN_BRIDGE])
            .env("OVS_RUNDIR", &self.dir.0);
        run(&mut c, Duration::from_secs(20));
        for (daemon, comm) in [
            ("ovs-vswitchd.pid", "ovs-vswitchd"),
            ("ovsdb-server.pid", "ovsdb-server"),
        ] {
            let Some(pid) = std::fs::read_to_string(self.dir.0.join(daemon))
                .ok()
                .and_then(|p| p.trim().parse::<i32>().ok())
            else {
                continue;
            };
            // Only the daemon this test started: the pid must still name it.
            let is_it = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end() == comm);
            if is_it {
                // SAFETY: kill(2) on a process this test started.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
                wait_until(Duration::from_secs(10), || {
                    !std::path::Path::new(&format!("/proc/{pid}")).exists()
                });
            }
        }
    }
}

/// The lock labs of earlier pharos versions take around `ovs-netdev` (see
/// [`ForeignOvs::_lock`]); `None` where there is no /run/lock.
fn lock_old_labs_out() -> Option<std::fs::File> {
    use std::os::fd::AsRawFd as _;
    if !std::path::Path::new("/run/lock").is_dir() {
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/run/lock/pharos-lab-datapath.lock")
        .ok()?;
    let locked = wait_until(Duration::from_secs(60), || {
        // SAFETY: flock on a file descriptor we own.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
    });
    assert!(locked, "another lab held the datapath lock for 60 s");
    Some(file)
}

#[test]
fn a_lab_comes_up_beside_a_userspace_ovs_not_made_by_pharos_lab() {
    let _serial = serial();
    if !enabled("a_lab_comes_up_beside_a_userspace_ovs_not_made_by_pharos_lab") {
        return;
    }
    let foreign = ForeignOvs::start();
    let lab = Lab::new("i11f", Of::V13, false);
    let out = lab.up("single,2");
    assert!(
        out.stdout.contains("2/2 switches connected")
            || out.stdout.contains("1/1 switches connected"),
        "{out}"
    );
    let ping = lab.pingall();
    assert!(
        ping.ok(),
        "pingall beside a foreign userspace Open vSwitch:\n{ping}"
    );
    // The foreign datapath was there the whole time.
    assert!(std::path::Path::new("/sys/class/net/ovs-netdev").exists());
    drop(lab);
    drop(foreign);
    for tap in [FOREIGN_BRIDGE, "ovs-netdev"] {
        assert!(
            wait_until(Duration::from_secs(5), || !std::path::Path::new(&format!(
                "/sys/class/net/{tap}"
            ))
            .exists()),
            "the foreign Open vSwitch's {tap} should be gone with it"
        );
    }
}
