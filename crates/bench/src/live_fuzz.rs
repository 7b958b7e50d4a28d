//! `pharos bench fuzz`: fuzzing a live controller over its OpenFlow channel.
//!
//! Each round opens `connections` connections at once (a thread each); every one
//! completes a switch's handshake (OpenFlow 1.0 or 1.3, alternately), then sends
//! `messages` messages made from seeds by random mutations (bits flipped, bytes set to
//! edge values, the length, type or version changed, the message cut short or padded,
//! two messages spliced, a part repeated; a seed sent as it is now and then), reading
//! whatever the controller answers. Two well-behaved switches (one per version) stay
//! connected through the whole run; after each round each must answer an ECHO_REQUEST
//! within [`FuzzConfig::answer_within`] on the connection it has had from the start. A
//! round after which one does not is a *finding*: the controller stopped serving a
//! switch that did nothing wrong (it died, hung, or closed the wrong connection). The
//! bytes every connection of that round sent after its handshake are written to
//! `save` (one file each), so that `--replay` sends them again.
//!
//! The seeds are the messages of `../shared/openflow-vectors` (real messages from other
//! implementations, every type) when that directory is there, and a few the codec
//! builds (PACKET_IN, PORT_STATUS, FLOW_REMOVED, ERROR, ECHO, multipart replies)
//! always. The random generator is seeded (`--seed`): a run is repeated exactly by
//! its seed, up to the controller's own timing.
//!
//! Over TLS ([`FuzzConfig::tls`]) every connection, the well-behaved ones too, first
//! completes a TLS handshake as a switch with a certificate would; the mutated messages
//! then travel inside the session, so they reach the controller's decryption and the
//! same OpenFlow parsing as on a clear port. One connection in eight instead writes TLS
//! records the session never made straight onto its socket (application-data headers,
//! now and then with a lying type or length, around random bytes): the controller must
//! close that connection for failing decryption and serve the others.
//!
//! Loopback only unless the caller allows another address: the fuzzer's traffic is an
//! attack.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openflow::{frame_len, msg_type, of10, of13, Message, Version};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use serde::Serialize;

use crate::flood::{answer_handshake, hello};

/// What a fuzzing run does.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    /// The controller.
    pub addr: SocketAddr,
    /// Rounds to run (the run also ends at `max_time`).
    pub rounds: u64,
    /// Connections per round, at once.
    pub connections: usize,
    /// Mutated messages per connection.
    pub messages: usize,
    /// The random generator's seed.
    pub seed: u64,
    /// Directories of seed messages (`*.packet` files, searched recursively); missing
    /// ones are skipped and said so.
    pub vectors: Vec<PathBuf>,
    /// Where a finding's inputs are written.
    pub save: Option<PathBuf>,
    /// Where every round's inputs are written (to make a corpus for `replay`).
    pub keep: Option<PathBuf>,
    /// A well-behaved switch must answer within this after each round.
    pub answer_within: Duration,
    /// The whole run's bound.
    pub max_time: Duration,
    /// Speak TLS with this client configuration (the controller's port must be a TLS
    /// one); clear text if `None`.
    pub tls: Option<Arc<ClientConfig>>,
}

impl FuzzConfig {
    /// Defaults against `addr`: 100 rounds of 16 connections × 64 messages, seed 1,
    /// answers within 2 s, at most 10 minutes.
    pub fn new(addr: SocketAddr) -> FuzzConfig {
        FuzzConfig {
            addr,
            rounds: 100,
            connections: 16,
            messages: 64,
            seed: 1,
            vectors: Vec::new(),
            save: None,
            keep: None,
            answer_within: Duration::from_secs(2),
            max_time: Duration::from_secs(600),
            tls: None,
        }
    }
}

