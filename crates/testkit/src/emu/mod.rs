//! An emulated OpenFlow switch for the integration tests: a real TCP client that speaks
//! OpenFlow through the `openflow` crate, with no knowledge of the controller's insides.
//!
//! It connects, sends a HELLO of the chosen version and bitmap, and then, whenever the
//! test waits for something, answers what a switch answers: FEATURES_REQUEST (dpid,
//! ports), PORT_DESC (1.3), BARRIER, ECHO; SET_CONFIG is taken note of. Everything the
//! controller sends is decoded and kept in [`Emu::log`]. It can also misbehave: raw
//! bytes, wrong versions, bad lengths, cut-off messages, a FEATURES_REPLY never sent,
//! echoes left unanswered.
//!
//! Blocking sockets with read timeouts: every wait has a deadline, nothing sleeps.

mod tables;

use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use openflow::of13::multipart::{MultipartReply, MultipartReplyBody, MultipartRequestBody};
use openflow::ofctl::Flow;
use openflow::{of10, of13, FixedStr, MacAddr, Message, Version};

/// OFPT_HELLO, the same in every version.
use openflow::msg_type::HELLO as OFPT_HELLO;
/// OFPHET_VERSIONBITMAP.
const OFPHET_VERSIONBITMAP: u16 = 1;
/// What a switch sends when it keeps no buffer.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// Who the switch is and how it behaves.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Datapath id in FEATURES_REPLY.
    pub dpid: u64,
    /// The version byte of our HELLO's header (the highest version we speak).
    pub hello_version: u8,
    /// The HELLO's version bitmap (bit n = wire version n); `None` sends no element.
    pub bitmap: Option<u32>,
    /// Port numbers reported (FEATURES_REPLY in 1.0, PORT_DESC in 1.3).
    pub ports: Vec<u32>,
    pub n_buffers: u32,
    pub n_tables: u8,
    /// Send FEATURES_REPLY when asked (false: a peer that never finishes the handshake).
    pub answer_features: bool,
    /// Answer ECHO_REQUEST (false: a dead peer that keeps its socket open).
    pub answer_echo: bool,
    /// Answer BARRIER_REQUEST.
    pub answer_barrier: bool,
    /// The local address to connect from (`None`: the kernel's choice). Tests that
    /// find a connection in the shared log by its `peer=` field give it an address of
    /// its own: ports alone repeat across the controllers of one test binary.
    pub source: Option<IpAddr>,
}

impl Spec {
    /// A 1.0 switch: HELLO version 1, no bitmap.
    pub fn v10(dpid: u64) -> Spec {
        Spec {
            dpid,
            hello_version: 0x01,
            bitmap: None,
            ports: vec![1, 2, 3, 4],
            n_buffers: 256,
            n_tables: 1,
            answer_features: true,
            answer_echo: true,
            answer_barrier: true,
            source: None,
        }
    }

    /// A 1.3 switch: HELLO version 4 with the bitmap {1.3}.
    pub fn v13(dpid: u64) -> Spec {
        Spec {
            hello_version: 0x04,
            bitmap: Some(1 << 4),
            n_tables: 254,
            ..Spec::v10(dpid)
        }
    }

    /// A switch offering every version from 1.0 to 1.5 (HELLO version 6 with a bitmap).
    pub fn v10_to_v15(dpid: u64) -> Spec {
        Spec {
            hello_version: 0x06,
            bitmap: Some(0b111_1110),
            ..Spec::v13(dpid)
        }
    }

    /// The same switch, connecting from `ip` (a loopback address such as 127.66.0.1).
    pub fn from(self, ip: IpAddr) -> Spec {
        Spec {
            source: Some(ip),
            ..self
        }
    }

    /// The MAC address of port `p` on this switch.
    pub fn port_mac(&self, p: u32) -> MacAddr {
        let d = self.dpid.to_be_bytes();
        MacAddr([0x02, d[5], d[6], d[7], (p >> 8) as u8, p as u8])
    }
}

