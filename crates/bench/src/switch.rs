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
//! Ethernet minimum) received on port 1, from one of the switch's `macs` source
//! addresses (`02:DD:DD:II:II:II`, `DDDD` = the low 16 bits of the dpid, `IIIIII` =
//! the host index, cycling) to one destination per switch (`0a:DD:DD:00:00:01`), so a
//! learning switch learns many hosts per switch and floods (or forwards) each packet.
//!
//! ## Counting
//!
//! The xid of PACKET_IN number `seq` is `seq`: a per-switch counter from [`FIRST_SEQ`]
//! (far from the small xids controllers number their own requests with). Its buffer id is
//! `NO_BUFFER` (the whole frame is in the message, as from a switch without buffers),
//! except with `--per-packet-in`, where it is `seq` as well, so that a controller that
//! answers with a buffered PACKET_OUT or FLOW_MOD names the PACKET_IN it answers. See
//! [`Counting`] for how answers are matched to PACKET_INs.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use openflow::of13::multipart::{MultipartReply, MultipartReplyBody};
use openflow::{of10, of13, FixedStr, MacAddr, Message, Version};
use serde::Serialize;

/// The buffer id of a PACKET_IN whose frame is all in the message.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// Message types, numbered alike in 1.0 and 1.3 up to PACKET_OUT / FLOW_MOD.
pub(crate) mod msg {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const ECHO_REQUEST: u8 = 2;
    pub const ECHO_REPLY: u8 = 3;
    pub const FEATURES_REQUEST: u8 = 5;
    pub const GET_CONFIG_REQUEST: u8 = 7;
    pub const PACKET_IN: u8 = 10;
    pub const PORT_STATUS: u8 = 12;
    pub const PACKET_OUT: u8 = 13;
    pub const FLOW_MOD: u8 = 14;
    /// 1.3 MULTIPART_REQUEST.
    pub const MULTIPART_REQUEST_13: u8 = 18;
    pub const BARRIER_REQUEST_10: u8 = 18;
    pub const BARRIER_REPLY_10: u8 = 19;
    pub const BARRIER_REQUEST_13: u8 = 20;
    pub const BARRIER_REPLY_13: u8 = 21;
    /// OFPMP_PORT_DESC.
    pub const MP_PORT_DESC: u16 = 13;
}

/// How answers are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Counting {
    /// cbench's rule: every FLOW_MOD and every PACKET_OUT is a response, whatever it
    /// answers. A controller sending a FLOW_MOD and a PACKET_OUT per PACKET_IN counts
    /// twice. Each response retires the oldest PACKET_IN still in flight (and gives the
    /// round trip of that one): with such a controller the second message retires a
    /// PACKET_IN it does not answer, so use `PerPacketIn` for its round trips.
    Cbench,
    /// `--per-packet-in`: PACKET_INs answered. A FLOW_MOD or PACKET_OUT answers the
    /// PACKET_IN in flight whose number is its buffer id (when not `NO_BUFFER`) or else
    /// its xid; further messages for the same PACKET_IN, and messages naming none in
    /// flight, are not counted.
    PerPacketIn,
}

/// The first PACKET_IN's xid (and buffer id with `--per-packet-in`).
pub const FIRST_SEQ: u32 = 0x1000_0000;
/// The last before the numbering starts again at [`FIRST_SEQ`] (never `NO_BUFFER`).
const LAST_SEQ: u32 = 0x7fff_ffff;

/// The ports every emulated switch has.
const PORTS: [u32; 4] = [1, 2, 3, 4];
/// The port every PACKET_IN comes in on.
const IN_PORT: u32 = 1;
/// Bytes of the Ethernet frame a PACKET_IN carries.
const FRAME_LEN: usize = 60;

/// A source MAC of switch `dpid`: host `index`.
pub fn host_mac(dpid: u64, index: u32) -> MacAddr {
    let d = (dpid as u16).to_be_bytes();
    let i = index.to_be_bytes();
    MacAddr([0x02, d[0], d[1], i[1], i[2], i[3]])
}

