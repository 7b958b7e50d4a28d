//! Counters, per switch and in total.
//!
//! Each worker owns its switches' counters ([`SwitchCounters`], plain integers bumped on
//! the message path with no lock and no allocation) and, every publish interval, builds a
//! [`WorkerSnapshot`] it swaps (as an `Arc`) into an `Arc<Mutex<_>>` that readers share. The admission
//! thread does the same for accepts, refusals and handshake failures. [`CountersSnapshot`]
//! merges them all; it is `serde::Serialize` for the REST API, and the admission thread
//! prints a summary of it at info level every `counters_interval`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::info::Dpid;
use crate::sync::lock;

/// Message type slots per version: every 1.0 and 1.3 type fits (1.3 stops at 29);
/// higher type bytes share the last slot.
pub const TYPE_SLOTS: usize = 32;

/// Messages counted by version and type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeCounts {
    /// `[version index][type byte]`: index 0 is 1.0, 1 is 1.3 (the only versions that
    /// reach a worker); the type byte is clamped to the last slot.
    counts: [[u64; TYPE_SLOTS]; 2],
}

impl Default for TypeCounts {
    fn default() -> Self {
        TypeCounts {
            counts: [[0; TYPE_SLOTS]; 2],
        }
    }
}

impl TypeCounts {
    /// Counts one message with this wire version and type byte.
    #[inline]
    pub fn record(&mut self, version: u8, msg_type: u8) {
        let v = usize::from(version != 0x01);
        let t = (msg_type as usize).min(TYPE_SLOTS - 1);
        self.counts[v][t] += 1;
    }

    /// The count for a wire version and type byte.
    pub fn get(&self, version: u8, msg_type: u8) -> u64 {
        let v = usize::from(version != 0x01);
        self.counts[v][(msg_type as usize).min(TYPE_SLOTS - 1)]
    }

    /// Every message counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }

    /// Adds another set of counts to this one.
    pub fn add(&mut self, other: &TypeCounts) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            for (x, y) in a.iter_mut().zip(b.iter()) {
                *x += y;
            }
        }
    }

    /// Non-zero counts keyed `"1.3 PACKET_IN"` (built at report time only).
    pub fn to_map(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (vi, row) in self.counts.iter().enumerate() {
            for (t, &n) in row.iter().enumerate() {
                if n == 0 {
                    continue;
                }
                let name = if vi == 0 {
                    openflow::of10::MsgType::from_raw(t as u8).name()
                } else {
                    openflow::of13::MsgType::from_raw(t as u8).name()
                };
                let name = match name {
                    Some(n) => n.to_string(),
                    None => format!("TYPE_{t}"),
                };
                let version = if vi == 0 { "1.0" } else { "1.3" };
                m.insert(format!("{version} {name}"), n);
            }
        }
        m
    }
}

/// Counts keyed by a static reason (disconnects, handshake failures, refusals). A short
/// vector: a handful of reasons, found by a linear scan, allocation only the first time
/// a reason is seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReasonCounts {
    /// `(reason, count)` in first-seen order.
    counts: Vec<(&'static str, u64)>,
}

impl ReasonCounts {
    /// Counts one event with this reason.
    pub fn add(&mut self, reason: &'static str) {
        self.add_n(reason, 1);
    }

    /// Counts `n` events with this reason.
    pub fn add_n(&mut self, reason: &'static str, n: u64) {
        match self.counts.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, c)) => *c += n,
            None => self.counts.push((reason, n)),
        }
    }

    /// The count for a reason.
    pub fn get(&self, reason: &str) -> u64 {
        self.counts
            .iter()
            .find(|(r, _)| *r == reason)
            .map_or(0, |(_, c)| *c)
    }

    /// Every event counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, c)| c).sum()
    }

    /// As a sorted map.
    pub fn to_map(&self) -> BTreeMap<String, u64> {
        self.counts
            .iter()
            .map(|(r, c)| (r.to_string(), *c))
            .collect()
    }
}

