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
        stdout.contains("NOT CONNECTED: 2 of 2 switches\n  switch 0x1: connect:"),
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
