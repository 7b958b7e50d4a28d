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

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use openflow::of13::multipart::{MultipartReply, MultipartReplyBody};
use openflow::{of10, of13, FixedStr, MacAddr, Message, Version};
use serde::Serialize;

/// The buffer id of a PACKET_IN whose frame is all in the message.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// Message types: the codec's numbers ([`openflow::msg_type`] for those alike in 1.0 and
/// 1.3, the per-version enums for the rest).
pub(crate) mod msg {
    use openflow::{of10, of13};

    pub use openflow::msg_type::{
        ECHO_REPLY, ECHO_REQUEST, ERROR, FEATURES_REQUEST, FLOW_MOD, GET_CONFIG_REQUEST, HELLO,
        PACKET_IN, PACKET_OUT, PORT_STATUS,
    };
    pub const MULTIPART_REQUEST_13: u8 = of13::MsgType::MultipartRequest.to_raw();
    pub const BARRIER_REQUEST_10: u8 = of10::MsgType::BarrierRequest.to_raw();
    pub const BARRIER_REPLY_10: u8 = of10::MsgType::BarrierReply.to_raw();
    pub const BARRIER_REQUEST_13: u8 = of13::MsgType::BarrierRequest.to_raw();
    pub const BARRIER_REPLY_13: u8 = of13::MsgType::BarrierReply.to_raw();
    pub const MP_PORT_DESC: u16 = of13::multipart::MultipartType::PortDesc.to_raw();
    pub const STATS_REQUEST_10: u8 = of10::MsgType::StatsRequest.to_raw();
    /// OFPMP_PORT_STATS (1.3), OFPST_PORT (1.0): the same number.
    pub const MP_PORT_STATS: u16 = of13::multipart::MultipartType::PortStats.to_raw();
    const _: () = assert!(MP_PORT_STATS == of10::StatsType::Port.to_raw());
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
    /// PACKET_IN in flight it names (see [`answered_seq`]); further messages for the
    /// same PACKET_IN, and messages naming none in flight, are not counted. This is the
    /// figure to compare controllers that answer with different messages (one buffered
    /// FLOW_MOD, or a FLOW_MOD and a PACKET_OUT).
    PerPacketIn,
}

/// The first PACKET_IN's xid (and buffer id, unless `--no-buffer`).
pub const FIRST_SEQ: u32 = 0x1000_0000;
/// Sequence numbers run from [`FIRST_SEQ`] through `FIRST_SEQ + SPAN - 1`, then again
/// (never `NO_BUFFER`). A power of two, so that ages are computed with a mask.
const SPAN: u32 = 1 << 30;
/// In unbounded mode, a switch remembers which of its last `RING` PACKET_INs were
/// answered (one bit each, 128 KiB): an answer to an older one is not counted. More than
/// the socket buffers and a controller's queue hold of 100-byte messages.
const RING: u32 = 1 << 20;
/// The xid of the ECHO_REQUEST closing a switch's announcements (below [`FIRST_SEQ`]).
const LEARN_DONE_XID: u32 = 0x0fff_fff0;
/// The xid of announcement `i` is `LEARN_XID + i` (below `LEARN_DONE_XID` for 2^24).
const LEARN_XID: u32 = 0x0e00_0000;

/// The sequence number of PACKET_IN number `n`.
fn seq_of(n: u64) -> u32 {
    FIRST_SEQ + (n as u32 & (SPAN - 1))
}

/// The ports every emulated switch has.
/// The port the template's PACKET_IN comes in on (patched per packet).
const IN_PORT: u32 = 1;

/// The port host `index` lives behind: 1 for even indexes, 2 for odd ones.
pub fn host_port(index: u32) -> u32 {
    1 + (index & 1)
}

/// The host the packets of host `index` go to, among `macs` hosts: its partner behind
/// the other port, or `None` with one host.
pub fn partner(index: u32, macs: u32) -> Option<u32> {
    if macs < 2 {
        None
    } else if index ^ 1 < macs {
        Some(index ^ 1)
    } else {
        Some(index - 1)
    }
}
/// Bytes of the Ethernet frame a PACKET_IN carries.
const FRAME_LEN: usize = 60;

