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

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use openflow::common::Hello;
use openflow::of13::multipart::{MultipartReply, MultipartReplyBody, MultipartRequestBody};
use openflow::{frame_len, of10, of13, Message};
use serde::Serialize;

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

/// How each flood connection misbehaves once connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloodStyle {
    /// Connect and say nothing (`silent`).
    Silent,
    /// Send [`GARBAGE_LEN`] random bytes whose first byte is no OpenFlow version, once
    /// (`garbage`).
    Garbage,
    /// Send one valid HELLO, then nothing (`half-handshake`).
    HalfHandshake,
    /// Complete the switch side of the handshake, then answer nothing, not even ECHO
    /// (`handshake-silent`, also spelt `handshake-then-silent`).
    #[serde(rename = "handshake-silent")]
    HandshakeThenSilent,
    /// Send a TLS ClientHello, then nothing (`tls-hello`): a TLS handshake flood.
    TlsHello,
}

impl FloodStyle {
    /// Every style, in the order of the table in the module doc.
    pub const ALL: [FloodStyle; 5] = [
        FloodStyle::Silent,
        FloodStyle::Garbage,
        FloodStyle::HalfHandshake,
        FloodStyle::HandshakeThenSilent,
        FloodStyle::TlsHello,
    ];

    /// The name `--flood RATE,STYLE` takes.
    pub fn name(self) -> &'static str {
        match self {
            FloodStyle::Silent => "silent",
            FloodStyle::Garbage => "garbage",
            FloodStyle::HalfHandshake => "half-handshake",
            FloodStyle::HandshakeThenSilent => "handshake-silent",
            FloodStyle::TlsHello => "tls-hello",
        }
    }
}

impl fmt::Display for FloodStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a `--flood` argument did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FloodParseError {
    /// The style is none of the known names.
    #[error(
        "unknown flood style {0:?}: expected silent, garbage, half-handshake or handshake-silent"
    )]
    UnknownStyle(String),
    /// Not of the form `RATE,STYLE`.
    #[error("expected RATE,STYLE (e.g. 10000,silent), got {0:?}")]
    Shape(String),
    /// The rate is not a whole number of connections per second above zero.
    #[error("flood rate must be a whole number of connections per second above 0, got {0:?}")]
    Rate(String),
}

impl FromStr for FloodStyle {
    type Err = FloodParseError;

    fn from_str(s: &str) -> Result<FloodStyle, FloodParseError> {
        match s.trim() {
            "silent" => Ok(FloodStyle::Silent),
            "garbage" => Ok(FloodStyle::Garbage),
            "half-handshake" => Ok(FloodStyle::HalfHandshake),
            "handshake-silent" | "handshake-then-silent" => Ok(FloodStyle::HandshakeThenSilent),
            "tls-hello" | "tls" => Ok(FloodStyle::TlsHello),
            other => Err(FloodParseError::UnknownStyle(other.to_string())),
        }
    }
}

/// What to flood, how fast, and within which bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloodConfig {
    /// The controller to flood. Loopback only unless `allow_non_loopback`.
    pub addr: SocketAddr,
    /// New connections per second (above 0).
    pub rate: u32,
    /// What each connection does once connected.
    pub style: FloodStyle,
    /// The most sockets open at once; at the cap the oldest is closed for each new one.
    pub max_connections: usize,
    /// How long the flood lasts (the stop flag may end it earlier).
    pub duration: Duration,
    /// Let `addr` be something other than loopback: set only when the user named the
    /// address explicitly (`--target`), never by default.
    pub allow_non_loopback: bool,
}

impl FloodConfig {
    /// The address `RATE,STYLE` floods until told otherwise: the controller's default
    /// listener on loopback.
    pub const DEFAULT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 6653);
    /// Default cap on open sockets: 10,000, one second of the benchmark's 10,000/s flood,
    /// and under the usual 20,000 hard limit on open files with room to spare.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
    /// Default length of a flood: 10 s. A flood run beside a benchmark is ended by its
    /// stop flag instead; set `duration` to cover the benchmark.
    pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

    /// A flood of `addr` at `rate` connections per second in `style`, with the default
    /// cap and duration, loopback only.
    pub fn new(addr: SocketAddr, rate: u32, style: FloodStyle) -> FloodConfig {
        FloodConfig {
            addr,
            rate,
            style,
            max_connections: FloodConfig::DEFAULT_MAX_CONNECTIONS,
            duration: FloodConfig::DEFAULT_DURATION,
            allow_non_loopback: false,
        }
    }
}

