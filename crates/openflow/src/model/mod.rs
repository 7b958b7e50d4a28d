//! The version-neutral model apps are written against: [`Match`], [`Action`],
//! [`FlowMod`] and [`PacketOut`], encoded for whichever version a switch negotiated.
//!
//! An app writes a flow once:
//!
//! ```
//! use openflow::model::{Action, FlowMod, Match, PortNo};
//! use openflow::{MacAddr, Version};
//!
//! let m = Match { in_port: Some(1), eth_dst: Some(MacAddr([2, 0, 0, 0, 0, 9])), ..Match::default() };
//! let actions = [Action::output(PortNo::Physical(2))];
//! let fm = FlowMod::add(m, &actions).idle_timeout(10).priority(100);
//! let mut out = Vec::new();
//! fm.encode(Version::V1_0, 1, &mut out).unwrap(); // 80 bytes of OpenFlow 1.0
//! fm.encode(Version::V1_3, 2, &mut out).unwrap(); // 1.3: OXM match + APPLY_ACTIONS
//! ```
//!
//! What one version cannot express is an
//! [`EncodeError::NotExpressible`](crate::EncodeError::NotExpressible) naming it
//! (a masked Ethernet address or an IPv6 field in 1.0, a group action in 1.0, a
//! transport port in 1.3 without the IP protocol that says which header it is in).
//!
//! Encoding writes straight into the caller's buffer and allocates nothing when the
//! buffer has room: this is the controller's hot path.
//!
//! ```text
//! port          PortNo (ports as apps name them) and NO_BUFFER
//! matching      Match, with Vlan, Ipv4Prefix and Ipv6Prefix
//! action        Action
//! flow_mod      FlowMod, FlowModCommand, FlowModFlags; the 1.0 FLOW_MOD at fixed offsets
//! packet_out    PacketOut, and EncodedActions (actions encoded once for many packets)
//! flow_removed  FlowRemoved, read from a FLOW_REMOVED of either version
//! v10           the 1.0 encoders of the match and the actions (fixed offsets)
//! v13           the 1.3 encoders of the match (OXM), the actions and apply-actions
//! ```

mod action;
mod flow_mod;
mod flow_removed;
mod matching;
mod packet_out;
mod port;
mod v10;
mod v13;

pub use action::Action;
pub use flow_mod::{FlowMod, FlowModCommand, FlowModFlags};
pub use flow_removed::FlowRemoved;
pub use matching::{Ipv4Prefix, Ipv6Prefix, Match, Vlan};
pub use packet_out::{EncodedActions, PacketOut};
pub use port::{PortNo, NO_BUFFER};

/// Why a flow was removed, in either version (1.0's reasons are 1.3's first three).
pub use crate::of13::flow::FlowRemovedReason;

#[cfg(test)]
mod tests;
