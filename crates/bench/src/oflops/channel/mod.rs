//! The control channel of `pharos bench switch`: Pharos as the switch's only controller.
//!
//! A [`Channel`] is one OpenFlow connection to the switch under test, opened either way
//! round ([`Endpoint::Listen`]: wait for the switch to connect, as to any controller;
//! [`Endpoint::Connect`]: connect to a switch listening with `ptcp:`). Opening it
//! negotiates the version (1.0 or 1.3, exactly the one asked for), reads the switch's
//! features and ports (FEATURES_REPLY, and PORT_DESC in 1.3), sets `miss_send_len`
//! (SET_CONFIG) and waits for a barrier, so that a channel that opened is one the switch
//! answers on.
//!
//! ## Blocking, bounded
//!
//! Every call is blocking and bounded by a deadline: the channel's
//! [`ChannelConfig::timeout`] for the helpers that wait for an answer, or the caller's
//! deadline for [`Channel::recv`]. A switch that never answers (a barrier, an echo, a
//! statistics request) is a [`ChannelError::Timeout`] naming the message, never a hang.
//! Sending is bounded too: the socket is non-blocking and a send polls for both
//! directions, reading what the switch sends meanwhile (so a switch blocked writing to
//! us cannot deadlock a long burst of FLOW_MODs).
//!
//! ## Timestamps
//!
//! Times are nanoseconds of `CLOCK_REALTIME` ([`now_ns`]), the clock of the kernel's
//! software `SO_TIMESTAMPING` stamps, so that control-channel times and the probe's
//! packet times are on one axis. A send's time is taken just before its first byte is
//! handed to the kernel ([`Sent::first_ns`]) and just after its last byte was
//! ([`Sent::last_ns`]). A received message's time ([`Received::at_ns`]) is the kernel's
//! software receive stamp of the last TCP segment of the `read` that completed it
//! (`SO_TIMESTAMPING`, taken as the segment entered the network stack), so that the
//! wait for this process to be scheduled is not counted; messages completed by one read
//! share it. Where the kernel gives no stamp, it is when the `read` returned
//! ([`Channel::kernel_rx_stamps`] says which).
//!
//! ## What the switch says unasked
//!
//! ECHO_REQUESTs from the switch are answered inside the channel. Messages that arrive
//! while a helper waits for something else (PACKET_INs, PORT_STATUS, FLOW_REMOVED,
//! replies nobody waits for) are kept in order, up to [`BACKLOG_MAX`] (older ones are
//! dropped and counted in [`Channel::backlog_dropped`]), and handed out by
//! [`Channel::recv`] first.
//!
//! ## Errors
//!
//! An OpenFlow ERROR that arrives while a helper waits is that helper's
//! [`ChannelError::Refused`], with the switch's words for it (`BAD_ACTION/BAD_TYPE`) and
//! the type and xid of the message refused: a FLOW_MOD with an action the switch lacks
//! fails the barrier that follows it. [`Channel::recv`] hands ERRORs out like any
//! message ([`Received::error`] describes one).
//!
//! ## Example
//!
//! ```no_run
//! use bench::oflops::channel::{Channel, ChannelConfig, Endpoint};
//! use openflow::model::{Action, FlowMod, Match, PortNo};
//! use openflow::Version;
//!
//! let cfg = ChannelConfig::new(Endpoint::Listen("127.0.0.1:6653".parse().unwrap()), Version::V1_3);
//! let mut ch = Channel::open(&cfg).unwrap();
//! let out = ch.port_no("p2").unwrap();
//! let actions = [Action::output(PortNo::Physical(out))];
//! let fm = FlowMod::add(Match { in_port: Some(ch.port_no("p1").unwrap()), ..Match::default() }, &actions);
//! let sent = ch.send_flow_mods(&[fm]).unwrap();
//! let barrier = ch.barrier().unwrap();
//! println!("barrier reply {} ns after the FLOW_MOD", barrier.reply_ns - sent.first_ns);
//! ```
//!
//! ## Layout
//!
//! ```text
//! mod.rs      Channel: opening, requests and their helpers (barrier, echo, flows,
//!             PACKET_OUT, flow statistics), receiving and what is kept unasked;
//!             ChannelConfig, ChannelError
//! handshake   the controller's side of the handshake, the HELLO checks
//! listener    Listener: waiting for a switch to connect
//! io          poll(2), stamped reads, bounded writes
//! messages    Received, Sent, BarrierTiming
//! flow_stats  FlowStatsReply, FlowStatsCollector
//! info        SwitchInfo, PortInfo, DataPort
//! ```

