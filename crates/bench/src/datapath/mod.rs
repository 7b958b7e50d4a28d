//! `pharos bench datapath`'s instruments: the traffic generator and the test bed it
//! measures a data path on (the command itself, which drives Open vSwitch, the Linux
//! bridge and `pharos switch` as subjects, is the `pharos` binary's).
//!
//! ```text
//! gen      UDP/IPv4 frames at a rate on one port, received on another: offered and
//!          received rates, loss, latency percentiles (a histogram, no allocation)
//! testbed  a generator namespace wired by veth pairs to a device-under-test
//!          namespace, and the devices: the Linux bridge, IP forwarding, Open
//!          vSwitch's userspace data path, `pharos switch`
//! ```
//!
//! Both send and receive through `afpacket`'s ports, the rings `pharos switch` forwards
//! with, from a crate below both (so the bench does not depend on the switch).

pub mod gen;
pub mod testbed;
