//! The switch's loop: one thread polling (mio, edge-triggered epoll) its ports and its
//! controller connections, running each to completion.
//!
//! A turn: controller messages first (a FLOW_MOD read in this turn is in the tables
//! before any frame of this turn is looked up), then up to [`SwitchConfig::batch`]
//! frames from each port with frames waiting, each through the tables to the ports'
//! transmit queues and the controllers' output buffers; then every port with frames
//! queued is flushed once, and every controller's output written once. Timers run
//! between turns: flow expiry, link state, echo keepalive, reconnection.
//!
//! A port's frames are copied from its receive ring into a batch buffer before they go
//! through the tables: the tables' outputs need every port (flood, back out of the
//! input port), including the one whose ring the frame is in.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::event::Source;
use mio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::handler::{Agent, AgentConfig};
use super::ports::PortIo;
use super::tables::Tables;
use super::tls::TlsStream;
use crate::datapath::Port;
use crate::table::Pipeline;

/// Tokens at and above this are controller connections; below, ports.
const CONTROLLER_BASE: usize = 1 << 20;

/// Tokens at and above this are listening sockets (and above any connection's).
const LISTENER_BASE: usize = 1 << 30;

/// Bytes read from a controller per read call.
const READ_CHUNK: usize = 64 * 1024;

/// Reads per controller per turn before the others get a turn.
const READS_PER_TURN: usize = 4;

/// A controller to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub addr: SocketAddr,
    /// Over TLS (`ssl:`; the switch's files in [`SwitchConfig::tls`]).
    pub tls: bool,
}

impl std::str::FromStr for Target {
    type Err = String;

    /// `tcp:HOST:PORT`, `tcp:HOST` (port 6653), `HOST:PORT`, or `ssl:HOST[:PORT]`
    /// for TLS.
    fn from_str(s: &str) -> Result<Target, String> {
        let (tls, rest) = match s.strip_prefix("ssl:") {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix("tcp:").unwrap_or(s)),
        };
        let with_port = if rest.contains(':') && !rest.ends_with(']') {
            rest.to_string()
        } else {
            format!("{rest}:6653")
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| format!("{s}: {e}"))?
            .next()
            .ok_or_else(|| format!("{s}: no address"))?;
        Ok(Target { addr, tls })
    }
}

/// Where a switch accepts connections from controllers and tools (`ovs-ofctl`), as
/// Open vSwitch's `punix:` and `ptcp:` do. Such connections are served like a
/// controller's but are not sent asynchronous messages (PACKET_IN, FLOW_REMOVED,
/// PORT_STATUS), as Open vSwitch's service connections are not, and are not
/// reconnected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

impl std::str::FromStr for ListenAddr {
    type Err = String;

    /// `punix:PATH`, or `ptcp:PORT[:IP]` (IP 0.0.0.0 by default).
    fn from_str(s: &str) -> Result<ListenAddr, String> {
        if let Some(path) = s.strip_prefix("punix:") {
            if path.is_empty() {
                return Err(format!("{s}: no path"));
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        if let Some(rest) = s.strip_prefix("ptcp:") {
            let (port, ip) = rest.split_once(':').unwrap_or((rest, "0.0.0.0"));
            let port: u16 = port.parse().map_err(|e| format!("{s}: port: {e}"))?;
            let ip: std::net::IpAddr = ip.parse().map_err(|e| format!("{s}: address: {e}"))?;
            return Ok(ListenAddr::Tcp(SocketAddr::new(ip, port)));
        }
        Err(format!("{s:?}: expected punix:PATH or ptcp:PORT[:IP]"))
    }
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenAddr::Unix(p) => write!(f, "punix:{}", p.display()),
            ListenAddr::Tcp(a) => write!(f, "ptcp:{}:{}", a.port(), a.ip()),
        }
    }
}