mod flow_stats;
mod handshake;
mod info;
mod io;
mod listener;
mod messages;

use std::collections::VecDeque;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use openflow::model::{Action, FlowMod, PacketOut, PortNo};
use openflow::of13::multipart::{MultipartRequest, MultipartRequestBody};
use openflow::{frame_len, of10, of13, Message, Version};

pub use flow_stats::{FlowStatsCollector, FlowStatsReply};
pub use info::{DataPort, PortInfo, SwitchInfo};
pub use listener::Listener;
use messages::type_name;
pub use messages::{BarrierTiming, Received, Sent};

/// Messages kept for [`Channel::recv`] while a helper waited for something else.
pub const BACKLOG_MAX: usize = 1 << 16;

/// Message types: the codec's numbers ([`openflow::msg_type`] for those alike in 1.0 and
/// 1.3, the per-version enums for the rest).
pub mod msg_type {
    use openflow::{of10, of13};

    pub use openflow::msg_type::{
        ECHO_REPLY, ECHO_REQUEST, ERROR, FEATURES_REPLY, FLOW_MOD, FLOW_REMOVED, HELLO, PACKET_IN,
        PORT_STATUS,
    };
    /// 1.0 STATS_REPLY.
    pub const STATS_REPLY_10: u8 = of10::MsgType::StatsReply.to_raw();
    /// 1.3 MULTIPART_REPLY.
    pub const MULTIPART_REPLY_13: u8 = of13::MsgType::MultipartReply.to_raw();
    pub const BARRIER_REPLY_10: u8 = of10::MsgType::BarrierReply.to_raw();
    pub const BARRIER_REPLY_13: u8 = of13::MsgType::BarrierReply.to_raw();
}

/// Now, in nanoseconds of `CLOCK_REALTIME`: the clock of every timestamp in this module,
/// and of the kernel's software packet timestamps.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec to the pointer it is given, which is valid.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Which way round the control connection is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// Listen here and wait for the switch to connect (`--switch-listen`).
    Listen(SocketAddr),
    /// Connect to a switch listening here (`--switch-connect`, OVS `ptcp:`).
    Connect(SocketAddr),
}

/// How to open a [`Channel`].
#[derive(Debug, Clone)]
pub struct ChannelConfig {
    /// Wait for the switch, or connect to it.
    pub endpoint: Endpoint,
    /// The version to speak; a switch that does not offer it is refused.
    pub version: Version,
    /// How long any one exchange may take (a barrier, an echo, a statistics reply).
    pub timeout: Duration,
    /// How long to wait for the switch to connect (listen) or accept (connect).
    pub connect_timeout: Duration,
    /// Bytes of a table-miss packet the switch sends in a PACKET_IN (SET_CONFIG).
    pub miss_send_len: u16,
}

impl ChannelConfig {
    /// Timeouts of 5 s per exchange and 30 s to connect, `miss_send_len` 128.
    pub fn new(endpoint: Endpoint, version: Version) -> ChannelConfig {
        ChannelConfig {
            endpoint,
            version,
            timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(30),
            miss_send_len: 128,
        }
    }
}

/// What went wrong on the channel.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The switch did not answer in time (or did not connect in time).
    #[error("the switch did not answer {what} within {after:?}")]
    Timeout { what: String, after: Duration },
    /// The switch answered with an OpenFlow ERROR.
    #[error("the switch refused {refused} (xid {xid}): {error}")]
    Refused {
        /// The refused message's type (`FLOW_MOD`), from the data the ERROR carries.
        refused: String,
        xid: u32,
        /// The switch's error, as `TYPE/CODE` names.
        error: String,
    },
    /// The switch closed the connection.
    #[error("the switch closed the control connection ({during})")]
    Closed { during: String },
    /// The switch does not speak the version asked for.
    #[error("the switch does not speak OpenFlow {wanted}: {detail}")]
    Version { wanted: Version, detail: String },
    /// The switch sent bytes that are not OpenFlow, or a message we could not encode.
    #[error("protocol: {0}")]
    Protocol(String),
}

pub type Result<T> = std::result::Result<T, ChannelError>;

