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
//!
//! ## Layout
//!
//! ```text
//! mod.rs   the payload's constants, ProbeError, the realtime clock, Linux constants
//! iface    Iface, the interfaces' timestamping capabilities
//! frame    FrameSpec (a probe frame's layout), Stamp (its payload), parse_stamp
//! stream   StreamSpec, Pacing, TxRecord, RxRecord, TsSource
//! socket   the packet sockets: bound, timestamping, receive with stamps and VLAN tag
//! sender   Sender: one stream on one interface
//! capture  Capture: the probe frames arriving on a set of interfaces
//! records  Records (sent and received joined, loss, delays), Spread
//! session  Session: senders and a capture on threads
//! ```

use std::io;

mod capture;
mod frame;
mod iface;
mod records;
mod sender;
mod session;
mod socket;
mod stream;

pub use capture::{Capture, CaptureOptions};
pub use frame::{parse_stamp, FrameSpec, Stamp};
pub use iface::{parse_mac, timestamping_caps, Iface, TsCaps};
pub use records::{Records, Spread};
pub use sender::Sender;
pub use session::Session;
pub use stream::{Pacing, RxRecord, StreamSpec, TsSource, TxRecord};

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
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn realtime_clock() {
        // CLOCK_REALTIME in ns: after 2020, and it advances.
        let a = now_ns();
        assert!(a > 1_577_836_800_000_000_000);
        std::thread::sleep(Duration::from_millis(1));
        assert!(now_ns() > a);
    }
}
