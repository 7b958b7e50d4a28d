//! The acceptor and the admission tier, on one thread with its own `mio::Poll`.
//!
//! It accepts on every listener (with a connection cap and a backoff on accept errors
//! such as EMFILE), runs the sans-IO [`Handshake`] of each peer under a deadline, and
//! hands each proven switch to a worker with the bytes already read past the handshake.
//! A peer that fails is closed with a logged reason and counted; it never reaches a
//! worker.
//!
//! Handshakes in progress are capped, in all and per source IP. A connection that finds
//! its slots taken is not refused but waits, accepted and unread (its HELLO stays in the
//! kernel's buffer), in a queue per source IP; a freed slot goes to the next waiting
//! connection, first come first served within an IP and in turn between IPs, and its
//! handshake deadline starts then. So a thousand switches connecting at once from one
//! host (a lab) all get in without a reset and a reconnect backoff each. Only what is
//! over the waiting caps (in all and per IP), or waits longer than `max_wait`, is
//! closed (reset, counted as refused): a flood fills its own address's queue and is
//! refused past it, at a bounded cost per second (a batch of refusals, then a pause).
//!
//! A switch whose dpid is already connected replaces the old connection: the new one
//! goes to the old one's worker, behind a "close as replaced" order, so switch-removed
//! of the old connection fires before switch-added of the new one.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use tracing::{debug, info, warn};

use crate::command::{Control, DpidRegistry, NewSwitch, WorkerHandle};
use crate::counters::{AdmissionSnapshot, Published};
use crate::handshake::{Established, Handshake, HandshakeConfig, Progress};
use crate::sync::lock;
use crate::tls::{refusal, Stream};

use self::strikes::Strikes;

mod report;
mod strikes;

/// Makes the calling thread (admission's) `SCHED_BATCH`: the scheduler then never lets
/// its wake-ups preempt a running thread, so a worker that shares its core runs out its
/// time slice, and the connections that arrived meanwhile are taken in one round. Under
/// a flood of 10,000 connections/s this thread woke about 440 times a second, each time
/// preempting the worker on its core; as a batch thread it wakes about 100 times, at
/// half the CPU time (BENCHMARKS.md, issue 16). A handshake step may wait for the rest
/// of a busy worker's slice (a few milliseconds); on an idle core it runs at once.
fn yield_to_workers() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain system call on this thread (0), with a valid parameter.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } != 0 {
        debug!(error = %io::Error::last_os_error(), "admission stays SCHED_OTHER");
    }
}

/// The waker's token (shutdown).
pub const WAKER: Token = Token(usize::MAX);
/// Pending connections get tokens from here up; listeners are 0.. below.
const FIRST_CONN: usize = 1 << 16;
/// First pause after an accept error; doubles up to [`MAX_BACKOFF`].
/// The shortest interval between two accept rounds while connections keep arriving.
const ADMISSION_TICK: Duration = Duration::from_millis(2);
/// How long accepting stops once the pending-handshake caps have refused a batch.
const REFUSING_PAUSE: Duration = Duration::from_millis(100);
/// Connections refused in one accept round before accepting pauses: bounds the
/// admission work a flood causes to about REFUSE_BATCH / REFUSING_PAUSE per second.
const REFUSE_BATCH: usize = 64;
const MIN_BACKOFF: Duration = Duration::from_millis(10);
/// Longest pause after repeated accept errors.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// read(2) calls per readiness event of a handshaking peer; one that keeps sending
/// (echo requests, say) is revisited next turn instead of holding the thread.
const READ_BUDGET: usize = 16;
/// Settings of the admission tier.
#[derive(Debug, Clone)]
pub struct AdmissionConfig {
    /// Open connections (in handshake and established) allowed at once.
    pub max_connections: usize,
    /// The handshake: deadline, pending caps, versions, miss_send_len.
    pub handshake: HandshakeConfig,
    /// How often the info-level counters report is printed.
    pub counters_interval: Duration,
}

/// A connection accepted while the handshake slots it needs were taken.
struct Waiting {
    /// The socket, not registered: nothing is read or written until its turn.
    stream: TcpStream,
    /// Where it comes from.
    peer: SocketAddr,
    /// The listener that accepted it (plain or TLS).
    listener: usize,
}

