//! The data-plane probe engine: paced UDP streams sent and captured on Linux interfaces
//! through `AF_PACKET` sockets, with kernel timestamps (`SO_TIMESTAMPING`).
//!
//! OFLOPS measured switches with a NetFPGA card that timestamped frames in hardware. Here a
//! frame's departure and arrival are stamped by the kernel: the software transmit stamp is
//! taken in the driver's transmit routine (`veth_xmit` for a veth), the software receive
//! stamp when the frame enters the network stack of the capturing interface. Hardware
//! stamps are requested too and used when the NIC gives them (veths never do). Both are
//! `CLOCK_REALTIME`, the clock of [`now_ns`]: control-channel events stamped with
//! [`now_ns`] can be compared with data-plane stamps directly.
//!
//! ## A frame
//!
//! Ethernet, an optional 802.1Q tag, IPv4, UDP, then the probe's payload ([`Stamp`]):
//! a magic (`OFPB`), the stream id, the sequence number, the template index (which of a
//! stream's [`FrameSpec`]s built it) and the sender's user-space clock at send time. The
//! payload is found again in a frame the switch modified (tags pushed or popped, addresses
//! rewritten) by [`parse_stamp`], so a received frame is matched to its transmit record by
//! `(stream, seq)`. Frames are padded with zeros to [`FrameSpec::len`] (default
//! [`DEFAULT_FRAME_LEN`] bytes, as in the paper).
//!
//! ## Use
//!
//! ```no_run
//! use bench::oflops::probe::{self, FrameSpec, StreamSpec, CaptureOptions};
//! use std::time::Duration;
//!
//! let tx = probe::Iface::lookup("pb-lab-1")?;
//! let spec = FrameSpec::udp(tx.mac, [0x02, 0, 0, 0, 0, 2], [10, 0, 0, 1].into(), [10, 0, 0, 2].into());
//! let stream = StreamSpec::new(1, vec![spec]).rate(125_000.0).duration(Duration::from_secs(1));
//! let session = probe::Session::start(vec![("pb-lab-1".into(), stream)], &["pb-lab-2"], CaptureOptions::default())?;
//! let records = session.wait()?;
//! let delays = records.delays_ns(1, None);
//! println!("median {:?} ns, lost {}", probe::Spread::of(&delays).map(|s| s.median), records.lost(1));
//! # Ok::<(), probe::ProbeError>(())
//! ```
//!
//! Building blocks, for tests that need them one at a time: [`Sender`] (one interface,
//! [`Sender::send_frame`] or [`Sender::run`] for a paced stream), [`Capture`] (one or more
//! interfaces, [`Capture::run`] until a stop flag), [`Session`] (senders and a capture on
//! threads; [`Session::stop`] or [`Session::wait`] gives [`Records`]).
//!
//! ## Pacing
//!
//! [`Pacing::Spin`] sends each frame at its due time, busy-waiting a core (the constant
//! rate the paper's generator had). [`Pacing::Sleep`] (the default, kinder to a shared
//! machine) sleeps about 100 µs at a time and then sends the frames that fell due, in a
//! small burst: at 125 kpps, bursts of about 12 frames.
//!
//! ## Precision
//!
//! [`Records::tx_source`] and each [`RxRecord::source`] say which stamps were used. When the
//! kernel gives no transmit stamp for a frame, its user-space send time stands in
//! ([`TsSource::User`]). The floor and the accuracy against a known delay are measured by
//! [`super::delay`]: on a busy 2-core VM with veths (software stamps, nanosecond
//! resolution), a direct veth pair measures 0.16–0.33 µs median (p99 under 0.6 µs), and
//! the bench's 5 ms forwarder 5.003 ms at 10 kpps (+0.05%), 5.31 ms at 125 kpps (the
//! forwarder falling behind, not the stamps). The kernel's transmit stamp comes ~2 µs
//! after the user-space send time, tens of µs later within a [`Pacing::Sleep`] burst.
//!
//! VLAN receive offload strips the outer tag from captured frames; the capture asks for
//! `PACKET_AUXDATA` and puts the tag back, so [`RxRecord::bytes`] are the frame as on the
//! wire.

use std::ffi::CString;
use std::io;
use std::mem;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use packet::checksum::checksum;

/// The first bytes of the probe payload.
pub const MAGIC: [u8; 4] = *b"OFPB";
/// Bytes of the probe payload: magic 4, stream 4, seq 8, template 4, user send time 8.
pub const PAYLOAD_LEN: usize = 28;
/// The shortest untagged frame that holds the payload (Ethernet 14 + IPv4 20 + UDP 8 + 28).
pub const MIN_FRAME_LEN: usize = 14 + 20 + 8 + PAYLOAD_LEN;
/// The paper's probe frame size.
pub const DEFAULT_FRAME_LEN: usize = 100;
/// The paper's probe rate, frames per second.
pub const DEFAULT_RATE_PPS: f64 = 125_000.0;
/// UDP ports of a default frame.
pub const DEFAULT_SRC_PORT: u16 = 40000;
/// UDP destination port of a default frame.
pub const DEFAULT_DST_PORT: u16 = 50000;

/// Linux values (x86_64 and every other architecture but mips/sparc/parisc, which Pharos
/// does not build for), written here because not every libc version exports them.
mod sys {
    pub const SO_TIMESTAMPING: libc::c_int = 37;
    pub const SO_RCVBUFFORCE: libc::c_int = 33;
    pub const SO_SNDBUFFORCE: libc::c_int = 32;
    pub const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
    pub const PACKET_OUTGOING: u8 = 4;
    pub const SOF_TX_HARDWARE: u32 = 1 << 0;
    pub const SOF_TX_SOFTWARE: u32 = 1 << 1;
    pub const SOF_RX_HARDWARE: u32 = 1 << 2;
    pub const SOF_RX_SOFTWARE: u32 = 1 << 3;
    pub const SOF_SOFTWARE: u32 = 1 << 4;
    pub const SOF_RAW_HARDWARE: u32 = 1 << 6;
    pub const ETHTOOL_GET_TS_INFO: u32 = 0x41;
    pub const SIOCETHTOOL: libc::c_ulong = 0x8946;
    pub const SIOCSHWTSTAMP: libc::c_ulong = 0x89b0;
    pub const HWTSTAMP_TX_ON: i32 = 1;
    pub const HWTSTAMP_FILTER_ALL: i32 = 1;
    pub const ETH_P_ALL: u16 = 0x0003;
    pub const PACKET_AUXDATA: libc::c_int = 8;
    pub const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
    pub const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
}

/// What went wrong, and where.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A system call failed; `context` names the call and the interface.
    #[error("{context}: {source}")]
    Io {
        /// The call and its subject, for example `bind AF_PACKET to pb-lab-1`.
        context: String,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// A bad argument: an unknown interface, a frame too short for its payload.
    #[error("{0}")]
    Invalid(String),
    /// A sender or capture thread panicked.
    #[error("probe thread panicked: {0}")]
    Panicked(String),
}

