//! What the tests of the `pharos` binary share (each test file declares `mod common;`
//! and uses what it needs; none uses all of it):
//!
//! ```text
//! mod.rs  the real `pharos` binary run on an input (Run, pharos), the capture
//!         fixtures and OpenFlow vectors, decode's output taken apart
//! proc    `pharos run` as a child process (Pharos), free_port, and the skip of a
//!         test that needs root (skipped)
//! lab     the harness of the end-to-end lab tests (see its doc), named `harness`
//! ```
//!
//! The emulated switch, the HTTP client, the skip rule and `wait_until` are the shared
//! test kit's (`testkit`).

#![allow(dead_code)]

pub mod lab;
pub mod proc;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Run {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Run {
    pub fn stdout_text(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("stdout is UTF-8")
    }

    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Checks the things every run must satisfy: it exited (no signal) with 0 or 1, and
    /// did not panic.
    pub fn assert_sane(&self) {
        assert!(
            matches!(self.code, Some(0 | 1)),
            "exit {:?}; stderr:\n{}",
            self.code,
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "panic:\n{}", self.stderr);
        assert!(
            !self.stderr.contains("RUST_BACKTRACE"),
            "backtrace hint:\n{}",
            self.stderr
        );
    }
}

/// Runs `pharos ARGS` with `stdin` as standard input.
pub fn pharos(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pharos");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    // Write from a thread: a large input must not deadlock against a full stdout pipe.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait for pharos");
    writer.join().expect("stdin writer");
    let run = Run {
        code: out.status.code(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    run.assert_sane();
    run
}

pub fn vectors_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/openflow-vectors");
    assert!(
        dir.join("MANIFEST.tsv").exists(),
        "the vectors are expected at {} (../shared beside the repository)",
        dir.display()
    );
    dir
}

/// Every `.packet` file of one version directory (`of13`), sorted.
pub fn vector_files(version_dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir().join(version_dir))
        .expect("vector directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "packet"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vectors in {version_dir}");
    files
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The JSON lines of a `decode --json` run.
pub fn json_lines(run: &Run) -> Vec<serde_json::Value> {
    run.stdout_text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A message header line of the text output, taken apart.
#[derive(Debug)]
pub struct Header {
    /// `offset 24` or `frame 7 1700000000.123456 1.2.3.4:5 -> 6.7.8.9:6653`
    pub source: String,
    pub version: String,
    pub type_name: String,
    pub xid: u64,
    pub len: usize,
}

/// The header lines of a text `decode` run: `#N SOURCE: OFv TYPE xid=0xX len=L`
/// (`N` counts every message, errors included).
pub fn headers(run: &Run) -> Vec<Header> {
    let text = run.stdout_text();
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('#')) {
        let (index, rest) = line.split_once(' ').expect("index");
        assert!(index[1..].parse::<usize>().is_ok(), "{line}");
        let (source, msg) = rest.rsplit_once(": ").expect("source");
        let parts: Vec<&str> = msg.split(' ').collect();
        assert_eq!(parts.len(), 4, "{line}");
        out.push(Header {
            source: source.to_string(),
            version: parts[0].strip_prefix("OF").expect("OF").to_string(),
            type_name: parts[1].to_string(),
            xid: u64::from_str_radix(parts[2].strip_prefix("xid=0x").expect("xid"), 16)
                .expect("xid"),
            len: parts[3]
                .strip_prefix("len=")
                .expect("len")
                .parse()
                .expect("len"),
        });
    }
    out
}
