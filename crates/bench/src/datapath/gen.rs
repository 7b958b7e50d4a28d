//! The traffic generator and receiver of `pharos bench datapath`: UDP/IPv4 frames of a
//! given size sent on one port at a given rate (or as fast as the port takes them),
//! each carrying a sequence number and a send timestamp, received on another port,
//! and summed up as offered and received rates, loss and latency percentiles.
//!
//! Sizes are Ethernet frame sizes *with* the 4-byte FCS, as RFC 2544 and the paper
//! count them (64 to 1518); the frames written are 4 bytes shorter (the FCS is the
//! NIC's, and veth has none). Latency is the receiving socket's kernel timestamp
//! minus the sender's CLOCK_REALTIME stamp taken as the frame is queued, so it
//! includes the generator's own batching (at most one batch) but not the receive
//! ring's block retire delay.
//!
//! The payload after the UDP header: sequence number (u32), send time (u64, ns),
//! run tag (u32): 16 bytes, which fit the 18 bytes a 64-byte frame leaves.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use afpacket::{realtime_ns, wait_readable, Port};
use packet::checksum::checksum;

/// Ethernet (14) + IPv4 (20) + UDP (8).
const HEADERS: usize = 42;
/// Sequence number, timestamp, run tag.
const PAYLOAD: usize = 16;

/// Addresses of the generated frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addresses {
    /// The sending port's side: the frames' Ethernet source.
    pub src_mac: [u8; 6],
    /// Where the device under test should send them (the receiver, or the router's port).
    pub dst_mac: [u8; 6],
    /// The first source address; flow `k` uses this plus `k`.
    pub src_ip: [u8; 4],
    /// The receiver's address.
    pub dst_ip: [u8; 4],
    /// The UDP source port.
    pub src_port: u16,
    /// The UDP destination port.
    pub dst_port: u16,
}

/// One run of the generator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenConfig {
    /// Ethernet frame size with FCS, 64..=1518.
    pub size: usize,
    /// Frames per second; 0: as fast as the port takes them.
    pub rate_pps: u64,
    /// How long to send.
    pub duration: Duration,
    /// Distinct flows (source addresses `src_ip + first_flow + k`, `k < flows`), cycled
    /// frame by frame.
    pub flows: u32,
    /// The first flow's offset from `src_ip`.
    pub first_flow: u32,
    /// Frames queued per flush at most.
    pub batch: usize,
    /// How long the receiver keeps reading after the sender stops.
    pub drain: Duration,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            size: 64,
            rate_pps: 0,
            duration: Duration::from_secs(2),
            flows: 1,
            first_flow: 0,
            batch: 64,
            drain: Duration::from_millis(200),
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenReport {
    /// The frame size with FCS, as asked.
    pub size: usize,
    /// Frames the generator queued and the kernel took.
    pub sent: u64,
    /// Frames of this run received.
    pub received: u64,
    /// Received frames whose sequence number was below one seen before.
    pub reordered: u64,
    /// The sending time.
    pub duration: Duration,
    /// Frames sent per second of the sending time.
    pub offered_pps: f64,
    /// Frames of this run received per second of the sending time.
    pub received_pps: f64,
    /// 1 - received / sent.
    pub loss: f64,
    /// Latency percentiles in nanoseconds: 50, 90, 99, 99.9, and the maximum.
    pub latency_ns: [u64; 5],
}

impl GenReport {
    /// Received throughput in megabits per second of frames (FCS included, preamble and
    /// inter-frame gap not).
    pub fn received_mbps(&self) -> f64 {
        self.received_pps * self.size as f64 * 8.0 / 1e6
    }
}

/// A frame template: headers written once, the per-frame fields patched in place.
struct Template {
    /// The frame, headers written, room for the largest.
    buf: [u8; 1518],
    /// Its length without the FCS.
    len: usize,
    /// The first flow's source address; flow `k` writes this plus `k`.
    src_ip: u32,
}