/// One switch's counters, owned by its connection on its worker.
#[derive(Debug, Clone, Default)]
pub struct SwitchCounters {
    /// Messages from the switch, by type.
    pub msgs_in: TypeCounts,
    /// Messages to the switch, by type (counted where made, when appended to the queue).
    pub msgs_out: TypeCounts,
    /// PACKET_INs received (also in `msgs_in`; kept apart for the rate).
    pub packet_ins: u64,
    /// Outgoing messages discarded because the connection closed before they were
    /// written (silent loss is counted, not hidden).
    pub drops: u64,
    /// Bytes read from the switch.
    pub bytes_in: u64,
    /// Bytes written to the switch.
    pub bytes_out: u64,
    /// read(2) calls that returned bytes: with `packet_ins`, how well reads are
    /// batched.
    pub reads: u64,
    /// write(2) calls that took bytes: how well answers are batched (FLUSH_BATCH).
    pub writes: u64,
    /// Times the switch was paused (not read) because its queue passed the high-water
    /// mark: how often backpressure held it back.
    pub pauses: u64,
    /// Time spent paused, finished pauses only (see `Conn::paused_total`).
    pub paused_for: Duration,
    /// Messages from elsewhere dropped because the queue was at the hard cap (also
    /// in `drops`): loss under overload, counted apart so it can be told from loss at
    /// disconnect.
    pub overflow_drops: u64,
    /// The most bytes ever queued for the switch at a flush: proof that backpressure
    /// bounds the queue.
    pub max_queued: usize,
    /// `packet_ins` at the previous publish, for the rate.
    pub last_packet_ins: u64,
    /// When the previous publish happened, for the rate.
    pub last_publish: Option<Instant>,
}

/// One switch in a snapshot.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SwitchSnapshot {
    /// The datapath id, as 16 hex digits (JSON numbers lose 64-bit precision).
    pub dpid: String,
    /// The peer's address.
    pub peer: SocketAddr,
    /// The negotiated version.
    pub version: openflow::Version,
    /// The worker serving the switch.
    pub worker: usize,
    /// Messages in, by `"version TYPE"`.
    pub msgs_in: BTreeMap<String, u64>,
    /// Messages out, by `"version TYPE"`.
    pub msgs_out: BTreeMap<String, u64>,
    /// PACKET_INs received.
    pub packet_ins: u64,
    /// PACKET_INs per second over the last publish interval.
    pub packet_ins_per_sec: f64,
    /// Outgoing messages lost.
    pub drops: u64,
    /// Bytes read.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// read(2) calls that returned bytes.
    pub reads: u64,
    /// write(2) calls that took bytes.
    pub writes: u64,
    /// Bytes queued now, not yet taken by the kernel.
    pub queued_bytes: usize,
    /// The most bytes ever queued at a flush.
    pub max_queued_bytes: usize,
    /// Whether the switch is paused now (not read: its queue is above the high-water
    /// mark).
    pub paused: bool,
    /// Times it was paused.
    pub pauses: u64,
    /// Milliseconds spent paused, the current pause included.
    pub paused_ms: u64,
    /// Messages from elsewhere dropped at the hard cap (also in `drops`).
    pub overflow_drops: u64,
}

/// What one worker publishes.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WorkerSnapshot {
    /// Its switches.
    pub switches: Vec<SwitchSnapshot>,
    /// Messages in from every switch it ever served (closed ones included).
    #[serde(skip)]
    pub msgs_in: TypeCounts,
    /// Messages out to every switch it ever served.
    #[serde(skip)]
    pub msgs_out: TypeCounts,
    /// PACKET_INs from every switch it ever served.
    pub packet_ins: u64,
    /// Outgoing messages lost, every switch it ever served.
    pub drops: u64,
    /// Times its poll returned (wake-ups): low when idle, as nothing busy-waits.
    pub poll_turns: u64,
    /// Pauses (backpressure) of every switch it ever served.
    pub pauses: u64,
    /// Milliseconds paused, every switch it ever served.
    pub paused_ms: u64,
    /// Disconnects by reason.
    #[serde(skip)]
    pub disconnects: ReasonCounts,
    /// Frames that closed a connection, by reason (a subset of the disconnects).
    #[serde(skip)]
    pub bad_frames: ReasonCounts,
}

