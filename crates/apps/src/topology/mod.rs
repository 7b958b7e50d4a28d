//! Link discovery between switches.
//!
//! ```text
//! app.rs       the `topology` app: probes every port, turns the frames that come back
//!              into links, ages them out, follows ports and switches
//! lldp.rs      the discovery frame: encode (signed LLDP for one switch port) and verify
//!              (is it ours, untouched, recent; where was it sent from)
//! guard.rs     host ports: where each MAC was first seen, so that frames relayed by
//!              hosts make no link
//! service.rs   the Topology service: snapshots of switches, ports and links for other
//!              apps, and link events to subscribers
//! ```

mod app;
pub mod guard;
pub mod lldp;
pub mod service;

pub use app::{Params, Stats, TopologyApp, ETH_TYPE_LLDP, LLDP_COOKIE, LLDP_PRIORITY};
pub use service::{LinkGone, Topology, TopologyEvent, TopologySnapshot};
