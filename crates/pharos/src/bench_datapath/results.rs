//! What one device under test measured: the points of each test, as printed and as
//! JSON.

use bench::datapath::gen::GenReport;
use serde::Serialize;

/// One device under test's results.
#[derive(Debug, Serialize)]
pub(super) struct DutResult {
    /// Which device: pharos, ovs, bridge or ip.
    pub(super) dut: String,
    /// The core the device under test ran on (its processes pinned, its interfaces'
    /// receive processing steered there), and the generator's; `None`: one core shared.
    pub(super) dut_cpu: Option<usize>,
    /// The generator's core; `None` as for `dut_cpu`.
    pub(super) gen_cpu: Option<usize>,
    /// Throughput of one flow, as fast as the generator sends, per frame size.
    pub(super) sizes: Vec<Point>,
    /// 64-byte frames at fractions of the capacity measured in `sizes`.
    pub(super) loads: Vec<Point>,
    /// 64-byte throughput with N exact flows and N flows of traffic (switches only).
    pub(super) tables: Vec<TablePoint>,
    /// 64-byte throughput against the share of traffic matching exact rules, the rest
    /// matching wildcard ones (switches only).
    pub(super) mix: Vec<MixPoint>,
    /// Two streams on one port, one at 0.1 of the capacity, one overloading.
    pub(super) fairness: Vec<FairPoint>,
}

#[derive(Debug, Serialize)]
pub(super) struct MixPoint {
    /// The share of frames that match an exact rule.
    pub(super) exact_share: f64,
    /// Exact rules installed for that share.
    pub(super) exact_rules: u32,
    /// Wildcard rules under them, always the same.
    pub(super) wildcard_rules: u32,
    /// What was measured.
    pub(super) point: Point,
    /// 1e9 / received pps: the device's core time per frame, when the generator
    /// saturates it (loss above 0).
    pub(super) ns_per_frame: f64,
}

#[derive(Debug, Serialize)]
pub(super) struct FairPoint {
    /// Input ports: 1, both streams on the same port (the paper's first scenario); 2,
    /// each on its own (the second).
    pub(super) inputs: u8,
    /// The overloading stream's load, as a fraction of the capacity.
    pub(super) load: f64,
    /// The steady stream (0.1 of the capacity).
    pub(super) steady: Point,
    /// The overloading one.
    pub(super) heavy: Point,
    /// Loss probability of the steady stream minus the heavy one's (positive: the heavy
    /// stream got more than its share).
    pub(super) loss_difference: f64,
}

#[derive(Debug, Serialize)]
pub(super) struct TablePoint {
    /// Exact flows in the table, and distinct flows in the traffic.
    pub(super) flows: u32,
    /// What was measured.
    pub(super) point: Point,
    /// Received pps against the smallest table's.
    pub(super) of_smallest: f64,
}

#[derive(Debug, Serialize)]
pub(super) struct Point {
    /// Frame size with FCS.
    pub(super) size: usize,
    /// The offered load as a fraction of the capacity (`None`: as fast as possible).
    pub(super) load: Option<f64>,
    /// Frames per second the generator sent.
    pub(super) offered_pps: f64,
    /// Frames per second that came out.
    pub(super) received_pps: f64,
    /// The same in megabits per second (FCS included).
    pub(super) received_mbps: f64,
    /// The share of frames sent that did not come out.
    pub(super) loss: f64,
    /// Latency in µs: p50, p90, p99, p99.9, max.
    pub(super) latency_us: [f64; 5],
}

impl Point {
    pub(super) fn of(r: &GenReport, load: Option<f64>) -> Point {
        Point {
            size: r.size,
            load,
            offered_pps: r.offered_pps,
            received_pps: r.received_pps,
            received_mbps: r.received_mbps(),
            loss: r.loss,
            latency_us: r.latency_ns.map(|n| n as f64 / 1e3),
        }
    }
}