/// What the admission thread publishes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdmissionSnapshot {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused at accept, by reason (caps).
    pub refused: ReasonCounts,
    /// Handshakes that failed, by reason.
    pub handshake_failures: ReasonCounts,
    /// Handshakes completed (switches handed to a worker).
    pub established: u64,
    /// Handshakes in progress right now.
    pub pending: usize,
    /// Connections waiting for a handshake slot right now.
    pub waiting: usize,
    /// Accept errors (EMFILE and friends) that caused a backoff.
    pub accept_errors: u64,
}

/// The shared, periodically replaced snapshots everyone reads.
#[derive(Debug, Default)]
pub struct Published {
    /// One per worker, replaced by that worker every publish interval. An `Arc` inside
    /// the lock, so a reader holds the lock only to clone the `Arc` and a worker
    /// publishing never waits for a reader copying a thousand switches.
    pub workers: Vec<Arc<Mutex<Arc<WorkerSnapshot>>>>,
    /// Replaced by the admission thread every publish interval.
    pub admission: Arc<Mutex<AdmissionSnapshot>>,
}

impl Published {
    /// Empty snapshots for `workers` workers.
    pub fn new(workers: usize) -> Published {
        Published {
            workers: (0..workers).map(|_| Arc::default()).collect(),
            admission: Arc::default(),
        }
    }

    /// Merges the latest snapshots.
    pub fn snapshot(&self) -> CountersSnapshot {
        let mut msgs_in = TypeCounts::default();
        let mut msgs_out = TypeCounts::default();
        let mut disconnects = ReasonCounts::default();
        let mut bad_frames = ReasonCounts::default();
        let mut switches = Vec::new();
        let mut packet_ins = 0;
        let mut drops = 0;
        let mut poll_turns = 0;
        let mut pauses = 0;
        let mut paused_ms = 0;
        for w in &self.workers {
            let w = Arc::clone(&lock(w));
            msgs_in.add(&w.msgs_in);
            msgs_out.add(&w.msgs_out);
            for (r, c) in &w.disconnects.counts {
                disconnects.add_n(r, *c);
            }
            for (r, c) in &w.bad_frames.counts {
                bad_frames.add_n(r, *c);
            }
            packet_ins += w.packet_ins;
            drops += w.drops;
            poll_turns += w.poll_turns;
            pauses += w.pauses;
            paused_ms += w.paused_ms;
            switches.extend(w.switches.iter().cloned());
        }
        switches.sort_by(|a, b| a.dpid.cmp(&b.dpid));
        let a = lock(&self.admission).clone();
        CountersSnapshot {
            total: TotalSnapshot {
                connected_switches: switches.len(),
                msgs_in: msgs_in.to_map(),
                msgs_out: msgs_out.to_map(),
                packet_ins,
                packet_ins_per_sec: switches.iter().map(|s| s.packet_ins_per_sec).sum(),
                drops,
                poll_turns,
                paused_switches: switches.iter().filter(|s| s.paused).count(),
                pauses,
                paused_ms,
                disconnects: disconnects.to_map(),
                bad_frames: bad_frames.to_map(),
                accepted: a.accepted,
                refused: a.refused.to_map(),
                handshake_failures: a.handshake_failures.to_map(),
                established: a.established,
                pending_handshakes: a.pending,
                waiting_handshakes: a.waiting,
                accept_errors: a.accept_errors,
            },
            switches,
        }
    }
}

impl Published {
    /// One switch's latest snapshot (`None`: not connected, or connected since its
    /// worker last published), without copying the others.
    pub fn switch(&self, dpid: Dpid) -> Option<SwitchSnapshot> {
        let key = dpid.to_string();
        self.workers.iter().find_map(|w| {
            let w = Arc::clone(&lock(w));
            w.switches.iter().find(|s| s.dpid == key).cloned()
        })
    }
}

