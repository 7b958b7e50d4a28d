//! Named network namespaces for the data path's tests and benchmarks: created with
//! `ip netns add`, configured with `ip -n NAME -batch -`, deleted on drop (with every
//! interface in them), and entered by one thread at a time to open ports there.
//! Needs root and iproute2.

use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A network namespace this process created; deleted on drop.
#[derive(Debug)]
pub struct Netns {
    /// Its name (`ip netns` lists it so), unique in this process: a prefix and a counter.
    name: String,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Netns {
    /// Creates a namespace named `<prefix>-<pid>-<n>` (unique per process and call),
    /// with its loopback up and IPv6 off, so its stack sends nothing on its own (router
    /// solicitations, MLD reports) on the interfaces made in it.
    pub fn new(prefix: &str) -> io::Result<Netns> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("{prefix}-{}-{n}", std::process::id());
        run(Command::new("ip").args(["netns", "add", &name]), None)?;
        let ns = Netns { name };
        ns.exec(
            "sysctl",
            &[
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ],
        )?;
        ns.ip("link set lo up\n")?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip` commands (one per line, `ip -batch` syntax) inside the namespace.
    pub fn ip(&self, batch: &str) -> io::Result<()> {
        run(
            Command::new("ip").args(["-n", &self.name, "-batch", "-"]),
            Some(batch),
        )
    }

    /// Runs a command inside the namespace (`ip netns exec`), e.g. `sysctl` or `ethtool`.
    pub fn exec(&self, program: &str, args: &[&str]) -> io::Result<()> {
        run(
            Command::new("ip")
                .args(["netns", "exec", &self.name, program])
                .args(args),
            None,
        )
    }

    /// Calls `f` on a thread inside the namespace (sockets it opens stay bound there)
    /// and returns its result.
    pub fn enter<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        let file = std::fs::File::open(format!("/run/netns/{}", self.name))?;
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    // SAFETY: setns on this thread only (a fresh thread that ends after f).
                    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
                    if rc < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(f())
                })
                .join()
                .map_err(|_| io::Error::other("the thread in the namespace panicked"))?
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = run(Command::new("ip").args(["netns", "del", &self.name]), None);
    }
}

fn run(cmd: &mut Command, stdin: Option<&str>) -> io::Result<()> {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin piped")
            .write_all(text.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{cmd:?}{}: {}",
            stdin.map(|s| format!(" <<< {s:?}")).unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}
