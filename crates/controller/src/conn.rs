//! One switch connection on a worker: the read buffer it frames messages from, the
//! output buffer apps write into, the batched flush, backpressure, and the echo
//! keepalive.
//!
//! **Fair reading.** Each call to [`Conn::read_ready`] handles at most [`TURN_BUDGET`]
//! messages (the worker calls it once per turn for every ready switch, round-robin);
//! whole messages left in the read buffer wait there for the next turn.
//!
//! **Checking once.** Each message's header is checked once, where the stream is
//! framed ([`openflow::frame::next`]: length, the negotiated version, the limit), and the
//! [`Frame`] goes to the driver, which trusts it; messages read ahead for the prefetch
//! hints are checked then and not again when their turn comes.
//!
//! **Counting where made.** Every message is counted by type as it is appended, by the
//! [`Output`] the driver and the apps encode into (the type is known there), and by this
//! connection for its echo replies and requests; nothing walks the queue to count it.
//! Only the handshake's unwritten bytes, made by admission, are counted by reading
//! their headers, once, by the worker that takes the switch ([`count_handed_over`]).
//!
//! **Backpressure.** When the bytes queued for the switch pass
//! `backpressure.high_water` after a flush, the socket's READABLE interest is dropped:
//! the switch is *paused* and TCP slows it down. Once its queue drains to `low_water`
//! it is read again ([`Conn::flush`] says so, and the worker schedules a read, as
//! bytes may already wait and epoll is edge-triggered). A switch that takes no byte of
//! its queue for `stall_timeout` is closed as `stalled`; while its output is blocked,
//! echo keepalive stays silent (our requests have not reached it, or its replies are
//! not read). `output_buffer_limit` is the hard cap: past it, messages from elsewhere
//! are dropped and counted (see the worker), and a queue the worker itself pushed past
//! it closes the connection as `output_overflow`.
//!
//! Nothing here allocates per message in steady state: the read buffer is reused (it
//! grows only for a message bigger than it, up to the 64 KiB the header allows), the
//! output buffer keeps its capacity between flushes, and echo replies are built by
//! copying the request in place.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::{Interest, Registry, Token};
use openflow::frame::{self, Frame, FrameError};
use openflow::{msg_type, Version, HEADER_LEN};
use serde::{Deserialize, Serialize};
use tracing::debug;

use crate::counters::{SwitchCounters, TypeCounts};
use crate::driver::Driver;
use crate::info::Dpid;
use crate::output::Output;
use crate::tls::Stream;

/// Initial size of a connection's read buffer: a few PACKET_INs per read(2). A busy
/// switch's buffer grows to [`READ_BUF_MAX`].
pub const READ_BUF_INITIAL: usize = 8 * 1024;

/// Size a busy switch's read buffer grows to: a read that fills the buffer doubles it,
/// up to this (a switch that never sends much keeps its 8 KiB, so ten thousand quiet
/// switches cost 80 MB, not 640).
pub const READ_BUF_MAX: usize = 64 * 1024;

/// Messages handled per switch per worker turn. A budget in messages, not bytes: the
/// cost of a message is the apps' work on it, nearly the same for a 100-byte and
/// a 1500-byte PACKET_IN, and what must be even between switches is answers. 64 keeps
/// a turn over 64 busy switches near a millisecond, so no switch waits long for its
/// share, and is below what any switch's socket holds, so each busy switch does get
/// its whole budget (a switch sending 1400-byte packets has only so many in its
/// socket: a budget of 512 served such switches a fifth of what others got).
pub const TURN_BUDGET: usize = 64;

/// Output a busy switch accumulates before it is written. The per-write costs (the
/// TCP stack's path, on both ends of a loopback) were 40% of the learning switch's
/// time under cbench's load when every turn's 64 answers went out in a write(2) of
/// their own. A switch with more to handle next turn is now written once its queue
/// holds this much, or [`FLUSH_DELAY`] after its output was first held back, or when
/// it has nothing more to handle: several turns' answers in one write. A switch that
/// is not busy is written at the end of every turn, as before, so this adds no latency
/// below overload, and at most [`FLUSH_DELAY`] to answers that wait behind a backlog.
pub const FLUSH_BATCH: usize = 32 * 1024;