impl Template {
    fn new(a: &Addresses, size: usize, tag: u32) -> Template {
        let len = size.clamp(64, 1518) - 4;
        let mut buf = [0u8; 1518];
        buf[0..6].copy_from_slice(&a.dst_mac);
        buf[6..12].copy_from_slice(&a.src_mac);
        buf[12..14].copy_from_slice(&[0x08, 0x00]);
        let ip_len = (len - 14) as u16;
        buf[14] = 0x45;
        buf[16..18].copy_from_slice(&ip_len.to_be_bytes());
        buf[20..22].copy_from_slice(&[0x40, 0x00]); // DF
        buf[22] = 64; // TTL
        buf[23] = 17; // UDP
        buf[26..30].copy_from_slice(&a.src_ip);
        buf[30..34].copy_from_slice(&a.dst_ip);
        buf[34..36].copy_from_slice(&a.src_port.to_be_bytes());
        buf[36..38].copy_from_slice(&a.dst_port.to_be_bytes());
        buf[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
        // UDP checksum 0: none (RFC 768), so patching needs no UDP sum.
        buf[HEADERS + 12..HEADERS + 16].copy_from_slice(&tag.to_be_bytes());
        for (i, b) in buf[HEADERS + PAYLOAD..len].iter_mut().enumerate() {
            *b = i as u8;
        }
        Template {
            buf,
            len,
            src_ip: u32::from_be_bytes(a.src_ip),
        }
    }

    /// The frame for sequence number `seq` of flow `flow`, stamped now.
    fn frame(&mut self, seq: u32, flow: u32) -> &[u8] {
        let b = &mut self.buf;
        b[26..30].copy_from_slice(&self.src_ip.wrapping_add(flow).to_be_bytes());
        b[24..26].copy_from_slice(&[0, 0]);
        let sum = checksum(&b[14..34]);
        b[24..26].copy_from_slice(&sum.to_be_bytes());
        b[HEADERS..HEADERS + 4].copy_from_slice(&seq.to_be_bytes());
        b[HEADERS + 4..HEADERS + 12].copy_from_slice(&realtime_ns().to_be_bytes());
        &self.buf[..self.len]
    }
}

/// One generator frame of `size` (with FCS) from `addrs`, outside any run (its run
/// tag is 0, so no receiver counts it): to check a path before measuring it.
pub fn probe_frame(addrs: &Addresses, size: usize) -> Vec<u8> {
    Template::new(addrs, size, 0).frame(0, 0).to_vec()
}

/// Latency histogram: 16 linear sub-buckets per power of two (relative error under
/// 1/16), fixed size, no allocation per sample.
pub struct Histogram {
    /// Samples per bucket: 16 sub-buckets for each power of two.
    counts: [u64; 64 * 16],
    /// Samples recorded: the ranks run from 1 to this.
    total: u64,
    /// The largest sample, reported exactly at the top rank.
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: [0; 64 * 16],
            total: 0,
            max: 0,
        }
    }
}

impl Histogram {
    fn index(v: u64) -> usize {
        if v < 16 {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros() as usize;
        let sub = ((v >> (msb - 4)) & 15) as usize;
        (msb - 3) * 16 + sub
    }

    /// The smallest value of bucket `i` (the reported value: errs low by < 1/16).
    fn value(i: usize) -> u64 {
        if i < 16 {
            return i as u64;
        }
        let msb = i / 16 + 3;
        let sub = (i % 16) as u64;
        (16 + sub) << (msb - 4)
    }

    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
        self.max = self.max.max(v);
    }

    /// The `p`th percentile (0..=100) by nearest rank ([`crate::stats::nearest_rank`]),
    /// to the resolution of the buckets: the smallest value of the bucket holding the
    /// sample of that rank (the largest sample itself at the top rank); 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = crate::stats::nearest_rank(p, self.total);
        if rank == self.total {
            return self.max;
        }
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i).min(self.max);
            }
        }
        self.max
    }
}

/// What the receiver counted.
#[derive(Default)]
struct RxTally {
    /// Frames of the stream received.
    received: u64,
    /// Of those, frames whose sequence number was below one seen before.
    reordered: u64,
    /// Their latencies.
    histogram: Histogram,
}

/// Sends on `tx` and receives on `rx` (two threads) for one run.
pub fn run(tx: &mut Port, rx: &mut Port, addrs: &Addresses, cfg: &GenConfig) -> GenReport {
    let stream = Stream {
        port: 0,
        addrs: *addrs,
        cfg: *cfg,
    };
    run_streams(&mut [tx], rx, &[stream])[0]
}

/// One stream of [`run_streams`]: sent on `txs[port]`, from `addrs`, as `cfg` says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stream {
    /// The index, in the generator's ports, of the port it is sent on.
    pub port: usize,
    /// Its frames' addresses.
    pub addrs: Addresses,
    /// Its rate and flows (size, duration, batch and drain: the first stream's).
    pub cfg: GenConfig,
}