/// The destination MAC of every frame switch `dpid` sends.
pub fn dst_mac(dpid: u64) -> MacAddr {
    let d = (dpid as u16).to_be_bytes();
    MacAddr([0x0a, d[0], d[1], 0, 0, 1])
}

/// An Ethernet/IPv4/UDP frame of 60 bytes from `src` to `dst`.
fn frame(src: MacAddr, dst: MacAddr) -> Vec<u8> {
    let mut f = Vec::with_capacity(FRAME_LEN);
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (FRAME_LEN - 14) as u16;
    let mut ip = [
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    let sum = ip
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum::<u32>();
    let sum = (sum & 0xffff) + (sum >> 16);
    let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    let udp_len = ip_len - 20;
    // UDP 1234 -> 5678, no checksum (0 is allowed over IPv4).
    f.extend_from_slice(&[0x04, 0xd2, 0x16, 0x2e]);
    f.extend_from_slice(&udp_len.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.resize(FRAME_LEN, 0);
    f
}

fn encode(msg: &Message) -> Vec<u8> {
    msg.to_bytes(0)
        .expect("the emulated switch's own messages encode")
}

fn patch_xid(bytes: &mut [u8], xid: u32) {
    bytes[4..8].copy_from_slice(&xid.to_be_bytes());
}

/// One switch's pre-encoded PACKET_IN, and where to patch it.
#[derive(Debug, Clone)]
pub struct Template {
    /// The whole message, as sent for host 0 and xid 0.
    bytes: Vec<u8>,
    /// Where the Ethernet frame starts in `bytes`.
    frame_at: usize,
}

impl Template {
    /// The PACKET_IN of switch `dpid` in `version`.
    pub fn new(version: Version, dpid: u64) -> Template {
        let data = frame(host_mac(dpid, 0), dst_mac(dpid));
        let total_len = data.len() as u16;
        let msg = match version {
            Version::V1_0 => Message::V10(of10::Message::PacketIn(of10::PacketIn {
                buffer_id: NO_BUFFER,
                total_len,
                in_port: IN_PORT as u16,
                reason: of10::PacketInReason::NoMatch,
                data,
            })),
            Version::V1_3 => Message::V13(of13::Message::PacketIn(of13::PacketIn {
                buffer_id: NO_BUFFER,
                total_len,
                reason: of13::PacketInReason::NoMatch,
                table_id: 0,
                cookie: 0,
                match_: of13::Match::new(vec![of13::Oxm::basic(
                    of13::OxmField::InPort,
                    u64::from(IN_PORT),
                )]),
                data,
            })),
        };
        let bytes = encode(&msg);
        Template {
            frame_at: bytes.len() - FRAME_LEN,
            bytes,
        }
    }

    /// Bytes of one PACKET_IN.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Never empty; for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends the PACKET_IN with these xid, buffer id and source MAC to `out`.
    #[inline]
    pub fn append(&self, out: &mut Vec<u8>, xid: u32, buffer_id: u32, src: MacAddr) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        let m = &mut out[at..];
        m[4..8].copy_from_slice(&xid.to_be_bytes());
        m[8..12].copy_from_slice(&buffer_id.to_be_bytes());
        m[self.frame_at + 6..self.frame_at + 12].copy_from_slice(&src.0);
    }
}

/// The replies a switch gives during the handshake, pre-encoded (xid 0).
#[derive(Debug, Clone)]
struct Replies {
    features: Vec<u8>,
    port_desc: Option<Vec<u8>>,
    get_config: Vec<u8>,
    barrier: Vec<u8>,
}

fn port_mac(dpid: u64, p: u32) -> MacAddr {
    let d = (dpid as u16).to_be_bytes();
    MacAddr([0x06, d[0], d[1], 0, 0, p as u8])
}

fn port_name(p: u32) -> FixedStr<16> {
    FixedStr::new(&format!("eth{p}")).expect("a short port name")
}

impl Replies {
    fn new(version: Version, dpid: u64) -> Replies {
        let config = openflow::common::SwitchConfig {
            flags: 0,
            miss_send_len: 128,
        };
        match version {
            Version::V1_0 => Replies {
                features: encode(&Message::V10(of10::Message::FeaturesReply(
                    of10::SwitchFeatures {
                        datapath_id: dpid,
                        n_buffers: 256,
                        n_tables: 1,
                        capabilities: 0xc7,
                        actions: 0xfff,
                        ports: PORTS
                            .iter()
                            .map(|&p| of10::PhyPort {
                                port_no: p as u16,
                                hw_addr: port_mac(dpid, p),
                                name: port_name(p),
                                config: 0,
                                state: 0,
                                curr: 0,
                                advertised: 0,
                                supported: 0,
                                peer: 0,
                            })
                            .collect(),
                    },
                ))),
                port_desc: None,
                get_config: encode(&Message::V10(of10::Message::GetConfigReply(config))),
                barrier: encode(&Message::V10(of10::Message::BarrierReply)),
            },
            Version::V1_3 => Replies {
                features: encode(&Message::V13(of13::Message::FeaturesReply(
                    of13::FeaturesReply {
                        datapath_id: dpid,
                        n_buffers: 256,
                        n_tables: 254,
                        auxiliary_id: 0,
                        capabilities: 0x4f,
                        reserved: 0,
                    },
                ))),
                port_desc: Some(encode(&Message::V13(of13::Message::MultipartReply(
                    MultipartReply {
                        flags: 0,
                        body: MultipartReplyBody::PortDesc {
                            ports: PORTS
                                .iter()
                                .map(|&p| of13::Port {
                                    port_no: p,
                                    hw_addr: port_mac(dpid, p),
                                    name: port_name(p),
                                    config: 0,
                                    state: 0,
                                    curr: 0,
                                    advertised: 0,
                                    supported: 0,
                                    peer: 0,
                                    curr_speed: 10_000_000,
                                    max_speed: 10_000_000,
                                })
                                .collect(),
                        },
                    },
                )))),
                get_config: encode(&Message::V13(of13::Message::GetConfigReply(config))),
                barrier: encode(&Message::V13(of13::Message::BarrierReply)),
            },
        }
    }
}

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Connect and handshake; send no PACKET_IN.
    Connect,
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
    /// PACKET_INs in flight at most (1 in latency mode).
    pub window: usize,
    /// Distinct source MACs cycled through.
    pub macs: u32,
    /// The counting rule.
    pub counting: Counting,
    /// Record round trips.
    pub record_latency: bool,
    /// A PACKET_IN unanswered this long is given up (so a controller that drops some
    /// does not stall the window for ever).
    pub response_timeout: Duration,
    /// With no BARRIER_REQUEST after FEATURES_REPLY, the switch is ready after this.
    pub settle: Duration,
}

