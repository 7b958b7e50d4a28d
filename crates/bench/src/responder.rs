//! `pharos bench responder`: the most trivial controller there is, to measure the
//! ceiling of the machine and of the generator.
//!
//! It accepts switches, sends a HELLO (1.3 header, bitmap {1.0, 1.3}), and when the
//! switch's HELLO is in, a FEATURES_REQUEST in the version both speak; nothing else
//! (no SET_CONFIG, no barrier). Then it answers every PACKET_IN with a canned FLOW_MOD,
//! encoded once per version, whose xid is patched to the PACKET_IN's: nothing is parsed
//! beyond the OpenFlow header's framing. ECHO_REQUESTs are answered; everything else is
//! read and dropped.
//!
//! An acceptor thread hands connections round-robin to `threads` worker threads, each
//! with its own `mio` event loop. With a delay, each answer is held that long (timers on
//! the event loop, millisecond-granular, never early).

use std::collections::VecDeque;
use std::io::{self, ErrorKind, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use openflow::model::{Action, FlowMod, Match, PortNo};
use openflow::{MacAddr, Version};

use crate::switch::{msg, next_frame, ReadBuf};

/// How the responder behaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponderOptions {
    /// Hold each answer this long.
    pub delay: Option<Duration>,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// With every answer also send an ECHO_REQUEST, a BARRIER_REPLY and a PORT_STATUS,
    /// messages a benchmark must not count as responses.
    pub noise: bool,
    /// Do the handshake, then never answer a PACKET_IN.
    pub silent: bool,
}

/// A running responder; stops (threads joined) on [`ResponderHandle::stop`] or drop.
pub struct ResponderHandle {
    /// Where it listens (the real port when asked for port 0).
    addr: SocketAddr,
    /// Seen by every thread within 50 ms.
    stop: Arc<AtomicBool>,
    /// What it did, for the caller to compare with what a benchmark counted.
    counts: Arc<Counts>,
    /// The acceptor and the workers, joined on stop.
    threads: Vec<JoinHandle<()>>,
}

/// Counters shared by the threads.
#[derive(Default)]
struct Counts {
    /// FLOW_MODs sent in answer to PACKET_INs.
    answers: AtomicU64,
    /// PACKET_INs received.
    packet_ins: AtomicU64,
    /// Connections accepted.
    accepted: AtomicU64,
}

impl ResponderHandle {
    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// FLOW_MODs sent so far (answers to PACKET_INs, counted when queued on the
    /// connection; noise not included).
    pub fn answers_sent(&self) -> u64 {
        self.counts.answers.load(Ordering::SeqCst)
    }

    /// PACKET_INs received so far.
    pub fn packet_ins_received(&self) -> u64 {
        self.counts.packet_ins.load(Ordering::SeqCst)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.counts.accepted.load(Ordering::SeqCst)
    }

    /// Whether the stop flag is set.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Waits for the threads to end (after the stop flag is set, within ~50 ms).
    pub fn join(mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// Sets the stop flag and waits for the threads.
    pub fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.join();
    }
}

impl Drop for ResponderHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Starts a responder on `listen` answering every PACKET_IN with a FLOW_MOD, `delay`
/// after it arrived; runs until `stop` is set.
pub fn run_responder(
    listen: SocketAddr,
    delay: Option<Duration>,
    threads: usize,
    stop: Arc<AtomicBool>,
) -> io::Result<ResponderHandle> {
    run_responder_with(
        listen,
        ResponderOptions {
            delay,
            threads,
            ..ResponderOptions::default()
        },
        stop,
    )
}

