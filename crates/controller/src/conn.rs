//! One switch connection on a worker: the read buffer it frames messages from, the
//! bounded output buffer apps write into, the batched flush, and the echo keepalive.
//!
//! Nothing here allocates per message in steady state: the read buffer is reused (it
//! grows only for a message bigger than it, up to the 64 KiB the header allows), the
//! output buffer keeps its capacity between flushes, and echo replies are built by
//! copying the request in place.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use openflow::{Version, HEADER_LEN};

use crate::config::KeepaliveConfig;
use crate::counters::SwitchCounters;
use crate::info::Dpid;

/// Initial size of a connection's read buffer: a few PACKET_INs per read(2).
pub const READ_BUF_INITIAL: usize = 8 * 1024;

/// read(2) calls per readiness event before the worker moves on to other switches (the
/// connection is revisited next turn), so one busy switch cannot starve the rest.
pub const READ_BUDGET: usize = 32;

/// `ofp_type` values shared by 1.0 and 1.3 that a connection handles itself.
const ECHO_REQUEST: u8 = 2;
const ECHO_REPLY: u8 = 3;
const PACKET_IN: u8 = 10;

/// The limits a connection enforces (from the config).
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// Header lengths above this close the connection (at most 65535).
    pub max_message_len: usize,
    /// Bytes queued for a switch beyond this close it as a slow consumer.
    pub output_buffer_limit: usize,
    /// When to send echo requests and when to give up on a silent switch.
    pub keepalive: KeepaliveConfig,
}

/// What a connection's event handling calls for each message that is not echo.
pub trait FrameSink<S> {
    /// One whole message from the switch; replies go to `out`.
    fn frame(&self, state: &mut S, frame: &[u8], out: &mut Vec<u8>, now: Instant);
}

/// A connected switch (see the module doc).
#[derive(Debug)]
pub struct Conn<S> {
    /// The socket, non-blocking, registered with the worker's poll.
    stream: TcpStream,
    /// The poll token (the worker's slot index).
    token: Token,
    /// Unique id of this connection, so "close the connection replaced by another with
    /// the same dpid" cannot hit a newer one.
    pub uid: u64,
    /// The datapath id, for logs and the dpid registry.
    pub dpid: u64,
    /// The peer's address, for logs and counters.
    pub peer: SocketAddr,
    /// The negotiated version: every inbound header must carry it.
    pub version: Version,
    /// The app pipeline's per-switch state; `None` only while being torn down.
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
    /// How much of `out` has been counted by message type (a message boundary).
    counted: usize,
    /// Where the first whole message of `out` starts: bytes before it are the rest of a
    /// message cut by a partial write and dropped from the front.
    head: usize,
    /// Whether WRITABLE is registered (only while the kernel buffer is full).
    writable_interest: bool,
    /// Whether the worker has this connection on its flush list for this turn.
    pub dirty: bool,
    /// A readiness event said the peer closed its side (or the socket failed): read on
    /// to the end, past a short read (see [`Conn::read_ready`]). Sticky: a closed read
    /// side never reopens.
    pub read_closed: bool,
    /// When the next echo request is due (pushed back by every received byte).
    pub next_keepalive: Instant,
    /// Echo requests sent since the switch last said anything.
    unanswered: u32,
    /// xid of the next echo request (only our own echo replies use it; they never
    /// reach the pipeline).
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
        stream: TcpStream,
        token: Token,
        uid: u64,
        dpid: u64,
        peer: SocketAddr,
        version: Version,
        state: S,
        leftover: &[u8],
        pending_out: Vec<u8>,
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
            counted: 0,
            head: 0,
            writable_interest: false,
            dirty: false,
            read_closed: false,
            next_keepalive: now + limits.keepalive.interval,
            unanswered: 0,
            echo_xid: 0,
            counters: SwitchCounters::default(),
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

    /// Bytes queued and not yet written.
    pub fn pending_out(&self) -> usize {
        self.out.len() - self.written
    }

    /// Whether the connection waits for WRITABLE before it can write more.
    pub fn blocked(&self) -> bool {
        self.writable_interest
    }