fn last_err(context: impl Into<String>) -> ProbeError {
    ProbeError::Io {
        context: context.into(),
        source: io::Error::last_os_error(),
    }
}

/// Now on `CLOCK_REALTIME` in nanoseconds: the clock of the kernel's software timestamps.
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn ts_ns(ts: &libc::timespec) -> i64 {
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// A network interface of this namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iface {
    /// Its name, as `ip link` shows it.
    pub name: String,
    /// Its ifindex, which `AF_PACKET` binds to.
    pub index: u32,
    /// Its MAC address (a default source address for frames sent on it).
    pub mac: [u8; 6],
}

impl Iface {
    /// Looks an interface up by name (its index, and its MAC from sysfs).
    pub fn lookup(name: &str) -> Result<Iface, ProbeError> {
        let c = CString::new(name)
            .map_err(|_| ProbeError::Invalid(format!("bad interface name {name:?}")))?;
        // SAFETY: c is a valid NUL-terminated string.
        let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
        if index == 0 {
            return Err(ProbeError::Invalid(format!(
                "no interface {name:?} in this namespace"
            )));
        }
        let text =
            std::fs::read_to_string(format!("/sys/class/net/{name}/address")).unwrap_or_default();
        let mac = parse_mac(text.trim()).unwrap_or([0; 6]);
        Ok(Iface {
            name: name.to_string(),
            index,
            mac,
        })
    }
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split(':');
    for b in out.iter_mut() {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// What the kernel and the NIC offer for timestamping on an interface (`ethtool -T`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsCaps {
    /// `SOF_TIMESTAMPING_*` bits the interface supports.
    pub so_timestamping: u32,
    /// The PTP hardware clock, if any.
    pub phc_index: i32,
}

impl TsCaps {
    /// Whether the NIC stamps frames in hardware (both directions).
    pub fn hardware(&self) -> bool {
        let hw = sys::SOF_TX_HARDWARE | sys::SOF_RX_HARDWARE | sys::SOF_RAW_HARDWARE;
        self.so_timestamping & hw == hw
    }
    /// Whether the driver stamps transmitted frames in software (veth does).
    pub fn software_tx(&self) -> bool {
        self.so_timestamping & sys::SOF_TX_SOFTWARE != 0
    }
}

/// Asks the driver of `name` what timestamps it offers (`ETHTOOL_GET_TS_INFO`).
pub fn timestamping_caps(name: &str) -> Result<TsCaps, ProbeError> {
    #[repr(C)]
    struct TsInfo {
        cmd: u32,
        so_timestamping: u32,
        phc_index: i32,
        tx_types: u32,
        tx_reserved: [u32; 3],
        rx_filters: u32,
        rx_reserved: [u32; 3],
    }
    let mut info = TsInfo {
        cmd: sys::ETHTOOL_GET_TS_INFO,
        so_timestamping: 0,
        phc_index: -1,
        tx_types: 0,
        tx_reserved: [0; 3],
        rx_filters: 0,
        rx_reserved: [0; 3],
    };
    let fd = dgram_socket()?;
    let mut ifr = ifreq(name)?;
    ifr.ifr_ifru.ifru_data = (&mut info as *mut TsInfo).cast();
    // SAFETY: ifr points at info, which outlives the call and has the layout the ioctl writes.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), sys::SIOCETHTOOL as _, &mut ifr) };
    if r < 0 {
        return Err(last_err(format!("ETHTOOL_GET_TS_INFO on {name}")));
    }
    Ok(TsCaps {
        so_timestamping: info.so_timestamping,
        phc_index: info.phc_index,
    })
}

/// Turns on hardware timestamping of all frames on `name` (`SIOCSHWTSTAMP`), when the NIC
/// has it. Returns whether it is on.
fn enable_hw_stamps(name: &str) -> bool {
    #[repr(C)]
    struct HwConfig {
        flags: i32,
        tx_type: i32,
        rx_filter: i32,
    }
    match timestamping_caps(name) {
        Ok(c) if c.hardware() => {}
        _ => return false,
    }
    let mut cfg = HwConfig {
        flags: 0,
        tx_type: sys::HWTSTAMP_TX_ON,
        rx_filter: sys::HWTSTAMP_FILTER_ALL,
    };
    let (Ok(fd), Ok(mut ifr)) = (dgram_socket(), ifreq(name)) else {
        return false;
    };
    ifr.ifr_ifru.ifru_data = (&mut cfg as *mut HwConfig).cast();
    // SAFETY: as in timestamping_caps; cfg outlives the call.
    unsafe { libc::ioctl(fd.as_raw_fd(), sys::SIOCSHWTSTAMP as _, &mut ifr) == 0 }
}

fn dgram_socket() -> Result<OwnedFd, ProbeError> {
    // SAFETY: plain socket(2); the fd is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(last_err("socket(AF_INET) for an ioctl"));
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn ifreq(name: &str) -> Result<libc::ifreq, ProbeError> {
    // SAFETY: ifreq is plain data; all zeros is valid.
    let mut ifr: libc::ifreq = unsafe { mem::zeroed() };
    if name.len() >= ifr.ifr_name.len() {
        return Err(ProbeError::Invalid(format!(
            "interface name {name:?} too long"
        )));
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}

/// The headers of a probe frame. The payload ([`Stamp`]) is written by the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    /// Ethernet source.
    pub src_mac: [u8; 6],
    /// Ethernet destination.
    pub dst_mac: [u8; 6],
    /// An 802.1Q tag: VLAN id (12 bits) and priority (3 bits).
    pub vlan: Option<(u16, u8)>,
    /// IPv4 source.
    pub src_ip: Ipv4Addr,
    /// IPv4 destination.
    pub dst_ip: Ipv4Addr,
    /// IPv4 TOS byte (DSCP << 2 | ECN).
    pub tos: u8,
    /// IPv4 TTL.
    pub ttl: u8,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// Total frame length in bytes (without the FCS); at least [`MIN_FRAME_LEN`] (+4 with a tag).
    pub len: usize,
}

impl FrameSpec {
    /// An untagged UDP frame of [`DEFAULT_FRAME_LEN`] bytes, TTL 64, TOS 0, ports
    /// [`DEFAULT_SRC_PORT`] → [`DEFAULT_DST_PORT`].
    pub fn udp(
        src_mac: [u8; 6],
        dst_mac: [u8; 6],
        src_ip: Ipv4Addr,
        dst_ip: Ipv4Addr,
    ) -> FrameSpec {
        FrameSpec {
            src_mac,
            dst_mac,
            vlan: None,
            src_ip,
            dst_ip,
            tos: 0,
            ttl: 64,
            src_port: DEFAULT_SRC_PORT,
            dst_port: DEFAULT_DST_PORT,
            len: DEFAULT_FRAME_LEN,
        }
    }

    fn header_len(&self) -> usize {
        14 + if self.vlan.is_some() { 4 } else { 0 } + 20 + 8
    }

    /// Checks the length leaves room for the payload.
    pub fn check(&self) -> Result<(), ProbeError> {
        if self.len < self.header_len() + PAYLOAD_LEN || self.len > 9000 {
            return Err(ProbeError::Invalid(format!(
                "frame length {} out of range: {} to 9000 bytes",
                self.len,
                self.header_len() + PAYLOAD_LEN
            )));
        }
        Ok(())
    }

    /// Writes the frame carrying `stamp` into `buf` (resized to [`FrameSpec::len`]).
    pub fn build_into(&self, stamp: &Stamp, buf: &mut Vec<u8>) {
        buf.clear();
        buf.resize(self.len.max(self.header_len() + PAYLOAD_LEN), 0);
        buf[0..6].copy_from_slice(&self.dst_mac);
        buf[6..12].copy_from_slice(&self.src_mac);
        let mut o = 12;
        if let Some((vid, pcp)) = self.vlan {
            buf[o..o + 2].copy_from_slice(&0x8100u16.to_be_bytes());
            let tci = (u16::from(pcp & 7) << 13) | (vid & 0x0fff);
            buf[o + 2..o + 4].copy_from_slice(&tci.to_be_bytes());
            o += 4;
        }
        buf[o..o + 2].copy_from_slice(&0x0800u16.to_be_bytes());
        o += 2;
        let ip_len = (buf.len() - o) as u16;
        let ip = o;
        buf[ip] = 0x45;
        buf[ip + 1] = self.tos;
        buf[ip + 2..ip + 4].copy_from_slice(&ip_len.to_be_bytes());
        // Identification: the low bits of the sequence number, for a reader of a capture.
        buf[ip + 4..ip + 6].copy_from_slice(&(stamp.seq as u16).to_be_bytes());
        buf[ip + 6..ip + 8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF
        buf[ip + 8] = self.ttl;
        buf[ip + 9] = 17;
        buf[ip + 12..ip + 16].copy_from_slice(&self.src_ip.octets());
        buf[ip + 16..ip + 20].copy_from_slice(&self.dst_ip.octets());
        let csum = checksum(&buf[ip..ip + 20]);
        buf[ip + 10..ip + 12].copy_from_slice(&csum.to_be_bytes());
        let udp = ip + 20;
        buf[udp..udp + 2].copy_from_slice(&self.src_port.to_be_bytes());
        buf[udp + 2..udp + 4].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[udp + 4..udp + 6].copy_from_slice(&(ip_len - 20).to_be_bytes());
        // UDP checksum 0: none (allowed over IPv4), so rewritten addresses and ports
        // leave a valid frame without the switch recomputing anything.
        stamp.write(&mut buf[udp + 8..udp + 8 + PAYLOAD_LEN]);
    }

    /// The frame carrying `stamp`.
    pub fn build(&self, stamp: &Stamp) -> Vec<u8> {
        let mut v = Vec::new();
        self.build_into(stamp, &mut v);
        v
    }
}

/// The probe payload: which frame this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The stream the frame belongs to.
    pub stream: u32,
    /// Its sequence number in the stream, from 0.
    pub seq: u64,
    /// Which of the stream's templates built it (`seq % templates.len()` for a [`Sender::run`]).
    pub template: u32,
    /// The sender's [`now_ns`] just before the send call.
    pub user_tx_ns: i64,
}

impl Stamp {
    fn write(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&MAGIC);
        out[4..8].copy_from_slice(&self.stream.to_be_bytes());
        out[8..16].copy_from_slice(&self.seq.to_be_bytes());
        out[16..20].copy_from_slice(&self.template.to_be_bytes());
        out[20..28].copy_from_slice(&self.user_tx_ns.to_be_bytes());
    }

    fn read(b: &[u8]) -> Option<Stamp> {
        if b.len() < PAYLOAD_LEN || b[0..4] != MAGIC {
            return None;
        }
        Some(Stamp {
            stream: u32::from_be_bytes(b[4..8].try_into().ok()?),
            seq: u64::from_be_bytes(b[8..16].try_into().ok()?),
            template: u32::from_be_bytes(b[16..20].try_into().ok()?),
            user_tx_ns: i64::from_be_bytes(b[20..28].try_into().ok()?),
        })
    }
}

/// Finds the probe payload in a frame, through any number of VLAN tags and whatever the
/// switch rewrote: the UDP payload when the frame parses as IPv4/UDP, else the first
/// [`MAGIC`] anywhere in the frame.
pub fn parse_stamp(frame: &[u8]) -> Option<Stamp> {
    let mut o = 12;
    while frame.len() >= o + 2
        && matches!(
            u16::from_be_bytes([frame[o], frame[o + 1]]),
            0x8100 | 0x88a8
        )
    {
        o += 4;
    }
    if frame.len() >= o + 2 && u16::from_be_bytes([frame[o], frame[o + 1]]) == 0x0800 {
        let ip = o + 2;
        if frame.len() > ip {
            let ihl = usize::from(frame[ip] & 0x0f) * 4;
            let payload = ip + ihl + 8;
            if let Some(s) = frame.get(payload..).and_then(Stamp::read) {
                return Some(s);
            }
        }
    }
    frame.windows(PAYLOAD_LEN).find_map(Stamp::read)
}

/// How a sender spaces its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// Sleep ~100 µs, then send the frames that fell due (bursts; spares the CPU).
    #[default]
    Sleep,
    /// Busy-wait each frame's due time (constant spacing; uses a whole core).
    Spin,
}

