//! The routes the routing app installed: a slab found by key (the PACKET_IN's
//! addresses and VLAN), by cookie (which names its slot) and by host (chained through
//! the slots), with the order they were installed in for eviction. Pure: no I/O, no
//! lock (the app holds it behind one).
//!
//! The key index is open-addressed ([`crate::key_index`]) so that a PACKET_IN still in
//! the worker's read buffer can ask for the line its look-up will read ([`prefetch`]),
//! before the handlers run and take the lock.

use std::collections::{HashMap, VecDeque};

use controller::app::Dpid;
use openflow::model::{Match, Vlan};
use openflow::MacAddr;

use super::route::{PortHop, Route};
use crate::key_index::{Hint, KeyIndex};

/// The top 16 bits of every cookie this app's flows carry: its tag, which the core
/// stamps ([`controller::app::app_tag`]); the low 48 bits number the route.
pub const COOKIE_TAG: u64 = controller::app::with_tag(controller::app::app_tag("routing"), 0);
/// The bits of a cookie that number the route.
pub const COOKIE_SEQ: u64 = (1 << 48) - 1;

/// Asks for the line of the route index where step 4 will look up the route of the
/// frame `f` of a PACKET_IN still in the read buffer: while at least 8 of the switch's
/// last 32 PACKET_INs looked a route up (`lookups`, a bit each), so that a switch whose
/// packets are flooded pays no hash per packet. Not the repeat check's line: its sets
/// (1.5 KB a switch) stay in cache, and asking for their line ahead cost a second hash
/// of each frame and waited on the line of the switch's state (5% fewer PACKET_INs/s
/// under cbench's load, 5 of 6 alternated pairs).
pub(super) fn prefetch(hint: &Hint, lookups: u32, f: &[u8]) {
    if lookups.count_ones() < 8 || hint.is_unused() {
        return;
    }
    if let Some(key) = Key::of_frame(f) {
        hint.prefetch(hint.hash(&key));
    }
}

/// What a route's flows match, besides the in_port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key {
    pub(super) src: MacAddr,
    pub(super) dst: MacAddr,
    pub(super) vlan: Option<u16>,
}

impl std::hash::Hash for Key {
    /// As one number: the prefetch hint hashes every PACKET_IN's key, and the derived
    /// hash wrote each field (and each address's length) apart.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mac = |m: MacAddr| {
            let a = m.0;
            u64::from_be_bytes([0, 0, a[0], a[1], a[2], a[3], a[4], a[5]])
        };
        let vlan = self.vlan.map_or(0, |v| u128::from(v) | 1 << 16);
        state.write_u128(u128::from(mac(self.src)) << 65 | u128::from(mac(self.dst)) << 17 | vlan);
    }
}

impl Key {
    pub(super) fn matching(&self, in_port: u32) -> Match {
        Match {
            in_port: Some(in_port),
            eth_src: Some(self.src),
            eth_dst: Some(self.dst),
            vlan: self.vlan.map(Vlan::Id),
            ..Match::default()
        }
    }

    /// Its hosts, as `Routes::by_host` indexes them: (src, VLAN), and (dst, VLAN) unless
    /// the same.
    fn ends(&self) -> impl Iterator<Item = (MacAddr, Option<u16>)> {
        let dst = (self.dst != self.src).then_some((self.dst, self.vlan));
        std::iter::once((self.src, self.vlan)).chain(dst)
    }

    /// The key of a raw frame, as the prefetch hint guesses it before the core checked
    /// anything: the addresses, and the first tag's VLAN as step 1 reads it (an 802.1ad
    /// outer tag is read as a VLAN too there; missed here, the hint is only a hint).
    /// `None`: too short, or to a group (never looked up).
    fn of_frame(f: &[u8]) -> Option<Key> {
        let (dst, src) = (f.get(..6)?, f.get(6..12)?);
        let dst = MacAddr(dst.try_into().expect("six bytes"));
        if dst.is_multicast() {
            return None;
        }
        let vlan = match f.get(12..16) {
            Some(&[0x81, 0x00, hi, lo]) => Some(u16::from_be_bytes([hi, lo]) & 0xfff),
            _ => None,
        };
        Some(Key {
            src: MacAddr(src.try_into().expect("six bytes")),
            dst,
            vlan,
        })
    }
}

/// An installed route: the switches' route, entered on `in_port` of its first switch,
/// left by `out_port` of its last.
#[derive(Debug, Clone)]
pub(super) struct Installed {
    pub(super) cookie: u64,
    pub(super) route: Route,
    pub(super) in_port: u32,
    pub(super) out_port: u32,
}

