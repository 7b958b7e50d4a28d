//! `run_compare` end to end, on loopback, installing nothing: the two "controllers" and the
//! generator are this test binary run again as helper processes (the `helper_*` tests,
//! ignored, which do their part only when their environment variable is set). One
//! controller echoes at once, the other waits 2 ms per message; the generator does
//! request/response round trips for 150 ms and prints a `pharos bench controller --json`
//! shaped report. What is checked is the orchestration: spawning with the port filled in,
//! waiting for the listen, alternating, reading the reports, stopping the controllers,
//! medians and the ratio.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use bench::compare::{run_compare, CompareConfig, CompareError, ControllerSpec, ADDR};

const LISTEN: &str = "PHAROS_CMP_TEST_LISTEN";
const DELAY_US: &str = "PHAROS_CMP_TEST_DELAY_US";
const TARGET: &str = "PHAROS_CMP_TEST_TARGET";

fn helper(test: &str, env: &[(&str, &str)]) -> ControllerSpec {
    let exe = std::env::current_exe().expect("test binary");
    ControllerSpec {
        name: String::new(),
        argv: vec![
            exe.to_string_lossy().into_owned(),
            test.to_string(),
            "--exact".to_string(),
            "--ignored".to_string(),
            "--nocapture".to_string(),
            "--test-threads=1".to_string(),
        ],
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn named(mut spec: ControllerSpec, name: &str) -> ControllerSpec {
    spec.name = name.to_string();
    spec
}

/// A configuration with its own log directory (the tests run in parallel).
fn config(test: &str) -> CompareConfig {
    let mut cfg = CompareConfig::new(PathBuf::from("unused"));
    cfg.rounds = 3;
    cfg.cores = None;
    cfg.start_timeout = Duration::from_secs(20);
    cfg.log_dir =
        std::env::temp_dir().join(format!("pharos-cmp-test-{}-{test}", std::process::id()));
    cfg.contenders = Some(vec![
        named(
            helper("helper_controller", &[(LISTEN, ADDR), (DELAY_US, "0")]),
            "fast",
        ),
        named(
            helper("helper_controller", &[(LISTEN, ADDR), (DELAY_US, "2000")]),
            "slow",
        ),
    ]);
    cfg.generator = Some(named(
        helper("helper_generator", &[(TARGET, ADDR)]),
        "generator",
    ));
    cfg
}

/// The comparisons of this file one at a time: each picks free ports and waits for
/// its controller to listen, and a port released by one and taken by the other's
/// controller made a controller that never listened look listening (a CI run saw it).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn alternates_contenders_and_reports_medians_and_ratio() {
    let _one = one_at_a_time();
    let cfg = config("alternates");
    let report = run_compare(&cfg).expect("comparison runs");
    let order: Vec<(&str, usize)> = report
        .runs
        .iter()
        .map(|r| (r.name.as_str(), r.round))
        .collect();
    assert_eq!(
        order,
        [
            ("fast", 1),
            ("slow", 1),
            ("fast", 2),
            ("slow", 2),
            ("fast", 3),
            ("slow", 3)
        ]
    );
    assert!(
        report.runs.iter().all(|r| r.responses_per_s > 0.0),
        "{report:?}"
    );
    assert_eq!(report.summaries.len(), 2);
    assert_eq!(report.summaries[0].runs.len(), 3);
    let ratio = report
        .ratio
        .as_ref()
        .expect("two contenders")
        .responses_per_s;
    // 2 ms per round trip caps "slow" near 500/s; "fast" does thousands.
    assert!(ratio > 2.0, "fast/slow = {ratio}\n{}", report.table());
    assert!(report.table().contains("fast/slow: throughput"));
}

#[test]
fn a_controller_that_never_listens_is_reported_with_its_log() {
    let _one = one_at_a_time();
    let mut cfg = config("never-listens");
    cfg.rounds = 1;
    let mut broken = helper("helper_controller", &[(DELAY_US, "0")]);
    broken.name = "broken".to_string();
    broken.argv = vec![
        "sh".to_string(),
        "-c".to_string(),
        "echo cannot start; exit 3".to_string(),
    ];
    cfg.contenders = Some(vec![broken]);
    let result = run_compare(&cfg);
    // A failed comparison keeps its logs for the user; the test cleans up after itself.
    let _ = std::fs::remove_dir_all(&cfg.log_dir);
    match result {
        Err(CompareError::NotListening {
            name, why, tail, ..
        }) => {
            assert_eq!(name, "broken");
            assert!(why.contains("exited"), "{why}");
            assert!(tail.contains("cannot start"), "{tail}");
        }
        other => panic!("expected NotListening, got {other:?}"),
    }
}

/// The stand-in controller: echoes every 8-byte message after the configured delay.
#[test]
#[ignore = "helper process for the tests above"]
fn helper_controller() {
    let Ok(addr) = std::env::var(LISTEN) else {
        return;
    };
    let delay = Duration::from_micros(
        std::env::var(DELAY_US)
            .ok()
            .and_then(|d| d.parse().ok())
            .unwrap_or(0),
    );
    let listener = TcpListener::bind(&addr).expect("bind");
    for conn in listener.incoming() {
        let Ok(mut conn) = conn else { continue };
        thread::spawn(move || {
            let _ = conn.set_nodelay(true);
            let mut buf = [0u8; 8];
            while conn.read_exact(&mut buf).is_ok() {
                if !delay.is_zero() {
                    thread::sleep(delay);
                }
                if conn.write_all(&buf).is_err() {
                    break;
                }
            }
        });
    }
}

/// The stand-in generator: round trips for 150 ms, then a report on one line.
#[test]
#[ignore = "helper process for the tests above"]
fn helper_generator() {
    let Ok(addr) = std::env::var(TARGET) else {
        return;
    };
    let mut conn = TcpStream::connect(&addr).expect("connect");
    conn.set_nodelay(true).expect("nodelay");
    let start = Instant::now();
    let mut done = 0u64;
    let mut buf = [0u8; 8];
    while start.elapsed() < Duration::from_millis(150) {
        conn.write_all(&done.to_be_bytes()).expect("write");
        conn.read_exact(&mut buf).expect("read");
        assert_eq!(u64::from_be_bytes(buf), done);
        done += 1;
    }
    let rate = done as f64 / start.elapsed().as_secs_f64();
    // On a line of its own: libtest has just written "test helper_generator ... ".
    println!();
    println!(r#"{{"overall":{{"mean":{rate}}},"latency":null,"silent_switches":[]}}"#);
}