/// A paced stream of probe frames.
#[derive(Debug, Clone)]
pub struct StreamSpec {
    /// The id carried in each frame.
    pub id: u32,
    /// The frames' headers, used round robin: frame `seq` is built from
    /// `templates[seq % templates.len()]` (probes targeting many flows in turn).
    pub templates: Vec<FrameSpec>,
    /// Frames per second.
    pub rate_pps: f64,
    /// Stop after this many frames (`None`: no limit).
    pub count: Option<u64>,
    /// Stop after this long (`None`: no limit; a [`Session::stop`] or the count ends it).
    pub duration: Option<Duration>,
    /// How frames are spaced.
    pub pacing: Pacing,
}

impl StreamSpec {
    /// A stream at [`DEFAULT_RATE_PPS`] with no limit.
    pub fn new(id: u32, templates: Vec<FrameSpec>) -> StreamSpec {
        StreamSpec {
            id,
            templates,
            rate_pps: DEFAULT_RATE_PPS,
            count: None,
            duration: None,
            pacing: Pacing::default(),
        }
    }
    /// Sets the rate (frames per second).
    pub fn rate(mut self, pps: f64) -> StreamSpec {
        self.rate_pps = pps;
        self
    }
    /// Sets the number of frames.
    pub fn count(mut self, n: u64) -> StreamSpec {
        self.count = Some(n);
        self
    }
    /// Sets the duration.
    pub fn duration(mut self, d: Duration) -> StreamSpec {
        self.duration = Some(d);
        self
    }
    /// Sets the pacing.
    pub fn pacing(mut self, p: Pacing) -> StreamSpec {
        self.pacing = p;
        self
    }
}

/// Which clock stamped a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TsSource {
    /// The NIC.
    Hardware,
    /// The kernel (driver transmit routine, or stack entry on receive).
    Software,
    /// User space around the send call (no kernel stamp came back).
    User,
}