/// Parses `RATE,STYLE` (`10000,silent`, `500,garbage`, `100,half-handshake`,
/// `100,handshake-silent`) into a flood of [`FloodConfig::DEFAULT_ADDR`] with the
/// default cap and duration; the caller sets `addr` (and `allow_non_loopback` if the
/// user named the target) afterwards.
impl FromStr for FloodConfig {
    type Err = FloodParseError;

    fn from_str(s: &str) -> Result<FloodConfig, FloodParseError> {
        let (rate, style) = s
            .split_once(',')
            .ok_or_else(|| FloodParseError::Shape(s.to_string()))?;
        let rate = rate.trim().replace('_', "");
        let rate: u32 = match rate.parse() {
            Ok(r) if r > 0 => r,
            _ => return Err(FloodParseError::Rate(rate)),
        };
        let style: FloodStyle = style.parse()?;
        Ok(FloodConfig::new(FloodConfig::DEFAULT_ADDR, rate, style))
    }
}

/// Why the flood ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloodEnd {
    /// `duration` elapsed.
    Duration,
    /// The stop flag was set.
    Stopped,
}

/// What a flood did. All counts are connections unless named otherwise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FloodReport {
    /// The address flooded.
    pub addr: SocketAddr,
    /// The style flooded with.
    pub style: FloodStyle,
    /// The rate asked for, connections per second.
    pub rate_requested: u32,
    /// `attempted / elapsed_s`.
    #[serde(serialize_with = "crate::stats::rounded::three")]
    pub rate_achieved: f64,
    /// How long the flood ran, in seconds.
    #[serde(serialize_with = "crate::stats::rounded::three")]
    pub elapsed_s: f64,
    /// What ended it.
    pub ended_by: FloodEnd,
    /// Connections attempted (sockets asked for).
    pub attempted: u64,
    /// Attempts that connected.
    pub connected: u64,
    /// Attempts that failed: refused, timed out, or no socket to be had.
    pub failed: u64,
    /// Failures by reason (the error's text), so a full accept queue (timed out) tells
    /// itself apart from a closed port (refused) or an exhausted limit.
    pub failed_by_reason: BTreeMap<String, u64>,
    /// Attempts still connecting when the flood closed them (for the cap, or at the end).
    pub abandoned: u64,
    /// Connected ones the peer closed or reset.
    pub closed_by_peer: u64,
    /// Connections the flood closed to stay under the cap.
    pub closed_for_cap: u64,
    /// Sockets open when the flood ended (closed then by the flood).
    pub open_at_end: usize,
    /// The most sockets open at once.
    pub peak_open: usize,
    /// `handshake-silent`: handshakes completed (the controller's BARRIER answered).
    pub handshakes_completed: u64,
    /// Bytes written to the controller.
    pub bytes_sent: u64,
    /// Bytes read from the controller (and, once silent, ignored).
    pub bytes_received: u64,
    /// The cap in force: `max_connections`, lowered if the open-file limit required.
    pub max_connections: usize,
    /// The soft open-file limit after raising it to the hard limit.
    pub fd_limit: u64,
    /// True if the open-file limit, not `max_connections`, set the cap.
    pub fd_limited: bool,
}

