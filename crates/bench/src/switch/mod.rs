//! One emulated switch of `pharos bench controller`: the bytes it sends, and what it does
//! with what the controller sends.
//!
//! Nothing here encodes on the hot path. A switch owns one pre-encoded PACKET_IN (its
//! [`Template`]) and patches three things per packet: the xid, the buffer id and the
//! Ethernet source MAC. The replies a switch gives during the handshake are encoded once
//! too, with only the xid patched.
//!
//! ## The frame
//!
//! As in cbench, every PACKET_IN carries an Ethernet/IPv4/UDP frame (60 bytes, the
//! Ethernet minimum) between two of the switch's `macs` addresses: host `i` is
//! `02:DD:DD:II:II:II` (`DDDD` = the low 16 bits of the dpid, `IIIIII` = the index), lives
//! behind port 1 (even `i`) or port 2 (odd `i`), and its packets go to its partner
//! ([`partner`]: `i ^ 1`, or `i - 1` for the last of an odd count), which lives behind
//! the other port. So a learning switch that has learned the addresses installs a flow
//! for every packet (it neither floods nor drops). PACKET_IN number `n` comes from host
//! `n % macs`, in on that host's port. With one address there is no partner: the
//! packets go to `0a:DD:DD:00:00:01`, an address never announced (flooded). Each host
//! has its own IPv4 address too ([`host_ip`]), the one it announces and sends from
//! (cbench's frames all carry the same two, which a host tracker would see as one
//! address moving between thousands of hosts).
//!
//! ## The learning phase
//!
//! Before the loops (unless `--no-learn`), every switch announces each of its `macs`
//! addresses once, from its port: a gratuitous ARP reply in an unbuffered PACKET_IN,
//! written as fast as the socket takes them, then an ECHO_REQUEST. A controller answers
//! that echo after it has handled every announcement before it (one connection is
//! handled in order), so its ECHO_REPLY says the controller has learned them all. cbench
//! announces one address per switch this way (its destination); announcing every source
//! address lets a run measure the controller's steady state (forwarding between known
//! hosts) from the first loop, and is the burst a switch gives after a reconnect.
//!
//! ## Counting
//!
//! The xid of PACKET_IN number `n` is its sequence number, `FIRST_SEQ + n % 2^30` (far
//! from the small xids controllers number their own requests with). Its buffer id is the
//! same number, as from a switch that buffered the packet (cbench's PACKET_INs carry
//! buffer ids too), unless `--no-buffer`: then `NO_BUFFER` (the frame is all in the
//! message, so the controller must send it back in a PACKET_OUT). The frame carries the
//! sequence number too (the first four bytes of its UDP payload), so a PACKET_OUT that
//! sends the packet back names it as well. See [`Counting`] and [`answered_seq`] for how
//! answers are matched to PACKET_INs.

//! ## Layout
//!
//! ```text
//! mod.rs    Switch: its state, the handshake, reading and handling what comes in
//! traffic   what it sends once ready: PACKET_INs (window or unbounded), timeouts,
//!           announcements, port statistics and relays when wired, the writes
//! hosts     the hosts behind each switch: ports, addresses, partners, their frame
//! template  the pre-encoded PACKET_IN and the message types
//! replies   the handshake replies, encoded once
//! counting  sequence numbers, the counting rules, what an answer names
//! framing   the read buffer and where the next message ends
//! ```

mod counting;
mod framing;
mod hosts;
mod replies;
mod template;
mod traffic;

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use openflow::of13::multipart::{MultipartReply, MultipartReplyBody};
use openflow::{of10, of13, Message, Version};

pub use counting::{answered_seq, Counting, FIRST_SEQ};
use counting::{seq_of, LEARN_DONE_XID, RING, SPAN};
pub(crate) use framing::{next_frame, ReadBuf};
pub use hosts::{dst_mac, host_ip, host_mac, host_port, partner};
use replies::{Replies, Reply};
pub(crate) use template::msg;
use template::{encode, packet_in, patch_xid};
pub use template::{Template, NO_BUFFER};