/// One frame sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxRecord {
    /// Its stream.
    pub stream: u32,
    /// Its sequence number.
    pub seq: u64,
    /// Its template index.
    pub template: u32,
    /// [`now_ns`] just before the send call.
    pub user_ns: i64,
    /// The kernel's (or NIC's) transmit stamp, when it came back.
    pub kernel_ns: Option<i64>,
    /// Which clock `kernel_ns` is from (`User` when there is none).
    pub source: TsSource,
}

impl TxRecord {
    /// The best transmit time: the kernel's stamp, else the user-space one.
    pub fn tx_ns(&self) -> i64 {
        self.kernel_ns.unwrap_or(self.user_ns)
    }
}

/// One probe frame captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxRecord {
    /// Its stream.
    pub stream: u32,
    /// Its sequence number.
    pub seq: u64,
    /// Its template index.
    pub template: u32,
    /// The sender's user-space send time carried in the frame.
    pub user_tx_ns: i64,
    /// Which capture interface it arrived on: an index into [`Records::ports`].
    pub port: usize,
    /// Its receive stamp.
    pub rx_ns: i64,
    /// Which clock stamped it.
    pub source: TsSource,
    /// Its length on the wire (without FCS; a tag the kernel stripped counted).
    pub len: usize,
    /// Its bytes as on the wire (a VLAN tag the kernel's receive offload stripped is put
    /// back from `PACKET_AUXDATA`), for the first [`CaptureOptions::keep_bytes`] frames per stream and port.
    pub bytes: Option<Vec<u8>>,
}

fn sockaddr_ll(index: u32, protocol: u16) -> libc::sockaddr_ll {
    // SAFETY: plain data; zeros are valid.
    let mut sa: libc::sockaddr_ll = unsafe { mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_protocol = protocol.to_be();
    sa.sll_ifindex = index as i32;
    sa
}

fn setsockopt_int(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: v is a c_int that lives through the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Opens an `AF_PACKET` raw socket bound to `iface`, with timestamping on.
fn packet_socket(iface: &Iface, protocol: u16, ts_flags: u32) -> Result<OwnedFd, ProbeError> {
    // SAFETY: plain socket(2).
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::c_int::from(protocol.to_be()),
        )
    };
    if fd < 0 {
        return Err(last_err(format!(
            "socket(AF_PACKET) for {} (needs CAP_NET_RAW)",
            iface.name
        )));
    }
    // SAFETY: fresh descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let sa = sockaddr_ll(iface.index, protocol);
    // SAFETY: sa is a valid sockaddr_ll of the given size.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_ll).cast(),
            mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(last_err(format!("bind AF_PACKET to {}", iface.name)));
    }
    let big = 16 << 20;
    if setsockopt_int(&fd, libc::SOL_SOCKET, sys::SO_RCVBUFFORCE, big).is_err() {
        let _ = setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, big);
    }
    if setsockopt_int(&fd, libc::SOL_SOCKET, sys::SO_SNDBUFFORCE, 4 << 20).is_err() {
        let _ = setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, 4 << 20);
    }
    setsockopt_int(
        &fd,
        libc::SOL_SOCKET,
        sys::SO_TIMESTAMPING,
        ts_flags as libc::c_int,
    )
    .map_err(|e| ProbeError::Io {
        context: format!("SO_TIMESTAMPING on {}", iface.name),
        source: e,
    })?;
    Ok(fd)
}

/// What one `recvmsg` gave: bytes, stamps, the packet type.
struct Received {
    len: usize,
    /// `scm_timestamping.ts[0]` (software) and `ts[2]` (raw hardware), 0 when absent.
    sw_ns: i64,
    hw_ns: i64,
    pkttype: u8,
    /// The 802.1Q tag the kernel took out of the frame (VLAN receive offload: veths and
    /// most NICs strip the outer tag into the packet's metadata), as (TPID, TCI).
    vlan: Option<(u16, u16)>,
}

/// `struct tpacket_auxdata` (linux/if_packet.h).
#[repr(C)]
#[derive(Clone, Copy)]
struct TpacketAuxdata {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
}

