//! A sans-IO emulated network for app tests: switches (OpenFlow 1.0 or 1.3 each) with
//! ports, cables between ports, hosts on edge ports, and a clock that moves only when
//! told. No sockets and no threads: the apps run in a real dispatcher
//! ([`controller::dispatch::Dispatcher`]), driven by hand through
//! [`Dispatcher::new_switch`](controller::dispatch::Dispatcher::new_switch), `handle`,
//! `tick`, `global_tick` and `take_queued`,
//! so a test sees exactly what a controller would do, deterministically. The apps'
//! tests and the WASM host's use it (a dev-dependency; a crate of its own because it
//! needs the controller and the apps, which the test kit never depends on).
//!
//! ## Layout
//!
//! ```text
//! lib.rs  Net (switches, cables, hosts, the clock, the work queue), Sw, Host, the
//!         frame helpers (mac, eth, arp_request, is_lldp), FlowModRecord, FlowEntry
//! wire    a frame's exact match, covers (one match within another), model_match,
//!         packet_out_parts and flow_mod_record (decoded messages read)
//! ```
//!
//! ```text
//! host ──frame──► switch port ─► flow table ─┬─ match: the entry's outputs
//!                                            └─ miss:  PACKET_IN ─► pipeline
//! pipeline ─► PACKET_OUT ─► outputs (port, FLOOD, ALL, IN_PORT, TABLE, CONTROLLER)
//!          ─► FLOW_MOD ─► flow table (add, modify, delete, strict, cookies) + log
//!          ─► BARRIER_REQUEST ─► BARRIER_REPLY
//! output on a port ─► cable ─► the peer port (same instant), or a host's inbox
//! ```
//!
//! What it models, and what not:
//!
//! - Ports have a state: a frame out of or into a port that is down (or gone) is
//!   dropped. [`Net::set_port`], [`Net::set_cable`], [`Net::delete_port`] and
//!   [`Net::add_port`] change ports and send the PORT_STATUS a switch would.
//! - The flow table matches every field OpenFlow matches (through
//!   `packet::of_match`, so 1.0 and 1.3 alike) and applies only OUTPUT actions: other
//!   actions (set-field, VLAN push/pop) are recorded but the frame goes out unchanged.
//!   Idle and hard timeouts expire entries as the clock moves; no FLOW_REMOVED is sent.
//! - A table miss is a PACKET_IN, for both versions (OpenFlow 1.0's behaviour). Set
//!   [`Net::of13_miss_drops`] for real 1.3 behaviour: a miss drops unless a table-miss
//!   entry sends to the controller.
//! - No buffers (`n_buffers` 0): PACKET_INs carry the whole frame.
//! - Requests other than BARRIER are not answered (they time out).
//! - Everything is FIFO: the frames a PACKET_OUT sends are processed after the
//!   message that caused them, in order. A flood that never stops (a broadcast storm)
//!   panics after [`Net::max_frames`] frame transmissions in one step.
//!
//! ```ignore
//! let mut net = Net::new(vec![Box::new(app)]);
//! net.add_switch(1, Version::V1_3, 3);
//! net.add_switch(2, Version::V1_0, 3);
//! net.cable(1, 2, 2, 1);
//! let h1 = net.add_host(sim::mac(1), 1, 3);
//! net.advance(Duration::from_secs(2)); // timers run, frames fly
//! net.send(h1, &sim::eth(sim::mac(1), sim::BROADCAST, 0x0800, b"hi"));
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use controller::app::AnyApp;
use controller::dispatch::SwitchState;
use controller::driver::Driver;
use controller::host::{AppHost, Core};
use controller::info::{PortInfo, PortReason, SwitchInfo, PORT_STATE_LINK_DOWN};
use controller::services::Services;

mod wire;

use openflow::model::{FlowModCommand, Match, PortNo};
use openflow::of13::oxm::OxmField;
use openflow::of13::Oxm;
use openflow::{of10, of13, FixedStr, MacAddr, Message, Version};
use wire::packet_match;
pub use wire::{covers, flow_mod_record, model_match, packet_out_parts};

#[allow(unused_imports)]
pub use controller::info::PORT_CONFIG_DOWN;

/// The broadcast address.
pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