/// Totals over every switch and the admission tier.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TotalSnapshot {
    /// Switches connected right now.
    pub connected_switches: usize,
    /// Messages in, by `"version TYPE"`.
    pub msgs_in: BTreeMap<String, u64>,
    /// Messages out, by `"version TYPE"`.
    pub msgs_out: BTreeMap<String, u64>,
    /// PACKET_INs received.
    pub packet_ins: u64,
    /// PACKET_INs per second, summed over the connected switches.
    pub packet_ins_per_sec: f64,
    /// Outgoing messages lost.
    pub drops: u64,
    /// Workers' poll turns (wake-ups), summed.
    pub poll_turns: u64,
    /// Switches paused right now (backpressure).
    pub paused_switches: usize,
    /// Pauses so far, every switch.
    pub pauses: u64,
    /// Milliseconds paused so far, every switch.
    pub paused_ms: u64,
    /// Disconnects of established switches, by reason.
    pub disconnects: BTreeMap<String, u64>,
    /// Connections closed for a bad frame, by reason.
    pub bad_frames: BTreeMap<String, u64>,
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused at accept, by reason.
    pub refused: BTreeMap<String, u64>,
    /// Handshake failures, by reason.
    pub handshake_failures: BTreeMap<String, u64>,
    /// Handshakes completed.
    pub established: u64,
    /// Handshakes in progress.
    pub pending_handshakes: usize,
    /// Connections waiting for a handshake slot.
    pub waiting_handshakes: usize,
    /// Accept errors that caused a backoff.
    pub accept_errors: u64,
}

/// Every counter: per switch and in total. Taken by `Handle::counters()`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct CountersSnapshot {
    /// Totals.
    pub total: TotalSnapshot,
    /// Connected switches, by dpid.
    pub switches: Vec<SwitchSnapshot>,
}

impl CountersSnapshot {
    /// A total message count by `"version TYPE"` key (0 when absent).
    pub fn msgs_in(&self, key: &str) -> u64 {
        self.total.msgs_in.get(key).copied().unwrap_or(0)
    }
}

/// The dispatcher's counters, over every switch (atomics: every worker adds to them).
#[derive(Debug, Default)]
pub struct PipelineCounters {
    /// Shared with the apps' guards, which count their subscriptions' panics.
    pub(crate) handler_panics: Arc<AtomicU64>,
    /// Messages apps tried to send that could not be encoded for their switch.
    pub(crate) encode_errors: AtomicU64,
    /// Messages from switches the dispatcher could not decode (dropped).
    pub(crate) decode_errors: AtomicU64,
    /// Messages no handler was registered for.
    pub(crate) unhandled: AtomicU64,
    /// Replies delivered to requesters (a multipart reply counts once).
    pub(crate) replies: AtomicU64,
    /// Requests that timed out.
    pub(crate) request_timeouts: AtomicU64,
}

/// A copy of [`PipelineCounters`], for logs and the REST API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PipelineCountersSnapshot {
    /// Handler panics caught (each quarantines its app).
    pub handler_panics: u64,
    /// Messages apps tried to send that could not be encoded for their switch.
    pub encode_errors: u64,
    /// Messages from switches the pipeline could not decode (dropped).
    pub decode_errors: u64,
    /// Messages no handler was registered for.
    pub unhandled: u64,
    /// Replies delivered to requesters (a multipart reply counts once).
    pub replies: u64,
    /// Requests that timed out.
    pub request_timeouts: u64,
}

