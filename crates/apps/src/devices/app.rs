//! The device app, `device_manager`: learns where hosts are from the PACKET_INs every
//! switch sends, and keeps the [`Devices`] service current for the other apps.
//!
//! For each PACKET_IN (advise phase, number 10: after topology has taken the LLDP, before
//! any forwarding app decides; it never stops a packet):
//!
//! 1. Reads who sent it: the Ethernet source, the VLAN (outer tag, if any), and the
//!    sender's addresses: an ARP sender address (when the ARP sender is the frame's
//!    source), the IPv4 or IPv6 source, an IPv6 neighbour advertisement's target.
//! 2. A known host at its known place, with its known addresses, seen within
//!    [`Params::refresh`]: nothing to do ([`Devices::sighting`], under the read lock;
//!    the common case). A new host when the table is full: refused, counted
//!    ([`Devices::refuse`]), no write either (a flood of new source addresses must not
//!    make every PACKET_IN take the write lock).
//! 3. Unless the packet came in on a port of an inter-switch link (the topology app's
//!    [`Topology::is_link_port`]: a packet there was sent by a host behind another
//!    switch), records the host at (switch, in_port) ([`HostTable::observe`](super::table::HostTable::observe)): a new host
//!    is `Added`, a known one seen on another port has `Moved` if [`moves`](super::moves)
//!    says it did (quiet at its old place for `move_quiet`, or seen on a confirmed edge
//!    port; else the sighting is a copy of its frame that crossed a cable discovery has
//!    not found yet, and is ignored), a new address is `IpAdded`. The [`Devices`]
//!    service tells its subscribers.
//!
//! Hosts go away ([`HostEvent::Removed`]):
//!
//! - when not seen for `host_timeout` (a global timer expires them);
//! - when their port turns out to be an inter-switch link (the topology app found a link
//!   there: what was learned on it was a host behind the other switch);
//! - when their switch leaves (topology's `SwitchRemoved`);
//! - when their port goes down or is deleted (PORT_STATUS): a host unplugged, or moved to
//!   another switch, is then unknown rather than wrongly placed, so forwarding apps flood
//!   to find it instead of sending into a dead port until it speaks again.
//!
//! The check for a link port runs inside the table update: a link discovered while a
//! packet from its port is being learned removes what that packet taught (the topology
//! event's removal waits for the update, and an update that starts after the link was
//! added sees it).

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use controller::app::PacketIn;
use controller::app::{App, Builder, Counter, Flow, Order, Required, SwitchCtx};
use controller::app::{PortInfo, PortReason};
use openflow::MacAddr;
use packet::arp::{ArpPacket, ArpRepr};
use packet::ethernet::{EtherType, EthernetFrame};
use packet::flow::{FlowKey, L4Key};
use packet::icmpv6::Icmpv6Type;
use packet::ipv4::Ipv4Packet;
use serde::Deserialize;

use super::host_log::{HostLog, Why};
use super::moves::{MoveRule, PortAges};
use super::service::Devices;
use super::table::{AttachmentPoint, HostEvent, Limits, Sighting};
use crate::topology::{Topology, TopologyEvent};

/// The device app's parameters (`[apps.params]` in `pharos.toml`). Times are in seconds,
/// as the other apps' are: a number (`300`, `2.5`) or a duration (`"5m"`, `"500ms"`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Seconds a host may stay silent before it is forgotten (default 300, from 1 to
    /// 86400).
    #[serde(deserialize_with = "controller::app::settings::seconds::deserialize")]
    pub host_timeout: f64,
    /// Hosts tracked at most (default 100,000, about 24 MB; at most 10,000,000): new
    /// hosts beyond are refused, so a host spraying source MACs cannot take the
    /// controller's memory.
    pub max_hosts: usize,
    /// Addresses kept per host and per family, IPv4 and IPv6 (default 8, at most 64; 0
    /// tracks no addresses).
    pub max_ips_per_family: usize,
    /// Seconds a known host must have been quiet at its place, or a port up since the
    /// last switch joined, for a sighting elsewhere to be a move (default 1, from 0 to
    /// 3600; 0: every sighting elsewhere is a move). See [`moves`](super::moves).
    #[serde(deserialize_with = "controller::app::settings::seconds::deserialize")]
    pub move_quiet: f64,
}

impl Default for Params {
    fn default() -> Self {
        let limits = Limits::default();
        Params {
            host_timeout: 300.0,
            max_hosts: limits.max_hosts,
            max_ips_per_family: limits.max_ips_per_family,
            move_quiet: 1.0,
        }
    }
}