/// A host's MAC address: `n` in the last two bytes (`0e:00:00:00:nn:nn`).
pub fn mac(n: u16) -> MacAddr {
    MacAddr([0x0e, 0, 0, 0, (n >> 8) as u8, n as u8])
}

/// The MAC address the sim gives port `port` of switch `dpid`.
pub fn port_mac(dpid: u64, port: u32) -> MacAddr {
    let d = dpid.to_be_bytes();
    MacAddr([0x02, d[5], d[6], d[7], (port >> 8) as u8, port as u8])
}

/// An Ethernet frame (no VLAN tag), padded to 60 bytes.
pub fn eth(src: MacAddr, dst: MacAddr, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(60.max(14 + payload.len()));
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f.resize(f.len().max(60), 0);
    f
}

/// A broadcast ARP request from `src` (`src_ip`) for `dst_ip`.
pub fn arp_request(src: MacAddr, src_ip: Ipv4Addr, dst_ip: Ipv4Addr) -> Vec<u8> {
    let mut arp = Vec::with_capacity(28);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]); // Ethernet, IPv4, request
    arp.extend_from_slice(&src.0);
    arp.extend_from_slice(&src_ip.octets());
    arp.extend_from_slice(&[0; 6]);
    arp.extend_from_slice(&dst_ip.octets());
    eth(src, BROADCAST, 0x0806, &arp)
}

/// A switch's match in its own version's wire form (what the flow table compares).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireMatch {
    V10(of10::Match),
    V13(of13::oxm::Match),
}

/// One FLOW_MOD as the switch received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowModRecord {
    pub command: FlowModCommand,
    /// The match, in the version-neutral model (fields the model lacks are left out;
    /// the flow table uses [`FlowModRecord::wire`]).
    pub matching: Match,
    pub wire: WireMatch,
    pub priority: u16,
    pub cookie: u64,
    /// 1.3 only (0 in 1.0).
    pub cookie_mask: u64,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// Delete commands: only flows that output to this port (`None`: any).
    pub out_port: Option<u32>,
    /// The OUTPUT actions' ports, in order, widened to 32 bits (1.0's reserved ports
    /// too, so `PortNo::from_u32` reads them).
    pub outputs: Vec<u32>,
    /// Actions that are not OUTPUT (recorded, not applied).
    pub other_actions: usize,
    /// When it arrived.
    pub at: Instant,
}

/// A flow table entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowEntry {
    pub matching: Match,
    pub wire: WireMatch,
    pub priority: u16,
    pub cookie: u64,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub outputs: Vec<u32>,
    pub installed: Instant,
    pub last_used: Instant,
    /// Frames it matched.
    pub packets: u64,
}

/// One emulated switch.
#[derive(Debug)]
pub struct Sw {
    pub dpid: u64,
    pub version: Version,
    /// The ports as they are now (the sim's truth; the controller learns of changes by
    /// PORT_STATUS).
    pub ports: Vec<PortInfo>,
    /// The flow table, in installation order.
    pub flows: Vec<FlowEntry>,
    /// Every FLOW_MOD received, in order.
    pub flow_mods: Vec<FlowModRecord>,
    /// Every message received from the controller, in order.
    pub received: Vec<Message>,
    pub packet_ins: u64,
    pub packet_outs: u64,
    /// Frames sent out of each port.
    pub tx: BTreeMap<u32, u64>,
    /// The pipeline's state for it while connected.
    state: Option<SwitchState>,
}

impl Sw {
    pub fn is_connected(&self) -> bool {
        self.state.is_some()
    }

    pub fn port(&self, port: u32) -> Option<&PortInfo> {
        self.ports.iter().find(|p| p.port_no == port)
    }

    /// PACKET_OUTs received whose frame is LLDP (EtherType 0x88cc).
    pub fn lldp_packet_outs(&self) -> usize {
        self.received
            .iter()
            .filter(|m| packet_out_parts(m).is_some_and(|(_, _, data)| is_lldp(&data)))
            .count()
    }
}

/// A host on a switch port: it keeps every frame it receives.
#[derive(Debug, Clone)]
pub struct Host {
    pub mac: MacAddr,
    pub at: (u64, u32),
    pub received: Vec<Vec<u8>>,
}

/// Whether a frame is LLDP (EtherType 0x88cc, untagged).
pub fn is_lldp(frame: &[u8]) -> bool {
    frame.len() >= 14 && frame[12..14] == [0x88, 0xcc]
}

