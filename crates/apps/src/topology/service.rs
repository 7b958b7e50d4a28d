//! The `Topology` service: what the topology app knows, for every other app.
//!
//! Readers take a [`TopologySnapshot`] (an `Arc`, immutable, cheap to hold while
//! computing) or ask [`Topology::is_link_port`]. Changes come from the topology app
//! through [`Topology::update`], which edits the current state in place and then tells
//! the subscribers, in the order the changes were made. A snapshot is copied from the
//! state only when someone asks for one after a change, so discovering a large network
//! (one update per link) costs one edit per link, not one copy of the network per link.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use controller::app::{Dpid, PortInfo};

use crate::net::Link;
use controller::app::{Publisher, Subscribers};

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

/// As log lines say it: `timed out`, `port down`, `port deleted`, `switch left`.
impl std::fmt::Display for LinkGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LinkGone::Timeout => "no discovery frame within link_timeout",
            LinkGone::PortDown => "port down",
            LinkGone::PortDeleted => "port deleted",
            LinkGone::SwitchLeft => "switch left",
        })
    }
}

/// One change, as subscribers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologyEvent {
    SwitchAdded(Dpid),
    SwitchRemoved(Dpid),
    /// A directed link (frames out of `src_port` on `src` arrive on `dst_port` on `dst`).
    LinkAdded(Link),
    LinkRemoved(Link, LinkGone),
}

/// The network at one moment: switches with their ports, and directed links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologySnapshot {
    version: u64,
    switches: BTreeMap<Dpid, Vec<PortInfo>>,
    links: BTreeSet<Link>,
    /// (dpid, port) → how many links use it (either end).
    link_ports: BTreeMap<(Dpid, u32), u32>,
    /// Set by every edit that changed something (cleared by `Topology::update`).
    changed: bool,
}

impl TopologySnapshot {
    /// Bumped by every update that changed something.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Connected switches and their current ports.
    pub fn switches(&self) -> &BTreeMap<Dpid, Vec<PortInfo>> {
        &self.switches
    }

    /// Discovered directed links (a cable seen both ways is two links).
    pub fn links(&self) -> &BTreeSet<Link> {
        &self.links
    }

    /// Whether a discovered link uses this port, at either end.
    pub fn is_link_port(&self, dpid: Dpid, port: u32) -> bool {
        self.link_ports.contains_key(&(dpid, port))
    }

    /// Adds or replaces a switch's port list; true if it is new.
    pub fn set_switch(&mut self, dpid: Dpid, ports: Vec<PortInfo>) -> bool {
        if self.switches.get(&dpid) == Some(&ports) {
            return false;
        }
        self.changed = true;
        self.switches.insert(dpid, ports).is_none()
    }

    /// Removes a switch and returns the links that used it (already removed).
    pub fn remove_switch(&mut self, dpid: Dpid) -> Vec<Link> {
        self.changed |= self.switches.remove(&dpid).is_some();
        let gone: Vec<Link> = self
            .links
            .iter()
            .filter(|l| l.src == dpid || l.dst == dpid)
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
        self.changed = true;
        for end in [(link.src, link.src_port), (link.dst, link.dst_port)] {
            *self.link_ports.entry(end).or_insert(0) += 1;
        }
        true
    }

    /// Removes a link; true if it was there.
    pub fn remove_link(&mut self, link: Link) -> bool {
        if !self.links.remove(&link) {
            return false;
        }
        self.changed = true;
        for end in [(link.src, link.src_port), (link.dst, link.dst_port)] {
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
    pub fn links_at(&self, dpid: Dpid, port: u32) -> Vec<Link> {
        self.links
            .iter()
            .filter(|l| {
                (l.src == dpid && l.src_port == port) || (l.dst == dpid && l.dst_port == port)
            })
            .copied()
            .collect()
    }
}

/// The service (see the module doc).
#[derive(Default)]
pub struct Topology {
    state: RwLock<State>,
    subscribers: Subscribers<TopologyEvent>,
}

#[derive(Default)]
struct State {
    /// The current topology, edited in place.
    current: TopologySnapshot,
    /// A copy of `current` handed to readers; dropped by a change, made again on demand.
    published: Option<Arc<TopologySnapshot>>,
}

impl std::fmt::Debug for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topology")
            .field("version", &self.read().current.version)
            .finish_non_exhaustive()
    }
}

