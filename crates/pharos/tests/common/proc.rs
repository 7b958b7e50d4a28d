//! `pharos run` as a child process for a test: its standard error collected as it
//! comes, killed when dropped.

use std::io::Read as _;
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Whether a test that needs root and network namespaces is to be skipped: only when
/// `PHAROS_SKIP_LAB=1`, and then recorded (on stderr, and in the file `PHAROS_SKIP_LOG`
/// names, which scripts/test counts and CI refuses). Otherwise it must be root: the test
/// fails rather than passing unrun.
pub fn skipped(test: &str) -> bool {
    if testkit::skip_requested(test, "PHAROS_SKIP_LAB") {
        return true;
    }
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test needs root (network namespaces): run it as root, or set PHAROS_SKIP_LAB=1"
    );
    false
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The running binary.
pub struct Pharos {
    child: Child,
    stderr: Arc<Mutex<String>>,
    reader: Option<thread::JoinHandle<()>>,
}

impl Pharos {
    /// `pharos run ARGS` with `env` set (`PHAROS_API_TOKEN` and `RUST_LOG` unset unless
    /// `env` sets them).
    pub fn run(args: &[&str], env: &[(&str, &str)]) -> Pharos {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pharos"));
        command
            .env_remove("PHAROS_API_TOKEN")
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .arg("run")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("pharos starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        let reader = thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        Pharos {
            child,
            stderr,
            reader: Some(reader),
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until stderr holds `text`; false if it did not within `timeout` or the
    /// process exited.
    pub fn log_has(&mut self, text: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.stderr().contains(text) {
                return true;
            }
            if Instant::now() >= deadline || self.child.try_wait().ok().flatten().is_some() {
                thread::sleep(Duration::from_millis(50));
                return self.stderr().contains(text);
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit on its own.
    pub fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                if let Some(reader) = self.reader.take() {
                    reader.join().expect("the stderr reader");
                }
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Pharos {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