/// `recvmsg` with `flags`, the frame into `buf`, the stamps out of the control messages.
fn recv_stamped(fd: &OwnedFd, buf: &mut [u8], flags: libc::c_int) -> io::Result<Received> {
    let mut cbuf = [0u64; 64];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: zeroed sockaddr_ll and msghdr are valid; all pointers below outlive the call.
    let mut sa: libc::sockaddr_ll = unsafe { mem::zeroed() };
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    msg.msg_name = (&mut sa as *mut libc::sockaddr_ll).cast();
    msg.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    msg.msg_controllen = mem::size_of_val(&cbuf) as _;
    // SAFETY: msg describes valid buffers.
    let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, flags | libc::MSG_TRUNC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Received {
        len: n as usize,
        sw_ns: 0,
        hw_ns: 0,
        pkttype: sa.sll_pkttype,
        vlan: None,
    };
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == sys::SO_TIMESTAMPING {
                let ts = libc::CMSG_DATA(c) as *const [libc::timespec; 3];
                let ts = std::ptr::read_unaligned(ts);
                out.sw_ns = ts_ns(&ts[0]);
                out.hw_ns = ts_ns(&ts[2]);
            }
            if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == sys::PACKET_AUXDATA {
                let aux = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const TpacketAuxdata);
                if aux.tp_status & sys::TP_STATUS_VLAN_VALID != 0 {
                    let tpid = if aux.tp_status & sys::TP_STATUS_VLAN_TPID_VALID != 0 {
                        aux.tp_vlan_tpid
                    } else {
                        0x8100
                    };
                    out.vlan = Some((tpid, aux.tp_vlan_tci));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(out)
}

fn pick(sw: i64, hw: i64) -> Option<(i64, TsSource)> {
    if hw != 0 {
        Some((hw, TsSource::Hardware))
    } else if sw != 0 {
        Some((sw, TsSource::Software))
    } else {
        None
    }
}

/// Sends probe frames on one interface and collects their transmit stamps.
pub struct Sender {
    /// The interface.
    iface: Iface,
    /// The bound `AF_PACKET` socket (protocol 0: it receives nothing but its error queue).
    fd: OwnedFd,
    /// Sent frames whose kernel stamp has not come back yet, by `(stream, seq)`.
    pending: std::collections::HashMap<(u32, u64), usize>,
    /// All records, in send order.
    records: Vec<TxRecord>,
    /// Scratch for error-queue reads.
    scratch: Vec<u8>,
    /// Whether the socket asks for transmit stamps (no for [`Sender::open_unstamped`]).
    stamping: bool,
}

impl Sender {
    /// Opens `iface` for sending, with software (and hardware, where the NIC has it)
    /// transmit stamps.
    pub fn open(iface: &str) -> Result<Sender, ProbeError> {
        let iface = Iface::lookup(iface)?;
        enable_hw_stamps(&iface.name);
        let flags =
            sys::SOF_TX_SOFTWARE | sys::SOF_SOFTWARE | sys::SOF_TX_HARDWARE | sys::SOF_RAW_HARDWARE;
        let fd = packet_socket(&iface, 0, flags)?;
        Ok(Sender {
            iface,
            fd,
            pending: Default::default(),
            records: Vec::new(),
            scratch: vec![0; 2048],
            stamping: true,
        })
    }

    /// Opens `iface` for sending without transmit stamps (a forwarder's output: no error
    /// queue to read after each frame).
    pub fn open_unstamped(iface: &str) -> Result<Sender, ProbeError> {
        let iface = Iface::lookup(iface)?;
        let fd = packet_socket(&iface, 0, 0)?;
        Ok(Sender {
            iface,
            fd,
            pending: Default::default(),
            records: Vec::new(),
            scratch: vec![0; 2048],
            stamping: false,
        })
    }

    /// The interface.
    pub fn iface(&self) -> &Iface {
        &self.iface
    }

    /// Sends one frame as it is (no record kept); returns [`now_ns`] just before the send.
    pub fn send_raw(&mut self, frame: &[u8]) -> Result<i64, ProbeError> {
        let t = now_ns();
        // SAFETY: frame is a valid buffer; the socket is bound, so send(2) needs no address.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            return Err(last_err(format!("send on {}", self.iface.name)));
        }
        if self.stamping {
            self.drain_errqueue();
        }
        Ok(t)
    }

    /// Sends frames as they are in `sendmmsg(2)` calls (no records kept). Returns how many
    /// the kernel took: fewer when its queue was full.
    pub fn send_raw_many(&mut self, frames: &mut [Vec<u8>]) -> Result<usize, ProbeError> {
        let n = self.sendmmsg_all(frames)?;
        if self.stamping {
            self.drain_errqueue();
        }
        Ok(n)
    }

    fn sendmmsg_all(&self, frames: &mut [Vec<u8>]) -> Result<usize, ProbeError> {
        let n = frames.len();
        let mut iovs: Vec<libc::iovec> = frames
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: zeroed mmsghdr is valid; each points at one iovec that outlives the call.
        let mut msgs: Vec<libc::mmsghdr> = iovs
            .iter_mut()
            .map(|iov| {
                let mut m: libc::mmsghdr = unsafe { mem::zeroed() };
                m.msg_hdr.msg_iov = iov;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        let mut done = 0;
        while done < n {
            // SAFETY: msgs[done..] are valid mmsghdrs; the socket is bound.
            let r = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    msgs[done..].as_mut_ptr(),
                    (n - done) as libc::c_uint,
                    0,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOBUFS) || e.raw_os_error() == Some(libc::EAGAIN)
                {
                    break;
                }
                return Err(ProbeError::Io {
                    context: format!("sendmmsg on {}", self.iface.name),
                    source: e,
                });
            }
            if r == 0 {
                break;
            }
            done += r as usize;
        }
        Ok(done)
    }

    /// Sends one probe frame built from `spec` with `stamp` (its `user_tx_ns` is filled in)
    /// and records it. Returns the frame's index in [`Sender::records`].
    pub fn send_frame(
        &mut self,
        spec: &FrameSpec,
        mut stamp: Stamp,
        buf: &mut Vec<u8>,
    ) -> Result<usize, ProbeError> {
        stamp.user_tx_ns = now_ns();
        spec.build_into(&stamp, buf);
        // SAFETY: as in send_raw.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            // A full queue drops the frame, as a switch port would: counted as lost.
            if e.raw_os_error() != Some(libc::ENOBUFS) && e.raw_os_error() != Some(libc::EAGAIN) {
                return Err(ProbeError::Io {
                    context: format!("send on {}", self.iface.name),
                    source: e,
                });
            }
        }
        let i = self.records.len();
        self.records.push(TxRecord {
            stream: stamp.stream,
            seq: stamp.seq,
            template: stamp.template,
            user_ns: stamp.user_tx_ns,
            kernel_ns: None,
            source: TsSource::User,
        });
        self.pending.insert((stamp.stream, stamp.seq), i);
        Ok(i)
    }

    /// Sends frames `first .. first + n` of `spec` in one `sendmmsg(2)` (one user-space
    /// time for all) and records them. Frames the kernel refuses for a full queue are
    /// recorded all the same, and counted lost.
    fn send_batch(
        &mut self,
        spec: &StreamSpec,
        first: u64,
        n: usize,
        bufs: &mut Vec<Vec<u8>>,
    ) -> Result<(), ProbeError> {
        bufs.resize_with(n.max(bufs.len()), || Vec::with_capacity(2048));
        let user_tx_ns = now_ns();
        let mut stamps = Vec::with_capacity(n);
        for (i, buf) in bufs.iter_mut().enumerate().take(n) {
            let seq = first + i as u64;
            let t = (seq % spec.templates.len() as u64) as usize;
            let stamp = Stamp {
                stream: spec.id,
                seq,
                template: t as u32,
                user_tx_ns,
            };
            spec.templates[t].build_into(&stamp, buf);
            stamps.push(stamp);
        }
        self.sendmmsg_all(&mut bufs[..n])?;
        for st in stamps {
            self.pending.insert((st.stream, st.seq), self.records.len());
            self.records.push(TxRecord {
                stream: st.stream,
                seq: st.seq,
                template: st.template,
                user_ns: st.user_tx_ns,
                kernel_ns: None,
                source: TsSource::User,
            });
        }
        Ok(())
    }

    /// Reads the transmit stamps the kernel has queued so far.
    pub fn drain_errqueue(&mut self) {
        loop {
            let r = match recv_stamped(
                &self.fd,
                &mut self.scratch,
                libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
            ) {
                Ok(r) => r,
                Err(_) => return,
            };
            let n = r.len.min(self.scratch.len());
            let Some((ns, src)) = pick(r.sw_ns, r.hw_ns) else {
                continue;
            };
            if let Some(s) = parse_stamp(&self.scratch[..n]) {
                if let Some(i) = self.pending.remove(&(s.stream, s.seq)) {
                    self.records[i].kernel_ns = Some(ns);
                    self.records[i].source = src;
                }
            }
        }
    }

    /// Sends `spec`'s stream until its count or duration is reached or `stop` is set, then
    /// waits up to 20 ms for the last transmit stamps. Returns this stream's records.
    pub fn run(
        &mut self,
        spec: &StreamSpec,
        stop: &AtomicBool,
    ) -> Result<Vec<TxRecord>, ProbeError> {
        if spec.templates.is_empty() {
            return Err(ProbeError::Invalid(
                "a stream needs at least one frame template".into(),
            ));
        }
        for t in &spec.templates {
            t.check()?;
        }
        if spec.rate_pps.is_nan() || spec.rate_pps <= 0.0 {
            return Err(ProbeError::Invalid(format!("bad rate {}", spec.rate_pps)));
        }
        // Fine-grained sleeps: the default 50 µs timer slack would double a 100 µs nap.
        // SAFETY: prctl with plain integers, for this thread only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
        let first = self.records.len();
        let interval = 1e9 / spec.rate_pps;
        let start = Instant::now();
        let end = spec.duration.map(|d| start + d);
        let limit = spec.count.unwrap_or(u64::MAX);
        let mut buf = Vec::with_capacity(2048);
        let mut bufs: Vec<Vec<u8>> = Vec::new();
        let mut seq: u64 = 0;
        while seq < limit && !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if end.is_some_and(|e| now >= e) {
                break;
            }
            let due = start + Duration::from_nanos((seq as f64 * interval) as u64);
            if now < due {
                match spec.pacing {
                    Pacing::Spin => std::hint::spin_loop(),
                    Pacing::Sleep => {
                        self.drain_errqueue();
                        let left = due - Instant::now().min(due);
                        std::thread::sleep(left.max(Duration::from_micros(100)));
                    }
                }
                continue;
            }
            let batch = match spec.pacing {
                Pacing::Spin => 1,
                // Every frame due by now, in one sendmmsg(2), at most 64.
                Pacing::Sleep => {
                    let due_now = ((now - start).as_nanos() as f64 / interval) as u64 + 1;
                    due_now.saturating_sub(seq).clamp(1, 64).min(limit - seq)
                }
            };
            if batch == 1 {
                let t = (seq % spec.templates.len() as u64) as usize;
                let stamp = Stamp {
                    stream: spec.id,
                    seq,
                    template: t as u32,
                    user_tx_ns: 0,
                };
                self.send_frame(&spec.templates[t], stamp, &mut buf)?;
            } else {
                self.send_batch(spec, seq, batch as usize, &mut bufs)?;
            }
            let before = seq;
            seq += batch;
            if seq / 64 != before / 64 {
                self.drain_errqueue();
            }
        }
        let wait_end = Instant::now() + Duration::from_millis(20);
        while !self.pending.is_empty() && Instant::now() < wait_end {
            self.drain_errqueue();
            std::thread::sleep(Duration::from_micros(500));
        }
        self.pending.clear();
        Ok(self.records[first..].to_vec())
    }

    /// Every frame this sender recorded.
    pub fn records(&self) -> &[TxRecord] {
        &self.records
    }
}

