//! The `topology` app: discovers the links between switches with signed LLDP frames
//! and keeps the [`Topology`] service current.
//!
//! 1. When a switch connects: it joins the topology with its ports, and gets a flow
//!    sending LLDP (EtherType 0x88cc) to the controller, at a high priority (a 1.3
//!    switch drops what no flow matches; on 1.0 it is harmless). Then it is probed at
//!    once (step 2's frames, out of every port): the links between it and the switches
//!    already connected are known within one round trip, not one interval, so the time
//!    in which a loop's cables look like edge ports (and broadcasts may cross them
//!    unseen) is as short as it can be. (A neighbour not connected yet drops the frame;
//!    its own probe, when it joins, finds the cable.)
//! 2. Every `lldp_interval` (± 10 %), per switch: a discovery frame ([`lldp`], signed
//!    with the controller's key) goes out of every port that is up, LOCAL excepted.
//! 3. An LLDP PACKET_IN (ours or not: nothing else sees LLDP, so nothing floods it):
//!    - 3a. rejected by [`lldp::verify`] (another controller's, a forgery, a stale
//!      replay, a host's own LLDP): counted by reason, logged at debug;
//!    - 3b. sent and received on the same port (a looped-back replay), or from a switch
//!      not in the topology: counted, ignored;
//!    - 3c. a new link with an end on a host port ([`guard`]: where a MAC was first
//!      seen) is refused: frames relayed between two hosts;
//!    - 3d. otherwise the directed link `sender dpid:port → this dpid:in_port` is added,
//!      or refreshed;
//!    - 3e. a new link whose other direction is not known yet is answered with a
//!      discovery frame back out of `in_port`, so both directions of a cable are known
//!      within a round trip of its second switch joining (its first frames found the
//!      earlier switch listening; the earlier one's found no one).
//!
//!    Any other PACKET_IN marks its port a host port if its source MAC was never seen
//!    before (and the port is no known link port), then goes on to the next app.
//! 4. PORT_STATUS: links on a port that went down or was deleted go at once
//!    ([`LinkGone::PortDown`], [`LinkGone::PortDeleted`]); a port that comes up is
//!    probed at once. The topology's port list follows; the port's host mark goes.
//! 5. A switch leaves: its links go ([`LinkGone::SwitchLeft`]), then the switch, and
//!    its host marks.
//! 6. Every `lldp_interval` (at most `link_timeout / 2`), globally: links not refreshed
//!    for `link_timeout` go ([`LinkGone::Timeout`]).
//!
//! Every change goes through [`Topology::update`] under the app's lock on the links'
//! last-seen times, so the times and the snapshot's links always agree and subscribers
//! see changes in the order they were made.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockWriteGuard};
use std::time::{Duration, Instant};

use controller::app::PacketIn;
use controller::app::{App, Builder, Flow, Order, Required, SwitchCtx};
use controller::app::{Dpid, PortInfo, PortReason, SwitchInfo, Switches};
use openflow::model::{Action, FlowMod, Match, PacketOut, PortNo};
use openflow::{MacAddr, Version};
use serde::Deserialize;

use super::guard::{HostPorts, PortKind};
use super::lldp::{self, DiscoveryKey, Reject};
use super::service::{LinkGone, Topology, TopologyEvent};
use crate::net::Link;

/// The LLDP EtherType.
pub const ETH_TYPE_LLDP: u16 = 0x88cc;
/// Priority of the flow sending LLDP to the controller: above anything forwarding.
pub const LLDP_PRIORITY: u16 = 0xff00;
/// Cookie of that flow: the app's tag (the core stamps it, [`controller::app::app_tag`])
/// over "LLDP", to tell it apart in flow dumps.
pub const LLDP_COOKIE: u64 =
    controller::app::with_tag(controller::app::app_tag("topology"), 0x4c4c_4450);
/// Ports from this number up are reserved (LOCAL, CONTROLLER, ...; 1.0's widened).
const FIRST_RESERVED_PORT: u32 = 0xffff_ff00;

