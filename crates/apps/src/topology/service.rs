//! The `Topology` service: what the topology app knows, for every other app.
//!
//! Readers take a [`TopologySnapshot`] (an `Arc`, immutable, cheap to take and to hold
//! while computing) or ask [`Topology::is_link_port`]. Changes come from the topology app
//! through [`Topology::update`], which swaps in a new snapshot and then tells the
//! subscribers, in the order the changes were made.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, RwLock};

use controller::info::PortInfo;

use crate::routing::Link;

/// Why a link went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkGone {
    /// Its discovery frames stopped arriving.
    Timeout,
    /// PORT_STATUS said one of its ports went down.
    PortDown,
    /// PORT_STATUS said one of its ports was deleted.
    PortDeleted,
    /// One of its switches disconnected.
    SwitchLeft,
}

/// One change, as subscribers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologyEvent {
    SwitchAdded(u64),
    SwitchRemoved(u64),
    /// A directed link (frames out of `src_port` on `src` arrive on `dst_port` on `dst`).
    LinkAdded(Link),
    LinkRemoved(Link, LinkGone),
}

/// The network at one moment: switches with their ports, and directed links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologySnapshot {
    version: u64,
    switches: BTreeMap<u64, Vec<PortInfo>>,
    links: BTreeSet<Link>,
    /// (dpid, port) → how many links use it (either end).
    link_ports: BTreeMap<(u64, u32), u32>,
}

impl TopologySnapshot {
    /// Bumped by every update that changed something.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Connected switches and their current ports.
    pub fn switches(&self) -> &BTreeMap<u64, Vec<PortInfo>> {
        &self.switches
    }

    /// Discovered directed links (a cable seen both ways is two links).
    pub fn links(&self) -> &BTreeSet<Link> {
        &self.links
    }

    /// Whether a discovered link uses this port, at either end.
    pub fn is_link_port(&self, dpid: u64, port: u32) -> bool {
        self.link_ports.contains_key(&(dpid, port))
    }

    /// Adds or replaces a switch's port list; true if it is new.
    pub fn set_switch(&mut self, dpid: u64, ports: Vec<PortInfo>) -> bool {
        self.switches.insert(dpid, ports).is_none()
    }

    /// Removes a switch and returns the links that used it (already removed).
    pub fn remove_switch(&mut self, dpid: u64) -> Vec<Link> {
        self.switches.remove(&dpid);
        let gone: Vec<Link> = self
            .links
            .iter()
            .filter(|l| l.src.0 == dpid || l.dst.0 == dpid)
            .copied()
            .collect();
        for l in &gone {
            self.remove_link(*l);
        }
        gone
    }

    /// Adds a link; true if it was not there.
    pub fn add_link(&mut self, link: Link) -> bool {
        if !self.links.insert(link) {
            return false;
        }
        for end in [(link.src.0, link.src_port), (link.dst.0, link.dst_port)] {
            *self.link_ports.entry(end).or_insert(0) += 1;
        }
        true
    }

    /// Removes a link; true if it was there.
    pub fn remove_link(&mut self, link: Link) -> bool {
        if !self.links.remove(&link) {
            return false;
        }
        for end in [(link.src.0, link.src_port), (link.dst.0, link.dst_port)] {
            if let Some(n) = self.link_ports.get_mut(&end) {
                *n -= 1;
                if *n == 0 {
                    self.link_ports.remove(&end);
                }
            }
        }
        true
    }

    /// The links using this port at either end.
    pub fn links_at(&self, dpid: u64, port: u32) -> Vec<Link> {
        self.links
            .iter()
            .filter(|l| {
                (l.src.0 == dpid && l.src_port == port) || (l.dst.0 == dpid && l.dst_port == port)
            })
            .copied()
            .collect()
    }
}

type Subscriber = Box<dyn Fn(&TopologyEvent) + Send + Sync>;

/// The service (see the module doc).
#[derive(Default)]
pub struct Topology {
    current: RwLock<Arc<TopologySnapshot>>,
    subscribers: RwLock<Vec<Subscriber>>,
    /// Held across an update and its notifications, so subscribers see changes in the
    /// order they were made even when several workers update at once.
    publish: Mutex<()>,
}