/// How a switch runs.
#[derive(Debug, Clone)]
pub struct SwitchConfig {
    pub agent: AgentConfig,
    pub controllers: Vec<Target>,
    /// Where to accept service connections (`ovs-ofctl`): answered, sent no
    /// asynchronous message.
    pub listen: Vec<ListenAddr>,
    /// Where to accept controllers (Open vSwitch's `set-controller ptcp:`): served as
    /// the `controllers` are, asynchronous messages included.
    pub listen_controllers: Vec<ListenAddr>,
    /// The TLS client configuration for `ssl:` controllers ([`tls_io::client_config`]).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Frames read from one port per turn.
    pub batch: usize,
    /// Echo request after this much silence from a controller; the connection is
    /// closed after three times as much.
    pub echo_interval: Duration,
    /// How often flows are checked for expiry.
    pub expire_interval: Duration,
    /// How often link states are read.
    pub link_interval: Duration,
    /// First wait before reconnecting; doubled after each failure up to
    /// `backoff_max`, reset by a completed handshake.
    pub backoff_min: Duration,
    pub backoff_max: Duration,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            agent: AgentConfig::default(),
            controllers: Vec::new(),
            listen: Vec::new(),
            listen_controllers: Vec::new(),
            tls: None,
            batch: 64,
            echo_interval: Duration::from_secs(5),
            expire_interval: Duration::from_millis(100),
            link_interval: Duration::from_millis(500),
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(5),
        }
    }
}

/// A connection's socket.
#[derive(Debug)]
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// A TLS session over TCP (boxed: a session is a few hundred bytes of state).
    Tls(Box<TlsStream>),
}

impl Stream {
    fn source(&mut self) -> &mut dyn Source {
        match self {
            Stream::Tcp(s) => s,
            Stream::Unix(s) => s,
            Stream::Tls(s) => s.tcp_mut(),
        }
    }

    fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Stream::Tcp(s) => Some(s),
            Stream::Tls(s) => Some(s.tcp()),
            Stream::Unix(_) => None,
        }
    }

    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }

    fn write_some(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    /// Sends what the TLS session holds encrypted, as far as the socket takes it.
    fn send_backlog(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(s) => s.send_backlog(),
            _ => Ok(()),
        }
    }
}

/// How a connection came to be.
#[derive(Debug)]
enum Origin {
    /// The switch connects to this controller, and reconnects.
    Active {
        target: SocketAddr,
        tls: bool,
        backoff: Duration,
        /// When to try again, while there is no stream.
        next_attempt: Instant,
    },
    /// Accepted on a listening socket; the slot is free again once it closes.
    Passive,
}

/// A connection's socket side (its protocol side is the agent's channel of the same
/// index).
#[derive(Debug)]
struct Conn {
    origin: Origin,
    stream: Option<Stream>,
    /// The connect has not completed yet.
    connecting: bool,
    /// Whether bytes may be waiting (an edge was seen and not read to WouldBlock).
    readable: bool,
}

impl Conn {
    fn name(&self) -> String {
        match &self.origin {
            Origin::Active { target, .. } => target.to_string(),
            Origin::Passive => "a passive connection".into(),
        }
    }
}

