//! What `pharos bench controller` prints, against `pharos bench responder`: progress
//! lines and the table number loops alike (from 1), and the JSON rounds measured figures.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The responder, killed on drop.
struct Responder(Child);

impl Drop for Responder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A responder on a free port, once it accepts connections.
fn responder() -> (Responder, String) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let r = Responder(
        Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["bench", "responder", "--listen", &addr, "--threads", "1"])
            .args(["--duration", "30"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(&addr).is_err() {
        assert!(Instant::now() < deadline, "the responder never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    (r, addr)
}

fn bench(addr: &str, json: bool) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pharos"));
    cmd.args(["bench", "controller", "--addr", addr, "-s", "2", "-M", "10"])
        .args(["-l", "2", "-m", "100", "--of", "1.3"]);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn loops_are_numbered_alike_and_json_figures_are_rounded() {
    let (_r, addr) = responder();
    let (table, progress) = bench(&addr, false);
    assert!(
        progress.contains("\nloop 1/2: ") && progress.contains("\nloop 2/2: "),
        "{progress}"
    );
    // The table's first column: the same numbers, the first marked warm-up.
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("loop"))
        .skip(1)
        .take(2)
        .collect();
    assert!(
        rows[0].trim_start().starts_with("1 ") && rows[0].ends_with("(warm-up)"),
        "{table}"
    );
    assert!(rows[1].trim_start().starts_with("2 "), "{table}");

    let (json, _) = bench(&addr, true);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["loops"][0]["number"], 1);
    assert_eq!(v["loops"][1]["number"], 2);
    // Every float has at most 4 decimals (3 for times and rates, 4 for Jain's index).
    for token in json.split([' ', ',', '\n', '[', ']', '{', '}']) {
        if let Some((_, decimals)) = token.split_once('.') {
            if decimals.chars().all(|c| c.is_ascii_digit()) && !decimals.is_empty() {
                assert!(decimals.len() <= 4, "{token} in {json}");
            }
        }
    }
    assert!(
        v["loops"][0]["elapsed_ms"].as_f64().unwrap() > 0.0,
        "{json}"
    );
}
