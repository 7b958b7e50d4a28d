//! The host table: every host seen, keyed by (MAC, VLAN), with its IP addresses, where
//! it is attached and when it was seen, indexed by MAC and by IP.
//!
//! Layout: hosts live in dense slots (a freed slot is reused first); `by_mac` maps a MAC
//! to its first slot, and the hosts with that MAC on other VLANs are chained from there
//! (a MAC is on one VLAN almost always, so the chain is one long); `by_ipv4` and
//! `by_ipv6` map each address to the slot of the host that has it. Every change goes
//! through `insert`, `remove_slot` and `assign_ip`, which keep the three indexes and the
//! hosts' lists in agreement (property tested).
//!
//! Expiry is a scan, made cheap by a lower bound on every host's last-seen time: a
//! call to [`HostTable::expire`] that cannot find anything to remove returns after one
//! comparison, and a scan recomputes the bound. A scan happens when the host
//! idle longest may have timed out; it finds nothing only if that host was seen again
//! in the meantime, so active hosts cost about one scan per `max_idle`. The figures
//! are in BENCHMARKS.md ("Device tracking").
//!
//! Addresses are one space across VLANs: the same address seen on two VLANs belongs to
//! whichever host showed it last (each change an `IpAdded` event). An address that
//! changes hands more than [`MAX_IP_MOVES`] times within [`IP_MOVE_WINDOW`] is
//! contested (a spoofer, a misconfiguration, or a benchmark whose every host claims one
//! address): until the window passes it stays with the host that had it, the other
//! claims are counted ([`HostTable::contested`]) and announce nothing, so a flapping
//! address cannot make every PACKET_IN a table write and an event. A network that
//! reuses addresses per VLAN would need the address index keyed by VLAN as well.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

use crate::net::mac_index::{Hint, MacIndex};

use openflow::{Dpid, MacAddr};

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// How much a [`HostTable`] may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// New hosts beyond this many are refused (a host spraying source MACs must not
    /// take the controller's memory). Default 100,000 (about 24 MB, BENCHMARKS.md).
    pub max_hosts: usize,
    /// Addresses kept per host and per family (IPv4, IPv6); the least recently seen
    /// goes when a new one comes. Default 8.
    pub max_ips_per_family: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_hosts: 100_000,
            max_ips_per_family: 8,
        }
    }
}

/// An address may change hands this many times per [`IP_MOVE_WINDOW`]; beyond, it is
/// contested (module doc). A failover or a new NIC moves an address once.
pub const MAX_IP_MOVES: u32 = 8;
/// The window of [`MAX_IP_MOVES`].
pub const IP_MOVE_WINDOW: Duration = Duration::from_secs(1);

/// How often an address changed hands lately.
#[derive(Debug, Clone, Copy)]
struct IpMoves {
    /// When the current window began.
    since: Instant,
    /// Changes of hands since then.
    moves: u32,
}

impl IpMoves {
    /// Whether the address is contested at `now`.
    fn contested(&self, now: Instant) -> bool {
        self.moves >= MAX_IP_MOVES && now.saturating_duration_since(self.since) <= IP_MOVE_WINDOW
    }
}

/// End of a chain of slots.
const NONE: u32 = u32::MAX;

/// Where a host is attached: a switch port at the edge of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttachmentPoint {
    pub dpid: Dpid,
    pub port: u32,
}

impl AttachmentPoint {
    /// Port `port` of switch `dpid` (a dpid, or its number).
    pub fn new(dpid: impl Into<Dpid>, port: u32) -> AttachmentPoint {
        AttachmentPoint {
            dpid: dpid.into(),
            port,
        }
    }
}

/// What identifies a host: its MAC on a VLAN (`None`: untagged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostKey {
    pub mac: MacAddr,
    pub vlan: Option<u16>,
}

