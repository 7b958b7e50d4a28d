//! Link discovery between switches.
//!
//! ```text
//! lldp.rs   the discovery frame: encode (signed LLDP for one switch port) and verify
//!           (is it ours, untouched, recent; where was it sent from)
//! ```

pub mod lldp;
