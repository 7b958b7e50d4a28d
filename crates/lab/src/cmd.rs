//! Running the tools the lab shells out to: every command has a timeout, its standard
//! error goes into the error message, and nothing it starts can hold our own standard
//! output or error open (a detached daemon inherits pipes that we drain and drop).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::LabError;

/// What a finished command printed.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// A command to run.
#[derive(Debug, Clone)]
pub struct Cmd {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    /// How the command is named in errors, e.g. "ip link add lab-s1-eth1".
    label: Option<String>,
}

impl Cmd {
    pub fn new(program: impl AsRef<Path>) -> Cmd {
        Cmd {
            program: program.as_ref().to_path_buf(),
            args: vec![],
            env: vec![],
            stdin: None,
            timeout: Duration::from_secs(10),
            label: None,
        }
    }

    pub fn arg(mut self, a: impl Into<OsString>) -> Cmd {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: &str, v: impl Into<OsString>) -> Cmd {
        self.env.push((k.to_string(), v.into()));
        self
    }

    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Cmd {
        self.stdin = Some(input.into());
        self
    }

    pub fn timeout(mut self, t: Duration) -> Cmd {
        self.timeout = t;
        self
    }

    pub fn label(mut self, l: impl Into<String>) -> Cmd {
        self.label = Some(l.into());
        self
    }

    /// The program's file name and the arguments, for messages.
    pub fn display(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        let mut s = self
            .program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for a in &self.args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }

    /// Runs the command; a non-zero exit is an error carrying its standard error.
    pub fn run(&self, verbose: bool) -> Result<Output, LabError> {
        let out = self.output(verbose)?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(self.failed(&out))
        }
    }

    /// The error for a command that ran and failed.
    pub fn failed(&self, out: &Output) -> LabError {
        let mut detail = out.stderr.trim().replace('\n', "; ");
        if detail.is_empty() {
            detail = out.stdout.trim().replace('\n', "; ");
        }
        if detail.is_empty() {
            detail = describe_status(out.status);
        }
        LabError::Command {
            cmd: self.display(),
            detail,
        }
    }

    /// Runs the command and returns what it printed, whatever its exit status; an error
    /// only if it could not start or ran out of time (it is then killed, with its process
    /// group).
    pub fn output(&self, verbose: bool) -> Result<Output, LabError> {
        if verbose {
            let mut line = String::from("+ ");
            for (k, v) in &self.env {
                if k.starts_with("OVS_") && k != "OVS_RUNDIR" {
                    continue;
                }
                line.push_str(&format!("{k}={} ", v.to_string_lossy()));
            }
            line.push_str(&self.program.display().to_string());
            for a in &self.args {
                line.push(' ');
                line.push_str(&a.to_string_lossy());
            }
            eprintln!("{line}");
            if let Some(input) = &self.stdin {
                for l in String::from_utf8_lossy(input).lines() {
                    eprintln!("+   {l}");
                }
            }
        }
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a timeout kills what it started too, and a Ctrl-C
            // meant for us does not cut a half-made change short.
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| LabError::Command {
            cmd: self.display(),
            detail: format!("cannot run {}: {e}", self.program.display()),
        })?;
        let (tx, rx) = mpsc::channel::<(u8, Vec<u8>)>();
        for (tag, pipe) in [
            (
                1u8,
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
            (
                2u8,
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
        ] {
            if let Some(mut pipe) = pipe {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let _ = pipe.read_to_end(&mut buf);
                    let _ = tx.send((tag, buf));
                });
            }
        }
        drop(tx);
        if let (Some(input), Some(mut pipe)) = (self.stdin.clone(), child.stdin.take()) {
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let deadline = Instant::now() + self.timeout;
        let mut nap = Duration::from_micros(200);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => {
                    return Err(LabError::Command {
                        cmd: self.display(),
                        detail: format!("waiting for it: {e}"),
                    })
                }
            }
            if Instant::now() >= deadline {
                // The group is the child's own (process_group(0)): only what we started.
                unsafe {
                    libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
                }
                let _ = child.kill();
                let _ = child.wait();
                return Err(LabError::Command {
                    cmd: self.display(),
                    detail: format!("timed out after {} s", self.timeout.as_secs_f64()),
                });
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(10));
        };
        // A daemon that detached may still hold the pipes for a moment: wait briefly for
        // them, never for long.
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let drain_deadline = Instant::now() + Duration::from_millis(500);
        for _ in 0..2 {
            let left = drain_deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((1, b)) => stdout = b,
                Ok((_, b)) => stderr = b,
                Err(_) => break,
            }
        }
        Ok(Output {
            status,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        })
    }
}

/// "exit status 3" or "killed by signal 9".
pub fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_goes_into_the_error() {
        let e = Cmd::new("/bin/sh")
            .args(["-c", "echo 'RTNETLINK answers: File exists' >&2; exit 2"])
            .label("ip link add x")
            .run(false)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "ip link add x: RTNETLINK answers: File exists");
    }

    #[test]
    fn a_silent_failure_says_its_status() {
        let e = Cmd::new("/bin/sh")
            .args(["-c", "exit 3"])
            .run(false)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "sh -c exit 3: exit status 3");
    }

    #[test]
    fn stdin_and_stdout() {
        let out = Cmd::new("/bin/cat").stdin("a\nb\n").run(false).unwrap();
        assert_eq!(out.stdout, "a\nb\n");
    }

    #[test]
    fn timeouts_kill() {
        let t0 = Instant::now();
        let e = Cmd::new("/bin/sh")
            .args(["-c", "sleep 5 & sleep 5"])
            .timeout(Duration::from_millis(200))
            .run(false)
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("timed out after 0.2 s"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_missing_program_is_named() {
        let e = Cmd::new("/nonexistent/tool")
            .run(false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot run /nonexistent/tool"), "{e}");
    }
}