/// A PACKET_IN in flight.
#[derive(Debug, Clone, Copy)]
struct Pending {
    seq: u32,
    sent: Instant,
    answered: bool,
}

/// What a switch has counted so far (totals since the first loop).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// PACKET_INs sent.
    pub packet_ins: u64,
    /// FLOW_MODs and PACKET_OUTs received during the run (cbench's responses).
    pub responses: u64,
    /// PACKET_INs answered (matched by buffer id or xid with `--per-packet-in`, by the
    /// oldest in flight otherwise).
    pub answered: u64,
    /// PACKET_INs given up after the response timeout.
    pub timeouts: u64,
    /// Other messages from the controller during the run (echoes, barriers, errors...).
    pub other: u64,
    /// ERROR messages received, ever.
    pub errors: u64,
    /// PACKET_INs in flight now.
    pub in_flight: u64,
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

/// The largest output kept pending before a switch stops adding PACKET_INs.
const MAX_PENDING_OUT: usize = 256 * 1024;
/// The most bytes read from one switch in one turn (fairness between switches).
const MAX_READ_PER_TURN: usize = 256 * 1024;

/// One emulated switch on a connection that may be a `std` or a `mio` stream.
pub struct Switch<S> {
    /// Its datapath id.
    pub dpid: u64,
    stream: S,
    behaviour: Behaviour,
    template: Template,
    replies: Replies,
    /// Where it is.
    pub state: State,
    /// Why the connection ended, once it has.
    pub closed: Option<String>,
    /// Bytes read, not yet framed.
    rbuf: ReadBuf,
    /// Bytes to write, from `wpos`.
    wbuf: Vec<u8>,
    wpos: usize,
    /// The controller's HELLO is in and it speaks our version.
    hello_ok: bool,
    /// When FEATURES_REPLY went out.
    features_at: Option<Instant>,
    /// A BARRIER_REQUEST was answered after FEATURES_REPLY.
    barrier_answered: bool,
    /// Sequence number of the next PACKET_IN.
    next_seq: u32,
    /// Host index of the next PACKET_IN.
    next_mac: u32,
    in_flight: VecDeque<Pending>,
    /// In-flight PACKET_INs not answered yet.
    unanswered: usize,
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
}