/// A connection in its handshake (on a TLS listener: the TLS handshake, then the
/// OpenFlow one inside it).
struct Pending {
    /// The socket (or the TLS session over it), registered with admission's poll.
    stream: Stream,
    /// Where it comes from (logs, the per-IP cap).
    peer: SocketAddr,
    /// The state machine.
    hs: Handshake,
    /// Bytes for the peer not yet written.
    out: Vec<u8>,
}

/// The admission thread's state (see the module doc).
pub struct Admission {
    /// Settings.
    cfg: AdmissionConfig,
    /// Admission's own poll.
    poll: Poll,
    /// The bound listeners; token = index.
    listeners: Vec<TcpListener>,
    /// The TLS configuration of the listener at the same index (`None` or no entry:
    /// clear text).
    tls: Vec<Option<Arc<rustls::ServerConfig>>>,
    /// Connections in their handshake, by token.
    pending: HashMap<usize, Pending>,
    /// Deadlines in accept order (the timeout is fixed, so this is deadline order);
    /// entries of connections already gone are skipped.
    deadlines: VecDeque<(Instant, usize)>,
    /// Pending handshakes per source IP.
    per_ip: HashMap<IpAddr, usize>,
    /// Connections waiting for a handshake slot, by token.
    waiting: HashMap<usize, Waiting>,
    /// The waiting tokens of each source IP, oldest first; an IP is here only while it
    /// has a waiting connection.
    queues: HashMap<IpAddr, VecDeque<usize>>,
    /// The IPs of `queues`, in the order their turns come.
    turns: VecDeque<IpAddr>,
    /// When each waiting connection gives up, in accept order (`max_wait` is fixed, so
    /// this is deadline order); tokens no longer waiting are skipped.
    wait_deadlines: VecDeque<(Instant, usize)>,
    /// The workers.
    workers: Vec<WorkerHandle>,
    /// Who owns which dpid.
    registry: DpidRegistry,
    /// The next connection token / uid (never reused).
    next_token: usize,
    /// Admission's counters (updated per event: accepts are not the message path).
    counters: Arc<Mutex<AdmissionSnapshot>>,
    /// Every snapshot, for the periodic report.
    published: Arc<Published>,
    /// Set by the handle to stop.
    stop: Arc<AtomicBool>,
    /// No accept until then (after an accept error).
    paused_until: Option<Instant>,
    /// The current accept backoff.
    backoff: Duration,
    /// Pending connections whose read budget ran out: read again next turn.
    again: Vec<usize>,
    /// Failed handshakes per source address.
    strikes: Strikes,
    /// When the next counters report is printed.
    next_report: Instant,
    /// Total PACKET_INs at the previous report, for the rate.
    last_packet_ins: u64,
    /// When the previous report was printed.
    last_report: Instant,
    /// Connections accepted or refused, handshakes failed and messages counted at the
    /// previous report: with no switch connected and none of these moving, the report
    /// is not printed (an idle controller says nothing every ten seconds).
    last_activity: u64,
}

impl Admission {
    /// The admission tier over bound listeners; returns it and the waker that stops it
    /// (after `stop` is set).
    pub fn new(
        cfg: AdmissionConfig,
        mut listeners: Vec<TcpListener>,
        workers: Vec<WorkerHandle>,
        registry: DpidRegistry,
        published: Arc<Published>,
        stop: Arc<AtomicBool>,
    ) -> io::Result<(Admission, Arc<Waker>)> {
        let poll = Poll::new()?;
        for (i, l) in listeners.iter_mut().enumerate() {
            poll.registry().register(l, Token(i), Interest::READABLE)?;
        }
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let now = Instant::now();
        Ok((
            Admission {
                next_report: now + cfg.counters_interval,
                last_report: now,
                last_packet_ins: 0,
                last_activity: 0,
                cfg,
                poll,
                listeners,
                tls: Vec::new(),
                pending: HashMap::new(),
                deadlines: VecDeque::new(),
                per_ip: HashMap::new(),
                waiting: HashMap::new(),
                queues: HashMap::new(),
                turns: VecDeque::new(),
                wait_deadlines: VecDeque::new(),
                workers,
                registry,
                next_token: FIRST_CONN,
                counters: published.admission.clone(),
                published,
                stop,
                paused_until: None,
                backoff: MIN_BACKOFF,
                again: Vec::new(),
                strikes: Strikes::default(),
            },
            waker,
        ))
    }

