//! One controller connection, without its socket: the bytes read go into [`Channel::rx`],
//! the bytes to write come out of [`Channel::out`]; the handshake state, the negotiated
//! version, the per-connection settings (`miss_send_len`) and the echo keepalive live
//! here.

use std::time::{Duration, Instant};

use openflow::common::Hello;
use openflow::header::{self, Version};
use openflow::wire::{Put, Reader};
use openflow::{msg_type, Message};

use crate::ToController;

/// `OFP_DEFAULT_MISS_SEND_LEN` (both versions).
pub const DEFAULT_MISS_SEND_LEN: u16 = 128;

/// Bytes of output a slow controller may have waiting before PACKET_INs to it are
/// dropped (and counted): replies and asynchronous messages other than PACKET_IN are
/// always queued.
pub const OUT_HIGH_WATER: usize = 4 << 20;

/// The OpenFlow versions a switch speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versions {
    V10,
    V13,
    Both,
}

impl Versions {
    pub fn allows(self, v: Version) -> bool {
        matches!(
            (self, v),
            (Versions::Both, _) | (Versions::V10, Version::V1_0) | (Versions::V13, Version::V1_3)
        )
    }

    fn highest(self) -> Version {
        match self {
            Versions::V10 => Version::V1_0,
            Versions::V13 | Versions::Both => Version::V1_3,
        }
    }

    /// The only version, when there is one.
    pub fn single(self) -> Option<Version> {
        match self {
            Versions::V10 => Some(Version::V1_0),
            Versions::V13 => Some(Version::V1_3),
            Versions::Both => None,
        }
    }
}

impl std::str::FromStr for Versions {
    type Err = String;
    fn from_str(s: &str) -> Result<Versions, String> {
        match s {
            "1.0" | "10" => Ok(Versions::V10),
            "1.3" | "13" => Ok(Versions::V13),
            "both" | "1.0,1.3" => Ok(Versions::Both),
            _ => Err(format!("{s:?}: expected 1.0, 1.3 or both")),
        }
    }
}

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No connection (or it was closed): nothing is sent to it.
    Down,
    /// Our HELLO is sent; the controller's is awaited.
    Hello { offered: Versions, since: Instant },
    /// The version is agreed: every message is answered.
    Ready(Version),
}

/// Why a connection must be closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloseReason {
    #[error("the byte stream cannot be framed: {0}")]
    Framing(String),
    #[error("no common OpenFlow version (the controller's HELLO: {0})")]
    NoCommonVersion(String),
    #[error("the first message was {0}, not HELLO")]
    NoHello(String),
    #[error("no HELLO within {0:?}")]
    HelloTimeout(Duration),
    #[error("no answer to echo requests for {0:?}")]
    EchoTimeout(Duration),
}

/// One controller connection's protocol state.
#[derive(Debug)]
pub struct Channel {
    pub state: State,
    /// Bytes read and not yet handled (a partial message at the end).
    pub rx: Vec<u8>,
    /// Bytes to write, in order.
    pub out: Vec<u8>,
    /// SET_CONFIG's `miss_send_len` (1.0: the bytes of a table-miss PACKET_IN).
    pub miss_send_len: u16,
    /// SET_CONFIG's flags (fragment handling; kept and reported, not acted on).
    pub config_flags: u16,
    /// When the controller last sent anything (keepalive).
    last_rx: Instant,
    /// When our unanswered echo request went out.
    echo_sent: Option<Instant>,
    /// The xid of the next message we start.
    next_xid: u32,
    /// PACKET_INs dropped because the controller did not take its output.
    pub packet_in_dropped: u64,
    /// A service connection (accepted on a listening socket, `ovs-ofctl`): answered,
    /// but sent no asynchronous message.
    pub service: bool,
}

impl Channel {
    pub fn new(now: Instant) -> Channel {
        Channel {
            state: State::Down,
            rx: Vec::with_capacity(64 * 1024),
            out: Vec::with_capacity(64 * 1024),
            miss_send_len: DEFAULT_MISS_SEND_LEN,
            config_flags: 0,
            last_rx: now,
            echo_sent: None,
            next_xid: 1,
            packet_in_dropped: 0,
            service: false,
        }
    }

    /// A new connection: state reset, our HELLO queued offering `offered`.
    pub fn connected(&mut self, offered: Versions, now: Instant) {
        self.rx.clear();
        self.out.clear();
        self.miss_send_len = DEFAULT_MISS_SEND_LEN;
        self.config_flags = 0;
        self.service = false;
        self.last_rx = now;
        self.echo_sent = None;
        self.state = State::Hello {
            offered,
            since: now,
        };
        // 1.3.3 §6.3.1 (also 1.0's "highest version supported"): the header carries
        // the highest version; the bitmap (1.3.1+) lists every one.
        let hello = match offered {
            Versions::V10 => Hello::default(),
            _ => Hello::with_versions(&[if offered.allows(Version::V1_0) { 1 } else { 4 }, 4]),
        };
        let xid = self.xid();
        let start = header::begin(
            &mut self.out,
            offered.highest().wire(),
            msg_type::HELLO,
            xid,
        );
        if hello.emit(&mut self.out).is_err() || start.finish(&mut self.out).is_err() {
            unreachable!("a HELLO of one bitmap always encodes");
        }
    }

    /// The connection is gone.
    pub fn closed(&mut self) {
        self.state = State::Down;
        self.rx.clear();
        self.out.clear();
    }

    pub fn version(&self) -> Option<Version> {
        match self.state {
            State::Ready(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready(_))
    }

    /// The version, when ready and not a service connection: whether asynchronous
    /// messages go to it.
    pub fn async_version(&self) -> Option<Version> {
        self.version().filter(|_| !self.service)
    }

    /// A fresh xid for a message the switch starts (echo requests).
    pub fn xid(&mut self) -> u32 {
        let x = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1).max(1);
        x
    }

