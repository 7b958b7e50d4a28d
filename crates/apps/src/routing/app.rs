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
//! so the next packet takes the new path, computed at step 5. A host that moves or is
//! forgotten (`Devices` events) takes the routes to and from it along the same way.
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
//!
//! The rest is in the modules beside this one: the installed routes' slab and its
//! prefetch hint (`routes`), the flows of a route (`flows`), the locks and the
//! per-switch state (`shared`), the parameters (`params`), the flood policy
//! ([`flood`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use controller::app::SwitchCtx;
use controller::app::{App, Builder, Flow, MessageKind, Order, PacketIn, Services, StartError};
use openflow::model::{Action, FlowRemoved, PortNo};
use openflow::Message;

use super::engine::ShortestPaths;
use super::flood::{self, send};
use super::flows::adopt;
use super::route::{Route, RoutingEngine};
use super::routes::{self, Key, Routes};
use super::shared::{Net, PerSwitch, Shared};
use crate::devices::table::{AttachmentPoint, HostEvent};
use crate::devices::Devices;
use crate::learning_switch::send_misses_to_controller;
use crate::topology::{LinkGone, Topology, TopologyEvent};

pub use super::params::Params;
pub use super::routes::{COOKIE_SEQ, COOKIE_TAG};
pub use super::shared::Paths;

/// The app.
pub struct Routing {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing")
            .field("params", &self.shared.params)
            .finish_non_exhaustive()
    }
}

impl Routing {
    /// The app with the default engine, [`ShortestPaths`].
    pub fn new(params: Params) -> Routing {
        Routing::with_engine(params, Box::new(ShortestPaths::new()))
    }