/// Where a switch is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// TCP connecting, or the handshake not finished.
    Connecting,
    /// Handshake done: may send PACKET_INs.
    Ready,
    /// The connection is gone (see [`Switch::closed`]).
    Closed,
}

/// What the run asks of the switches now (set by the coordinator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Connect and handshake; send no PACKET_IN.
    Connect,
    /// Announce every address once, then an ECHO_REQUEST; count nothing.
    Learn,
    /// Send PACKET_INs and count answers.
    Run,
    /// Send no more PACKET_INs; count the answers still coming.
    Drain,
}

/// How a switch behaves, the same for every switch of a run.
#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    /// OpenFlow version offered and spoken.
    pub version: Version,
    /// PACKET_INs in flight at most (1 in latency mode); 0: unbounded (cbench's
    /// throughput mode: keep the socket full, whatever is in flight).
    pub window: usize,
    /// Distinct source MACs cycled through.
    pub macs: u32,
    /// The counting rule.
    pub counting: Counting,
    /// PACKET_INs carry a buffer id (as from a switch that buffered the packet, like
    /// cbench's); otherwise `NO_BUFFER`.
    pub buffered: bool,
    /// Record round trips.
    pub record_latency: bool,
    /// A PACKET_IN unanswered this long is given up (so a controller that drops some
    /// does not stall the window for ever). Not in unbounded mode.
    pub response_timeout: Duration,
    /// With no BARRIER_REQUEST after FEATURES_REPLY, the switch is ready after this.
    pub settle: Duration,
    /// Ports the switch has, numbered from 1 (4 unless `--topology` needs more).
    pub ports: u32,
    /// Wired into a network (`--topology`, see [`crate::topo`]): LLDP PACKET_OUTs are
    /// kept in [`Switch::relays`] for the run to hand to the peer, and port statistics
    /// are answered (with counters that grow at a steady rate per port).
    pub wired: bool,
}

/// A PACKET_IN in flight (windowed mode).
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// Its sequence number (xid).
    seq: u32,
    /// When it was queued (the turn's clock), for the round trip and the timeout.
    sent: Instant,
    /// Answered, but not at the front yet.
    answered: bool,
}

/// What a switch has counted so far (totals since the first loop).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// PACKET_INs sent.
    pub packet_ins: u64,
    /// FLOW_MODs and PACKET_OUTs received during the run (cbench's responses).
    pub responses: u64,
    /// Of those, PACKET_OUTs (the rest are FLOW_MODs): which messages a controller
    /// answers with, to answer with the same ones from the responder.
    pub packet_outs: u64,
    /// PACKET_INs answered: matched by what the answer names (see [`answered_seq`]),
    /// each once; in windowed mode under cbench's rule, the oldest in flight per response.
    pub answered: u64,
    /// PACKET_INs given up after the response timeout.
    pub timeouts: u64,
    /// Other messages from the controller during the run (echoes, barriers, errors...).
    pub other: u64,
    /// ERROR messages received, ever.
    pub errors: u64,
    /// PACKET_INs in flight now.
    pub in_flight: u64,
    /// Announcements sent in the learning phase.
    pub announced: u64,
    /// FLOW_MODs and PACKET_OUTs received in the learning phase (answers to
    /// announcements; never counted as responses).
    pub learn_responses: u64,
}

impl Totals {
    /// The count the report uses under `counting`.
    pub fn counted(&self, counting: Counting) -> u64 {
        match counting {
            Counting::Cbench => self.responses,
            Counting::PerPacketIn => self.answered,
        }
    }
}

/// The largest output kept pending before a switch stops adding PACKET_INs: cbench's
/// 64 KiB. (256 KiB cost ~20% more CPU per message, measured: the buffer no longer
/// stays in the L2 cache between filling and writing.)
const MAX_PENDING_OUT: usize = 64 * 1024;
/// The most bytes read from one switch in one turn (fairness between switches; small
/// enough for what is read to stay in cache until it is handled).
const MAX_READ_PER_TURN: usize = 128 * 1024;
/// The most bytes written to one switch in one turn in unbounded mode and while
/// announcing (fairness between switches; the next turn goes on at once).
const MAX_WRITE_PER_TURN: usize = 512 * 1024;

