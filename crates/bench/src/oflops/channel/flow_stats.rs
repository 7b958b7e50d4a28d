//! Flow statistics replies: one reassembled from its parts ([`FlowStatsReply`]), and
//! many requests in flight matched to their replies ([`FlowStatsCollector`]).

use openflow::of13::multipart::{MultipartReply, MultipartReplyBody};
use openflow::{of10, of13, Message};
use serde::Serialize;

use super::messages::Received;
use super::Result;

/// A complete flow-statistics answer (all its parts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct FlowStatsReply {
    /// The request's xid, which every part carries.
    pub xid: u32,
    /// When the request was handed to the kernel.
    pub sent_ns: u64,
    /// When the first part arrived.
    pub first_part_ns: u64,
    /// When the last part (the one without the MORE flag) arrived.
    pub last_part_ns: u64,
    /// STATS_REPLY / MULTIPART_REPLY messages the answer came in.
    pub parts: u32,
    /// `read` calls that delivered parts (a rough count of the TCP segments).
    pub reads: u32,
    /// Flow entries in all parts.
    pub flows: u32,
    /// Bytes of all parts, headers included.
    pub bytes: u64,
    /// Packets counted by all the flows reported.
    pub packet_count: u64,
}

impl FlowStatsReply {
    /// From the request to the last part.
    pub fn response_ns(&self) -> u64 {
        self.last_part_ns.saturating_sub(self.sent_ns)
    }
}

/// Folds the parts of flow-stats answers, by xid, as they arrive. Several requests may
/// be outstanding (polling at a rate faster than the switch answers).
#[derive(Debug, Default)]
pub struct FlowStatsCollector {
    /// The requests not fully answered: what has come so far, and the socket read the
    /// last part came in (to count the reads an answer took).
    pending: Vec<(FlowStatsReply, u64)>,
}

impl FlowStatsCollector {
    /// Registers a request sent at `sent_ns`.
    pub fn expect(&mut self, xid: u32, sent_ns: u64) {
        self.pending.push((
            FlowStatsReply {
                xid,
                sent_ns,
                ..FlowStatsReply::default()
            },
            u64::MAX,
        ));
    }

    /// Requests still unanswered (or partly answered).
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }

    /// The send times of the requests still outstanding.
    pub fn outstanding_sent_ns(&self) -> Vec<u64> {
        self.pending.iter().map(|(p, _)| p.sent_ns).collect()
    }

    /// Offers a received message: `Ok(Some(reply))` when it was the last part of an
    /// expected answer, `Ok(None)` when it was another part or not a stats reply of ours;
    /// an ERROR answering one of ours is its [`super::ChannelError::Refused`].
    pub fn offer(&mut self, r: &Received) -> Result<Option<FlowStatsReply>> {
        let Some(i) = self.pending.iter().position(|(p, _)| p.xid == r.xid) else {
            return Ok(None);
        };
        if let Some(e) = r.error() {
            self.pending.remove(i);
            return Err(e);
        }
        let (flags, flows, packets) = match r.message()? {
            Message::V10(of10::Message::StatsReply(of10::stats::StatsReply {
                flags,
                body: of10::stats::StatsReplyBody::Flow { stats },
            })) => (
                flags,
                stats.len(),
                stats.iter().map(|s| s.packet_count).sum::<u64>(),
            ),
            Message::V13(of13::Message::MultipartReply(MultipartReply {
                flags,
                body: MultipartReplyBody::Flow { stats },
            })) => (
                flags,
                stats.len(),
                stats.iter().map(|s| s.packet_count).sum::<u64>(),
            ),
            _ => return Ok(None),
        };
        let (p, last_read) = &mut self.pending[i];
        if p.parts == 0 {
            p.first_part_ns = r.at_ns;
        }
        p.parts += 1;
        if *last_read != r.read_no {
            p.reads += 1;
            *last_read = r.read_no;
        }
        p.flows += flows as u32;
        p.packet_count += packets;
        p.bytes += r.frame.len() as u64;
        p.last_part_ns = r.at_ns;
        // OFPSF_REPLY_MORE and OFPMPF_REPLY_MORE are both bit 0.
        if flags & 1 == 0 {
            return Ok(Some(self.pending.remove(i).0));
        }
        Ok(None)
    }
}
