//! `pharos bench fuzz` against a live `pharos run` (its default apps): rounds of
//! connections that complete a handshake and then send mutated messages (seeded from
//! ../shared/openflow-vectors), while two well-behaved switches must keep being served;
//! then the corpus kept in the repository (crates/bench/fuzz-corpus/live) is replayed.
//! The controller must close offending connections, serve the others, and never panic.
//! The same over TLS (certificates made with rcgen, `testkit::tlskit`),
//! with forged records written under some of the sessions, and the corpus replayed over
//! TLS (its `-raw` streams forged records).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use testkit::tlskit;

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `pharos run` with its default apps, killed when dropped; its log in a file.
struct Run {
    child: Child,
    log: PathBuf,
    _dir: tempdir::Dir,
}

mod tempdir {
    /// A temporary directory, removed when dropped.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new(tag: &str) -> Dir {
            let p = std::env::temp_dir().join(format!("pharos-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run_pharos(port: u16, args: &[&str]) -> Run {
    let dir = tempdir::Dir::new(&format!("fuzz-live-{port}"));
    let log = dir.0.join("pharos.log");
    let child = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "run",
            "--api",
            "off",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .args(args)
        .env_remove("RUST_LOG")
        .env("XDG_STATE_HOME", &dir.0)
        .env("XDG_CONFIG_HOME", &dir.0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "pharos run did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    Run {
        child,
        log,
        _dir: dir,
    }
}

fn fuzz(port: u16, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "bench",
            "fuzz",
            "--target",
            &format!("127.0.0.1:{port}"),
            "--json",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pharos bench fuzz {args:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_live_controller_closes_fuzzed_connections_keeps_serving_the_others_and_replays_its_corpus() {
    let vectors = vectors();
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bench/fuzz-corpus/live");
    let port = free_port();
    let mut pharos = run_pharos(port, &[]);

    let r = fuzz(
        port,
        &[
            "--rounds",
            "30",
            "--connections",
            "8",
            "--messages",
            "64",
            "--seed",
            "7",
            "--vectors",
            vectors.to_str().unwrap(),
        ],
    );
    assert!(
        r["seeds"][0].as_u64().unwrap() > 10,
        "1.0 vectors loaded: {r}"
    );
    assert!(
        r["seeds"][1].as_u64().unwrap() > 50,
        "1.3 vectors loaded: {r}"
    );
    assert_eq!(r["rounds"], 30);
    assert_eq!(
        r["handshakes"], r["connections"],
        "every fuzzer got in: {r}"
    );
    assert_eq!(r["messages"], 30 * 8 * 64);
    let closed = r["closed_by_controller"].as_u64().unwrap();
    assert!(
        closed > 30,
        "bad input closes connections ({closed} of 240 closed)"
    );
    assert_eq!(r["findings"], serde_json::json!([]), "{r}");

    let r = fuzz(port, &["--replay", corpus.to_str().unwrap()]);
    assert!(
        r["replayed"].as_u64().unwrap() >= 8,
        "the corpus is there: {r}"
    );
    assert_eq!(r["findings"], serde_json::json!([]), "{r}");

    assert!(
        pharos.child.try_wait().unwrap().is_none(),
        "the controller is still running"
    );
    let log = log_of(&mut pharos);
    assert!(
        !log.contains("panicked"),
        "no panic in the controller:\n{log}"
    );
    assert!(
        log.contains("wrong_version") || log.contains("bad_length") || log.contains("decode"),
        "the controller said why it closed connections"
    );
}

fn vectors() -> PathBuf {
    let vectors =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/openflow-vectors");
    assert!(
        vectors.is_dir(),
        "{}: the seed messages (../shared beside the repository) are missing",
        vectors.display()
    );
    vectors
}

fn log_of(run: &mut Run) -> String {
    let _ = run.child.kill();
    let _ = run.child.wait();
    std::fs::read_to_string(&run.log).unwrap()
}

#[test]
fn over_tls_fuzzed_messages_and_forged_records_close_only_their_own_sessions() {
    let pki = tlskit::Pki::new("fuzz-live");
    let switch = pki.ca.issue("switch", false, false);
    pki.write("sw-cert.pem", &switch.cert.pem());
    pki.write("sw-key.pem", &switch.key.serialize_pem());
    let port = free_port();
    let mut pharos = run_pharos(
        port,
        &[
            "--tls-cert",
            &pki.path("ctl-cert.pem"),
            "--tls-key",
            &pki.path("ctl-key.pem"),
            "--tls-client-ca",
            &pki.path("ca.pem"),
        ],
    );
    let vectors = vectors();
    // The switches' TLS files, for every run of the fuzzer below.
    let tls = [
        "--tls-cert".to_string(),
        pki.path("sw-cert.pem"),
        "--tls-key".to_string(),
        pki.path("sw-key.pem"),
        "--tls-ca".to_string(),
        pki.path("ca.pem"),
    ];
    let rounds = 16;
    let r = fuzz(
        port,
        &[
            "--rounds",
            &rounds.to_string(),
            "--connections",
            "8",
            "--messages",
            "64",
            "--seed",
            "11",
            "--vectors",
            vectors.to_str().unwrap(),
        ]
        .into_iter()
        .chain(tls.iter().map(String::as_str))
        .collect::<Vec<_>>(),
    );
    assert_eq!(r["rounds"], rounds);
    assert_eq!(
        r["handshakes"], r["connections"],
        "every fuzzer's TLS and OpenFlow handshakes completed: {r}"
    );
    assert!(
        r["closed_by_controller"].as_u64().unwrap() > rounds,
        "bad input closes sessions: {r}"
    );
    assert_eq!(r["findings"], serde_json::json!([]), "{r}");

    // The corpus over TLS too: its `-raw` streams are forged records.
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bench/fuzz-corpus/live");
    let r = fuzz(
        port,
        &["--replay", corpus.to_str().unwrap()]
            .into_iter()
            .chain(tls.iter().map(String::as_str))
            .collect::<Vec<_>>(),
    );
    assert!(
        r["replayed"].as_u64().unwrap() >= 18,
        "the corpus is there: {r}"
    );
    assert_eq!(r["handshakes"], r["connections"], "{r}");
    assert_eq!(r["findings"], serde_json::json!([]), "{r}");
    assert!(
        pharos.child.try_wait().unwrap().is_none(),
        "the controller is still running"
    );
    let log = log_of(&mut pharos);
    assert!(!log.contains("panicked"), "no panic:\n{log}");
    // One connection in eight per round wrote forged records under its session: most
    // fail decryption at once (a few lie about their length past the stream's end).
    let forged = log.matches("tls_error").count();
    assert!(
        forged >= rounds as usize / 2,
        "forged records close sessions as tls_error ({forged} of {rounds}):\n{log}"
    );
}