/// What came from the controller.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A whole message the codec decoded.
    Message(u32, Message),
    /// A whole message it could not decode (say, an ERROR of a version it does not
    /// speak): the raw frame and the error.
    Undecodable(Vec<u8>, String),
    /// The controller closed the connection (or reset it).
    Closed,
    /// Nothing within the wait.
    Timeout,
}

/// One emulated switch.
pub struct Emu {
    pub spec: Spec,
    stream: TcpStream,
    /// Bytes read and not yet framed.
    buf: Vec<u8>,
    /// The version both sides agreed on, once the controller's HELLO is in.
    pub version: Option<Version>,
    /// Every message decoded, in order (auto-answered ones included).
    pub log: Vec<(u32, Message)>,
    /// SET_CONFIG's miss_send_len, once seen.
    pub miss_send_len: Option<u16>,
    /// Whether FEATURES_REPLY (and PORT_DESC in 1.3) went out and SET_CONFIG came in.
    pub features_sent: bool,
    pub port_desc_sent: bool,
    pub set_config_seen: bool,
    /// BARRIER_REQUESTs answered.
    pub barriers_answered: usize,
    /// ECHO_REQUESTs received (answered or not).
    pub echo_requests: usize,
    /// The flow table FLOW_MODs change (see `tables.rs`).
    pub flows: Vec<Flow>,
    /// Answer statistics requests (false: a switch that never does).
    pub answer_stats: bool,
    /// Refuse flows of this priority with FLOW_MOD_FAILED.
    pub refuse_priority: Option<u16>,
    closed: bool,
    next_xid: u32,
}

/// The highest version in both `a` and `b` bitmaps, as a switch computes it.
fn highest_common(a: u32, b: u32) -> Option<u8> {
    let both = a & b;
    (both != 0).then(|| 31 - both.leading_zeros() as u8)
}

impl Emu {
    /// Connects and sends the HELLO; does not wait for anything.
    pub fn connect(addr: SocketAddr, spec: Spec) -> io::Result<Emu> {
        let mut emu = Emu::connect_silent(addr, spec)?;
        let hello = emu.hello_bytes();
        emu.send_raw(&hello)?;
        Ok(emu)
    }

    /// Connects and sends nothing at all.
    pub fn connect_silent(addr: SocketAddr, spec: Spec) -> io::Result<Emu> {
        let stream = match spec.source {
            None => TcpStream::connect(addr)?,
            Some(ip) => {
                let socket = socket2::Socket::new(
                    socket2::Domain::for_address(addr),
                    socket2::Type::STREAM,
                    None,
                )?;
                socket.bind(&SocketAddr::new(ip, 0).into())?;
                socket.connect(&addr.into())?;
                socket.into()
            }
        };
        // Best effort: a controller that refuses (resets) the connection at once can
        // make this fail, and the caller is the one to find out, by reading.
        let _ = stream.set_nodelay(true);
        Ok(Emu {
            spec,
            stream,
            buf: Vec::with_capacity(4096),
            version: None,
            log: Vec::new(),
            miss_send_len: None,
            features_sent: false,
            port_desc_sent: false,
            set_config_seen: false,
            barriers_answered: 0,
            echo_requests: 0,
            flows: Vec::new(),
            answer_stats: true,
            refuse_priority: None,
            closed: false,
            next_xid: 0x1000,
        })
    }

    /// Connects and completes the handshake (see [`Emu::handshake`]).
    pub fn connect_and_handshake(
        addr: SocketAddr,
        spec: Spec,
        timeout: Duration,
    ) -> Result<Emu, String> {
        let mut emu = Emu::connect(addr, spec).map_err(|e| format!("connect to {addr}: {e}"))?;
        emu.handshake(timeout)?;
        Ok(emu)
    }

