//! Issue 16's soak, shortened: `pharos run` with its default apps, 1,000 switches from
//! 10 addresses for 2 minutes with 10% of them churning per minute (`pharos bench
//! soak`), while `pharos bench controller` loads 16 more switches. Every switch must be
//! served throughout, the churned ones back each time, the controller's resident memory
//! flat after the first 40 s (under 5% growth) with its descriptors and threads steady,
//! and the loaded switches answered with no disconnect. The hour-long version, at
//! 10,000 switches, is a benchmark (BENCHMARKS.md, "Soak").

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child killed on drop.
struct Kill(Child);

impl Drop for Kill {
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

#[test]
fn a_thousand_switches_churning_for_two_minutes_are_all_served_with_a_flat_footprint() {
    let bin = env!("CARGO_BIN_EXE_pharos");
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut run = Kill(
        Command::new(bin)
            .args(["run", "--listen", &addr.to_string(), "--workers", "2"])
            .args(["--api", "off", "--log-level", "warn"])
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while TcpStream::connect(addr).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "pharos run did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = run.0.id().to_string();
    // The load, on 16 switches of its own (dpids 1 to 16), through most of the soak.
    let load = Command::new(bin)
        .args(["bench", "controller", "--addr", &addr.to_string()])
        .args(["-s", "16", "-M", "1000", "--window", "4", "--no-learn"])
        .args(["-l", "100", "-m", "1000", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let soak = Command::new(bin)
        .args(["bench", "soak", "--target", &addr.to_string()])
        .args(["-s", "1000", "--first-dpid", "1001", "--source-addrs", "10"])
        .args([
            "--duration",
            "120",
            "--churn",
            "0.1",
            "--probe-interval",
            "5",
        ])
        .args(["--sample", "10", "--warmup", "40", "--max-growth", "0.05"])
        .args(["--pid", &pid, "--json"])
        .output()
        .unwrap();
    let load = load.wait_with_output().unwrap();
    let _ = run.0.kill();
    let _ = run.0.wait();
    let mut log = String::new();
    let _ = run.0.stderr.take().unwrap().read_to_string(&mut log);
    assert!(!log.contains("panicked"), "{log}");

    let report: serde_json::Value = serde_json::from_slice(&soak.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&soak.stderr)));
    let v = &report["verdict"];
    eprintln!(
        "soak: first connect {} ms, verdict {v}",
        report["first_connect_ms"]
    );
    assert!(
        soak.status.success(),
        "{}\n{}",
        serde_json::to_string_pretty(&report).unwrap(),
        log
    );
    assert_eq!(v["never_ready"], 0, "{v}");
    assert_eq!(v["max_unserved"], 0, "{v}");
    assert_eq!(v["served"], true, "{v}");
    assert_eq!(v["flat"], true, "{v}");
    // The churn happened: 10% of 1,000 per minute for 2 minutes.
    let samples = report["samples"].as_array().unwrap();
    let churned = samples.last().unwrap()["churned"].as_u64().unwrap();
    assert!((190..=210).contains(&churned), "churned {churned}");
    // The controller's threads and descriptors were sampled (a process that really ran).
    let p = &samples.last().unwrap()["process"];
    assert!(p["fds"].as_u64().unwrap() >= 1000, "{p}");

    // The loaded switches were answered throughout, none disconnected.
    let bench: serde_json::Value = serde_json::from_slice(&load.stdout).unwrap();
    assert_eq!(bench["connected"], 16, "{bench}");
    assert_eq!(bench["disconnected"]["count"], 0, "{bench}");
    assert_eq!(bench["silent_switches"]["count"], 0, "{bench}");
    assert!(bench["overall"]["mean"].as_f64().unwrap() > 0.0, "{bench}");
}