/// What a run found.
#[derive(Debug, Default, Serialize)]
pub struct FuzzReport {
    /// Seed messages, by version (1.0, 1.3).
    pub seeds: [usize; 2],
    /// Rounds run.
    pub rounds: u64,
    /// Fuzzing connections opened, and those whose handshake completed.
    pub connections: u64,
    pub handshakes: u64,
    /// Mutated messages sent.
    pub messages: u64,
    /// Fuzzing connections the controller closed (what bad input should get).
    pub closed_by_controller: u64,
    /// The slowest echo answer of a well-behaved switch after a round (ms).
    pub slowest_answer_ms: f64,
    /// Rounds after which a well-behaved switch was not served, with what happened.
    pub findings: Vec<Finding>,
    /// Files replayed (`--replay`).
    pub replayed: usize,
}

/// A round after which the controller did not serve a well-behaved switch.
#[derive(Debug, Serialize)]
pub struct Finding {
    pub round: u64,
    pub what: String,
    /// Where the round's inputs were written.
    pub saved: Option<PathBuf>,
}

/// xorshift64*: enough randomness for mutations, seeded, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Seed messages of one version.
type Seeds = Vec<Vec<u8>>;

/// The seeds: the vector files of the right versions, and messages the codec builds.
pub fn load_seeds(dirs: &[PathBuf]) -> ([Seeds; 2], Vec<String>) {
    let mut seeds: [Seeds; 2] = [built(Version::V1_0), built(Version::V1_3)];
    let mut notes = Vec::new();
    for dir in dirs {
        if !dir.is_dir() {
            notes.push(format!("{}: not there, skipped", dir.display()));
            continue;
        }
        let mut files = Vec::new();
        walk(dir, &mut files);
        for f in files {
            let Ok(bytes) = std::fs::read(&f) else {
                continue;
            };
            match bytes.first() {
                Some(1) => seeds[0].push(bytes),
                Some(4) => seeds[1].push(bytes),
                _ => {}
            }
        }
    }
    (seeds, notes)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "packet") {
            out.push(p);
        }
    }
}

/// Messages a switch sends, built by the codec.
fn built(version: Version) -> Seeds {
    let frame = {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 0x08, 0x06]);
        f.resize(60, 0);
        f
    };
    let msgs = match version {
        Version::V1_0 => vec![
            Message::V10(of10::Message::PacketIn(of10::PacketIn {
                buffer_id: u32::MAX,
                total_len: 60,
                in_port: 1,
                reason: of10::PacketInReason::NoMatch,
                data: frame,
            })),
            Message::V10(of10::Message::EchoRequest { data: vec![1, 2] }),
            Message::V10(of10::Message::BarrierReply),
        ],
        Version::V1_3 => vec![
            Message::V13(of13::Message::EchoRequest { data: vec![1, 2] }),
            Message::V13(of13::Message::BarrierReply),
        ],
    };
    msgs.into_iter()
        .filter_map(|m| m.to_bytes(7).ok())
        .collect()
}