/// The topology app's parameters (`[apps.params]` in `pharos.toml`), in seconds: a
/// number (`2`, `0.5`) or a duration (`"2s"`, `"500ms"`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Between two discovery frames out of a port (default 1).
    #[serde(deserialize_with = "controller::app::settings::seconds::deserialize")]
    pub lldp_interval: f64,
    /// A link not seen for this long is gone (default 3.5: three frames lost).
    #[serde(deserialize_with = "controller::app::settings::seconds::deserialize")]
    pub link_timeout: f64,
    /// A discovery frame older than this is a replay (default 1).
    #[serde(deserialize_with = "controller::app::settings::seconds::deserialize")]
    pub max_frame_age: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            lldp_interval: 1.0,
            link_timeout: 3.5,
            max_frame_age: 1.0,
        }
    }
}

impl Params {
    /// Checks the ranges: an interval from 10 ms to an hour, a timeout longer than the
    /// interval and at most a day, a frame age from 1 ms to the timeout. The error
    /// names the parameter at fault.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let in_range = |v: f64, lo: f64, hi: f64| v.is_finite() && (lo..=hi).contains(&v);
        if !in_range(self.lldp_interval, 0.01, 3600.0) {
            return Err((
                "lldp_interval",
                format!("{} s is not within 0.01..=3600 s", self.lldp_interval),
            ));
        }
        if !in_range(self.link_timeout, self.lldp_interval, 86400.0)
            || self.link_timeout == self.lldp_interval
        {
            return Err((
                "link_timeout",
                format!(
                    "{} s must be above lldp_interval ({} s) and at most 86400 s",
                    self.link_timeout, self.lldp_interval
                ),
            ));
        }
        if !in_range(self.max_frame_age, 0.001, self.link_timeout) {
            return Err((
                "max_frame_age",
                format!(
                    "{} s is not within 0.001 s..=link_timeout ({} s)",
                    self.max_frame_age, self.link_timeout
                ),
            ));
        }
        Ok(())
    }
}

/// Discovery frames and LLDP PACKET_INs, by outcome.
#[derive(Debug, Default)]
pub struct Stats {
    /// Discovery frames sent.
    pub sent: AtomicU64,
    /// Discovery frames accepted (links added or refreshed).
    pub accepted: AtomicU64,
    /// Refused, by [`Reject`] (read with [`Stats::rejected`]).
    pub rejected: [AtomicU64; 5],
    /// Ours, but sent and received on the same port.
    pub same_port: AtomicU64,
    /// Ours, from a switch the topology does not have (it just left).
    pub unknown_switch: AtomicU64,
    /// Ours, but a new link with an end on a host port: relayed by hosts.
    pub host_port: AtomicU64,
}

/// Where a [`Reject`] is counted in [`Stats::rejected`].
pub fn reject_index(r: Reject) -> usize {
    match r {
        Reject::NotLldp => 0,
        Reject::NotOurs => 1,
        Reject::Malformed => 2,
        Reject::BadTag => 3,
        Reject::Stale => 4,
    }
}

impl Stats {
    /// Frames refused for `r`.
    pub fn rejected(&self, r: Reject) -> u64 {
        self.rejected[reject_index(r)].load(Relaxed)
    }
}

/// The app (see the module doc).
pub struct TopologyApp {
    params: Params,
    key: DiscoveryKey,
    /// Time zero of the frames' `sent_at_ms`.
    epoch: Instant,
    topology: Arc<Topology>,
    /// When each link was last seen: exactly the snapshot's links. Held across every
    /// `topology.update`.
    seen: Mutex<BTreeMap<Link, Instant>>,
    stats: Arc<Stats>,
    /// The core's directory, to tell a replaced connection from a departure.
    switches: Required<Switches>,
    /// Host ports (3c). A lock for readers and writers, not a mutex: every PACKET_IN
    /// asks whether its source MAC is known (the common case, a read), and only a MAC
    /// seen for the first time writes.
    hosts: RwLock<HostPorts>,
    /// Whether `hosts` was full when its write lock was last released: then no PACKET_IN
    /// can mark anything, and none takes the lock to find that out (a network with more
    /// hosts than the guard holds, or a flood of new source addresses). A stale `true`
    /// (a port just cleared) fails open for a moment, as a full guard does.
    hosts_full: AtomicBool,
    /// Where the look-up of a MAC in `hosts` starts, readable without its lock: asked
    /// for while a PACKET_IN is still in the read buffer.
    hosts_hint: Arc<crate::net::mac_index::Hint>,
}

