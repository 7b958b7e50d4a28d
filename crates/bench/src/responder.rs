//! `pharos bench responder`: the most trivial controller there is, to measure the
//! ceiling of the machine and of the generator.
//!
//! It accepts switches, sends a HELLO (1.3 header, bitmap {1.0, 1.3}), and when the
//! switch's HELLO is in, a FEATURES_REQUEST in the version both speak; nothing else
//! (no SET_CONFIG, no barrier). Then it answers every PACKET_IN with canned messages
//! ([`Answer`]), encoded once per version, patched with the PACKET_IN's xid and buffer
//! id (and, for a PACKET_OUT of an unbuffered packet, followed by the packet's bytes):
//! the same messages a real app sends (a learning switch sends one FLOW_MOD carrying the
//! buffer id for a buffered packet, a FLOW_MOD and a PACKET_OUT for an unbuffered one),
//! so that the two can be compared, at the least cost there is. Nothing is parsed beyond
//! the header's framing and the PACKET_IN's fixed fields. ECHO_REQUESTs are answered;
//! everything else is read and dropped.
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
use openflow::model::{Action, FlowMod, Match, PacketOut, PortNo};
use openflow::{MacAddr, Version};

use crate::switch::{msg, next_frame, ReadBuf, NO_BUFFER};

/// The messages the responder answers each PACKET_IN with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Answer {
    /// One FLOW_MOD carrying the PACKET_IN's buffer id (what a learning switch sends for
    /// a buffered packet; `NO_BUFFER` for an unbuffered one, whose packet is then lost).
    #[default]
    FlowMod,
    /// One PACKET_OUT: of the buffer, or carrying the packet when unbuffered.
    PacketOut,
    /// A FLOW_MOD (no buffer) and a PACKET_OUT (of the buffer, or carrying the packet):
    /// what a learning switch sends for an unbuffered packet.
    FlowModPacketOut,
    /// What a learning switch does: a FLOW_MOD carrying the buffer id for a buffered
    /// packet, a FLOW_MOD and a PACKET_OUT carrying the packet for an unbuffered one.
    LikeLearningSwitch,
}

impl std::str::FromStr for Answer {
    type Err = String;

    fn from_str(s: &str) -> Result<Answer, String> {
        match s {
            "flow-mod" => Ok(Answer::FlowMod),
            "packet-out" => Ok(Answer::PacketOut),
            "flow-mod,packet-out" => Ok(Answer::FlowModPacketOut),
            "learning-switch" => Ok(Answer::LikeLearningSwitch),
            other => Err(format!(
                "unknown answer {other:?}: expected flow-mod, packet-out, flow-mod,packet-out or learning-switch"
            )),
        }
    }
}