enum Work {
    /// A frame arrives on a switch port.
    Frame {
        dpid: u64,
        port: u32,
        frame: Vec<u8>,
    },
    /// A message from the switch to the controller.
    ToController { dpid: u64, bytes: Vec<u8> },
}

/// The network (see the module doc).
pub struct Net {
    pub pipeline: Core,
    now: Instant,
    start: Instant,
    switches: BTreeMap<u64, Sw>,
    /// Both directions of every cable.
    cables: BTreeMap<(u64, u32), (u64, u32)>,
    hosts: Vec<Host>,
    global_next: Option<Instant>,
    work: VecDeque<Work>,
    /// Real 1.3 table-miss behaviour: a miss drops (default false: a miss is a
    /// PACKET_IN in both versions).
    pub of13_miss_drops: bool,
    /// Frame transmissions allowed in one step before the sim calls it a storm.
    pub max_frames: usize,
    frames: usize,
    /// Frame transmissions in all (every port of every switch).
    pub total_frames: u64,
    /// While set, discovery frames (LLDP) are held on their cables, as if in flight:
    /// the time before discovery completes, made as long as a test needs
    /// ([`Net::release_lldp`] delivers them).
    pub hold_lldp: bool,
    /// The LLDP frames held, in the order they were sent.
    held: Vec<Work>,
}

impl Net {
    /// A network running `apps` (built and started here), with no switches yet.
    pub fn new(apps: Vec<Box<dyn AnyApp>>) -> Net {
        Net::with_services(apps, Services::new())
    }

    /// As [`Net::new`], with services the apps need from outside.
    pub fn with_services(apps: Vec<Box<dyn AnyApp>>, services: Services) -> Net {
        let pipeline = AppHost::build(apps, services).expect("the apps build and start");
        let now = Instant::now();
        let global_next = pipeline.dispatcher.global_tick(now);
        Net {
            pipeline,
            now,
            start: now,
            switches: BTreeMap::new(),
            cables: BTreeMap::new(),
            hosts: Vec::new(),
            global_next,
            work: VecDeque::new(),
            of13_miss_drops: false,
            max_frames: 100_000,
            frames: 0,
            total_frames: 0,
            hold_lldp: false,
            held: Vec::new(),
        }
    }

    /// A network of `switches` (ports 1..=`ports` each, versions from `version`),
    /// cabled as `links` say (each directed link, or both directions, makes one cable),
    /// cabled before any switch connects.
    pub fn topology(
        apps: Vec<Box<dyn AnyApp>>,
        switches: &[controller::info::Dpid],
        links: &[apps::routing::Link],
        ports: u32,
        version: impl Fn(u64) -> Version,
    ) -> Net {
        let mut net = Net::new(apps);
        for l in links {
            net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
        }
        for d in switches {
            net.add_switch(d.0, version(d.0), ports);
        }
        net
    }

    /// The sim's clock.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// How far the clock moved since the network was made.
    pub fn elapsed(&self) -> Duration {
        self.now - self.start
    }