    /// Sets the TLS configuration of each listener (same index; `None`: clear text).
    pub fn set_tls(&mut self, tls: Vec<Option<Arc<rustls::ServerConfig>>>) {
        self.tls = tls;
    }

    /// The loop; returns when the handle sets `stop` and wakes it.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        yield_to_workers();
        info!("admission started");
        while !self.stop.load(Ordering::Acquire) {
            let now = Instant::now();
            let mut wake = self.next_report;
            if let Some(&(d, _)) = self.deadlines.front() {
                wake = wake.min(d);
            }
            if let Some(&(d, _)) = self.wait_deadlines.front() {
                wake = wake.min(d);
            }
            if let Some(p) = self.paused_until {
                wake = wake.min(p);
            }
            let timeout = if self.again.is_empty() {
                wake.saturating_duration_since(now)
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                warn!(error = %e, "admission poll failed; admission stops");
                break;
            }
            let now = Instant::now();
            let mut accepting = false;
            for event in events.iter() {
                let t = event.token().0;
                if event.token() == WAKER {
                    continue;
                }
                if t < self.listeners.len() {
                    if self.paused_until.is_none() {
                        self.accept(t, now);
                        accepting = true;
                    }
                } else {
                    self.pending_event(t, now);
                }
            }
            for t in std::mem::take(&mut self.again) {
                self.pending_event(t, now);
            }
            if self.paused_until.is_some_and(|p| now >= p) {
                // Edge-triggered: connections queued during the pause raise no new
                // event, so accept on every listener now.
                self.paused_until = None;
                for i in 0..self.listeners.len() {
                    self.accept(i, now);
                }
            }
            self.expire(now);
            self.promote(now);
            if now >= self.next_report {
                self.report(now);
            }
            // Under a stream of new connections (a flood, or a thousand switches
            // reconnecting), wake at most once per ADMISSION_TICK and take what queued
            // meanwhile in one batch: each wake-up is a context switch away from a
            // worker when they share a core. A quiet listener is not delayed at all.
            if accepting {
                let spent = now.elapsed();
                if spent < ADMISSION_TICK && !self.stop.load(Ordering::Acquire) {
                    std::thread::sleep(ADMISSION_TICK - spent);
                }
            }
        }
        let tokens: Vec<usize> = self.pending.keys().copied().collect();
        for t in tokens {
            self.fail(t, "shutdown", None);
        }
        // Waiting connections were told nothing: closing them is enough.
        self.waiting.clear();
        info!("admission stopped");
    }

    /// Open connections: waiting and pending handshakes plus the workers' switches.
    fn open_connections(&self) -> usize {
        self.waiting.len()
            + self.pending.len()
            + self
                .workers
                .iter()
                .map(|w| w.load.load(Ordering::Relaxed))
                .sum::<usize>()
    }

    /// Accepts until the listener would block.
    fn accept(&mut self, listener: usize, now: Instant) {
        let mut refused = 0;
        loop {
            let (stream, peer) = match self.listeners[listener].accept() {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    continue
                }
                Err(e) => {
                    // EMFILE, ENFILE, ENOBUFS, ENOMEM: pause instead of spinning; the
                    // queued connections wait in the kernel's backlog.
                    lock(&self.counters).accept_errors += 1;
                    warn!(error = %e, backoff_ms = self.backoff.as_millis() as u64, "accept failed; pausing accepts");
                    self.paused_until = Some(now + self.backoff);
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                    return;
                }
            };
            self.backoff = MIN_BACKOFF;
            lock(&self.counters).accepted += 1;
            // From an address whose handshakes keep failing, only a connection that
            // has already begun like a switch is worth a handshake: the rest (silent,
            // reset while in the backlog, garbage) are refused for the price of a
            // peek, and count towards the refusal batch that pauses accepting.
            let place = if self.strikes.failing(peer.ip(), now) && !opens_like_a_switch(&stream) {
                // Another failure: the address stays failing while it keeps this up.
                self.strikes.fail(peer.ip(), now);
                Place::Refuse("failing_address")
            } else {
                match self.place(peer.ip(), now) {
                    Place::Start if !self.strikes.take_start(peer.ip(), now) => {
                        Place::Refuse("failing_address")
                    }
                    p => p,
                }
            };
            let refuse = match place {
                Place::Start => {
                    let token = self.take_token();
                    self.admit(listener, stream, peer, token, now);
                    continue;
                }
                Place::Wait => {
                    self.wait(listener, stream, peer, now);
                    continue;
                }
                Place::Refuse(reason) => reason,
            };
            lock(&self.counters).refused.add(refuse);
            debug!(%peer, reason = refuse, "connection refused");
            // Nothing was sent on it, so a reset loses nothing, and it spares the
            // kernel the FIN exchange and a TIME_WAIT entry per refused
            // connection: under a connection flood that work lands on the core the
            // workers need.
            let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
            drop(stream);
            refused += 1;
            if refuse != "max_connections" && refused >= REFUSE_BATCH {
                // The handshake and waiting places are full and connections keep
                // coming: stop accepting for a moment. New connections wait in the
                // kernel's backlog (and past it are dropped by the kernel, cheaply)
                // instead of costing an accept and a close each on a core the workers
                // need. Established switches are not affected; a batch per round keeps
                // the backlog moving, so a real switch queued behind a flood still
                // gets in within a few rounds.
                self.paused_until = Some(now + REFUSING_PAUSE);
                return;
            }
        }
    }

    /// Where a new connection from `ip` goes: into its handshake now, into the waiting
    /// queue of its IP, or out.
    fn place(&self, ip: IpAddr, now: Instant) -> Place {
        let hs = &self.cfg.handshake;
        if self.open_connections() >= self.cfg.max_connections {
            return Place::Refuse("max_connections");
        }
        let ip_pending = self.per_ip.get(&ip).copied().unwrap_or(0);
        let ip_waiting = self.queues.get(&ip).map_or(0, VecDeque::len);
        // Behind connections already waiting from the same IP, never ahead of them.
        let full = if ip_pending >= hs.max_pending_per_ip {
            Some("max_pending_per_ip")
        } else if self.pending.len() >= hs.max_pending {
            Some("max_pending")
        } else {
            None
        };
        let Some(full) = full else {
            if ip_waiting == 0 {
                return Place::Start;
            }
            return Place::Wait;
        };
        // With queueing turned off (a cap of 0) the reason stays the full slot's.
        if hs.max_waiting_per_ip > 0 && self.strikes.failing(ip, now) {
            Place::Refuse("failing_address")
        } else if ip_waiting >= hs.max_waiting_per_ip {
            Place::Refuse(if hs.max_waiting_per_ip == 0 {
                full
            } else {
                "max_waiting_per_ip"
            })
        } else if self.waiting.len() >= hs.max_waiting {
            Place::Refuse(if hs.max_waiting == 0 {
                full
            } else {
                "max_waiting"
            })
        } else {
            Place::Wait
        }
    }

    /// A fresh connection token / uid.
    fn take_token(&mut self) -> usize {
        let token = self.next_token;
        self.next_token += 1;
        token
    }

    /// Puts an accepted connection in its IP's waiting queue.
    fn wait(&mut self, listener: usize, stream: TcpStream, peer: SocketAddr, now: Instant) {
        let token = self.take_token();
        self.waiting.insert(
            token,
            Waiting {
                stream,
                peer,
                listener,
            },
        );
        let queue = self.queues.entry(peer.ip()).or_default();
        if queue.is_empty() {
            self.turns.push_back(peer.ip());
        }
        queue.push_back(token);
        self.wait_deadlines
            .push_back((now + self.cfg.handshake.max_wait, token));
        lock(&self.counters).waiting = self.waiting.len();
        debug!(%peer, "connection waits for a handshake slot");
    }

    /// Starts the handshakes of waiting connections while slots are free: one per IP
    /// per turn, IPs in turn, each IP's oldest first.
    fn promote(&mut self, now: Instant) {
        let mut passed = 0;
        while passed < self.turns.len() && self.pending.len() < self.cfg.handshake.max_pending {
            let Some(ip) = self.turns.pop_front() else {
                break;
            };
            if self.per_ip.get(&ip).copied().unwrap_or(0) >= self.cfg.handshake.max_pending_per_ip {
                self.turns.push_back(ip);
                passed += 1;
                continue;
            }
            passed = 0;
            let Some(queue) = self.queues.get_mut(&ip) else {
                continue;
            };
            let token = queue.pop_front();
            if queue.is_empty() {
                self.queues.remove(&ip);
            } else {
                self.turns.push_back(ip);
            }
            if let Some(w) = token.and_then(|t| self.waiting.remove(&t).map(|w| (t, w))) {
                lock(&self.counters).waiting = self.waiting.len();
                let (token, w) = w;
                let looks_bad = self.strikes.failing(ip, now) && !opens_like_a_switch(&w.stream);
                if looks_bad || !self.strikes.take_start(ip, now) {
                    // Queued before its address was found failing, and no better (or
                    // its address has started its handshakes for this second).
                    if looks_bad {
                        self.strikes.fail(ip, now);
                    }
                    let mut c = lock(&self.counters);
                    c.refused.add("failing_address");
                    drop(c);
                    debug!(peer = %w.peer, "waiting connection refused: its address keeps failing");
                    let _ = socket2::SockRef::from(&w.stream).set_linger(Some(Duration::ZERO));
                    continue;
                }
                self.admit(w.listener, w.stream, w.peer, token, now);
            }
        }
    }

    /// Starts the handshake of an accepted connection.
    fn admit(
        &mut self,
        listener: usize,
        mut stream: TcpStream,
        peer: SocketAddr,
        token: usize,
        now: Instant,
    ) {
        let _ = stream.set_nodelay(true);
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            Token(token),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            warn!(%peer, error = %e, "cannot register connection");
            lock(&self.counters)
                .handshake_failures
                .add("register_error");
            return;
        }
        let stream = match self.tls.get(listener) {
            Some(Some(config)) => match Stream::tls(stream, Arc::clone(config)) {
                Ok(s) => s,
                Err(e) => {
                    warn!(%peer, error = %e, "cannot start a TLS session");
                    lock(&self.counters).handshake_failures.add("tls_error");
                    return;
                }
            },
            _ => Stream::Plain(stream),
        };
        let (hs, out) = Handshake::new(&self.cfg.handshake);
        let deadline = now + self.cfg.handshake.timeout;
        self.pending.insert(
            token,
            Pending {
                stream,
                peer,
                hs,
                out,
            },
        );
        *self.per_ip.entry(peer.ip()).or_insert(0) += 1;
        self.deadlines.push_back((deadline, token));
        lock(&self.counters).pending = self.pending.len();
        debug!(%peer, "connection accepted");
        // Our HELLO goes out now; the peer's may already be waiting.
        self.pending_event(token, now);
    }

    /// Reads and writes a pending connection, and acts on the handshake's result.
    fn pending_event(&mut self, token: usize, now: Instant) {
        let Some(p) = self.pending.get_mut(&token) else {
            return;
        };
        let mut buf = [0u8; 4096];
        let mut result = Ok(Progress::NeedMore);
        let mut budget = READ_BUDGET;
        loop {
            if budget == 0 {
                self.again.push(token);
                break;
            }
            budget -= 1;
            match p.stream.read(&mut buf) {
                Ok(0) => {
                    result = Err(("closed_by_peer", None));
                    break;
                }
                Ok(n) => match p.hs.feed(&buf[..n], &mut p.out) {
                    Ok(Progress::NeedMore) => {}
                    Ok(done) => {
                        result = Ok(done);
                        break;
                    }
                    Err(e) => {
                        result = Err((e.reason(), Some(e.to_string())));
                        break;
                    }
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    result = Err((refusal(&e).unwrap_or("read_error"), Some(e.to_string())));
                    break;
                }
            }
        }
        if let Err(e) = write_some(&mut p.stream, &mut p.out) {
            if result.is_ok() {
                result = Err(("write_error", Some(e.to_string())));
            }
        }
        match result {
            Ok(Progress::NeedMore) => {}
            Ok(Progress::Established(est)) => self.handoff(token, est, now),
            Err((reason, detail)) => self.fail(token, reason, detail),
        }
    }

    /// Closes a pending connection that failed; logged and counted.
    fn fail(&mut self, token: usize, reason: &'static str, detail: Option<String>) {
        let Some(mut p) = self.remove(token) else {
            return;
        };
        if reason != "shutdown" {
            self.strikes.fail(p.peer.ip(), Instant::now());
        }
        lock(&self.counters).handshake_failures.add(reason);
        let waiting_for = if p.stream.tls_handshaking() {
            "the TLS handshake"
        } else {
            p.hs.waiting_for()
        };
        match detail {
            Some(detail) => {
                warn!(peer = %p.peer, reason, waiting_for, detail, "handshake failed")
            }
            None => warn!(peer = %p.peer, reason, waiting_for, "handshake failed"),
        }
        // Best effort for HELLO_FAILED; then read what is left so that close(2) sends
        // a FIN after our data rather than a reset that could discard it.
        let _ = write_some(&mut p.stream, &mut p.out);
        let _ = p.stream.shutdown(std::net::Shutdown::Write);
        let mut buf = [0u8; 4096];
        for _ in 0..16 {
            match p.stream.read(&mut buf) {
                Ok(n) if n > 0 => {}
                _ => break,
            }
        }
    }

    /// Takes a connection out of the pending set.
    fn remove(&mut self, token: usize) -> Option<Pending> {
        let mut p = self.pending.remove(&token)?;
        let _ = self.poll.registry().deregister(&mut p.stream);
        if let Some(n) = self.per_ip.get_mut(&p.peer.ip()) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&p.peer.ip());
            }
        }
        lock(&self.counters).pending = self.pending.len();
        Some(p)
    }

    /// Gives a proven switch to a worker.
    fn handoff(&mut self, token: usize, est: Established, now: Instant) {
        let Some(p) = self.remove(token) else {
            return;
        };
        self.strikes.succeed(p.peer.ip(), now);
        let mut est = est;
        let flows = est.flows.take();
        let dropped = est.dropped;
        let (info, leftover) = est.into_info(p.peer);
        let dpid = info.dpid;
        if dropped > 0 {
            warn!(
                dpid = %dpid,
                peer = %p.peer,
                dropped,
                held = crate::handshake::MAX_HELD,
                "asynchronous messages sent during the handshake past the bytes held for the apps were dropped"
            );
        }
        let uid = token as u64;
        let mut reg = lock(&self.registry);
        let worker = match reg.get(&dpid) {
            Some(&(w, old)) => {
                info!(dpid = %dpid, peer = %p.peer, "a new connection replaces the switch's old one");
                self.workers[w].control(Control::Close {
                    uid: old,
                    reason: "replaced",
                });
                w
            }
            None => self.least_loaded(),
        };
        reg.insert(dpid, (worker, uid));
        drop(reg);
        lock(&self.counters).established += 1;
        match p.stream.tls_summary() {
            Some(tls) => {
                debug!(dpid = %dpid, peer = %p.peer, worker, version = %info.version, tls, "handshake done")
            }
            None => {
                debug!(dpid = %dpid, peer = %p.peer, worker, version = %info.version, "handshake done")
            }
        }
        let w = &self.workers[worker];
        w.load.fetch_add(1, Ordering::Relaxed);
        let sent = w.control(Control::Add(Box::new(NewSwitch {
            uid,
            stream: p.stream,
            info,
            leftover,
            flows,
            pending_out: p.out,
        })));
        if !sent {
            w.load.fetch_sub(1, Ordering::Relaxed);
            warn!(dpid = %dpid, worker, "worker gone; switch dropped");
        }
    }

    fn least_loaded(&self) -> usize {
        self.workers
            .iter()
            .enumerate()
            .min_by_key(|(_, w)| w.load.load(Ordering::Relaxed))
            .map_or(0, |(i, _)| i)
    }

    /// Fails the handshakes whose deadline passed, and closes the connections that
    /// waited `max_wait` for a slot.
    fn expire(&mut self, now: Instant) {
        while let Some(&(deadline, token)) = self.wait_deadlines.front() {
            if deadline > now {
                break;
            }
            self.wait_deadlines.pop_front();
            let Some(w) = self.waiting.remove(&token) else {
                continue;
            };
            let ip = w.peer.ip();
            if let Some(queue) = self.queues.get_mut(&ip) {
                // The oldest of its IP's queue (all wait as long), so at the front.
                queue.retain(|&t| t != token);
                if queue.is_empty() {
                    self.queues.remove(&ip);
                    self.turns.retain(|&i| i != ip);
                }
            }
            self.strikes.fail(ip, now);
            let mut c = lock(&self.counters);
            c.refused.add("wait_timeout");
            c.waiting = self.waiting.len();
            drop(c);
            warn!(peer = %w.peer, waited_ms = self.cfg.handshake.max_wait.as_millis() as u64, "connection closed: no handshake slot came free in max_wait");
            let _ = socket2::SockRef::from(&w.stream).set_linger(Some(Duration::ZERO));
        }
        while let Some(&(deadline, token)) = self.deadlines.front() {
            if deadline > now {
                break;
            }
            self.deadlines.pop_front();
            if self.pending.contains_key(&token) {
                self.fail(token, "timeout", None);
            }
        }
    }
}

