//! Host ports: the ports where hosts are, so that discovery frames relayed by hosts
//! cannot make links (TopoGuard's port property, Hong et al., NDSS 2015).
//!
//! A signed, fresh discovery frame proves only that it came from our controller a moment
//! ago, not that it crossed a cable: two hosts can relay frames between their ports as
//! they arrive. What tells a host port from a link port is traffic: the first PACKET_IN
//! of a MAC address comes from the port its host is on, never from a link (a flooded
//! copy reaches other switches only after the controller saw the original). So the port
//! where a MAC is first seen is marked a host port, and a new link with an end on a
//! host port is refused.
//!
//! After a controller restart, switches may still hold flows from before until they
//! reconnect, and those can carry a host's first packet to a link port of another
//! switch. So a mark made while switches are joining (within `hold` of the last one)
//! is provisional until the network has been settled for `hold` since it was made: a
//! discovery frame arriving on a provisional mark drops it, and on a real link port one
//! comes within an interval of the neighbour's joining. A mark made in a settled
//! network holds at once. Marks go when their port goes down, is deleted or is added, and
//! with their switch.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use foldhash::fast::RandomState;
use openflow::{Dpid, MacAddr};

use crate::net::mac_index::{Hint, MacIndex};

/// A marked port: the MACs first seen there, since when, and whether the network was
/// settled then.
#[derive(Debug)]
struct Mark {
    macs: Vec<MacAddr>,
    since: Instant,
    settled: bool,
}

/// What a port is, for a new link with an end on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortKind {
    /// No host seen first here.
    Unmarked,
    /// A host was first seen here, and the network has not been settled long since.
    Provisional,
    /// A host is here.
    Host,
}

/// The marks (see the module doc).
#[derive(Debug)]
pub struct HostPorts {
    /// The MACs seen (each marked the port it was first seen on: `marks` says which;
    /// the index's slots are unused). Every PACKET_IN looks its source up here: in the
    /// device table's open-addressed index, whose line a PACKET_IN still in the read
    /// buffer can ask for ([`HostPorts::hint`]), as a hash set's cannot.
    first_hop: MacIndex,
    marks: HashMap<(Dpid, u32), Mark, RandomState>,
    /// When a switch last joined.
    last_join: Option<Instant>,
    /// How long the network must be settled after a mark for it to hold.
    hold: Duration,
    /// MACs remembered at most (beyond it, new MACs mark nothing: fail open).
    cap: usize,
}

impl HostPorts {
    pub fn new(hold: Duration, cap: usize) -> HostPorts {
        HostPorts {
            first_hop: MacIndex::default(),
            marks: HashMap::default(),
            last_join: None,
            hold,
            cap,
        }
    }

    /// A switch joined (connected) at `now`.
    pub fn joined(&mut self, now: Instant) {
        self.last_join = Some(now);
    }

    /// Whether `mac` was seen already, or can mark nothing more (the guard is full):
    /// [`HostPorts::traffic`] would change nothing.
    /// (The all-zero MAC, which no host has and the index cannot hold, marks nothing.)
    pub fn knows(&self, mac: MacAddr) -> bool {
        self.is_full() || mac.0 == [0; 6] || self.first_hop.get(mac).is_some()
    }

    /// What a prefetch of [`HostPorts::knows`]'s look-up needs, outside the lock.
    pub fn hint(&self) -> Arc<Hint> {
        self.first_hop.hint()
    }

    /// Whether the guard remembers as many MACs as it may: no new MAC marks anything.
    pub fn is_full(&self) -> bool {
        self.first_hop.len() >= self.cap
    }

    /// A PACKET_IN from `mac` (a unicast source) on `port` of `dpid`, which is not a
    /// known link port.
    pub fn traffic(&mut self, mac: MacAddr, dpid: Dpid, port: u32, now: Instant) {
        if self.knows(mac) {
            return;
        }
        self.first_hop.insert(mac, 0);
        let settled = self
            .last_join
            .is_none_or(|j| now.saturating_duration_since(j) >= self.hold);
        self.marks
            .entry((dpid, port))
            .or_insert_with(|| Mark {
                macs: Vec::new(),
                since: now,
                settled,
            })
            .macs
            .push(mac);
    }

    pub fn kind(&self, dpid: Dpid, port: u32, now: Instant) -> PortKind {
        let Some(m) = self.marks.get(&(dpid, port)) else {
            return PortKind::Unmarked;
        };
        let settled_since = self.last_join.map_or(m.since, |j| j.max(m.since));
        if m.settled || now.saturating_duration_since(settled_since) >= self.hold {
            PortKind::Host
        } else {
            PortKind::Provisional
        }
    }

    /// Forgets the port's mark and the MACs first seen there (they mark their next port).
    pub fn clear_port(&mut self, dpid: Dpid, port: u32) {
        if let Some(m) = self.marks.remove(&(dpid, port)) {
            for mac in m.macs {
                self.first_hop.remove(mac);
            }
        }
    }