/// A listening socket.
#[derive(Debug)]
enum Socket {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

/// A listening socket and what it accepts.
#[derive(Debug)]
struct Listener {
    socket: Socket,
    /// Service connections (no asynchronous messages) rather than controllers.
    service: bool,
}

/// A switch: its agent (tables, ports, controllers) and its loop.
pub struct Switch<P: PortIo = Port, T: Tables = Pipeline> {
    pub agent: Agent<P, T>,
    config: SwitchConfig,
    poll: Poll,
    conns: Vec<Conn>,
    listeners: Vec<Listener>,
    /// Ports that may have frames waiting (edge seen, not read empty).
    hot: Vec<bool>,
    /// The frames of one batch, back to back, and where each ends.
    arena: Vec<u8>,
    ends: Vec<usize>,
    read_buf: Box<[u8]>,
    next_expire: Instant,
    next_links: Instant,
    next_keepalive: Instant,
}

impl<P: PortIo, T: Tables> Switch<P, T> {
    /// A switch on `ports` (OpenFlow number and I/O each).
    pub fn new(config: SwitchConfig, ports: Vec<(u32, P)>) -> io::Result<Switch<P, T>> {
        let now = Instant::now();
        if config.tls.is_none() {
            if let Some(t) = config.controllers.iter().find(|t| t.tls) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "ssl:{} needs the switch's TLS files (certificate, key, CA)",
                        t.addr
                    ),
                ));
            }
        }
        let poll = Poll::new()?;
        for (i, (_, p)) in ports.iter().enumerate() {
            poll.registry()
                .register(&mut SourceFd(&p.raw_fd()), Token(i), Interest::READABLE)?;
        }
        let n_ports = ports.len();
        let agent = Agent::new(config.agent.clone(), ports, config.controllers.len(), now);
        let conns = config
            .controllers
            .iter()
            .map(|t| Conn {
                origin: Origin::Active {
                    target: t.addr,
                    tls: t.tls,
                    backoff: config.backoff_min,
                    next_attempt: now,
                },
                stream: None,
                connecting: false,
                readable: false,
            })
            .collect();
        let mut listeners = Vec::new();
        let all = config
            .listen
            .iter()
            .map(|l| (l, true))
            .chain(config.listen_controllers.iter().map(|l| (l, false)));
        for (k, (l, service)) in all.enumerate() {
            let token = Token(LISTENER_BASE + k);
            let mut socket = match l {
                ListenAddr::Tcp(a) => Socket::Tcp(TcpListener::bind(*a)?),
                ListenAddr::Unix(path) => {
                    // A socket file left by an earlier run is replaced.
                    if std::fs::symlink_metadata(path)
                        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
                    {
                        let _ = std::fs::remove_file(path);
                    }
                    let l = UnixListener::bind(path).map_err(|e| {
                        io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                    })?;
                    Socket::Unix(l, path.clone())
                }
            };
            match &mut socket {
                Socket::Tcp(l) => poll.registry().register(l, token, Interest::READABLE)?,
                Socket::Unix(l, _) => poll.registry().register(l, token, Interest::READABLE)?,
            }
            listeners.push(Listener { socket, service });
        }
        Ok(Switch {
            agent,
            poll,
            conns,
            listeners,
            // Frames may wait from before the registration: read every port once.
            hot: vec![true; n_ports],
            arena: Vec::with_capacity(config.batch * 2048),
            ends: Vec::with_capacity(config.batch),
            read_buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
            next_expire: now,
            next_links: now,
            next_keepalive: now,
            config,
        })
    }

    /// Runs until `stop` is set (checked at least every 100 ms).
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        let mut events = Events::with_capacity(256);
        while !stop.load(Ordering::Relaxed) {
            self.turn(&mut events)?;
        }
        for j in 0..self.conns.len() {
            self.write(j);
            self.drop_conn(j, Instant::now(), "the switch is stopping");
        }
        for l in &self.listeners {
            if let Socket::Unix(_, path) = &l.socket {
                let _ = std::fs::remove_file(path);
            }
        }
        Ok(())
    }

    /// One turn of the loop: wait for something (at most until the next timer), then
    /// serve what is ready.
    pub fn turn(&mut self, events: &mut Events) -> io::Result<()> {
        let now = Instant::now();
        self.connect_due(now);
        let busy = self.hot.iter().any(|&h| h)
            || self.conns.iter().any(|c| c.readable)
            || self.agent.fabric.ports.iter().any(|p| p.io.tx_in_flight());
        let timeout = if busy {
            Duration::ZERO
        } else {
            let mut next = self
                .next_expire
                .min(self.next_links)
                .min(self.next_keepalive);
            for c in &self.conns {
                if let (None, Origin::Active { next_attempt, .. }) = (&c.stream, &c.origin) {
                    next = next.min(*next_attempt);
                }
            }
            next.saturating_duration_since(now)
                .min(Duration::from_millis(100))
        };
        match self.poll.poll(events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e),
        }
        let now = Instant::now();
        for ev in events.iter() {
            let t = ev.token().0;
            if t >= LISTENER_BASE {
                self.accept(t - LISTENER_BASE, now);
                continue;
            }
            if t < CONTROLLER_BASE {
                if let Some(h) = self.hot.get_mut(t) {
                    *h = true;
                }
                if ev.is_error() {
                    let p = &self.agent.fabric.ports[t];
                    if let Some(e) = p.io.take_error() {
                        tracing::debug!(port = p.port_no, error = %e, "port error");
                    }
                }
                continue;
            }
            let j = t - CONTROLLER_BASE;
            if j >= self.conns.len() || self.conns[j].stream.is_none() {
                continue;
            }
            if self.conns[j].connecting {
                self.finish_connect(j, now);
            }
            // (A failed connect has just dropped the stream: nothing to read then.)
            if self.conns[j].stream.is_some()
                && (ev.is_readable() || ev.is_read_closed() || ev.is_error())
            {
                self.conns[j].readable = true;
            }
        }
        // 1. Controllers first: their changes are in the tables before this turn's frames.
        for j in 0..self.conns.len() {
            if self.conns[j].readable && !self.conns[j].connecting {
                self.read(j, now);
            }
        }
        // 2. Frames, a batch per port.
        for i in 0..self.hot.len() {
            if self.hot[i] {
                self.hot[i] = self.port_batch(i, now);
            }
        }
        for p in &mut self.agent.fabric.ports {
            if p.dirty || p.io.tx_in_flight() {
                p.dirty = false;
                if let Err(e) = p.io.flush() {
                    tracing::warn!(port = p.port_no, error = %e, "flush failed");
                }
            }
        }
        // 3. Timers.
        if now >= self.next_expire {
            self.agent.expire(now);
            self.next_expire = now + self.config.expire_interval;
        }
        if now >= self.next_links {
            self.agent.check_links();
            self.next_links = now + self.config.link_interval;
        }
        if now >= self.next_keepalive {
            for (j, why) in self.agent.keepalive(now, self.config.echo_interval) {
                self.drop_conn(j, now, &why.to_string());
            }
            self.next_keepalive = now + Duration::from_secs(1).min(self.config.echo_interval);
        }
        // 4. Output to controllers.
        for j in 0..self.conns.len() {
            self.write(j);
        }
        Ok(())
    }

    /// Reads and forwards one batch from port `i`; whether frames may remain.
    fn port_batch(&mut self, i: usize, now: Instant) -> bool {
        let batch = self.config.batch;
        self.arena.clear();
        self.ends.clear();
        let arena = &mut self.arena;
        let ends = &mut self.ends;
        let n = self.agent.fabric.ports[i].io.recv_batch(batch, |f| {
            arena.extend_from_slice(f);
            ends.push(arena.len());
        });
        let mut start = 0;
        for k in 0..self.ends.len() {
            let end = self.ends[k];
            self.agent.frame_in(i, &self.arena[start..end], now);
            start = end;
        }
        n >= batch
    }

    fn connect_due(&mut self, now: Instant) {
        for j in 0..self.conns.len() {
            let c = &mut self.conns[j];
            let Origin::Active {
                target,
                tls,
                next_attempt,
                ..
            } = c.origin
            else {
                continue;
            };
            if c.stream.is_some() || now < next_attempt {
                continue;
            }
            let connected = TcpStream::connect(target).and_then(|s| match &self.config.tls {
                Some(config) if tls => {
                    TlsStream::new(s, target, config.clone()).map(|t| Stream::Tls(Box::new(t)))
                }
                _ => Ok(Stream::Tcp(s)),
            });
            match connected {
                Ok(mut s) => {
                    let token = Token(CONTROLLER_BASE + j);
                    if let Err(e) = self.poll.registry().register(
                        s.source(),
                        token,
                        Interest::READABLE | Interest::WRITABLE,
                    ) {
                        tracing::warn!(controller = %target, error = %e, "cannot poll the connection");
                        self.retry_later(j, now);
                        continue;
                    }
                    c.stream = Some(s);
                    c.connecting = true;
                }
                Err(e) => {
                    tracing::debug!(controller = %target, error = %e, "connect failed");
                    self.retry_later(j, now);
                }
            }
        }
    }

    /// Accepts what waits on listener `k`, each connection in a free passive slot.
    fn accept(&mut self, k: usize, now: Instant) {
        loop {
            let accepted = match &self.listeners[k].socket {
                Socket::Tcp(l) => l.accept().map(|(s, _)| {
                    let _ = s.set_nodelay(true);
                    Stream::Tcp(s)
                }),
                Socket::Unix(l, _) => l.accept().map(|(s, _)| Stream::Unix(s)),
            };
            let mut stream = match accepted {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    return;
                }
            };
            let j = match self
                .conns
                .iter()
                .position(|c| matches!(c.origin, Origin::Passive) && c.stream.is_none())
            {
                Some(j) => j,
                None => {
                    self.conns.push(Conn {
                        origin: Origin::Passive,
                        stream: None,
                        connecting: false,
                        readable: false,
                    });
                    self.agent.add_channel(now)
                }
            };
            let token = Token(CONTROLLER_BASE + j);
            if let Err(e) = self.poll.registry().register(
                stream.source(),
                token,
                Interest::READABLE | Interest::WRITABLE,
            ) {
                tracing::warn!(error = %e, "cannot poll an accepted connection");
                continue;
            }
            tracing::debug!(connection = j, "accepted");
            self.conns[j].stream = Some(stream);
            self.conns[j].readable = true;
            self.agent.connected(j, now);
            self.agent.fabric.channels[j].service = self.listeners[k].service;
        }
    }

    fn finish_connect(&mut self, j: usize, now: Instant) {
        let c = &mut self.conns[j];
        let Some(s) = c.stream.as_ref().and_then(Stream::tcp) else {
            c.connecting = false;
            return;
        };
        let name = c.name();
        match (s.take_error(), s.peer_addr()) {
            (Ok(None), Ok(_)) => {
                c.connecting = false;
                let _ = s.set_nodelay(true);
                tracing::info!(controller = %name, "connected");
                self.agent.connected(j, now);
            }
            (Ok(Some(e)), _) | (Err(e), _) => {
                tracing::debug!(controller = %name, error = %e, "connect failed");
                self.drop_conn(j, now, "connect failed");
            }
            // Not connected yet (a spurious event).
            (Ok(None), Err(e)) if e.kind() == io::ErrorKind::NotConnected => {}
            (Ok(None), Err(e)) => {
                tracing::debug!(controller = %name, error = %e, "connect failed");
                self.drop_conn(j, now, "connect failed");
            }
        }
    }

    fn read(&mut self, j: usize, now: Instant) {
        for _ in 0..READS_PER_TURN {
            let Some(s) = self.conns[j].stream.as_mut() else {
                self.conns[j].readable = false;
                return;
            };
            match s.read_some(&mut self.read_buf) {
                Ok(0) => {
                    self.drop_conn(j, now, "the controller closed the connection");
                    return;
                }
                Ok(n) => {
                    self.agent.fabric.channels[j]
                        .rx
                        .extend_from_slice(&self.read_buf[..n]);
                    if let Err(why) = self.agent.receive(j, now) {
                        self.write(j);
                        self.drop_conn(j, now, &why.to_string());
                        return;
                    }
                    if self.agent.fabric.channels[j].is_ready() {
                        if let Origin::Active { backoff, .. } = &mut self.conns[j].origin {
                            *backoff = self.config.backoff_min;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.conns[j].readable = false;
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.drop_conn(j, now, &e.to_string());
                    return;
                }
            }
        }
    }

    /// Writes what controller `j`'s output holds, as far as the socket takes it.
    fn write(&mut self, j: usize) {
        let out = &mut self.agent.fabric.channels[j].out;
        let c = &mut self.conns[j];
        let Some(s) = c.stream.as_mut() else { return };
        if c.connecting {
            return;
        }
        if out.is_empty() {
            // A TLS session may still hold records the socket did not take.
            if let Err(e) = s.send_backlog() {
                self.drop_conn(j, Instant::now(), &e.to_string());
            }
            return;
        }
        let mut written = 0;
        let result = loop {
            if written == out.len() {
                break Ok(());
            }
            match s.write_some(&out[written..]) {
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        out.drain(..written);
        if let Err(e) = result {
            self.drop_conn(j, Instant::now(), &e.to_string());
        }
    }

    fn retry_later(&mut self, j: usize, now: Instant) {
        let max = self.config.backoff_max;
        if let Origin::Active {
            backoff,
            next_attempt,
            ..
        } = &mut self.conns[j].origin
        {
            *next_attempt = now + *backoff;
            *backoff = (*backoff * 2).min(max);
        }
    }

    fn drop_conn(&mut self, j: usize, now: Instant, why: &str) {
        if let Some(mut s) = self.conns[j].stream.take() {
            let _ = self.poll.registry().deregister(s.source());
            if !self.conns[j].connecting {
                let name = self.conns[j].name();
                tracing::info!(connection = %name, why, "disconnected");
            }
        }
        self.conns[j].connecting = false;
        self.conns[j].readable = false;
        self.agent.closed(j);
        self.retry_later(j, now);
    }

    /// Whether controller `j` is connected with a version agreed.
    pub fn is_connected(&self, j: usize) -> bool {
        self.agent.fabric.channels[j].is_ready()
    }
}