/// What a capture keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureOptions {
    /// Keep the bytes of the first this-many frames per stream and port (to check what a
    /// switch changed).
    pub keep_bytes: usize,
    /// Keep capturing this long after the senders stop (frames still in the switch).
    pub linger: Duration,
}

impl Default for CaptureOptions {
    fn default() -> CaptureOptions {
        CaptureOptions {
            keep_bytes: 4,
            linger: Duration::from_millis(100),
        }
    }
}

/// The frame as it was on the wire: `frame` with the tag the kernel stripped put back
/// after the MAC addresses.
fn with_tag(frame: &[u8], vlan: Option<(u16, u16)>) -> Vec<u8> {
    match vlan {
        Some((tpid, tci)) if frame.len() >= 12 => {
            let mut v = Vec::with_capacity(frame.len() + 4);
            v.extend_from_slice(&frame[..12]);
            v.extend_from_slice(&tpid.to_be_bytes());
            v.extend_from_slice(&tci.to_be_bytes());
            v.extend_from_slice(&frame[12..]);
            v
        }
        _ => frame.to_vec(),
    }
}

/// Captures probe frames on one or more interfaces with receive stamps. Frames this
/// machine sends on those interfaces are not captured, nor frames without the [`MAGIC`].
pub struct Capture {
    /// The interfaces, in the order of [`RxRecord::port`].
    ifaces: Vec<Iface>,
    /// One bound socket per interface.
    fds: Vec<OwnedFd>,
    /// What to keep.
    opts: CaptureOptions,
    /// Frames kept with their bytes, per (stream, port).
    kept: std::collections::HashMap<(u32, usize), usize>,
    /// Frames seen that carry no probe payload (other traffic on the ports).
    other: u64,
}

impl Capture {
    /// Opens each interface for capture, with software (and hardware) receive stamps.
    pub fn open(ifaces: &[&str], opts: CaptureOptions) -> Result<Capture, ProbeError> {
        let mut out = Capture {
            ifaces: Vec::new(),
            fds: Vec::new(),
            opts,
            kept: Default::default(),
            other: 0,
        };
        for name in ifaces {
            let iface = Iface::lookup(name)?;
            enable_hw_stamps(&iface.name);
            let flags = sys::SOF_RX_SOFTWARE
                | sys::SOF_SOFTWARE
                | sys::SOF_RX_HARDWARE
                | sys::SOF_RAW_HARDWARE;
            let fd = packet_socket(&iface, sys::ETH_P_ALL, flags)?;
            // Not our own transmissions (kernel 4.20+; sll_pkttype is checked as well).
            let _ = setsockopt_int(&fd, libc::SOL_PACKET, sys::PACKET_IGNORE_OUTGOING, 1);
            // The VLAN tag the kernel strips on receive, to put back (see `Received::vlan`).
            setsockopt_int(&fd, libc::SOL_PACKET, sys::PACKET_AUXDATA, 1).map_err(|e| {
                ProbeError::Io {
                    context: format!("PACKET_AUXDATA on {}", iface.name),
                    source: e,
                }
            })?;
            out.ifaces.push(iface);
            out.fds.push(fd);
        }
        // Frames queued before the bind finished (or sent by a previous run) are old:
        // drop them so a record is always from this run.
        let mut buf = vec![0u8; 256];
        for fd in &out.fds {
            while recv_stamped(fd, &mut buf, libc::MSG_DONTWAIT).is_ok() {}
        }
        Ok(out)
    }

    /// The capture interfaces' names, in port order.
    pub fn ports(&self) -> Vec<String> {
        self.ifaces.iter().map(|i| i.name.clone()).collect()
    }

    /// Frames seen without a probe payload.
    pub fn other_frames(&self) -> u64 {
        self.other
    }

    /// Reads what has arrived, without waiting, into `out`.
    pub fn poll_into(&mut self, out: &mut Vec<RxRecord>, buf: &mut [u8]) {
        for port in 0..self.fds.len() {
            while let Ok(r) = recv_stamped(&self.fds[port], buf, libc::MSG_DONTWAIT) {
                if r.pkttype == sys::PACKET_OUTGOING {
                    continue;
                }
                let n = r.len.min(buf.len());
                let Some(s) = parse_stamp(&buf[..n]) else {
                    self.other += 1;
                    continue;
                };
                let (rx_ns, source) = pick(r.sw_ns, r.hw_ns).unwrap_or((now_ns(), TsSource::User));
                let kept = self.kept.entry((s.stream, port)).or_insert(0);
                let bytes = (*kept < self.opts.keep_bytes).then(|| with_tag(&buf[..n], r.vlan));
                if bytes.is_some() {
                    *kept += 1;
                }
                out.push(RxRecord {
                    stream: s.stream,
                    seq: s.seq,
                    template: s.template,
                    user_tx_ns: s.user_tx_ns,
                    port,
                    rx_ns,
                    source,
                    len: r.len + if r.vlan.is_some() { 4 } else { 0 },
                    bytes,
                });
            }
        }
    }