impl FloodReport {
    /// Adds `other`, a later run of the same flood, to this one: counts summed, the
    /// rate achieved over both runs' time, the peak the higher, the end the later's.
    pub fn add(&mut self, other: &FloodReport) {
        self.elapsed_s += other.elapsed_s;
        self.ended_by = other.ended_by;
        self.attempted += other.attempted;
        self.connected += other.connected;
        self.failed += other.failed;
        for (why, n) in &other.failed_by_reason {
            *self.failed_by_reason.entry(why.clone()).or_default() += n;
        }
        self.abandoned += other.abandoned;
        self.closed_by_peer += other.closed_by_peer;
        self.closed_for_cap += other.closed_for_cap;
        self.open_at_end += other.open_at_end;
        self.peak_open = self.peak_open.max(other.peak_open);
        self.handshakes_completed += other.handshakes_completed;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.max_connections = self.max_connections.min(other.max_connections);
        self.fd_limited |= other.fd_limited;
        self.rate_achieved = if self.elapsed_s > 0.0 {
            self.attempted as f64 / self.elapsed_s
        } else {
            0.0
        };
    }
}

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

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The non-blocking connect has not completed.
    Connecting,
    /// `handshake-silent`: answering the controller until its BARRIER is answered.
    Handshaking,
    /// Done talking: reads are counted and ignored (only to notice a close).
    Silent,
}

/// One flood connection.
struct Conn {
    /// The non-blocking socket, registered with the poll under its slot.
    stream: TcpStream,
    /// Tells a live slot from an old entry of the same slot in `Flood::order`.
    serial: u64,
    /// When the connect began, for [`CONNECT_TIMEOUT`].
    opened: Instant,
    /// What the connection does with the next readiness event.
    phase: Phase,
    /// Bytes to write (a HELLO, garbage, handshake replies) not yet taken by the kernel.
    out: Vec<u8>,
    /// `handshake-silent` while handshaking: bytes read not yet framed.
    inbuf: Vec<u8>,
}

/// The counters of [`FloodReport`] (each field means what the report's field of the same
/// name says), as the loop updates them.
#[derive(Default)]
struct Counts {
    attempted: u64,
    connected: u64,
    failed: u64,
    failed_by_reason: BTreeMap<String, u64>,
    abandoned: u64,
    closed_by_peer: u64,
    closed_for_cap: u64,
    peak_open: usize,
    handshakes_completed: u64,
    bytes_sent: u64,
    bytes_received: u64,
}

/// The flood's state: the poll, the connections by slot, their age order.
struct Flood {
    /// From the configuration: whom to flood, how fast, how, for how long.
    addr: SocketAddr,
    rate: u32,
    style: FloodStyle,
    duration: Duration,
    /// The cap in force (`max_connections`, lowered to fit the open-file limit).
    max_open: usize,
    /// Readiness of every socket: connect completion, data, closes.
    poll: Poll,
    /// Connections by slot; the slot is the poll token.
    conns: Vec<Option<Conn>>,
    /// Free slots, reused before `conns` grows.
    free: Vec<usize>,
    /// (slot, serial), oldest first, for closing the oldest at the cap; entries whose
    /// slot has moved on are skipped.
    order: VecDeque<(usize, u64)>,
    /// The same for connects not yet completed, for [`CONNECT_TIMEOUT`].
    connecting: VecDeque<(usize, u64)>,
    /// Sockets open now (live slots): what the cap bounds.
    open: usize,
    /// The serial of the next connection; also the low bits of its dpid.
    next_serial: u64,
    /// xorshift64 state for garbage.
    rng: u64,
    /// `tls-hello`: the ClientHello every connection sends.
    client_hello: Vec<u8>,
    /// What the report will say.
    counts: Counts,
}