/// One emulated switch on a connection that may be a `std` or a `mio` stream.
pub struct Switch<S> {
    /// Its datapath id.
    pub dpid: u64,
    /// The connection to the controller.
    stream: S,
    /// How it behaves (the run's settings).
    behaviour: Behaviour,
    /// Its PACKET_IN, patched per packet.
    template: Template,
    /// Its handshake replies, patched per reply.
    replies: Replies,
    /// Where it is.
    pub state: State,
    /// Why the connection ended, once it has.
    pub closed: Option<String>,
    /// Bytes read, not yet framed.
    rbuf: ReadBuf,
    /// Bytes to write, from `wpos`.
    wbuf: Vec<u8>,
    /// How much of `wbuf` the socket has taken.
    wpos: usize,
    /// The controller's HELLO is in and it speaks our version.
    hello_ok: bool,
    /// When FEATURES_REPLY went out.
    features_at: Option<Instant>,
    /// A BARRIER_REQUEST was answered after FEATURES_REPLY.
    barrier_answered: bool,
    /// PACKET_INs queued so far: the next one's number (its sequence number is
    /// [`seq_of`] it).
    next: u64,
    /// Host index of the next PACKET_IN's source.
    next_mac: u32,
    /// Host index of the next announcement; `macs` when all are queued.
    next_announce: u32,
    /// The ECHO_REPLY closing the announcements came back: the controller has learned
    /// every address.
    pub learned: bool,
    /// Windowed mode: PACKET_INs in flight, oldest first.
    in_flight: VecDeque<Pending>,
    /// Windowed mode: in-flight PACKET_INs not answered yet.
    unanswered: usize,
    /// Unbounded mode: one bit per PACKET_IN among the last [`RING`], set while it is
    /// unanswered (empty in windowed mode).
    outstanding: Box<[u64]>,
    /// Counts.
    pub totals: Totals,
    /// Round trips in nanoseconds, while recording.
    pub samples: Vec<u32>,
    /// Whether the socket may have bytes to read (edge-triggered readiness: set by the
    /// event loop, cleared when a read would block).
    pub readable: bool,
    /// An event said the controller closed (or the socket failed): read on to the end,
    /// past a short read (set by the event loop; never cleared).
    pub read_closed: bool,
    /// Whether a write may make progress (set by the event loop, cleared when a write
    /// would block).
    pub writable: bool,
    /// Wired: the LLDP frames the controller sent out of a port (port, frame), for the
    /// run to hand to the switch at the other end ([`Switch::inject`]).
    pub relays: Vec<(u32, Vec<u8>)>,
    /// When the switch was made: its port counters grow from then.
    born: Instant,
    /// The xid of the last ECHO_REPLY to [`Switch::echo`].
    pub last_echo_reply: Option<u32>,
}

impl<S: Read + Write> Switch<S> {
    /// A switch on `stream` (connected or connecting); its HELLO is queued.
    pub fn new(dpid: u64, stream: S, behaviour: Behaviour) -> Switch<S> {
        let unbounded = behaviour.window == 0;
        let mut sw = Switch {
            dpid,
            stream,
            behaviour,
            template: Template::new(behaviour.version, dpid),
            replies: Replies::new(behaviour.version, dpid, behaviour.ports),
            relays: Vec::new(),
            born: Instant::now(),
            state: State::Connecting,
            closed: None,
            rbuf: ReadBuf::new(),
            wbuf: Vec::with_capacity(MAX_PENDING_OUT + 4096),
            wpos: 0,
            hello_ok: false,
            features_at: None,
            barrier_answered: false,
            next: 0,
            next_mac: 0,
            next_announce: 0,
            learned: false,
            in_flight: VecDeque::with_capacity(if unbounded { 0 } else { behaviour.window }),
            unanswered: 0,
            outstanding: if unbounded {
                vec![0u64; RING as usize / 64].into_boxed_slice()
            } else {
                Box::new([])
            },
            totals: Totals::default(),
            samples: Vec::new(),
            readable: true,
            read_closed: false,
            writable: true,
            last_echo_reply: None,
        };
        let v = behaviour.version.wire();
        match behaviour.version {
            // A plain 1.0 HELLO, as cbench and 1.0 switches send (1.0 has no elements).
            Version::V1_0 => sw
                .wbuf
                .extend_from_slice(&[v, msg::HELLO, 0, 8, 0, 0, 0, 1]),
            // 1.3: with a version bitmap holding only 1.3.
            Version::V1_3 => {
                sw.wbuf
                    .extend_from_slice(&[v, msg::HELLO, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8]);
                sw.wbuf.extend_from_slice(&(1u32 << v).to_be_bytes());
            }
        }
        sw
    }

