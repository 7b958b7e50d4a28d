//! The network as every app sees it: the types that link discovery, host tracking and
//! routing all speak, so that each of them imports this module and none imports
//! another for them.
//!
//! ```text
//! mod.rs        Link (directed: one per direction of a cable), Cable (both, for logs)
//! mac_index.rs  MacIndex: MAC -> slot, open-addressed so a PACKET_IN still in the read
//!               buffer can ask for its line (the device table's index, and the
//!               topology's host-port guard)
//! topo.rs       linear, ring and fat-tree topologies for tests and benchmarks
//! ```
//!
//! The arrows: `topology` -> `net`; `devices` -> `topology`, `net`; `routing` ->
//! `topology`, `devices`, `net`. A link is directed: a cable between two switches is two
//! links, one per direction, as LLDP discovers them. Ports are `u32` (OpenFlow 1.3's
//! width; 1.0's fit).

pub mod mac_index;
pub mod topo;

pub use mac_index::MacIndex;

use openflow::Dpid;

/// A directed link: frames sent out of `src_port` on `src` arrive on `dst_port` on `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Link {
    pub src: Dpid,
    pub src_port: u32,
    pub dst: Dpid,
    pub dst_port: u32,
}

impl Link {
    /// The link `src:src_port -> dst:dst_port` (a dpid, or its number).
    pub fn new(src: impl Into<Dpid>, src_port: u32, dst: impl Into<Dpid>, dst_port: u32) -> Link {
        Link {
            src: src.into(),
            src_port,
            dst: dst.into(),
            dst_port,
        }
    }

    /// The same cable, the other way.
    pub fn reversed(self) -> Link {
        Link::new(self.dst, self.dst_port, self.src, self.src_port)
    }

    /// The cable this link runs on, shown the same whichever way it is taken:
    /// `00:00:00:00:00:00:00:01:2 <-> 00:00:00:00:00:00:00:02:1`, the lower end first.
    pub fn cable(self) -> Cable {
        Cable(self.min(self.reversed()))
    }
}

/// A link as log lines show it: `00:00:00:00:00:00:00:01:2 -> 00:00:00:00:00:00:00:02:1`
/// (each end a datapath id as every line shows one, then the port).
impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} -> {}:{}",
            self.src, self.src_port, self.dst, self.dst_port
        )
    }
}

/// Both directions of a [`Link`], for log lines: `00:00:00:00:00:00:00:01:2 <->
/// 00:00:00:00:00:00:00:02:1` (from [`Link::cable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cable(Link);

impl std::fmt::Display for Cable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let l = self.0;
        write!(f, "{}:{} <-> {}:{}", l.src, l.src_port, l.dst, l.dst_port)
    }
}