/// One mutated message from `seeds`.
fn mutate(rng: &mut Rng, seeds: &Seeds, other: &Seeds) -> Vec<u8> {
    let pick = |rng: &mut Rng, s: &Seeds| s[rng.below(s.len())].clone();
    // One message in fifty is of the other version (a wrong-version message, which
    // ends the connection: rare, so that most connections get deep into the stream).
    let mut m = if rng.below(50) == 0 && !other.is_empty() {
        pick(rng, other)
    } else {
        pick(rng, seeds)
    };
    let set_len = |m: &mut Vec<u8>| {
        if m.len() >= 4 {
            let l = (m.len().min(0xffff) as u16).to_be_bytes();
            m[2] = l[0];
            m[3] = l[1];
        }
    };
    for _ in 0..1 + rng.below(3) {
        let len = m.len();
        // Weighted: the mutations that end a connection (version, a length under the
        // header's) are rarer than those the controller must survive.
        match rng.below(24) {
            0 | 1 => {} // as it is
            2..=6 => {
                let at = rng.below(len);
                m[at] ^= 1 << rng.below(8);
            }
            7..=9 => {
                let at = rng.below(len);
                m[at] = [0, 0xff, 0x7f, 0x80, 1][rng.below(5)];
            }
            10 if len >= 4 => {
                let v: u16 = match rng.below(5) {
                    0 => 0,
                    1 => 7,
                    2 => 8,
                    3 => 0xffff,
                    _ => (len as u16)
                        .wrapping_add(rng.below(64) as u16)
                        .wrapping_sub(32),
                };
                m[2..4].copy_from_slice(&v.to_be_bytes());
            }
            11 if len >= 2 => m[1] = rng.below(36) as u8,
            12 => m[0] = [1, 2, 3, 4, 5, 6, 0, 0x7f][rng.below(8)],
            13 | 14 if len > 8 => {
                m.truncate(8 + rng.below(len - 8));
                if rng.below(2) == 0 {
                    set_len(&mut m);
                }
            }
            15 | 16 => {
                for _ in 0..1 + rng.below(64) {
                    m.push(rng.next() as u8);
                }
                if rng.below(2) == 0 {
                    set_len(&mut m);
                }
            }
            17 | 18 if len > 8 => {
                let tail = pick(rng, seeds);
                if tail.len() > 8 {
                    let cut = 8 + rng.below(tail.len() - 8);
                    m.truncate(8 + rng.below(len - 8));
                    m.extend_from_slice(&tail[cut..]);
                    set_len(&mut m);
                }
            }
            19 if len > 12 => {
                let a = 8 + rng.below(len - 8);
                let b = (a + 1 + rng.below(16)).min(len);
                let part = m[a..b].to_vec();
                m.splice(a..a, part);
                set_len(&mut m);
            }
            20 if len >= 8 => {
                let xid = (rng.next() as u32).to_be_bytes();
                m[4..8].copy_from_slice(&xid);
            }
            _ => {
                let at = rng.below(len);
                m[at] = rng.next() as u8;
            }
        }
        if m.len() > 0xffff {
            m.truncate(0xffff);
        }
    }
    m
}

/// What one fuzzing connection sends after its handshake.
#[derive(Debug, Clone)]
struct Stream {
    version: Version,
    /// Written straight onto the socket under a TLS session (records it never made),
    /// not through it.
    raw: bool,
    bytes: Vec<u8>,
}

/// Wraps `bytes` in TLS records of random sizes that no session made: mostly
/// application-data headers of the right length (their contents fail decryption), now
/// and then a header with another type, or a length that lies.
fn raw_records(rng: &mut Rng, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 16 + 5);
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = (1 + rng.below(512)).min(rest.len());
        let kind = match rng.below(16) {
            0 => rng.below(256) as u8,
            1 => 21, // an alert
            2 => 22, // a handshake message, after the handshake
            _ => 23,
        };
        let len = if rng.below(16) == 0 {
            rng.below(0x1_0000) as u16
        } else {
            n as u16
        };
        out.extend_from_slice(&[kind, 3, 3]);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
    }
    out
}

/// A connection to the controller: clear, or a TLS client session over it.
enum Conn {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl Conn {
    /// Connects (reads time out after 100 ms) and, with `tls`, completes the TLS
    /// handshake within `within`.
    fn connect(
        addr: SocketAddr,
        tls: Option<&Arc<ClientConfig>>,
        within: Duration,
    ) -> io::Result<Conn> {
        let mut s = TcpStream::connect_timeout(&addr, within)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_millis(100)))?;
        let Some(config) = tls else {
            return Ok(Conn::Plain(s));
        };
        let mut c =
            ClientConnection::new(Arc::clone(config), ServerName::IpAddress(addr.ip().into()))
                .map_err(io::Error::other)?;
        let deadline = Instant::now() + within;
        while c.is_handshaking() {
            match c.complete_io(&mut s) {
                Ok(_) => {}
                Err(e) if timed_out(&e) && Instant::now() < deadline => {}
                Err(e) => return Err(io::Error::new(e.kind(), format!("TLS handshake: {e}"))),
            }
        }
        Ok(Conn::Tls(Box::new(StreamOwned::new(c, s))))
    }

    fn tcp(&mut self) -> &mut TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(t) => &mut t.sock,
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
            Conn::Tls(t) => t.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
            Conn::Tls(t) => t.flush(),
        }
    }
}