/// One OpenFlow connection to the switch under test. See the module documentation.
pub struct Channel {
    /// The connection, non-blocking, read with `poll(2)` and the deadlines.
    stream: TcpStream,
    /// The version negotiated, every message encoded in it.
    version: Version,
    /// How long one exchange may take.
    timeout: Duration,
    /// What the switch said of itself at the handshake.
    info: SwitchInfo,
    /// The next request's xid.
    next_xid: u32,
    /// Bytes read and not yet cut into messages.
    rbuf: Vec<u8>,
    /// Bytes of `rbuf` already parsed into frames.
    rpos: usize,
    /// Reads so far: each message carries the number of the one that completed it.
    reads: u64,
    /// Reads that came with a kernel receive stamp.
    kernel_stamps: u64,
    /// The last read's stamp, given to the messages it completed.
    last_read_ns: u64,
    /// Messages that came while a helper waited for another, for `recv` (at most
    /// `BACKLOG_MAX`).
    backlog: VecDeque<Received>,
    /// Messages dropped for a full backlog.
    backlog_dropped: u64,
    /// The switch's ECHO_REQUESTs answered by the channel itself.
    echoes_answered: u64,
}

impl Channel {
    /// Opens the channel as `cfg` says: listens (and waits for one switch) or connects,
    /// then negotiates. See the module documentation.
    pub fn open(cfg: &ChannelConfig) -> Result<Channel> {
        match cfg.endpoint {
            Endpoint::Listen(addr) => Listener::bind(addr)?.accept(cfg),
            Endpoint::Connect(addr) => {
                let stream =
                    TcpStream::connect_timeout(&addr, cfg.connect_timeout).map_err(|e| {
                        ChannelError::Io {
                            what: format!("connecting to the switch at {addr}"),
                            source: e,
                        }
                    })?;
                Channel::handshake(stream, cfg)
            }
        }
    }
    /// The negotiated version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// What the switch said of itself at the handshake.
    pub fn info(&self) -> &SwitchInfo {
        &self.info
    }