    /// Waits up to `timeout` for any interface to have a frame.
    fn wait(&self, timeout: Duration) {
        let mut pfds: Vec<libc::pollfd> = self
            .fds
            .iter()
            .map(|f| libc::pollfd {
                fd: f.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: pfds is a valid array of pollfd.
        unsafe {
            libc::poll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                timeout.as_millis().max(1) as libc::c_int,
            )
        };
    }

    /// Captures until `stop` is set (then for [`CaptureOptions::linger`] more) or `deadline`.
    pub fn run(&mut self, stop: &AtomicBool, deadline: Option<Instant>) -> Vec<RxRecord> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 9216];
        let mut stop_at: Option<Instant> = None;
        loop {
            self.poll_into(&mut out, &mut buf);
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                break;
            }
            if stop_at.is_none() && stop.load(Ordering::Relaxed) {
                stop_at = Some(now + self.opts.linger);
            }
            if stop_at.is_some_and(|s| now >= s) {
                break;
            }
            self.wait(Duration::from_millis(5));
        }
        out
    }
}

/// What a session measured: every frame sent and every probe frame captured.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// The capture interfaces, indexed by [`RxRecord::port`].
    pub ports: Vec<String>,
    /// Frames sent, per stream in send order.
    pub tx: Vec<TxRecord>,
    /// Frames captured, in arrival order per port.
    pub rx: Vec<RxRecord>,
    /// Frames captured without a probe payload.
    pub other_frames: u64,
}

impl Records {
    /// Frames sent on `stream`.
    pub fn sent(&self, stream: u32) -> u64 {
        self.tx.iter().filter(|t| t.stream == stream).count() as u64
    }

    /// Distinct frames of `stream` captured on any port.
    pub fn received(&self, stream: u32) -> u64 {
        let mut seqs: Vec<u64> = self
            .rx
            .iter()
            .filter(|r| r.stream == stream)
            .map(|r| r.seq)
            .collect();
        seqs.sort_unstable();
        seqs.dedup();
        seqs.len() as u64
    }

    /// Frames of `stream` sent and never captured on any port.
    pub fn lost(&self, stream: u32) -> u64 {
        self.sent(stream).saturating_sub(self.received(stream))
    }

    /// The clock that stamped most transmissions (`User` if the kernel gave none).
    pub fn tx_source(&self) -> TsSource {
        let hw = self
            .tx
            .iter()
            .filter(|t| t.source == TsSource::Hardware)
            .count();
        let sw = self
            .tx
            .iter()
            .filter(|t| t.source == TsSource::Software)
            .count();
        let user = self.tx.len() - hw - sw;
        if hw >= sw && hw > user {
            TsSource::Hardware
        } else if sw >= user && sw > 0 {
            TsSource::Software
        } else {
            TsSource::User
        }
    }

    /// Fraction of transmissions with a kernel or NIC stamp.
    pub fn tx_stamped_fraction(&self) -> f64 {
        if self.tx.is_empty() {
            return 0.0;
        }
        self.tx.iter().filter(|t| t.kernel_ns.is_some()).count() as f64 / self.tx.len() as f64
    }

    /// The index of the port named `name`.
    pub fn port(&self, name: &str) -> Option<usize> {
        self.ports.iter().position(|p| p == name)
    }

    /// Each sent frame of `stream` with its first capture (on `port`, or on any port).
    pub fn joined(&self, stream: u32, port: Option<usize>) -> Vec<(TxRecord, Option<&RxRecord>)> {
        let mut first: std::collections::HashMap<u64, &RxRecord> = Default::default();
        for r in self
            .rx
            .iter()
            .filter(|r| r.stream == stream && port.is_none_or(|p| r.port == p))
        {
            first
                .entry(r.seq)
                .and_modify(|e| {
                    if r.rx_ns < e.rx_ns {
                        *e = r
                    }
                })
                .or_insert(r);
        }
        self.tx
            .iter()
            .filter(|t| t.stream == stream)
            .map(|t| (*t, first.get(&t.seq).copied()))
            .collect()
    }

    /// One-way delays (receive stamp minus transmit stamp, ns) of `stream`'s captured
    /// frames, in send order, on `port` or on any port (first arrival).
    pub fn delays_ns(&self, stream: u32, port: Option<usize>) -> Vec<i64> {
        self.joined(stream, port)
            .into_iter()
            .filter_map(|(t, r)| r.map(|r| r.rx_ns - t.tx_ns()))
            .collect()
    }

    /// The first captured frame of `stream` (on `port`, or any) built from `template`.
    pub fn first_rx_of_template(
        &self,
        stream: u32,
        template: u32,
        port: Option<usize>,
    ) -> Option<&RxRecord> {
        self.rx
            .iter()
            .filter(|r| {
                r.stream == stream && r.template == template && port.is_none_or(|p| r.port == p)
            })
            .min_by_key(|r| r.rx_ns)
    }

    /// A kept frame of `stream` captured on `port` (see [`CaptureOptions::keep_bytes`]).
    pub fn sample_bytes(&self, stream: u32, port: Option<usize>) -> Option<&[u8]> {
        self.rx
            .iter()
            .filter(|r| r.stream == stream && port.is_none_or(|p| r.port == p))
            .find_map(|r| r.bytes.as_deref())
    }
}

/// Median and spread of a set of values (ns).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spread {
    /// How many values.
    pub n: usize,
    /// Smallest.
    pub min: i64,
    /// 10th percentile.
    pub p10: i64,
    /// Median.
    pub median: i64,
    /// 90th percentile.
    pub p90: i64,
    /// 99th percentile.
    pub p99: i64,
    /// Largest.
    pub max: i64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stddev: f64,
}

