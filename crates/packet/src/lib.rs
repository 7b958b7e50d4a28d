//! Packet views and builders.

mod macros;

pub mod arp;
pub mod checksum;
pub mod error;
pub mod ethernet;
pub mod flow;
pub mod icmpv4;
pub mod icmpv6;
pub mod ip;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6ext;
pub mod lldp;
pub mod mpls;
pub mod sctp;
pub mod tcp;
pub mod udp;
pub mod vlan;

pub use error::{EmitError, EmitResult, Error, Result};

/// A byte range within a header, as the private `field` modules spell layouts.
type Field = core::ops::Range<usize>;

#[cfg(test)]
#[rustfmt::skip]
mod testdata;