    /// The socket.
    pub fn stream(&mut self) -> &mut S {
        &mut self.stream
    }

    /// Where the handshake stands, for a switch that never finished it.
    pub fn handshake_status(&self) -> String {
        if let Some(why) = &self.closed {
            return why.clone();
        }
        let missing = if !self.hello_ok {
            "no HELLO from the controller"
        } else if self.features_at.is_none() {
            "no FEATURES_REQUEST from the controller"
        } else {
            "the handshake had not settled"
        };
        format!("the handshake did not finish: {missing}")
    }

    /// Whether the controller's HELLO arrived (a connection closed before it was
    /// refused, not failed in the handshake).
    pub fn heard_hello(&self) -> bool {
        self.hello_ok
    }

    /// Queues an ECHO_REQUEST with `xid` (not one of the learning phase's), written at
    /// the next turn; its reply shows in [`Switch::last_echo_reply`].
    pub fn echo(&mut self, xid: u32) {
        let v = self.behaviour.version.wire();
        self.wbuf.extend_from_slice(&[v, msg::ECHO_REQUEST, 0, 8]);
        self.wbuf.extend_from_slice(&xid.to_be_bytes());
    }

    /// Whether output is waiting for the socket.
    pub fn wants_write(&self) -> bool {
        self.wpos < self.wbuf.len()
    }

    /// Whether the switch has more to do at once (bytes left to read after the per-turn
    /// cap, or in unbounded mode and while announcing, a socket still taking bytes):
    /// the event loop then polls without waiting.
    pub fn busy(&self, phase: Phase) -> bool {
        if self.state == State::Closed {
            return false;
        }
        let filling = self.state == State::Ready
            && self.writable
            && match phase {
                Phase::Learn => self.next_announce < self.behaviour.macs,
                Phase::Run => self.behaviour.window == 0,
                Phase::Connect | Phase::Drain => false,
            };
        self.readable || filling
    }

    /// One turn: read what there is and react, queue what the phase asks, write (one
    /// `write(2)` per buffer-full, unless the socket takes less).
    pub fn turn(&mut self, phase: Phase, recording: bool) {
        if self.state == State::Closed {
            return;
        }
        if self.readable {
            self.read_all(phase, recording);
        }
        let now = Instant::now();
        if self.state == State::Connecting && self.hello_ok {
            if let Some(at) = self.features_at {
                if self.barrier_answered || now.duration_since(at) >= self.behaviour.settle {
                    self.state = State::Ready;
                }
            }
        }
        let ready = self.state == State::Ready;
        match phase {
            Phase::Learn if ready => self.announce(),
            Phase::Run if ready && self.behaviour.window == 0 => self.fill(),
            Phase::Run if ready => {
                self.expire(now);
                self.top_up(now);
                self.flush();
            }
            Phase::Drain if self.behaviour.window != 0 => {
                self.expire(now);
                self.flush();
            }
            _ => self.flush(),
        }
        self.totals.in_flight = if self.behaviour.window == 0 {
            self.totals.packet_ins.saturating_sub(self.totals.answered)
        } else {
            self.unanswered as u64
        };
    }

