//! The `routing` app: unicast on shortest paths, flooding on a spanning tree, so a
//! network with loops neither storms nor loses its traffic when a link goes.
//!
//! For each PACKET_IN (direct phase: `topology` has taken LLDP, `device_manager` has
//! learned the source):
//!
//! 1. Reads the destination and outer VLAN of the frame.
//! 2. Broadcast, multicast, or a destination that is unknown: floods, by the policy
//!    of [`flood`] (tree and edge ports; copies that went around a loop,
//!    known or not yet, dropped).
//! 3. The destination is behind the port the packet came in on: dropped.
//! 4. The route for (source, destination, VLAN) is installed already and passes here,
//!    entering by this port: the packet overtook the flow installed for it. That flow
//!    is sent again (in case it was lost), and the packet goes on out of the route's
//!    port here: on the FLOW_MOD if the switch buffered it (its buffer_id: the switch
//!    applies the new flow to it, 1.0.0 §5.3.3, 1.3.5 §7.3.4.1), else in a PACKET_OUT.
//! 5. Otherwise: the route from this switch to the destination's, one flow per switch
//!    from the destination end back (match in_port, eth_src, eth_dst and the VLAN if
//!    tagged; idle timeout; a cookie naming the route; FLOW_REMOVED asked of the first
//!    switch), this switch's last, then the packet out of this switch's port on the
//!    route (riding on this switch's FLOW_MOD if buffered, as in 4). A destination on
//!    this switch is a route of one flow.
//!    - 5a. No route reaches the destination's switch (discovery has not found the
//!      links between, at start-up): no flow; the controller sends the packet straight
//!      out of the destination's port on its switch ([`flood::deliver`]), so it
//!      crosses no cable and cannot come back around a loop. Flooded if it cannot.
//!
//! Topology events, heard through a subscription to [`Topology`] (under this app's
//! panic guard), update the engine and the tree. Every installed route the change
//! affects is removed: its flows are deleted (strict) on every switch of its old path,
//! so the next packet takes the new path, computed at step 5. A host that moves or is forgotten (`Devices` events) takes the
//! routes to and from it along the same way.
//!
//! **The installed routes** are what link, host and FLOW_REMOVED events act on, so a
//! route must never be forgotten while its flows live, and the map must be bounded: a
//! route leaves it when its first switch's flow is removed (FLOW_REMOVED, usually the
//! idle timeout), when a change removes it, or when the map is full and it is evicted
//! (its flows deleted). A timer cannot do it: flows that carry traffic never come back
//! to the controller, so a route forgotten while its flows live would blackhole that
//! traffic for good when a link on it fails.
//!
//! **Locks.** `net` (engine and tree) is read by every PACKET_IN that computes a route
//! (step 5) and written by topology events; `routes` is taken after `net`, never
//! before, written, with flows sent while holding it, to install or remove a route, so
//! a route's adds and deletes leave in the order they were decided. Step 4 reads
//! `routes` alone (and lets it go before step 5 takes `net`): a topology event that
//! removes the route it found waits for that read, so its deletes follow the add.
//! A flood takes no lock and reads the tree only when it changed: each switch keeps its
//! flood plan (the ports of 2a and 2c) in its own state, computed again after a
//! topology event (the tree's version, an atomic, says so) or a PORT_STATUS.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use controller::app::PacketIn;
use controller::app::{App, Builder, Counter, Flow, MessageKind, Order, Required, SwitchCtx};
use controller::info::Dpid;
use controller::reconcile::Adopt;
use controller::services::{Services, StartError};
use controller::switches::Switches;
use openflow::model::{Action, FlowMod, FlowModCommand, FlowRemoved, Match, PortNo, Vlan};
use openflow::{MacAddr, Message};
use serde::Deserialize;

use super::flood::{self, send, Floods};
use super::{PortHop, Route, RoutingEngine, ShortestPaths, SpanningTree};
use crate::devices::table::HostEvent;
use crate::devices::Devices;
use crate::key_index::{self, KeyIndex};
use crate::learning_switch::send_misses_to_controller;
use crate::topology::{LinkGone, Topology, TopologyEvent};

/// The routing app's parameters (`[apps.params]` in `pharos.toml`). Timeouts
/// are whole seconds: a number (`60`) or a duration (`"60s"`, `"1m"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Seconds without traffic before a route's flows expire (default 10).
    #[serde(deserialize_with = "controller::config::whole_seconds::deserialize")]
    pub idle_timeout: u16,
    /// Seconds before a route's flows expire regardless (default 0: never).
    #[serde(deserialize_with = "controller::config::whole_seconds::deserialize")]
    pub hard_timeout: u16,
    /// Priority of the routes' flows (default 0x8000, OpenFlow's default).
    pub priority: u16,
    /// Routes installed at once at most (default 100,000); beyond, the oldest installed
    /// is evicted (its flows deleted).
    pub max_routes: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            idle_timeout: 10,
            hard_timeout: 0,
            priority: FlowMod::DEFAULT_PRIORITY,
            max_routes: 100_000,
        }
    }
}