/// One host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    mac: MacAddr,
    vlan: Option<u16>,
    /// Slot of the next host with the same MAC (another VLAN), or `NONE`.
    next_same_mac: u32,
    ap: AttachmentPoint,
    /// IPv4 and IPv6 addresses, least recently seen first; at most
    /// [`Limits::max_ips_per_family`] of each. One list, grown one at a time, because most
    /// hosts have one or two addresses: two lists would cost 24 more bytes each.
    ips: Vec<IpAddr>,
    first_seen: Instant,
    last_seen: Instant,
}

impl Host {
    pub fn key(&self) -> HostKey {
        HostKey {
            mac: self.mac,
            vlan: self.vlan,
        }
    }

    pub fn mac(&self) -> MacAddr {
        self.mac
    }

    pub fn vlan(&self) -> Option<u16> {
        self.vlan
    }

    /// Where it was last seen.
    pub fn attachment_point(&self) -> AttachmentPoint {
        self.ap
    }

    /// Its addresses, both families, least recently seen first.
    pub fn ips(&self) -> &[IpAddr] {
        &self.ips
    }

    /// Its IPv4 addresses, least recently seen first.
    pub fn ipv4(&self) -> impl Iterator<Item = Ipv4Addr> + '_ {
        self.ips.iter().filter_map(|ip| match ip {
            IpAddr::V4(a) => Some(*a),
            IpAddr::V6(_) => None,
        })
    }

    /// Its IPv6 addresses, least recently seen first.
    pub fn ipv6(&self) -> impl Iterator<Item = Ipv6Addr> + '_ {
        self.ips.iter().filter_map(|ip| match ip {
            IpAddr::V6(a) => Some(*a),
            IpAddr::V4(_) => None,
        })
    }

    pub fn first_seen(&self) -> Instant {
        self.first_seen
    }

    pub fn last_seen(&self) -> Instant {
        self.last_seen
    }
}

/// What a sighting of a host would do to the table ([`HostTable::sighting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sighting {
    /// Nothing to write: a known host at its known place, seen lately, with its known
    /// addresses (or a source address no host has).
    Current,
    /// A new host, refused because the table is full: nothing to write but the count.
    Refused,
    /// A write: a new host, a move, a new address, or a last sighting to bring forward.
    Change,
}

/// What a change to the table did, for the device app to announce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostEvent {
    /// A host seen for the first time (its IP, if the packet had one, is already on it).
    Added { key: HostKey, ap: AttachmentPoint },
    /// A known host seen at another attachment point.
    Moved {
        key: HostKey,
        from: AttachmentPoint,
        to: AttachmentPoint,
    },
    /// A known host seen with an address it did not have; `from` is the host that had
    /// it until now (the address moved: a new NIC, a failover, or a spoofer).
    IpAdded {
        key: HostKey,
        ip: IpAddr,
        from: Option<HostKey>,
    },
    /// A host removed: idle too long, or its port became an inter-switch link, or its
    /// switch left. The host as it was, addresses included.
    Removed { host: Host },
}

/// The host table. See the module doc for the layout.
#[derive(Debug, Clone)]
pub struct HostTable {
    /// Hosts by slot; `None` for a free slot.
    slots: Vec<Option<Host>>,
    /// Free slots, reused last-freed first.
    free: Vec<u32>,
    /// MAC → first slot of its chain of VLANs.
    by_mac: MacIndex,
    /// Address → slot. Two maps, not one keyed by `IpAddr`: an IPv4 entry then takes 8
    /// bytes, not 24.
    by_ipv4: Map<Ipv4Addr, u32>,
    by_ipv6: Map<Ipv6Addr, u32>,
    /// Live hosts.
    len: usize,
    limits: Limits,
    /// New hosts refused because the table was full.
    refused: u64,
    /// No host's `last_seen` is earlier: `expire` has nothing to do before
    /// `oldest + max_idle`. `None` when the table is empty.
    oldest: Option<Instant>,
    /// Addresses that changed hands lately, to find the contested ones (module doc);
    /// emptied of old windows by `expire`.
    ip_moves: Map<IpAddr, IpMoves>,
    /// Claims of a contested address refused.
    contested: u64,
}