    /// The services the apps provided (and the core's `Switches`).
    pub fn service<T: ?Sized + Send + Sync + 'static>(&self) -> std::sync::Arc<T> {
        self.pipeline
            .services()
            .get::<T>()
            .unwrap_or_else(|| panic!("no service {}", std::any::type_name::<T>()))
    }

    // ---- building ------------------------------------------------------------

    /// A switch with ports 1..=`ports`, all up, connects (switch-added runs now).
    pub fn add_switch(&mut self, dpid: u64, version: Version, ports: u32) {
        let ports = (1..=ports).map(|p| new_port(dpid, p)).collect();
        let sw = Sw {
            dpid,
            version,
            ports,
            flows: Vec::new(),
            flow_mods: Vec::new(),
            received: Vec::new(),
            packet_ins: 0,
            packet_outs: 0,
            tx: BTreeMap::new(),
            state: None,
        };
        assert!(
            self.switches.insert(dpid, sw).is_none(),
            "switch {dpid} added twice"
        );
        self.connect(dpid);
    }

    /// The switch (dis)connected earlier connects again, with its ports and flows as
    /// they are.
    pub fn connect(&mut self, dpid: u64) {
        let sw = self.sw_mut(dpid);
        assert!(sw.state.is_none(), "switch {dpid} is connected already");
        let info = SwitchInfo {
            ports: sw.ports.clone(),
            peer: SocketAddr::from(([127, 0, 0, 1], 6653)),
            ..SwitchInfo::new(openflow::Dpid(dpid), sw.version)
        };
        let mut state = self.pipeline.dispatcher.new_switch(info);
        let mut out = Vec::new();
        self.pipeline
            .dispatcher
            .switch_added(&mut state, &mut out, self.now);
        self.sw_mut(dpid).state = Some(state);
        self.step(|net| net.receive(dpid, &out));
    }

    /// A second connection of the connected switch completes its handshake before the
    /// first one is closed (as when the two are served by different workers): the new
    /// one's switch-added runs, then the old one's switch-removed, with the new one
    /// already listed in `Switches`.
    pub fn reconnect(&mut self, dpid: u64) {
        let old = self.sw_mut(dpid).state.take().expect("a connected switch");
        self.connect(dpid);
        self.pipeline
            .dispatcher
            .disconnected(old, "replaced", self.now);
        self.pump();
    }

    /// The switch disconnects (switch-removed runs now); it stays cabled, forwards
    /// nothing, and may [`Net::connect`] again.
    pub fn disconnect(&mut self, dpid: u64) {
        let state = self.sw_mut(dpid).state.take().expect("a connected switch");
        self.pipeline
            .dispatcher
            .disconnected(state, "sim", self.now);
        self.pump();
    }

    /// A cable between `a:pa` and `b:pb` (frames go both ways).
    pub fn cable(&mut self, a: u64, pa: u32, b: u64, pb: u32) {
        for (end, peer) in [((a, pa), (b, pb)), ((b, pb), (a, pa))] {
            if let Some(old) = self.cables.insert(end, peer) {
                assert_eq!(old, peer, "port {end:?} is cabled to {old:?} already");
            }
        }
    }

    /// The cable at `dpid:port` is unplugged at both ends without the ports noticing (as
    /// if a device that swallows LLDP sat in between): no PORT_STATUS, frames are lost.
    pub fn uncable(&mut self, dpid: u64, port: u32) {
        let peer = self
            .cables
            .remove(&(dpid, port))
            .unwrap_or_else(|| panic!("no cable at {dpid}:{port}"));
        self.cables.remove(&peer);
    }

    /// The cables, each once (lower end first).
    pub fn cables(&self) -> Vec<((u64, u32), (u64, u32))> {
        self.cables
            .iter()
            .filter(|(a, b)| a < b)
            .map(|(a, b)| (*a, *b))
            .collect()
    }

    /// A host with `mac` on `dpid:port`; returns its index.
    pub fn add_host(&mut self, mac: MacAddr, dpid: u64, port: u32) -> usize {
        self.hosts.push(Host {
            mac,
            at: (dpid, port),
            received: Vec::new(),
        });
        self.hosts.len() - 1
    }

    /// The host is unplugged and plugged in at `dpid:port`.
    pub fn move_host(&mut self, host: usize, dpid: u64, port: u32) {
        self.hosts[host].at = (dpid, port);
    }

    pub fn host(&self, host: usize) -> &Host {
        &self.hosts[host]
    }

    /// The frames the host received since last asked.
    pub fn take_received(&mut self, host: usize) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.hosts[host].received)
    }

    pub fn switch(&self, dpid: u64) -> &Sw {
        self.switches
            .get(&dpid)
            .unwrap_or_else(|| panic!("no switch {dpid}"))
    }

    pub fn switches(&self) -> impl Iterator<Item = &Sw> {
        self.switches.values()
    }

    fn sw_mut(&mut self, dpid: u64) -> &mut Sw {
        self.switches
            .get_mut(&dpid)
            .unwrap_or_else(|| panic!("no switch {dpid}"))
    }

    /// Forgets every switch's logs (flow mods, messages, counters); flow tables stay.
    pub fn clear_logs(&mut self) {
        for sw in self.switches.values_mut() {
            sw.flow_mods.clear();
            sw.received.clear();
            sw.packet_ins = 0;
            sw.packet_outs = 0;
            sw.tx.clear();
        }
        self.total_frames = 0;
    }

    // ---- what happens ----------------------------------------------------------

    /// The host sends a frame (into its switch port), and everything it causes runs.
    pub fn send(&mut self, host: usize, frame: &[u8]) {
        let (dpid, port) = self.hosts[host].at;
        self.inject(dpid, port, frame);
    }

    /// A frame arrives on `dpid:port` from whatever is plugged in there.
    pub fn inject(&mut self, dpid: u64, port: u32, frame: &[u8]) {
        self.work.push_back(Work::Frame {
            dpid,
            port,
            frame: frame.to_vec(),
        });
        self.pump();
    }

    /// Stops holding discovery frames and delivers those held (see [`Net::hold_lldp`]).
    pub fn release_lldp(&mut self) {
        self.hold_lldp = false;
        self.work.extend(self.held.drain(..));
        self.pump();
    }

    /// One end's link goes down or up (PORT_STATUS modify, `OFPPS_LINK_DOWN`).
    pub fn set_port(&mut self, dpid: u64, port: u32, up: bool) {
        let p = self.set_link_state(dpid, port, up);
        self.port_status(dpid, PortReason::Modify, &p);
    }

    /// Both ends of the cable at `dpid:port` go down or up together, as when one end of
    /// a veth pair is set down; then each switch sends its PORT_STATUS.
    pub fn set_cable(&mut self, dpid: u64, port: u32, up: bool) {
        let (b, pb) = self.cables[&(dpid, port)];
        let pa = self.set_link_state(dpid, port, up);
        let pb = self.set_link_state(b, pb, up);
        self.port_status(dpid, PortReason::Modify, &pa);
        self.port_status(b, PortReason::Modify, &pb);
    }

    fn set_link_state(&mut self, dpid: u64, port: u32, up: bool) -> PortInfo {
        let p = self
            .sw_mut(dpid)
            .ports
            .iter_mut()
            .find(|p| p.port_no == port)
            .unwrap_or_else(|| panic!("no port {dpid}:{port}"));
        if up {
            p.state &= !PORT_STATE_LINK_DOWN;
        } else {
            p.state |= PORT_STATE_LINK_DOWN;
        }
        p.clone()
    }

    /// The port is removed from the switch (PORT_STATUS delete); its cable stays, to
    /// use when the port comes back.
    pub fn delete_port(&mut self, dpid: u64, port: u32) {
        let sw = self.sw_mut(dpid);
        let at = sw
            .ports
            .iter()
            .position(|p| p.port_no == port)
            .unwrap_or_else(|| panic!("no port {dpid}:{port}"));
        let p = sw.ports.remove(at);
        self.port_status(dpid, PortReason::Delete, &p);
    }

    /// A port, up, is added to the switch (PORT_STATUS add).
    pub fn add_port(&mut self, dpid: u64, port: u32) {
        let p = new_port(dpid, port);
        let sw = self.sw_mut(dpid);
        assert!(sw.port(port).is_none(), "port {dpid}:{port} exists");
        sw.ports.push(p.clone());
        self.port_status(dpid, PortReason::Add, &p);
    }

    /// Sends the switch's PORT_STATUS to the controller (if connected).
    fn port_status(&mut self, dpid: u64, reason: PortReason, p: &PortInfo) {
        let msg = match self.switch(dpid).version {
            Version::V1_0 => Message::V10(of10::Message::PortStatus(of10::PortStatus {
                reason: of10::PortReason::from_raw(reason.to_raw()),
                desc: of10::PhyPort {
                    port_no: p.port_no as u16,
                    hw_addr: p.hw_addr,
                    name: FixedStr::new(&p.name).expect("a short name"),
                    config: p.config,
                    state: p.state,
                    ..of10::PhyPort::default()
                },
            })),
            Version::V1_3 => Message::V13(of13::Message::PortStatus(of13::PortStatus {
                reason: of13::port::PortReason::from_raw(reason.to_raw()),
                desc: of13::Port {
                    port_no: p.port_no,
                    hw_addr: p.hw_addr,
                    name: FixedStr::new(&p.name).expect("a short name"),
                    config: p.config,
                    state: p.state,
                    ..of13::Port::default()
                },
            })),
        };
        self.switch_sends(dpid, &msg);
    }

    /// Sends `msg` from the switch to the controller, and runs what follows.
    pub fn switch_sends(&mut self, dpid: u64, msg: &Message) {
        let bytes = msg.to_bytes(0).expect("the sim's messages encode");
        self.work.push_back(Work::ToController { dpid, bytes });
        self.pump();
    }

    /// Moves the clock forward by `d`, running every timer, timeout and flow expiry
    /// due on the way, in time order.
    pub fn advance(&mut self, d: Duration) {
        let until = self.now + d;
        self.pump();
        while let Some(t) = self.next_event().filter(|t| *t <= until) {
            self.now = self.now.max(t);
            self.fire_due();
        }
        self.now = until;
    }

    /// When the next timer, request timeout or flow expiry is due.
    fn next_event(&self) -> Option<Instant> {
        let switches = self.switches.values().flat_map(|sw| {
            let timers = sw.state.as_ref().and_then(SwitchState::next_deadline);
            let flows = sw.flows.iter().filter_map(expiry);
            timers.into_iter().chain(flows)
        });
        switches.chain(self.global_next).min()
    }

    fn fire_due(&mut self) {
        let now = self.now;
        if self.global_next.is_some_and(|t| t <= now) {
            self.global_next = self.pipeline.dispatcher.global_tick(now);
            self.pump();
        }
        let dpids: Vec<u64> = self.switches.keys().copied().collect();
        for dpid in dpids {
            let sw = self.switches.get_mut(&dpid).expect("a switch");
            sw.flows.retain(|f| expiry(f).is_none_or(|t| t > now));
            let Some(state) = sw.state.as_mut() else {
                continue;
            };
            if state.next_deadline().is_some_and(|t| t <= now) {
                let mut out = Vec::new();
                self.pipeline.dispatcher.tick(state, &mut out, now);
                self.step(|net| net.receive(dpid, &out));
            }
        }
    }

    /// Runs `f`, then everything it queued.
    fn step(&mut self, f: impl FnOnce(&mut Net)) {
        f(self);
        self.pump();
    }

    /// Runs queued work until nothing is left, FIFO; then what apps sent through
    /// `Switches`; again until quiet.
    fn pump(&mut self) {
        self.frames = 0;
        loop {
            while let Some(w) = self.work.pop_front() {
                match w {
                    Work::Frame { dpid, port, frame } => self.arrive(dpid, port, &frame),
                    Work::ToController { dpid, bytes } => self.handle(dpid, &bytes),
                }
            }
            let mut any = false;
            let dpids: Vec<u64> = self.switches.keys().copied().collect();
            for dpid in dpids {
                let sw = self.switches.get_mut(&dpid).expect("a switch");
                let Some(state) = sw.state.as_mut() else {
                    continue;
                };
                let mut out = Vec::new();
                self.pipeline
                    .dispatcher
                    .take_queued(state, &mut out, self.now);
                if !out.is_empty() {
                    any = true;
                    self.receive(dpid, &out);
                }
            }
            if !any && self.work.is_empty() {
                return;
            }
        }
    }

    /// A message from the switch, through the pipeline: a worker's turn of one message.
    fn handle(&mut self, dpid: u64, bytes: &[u8]) {
        let now = self.now;
        let sw = self.switches.get_mut(&dpid).expect("a switch");
        let Some(state) = sw.state.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        self.pipeline.dispatcher.handle(state, bytes, &mut out, now);
        self.pipeline.dispatcher.turn_end(state, &mut out, now);
        self.receive(dpid, &out);
    }

    /// What the controller sent the switch (whole messages).
    fn receive(&mut self, dpid: u64, mut bytes: &[u8]) {
        while bytes.len() >= 8 {
            let len = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
            let (frame, rest) = bytes.split_at(len.clamp(8, bytes.len()));
            bytes = rest;
            let (xid, msg) = Message::decode(frame)
                .unwrap_or_else(|e| panic!("switch {dpid} got an undecodable message: {e}"));
            self.execute(dpid, xid, &msg);
            self.sw_mut(dpid).received.push(msg);
        }
    }

    fn execute(&mut self, dpid: u64, xid: u32, msg: &Message) {
        if let Some((in_port, outputs, data)) = packet_out_parts(msg) {
            self.sw_mut(dpid).packet_outs += 1;
            for port in outputs {
                self.output(dpid, in_port, port, &data);
            }
            return;
        }
        if let Some(fm) = flow_mod_record(msg, self.now) {
            self.apply_flow_mod(dpid, &fm);
            self.sw_mut(dpid).flow_mods.push(fm);
            return;
        }
        let reply = match msg {
            Message::V10(of10::Message::BarrierRequest) => {
                Message::V10(of10::Message::BarrierReply)
            }
            Message::V13(of13::Message::BarrierRequest) => {
                Message::V13(of13::Message::BarrierReply)
            }
            _ => return,
        };
        let bytes = reply.to_bytes(xid).expect("a barrier reply encodes");
        self.work.push_back(Work::ToController { dpid, bytes });
    }

    /// A frame arrives on a port: the flow table, or a table miss.
    fn arrive(&mut self, dpid: u64, port: u32, frame: &[u8]) {
        let now = self.now;
        let Some(sw) = self.switches.get_mut(&dpid) else {
            return;
        };
        if !sw.is_connected() || !sw.port(port).is_some_and(PortInfo::is_up) {
            return;
        }
        let packet = packet_match(sw.version, frame, port);
        let best = sw
            .flows
            .iter_mut()
            .filter(|f| covers(&f.wire, &packet))
            .fold(None::<&mut FlowEntry>, |best, f| match best {
                Some(b) if b.priority >= f.priority => Some(b),
                _ => Some(f),
            });
        match best {
            Some(f) => {
                f.last_used = now;
                f.packets += 1;
                let (outputs, cookie) = (f.outputs.clone(), f.cookie);
                for out in outputs {
                    if out == CONTROLLER {
                        self.packet_in(dpid, port, frame, true, cookie);
                    } else {
                        self.output(dpid, Some(port), out, frame);
                    }
                }
            }
            None if sw.version == Version::V1_3 && self.of13_miss_drops => {}
            None => self.packet_in(dpid, port, frame, false, 0),
        }
    }

    /// Sends a PACKET_IN for `frame` received on `port`.
    fn packet_in(&mut self, dpid: u64, port: u32, frame: &[u8], action: bool, cookie: u64) {
        let sw = self.sw_mut(dpid);
        sw.packet_ins += 1;
        let total_len = frame.len() as u16;
        let msg = match sw.version {
            Version::V1_0 => Message::V10(of10::Message::PacketIn(of10::PacketIn {
                buffer_id: openflow::model::NO_BUFFER,
                total_len,
                in_port: port as u16,
                reason: if action {
                    of10::PacketInReason::Action
                } else {
                    of10::PacketInReason::NoMatch
                },
                data: frame.to_vec(),
            })),
            Version::V1_3 => Message::V13(of13::Message::PacketIn(of13::PacketIn {
                buffer_id: openflow::model::NO_BUFFER,
                total_len,
                reason: if action {
                    of13::PacketInReason::Action
                } else {
                    of13::PacketInReason::NoMatch
                },
                table_id: 0,
                cookie: if action { cookie } else { u64::MAX },
                match_: of13::Match::new(vec![Oxm::basic(OxmField::InPort, u64::from(port))]),
                data: frame.to_vec(),
            })),
        };
        let bytes = msg.to_bytes(0).expect("a PACKET_IN encodes");
        self.work.push_back(Work::ToController { dpid, bytes });
    }

    /// One output action on `frame`, which came in on `in_port` (if it came in).
    fn output(&mut self, dpid: u64, in_port: Option<u32>, port: u32, frame: &[u8]) {
        let ports = |sw: &Sw, flood: bool| -> Vec<u32> {
            sw.ports
                .iter()
                .filter(|p| Some(p.port_no) != in_port && p.port_no < 0xffff_ff00)
                // OFPPC_NO_FLOOD, 1.0 only (1.3 dropped it).
                .filter(|p| !(flood && sw.version == Version::V1_0 && p.config & (1 << 4) != 0))
                .map(|p| p.port_no)
                .collect()
        };
        match PortNo::from_u32(port) {
            PortNo::Physical(p) => self.transmit(dpid, p, frame),
            PortNo::Flood | PortNo::All => {
                let flood = PortNo::from_u32(port) == PortNo::Flood;
                for p in ports(self.switch(dpid), flood) {
                    self.transmit(dpid, p, frame);
                }
            }
            PortNo::InPort => {
                if let Some(p) = in_port {
                    self.transmit(dpid, p, frame);
                }
            }
            PortNo::Controller => {
                if let Some(p) = in_port {
                    self.packet_in(dpid, p, frame, true, 0);
                }
            }
            PortNo::Table => {
                if let Some(p) = in_port {
                    self.arrive(dpid, p, frame);
                }
            }
            PortNo::Normal | PortNo::Local | PortNo::Any => {}
        }
    }

    /// The frame goes out of `dpid:port`: along the cable, or to the host there.
    fn transmit(&mut self, dpid: u64, port: u32, frame: &[u8]) {
        let sw = self.sw_mut(dpid);
        if !sw.port(port).is_some_and(PortInfo::is_up) {
            return;
        }
        *sw.tx.entry(port).or_insert(0) += 1;
        self.total_frames += 1;
        self.frames += 1;
        assert!(
            self.frames <= self.max_frames,
            "a broadcast storm: more than {} frames in one step",
            self.max_frames
        );
        if let Some(&(b, pb)) = self.cables.get(&(dpid, port)) {
            let w = Work::Frame {
                dpid: b,
                port: pb,
                frame: frame.to_vec(),
            };
            match self.hold_lldp && is_lldp(frame) {
                true => self.held.push(w),
                false => self.work.push_back(w),
            }
        }
        for h in self.hosts.iter_mut().filter(|h| h.at == (dpid, port)) {
            h.received.push(frame.to_vec());
        }
    }

    fn apply_flow_mod(&mut self, dpid: u64, fm: &FlowModRecord) {
        let sw = self.sw_mut(dpid);
        let cookie_ok = |f: &FlowEntry| f.cookie & fm.cookie_mask == fm.cookie & fm.cookie_mask;
        let port_ok = |f: &FlowEntry| fm.out_port.is_none_or(|p| f.outputs.contains(&p));
        let strict = |f: &FlowEntry| f.wire == fm.wire && f.priority == fm.priority;
        match fm.command {
            FlowModCommand::Add => {
                let entry = FlowEntry {
                    matching: fm.matching,
                    wire: fm.wire.clone(),
                    priority: fm.priority,
                    cookie: fm.cookie,
                    idle_timeout: fm.idle_timeout,
                    hard_timeout: fm.hard_timeout,
                    outputs: fm.outputs.clone(),
                    installed: fm.at,
                    last_used: fm.at,
                    packets: 0,
                };
                match sw.flows.iter_mut().find(|f| strict(f)) {
                    Some(f) => *f = entry,
                    None => sw.flows.push(entry),
                }
            }
            FlowModCommand::Modify | FlowModCommand::ModifyStrict => {
                let exact = fm.command == FlowModCommand::ModifyStrict;
                for f in sw.flows.iter_mut() {
                    let hit = if exact {
                        strict(f)
                    } else {
                        covers(&fm.wire, &f.wire)
                    };
                    if hit && cookie_ok(f) {
                        f.outputs = fm.outputs.clone();
                    }
                }
            }
            FlowModCommand::Delete | FlowModCommand::DeleteStrict => {
                let exact = fm.command == FlowModCommand::DeleteStrict;
                sw.flows.retain(|f| {
                    let hit = if exact {
                        strict(f)
                    } else {
                        covers(&fm.wire, &f.wire)
                    };
                    !(hit && cookie_ok(f) && port_ok(f))
                });
            }
        }
    }
}

/// 1.3's OFPP_CONTROLLER, which 1.0's widens to.
const CONTROLLER: u32 = 0xffff_fffd;

fn new_port(dpid: u64, port: u32) -> PortInfo {
    PortInfo {
        port_no: port,
        hw_addr: port_mac(dpid, port),
        name: format!("s{dpid}-eth{port}"),
        config: 0,
        state: 0,
    }
}

/// When the entry expires, if it does.
fn expiry(f: &FlowEntry) -> Option<Instant> {
    let secs = |s: u16| Duration::from_secs(u64::from(s));
    let idle = (f.idle_timeout > 0).then(|| f.last_used + secs(f.idle_timeout));
    let hard = (f.hard_timeout > 0).then(|| f.installed + secs(f.hard_timeout));
    idle.into_iter().chain(hard).min()
}