/// The top 16 bits of every cookie this app's flows carry: its tag, which the core
/// stamps ([`controller::cookie`]); the low 48 bits number the route.
pub const COOKIE_TAG: u64 = controller::cookie::with_tag(controller::cookie::app_tag("routing"), 0);
/// The bits of a cookie that number the route.
pub const COOKIE_SEQ: u64 = (1 << 48) - 1;

/// The app.
pub struct Routing {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing")
            .field("params", &self.shared.params)
            .finish_non_exhaustive()
    }
}

/// What the handlers and the subscribers share.
struct Shared {
    params: Params,
    /// Hashes flooded and delivered frames (for the repeat check); seeded at random, so
    /// no one can craft a frame that passes for another.
    hasher: foldhash::fast::RandomState,
    /// The engine and the tree, fed by topology events.
    net: RwLock<Net>,
    /// `net.version`, stored under its write lock as a topology event begins: a flood
    /// whose switch's plan is at this version reads no lock. (One that loaded it just
    /// before an event floods by the plan from before, as if it had come a moment
    /// earlier.)
    version: AtomicU64,
    /// The routes whose flows are installed. Read-locked to find a route a packet
    /// overtook (step 4); written to install or remove one.
    routes: RwLock<Routes>,
    /// The prefetch hint of `routes`'s index, readable without its lock.
    routes_hint: Arc<key_index::Hint>,
    /// The services it requires.
    topology: Required<Topology>,
    devices: Required<Devices>,
    switches: Required<Switches>,
    /// Routes computed and installed, and routes evicted at `max_routes`: published
    /// (`pharos_app_events_total{app="routing"}`).
    routes_installed: Counter,
    routes_evicted: Counter,
}

struct Net {
    engine: Box<dyn RoutingEngine>,
    tree: SpanningTree,
    /// Bumped by every topology event: the switches' flood plans ([`Floods`]) are
    /// computed again after it.
    version: u64,
}

/// What a route's flows match, besides the in_port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    src: MacAddr,
    dst: MacAddr,
    vlan: Option<u16>,
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
    fn matching(&self, in_port: u32) -> Match {
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
}

/// An installed route: the switches' route, entered on `in_port` of its first switch,
/// left by `out_port` of its last.
#[derive(Debug, Clone)]
struct Installed {
    cookie: u64,
    route: Route,
    in_port: u32,
    out_port: u32,
}

impl Installed {
    /// Its flows, one per switch, first switch first.
    fn hops(&self) -> impl Iterator<Item = PortHop> + '_ {
        self.route.path_ports(self.in_port, self.out_port)
    }

    /// Whether one of its flows is on `dpid` and matches `in_port`.
    fn has_flow(&self, dpid: u64, in_port: u32) -> bool {
        self.hops()
            .any(|h| (h.dpid.0, h.in_port) == (dpid, in_port))
    }
}

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A host, as routes name their ends: (MAC, VLAN).
type Host = (MacAddr, Option<u16>);

/// No slot, no node.
const NIL: u32 = u32::MAX;
/// A cookie's low 24 bits name the route's slot, the next 24 its generation.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Routes at most, whatever `max_routes` says (slots are numbered in 24 bits).
const MAX_SLOTS: usize = 1 << SLOT_BITS;

/// One installed route in the slab, and its places in its hosts' chains.
struct Slot {
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
struct Routes {
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
    fn with_seed(seed: u64) -> Routes {
        Routes {
            seed: seed & SLOT_MASK,
            ..Routes::default()
        }
    }

    fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether no slot is left for a new route (the slab's own bound).
    fn full(&self) -> bool {
        self.free.is_empty() && self.slots.len() >= MAX_SLOTS - 1
    }

    fn get(&self, key: &Key) -> Option<&Installed> {
        let h = self.by_key.hint().hash(key);
        let slot = self.by_key.get(h, |s| self.slots[s as usize].key == *key)?;
        self.slots[slot as usize].installed.as_ref()
    }

    fn cookie(slot: u32, generation: u64) -> u64 {
        COOKIE_TAG | (generation & SLOT_MASK) << SLOT_BITS | u64::from(slot)
    }

    /// The route `cookie` names, if it is still installed.
    fn key_of_cookie(&self, cookie: u64) -> Option<Key> {
        if cookie & !COOKIE_SEQ != COOKIE_TAG {
            return None;
        }
        let s = self.slots.get((cookie & SLOT_MASK) as usize)?;
        let generation = (cookie >> SLOT_BITS) & SLOT_MASK;
        (s.installed.is_some() && s.generation & SLOT_MASK == generation).then_some(s.key)
    }

    /// Installs `route` for `key` (replacing the one it had).
    fn insert(&mut self, key: Key, route: Route, in_port: u32, out_port: u32) -> &Installed {
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

    fn remove(&mut self, key: Key) -> Option<Installed> {
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
    fn start_over(&mut self) {
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
    fn evict_oldest(&mut self) -> Option<(Key, Installed)> {
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
    fn of_host(&self, host: Host) -> Vec<Key> {
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
    fn take(&mut self, mut stale: impl FnMut(&Key, &Installed) -> bool) -> Vec<(Key, Installed)> {
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

impl Routing {
    /// The app with the default engine, [`ShortestPaths`].
    pub fn new(params: Params) -> Routing {
        Routing::with_engine(params, Box::new(ShortestPaths::new()))
    }

    /// The app with another routing engine (empty: topology events fill it).
    pub fn with_engine(params: Params, engine: Box<dyn RoutingEngine>) -> Routing {
        let mut seed = [0u8; 8];
        // Without randomness the cookies start at 0: only a restart's stale
        // FLOW_REMOVED could then end a route early (its next packet reinstalls it).
        let _ = getrandom::fill(&mut seed);
        let routes = Routes::with_seed(u64::from_le_bytes(seed));
        let routes_hint = Arc::clone(routes.by_key.hint());
        let net = Net {
            engine,
            tree: SpanningTree::new(),
            version: 0,
        };
        Routing {
            shared: Arc::new(Shared {
                params,
                hasher: foldhash::fast::RandomState::default(),
                net: RwLock::new(net),
                version: AtomicU64::new(0),
                routes: RwLock::new(routes),
                routes_hint,
                topology: Required::new(),
                devices: Required::new(),
                switches: Required::new(),
                routes_installed: Counter::new(),
                routes_evicted: Counter::new(),
            }),
        }
    }

    pub fn params(&self) -> Params {
        self.shared.params
    }

    /// Routes installed now.
    pub fn installed(&self) -> usize {
        self.shared.routes().len()
    }
}

/// The routing app's read-only query service: the route its engine gives now, for the
/// REST API's `/paths` and any app that wants to know. Provided by the app, so it is
/// there exactly when routing runs. A query takes the engine's read lock, as a
/// PACKET_IN for a known host does: readers do not wait for each other, and a topology
/// event waits for the query as it waits for a PACKET_IN.
pub struct Paths {
    /// The app's state (its engine).
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Paths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paths").finish_non_exhaustive()
    }
}

impl Paths {
    /// The route from switch `src` to switch `dst` (no links when they are the same
    /// switch); `None` when the engine knows no way, or does not know either switch.
    pub fn route(&self, src: u64, dst: u64) -> Option<Route> {
        self.shared.net().engine.route(Dpid(src), Dpid(dst))
    }
}

impl App for Routing {
    type State = Floods;

    fn name(&self) -> &'static str {
        "routing"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_adopt(|_, ctx, _, e| adopt(ctx.info(), &e.flow));
        b.on_initialize(|_, ctx, _| send_misses_to_controller(ctx));
        b.on_packet_in(Order::direct(0), Routing::packet_in);
        // The line of the route index where step 4 looks the packet's route up. Not
        // the repeat check's: its sets (1.5 KB a switch) stay in cache, and asking for
        // their line ahead cost a second hash of each frame and waited on the line of
        // the switch's state (5% fewer PACKET_INs/s under cbench's load, 5 of 6
        // alternated pairs).
        b.prefetch_packet_in(|app, floods, p| {
            let hint = &app.shared.routes_hint;
            if floods.lookups.count_ones() < 8 || hint.is_unused() {
                return;
            }
            let f = p.data();
            let (Some(dst), Some(src)) = (f.get(..6), f.get(6..12)) else {
                return;
            };
            let dst = MacAddr(dst.try_into().expect("six bytes"));
            if dst.is_multicast() {
                return;
            }
            // The first tag's VLAN, as step 1 reads it (an 802.1ad outer tag is
            // read as a VLAN too there; missed here, the hint is only a hint).
            let vlan = match f.get(12..16) {
                Some(&[0x81, 0x00, hi, lo]) => Some(u16::from_be_bytes([hi, lo]) & 0xfff),
                _ => None,
            };
            let key = Key {
                src: MacAddr(src.try_into().expect("six bytes")),
                dst,
                vlan,
            };
            hint.prefetch(hint.hash(&key));
        });
        let shared = &self.shared;
        b.counter(
            "routes_installed",
            "Routes computed and their flows installed",
            &shared.routes_installed,
        );
        b.counter(
            "routes_evicted",
            "Routes evicted (their flows deleted) to stay under max_routes",
            &shared.routes_evicted,
        );
        // The switch's ports changed: its flood plan is computed again.
        b.on_port_status(|_, _, floods, _, _| floods.replan());
        b.require_into(&self.shared.topology);
        b.require_into(&self.shared.devices);
        b.require_into(&self.shared.switches);
        b.subscribe::<Topology, _>(|app, e| app.shared.topology_event(e));
        b.subscribe::<Devices, _>(|app, e| app.shared.host_event(e));
        b.provide(Arc::new(Paths {
            shared: Arc::clone(&self.shared),
        }));
        b.on_message(
            MessageKind::FlowRemoved,
            Order::direct(0),
            |app, _, _, m| {
                app.shared.flow_removed(m);
                Flow::Continue
            },
        );
    }

    fn start(&self, _: &Services) -> Result<(), StartError> {
        let topology = &self.shared.topology;
        // What the topology knew before we listened (subscribed in `build`, before
        // this start; adding twice is harmless).
        let snapshot = topology.snapshot();
        for &dpid in snapshot.switches().keys() {
            self.shared
                .topology_event(&TopologyEvent::SwitchAdded(dpid));
        }
        for &link in snapshot.links() {
            self.shared.topology_event(&TopologyEvent::LinkAdded(link));
        }
        Ok(())
    }

    /// Forgets the links and the routes (the core deletes the app's flows from every
    /// switch after this): a later start learns the topology again from its snapshot,
    /// and links that went while it was stopped must not stay in its tables.
    fn stop(&self) {
        let links = {
            let net = self.shared.net.read().unwrap_or_else(|e| e.into_inner());
            net.tree.links().to_vec()
        };
        for link in links {
            let gone = TopologyEvent::LinkRemoved(link, LinkGone::SwitchLeft);
            self.shared.topology_event(&gone);
        }
        // A later start's routes take other generations: a FLOW_REMOVED of a flow
        // deleted by this stop names none of them. The index is emptied, not
        // replaced: `routes_hint` stays its hint.
        self.shared.routes().start_over();
    }
}

impl Routing {
    fn packet_in(&self, ctx: &mut SwitchCtx, floods: &mut Floods, p: &PacketIn) -> Flow {
        let devices = &self.shared.devices;
        let Some(eth) = p.eth() else {
            return Flow::Continue;
        };
        // 1
        let vlan = match eth.vlan_tags().next() {
            Some(Ok(tag)) => Some(tag.tag.vid()),
            Some(Err(_)) => return Flow::Continue,
            None => None,
        };
        let key = Key {
            src: eth.src_addr(),
            dst: eth.dst_addr(),
            vlan,
        };
        let (here, in_port) = (ctx.dpid().0, p.in_port());
        let attached = if key.dst.is_multicast() {
            None
        } else {
            devices.attachment(key.dst, vlan)
        };
        floods.lookups = floods.lookups << 1 | u32::from(attached.is_some());
        let Some((dst_sw, dst_port)) = attached else {
            return self.shared.flood(ctx, floods, p); // 2
        };
        // 3
        if (dst_sw, dst_port) == (here, in_port) {
            return Flow::Stop;
        }
        // 4
        if let Some(r) = self.shared.routes_read().get(&key) {
            let mut hops = r.hops().enumerate();
            if let Some((i, hop)) = hops.find(|(_, h)| (h.dpid.0, h.in_port) == (here, in_port)) {
                self.shared
                    .add_flow(ctx, &key, r.cookie, hop, i == 0, p.buffer_id());
                if p.buffer_id().is_none() {
                    send(ctx, p, &[Action::output(PortNo::from_u32(hop.out_port))]);
                }
                return Flow::Stop;
            }
        }
        // 5 (step 4 needs no engine: `net` is taken only now)
        let net = self.shared.net();
        let route = match net.engine.route(Dpid(here), Dpid(dst_sw)) {
            Some(r) => r,
            None if here == dst_sw => Route {
                src: Dpid(here),
                dst: Dpid(here),
                links: Vec::new(),
            },
            // 5a
            None if self.shared.deliver(ctx, floods, p, dst_sw, dst_port) => return Flow::Stop,
            None => return self.shared.flood_with(&net, ctx, floods, p),
        };
        let mut routes = self.shared.routes();
        let old = routes.remove(key);
        if routes.len() >= self.shared.params.max_routes || routes.full() {
            if let Some((k, r)) = routes.evict_oldest() {
                self.shared.routes_evicted.inc();
                self.shared.delete_flows(&k, &r, |_| true);
            }
        }
        let r = routes.insert(key, route, in_port, dst_port);
        self.shared.routes_installed.inc();
        if let Some(old) = old {
            // Its flows where the new route has none of the same match.
            self.shared
                .delete_flows(&key, &old, |h| !r.has_flow(h.dpid.0, h.in_port));
        }
        let hops = &mut floods.hops;
        hops.clear();
        hops.extend(r.hops());
        // The last hop first, this switch's last: a buffered packet rides on this
        // switch's FLOW_MOD (the switch applies the new flow to it: one message, as the
        // learning switch answers); one not buffered follows in a PACKET_OUT.
        for (i, &hop) in hops.iter().enumerate().rev() {
            let buffer = p.buffer_id().filter(|_| i == 0);
            self.shared
                .add_flow(ctx, &key, r.cookie, hop, i == 0, buffer);
        }
        let first = hops.first().map(|h| h.out_port);
        if let (Some(out), None) = (first, p.buffer_id()) {
            send(ctx, p, &[Action::output(PortNo::from_u32(out))]);
        }
        Flow::Stop
    }
}

impl Shared {
    /// Step 2, not holding `net`: the tree is read only if the switch's flood plan is
    /// older than it (the common case reads one atomic, no lock).
    fn flood(&self, ctx: &mut SwitchCtx, floods: &mut Floods, p: &PacketIn) -> Flow {
        if !floods.is_planned(self.version.load(Ordering::Acquire)) {
            let net = self.net();
            floods.plan(&net.tree, net.version, ctx.info());
        }
        flood::flood(&self.hasher, ctx, floods, p)
    }

    /// Step 2, holding `net`.
    fn flood_with(
        &self,
        net: &Net,
        ctx: &mut SwitchCtx,
        floods: &mut Floods,
        p: &PacketIn,
    ) -> Flow {
        floods.plan(&net.tree, net.version, ctx.info());
        flood::flood(&self.hasher, ctx, floods, p)
    }

    /// Step 5a.
    fn deliver(
        &self,
        ctx: &mut SwitchCtx,
        floods: &mut Floods,
        p: &PacketIn,
        dpid: u64,
        port: u32,
    ) -> bool {
        flood::deliver(ctx, floods, &self.hasher, p, dpid, port)
    }

    fn net(&self) -> std::sync::RwLockReadGuard<'_, Net> {
        self.net.read().unwrap_or_else(|e| e.into_inner())
    }

    fn routes(&self) -> RwLockWriteGuard<'_, Routes> {
        self.routes.write().unwrap_or_else(|e| e.into_inner())
    }

    fn routes_read(&self) -> RwLockReadGuard<'_, Routes> {
        self.routes.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends the flow of one hop of a route (through `ctx` on this switch, through
    /// `Switches` elsewhere). The first switch's flow asks for FLOW_REMOVED. `buffer`:
    /// the packet buffered on this switch that the flow applies to.
    fn add_flow(
        &self,
        ctx: &mut SwitchCtx,
        key: &Key,
        cookie: u64,
        hop: PortHop,
        first: bool,
        buffer: Option<u32>,
    ) {
        let actions = [Action::output(PortNo::from_u32(hop.out_port))];
        let mut fm = FlowMod::add(key.matching(hop.in_port), &actions)
            .cookie(cookie)
            .idle_timeout(self.params.idle_timeout)
            .hard_timeout(self.params.hard_timeout)
            .priority(self.params.priority);
        if first {
            fm = fm.send_flow_removed();
        }
        if hop.dpid == ctx.dpid() {
            ctx.send_flow_mod(&fm.buffer_id(buffer));
        } else if let Err(e) = ctx.switches().send_flow_mod(hop.dpid, &fm) {
            tracing::debug!(dpid = %hop.dpid, error = %e, "route flow not sent");
        }
    }

    /// Deletes the flows of route `r` on the hops `which` picks.
    fn delete_flows(&self, key: &Key, r: &Installed, which: impl Fn(&PortHop) -> bool) {
        let switches = &self.switches;
        for hop in r.hops().filter(which) {
            let fm = FlowMod {
                command: FlowModCommand::DeleteStrict,
                priority: self.params.priority,
                ..FlowMod::delete(key.matching(hop.in_port))
            };
            // A switch that left took its flows with it. Under routing's tag: on 1.3
            // the delete reaches routing's flows only (controller::cookie).
            let tag = controller::cookie::tag_of(COOKIE_TAG);
            let tagged = controller::app::AppSwitches::new(switches, tag);
            let _ = tagged.send_flow_mod(hop.dpid, &fm);
        }
    }

    /// Removes the routes `stale` picks, with their flows.
    fn remove_routes(&self, routes: &mut Routes, stale: impl FnMut(&Key, &Installed) -> bool) {
        for (key, r) in routes.take(stale) {
            self.delete_flows(&key, &r, |_| true);
        }
    }

    fn topology_event(&self, e: &TopologyEvent) {
        let mut net = self.net.write().unwrap_or_else(|e| e.into_inner());
        net.version += 1;
        self.version.store(net.version, Ordering::Release);
        let Net { engine, tree, .. } = &mut *net;
        let (changes, gone) = match *e {
            TopologyEvent::SwitchAdded(dpid) => {
                engine.switch_added(Dpid(dpid));
                tree.switch_added(Dpid(dpid));
                return;
            }
            TopologyEvent::SwitchRemoved(dpid) => {
                tree.switch_removed(Dpid(dpid));
                (engine.switch_removed(Dpid(dpid)), Some((dpid, None)))
            }
            TopologyEvent::LinkAdded(link) => {
                tree.link_added(link);
                (engine.link_added(link), None)
            }
            TopologyEvent::LinkRemoved(link, _) => {
                tree.link_removed(link);
                let changes = engine.link_removed(link);
                (changes, Some((link.src.0, Some(link.src_port))))
            }
        };
        // Routes through what went are gone even if the engine had them elsewhere.
        let through = |r: &Installed| match gone {
            Some((dpid, None)) => r.hops().any(|h| h.dpid.0 == dpid),
            Some((dpid, Some(port))) => r.hops().any(|h| (h.dpid.0, h.out_port) == (dpid, port)),
            None => false,
        };
        if changes.is_empty() && gone.is_none() {
            return;
        }
        let mut routes = self.routes();
        self.remove_routes(&mut routes, |_, r| changes.affects(&r.route) || through(r));
    }

    fn host_event(&self, e: &HostEvent) {
        let host = match e {
            HostEvent::Moved { key, .. } => *key,
            HostEvent::Removed { host } => host.key(),
            HostEvent::Added { .. } | HostEvent::IpAdded { .. } => return,
        };
        let mut routes = self.routes();
        for key in routes.of_host((host.mac, host.vlan)) {
            if let Some(r) = routes.remove(key) {
                self.delete_flows(&key, &r, |_| true);
            }
        }
    }

    fn flow_removed(&self, m: &Message) {
        let Some(FlowRemoved { cookie, .. }) = FlowRemoved::from_message(m) else {
            return;
        };
        let mut routes = self.routes();
        if let Some(key) = routes.key_of_cookie(cookie) {
            routes.remove(key);
        }
    }
}

/// Whether a flow of routing's found on a switch that connects is still valid
/// ([`controller::reconcile`]): it is while every port it sends out of is on the
/// switch and up. A flow of a route that no longer holds for another reason (a host
/// that moved while no controller ran) stays until its idle timeout: this process does
/// not know the routes a previous one installed.
fn adopt(info: &controller::info::SwitchInfo, flow: &openflow::ofctl::Flow) -> Adopt {
    controller::reconcile::keep_if_outputs_up(info, flow)
}

#[cfg(test)]
mod routes_tests {
    use super::*;

    #[test]
    fn a_restart_keeps_the_flows_whose_ports_are_up_and_deletes_the_others() {
        use controller::info::{PortInfo, SwitchInfo};
        let port = |port_no, state| PortInfo {
            port_no,
            hw_addr: m(port_no as u8),
            name: format!("eth{port_no}"),
            config: 0,
            state,
        };
        let info = SwitchInfo {
            dpid: openflow::Dpid(1),
            version: openflow::Version::V1_3,
            n_buffers: 0,
            n_tables: 1,
            capabilities: 0,
            // Port 2 is there but its link is down (OFPPS_LINK_DOWN).
            ports: vec![port(1, 0), port(2, 1)],
            peer: "127.0.0.1:1".parse().unwrap(),
        };
        let flow = |text: &str| openflow::ofctl::parse_flow(text).unwrap();
        assert_eq!(
            adopt(&info, &flow("in_port=2,actions=output:1")),
            Adopt::Keep
        );
        assert_eq!(
            adopt(&info, &flow("priority=0,actions=CONTROLLER:65535")),
            Adopt::Keep
        );
        assert_eq!(
            adopt(&info, &flow("in_port=1,actions=output:2")),
            Adopt::Delete
        );
        assert_eq!(
            adopt(&info, &flow("in_port=1,actions=output:9")),
            Adopt::Delete
        );
    }

    fn m(n: u8) -> MacAddr {
        MacAddr([2, 0, 0, 0, 0, n])
    }

    fn k(a: u8, b: u8, vlan: Option<u16>) -> Key {
        Key {
            src: m(a),
            dst: m(b),
            vlan,
        }
    }

    /// A route within one switch: what the slab's tests install.
    fn r() -> Route {
        Route {
            src: Dpid(1),
            dst: Dpid(1),
            links: Vec::new(),
        }
    }

    /// The routes the host index names for host `n` on `vlan`, in order.
    fn of(rs: &Routes, n: u8, vlan: Option<u16>) -> Vec<Key> {
        let mut v = rs.of_host((m(n), vlan));
        v.sort_by_key(|k| (k.src.0, k.dst.0));
        v
    }

    #[test]
    fn the_host_index_and_the_eviction_order_follow_the_installed_routes() {
        let mut rs = Routes::default();
        rs.insert(k(1, 2, None), r(), 1, 2);
        rs.insert(k(2, 1, None), r(), 2, 1);
        rs.insert(k(1, 3, Some(5)), r(), 1, 3);
        assert_eq!(of(&rs, 1, None), [k(1, 2, None), k(2, 1, None)]);
        assert_eq!(of(&rs, 1, Some(5)), [k(1, 3, Some(5))]);
        rs.remove(k(1, 2, None));
        assert_eq!(of(&rs, 2, None), [k(2, 1, None)]);
        // The oldest still installed goes first: the removed one is skipped.
        assert_eq!(rs.evict_oldest().map(|(k, _)| k), Some(k(2, 1, None)));
        rs.remove(k(1, 3, Some(5)));
        assert!(rs.by_host.is_empty() && rs.by_key.is_empty());
        assert_eq!(rs.evict_oldest().map(|(k, _)| k), None);
    }

    /// When the last route goes, the slab starts over: the next routes take slots in
    /// the order they come (not the last freed first), and no cookie of a route from
    /// before names one of them, even after its slot was taken many times.
    #[test]
    fn an_emptied_slab_starts_over_and_old_cookies_name_nothing() {
        let mut rs = Routes::with_seed(99);
        let slot = |c: u64| c & SLOT_MASK;
        let mut old = Vec::new();
        for round in 0..5 {
            for n in 2..=9 {
                old.push(rs.insert(k(1, n, None), r(), 1, 2).cookie);
            }
            // Slot 0 taken again and again: its generation runs ahead of the others'.
            for _ in 0..round * 10 {
                old.push(rs.insert(k(1, 2, None), r(), 1, 2).cookie);
            }
            // Removed in the order installed: a free list would hand them out reversed.
            for n in 2..=9 {
                assert!(rs.remove(k(1, n, None)).is_some());
            }
            assert!(rs.slots.is_empty() && rs.free.is_empty() && rs.order.is_empty());
            let fresh: Vec<u64> = (2..=9)
                .map(|n| rs.insert(k(3, n, None), r(), 1, 2).cookie)
                .collect();
            assert_eq!(
                fresh.iter().map(|&c| slot(c)).collect::<Vec<_>>(),
                (0..8).collect::<Vec<_>>()
            );
            for &c in &old {
                assert_eq!(
                    rs.key_of_cookie(c),
                    None,
                    "round {round}: an old cookie names a new route"
                );
            }
            old.extend(fresh);
            for n in 2..=9 {
                rs.remove(k(3, n, None));
            }
        }
    }

    /// A stop empties the routes but keeps their index, so the prefetch hint the app
    /// holds stays the index's after a restart.
    #[test]
    fn the_route_hint_names_the_index_through_a_stop() {
        let app = Routing::new(Params::default());
        let hint = &app.shared.routes_hint;
        assert!(hint.is_unused());
        app.shared.routes().insert(k(1, 2, None), r(), 1, 2);
        assert!(!hint.is_unused());
        app.stop();
        assert!(hint.is_unused() && app.shared.routes_read().len() == 0);
        app.shared.routes().insert(k(1, 2, None), r(), 1, 2);
        assert!(!hint.is_unused(), "the app's hint is the new routes' hint");
        assert!(Arc::ptr_eq(hint, app.shared.routes_read().by_key.hint()));
    }

    proptest::proptest! {
        /// Against a plain model (a map of routes and the order they were installed
        /// in): after any inserts, removals, removals by cookie and evictions, the same
        /// routes are installed, each host's routes are the ones from or to it, and the
        /// oldest is evicted first.
        #[test]
        fn the_slab_behaves_as_a_map_with_an_install_order(
            ops in proptest::collection::vec((0u8..4, 1u8..6, 1u8..6, proptest::bool::ANY), 1..200)
        ) {
            use std::collections::BTreeMap;
            let mut rs = Routes::with_seed(7);
            // key → (cookie, install sequence)
            let mut model: BTreeMap<(u8, u8, bool), (u64, u64)> = BTreeMap::new();
            let key = |a: u8, b: u8, v: bool| k(a, b, v.then_some(9));
            for (seq, (op, a, b, v)) in ops.into_iter().enumerate() {
                match op {
                    0 | 1 => {
                        let c = rs.insert(key(a, b, v), r(), 1, 2).cookie;
                        model.insert((a, b, v), (c, seq as u64));
                    }
                    2 => {
                        let gone = rs.remove(key(a, b, v)).map(|r| r.cookie);
                        proptest::prop_assert_eq!(gone, model.remove(&(a, b, v)).map(|m| m.0));
                    }
                    _ => {
                        let oldest = model.iter().min_by_key(|(_, m)| m.1).map(|(k, _)| *k);
                        let evicted = rs.evict_oldest().map(|(k, _)| k);
                        proptest::prop_assert_eq!(evicted, oldest.map(|(a, b, v)| key(a, b, v)));
                        if let Some(o) = oldest {
                            model.remove(&o);
                        }
                    }
                }
                proptest::prop_assert_eq!(rs.len(), model.len());
                for (&(a, b, v), &(cookie, _)) in &model {
                    proptest::prop_assert_eq!(rs.key_of_cookie(cookie), Some(key(a, b, v)));
                }
                for h in 1u8..6 {
                    for v in [false, true] {
                        let mut want: Vec<Key> = model
                            .keys()
                            .filter(|&&(a, b, w)| w == v && (a == h || b == h))
                            .map(|&(a, b, w)| key(a, b, w))
                            .collect();
                        want.sort_by_key(|k| (k.src.0, k.dst.0));
                        proptest::prop_assert_eq!(of(&rs, h, v.then_some(9)), want);
                    }
                }
            }
        }
    }

    /// A cookie names its route while it is installed, and never the route that takes
    /// its slot after it; a host's chain survives removals at its head, middle and end.
    #[test]
    fn cookies_name_slots_and_generations_and_host_chains_follow_removals() {
        let mut rs = Routes::with_seed(12345);
        let c12 = rs.insert(k(1, 2, None), r(), 1, 2).cookie;
        assert_eq!(c12 & !COOKIE_SEQ, COOKIE_TAG);
        assert_eq!(rs.key_of_cookie(c12), Some(k(1, 2, None)));
        for n in 3..=6 {
            rs.insert(k(1, n, None), r(), 1, 2);
        }
        assert_eq!(of(&rs, 1, None).len(), 5);
        // The middle, the newest (head) and the oldest (tail) of host 1's chain.
        for gone in [4, 6, 2] {
            assert!(rs.remove(k(1, gone, None)).is_some());
        }
        assert_eq!(of(&rs, 1, None), [k(1, 3, None), k(1, 5, None)]);
        assert_eq!(of(&rs, 4, None), []);
        assert_eq!(rs.key_of_cookie(c12), None, "removed");
        // The freed slot is taken again: the old cookie does not name the new route.
        let c78 = rs.insert(k(7, 8, None), r(), 1, 2).cookie;
        assert_eq!(c78 & SLOT_MASK, c12 & SLOT_MASK, "the same slot");
        assert_ne!(c78, c12);
        assert_eq!(rs.key_of_cookie(c12), None);
        assert_eq!(rs.key_of_cookie(c78), Some(k(7, 8, None)));
        assert_eq!(
            rs.key_of_cookie(c78 & !COOKIE_TAG),
            None,
            "another app's cookie"
        );
        // Re-installing a key replaces its route (one entry in each index).
        let again = rs.insert(k(1, 3, None), r(), 4, 2).cookie;
        assert_eq!(rs.len(), 3);
        assert_eq!(rs.get(&k(1, 3, None)).map(|r| r.in_port), Some(4));
        assert_eq!(of(&rs, 1, None), [k(1, 3, None), k(1, 5, None)]);
        assert_eq!(rs.key_of_cookie(again), Some(k(1, 3, None)));
    }
}
