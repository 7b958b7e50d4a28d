//! What the routing app's handlers, subscribers and [`Paths`] service share (the
//! engine and the tree behind one lock, the installed routes behind another: the order
//! they are taken in is in the app's doc), and what each switch keeps ([`PerSwitch`]).

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use controller::app::{Counter, Dpid, Required, Switches};

use super::flood::Floods;
use super::params::Params;
use super::route::{PortHop, Route, RoutingEngine};
use super::routes::Routes;
use super::tree::SpanningTree;
use crate::devices::Devices;
use crate::key_index;
use crate::topology::Topology;

/// What the handlers and the subscribers share.
pub(super) struct Shared {
    pub(super) params: Params,
    /// Hashes flooded and delivered frames (for the repeat check); seeded at random, so
    /// no one can craft a frame that passes for another.
    pub(super) hasher: foldhash::fast::RandomState,
    /// The engine and the tree, fed by topology events.
    pub(super) net: RwLock<Net>,
    /// `net.version`, stored under its write lock as a topology event begins: a flood
    /// whose switch's plan is at this version reads no lock. (One that loaded it just
    /// before an event floods by the plan from before, as if it had come a moment
    /// earlier.)
    pub(super) version: AtomicU64,
    /// The routes whose flows are installed. Read-locked to find a route a packet
    /// overtook (step 4); written to install or remove one.
    routes: RwLock<Routes>,
    /// The prefetch hint of `routes`'s index, readable without its lock.
    pub(super) routes_hint: Arc<key_index::Hint>,
    /// The services it requires.
    pub(super) topology: Required<Topology>,
    pub(super) devices: Required<Devices>,
    pub(super) switches: Required<Switches>,
    /// Routes computed and installed, and routes evicted at `max_routes`: published
    /// (`pharos_app_events_total{app="routing"}`).
    pub(super) routes_installed: Counter,
    pub(super) routes_evicted: Counter,
}

/// The engine and the tree, changed together by each topology event.
pub(super) struct Net {
    pub(super) engine: Box<dyn RoutingEngine>,
    pub(super) tree: SpanningTree,
    /// Bumped by every topology event: the switches' flood plans ([`Floods`]) are
    /// computed again after it.
    pub(super) version: u64,
}

impl Shared {
    /// Empty tables around `engine` (topology events fill it).
    pub(super) fn new(params: Params, engine: Box<dyn RoutingEngine>) -> Shared {
        let mut seed = [0u8; 8];
        // Without randomness the cookies start at 0: only a restart's stale
        // FLOW_REMOVED could then end a route early (its next packet reinstalls it).
        let _ = getrandom::fill(&mut seed);
        let routes = Routes::with_seed(u64::from_le_bytes(seed));
        let routes_hint = Arc::clone(routes.hint());
        let net = Net {
            engine,
            tree: SpanningTree::new(),
            version: 0,
        };
        Shared {
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
        }
    }

    pub(super) fn net(&self) -> RwLockReadGuard<'_, Net> {
        self.net.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn net_mut(&self) -> RwLockWriteGuard<'_, Net> {
        self.net.write().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn routes(&self) -> RwLockWriteGuard<'_, Routes> {
        self.routes.write().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn routes_read(&self) -> RwLockReadGuard<'_, Routes> {
        self.routes.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// The routing app's state for one switch (owned by the switch's worker, no lock): its
/// flood plan and memory, and what its PACKET_INs keep between them so that they
/// allocate nothing and hash only what they will look up.
#[derive(Debug, Default)]
pub struct PerSwitch {
    /// The flood plan and the repeat check ([`Floods`]).
    pub(super) floods: Floods,
    /// Scratch space for the hops of a route installed from this switch (no
    /// allocation per route).
    pub(super) hops: Vec<PortHop>,
    /// Whether each of this switch's last 32 PACKET_INs looked its route up (bit 0 the
    /// newest): the prefetch hint asks for the route's line only while a quarter of
    /// them did, so that a switch whose packets are flooded (their destinations
    /// unknown) pays no hash per packet for it.
    pub(super) lookups: u32,
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
    pub(super) fn new(shared: Arc<Shared>) -> Paths {
        Paths { shared }
    }

    /// The route from switch `src` to switch `dst` (no links when they are the same
    /// switch); `None` when the engine knows no way, or does not know either switch.
    pub fn route(&self, src: Dpid, dst: Dpid) -> Option<Route> {
        self.shared.net().engine.route(src, dst)
    }
}
