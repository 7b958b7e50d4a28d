//! Link discovery between switches.
//!
//! ```text
//! lldp.rs      the discovery frame: encode (signed LLDP for one switch port) and verify
//!              (is it ours, untouched, recent; where was it sent from)
//! service.rs   the Topology service: snapshots of switches, ports and links for other
//!              apps, and link events to subscribers
//! ```

pub mod lldp;
pub mod service;

pub use service::{LinkGone, Topology, TopologyEvent, TopologySnapshot};