impl Default for HostTable {
    fn default() -> Self {
        HostTable::new(Limits::default())
    }
}

/// Addresses that say nothing about who a host is: unspecified (0.0.0.0 in ARP probes
/// and DHCP, :: in duplicate address detection), loopback, multicast, broadcast.
fn meaningful(ip: &IpAddr) -> bool {
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || *ip == IpAddr::V4(Ipv4Addr::BROADCAST))
}

fn same_family(a: &IpAddr, b: &IpAddr) -> bool {
    a.is_ipv4() == b.is_ipv4()
}

impl HostTable {
    /// An empty table. (`max_hosts` is capped below 2^32: slots are `u32`.)
    pub fn new(mut limits: Limits) -> HostTable {
        limits.max_hosts = limits.max_hosts.min(NONE as usize);
        HostTable {
            slots: Vec::new(),
            free: Vec::new(),
            by_mac: MacIndex::with_filter(Some(limits.max_hosts)),
            by_ipv4: Map::default(),
            by_ipv6: Map::default(),
            len: 0,
            limits,
            refused: 0,
            oldest: None,
            ip_moves: Map::default(),
            contested: 0,
        }
    }

    /// What a prefetch of a look-up in this table needs, for use without its lock
    /// ([`Hint::prefetch`]; see `mac_index`). Stays this table's (a clone has its own).
    pub fn prefetch_hint(&self) -> std::sync::Arc<Hint> {
        self.by_mac.hint()
    }

    /// Claims of a contested address refused so far (module doc).
    pub fn contested(&self) -> u64 {
        self.contested
    }

    /// Whether [`HostTable::observe`] of each of `ips` by this host at `ap` and `now`
    /// would change nothing but move its last sighting forward by less than `fresh`
    /// ([`HostTable::sighting`] says [`Sighting::Current`]). The tests' shorthand: the
    /// device app asks `sighting`, which also tells a refusal from a change.
    #[cfg(test)]
    pub fn is_current(
        &self,
        mac: MacAddr,
        vlan: Option<u16>,
        ap: AttachmentPoint,
        ips: &[Option<IpAddr>],
        now: Instant,
        fresh: Duration,
    ) -> bool {
        self.sighting(mac, vlan, ap, ips, now, fresh) == Sighting::Current
    }

    /// What [`HostTable::observe`] of each of `ips` by this host at `ap` and `now`
    /// would do, found with one look-up and no write. The device app asks this under a
    /// read lock and writes only for [`Sighting::Change`].
    ///
    /// [`Sighting::Current`]: nothing but move its last sighting forward by less than
    /// `fresh`: the host is known, at `ap`, seen within `fresh`, and has each meaningful
    /// address already (or the address is contested and another's); or `mac` is one
    /// `observe` ignores (a group or all-zero address). What the answer skips: the last
    /// sighting lags by less than `fresh` (a host may go that much early), and an
    /// address's place in its host's least-recently-seen order is refreshed once per
    /// `fresh`, not per packet.
    ///
    /// [`Sighting::Refused`]: the host is new and the table full, so `observe` would
    /// only count the refusal (the caller counts it instead: [`Devices::refuse`]).
    ///
    /// [`Devices::refuse`]: super::Devices::refuse
    pub fn sighting(
        &self,
        mac: MacAddr,
        vlan: Option<u16>,
        ap: AttachmentPoint,
        ips: &[Option<IpAddr>],
        now: Instant,
        fresh: Duration,
    ) -> Sighting {
        if mac.is_multicast() || mac == MacAddr::ZERO {
            return Sighting::Current;
        }
        let Some(slot) = self.find(mac, normal_vlan(vlan)) else {
            return match self.len >= self.limits.max_hosts {
                true => Sighting::Refused,
                false => Sighting::Change,
            };
        };
        let h = self.host(slot);
        if h.ap != ap || now.saturating_duration_since(h.last_seen) >= fresh {
            return Sighting::Change;
        }
        let has = |ip: &IpAddr| {
            !meaningful(ip)
                || self.limits.max_ips_per_family == 0
                || h.ips.contains(ip)
                || self.ip_moves.get(ip).is_some_and(|m| m.contested(now))
        };
        match ips.iter().flatten().all(has) {
            true => Sighting::Current,
            false => Sighting::Change,
        }
    }

