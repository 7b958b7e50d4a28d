//! `pharos bench responder` and `pharos bench controller --json`, as processes: the JSON
//! that scripts (and `pharos bench compare`) read.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn controller_json_against_the_responder() {
    // Port 0: the responder says where it listens once it does, so there is neither a
    // wait nor a port that someone else could take between a probe and the bind.
    let mut responder = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "bench",
            "responder",
            "--listen",
            "127.0.0.1:0",
            "--threads",
            "1",
        ])
        .args(["--duration", "5"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(responder.stderr.take().unwrap()).lines();
    let first = lines.next().expect("the responder says something").unwrap();
    let addr = first
        .strip_prefix("pharos bench responder: listening on ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("not the listening line: {first}"))
        .to_string();
    // Keep reading, so that a full pipe never blocks it.
    std::thread::spawn(move || lines.for_each(drop));
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "bench",
            "controller",
            "--addr",
            &addr,
            "-s",
            "2",
            "-M",
            "100",
        ])
        .args([
            "-l", "2", "-m", "150", "--mode", "latency", "--of", "1.3", "--json",
        ])
        .output()
        .unwrap();
    let _ = responder.kill();
    let _ = responder.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("loop 2/2"),
        "a progress line per loop: {stderr}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["mode"], "latency");
    assert_eq!(json["version"], "1.3");
    assert!(json["overall"]["mean"].as_f64().unwrap() > 0.0, "{json}");
    assert!(json["latency"]["p50_us"].as_f64().unwrap() > 0.0, "{json}");
    assert_eq!(json["silent_switches"]["count"], 0);
    assert_eq!(json["loops"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_settings_exit_with_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(["bench", "controller", "-l", "1", "-w", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warm-up"));
}

#[test]
fn no_controller_is_reported_and_exits_1() {
    // A port nobody listens on: bind, read it, let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "bench",
            "controller",
            "--addr",
            &format!("127.0.0.1:{port}"),
        ])
        .args(["-s", "2", "-l", "2", "-m", "100"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .contains("NOT CONNECTED: 2 of 2 switches\n  switch 00:00:00:00:00:00:00:01: connect:"),
        "{stdout}"
    );
    // Nothing was measured: no table of zeros after "no loop ran", and no SILENT list
    // repeating NOT CONNECTED.
    assert!(stdout.contains("no loop ran"), "{stdout}");
    for zeros in [
        "mean 0",
        "per switch (",
        "generator CPU",
        "total:",
        "SILENT",
    ] {
        assert!(!stdout.contains(zeros), "{zeros:?} in {stdout}");
    }
}

/// `pharos run` (the learning switch, its default admission caps: 64 handshakes at once
/// per source address) on a free port, killed when dropped.
struct Run(std::process::Child, String);

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `pharos run` with the learning switch; `handshake` is the `[handshake]` table's body.
fn run_pharos(handshake: &str) -> Run {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let dir = std::env::temp_dir().join(format!("pharos-bench-join-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("pharos.toml");
    std::fs::write(&config, format!("[handshake]\n{handshake}\n")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "run",
            "--api",
            "off",
            "--apps",
            "learning_switch",
            "--listen",
            &addr,
        ])
        .arg("--config")
        .arg(&config)
        .env_remove("RUST_LOG")
        .env("XDG_STATE_HOME", &dir)
        .env("XDG_CONFIG_HOME", &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "pharos run did not listen"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Run(child, addr)
}

fn join(addr: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "bench",
            "controller",
            "--addr",
            addr,
            "-s",
            "400",
            "-M",
            "4",
        ])
        .args(["-l", "2", "-m", "100", "--window", "1", "--threads", "1"])
        .args(["--no-learn", "--connect-timeout", "20", "--json"])
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn refused_switches_connect_again_with_backoff_and_the_report_says_how_long_they_took() {
    // Waiting turned off: admission refuses what is past its per-address cap at once.
    let pharos = run_pharos("max_waiting_per_ip = 0");
    // 400 at once from one address: admission refuses those past its per-address cap.
    // Giving up at once, some never get in.
    let once = join(&pharos.1, &["--no-retry"]);
    let connected = once["connected"].as_u64().unwrap();
    assert!(connected < 400, "refusals happen without retries: {once}");
    assert_eq!(once["join"]["retried"], 0);
    // Trying again after a backoff, as a switch does, every one gets in, and the report
    // says how many tries it took and how long.
    let retried = join(&pharos.1, &[]);
    assert_eq!(retried["connected"], 400, "{retried}");
    let j = &retried["join"];
    assert_eq!(j["joined"], 400);
    assert!(j["retried"].as_u64().unwrap() > 0, "{j}");
    assert!(j["attempts"].as_u64().unwrap() > 400, "{j}");
    assert!(j["max_ms"].as_f64().unwrap() >= j["p50_ms"].as_f64().unwrap());
    assert!(j["max_ms"].as_f64().unwrap() < 20_000.0, "{j}");
    // From 10 loopback addresses, 40 each: under the cap, no retry needed.
    let spread = join(&pharos.1, &["--source-addrs", "10"]);
    assert_eq!(spread["connected"], 400, "{spread}");
    assert_eq!(spread["join"]["source_addrs"], 10);
    assert_eq!(spread["join"]["retried"], 0, "{spread}");
}

#[test]
fn with_waiting_on_400_switches_from_one_address_get_in_without_a_retry() {
    // The default: past the per-address cap of handshakes (64), a connection waits its
    // turn instead of being refused, so even a bench that never retries gets all in.
    let pharos = run_pharos("");
    let once = join(&pharos.1, &["--no-retry"]);
    assert_eq!(once["connected"], 400, "{once}");
    assert_eq!(once["join"]["retried"], 0, "{once}");
    assert_eq!(once["join"]["attempts"], 400, "{once}");
}