/// The longest a busy switch's output is held back (see [`FLUSH_BATCH`]).
pub const FLUSH_DELAY: Duration = Duration::from_millis(2);

/// read(2) calls per switch per turn at most (a message bigger than the read buffer
/// takes several): a bound on the turn even when no whole message comes.
pub const READ_BUDGET: usize = 32;

/// Echo keepalive (as Ryu's `Datapath`): after `interval` of silence from a switch an
/// ECHO_REQUEST goes out; a switch that leaves `max_unanswered` of them in a row
/// unanswered is dead and disconnected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KeepaliveConfig {
    /// Silence before an echo request is sent (and between unanswered ones).
    #[serde(with = "crate::units::duration")]
    pub interval: Duration,
    /// Echo requests left unanswered in a row before the switch is declared dead.
    pub max_unanswered: u32,
}

impl Default for KeepaliveConfig {
    fn default() -> KeepaliveConfig {
        KeepaliveConfig {
            interval: Duration::from_secs(5),
            max_unanswered: 3,
        }
    }
}

/// Backpressure (Netty's writability, Beacon's blocking writes): a switch whose queued
/// output passes `high_water` is no longer read (TCP then slows the switch down) until
/// the queue drains to `low_water`; only a switch that takes no byte of its queue for
/// `stall_timeout` is disconnected (`stalled`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackpressureConfig {
    /// Queued bytes past which the switch is no longer read. 1 MiB: about 5,000
    /// answers of a FLOW_MOD and a PACKET_OUT, which a live switch takes in milliseconds
    /// (about 1 ms at 10 Gb/s, 8 ms at 1 Gb/s), so pausing costs it little; and 1,000
    /// switches paused at once hold 1 GiB, not the hard cap each.
    pub high_water: usize,
    /// Queued bytes at or below which a paused switch is read again. A quarter of the
    /// high-water mark: the kernel has room for a good batch again, and a switch
    /// hovering at the mark does not flip between paused and read every turn.
    pub low_water: usize,
    /// Time a switch may leave its queue untouched (not one byte taken) before it is
    /// disconnected as `stalled`. 30 s: far longer than any live switch needs to take a
    /// byte (a busy one takes some every few milliseconds), short enough that a dead one
    /// does not hold its queue for minutes. Echo keepalive cannot tell, as the switch
    /// is not read while paused.
    #[serde(with = "crate::units::duration")]
    pub stall_timeout: Duration,
}

impl Default for BackpressureConfig {
    fn default() -> BackpressureConfig {
        BackpressureConfig {
            high_water: 1 << 20,
            low_water: 256 << 10,
            stall_timeout: Duration::from_secs(30),
        }
    }
}

/// The limits a connection enforces (from the config).
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// Header lengths above this close the connection (at most 65535).
    pub max_message_len: usize,
    /// The hard cap on queued bytes (see the module doc).
    pub output_buffer_limit: usize,
    /// When to pause reading, resume, and give up (the controller keeps
    /// `low_water < high_water <= output_buffer_limit`).
    pub backpressure: BackpressureConfig,
    /// When to send echo requests and when to give up on a silent switch.
    pub keepalive: KeepaliveConfig,
}

/// How many messages past the one being handled are announced to the driver's
/// [`Driver::prefetch`]: enough that the cache misses of several PACKET_INs are in
/// flight at once, each started several handlings before it is needed.
pub const PREFETCH_AHEAD: usize = 8;

/// The ring's slots: a power of two over `PREFETCH_AHEAD + 1`, so that its indices are
/// masked, not divided.
const RING: usize = (PREFETCH_AHEAD + 1).next_power_of_two();

/// Frames read ahead of the one being handled, their headers checked, in order: the
/// current one first (a ring on the stack: no allocation per turn).
struct Ahead<'a> {
    /// The frames, from `head`, `len` of them (the other slots hold stale frames or
    /// `None`).
    ring: [Option<Frame<'a>>; RING],
    /// Where the first is.
    head: usize,
    /// How many there are.
    len: usize,
}