impl Installed {
    /// Its flows, one per switch, first switch first.
    pub(super) fn hops(&self) -> impl Iterator<Item = PortHop> + '_ {
        self.route.path_ports(self.in_port, self.out_port)
    }

    /// Whether one of its flows is on `dpid` and matches `in_port`.
    pub(super) fn has_flow(&self, dpid: Dpid, in_port: u32) -> bool {
        self.hops().any(|h| (h.dpid, h.in_port) == (dpid, in_port))
    }
}

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A host, as routes name their ends: (MAC, VLAN).
pub(super) type Host = (MacAddr, Option<u16>);

/// No slot, no node.
const NIL: u32 = u32::MAX;
/// A cookie's low 24 bits name the route's slot, the next 24 its generation.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Routes at most, whatever `max_routes` says (slots are numbered in 24 bits).
const MAX_SLOTS: usize = 1 << SLOT_BITS;

/// One installed route in the slab, and its places in its hosts' chains.
pub(super) struct Slot {
    key: Key,
    /// `None`: a free slot.
    installed: Option<Installed>,
    /// Bumped each time the slot is taken, so that a FLOW_REMOVED of a route that was
    /// here before names no route.
    generation: u64,
    /// Each end's neighbours in its host's chain, as nodes (`slot << 1 | end`; end 0 is
    /// the source host, end 1 the destination's).
    next: [u32; 2],
    prev: [u32; 2],
}

/// The installed routes: a slab of [`Slot`]s, found by key and by cookie (which names
/// the slot and its generation: no map from cookies), with each host's routes chained
/// through the slots (no list allocated per host) and the order they were installed in,
/// for eviction. A new route costs three map operations of which one inserts a key, a
/// removed one about as many (a host's chain head is in `by_host`).
#[derive(Default)]
pub(super) struct Routes {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Key → slot: an index whose look-up a PACKET_IN still in the read buffer can
    /// ask for ([`crate::key_index`]); a slot's key says which entry is whose.
    by_key: KeyIndex,
    /// Each host's newest route end (a node); the chain runs through `Slot::next`.
    by_host: Map<Host, u32>,
    /// (slot, generation) of every route in the order installed, oldest first, to evict
    /// the oldest in constant time when the map is full (taking a hash map's first key
    /// instead scans the emptied buckets at its front: with 100,000 routes evicted and
    /// installed per PACKET_IN, that was half the CPU time). Entries of routes removed
    /// since are skipped when met, and dropped when they outnumber the routes.
    order: VecDeque<(u32, u64)>,
    /// The first generation of a new slot; random, so a FLOW_REMOVED of a flow
    /// installed before a restart is unlikely to name a route of this run.
    seed: u64,
}

impl Routes {
    pub(super) fn with_seed(seed: u64) -> Routes {
        Routes {
            seed: seed & SLOT_MASK,
            ..Routes::default()
        }
    }

    pub(super) fn len(&self) -> usize {
        self.by_key.len()
    }

    /// The prefetch hint of the key index: the same through every [`Routes::start_over`].
    pub(super) fn hint(&self) -> &std::sync::Arc<Hint> {
        self.by_key.hint()
    }

    /// Whether no slot is left for a new route (the slab's own bound).
    pub(super) fn full(&self) -> bool {
        self.free.is_empty() && self.slots.len() >= MAX_SLOTS - 1
    }

    pub(super) fn get(&self, key: &Key) -> Option<&Installed> {
        let h = self.by_key.hint().hash(key);
        let slot = self.by_key.get(h, |s| self.slots[s as usize].key == *key)?;
        self.slots[slot as usize].installed.as_ref()
    }

    fn cookie(slot: u32, generation: u64) -> u64 {
        COOKIE_TAG | (generation & SLOT_MASK) << SLOT_BITS | u64::from(slot)
    }

    /// The route `cookie` names, if it is still installed.
    pub(super) fn key_of_cookie(&self, cookie: u64) -> Option<Key> {
        if cookie & !COOKIE_SEQ != COOKIE_TAG {
            return None;
        }
        let s = self.slots.get((cookie & SLOT_MASK) as usize)?;
        let generation = (cookie >> SLOT_BITS) & SLOT_MASK;
        (s.installed.is_some() && s.generation & SLOT_MASK == generation).then_some(s.key)
    }