impl std::fmt::Debug for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topology")
            .field("version", &self.snapshot().version)
            .finish_non_exhaustive()
    }
}

impl Topology {
    pub fn new() -> Topology {
        Topology::default()
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<TopologySnapshot> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether a discovered link uses this port, at either end.
    pub fn is_link_port(&self, dpid: u64, port: u32) -> bool {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_link_port(dpid, port)
    }

    /// Calls `f` after every change, with the change, once the new snapshot is in place;
    /// on the thread that made the change. Keep it quick, and do not call
    /// [`Topology::update`] from it (that would deadlock).
    pub fn subscribe(&self, f: Box<dyn Fn(&TopologyEvent) + Send + Sync>) {
        self.subscribers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(f);
    }

    /// For the topology app: applies `change` to a copy of the snapshot; if it reports
    /// events, or changed the copy without events (a port list), the copy (version
    /// bumped) replaces the snapshot and the subscribers are told the events, in order.
    /// Returns the events.
    pub fn update(
        &self,
        change: impl FnOnce(&mut TopologySnapshot) -> Vec<TopologyEvent>,
    ) -> Vec<TopologyEvent> {
        let _order = self.publish.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.snapshot();
        let mut next = TopologySnapshot::clone(&current);
        let events = change(&mut next);
        if events.is_empty() && next == *current {
            return events;
        }
        next.version += 1;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        let subscribers = self.subscribers.read().unwrap_or_else(|e| e.into_inner());
        for e in &events {
            for s in subscribers.iter() {
                s(e);
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn link_ports_follow_links_and_subscribers_see_changes_in_order() {
        let topo = Topology::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        topo.subscribe(Box::new(move |e| sink.lock().unwrap().push(e.clone())));
        let [ab, ba] = crate::routing::topo::cable(1, 2, 2, 1);
        topo.update(|s| {
            s.set_switch(1, Vec::new());
            s.set_switch(2, Vec::new());
            s.add_link(ab);
            s.add_link(ba);
            vec![TopologyEvent::LinkAdded(ab), TopologyEvent::LinkAdded(ba)]
        });
        assert!(topo.is_link_port(1, 2) && topo.is_link_port(2, 1));
        assert!(!topo.is_link_port(1, 1));
        let v = topo.snapshot().version();
        // No events: nothing replaced.
        let calls = AtomicUsize::new(0);
        topo.update(|_| {
            calls.fetch_add(1, Ordering::Relaxed);
            Vec::new()
        });
        assert_eq!(topo.snapshot().version(), v);
        // A port list changed, no event: a new snapshot all the same.
        let port = PortInfo {
            port_no: 1,
            hw_addr: openflow::MacAddr([2, 0, 0, 0, 0, 1]),
            name: "eth1".into(),
            config: 0,
            state: 0,
        };
        let none = topo.update(|s| {
            s.set_switch(1, vec![port.clone()]);
            Vec::new()
        });
        assert!(none.is_empty());
        assert_eq!(topo.snapshot().version(), v + 1);
        assert_eq!(topo.snapshot().switches()[&1], [port]);
        let held = topo.snapshot();
        topo.update(|s| {
            s.remove_link(ab);
            vec![TopologyEvent::LinkRemoved(ab, LinkGone::PortDown)]
        });
        // One direction left: the ports are still link ports.
        assert!(topo.is_link_port(1, 2));
        let gone = topo.update(|s| {
            s.remove_switch(2)
                .into_iter()
                .map(|l| TopologyEvent::LinkRemoved(l, LinkGone::SwitchLeft))
                .collect()
        });
        assert_eq!(
            gone,
            vec![TopologyEvent::LinkRemoved(ba, LinkGone::SwitchLeft)]
        );
        assert!(!topo.is_link_port(1, 2));
        // A snapshot taken earlier is unchanged.
        assert_eq!(held.links().len(), 2);
        assert_eq!(seen.lock().unwrap().len(), 4);
    }
}