/// [`run_responder`] with every option.
pub fn run_responder_with(
    listen: SocketAddr,
    opts: ResponderOptions,
    stop: Arc<AtomicBool>,
) -> io::Result<ResponderHandle> {
    let mut listener = TcpListener::bind(listen)?;
    let addr = listener.local_addr()?;
    let counts = Arc::new(Counts::default());
    let canned = Arc::new(Canned::new());
    let mut threads = Vec::new();
    let mut feeds = Vec::new();
    for t in 0..opts.threads.max(1) {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let (tx, rx) = mpsc::channel::<TcpStream>();
        feeds.push((tx, waker));
        let (stop, counts, canned) = (Arc::clone(&stop), Arc::clone(&counts), Arc::clone(&canned));
        threads.push(
            thread::Builder::new()
                .name(format!("bench-resp-{t}"))
                .spawn(move || serve(poll, rx, opts, &stop, &counts, &canned))?,
        );
    }
    let acceptor_stop = Arc::clone(&stop);
    let acceptor_counts = Arc::clone(&counts);
    let acceptor = thread::Builder::new()
        .name("bench-resp-accept".into())
        .spawn(move || {
            let Ok(mut poll) = Poll::new() else { return };
            if poll
                .registry()
                .register(&mut listener, Token(0), Interest::READABLE)
                .is_err()
            {
                return;
            }
            let mut events = Events::with_capacity(16);
            let mut next = 0;
            while !acceptor_stop.load(Ordering::SeqCst) {
                let _ = poll.poll(&mut events, Some(Duration::from_millis(50)));
                loop {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let _ = stream.set_nodelay(true);
                            acceptor_counts.accepted.fetch_add(1, Ordering::SeqCst);
                            let (tx, waker) = &feeds[next % feeds.len()];
                            next += 1;
                            if tx.send(stream).is_ok() {
                                let _ = waker.wake();
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        // Out of descriptors and the like: try again on the next event.
                        Err(_) => break,
                    }
                }
            }
        })?;
    threads.push(acceptor);
    Ok(ResponderHandle {
        addr,
        stop,
        counts,
        threads,
    })
}

const WAKER: Token = Token(usize::MAX);

/// The messages the responder sends, encoded once (xid 0).
struct Canned {
    /// FLOW_MOD per version: index 0 for 1.0, 1 for 1.3.
    flow_mod: [Vec<u8>; 2],
    /// ECHO_REQUEST, BARRIER_REPLY and PORT_STATUS, one after another, per version.
    noise: [Vec<u8>; 2],
}

impl Canned {
    fn new() -> Canned {
        let actions = [Action::output(PortNo::Physical(2))];
        let matching = Match {
            in_port: Some(1),
            eth_dst: Some(MacAddr([0x0a, 0, 1, 0, 0, 1])),
            ..Match::default()
        };
        let fm = FlowMod::add(matching, &actions).idle_timeout(10);
        let encode = |v: Version| {
            let mut out = Vec::new();
            fm.encode(v, 0, &mut out)
                .expect("the canned FLOW_MOD encodes");
            out
        };
        let noise = |v: u8, barrier_reply: u8, port_len: u16| {
            let mut out = vec![v, msg::ECHO_REQUEST, 0, 8, 0, 0, 0, 0];
            out.extend_from_slice(&[v, barrier_reply, 0, 8, 0, 0, 0, 0]);
            let at = out.len();
            out.extend_from_slice(&[v, msg::PORT_STATUS, 0, 0, 0, 0, 0, 0]);
            out.resize(at + port_len as usize, 0);
            out[at + 2..at + 4].copy_from_slice(&port_len.to_be_bytes());
            out[at + 8] = 2; // OFPPR_MODIFY
            out
        };
        Canned {
            flow_mod: [encode(Version::V1_0), encode(Version::V1_3)],
            // PORT_STATUS: header, reason and padding, then ofp_phy_port (48 bytes in
            // 1.0) or ofp_port (64 bytes in 1.3).
            noise: [
                noise(0x01, msg::BARRIER_REPLY_10, 8 + 8 + 48),
                noise(0x04, msg::BARRIER_REPLY_13, 8 + 8 + 64),
            ],
        }
    }
}