impl PipelineCounters {
    /// Counts a message an app tried to send that could not be encoded.
    pub(crate) fn count_encode_error(&self) {
        self.encode_errors.fetch_add(1, Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> PipelineCountersSnapshot {
        PipelineCountersSnapshot {
            handler_panics: self.handler_panics.load(Relaxed),
            encode_errors: self.encode_errors.load(Relaxed),
            decode_errors: self.decode_errors.load(Relaxed),
            unhandled: self.unhandled.load(Relaxed),
            replies: self.replies.load(Relaxed),
            request_timeouts: self.request_timeouts.load(Relaxed),
        }
    }
}

/// A count an app publishes ([`crate::app::Builder::counter`]): cheap to clone (clones
/// count together), added to from any thread with relaxed atomics. For events, not for
/// every packet of a busy switch: every worker adds to the same cache line.
#[derive(Debug, Clone, Default)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    /// A counter at 0.
    pub fn new() -> Counter {
        Counter::default()
    }

    /// Adds one.
    #[inline]
    pub fn inc(&self) {
        self.add(1)
    }

    /// Adds `n`.
    #[inline]
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }

    /// The count now.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A counter an app published, as the core lists it.
#[derive(Debug, Clone)]
pub(crate) struct AppCounter {
    /// Its name, as the app gave it.
    pub(crate) name: &'static str,
    /// What it counts.
    pub(crate) help: &'static str,
    /// The count.
    pub(crate) counter: Counter,
}

/// A counter an app publishes, read now ([`crate::host::AppHost::app_counters`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppCounterValue {
    /// The app.
    pub app: &'static str,
    /// The counter's name, as the app gave it.
    pub name: &'static str,
    /// What it counts, in the app's words.
    pub help: &'static str,
    /// Its value.
    pub value: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_counts_by_version_and_type() {
        let mut t = TypeCounts::default();
        t.record(0x04, 10);
        t.record(0x04, 10);
        t.record(0x01, 10);
        t.record(0x04, 200);
        assert_eq!(t.get(0x04, 10), 2);
        assert_eq!(t.get(0x01, 10), 1);
        assert_eq!(t.total(), 4);
        let m = t.to_map();
        assert_eq!(m["1.3 PACKET_IN"], 2);
        assert_eq!(m["1.0 PACKET_IN"], 1);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn reason_counts() {
        let mut r = ReasonCounts::default();
        r.add("timeout");
        r.add("timeout");
        r.add("garbage");
        assert_eq!(r.get("timeout"), 2);
        assert_eq!(r.total(), 3);
        assert_eq!(r.to_map().len(), 2);
    }

    #[test]
    fn snapshot_merges_and_serializes() {
        let p = Published::new(2);
        {
            let mut w = WorkerSnapshot {
                packet_ins: 5,
                ..WorkerSnapshot::default()
            };
            w.msgs_in.record(1, 10);
            w.disconnects.add("dead_peer");
            w.switches.push(SwitchSnapshot {
                dpid: "00:00:00:00:00:00:00:0a".into(),
                peer: SocketAddr::from(([127, 0, 0, 1], 1)),
                version: openflow::Version::V1_3,
                worker: 1,
                msgs_in: BTreeMap::new(),
                msgs_out: BTreeMap::new(),
                packet_ins: 5,
                packet_ins_per_sec: 0.0,
                drops: 0,
                bytes_in: 0,
                bytes_out: 0,
                reads: 0,
                writes: 0,
                queued_bytes: 0,
                max_queued_bytes: 0,
                paused: false,
                pauses: 0,
                paused_ms: 0,
                overflow_drops: 0,
            });
            *lock(&p.workers[1]) = Arc::new(w);
        }
        lock(&p.admission).handshake_failures.add("timeout");
        let s = p.snapshot();
        assert_eq!(s.total.packet_ins, 5);
        assert_eq!(s.msgs_in("1.0 PACKET_IN"), 1);
        assert_eq!(s.total.disconnects["dead_peer"], 1);
        assert_eq!(s.total.handshake_failures["timeout"], 1);
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"handshake_failures\":{\"timeout\":1}"));
        // One switch, found without merging.
        assert_eq!(p.switch(openflow::Dpid(0xa)).map(|s| s.worker), Some(1));
        assert_eq!(p.switch(openflow::Dpid(0xb)), None);
    }
}
