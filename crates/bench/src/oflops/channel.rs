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

use std::collections::VecDeque;
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use openflow::common::{Hello, SwitchConfig};
use openflow::model::{Action, FlowMod, PacketOut, PortNo};
use openflow::of13::multipart::{
    MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody,
};
use openflow::{frame_len, of10, of13, view, MacAddr, Message, Version, HEADER_LEN};
use serde::Serialize;

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

/// A switch port, from FEATURES_REPLY (1.0) or PORT_DESC (1.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortInfo {
    pub port_no: u32,
    pub name: String,
    pub hw_addr: MacAddr,
}

/// A switch port the bench sends and captures probes on: the switch's name for it
/// (`--data-port NAME=IFACE`), its OpenFlow number, and the Linux interface wired to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataPort {
    /// The switch's name for the port (`ovs-vsctl list-ports`).
    pub name: String,
    /// Its OpenFlow port number.
    pub port_no: u32,
    /// The Linux interface on this machine wired to it.
    pub iface: String,
}

impl DataPort {
    /// Parses `NAME=IFACE` and finds NAME among the switch's ports.
    pub fn resolve(info: &SwitchInfo, spec: &str) -> Result<DataPort> {
        let (name, iface) = spec.split_once('=').ok_or_else(|| {
            ChannelError::Protocol(format!("--data-port {spec:?}: expected NAME=IFACE"))
        })?;
        let port_no = info
            .ports
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.port_no)
            .ok_or_else(|| {
                ChannelError::Protocol(format!(
                    "the switch has no port named {name:?} (it has {})",
                    info.ports
                        .iter()
                        .map(|p| format!("{}={}", p.name, p.port_no))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        Ok(DataPort {
            name: name.to_string(),
            port_no,
            iface: iface.to_string(),
        })
    }
}

/// What the switch said of itself when the channel opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchInfo {
    pub datapath_id: u64,
    pub n_buffers: u32,
    pub n_tables: u8,
    pub ports: Vec<PortInfo>,
}

impl SwitchInfo {
    /// The numbers of the physical ports (not LOCAL), in the order the switch gave.
    pub fn physical_ports(&self) -> Vec<u32> {
        self.ports
            .iter()
            .filter(|p| p.port_no < 0xff00)
            .map(|p| p.port_no)
            .collect()
    }
}

/// When bytes went to the kernel: before the first, after the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sent {
    pub first_ns: u64,
    pub last_ns: u64,
    /// The xid of the first message sent; the others follow it by one each.
    pub first_xid: u32,
    pub messages: usize,
    pub bytes: usize,
}

/// One barrier round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BarrierTiming {
    pub xid: u32,
    pub sent_ns: u64,
    pub reply_ns: u64,
}

impl BarrierTiming {
    pub fn rtt_ns(&self) -> u64 {
        self.reply_ns.saturating_sub(self.sent_ns)
    }
}

/// A complete flow-statistics answer (all its parts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct FlowStatsReply {
    pub xid: u32,
    pub sent_ns: u64,
    /// When the first part arrived.
    pub first_part_ns: u64,
    /// When the last part (the one without the MORE flag) arrived.
    pub last_part_ns: u64,
    /// STATS_REPLY / MULTIPART_REPLY messages the answer came in.
    pub parts: u32,
    /// `read` calls that delivered parts (a rough count of the TCP segments).
    pub reads: u32,
    /// Flow entries in all parts.
    pub flows: u32,
    /// Bytes of all parts, headers included.
    pub bytes: u64,
    /// Packets counted by all the flows reported.
    pub packet_count: u64,
}

impl FlowStatsReply {
    /// From the request to the last part.
    pub fn response_ns(&self) -> u64 {
        self.last_part_ns.saturating_sub(self.sent_ns)
    }
}

/// One message from the switch: its raw frame and when it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub at_ns: u64,
    /// The number of the `read` that completed it (messages of one read share it).
    pub read_no: u64,
    pub xid: u32,
    pub msg_type: u8,
    /// The whole message, header included.
    pub frame: Vec<u8>,
}

impl Received {
    /// Decodes the message.
    pub fn message(&self) -> Result<Message> {
        Message::decode(&self.frame)
            .map(|(_, m)| m)
            .map_err(|e| ChannelError::Protocol(e.to_string()))
    }

