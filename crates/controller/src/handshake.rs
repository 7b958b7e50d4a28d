//! The OpenFlow handshake as a sans-IO state machine (quinn-proto style): no sockets and
//! no clock. The admission tier feeds it the bytes it reads and writes out the bytes it
//! produces; the deadline is the caller's to check.
//!
//! ```text
//! controller                              switch
//!   HELLO (1.3 header, bitmap {1.0,1.3}) ──►
//!                                       ◄── HELLO (any version, bitmap or not)
//!   negotiate: highest common of {1.0, 1.3}; none → ERROR HELLO_FAILED/INCOMPATIBLE
//!   FEATURES_REQUEST                     ──►
//!                                       ◄── FEATURES_REPLY (1.0: with the ports)
//!   1.3 only: MULTIPART_REQUEST PORT_DESC ──►
//!                                       ◄── MULTIPART_REPLY PORT_DESC (one or more parts)
//!   [FLOW_STATS request, every flow] + SET_CONFIG (miss_send_len) [+ BARRIER_REQUEST] ──►
//!                                       ◄── [FLOW_STATS reply, one or more parts]
//!                                       ◄── [BARRIER_REPLY]
//!   Established { features, ports, version, flows found, leftover bytes }
//! ```
//!
//! The flows are read (when [`HandshakeConfig::read_flows`] and the barrier are on) so
//! that a restarted controller keeps what is still valid instead of emptying the table
//! ([`crate::reconcile`]). A switch that answers the barrier without the flows (the
//! emulated switches of `pharos bench` and cbench ignore the request), or answers the
//! request with an ERROR, is one whose table is not known: `flows` is `None`, and the
//! apps behave as on a switch with no flows they know of.
//!
//! ECHO_REQUEST is answered at any point after HELLO, and ECHO_REPLY skipped. The
//! switch's asynchronous messages (PACKET_IN, FLOW_REMOVED, PORT_STATUS) are *held*, in
//! order, up to [`MAX_HELD`] bytes, and handed over ahead of the leftover bytes, so the
//! apps see them once the switch is added: a switch may send them as soon as HELLO is
//! done (cbench teaches the controller its hosts with a PACKET_IN right after its
//! FEATURES_REPLY; a port may go down while we wait for the barrier). Past the bound
//! they are dropped and counted ([`Established::dropped`]): a switch flooding us during
//! the handshake costs a bounded buffer. Anything else that is not the expected reply
//! fails the handshake. Every header is checked: a length under
//! 8 or over the limit, or a version other than the negotiated one, fails it.

use std::time::Duration;

use openflow::common::{ErrorBody, Hello, SwitchConfig};
use openflow::header::{self, version_name, Header};
use openflow::of13::multipart::{MultipartReplyBody, MultipartRequest, MultipartRequestBody};
use openflow::wire::{Put, Reader};
use openflow::{of10, of13, DecodeError, Message, Version, HEADER_LEN};

use crate::info::{Dpid, PortInfo, SwitchInfo};
use openflow::ofctl::FlowEntry;

/// The message types the handshake reads, as the codec numbers them.
mod ty {
    pub use openflow::msg_type::{
        ECHO_REPLY, ECHO_REQUEST, ERROR, FEATURES_REPLY, FLOW_REMOVED, HELLO, PACKET_IN,
        PORT_STATUS,
    };
    use openflow::{of10, of13};

    /// 1.0 `OFPT_BARRIER_REPLY`.
    pub const V10_BARRIER_REPLY: u8 = of10::MsgType::BarrierReply.to_raw();
    /// 1.0 `OFPT_STATS_REPLY`.
    pub const V10_STATS_REPLY: u8 = of10::MsgType::StatsReply.to_raw();
    /// 1.3 `OFPT_MULTIPART_REPLY`.
    pub const V13_MULTIPART_REPLY: u8 = of13::MsgType::MultipartReply.to_raw();
    /// 1.3 `OFPT_BARRIER_REPLY`.
    pub const V13_BARRIER_REPLY: u8 = of13::MsgType::BarrierReply.to_raw();
}