/// A source MAC of switch `dpid`: host `index`.
pub fn host_mac(dpid: u64, index: u32) -> MacAddr {
    let d = (dpid as u16).to_be_bytes();
    let i = index.to_be_bytes();
    MacAddr([0x02, d[0], d[1], i[1], i[2], i[3]])
}

/// The IPv4 address of host `index` of switch `dpid` among `macs` per switch: in
/// 10.0.0.0/8, numbered across the switches (unique up to 2^24 hosts in all).
pub fn host_ip(dpid: u64, index: u32, macs: u32) -> [u8; 4] {
    let n = (dpid.wrapping_sub(1) as u32)
        .wrapping_mul(macs)
        .wrapping_add(index)
        & 0x00ff_ffff;
    let b = n.to_be_bytes();
    [10, b[1], b[2], b[3]]
}

/// The destination MAC of the frames of a switch with one host (never announced).
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

/// An unbuffered PACKET_IN of `data` from `in_port` (1.0 says table miss; 1.3 says
/// `reason13`).
fn packet_in(
    version: Version,
    in_port: u32,
    reason13: of13::PacketInReason,
    data: Vec<u8>,
) -> Message {
    let total_len = data.len() as u16;
    match version {
        Version::V1_0 => Message::V10(of10::Message::PacketIn(of10::PacketIn {
            buffer_id: NO_BUFFER,
            total_len,
            in_port: in_port as u16,
            reason: of10::PacketInReason::NoMatch,
            data,
        })),
        Version::V1_3 => Message::V13(of13::Message::PacketIn(of13::PacketIn {
            buffer_id: NO_BUFFER,
            total_len,
            reason: reason13,
            table_id: 0,
            cookie: 0,
            match_: of13::Match::new(vec![of13::Oxm::basic(
                of13::OxmField::InPort,
                u64::from(in_port),
            )]),
            data,
        })),
    }
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
    /// Where the ingress port is (a `u16` in 1.0, the OXM's `u32` value in 1.3).
    in_port_at: usize,
    /// 1.0 carries the port in 16 bits, 1.3 in 32.
    wide_port: bool,
    /// The one's-complement sum of the frame's IPv4 header words but the checksum and
    /// the addresses: the checksum of a packet between two hosts is this plus their
    /// addresses, with no pass over the header.
    ip_fixed_sum: u32,
}

/// Where the sequence number sits in a frame: the first bytes of the UDP payload.
const FRAME_SEQ_AT: usize = 42;