/// One switch's connection.
struct Conn {
    /// The socket, non-blocking, registered with the worker's poll.
    stream: TcpStream,
    /// Bytes read, not yet framed.
    rbuf: ReadBuf,
    /// Bytes to write, from `wpos`: everything a turn produces goes out in one write.
    wbuf: Vec<u8>,
    wpos: usize,
    /// Index into `Canned` once the version is agreed (0: 1.0, 1: 1.3).
    version: Option<usize>,
    /// Answers held back: when they are due, and the xid.
    held: VecDeque<(Instant, u32)>,
    /// A readiness event said the peer closed (or the socket failed): read on to the
    /// end past a short read, since no later event reports a FIN that came with data.
    read_closed: bool,
    /// The connection ended (or misbehaved): dropped after this turn.
    closed: bool,
}

fn serve(
    mut poll: Poll,
    feed: mpsc::Receiver<TcpStream>,
    opts: ResponderOptions,
    stop: &AtomicBool,
    counts: &Counts,
    canned: &Canned,
) {
    let mut events = Events::with_capacity(1024);
    let mut conns: Vec<Option<Conn>> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        let next_due = conns
            .iter()
            .flatten()
            .filter_map(|c| c.held.front().map(|h| h.0))
            .min();
        // The event loop's timer counts whole milliseconds (rounded up); the part of a
        // hold below one is slept precisely, so that answers leave on time, not up to a
        // millisecond late.
        let timeout = match next_due.map(|due| due.saturating_duration_since(now)) {
            Some(left) if left < Duration::from_millis(1) => {
                thread::sleep(left);
                Duration::ZERO
            }
            Some(left) => Duration::from_millis(left.as_millis().min(50) as u64),
            None => Duration::from_millis(50),
        };
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() != ErrorKind::Interrupted {
                return;
            }
        }
        let mut ready: Vec<usize> = Vec::new();
        for ev in &events {
            if ev.token() == WAKER {
                while let Ok(mut stream) = feed.try_recv() {
                    let slot = conns
                        .iter()
                        .position(Option::is_none)
                        .unwrap_or(conns.len());
                    if poll
                        .registry()
                        .register(
                            &mut stream,
                            Token(slot),
                            Interest::READABLE | Interest::WRITABLE,
                        )
                        .is_err()
                    {
                        continue;
                    }
                    let mut c = Conn {
                        stream,
                        rbuf: ReadBuf::new(),
                        wbuf: Vec::with_capacity(64 * 1024),
                        wpos: 0,
                        version: None,
                        held: VecDeque::new(),
                        read_closed: false,
                        closed: false,
                    };
                    // HELLO, 1.3 header, bitmap {1.0, 1.3}.
                    c.wbuf
                        .extend_from_slice(&[4, msg::HELLO, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8]);
                    c.wbuf
                        .extend_from_slice(&(1u32 << 1 | 1 << 4).to_be_bytes());
                    if slot == conns.len() {
                        conns.push(Some(c));
                    } else {
                        conns[slot] = Some(c);
                    }
                    ready.push(slot);
                }
            } else {
                if ev.is_read_closed() || ev.is_error() {
                    if let Some(Some(c)) = conns.get_mut(ev.token().0) {
                        c.read_closed = true;
                    }
                }
                ready.push(ev.token().0);
            }
        }
        // Connections with held answers due are served too.
        let now = Instant::now();
        for (i, c) in conns.iter().enumerate() {
            if c.as_ref()
                .is_some_and(|c| c.held.front().is_some_and(|h| h.0 <= now))
            {
                ready.push(i);
            }
        }
        ready.sort_unstable();
        ready.dedup();
        for i in ready {
            let Some(Some(c)) = conns.get_mut(i) else {
                continue;
            };
            c.turn(opts, counts, canned);
            if c.closed {
                let _ = poll.registry().deregister(&mut c.stream);
                conns[i] = None;
            }
        }
    }
}