    /// Notes bytes arrived (keepalive).
    pub fn heard(&mut self, now: Instant) {
        self.last_rx = now;
        self.echo_sent = None;
    }

    /// Queues `msg` (in the negotiated version) with `xid`.
    pub fn send(&mut self, msg: &Message, xid: u32) {
        if let Err(e) = msg.encode(xid, &mut self.out) {
            tracing::error!(message = msg.type_name(), error = %e, "could not encode a message");
        }
    }

    /// Handles the controller's HELLO (`frame`, whatever its version): the version
    /// both speak, or why there is none. 1.3.3 §6.3.1: with bitmaps on both sides, the
    /// highest version in both; otherwise the smaller of the two header versions, if
    /// this side speaks it. A peer's bitmap is honoured even when this side sent none.
    pub fn negotiate(&self, frame: &[u8]) -> Result<Version, String> {
        let State::Hello { offered, .. } = self.state else {
            return Err("HELLO out of turn".into());
        };
        let theirs = frame[0];
        let body = Reader::new(
            &frame[header::HEADER_LEN..],
            header::HEADER_LEN,
            "ofp_hello",
        );
        let hello = Hello::parse_lenient(&mut body.clone());
        let pick = |v: u8| Version::from_wire(v).ok().filter(|v| offered.allows(*v));
        // A bitmap says what the peer speaks even when ours had none (1.0 only): a
        // version outside it would only fail on the peer's side.
        let chosen = match hello.versions() {
            Some(list) => list.into_iter().rev().find_map(pick),
            _ => pick(theirs.min(offered.highest().wire())),
        };
        chosen.ok_or_else(|| {
            format!(
                "version 0x{theirs:02x}{}",
                hello
                    .versions()
                    .map(|l| format!(", bitmap {l:?}"))
                    .unwrap_or_default()
            )
        })
    }

    /// What the keepalive asks for at `now`: `Ok(true)` to send an echo request, or
    /// the reason to close the connection.
    pub fn keepalive(&mut self, now: Instant, interval: Duration) -> Result<bool, CloseReason> {
        match self.state {
            State::Down => Ok(false),
            State::Hello { since, .. } => {
                let limit = interval * 2;
                if now.duration_since(since) > limit {
                    Err(CloseReason::HelloTimeout(limit))
                } else {
                    Ok(false)
                }
            }
            State::Ready(_) => {
                let quiet = now.duration_since(self.last_rx);
                if quiet > interval * 3 {
                    return Err(CloseReason::EchoTimeout(quiet));
                }
                if quiet > interval && self.echo_sent.is_none() {
                    self.echo_sent = Some(now);
                    return Ok(true);
                }
                Ok(false)
            }
        }
    }

    /// Queues a PACKET_IN of `frame` (`total_len` bytes on the wire, at most `len` of
    /// them sent) without building a message structure: the data path's way to the
    /// controller, which allocates nothing once the output buffer has grown. `false`
    /// when the channel is not ready or its output is over the high-water mark.
    #[allow(clippy::too_many_arguments)]
    pub fn packet_in(
        &mut self,
        buffer_id: u32,
        in_port: u32,
        reason: ToController,
        table_id: u8,
        cookie: u64,
        frame: &[u8],
        len: usize,
    ) -> bool {
        let Some(version) = self.async_version() else {
            return false;
        };
        if self.out.len() > OUT_HIGH_WATER {
            self.packet_in_dropped += 1;
            return false;
        }
        let data = &frame[..len.min(frame.len())];
        let total_len = frame.len().min(u16::MAX as usize) as u16;
        let reason = match reason {
            ToController::NoMatch => 0u8,
            ToController::Action => 1u8,
        };
        // 1.0 §5.4.1 ofp_packet_in; 1.3.3 §7.4.1 ofp_packet_in with its OXM match.
        let start = header::begin(&mut self.out, version.wire(), msg_type::PACKET_IN, 0);
        self.out.put_u32(buffer_id);
        self.out.put_u16(total_len);
        match version {
            Version::V1_0 => {
                self.out.put_u16(port_v10(in_port));
                self.out.put_u8(reason);
                self.out.put_u8(0);
            }
            Version::V1_3 => {
                self.out.put_u8(reason);
                self.out.put_u8(table_id);
                self.out.put_u64(cookie);
                // ofp_match: OFPMT_OXM, length 12 (4 + one 8-byte OXM), padded to 16.
                self.out.put_u16(1);
                self.out.put_u16(12);
                // OXM_OF_IN_PORT: class 0x8000, field 0, no mask, 4 bytes.
                self.out.put_u32(0x8000_0004);
                self.out.put_u32(in_port);
                self.out.put_zeros(4);
                // Two bytes of pad before the frame (1.3.3 §7.4.1).
                self.out.put_zeros(2);
            }
        }
        self.out.put_slice(data);
        if start.finish(&mut self.out).is_err() {
            // Longer than a message can be: cut to what fits (never happens for
            // Ethernet frames; a 64 KiB frame is the only way).
            return false;
        }
        true
    }
}

/// A 32-bit port number (1.3 values for reserved ports) as 1.0's 16 bits.
pub fn port_v10(p: u32) -> u16 {
    if p >= 0xffff_ff00 {
        (p & 0xffff) as u16
    } else {
        p as u16
    }
}

/// A 1.0 port number as 32 bits (reserved ports widened to their 1.3 values).
pub fn port_from_v10(p: u16) -> u32 {
    if p >= 0xff00 {
        0xffff_0000 | p as u32
    } else {
        p as u32
    }
}