    /// Forgets every mark on the switch.
    pub fn clear_switch(&mut self, dpid: Dpid) {
        let ports: Vec<(Dpid, u32)> = self.marks.keys().filter(|k| k.0 == dpid).copied().collect();
        for (d, p) in ports {
            self.clear_port(d, p);
        }
    }

    /// MACs remembered.
    pub fn len(&self) -> usize {
        self.first_hop.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first_hop.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOLD: Duration = Duration::from_secs(2);

    fn mac(n: u8) -> MacAddr {
        MacAddr([2, 0, 0, 0, 0, n])
    }

    #[test]
    fn the_first_port_of_a_mac_is_marked_not_the_ports_its_copies_reach() {
        let t = Instant::now();
        let mut h = HostPorts::new(HOLD, 10);
        h.traffic(mac(1), Dpid(1), 1, t);
        // The flooded copy on another switch's (undiscovered) link port.
        h.traffic(mac(1), Dpid(2), 3, t);
        assert_eq!(h.kind(Dpid(1), 1, t + HOLD), PortKind::Host);
        assert_eq!(h.kind(Dpid(2), 3, t + HOLD), PortKind::Unmarked);
    }

    #[test]
    fn a_mark_holds_once_the_network_was_settled_for_hold_after_it() {
        let t = Instant::now();
        let mut h = HostPorts::new(HOLD, 10);
        h.joined(t);
        h.traffic(mac(1), Dpid(1), 1, t + HOLD / 2);
        assert_eq!(h.kind(Dpid(1), 1, t + HOLD), PortKind::Provisional);
        // Another switch joins: settling starts again for the provisional mark.
        h.joined(t + HOLD);
        assert_eq!(
            h.kind(Dpid(1), 1, t + HOLD / 2 + HOLD),
            PortKind::Provisional
        );
        assert_eq!(h.kind(Dpid(1), 1, t + HOLD * 2), PortKind::Host);
        // Made in a settled network: holds at once, and through later joins.
        h.traffic(mac(2), Dpid(1), 2, t + HOLD * 3);
        assert_eq!(h.kind(Dpid(1), 2, t + HOLD * 3), PortKind::Host);
        h.joined(t + HOLD * 4);
        assert_eq!(h.kind(Dpid(1), 2, t + HOLD * 4), PortKind::Host);
    }

    /// The all-zero MAC, which the index cannot hold (0 marks an empty entry), marks
    /// nothing and leaves the others' marks alone.
    #[test]
    fn the_all_zero_mac_marks_nothing() {
        let t = Instant::now();
        let mut h = HostPorts::new(HOLD, 10);
        h.traffic(mac(1), Dpid(1), 1, t);
        assert!(h.knows(MacAddr([0; 6])));
        h.traffic(MacAddr([0; 6]), Dpid(1), 2, t);
        assert_eq!(h.kind(Dpid(1), 2, t + HOLD), PortKind::Unmarked);
        assert_eq!(h.len(), 1);
        assert!(h.knows(mac(1)) && !h.knows(mac(2)));
    }

    #[test]
    fn clearing_a_port_lets_its_macs_mark_their_next_port() {
        let t = Instant::now();
        let later = t + HOLD;
        let mut h = HostPorts::new(HOLD, 10);
        h.traffic(mac(1), Dpid(1), 1, t);
        h.traffic(mac(2), Dpid(1), 1, t);
        h.traffic(mac(3), Dpid(1), 2, t);
        h.clear_port(Dpid(1), 1);
        assert_eq!(h.kind(Dpid(1), 1, later), PortKind::Unmarked);
        assert_eq!(h.len(), 1);
        // The host moved: its first packet on the new port marks it.
        h.traffic(mac(1), Dpid(4), 5, t);
        assert_eq!(h.kind(Dpid(4), 5, later), PortKind::Host);
        h.clear_switch(Dpid(1));
        assert_eq!(h.kind(Dpid(1), 2, later), PortKind::Unmarked);
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn past_the_cap_new_macs_mark_nothing() {
        let t = Instant::now();
        let mut h = HostPorts::new(HOLD, 1);
        h.traffic(mac(1), Dpid(1), 1, t);
        assert!(h.is_full());
        h.traffic(mac(2), Dpid(1), 2, t);
        assert_eq!(h.kind(Dpid(1), 2, t + HOLD), PortKind::Unmarked);
        assert_eq!(h.len(), 1);
        // A port cleared makes room again.
        h.clear_port(Dpid(1), 1);
        assert!(!h.is_full());
        h.traffic(mac(2), Dpid(1), 2, t);
        assert_eq!(h.kind(Dpid(1), 2, t + HOLD), PortKind::Host);
    }
}