impl Flood {
    fn new(cfg: &FloodConfig, max_open: usize) -> io::Result<Flood> {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64);
        Ok(Flood {
            addr: cfg.addr,
            rate: cfg.rate,
            style: cfg.style,
            duration: cfg.duration,
            max_open,
            poll: Poll::new()?,
            conns: Vec::new(),
            free: Vec::new(),
            order: VecDeque::new(),
            connecting: VecDeque::new(),
            open: 0,
            next_serial: 0,
            rng: seed | 1,
            client_hello: match cfg.style {
                FloodStyle::TlsHello => tls_client_hello()?,
                _ => Vec::new(),
            },
            counts: Counts::default(),
        })
    }

    /// The pacing loop. Returns why it ended and how long it ran.
    fn run(&mut self, stop: &AtomicBool) -> io::Result<(FloodEnd, Duration)> {
        let mut events = Events::with_capacity(1024);
        let mut scratch = vec![0u8; 16 * 1024];
        let start = Instant::now();
        let end = start + self.duration;
        let rate = f64::from(self.rate);
        let ended_by = loop {
            if stop.load(Ordering::Relaxed) {
                break FloodEnd::Stopped;
            }
            let now = Instant::now();
            if now >= end {
                break FloodEnd::Duration;
            }
            // Attempts due by now: one every 1/rate s, the first at 1/rate.
            let due = ((now - start).as_secs_f64() * rate) as u64;
            let mut batch = 0;
            while self.counts.attempted < due && batch < MAX_BATCH {
                self.open_one(now);
                batch += 1;
            }
            self.expire_connects(now);
            let timeout = if self.counts.attempted < due {
                Duration::ZERO
            } else {
                let next =
                    start + Duration::from_secs_f64((self.counts.attempted + 1) as f64 / rate);
                next.min(end)
                    .saturating_duration_since(Instant::now())
                    .min(TICK)
            };
            match self.poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in events.iter() {
                self.on_event(event.token().0, event, &mut scratch);
            }
        };
        let elapsed = start.elapsed();
        Ok((ended_by, elapsed))
    }

    /// Opens one connection, closing the oldest first if at the cap.
    fn open_one(&mut self, now: Instant) {
        if self.open >= self.max_open {
            self.close_oldest();
        }
        self.counts.attempted += 1;
        let mut stream = match TcpStream::connect(self.addr) {
            Ok(s) => s,
            Err(e) => return self.fail(&e.to_string()),
        };
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            Token(slot),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            self.free.push(slot);
            return self.fail(&e.to_string());
        }
        let serial = self.next_serial;
        self.next_serial += 1;
        self.conns[slot] = Some(Conn {
            stream,
            serial,
            opened: now,
            phase: Phase::Connecting,
            out: Vec::new(),
            inbuf: Vec::new(),
        });
        self.order.push_back((slot, serial));
        self.connecting.push_back((slot, serial));
        // Connections the peer closes leave their entries behind; at 10,000 closes a
        // second for an hour that would be gigabytes. Compacting when at most half the
        // entries are live keeps `order` within twice the open count, in amortised O(1).
        if self.order.len() > 2 * self.open + 64 {
            let conns = &self.conns;
            self.order
                .retain(|&(slot, serial)| conns[slot].as_ref().is_some_and(|c| c.serial == serial));
        }
        self.open += 1;
        self.counts.peak_open = self.counts.peak_open.max(self.open);
    }

    /// Counts one failed attempt.
    fn fail(&mut self, reason: &str) {
        self.counts.failed += 1;
        *self
            .counts
            .failed_by_reason
            .entry(reason.to_string())
            .or_default() += 1;
    }

    /// Closes the oldest open connection (for the cap).
    fn close_oldest(&mut self) {
        while let Some((slot, serial)) = self.order.pop_front() {
            if self.conns[slot]
                .as_ref()
                .is_some_and(|c| c.serial == serial)
            {
                let conn = self.take(slot);
                if conn.phase == Phase::Connecting {
                    self.counts.abandoned += 1;
                } else {
                    self.counts.closed_for_cap += 1;
                }
                self.reset(conn);
                return;
            }
        }
    }

    /// Gives up connects older than [`CONNECT_TIMEOUT`]. Connects are started in age
    /// order, so only the front of `connecting` need be looked at; entries that have
    /// connected, failed or been closed since are dropped on the way.
    fn expire_connects(&mut self, now: Instant) {
        while let Some(&(slot, serial)) = self.connecting.front() {
            let Some(conn) = self.conns[slot]
                .as_ref()
                .filter(|c| c.serial == serial && c.phase == Phase::Connecting)
            else {
                self.connecting.pop_front();
                continue;
            };
            if now.duration_since(conn.opened) < CONNECT_TIMEOUT {
                return;
            }
            self.connecting.pop_front();
            let conn = self.take(slot);
            self.fail(&format!("connect timed out after {CONNECT_TIMEOUT:?}"));
            self.reset(conn);
        }
    }

    /// Removes the connection in `slot` from the table (the caller closes it).
    fn take(&mut self, slot: usize) -> Conn {
        let mut conn = self.conns[slot].take().expect("a live slot");
        self.free.push(slot);
        self.open -= 1;
        let _ = self.poll.registry().deregister(&mut conn.stream);
        conn
    }

    /// Closes a connection with a reset (`SO_LINGER` 0): no FIN handshake, no
    /// `TIME_WAIT` left holding an ephemeral port.
    fn reset(&mut self, conn: Conn) {
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: setsockopt on a socket we own, with a pointer to a local struct and
        // its size.
        unsafe {
            libc::setsockopt(
                conn.stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            );
        }
        drop(conn);
    }

    /// One readiness event on `slot`.
    fn on_event(&mut self, slot: usize, event: &mio::event::Event, scratch: &mut [u8]) {
        // Out of the table while it is driven, so that `drive` may borrow `self`.
        let Some(mut conn) = self.conns.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let alive = self.drive(&mut conn, event, scratch);
        self.conns[slot] = Some(conn);
        if !alive {
            // Failed or closed by the peer: no reset needed, just let it go.
            drop(self.take(slot));
        }
    }

    /// Advances one connection on a readiness event; false if it is over (failed, or
    /// closed by the peer).
    fn drive(&mut self, conn: &mut Conn, event: &mio::event::Event, scratch: &mut [u8]) -> bool {
        if conn.phase == Phase::Connecting {
            if !(event.is_writable() || event.is_error() || event.is_write_closed()) {
                return true;
            }
            match conn.stream.take_error() {
                Ok(None) => {}
                Ok(Some(e)) | Err(e) => {
                    self.fail(&e.to_string());
                    return false;
                }
            }
            match conn.stream.peer_addr() {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::NotConnected => return true,
                Err(e) => {
                    self.fail(&e.to_string());
                    return false;
                }
            }
            self.counts.connected += 1;
            let _ = conn.stream.set_nodelay(true);
            conn.phase = match self.style {
                FloodStyle::Silent => Phase::Silent,
                FloodStyle::Garbage => {
                    conn.out = garbage(&mut self.rng);
                    Phase::Silent
                }
                FloodStyle::HalfHandshake => {
                    conn.out = hello();
                    Phase::Silent
                }
                FloodStyle::HandshakeThenSilent => {
                    conn.out = hello();
                    Phase::Handshaking
                }
                FloodStyle::TlsHello => {
                    conn.out = self.client_hello.clone();
                    Phase::Silent
                }
            };
        }
        if !self.read(conn, scratch) {
            self.counts.closed_by_peer += 1;
            return false;
        }
        if conn.phase == Phase::Handshaking {
            let dpid = FLOOD_DPID_BASE | (conn.serial & 0xffff_ffff_ffff);
            if answer_handshake(&mut conn.inbuf, dpid, &mut conn.out) {
                self.counts.handshakes_completed += 1;
                conn.phase = Phase::Silent;
                conn.inbuf = Vec::new();
            }
        }
        if !self.flush(conn) {
            self.counts.closed_by_peer += 1;
            return false;
        }
        true
    }

    /// Reads all there is; false if the peer closed or reset.
    fn read(&mut self, conn: &mut Conn, scratch: &mut [u8]) -> bool {
        loop {
            match conn.stream.read(scratch) {
                Ok(0) => return false,
                Ok(n) => {
                    self.counts.bytes_received += n as u64;
                    if conn.phase == Phase::Handshaking {
                        conn.inbuf.extend_from_slice(&scratch[..n]);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// Writes what is pending; false if the peer closed or reset.
    fn flush(&mut self, conn: &mut Conn) -> bool {
        while !conn.out.is_empty() {
            match conn.stream.write(&conn.out) {
                Ok(0) => return false,
                Ok(n) => {
                    self.counts.bytes_sent += n as u64;
                    conn.out.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// Closes everything and sums up.
    fn report(
        mut self,
        ended_by: FloodEnd,
        elapsed: Duration,
        fd_limit: u64,
        fd_limited: bool,
    ) -> FloodReport {
        let open_at_end = self.open;
        for slot in 0..self.conns.len() {
            if self.conns[slot].is_some() {
                let conn = self.take(slot);
                if conn.phase == Phase::Connecting {
                    self.counts.abandoned += 1;
                }
                self.reset(conn);
            }
        }
        let c = self.counts;
        let secs = elapsed.as_secs_f64();
        FloodReport {
            addr: self.addr,
            style: self.style,
            rate_requested: self.rate,
            rate_achieved: if secs > 0.0 {
                c.attempted as f64 / secs
            } else {
                0.0
            },
            elapsed_s: secs,
            ended_by,
            attempted: c.attempted,
            connected: c.connected,
            failed: c.failed,
            failed_by_reason: c.failed_by_reason,
            abandoned: c.abandoned,
            closed_by_peer: c.closed_by_peer,
            closed_for_cap: c.closed_for_cap,
            open_at_end,
            peak_open: c.peak_open,
            handshakes_completed: c.handshakes_completed,
            bytes_sent: c.bytes_sent,
            bytes_received: c.bytes_received,
            max_connections: self.max_open,
            fd_limit,
            fd_limited,
        }
    }
}

/// The HELLO every handshaking style sends: version 1.3 in the header, a bitmap of
/// {1.0, 1.3}, as a switch speaking both would.
pub fn hello() -> Vec<u8> {
    Message::V13(of13::Message::Hello(Hello::with_versions(&[0x01, 0x04])))
        .to_bytes(1)
        .expect("a HELLO encodes")
}

/// A TLS ClientHello as a client of the bench's kind sends it (rustls, ring: TLS 1.3
/// and 1.2, an x25519 key share), made once: the server's work per handshake (its own
/// key share, the signature over the transcript) is the same for every copy.
pub fn tls_client_hello() -> io::Result<Vec<u8>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        // Never verified: the connection goes no further than its first flight.
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("pharos").map_err(io::Error::other)?;
    let mut client =
        rustls::ClientConnection::new(Arc::new(config), name).map_err(io::Error::other)?;
    let mut out = Vec::new();
    while client.wants_write() {
        client.write_tls(&mut out)?;
    }
    Ok(out)
}

/// [`GARBAGE_LEN`] random bytes whose first byte is no OpenFlow version (0x01 to 0x06),
/// so the controller cannot mistake them for a message of any version.
fn garbage(rng: &mut u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(GARBAGE_LEN);
    while out.len() < GARBAGE_LEN {
        // xorshift64: random enough for garbage, and no dependency.
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        out.extend_from_slice(&rng.to_le_bytes());
    }
    out.truncate(GARBAGE_LEN);
    if (0x01..=0x06).contains(&out[0]) {
        out[0] |= 0x80;
    }
    out
}

/// The switch side of the handshake, with no I/O: frames what is in `inbuf` (consuming
/// whole messages), appends a switch's answers to `out` (FEATURES_REPLY with `dpid` and
/// no ports, an empty PORT_DESC in 1.3, BARRIER_REPLY, ECHO_REPLY while handshaking;
/// HELLO and SET_CONFIG need none), each in the version of the request. Returns true once
/// a BARRIER_REQUEST has been answered: the controller's last step. Messages after it in
/// `inbuf` are left unanswered. A stream that cannot be framed is dropped (the
/// connection stays open, silent).
pub fn answer_handshake(inbuf: &mut Vec<u8>, dpid: u64, out: &mut Vec<u8>) -> bool {
    let mut used = 0;
    let mut done = false;
    while !done {
        let len = match frame_len(&inbuf[used..]) {
            Ok(Some(len)) => len,
            Ok(None) => break,
            Err(_) => {
                used = inbuf.len();
                break;
            }
        };
        let frame = &inbuf[used..used + len];
        used += len;
        let Ok((xid, msg)) = Message::decode(frame) else {
            continue;
        };
        let reply = match msg {
            Message::V10(of10::Message::FeaturesRequest) => {
                Message::V10(of10::Message::FeaturesReply(of10::SwitchFeatures {
                    datapath_id: dpid,
                    n_buffers: 0,
                    n_tables: 1,
                    capabilities: 0,
                    actions: 0,
                    ports: Vec::new(),
                }))
            }
            Message::V13(of13::Message::FeaturesRequest) => {
                Message::V13(of13::Message::FeaturesReply(of13::FeaturesReply {
                    datapath_id: dpid,
                    n_buffers: 0,
                    n_tables: 1,
                    auxiliary_id: 0,
                    capabilities: 0,
                    reserved: 0,
                }))
            }
            Message::V13(of13::Message::MultipartRequest(req))
                if matches!(req.body, MultipartRequestBody::PortDesc) =>
            {
                Message::V13(of13::Message::MultipartReply(MultipartReply {
                    flags: 0,
                    body: MultipartReplyBody::PortDesc { ports: Vec::new() },
                }))
            }
            Message::V10(of10::Message::EchoRequest { data }) => {
                Message::V10(of10::Message::EchoReply { data })
            }
            Message::V13(of13::Message::EchoRequest { data }) => {
                Message::V13(of13::Message::EchoReply { data })
            }
            Message::V10(of10::Message::BarrierRequest) => {
                done = true;
                Message::V10(of10::Message::BarrierReply)
            }
            Message::V13(of13::Message::BarrierRequest) => {
                done = true;
                Message::V13(of13::Message::BarrierReply)
            }
            _ => continue,
        };
        // Our own replies always encode; one that did not would only be left unsent.
        let _ = reply.encode(xid, out);
    }
    inbuf.drain(..used);
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rate_and_style() {
        let c: FloodConfig = "10000,silent".parse().unwrap();
        assert_eq!((c.rate, c.style), (10_000, FloodStyle::Silent));
        assert_eq!(c.addr, FloodConfig::DEFAULT_ADDR);
        assert!(!c.allow_non_loopback);
        for (s, style) in [
            ("500,garbage", FloodStyle::Garbage),
            ("100,half-handshake", FloodStyle::HalfHandshake),
            ("100,handshake-silent", FloodStyle::HandshakeThenSilent),
            (
                "100, handshake-then-silent",
                FloodStyle::HandshakeThenSilent,
            ),
            ("10_000,silent", FloodStyle::Silent),
        ] {
            assert_eq!(s.parse::<FloodConfig>().unwrap().style, style, "{s}");
        }
        for style in FloodStyle::ALL {
            assert_eq!(style.name().parse::<FloodStyle>().unwrap(), style);
            assert_eq!(
                serde_json::to_string(&style).unwrap(),
                format!("\"{}\"", style.name())
            );
        }
        assert!(matches!(
            "0,silent".parse::<FloodConfig>(),
            Err(FloodParseError::Rate(_))
        ));
        assert!(matches!(
            "x,silent".parse::<FloodConfig>(),
            Err(FloodParseError::Rate(_))
        ));
        assert!(matches!(
            "10".parse::<FloodConfig>(),
            Err(FloodParseError::Shape(_))
        ));
        assert!(matches!(
            "10,loud".parse::<FloodConfig>(),
            Err(FloodParseError::UnknownStyle(_))
        ));
    }

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

    #[test]
    fn connections_closed_by_the_peer_leave_nothing_behind() {
        // A listener that accepts and closes at once.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                drop(s);
            }
        });
        let cfg = FloodConfig {
            duration: Duration::from_millis(400),
            ..FloodConfig::new(addr, 1000, FloodStyle::Silent)
        };
        let mut flood = Flood::new(&cfg, 10_000).unwrap();
        flood.run(&AtomicBool::new(false)).unwrap();
        assert!(
            flood.counts.closed_by_peer > 200,
            "{}",
            flood.counts.closed_by_peer
        );
        assert!(
            flood.order.len() <= 2 * flood.open + 65,
            "{} entries",
            flood.order.len()
        );
        assert!(flood.connecting.len() < 100, "{}", flood.connecting.len());
        assert!(flood.conns.len() <= flood.counts.peak_open);
    }

    #[test]
    fn a_tls_hello_is_a_client_hello_record() {
        let h = tls_client_hello().unwrap();
        // A handshake record (22), TLS 1.0/1.2 record version, then a ClientHello (1).
        assert_eq!(h[0], 22);
        assert_eq!(h[1], 3);
        assert_eq!(usize::from(u16::from_be_bytes([h[3], h[4]])) + 5, h.len());
        assert_eq!(h[5], 1);
        assert_eq!(
            "200,tls-hello".parse::<FloodConfig>().unwrap().style,
            FloodStyle::TlsHello
        );
    }

    #[test]
    fn garbage_is_not_openflow() {
        let mut rng = 0x1234_5678;
        for _ in 0..1000 {
            let g = garbage(&mut rng);
            assert_eq!(g.len(), GARBAGE_LEN);
            assert!(!(0x01..=0x06).contains(&g[0]));
        }
    }

    #[test]
    fn hello_is_a_valid_13_hello_with_both_versions() {
        let h = hello();
        match Message::decode(&h).unwrap().1 {
            Message::V13(of13::Message::Hello(h)) => {
                assert_eq!(h.versions(), Some(vec![0x01, 0x04]))
            }
            other => panic!("{other:?}"),
        }
    }

    /// Encodes `msgs` as the controller would send them, in one buffer.
    fn stream(msgs: &[Message]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            m.encode(i as u32 + 10, &mut out).unwrap();
        }
        out
    }

    fn decode_all(mut buf: &[u8]) -> Vec<(u32, Message)> {
        let mut out = Vec::new();
        while let Some(len) = frame_len(buf).unwrap() {
            out.push(Message::decode(&buf[..len]).unwrap());
            buf = &buf[len..];
        }
        assert!(buf.is_empty());
        out
    }

    #[test]
    fn answers_a_13_handshake_then_stops_at_the_barrier() {
        let mut inbuf = stream(&[
            Message::V13(of13::Message::Hello(Hello::with_versions(&[1, 4]))),
            Message::V13(of13::Message::FeaturesRequest),
            Message::V13(of13::Message::MultipartRequest(
                of13::multipart::MultipartRequest {
                    flags: 0,
                    body: MultipartRequestBody::PortDesc,
                },
            )),
            Message::V13(of13::Message::SetConfig(openflow::common::SwitchConfig {
                flags: 0,
                miss_send_len: 128,
            })),
            Message::V13(of13::Message::BarrierRequest),
            Message::V13(of13::Message::EchoRequest { data: vec![1] }),
        ]);
        // Fed one byte at a time: framing across reads.
        let (mut fed, mut out, mut done) = (Vec::new(), Vec::new(), false);
        let echo_at = inbuf.len() - 9;
        for b in inbuf.drain(..echo_at) {
            fed.push(b);
            assert!(!done);
            done = answer_handshake(&mut fed, 7, &mut out);
        }
        assert!(done);
        let replies: Vec<_> = decode_all(&out)
            .into_iter()
            .map(|(x, m)| (x, m.type_name()))
            .collect();
        assert_eq!(
            replies,
            [
                (11, "FEATURES_REPLY"),
                (12, "MULTIPART_REPLY"),
                (14, "BARRIER_REPLY")
            ]
        );
        match &decode_all(&out)[0].1 {
            Message::V13(of13::Message::FeaturesReply(f)) => assert_eq!(f.datapath_id, 7),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_a_10_handshake() {
        let mut inbuf = stream(&[
            Message::V10(of10::Message::Hello(Hello::default())),
            Message::V10(of10::Message::EchoRequest { data: vec![] }),
            Message::V10(of10::Message::FeaturesRequest),
            Message::V10(of10::Message::BarrierRequest),
            Message::V10(of10::Message::EchoRequest { data: vec![2] }),
        ]);
        let mut out = Vec::new();
        assert!(answer_handshake(&mut inbuf, 9, &mut out));
        let replies: Vec<_> = decode_all(&out)
            .into_iter()
            .map(|(x, m)| (x, m.type_name()))
            .collect();
        assert_eq!(
            replies,
            [
                (11, "ECHO_REPLY"),
                (12, "FEATURES_REPLY"),
                (13, "BARRIER_REPLY")
            ]
        );
        // The echo after the barrier is left in the buffer, unanswered.
        assert_eq!(inbuf.len(), 9);
    }
}