/// Sends several streams at once, each on its port of `txs` (one thread, each stream
/// on its own schedule, merged frame by frame in due-time order), and receives them on
/// `rx`, each counted apart by its own run tag: the paper's fairness test. The frame
/// size, duration, batch and drain are the first stream's; each stream has its own
/// rate and flows (on one port, give them different `first_flow`s to tell them apart
/// on the wire too). One report per stream.
///
/// # Panics
///
/// If a stream's port is not in `txs`.
pub fn run_streams(txs: &mut [&mut Port], rx: &mut Port, streams: &[Stream]) -> Vec<GenReport> {
    let Some(first) = streams.first().map(|s| s.cfg) else {
        return Vec::new();
    };
    let first = &first;
    assert!(
        streams.iter().all(|s| s.port < txs.len()),
        "a stream's port is not among the generator's"
    );
    let base = (realtime_ns() as u32) | 1;
    // Odd, distinct, never 0 (a probe's tag).
    let tags: Vec<u32> = (0..streams.len() as u32)
        .map(|i| base.wrapping_add(2 * i) | 1)
        .collect();
    let stop = AtomicBool::new(false);
    let (sent, duration, tallies) = std::thread::scope(|s| {
        let receiver = s.spawn(|| receive(rx, &tags, &stop));
        let (sent, duration) = send(txs, first, streams, &tags);
        std::thread::sleep(first.drain);
        stop.store(true, Ordering::Relaxed);
        (sent, duration, receiver.join().expect("receiver thread"))
    });
    let secs = duration.as_secs_f64().max(1e-9);
    sent.iter()
        .zip(&tallies)
        .map(|(&sent, tally)| {
            let h = &tally.histogram;
            GenReport {
                size: first.size,
                sent,
                received: tally.received,
                reordered: tally.reordered,
                duration,
                offered_pps: sent as f64 / secs,
                received_pps: tally.received as f64 / secs,
                loss: if sent == 0 {
                    0.0
                } else {
                    1.0 - tally.received as f64 / sent as f64
                },
                latency_ns: [
                    h.percentile(50.0),
                    h.percentile(90.0),
                    h.percentile(99.0),
                    h.percentile(99.9),
                    h.max,
                ],
            }
        })
        .collect()
}

/// One stream's sending state.
struct Sending {
    /// The stream's frame, patched per frame.
    template: Template,
    /// Frames sent: the next one's sequence number, and when it is due.
    sent: u64,
    /// The next frame's flow, cycling through the stream's flows.
    flow: u32,
}

/// When frame number `n` of a stream of `rate_pps` is due, in ns from the start (rate
/// 0: at once).
fn due_ns(n: u64, rate_pps: u64) -> u64 {
    n.saturating_mul(1_000_000_000)
        .checked_div(rate_pps)
        .unwrap_or(0)
}

/// The sender: every frame of every stream has its due time (rate 0: at once); frames
/// go out in due-time order across streams, up to `common.batch` at a time, as soon as
/// they are due (or, at rate 0, as fast as the ring drains). Merging by due time keeps
/// each stream as smooth as it would be alone: a stream sent in bursts beside a smooth
/// one would lose more of its frames in a drop-tail queue for being bursty, not for
/// being larger. Returns the frames sent per stream and the sending time.
fn send(
    txs: &mut [&mut Port],
    common: &GenConfig,
    streams: &[Stream],
    tags: &[u32],
) -> (Vec<u64>, Duration) {
    let mut state: Vec<Sending> = streams
        .iter()
        .zip(tags)
        .map(|(stream, &tag)| Sending {
            template: Template::new(&stream.addrs, common.size, tag),
            sent: 0,
            flow: 0,
        })
        .collect();
    let batch = common.batch.max(1);
    let start = Instant::now();
    loop {
        let elapsed = start.elapsed();
        if elapsed >= common.duration {
            break;
        }
        let now_ns = elapsed.as_nanos() as u64;
        let mut queued = 0;
        // The next frame due over all streams (ties: the stream that sent least).
        let next = |state: &[Sending]| {
            streams
                .iter()
                .zip(state)
                .enumerate()
                .min_by_key(|(_, (s, st))| (due_ns(st.sent, s.cfg.rate_pps), st.sent))
                .map(|(i, (s, st))| (i, due_ns(st.sent, s.cfg.rate_pps)))
        };
        while queued < batch {
            let Some((i, due)) = next(&state) else { break };
            if due > now_ns {
                break;
            }
            let (cfg, st) = (&streams[i].cfg, &mut state[i]);
            let tx = &mut *txs[streams[i].port];
            let frame = st
                .template
                .frame(st.sent as u32, cfg.first_flow.wrapping_add(st.flow));
            if tx.send(frame) {
                queued += 1;
                st.sent += 1;
                st.flow = if st.flow + 1 >= cfg.flows.max(1) {
                    0
                } else {
                    st.flow + 1
                };
            } else {
                // Ring full: hand the kernel what is queued, retry.
                let _ = tx.flush();
                std::hint::spin_loop();
            }
        }
        if queued > 0 {
            for tx in txs.iter_mut() {
                if tx.tx_pending() > 0 {
                    let _ = tx.flush();
                }
            }
            continue;
        }
        // Nothing due yet: wait (sleep when the next frame is far away).
        let Some((_, due)) = next(&state) else { break };
        let wait = Duration::from_nanos(due).saturating_sub(start.elapsed());
        if wait > Duration::from_micros(200) {
            std::thread::sleep(wait - Duration::from_micros(100));
        } else {
            std::hint::spin_loop();
        }
    }
    let duration = start.elapsed();
    for tx in txs.iter_mut() {
        while tx.tx_pending() > 0 && start.elapsed() < duration + Duration::from_millis(100) {
            let _ = tx.flush();
        }
    }
    (state.iter().map(|s| s.sent).collect(), duration)
}