/// `OFPET_HELLO_FAILED`, the same number in every version.
pub const OFPET_HELLO_FAILED: u16 = 0;
/// `OFPHFC_INCOMPATIBLE`: no common version.
pub const OFPHFC_INCOMPATIBLE: u16 = 0;

/// The longest HELLO accepted. A HELLO holds at most a few bitmap words; 1.0 allows an
/// arbitrary body to be ignored, but nothing legitimate comes near this.
pub const MAX_HELLO_LEN: usize = 1024;

/// The most flows read from a switch at connection; beyond, its table counts as not
/// known (the apps then keep nothing they do not install again).
pub const MAX_FLOWS: usize = 200_000;

/// The most bytes of asynchronous messages held during the handshake for the apps (see
/// the module doc): a few hundred PACKET_INs of 128 bytes, every PORT_STATUS a switch
/// of a thousand ports sends at once.
pub const MAX_HELD: usize = 64 * 1024;

/// The longest message accepted during the handshake after HELLO: the header's 16-bit
/// length field allows no more, and a 1.0 FEATURES_REPLY with many ports may need it.
pub const MAX_MESSAGE_LEN: usize = 65535;

/// How the handshake and the admission tier behave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeConfig {
    /// Time a peer has from accept to the end of the handshake (checked by admission).
    pub timeout: Duration,
    /// Connections allowed in the handshake at once; more wait for a slot (see
    /// `max_waiting`), so a flood of idle peers cannot hold every descriptor.
    pub max_pending: usize,
    /// Connections in the handshake allowed from one source IP, so one host cannot use
    /// the whole `max_pending`.
    pub max_pending_per_ip: usize,
    /// Connections accepted while the handshake slots were taken, held (not read, no
    /// HELLO sent) until a slot frees, first come first served per source IP and in
    /// turn between IPs. Past this, connections are refused (reset) at accept. 0 refuses
    /// at once whatever finds the slots full.
    pub max_waiting: usize,
    /// Connections waiting from one source IP: a lab of a thousand switches on one host
    /// gets in, one flooding address cannot take every waiting place.
    pub max_waiting_per_ip: usize,
    /// The longest a connection waits for a handshake slot before it is closed
    /// (counted as refused, `wait_timeout`); the handshake's own `timeout` starts when it
    /// leaves the queue.
    pub max_wait: Duration,
    /// The versions offered in our HELLO bitmap; the highest common one wins.
    pub versions: Vec<Version>,
    /// SET_CONFIG's `miss_send_len`: bytes of a table-miss packet sent in PACKET_IN
    /// (0xffff: the whole packet, `OFPCML_NO_BUFFER` in 1.3).
    pub miss_send_len: u16,
    /// Whether to end with a BARRIER_REQUEST and wait for its reply, so an ERROR to
    /// SET_CONFIG fails the handshake instead of reaching the apps.
    pub barrier: bool,
    /// Whether to read the switch's flows (FLOW_STATS) before the barrier, for the
    /// apps to adopt ([`crate::reconcile`]). Needs `barrier`.
    pub read_flows: bool,
}

impl Default for HandshakeConfig {
    fn default() -> Self {
        HandshakeConfig {
            timeout: Duration::from_secs(5),
            max_pending: 1000,
            max_pending_per_ip: 64,
            max_waiting: 10_000,
            max_waiting_per_ip: 2_000,
            max_wait: Duration::from_secs(30),
            versions: vec![Version::V1_0, Version::V1_3],
            miss_send_len: of10::features::OFP_DEFAULT_MISS_SEND_LEN,
            barrier: true,
            read_flows: true,
        }
    }
}