impl<'a> Ahead<'a> {
    fn new() -> Ahead<'a> {
        Ahead {
            ring: [None; RING],
            head: 0,
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, f: Frame<'a>) {
        self.ring[(self.head + self.len) & (RING - 1)] = Some(f);
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<Frame<'a>> {
        if self.len == 0 {
            return None;
        }
        // Copied out, not taken: the slot is written again before it is read again.
        let f = self.ring[self.head];
        self.head = (self.head + 1) & (RING - 1);
        self.len -= 1;
        f
    }
}

/// The close reason of a stream that cannot be framed.
fn frame_refused(e: FrameError) -> CloseReason {
    match e {
        FrameError::BadLength { .. } => "bad_length",
        FrameError::WrongVersion { .. } => "wrong_version",
        FrameError::TooLong { .. } => "message_too_long",
    }
}

/// A connected switch (see the module doc).
#[derive(Debug)]
pub struct Conn<S> {
    /// The socket (or a TLS session over it), non-blocking, registered with the
    /// worker's poll.
    stream: Stream,
    /// The poll token (the worker's slot index).
    token: Token,
    /// Unique id of this connection, so "close the connection replaced by another with
    /// the same dpid" cannot hit a newer one.
    pub uid: u64,
    /// The datapath id, for logs and the dpid registry.
    pub dpid: Dpid,
    /// The peer's address, for logs and counters.
    pub peer: SocketAddr,
    /// The negotiated version: every inbound header must carry it.
    pub version: Version,
    /// The driver's per-switch state; `None` only while being torn down.
    pub state: Option<S>,
    /// Received bytes; unprocessed data is `rbuf[rstart..rend]`.
    rbuf: Vec<u8>,
    /// Start of unprocessed data in `rbuf`.
    rstart: usize,
    /// End of received data in `rbuf`.
    rend: usize,
    /// Bytes for the switch; `out[written..]` is still to be written.
    pub out: Vec<u8>,
    /// How much of `out` the kernel has taken.
    written: usize,
    /// Where the first whole message of `out` starts: bytes before it are the rest of a
    /// message cut by a partial write and dropped from the front.
    head: usize,
    /// The interest registered with the poll: READABLE unless paused, WRITABLE while
    /// the kernel buffer is full (so a change costs one `epoll_ctl`, and only then).
    interest: Interest,
    /// Not read because its queue passed the high-water mark (see the module doc).
    paused: bool,
    /// When the current pause began (for the paused-time counter and the log).
    paused_at: Instant,
    /// When the kernel last took a byte of `out`, or when `out` began to wait for it:
    /// the stall clock.
    progress_at: Instant,
    /// Whether the worker has this connection on its flush list for this turn.
    pub dirty: bool,
    /// Since when the worker has held back this connection's output to write it with
    /// more ([`FLUSH_BATCH`]); `None` when it is not holding any.
    pub held_since: Option<Instant>,
    /// Whether the worker has this connection on its list of reads for a turn (so a
    /// switch is served once per turn, however many events and leftovers it has).
    pub scheduled: bool,
    /// A readiness event said the peer closed its side (or the socket failed): read on
    /// to the end, past a short read (see [`Conn::read_ready`]). Sticky: a closed read
    /// side never reopens.
    pub read_closed: bool,
    /// When the next echo request is due (pushed back by every received byte).
    pub next_keepalive: Instant,
    /// Echo requests sent since the switch last said anything.
    unanswered: u32,
    /// xid of the next echo request (only our own echo replies use it; they never
    /// reach the driver).
    echo_xid: u32,
    /// This switch's counters.
    pub counters: SwitchCounters,
    /// The `switch` span (with the dpid) entered around all work for this switch, so
    /// every log line, the apps' included, names it.
    pub span: tracing::Span,
}

/// Why a connection is being closed, for logs and counters.
pub type CloseReason = &'static str;