    fn close(&mut self, why: String) {
        if self.state != State::Closed {
            self.state = State::Closed;
            self.closed = Some(why);
        }
    }

    fn read_all(&mut self, phase: Phase, recording: bool) {
        let mut got = 0;
        while self.state != State::Closed {
            let space = self.rbuf.free();
            match self.rbuf.read_from(&mut self.stream) {
                Ok(0) => self.close("the controller closed the connection".into()),
                // A short read drained the socket: epoll (edge-triggered) reports the
                // next bytes as a new event, so no read just to see WouldBlock. Not after
                // an event that said the peer closed: a FIN that came with the bytes is
                // reported by no later event, only by the next read (0).
                Ok(n) if n < space && !self.read_closed => {
                    self.readable = false;
                    break;
                }
                Ok(n) => got += n,
                Err(e) => {
                    match e.kind() {
                        ErrorKind::WouldBlock | ErrorKind::NotConnected => self.readable = false,
                        ErrorKind::Interrupted => continue,
                        ErrorKind::ConnectionRefused => self.close(format!("connect: {e}")),
                        _ => self.close(format!("read: {e}")),
                    }
                    break;
                }
            }
            if self.rbuf.is_full() {
                self.handle_frames(phase, recording);
            }
            if got >= MAX_READ_PER_TURN {
                break;
            }
        }
        self.handle_frames(phase, recording);
    }

    fn handle_frames(&mut self, phase: Phase, recording: bool) {
        // The clock is read only where a round trip or a settle time needs it.
        let now = if self.behaviour.window != 0 || self.state == State::Connecting {
            Some(Instant::now())
        } else {
            None
        };
        let mut at = 0;
        let mut rbuf = std::mem::take(&mut self.rbuf);
        let filled = rbuf.filled();
        while let Some(frame) = next_frame(&filled[at..]) {
            match frame {
                Ok(len) => {
                    self.handle(&filled[at..at + len], phase, recording, now);
                    at += len;
                }
                Err(why) => {
                    self.close(why);
                    break;
                }
            }
        }
        rbuf.consume(at);
        self.rbuf = rbuf;
    }