/// Why a handshake failed. [`reason`](Self::reason) is the stable name counters use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    /// A header whose length is under 8 or over the limit for its place.
    #[error("bad header length {length} (allowed {min}..={max})")]
    BadLength {
        /// The header's length field.
        length: usize,
        /// The minimum allowed (the header itself).
        min: usize,
        /// The maximum allowed here.
        max: usize,
    },
    /// The first message was not a HELLO (often: not OpenFlow at all).
    #[error("expected HELLO, got version {version:#04x} type {msg_type}")]
    NotHello {
        /// The header's version byte.
        version: u8,
        /// The header's type byte.
        msg_type: u8,
    },
    /// A HELLO whose header's version is 0, which no OpenFlow version has (1.0 is 0x01).
    #[error("HELLO with version 0x00, which is no OpenFlow version (1.0 is 0x01, 1.3 is 0x04)")]
    HelloVersionZero,
    /// No version in common; HELLO_FAILED/INCOMPATIBLE was sent.
    #[error("no common version: {detail}")]
    Incompatible {
        /// What the peer offered, in words (also sent to the peer).
        detail: String,
    },
    /// A header after HELLO with a version other than the negotiated one.
    #[error("wrong version {got:#04x}, negotiated {expected:#04x}")]
    WrongVersion {
        /// The negotiated wire version.
        expected: u8,
        /// The header's version byte.
        got: u8,
    },
    /// A message that has no place at this step.
    #[error("unexpected message type {msg_type} while {waiting_for}")]
    Unexpected {
        /// The header's type byte.
        msg_type: u8,
        /// The step the handshake was at.
        waiting_for: &'static str,
    },
    /// The switch sent an ERROR.
    #[error("switch sent ERROR type {err_type} code {code} while {waiting_for}")]
    SwitchError {
        /// `ofp_error_msg.type` (0xffff for an experimenter error).
        err_type: u16,
        /// `ofp_error_msg.code` (the experimenter type for an experimenter error).
        code: u16,
        /// The step the handshake was at.
        waiting_for: &'static str,
    },
    /// A message of the expected type that does not decode.
    #[error("malformed message: {0}")]
    Malformed(DecodeError),
    /// A multipart reply of a type other than PORT_DESC while waiting for the ports.
    #[error("multipart reply of type {mp_type} while waiting for PORT_DESC")]
    WrongMultipart {
        /// The reply's `ofp_multipart_type`.
        mp_type: u16,
    },
    /// One of our own messages failed to encode (a bug, reported instead of a panic).
    #[error("could not encode {0}")]
    Encode(&'static str),
}

impl HandshakeError {
    /// A stable, short name for counters and log fields.
    pub fn reason(&self) -> &'static str {
        match self {
            HandshakeError::BadLength { .. } => "bad_length",
            HandshakeError::NotHello { .. } => "not_hello",
            HandshakeError::HelloVersionZero => "bad_version",
            HandshakeError::Incompatible { .. } => "incompatible_version",
            HandshakeError::WrongVersion { .. } => "wrong_version",
            HandshakeError::Unexpected { .. } => "unexpected_message",
            HandshakeError::SwitchError { .. } => "switch_error",
            HandshakeError::Malformed(_) => "malformed",
            HandshakeError::WrongMultipart { .. } => "wrong_multipart",
            HandshakeError::Encode(_) => "encode_error",
        }
    }
}

/// What a completed handshake learned: everything of [`SwitchInfo`] but the peer address
/// (the state machine never sees a socket), and the bytes already read past the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Established {
    /// The negotiated version.
    pub version: Version,
    /// FEATURES_REPLY's datapath id.
    pub dpid: Dpid,
    /// FEATURES_REPLY's `n_buffers`.
    pub n_buffers: u32,
    /// FEATURES_REPLY's `n_tables`.
    pub n_tables: u8,
    /// FEATURES_REPLY's capability bits.
    pub capabilities: u32,
    /// The ports (1.0 FEATURES_REPLY, 1.3 PORT_DESC parts in order).
    pub ports: Vec<PortInfo>,
    /// The asynchronous messages held during the handshake (see the module doc), then
    /// the bytes received after its last message: the start of the switch's regular
    /// traffic, which the worker must process first.
    pub leftover: Vec<u8>,
    /// Asynchronous messages dropped during the handshake, past [`MAX_HELD`].
    pub dropped: u64,
    /// The switch's flows when it connected (FLOW_STATS); `None` when not known (not
    /// asked, not answered, refused, or over [`MAX_FLOWS`]).
    pub flows: Option<Vec<FlowEntry>>,
}