    /// The OpenFlow number of the switch port named `name` (as in `ovs-vsctl show`).
    pub fn port_no(&self, name: &str) -> Option<u32> {
        self.info
            .ports
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.port_no)
    }

    /// The per-exchange timeout the helpers use.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Changes the per-exchange timeout.
    pub fn set_timeout(&mut self, t: Duration) {
        self.timeout = t;
    }

    /// Messages dropped from the backlog because it was full.
    pub fn backlog_dropped(&self) -> u64 {
        self.backlog_dropped
    }

    /// Whether received messages carry the kernel's receive stamps (`SO_TIMESTAMPING`
    /// software stamps, taken when the segment entered the stack): true when most reads
    /// so far came with one. Otherwise [`Received::at_ns`] is when `read` returned.
    pub fn kernel_rx_stamps(&self) -> bool {
        self.kernel_stamps * 2 > self.reads
    }

    /// ECHO_REQUESTs of the switch answered so far.
    pub fn echoes_answered(&self) -> u64 {
        self.echoes_answered
    }

    /// A fresh transaction id (never 0).
    pub fn xid(&mut self) -> u32 {
        let x = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1).max(1);
        x
    }

    /// Reserves `n` consecutive xids and returns the first.
    fn xids(&mut self, n: usize) -> u32 {
        let first = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(n as u32).max(1);
        first
    }

    /// Sends pre-encoded messages as they are (their xids are the caller's).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<Sent> {
        let first_ns = now_ns();
        self.write_all(bytes)?;
        Ok(Sent {
            first_ns,
            last_ns: now_ns(),
            first_xid: 0,
            messages: 0,
            bytes: bytes.len(),
        })
    }

    /// Sends one codec message with this xid.
    pub fn send_message(&mut self, m: &Message, xid: u32) -> Result<Sent> {
        let bytes = m
            .to_bytes(xid)
            .map_err(|e| ChannelError::Protocol(e.to_string()))?;
        let mut s = self.send_raw(&bytes)?;
        s.first_xid = xid;
        s.messages = 1;
        Ok(s)
    }

    /// Sends `m` with a fresh xid and returns the xid.
    pub fn request(&mut self, m: &Message) -> Result<u32> {
        let xid = self.xid();
        self.send_message(m, xid)?;
        Ok(xid)
    }

    /// Encodes all the FLOW_MODs (consecutive fresh xids), then writes them in one go:
    /// `first_ns` is before the first byte went to the kernel, `last_ns` after the last
    /// (the paper's transmission time is `last_ns - first_ns`). A FLOW_MOD the version
    /// cannot express is a [`ChannelError::Protocol`] before anything is sent.
    pub fn send_flow_mods(&mut self, fms: &[FlowMod<'_>]) -> Result<Sent> {
        let first_xid = self.xids(fms.len());
        let mut buf = Vec::with_capacity(fms.len() * 96);
        for (i, fm) in fms.iter().enumerate() {
            fm.encode(self.version, first_xid.wrapping_add(i as u32), &mut buf)
                .map_err(|e| ChannelError::Protocol(format!("FLOW_MOD: {e}")))?;
        }
        let mut s = self.send_raw(&buf)?;
        s.first_xid = first_xid;
        s.messages = fms.len();
        Ok(s)
    }

    /// Deletes every flow in every table and waits for the barrier after it.
    pub fn delete_all_flows(&mut self) -> Result<BarrierTiming> {
        let fm = FlowMod::delete(openflow::model::Match::default());
        self.send_flow_mods(&[fm])?;
        self.barrier()
    }

    /// Sends a BARRIER_REQUEST; returns its xid and send time.
    pub fn send_barrier(&mut self) -> Result<(u32, u64)> {
        let m = match self.version {
            Version::V1_0 => Message::V10(of10::Message::BarrierRequest),
            Version::V1_3 => Message::V13(of13::Message::BarrierRequest),
        };
        let xid = self.xid();
        let s = self.send_message(&m, xid)?;
        Ok((xid, s.first_ns))
    }

    /// Waits for the BARRIER_REPLY of `xid` until `deadline`; an ERROR before it (for a
    /// message sent before the barrier) is that message's [`ChannelError::Refused`].
    pub fn wait_barrier(&mut self, xid: u32, deadline: Instant) -> Result<u64> {
        let r = self.wait_xid("BARRIER_REQUEST", xid, deadline)?;
        Ok(r.at_ns)
    }

    /// A barrier round trip, bounded by the channel's timeout.
    pub fn barrier(&mut self) -> Result<BarrierTiming> {
        let (xid, sent_ns) = self.send_barrier()?;
        let deadline = Instant::now() + self.timeout;
        let reply_ns = self.wait_barrier(xid, deadline)?;
        Ok(BarrierTiming {
            xid,
            sent_ns,
            reply_ns,
        })
    }

    /// An echo round trip with `payload` bytes of data, in nanoseconds.
    pub fn echo(&mut self, payload: usize) -> Result<u64> {
        let data: Vec<u8> = (0..payload).map(|i| i as u8).collect();
        let m = match self.version {
            Version::V1_0 => Message::V10(of10::Message::EchoRequest { data }),
            Version::V1_3 => Message::V13(of13::Message::EchoRequest { data }),
        };
        let xid = self.xid();
        let s = self.send_message(&m, xid)?;
        let deadline = Instant::now() + self.timeout;
        let r = self.wait_xid("ECHO_REQUEST", xid, deadline)?;
        if r.msg_type != msg_type::ECHO_REPLY {
            return Err(ChannelError::Protocol(format!(
                "ECHO_REQUEST answered with {}",
                type_name(r.frame[0], r.msg_type)
            )));
        }
        Ok(r.at_ns.saturating_sub(s.first_ns))
    }

    /// The encoded PACKET_OUT sending `frame` out of switch port `out_port` (xid 0):
    /// encode once, send many times with [`Channel::send_raw`].
    pub fn encode_packet_out(&self, out_port: u32, frame: &[u8]) -> Result<Vec<u8>> {
        let actions = [Action::output(PortNo::Physical(out_port))];
        let in_port = match self.version {
            Version::V1_0 => PortNo::Any,
            Version::V1_3 => PortNo::Controller,
        };
        let po = PacketOut::unbuffered(frame, in_port, &actions);
        let mut out = Vec::new();
        po.encode(self.version, 0, &mut out)
            .map_err(|e| ChannelError::Protocol(format!("PACKET_OUT: {e}")))?;
        Ok(out)
    }

    /// Sends one PACKET_OUT of `frame` out of `out_port`.
    pub fn packet_out(&mut self, out_port: u32, frame: &[u8]) -> Result<Sent> {
        let bytes = self.encode_packet_out(out_port, frame)?;
        let mut s = self.send_raw(&bytes)?;
        s.messages = 1;
        Ok(s)
    }

    /// Sends a request for the statistics of every flow in every table; returns its xid
    /// and send time. Collect the answer with a [`FlowStatsCollector`] over
    /// [`Channel::recv`], or use [`Channel::flow_stats`].
    pub fn send_flow_stats_request(&mut self) -> Result<(u32, u64)> {
        let m = match self.version {
            Version::V1_0 => Message::V10(of10::Message::StatsRequest(of10::stats::StatsRequest {
                flags: 0,
                body: of10::stats::StatsRequestBody::Flow(of10::stats::FlowStatsRequest {
                    match_: of10::flow_match::Match::all(),
                    table_id: 0xff,
                    out_port: 0xffff,
                }),
            })),
            Version::V1_3 => Message::V13(of13::Message::MultipartRequest(MultipartRequest {
                flags: 0,
                body: MultipartRequestBody::Flow(of13::multipart::FlowStatsRequest {
                    table_id: 0xff,
                    out_port: 0xffff_ffff,
                    out_group: 0xffff_ffff,
                    ..Default::default()
                }),
            })),
        };
        let xid = self.xid();
        let s = self.send_message(&m, xid)?;
        Ok((xid, s.first_ns))
    }

    /// Full-table flow statistics, all parts, bounded by the channel's timeout.
    pub fn flow_stats(&mut self) -> Result<FlowStatsReply> {
        let (xid, sent_ns) = self.send_flow_stats_request()?;
        let mut c = FlowStatsCollector::default();
        c.expect(xid, sent_ns);
        let deadline = Instant::now() + self.timeout;
        loop {
            let r = self.wait_xid("a flow-stats request", xid, deadline)?;
            if let Some(done) = c.offer(&r)? {
                return Ok(done);
            }
        }
    }

    /// The next message from the switch (the backlog first), or `None` at `deadline`.
    /// ECHO_REQUESTs are answered, not returned. ERRORs are returned like any message.
    pub fn recv(&mut self, deadline: Instant) -> Result<Option<Received>> {
        loop {
            if let Some(r) = self.backlog.pop_front() {
                return Ok(Some(r));
            }
            if let Some(r) = self.next_frame()? {
                return Ok(Some(r));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.fill(left, "receiving")?;
        }
    }

    /// Every message already received or readable without waiting.
    pub fn drain(&mut self) -> Result<Vec<Received>> {
        let mut out = Vec::new();
        while let Some(r) = self.recv(Instant::now())? {
            out.push(r);
        }
        Ok(out)
    }

    /// Waits for a message with this xid; other messages go to the backlog; an ERROR
    /// (whatever its xid) fails the wait.
    fn wait_xid(&mut self, what: &str, xid: u32, deadline: Instant) -> Result<Received> {
        let r = self.wait_raw(what, deadline, |r| {
            r.xid == xid || r.msg_type == msg_type::ERROR
        })?;
        if let Some(e) = r.error() {
            return Err(e);
        }
        Ok(r)
    }

    /// Waits for the first new message `want` accepts (messages not accepted go to the
    /// backlog; the backlog itself is not searched).
    fn wait_raw(
        &mut self,
        what: &str,
        deadline: Instant,
        want: impl Fn(&Received) -> bool,
    ) -> Result<Received> {
        let started = Instant::now();
        loop {
            while let Some(r) = self.next_frame()? {
                if want(&r) {
                    return Ok(r);
                }
                self.keep(r);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ChannelError::Timeout {
                    what: what.to_string(),
                    after: Instant::now() - started,
                });
            }
            self.fill(left, what)?;
        }
    }

    fn keep(&mut self, r: Received) {
        if self.backlog.len() >= BACKLOG_MAX {
            self.backlog.pop_front();
            self.backlog_dropped += 1;
        }
        self.backlog.push_back(r);
    }

    /// The next complete frame in the read buffer (answering echo requests).
    fn next_frame(&mut self) -> Result<Option<Received>> {
        loop {
            let avail = &self.rbuf[self.rpos..];
            let len = match frame_len(avail) {
                Ok(Some(n)) if n <= avail.len() => n,
                Ok(_) => {
                    // Compact when the parsed part is large.
                    if self.rpos > 0 && self.rpos >= self.rbuf.len() / 2 {
                        self.rbuf.drain(..self.rpos);
                        self.rpos = 0;
                    }
                    return Ok(None);
                }
                Err(e) => return Err(ChannelError::Protocol(e.to_string())),
            };
            let frame = avail[..len].to_vec();
            self.rpos += len;
            let xid = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
            let t = frame[1];
            if t == msg_type::ECHO_REQUEST {
                let mut reply = frame;
                reply[1] = msg_type::ECHO_REPLY;
                self.write_all(&reply)?;
                self.echoes_answered += 1;
                continue;
            }
            return Ok(Some(Received {
                at_ns: self.last_read_ns,
                read_no: self.reads,
                xid,
                msg_type: t,
                frame,
            }));
        }
    }
}