/// The host-port guard under its write lock; tells `hosts_full` whether it is full when
/// released.
struct HostsWrite<'a> {
    guard: RwLockWriteGuard<'a, HostPorts>,
    full: &'a AtomicBool,
}

impl std::ops::Deref for HostsWrite<'_> {
    type Target = HostPorts;
    fn deref(&self) -> &HostPorts {
        &self.guard
    }
}

impl std::ops::DerefMut for HostsWrite<'_> {
    fn deref_mut(&mut self) -> &mut HostPorts {
        &mut self.guard
    }
}

impl Drop for HostsWrite<'_> {
    fn drop(&mut self) {
        self.full.store(self.guard.is_full(), Relaxed);
    }
}

/// MACs the host-port guard remembers at most.
const HOST_PORTS_CAP: usize = 100_000;

impl TopologyApp {
    /// The app, with a fresh random key. The error names the parameter at fault, if
    /// one is.
    pub fn new(params: Params) -> Result<TopologyApp, (Option<&'static str>, String)> {
        params.check().map_err(|(p, reason)| (Some(p), reason))?;
        let key = DiscoveryKey::random().map_err(|e| (None, format!("no random key: {e}")))?;
        Ok(TopologyApp::with_key(params, key))
    }

    /// The app with this key (tests; controllers that must share one).
    pub fn with_key(params: Params, key: DiscoveryKey) -> TopologyApp {
        // Two intervals: a neighbour that joins probes within one.
        let hosts = HostPorts::new(Self::secs(params.lldp_interval) * 2, HOST_PORTS_CAP);
        TopologyApp {
            params,
            key,
            epoch: Instant::now(),
            topology: Arc::new(Topology::new()),
            seen: Mutex::new(BTreeMap::new()),
            stats: Arc::new(Stats::default()),
            switches: Required::new(),
            hosts_hint: hosts.hint(),
            hosts: RwLock::new(hosts),
            hosts_full: AtomicBool::new(false),
        }
    }

    /// The service the app provides (also in `services` once built).
    pub fn topology(&self) -> Arc<Topology> {
        Arc::clone(&self.topology)
    }

    pub fn stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn millis(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.epoch).as_millis() as u64
    }

    fn seen(&self) -> MutexGuard<'_, BTreeMap<Link, Instant>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn hosts(&self) -> HostsWrite<'_> {
        HostsWrite {
            guard: self.hosts.write().unwrap_or_else(|e| e.into_inner()),
            full: &self.hosts_full,
        }
    }

    /// Asks for the guard's line where [`TopologyApp::host_traffic`] will look the
    /// frame's source up, for a PACKET_IN still in the read buffer.
    fn prefetch_host(&self, frame: &[u8]) {
        if let Some(src) = frame.get(6..12) {
            let src = MacAddr(src.try_into().expect("six bytes"));
            if !src.is_multicast() && !self.hosts_full.load(Relaxed) {
                self.hosts_hint.prefetch(src);
            }
        }
    }

    /// Marks the port of a MAC's first PACKET_IN (see [`guard`](super::guard)).
    fn host_traffic(&self, ctx: &SwitchCtx, in_port: u32, frame: &[u8]) {
        let (dpid, now) = (ctx.dpid(), ctx.now());
        if in_port >= FIRST_RESERVED_PORT || frame.len() < 14 {
            return;
        }
        let src = MacAddr([frame[6], frame[7], frame[8], frame[9], frame[10], frame[11]]);
        // A MAC seen before marks nothing (the common case): answered under the read
        // lock (or by the full flag, without it), before the link-port look-up, which
        // only a new MAC needs.
        let known = |h: &HostPorts| h.knows(src);
        if src.is_multicast()
            || self.hosts_full.load(Relaxed)
            || known(&self.hosts.read().unwrap_or_else(|e| e.into_inner()))
        {
            return;
        }
        if self.topology.is_link_port(dpid, in_port) {
            return;
        }
        self.hosts().traffic(src, dpid, in_port, now);
    }
}

impl App for TopologyApp {
    /// A buffer for the discovery frames, reused.
    type State = Vec<u8>;

