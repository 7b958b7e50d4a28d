//! The processes of a comparison: commands with the port filled in, behind `taskset`;
//! a controller stopped whatever happens; the generator run with a time budget; a free
//! port and whether something listens on it (read from `/proc/net/tcp`, so checking
//! makes no connection a controller would see as a switch).

use std::fs;
use std::io::{self, Read as _};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{CompareError, ControllerSpec, ADDR, PORT};

/// Whether `taskset -c core` can run a program here (the core exists and we may use it).
pub(super) fn taskset_works(core: usize) -> bool {
    Command::new("taskset")
        .args(["-c", &core.to_string(), "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The spec's command with the port filled in, behind `taskset -c core` when pinned.
pub(super) fn command_for(spec: &ControllerSpec, port: u16, core: Option<usize>) -> Command {
    let addr = format!("127.0.0.1:{port}");
    let argv: Vec<String> = spec
        .argv
        .iter()
        .map(|a| a.replace(ADDR, &addr).replace(PORT, &port.to_string()))
        .collect();
    let mut cmd = match core {
        Some(core) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(core.to_string()).args(&argv);
            c
        }
        None => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
    };
    cmd.envs(
        spec.env
            .iter()
            .map(|(k, v)| (k, v.replace(ADDR, &addr).replace(PORT, &port.to_string()))),
    );
    cmd
}

pub(super) fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Kills the controller when dropped, whatever happened to the run.
pub(super) struct Running(pub(super) Child);

impl Drop for Running {
    fn drop(&mut self) {
        stop(&mut self.0);
    }
}

/// SIGTERM, two seconds to leave, then SIGKILL.
pub(super) fn stop(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on our own child's pid, which we have not yet waited for, so
        // it cannot have been reused.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `cmd` to completion or until `budget`; returns (status if it finished, stdout,
/// stderr). Both pipes are drained on threads so a chatty child never blocks.
pub(super) fn run_with_timeout(
    cmd: &mut Command,
    budget: Duration,
) -> Result<(Option<std::process::ExitStatus>, String, String), CompareError> {
    let mut child = cmd.spawn().map_err(|source| CompareError::Spawn {
        command: describe(cmd),
        source,
    })?;
    let drain = |pipe: Option<Box<dyn io::Read + Send>>| {
        thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
    );
    let deadline = Instant::now() + budget;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok((status, stdout, stderr))
}

/// A loopback port nobody listens on right now (bound, then released).
pub(super) fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// Waits until something listens on `port`, or `child` exits, or `timeout`.
pub(super) fn wait_listening(
    child: &mut Child,
    port: u16,
    timeout: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Err(format!("exited with {status}")),
            Ok(None) => {}
            Err(e) => return Err(format!("cannot be waited for: {e}")),
        }
        // And the controller still running once it is seen: a port found listening
        // just as the controller exited is someone else's.
        if is_listening(port) && matches!(child.try_wait(), Ok(None)) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("not listening after {} s", timeout.as_secs()));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a socket listens on `port` (any IPv4 or IPv6 address). Reads
/// `/proc/net/tcp{,6}` so that checking makes no connection; where those do not exist,
/// falls back to connecting.
fn is_listening(port: u16) -> bool {
    let mut any_table = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = fs::read_to_string(table) {
            any_table = true;
            if listens_in_proc_table(&text, port) {
                return true;
            }
        }
    }
    if any_table {
        return false;
    }
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// Whether a `/proc/net/tcp` table has a LISTEN (state `0A`) socket on `port`.
fn listens_in_proc_table(text: &str, port: u16) -> bool {
    text.lines().skip(1).any(|line| {
        let mut f = line.split_whitespace();
        let (Some(_), Some(local), Some(_), Some(state)) = (f.next(), f.next(), f.next(), f.next())
        else {
            return false;
        };
        state == "0A"
            && local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                == Some(port)
    })
}

pub(super) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_listen_state_from_proc_tables() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue\n\
             0: 0100007F:19FD 00000000:0000 0A 00000000:00000000 00:00000000 00000000\n\
             1: 0100007F:1A0A 0100007F:D3C4 01 00000000:00000000 00:00000000 00000000\n";
        assert!(listens_in_proc_table(table, 0x19FD));
        assert!(
            !listens_in_proc_table(table, 0x1A0A),
            "established, not listening"
        );
        assert!(!listens_in_proc_table(table, 1));
    }
}
