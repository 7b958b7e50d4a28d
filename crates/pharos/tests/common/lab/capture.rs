//! dumpcap on loopback: a capture of the controller's port, whole sessions included.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use super::command::{drain, kill_group, which};
use testkit::wait_until;

/// dumpcap on loopback, filtered to one TCP port, writing a pcapng file.
pub struct Capture {
    child: Option<Child>,
    pub file: PathBuf,
    stderr: Option<thread::JoinHandle<String>>,
}

impl Capture {
    /// Starts capturing and waits until dumpcap has written the file header (it
    /// captures from then on; about 30 ms).
    pub fn start(port: u16, file: &Path) -> Capture {
        let filter = format!("tcp port {port}");
        let mut child = Command::new(which("dumpcap").expect("dumpcap"))
            .args(["-q", "-i", "lo", "-f", &filter, "-w"])
            .arg(file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start dumpcap");
        let stderr = drain(child.stderr.take());
        let mut cap = Capture {
            child: Some(child),
            file: file.to_path_buf(),
            stderr: Some(stderr),
        };
        let started = wait_until(Duration::from_secs(10), || {
            std::fs::metadata(file).is_ok_and(|m| m.len() > 0)
        });
        if !started {
            let why = cap.stop();
            panic!("dumpcap did not start writing {}: {why}", file.display());
        }
        cap
    }

    /// Stops dumpcap (SIGINT: it writes out what it holds and exits) and returns what it
    /// said on stderr. Harmless twice.
    pub fn stop(&mut self) -> String {
        let Some(mut child) = self.child.take() else {
            return String::new();
        };
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let exited = wait_until(Duration::from_secs(5), || {
            child.try_wait().ok().flatten().is_some()
        });
        if !exited {
            kill_group(&child, libc::SIGKILL);
        }
        let _ = child.wait();
        self.stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop();
    }
}