impl Established {
    /// The [`SwitchInfo`] for a peer address, and the leftover bytes (the flows found
    /// are left in `self.flows`: take them first).
    pub fn into_info(self, peer: std::net::SocketAddr) -> (SwitchInfo, Vec<u8>) {
        (
            SwitchInfo {
                dpid: self.dpid,
                version: self.version,
                n_buffers: self.n_buffers,
                n_tables: self.n_tables,
                capabilities: self.capabilities,
                ports: self.ports,
                peer,
            },
            self.leftover,
        )
    }
}

/// The result of feeding bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Not done: send what was appended to `out`, read more, feed again.
    NeedMore,
    /// Done: send what was appended to `out`, then hand the switch to a worker.
    Established(Established),
}

/// Where the handshake is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Our HELLO is out; waiting for the peer's.
    Hello,
    /// FEATURES_REQUEST is out.
    Features,
    /// 1.3: MULTIPART PORT_DESC request is out; parts may keep coming.
    PortDesc,
    /// SET_CONFIG and BARRIER_REQUEST are out.
    Barrier,
}

impl Step {
    fn waiting_for(self) -> &'static str {
        match self {
            Step::Hello => "waiting for HELLO",
            Step::Features => "waiting for FEATURES_REPLY",
            Step::PortDesc => "waiting for PORT_DESC",
            Step::Barrier => "waiting for BARRIER_REPLY",
        }
    }
}

/// The features of FEATURES_REPLY, kept until the handshake ends.
#[derive(Debug, Clone, Copy, Default)]
struct Features {
    /// `datapath_id`: the switch's identity for everything after the handshake.
    dpid: Dpid,
    /// `n_buffers`: whether PACKET_OUT by buffer id is possible.
    n_buffers: u32,
    /// `n_tables`: how many tables apps may use.
    n_tables: u8,
    /// `capabilities`: the `OFPC_*` bits.
    capabilities: u32,
}

/// One handshake in progress (see the module doc).
#[derive(Debug)]
pub struct Handshake {
    /// The step we are at; decides which messages are expected.
    step: Step,
    /// Our offered versions (from the config), to negotiate against the peer's.
    versions: Vec<Version>,
    /// SET_CONFIG's `miss_send_len`.
    miss_send_len: u16,
    /// Whether to finish with a barrier.
    barrier: bool,
    /// The negotiated version, once HELLO is done.
    version: Option<Version>,
    /// Bytes fed but not yet consumed (a partial message, or bytes past the end).
    buf: Vec<u8>,
    /// The next xid of our requests (handshake xids are small and sequential).
    next_xid: u32,
    /// FEATURES_REPLY's content, once received.
    features: Features,
    /// Ports gathered so far.
    ports: Vec<PortInfo>,
    /// Whether to read the flows (config `read_flows` and `barrier`).
    read_flows: bool,
    /// The xid of our FLOW_STATS request, once sent.
    flows_xid: Option<u32>,
    /// Flows gathered so far; `None` once the read failed (ERROR, too many, unreadable).
    flows: Option<Vec<FlowEntry>>,
    /// Whether the last part of the flows came.
    flows_done: bool,
    /// The asynchronous messages held so far, whole, in order (see the module doc).
    held: Vec<u8>,
    /// Asynchronous messages dropped past [`MAX_HELD`].
    dropped: u64,
}

