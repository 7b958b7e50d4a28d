//! All-pairs shortest paths by hop count, as Beacon's routing did, repaired in place
//! when links change rather than recomputed.
//!
//! For each destination `d` the engine keeps a table: for every switch `s`, the
//! distance from `s` to `d` and the next hop (out port, next switch). Together they
//! form a tree of shortest paths towards `d`.
//!
//! **Equal-cost rule.** Among the links `s → w` with `dist(w) + 1 == dist(s)`, `s`
//! takes the one with the lowest `w` dpid, then the lowest out port. Distances are
//! unique, so the rule makes every table a function of the topology alone: the same
//! links give the same routes whatever order they arrived in, and routes do not
//! flap between equal paths. The rule is local, so a route is shortest all the way.
//!
//! **Repairs**, per destination, touching only what the change can reach:
//!
//! 1. A link `u → v` goes: if `u`'s next hop to `d` is not that link, nothing changes
//!    for `d` (no shortest path of the tree used it). Otherwise only the switches whose
//!    path runs through `u` (the subtree under `u`) lose their route: their routes are
//!    dropped and rebuilt from their links to switches outside the subtree, whose
//!    distances are unchanged, smallest distance first (Dijkstra over the subtree).
//! 2. A link `u → v` comes: if it gives `u` a shorter path to `d`, or an equal one that
//!    wins the rule, `u` takes it; if shorter, the gain spreads breadth-first to the
//!    switches whose paths can now run through `u`. Elsewhere nothing changes.
//!
//! Every repair saves the entries it overwrites, so the (switch, destination) pairs
//! whose next hop changed come out exactly, for the app to move its flows.
//!
//! **Made when first asked.** A destination's table is computed (one breadth-first
//! search) the first time a route or a next hop towards it is asked, and repaired from
//! then on; a destination no route has gone to has no table and costs no repair. So a
//! network holds the tables of the switches its traffic goes to, not all of them: 10,000
//! switches with no hosts hold none, where all the tables would take 1.2 GB (12 bytes
//! a pair). A switch leaving drops its own table.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

use controller::app::Dpid;

use super::graph::Graph;
use super::route::{Changes, Route, RoutingEngine};
use crate::net::Link;

const NONE: u32 = u32::MAX;

/// One switch's way to one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// Hops to the destination; `NONE` if unreachable.
    dist: u32,
    /// Out port towards the destination.
    port: u32,
    /// The next switch (slot); the destination itself for the destination.
    via: u32,
}

const UNREACHABLE: Entry = Entry {
    dist: NONE,
    port: NONE,
    via: NONE,
};

/// The shortest-path engine. A clone is a snapshot (it copies the tables made so far:
/// 12 bytes per switch and destination).
#[derive(Debug, Clone, Default)]
pub struct ShortestPaths {
    graph: Graph,
    /// `tables[d][s]`: the way from slot `s` to slot `d` (one destination's tree is
    /// contiguous, as every repair works on one destination); made when a route to `d`
    /// is first asked (see the module doc).
    tables: Vec<OnceLock<Vec<Entry>>>,
    version: u64,
    /// Reused between repairs so they do not allocate.
    scratch: Scratch,
}

impl ShortestPaths {
    pub fn new() -> ShortestPaths {
        ShortestPaths::default()
    }

    /// An engine computed from scratch for these switches and links.
    pub fn from_links(
        switches: impl IntoIterator<Item = Dpid>,
        links: impl IntoIterator<Item = Link>,
    ) -> ShortestPaths {
        let mut e = ShortestPaths::new();
        for d in switches {
            e.graph.add_switch(d.0);
        }
        for l in links {
            e.graph.add_link(l);
        }
        e.recompute_all();
        e
    }

    /// Recomputes every table from scratch, all of them now: one breadth-first search
    /// per destination.
    pub fn recompute_all(&mut self) {
        let n = self.graph.slots();
        self.tables.resize_with(n, OnceLock::new);
        for d in 0..n as u32 {
            let table = compute(&self.graph, d, &mut self.scratch);
            self.tables[d as usize] = OnceLock::from(table);
        }
    }

    /// Destination `d`'s table, made now if no route to it was asked before.
    fn table(&self, d: u32) -> &[Entry] {
        self.tables[d as usize].get_or_init(|| compute(&self.graph, d, &mut Scratch::default()))
    }

    /// Destinations whose table has been made.
    pub fn tables_made(&self) -> usize {
        self.tables.iter().filter(|t| t.get().is_some()).count()
    }

    /// Hops from `src` to `dst`.
    pub fn distance(&self, src: Dpid, dst: Dpid) -> Option<u32> {
        self.entry(src, dst).map(|e| e.dist)
    }

    pub fn switch_count(&self) -> usize {
        self.graph.live().count()
    }

    /// Heap bytes of the routing tables made so far.
    pub fn table_bytes(&self) -> usize {
        let entries: usize = self
            .tables
            .iter()
            .filter_map(OnceLock::get)
            .map(Vec::capacity)
            .sum();
        entries * size_of::<Entry>() + self.tables.capacity() * size_of::<OnceLock<Vec<Entry>>>()
    }