    /// Our HELLO, built by hand so that any version byte and bitmap can be sent.
    pub fn hello_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.spec.hello_version, OFPT_HELLO, 0, 0, 0, 0, 0, 1];
        if let Some(bitmap) = self.spec.bitmap {
            out.extend_from_slice(&OFPHET_VERSIONBITMAP.to_be_bytes());
            out.extend_from_slice(&8u16.to_be_bytes());
            out.extend_from_slice(&bitmap.to_be_bytes());
        }
        let len = out.len() as u16;
        out[2..4].copy_from_slice(&len.to_be_bytes());
        out
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.stream.local_addr().expect("a connected socket")
    }

    /// Writes bytes as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Sends a bare header: any version, type and length, no body.
    pub fn send_header(&mut self, version: u8, msg_type: u8, length: u16) -> io::Result<()> {
        let mut h = [version, msg_type, 0, 0, 0, 0, 0x0b, 0xad];
        h[2..4].copy_from_slice(&length.to_be_bytes());
        self.send_raw(&h)
    }

    /// Sends bytes that are not OpenFlow at all.
    pub fn send_garbage(&mut self) -> io::Result<()> {
        self.send_raw(b"GET / HTTP/1.1\r\nHost: pharos\r\n\r\n")
    }

    /// Sends the first `sent` bytes of a message of the negotiated version (or 1.3)
    /// whose header announces `announced` bytes, then nothing more.
    pub fn send_cut(&mut self, announced: u16, sent: usize) -> io::Result<()> {
        let version = self.version.map_or(0x04, Version::wire);
        let mut bytes = vec![
            version,
            openflow::msg_type::PACKET_IN,
            0,
            0,
            0,
            0,
            0x0c,
            0x07,
        ];
        bytes[2..4].copy_from_slice(&announced.to_be_bytes());
        bytes.resize(sent.max(8), 0);
        self.send_raw(&bytes[..sent])
    }

    /// A second handle on the socket, for a thread that only writes.
    pub fn writer(&self) -> TcpStream {
        self.stream.try_clone().expect("a socket handle")
    }

    /// Makes the kernel keep little for us, so that a switch that does not read backs
    /// up the controller soon.
    pub fn shrink_receive_buffer(&self) {
        use std::os::fd::AsRawFd;
        let size: libc::c_int = 4096;
        // SAFETY: setsockopt on our own open socket, with a pointer to a local c_int
        // and its size.
        unsafe {
            libc::setsockopt(
                self.stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }

    /// Encodes and sends a message; returns its xid.
    pub fn send(&mut self, msg: &Message) -> io::Result<u32> {
        self.next_xid += 1;
        let xid = self.next_xid;
        let bytes = msg
            .to_bytes(xid)
            .map_err(|e| io::Error::new(ErrorKind::InvalidInput, e.to_string()))?;
        self.send_raw(&bytes)?;
        Ok(xid)
    }

    /// The negotiated version; panics before the controller's HELLO is in.
    pub fn ver(&self) -> Version {
        self.version.expect("no version negotiated yet")
    }

    /// Sends an ECHO_REQUEST of the negotiated version.
    pub fn send_echo_request(&mut self, data: &[u8]) -> io::Result<u32> {
        let data = data.to_vec();
        let msg = match self.ver() {
            Version::V1_0 => Message::V10(of10::Message::EchoRequest { data }),
            Version::V1_3 => Message::V13(of13::Message::EchoRequest { data }),
        };
        self.send(&msg)
    }

    /// Sends a PACKET_IN (reason: no match) of `frame` received on `in_port`. Buffered
    /// (`Some(id)`): only the first `miss_send_len` bytes go, as a real switch does.
    pub fn send_packet_in(
        &mut self,
        in_port: u32,
        frame: &[u8],
        buffer_id: Option<u32>,
    ) -> io::Result<u32> {
        let msg = self.packet_in(in_port, frame, buffer_id);
        self.send(&msg)
    }

    /// The PACKET_IN [`Emu::send_packet_in`] sends.
    pub fn packet_in(&self, in_port: u32, frame: &[u8], buffer_id: Option<u32>) -> Message {
        let keep = self.miss_send_len.unwrap_or(128) as usize;
        let buffer_id = buffer_id.unwrap_or(NO_BUFFER);
        crate::frames::buffered_packet_in(self.ver(), in_port, frame, buffer_id, keep)
    }

    /// Sends a PORT_STATUS: port `port_no` (named and addressed as in the handshake)
    /// with `config` and `state` bits, for `reason` (0 add, 1 delete, 2 modify).
    pub fn send_port_status(
        &mut self,
        reason: u8,
        port_no: u32,
        config: u32,
        state: u32,
    ) -> io::Result<u32> {
        let msg = match self.ver() {
            Version::V1_0 => Message::V10(of10::Message::PortStatus(of10::PortStatus {
                reason: of10::PortReason::from_raw(reason),
                desc: of10::PhyPort {
                    config,
                    state,
                    ..self.port_10(port_no)
                },
            })),
            Version::V1_3 => Message::V13(of13::Message::PortStatus(of13::PortStatus {
                reason: of13::port::PortReason::from_raw(reason),
                desc: of13::Port {
                    config,
                    state,
                    ..self.port_13(port_no)
                },
            })),
        };
        self.send(&msg)
    }

    /// Half-closes our side (the controller reads EOF).
    pub fn shutdown_write(&self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }

    /// Whether the controller has closed the connection (seen while reading).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Reads one whole frame, or `None` on close or when `deadline` passes (then
    /// `self.closed` tells which).
    fn read_frame(&mut self, deadline: Instant) -> Option<Vec<u8>> {
        loop {
            if self.buf.len() >= 8 {
                let len = u16::from_be_bytes([self.buf[2], self.buf[3]]) as usize;
                let len = len.max(8); // a controller never sends less; never loop on it
                if self.buf.len() >= len {
                    return Some(self.buf.drain(..len).collect());
                }
            }
            if self.closed {
                return None;
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            self.stream
                .set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))))
                .expect("a positive timeout");
            let mut chunk = [0u8; 16384];
            match self.stream.read(&mut chunk) {
                Ok(0) => self.closed = true,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.closed = true, // reset
            }
        }
    }

    /// The next thing from the controller within `timeout`, answering on the way what
    /// a switch answers.
    pub fn next(&mut self, timeout: Duration) -> Event {
        self.next_until(Instant::now() + timeout)
    }

    pub fn next_until(&mut self, deadline: Instant) -> Event {
        let Some(frame) = self.read_frame(deadline) else {
            return if self.closed {
                Event::Closed
            } else {
                Event::Timeout
            };
        };
        if frame[1] == OFPT_HELLO && self.version.is_none() {
            self.take_hello(&frame);
        }
        match Message::decode(&frame) {
            Ok((xid, msg)) => {
                self.answer(xid, &msg);
                self.log.push((xid, msg.clone()));
                Event::Message(xid, msg)
            }
            Err(e) => Event::Undecodable(frame, e.to_string()),
        }
    }

    /// Notes the version agreed from the controller's HELLO (bitmaps if both have one,
    /// otherwise the lower header version), as a switch would.
    fn take_hello(&mut self, frame: &[u8]) {
        let theirs = frame[0];
        let mut their_bitmap = None;
        if frame.len() >= 16 && u16::from_be_bytes([frame[8], frame[9]]) == OFPHET_VERSIONBITMAP {
            their_bitmap = Some(u32::from_be_bytes([
                frame[12], frame[13], frame[14], frame[15],
            ]));
        }
        let agreed = match (self.spec.bitmap, their_bitmap) {
            (Some(ours), Some(theirs)) => highest_common(ours, theirs),
            _ => Some(theirs.min(self.spec.hello_version)),
        };
        self.version = agreed.and_then(|v| Version::from_wire(v).ok());
    }

    /// A switch's replies to the controller's requests.
    fn answer(&mut self, xid: u32, msg: &Message) {
        let reply = match msg {
            Message::V10(of10::Message::FeaturesRequest) if self.spec.answer_features => {
                self.features_sent = true;
                Some(Message::V10(of10::Message::FeaturesReply(
                    self.features_10(),
                )))
            }
            Message::V13(of13::Message::FeaturesRequest) if self.spec.answer_features => {
                self.features_sent = true;
                Some(Message::V13(of13::Message::FeaturesReply(
                    of13::FeaturesReply {
                        datapath_id: self.spec.dpid,
                        n_buffers: self.spec.n_buffers,
                        n_tables: self.spec.n_tables,
                        auxiliary_id: 0,
                        capabilities: 0x4f,
                        reserved: 0,
                    },
                )))
            }
            Message::V13(of13::Message::MultipartRequest(req))
                if matches!(req.body, MultipartRequestBody::PortDesc) =>
            {
                self.port_desc_sent = true;
                Some(Message::V13(of13::Message::MultipartReply(
                    MultipartReply {
                        flags: 0,
                        body: MultipartReplyBody::PortDesc {
                            ports: self.ports_13(),
                        },
                    },
                )))
            }
            Message::V10(of10::Message::SetConfig(c))
            | Message::V13(of13::Message::SetConfig(c)) => {
                self.set_config_seen = true;
                self.miss_send_len = Some(c.miss_send_len);
                None
            }
            Message::V10(of10::Message::BarrierRequest) if self.spec.answer_barrier => {
                self.barriers_answered += 1;
                Some(Message::V10(of10::Message::BarrierReply))
            }
            Message::V13(of13::Message::BarrierRequest) if self.spec.answer_barrier => {
                self.barriers_answered += 1;
                Some(Message::V13(of13::Message::BarrierReply))
            }
            Message::V10(of10::Message::EchoRequest { data }) => {
                self.echo_requests += 1;
                self.spec
                    .answer_echo
                    .then(|| Message::V10(of10::Message::EchoReply { data: data.clone() }))
            }
            Message::V13(of13::Message::EchoRequest { data }) => {
                self.echo_requests += 1;
                self.spec
                    .answer_echo
                    .then(|| Message::V13(of13::Message::EchoReply { data: data.clone() }))
            }
            _ => None,
        };
        let replies = match reply {
            Some(r) => vec![r],
            None => self.answer_tables(msg),
        };
        for reply in replies {
            let bytes = reply.to_bytes(xid).expect("our replies encode");
            // A controller that closed on us makes this fail; the next read says so.
            let _ = self.send_raw(&bytes);
        }
    }

    fn features_10(&self) -> of10::SwitchFeatures {
        of10::SwitchFeatures {
            datapath_id: self.spec.dpid,
            n_buffers: self.spec.n_buffers,
            n_tables: self.spec.n_tables,
            capabilities: 0xc7,
            actions: 0xfff,
            ports: self.spec.ports.iter().map(|&p| self.port_10(p)).collect(),
        }
    }

    /// Port `p` as a 1.0 `ofp_phy_port`: up, named `eth<p>`.
    fn port_10(&self, p: u32) -> of10::PhyPort {
        of10::PhyPort {
            port_no: p as u16,
            hw_addr: self.spec.port_mac(p),
            name: FixedStr::new(&format!("eth{p}")).expect("a short name"),
            config: 0,
            state: 0,
            curr: 0,
            advertised: 0,
            supported: 0,
            peer: 0,
        }
    }

    fn ports_13(&self) -> Vec<of13::Port> {
        self.spec.ports.iter().map(|&p| self.port_13(p)).collect()
    }

    /// Port `p` as a 1.3 `ofp_port`: up, named `eth<p>`, 10 Gb/s.
    fn port_13(&self, p: u32) -> of13::Port {
        of13::Port {
            port_no: p,
            hw_addr: self.spec.port_mac(p),
            name: FixedStr::new(&format!("eth{p}")).expect("a short name"),
            config: 0,
            state: 0,
            curr: 0,
            advertised: 0,
            supported: 0,
            peer: 0,
            curr_speed: 10_000_000,
            max_speed: 10_000_000,
        }
    }

    /// Waits until the controller has had what it asks for in a handshake: its HELLO,
    /// FEATURES_REPLY (and PORT_DESC in 1.3) sent, SET_CONFIG seen, and the barrier that
    /// ends it answered. An ERROR (HELLO_FAILED) or a close is an `Err` naming it.
    pub fn handshake(&mut self, timeout: Duration) -> Result<Version, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let done = self.version.is_some()
                && self.features_sent
                && (self.version == Some(Version::V1_0) || self.port_desc_sent)
                && self.set_config_seen
                && self.barriers_answered > 0;
            if done {
                return Ok(self.ver());
            }
            match self.next_until(deadline) {
                Event::Message(_, m @ (Message::V10(of10::Message::Error(_)) | Message::V13(of13::Message::Error(_)))) => {
                    return Err(format!("controller sent an error: {m:?}"));
                }
                Event::Message(..) => {}
                Event::Undecodable(frame, e) => return Err(format!("undecodable {frame:02x?}: {e}")),
                Event::Closed => return Err(format!("closed during the handshake; log: {:?}", self.log)),
                Event::Timeout => {
                    return Err(format!(
                        "handshake not done in {timeout:?}: version {:?}, features {}, port desc {}, set_config {}, barriers {}",
                        self.version, self.features_sent, self.port_desc_sent, self.set_config_seen, self.barriers_answered
                    ))
                }
            }
        }
    }

    /// Reads (answering as a switch) until a message matches `pred`; returns it. Other
    /// messages stay in the log.
    pub fn wait_for(
        &mut self,
        timeout: Duration,
        mut pred: impl FnMut(&Message) -> bool,
    ) -> Result<(u32, Message), String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_until(deadline) {
                Event::Message(xid, m) if pred(&m) => return Ok((xid, m)),
                Event::Message(..) | Event::Undecodable(..) => {}
                Event::Closed => return Err(format!("closed while waiting; log: {:?}", self.log)),
                Event::Timeout => {
                    return Err(format!(
                        "nothing matched in {timeout:?}; log: {:?}",
                        self.log
                    ))
                }
            }
        }
    }

    /// Reads (answering as a switch) until the controller closes the connection; `Err`
    /// if it is still open at the deadline.
    pub fn wait_closed(&mut self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_until(deadline) {
                Event::Closed => return Ok(()),
                Event::Timeout => {
                    return Err(format!("still open after {timeout:?}; log: {:?}", self.log))
                }
                _ => {}
            }
        }
    }

    /// An echo round trip: proves the controller is serving this connection.
    pub fn ping(&mut self, timeout: Duration) -> Result<(), String> {
        let xid = self.send_echo_request(b"ping").map_err(|e| e.to_string())?;
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_until(deadline) {
                Event::Message(
                    x,
                    Message::V10(of10::Message::EchoReply { .. })
                    | Message::V13(of13::Message::EchoReply { .. }),
                ) if x == xid => return Ok(()),
                Event::Closed => return Err("closed instead of answering an echo".into()),
                Event::Timeout => return Err(format!("no echo reply in {timeout:?}")),
                _ => {}
            }
        }
    }
}

