//! Restart without cutting traffic: a switch's flows are read when it connects and
//! each is kept or deleted by the app that owns it, instead of the table being
//! emptied.
//!
//! ```text
//! handshake: FLOW_STATS (every table) before the barrier ─► Established.flows
//! worker:    found_flows(sw, flows) ─► switch_added:
//!   for each flow: its cookie's tag ([`crate::cookie`]) names
//!     a running app with an adopt hook ─► the hook says Keep or Delete
//!     a running app without one        ─► Keep
//!     no app, a stopped or quarantined one, or no tag (cookie 0) ─► Delete
//!   each Delete is a DELETE_STRICT of exactly that flow (table, match, priority, and on
//!   1.3 its whole cookie), sent before any initializer runs
//!   initializers, then switch-added listeners; `ctx.adopted()` lists what was kept
//! ```
//!
//! Nothing here empties a table: an initializer installs what is missing (the table-miss
//! entry only if [`has_table_miss`] says it is not among the kept flows). A switch whose
//! flows are not known (it did not answer FLOW_STATS before the barrier, as the
//! emulated switches of `pharos bench` and cbench do) gets no deletes and
//! `ctx.adopted()` is `None`: the apps install what they always install.
//!
//! Why this keeps traffic flowing through a `kill -9` of the controller: Open vSwitch in
//! `fail_mode=secure` keeps its flows while no controller is connected, and the
//! restarted controller keeps every flow its apps still own; only flows no running app
//! owns (stale) are deleted.

use openflow::model::PortNo;

use crate::info::SwitchInfo;
use openflow::ofctl::{Flow, FlowAction, FlowEntry, FlowMatch};

/// What an app decides for a flow of its own found on a switch that connects
/// ([`crate::app::Builder::on_adopt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Adopt {
    /// The flow is still valid: it stays.
    Keep,
    /// The flow is stale: the core deletes exactly it.
    Delete,
}

/// Whether `flow` is a table-miss entry: table 0, priority 0, matching everything.
pub fn is_table_miss(flow: &Flow) -> bool {
    flow.table == 0 && flow.priority == 0 && flow.matching == FlowMatch::default()
}

/// Whether `flows` hold a table-miss entry that sends to the controller.
pub fn has_table_miss(flows: &[FlowEntry]) -> bool {
    flows.iter().any(|e| {
        is_table_miss(&e.flow)
            && e.flow
                .actions
                .iter()
                .any(|a| matches!(a, FlowAction::Controller { .. }))
    })
}

/// An adopt decision for flows that forward out of ports: keep `flow` while every port
/// it outputs to is on the switch and up (`info` as the switch connected), delete it
/// otherwise. Flows with no port output (to the controller, a drop) are kept.
pub fn keep_if_outputs_up(info: &SwitchInfo, flow: &Flow) -> Adopt {
    let up = |port: u32| info.ports.iter().any(|p| p.port_no == port && p.is_up());
    if output_ports(flow).all(up) {
        Adopt::Keep
    } else {
        Adopt::Delete
    }
}

/// The ports `flow` outputs to (plain outputs and enqueues, not the reserved ports).
pub fn output_ports(flow: &Flow) -> impl Iterator<Item = u32> + '_ {
    flow.actions.iter().filter_map(|a| match a {
        FlowAction::Output { port } | FlowAction::Enqueue { port, .. } => match port {
            PortNo::Physical(n) => Some(*n),
            _ => None,
        },
        _ => None,
    })
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