    /// Whether both engines hold the same switches and the same tables.
    #[cfg(test)]
    pub(super) fn same_tables(&self, other: &ShortestPaths) -> bool {
        let g = &self.graph;
        let key = |e: Entry| (e.dist, e.port, (e.via != NONE).then(|| g.dpid(e.via)));
        let okey = |e: Entry| {
            (
                e.dist,
                e.port,
                (e.via != NONE).then(|| other.graph.dpid(e.via)),
            )
        };
        self.switch_count() == other.switch_count()
            && g.live().all(|d| {
                g.live().all(|s| {
                    let (dd, sd) = (Dpid(g.dpid(d)), Dpid(g.dpid(s)));
                    let Some((od, os)) = other.graph.slot(dd.0).zip(other.graph.slot(sd.0)) else {
                        return false;
                    };
                    key(self.table(d)[s as usize]) == okey(other.table(od)[os as usize])
                })
            })
    }

    fn entry(&self, src: Dpid, dst: Dpid) -> Option<Entry> {
        let (s, d) = (self.graph.slot(src.0)?, self.graph.slot(dst.0)?);
        if s == d {
            // A switch to itself: no table needed (hosts on one switch make none).
            return Some(own_entry(d));
        }
        let e = self.table(d)[s as usize];
        (e.dist != NONE).then_some(e)
    }

    /// Runs `repair` on every table made so far and collects what changed (a table not
    /// made yet will be made from the graph as it is then).
    fn repair_each(
        &mut self,
        changes: &mut Vec<(u64, u64)>,
        repair: impl Fn(&Graph, &mut [Entry], &mut Scratch),
    ) {
        let n = self.graph.slots();
        for (d, table) in self.tables.iter_mut().enumerate() {
            let Some(table) = table.get_mut() else {
                continue;
            };
            self.scratch.begin(n);
            repair(&self.graph, table, &mut self.scratch);
            for &(x, old) in &self.scratch.saved {
                let new = table[x as usize];
                if (old.port, old.via) != (new.port, new.via) {
                    changes.push((self.graph.dpid(x), self.graph.dpid(d as u32)));
                }
            }
        }
    }

    fn remove(&mut self, link: Link, changes: &mut Vec<(u64, u64)>) {
        let Some((u, v)) = self.graph.remove_link(link) else {
            return;
        };
        self.version += 1;
        let port = link.src_port;
        if self.graph.has_hop(u, port, v) {
            return; // a parallel link still carries the same hop
        }
        self.repair_each(changes, |g, table, s| {
            let e = table[u as usize];
            if (e.via, e.port) == (v, port) {
                s.reroute_subtree(g, table, u);
            }
        });
    }
}

fn own_entry(d: u32) -> Entry {
    Entry {
        dist: 0,
        port: NONE,
        via: d,
    }
}

/// Destination `d`'s table from scratch: a breadth-first search from `d` (nothing
/// reaches a switch that is not live).
fn compute(graph: &Graph, d: u32, s: &mut Scratch) -> Vec<Entry> {
    let n = graph.slots();
    let mut table = vec![UNREACHABLE; n];
    if graph.nodes[d as usize].live {
        s.begin(n);
        table[d as usize] = own_entry(d);
        s.queue.push(d);
        s.spread(graph, &mut table);
    }
    table
}

impl RoutingEngine for ShortestPaths {
    fn switch_added(&mut self, dpid: Dpid) {
        let (slot, new) = self.graph.add_switch(dpid.0);
        if !new {
            return;
        }
        self.version += 1;
        let n = self.graph.slots();
        if n > self.tables.len() {
            for table in self.tables.iter_mut().filter_map(OnceLock::get_mut) {
                table.push(UNREACHABLE);
            }
            self.tables.push(OnceLock::new());
        }
        // A slot reused: in the other tables it is unreachable (its switch left without
        // links); its own table, if one was made since, is made again when asked.
        self.tables[slot as usize] = OnceLock::new();
    }

    fn switch_removed(&mut self, dpid: Dpid) -> Changes {
        let Some(slot) = self.graph.slot(dpid.0) else {
            return Changes::default();
        };
        let mut changes = Vec::new();
        for link in self.graph.links_of(slot) {
            self.remove(link, &mut changes);
        }
        self.graph.remove_switch(slot);
        self.tables[slot as usize] = OnceLock::new();
        self.version += 1;
        Changes::from_pairs(changes)
    }

    fn link_added(&mut self, link: Link) -> Changes {
        self.switch_added(link.src);
        self.switch_added(link.dst);
        let Some((u, v)) = self.graph.add_link(link) else {
            return Changes::default();
        };
        self.version += 1;
        let port = link.src_port;
        let mut changes = Vec::new();
        self.repair_each(&mut changes, |g, table, s| {
            let dv = table[v as usize].dist;
            if dv != NONE && s.relax(g, table, u, dv + 1, v, port) {
                s.queue.push(u);
                s.spread(g, table);
            }
        });
        Changes::from_pairs(changes)
    }