impl Params {
    /// Refuses values out of range, naming the parameter.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(1.0..=86400.0).contains(&self.host_timeout) {
            return Err((
                "host_timeout",
                format!("{} is not within 1..=86400 s", self.host_timeout),
            ));
        }
        if !(1..=10_000_000).contains(&self.max_hosts) {
            return Err((
                "max_hosts",
                format!("{} is not within 1..=10000000", self.max_hosts),
            ));
        }
        if self.max_ips_per_family > 64 {
            return Err((
                "max_ips_per_family",
                format!("{} is not within 0..=64", self.max_ips_per_family),
            ));
        }
        if !(0.0..=3600.0).contains(&self.move_quiet) {
            return Err((
                "move_quiet",
                format!("{} is not within 0..=3600 s", self.move_quiet),
            ));
        }
        Ok(())
    }

    /// [`Params::host_timeout`] (checked: finite and positive).
    pub fn host_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.host_timeout)
    }

    /// How long a known host's last sighting may lag (a tenth of `host_timeout`, at
    /// most a second): a PACKET_IN from a host at its known place, seen within this
    /// long, writes nothing ([`Devices::sighting`]).
    pub fn refresh(&self) -> Duration {
        (self.host_timeout() / 10).min(Duration::from_secs(1))
    }

    /// How often idle hosts are looked for: a tenth of `host_timeout`, between 100 ms
    /// and 10 s (a host goes at most that long after its timeout). The look is one
    /// comparison when no host can have timed out.
    pub fn expire_interval(&self) -> Duration {
        (self.host_timeout() / 10).clamp(Duration::from_millis(100), Duration::from_secs(10))
    }
}

/// The device app. It owns the [`Devices`] service it provides.
#[derive(Debug)]
pub struct DeviceManager {
    params: Params,
    devices: Arc<Devices>,
    /// The topology's links (hosts are not learned behind them).
    topology: Required<Topology>,
    /// Whether the table-full warning was given.
    warned_full: AtomicBool,
    /// The info lines about hosts, within their budget.
    log: HostLog,
    /// Tells moves from echoes (step 2).
    moves: MoveRule,
    /// `params.refresh()`, computed once (from seconds in an f64: not per PACKET_IN).
    fresh: Duration,
    /// Hosts learned and moves accepted: published
    /// (`pharos_app_events_total{app="device_manager"}`).
    hosts_added: Counter,
    hosts_moved: Counter,
}

impl Default for DeviceManager {
    fn default() -> Self {
        DeviceManager::new(Params::default()).expect("the defaults are in range")
    }
}

impl DeviceManager {
    /// The app with these parameters; out of range (see [`Params::check`]), an error.
    pub fn new(params: Params) -> Result<DeviceManager, (&'static str, String)> {
        params.check()?;
        let limits = Limits {
            max_hosts: params.max_hosts,
            max_ips_per_family: params.max_ips_per_family,
        };
        Ok(DeviceManager {
            params,
            devices: Arc::new(Devices::new(limits)),
            topology: Required::new(),
            warned_full: AtomicBool::new(false),
            moves: MoveRule::new(Duration::from_secs_f64(params.move_quiet)),
            log: HostLog::new(Instant::now()),
            fresh: params.refresh(),
            hosts_added: Counter::new(),
            hosts_moved: Counter::new(),
        })
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The service this app provides (the same one other apps get from `Services`).
    pub fn devices(&self) -> &Arc<Devices> {
        &self.devices
    }

    /// Sightings of known hosts elsewhere refused as echoes, not moves (step 2).
    pub fn echoes(&self) -> u64 {
        self.moves.echoes()
    }
}

/// In-port numbers a host can be behind: physical ports (below `OFPP_MAX`, 0xffffff00)
/// and the switch's LOCAL port (its own network stack). A packet "from" CONTROLLER or
/// any other reserved port came from no host.
fn host_port(port: u32) -> bool {
    port < 0xffff_ff00 || port == 0xffff_fffe
}

impl App for DeviceManager {
    /// When the switch's ports came up (for the move rule).
    type State = PortAges;

    fn name(&self) -> &'static str {
        "device_manager"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.provide(Arc::clone(&self.devices));
        b.require_into(&self.topology);
        b.on_switch_added(|app, ctx, _| app.moves.joined(ctx.now()));
        b.on_packet_in(Order::advise(10), DeviceManager::packet_in);
        // The table's lines for the sender and the destination (looked up ahead for
        // routing), for a PACKET_IN still in the read buffer (`mac_index`).
        b.prefetch_packet_in(|app, _, p| app.devices.prefetch_frame(p.data()));
        b.on_port_status(DeviceManager::port_status);
        b.counter(
            "hosts_added",
            "Hosts learned (new in the table)",
            &self.hosts_added,
        );
        b.counter(
            "hosts_moved",
            "Hosts seen moved to another attachment point (echoes refused are not counted)",
            &self.hosts_moved,
        );
        b.subscribe::<Topology, _>(|app, e| app.forget_behind_topology(e));
        b.every_global(self.params.expire_interval(), |app, _, now| {
            let timeout = app.params.host_timeout();
            let events = app.devices.update(|t| t.expire(now, timeout));
            app.log.roll(now);
            app.log.log(&events, now, Why::Silent, None);
        });
    }
}