    /// A zero-copy view of a PACKET_IN; `None` for any other message.
    pub fn packet_in(&self) -> Option<view::PacketIn<&[u8]>> {
        if self.msg_type != msg_type::PACKET_IN {
            return None;
        }
        view::PacketIn::new_checked(&self.frame[..]).ok()
    }

    /// For an ERROR: the [`ChannelError::Refused`] it means; `None` for other messages.
    pub fn error(&self) -> Option<ChannelError> {
        if self.msg_type != msg_type::ERROR {
            return None;
        }
        let (error, data) = match self.message() {
            Ok(Message::V10(of10::Message::Error(e))) => match &e {
                openflow::common::ErrorBody::Standard {
                    err_type,
                    code,
                    data,
                } => (
                    of10::error_codes::describe_error(*err_type, *code),
                    data.clone(),
                ),
                openflow::common::ErrorBody::Experimenter { data, .. } => {
                    (format!("{e:?}"), data.clone())
                }
            },
            Ok(Message::V13(of13::Message::Error(e))) => {
                let data = match &e {
                    openflow::common::ErrorBody::Standard { data, .. }
                    | openflow::common::ErrorBody::Experimenter { data, .. } => data.clone(),
                };
                (of13::error_codes::describe(&e), data)
            }
            _ => ("an undecodable ERROR".to_string(), Vec::new()),
        };
        // The data is (the start of) the message refused: name its type.
        let refused = if data.len() >= HEADER_LEN {
            type_name(data[0], data[1])
        } else {
            "a message".to_string()
        };
        Some(ChannelError::Refused {
            refused,
            xid: self.xid,
            error,
        })
    }
}

/// `FLOW_MOD` for wire version `v` and type `t` (numbers when unknown).
fn type_name(v: u8, t: u8) -> String {
    let name = match Version::from_wire(v) {
        Ok(Version::V1_0) => of10::MsgType::from_raw(t).to_string(),
        Ok(Version::V1_3) => of13::MsgType::from_raw(t).to_string(),
        Err(_) => format!("type {t}"),
    };
    name
}

/// A bound listening socket, so that its port is known before the switch is told to
/// connect (bind port 0, read [`Listener::local_addr`], configure the switch, accept).
pub struct Listener {
    inner: TcpListener,
}

impl Listener {
    pub fn bind(addr: SocketAddr) -> Result<Listener> {
        let inner = TcpListener::bind(addr).map_err(|e| ChannelError::Io {
            what: format!("listening on {addr}"),
            source: e,
        })?;
        inner
            .set_nonblocking(true)
            .map_err(|e| io_err("listener", e))?;
        Ok(Listener { inner })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.inner
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Waits up to `cfg.connect_timeout` for a switch, then opens the channel with it
    /// (`cfg.endpoint` is not used).
    pub fn accept(&self, cfg: &ChannelConfig) -> Result<Channel> {
        let deadline = Instant::now() + cfg.connect_timeout;
        loop {
            match self.inner.accept() {
                Ok((stream, _)) => return Channel::handshake(stream, cfg),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ChannelError::Timeout {
                            what: format!(
                                "a connection on {} (no switch connected)",
                                self.local_addr()
                            ),
                            after: cfg.connect_timeout,
                        });
                    }
                    poll_fd(self.inner.as_raw_fd(), libc::POLLIN, left)
                        .map_err(|e| io_err("waiting for the switch", e))?;
                }
                Err(e) => return Err(io_err("accepting the switch", e)),
            }
        }
    }
}

fn io_err(what: &str, source: std::io::Error) -> ChannelError {
    ChannelError::Io {
        what: what.to_string(),
        source,
    }
}