impl Spread {
    /// The spread of `values` (`None` when empty). Percentiles are nearest-rank
    /// ([`crate::stats::percentile`]).
    pub fn of(values: &[i64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        let n = v.len();
        let at = |p: f64| crate::stats::percentile(&v, p).expect("values");
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        Some(Spread {
            n,
            min: v[0],
            p10: at(10.0),
            median: at(50.0),
            p90: at(90.0),
            p99: at(99.0),
            max: v[n - 1],
            mean,
            stddev: var.sqrt(),
        })
    }
}

/// Senders and a capture running on their own threads. Dropped without [`Session::wait`]
/// or [`Session::stop`], it stops them (without waiting).
pub struct Session {
    /// Set to end the senders early.
    stop: Arc<AtomicBool>,
    /// Set once the senders are done, to end the capture after its linger.
    cap_stop: Arc<AtomicBool>,
    /// The sender threads, each giving its stream's records.
    senders: Vec<JoinHandle<Result<Vec<TxRecord>, ProbeError>>>,
    /// The capture thread: its records, ports and count of other frames (taken by `wait`).
    capture: Option<JoinHandle<CaptureResult>>,
}

/// What a capture thread gives back: its records, its ports, its count of other frames.
type CaptureResult = (Vec<RxRecord>, Vec<String>, u64);

impl Session {
    /// Opens the capture on `rx_ifaces`, then starts one sender thread per
    /// `(interface, stream)`. All sockets are open (errors returned) before any frame leaves.
    pub fn start(
        streams: Vec<(String, StreamSpec)>,
        rx_ifaces: &[&str],
        opts: CaptureOptions,
    ) -> Result<Session, ProbeError> {
        let mut capture = Capture::open(rx_ifaces, opts)?;
        let mut senders = Vec::new();
        for (iface, spec) in &streams {
            senders.push((Sender::open(iface)?, spec.clone()));
        }
        let mut session = Session {
            stop: Arc::new(AtomicBool::new(false)),
            cap_stop: Arc::new(AtomicBool::new(false)),
            senders: Vec::new(),
            capture: None,
        };
        let cap_stop = session.cap_stop.clone();
        let spawn_err = |e| ProbeError::Io {
            context: "spawn a probe thread".into(),
            source: e,
        };
        session.capture = Some(
            std::thread::Builder::new()
                .name("probe-capture".into())
                .spawn(move || {
                    let rx = capture.run(&cap_stop, None);
                    (rx, capture.ports(), capture.other_frames())
                })
                .map_err(spawn_err)?,
        );
        for (mut s, spec) in senders {
            let stop = session.stop.clone();
            let h = std::thread::Builder::new()
                .name(format!("probe-send-{}", spec.id))
                .spawn(move || s.run(&spec, &stop))
                .map_err(spawn_err)?;
            session.senders.push(h);
        }
        Ok(session)
    }

    /// Whether every sender has finished (count or duration reached).
    pub fn senders_done(&self) -> bool {
        self.senders.iter().all(|h| h.is_finished())
    }

    /// Stops the senders now and returns everything measured (after the capture's linger).
    pub fn stop(self) -> Result<Records, ProbeError> {
        self.stop.store(true, Ordering::SeqCst);
        self.wait()
    }

    /// Waits for the senders to reach their count or duration, then for the capture's
    /// linger, and returns everything measured. A stream with neither a count nor a
    /// duration never ends by itself: end those with [`Session::stop`]. With no senders
    /// the capture ends after its linger.
    pub fn wait(mut self) -> Result<Records, ProbeError> {
        let mut tx = Vec::new();
        let mut err = None;
        for h in std::mem::take(&mut self.senders) {
            match h.join() {
                Ok(Ok(r)) => tx.extend(r),
                Ok(Err(e)) => err = err.or(Some(e)),
                Err(p) => err = err.or(Some(ProbeError::Panicked(panic_text(&p)))),
            }
        }
        self.cap_stop.store(true, Ordering::SeqCst);
        let (rx, ports, other_frames) = match self.capture.take().map(|c| c.join()) {
            Some(Ok(r)) => r,
            Some(Err(p)) => return Err(ProbeError::Panicked(panic_text(&p))),
            None => (Vec::new(), Vec::new(), 0),
        };
        if let Some(e) = err {
            return Err(e);
        }
        Ok(Records {
            ports,
            tx,
            rx,
            other_frames,
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.cap_stop.store(true, Ordering::SeqCst);
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FrameSpec {
        FrameSpec::udp(
            [2, 0, 0, 0, 0, 1],
            [2, 0, 0, 0, 0, 2],
            [10, 0, 0, 1].into(),
            [10, 0, 0, 2].into(),
        )
    }

    #[test]
    fn frame_layout_and_stamp_round_trip() {
        let st = Stamp {
            stream: 7,
            seq: 123_456_789_012,
            template: 3,
            user_tx_ns: 1_700_000_000_123_456_789,
        };
        let f = spec().build(&st);
        assert_eq!(f.len(), DEFAULT_FRAME_LEN);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(checksum(&f[14..34]), 0, "IPv4 header checksum verifies");
        assert_eq!(
            u16::from_be_bytes([f[16], f[17]]) as usize,
            DEFAULT_FRAME_LEN - 14
        );
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), DEFAULT_DST_PORT);
        assert_eq!(parse_stamp(&f), Some(st));
    }

    #[test]
    fn stamp_found_through_vlan_tags_and_rewrites() {
        let st = Stamp {
            stream: 1,
            seq: 9,
            template: 0,
            user_tx_ns: 5,
        };
        let mut s = spec();
        s.vlan = Some((100, 5));
        let f = s.build(&st);
        assert_eq!(&f[12..14], &[0x81, 0x00]);
        assert_eq!(u16::from_be_bytes([f[14], f[15]]), (5 << 13) | 100);
        assert_eq!(parse_stamp(&f), Some(st));
        // A second tag pushed in front (QinQ) still parses.
        let mut q = f[..12].to_vec();
        q.extend_from_slice(&[0x88, 0xa8, 0x00, 0x07]);
        q.extend_from_slice(&f[12..]);
        assert_eq!(parse_stamp(&q), Some(st));
        // Not IPv4 any more: found by scanning for the magic.
        let mut g = f.clone();
        g[16] = 0x86;
        assert_eq!(parse_stamp(&g), Some(st));
        assert_eq!(parse_stamp(&g[..40]), None);
    }

    #[test]
    fn short_frames_refused() {
        let mut s = spec();
        s.len = MIN_FRAME_LEN;
        s.check().unwrap();
        s.len = MIN_FRAME_LEN - 1;
        assert!(s.check().is_err());
        s.len = MIN_FRAME_LEN;
        s.vlan = Some((1, 0));
        assert!(s.check().is_err());
    }

    #[test]
    fn spread_percentiles() {
        let v: Vec<i64> = (1..=101).collect();
        let s = Spread::of(&v).unwrap();
        assert_eq!((s.min, s.p10, s.median, s.p90, s.max), (1, 11, 51, 91, 101));
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn records_join_and_loss() {
        let tx = |seq| TxRecord {
            stream: 1,
            seq,
            template: 0,
            user_ns: 1000 * seq as i64,
            kernel_ns: Some(1000 * seq as i64 + 10),
            source: TsSource::Software,
        };
        let rx = |seq, port, ns| RxRecord {
            stream: 1,
            seq,
            template: 0,
            user_tx_ns: 0,
            port,
            rx_ns: ns,
            source: TsSource::Software,
            len: 100,
            bytes: None,
        };
        let r = Records {
            ports: vec!["a".into(), "b".into()],
            tx: vec![tx(0), tx(1), tx(2)],
            rx: vec![rx(0, 0, 510), rx(0, 1, 400), rx(2, 1, 2600)],
            other_frames: 0,
        };
        assert_eq!(r.sent(1), 3);
        assert_eq!(r.lost(1), 1);
        assert_eq!(r.delays_ns(1, None), vec![390, 590]);
        assert_eq!(r.delays_ns(1, Some(0)), vec![500]);
        assert_eq!(r.tx_source(), TsSource::Software);
    }

    #[test]
    fn realtime_clock() {
        // CLOCK_REALTIME in ns: after 2020, and it advances.
        let a = now_ns();
        assert!(a > 1_577_836_800_000_000_000);
        std::thread::sleep(Duration::from_millis(1));
        assert!(now_ns() > a);
    }
}