/// A switch's side of a connection: connected, handshake done, or why not.
fn handshaken(
    addr: SocketAddr,
    tls: Option<&Arc<ClientConfig>>,
    version: Version,
    dpid: u64,
    within: Duration,
) -> io::Result<Conn> {
    let mut s = Conn::connect(addr, tls, within)?;
    let mut h = hello();
    if version == Version::V1_0 {
        // A 1.0 HELLO: only 1.0 is common.
        h = Message::V10(of10::Message::Hello(openflow::common::Hello::default()))
            .to_bytes(1)
            .expect("HELLO");
    }
    s.write_all(&h)?;
    let deadline = Instant::now() + within;
    let (mut inbuf, mut out, mut buf) = (Vec::new(), Vec::new(), [0u8; 4096]);
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Err(io::Error::other("closed during the handshake")),
            Ok(n) => inbuf.extend_from_slice(&buf[..n]),
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e),
        }
        let done = answer_handshake(&mut inbuf, dpid, &mut out);
        s.write_all(&out)?;
        out.clear();
        if done {
            return Ok(s);
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "handshake not done",
            ));
        }
    }
}

/// Sends an ECHO_REQUEST on a well-behaved switch's connection and waits for its reply
/// (answering the controller's own echo requests meanwhile): how long it took.
fn echo(s: &mut Conn, version: Version, within: Duration) -> Result<Duration, String> {
    let data = b"fuzz".to_vec();
    let req = match version {
        Version::V1_0 => Message::V10(of10::Message::EchoRequest { data }),
        Version::V1_3 => Message::V13(of13::Message::EchoRequest { data }),
    };
    let xid = 0x00f0_22ed;
    let start = Instant::now();
    s.write_all(&req.to_bytes(xid).expect("ECHO_REQUEST"))
        .map_err(|e| format!("write: {e}"))?;
    let mut inbuf = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < within {
        match s.read(&mut buf) {
            Ok(0) => return Err("the controller closed the connection".into()),
            Ok(n) => inbuf.extend_from_slice(&buf[..n]),
            Err(e) if timed_out(&e) => continue,
            Err(e) => return Err(format!("read: {e}")),
        }
        let mut used = 0;
        while let Ok(Some(len)) = frame_len(&inbuf[used..]) {
            let f = &inbuf[used..used + len];
            used += len;
            if f[1] == msg_type::ECHO_REPLY && u32::from_be_bytes([f[4], f[5], f[6], f[7]]) == xid {
                return Ok(start.elapsed());
            }
            if f[1] == msg_type::ECHO_REQUEST {
                // The controller's keepalive: answered.
                let mut reply = f.to_vec();
                reply[1] = msg_type::ECHO_REPLY;
                let _ = s.write_all(&reply);
            }
        }
        inbuf.drain(..used);
    }
    Err(format!("no ECHO_REPLY within {} ms", within.as_millis()))
}

/// One fuzzing connection: handshake, `stream` sent, the controller's answers read.
/// Returns (handshake done, closed by the controller).
fn fuzz_one(
    addr: SocketAddr,
    tls: Option<&Arc<ClientConfig>>,
    dpid: u64,
    stream: &Stream,
) -> (bool, bool) {
    let Ok(mut s) = handshaken(addr, tls, stream.version, dpid, Duration::from_secs(5)) else {
        return (false, false);
    };
    let _ = s.tcp().set_read_timeout(Some(Duration::from_millis(20)));
    // Closed: the end of the stream, or an error that is not a timeout (a reset, a
    // TLS alert or a session ended without one).
    let closed_by = |r: io::Result<usize>| match r {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !timed_out(&e),
    };
    let mut closed = false;
    let mut buf = [0u8; 65536];
    for chunk in stream.bytes.chunks(1024) {
        let sent = if stream.raw {
            s.tcp().write_all(chunk)
        } else {
            s.write_all(chunk)
        };
        if sent.is_err() || closed_by(s.read(&mut buf)) {
            closed = true;
            break;
        }
    }
    if !closed {
        // What the controller makes of the end of the stream.
        let _ = s.tcp().set_read_timeout(Some(Duration::from_millis(100)));
        closed = closed_by(s.read(&mut buf)) || closed_by(s.read(&mut buf));
    }
    (true, closed)
}

