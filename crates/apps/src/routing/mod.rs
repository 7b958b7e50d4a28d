//! Routing between switches: shortest paths and a spanning tree for flooding, with no
//! I/O inside (the routing app feeds them topology events and reads routes back).
//!
//! ```text
//! mod.rs     Link, Route, Changes, the RoutingEngine trait
//! graph.rs   the switches and directed links, as dense slots with adjacency lists
//! engine.rs  ShortestPaths: hop-count shortest paths to each destination asked for,
//!            repaired incrementally
//! tree.rs    SpanningTree: the ports flooding may use, so loops never cause storms
//! flood.rs   the flood policy: tree and edge ports, repeats dropped, and what keeps
//!            a loop whose cables are not discovered yet from storming
//! topo.rs    linear, ring and fat-tree topologies for tests and benchmarks
//! app.rs     the `routing` app: flows along routes, floods along the tree (I/O through
//!            the app API; fed by the Topology and Devices services)
//! ```
//!
//! A link is directed: a cable between two switches is two links, one per direction, as
//! LLDP discovers them. Ports are `u32` (OpenFlow 1.3's width; 1.0's fit).
//!
//! ```
//! use apps::routing::{topo::FatTree, RoutingEngine, ShortestPaths};
//!
//! let ft = FatTree { k: 4 };
//! let mut engine = ShortestPaths::from_links(ft.switches(), ft.links());
//! let (a, b) = (ft.edge(0, 0), ft.edge(1, 0));
//! let route = engine.route(a, b).unwrap();
//! assert_eq!(route.links.len(), 4); // edge, aggregation, core, aggregation, edge
//! // Host ports 1 on both edge switches: one flow per switch on the way.
//! let hops: Vec<_> = route.path_ports(1, 1).collect();
//! assert_eq!((hops[0].dpid, hops[0].in_port), (a, 1));
//! assert_eq!((hops[4].dpid, hops[4].out_port), (b, 1));
//! // A link on the route goes down: the route is repaired, and the change says so.
//! let changes = engine.link_removed(route.links[1]);
//! assert!(changes.affects(&route));
//! assert_eq!(engine.route(a, b).unwrap().links.len(), 4);
//! ```

pub mod app;
mod engine;
pub mod flood;
mod graph;
pub mod topo;
mod tree;

#[cfg(test)]
mod tests;

pub use app::{Paths, Routing, COOKIE_SEQ, COOKIE_TAG};
pub use engine::ShortestPaths;
pub use tree::SpanningTree;

use controller::info::Dpid;

/// A directed link: frames sent out of `src_port` on `src` arrive on `dst_port` on `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Link {
    pub src: Dpid,
    pub src_port: u32,
    pub dst: Dpid,
    pub dst_port: u32,
}

impl Link {
    pub fn new(src: u64, src_port: u32, dst: u64, dst_port: u32) -> Link {
        Link {
            src: Dpid(src),
            src_port,
            dst: Dpid(dst),
            dst_port,
        }
    }

    /// The same cable, the other way.
    pub fn reversed(self) -> Link {
        Link::new(self.dst.0, self.dst_port, self.src.0, self.src_port)
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

/// The way from one switch to another: the links in order, empty when `src == dst`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub src: Dpid,
    pub dst: Dpid,
    pub links: Vec<Link>,
}

/// One switch on a route, with the port a packet enters by and the port it leaves by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortHop {
    pub dpid: Dpid,
    pub in_port: u32,
    pub out_port: u32,
}

impl Route {
    /// The switches from `src` to `dst`.
    pub fn switches(&self) -> impl Iterator<Item = Dpid> + '_ {
        self.links.iter().map(|l| l.src).chain([self.dst])
    }

    /// Every switch on the route with its in and out port, for a packet that enters
    /// `src` on `in_port` (the source host's port) and leaves `dst` by `out_port` (the
    /// destination host's port): what a forwarding app installs, one flow per switch.
    pub fn path_ports(&self, in_port: u32, out_port: u32) -> impl Iterator<Item = PortHop> + '_ {
        let ins = [in_port]
            .into_iter()
            .chain(self.links.iter().map(|l| l.dst_port));
        let outs = self.links.iter().map(|l| l.src_port).chain([out_port]);
        self.switches()
            .zip(ins.zip(outs))
            .map(|(dpid, (in_port, out_port))| PortHop {
                dpid,
                in_port,
                out_port,
            })
    }
}

/// What one topology event changed: the (switch, destination) pairs whose next hop is
/// now different (another port, or none where there was one, or one where there was
/// none). A route from `s` to `d` changed exactly when one of its switches is paired
/// with `d` here ([`Changes::affects`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// (switch, destination), sorted, no duplicates.
    pairs: Vec<(u64, u64)>,
}

impl Changes {
    fn from_pairs(mut pairs: Vec<(u64, u64)>) -> Changes {
        pairs.sort_unstable();
        pairs.dedup();
        Changes { pairs }
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// (switch, destination), ordered by switch then destination.
    pub fn iter(&self) -> impl Iterator<Item = (Dpid, Dpid)> + '_ {
        self.pairs.iter().map(|&(s, d)| (Dpid(s), Dpid(d)))
    }

    /// Whether the next hop from `switch` towards `dst` changed.
    pub fn contains(&self, switch: Dpid, dst: Dpid) -> bool {
        self.pairs.binary_search(&(switch.0, dst.0)).is_ok()
    }

    /// Whether `route`, computed before the change, is no longer the engine's route
    /// (so flows installed along it must go).
    pub fn affects(&self, route: &Route) -> bool {
        route.links.iter().any(|l| self.contains(l.src, route.dst))
    }
}

/// A routing engine: told about switches and links, it answers with routes. Another
/// engine (ECMP, weighted, ...) can replace [`ShortestPaths`] behind this trait.
///
/// Unknown switches and links are ignored on removal; a link between unknown switches
/// adds them. Every change to the topology bumps [`RoutingEngine::version`].
pub trait RoutingEngine: Send + Sync {
    fn switch_added(&mut self, dpid: Dpid);
    /// Removes the switch and its links.
    fn switch_removed(&mut self, dpid: Dpid) -> Changes;
    fn link_added(&mut self, link: Link) -> Changes;
    fn link_removed(&mut self, link: Link) -> Changes;
    /// The port `src` sends out of towards `dst`; `None` if `dst` cannot be reached,
    /// or is `src` itself.
    fn next_hop(&self, src: Dpid, dst: Dpid) -> Option<u32>;
    /// The route from `src` to `dst`; `None` if there is none.
    fn route(&self, src: Dpid, dst: Dpid) -> Option<Route>;
    /// Bumped by every event that changed the topology; a route computed at one version
    /// is still the engine's route as long as the version has not moved.
    fn version(&self) -> u64;
}
