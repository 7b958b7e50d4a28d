//! [`FlowRemoved`]: the fields of a FLOW_REMOVED of either version that apps act on.

use crate::of13::flow::FlowRemovedReason;

/// A FLOW_REMOVED of either version: the fields apps act on (the match stays in the
/// message, in its version's form).
///
/// ```
/// use openflow::model::{FlowRemoved, FlowRemovedReason};
/// use openflow::{of10, Message};
///
/// let m = Message::V10(of10::Message::FlowRemoved(of10::FlowRemoved {
///     match_: of10::Match::default(),
///     cookie: 0x5254_0000_0000_0001,
///     priority: 0x8000,
///     reason: of10::FlowRemovedReason::IdleTimeout,
///     duration_sec: 3,
///     duration_nsec: 500_000_000,
///     idle_timeout: 10,
///     packet_count: 7,
///     byte_count: 700,
/// }));
/// let r = FlowRemoved::from_message(&m).unwrap();
/// assert_eq!((r.cookie, r.reason), (0x5254_0000_0000_0001, FlowRemovedReason::IdleTimeout));
/// assert_eq!(r.duration.as_millis(), 3_500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowRemoved {
    pub cookie: u64,
    pub priority: u16,
    pub reason: FlowRemovedReason,
    /// How long the flow was in the table.
    pub duration: std::time::Duration,
    pub idle_timeout: u16,
    /// Not in OpenFlow 1.0: 0 there.
    pub hard_timeout: u16,
    /// 1.0 has one table: 0 there.
    pub table_id: u8,
    pub packet_count: u64,
    pub byte_count: u64,
}

impl FlowRemoved {
    /// The FLOW_REMOVED in `m`, if it is one (either version).
    pub fn from_message(m: &crate::Message) -> Option<FlowRemoved> {
        let time = |s: u32, ns: u32| std::time::Duration::new(u64::from(s), ns.min(999_999_999));
        match m {
            crate::Message::V10(crate::of10::Message::FlowRemoved(f)) => Some(FlowRemoved {
                cookie: f.cookie,
                priority: f.priority,
                reason: FlowRemovedReason::from_raw(f.reason.to_raw()),
                duration: time(f.duration_sec, f.duration_nsec),
                idle_timeout: f.idle_timeout,
                hard_timeout: 0,
                table_id: 0,
                packet_count: f.packet_count,
                byte_count: f.byte_count,
            }),
            crate::Message::V13(crate::of13::Message::FlowRemoved(f)) => Some(FlowRemoved {
                cookie: f.cookie,
                priority: f.priority,
                reason: f.reason,
                duration: time(f.duration_sec, f.duration_nsec),
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                table_id: f.table_id,
                packet_count: f.packet_count,
                byte_count: f.byte_count,
            }),
            _ => None,
        }
    }
}