impl Conn {
    fn turn(&mut self, opts: ResponderOptions, counts: &Counts, canned: &Canned) {
        while !self.closed {
            let space = self.rbuf.free();
            match self.rbuf.read_from(&mut self.stream) {
                Ok(0) => self.closed = true,
                // A short read drained the socket; epoll (edge-triggered) reports new
                // bytes as a new event, so no read just to see WouldBlock (as the
                // controller does).
                Ok(n) if n < space && !self.read_closed => break,
                Ok(_) => {}
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock => break,
                    ErrorKind::Interrupted => {}
                    _ => self.closed = true,
                },
            }
            if self.rbuf.is_full() {
                self.frames(opts, counts, canned);
            }
        }
        self.frames(opts, counts, canned);
        let now = Instant::now();
        while let Some(&(due, xid)) = self.held.front() {
            if due > now {
                break;
            }
            self.held.pop_front();
            self.answer(xid, opts, counts, canned);
        }
        while self.wpos < self.wbuf.len() && !self.closed {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => self.closed = true,
                Ok(n) => self.wpos += n,
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock => break,
                    ErrorKind::Interrupted => {}
                    _ => self.closed = true,
                },
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        }
    }

    /// Handles the whole messages read.
    fn frames(&mut self, opts: ResponderOptions, counts: &Counts, canned: &Canned) {
        let now = Instant::now();
        let mut at = 0;
        let rbuf = std::mem::take(&mut self.rbuf);
        while let Some(f) = next_frame(&rbuf.filled()[at..]) {
            let Ok(len) = f else {
                self.closed = true;
                return;
            };
            let m = &rbuf.filled()[at..at + len];
            let xid = u32::from_be_bytes([m[4], m[5], m[6], m[7]]);
            match m[1] {
                msg::HELLO if self.version.is_none() => {
                    let bitmap = (m.len() >= 16 && u16::from_be_bytes([m[8], m[9]]) == 1)
                        .then(|| u32::from_be_bytes([m[12], m[13], m[14], m[15]]));
                    let v = match bitmap {
                        Some(b) if b & (1 << 4) != 0 => Some(1),
                        Some(b) if b & (1 << 1) != 0 => Some(0),
                        Some(_) => None,
                        None if m[0] >= 4 => Some(1),
                        None if m[0] >= 1 => Some(0),
                        None => None,
                    };
                    let Some(v) = v else {
                        self.closed = true;
                        return;
                    };
                    self.version = Some(v);
                    let wire = [0x01, 0x04][v];
                    self.wbuf
                        .extend_from_slice(&[wire, msg::FEATURES_REQUEST, 0, 8, 0, 0, 0, 2]);
                }
                msg::ECHO_REQUEST => {
                    let w = self.wbuf.len();
                    self.wbuf.extend_from_slice(m);
                    self.wbuf[w + 1] = msg::ECHO_REPLY;
                }
                msg::PACKET_IN => {
                    counts.packet_ins.fetch_add(1, Ordering::Relaxed);
                    if !opts.silent {
                        match opts.delay {
                            Some(d) => self.held.push_back((now + d, xid)),
                            None => self.answer(xid, opts, counts, canned),
                        }
                    }
                }
                _ => {}
            }
            at += len;
        }
        let mut rbuf = rbuf;
        rbuf.consume(at);
        self.rbuf = rbuf;
    }

    fn answer(&mut self, xid: u32, opts: ResponderOptions, counts: &Counts, canned: &Canned) {
        let v = self.version.unwrap_or(0);
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(&canned.flow_mod[v]);
        self.wbuf[at + 4..at + 8].copy_from_slice(&xid.to_be_bytes());
        if opts.noise {
            self.wbuf.extend_from_slice(&canned.noise[v]);
        }
        counts.answers.fetch_add(1, Ordering::Relaxed);
    }
}
