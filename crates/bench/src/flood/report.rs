//! What a flood did: [`FloodReport`], and why it ended.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use serde::Serialize;

use super::*;

/// Why the flood ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloodEnd {
    /// `duration` elapsed.
    Duration,
    /// The stop flag was set.
    Stopped,
}

/// What a flood did. All counts are connections unless named otherwise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FloodReport {
    /// The address flooded.
    pub addr: SocketAddr,
    /// The style flooded with.
    pub style: FloodStyle,
    /// The rate asked for, connections per second.
    pub rate_requested: u32,
    /// `attempted / elapsed_s`.
    #[serde(serialize_with = "crate::stats::rounded::three")]
    pub rate_achieved: f64,
    /// How long the flood ran, in seconds.
    #[serde(serialize_with = "crate::stats::rounded::three")]
    pub elapsed_s: f64,
    /// What ended it.
    pub ended_by: FloodEnd,
    /// Connections attempted (sockets asked for).
    pub attempted: u64,
    /// Attempts that connected.
    pub connected: u64,
    /// Attempts that failed: refused, timed out, or no socket to be had.
    pub failed: u64,
    /// Failures by reason (the error's text), so a full accept queue (timed out) tells
    /// itself apart from a closed port (refused) or an exhausted limit.
    pub failed_by_reason: BTreeMap<String, u64>,
    /// Attempts still connecting when the flood closed them (for the cap, or at the end).
    pub abandoned: u64,
    /// Connected ones the peer closed or reset.
    pub closed_by_peer: u64,
    /// Connections the flood closed to stay under the cap.
    pub closed_for_cap: u64,
    /// Sockets open when the flood ended (closed then by the flood).
    pub open_at_end: usize,
    /// The most sockets open at once.
    pub peak_open: usize,
    /// `handshake-silent`: handshakes completed (the controller's BARRIER answered).
    pub handshakes_completed: u64,
    /// Bytes written to the controller.
    pub bytes_sent: u64,
    /// Bytes read from the controller (and, once silent, ignored).
    pub bytes_received: u64,
    /// The cap in force: `max_connections`, lowered if the open-file limit required.
    pub max_connections: usize,
    /// The soft open-file limit after raising it to the hard limit.
    pub fd_limit: u64,
    /// True if the open-file limit, not `max_connections`, set the cap.
    pub fd_limited: bool,
}

impl FloodReport {
    /// Adds `other`, a later run of the same flood, to this one: counts summed, the
    /// rate achieved over both runs' time, the peak the higher, the end the later's.
    pub fn add(&mut self, other: &FloodReport) {
        self.elapsed_s += other.elapsed_s;
        self.ended_by = other.ended_by;
        self.attempted += other.attempted;
        self.connected += other.connected;
        self.failed += other.failed;
        for (why, n) in &other.failed_by_reason {
            *self.failed_by_reason.entry(why.clone()).or_default() += n;
        }
        self.abandoned += other.abandoned;
        self.closed_by_peer += other.closed_by_peer;
        self.closed_for_cap += other.closed_for_cap;
        self.open_at_end += other.open_at_end;
        self.peak_open = self.peak_open.max(other.peak_open);
        self.handshakes_completed += other.handshakes_completed;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.max_connections = self.max_connections.min(other.max_connections);
        self.fd_limited |= other.fd_limited;
        self.rate_achieved = if self.elapsed_s > 0.0 {
            self.attempted as f64 / self.elapsed_s
        } else {
            0.0
        };
    }
}