    fn name(&self) -> &'static str {
        "topology"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.provide(Arc::clone(&self.topology));
        b.require_into(&self.switches);
        b.on_switch_added(TopologyApp::switch_added);
        let interval = Self::secs(self.params.lldp_interval);
        b.every(interval, interval / 10, TopologyApp::probe);
        b.on_packet_in(Order::advise(0), TopologyApp::packet_in);
        // The host-port guard's line for the source (`host_traffic`'s look-up), unless
        // the guard is full and nothing is looked up.
        b.prefetch_packet_in(|app, _, p| app.prefetch_host(p.data()));
        b.on_port_status(TopologyApp::port_status);
        b.on_switch_removed(TopologyApp::switch_removed);
        let sweep = interval.min(Self::secs(self.params.link_timeout) / 2);
        b.every_global(sweep, TopologyApp::expire);
    }
}

impl TopologyApp {
    // 1
    fn switch_added(&self, ctx: &mut SwitchCtx, frame: &mut Vec<u8>) {
        let lldp = Match {
            eth_type: Some(ETH_TYPE_LLDP),
            ..Match::default()
        };
        let to_controller = [Action::output(PortNo::Controller)];
        let fm = FlowMod::add(lldp, &to_controller)
            .priority(LLDP_PRIORITY)
            .cookie(LLDP_COOKIE);
        ctx.send_flow_mod(&fm);
        let (dpid, ports) = (ctx.dpid(), ctx.info().ports.clone());
        self.hosts().joined(ctx.now());
        let seen = self.seen();
        self.topology.update(|s| match s.set_switch(dpid, ports) {
            true => vec![TopologyEvent::SwitchAdded(dpid)],
            false => Vec::new(),
        });
        drop(seen);
        // The flow above leaves first: on 1.3 the replies need it (FIFO per connection).
        self.probe(ctx, frame);
    }

    // 2
    fn probe(&self, ctx: &mut SwitchCtx, frame: &mut Vec<u8>) {
        for port in &ctx.info().ports {
            if port.is_up() && port.port_no < FIRST_RESERVED_PORT {
                self.send_frame(ctx, port, frame);
            }
        }
    }

    fn send_frame(&self, ctx: &mut SwitchCtx, port: &PortInfo, frame: &mut Vec<u8>) {
        frame.clear();
        let now = self.millis(ctx.now());
        lldp::encode(
            &self.key,
            ctx.dpid().0,
            port.port_no,
            port.hw_addr,
            now,
            frame,
        );
        let out = [Action::output(PortNo::Physical(port.port_no))];
        // 1.0 says "OFPP_NONE" for a packet from the controller, 1.3 "OFPP_CONTROLLER".
        let from = match ctx.version() {
            Version::V1_0 => PortNo::Any,
            Version::V1_3 => PortNo::Controller,
        };
        if ctx
            .send_packet_out(&PacketOut::unbuffered(frame, from, &out))
            .is_some()
        {
            self.stats.sent.fetch_add(1, Relaxed);
        }
    }