impl DeviceManager {
    fn packet_in(&self, ctx: &mut SwitchCtx, ages: &mut PortAges, p: &PacketIn) -> Flow {
        let in_port = p.in_port();
        if !host_port(in_port) {
            return Flow::Continue;
        }
        let Some(sender) = p.eth().and_then(Sender::of_eth) else {
            return Flow::Continue;
        };
        let topology = &self.topology;
        let ap = AttachmentPoint {
            dpid: ctx.dpid(),
            port: in_port,
        };
        let now = ctx.now();
        // The common cases, a known host at its known place or a new one the full
        // table refuses: read-locked, no write.
        let fresh = self.fresh;
        // Routing will ask where the destination is: looked up under the same lock
        // (`Devices`'s "looking ahead").
        let ahead = destination(p.data())
            .filter(|d| !d.is_multicast())
            .map(|d| (d, sender.vlan));
        let devices = &self.devices;
        match devices.sighting(sender.mac, sender.vlan, ap, &sender.ips, now, fresh, ahead) {
            Sighting::Current => return Flow::Continue,
            Sighting::Refused => {
                // Counted even on a link port (where nothing is learned): the table is
                // full all the same, and the check would cost a look-up per packet.
                self.devices.refuse();
                self.warn_if_full();
                return Flow::Continue;
            }
            Sighting::Change => {}
        }
        let events = self.devices.update(|t| {
            if topology.is_link_port(ap.dpid, ap.port) {
                return Vec::new();
            }
            if !self
                .moves
                .allows(ages, t.get(sender.mac, sender.vlan), ap, now)
            {
                return Vec::new(); // an echo (counted)
            }
            let [first, second] = sender.ips;
            let a = t.observe(sender.mac, sender.vlan, ap, first, now);
            let b = second.and_then(|ip| t.observe(sender.mac, sender.vlan, ap, Some(ip), now));
            if t.refused() > 0 {
                self.warn_if_full();
            }
            // No allocation for a known host at its known place, the common case.
            a.into_iter().chain(b).collect()
        });
        for e in &events {
            match e {
                HostEvent::Added { .. } => self.hosts_added.inc(),
                HostEvent::Moved { .. } => self.hosts_moved.inc(),
                _ => {}
            }
        }
        self.log.log(&events, now, Why::Seen, sender.ips[0]);
        Flow::Continue
    }

    fn port_status(
        &self,
        ctx: &mut SwitchCtx,
        ages: &mut PortAges,
        reason: PortReason,
        port: &PortInfo,
    ) {
        if reason != PortReason::Delete && port.is_up() {
            ages.came_up(port.port_no, ctx.now());
        }
        if reason == PortReason::Delete || !port.is_up() {
            let (dpid, port) = (ctx.dpid(), port.port_no);
            let events = self.devices.update(|t| t.remove_attached_to(dpid, port));
            self.log.log(&events, ctx.now(), Why::PortDown, None);
        }
    }

    /// Says once that the table is full (a new host was refused). Loads before it
    /// swaps: every refused PACKET_IN comes here, and a swap would write the cache line.
    fn warn_if_full(&self) {
        if !self.warned_full.load(Ordering::Relaxed)
            && !self.warned_full.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                max_hosts = self.params.max_hosts,
                "device_manager: the host table is full; new hosts are not tracked \
                 (raise max_hosts, or look for a host sending from many addresses)"
            );
        }
    }
}

impl DeviceManager {
    /// The Topology subscription: hosts "learned" on a port that turns out to be an
    /// inter-switch link were hosts behind the other switch; a switch that leaves takes
    /// its hosts with it.
    fn forget_behind_topology(&self, e: &TopologyEvent) {
        let devices = &self.devices;
        let (events, why) = match *e {
            TopologyEvent::LinkAdded(l) => (
                devices.update(|t| {
                    let mut gone = t.remove_attached_to(l.src, l.src_port);
                    gone.extend(t.remove_attached_to(l.dst, l.dst_port));
                    gone
                }),
                Why::LinkPort,
            ),
            TopologyEvent::SwitchRemoved(dpid) => {
                (devices.update(|t| t.remove_switch(dpid)), Why::SwitchLeft)
            }
            TopologyEvent::SwitchAdded(_) | TopologyEvent::LinkRemoved(..) => return,
        };
        // Events from the topology carry no time: these are rare, the clock is read.
        self.log.log(&events, Instant::now(), why, None);
    }
}