/// poll(2) on one descriptor; returns the revents (0 on timeout).
fn poll_fd(fd: i32, events: i16, timeout: Duration) -> std::io::Result<i16> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // Round up: a sub-millisecond wait must still wait.
    let ms = if ms == 0 && !timeout.is_zero() { 1 } else { ms };
    loop {
        // SAFETY: one valid pollfd, count 1.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r >= 0 {
            return Ok(if r == 0 { 0 } else { p.revents });
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// One OpenFlow connection to the switch under test. See the module documentation.
pub struct Channel {
    stream: TcpStream,
    version: Version,
    timeout: Duration,
    info: SwitchInfo,
    next_xid: u32,
    rbuf: Vec<u8>,
    /// Bytes of `rbuf` already parsed into frames.
    rpos: usize,
    reads: u64,
    /// Reads that came with a kernel receive stamp.
    kernel_stamps: u64,
    last_read_ns: u64,
    backlog: VecDeque<Received>,
    backlog_dropped: u64,
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

    fn handshake(stream: TcpStream, cfg: &ChannelConfig) -> Result<Channel> {
        stream
            .set_nonblocking(true)
            .map_err(|e| io_err("control socket", e))?;
        enable_rx_stamps(stream.as_raw_fd());
        let _ = stream.set_nodelay(true);
        let mut ch = Channel {
            stream,
            version: cfg.version,
            timeout: cfg.timeout,
            info: SwitchInfo {
                datapath_id: 0,
                n_buffers: 0,
                n_tables: 0,
                ports: Vec::new(),
            },
            next_xid: 1,
            rbuf: Vec::with_capacity(1 << 16),
            rpos: 0,
            reads: 0,
            kernel_stamps: 0,
            last_read_ns: 0,
            backlog: VecDeque::new(),
            backlog_dropped: 0,
            echoes_answered: 0,
        };
        let v = cfg.version;
        // HELLO: 1.0 with no body, 1.3 with a version bitmap of 1.3 alone.
        let hello = match v {
            Version::V1_0 => Message::V10(of10::Message::Hello(Hello::default())),
            Version::V1_3 => Message::V13(of13::Message::Hello(Hello::with_versions(&[v.wire()]))),
        };
        let xid = ch.xid();
        ch.send_message(&hello, xid)?;
        let deadline = Instant::now() + cfg.timeout;
        let their = ch.wait_raw("HELLO", deadline, |r| r.msg_type == msg_type::HELLO)?;
        check_hello(&their, v)?;
        // FEATURES.
        let req = match v {
            Version::V1_0 => Message::V10(of10::Message::FeaturesRequest),
            Version::V1_3 => Message::V13(of13::Message::FeaturesRequest),
        };
        let fx = ch.request(&req)?;
        let deadline = Instant::now() + cfg.timeout;
        let reply = ch.wait_xid("FEATURES_REQUEST", fx, deadline)?;
        match reply.message()? {
            Message::V10(of10::Message::FeaturesReply(f)) => {
                ch.info = SwitchInfo {
                    datapath_id: f.datapath_id,
                    n_buffers: f.n_buffers,
                    n_tables: f.n_tables,
                    ports: f
                        .ports
                        .iter()
                        .map(|p| PortInfo {
                            port_no: view::widen_port(p.port_no),
                            name: p.name.to_string(),
                            hw_addr: p.hw_addr,
                        })
                        .collect(),
                }
            }
            Message::V13(of13::Message::FeaturesReply(f)) => {
                ch.info.datapath_id = f.datapath_id;
                ch.info.n_buffers = f.n_buffers;
                ch.info.n_tables = f.n_tables;
                let req = Message::V13(of13::Message::MultipartRequest(MultipartRequest {
                    flags: 0,
                    body: MultipartRequestBody::PortDesc,
                }));
                let px = ch.request(&req)?;
                let deadline = Instant::now() + cfg.timeout;
                loop {
                    let r = ch.wait_xid("PORT_DESC", px, deadline)?;
                    if let Message::V13(of13::Message::MultipartReply(MultipartReply {
                        flags,
                        body: MultipartReplyBody::PortDesc { ports },
                    })) = r.message()?
                    {
                        ch.info.ports.extend(ports.iter().map(|p| PortInfo {
                            port_no: p.port_no,
                            name: p.name.to_string(),
                            hw_addr: p.hw_addr,
                        }));
                        if flags & of13::multipart::OFPMPF_REPLY_MORE == 0 {
                            break;
                        }
                    }
                }
            }
            other => {
                return Err(ChannelError::Protocol(format!(
                    "expected FEATURES_REPLY, got {}",
                    other.type_name()
                )))
            }
        }
        let config = SwitchConfig {
            flags: 0,
            miss_send_len: cfg.miss_send_len,
        };
        let set = match v {
            Version::V1_0 => Message::V10(of10::Message::SetConfig(config)),
            Version::V1_3 => Message::V13(of13::Message::SetConfig(config)),
        };
        ch.request(&set)?;
        ch.barrier()?;
        Ok(ch)
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

impl Channel {
    /// Reads what the socket has, waiting up to `left` for something.
    fn fill(&mut self, left: Duration, what: &str) -> Result<()> {
        let ev =
            poll_fd(self.stream.as_raw_fd(), libc::POLLIN, left).map_err(|e| io_err(what, e))?;
        if ev == 0 {
            return Ok(());
        }
        self.read_once(what)
    }

    /// One non-blocking read into the buffer, with the kernel's receive stamp.
    fn read_once(&mut self, what: &str) -> Result<()> {
        let old = self.rbuf.len();
        self.rbuf.resize(old + (1 << 16), 0);
        let (r, kernel) = recv_stamped(self.stream.as_raw_fd(), &mut self.rbuf[old..]);
        let at = match kernel {
            Some(t) => {
                self.kernel_stamps += 1;
                t
            }
            None => now_ns(),
        };
        match r {
            Ok(0) => {
                self.rbuf.truncate(old);
                Err(ChannelError::Closed {
                    during: what.to_string(),
                })
            }
            Ok(n) => {
                self.rbuf.truncate(old + n);
                self.reads += 1;
                self.last_read_ns = at;
                Ok(())
            }
            Err(e) => {
                self.rbuf.truncate(old);
                if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted {
                    Ok(())
                } else {
                    Err(io_err(what, e))
                }
            }
        }
    }

    /// Writes all of `bytes`, reading meanwhile whatever the switch sends (kept for
    /// later), bounded by the channel's timeout without progress.
    fn write_all(&mut self, mut bytes: &[u8]) -> Result<()> {
        let mut last_progress = Instant::now();
        while !bytes.is_empty() {
            match self.stream.write(bytes) {
                Ok(0) => {
                    return Err(ChannelError::Closed {
                        during: "sending".into(),
                    })
                }
                Ok(n) => {
                    bytes = &bytes[n..];
                    last_progress = Instant::now();
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e)
                    if e.kind() == ErrorKind::BrokenPipe
                        || e.kind() == ErrorKind::ConnectionReset =>
                {
                    return Err(ChannelError::Closed {
                        during: "sending".into(),
                    })
                }
                Err(e) => return Err(io_err("sending to the switch", e)),
            }
            let left = (last_progress + self.timeout).saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ChannelError::Timeout {
                    what: "the bytes we send (it stopped reading)".into(),
                    after: self.timeout,
                });
            }
            let ev = poll_fd(self.stream.as_raw_fd(), libc::POLLIN | libc::POLLOUT, left)
                .map_err(|e| io_err("sending to the switch", e))?;
            if ev & libc::POLLIN != 0 {
                // Keep what arrives; its frames are parsed by the next receive.
                self.read_once("sending")?;
            }
        }
        Ok(())
    }
}

/// `SO_TIMESTAMPING` and its flags (Linux values; not every libc exports them).
const SO_TIMESTAMPING: libc::c_int = 37;
const SOF_TIMESTAMPING_RX_SOFTWARE: u32 = 1 << 3;
const SOF_TIMESTAMPING_SOFTWARE: u32 = 1 << 4;

/// Asks for software receive stamps on the control socket (best effort).
fn enable_rx_stamps(fd: i32) {
    let flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
    // SAFETY: a u32 that lives through the call, its size given.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_TIMESTAMPING,
            &flags as *const u32 as *const libc::c_void,
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
}

/// A non-blocking `recvmsg` into `buf`: the bytes read, and the kernel's software
/// receive stamp of the last segment read (ns, `CLOCK_REALTIME`) when there is one.
fn recv_stamped(fd: i32, buf: &mut [u8]) -> (std::io::Result<usize>, Option<u64>) {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; zeros are valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at iov, buf and control, which outlive the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return (Err(std::io::Error::last_os_error()), None);
    }
    let mut stamp = None;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within
    // msg_controllen; SCM_TIMESTAMPING data is three timespecs.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPING {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const [libc::timespec; 3]);
                let t = ts[0];
                if t.tv_sec != 0 || t.tv_nsec != 0 {
                    stamp = Some(t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64);
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    (Ok(n as usize), stamp)
}

/// Checks the switch's HELLO offers `v`.
fn check_hello(r: &Received, v: Version) -> Result<()> {
    let theirs = r.frame[0];
    // A 1.3 HELLO's version bitmap is authoritative; else the header's version is the
    // highest the switch speaks (and it speaks every version below it, by the spec).
    let bitmap = if theirs >= 4 && r.frame.len() > HEADER_LEN {
        match Message::decode(&r.frame) {
            Ok((_, Message::V13(of13::Message::Hello(h)))) => h.versions(),
            _ => None,
        }
    } else {
        None
    };
    let detail = match bitmap {
        Some(vs) if vs.contains(&v.wire()) => return Ok(()),
        Some(vs) => format!("its HELLO offers wire versions {vs:?}"),
        None if theirs >= v.wire() => return Ok(()),
        None => format!("its HELLO is version {theirs:#04x}"),
    };
    Err(ChannelError::Version { wanted: v, detail })
}

/// Folds the parts of flow-stats answers, by xid, as they arrive. Several requests may
/// be outstanding (polling at a rate faster than the switch answers).
#[derive(Debug, Default)]
pub struct FlowStatsCollector {
    pending: Vec<(FlowStatsReply, u64)>,
}

impl FlowStatsCollector {
    /// Registers a request sent at `sent_ns`.
    pub fn expect(&mut self, xid: u32, sent_ns: u64) {
        self.pending.push((
            FlowStatsReply {
                xid,
                sent_ns,
                ..FlowStatsReply::default()
            },
            u64::MAX,
        ));
    }

    /// Requests still unanswered (or partly answered).
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }

    /// The send times of the requests still outstanding.
    pub fn outstanding_sent_ns(&self) -> Vec<u64> {
        self.pending.iter().map(|(p, _)| p.sent_ns).collect()
    }

    /// Offers a received message: `Ok(Some(reply))` when it was the last part of an
    /// expected answer, `Ok(None)` when it was another part or not a stats reply of ours;
    /// an ERROR answering one of ours is its [`ChannelError::Refused`].
    pub fn offer(&mut self, r: &Received) -> Result<Option<FlowStatsReply>> {
        let Some(i) = self.pending.iter().position(|(p, _)| p.xid == r.xid) else {
            return Ok(None);
        };
        if let Some(e) = r.error() {
            self.pending.remove(i);
            return Err(e);
        }
        let (flags, flows, packets) = match r.message()? {
            Message::V10(of10::Message::StatsReply(of10::stats::StatsReply {
                flags,
                body: of10::stats::StatsReplyBody::Flow { stats },
            })) => (
                flags,
                stats.len(),
                stats.iter().map(|s| s.packet_count).sum::<u64>(),
            ),
            Message::V13(of13::Message::MultipartReply(MultipartReply {
                flags,
                body: MultipartReplyBody::Flow { stats },
            })) => (
                flags,
                stats.len(),
                stats.iter().map(|s| s.packet_count).sum::<u64>(),
            ),
            _ => return Ok(None),
        };
        let (p, last_read) = &mut self.pending[i];
        if p.parts == 0 {
            p.first_part_ns = r.at_ns;
        }
        p.parts += 1;
        if *last_read != r.read_no {
            p.reads += 1;
            *last_read = r.read_no;
        }
        p.flows += flows as u32;
        p.packet_count += packets;
        p.bytes += r.frame.len() as u64;
        p.last_part_ns = r.at_ns;
        // OFPSF_REPLY_MORE and OFPMPF_REPLY_MORE are both bit 0.
        if flags & 1 == 0 {
            return Ok(Some(self.pending.remove(i).0));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_checks_follow_the_bitmap_then_the_header() {
        let mk = |frame: Vec<u8>| Received {
            at_ns: 0,
            read_no: 0,
            xid: 0,
            msg_type: 0,
            frame,
        };
        let only13 = Message::V13(of13::Message::Hello(Hello::with_versions(&[4])))
            .to_bytes(1)
            .unwrap();
        assert!(check_hello(&mk(only13.clone()), Version::V1_3).is_ok());
        let e = check_hello(&mk(only13), Version::V1_0).unwrap_err();
        assert!(e.to_string().contains("[4]"), "{e}");
        let plain10 = vec![1, 0, 0, 8, 0, 0, 0, 1];
        assert!(check_hello(&mk(plain10.clone()), Version::V1_0).is_ok());
        assert!(check_hello(&mk(plain10), Version::V1_3).is_err());
    }
}
