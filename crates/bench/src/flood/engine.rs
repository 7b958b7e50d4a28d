//! The flood itself: one thread, non-blocking sockets and a `mio` poll; connections
//! opened at the paced rate, driven in their style, closed for the cap or at the end,
//! every attempt counted once.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::messages::{answer_handshake, garbage, hello, tls_client_hello};
use super::*;

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
pub(super) struct Flood {
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
    pub(super) fn new(cfg: &FloodConfig, max_open: usize) -> io::Result<Flood> {
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
    pub(super) fn run(&mut self, stop: &AtomicBool) -> io::Result<(FloodEnd, Duration)> {
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
    pub(super) fn report(
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
