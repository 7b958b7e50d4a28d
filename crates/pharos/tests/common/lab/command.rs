//! Running a command with a deadline, in its own process group, and killing only that
//! group on expiry: nothing here can reach a process it did not start.

use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The path of program `name` on PATH or in the sbin directories.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// What a finished command said.
#[derive(Debug)]
pub struct Out {
    /// The command line, for messages.
    pub what: String,
    /// Exit status; `None` when killed (by us at the deadline, or by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
    /// Killed at the deadline.
    pub timed_out: bool,
}

impl Out {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Panics, with everything the command said, unless it exited 0.
    #[track_caller]
    pub fn expect_ok(&self) -> &Out {
        assert!(self.ok(), "{} failed:\n{self}", self.what);
        self
    }
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "$ {}\n  exit {:?}{} after {:.1?}\n--- stdout\n{}--- stderr\n{}---",
            self.what,
            self.code,
            if self.timed_out {
                " (killed at the deadline)"
            } else {
                ""
            },
            self.took,
            self.stdout,
            self.stderr
        )
    }
}

/// Reads a pipe to the end on a thread.
pub(super) fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Kills the process group of a child started with `process_group(0)`: the child and
/// whatever it started (`ip netns exec` → the command), nothing else.
pub(super) fn kill_group(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on the process group our own child leads.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), sig);
    }
}

/// Runs `cmd` to completion, or kills its process group at `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> Out {
    let what = describe(cmd);
    let start = Instant::now();
    let mut child = match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!("cannot start {what}: {e}"),
    };
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for a child") {
            break s;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            kill_group(&child, libc::SIGKILL);
            break child.wait().expect("wait for a killed child");
        }
        thread::sleep(Duration::from_millis(5));
    };
    // A grandchild still holding the pipes must not hang us: the group is ours, end it.
    kill_group(&child, libc::SIGKILL);
    Out {
        what,
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        took: start.elapsed(),
        timed_out,
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}
