//! End to end on real Open vSwitch: what `pharos lab` says when its switches cannot
//! connect. A real `pharos run` (the binary, with a small `max_pending_per_ip` and a long
//! handshake deadline) is kept full by idle connections from 127.0.0.1, the address the
//! lab's switches connect from too: `pharos lab restart s1` must say the controller
//! accepted and reset the connection (not "is a controller listening there?"), and the
//! switch must get back in once the idle connections go. With the controller gone, the
//! hint says the connection is refused.
//!
//! Needs root and Open vSwitch like `tests/lab.rs`; own lab name (`i11h`) and
//! `PHAROS_LAB_DIR`.

#[path = "common/lab.rs"]
mod harness;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness::{enabled, serial, wait_until, Lab, Of, TempDir};

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
    let dir = TempDir::new("i11h-run");
    let config = dir.0.join("pharos.toml");
    std::fs::write(
        &config,
        format!("[handshake]\ntimeout = \"120s\"\nmax_pending_per_ip = {CAP}\n"),
    )
    .unwrap();
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let target = format!("tcp:{addr}");
    let mut run = Run(Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(["run", "--listen", &addr.to_string(), "--workers", "1"])
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

    // Idle connections from 127.0.0.1 fill the per-address handshake slots (the long
    // deadline keeps them there).
    let flood: Vec<TcpStream> = (0..CAP)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
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