/// The datapath ids of a run's connections carry its seed's low 16 bits, so that runs
/// with other seeds side by side against one controller do not replace each other's
/// switches (a switch that connects with a datapath id already connected replaces it).
fn fuzzer_dpid(seed: u64, round: u64, i: usize) -> u64 {
    0x00f0_0000_0000_0000 | (seed & 0xffff) << 32 | (round & 0xffff) << 16 | (i as u64 & 0xffff)
}

/// The well-behaved switches: one per version, dpids apart from every fuzzer's.
struct Witnesses(Vec<(Version, Conn)>);

impl Witnesses {
    fn connect(
        addr: SocketAddr,
        tls: Option<&Arc<ClientConfig>>,
        seed: u64,
    ) -> Result<Witnesses, String> {
        let mut w = Vec::new();
        for (i, v) in [Version::V1_0, Version::V1_3].into_iter().enumerate() {
            let s = handshaken(
                addr,
                tls,
                v,
                0x00fe_0000_0000_0000 | (seed & 0xffff) << 16 | i as u64,
                Duration::from_secs(5),
            )
            .map_err(|e| format!("a well-behaved {v} switch could not connect: {e}"))?;
            w.push((v, s));
        }
        Ok(Witnesses(w))
    }

    /// Each answers an echo: the slowest answer, or what went wrong.
    fn check(&mut self, within: Duration) -> Result<Duration, String> {
        let mut slowest = Duration::ZERO;
        for (v, s) in &mut self.0 {
            let took =
                echo(s, *v, within).map_err(|e| format!("the well-behaved {v} switch: {e}"))?;
            slowest = slowest.max(took);
        }
        Ok(slowest)
    }
}

fn version_of(i: usize) -> Version {
    if i % 2 == 0 {
        Version::V1_0
    } else {
        Version::V1_3
    }
}

/// Runs the rounds; `progress` gets a line per ten rounds.
pub fn run(cfg: &FuzzConfig, mut progress: impl FnMut(&str)) -> Result<FuzzReport, String> {
    let (seeds, notes) = load_seeds(&cfg.vectors);
    for n in notes {
        progress(&n);
    }
    let mut report = FuzzReport {
        seeds: [seeds[0].len(), seeds[1].len()],
        ..FuzzReport::default()
    };
    let mut witnesses = Witnesses::connect(cfg.addr, cfg.tls.as_ref(), cfg.seed)?;
    let mut rng = Rng::new(cfg.seed);
    let start = Instant::now();
    for round in 0..cfg.rounds {
        if start.elapsed() >= cfg.max_time {
            progress(&format!("--max-seconds reached after {round} rounds"));
            break;
        }
        let streams: Vec<Stream> = (0..cfg.connections)
            .map(|i| {
                let v = version_of(i);
                let (mine, other) = match v {
                    Version::V1_0 => (&seeds[0], &seeds[1]),
                    Version::V1_3 => (&seeds[1], &seeds[0]),
                };
                let mut bytes = Vec::new();
                for _ in 0..cfg.messages {
                    bytes.extend_from_slice(&mutate(&mut rng, mine, other));
                }
                let raw = cfg.tls.is_some() && i % 8 == 7;
                if raw {
                    bytes = raw_records(&mut rng, &bytes);
                }
                Stream {
                    version: v,
                    raw,
                    bytes,
                }
            })
            .collect();
        if let Some(dir) = &cfg.keep {
            save(dir, cfg.seed, round, &streams).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let results = run_round(cfg, round, &streams);
        report.rounds += 1;
        report.connections += streams.len() as u64;
        report.messages += (streams.len() * cfg.messages) as u64;
        for (done, closed) in results {
            report.handshakes += u64::from(done);
            report.closed_by_controller += u64::from(closed);
        }
        match witnesses.check(cfg.answer_within) {
            Ok(took) => {
                report.slowest_answer_ms = report.slowest_answer_ms.max(took.as_secs_f64() * 1e3)
            }
            Err(what) => {
                let saved = cfg
                    .save
                    .as_ref()
                    .map(|dir| save(dir, cfg.seed, round, &streams));
                let saved = match saved {
                    Some(Ok(p)) => Some(p),
                    Some(Err(e)) => {
                        progress(&format!("could not save the round's inputs: {e}"));
                        None
                    }
                    None => None,
                };
                report.findings.push(Finding { round, what, saved });
                // A controller that stopped serving is not fuzzed further.
                break;
            }
        }
        if (round + 1) % 10 == 0 {
            progress(&format!(
                "round {}: {} messages, {} connections closed by the controller, slowest answer {:.1} ms",
                round + 1,
                report.messages,
                report.closed_by_controller,
                report.slowest_answer_ms
            ));
        }
    }
    Ok(report)
}

fn run_round(cfg: &FuzzConfig, round: u64, streams: &[Stream]) -> Vec<(bool, bool)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = streams
            .iter()
            .enumerate()
            .map(|(i, stream)| {
                let dpid = fuzzer_dpid(cfg.seed, round, i);
                scope.spawn(move || fuzz_one(cfg.addr, cfg.tls.as_ref(), dpid, stream))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or((false, false)))
            .collect()
    })
}