/// An emulated switch left to itself on a thread: it keeps answering echo, barrier and
/// the rest while the test looks elsewhere. [`Background::take`] gives it back.
pub struct Background {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Emu>,
}

impl Emu {
    /// Runs the switch on a thread (see [`Background`]).
    pub fn in_background(mut self) -> Background {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Acquire) {
                if self.next(Duration::from_millis(20)) == Event::Closed {
                    break;
                }
            }
            self
        });
        Background { stop, thread }
    }
}

impl Background {
    /// Stops the thread and returns the switch (with everything it logged meanwhile).
    pub fn take(self) -> Emu {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        self.thread.join().expect("the background switch thread")
    }
}

/// A minimal Ethernet frame from `src` to `dst`: an ARP request padded to 60 bytes.
pub fn frame(src: MacAddr, dst: MacAddr) -> Vec<u8> {
    use packet::arp::{ArpOperation, ArpRepr};
    use packet::ethernet::{EtherType, EthernetRepr};
    let eth = EthernetRepr {
        dst_addr: dst,
        src_addr: src,
        ethertype: EtherType::Arp,
    };
    let arp = ArpRepr {
        operation: ArpOperation::Request,
        source_hardware_addr: src,
        source_protocol_addr: [10, 0, 0, src.0[5]].into(),
        target_hardware_addr: MacAddr::ZERO,
        target_protocol_addr: [10, 0, 0, dst.0[5]].into(),
    };
    let mut out = vec![0u8; 60.max(eth.buffer_len() + arp.buffer_len())];
    let n = eth.emit(&mut out).expect("room for the header");
    arp.emit(&mut out[n..]).expect("room for ARP");
    out
}