impl<S: Read + Write> Switch<S> {
    /// A switch on `stream` (connected or connecting); its HELLO is queued.
    pub fn new(dpid: u64, stream: S, behaviour: Behaviour) -> Switch<S> {
        let mut sw = Switch {
            dpid,
            stream,
            behaviour,
            template: Template::new(behaviour.version, dpid),
            replies: Replies::new(behaviour.version, dpid),
            state: State::Connecting,
            closed: None,
            rbuf: ReadBuf::new(),
            wbuf: Vec::with_capacity(64 * 1024),
            wpos: 0,
            hello_ok: false,
            features_at: None,
            barrier_answered: false,
            next_seq: FIRST_SEQ,
            next_mac: 0,
            in_flight: VecDeque::with_capacity(behaviour.window),
            unanswered: 0,
            totals: Totals::default(),
            samples: Vec::new(),
            readable: true,
            read_closed: false,
            writable: true,
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

    /// Whether output is waiting for the socket.
    pub fn wants_write(&self) -> bool {
        self.wpos < self.wbuf.len()
    }

    /// One turn: read what there is and react, top up the window, write (one `write(2)`
    /// for everything queued, unless the socket takes less).
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
        if self.state == State::Ready && phase == Phase::Run {
            self.expire(now);
            self.top_up(now);
        } else if phase == Phase::Drain {
            self.expire(now);
        }
        self.flush();
        self.totals.in_flight = self.unanswered as u64;
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
        let now = Instant::now();
        let mut at = 0;
        let mut rbuf = std::mem::take(&mut self.rbuf);
        while let Some(frame) = next_frame(&rbuf.filled()[at..]) {
            match frame {
                Ok(len) => {
                    self.handle(&rbuf.filled()[at..at + len], phase, recording, now);
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

    fn handle(&mut self, m: &[u8], phase: Phase, recording: bool, now: Instant) {
        let (version, ty) = (m[0], m[1]);
        let xid = u32::from_be_bytes([m[4], m[5], m[6], m[7]]);
        let counting = phase != Phase::Connect;
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
            msg::FEATURES_REQUEST => {
                self.reply(Reply::Features, xid);
                self.features_at = Some(now);
            }
            msg::GET_CONFIG_REQUEST => self.reply(Reply::GetConfig, xid),
            msg::MULTIPART_REQUEST_13
                if v13
                    && m.len() >= 10
                    && u16::from_be_bytes([m[8], m[9]]) == msg::MP_PORT_DESC =>
            {
                self.reply(Reply::PortDesc, xid)
            }
            msg::BARRIER_REQUEST_10 if version == Version::V1_0.wire() => {
                self.reply(Reply::Barrier, xid);
                self.barrier_answered |= self.features_at.is_some();
            }
            msg::BARRIER_REQUEST_13 if v13 => {
                self.reply(Reply::Barrier, xid);
                self.barrier_answered |= self.features_at.is_some();
            }
            msg::FLOW_MOD | msg::PACKET_OUT if counting => {
                self.totals.responses += 1;
                self.answer(m, xid, recording, now);
                return;
            }
            _ => {}
        }
        if counting {
            self.totals.other += 1;
        }
    }

    fn reply(&mut self, which: Reply, xid: u32) {
        let bytes = match which {
            Reply::Features => &self.replies.features,
            Reply::GetConfig => &self.replies.get_config,
            Reply::Barrier => &self.replies.barrier,
            Reply::PortDesc => match &self.replies.port_desc {
                Some(b) => b,
                None => return,
            },
        };
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(bytes);
        patch_xid(&mut self.wbuf[at..], xid);
    }

    /// A FLOW_MOD or PACKET_OUT came in: retire the PACKET_IN it answers.
    fn answer(&mut self, m: &[u8], xid: u32, recording: bool, now: Instant) {
        let idx = match self.behaviour.counting {
            Counting::Cbench => self.in_flight.iter().position(|p| !p.answered),
            Counting::PerPacketIn => {
                let by_buffer = buffer_id_of(m).filter(|&b| b != NO_BUFFER);
                let front = self.in_flight.front().map(|p| p.seq);
                let find = |seq: u32| {
                    front
                        .map(|f| seq.wrapping_sub(f) as usize)
                        .filter(|&i| i < self.in_flight.len() && !self.in_flight[i].answered)
                };
                by_buffer.and_then(find).or_else(|| find(xid))
            }
        };
        let Some(i) = idx else {
            return;
        };
        let p = &mut self.in_flight[i];
        p.answered = true;
        self.unanswered -= 1;
        self.totals.answered += 1;
        if recording && self.behaviour.record_latency {
            let ns = now.duration_since(p.sent).as_nanos();
            self.samples.push(ns.min(u128::from(u32::MAX)) as u32);
        }
        while self.in_flight.front().is_some_and(|p| p.answered) {
            self.in_flight.pop_front();
        }
    }

    /// Gives up PACKET_INs unanswered for the response timeout.
    fn expire(&mut self, now: Instant) {
        while let Some(p) = self.in_flight.front() {
            if p.answered {
                self.in_flight.pop_front();
            } else if now.duration_since(p.sent) >= self.behaviour.response_timeout {
                self.in_flight.pop_front();
                self.unanswered -= 1;
                self.totals.timeouts += 1;
            } else {
                break;
            }
        }
    }

    /// Queues PACKET_INs until the window is full (one write carries them all).
    fn top_up(&mut self, now: Instant) {
        let b = self.behaviour;
        while self.unanswered < b.window
            && self.in_flight.len() < b.window * 4
            && self.wbuf.len() - self.wpos < MAX_PENDING_OUT
        {
            let seq = self.next_seq;
            self.next_seq = if seq >= LAST_SEQ { FIRST_SEQ } else { seq + 1 };
            let buffer_id = match b.counting {
                Counting::Cbench => NO_BUFFER,
                Counting::PerPacketIn => seq,
            };
            let src = host_mac(self.dpid, self.next_mac);
            self.next_mac = (self.next_mac + 1) % b.macs.max(1);
            self.template.append(&mut self.wbuf, seq, buffer_id, src);
            self.in_flight.push_back(Pending {
                seq,
                sent: now,
                answered: false,
            });
            self.unanswered += 1;
            self.totals.packet_ins += 1;
        }
    }

    fn flush(&mut self) {
        while self.wpos < self.wbuf.len() && self.state != State::Closed {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => self.close("write: the connection accepts no more bytes".into()),
                Ok(n) => self.wpos += n,
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock | ErrorKind::NotConnected => {
                        self.writable = false;
                        break;
                    }
                    ErrorKind::Interrupted => {}
                    _ => self.close(format!("write: {e}")),
                },
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        }
    }
}

/// Bytes read and not yet framed, in a buffer allocated (and zeroed) once.
pub(crate) struct ReadBuf {
    buf: Box<[u8]>,
    len: usize,
}

impl Default for ReadBuf {
    /// An empty buffer of no size (allocates nothing: what `mem::take` leaves behind).
    fn default() -> ReadBuf {
        ReadBuf {
            buf: Box::new([]),
            len: 0,
        }
    }
}

impl ReadBuf {
    /// Four times the largest OpenFlow message, so that a whole one always fits.
    pub(crate) fn new() -> ReadBuf {
        ReadBuf {
            buf: vec![0; 256 * 1024].into_boxed_slice(),
            len: 0,
        }
    }

    /// One `read(2)` into the free space (`Ok(0)`: end of stream). Not to be called
    /// when full.
    pub(crate) fn read_from(&mut self, r: &mut impl Read) -> std::io::Result<usize> {
        let n = r.read(&mut self.buf[self.len..])?;
        self.len += n;
        Ok(n)
    }

    /// Bytes one read can still take.
    pub(crate) fn free(&self) -> usize {
        self.buf.len() - self.len
    }

    /// No free space left (frame what is there first).
    pub(crate) fn is_full(&self) -> bool {
        self.len == self.buf.len()
    }

    /// The bytes read and not consumed.
    pub(crate) fn filled(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Drops the first `n` bytes.
    pub(crate) fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

#[derive(Clone, Copy)]
enum Reply {
    Features,
    GetConfig,
    Barrier,
    PortDesc,
}

/// The length of the message at the front of `buf`: `None` for "not yet", `Err` when
/// the stream cannot be framed.
pub(crate) fn next_frame(buf: &[u8]) -> Option<Result<usize, String>> {
    match openflow::frame_len(buf) {
        Ok(Some(n)) => Some(Ok(n)),
        Ok(None) => None,
        Err(e) => Some(Err(format!(
            "the controller's stream cannot be framed: {e}"
        ))),
    }
}

/// The buffer id a FLOW_MOD or PACKET_OUT names, if the message is long enough.
fn buffer_id_of(m: &[u8]) -> Option<u32> {
    let at = match (m[0], m[1]) {
        (_, msg::PACKET_OUT) => 8,
        (0x01, msg::FLOW_MOD) => 64,
        (0x04, msg::FLOW_MOD) => 32,
        _ => return None,
    };
    m.get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_patches_xid_buffer_and_source() {
        for version in [Version::V1_0, Version::V1_3] {
            let t = Template::new(version, 7);
            let mut out = Vec::new();
            t.append(&mut out, 42, 9, host_mac(7, 0x01_0203));
            let (xid, msg) = Message::decode(&out).unwrap();
            assert_eq!(xid, 42);
            let (buffer_id, data) = match msg {
                Message::V10(of10::Message::PacketIn(p)) => (p.buffer_id, p.data),
                Message::V13(of13::Message::PacketIn(p)) => (p.buffer_id, p.data),
                other => panic!("{other:?}"),
            };
            assert_eq!(buffer_id, 9);
            assert_eq!(&data[6..12], &[0x02, 0, 7, 1, 2, 3]);
            assert_eq!(&data[0..6], &dst_mac(7).0);
            assert_eq!(data.len(), FRAME_LEN);
        }
    }

    #[test]
    fn handshake_replies_decode() {
        for version in [Version::V1_0, Version::V1_3] {
            let r = Replies::new(version, 3);
            for b in [&r.features, &r.get_config, &r.barrier]
                .into_iter()
                .chain(r.port_desc.as_ref())
            {
                Message::decode(b).unwrap();
            }
        }
    }

    #[test]
    fn buffer_ids_of_answers() {
        let po =
            openflow::model::PacketOut::buffered(77, openflow::model::PortNo::Physical(1), &[]);
        for version in [Version::V1_0, Version::V1_3] {
            let mut out = Vec::new();
            po.encode(version, 1, &mut out).unwrap();
            assert_eq!(buffer_id_of(&out), Some(77));
            let fm = openflow::model::FlowMod::add(openflow::model::Match::default(), &[])
                .buffer_id(Some(55));
            let mut out = Vec::new();
            fm.encode(version, 1, &mut out).unwrap();
            assert_eq!(buffer_id_of(&out), Some(55));
        }
    }
}
