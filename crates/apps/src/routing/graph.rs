//! The topology as the engines see it: switches in dense slots (so per-switch tables
//! are plain vectors), each with its outgoing and incoming links.

use std::collections::HashMap;

use crate::net::Link;

/// One end's view of a link: the local port, the switch at the other end and its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge {
    pub port: u32,
    pub peer: u32,
    pub peer_port: u32,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    pub dpid: u64,
    /// False for a slot freed by a removed switch, waiting for reuse.
    pub live: bool,
    /// Links leaving this switch (`port` is this switch's).
    pub out: Vec<Edge>,
    /// Links arriving at this switch (`port` is this switch's, `peer` the sender).
    pub inn: Vec<Edge>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Graph {
    /// dpid → slot.
    index: HashMap<u64, u32, foldhash::fast::RandomState>,
    pub nodes: Vec<Node>,
    /// Slots of removed switches, reused first so tables do not grow with churn.
    free: Vec<u32>,
}

impl Graph {
    pub fn slot(&self, dpid: u64) -> Option<u32> {
        self.index.get(&dpid).copied()
    }

    pub fn dpid(&self, slot: u32) -> u64 {
        self.nodes[slot as usize].dpid
    }

    pub fn out(&self, slot: u32) -> &[Edge] {
        &self.nodes[slot as usize].out
    }

    pub fn inn(&self, slot: u32) -> &[Edge] {
        &self.nodes[slot as usize].inn
    }

    /// Number of slots, live or free: the length of per-switch tables.
    pub fn slots(&self) -> usize {
        self.nodes.len()
    }

    pub fn live(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes.len() as u32).filter(|&s| self.nodes[s as usize].live)
    }

    /// The switch's slot, and whether it is new.
    pub fn add_switch(&mut self, dpid: u64) -> (u32, bool) {
        if let Some(slot) = self.slot(dpid) {
            return (slot, false);
        }
        let node = Node {
            dpid,
            live: true,
            ..Node::default()
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.nodes[slot as usize] = node;
                slot
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() as u32 - 1
            }
        };
        self.index.insert(dpid, slot);
        (slot, true)
    }

    /// Frees the switch's slot; its links must be gone already.
    pub fn remove_switch(&mut self, slot: u32) {
        let node = &mut self.nodes[slot as usize];
        debug_assert!(node.out.is_empty() && node.inn.is_empty());
        node.live = false;
        self.index.remove(&node.dpid);
        self.free.push(slot);
    }

    /// Adds the link (and its switches) and returns their slots; `None` if it was there.
    pub fn add_link(&mut self, l: Link) -> Option<(u32, u32)> {
        let (u, _) = self.add_switch(l.src.0);
        let (v, _) = self.add_switch(l.dst.0);
        let out = Edge {
            port: l.src_port,
            peer: v,
            peer_port: l.dst_port,
        };
        if self.nodes[u as usize].out.contains(&out) {
            return None;
        }
        self.nodes[u as usize].out.push(out);
        self.nodes[v as usize].inn.push(Edge {
            port: l.dst_port,
            peer: u,
            peer_port: l.src_port,
        });
        Some((u, v))
    }

    /// Removes the link and returns the slots of its ends; `None` if it was not there.
    pub fn remove_link(&mut self, l: Link) -> Option<(u32, u32)> {
        let (u, v) = (self.slot(l.src.0)?, self.slot(l.dst.0)?);
        let out = &mut self.nodes[u as usize].out;
        let i = out
            .iter()
            .position(|e| (e.port, e.peer, e.peer_port) == (l.src_port, v, l.dst_port))?;
        out.swap_remove(i);
        let inn = &mut self.nodes[v as usize].inn;
        let j = inn
            .iter()
            .position(|e| (e.port, e.peer, e.peer_port) == (l.dst_port, u, l.src_port));
        inn.swap_remove(j.expect("every link is in both adjacency lists"));
        Some((u, v))
    }

    pub fn contains(&self, l: Link) -> bool {
        let (Some(u), Some(v)) = (self.slot(l.src.0), self.slot(l.dst.0)) else {
            return false;
        };
        let e = Edge {
            port: l.src_port,
            peer: v,
            peer_port: l.dst_port,
        };
        self.out(u).contains(&e)
    }

    /// Whether some link still leaves `u` by `port` for `v` (parallel links can differ
    /// in the far port only).
    pub fn has_hop(&self, u: u32, port: u32, v: u32) -> bool {
        self.out(u).iter().any(|e| e.port == port && e.peer == v)
    }

    /// The link `u` sends out of `port` to `v` by, lowest far port first.
    pub fn hop_link(&self, u: u32, port: u32, v: u32) -> Option<Link> {
        let far = self.out(u).iter().filter(|e| e.port == port && e.peer == v);
        let peer_port = far.map(|e| e.peer_port).min()?;
        Some(Link::new(self.dpid(u), port, self.dpid(v), peer_port))
    }

    /// Every link leaving or entering the switch.
    pub fn links_of(&self, slot: u32) -> Vec<Link> {
        let d = self.dpid(slot);
        let out = self
            .out(slot)
            .iter()
            .map(|e| Link::new(d, e.port, self.dpid(e.peer), e.peer_port));
        let inn = self
            .inn(slot)
            .iter()
            .map(|e| Link::new(self.dpid(e.peer), e.peer_port, d, e.port));
        out.chain(inn).collect()
    }

    /// Whether a link leaves or enters the switch by this port.
    pub fn is_link_port(&self, dpid: u64, port: u32) -> bool {
        self.slot(dpid).is_some_and(|s| {
            let n = &self.nodes[s as usize];
            n.out.iter().chain(&n.inn).any(|e| e.port == port)
        })
    }
}
