//! What a routing engine answers: a [`Route`] (its [`PortHop`]s, the flows a forwarding
//! app installs), the [`Changes`] a topology event made, and the [`RoutingEngine`]
//! trait that [`ShortestPaths`](super::ShortestPaths) implements.

use controller::app::Dpid;

use crate::net::Link;

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
    pub(super) fn from_pairs(mut pairs: Vec<(u64, u64)>) -> Changes {
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
/// engine (ECMP, weighted, ...) can replace [`ShortestPaths`](super::ShortestPaths) behind this trait.
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