impl Handshake {
    /// A new handshake, and the bytes to send first (our HELLO).
    pub fn new(config: &HandshakeConfig) -> (Handshake, Vec<u8>) {
        let mut versions = config.versions.clone();
        versions.sort();
        versions.dedup();
        if versions.is_empty() {
            versions = vec![Version::V1_0, Version::V1_3];
        }
        let mut hs = Handshake {
            step: Step::Hello,
            versions,
            miss_send_len: config.miss_send_len,
            barrier: config.barrier,
            version: None,
            buf: Vec::new(),
            next_xid: 1,
            features: Features::default(),
            ports: Vec::new(),
            read_flows: config.read_flows && config.barrier,
            flows_xid: None,
            flows: Some(Vec::new()),
            flows_done: false,
            held: Vec::new(),
            dropped: 0,
        };
        let mut out = Vec::with_capacity(16);
        let max = *hs.versions.last().unwrap_or(&Version::V1_3);
        let wires: Vec<u8> = hs.versions.iter().map(|v| v.wire()).collect();
        let hello = Hello::with_versions(&wires);
        let xid = hs.xid();
        // A HELLO with a bitmap cannot fail to encode; were it to, the peer simply sees
        // an empty HELLO of our highest version, which negotiates the same way.
        let _ = header::encode_with(&mut out, max.wire(), ty::HELLO, xid, |o| hello.emit(o));
        (hs, out)
    }

