//! What a sender is asked to send ([`StreamSpec`], [`Pacing`]) and what sending and
//! capturing record of each frame ([`TxRecord`], [`RxRecord`], [`TsSource`]).

use std::time::Duration;

use super::frame::FrameSpec;
use super::DEFAULT_RATE_PPS;

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
    /// Stop after this long (`None`: no limit; a [`super::Session::stop`] or the count ends it).
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
    /// [`super::now_ns`] just before the send call.
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
    /// Which capture interface it arrived on: an index into [`super::Records::ports`].
    pub port: usize,
    /// Its receive stamp.
    pub rx_ns: i64,
    /// Which clock stamped it.
    pub source: TsSource,
    /// Its length on the wire (without FCS; a tag the kernel stripped counted).
    pub len: usize,
    /// Its bytes as on the wire (a VLAN tag the kernel's receive offload stripped is put
    /// back from `PACKET_AUXDATA`), for the first [`super::CaptureOptions::keep_bytes`] frames per stream and port.
    pub bytes: Option<Vec<u8>>,
}