    // 3
    fn packet_in(&self, ctx: &mut SwitchCtx, frame: &mut Vec<u8>, p: &PacketIn) -> Flow {
        let (dpid, in_port) = (ctx.dpid(), p.in_port());
        if !lldp::may_be_lldp(p.data()) {
            self.host_traffic(ctx, in_port, p.data());
            return Flow::Continue;
        }
        let max_age = (self.params.max_frame_age * 1000.0) as u64;
        let d = match lldp::verify(&self.key, p.data(), self.millis(ctx.now()), max_age) {
            Ok(d) => d,
            Err(Reject::NotLldp) => {
                self.host_traffic(ctx, in_port, p.data());
                return Flow::Continue;
            }
            // 3a
            Err(r) => {
                self.stats.rejected[reject_index(r)].fetch_add(1, Relaxed);
                tracing::debug!(%dpid, in_port, reason = %r, "LLDP refused");
                return Flow::Stop;
            }
        };
        // 3b
        let sender = Dpid(d.dpid);
        if (sender, d.port) == (dpid, in_port) {
            self.stats.same_port.fetch_add(1, Relaxed);
            tracing::debug!(%dpid, in_port, "LLDP looped back to its port");
            return Flow::Stop;
        }
        let link = Link::new(sender, d.port, dpid, in_port);
        let mut seen = self.seen();
        if let Some(t) = seen.get_mut(&link) {
            *t = ctx.now();
        } else {
            // 3c
            let mut hosts = self.hosts();
            let ends = [(sender, d.port), (dpid, in_port)];
            if ends
                .iter()
                .any(|&(s, p)| hosts.kind(s, p, ctx.now()) == PortKind::Host)
            {
                self.stats.host_port.fetch_add(1, Relaxed);
                tracing::warn!(
                    "discovery frame for {link} refused: an end is a host port (relayed by hosts?)"
                );
                return Flow::Stop;
            }
            // A provisional mark was a host's packet carried by a stale flow: the frame
            // shows a switch is there.
            for (s, p) in ends {
                hosts.clear_port(s, p);
            }
            drop(hosts);
            // 3d
            let added = self.topology.update(|s| {
                let known = s.switches().contains_key(&sender) && s.switches().contains_key(&dpid);
                match known && s.add_link(link) {
                    true => vec![TopologyEvent::LinkAdded(link)],
                    false => Vec::new(),
                }
            });
            if added.is_empty() {
                self.stats.unknown_switch.fetch_add(1, Relaxed);
                return Flow::Stop;
            }
            seen.insert(link, ctx.now());
            // 3e
            let unanswered = !seen.contains_key(&link.reversed());
            drop(seen);
            let port = ctx.info().ports.iter().find(|p| p.port_no == in_port);
            if let Some(port) = port.filter(|_| unanswered).cloned() {
                self.send_frame(ctx, &port, frame);
            }
        }
        self.stats.accepted.fetch_add(1, Relaxed);
        Flow::Stop
    }

    // 4
    fn port_status(
        &self,
        ctx: &mut SwitchCtx,
        frame: &mut Vec<u8>,
        reason: PortReason,
        port: &PortInfo,
    ) {
        let gone = match reason {
            PortReason::Delete => Some(LinkGone::PortDeleted),
            _ if !port.is_up() => Some(LinkGone::PortDown),
            _ => None,
        };
        let (dpid, ports) = (ctx.dpid(), ctx.info().ports.clone());
        if gone.is_some() || reason == PortReason::Add {
            // Down, deleted or new: whoever was there may not be when it is up again.
            self.hosts().clear_port(dpid, port.port_no);
        }
        let mut seen = self.seen();
        self.topology.update(|s| {
            s.set_switch(dpid, ports);
            let Some(why) = gone else {
                return Vec::new();
            };
            let links = s.links_at(dpid, port.port_no);
            for l in &links {
                s.remove_link(*l);
                seen.remove(l);
            }
            links
                .into_iter()
                .map(|l| TopologyEvent::LinkRemoved(l, why))
                .collect()
        });
        drop(seen);
        if gone.is_none() && port.port_no < FIRST_RESERVED_PORT {
            self.send_frame(ctx, port, frame);
        }
    }

    // 5
    fn switch_removed(&self, info: &SwitchInfo, _: Vec<u8>) {
        let dpid = info.dpid;
        // Replaced by a newer connection of the same switch: it is still here.
        if self.switches.is_connected(info.dpid) {
            return;
        }
        self.hosts().clear_switch(dpid);
        let mut seen = self.seen();
        self.topology.update(|s| {
            if !s.switches().contains_key(&dpid) {
                return Vec::new();
            }
            let mut events: Vec<TopologyEvent> = s
                .remove_switch(dpid)
                .into_iter()
                .map(|l| {
                    seen.remove(&l);
                    TopologyEvent::LinkRemoved(l, LinkGone::SwitchLeft)
                })
                .collect();
            events.push(TopologyEvent::SwitchRemoved(dpid));
            events
        });
    }

    // 6
    fn expire(&self, _: &Switches, now: Instant) {
        let timeout = Self::secs(self.params.link_timeout);
        let mut seen = self.seen();
        let old: Vec<Link> = seen
            .iter()
            .filter(|(_, t)| now.saturating_duration_since(**t) > timeout)
            .map(|(l, _)| *l)
            .collect();
        if old.is_empty() {
            return;
        }
        for l in &old {
            seen.remove(l);
        }
        self.topology.update(|s| {
            old.iter()
                .filter(|l| s.remove_link(**l))
                .map(|l| TopologyEvent::LinkRemoved(*l, LinkGone::Timeout))
                .collect()
        });
    }
}