/// A frame of `len` bytes (at least 60): ARP from `src` to `dst`, then zeros.
pub fn long_frame(src: MacAddr, dst: MacAddr, len: usize) -> Vec<u8> {
    let mut f = frame(src, dst);
    f.resize(len.max(60), 0);
    f
}

/// A host's MAC address: `n` in the last bytes.
pub fn host(n: u16) -> MacAddr {
    MacAddr([0x00, 0x00, 0x5e, 0x00, (n >> 8) as u8, n as u8])
}

/// The output ports of a PACKET_OUT or FLOW_MOD (apply-actions in 1.3), widened to u32
/// the way `view::widen_port` does for 1.0 reserved ports.
pub fn output_ports(msg: &Message) -> Vec<u32> {
    fn widen(p: u16) -> u32 {
        if p >= 0xff00 {
            0xffff_0000 | p as u32
        } else {
            p as u32
        }
    }
    let v10 = |actions: &[of10::Action]| -> Vec<u32> {
        actions
            .iter()
            .filter_map(|a| match a {
                of10::Action::Output { port, .. } => Some(widen(*port)),
                _ => None,
            })
            .collect()
    };
    let v13 = |actions: &[of13::Action]| -> Vec<u32> {
        actions
            .iter()
            .filter_map(|a| match a {
                of13::Action::Output { port, .. } => Some(*port),
                _ => None,
            })
            .collect()
    };
    match msg {
        Message::V10(of10::Message::PacketOut(p)) => v10(&p.actions),
        Message::V10(of10::Message::FlowMod(f)) => v10(&f.actions),
        Message::V13(of13::Message::PacketOut(p)) => v13(&p.actions),
        Message::V13(of13::Message::FlowMod(f)) => f
            .instructions
            .iter()
            .flat_map(|i| match i {
                of13::Instruction::ApplyActions { actions }
                | of13::Instruction::WriteActions { actions } => v13(actions),
                _ => Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The reserved port FLOOD, widened (0xfffffffb in both versions).
pub const FLOOD: u32 = 0xffff_fffb;

pub fn is_packet_out(m: &Message) -> bool {
    matches!(
        m,
        Message::V10(of10::Message::PacketOut(_)) | Message::V13(of13::Message::PacketOut(_))
    )
}

pub fn is_flow_mod(m: &Message) -> bool {
    matches!(
        m,
        Message::V10(of10::Message::FlowMod(_)) | Message::V13(of13::Message::FlowMod(_))
    )
}

/// A PACKET_OUT's buffer id and data.
pub fn packet_out_parts(m: &Message) -> Option<(u32, &[u8])> {
    match m {
        Message::V10(of10::Message::PacketOut(p)) => Some((p.buffer_id, &p.data)),
        Message::V13(of13::Message::PacketOut(p)) => Some((p.buffer_id, &p.data)),
        _ => None,
    }
}

/// Raises the soft limit on open files to the hard limit (or `want`, if lower), so a
/// test can hold thousands of sockets.
pub fn raise_fd_limit(want: libc::rlim_t) {
    // SAFETY: getrlimit/setrlimit with a valid pointer to a local struct.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < want {
            lim.rlim_cur = want.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