    fn handle(&mut self, m: &[u8], phase: Phase, recording: bool, now: Option<Instant>) {
        let ty = m[1];
        if self.behaviour.wired && ty == msg::PACKET_OUT {
            if let Some((port, frame)) = crate::topo::lldp_out(m) {
                self.relays.push((port, frame.to_vec()));
                return;
            }
        }
        // The hot path first: an answer during the loops.
        if (ty == msg::FLOW_MOD || ty == msg::PACKET_OUT) && phase >= Phase::Run {
            self.totals.responses += 1;
            self.totals.packet_outs += u64::from(ty == msg::PACKET_OUT);
            if self.behaviour.window == 0 {
                if let Some(seq) = answered_seq(m) {
                    self.retire(seq);
                }
            } else {
                self.answer(m, recording, now.unwrap_or_else(Instant::now));
            }
            return;
        }
        let version = m[0];
        let xid = u32::from_be_bytes([m[4], m[5], m[6], m[7]]);
        let counting = phase >= Phase::Run;
        let v13 = version == Version::V1_3.wire();
        match ty {
            msg::HELLO => {
                let ours = self.behaviour.version.wire();
                let bitmap = (m.len() >= 16 && u16::from_be_bytes([m[8], m[9]]) == 1)
                    .then(|| u32::from_be_bytes([m[12], m[13], m[14], m[15]]));
                let ok = match bitmap {
                    Some(b) => b & (1 << ours) != 0,
                    None => version >= ours,
                };
                if ok {
                    self.hello_ok = true;
                } else {
                    self.close(format!(
                        "the controller does not speak OpenFlow {} (its HELLO: version {version}, bitmap {bitmap:?})",
                        self.behaviour.version
                    ));
                }
                return;
            }
            msg::ERROR => self.totals.errors += 1,
            msg::ECHO_REQUEST => {
                let at = self.wbuf.len();
                self.wbuf.extend_from_slice(m);
                self.wbuf[at + 1] = msg::ECHO_REPLY;
            }
            msg::ECHO_REPLY if xid == LEARN_DONE_XID => {
                self.learned = true;
                return;
            }
            msg::ECHO_REPLY => {
                self.last_echo_reply = Some(xid);
                return;
            }
            msg::FEATURES_REQUEST => {
                self.reply(Reply::Features, xid);
                self.features_at = Some(now.unwrap_or_else(Instant::now));
            }
            msg::GET_CONFIG_REQUEST => self.reply(Reply::GetConfig, xid),
            msg::MULTIPART_REQUEST_13
                if v13
                    && m.len() >= 10
                    && u16::from_be_bytes([m[8], m[9]]) == msg::MP_PORT_DESC =>
            {
                self.reply(Reply::PortDesc, xid)
            }
            msg::MULTIPART_REQUEST_13
                if v13
                    && self.behaviour.wired
                    && m.len() >= 10
                    && u16::from_be_bytes([m[8], m[9]]) == msg::MP_PORT_STATS =>
            {
                self.port_stats(xid)
            }
            msg::STATS_REQUEST_10
                if !v13
                    && self.behaviour.wired
                    && m.len() >= 10
                    && u16::from_be_bytes([m[8], m[9]]) == msg::MP_PORT_STATS =>
            {
                self.port_stats(xid)
            }
            msg::BARRIER_REQUEST_10 if version == Version::V1_0.wire() => {
                self.reply(Reply::Barrier, xid);
                self.barrier_answered |= self.features_at.is_some();
            }
            msg::BARRIER_REQUEST_13 if v13 => {
                self.reply(Reply::Barrier, xid);
                self.barrier_answered |= self.features_at.is_some();
            }
            msg::FLOW_MOD | msg::PACKET_OUT if phase == Phase::Learn => {
                self.totals.learn_responses += 1;
                return;
            }
            _ => {}
        }
        if counting {
            self.totals.other += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that takes every byte and never has any to read.
    struct Sink;

    impl Read for Sink {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(ErrorKind::WouldBlock.into())
        }
    }

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            Ok(b.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn unbounded_counting_takes_each_packet_in_once_across_the_wrap() {
        let behaviour = Behaviour {
            version: Version::V1_0,
            window: 0,
            macs: 10,
            counting: Counting::PerPacketIn,
            buffered: true,
            record_latency: false,
            response_timeout: Duration::from_secs(1),
            settle: Duration::from_millis(1),
            ports: 4,
            wired: false,
        };
        let mut sw = Switch::new(1, Sink, behaviour);
        // Two PACKET_INs before the numbering starts again, two after.
        sw.next = 3 * u64::from(SPAN) - 2;
        for _ in 0..4 {
            sw.queue_outstanding();
        }
        let sent = [
            FIRST_SEQ + SPAN - 2,
            FIRST_SEQ + SPAN - 1,
            FIRST_SEQ,
            FIRST_SEQ + 1,
        ];
        // Not sent yet, or too old to be remembered, or not a sequence number: ignored.
        for seq in [FIRST_SEQ + 2, FIRST_SEQ + SPAN - 3 - RING, NO_BUFFER, 7] {
            sw.retire(seq);
        }
        assert_eq!(sw.totals.answered, 0);
        for seq in sent.into_iter().chain(sent) {
            sw.retire(seq);
        }
        assert_eq!(sw.totals.answered, 4, "each once");
        assert_eq!(sw.totals.packet_ins, 4);
        // RING PACKET_INs later, the same bits stand for new ones: an old answer for
        // one of them is not counted.
        for _ in 0..RING {
            sw.queue_outstanding();
        }
        sw.retire(FIRST_SEQ + 1);
        assert_eq!(sw.totals.answered, 4);
        sw.retire(seq_of(sw.next - 1));
        assert_eq!(sw.totals.answered, 5);
    }
}