    /// Installs `route` for `key` (replacing the one it had).
    pub(super) fn insert(
        &mut self,
        key: Key,
        route: Route,
        in_port: u32,
        out_port: u32,
    ) -> &Installed {
        self.remove(key);
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = self.slots.len() as u32;
                self.slots.push(Slot {
                    key,
                    installed: None,
                    generation: self.first_generation(slot),
                    next: [NIL; 2],
                    prev: [NIL; 2],
                });
                slot
            }
        };
        let generation = {
            let s = &mut self.slots[slot as usize];
            s.generation = s.generation.wrapping_add(1);
            s.key = key;
            s.generation
        };
        for (end, host) in key.ends().enumerate() {
            let node = slot << 1 | end as u32;
            let old = self.by_host.insert(host, node).unwrap_or(NIL);
            if old != NIL {
                self.slots[(old >> 1) as usize].prev[(old & 1) as usize] = node;
            }
            let s = &mut self.slots[slot as usize];
            s.next[end] = old;
            s.prev[end] = NIL;
        }
        let h = self.by_key.hint().hash(&key);
        self.by_key.insert(h, slot);
        self.order.push_back((slot, generation));
        if self.order.len() > 2 * self.by_key.len() + 64 {
            let slots = &self.slots;
            self.order.retain(|&(slot, g)| {
                let s = &slots[slot as usize];
                s.installed.is_some() && s.generation == g || g == generation
            });
        }
        let s = &mut self.slots[slot as usize];
        s.installed.insert(Installed {
            cookie: Routes::cookie(slot, generation),
            route,
            in_port,
            out_port,
        })
    }

    pub(super) fn remove(&mut self, key: Key) -> Option<Installed> {
        let h = self.by_key.hint().hash(&key);
        let slots = &self.slots;
        let slot = self.by_key.remove(h, |s| slots[s as usize].key == key)?;
        for (end, host) in key.ends().enumerate() {
            let s = &self.slots[slot as usize];
            let (prev, next) = (s.prev[end], s.next[end]);
            if prev == NIL {
                match next {
                    NIL => self.by_host.remove(&host),
                    n => self.by_host.insert(host, n),
                };
            } else {
                self.slots[(prev >> 1) as usize].next[(prev & 1) as usize] = next;
            }
            if next != NIL {
                self.slots[(next >> 1) as usize].prev[(next & 1) as usize] = prev;
            }
        }
        self.free.push(slot);
        let installed = self.slots[slot as usize].installed.take();
        if self.by_key.is_empty() {
            self.start_over();
        }
        installed
    }

    /// The generation a new slot starts from (bumped as it is taken).
    fn first_generation(&self, slot: u32) -> u64 {
        self.seed.wrapping_add(u64::from(slot).wrapping_mul(0x9e37))
    }

    /// Empties the slab and starts it over, keeping the index, whose hint the app
    /// holds (`remove` calls it when the last route goes, a stop at any time). The
    /// next routes then take slots in the order they come, as in a new slab, not last
    /// freed first: against one controller left running, the default apps' rate
    /// alternated between consecutive bench runs by a quarter, the routes of every
    /// other run laid out in reverse. The seed moves past every generation used, so a
    /// FLOW_REMOVED of a route from before names no new route (until a slot is taken
    /// 2^24 times).
    pub(super) fn start_over(&mut self) {
        let used = (0u32..)
            .zip(&self.slots)
            .map(|(i, s)| s.generation.wrapping_sub(self.first_generation(i)) & SLOT_MASK)
            .max()
            .unwrap_or(0);
        let seed = self.seed.wrapping_add(used);
        let mut by_key = std::mem::take(&mut self.by_key);
        by_key.clear();
        *self = Routes {
            by_key,
            ..Routes::with_seed(seed)
        };
    }

    /// Removes and returns the route installed first of those still installed.
    pub(super) fn evict_oldest(&mut self) -> Option<(Key, Installed)> {
        while let Some((slot, generation)) = self.order.pop_front() {
            let s = &self.slots[slot as usize];
            if s.installed.is_some() && s.generation == generation {
                let key = s.key;
                return Some((key, self.remove(key)?));
            }
        }
        None
    }

    /// The routes from or to `host`, newest first.
    pub(super) fn of_host(&self, host: Host) -> Vec<Key> {
        let mut keys = Vec::new();
        let mut node = self.by_host.get(&host).copied().unwrap_or(NIL);
        while node != NIL {
            let s = &self.slots[(node >> 1) as usize];
            keys.push(s.key);
            node = s.next[(node & 1) as usize];
        }
        keys
    }

    /// Removes and returns the routes `stale` picks.
    pub(super) fn take(
        &mut self,
        mut stale: impl FnMut(&Key, &Installed) -> bool,
    ) -> Vec<(Key, Installed)> {
        let keys: Vec<Key> = self
            .slots
            .iter()
            .filter_map(|s| Some((s.key, s.installed.as_ref()?)))
            .filter(|(k, r)| stale(k, r))
            .map(|(k, _)| k)
            .collect();
        keys.into_iter()
            .filter_map(|k| Some((k, self.remove(k)?)))
            .collect()
    }
}

#[cfg(test)]
#[path = "routes_tests.rs"]
mod tests;