impl Topology {
    pub fn new() -> Topology {
        Topology::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The current snapshot (copied once per change, when first asked for).
    pub fn snapshot(&self) -> Arc<TopologySnapshot> {
        if let Some(s) = &self.read().published {
            return Arc::clone(s);
        }
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let copy = match &state.published {
            Some(s) => Arc::clone(s),
            None => Arc::new(state.current.clone()),
        };
        state.published = Some(Arc::clone(&copy));
        copy
    }

    /// Whether a discovered link uses this port, at either end.
    pub fn is_link_port(&self, dpid: Dpid, port: u32) -> bool {
        self.read().current.is_link_port(dpid, port)
    }

    /// Calls `f` after every change, with the change, once the new state is in place;
    /// on the thread that made the change. Keep it quick, and do not call
    /// [`Topology::update`] from it (that would deadlock). For callers outside the
    /// pipeline (tests, tools): a panic in `f` unwinds into the topology app. Apps
    /// subscribe with `Builder::subscribe::<Topology, _>`, under their own guard.
    pub fn subscribe(&self, f: Box<dyn Fn(&TopologyEvent) + Send + Sync>) {
        self.subscribers.subscribe(f);
    }

    /// For the topology app: applies `change` to the current state; if it changed
    /// anything (with or without events: a port list changes without one), the version
    /// is bumped and later snapshots show it; then the subscribers are told the events,
    /// in order. Returns the events.
    pub fn update(
        &self,
        change: impl FnOnce(&mut TopologySnapshot) -> Vec<TopologyEvent>,
    ) -> Vec<TopologyEvent> {
        self.subscribers.publish(|| {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            let events = change(&mut state.current);
            if std::mem::take(&mut state.current.changed) {
                state.current.version += 1;
                state.published = None;
            }
            log_links(&state.current, &events);
            events
        })
    }
}

/// One info line per cable that came up or went down: a cable is up once a link runs
/// each way on it, and down when the first of its two links goes. A link seen one way
/// only (the other way is still being discovered, or broken) is a debug line.
fn log_links(after: &TopologySnapshot, events: &[TopologyEvent]) {
    for (i, e) in events.iter().enumerate() {
        match *e {
            TopologyEvent::LinkAdded(l) => {
                let back = l.reversed();
                // Both ways added in one change: said at the second.
                let up = after.links.contains(&back)
                    && !events[..i].contains(&TopologyEvent::LinkAdded(back));
                if up {
                    tracing::info!("link up: {}", l.cable());
                } else {
                    tracing::debug!("link seen one way: {l}");
                }
            }
            TopologyEvent::LinkRemoved(l, why) => {
                let back = l.reversed();
                // The other way still there, or gone in this same change after this one.
                let was_up = after.links.contains(&back)
                    || events[i + 1..]
                        .iter()
                        .any(|e| matches!(*e, TopologyEvent::LinkRemoved(b, _) if b == back));
                if was_up {
                    tracing::info!("link down: {} ({})", l.cable(), why);
                } else {
                    tracing::debug!("link gone: {l} ({why})");
                }
            }
            TopologyEvent::SwitchAdded(_) | TopologyEvent::SwitchRemoved(_) => {}
        }
    }
}

impl Publisher<TopologyEvent> for Topology {
    fn subscribers(&self) -> &Subscribers<TopologyEvent> {
        &self.subscribers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    #[test]
    fn a_cable_up_or_down_is_one_info_line() {
        let topo = Topology::new();
        let [ab, ba] = crate::net::topo::cable(2, 4, 1, 3);
        let [cd, dc] = crate::net::topo::cable(1, 1, 3, 1);
        let add = |l: Link| {
            move |s: &mut TopologySnapshot| {
                s.add_link(l);
                vec![TopologyEvent::LinkAdded(l)]
            }
        };
        let out = crate::logged(tracing::Level::INFO, || {
            topo.update(add(ab)); // one way: not up yet
            topo.update(add(ba));
            topo.update(|s| {
                s.add_link(cd);
                s.add_link(dc);
                vec![TopologyEvent::LinkAdded(cd), TopologyEvent::LinkAdded(dc)]
            });
            // A port down takes both ways at once: one line.
            topo.update(|s| {
                s.remove_link(ab);
                s.remove_link(ba);
                vec![
                    TopologyEvent::LinkRemoved(ab, LinkGone::PortDown),
                    TopologyEvent::LinkRemoved(ba, LinkGone::PortDown),
                ]
            });
            // Timing out one way, then the other: the first ends the cable.
            topo.update(|s| {
                s.remove_link(dc);
                vec![TopologyEvent::LinkRemoved(dc, LinkGone::Timeout)]
            });
            topo.update(|s| {
                s.remove_link(cd);
                vec![TopologyEvent::LinkRemoved(cd, LinkGone::Timeout)]
            });
        });
        let lines: Vec<&str> = out
            .lines()
            .map(|l| l.trim_start_matches(" INFO "))
            .collect();
        assert_eq!(
            lines,
            [
                "link up: 00:00:00:00:00:00:00:01:3 <-> 00:00:00:00:00:00:00:02:4",
                "link up: 00:00:00:00:00:00:00:01:1 <-> 00:00:00:00:00:00:00:03:1",
                "link down: 00:00:00:00:00:00:00:01:3 <-> 00:00:00:00:00:00:00:02:4 (port down)",
                "link down: 00:00:00:00:00:00:00:01:1 <-> 00:00:00:00:00:00:00:03:1 (no discovery frame within link_timeout)",
            ],
            "{out}"
        );
        assert!(!out.contains("Link {"), "no Debug structures: {out}");
    }

    #[test]
    fn link_ports_follow_links_and_subscribers_see_changes_in_order() {
        let topo = Topology::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        topo.subscribe(Box::new(move |e| sink.lock().unwrap().push(e.clone())));
        let [ab, ba] = crate::net::topo::cable(1, 2, 2, 1);
        topo.update(|s| {
            s.set_switch(Dpid(1), Vec::new());
            s.set_switch(Dpid(2), Vec::new());
            s.add_link(ab);
            s.add_link(ba);
            vec![TopologyEvent::LinkAdded(ab), TopologyEvent::LinkAdded(ba)]
        });
        assert!(topo.is_link_port(Dpid(1), 2) && topo.is_link_port(Dpid(2), 1));
        assert!(!topo.is_link_port(Dpid(1), 1));
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
            s.set_switch(Dpid(1), vec![port.clone()]);
            Vec::new()
        });
        assert!(none.is_empty());
        assert_eq!(topo.snapshot().version(), v + 1);
        assert_eq!(topo.snapshot().switches()[&Dpid(1)], [port]);
        let held = topo.snapshot();
        topo.update(|s| {
            s.remove_link(ab);
            vec![TopologyEvent::LinkRemoved(ab, LinkGone::PortDown)]
        });
        // One direction left: the ports are still link ports.
        assert!(topo.is_link_port(Dpid(1), 2));
        let gone = topo.update(|s| {
            s.remove_switch(Dpid(2))
                .into_iter()
                .map(|l| TopologyEvent::LinkRemoved(l, LinkGone::SwitchLeft))
                .collect()
        });
        assert_eq!(
            gone,
            vec![TopologyEvent::LinkRemoved(ba, LinkGone::SwitchLeft)]
        );
        assert!(!topo.is_link_port(Dpid(1), 2));
        // A snapshot taken earlier is unchanged.
        assert_eq!(held.links().len(), 2);
        assert_eq!(seen.lock().unwrap().len(), 4);
    }
}