/// The receiver: reads until `stop`, counting the frames of each run tag in `tags`.
fn receive(rx: &mut Port, tags: &[u32], stop: &AtomicBool) -> Vec<RxTally> {
    let mut tallies: Vec<RxTally> = tags.iter().map(|_| RxTally::default()).collect();
    let mut max_seq: Vec<Option<u32>> = vec![None; tags.len()];
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        if !rx.rx_ready() {
            if stopping {
                break;
            }
            wait_readable(rx.as_raw_fd(), 2);
        }
        rx.recv_batch_meta(512, |f, meta| {
            if f.len() < HEADERS + PAYLOAD || f[12..14] != [0x08, 0x00] || f[23] != 17 {
                return;
            }
            let tag = u32::from_be_bytes(f[HEADERS + 12..HEADERS + 16].try_into().unwrap());
            let Some(i) = tags.iter().position(|&t| t == tag) else {
                return;
            };
            let t = &mut tallies[i];
            let seq = u32::from_be_bytes(f[HEADERS..HEADERS + 4].try_into().unwrap());
            let sent_at = u64::from_be_bytes(f[HEADERS + 4..HEADERS + 12].try_into().unwrap());
            t.received += 1;
            match max_seq[i] {
                Some(m) if seq < m => t.reordered += 1,
                _ => max_seq[i] = Some(seq),
            }
            // The kernel's stamp, unless it is not a realtime one (then now).
            let at = if meta.timestamp_ns >= sent_at && meta.timestamp_ns - sent_at < 10_000_000_000
            {
                meta.timestamp_ns
            } else {
                realtime_ns()
            };
            t.histogram.record(at.saturating_sub(sent_at));
        });
    }
    tallies
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_are_within_a_sixteenth() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        for (p, want) in [(50.0, 500_000.0), (90.0, 900_000.0), (99.0, 990_000.0)] {
            let got = h.percentile(p) as f64;
            assert!(
                (got - want).abs() / want < 1.0 / 16.0,
                "p{p}: {got} vs {want}"
            );
        }
        assert_eq!(h.percentile(100.0), 1_000_000);
        assert_eq!(Histogram::default().percentile(50.0), 0);
    }

    #[test]
    fn frames_have_the_size_asked_and_a_valid_ip_checksum() {
        let a = Addresses {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_ip: [10, 0, 1, 2],
            dst_ip: [10, 0, 2, 2],
            src_port: 1000,
            dst_port: 2000,
        };
        for size in [64, 128, 1518] {
            let mut t = Template::new(&a, size, 7);
            let f = t.frame(5, 3).to_vec();
            assert_eq!(f.len(), size - 4);
            assert_eq!(checksum(&f[14..34]), 0, "a valid header sums to 0");
            assert_eq!(&f[26..30], &[10, 0, 1, 5]);
            let key = packet::FlowKey::extract(&f).unwrap();
            assert_eq!(key.error, None);
            assert_eq!(key.tp_dst(), Some(2000));
        }
    }
}
