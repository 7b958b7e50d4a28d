//! A spanning tree of the topology, for flooding: a broadcast sent out of tree ports and
//! edge ports only reaches every switch and host once, however many loops the
//! topology has.
//!
//! **The tree.** A cable counts if a link was seen in either direction (a one-way
//! discovery still means a cable). For each connected component, breadth-first from
//! its lowest dpid, each switch visiting its neighbours in order of (dpid, own port,
//! far port); the cable that first reaches a switch joins the tree. Parallel cables
//! to a switch already reached stay out. So the tree is a function of the links alone.
//!
//! **Updates.** Removing a cable that is not in the tree cannot change a breadth-first
//! search (it never discovered anything), so only tree cables and additions cost a
//! recomputation: one search over the whole graph, linear in its size.

use std::collections::HashSet;

use controller::app::Dpid;

use super::graph::Graph;
use crate::net::Link;

#[derive(Debug, Clone, Default)]
pub struct SpanningTree {
    graph: Graph,
    /// The tree's cables, oriented parent → child, in search order.
    links: Vec<Link>,
    /// (dpid, port) at both ends of every tree cable.
    ports: HashSet<(u64, u32), foldhash::fast::RandomState>,
}

impl SpanningTree {
    pub fn new() -> SpanningTree {
        SpanningTree::default()
    }

    pub fn from_links(
        switches: impl IntoIterator<Item = Dpid>,
        links: impl IntoIterator<Item = Link>,
    ) -> SpanningTree {
        let mut t = SpanningTree::new();
        for d in switches {
            t.graph.add_switch(d.0);
        }
        for l in links {
            t.graph.add_link(l);
        }
        t.recompute();
        t
    }

    pub fn switch_added(&mut self, dpid: Dpid) {
        self.graph.add_switch(dpid.0);
    }

    /// Removes the switch and its links; true if the tree changed.
    pub fn switch_removed(&mut self, dpid: Dpid) -> bool {
        let Some(slot) = self.graph.slot(dpid.0) else {
            return false;
        };
        for l in self.graph.links_of(slot) {
            self.graph.remove_link(l);
        }
        self.graph.remove_switch(slot);
        self.recompute()
    }

    /// True if the tree changed.
    pub fn link_added(&mut self, link: Link) -> bool {
        self.graph.add_link(link).is_some() && self.recompute()
    }

    /// True if the tree changed.
    pub fn link_removed(&mut self, link: Link) -> bool {
        if self.graph.remove_link(link).is_none() || self.graph.contains(link.reversed()) {
            return false; // unknown, or the other direction still holds the cable
        }
        let in_tree = self
            .links
            .iter()
            .any(|&t| t == link || t == link.reversed());
        in_tree && self.recompute()
    }

    /// Whether `port` on `dpid` is an end of a tree cable.
    pub fn is_tree_port(&self, dpid: Dpid, port: u32) -> bool {
        self.ports.contains(&(dpid.0, port))
    }

    /// Whether a flood may leave `dpid` by `port`: a tree port, or an edge port (one no
    /// known link uses, so hosts or not-yet-discovered switches are behind it).
    pub fn floods(&self, dpid: Dpid, port: u32) -> bool {
        self.is_tree_port(dpid, port) || !self.graph.is_link_port(dpid.0, port)
    }

    /// The tree's cables, one link each, oriented parent → child.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Recomputes the tree; true if it changed.
    fn recompute(&mut self) -> bool {
        let g = &self.graph;
        let mut roots: Vec<u32> = g.live().collect();
        roots.sort_unstable_by_key(|&s| g.dpid(s));
        let mut seen = vec![false; g.slots()];
        let mut links = Vec::new();
        let mut queue = Vec::new();
        let mut near = Vec::new();
        for root in roots {
            if seen[root as usize] {
                continue;
            }
            seen[root as usize] = true;
            queue.clear();
            queue.push(root);
            let mut i = 0;
            while let Some(&y) = queue.get(i) {
                i += 1;
                // Neighbours by either direction: (dpid, own port, far port, slot).
                near.clear();
                let n = &g.nodes[y as usize];
                let ends = n.out.iter().chain(&n.inn);
                near.extend(ends.map(|e| (g.dpid(e.peer), e.port, e.peer_port, e.peer)));
                near.sort_unstable();
                for &(dpid, port, peer_port, peer) in &near {
                    if !seen[peer as usize] {
                        seen[peer as usize] = true;
                        links.push(Link::new(g.dpid(y), port, dpid, peer_port));
                        queue.push(peer);
                    }
                }
            }
        }
        if links == self.links {
            return false;
        }
        self.ports = links
            .iter()
            .flat_map(|l| [(l.src.0, l.src_port), (l.dst.0, l.dst_port)])
            .collect();
        self.links = links;
        true
    }
}