    /// Hosts in the table.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// New hosts refused so far because the table was full. The device app should say
    /// so loudly the first time, and export the count.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Every host, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Host> + '_ {
        self.slots.iter().flatten()
    }

    /// The host with this MAC on this VLAN (`None`: untagged; VLAN 0 is untagged too).
    pub fn get(&self, mac: MacAddr, vlan: Option<u16>) -> Option<&Host> {
        self.find(mac, normal_vlan(vlan)).map(|s| self.host(s))
    }

    /// The hosts with this MAC, one per VLAN it was seen on, in no particular order.
    pub fn by_mac(&self, mac: MacAddr) -> impl Iterator<Item = &Host> + '_ {
        let mut next = self.by_mac.get(mac).unwrap_or(NONE);
        std::iter::from_fn(move || {
            let h = self.slots.get(next as usize)?.as_ref()?;
            next = h.next_same_mac;
            Some(h)
        })
    }

    /// The host that has this address.
    pub fn by_ip(&self, ip: IpAddr) -> Option<&Host> {
        self.ip_slot(ip).map(|s| self.host(s))
    }

    /// Records that a frame from `mac` on `vlan` came in at `ap` at `now`, with `ip` as
    /// its source address if it had one (ARP sender, IPv4 or IPv6 source, neighbour
    /// discovery target). Returns at most one event: `Added` for a new host, else
    /// `Moved` if the attachment point changed, else `IpAdded` if the address is new to
    /// the host. (A host that moves and shows a new address at once reports the move;
    /// the address is on it all the same.) An address another host had is taken from it.
    ///
    /// Ignored, returning `None`: a group or all-zero `mac` (no host sends from one),
    /// and addresses that name no host (see `meaningful`: 0.0.0.0, ::, loopback,
    /// multicast, broadcast) are dropped while the host is still recorded. VLAN 0
    /// (priority tag only) counts as untagged. A new host when the table is full is
    /// refused and counted ([`HostTable::refused`]). A `now` earlier than the host's
    /// last sighting (clocks read by different threads) does not move it back.
    pub fn observe(
        &mut self,
        mac: MacAddr,
        vlan: Option<u16>,
        ap: AttachmentPoint,
        ip: Option<IpAddr>,
        now: Instant,
    ) -> Option<HostEvent> {
        if mac.is_multicast() || mac == MacAddr::ZERO {
            return None;
        }
        let key = HostKey {
            mac,
            vlan: normal_vlan(vlan),
        };
        let (slot, event) = match self.find(key.mac, key.vlan) {
            Some(slot) => {
                let h = self.host_mut(slot);
                h.last_seen = h.last_seen.max(now);
                let from = h.ap;
                h.ap = ap;
                (
                    slot,
                    (from != ap).then_some(HostEvent::Moved { key, from, to: ap }),
                )
            }
            None if self.len >= self.limits.max_hosts => {
                self.refused += 1;
                return None;
            }
            None => (
                self.insert(key, ap, now),
                Some(HostEvent::Added { key, ap }),
            ),
        };
        let ip_event = ip
            .filter(meaningful)
            .and_then(|ip| self.assign_ip(slot, ip, now));
        event.or(ip_event)
    }

    /// Removes the hosts not seen for `max_idle` or longer (`last_seen + max_idle <=
    /// now`). Returns at once, without allocating, when none can have timed out.
    pub fn expire(&mut self, now: Instant, max_idle: Duration) -> Vec<HostEvent> {
        if !self.ip_moves.is_empty() {
            self.ip_moves
                .retain(|_, m| now.saturating_duration_since(m.since) <= IP_MOVE_WINDOW);
        }
        // `last_seen + max_idle <= now` is `last_seen <= cutoff`: one comparison per
        // host, not an addition (which normalises nanoseconds) and a comparison. No
        // cutoff (before the clock's range) means no host can be that old.
        let (Some(oldest), Some(cutoff)) = (self.oldest, now.checked_sub(max_idle)) else {
            return Vec::new();
        };
        if oldest > cutoff {
            return Vec::new();
        }
        let mut events = Vec::new();
        // Starts at `now`, not at the first survivor's time: a bound may be low (a
        // survivor seen "after" now, by another thread's clock, keeps it valid), and
        // an empty table forgets it below.
        let mut new_oldest = now;
        for slot in 0..self.slots.len() {
            let Some(h) = &self.slots[slot] else { continue };
            if h.last_seen <= cutoff {
                let host = self.remove_slot(slot as u32);
                events.push(HostEvent::Removed { host });
            } else {
                new_oldest = new_oldest.min(h.last_seen);
            }
        }
        self.oldest = Some(new_oldest);
        self.compact_if_empty();
        events
    }

    /// Removes the host with this MAC on this VLAN.
    pub fn remove(&mut self, mac: MacAddr, vlan: Option<u16>) -> Option<Host> {
        let slot = self.find(mac, normal_vlan(vlan))?;
        let host = self.remove_slot(slot);
        self.compact_if_empty();
        Some(host)
    }

    /// Removes the hosts attached to port `port` of switch `dpid`: for when the port
    /// turns out to be an inter-switch link (what was learned there was a host behind
    /// another switch), or goes down. A scan of every host.
    pub fn remove_attached_to(&mut self, dpid: Dpid, port: u32) -> Vec<HostEvent> {
        let ap = AttachmentPoint { dpid, port };
        self.remove_where(|h| h.ap == ap)
    }

    /// Removes the hosts attached to switch `dpid`: for when it disconnects. A scan of
    /// every host.
    pub fn remove_switch(&mut self, dpid: Dpid) -> Vec<HostEvent> {
        self.remove_where(|h| h.ap.dpid == dpid)
    }

    fn remove_where(&mut self, pred: impl Fn(&Host) -> bool) -> Vec<HostEvent> {
        let mut events = Vec::new();
        for slot in 0..self.slots.len() {
            if self.slots[slot].as_ref().is_some_and(&pred) {
                let host = self.remove_slot(slot as u32);
                events.push(HostEvent::Removed { host });
            }
        }
        self.compact_if_empty();
        events
    }

    // The rest keeps the slots, the chains and the two address maps in agreement.

    /// The host in a live slot. Slots come from the indexes, which only name live ones.
    fn host(&self, slot: u32) -> &Host {
        self.slots[slot as usize]
            .as_ref()
            .expect("indexes name live slots")
    }

    fn host_mut(&mut self, slot: u32) -> &mut Host {
        self.slots[slot as usize]
            .as_mut()
            .expect("indexes name live slots")
    }

    fn find(&self, mac: MacAddr, vlan: Option<u16>) -> Option<u32> {
        let mut slot = self.by_mac.get(mac)?;
        while slot != NONE {
            let h = self.host(slot);
            if h.vlan == vlan {
                return Some(slot);
            }
            slot = h.next_same_mac;
        }
        None
    }

    fn ip_slot(&self, ip: IpAddr) -> Option<u32> {
        match ip {
            IpAddr::V4(a) => self.by_ipv4.get(&a).copied(),
            IpAddr::V6(a) => self.by_ipv6.get(&a).copied(),
        }
    }

    fn ip_index(&mut self, ip: IpAddr, slot: u32) {
        match ip {
            IpAddr::V4(a) => self.by_ipv4.insert(a, slot),
            IpAddr::V6(a) => self.by_ipv6.insert(a, slot),
        };
    }

    fn ip_unindex(&mut self, ip: IpAddr) {
        match ip {
            IpAddr::V4(a) => self.by_ipv4.remove(&a),
            IpAddr::V6(a) => self.by_ipv6.remove(&a),
        };
    }

    /// A new host (not in the table) in a free slot, at the head of its MAC's chain.
    fn insert(&mut self, key: HostKey, ap: AttachmentPoint, now: Instant) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let next_same_mac = self.by_mac.insert(key.mac, slot).unwrap_or(NONE);
        self.slots[slot as usize] = Some(Host {
            mac: key.mac,
            vlan: key.vlan,
            next_same_mac,
            ap,
            ips: Vec::new(),
            first_seen: now,
            last_seen: now,
        });
        self.len += 1;
        self.oldest = Some(self.oldest.map_or(now, |o| o.min(now)));
        slot
    }

    fn remove_slot(&mut self, slot: u32) -> Host {
        let host = self.slots[slot as usize]
            .take()
            .expect("removing a live slot");
        self.free.push(slot);
        self.len -= 1;
        // Unlink from the MAC's chain.
        let head = self.by_mac.get(host.mac);
        if head == Some(slot) {
            if host.next_same_mac == NONE {
                self.by_mac.remove(host.mac);
            } else {
                self.by_mac.insert(host.mac, host.next_same_mac);
            }
        } else {
            let mut at = head.unwrap_or(NONE);
            while at != NONE {
                let h = self.host_mut(at);
                if h.next_same_mac == slot {
                    h.next_same_mac = host.next_same_mac;
                    break;
                }
                at = h.next_same_mac;
            }
        }
        for &ip in &host.ips {
            self.ip_unindex(ip);
        }
        host
    }

    /// After removals: once nothing is left, gives the slots back and forgets the bound.
    /// Counts a change of hands of `ip` at `now`; false if the address is contested.
    fn may_move(&mut self, ip: IpAddr, now: Instant) -> bool {
        let m = self.ip_moves.entry(ip).or_insert(IpMoves {
            since: now,
            moves: 0,
        });
        if now.saturating_duration_since(m.since) > IP_MOVE_WINDOW {
            *m = IpMoves {
                since: now,
                moves: 0,
            };
        }
        if m.moves >= MAX_IP_MOVES {
            return false;
        }
        m.moves += 1;
        true
    }

    fn compact_if_empty(&mut self) {
        if self.len == 0 {
            self.slots.clear();
            self.free.clear();
            self.oldest = None;
        }
    }

    /// Gives `ip` to the host in `slot` as its most recently seen address, taking it
    /// from the host that had it.
    fn assign_ip(&mut self, slot: u32, ip: IpAddr, now: Instant) -> Option<HostEvent> {
        if self.limits.max_ips_per_family == 0 {
            return None;
        }
        // Known (the common case): make it the most recent. The host's own list is
        // already in cache; the index, which agrees with it, need not be looked up.
        let ips = &mut self.host_mut(slot).ips;
        if let Some(i) = ips.iter().position(|a| *a == ip) {
            ips[i..].rotate_left(1);
            return None;
        }
        let from = match self.ip_slot(ip) {
            Some(_) if !self.may_move(ip, now) => {
                self.contested += 1;
                return None;
            }
            Some(owner) => {
                let h = self.host_mut(owner);
                h.ips.retain(|a| *a != ip);
                Some(h.key())
            }
            None => None,
        };
        let max = self.limits.max_ips_per_family;
        let h = self.host_mut(slot);
        let key = h.key();
        let dropped = if h.ips.iter().filter(|a| same_family(a, &ip)).count() >= max {
            let i = h
                .ips
                .iter()
                .position(|a| same_family(a, &ip))
                .expect("a full family has a first address");
            Some(h.ips.remove(i))
        } else {
            None
        };
        // Grown one at a time: most hosts have one or two addresses.
        h.ips.reserve_exact(1);
        h.ips.push(ip);
        if let Some(old) = dropped {
            self.ip_unindex(old);
        }
        self.ip_index(ip, slot);
        Some(HostEvent::IpAdded { key, ip, from })
    }
}

fn normal_vlan(vlan: Option<u16>) -> Option<u16> {
    vlan.filter(|&v| v != 0)
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