/// Writes a round's streams as `DIR/seed-S-round-R-C-of10.bin` (`-of13`; `-raw` after
/// it for records written under a TLS session; what `replay` reads).
fn save(dir: &Path, seed: u64, round: u64, streams: &[Stream]) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    for (i, st) in streams.iter().enumerate() {
        let v = if st.version == Version::V1_0 {
            "of10"
        } else {
            "of13"
        };
        let raw = if st.raw { "-raw" } else { "" };
        std::fs::write(
            dir.join(format!("seed-{seed}-round-{round}-{i}-{v}{raw}.bin")),
            &st.bytes,
        )?;
    }
    Ok(dir.to_path_buf())
}

/// Sends every `*.bin` file of `dir` (a stream saved by a run; `-of10` or `-of13` in
/// its name says the version; `-raw`, over TLS, that it goes under the session) through
/// a handshaken connection, all at once, then checks the well-behaved switches. A
/// finding if they are not served.
pub fn replay(cfg: &FuzzConfig, dir: &Path) -> Result<FuzzReport, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    let mut streams = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        let version = if name.contains("of13") {
            Version::V1_3
        } else {
            Version::V1_0
        };
        let raw = cfg.tls.is_some() && name.contains("-raw");
        streams.push(Stream {
            version,
            raw,
            bytes,
        });
    }
    let mut witnesses = Witnesses::connect(cfg.addr, cfg.tls.as_ref(), cfg.seed)?;
    let mut report = FuzzReport {
        replayed: files.len(),
        ..FuzzReport::default()
    };
    for (round, batch) in streams.chunks(cfg.connections.max(1)).enumerate() {
        for (done, closed) in run_round(cfg, round as u64, batch) {
            report.connections += 1;
            report.handshakes += u64::from(done);
            report.closed_by_controller += u64::from(closed);
        }
        report.rounds += 1;
        match witnesses.check(cfg.answer_within) {
            Ok(took) => {
                report.slowest_answer_ms = report.slowest_answer_ms.max(took.as_secs_f64() * 1e3)
            }
            Err(what) => {
                report.findings.push(Finding {
                    round: round as u64,
                    what,
                    saved: None,
                });
                break;
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_repeatable_by_seed_and_stay_within_a_message() {
        let seeds = [built(Version::V1_0), built(Version::V1_3)];
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..500)
                .map(|_| mutate(&mut rng, &seeds[0], &seeds[1]))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
        let all = run(5);
        assert!(all.iter().all(|m| !m.is_empty() && m.len() <= 0xffff));
        let changed = all.iter().filter(|m| !seeds[0].contains(m)).count();
        assert!(changed > 400, "most messages are mutated: {changed} of 500");
        let lengths_wrong = all
            .iter()
            .filter(|m| m.len() >= 4 && usize::from(u16::from_be_bytes([m[2], m[3]])) != m.len())
            .count();
        assert!(lengths_wrong > 20, "some lengths lie: {lengths_wrong}");
    }
}