    /// Reads until the socket would block, handing every whole message to `sink` (or
    /// answering it, for echo). `Ok(true)` when the read budget ran out first (call
    /// again next turn: with edge-triggered readiness no new event will come). `Err`
    /// closes the connection with that reason.
    pub fn read_ready(
        &mut self,
        sink: &impl FrameSink<S>,
        now: Instant,
        limits: &ConnLimits,
    ) -> Result<bool, CloseReason> {
        // Bytes handed over by admission are processed before anything new is read.
        self.process(sink, now, limits)?;
        for _ in 0..READ_BUDGET {
            if self.rend == self.rbuf.len() {
                self.make_room();
            }
            let space = self.rbuf.len() - self.rend;
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err("closed_by_peer"),
                Ok(n) => {
                    self.rend += n;
                    self.counters.bytes_in += n as u64;
                    // Any byte from the switch proves it alive.
                    self.unanswered = 0;
                    self.next_keepalive = now + limits.keepalive.interval;
                    self.process(sink, now, limits)?;
                    if self.pending_out() > limits.output_buffer_limit {
                        // Stop reading from a switch whose replies pile up: if the
                        // kernel already refuses more it is a slow consumer; otherwise
                        // flush first (end of turn) and read again next turn.
                        if self.writable_interest {
                            return Err("slow_consumer");
                        }
                        return Ok(true);
                    }
                    // A short read took everything the socket held. Epoll is
                    // edge-triggered and reports bytes arriving from now on as a new
                    // event, so the read that would only say WouldBlock is skipped: one
                    // system call less per turn, before the replies are flushed (Tokio
                    // does the same). Not when the event also said the peer closed: the
                    // FIN came with the bytes, no event will report it again, and only
                    // the next read (0) tells (Tokio keeps read-closed readiness apart
                    // for the same reason).
                    if n < space && !self.read_closed {
                        return Ok(false);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err("connection_reset")
                }
                Err(_) => return Err("read_error"),
            }
        }
        Ok(true)
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

    /// Frames and handles every whole message in the read buffer.
    fn process(
        &mut self,
        sink: &impl FrameSink<S>,
        now: Instant,
        limits: &ConnLimits,
    ) -> Result<(), CloseReason> {
        let wire = self.version.wire();
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        while self.rend - self.rstart >= HEADER_LEN {
            let buf = &self.rbuf[self.rstart..self.rend];
            let version = buf[0];
            let msg_type = buf[1];
            let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
            // OpenFlow 1.3.x §7.1: "length: Length including this ofp_header".
            if len < HEADER_LEN {
                return Err("bad_length");
            }
            if version != wire {
                return Err("wrong_version");
            }
            if len > limits.max_message_len {
                return Err("message_too_long");
            }
            if buf.len() < len {
                break;
            }
            let frame = &buf[..len];
            self.counters.msgs_in.record(version, msg_type);
            match msg_type {
                ECHO_REQUEST => {
                    // The reply is the request with its type changed: same xid, data.
                    let at = self.out.len();
                    self.out.extend_from_slice(frame);
                    self.out[at + 1] = ECHO_REPLY;
                }
                ECHO_REPLY => {}
                _ => {
                    if msg_type == PACKET_IN {
                        self.counters.packet_ins += 1;
                    }
                    sink.frame(state, frame, &mut self.out, now);
                }
            }
            self.rstart += len;
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        Ok(())
    }

    /// The keepalive check: sends an echo request after `interval` of silence, and
    /// gives up after `max_unanswered` of them.
    pub fn keepalive(&mut self, now: Instant, limits: &ConnLimits) -> Result<(), CloseReason> {
        if now < self.next_keepalive {
            return Ok(());
        }
        if self.unanswered >= limits.keepalive.max_unanswered {
            return Err("dead_peer");
        }
        self.unanswered += 1;
        self.echo_xid = self.echo_xid.wrapping_add(1);
        self.next_keepalive = now + limits.keepalive.interval;
        self.out
            .extend_from_slice(&[self.version.wire(), ECHO_REQUEST, 0, 8]);
        self.out.extend_from_slice(&self.echo_xid.to_be_bytes());
        Ok(())
    }

    /// Writes what the kernel takes (Beacon's Alg. 2/3): the rest stays queued with
    /// WRITABLE registered, and the interest is dropped once the queue drains.
    pub fn flush(&mut self, registry: &Registry, limits: &ConnLimits) -> Result<(), CloseReason> {
        self.count_out();
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]) {
                Ok(0) => return Err("write_zero"),
                Ok(n) => {
                    self.written += n;
                    self.counters.bytes_out += n as u64;
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
            self.counted = 0;
            self.head = 0;
            if self.writable_interest {
                self.writable_interest = false;
                registry
                    .reregister(&mut self.stream, self.token, Interest::READABLE)
                    .map_err(|_| "register_error")?;
            }
            return Ok(());
        }
        if self.pending_out() > limits.output_buffer_limit {
            return Err("slow_consumer");
        }
        if self.written > self.out.len() / 2 {
            // Keep the queue at the front so it does not creep through the capacity.
            let mut boundary = self.head;
            while boundary < self.written {
                boundary += msg_len(&self.out[boundary..]).max(HEADER_LEN);
            }
            self.out.drain(..self.written);
            self.counted -= self.written;
            self.head = boundary - self.written;
            self.written = 0;
        }
        if !self.writable_interest {
            self.writable_interest = true;
            registry
                .reregister(
                    &mut self.stream,
                    self.token,
                    Interest::READABLE | Interest::WRITABLE,
                )
                .map_err(|_| "register_error")?;
        }
        Ok(())
    }

    /// Counts the messages appended to `out` since the last call, by type.
    fn count_out(&mut self) {
        while self.counted + HEADER_LEN <= self.out.len() {
            let h = &self.out[self.counted..];
            let len = msg_len(h);
            if len < HEADER_LEN {
                // Not a header: our own encoders never do this; stop counting.
                self.counted = self.out.len();
                break;
            }
            self.counters.msgs_out.record(h[0], h[1]);
            self.counted += len;
        }
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
        Dpid(self.dpid)
    }

    /// Shuts the socket down; the pipeline state is returned for switch-removed.
    pub fn close(mut self, registry: &Registry) -> Option<S> {
        self.deregister(registry);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        self.state.take()
    }
}

/// The header length of the message at the front of `b` (which holds at least a header).
#[inline]
fn msg_len(b: &[u8]) -> usize {
    u16::from_be_bytes([b[2], b[3]]) as usize
}