    fn link_removed(&mut self, link: Link) -> Changes {
        let mut changes = Vec::new();
        self.remove(link, &mut changes);
        Changes::from_pairs(changes)
    }

    fn next_hop(&self, src: Dpid, dst: Dpid) -> Option<u32> {
        self.entry(src, dst).filter(|e| e.dist > 0).map(|e| e.port)
    }

    fn route(&self, src: Dpid, dst: Dpid) -> Option<Route> {
        let (mut s, d) = (self.graph.slot(src.0)?, self.graph.slot(dst.0)?);
        if s == d {
            return Some(Route {
                src,
                dst,
                links: Vec::new(),
            });
        }
        let table = self.table(d);
        if table[s as usize].dist == NONE {
            return None;
        }
        let mut links = Vec::with_capacity(table[s as usize].dist.min(64) as usize);
        while table[s as usize].dist > 0 {
            let e = table[s as usize];
            links.push(self.graph.hop_link(s, e.port, e.via)?);
            s = e.via;
        }
        Some(Route { src, dst, links })
    }

    fn version(&self) -> u64 {
        self.version
    }
}

/// Working space of one repair of one destination's table.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// `stamp[x] == epoch`: `x` was saved in this repair.
    stamp: Vec<u32>,
    epoch: u32,
    /// The entries this repair overwrote, as they were.
    saved: Vec<(u32, Entry)>,
    /// Breadth-first queue (consumed by index, cleared per repair).
    queue: Vec<u32>,
    /// (distance, slot), smallest first, for rebuilding a subtree.
    heap: BinaryHeap<Reverse<(u32, u32)>>,
}

impl Scratch {
    fn begin(&mut self, n: usize) {
        self.stamp.resize(n, 0);
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.fill(0);
            self.epoch = 1;
        }
        self.saved.clear();
        self.queue.clear();
        self.heap.clear();
    }

    fn saved(&self, x: u32) -> bool {
        self.stamp[x as usize] == self.epoch
    }

    fn save(&mut self, x: u32, e: Entry) {
        if !self.saved(x) {
            self.stamp[x as usize] = self.epoch;
            self.saved.push((x, e));
        }
    }

    /// Offers `x` the way `port → via` at `dist` hops; takes it if shorter, or equal
    /// and preferred by the rule. True if `x`'s distance went down.
    fn relax(
        &mut self,
        g: &Graph,
        table: &mut [Entry],
        x: u32,
        dist: u32,
        via: u32,
        port: u32,
    ) -> bool {
        let e = table[x as usize];
        let better =
            dist < e.dist || dist == e.dist && (g.dpid(via), port) < (g.dpid(e.via), e.port);
        if better {
            self.save(x, e);
            table[x as usize] = Entry { dist, port, via };
        }
        dist < e.dist
    }

    /// Breadth-first from the queued switches, whose distances went down, to the
    /// switches that can now reach the destination through them.
    fn spread(&mut self, g: &Graph, table: &mut [Entry]) {
        let mut i = 0;
        while let Some(&y) = self.queue.get(i) {
            i += 1;
            let dist = table[y as usize].dist + 1;
            for e in g.inn(y) {
                if self.relax(g, table, e.peer, dist, y, e.peer_port) {
                    self.queue.push(e.peer);
                }
            }
        }
    }

    /// Repair 1: `u`'s next hop is gone; rebuild the routes of every switch whose path
    /// ran through `u`.
    fn reroute_subtree(&mut self, g: &Graph, table: &mut [Entry], u: u32) {
        // The subtree: `u`, then whoever's next hop is a switch already in it.
        self.save(u, table[u as usize]);
        let mut i = 0;
        while let Some(&(y, _)) = self.saved.get(i) {
            i += 1;
            for e in g.inn(y) {
                let t = table[e.peer as usize];
                if (t.via, t.port) == (y, e.peer_port) {
                    self.save(e.peer, t);
                }
            }
        }
        for &(x, _) in &self.saved {
            table[x as usize] = UNREACHABLE;
        }
        // Seeds: the best way out of the subtree from each of its switches.
        for i in 0..self.saved.len() {
            let x = self.saved[i].0;
            for e in g.out(x) {
                let dist = table[e.peer as usize].dist;
                if !self.saved(e.peer) && dist != NONE {
                    self.relax(g, table, x, dist + 1, e.peer, e.port);
                }
            }
            if table[x as usize].dist != NONE {
                self.heap.push(Reverse((table[x as usize].dist, x)));
            }
        }
        // Dijkstra inside the subtree (stale heap entries skipped).
        while let Some(Reverse((dist, y))) = self.heap.pop() {
            if dist != table[y as usize].dist {
                continue;
            }
            for e in g.inn(y) {
                if self.saved(e.peer) && self.relax(g, table, e.peer, dist + 1, y, e.peer_port) {
                    self.heap.push(Reverse((dist + 1, e.peer)));
                }
            }
        }
    }
}