/// Whether the peer's first bytes, already received, are an OpenFlow HELLO (any
/// version) or a TLS handshake record: what a switch sends as soon as it connects.
/// Nothing received yet, an error (reset) or anything else: false. One `recv` with
/// `MSG_PEEK`: nothing is taken from the stream.
fn opens_like_a_switch(stream: &TcpStream) -> bool {
    let mut b = [0u8; 2];
    match stream.peek(&mut b) {
        Ok(2) => (matches!(b[0], 1..=6) && b[1] == openflow::msg_type::HELLO) || b[0] == 0x16,
        Ok(1) => matches!(b[0], 1..=6 | 0x16),
        _ => false,
    }
}

/// Where [`Admission::place`] puts a new connection.
enum Place {
    /// Its handshake starts now.
    Start,
    /// It waits for a slot.
    Wait,
    /// It is closed, for this reason (a cap's name).
    Refuse(&'static str),
}

/// Writes what the kernel takes of `out`, keeping the rest (and, over TLS, the
/// session's own records first: handshake messages, alerts).
fn write_some(stream: &mut Stream, out: &mut Vec<u8>) -> io::Result<()> {
    stream.send_backlog()?;
    let mut written = 0;
    while written < out.len() {
        match stream.write(&out[written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                out.drain(..written);
                return Err(e);
            }
        }
    }
    out.drain(..written);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair of connected sockets: ours (accepted, as mio's) and the peer's.
    fn pair() -> (TcpStream, std::net::TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (ours, _) = l.accept().unwrap();
        ours.set_nonblocking(true).unwrap();
        (TcpStream::from_std(ours), peer)
    }

    /// Waits until `stream` has something to read (or an error to give).
    fn settle() {
        std::thread::sleep(Duration::from_millis(50));
    }

    #[test]
    fn a_switch_opens_with_a_hello_or_a_tls_record_and_nothing_else_does() {
        let sent = |bytes: &[u8]| {
            let (ours, mut peer) = pair();
            peer.write_all(bytes).unwrap();
            settle();
            let yes = opens_like_a_switch(&ours);
            // Peeked, not taken: the handshake still reads every byte.
            let mut b = vec![0u8; bytes.len()];
            let mut std_ours: std::net::TcpStream = ours.into();
            std_ours.set_nonblocking(false).unwrap();
            std::io::Read::read_exact(&mut std_ours, &mut b).unwrap();
            assert_eq!(b, bytes);
            yes
        };
        assert!(sent(&[1, 0, 0, 8, 0, 0, 0, 1]), "a 1.0 HELLO");
        assert!(
            sent(&[4, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12]),
            "a 1.3 HELLO"
        );
        assert!(
            sent(&[0x16, 3, 1, 0, 5, 1, 0, 0, 1, 0]),
            "a TLS ClientHello record"
        );
        assert!(!sent(b"GET / HTTP/1.1\r\n\r\n"), "not OpenFlow");
        assert!(
            !sent(&[4, 10, 0, 8, 0, 0, 0, 1]),
            "OpenFlow, but not a HELLO"
        );
        // Nothing yet, and a peer that reset.
        let (ours, peer) = pair();
        assert!(!opens_like_a_switch(&ours), "silent");
        socket2::SockRef::from(&peer)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
        drop(peer);
        settle();
        assert!(!opens_like_a_switch(&ours), "reset");
    }
}