    /// The app with another routing engine (empty: topology events fill it).
    pub fn with_engine(params: Params, engine: Box<dyn RoutingEngine>) -> Routing {
        Routing {
            shared: Arc::new(Shared::new(params, engine)),
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

impl App for Routing {
    type State = PerSwitch;

    fn name(&self) -> &'static str {
        "routing"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_adopt(|_, ctx, _, e| adopt(ctx.info(), &e.flow));
        b.on_initialize(|_, ctx, _| send_misses_to_controller(ctx));
        b.on_packet_in(Order::direct(0), Routing::packet_in);
        // The line of the route index where step 4 looks the packet's route up.
        b.prefetch_packet_in(|app, here, p| {
            routes::prefetch(&app.shared.routes_hint, here.lookups, p.data())
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
        b.on_port_status(|_, _, here, _, _| here.floods.replan());
        b.require_into(&shared.topology);
        b.require_into(&shared.devices);
        b.require_into(&shared.switches);
        b.subscribe::<Topology, _>(|app, e| app.shared.topology_event(e));
        b.subscribe::<Devices, _>(|app, e| app.shared.host_event(e));
        b.provide(Arc::new(Paths::new(Arc::clone(shared))));
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
        let links = self.shared.net().tree.links().to_vec();
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
    fn packet_in(&self, ctx: &mut SwitchCtx, state: &mut PerSwitch, p: &PacketIn) -> Flow {
        let shared = &*self.shared;
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
        let (here, in_port) = (ctx.dpid(), p.in_port());
        let attached = if key.dst.is_multicast() {
            None
        } else {
            shared.devices.attachment(key.dst, vlan)
        };
        state.lookups = state.lookups << 1 | u32::from(attached.is_some());
        let Some(dst) = attached else {
            return shared.flood(ctx, state, p); // 2
        };
        // 3
        if dst == AttachmentPoint::new(here, in_port) {
            return Flow::Stop;
        }
        // 4
        if let Some(r) = shared.routes_read().get(&key) {
            let mut hops = r.hops().enumerate();
            if let Some((i, hop)) = hops.find(|(_, h)| (h.dpid, h.in_port) == (here, in_port)) {
                shared.add_flow(ctx, &key, r.cookie, hop, i == 0, p.buffer_id());
                if p.buffer_id().is_none() {
                    send(ctx, p, &[Action::output(PortNo::from_u32(hop.out_port))]);
                }
                return Flow::Stop;
            }
        }
        // 5 (step 4 needs no engine: `net` is taken only now)
        let net = shared.net();
        let route = match net.engine.route(here, dst.dpid) {
            Some(r) => r,
            None if here == dst.dpid => Route {
                src: here,
                dst: here,
                links: Vec::new(),
            },
            // 5a
            None if shared.deliver(ctx, state, p, dst) => return Flow::Stop,
            None => return shared.flood_with(&net, ctx, state, p),
        };
        let mut routes = shared.routes();
        let r = shared.install(&mut routes, key, route, in_port, dst.port);
        let hops = &mut state.hops;
        hops.clear();
        hops.extend(r.hops());
        // The last hop first, this switch's last: a buffered packet rides on this
        // switch's FLOW_MOD (the switch applies the new flow to it: one message, as the
        // learning switch answers); one not buffered follows in a PACKET_OUT.
        for (i, &hop) in hops.iter().enumerate().rev() {
            let buffer = p.buffer_id().filter(|_| i == 0);
            shared.add_flow(ctx, &key, r.cookie, hop, i == 0, buffer);
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
    fn flood(&self, ctx: &mut SwitchCtx, state: &mut PerSwitch, p: &PacketIn) -> Flow {
        if !state
            .floods
            .is_planned(self.version.load(Ordering::Acquire))
        {
            let net = self.net();
            state.floods.plan(&net.tree, net.version, ctx.info());
        }
        flood::flood(&self.hasher, ctx, &mut state.floods, p)
    }

    /// Step 2, holding `net`.
    fn flood_with(
        &self,
        net: &Net,
        ctx: &mut SwitchCtx,
        state: &mut PerSwitch,
        p: &PacketIn,
    ) -> Flow {
        state.floods.plan(&net.tree, net.version, ctx.info());
        flood::flood(&self.hasher, ctx, &mut state.floods, p)
    }

    /// Step 5a.
    fn deliver(
        &self,
        ctx: &mut SwitchCtx,
        state: &mut PerSwitch,
        p: &PacketIn,
        to: AttachmentPoint,
    ) -> bool {
        flood::deliver(ctx, &mut state.floods, &self.hasher, p, to.dpid, to.port)
    }

    /// Step 5's bookkeeping: `route` replaces the key's old route (whose flows the new
    /// one has no match for are deleted), after the oldest route is evicted if the
    /// map is full.
    fn install<'r>(
        &self,
        routes: &'r mut Routes,
        key: Key,
        route: Route,
        in_port: u32,
        out_port: u32,
    ) -> &'r routes::Installed {
        let old = routes.remove(key);
        if routes.len() >= self.params.max_routes || routes.full() {
            if let Some((k, r)) = routes.evict_oldest() {
                self.routes_evicted.inc();
                self.delete_flows(&k, &r, |_| true);
            }
        }
        let r = routes.insert(key, route, in_port, out_port);
        self.routes_installed.inc();
        if let Some(old) = old {
            // Its flows where the new route has none of the same match.
            self.delete_flows(&key, &old, |h| !r.has_flow(h.dpid, h.in_port));
        }
        r
    }

    fn topology_event(&self, e: &TopologyEvent) {
        let mut net = self.net_mut();
        net.version += 1;
        self.version.store(net.version, Ordering::Release);
        let Net { engine, tree, .. } = &mut *net;
        let (changes, gone) = match *e {
            TopologyEvent::SwitchAdded(dpid) => {
                engine.switch_added(dpid);
                tree.switch_added(dpid);
                return;
            }
            TopologyEvent::SwitchRemoved(dpid) => {
                tree.switch_removed(dpid);
                (engine.switch_removed(dpid), Some((dpid, None)))
            }
            TopologyEvent::LinkAdded(link) => {
                tree.link_added(link);
                (engine.link_added(link), None)
            }
            TopologyEvent::LinkRemoved(link, _) => {
                tree.link_removed(link);
                let changes = engine.link_removed(link);
                (changes, Some((link.src, Some(link.src_port))))
            }
        };
        // Routes through what went are gone even if the engine had them elsewhere.
        let through = |r: &routes::Installed| match gone {
            Some((dpid, None)) => r.hops().any(|h| h.dpid == dpid),
            Some((dpid, Some(port))) => r.hops().any(|h| (h.dpid, h.out_port) == (dpid, port)),
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