/// How the responder behaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponderOptions {
    /// What each PACKET_IN is answered with.
    pub answer: Answer,
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
    /// PACKET_INs answered (whatever the messages).
    answers: AtomicU64,
    /// FLOW_MODs and PACKET_OUTs sent in answer to PACKET_INs.
    messages: AtomicU64,
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

    /// PACKET_INs answered so far (counted when the answer is queued on the connection;
    /// published once per turn).
    pub fn answers_sent(&self) -> u64 {
        self.counts.answers.load(Ordering::SeqCst)
    }

    /// FLOW_MODs and PACKET_OUTs sent so far in answer to PACKET_INs (noise not
    /// included; published once per turn).
    pub fn messages_sent(&self) -> u64 {
        self.counts.messages.load(Ordering::SeqCst)
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

/// Starts a responder on `listen` answering every PACKET_IN with a FLOW_MOD carrying its
/// buffer id, `delay` after it arrived; runs until `stop` is set.
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

/// The messages the responder sends, encoded once (xid 0, no buffer).
struct Canned {
    /// FLOW_MOD per version: index 0 for 1.0, 1 for 1.3.
    flow_mod: [Vec<u8>; 2],
    /// PACKET_OUT with no data per version (the packet's bytes are appended to it).
    packet_out: [Vec<u8>; 2],
    /// ECHO_REQUEST, BARRIER_REPLY and PORT_STATUS, one after another, per version.
    noise: [Vec<u8>; 2],
}

/// Where the buffer id is in a FLOW_MOD: 1.0 §5.3.3, 1.3 §7.3.4.1.
const FLOW_MOD_BUFFER_AT: [usize; 2] = [64, 32];
/// Where a PACKET_IN's data starts in 1.0 (§5.4.1): after header, buffer_id,
/// total_len, in_port, reason and a pad byte.
const PACKET_IN_DATA_AT_10: usize = 18;

impl Canned {
    fn new() -> Canned {
        let actions = [Action::output(PortNo::Physical(2))];
        let matching = Match {
            in_port: Some(1),
            eth_dst: Some(MacAddr([0x0a, 0, 1, 0, 0, 1])),
            ..Match::default()
        };
        let fm = FlowMod::add(matching, &actions).idle_timeout(10);
        let po = PacketOut::unbuffered(&[], PortNo::Physical(1), &actions);
        let encode = |v: Version, f: &dyn Fn(Version, &mut Vec<u8>)| {
            let mut out = Vec::new();
            f(v, &mut out);
            out
        };
        let fm_of = |v: Version, out: &mut Vec<u8>| {
            fm.encode(v, 0, out).expect("the canned FLOW_MOD encodes");
        };
        let po_of = |v: Version, out: &mut Vec<u8>| {
            po.encode(v, 0, out).expect("the canned PACKET_OUT encodes");
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
            flow_mod: [encode(Version::V1_0, &fm_of), encode(Version::V1_3, &fm_of)],
            packet_out: [encode(Version::V1_0, &po_of), encode(Version::V1_3, &po_of)],
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
    /// Answers held back: when they are due, the xid and the buffer id (the packet of
    /// an unbuffered one is not kept: its PACKET_OUT goes without data).
    held: VecDeque<(Instant, u32, u32)>,
    /// A readiness event said the peer closed (or the socket failed): read on to the
    /// end past a short read, since no later event reports a FIN that came with data.
    read_closed: bool,
    /// The connection ended (or misbehaved): dropped after this turn.
    closed: bool,
    /// Bytes were left unread (the per-turn cap): served again at once, since no new
    /// readiness event will come for them.
    more: bool,
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
    // Connections to serve this turn (kept across turns: no allocation per turn).
    let mut ready: Vec<usize> = Vec::new();
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
        let more = conns.iter().flatten().any(|c| c.more);
        let timeout = if more { Duration::ZERO } else { timeout };
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() != ErrorKind::Interrupted {
                return;
            }
        }
        ready.clear();
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
                        more: false,
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
        for (i, c) in conns.iter().enumerate() {
            if c.as_ref().is_some_and(|c| c.more) {
                ready.push(i);
            }
        }
        ready.sort_unstable();
        ready.dedup();
        for &i in &ready {
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

/// The most bytes read from one connection in one turn (the others get their turn; the
/// connection is served again at once). 1 MiB cost ~10% more CPU per PACKET_IN than
/// 128 KiB, measured: the answers to a megabyte of PACKET_INs overflow the L2 cache
/// before they are written.
const MAX_READ_PER_TURN: usize = 128 << 10;
/// Output queued on one connection above which it is not read until the socket takes
/// some (a switch that does not read its answers is slowed down, not buffered for).
const MAX_QUEUED: usize = 4 << 20;

/// What a turn counted, published to the shared counters once per turn (not per
/// message: the threads would fight over the cache line).
#[derive(Default)]
struct Tally {
    /// PACKET_INs read.
    packet_ins: u64,
    /// PACKET_INs answered.
    answers: u64,
    /// FLOW_MODs and PACKET_OUTs queued in answer.
    messages: u64,
}

impl Conn {
    fn turn(&mut self, opts: ResponderOptions, counts: &Counts, canned: &Canned) {
        let mut tally = Tally::default();
        // Write first: a turn woken because the socket takes bytes again may then read
        // what was left unread while the output was full.
        self.flush();
        let mut got = 0;
        let mut stopped_early = false;
        while !self.closed {
            if got >= MAX_READ_PER_TURN || self.wbuf.len() - self.wpos >= MAX_QUEUED {
                stopped_early = true;
                break;
            }
            let space = self.rbuf.free();
            match self.rbuf.read_from(&mut self.stream) {
                Ok(0) => self.closed = true,
                // A short read drained the socket; epoll (edge-triggered) reports new
                // bytes as a new event, so no read just to see WouldBlock (as the
                // controller does).
                Ok(n) if n < space && !self.read_closed => break,
                Ok(n) => got += n,
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock => break,
                    ErrorKind::Interrupted => {}
                    _ => self.closed = true,
                },
            }
            if self.rbuf.is_full() {
                self.frames(opts, canned, &mut tally);
            }
        }
        self.frames(opts, canned, &mut tally);
        let now = Instant::now();
        while let Some(&(due, xid, buffer_id)) = self.held.front() {
            if due > now {
                break;
            }
            self.held.pop_front();
            self.answer(xid, buffer_id, &[], opts, canned, &mut tally);
        }
        // Published before the answers go out, so that whoever has an answer can see
        // it counted.
        if tally.packet_ins > 0 {
            counts
                .packet_ins
                .fetch_add(tally.packet_ins, Ordering::Relaxed);
        }
        if tally.answers > 0 {
            counts.answers.fetch_add(tally.answers, Ordering::Relaxed);
            counts.messages.fetch_add(tally.messages, Ordering::Relaxed);
        }
        self.flush();
        // Left unread with room in the output: come back at once (no event will say so).
        self.more = stopped_early && !self.closed && self.wbuf.len() - self.wpos < MAX_QUEUED;
    }

    fn flush(&mut self) {
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
        } else if self.wpos >= MAX_QUEUED {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
    }

    /// Handles the whole messages read.
    fn frames(&mut self, opts: ResponderOptions, canned: &Canned, tally: &mut Tally) {
        let now = Instant::now();
        let mut at = 0;
        let rbuf = std::mem::take(&mut self.rbuf);
        while let Some(f) = next_frame(&rbuf.filled()[at..]) {
            let Ok(len) = f else {
                self.closed = true;
                break;
            };
            let m = &rbuf.filled()[at..at + len];
            let xid = u32::from_be_bytes([m[4], m[5], m[6], m[7]]);
            match m[1] {
                msg::PACKET_IN => {
                    tally.packet_ins += 1;
                    if !opts.silent && m.len() >= 12 {
                        let buffer_id = u32::from_be_bytes([m[8], m[9], m[10], m[11]]);
                        match opts.delay {
                            Some(d) => self.held.push_back((now + d, xid, buffer_id)),
                            None => {
                                let data = packet_in_data(m).unwrap_or(&[]);
                                self.answer(xid, buffer_id, data, opts, canned, tally)
                            }
                        }
                    }
                }
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
                        break;
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
                _ => {}
            }
            at += len;
        }
        let mut rbuf = rbuf;
        rbuf.consume(at);
        self.rbuf = rbuf;
    }

    /// Queues the answer to PACKET_IN `xid` (buffer `buffer_id`, packet `data`).
    fn answer(
        &mut self,
        xid: u32,
        buffer_id: u32,
        data: &[u8],
        opts: ResponderOptions,
        canned: &Canned,
        tally: &mut Tally,
    ) {
        let v = self.version.unwrap_or(0);
        let buffered = buffer_id != NO_BUFFER;
        // The FLOW_MOD's buffer id (if one is sent), and whether a PACKET_OUT follows.
        let (flow_mod, packet_out) = match opts.answer {
            Answer::FlowMod => (Some(buffer_id), false),
            Answer::PacketOut => (None, true),
            Answer::FlowModPacketOut => (Some(NO_BUFFER), true),
            Answer::LikeLearningSwitch if buffered => (Some(buffer_id), false),
            Answer::LikeLearningSwitch => (Some(NO_BUFFER), true),
        };
        if let Some(b) = flow_mod {
            let at = self.wbuf.len();
            self.wbuf.extend_from_slice(&canned.flow_mod[v]);
            let m = &mut self.wbuf[at..];
            m[4..8].copy_from_slice(&xid.to_be_bytes());
            let b_at = FLOW_MOD_BUFFER_AT[v];
            m[b_at..b_at + 4].copy_from_slice(&b.to_be_bytes());
            tally.messages += 1;
        }
        if packet_out {
            let at = self.wbuf.len();
            self.wbuf.extend_from_slice(&canned.packet_out[v]);
            if !buffered {
                self.wbuf.extend_from_slice(data);
            }
            let len = (self.wbuf.len() - at) as u16;
            let m = &mut self.wbuf[at..];
            m[2..4].copy_from_slice(&len.to_be_bytes());
            m[4..8].copy_from_slice(&xid.to_be_bytes());
            m[8..12].copy_from_slice(&buffer_id.to_be_bytes());
            tally.messages += 1;
        }
        if opts.noise {
            self.wbuf.extend_from_slice(&canned.noise[v]);
        }
        tally.answers += 1;
    }
}

/// The packet a PACKET_IN carries: after the fixed part in 1.0 (§5.4.1), after the
/// match (padded to 8) and 2 bytes of padding in 1.3 (§7.4.1). `None` if too short.
fn packet_in_data(m: &[u8]) -> Option<&[u8]> {
    let at = if m[0] == 0x01 {
        PACKET_IN_DATA_AT_10
    } else {
        let match_len = usize::from(u16::from_be_bytes([*m.get(26)?, *m.get(27)?]));
        24 + match_len.div_ceil(8) * 8 + 2
    };
    m.get(at..)
}
