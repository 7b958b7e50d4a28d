//! Between [`Flow`](super::Flow) and the wire: FLOW_MOD for 1.0 or 1.3 out, flow-stats
//! entries (and FLOW_MODs, for tests) in. What one version cannot express is an
//! [`EncodeError::NotExpressible`](crate::EncodeError::NotExpressible) naming it; what
//! this syntax cannot show (vendor actions, unknown OXM fields) is a [`FromWireError`]
//! naming it.
//!
//! ```text
//! message     Flow and FlowEntry to and from whole messages of either version
//! v10         the match and the actions in OpenFlow 1.0, both ways
//! v13         the match, the actions and the instructions in OpenFlow 1.3, both ways
//! from_model  an app's model::FlowMod (match, actions) as a Flow
//! common      FromWireError, and the flow-level fields both versions share
//! ```

mod common;
mod from_model;
mod message;
mod v10;
mod v13;

#[cfg(test)]
mod tests;

pub use common::FromWireError;
pub use v13::actions_from_of13;
