//! `pharos bench flood`: a connection flood, bounded in rate, count and time.
//!
//! [`run_flood`] opens TCP connections to a controller at a steady rate (connections per
//! second) and then misbehaves on each of them in one [`FloodStyle`]:
//!
//! | style | what each connection does |
//! |---|---|
//! | `silent` | connects and says nothing |
//! | `garbage` | connects and sends 256 random bytes that are not OpenFlow, once |
//! | `half-handshake` | sends one valid HELLO, then nothing: the controller waits for a FEATURES_REPLY until its deadline |
//! | `handshake-silent` | completes the switch side of the handshake (HELLO, FEATURES_REPLY, PORT_DESC in 1.3, BARRIER_REPLY; SET_CONFIG taken in), then never answers anything again, ECHO_REQUEST included |
//! | `tls-hello` | sends a TLS ClientHello (TLS 1.3 and 1.2 offered), then nothing: against a TLS listener, the controller does the server's side of a handshake (its key share, its certificate signed) for each, then waits for its deadline |
//!
//! ## Bounds
//!
//! * **Rate**: connection attempts are paced against the clock: by time `t` after the
//!   start at most `floor(t * rate)` have been attempted. A generator that falls behind
//!   catches up in batches of at most [`MAX_BATCH`] and never runs ahead.
//! * **Count**: at most `max_connections` sockets are open at once (connecting or
//!   connected). When the cap is reached the **oldest** connection is closed before the
//!   next one is opened: a flood is a rate of *new* connections, so the rate is kept and
//!   the cap bounds what the flood holds, not how long it lasts. Connections the flood
//!   closes are reset (`SO_LINGER` 0), so that closing thousands of them a second leaves
//!   no `TIME_WAIT` behind to exhaust the ephemeral ports. The cap is also lowered to fit
//!   under the process's open-file limit, which is first raised to its hard limit; the
//!   report says when the limit, not the configuration, bounded the run.
//! * **Time**: the flood ends after `duration`, or as soon as the `stop` flag is set
//!   (checked at least every [`TICK`]), and then closes every connection it holds.
//! * **Target**: only loopback addresses, unless the configuration says
//!   `allow_non_loopback`, which the command line sets only when the user names the
//!   address explicitly (`--target`). The check comes before any socket is opened.
//!
//! ## Accounting
//!
//! Every attempt ends in exactly one of: `connected`, `failed` (refused, timed out after
//! [`CONNECT_TIMEOUT`], or no socket to be had), or `abandoned` (still connecting when
//! the flood closed it, for the cap or at the end), so `attempted == connected + failed
//! + abandoned`. Connected ones may later be `closed_by_peer` (the controller's defences
//! at work) or closed by the flood (`closed_for_cap`, `open_at_end`).
//!
//! One thread, non-blocking sockets and a `mio` poll: the pacing loop is the only loop.
//!
//! ## Layout
//!
//! ```text
//! mod.rs    run_flood, run_flood_in_background: the checks before any socket, the
//!           open-file limit, the bounds' constants
//! config    FloodStyle, FloodConfig (`RATE,STYLE`)
//! engine    the paced loop: connections opened, driven, closed, counted
//! messages  HELLO, a TLS ClientHello, garbage, the switch side of a handshake
//! report    FloodReport, FloodEnd
//! ```

mod config;
mod engine;
mod messages;
mod report;

use std::io::{self, ErrorKind};
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use config::{FloodConfig, FloodParseError, FloodStyle};
use engine::Flood;
pub use messages::{answer_handshake, hello, tls_client_hello};
pub use report::{FloodEnd, FloodReport};

/// A connect not completed after this long is given up and counted as failed ("timed
/// out"): a listener whose accept queue is full drops SYNs, and the kernel would retry
/// for minutes.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest the pacing loop sleeps: the bound on how late the stop flag is seen.
pub const TICK: Duration = Duration::from_millis(10);