    /// The negotiated version, once the peer's HELLO has been accepted.
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    /// A short name of the step, for logs when the deadline passes.
    pub fn waiting_for(&self) -> &'static str {
        self.step.waiting_for()
    }

    fn xid(&mut self) -> u32 {
        let x = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1);
        x
    }

    /// Feeds bytes read from the peer; appends what to send to `out`.
    ///
    /// After an `Err` the caller sends what is in `out` (HELLO_FAILED, for instance) and
    /// closes the connection; the handshake must not be fed again.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<Progress, HandshakeError> {
        self.buf.extend_from_slice(input);
        let mut pos = 0;
        let result = loop {
            let rest = &self.buf[pos..];
            let len = match self.frame(rest) {
                Ok(Some(len)) => len,
                Ok(None) => break Ok(Progress::NeedMore),
                Err(e) => break Err(e),
            };
            let frame = self.buf[pos..pos + len].to_vec();
            pos += len;
            match self.on_message(&frame, out) {
                Ok(true) => {
                    break Ok(Progress::Established(self.established(pos)));
                }
                Ok(false) => {}
                Err(e) => break Err(e),
            }
        };
        self.buf.drain(..pos);
        result
    }

    /// Checks the header at the front of `buf`; the length of a whole message there.
    fn frame(&self, buf: &[u8]) -> Result<Option<usize>, HandshakeError> {
        if buf.len() < HEADER_LEN {
            return Ok(None);
        }
        let h = Header::new_unchecked(buf);
        let length = h.length() as usize;
        let max = if self.step == Step::Hello {
            MAX_HELLO_LEN
        } else {
            MAX_MESSAGE_LEN
        };
        if self.step == Step::Hello && h.msg_type() != ty::HELLO {
            // Judge the first message by its type before its length: garbage is far more
            // often "not OpenFlow" than "a HELLO with a bad length".
            return Err(HandshakeError::NotHello {
                version: h.version(),
                msg_type: h.msg_type(),
            });
        }
        if !(HEADER_LEN..=max).contains(&length) {
            return Err(HandshakeError::BadLength {
                length,
                min: HEADER_LEN,
                max,
            });
        }
        if let Some(v) = self.version {
            // OpenFlow 1.3.x §7.1: "version ... indicates the version of OpenFlow which
            // this message belongs"; after negotiation that is the negotiated one.
            if h.version() != v.wire() {
                return Err(HandshakeError::WrongVersion {
                    expected: v.wire(),
                    got: h.version(),
                });
            }
        }
        Ok(if buf.len() >= length {
            Some(length)
        } else {
            None
        })
    }

    /// Handles one whole message; `Ok(true)` when the handshake is complete.
    fn on_message(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<bool, HandshakeError> {
        let h = Header::new_unchecked(frame);
        if self.step == Step::Hello {
            self.on_hello(frame, out)?;
            return Ok(false);
        }
        let version = self.version.unwrap_or(Version::V1_3);
        match h.msg_type() {
            ty::ECHO_REQUEST => {
                header::encode_with(out, version.wire(), ty::ECHO_REPLY, h.xid(), |o| {
                    o.put_slice(&frame[HEADER_LEN..]);
                    Ok(())
                })
                .map_err(|_| HandshakeError::Encode("ECHO_REPLY"))?;
                return Ok(false);
            }
            ty::ECHO_REPLY => return Ok(false),
            ty::PACKET_IN | ty::FLOW_REMOVED | ty::PORT_STATUS => {
                if self.held.len() + frame.len() <= MAX_HELD {
                    self.held.extend_from_slice(frame);
                } else {
                    self.dropped += 1;
                }
                return Ok(false);
            }
            ty::ERROR if self.flows_xid == Some(h.xid()) && self.step == Step::Barrier => {
                // The switch cannot list its flows: its table is not known.
                self.flows = None;
                return Ok(false);
            }
            ty::ERROR => return Err(self.switch_error(frame)),
            t if self.flows_xid == Some(h.xid())
                && self.step == Step::Barrier
                && matches!(
                    (version, t),
                    (Version::V1_0, ty::V10_STATS_REPLY) | (Version::V1_3, ty::V13_MULTIPART_REPLY)
                ) =>
            {
                self.on_flows(frame);
                return Ok(false);
            }
            _ => {}
        }
        let unexpected = HandshakeError::Unexpected {
            msg_type: h.msg_type(),
            waiting_for: self.step.waiting_for(),
        };
        match (self.step, version, h.msg_type()) {
            (Step::Features, _, ty::FEATURES_REPLY) => self.on_features(frame, out),
            (Step::PortDesc, Version::V1_3, ty::V13_MULTIPART_REPLY) => {
                self.on_port_desc(frame, out)
            }
            (Step::Barrier, Version::V1_0, ty::V10_BARRIER_REPLY)
            | (Step::Barrier, Version::V1_3, ty::V13_BARRIER_REPLY) => {
                if !self.flows_done {
                    // Answered the barrier without (all of) the flows: not known.
                    self.flows = None;
                }
                Ok(true)
            }
            _ => Err(unexpected),
        }
    }

    fn on_hello(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), HandshakeError> {
        let h = Header::new_unchecked(frame);
        let peer_version = h.version();
        if peer_version == 0 {
            return Err(HandshakeError::HelloVersionZero);
        }
        let mut body = Reader::new(&frame[HEADER_LEN..], HEADER_LEN, "ofp_hello");
        let hello = Hello::parse_lenient(&mut body);
        let ours: Vec<u8> = self.versions.iter().map(|v| v.wire()).collect();
        let chosen = match hello.versions() {
            // OpenFlow 1.3.x §6.3.1: "If both Hello messages contain a version bitmap,
            // the negotiated version must be the highest version set in both bitmaps."
            Some(theirs) => ours.iter().rev().copied().find(|v| theirs.contains(v)),
            // "Otherwise, the negotiated version must be the smaller of the version
            // number that was sent and the one that was received in the version fields."
            None => {
                let max_ours = ours.last().copied().unwrap_or(0x04);
                let v = peer_version.min(max_ours);
                ours.contains(&v).then_some(v)
            }
        };
        let Some(wire) = chosen else {
            let offered = match hello.versions() {
                Some(vs) => vs
                    .iter()
                    .map(|v| version_name(*v))
                    .collect::<Vec<_>>()
                    .join(", "),
                None => version_name(peer_version).to_string(),
            };
            let detail = format!(
                "pharos speaks {}; the peer offered {}",
                self.versions
                    .iter()
                    .map(|v| format!("OpenFlow {v}"))
                    .collect::<Vec<_>>()
                    .join(" and "),
                offered
            );
            // §6.3.1: "the recipient must send an OFPT_ERROR message with a type field
            // of OFPET_HELLO_FAILED, a code field of OFPHFC_INCOMPATIBLE, and optionally
            // an ASCII string explaining the situation in data". The error layout is the
            // same in every version, so it goes out in the peer's version when that is a
            // known OpenFlow version, else in 1.0 framing.
            let frame_version = if (0x01..=0x06).contains(&peer_version) {
                peer_version
            } else {
                0x01
            };
            let body = ErrorBody::Standard {
                err_type: OFPET_HELLO_FAILED,
                code: OFPHFC_INCOMPATIBLE,
                data: detail.as_bytes().to_vec(),
            };
            header::encode_with(out, frame_version, ty::ERROR, h.xid(), |o| {
                body.emit(o);
                Ok(())
            })
            .map_err(|_| HandshakeError::Encode("HELLO_FAILED"))?;
            return Err(HandshakeError::Incompatible { detail });
        };
        let version =
            Version::from_wire(wire).map_err(|_| HandshakeError::Encode("negotiated version"))?;
        self.version = Some(version);
        let request = match version {
            Version::V1_0 => Message::V10(of10::Message::FeaturesRequest),
            Version::V1_3 => Message::V13(of13::Message::FeaturesRequest),
        };
        self.send(&request, out, "FEATURES_REQUEST")?;
        self.step = Step::Features;
        Ok(())
    }

    fn on_features(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<bool, HandshakeError> {
        let (_, msg) = Message::decode(frame).map_err(HandshakeError::Malformed)?;
        match msg {
            Message::V10(of10::Message::FeaturesReply(f)) => {
                self.features = Features {
                    dpid: Dpid(f.datapath_id),
                    n_buffers: f.n_buffers,
                    n_tables: f.n_tables,
                    capabilities: f.capabilities,
                };
                self.ports = f.ports.iter().map(PortInfo::from_v10).collect();
                self.configure(out)
            }
            Message::V13(of13::Message::FeaturesReply(f)) => {
                self.features = Features {
                    dpid: Dpid(f.datapath_id),
                    n_buffers: f.n_buffers,
                    n_tables: f.n_tables,
                    capabilities: f.capabilities,
                };
                let request = Message::V13(of13::Message::MultipartRequest(MultipartRequest::new(
                    MultipartRequestBody::PortDesc,
                )));
                self.send(&request, out, "PORT_DESC request")?;
                self.step = Step::PortDesc;
                Ok(false)
            }
            _ => Err(HandshakeError::Unexpected {
                msg_type: Header::new_unchecked(frame).msg_type(),
                waiting_for: self.step.waiting_for(),
            }),
        }
    }

    fn on_port_desc(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<bool, HandshakeError> {
        let (_, msg) = Message::decode(frame).map_err(HandshakeError::Malformed)?;
        let Message::V13(of13::Message::MultipartReply(reply)) = msg else {
            return Err(HandshakeError::Unexpected {
                msg_type: Header::new_unchecked(frame).msg_type(),
                waiting_for: self.step.waiting_for(),
            });
        };
        let more = reply.more();
        match reply.body {
            MultipartReplyBody::PortDesc { ports } => {
                self.ports.extend(ports.iter().map(PortInfo::from_v13));
            }
            other => {
                return Err(HandshakeError::WrongMultipart {
                    mp_type: mp_type_of(&other),
                })
            }
        }
        if more {
            return Ok(false);
        }
        self.configure(out)
    }

    /// Sends SET_CONFIG (and BARRIER_REQUEST); `Ok(true)` when there is no barrier to
    /// wait for.
    fn configure(&mut self, out: &mut Vec<u8>) -> Result<bool, HandshakeError> {
        let config = SwitchConfig {
            flags: 0,
            miss_send_len: self.miss_send_len,
        };
        let (set, barrier) = match self.version {
            Some(Version::V1_0) => (
                Message::V10(of10::Message::SetConfig(config)),
                Message::V10(of10::Message::BarrierRequest),
            ),
            _ => (
                Message::V13(of13::Message::SetConfig(config)),
                Message::V13(of13::Message::BarrierRequest),
            ),
        };
        if self.read_flows {
            let version = self.version.unwrap_or(Version::V1_3);
            let xid = self.next_xid;
            self.send(
                &crate::removal::all_flows_request(version),
                out,
                "FLOW_STATS request",
            )?;
            self.flows_xid = Some(xid);
        }
        self.send(&set, out, "SET_CONFIG")?;
        if !self.barrier {
            return Ok(true);
        }
        self.send(&barrier, out, "BARRIER_REQUEST")?;
        self.step = Step::Barrier;
        Ok(false)
    }

    fn send(
        &mut self,
        msg: &Message,
        out: &mut Vec<u8>,
        what: &'static str,
    ) -> Result<(), HandshakeError> {
        let xid = self.xid();
        msg.encode(xid, out)
            .map(|_| ())
            .map_err(|_| HandshakeError::Encode(what))
    }

    fn switch_error(&self, frame: &[u8]) -> HandshakeError {
        let b = &frame[HEADER_LEN..];
        let (err_type, code) = if b.len() >= 4 {
            (
                u16::from_be_bytes([b[0], b[1]]),
                u16::from_be_bytes([b[2], b[3]]),
            )
        } else {
            (0xffff, 0xffff)
        };
        HandshakeError::SwitchError {
            err_type,
            code,
            waiting_for: self.step.waiting_for(),
        }
    }

    /// The result, the bytes fed from `pos` on being the leftover (after the held ones).
    fn established(&mut self, pos: usize) -> Established {
        let mut leftover = std::mem::take(&mut self.held);
        leftover.extend_from_slice(&self.buf[pos..]);
        Established {
            version: self.version.unwrap_or(Version::V1_3),
            dpid: self.features.dpid,
            n_buffers: self.features.n_buffers,
            n_tables: self.features.n_tables,
            capabilities: self.features.capabilities,
            ports: std::mem::take(&mut self.ports),
            leftover,
            dropped: self.dropped,
            flows: if self.read_flows {
                self.flows.take()
            } else {
                None
            },
        }
    }

    /// One part of the FLOW_STATS reply: its flows gathered; the last part ends it.
    fn on_flows(&mut self, frame: &[u8]) {
        // ofp_stats_reply / ofp_multipart_reply flags: bit 0 is MORE (1.0 §5.3.5,
        // 1.3 §7.3.5), at offset 10 of the message.
        let more = frame.len() >= 12 && frame[11] & 1 != 0;
        if !more {
            self.flows_done = true;
        }
        let Some(flows) = &mut self.flows else {
            return;
        };
        let Ok((_, msg)) = Message::decode(frame) else {
            self.flows = None;
            return;
        };
        if FlowEntry::from_message(&msg).is_none() {
            // A reply of another kind (a switch that answers every stats request the
            // same way): the table is not known.
            self.flows = None;
            return;
        }
        let (found, unreadable) = crate::removal::flows_of_reply(std::slice::from_ref(&msg));
        if unreadable > 0 || flows.len() + found.len() > MAX_FLOWS {
            // A flow we cannot read could not be judged nor deleted exactly.
            self.flows = None;
            return;
        }
        flows.extend(found);
    }
}

/// The wire type of a multipart reply body (for the error message).
fn mp_type_of(body: &MultipartReplyBody) -> u16 {
    let reply = of13::multipart::MultipartReply::new(body.clone());
    reply.kind().to_raw()
}

#[cfg(test)]
#[path = "handshake_tests.rs"]
mod tests;