impl Template {
    /// The PACKET_IN of switch `dpid` in `version`.
    pub fn new(version: Version, dpid: u64) -> Template {
        let data = frame(host_mac(dpid, 0), dst_mac(dpid));
        let bytes = encode(&packet_in(
            version,
            IN_PORT,
            of13::PacketInReason::NoMatch,
            data,
        ));
        // 1.0: header, buffer_id, total_len, then in_port (§5.4.1). 1.3: header,
        // buffer_id, total_len, reason, table_id, cookie, then the match: type, length,
        // and its one OXM (4-byte header, 4-byte value) (§7.4.1).
        let (in_port_at, wide_port) = match version {
            Version::V1_0 => (14, false),
            Version::V1_3 => (32, true),
        };
        let frame_at = bytes.len() - FRAME_LEN;
        // The IPv4 header's first ten bytes: version to protocol (the checksum and the
        // addresses follow).
        let ip_fixed_sum = bytes[frame_at + 14..frame_at + 24]
            .chunks_exact(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum::<u32>();
        Template {
            frame_at,
            bytes,
            in_port_at,
            wide_port,
            ip_fixed_sum,
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

    /// Appends PACKET_IN `seq` (its xid, and its number in the frame) with this buffer
    /// id, from `src` behind `in_port`, to `dst`.
    #[inline]
    pub fn append(
        &self,
        out: &mut Vec<u8>,
        seq: u32,
        buffer_id: u32,
        in_port: u32,
        src: MacAddr,
        dst: MacAddr,
    ) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        let m = &mut out[at..];
        m[4..8].copy_from_slice(&seq.to_be_bytes());
        m[8..12].copy_from_slice(&buffer_id.to_be_bytes());
        if self.wide_port {
            m[self.in_port_at..self.in_port_at + 4].copy_from_slice(&in_port.to_be_bytes());
        } else {
            m[self.in_port_at..self.in_port_at + 2]
                .copy_from_slice(&(in_port as u16).to_be_bytes());
        }
        let f = &mut m[self.frame_at..];
        f[0..6].copy_from_slice(&dst.0);
        f[6..12].copy_from_slice(&src.0);
        f[FRAME_SEQ_AT..FRAME_SEQ_AT + 4].copy_from_slice(&seq.to_be_bytes());
    }

    /// Appends PACKET_IN `seq` of switch `dpid` (with `macs` hosts) from host `src`,
    /// behind its port, to its partner ([`partner`]), with their MAC and IPv4
    /// addresses.
    #[inline]
    pub fn append_from_host(
        &self,
        out: &mut Vec<u8>,
        seq: u32,
        buffer_id: u32,
        dpid: u64,
        macs: u32,
        src: u32,
    ) {
        let at = out.len();
        let dst = partner(src, macs);
        self.append(
            out,
            seq,
            buffer_id,
            host_port(src),
            host_mac(dpid, src),
            dst.map_or(dst_mac(dpid), |d| host_mac(dpid, d)),
        );
        let Some(dst) = dst else {
            return;
        };
        // The IPv4 header (RFC 791 §3.1) follows the 14-byte Ethernet header: the
        // addresses at 12 and 16, the checksum at 10: the sum of the fixed words, plus
        // the four address words (RFC 1071), folded and inverted.
        let (s, d) = (host_ip(dpid, src, macs), host_ip(dpid, dst, macs));
        let word = |b: &[u8; 4], i: usize| u32::from(u16::from_be_bytes([b[i], b[i + 1]]));
        let sum = self.ip_fixed_sum + word(&s, 0) + word(&s, 2) + word(&d, 0) + word(&d, 2);
        let sum = (sum & 0xffff) + (sum >> 16);
        let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
        let ip = &mut out[at + self.frame_at + 14..at + self.frame_at + 34];
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        ip[12..16].copy_from_slice(&s);
        ip[16..20].copy_from_slice(&d);
    }

    /// Appends the announcement of host `index` of switch `dpid` (with `macs` hosts): a
    /// gratuitous ARP reply from it, behind its port, unbuffered, to `out`.
    pub fn append_announcement(&self, out: &mut Vec<u8>, dpid: u64, macs: u32, index: u32) {
        let at = out.len();
        self.append(
            out,
            LEARN_XID + index,
            NO_BUFFER,
            host_port(index),
            host_mac(dpid, index),
            MacAddr::BROADCAST,
        );
        let src = host_mac(dpid, index);
        let ip = host_ip(dpid, index, macs);
        let f = &mut out[at + self.frame_at..];
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        // ARP (RFC 826): Ethernet, IPv4, lengths 6 and 4, reply; sender = target = the
        // host (a gratuitous ARP).
        f[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
        f[22..28].copy_from_slice(&src.0);
        f[28..32].copy_from_slice(&ip);
        f[32..38].copy_from_slice(&src.0);
        f[38..42].copy_from_slice(&ip);
        f[42..].fill(0);
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
    fn new(version: Version, dpid: u64, n_ports: u32) -> Replies {
        let ports = 1..=n_ports;
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
                        ports: ports
                            .map(|p| of10::PhyPort {
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
                            ports: ports
                                .map(|p| of13::Port {
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

    /// Wired: sends frame `frame` to the controller as a PACKET_IN from `in_port` (an
    /// LLDP frame another switch sent out of the port wired to it). Not on the hot
    /// path: encoded each time.
    pub fn inject(&mut self, in_port: u32, frame: &[u8]) {
        if self.state != State::Ready {
            return;
        }
        // 1.3: sent by the flow that sends discovery frames to the controller.
        let reason = of13::PacketInReason::Action;
        let msg = packet_in(self.behaviour.version, in_port, reason, frame.to_vec());
        self.wbuf.extend_from_slice(&encode(&msg));
    }

    /// Wired: answers a port statistics request. Port `p` of switch `d` sends and
    /// receives at a steady rate of its own, between 0 and 90 % of its 10 Gbit/s (a
    /// hash of `d` and `p`), so a UI colours its links with a spread of utilisations.
    fn port_stats(&mut self, xid: u32) {
        let secs = self.born.elapsed().as_secs_f64();
        let counters = |p: u32, salt: u64| {
            let mut h = self.dpid.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (u64::from(p) << 32) ^ salt;
            h ^= h >> 29;
            h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            h ^= h >> 32;
            let share = (h % 1000) as f64 / 1000.0 * 0.9;
            (share * 10e9 / 8.0 * secs) as u64
        };
        let stats = |p: u32| openflow::common::PortCounters {
            rx_bytes: counters(p, 1),
            tx_bytes: counters(p, 2),
            rx_packets: counters(p, 1) / 1000,
            tx_packets: counters(p, 2) / 1000,
            ..Default::default()
        };
        let ports = 1..=self.behaviour.ports;
        let msg = match self.behaviour.version {
            Version::V1_0 => Message::V10(of10::Message::StatsReply(of10::StatsReply {
                flags: 0,
                body: of10::stats::StatsReplyBody::Port {
                    stats: ports
                        .map(|p| of10::stats::PortStats {
                            port_no: p as u16,
                            counters: stats(p),
                        })
                        .collect(),
                },
            })),
            Version::V1_3 => Message::V13(of13::Message::MultipartReply(MultipartReply {
                flags: 0,
                body: MultipartReplyBody::PortStats {
                    stats: ports
                        .map(|p| of13::multipart::PortStats {
                            port_no: p,
                            counters: stats(p),
                            duration_sec: secs as u32,
                            duration_nsec: 0,
                        })
                        .collect(),
                },
            })),
        };
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(&encode(&msg));
        patch_xid(&mut self.wbuf[at..], xid);
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

    /// Unbounded mode: PACKET_IN `seq` was answered; counted if it is among the last
    /// [`RING`] sent and not answered before.
    #[inline]
    fn retire(&mut self, seq: u32) {
        let offset = seq.wrapping_sub(FIRST_SEQ);
        if offset >= SPAN {
            return;
        }
        // How many PACKET_INs were queued after it (mod SPAN).
        let age = (self.next as u32).wrapping_sub(1).wrapping_sub(offset) & (SPAN - 1);
        if age >= RING || self.next == 0 {
            return;
        }
        let bit = offset & (RING - 1);
        let word = &mut self.outstanding[(bit / 64) as usize];
        let mask = 1u64 << (bit % 64);
        if *word & mask != 0 {
            *word &= !mask;
            self.totals.answered += 1;
        }
    }

    /// Windowed mode: a FLOW_MOD or PACKET_OUT came in: retire the PACKET_IN it answers.
    fn answer(&mut self, m: &[u8], recording: bool, now: Instant) {
        let idx = match self.behaviour.counting {
            Counting::Cbench => self.in_flight.iter().position(|p| !p.answered),
            Counting::PerPacketIn => {
                let front = self.in_flight.front().map(|p| p.seq);
                answered_seq(m).and_then(|seq| {
                    front
                        .map(|f| (seq.wrapping_sub(f) & (SPAN - 1)) as usize)
                        .filter(|&i| i < self.in_flight.len() && !self.in_flight[i].answered)
                })
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

    /// Queues the next PACKET_IN; returns its sequence number.
    #[inline]
    fn queue_packet_in(&mut self) -> u32 {
        let b = &self.behaviour;
        let seq = seq_of(self.next);
        self.next += 1;
        let src = self.next_mac;
        self.next_mac = if src + 1 >= b.macs { 0 } else { src + 1 };
        let buffer_id = if b.buffered { seq } else { NO_BUFFER };
        self.template
            .append_from_host(&mut self.wbuf, seq, buffer_id, self.dpid, b.macs, src);
        self.totals.packet_ins += 1;
        seq
    }

    /// Unbounded mode: queues the next PACKET_IN and marks it unanswered.
    #[inline]
    fn queue_outstanding(&mut self) {
        let seq = self.queue_packet_in();
        let bit = (seq.wrapping_sub(FIRST_SEQ) & (RING - 1)) as usize;
        self.outstanding[bit / 64] |= 1u64 << (bit % 64);
    }

    /// Windowed mode: queues PACKET_INs until the window is full (one write carries
    /// them all).
    fn top_up(&mut self, now: Instant) {
        let window = self.behaviour.window;
        while self.unanswered < window
            && self.in_flight.len() < window * 4
            && self.wbuf.len() - self.wpos < MAX_PENDING_OUT
        {
            let seq = self.queue_packet_in();
            self.in_flight.push_back(Pending {
                seq,
                sent: now,
                answered: false,
            });
            self.unanswered += 1;
        }
    }

    /// Unbounded mode (cbench's throughput mode): fill the output buffer with
    /// PACKET_INs and write it, again and again while the socket takes it all (up to a
    /// per-turn cap).
    fn fill(&mut self) {
        let mut written = 0;
        let len = self.template.len();
        while self.state == State::Ready && self.writable && written < MAX_WRITE_PER_TURN {
            let n = MAX_PENDING_OUT.saturating_sub(self.wbuf.len() - self.wpos) / len;
            for _ in 0..n {
                self.queue_outstanding();
            }
            let pending = self.wbuf.len() - self.wpos;
            self.flush();
            written += pending - (self.wbuf.len() - self.wpos);
            if self.wants_write() {
                break;
            }
        }
    }

    /// The learning phase: queues announcements (fill and write, as in [`Self::fill`]),
    /// then the ECHO_REQUEST that closes them.
    fn announce(&mut self) {
        let macs = self.behaviour.macs;
        let mut written = 0;
        let len = self.template.len();
        loop {
            if self.next_announce < macs {
                let pending = self.wbuf.len() - self.wpos;
                let n = (MAX_PENDING_OUT.saturating_sub(pending) / len) as u32;
                let end = macs.min(self.next_announce + n);
                for i in self.next_announce..end {
                    self.template
                        .append_announcement(&mut self.wbuf, self.dpid, macs, i);
                }
                self.totals.announced += u64::from(end - self.next_announce);
                self.next_announce = end;
                if end == macs {
                    let v = self.behaviour.version.wire();
                    self.wbuf.extend_from_slice(&[v, msg::ECHO_REQUEST, 0, 8]);
                    self.wbuf.extend_from_slice(&LEARN_DONE_XID.to_be_bytes());
                }
            }
            let pending = self.wbuf.len() - self.wpos;
            self.flush();
            written += pending - (self.wbuf.len() - self.wpos);
            if self.next_announce >= macs
                || !self.writable
                || self.wants_write()
                || written >= MAX_WRITE_PER_TURN
                || self.state != State::Ready
            {
                break;
            }
        }
    }

    fn flush(&mut self) {
        // A transport with bytes of its own waiting (TLS records the socket did not
        // take) writes them first; a plain socket has none.
        if self.state != State::Closed {
            if let Err(e) = self.stream.flush() {
                match e.kind() {
                    ErrorKind::WouldBlock | ErrorKind::NotConnected | ErrorKind::Interrupted => {}
                    _ => self.close(format!("write: {e}")),
                }
            }
        }
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
        } else if self.wpos >= MAX_PENDING_OUT {
            // Keep the buffer from growing: move what is left to the front.
            self.wbuf.drain(..self.wpos);
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

/// The PACKET_IN a FLOW_MOD or PACKET_OUT answers, by its sequence number: the buffer
/// id it names, unless `NO_BUFFER`; for an unbuffered PACKET_OUT, the number in the frame
/// it sends back (where the PACKET_IN's frame carried it); else its xid (for a
/// controller that answers with the PACKET_IN's xid, as the responder does). Reads a few
/// fixed offsets, nothing more; `None` for a message too short to hold them.
pub fn answered_seq(m: &[u8]) -> Option<u32> {
    let u32_at = |at: usize| {
        m.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (version, ty) = (*m.first()?, *m.get(1)?);
    // PACKET_OUT: buffer_id right after the header (1.0 §5.3.6, 1.3 §7.3.7). FLOW_MOD:
    // after the 40-byte match, cookie, command, timeouts and priority in 1.0 (§5.3.3);
    // after cookie, mask, table, command, timeouts and priority in 1.3 (§7.3.4.1).
    let buffer_id = match (version, ty) {
        (_, msg::PACKET_OUT) => u32_at(8),
        (0x01, msg::FLOW_MOD) => u32_at(64),
        (0x04, msg::FLOW_MOD) => u32_at(32),
        _ => None,
    }?;
    if buffer_id != NO_BUFFER {
        return Some(buffer_id);
    }
    if ty == msg::PACKET_OUT {
        // The frame follows the actions: 1.0 has actions_len at 14 and the actions at
        // 16; 1.3 has it at 16 and the actions at 24 (after 6 bytes of padding).
        let (len_at, actions_at) = if version == 0x01 { (14, 16) } else { (16, 24) };
        if let Some(l) = m.get(len_at..len_at + 2) {
            let data = actions_at + usize::from(u16::from_be_bytes([l[0], l[1]]));
            if let Some(seq) = u32_at(data + FRAME_SEQ_AT) {
                return Some(seq);
            }
        }
    }
    u32_at(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_patches_xid_buffer_and_source() {
        for version in [Version::V1_0, Version::V1_3] {
            let t = Template::new(version, 7);
            let mut out = Vec::new();
            t.append(&mut out, 42, 9, 3, host_mac(7, 0x01_0203), host_mac(7, 5));
            let (xid, msg) = Message::decode(&out).unwrap();
            assert_eq!(xid, 42);
            let (buffer_id, in_port, data) = match msg {
                Message::V10(of10::Message::PacketIn(p)) => {
                    (p.buffer_id, u32::from(p.in_port), p.data)
                }
                Message::V13(of13::Message::PacketIn(p)) => {
                    let port = p.in_port().expect("an in_port OXM");
                    (p.buffer_id, port, p.data)
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(buffer_id, 9);
            assert_eq!(in_port, 3);
            assert_eq!(&data[6..12], &[0x02, 0, 7, 1, 2, 3]);
            assert_eq!(&data[0..6], &host_mac(7, 5).0);
            assert_eq!(&data[FRAME_SEQ_AT..FRAME_SEQ_AT + 4], &42u32.to_be_bytes());
            assert_eq!(data.len(), FRAME_LEN);
            // The frame is still a valid IPv4/UDP one.
            let eth = packet::ethernet::EthernetFrame::new_checked(&data[..]).unwrap();
            assert_eq!(eth.ethertype(), packet::ethernet::EtherType::Ipv4);
        }
    }

    #[test]
    fn handshake_replies_decode() {
        for version in [Version::V1_0, Version::V1_3] {
            let r = Replies::new(version, 3, 4);
            for b in [&r.features, &r.get_config, &r.barrier]
                .into_iter()
                .chain(r.port_desc.as_ref())
            {
                Message::decode(b).unwrap();
            }
        }
    }

    #[test]
    fn answered_seq_reads_buffer_id_frame_or_xid() {
        use openflow::model::{Action, FlowMod, Match, PacketOut, PortNo};
        let out_port = [Action::output(PortNo::Physical(2))];
        for version in [Version::V1_0, Version::V1_3] {
            let enc = |f: &dyn Fn(&mut Vec<u8>)| {
                let mut out = Vec::new();
                f(&mut out);
                out
            };
            let po = enc(&|o| {
                PacketOut::buffered(77, PortNo::Physical(1), &out_port)
                    .encode(version, 1, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&po), Some(77));
            let fm = enc(&|o| {
                FlowMod::add(Match::default(), &out_port)
                    .buffer_id(Some(55))
                    .encode(version, 1, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&fm), Some(55));
            // Unbuffered: a FLOW_MOD names its xid; a PACKET_OUT the number in its frame.
            let fm = enc(&|o| {
                FlowMod::add(Match::default(), &out_port)
                    .encode(version, 0x1234_5678, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&fm), Some(0x1234_5678));
            let mut pi = Vec::new();
            Template::new(version, 1).append(
                &mut pi,
                0x1000_0abc,
                NO_BUFFER,
                1,
                host_mac(1, 0),
                host_mac(1, 1),
            );
            let data = &pi[pi.len() - FRAME_LEN..];
            let po = enc(&|o| {
                PacketOut::unbuffered(data, PortNo::Physical(1), &out_port)
                    .encode(version, 9, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&po), Some(0x1000_0abc));
            assert_eq!(
                answered_seq(&po[..20]),
                Some(9),
                "too short for the frame: the xid"
            );
            assert_eq!(answered_seq(&po[..6]), None);
        }
    }

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

    #[test]
    fn packets_go_between_hosts_with_their_own_addresses() {
        for version in [Version::V1_0, Version::V1_3] {
            let mut out = Vec::new();
            Template::new(version, 3).append_from_host(&mut out, 5, NO_BUFFER, 3, 100, 7);
            let (_, msg) = Message::decode(&out).unwrap();
            let data = match msg {
                Message::V10(of10::Message::PacketIn(p)) => p.data,
                Message::V13(of13::Message::PacketIn(p)) => p.data,
                other => panic!("{other:?}"),
            };
            let eth = packet::ethernet::EthernetFrame::new_checked(&data[..]).unwrap();
            assert_eq!(eth.src_addr(), host_mac(3, 7));
            assert_eq!(eth.dst_addr(), host_mac(3, 6));
            let ip = packet::ipv4::Ipv4Packet::new_checked(eth.payload()).unwrap();
            assert!(ip.verify_checksum(), "the header checksum is recomputed");
            assert_eq!(ip.src_addr().octets(), host_ip(3, 7, 100));
            assert_eq!(ip.dst_addr().octets(), host_ip(3, 6, 100));
            assert_eq!(host_ip(3, 7, 100), [10, 0, 0, 207]);
        }
    }

    #[test]
    fn partners_live_behind_the_other_port() {
        for macs in [2u32, 3, 4, 7, 100] {
            for i in 0..macs {
                let p = partner(i, macs).unwrap();
                assert!(p < macs && p != i);
                assert_ne!(host_port(p), host_port(i), "{i} of {macs}");
            }
        }
        assert_eq!(partner(0, 1), None);
    }

    #[test]
    fn announcements_are_gratuitous_arps_from_the_host_port() {
        for version in [Version::V1_0, Version::V1_3] {
            let mut out = Vec::new();
            Template::new(version, 9).append_announcement(&mut out, 9, 1 << 20, 0x01_0203);
            let (_, msg) = Message::decode(&out).unwrap();
            let (buffer_id, in_port, data) = match msg {
                Message::V10(of10::Message::PacketIn(p)) => {
                    (p.buffer_id, u32::from(p.in_port), p.data)
                }
                Message::V13(of13::Message::PacketIn(p)) => {
                    (p.buffer_id, p.in_port().unwrap(), p.data)
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(buffer_id, NO_BUFFER);
            assert_eq!(in_port, host_port(0x01_0203));
            let eth = packet::ethernet::EthernetFrame::new_checked(&data[..]).unwrap();
            assert_eq!(eth.src_addr(), host_mac(9, 0x01_0203));
            assert_eq!(eth.dst_addr(), MacAddr::BROADCAST);
            assert_eq!(eth.ethertype(), packet::ethernet::EtherType::Arp);
        }
    }
}