impl<S> Conn<S> {
    /// A connection for a switch that just completed its handshake. `leftover` is what
    /// admission read past the handshake; `pending_out` what it could not write yet.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        stream: Stream,
        token: Token,
        uid: u64,
        dpid: Dpid,
        peer: SocketAddr,
        version: Version,
        state: S,
        leftover: &[u8],
        pending_out: Vec<u8>,
        msgs_out: TypeCounts,
        now: Instant,
        limits: &ConnLimits,
        span: tracing::Span,
    ) -> Conn<S> {
        let mut rbuf = vec![0u8; READ_BUF_INITIAL.max(leftover.len())];
        rbuf[..leftover.len()].copy_from_slice(leftover);
        Conn {
            stream,
            token,
            uid,
            dpid,
            peer,
            version,
            state: Some(state),
            rbuf,
            rstart: 0,
            rend: leftover.len(),
            out: pending_out,
            written: 0,
            head: 0,
            interest: Interest::READABLE,
            paused: false,
            paused_at: now,
            progress_at: now,
            dirty: false,
            held_since: None,
            scheduled: false,
            read_closed: false,
            next_keepalive: now + limits.keepalive.interval,
            unanswered: 0,
            echo_xid: 0,
            counters: SwitchCounters {
                msgs_out,
                ..SwitchCounters::default()
            },
            span,
        }
    }

    /// Registers the socket (READABLE) with the worker's poll.
    pub fn register(&mut self, registry: &Registry) -> io::Result<()> {
        registry.register(&mut self.stream, self.token, Interest::READABLE)
    }

    /// Deregisters the socket.
    pub fn deregister(&mut self, registry: &Registry) {
        let _ = registry.deregister(&mut self.stream);
    }

    /// The TLS version and cipher suite, for the log (`None` in clear text).
    pub fn tls_summary(&self) -> Option<String> {
        self.stream.tls_summary()
    }

    /// Bytes queued and not yet written.
    pub fn pending_out(&self) -> usize {
        self.out.len() - self.written
    }

    /// Whether the connection waits for WRITABLE before it can write more.
    pub fn blocked(&self) -> bool {
        self.interest.is_writable()
    }

    /// Whether the switch is not read (its queue passed the high-water mark).
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Whether the switch has taken no byte of its queue for `stall_timeout`: a dead
    /// consumer, as against a slow one.
    pub fn stalled(&self, now: Instant, limits: &ConnLimits) -> bool {
        self.blocked()
            && now.saturating_duration_since(self.progress_at) >= limits.backpressure.stall_timeout
    }

    /// When [`stalled`](Self::stalled) becomes true if nothing is written meanwhile.
    pub fn stall_deadline(&self, limits: &ConnLimits) -> Option<Instant> {
        self.blocked()
            .then(|| self.progress_at + limits.backpressure.stall_timeout)
    }

    /// How long the queue has waited without the kernel taking a byte (for the log).
    pub fn waited(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.progress_at)
    }

    /// Handles up to [`TURN_BUDGET`] messages: first those already in the read buffer,
    /// then what the socket holds, until it would block, handing each to `driver` (or
    /// answering it, for echo). `Ok(true)` when the budget ran out first or the queue
    /// passed the high-water mark: call again next turn, after the flush (with
    /// edge-triggered readiness no new event will come). A paused connection reads
    /// nothing (`Ok(false)`: the flush that resumes it says so). `Err` closes the
    /// connection with that reason.
    pub fn read_ready(
        &mut self,
        driver: &impl Driver<State = S>,
        now: Instant,
        limits: &ConnLimits,
    ) -> Result<bool, CloseReason> {
        if self.paused {
            return Ok(false);
        }
        let turn = self.read_turn(driver, now, limits);
        if turn.is_ok() {
            if let Some(state) = self.state.as_mut() {
                let mut out = Output::counted(&mut self.out, &mut self.counters.msgs_out);
                driver.turn_end(state, &mut out, now);
            }
        }
        turn
    }

    /// The connection's output queue, counted, the driver's state for it, and the
    /// switch's span (to enter around the driver's work).
    pub fn output(&mut self) -> (Output<'_>, Option<&mut S>, &tracing::Span) {
        let out = Output::counted(&mut self.out, &mut self.counters.msgs_out);
        (out, self.state.as_mut(), &self.span)
    }

    /// [`Conn::read_ready`] but the turn's end.
    fn read_turn(
        &mut self,
        driver: &impl Driver<State = S>,
        now: Instant,
        limits: &ConnLimits,
    ) -> Result<bool, CloseReason> {
        let mut budget = TURN_BUDGET;
        // Bytes handed over by admission or left by the last turn's budget go first.
        self.process(driver, now, limits, &mut budget)?;
        for _ in 0..READ_BUDGET {
            if budget == 0 || self.pending_out() > limits.backpressure.high_water {
                return Ok(true);
            }
            if self.rend == self.rbuf.len() {
                self.make_room();
            }
            let space = self.rbuf.len() - self.rend;
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err("closed_by_peer"),
                Ok(n) => {
                    self.rend += n;
                    // A read that filled the buffer: a busy switch. Its buffer doubles,
                    // up to READ_BUF_MAX, so that it takes a turn's budget in a few
                    // reads (see READ_BUF_MAX).
                    if n == space && self.rbuf.len() < READ_BUF_MAX {
                        let grown = (self.rbuf.len() * 2).min(READ_BUF_MAX);
                        self.rbuf.resize(grown, 0);
                    }
                    self.counters.bytes_in += n as u64;
                    self.counters.reads += 1;
                    // Any byte from the switch proves it alive.
                    self.unanswered = 0;
                    self.next_keepalive = now + limits.keepalive.interval;
                    self.process(driver, now, limits, &mut budget)?;
                    // A short read took everything the socket held. Epoll is
                    // edge-triggered and reports bytes arriving from now on as a new
                    // event, so the read that would only say WouldBlock is skipped: one
                    // system call less per turn, before the replies are flushed (Tokio
                    // does the same). Whole messages the budget left in the buffer
                    // still need another turn (not a part of one: its rest will come
                    // with an event). Not when the event also said the peer
                    // closed: the FIN came with the bytes, no event will report it
                    // again, and only the next read (0) tells (Tokio keeps read-closed
                    // readiness apart for the same reason). Over TLS a short read
                    // only emptied the session's plaintext: read on to WouldBlock.
                    if n < space && !self.read_closed && self.stream.drains_on_short_read() {
                        return Ok(budget == 0 && self.whole_message_buffered());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err("connection_reset")
                }
                Err(e) if e.kind() == io::ErrorKind::InvalidData => return Err("tls_error"),
                Err(_) => return Err("read_error"),
            }
        }
        Ok(true)
    }

    /// Whether the read buffer holds at least one whole message not handled yet.
    fn whole_message_buffered(&self) -> bool {
        let buf = &self.rbuf[self.rstart..self.rend];
        buf.len() >= HEADER_LEN && msg_len(buf) <= buf.len()
    }

    /// Makes room at the end of a full read buffer: move the unprocessed bytes to the
    /// front, or, when a single message fills it, grow to the message's length.
    fn make_room(&mut self) {
        if self.rstart > 0 {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
            return;
        }
        let need = if self.rend >= HEADER_LEN {
            u16::from_be_bytes([self.rbuf[2], self.rbuf[3]]) as usize
        } else {
            HEADER_LEN
        };
        // `process` has already refused lengths over the limit, so this is bounded by
        // the 16-bit length field.
        let new_len = need.max(self.rbuf.len() * 2).min(u16::MAX as usize + 1);
        self.rbuf.resize(new_len.max(self.rbuf.len() + 1), 0);
    }

    /// Frames and handles the whole messages in the read buffer, `budget` of them at
    /// most (decremented). Each header is checked here, once, for the whole path
    /// ([`frame::next`]): the driver is given only frames of the negotiated version,
    /// within the limit, whole, and trusts them.
    fn process(
        &mut self,
        driver: &impl Driver<State = S>,
        now: Instant,
        limits: &ConnLimits,
        budget: &mut usize,
    ) -> Result<(), CloseReason> {
        let Conn {
            rbuf,
            rstart,
            rend,
            out,
            counters,
            state,
            version,
            ..
        } = self;
        let Some(state) = state.as_mut() else {
            return Ok(());
        };
        let (version, max) = (*version, limits.max_message_len);
        let buf = &rbuf[..*rend];
        // Frames framed (checked) but not handled yet, the current one first; the next
        // to frame starts at `ahead`.
        let mut framed = Ahead::new();
        let mut ahead = *rstart;
        while *budget > 0 {
            // Frame up to PREFETCH_AHEAD past this one and announce their PACKET_INs:
            // their table lookups' cache misses then overlap the work of the ones
            // before them (`Builder::prefetch_packet_in`). A header that cannot be
            // framed stops the look ahead; it is refused when its turn comes.
            while framed.len <= PREFETCH_AHEAD {
                match frame::next(&buf[ahead..], version, max) {
                    Ok(Some(f)) => {
                        if f.msg_type() == msg_type::PACKET_IN && framed.len > 0 {
                            driver.prefetch(state, f);
                        }
                        ahead += f.len();
                        framed.push(f);
                    }
                    Ok(None) => break,
                    Err(e) if framed.len == 0 => return Err(frame_refused(e)),
                    Err(_) => break,
                }
            }
            let Some(frame) = framed.pop() else {
                break;
            };
            let (wire, t) = (version.wire(), frame.msg_type());
            counters.msgs_in.record(wire, t);
            *budget -= 1;
            match t {
                msg_type::ECHO_REQUEST => {
                    // The reply is the request with its type changed: same xid, data.
                    let at = out.len();
                    out.extend_from_slice(frame.bytes());
                    out[at + 1] = msg_type::ECHO_REPLY;
                    counters.msgs_out.record(wire, msg_type::ECHO_REPLY);
                }
                msg_type::ECHO_REPLY => {}
                _ => {
                    if t == msg_type::PACKET_IN {
                        counters.packet_ins += 1;
                    }
                    let mut out = Output::counted(out, &mut counters.msgs_out);
                    driver.handle(state, frame, &mut out, now);
                }
            }
            *rstart += frame.len();
        }
        if *rstart == *rend {
            *rstart = 0;
            *rend = 0;
        }
        Ok(())
    }

    /// The keepalive check: sends an echo request after `interval` of silence, and
    /// gives up after `max_unanswered` of them. Not while the output is blocked (paused
    /// or waiting for the kernel): the switch has not received our requests, or we are
    /// not reading its replies, so its silence says nothing; the stall timeout judges it.
    pub fn keepalive(&mut self, now: Instant, limits: &ConnLimits) -> Result<(), CloseReason> {
        if now < self.next_keepalive {
            return Ok(());
        }
        if self.paused || self.blocked() {
            self.next_keepalive = now + limits.keepalive.interval;
            return Ok(());
        }
        if self.unanswered >= limits.keepalive.max_unanswered {
            return Err("dead_peer");
        }
        self.unanswered += 1;
        self.echo_xid = self.echo_xid.wrapping_add(1);
        self.next_keepalive = now + limits.keepalive.interval;
        self.out
            .extend_from_slice(&[self.version.wire(), msg_type::ECHO_REQUEST, 0, 8]);
        self.out.extend_from_slice(&self.echo_xid.to_be_bytes());
        self.counters
            .msgs_out
            .record(self.version.wire(), msg_type::ECHO_REQUEST);
        Ok(())
    }

    /// Writes what the kernel takes (Beacon's Alg. 2/3): the rest stays queued with
    /// WRITABLE registered. Then backpressure: past the high-water mark READABLE is
    /// dropped (paused); at or below the low-water mark it comes back, and `Ok(true)`
    /// tells the worker to read the switch (bytes may already wait, and epoll is
    /// edge-triggered).
    pub fn flush(
        &mut self,
        registry: &Registry,
        limits: &ConnLimits,
        now: Instant,
    ) -> Result<bool, CloseReason> {
        let queued = self.pending_out();
        if queued > self.counters.max_queued {
            self.counters.max_queued = queued;
        }
        // Over TLS, the records the socket did not take last time go first.
        if self.stream.backlog() {
            match self.stream.send_backlog() {
                Ok(()) => {
                    if !self.stream.backlog() {
                        self.progress_at = now;
                    }
                }
                Err(_) => return Err("write_error"),
            }
        }
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]) {
                Ok(0) => return Err("write_zero"),
                Ok(n) => {
                    self.written += n;
                    self.counters.bytes_out += n as u64;
                    self.counters.writes += 1;
                    self.progress_at = now;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    return Err("connection_reset")
                }
                Err(_) => return Err("write_error"),
            }
        }
        if self.written == self.out.len() {
            self.out.clear();
            self.written = 0;
            self.head = 0;
        } else if self.pending_out() > limits.output_buffer_limit {
            return Err("output_overflow");
        } else if self.written > self.out.len() / 2 {
            // Keep the queue at the front so it does not creep through the capacity.
            let mut boundary = self.head;
            while boundary < self.written {
                boundary += msg_len(&self.out[boundary..]).max(HEADER_LEN);
            }
            self.out.drain(..self.written);
            self.head = boundary - self.written;
            self.written = 0;
        }
        let pending = self.pending_out();
        let bp = &limits.backpressure;
        let mut resumed = false;
        if !self.paused && pending > bp.high_water {
            self.paused = true;
            self.paused_at = now;
            self.counters.pauses += 1;
            debug!(dpid = %self.dpid(), queued = pending, "switch paused: its queue passed the high-water mark");
        } else if self.paused && pending <= bp.low_water {
            self.paused = false;
            let took = now.saturating_duration_since(self.paused_at);
            self.counters.paused_for += took;
            resumed = true;
            debug!(dpid = %self.dpid(), paused_ms = took.as_millis() as u64, "switch resumed");
        }
        if pending > 0 && !self.blocked() {
            // The queue starts waiting for the kernel now: the stall clock starts.
            self.progress_at = now;
        }
        // Encrypted records the socket has not taken yet wait for WRITABLE too.
        let want = match (self.paused, pending > 0 || self.stream.backlog()) {
            (false, false) => Interest::READABLE,
            (false, true) => Interest::READABLE | Interest::WRITABLE,
            // Paused implies a queue above the low-water mark, so never empty.
            (true, _) => Interest::WRITABLE,
        };
        if want != self.interest {
            self.interest = want;
            registry
                .reregister(&mut self.stream, self.token, want)
                .map_err(|_| "register_error")?;
        }
        Ok(resumed)
    }

    /// Counts a message from elsewhere dropped because the queue is at the hard cap;
    /// true when it deserves a warning (the 1st, 2nd, 4th, 8th... of this connection:
    /// loud, but not a line per message).
    pub fn count_overflow_drop(&mut self) -> bool {
        self.counters.drops += 1;
        self.counters.overflow_drops += 1;
        self.counters.overflow_drops.is_power_of_two()
    }

    /// Time paused so far, the current pause included.
    pub fn paused_total(&self, now: Instant) -> Duration {
        let current = if self.paused {
            now.saturating_duration_since(self.paused_at)
        } else {
            Duration::ZERO
        };
        self.counters.paused_for + current
    }

    /// Messages not completely written (lost if the connection closes now).
    pub fn queued_messages(&self) -> u64 {
        let mut n = u64::from(self.written < self.head);
        let mut at = self.head;
        while at + HEADER_LEN <= self.out.len() {
            let len = msg_len(&self.out[at..]);
            if len < HEADER_LEN {
                break;
            }
            if at + len > self.written {
                n += 1;
            }
            at += len;
        }
        n
    }

    /// A log-friendly dpid.
    pub fn dpid(&self) -> Dpid {
        self.dpid
    }

    /// Shuts the socket down; the driver's state is returned for switch-removed.
    pub fn close(mut self, registry: &Registry) -> Option<S> {
        self.deregister(registry);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        self.state.take()
    }
}

/// The messages of `out`, whole messages made elsewhere (the handshake's unwritten
/// bytes, made by admission), counted by type from their headers.
pub fn count_handed_over(out: &[u8]) -> TypeCounts {
    let mut counts = TypeCounts::default();
    let mut at = 0;
    while at + HEADER_LEN <= out.len() {
        let h = &out[at..];
        let len = msg_len(h);
        if len < HEADER_LEN {
            // Not a header: our own encoders never do this; stop counting.
            break;
        }
        counts.record(h[0], h[1]);
        at += len;
    }
    counts
}

/// The header length of the message at the front of `b` (which holds at least a header).
#[inline]
fn msg_len(b: &[u8]) -> usize {
    u16::from_be_bytes([b[2], b[3]]) as usize
}