/// The most connections opened in one turn of the loop, so that a generator that fell
/// behind still services its sockets between batches.
pub const MAX_BATCH: u64 = 1024;

/// File descriptors left to the rest of the process (a benchmark running beside the
/// flood, stdio, the poll itself) when the open-file limit bounds `max_connections`.
pub const FD_RESERVE: u64 = 256;

/// The number of random bytes a `garbage` connection sends.
pub const GARBAGE_LEN: usize = 256;

/// The high 16 bits of the datapath ids `handshake-silent` connections claim (the low
/// 48 bits count connections), far from the small dpids benchmark switches use, so the
/// flood never takes over a real switch's identity and no two flood connections share
/// one (a controller may drop the older of two connections with the same dpid).
pub const FLOOD_DPID_BASE: u64 = 0xf10d << 48;

/// Runs a flood to completion on this thread: until `cfg.duration` has passed or `stop`
/// is set. See the module doc for the bounds and the accounting.
///
/// Errors before anything is sent: a non-loopback target without
/// `allow_non_loopback` (`PermissionDenied`), a zero rate or cap (`InvalidInput`), or no
/// poll to be had. Failures of single connections are counted, never returned.
pub fn run_flood(cfg: &FloodConfig, stop: Arc<AtomicBool>) -> io::Result<FloodReport> {
    check_config(cfg)?;
    let fd_limit = raise_fd_limit();
    let budget = usize::try_from(fd_limit.saturating_sub(FD_RESERVE))
        .unwrap_or(usize::MAX)
        .max(1);
    let max_open = cfg.max_connections.min(budget);
    let mut flood = Flood::new(cfg, max_open)?;
    let (ended_by, elapsed) = flood.run(&stop)?;
    Ok(flood.report(ended_by, elapsed, fd_limit, max_open < cfg.max_connections))
}

/// Runs [`run_flood`] on a thread of its own (named `flood`), for a flood beside a
/// benchmark: set `stop` to end it, then join for the report.
pub fn run_flood_in_background(
    cfg: FloodConfig,
    stop: Arc<AtomicBool>,
) -> JoinHandle<io::Result<FloodReport>> {
    std::thread::Builder::new()
        .name("flood".into())
        .spawn(move || run_flood(&cfg, stop))
        .expect("spawning the flood thread")
}

/// Refuses what the flood must not do, before any socket exists.
fn check_config(cfg: &FloodConfig) -> io::Result<()> {
    if !cfg.allow_non_loopback && !is_loopback(cfg.addr.ip()) {
        return Err(io::Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "refusing to flood {}: not a loopback address (name it explicitly with --target to flood it)",
                cfg.addr
            ),
        ));
    }
    if cfg.rate == 0 {
        return Err(io::Error::new(
            ErrorKind::InvalidInput,
            "flood rate must be above 0",
        ));
    }
    if cfg.max_connections == 0 {
        return Err(io::Error::new(
            ErrorKind::InvalidInput,
            "flood max_connections must be above 0",
        ));
    }
    Ok(())
}

/// Loopback, including IPv4-mapped IPv6 loopback (`::ffff:127.0.0.1`).
fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Raises the soft limit on open files to the hard limit; returns the soft limit then in
/// force (`u64::MAX` if it cannot be read).
fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with a valid pointer to a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return u64::MAX;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    // rlim_t is u64 on 64-bit Linux, narrower elsewhere.
    #[allow(clippy::unnecessary_cast)]
    let soft = lim.rlim_cur as u64;
    soft
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_check() {
        assert!(is_loopback("127.0.0.1".parse().unwrap()));
        assert!(is_loopback("127.1.2.3".parse().unwrap()));
        assert!(is_loopback("::1".parse().unwrap()));
        assert!(is_loopback("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!is_loopback("192.0.2.1".parse().unwrap()));
        assert!(!is_loopback("0.0.0.0".parse().unwrap()));
        assert!(!is_loopback("2001:db8::1".parse().unwrap()));
    }
}
