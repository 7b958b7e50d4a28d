//! What both versions' conversions share: [`FromWireError`], and [`Head`], the flow-level
//! fields of a FLOW_MOD and of a flow-stats entry.

use crate::of13::flow::flow_mod_flags as ff13;
use crate::ofctl::flow::{Flow, FlowFlags};

/// A flow read from a switch that `ovs-ofctl` syntax (as this module knows it) cannot
/// show: a vendor or experimenter action, an OXM field it does not know, ...
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the flow holds {0}, which this syntax cannot show")]
pub struct FromWireError(pub String);

/// The flow-level fields shared by FLOW_MOD and flow stats.
pub(super) struct Head {
    /// The flow's table (0 for a 1.0 FLOW_MOD, which names none).
    pub(super) table: u8,
    pub(super) priority: u16,
    pub(super) cookie: u64,
    pub(super) idle_timeout: u16,
    pub(super) hard_timeout: u16,
    /// The `OFPFF_*` bits, read as 1.3's (1.0's first two are the same).
    pub(super) flags: u16,
}

impl Head {
    /// A flow with these fields and nothing else: no match, no actions.
    pub(super) fn flow(&self) -> Flow {
        let f = self.flags;
        Flow {
            table: self.table,
            priority: self.priority,
            cookie: self.cookie,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            flags: FlowFlags {
                send_flow_rem: f & ff13::SEND_FLOW_REM != 0,
                check_overlap: f & ff13::CHECK_OVERLAP != 0,
                reset_counts: f & ff13::RESET_COUNTS != 0,
                no_packet_counts: f & ff13::NO_PKT_COUNTS != 0,
                no_byte_counts: f & ff13::NO_BYT_COUNTS != 0,
            },
            ..Flow::default()
        }
    }
}