/// The destination address of an Ethernet frame.
fn destination(frame: &[u8]) -> Option<MacAddr> {
    Some(MacAddr(frame.get(..6)?.try_into().ok()?))
}

/// Who sent a frame, as far as the frame tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sender {
    pub mac: MacAddr,
    /// The outer VLAN tag's id.
    pub vlan: Option<u16>,
    /// Addresses the sender showed as its own (at most two: an IPv6 source and a
    /// neighbour advertisement's target).
    pub ips: [Option<IpAddr>; 2],
}

impl Sender {
    /// Reads the sender of `frame`: `None` for frames that are not a host's (too short
    /// for Ethernet, LLDP). Addresses the table would not keep (0.0.0.0, ::,
    /// multicast) are left to it to drop.
    #[inline]
    pub fn of(frame: &[u8]) -> Option<Sender> {
        Sender::of_eth(&EthernetFrame::new_checked(frame).ok()?)
    }

    /// [`Sender::of`] for a frame whose Ethernet header was checked (a PACKET_IN's,
    /// checked once by the core for every app).
    #[inline]
    pub fn of_eth(eth: &EthernetFrame<&[u8]>) -> Option<Sender> {
        Sender::of_arp_or_ipv4(eth).unwrap_or_else(|| Sender::of_any(eth.as_bytes()))
    }

    /// The common frames, ARP and IPv4 (at most one VLAN tag), read from the frame's
    /// views without extracting its whole flow key (which copied a key of a few
    /// hundred bytes per PACKET_IN: 8% of the default apps' time under cbench's load).
    /// `None`: another kind of frame, for [`Sender::of_any`]. Gives what `of_any`
    /// gives (property tested).
    #[inline]
    fn of_arp_or_ipv4(eth: &EthernetFrame<&[u8]>) -> Option<Option<Sender>> {
        let mac = eth.src_addr();
        let mut tags = eth.vlan_tags();
        let vlan = match tags.next() {
            None => None,
            Some(Ok(t)) => Some(t.tag.vid()),
            Some(Err(_)) => return None,
        };
        if tags.next().is_some() {
            return None;
        }
        let l3 = tags.payload();
        let mut ips = [None; 2];
        match tags.ethertype() {
            EtherType::Arp => {
                if let Ok(r) = ArpPacket::new_checked(l3).and_then(|p| ArpRepr::parse(&p)) {
                    if r.source_hardware_addr == mac {
                        ips[0] = Some(IpAddr::V4(r.source_protocol_addr));
                    }
                }
            }
            EtherType::Ipv4 => {
                let p = Ipv4Packet::new_unchecked(l3);
                if p.check_header().is_ok() && p.version() == 4 {
                    ips[0] = Some(IpAddr::V4(p.src_addr()));
                }
            }
            _ => return None,
        }
        Some(Some(Sender { mac, vlan, ips }))
    }

    /// Any frame, from its flow key.
    fn of_any(frame: &[u8]) -> Option<Sender> {
        let key = FlowKey::extract(frame).ok()?;
        if key.eth_type == EtherType::Lldp.to_raw() {
            return None;
        }
        let mac = key.eth_src;
        let mut ips = [None; 2];
        if let Some(arp) = key.arp {
            // A proxy's or a bridge's ARP can speak for another host: only an address
            // the frame's own sender claims is its.
            if arp.sha == mac {
                ips[0] = Some(IpAddr::V4(arp.spa));
            }
        } else if let Some(v4) = key.ipv4 {
            ips[0] = Some(IpAddr::V4(v4.src));
        } else if let Some(v6) = key.ipv6 {
            ips[0] = Some(IpAddr::V6(v6.src));
            // A neighbour advertisement names the address its sender answers for. (A
            // solicitation's target is the address looked for, not the sender's.)
            let advert = Some(L4Key::Icmpv6 {
                icmp_type: Icmpv6Type::NeighborAdvert.to_raw(),
                code: 0,
            });
            if let Some(nd) = key.nd.filter(|_| key.l4 == advert) {
                if nd.tll.is_none_or(|tll| tll == mac) {
                    ips[1] = Some(IpAddr::V6(nd.target));
                }
            }
        }
        Some(Sender {
            mac,
            vlan: key.vlan.map(|v| v.vid),
            ips,
        })
    }
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
