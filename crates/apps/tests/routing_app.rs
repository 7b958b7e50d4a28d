//! The routing app on the sans-IO test network (crates/sim), with the Topology and
//! Devices services driven by hand as the topology and device apps would: flows along
//! the whole path for a known host, floods that reach every host once on rings and fat
//! trees, routes removed with their flows when a link on them fails or their host
//! moves, FLOW_REMOVED and the bound on installed routes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use apps::devices::table::{AttachmentPoint, HostEvent, Limits};
use apps::devices::Devices;
use apps::routing::app::COOKIE_TAG;
use apps::routing::{topo, Link};
use apps::topology::{LinkGone, Topology, TopologyEvent};
use controller::info::Dpid;
use controller::services::Services;
use openflow::model::{FlowModCommand, Vlan};
use openflow::{of10, of13, MacAddr, Message, Version};
use sim::{mac, Net, BROADCAST};
use testkit::frames;

fn v13(_: u64) -> Version {
    Version::V1_3
}

fn mixed(dpid: u64) -> Version {
    if dpid % 2 == 0 {
        Version::V1_0
    } else {
        Version::V1_3
    }
}

/// The sim network running the routing app alone, with the services it uses.
struct Lab {
    net: Net,
    topology: Arc<Topology>,
    devices: Arc<Devices>,
}

impl Lab {
    /// `switches` cabled as `links` say, with `ports` ports each, the topology told
    /// of them all.
    fn new(
        switches: &[Dpid],
        links: &[Link],
        ports: u32,
        version: fn(u64) -> Version,
        params: &str,
    ) -> Lab {
        let topology = Arc::new(Topology::new());
        let devices = Arc::new(Devices::new(Limits::default()));
        let mut services = Services::new();
        services.provide(Arc::clone(&topology), "test").unwrap();
        services.provide(Arc::clone(&devices), "test").unwrap();
        let params: toml::Table = toml::from_str(params).unwrap();
        let app = apps::by_name("routing", &params).unwrap();
        let mut net = Net::with_services(vec![app], services);
        for l in links {
            net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
        }
        for d in switches {
            net.add_switch(d.0, version(d.0), ports);
        }
        topology.update(|s| {
            let mut events = Vec::new();
            for d in switches {
                s.set_switch(*d, Vec::new());
                events.push(TopologyEvent::SwitchAdded(*d));
            }
            for &l in links {
                s.add_link(l);
                events.push(TopologyEvent::LinkAdded(l));
            }
            events
        });
        Lab {
            net,
            topology,
            devices,
        }
    }

    /// A host on `dpid:port`, known to the devices service; its index in the sim.
    fn host(&mut self, n: u16, dpid: u64, port: u32) -> usize {
        self.learn(mac(n), None, dpid, port);
        self.net.add_host(mac(n), dpid, port)
    }

    fn learn(&mut self, mac: MacAddr, vlan: Option<u16>, dpid: u64, port: u32) {
        let ap = AttachmentPoint::new(dpid, port);
        self.devices.update(|t| {
            t.observe(mac, vlan, ap, None, Instant::now())
                .into_iter()
                .collect()
        });
        self.deliver();
    }

    /// Delivers what the apps sent through `Switches` from outside the sim's steps
    /// (here: from the services' subscribers).
    fn deliver(&mut self) {
        self.net.advance(Duration::ZERO);
    }

    /// What the topology app would do when it sees links come or go.
    fn links(&mut self, links: &[Link], up: bool) {
        self.topology.update(|s| {
            let mut events = Vec::new();
            for &l in links {
                if up && s.add_link(l) {
                    events.push(TopologyEvent::LinkAdded(l));
                } else if !up && s.remove_link(l) {
                    events.push(TopologyEvent::LinkRemoved(l, LinkGone::PortDown));
                }
            }
            events
        });
        self.deliver();
    }

    /// Both ends of the cable at `dpid:port` go down, and the topology says so.
    fn cut(&mut self, dpid: u64, port: u32) {
        self.net.set_cable(dpid, port, false);
        let links = self.topology.snapshot().links_at(Dpid(dpid), port);
        assert!(!links.is_empty(), "no link at {dpid}:{port}");
        self.links(&links, false);
    }

    /// The ADD flow mods each switch got since the logs were cleared, as
    /// (dpid, in_port, out_port) of the flows matching `src → dst`.
    fn adds(&self, src: MacAddr, dst: MacAddr) -> Vec<(u64, u32, u32)> {
        self.flow_mods(FlowModCommand::Add, src, dst)
    }

    fn flow_mods(&self, cmd: FlowModCommand, src: MacAddr, dst: MacAddr) -> Vec<(u64, u32, u32)> {
        let mut v = Vec::new();
        for sw in self.net.switches() {
            for fm in &sw.flow_mods {
                let m = fm.matching;
                if fm.command == cmd && m.eth_src == Some(src) && m.eth_dst == Some(dst) {
                    let out = fm.outputs.first().copied().unwrap_or(0);
                    v.push((sw.dpid, m.in_port.unwrap(), out));
                }
            }
        }
        v
    }

    /// The flows in the switches' tables for `src → dst`, as (dpid, in_port, out_port).
    fn flows(&self, src: MacAddr, dst: MacAddr) -> Vec<(u64, u32, u32)> {
        let mut v = Vec::new();
        for sw in self.net.switches() {
            for f in &sw.flows {
                if f.matching.eth_src == Some(src) && f.matching.eth_dst == Some(dst) {
                    v.push((sw.dpid, f.matching.in_port.unwrap(), f.outputs[0]));
                }
            }
        }
        v
    }

    fn packet_ins(&self) -> u64 {
        self.net.switches().map(|s| s.packet_ins).sum()
    }
}

fn frame(src: u16, dst: u16, body: &[u8]) -> Vec<u8> {
    sim::eth(mac(src), mac(dst), 0x0800, body)
}

#[test]
fn a_known_destination_gets_one_flow_per_switch_of_the_path_then_forwarding_needs_no_controller() {
    for version in [v13 as fn(u64) -> Version, mixed] {
        let (switches, links) = topo::linear(4);
        let mut lab = Lab::new(&switches, &links, 3, version, "");
        let h1 = lab.host(1, 1, 3);
        let h4 = lab.host(4, 4, 3);
        lab.net.clear_logs();
        lab.net.send(h1, &frame(1, 4, b"one"));
        assert_eq!(lab.net.take_received(h4), [frame(1, 4, b"one")]);
        // s1 enters by the host port and leaves by 2; s2, s3 by 1 then 2; s4 to the host.
        let path = vec![(1, 3, 2), (2, 1, 2), (3, 1, 2), (4, 1, 3)];
        assert_eq!(lab.flows(mac(1), mac(4)), path);
        // (Each switch after the first got its flow twice: see the next test.)
        let mut adds = lab.adds(mac(1), mac(4));
        adds.dedup();
        assert_eq!(adds, path);
        // One route, one cookie, the app's; the first switch's flow asks for FLOW_REMOVED.
        let mut cookies: Vec<u64> = lab
            .net
            .switches()
            .flat_map(|s| {
                s.flows
                    .iter()
                    .filter(|f| f.matching.eth_dst == Some(mac(4)))
            })
            .map(|f| f.cookie)
            .collect();
        cookies.dedup();
        assert_eq!(cookies.len(), 1);
        assert_eq!(cookies[0] >> 48, COOKIE_TAG >> 48);
        let first = &lab.net.switch(1).flow_mods;
        assert!(first
            .iter()
            .all(|f| f.idle_timeout == 10 && f.hard_timeout == 0));
        let ins = lab.packet_ins();
        lab.net.send(h1, &frame(1, 4, b"two"));
        lab.net.send(h1, &frame(1, 4, b"three"));
        assert_eq!(lab.net.take_received(h4).len(), 2);
        assert_eq!(lab.packet_ins(), ins, "the flows forward on their own");
    }
}

#[test]
fn a_packet_that_overtakes_its_flows_follows_the_route_installed_for_it() {
    // The sim delivers what goes through `Switches` (the flows of the switches after
    // the first) after what the handler sent its own switch, so the packet reaches
    // s2 and s3 before their flows: each sends it on along the installed route (and
    // sends its flow again) without computing another route.
    let (switches, links) = topo::linear(3);
    let mut lab = Lab::new(&switches, &links, 3, v13, "");
    let h1 = lab.host(1, 1, 3);
    let h3 = lab.host(3, 3, 3);
    lab.net.clear_logs();
    lab.net.send(h1, &frame(1, 3, b"x"));
    assert_eq!(lab.net.take_received(h3).len(), 1);
    let per_switch: Vec<u64> = lab.net.switches().map(|s| s.packet_ins).collect();
    assert_eq!(per_switch, [1, 1, 1]);
    let adds = lab.adds(mac(1), mac(3));
    assert_eq!(
        adds,
        [(1, 3, 2), (2, 1, 2), (2, 1, 2), (3, 1, 3), (3, 1, 3)]
    );
    let cookies: std::collections::BTreeSet<u64> = lab
        .net
        .switches()
        .flat_map(|s| s.flow_mods.iter().map(|f| f.cookie))
        .collect();
    assert_eq!(cookies.len(), 1, "one route");
}

#[test]
fn hosts_on_one_switch_get_one_flow() {
    let mut lab = Lab::new(&[Dpid(1)], &[], 4, v13, "");
    let a = lab.host(1, 1, 1);
    let b = lab.host(2, 1, 4);
    lab.net.send(a, &frame(1, 2, b"hi"));
    assert_eq!(lab.net.take_received(b).len(), 1);
    assert_eq!(lab.flows(mac(1), mac(2)), [(1, 1, 4)]);
    // Back the other way too, and a frame for a host behind its own port is dropped.
    lab.net.send(b, &frame(2, 1, b"hi"));
    assert_eq!(lab.net.take_received(a).len(), 1);
    lab.net.inject(1, 1, &frame(3, 1, b"echo"));
    assert!(lab.net.take_received(a).is_empty());
}

#[test]
fn a_single_switch_floods_broadcasts_out_of_every_other_port_by_name() {
    let mut lab = Lab::new(&[Dpid(1)], &[], 4, v13, "");
    let hosts: Vec<usize> = (1..=4).map(|p| lab.host(p as u16, 1, p)).collect();
    lab.net.clear_logs();
    lab.net
        .send(hosts[0], &sim::eth(mac(1), BROADCAST, 0x0806, b"who"));
    for &h in &hosts[1..] {
        assert_eq!(lab.net.take_received(h).len(), 1);
    }
    assert!(lab.net.take_received(hosts[0]).is_empty());
    // Explicit ports, never FLOOD (which knows nothing of the tree).
    let out = lab
        .net
        .switch(1)
        .received
        .iter()
        .find_map(sim::packet_out_parts);
    assert_eq!(out.unwrap().1, [2, 3, 4]);
}

/// Each switch keeps its flood ports, computed once: a PORT_STATUS (a port down, a
/// port added, a port deleted) makes the next flood use the ports as they are.
#[test]
fn the_flood_ports_follow_port_status() {
    let mut lab = Lab::new(&[Dpid(1)], &[], 4, v13, "");
    let a = lab.host(1, 1, 1);
    let flood = |lab: &mut Lab| {
        // Past the repeat window (2b): each broadcast is a new one.
        lab.net.advance(Duration::from_millis(300));
        lab.net.clear_logs();
        lab.net
            .send(a, &sim::eth(mac(1), BROADCAST, 0x0806, b"who"));
        let sw = lab.net.switch(1);
        sw.received
            .iter()
            .find_map(sim::packet_out_parts)
            .unwrap()
            .1
    };
    assert_eq!(flood(&mut lab), [2, 3, 4]);
    lab.net.set_port(1, 3, false);
    assert_eq!(flood(&mut lab), [2, 4]);
    lab.net.add_port(1, 5);
    assert_eq!(flood(&mut lab), [2, 4, 5]);
    lab.net.delete_port(1, 2);
    assert_eq!(flood(&mut lab), [4, 5]);
    lab.net.set_port(1, 3, true);
    assert_eq!(flood(&mut lab), [3, 4, 5]);
}

/// Every host but the sender receives a broadcast exactly once; each switch sends
/// it out at most once.
fn floods_once(lab: &mut Lab, hosts: &[usize]) {
    for &from in hosts {
        lab.net.clear_logs();
        let src = lab.net.host(from).mac;
        lab.net
            .send(from, &sim::eth(src, BROADCAST, 0x0806, b"who has"));
        for &h in hosts {
            let n = lab.net.take_received(h).len();
            assert_eq!(n, usize::from(h != from), "host {h} from host {from}");
        }
        for sw in lab.net.switches() {
            assert!(
                sw.packet_outs <= 1,
                "s{} flooded {} times",
                sw.dpid,
                sw.packet_outs
            );
        }
        // An unknown unicast destination goes the same way.
        lab.net.clear_logs();
        lab.net
            .send(from, &sim::eth(src, mac(999), 0x0800, b"anyone"));
        for &h in hosts {
            let n = lab.net.take_received(h).len();
            assert_eq!(n, usize::from(h != from), "host {h} from host {from}");
        }
    }
}

#[test]
fn broadcasts_on_a_ring_reach_every_host_once() {
    let (switches, links) = topo::ring(4);
    let mut lab = Lab::new(&switches, &links, 3, mixed, "");
    let hosts: Vec<usize> = (1..=4).map(|d| lab.host(d as u16, d, 3)).collect();
    floods_once(&mut lab, &hosts);
}

#[test]
fn broadcasts_on_a_fat_tree_reach_every_host_once() {
    let ft = topo::FatTree { k: 4 };
    let mut lab = Lab::new(&ft.switches(), &ft.links(), 4, mixed, "");
    let mut hosts = Vec::new();
    for pod in 0..4 {
        for e in 0..2 {
            for port in 1..=2 {
                let n = hosts.len() as u16 + 1;
                hosts.push(lab.host(n, ft.edge(pod, e).0, port));
            }
        }
    }
    floods_once(&mut lab, &hosts);
    // And unicast between every pair, each over a shortest path (edge-agg-core-agg-edge
    // at most: five switches).
    for &a in &hosts {
        for &b in &hosts {
            if a == b {
                continue;
            }
            let (ma, mb) = (lab.net.host(a).mac, lab.net.host(b).mac);
            lab.net.send(a, &sim::eth(ma, mb, 0x0800, b"ping"));
            assert_eq!(lab.net.take_received(b).len(), 1);
            assert!(lab.flows(ma, mb).len() <= 5);
        }
    }
}

#[test]
fn before_discovery_a_broadcast_goes_around_each_loop_once_not_forever() {
    // The cables are there, the topology knows none of them yet: every port looks
    // like an edge port. Without the repeat check (routing::flood) this storms (the sim panics).
    let ft = topo::FatTree { k: 4 };
    for (switches, links, ports, edges) in [
        (
            topo::ring(4).0,
            topo::ring(4).1,
            3,
            vec![(1, 3), (2, 3), (3, 3), (4, 3)],
        ),
        (
            ft.switches(),
            ft.links(),
            4,
            (0..4).map(|p| (ft.edge(p, 0).0, 1)).collect(),
        ),
    ] {
        let mut lab = Lab::new(&switches, &links, ports, mixed, "");
        lab.links(&links, false);
        let hosts: Vec<usize> = edges
            .iter()
            .enumerate()
            .map(|(i, &(d, p))| lab.host(i as u16 + 1, d, p))
            .collect();
        lab.net.clear_logs();
        let hello = sim::eth(mac(1), BROADCAST, 0x0806, b"who has");
        lab.net.send(hosts[0], &hello);
        for sw in lab.net.switches() {
            assert!(
                sw.packet_outs <= 1,
                "s{} flooded {}",
                sw.dpid,
                sw.packet_outs
            );
        }
        for &h in &hosts[1..] {
            assert!(!lab.net.take_received(h).is_empty(), "host {h}");
        }
        // The host asks again a second later: flooded again.
        lab.net.advance(Duration::from_secs(1));
        lab.net.clear_logs();
        lab.net.send(hosts[0], &hello);
        assert!(!lab.net.take_received(hosts[1]).is_empty());
    }
}

#[test]
fn a_copy_that_went_around_a_loop_is_dropped() {
    let (switches, links) = topo::ring(4);
    let mut lab = Lab::new(&switches, &links, 3, v13, "");
    let h1 = lab.host(1, 1, 3);
    // The ring's one cable outside the tree: its ports flood nothing.
    let tree: Vec<Link> = apps::routing::SpanningTree::from_links(switches, links.clone())
        .links()
        .to_vec();
    let off = links
        .iter()
        .find(|l| !tree.iter().any(|t| t == *l || t.reversed() == **l))
        .copied()
        .unwrap();
    lab.net.clear_logs();
    lab.net.inject(
        off.dst.0,
        off.dst_port,
        &sim::eth(mac(9), BROADCAST, 0x0806, b"loop"),
    );
    assert!(lab.net.take_received(h1).is_empty());
    assert_eq!(lab.net.switch(off.dst.0).packet_outs, 0);
}

#[test]
fn a_failed_link_takes_its_routes_flows_and_the_next_packet_goes_the_other_way() {
    for version in [v13 as fn(u64) -> Version, mixed] {
        let (switches, links) = topo::ring(4);
        let mut lab = Lab::new(&switches, &links, 3, version, "");
        let h1 = lab.host(1, 1, 3);
        let h2 = lab.host(2, 2, 3);
        lab.net.send(h1, &frame(1, 2, b"one"));
        assert_eq!(lab.net.take_received(h2).len(), 1);
        assert_eq!(lab.flows(mac(1), mac(2)), [(1, 3, 2), (2, 1, 3)]);
        lab.net.clear_logs();
        lab.cut(1, 2);
        // Deleted where they were, strictly; nothing else touched.
        let gone = lab.flow_mods(FlowModCommand::DeleteStrict, mac(1), mac(2));
        assert_eq!(gone, [(1, 3, 0), (2, 1, 0)]);
        // Under routing's tag, and on 1.3 limited to routing's flows by the cookie
        // mask: another app's flow with the same match and priority stays.
        for sw in lab.net.switches() {
            for fm in sw.flow_mods.iter() {
                if fm.command != FlowModCommand::DeleteStrict {
                    continue;
                }
                let routing = controller::cookie::app_tag("routing");
                assert_eq!(controller::cookie::tag_of(fm.cookie), routing);
                let mask = match sw.version {
                    Version::V1_3 => controller::cookie::TAG_MASK,
                    Version::V1_0 => 0,
                };
                assert_eq!(fm.cookie_mask, mask, "{}", sw.dpid);
            }
        }
        assert!(lab.flows(mac(1), mac(2)).is_empty());
        // The long way round: 1 → 4 → 3 → 2.
        lab.net.send(h1, &frame(1, 2, b"two"));
        assert_eq!(lab.net.take_received(h2).len(), 1);
        let mut now = lab.flows(mac(1), mac(2));
        now.sort();
        assert_eq!(now, [(1, 3, 1), (2, 2, 3), (3, 2, 1), (4, 2, 1)]);
    }
}

#[test]
fn a_link_that_comes_back_moves_routes_back_to_the_shortest_path() {
    let (switches, links) = topo::ring(4);
    let mut lab = Lab::new(&switches, &links, 3, v13, "");
    let h1 = lab.host(1, 1, 3);
    let h2 = lab.host(2, 2, 3);
    lab.cut(1, 2);
    lab.net.send(h1, &frame(1, 2, b"long"));
    assert_eq!(lab.flows(mac(1), mac(2)).len(), 4);
    lab.net.set_cable(1, 2, true);
    lab.links(&topo::cable(1, 2, 2, 1), true);
    assert!(
        lab.flows(mac(1), mac(2)).is_empty(),
        "the long way is deleted"
    );
    lab.net.send(h1, &frame(1, 2, b"short"));
    assert_eq!(lab.net.take_received(h2).len(), 2);
    assert_eq!(lab.flows(mac(1), mac(2)), [(1, 3, 2), (2, 1, 3)]);
}

#[test]
fn a_switch_that_leaves_takes_the_routes_through_it() {
    let (switches, links) = topo::ring(4);
    let mut lab = Lab::new(&switches, &links, 3, v13, "");
    let h1 = lab.host(1, 1, 3);
    let h3 = lab.host(3, 3, 3);
    lab.net.send(h1, &frame(1, 3, b"one"));
    let via: Vec<u64> = lab.flows(mac(1), mac(3)).iter().map(|f| f.0).collect();
    assert_eq!(via.len(), 3);
    let middle = via.iter().copied().find(|&d| d != 1 && d != 3).unwrap();
    lab.net.disconnect(middle);
    lab.topology.update(|s| {
        let mut events: Vec<TopologyEvent> = s
            .remove_switch(Dpid(middle))
            .into_iter()
            .map(|l| TopologyEvent::LinkRemoved(l, LinkGone::SwitchLeft))
            .collect();
        events.push(TopologyEvent::SwitchRemoved(Dpid(middle)));
        events
    });
    lab.deliver();
    let left: Vec<u64> = lab.flows(mac(1), mac(3)).iter().map(|f| f.0).collect();
    assert_eq!(left, [middle], "only the gone switch keeps what it had");
    lab.net.take_received(h3);
    lab.net.send(h1, &frame(1, 3, b"two"));
    assert_eq!(lab.net.take_received(h3).len(), 1);
    let other: Vec<u64> = lab.flows(mac(1), mac(3)).iter().map(|f| f.0).collect();
    assert!(other.iter().filter(|&&d| d != middle).count() == 3);
}

#[test]
fn a_host_that_moves_takes_the_routes_to_it() {
    let (switches, links) = topo::linear(3);
    let mut lab = Lab::new(&switches, &links, 3, mixed, "");
    let h1 = lab.host(1, 1, 3);
    let h3 = lab.host(3, 3, 3);
    lab.net.send(h1, &frame(1, 3, b"one"));
    assert_eq!(lab.net.take_received(h3).len(), 1);
    assert_eq!(lab.flows(mac(1), mac(3)).len(), 3);
    // h3 moves to s2; the devices app sees it there.
    lab.net.move_host(h3, 2, 3);
    lab.learn(mac(3), None, 2, 3);
    assert!(lab.flows(mac(1), mac(3)).is_empty());
    lab.net.send(h1, &frame(1, 3, b"two"));
    assert_eq!(lab.net.take_received(h3), [frame(1, 3, b"two")]);
    assert_eq!(lab.flows(mac(1), mac(3)), [(1, 3, 2), (2, 1, 3)]);
}

#[test]
fn vlan_tagged_frames_get_flows_matching_their_vlan() {
    let (switches, links) = topo::linear(2);
    let mut lab = Lab::new(&switches, &links, 3, mixed, "");
    lab.learn(mac(2), Some(7), 2, 3);
    let h2 = lab.net.add_host(mac(2), 2, 3);
    let mut tagged = frame(1, 2, b"tagged");
    tagged.splice(12..12, [0x81, 0x00, 0x00, 0x07]);
    lab.net.inject(1, 3, &tagged);
    assert_eq!(lab.net.take_received(h2), [tagged]);
    let vlans: Vec<Option<Vlan>> = lab
        .net
        .switches()
        .flat_map(|s| {
            s.flows
                .iter()
                .filter(|f| f.matching.eth_dst == Some(mac(2)))
        })
        .map(|f| f.matching.vlan)
        .collect();
    assert_eq!(vlans, [Some(Vlan::Id(7)), Some(Vlan::Id(7))]);
    // Untagged, the same MAC is another host (unknown here): flooded, no flow.
    lab.net.inject(1, 3, &frame(1, 2, b"untagged"));
    assert_eq!(lab.net.take_received(h2).len(), 1);
    assert_eq!(lab.flows(mac(1), mac(2)).len(), 2);
}

fn flow_removed(version: Version, cookie: u64) -> Message {
    match version {
        Version::V1_0 => Message::V10(of10::Message::FlowRemoved(of10::FlowRemoved {
            match_: of10::Match::default(),
            cookie,
            priority: 0x8000,
            reason: of10::FlowRemovedReason::IdleTimeout,
            duration_sec: 10,
            duration_nsec: 0,
            idle_timeout: 10,
            packet_count: 1,
            byte_count: 60,
        })),
        Version::V1_3 => Message::V13(of13::Message::FlowRemoved(of13::FlowRemoved {
            cookie,
            priority: 0x8000,
            reason: of13::FlowRemovedReason::IdleTimeout,
            table_id: 0,
            duration_sec: 10,
            duration_nsec: 0,
            idle_timeout: 10,
            hard_timeout: 0,
            packet_count: 1,
            byte_count: 60,
            match_: of13::Match::new(Vec::new()),
        })),
    }
}

#[test]
fn a_route_is_forgotten_when_its_first_flow_is_removed() {
    for version in [Version::V1_0, Version::V1_3] {
        let (switches, links) = topo::ring(4);
        let v: fn(u64) -> Version = match version {
            Version::V1_0 => |_| Version::V1_0,
            Version::V1_3 => v13,
        };
        let mut lab = Lab::new(&switches, &links, 3, v, "");
        let h1 = lab.host(1, 1, 3);
        let h2 = lab.host(2, 2, 3);
        lab.net.send(h1, &frame(1, 2, b"there"));
        lab.net.send(h2, &frame(2, 1, b"back"));
        let first = |lab: &Lab, dpid, dst| {
            let sw = lab.net.switch(dpid);
            let f = sw.flows.iter().find(|f| f.matching.eth_dst == Some(dst));
            f.unwrap().cookie
        };
        let (there, back) = (first(&lab, 1, mac(2)), first(&lab, 2, mac(1)));
        // The flows idle out; the first switch of h1 → h2 says so (and a stranger's
        // cookie changes nothing).
        lab.net.advance(Duration::from_secs(11));
        assert!(lab.flows(mac(1), mac(2)).is_empty());
        lab.net.switch_sends(1, &flow_removed(version, there));
        lab.net.switch_sends(1, &flow_removed(version, 0x1234));
        lab.net.switch_sends(1, &flow_removed(version, back ^ 1));
        // Forgotten: the link failing deletes nothing of it; h2 → h1 is still known.
        lab.net.clear_logs();
        lab.cut(1, 2);
        assert!(lab
            .flow_mods(FlowModCommand::DeleteStrict, mac(1), mac(2))
            .is_empty());
        assert_eq!(
            lab.flow_mods(FlowModCommand::DeleteStrict, mac(2), mac(1))
                .len(),
            2
        );
    }
}

#[test]
fn installed_routes_are_bounded_and_the_evicted_route_loses_its_flows() {
    let (switches, links) = topo::linear(2);
    let mut lab = Lab::new(&switches, &links, 3, v13, "max_routes = 3");
    let far = lab.host(100, 2, 3);
    for n in 1..=5 {
        lab.learn(mac(n), None, 1, 3);
        lab.net.inject(1, 3, &frame(n, 100, b"x"));
    }
    assert_eq!(lab.net.take_received(far).len(), 5);
    let routed: Vec<u16> = (1..=5)
        .filter(|&n| !lab.flows(mac(n), mac(100)).is_empty())
        .collect();
    assert_eq!(routed, [3, 4, 5], "the oldest routes are evicted first");
}

#[test]
fn parameters_are_checked() {
    let t: toml::Table = toml::from_str("idle_timeout = 70000").unwrap();
    assert!(apps::by_name("routing", &t).is_err());
    let t: toml::Table = toml::from_str("idle = 5").unwrap();
    assert!(apps::by_name("routing", &t)
        .err()
        .unwrap()
        .to_string()
        .contains("idle"));
    let p = apps::routing::app::Params::default();
    assert_eq!(
        (p.idle_timeout, p.hard_timeout, p.priority),
        (10, 0, 0x8000)
    );
}

// ---- the three apps together: topology, device_manager, routing -------------------

/// What the host received since last asked, discovery frames left out (the topology
/// app sends them out of every port, hosts' too).
fn received(net: &mut Net, host: usize) -> Vec<Vec<u8>> {
    let mut frames = net.take_received(host);
    frames.retain(|f| !sim::is_lldp(f));
    frames
}

/// The default app set of `pharos run`, with default parameters.
fn default_apps() -> Vec<Box<dyn controller::app::AnyApp>> {
    ["topology", "device_manager", "routing"]
        .iter()
        .map(|name| apps::by_name(name, &toml::Table::new()).unwrap())
        .collect()
}

/// `switches` cabled as `links` say, running the default apps, with real 1.3 table
/// misses (dropped unless a flow sends them to the controller); discovery has run.
fn network(switches: &[Dpid], links: &[Link], ports: u32, version: fn(u64) -> Version) -> Net {
    let mut net = Net::new(default_apps());
    net.of13_miss_drops = true;
    for l in links {
        net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
    }
    for d in switches {
        net.add_switch(d.0, version(d.0), ports);
    }
    net.advance(Duration::from_secs(2));
    let found: Vec<Link> = net
        .service::<Topology>()
        .snapshot()
        .links()
        .iter()
        .copied()
        .collect();
    let mut cabled = links.to_vec();
    cabled.sort();
    assert_eq!(found, cabled, "discovery finds exactly the cables");
    net
}

/// Every host pings every other: an ARP-like broadcast, a unicast reply, then
/// unicast both ways; each frame arrives exactly once, where it should.
fn pingall(net: &mut Net, hosts: &[usize]) {
    for &a in hosts {
        for &b in hosts {
            if a == b {
                continue;
            }
            let (ma, mb) = (net.host(a).mac, net.host(b).mac);
            // (Asking for b: another frame than the one asking for c.)
            let who_has = sim::eth(ma, BROADCAST, 0x0806, &mb.0);
            let is_at = sim::eth(mb, ma, 0x0806, b"b is at");
            let (ping, pong) = (
                sim::eth(ma, mb, 0x0800, b"ping"),
                sim::eth(mb, ma, 0x0800, b"pong"),
            );
            net.send(a, &who_has);
            assert!(received(net, b).contains(&who_has), "{a} → {b}: broadcast");
            net.send(b, &is_at);
            net.send(a, &ping);
            net.send(b, &pong);
            assert_eq!(received(net, b), [ping], "{a} → {b}");
            assert_eq!(received(net, a), [is_at, pong], "{b} → {a}");
            for &h in hosts {
                received(net, h);
            }
        }
    }
}

/// Over 30 idle seconds, the switches send the controller nothing but discovery
/// frames (a few per link per second) and the hosts receive nothing.
fn idle_is_quiet(net: &mut Net, hosts: &[usize]) {
    net.clear_logs();
    net.advance(Duration::from_secs(30));
    let links = net.service::<Topology>().snapshot().links().len() as u64;
    let ins: u64 = net.switches().map(|s| s.packet_ins).sum();
    assert!(
        ins <= links * 34,
        "{ins} PACKET_INs for {links} links in 30 s"
    );
    for &h in hosts {
        assert!(
            received(net, h).is_empty(),
            "host {h} got frames while idle"
        );
    }
}

#[test]
fn a_ring_with_the_default_apps_discovers_reaches_every_host_and_stays_quiet() {
    for version in [v13 as fn(u64) -> Version, mixed] {
        let (switches, links) = topo::ring(4);
        let mut net = network(&switches, &links, 3, version);
        let hosts: Vec<usize> = (1..=4).map(|d| net.add_host(mac(d as u16), d, 3)).collect();
        pingall(&mut net, &hosts);
        idle_is_quiet(&mut net, &hosts);
        pingall(&mut net, &hosts);
    }
}

#[test]
fn a_fat_tree_with_the_default_apps_discovers_reaches_every_host_and_stays_quiet() {
    let ft = topo::FatTree { k: 4 };
    let mut net = network(&ft.switches(), &ft.links(), 4, mixed);
    let mut hosts = Vec::new();
    for pod in 0..4 {
        for e in 0..2 {
            for port in 1..=2 {
                let n = hosts.len() as u16 + 1;
                hosts.push(net.add_host(mac(n), ft.edge(pod, e).0, port));
            }
        }
    }
    pingall(&mut net, &hosts);
    idle_is_quiet(&mut net, &hosts);
}

#[test]
fn a_single_switch_with_the_default_apps_forwards_by_flows() {
    let mut net = network(&[Dpid(1)], &[], 4, v13);
    let hosts: Vec<usize> = (1..=4).map(|p| net.add_host(mac(p as u16), 1, p)).collect();
    pingall(&mut net, &hosts);
    let ins = net.switch(1).packet_ins;
    net.send(hosts[0], &sim::eth(mac(1), mac(2), 0x0800, b"again"));
    assert_eq!(received(&mut net, hosts[1]).len(), 1);
    assert_eq!(net.switch(1).packet_ins, ins, "by the flow alone");
    idle_is_quiet(&mut net, &hosts);
}

#[test]
fn with_the_default_apps_a_cut_link_on_the_path_reroutes_at_once() {
    for version in [v13 as fn(u64) -> Version, mixed] {
        let (switches, links) = topo::ring(4);
        let mut net = network(&switches, &links, 3, version);
        let h1 = net.add_host(mac(1), 1, 3);
        let h2 = net.add_host(mac(2), 2, 3);
        pingall(&mut net, &[h1, h2]);
        // Traffic runs by the flows over the cable 1:2 — 2:1; it goes down (PORT_STATUS
        // from both ends). No clock moves: the topology drops the link at once, the
        // routing app the flows on it.
        net.set_cable(1, 2, false);
        let topology = net.service::<Topology>();
        assert!(!topology.is_link_port(Dpid(1), 2) && !topology.is_link_port(Dpid(2), 1));
        for (from, to, m) in [(h1, h2, mac(2)), (h2, h1, mac(1))] {
            let src = net.host(from).mac;
            net.send(from, &sim::eth(src, m, 0x0800, b"after"));
            assert_eq!(
                received(&mut net, to).len(),
                1,
                "{from} → {to} the long way"
            );
        }
        // The cable comes back: rediscovered, and the routes go back to it.
        net.set_cable(1, 2, true);
        net.advance(Duration::from_secs(2));
        assert!(topology.is_link_port(Dpid(1), 2));
        net.send(h1, &sim::eth(mac(1), mac(2), 0x0800, b"short"));
        assert_eq!(received(&mut net, h2).len(), 1);
        let s1 = net.switch(1);
        let to_h2 = s1
            .flows
            .iter()
            .find(|f| f.matching.eth_dst == Some(mac(2)))
            .unwrap();
        assert_eq!(to_h2.outputs, [2], "the short way again");
    }
}

#[test]
fn with_the_default_apps_a_host_that_moves_is_reached_at_its_new_place() {
    let (switches, links) = topo::ring(4);
    let mut net = network(&switches, &links, 4, mixed);
    let h1 = net.add_host(mac(1), 1, 3);
    let h2 = net.add_host(mac(2), 2, 3);
    pingall(&mut net, &[h1, h2]);
    // h2 is plugged in on s4 and says so (a gratuitous ARP, broadcast).
    net.move_host(h2, 4, 4);
    net.send(h2, &sim::eth(mac(2), BROADCAST, 0x0806, b"I am here"));
    received(&mut net, h1);
    let devices = net.service::<Devices>();
    assert_eq!(
        devices.attachment(mac(2), None),
        Some(AttachmentPoint::new(4, 4))
    );
    net.send(h1, &sim::eth(mac(1), mac(2), 0x0800, b"found you"));
    assert_eq!(received(&mut net, h2).len(), 1);
    net.send(h2, &sim::eth(mac(2), mac(1), 0x0800, b"yes"));
    assert_eq!(received(&mut net, h1).len(), 1);
}

// ---- start-up: hosts speak before discovery has found a single cable ------------------

/// `switches` cabled as `links` say, running the default apps, connected at once with
/// every discovery frame still in flight (the probes each switch got as it joined are
/// held on the cables): no link is known, every port looks like an edge port.
fn undiscovered(switches: &[Dpid], links: &[Link], ports: u32, version: fn(u64) -> Version) -> Net {
    let mut net = Net::new(default_apps());
    net.of13_miss_drops = true;
    net.hold_lldp = true;
    for l in links {
        net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
    }
    for d in switches {
        net.add_switch(d.0, version(d.0), ports);
    }
    let known = net.service::<Topology>().snapshot().links().len();
    assert_eq!(known, 0, "no discovery frame has arrived yet");
    net
}

/// The host events the device app announces, recorded.
fn host_events(net: &Net) -> Arc<std::sync::Mutex<Vec<HostEvent>>> {
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    net.service::<Devices>()
        .subscribe(Box::new(move |e| sink.lock().unwrap().push(e.clone())));
    events
}

fn ip(n: usize) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(10, 0, 0, n as u8 + 1)
}

/// Every host pings every other as a fresh host does, with no clock moving: an ARP
/// request (broadcast), the reply, an echo and its answer. Each broadcast reaches every
/// other host exactly once, leaves each switch port at most once and never comes back
/// to its sender (it went around no loop); the unicast frames arrive exactly once.
fn pingall_at_once(net: &mut Net, hosts: &[usize]) {
    for &a in hosts {
        for &b in hosts {
            if a == b {
                continue;
            }
            let (ma, mb) = (net.host(a).mac, net.host(b).mac);
            let who_has = frames::arp_request(ma, ip(a), ip(b));
            let is_at = frames::arp_reply(mb, ip(b), ma, ip(a));
            // Numbered (in the UDP source port), as real echoes are: the pong of one pair
            // is not the ping of another.
            let numbered = |mut f: Vec<u8>, n: usize| {
                f[34..36].copy_from_slice(&(n as u16).to_be_bytes());
                f
            };
            let n = 2 * (a * hosts.len() + b);
            let ping = numbered(frames::ipv4(ma, mb, ip(a), ip(b)), n);
            let pong = numbered(frames::ipv4(mb, ma, ip(b), ip(a)), n + 1);
            net.clear_logs();
            net.send(a, &who_has);
            for sw in net.switches() {
                for (port, n) in &sw.tx {
                    assert!(
                        *n <= 1,
                        "{a} → {b}: s{}:{port} sent the broadcast {n} times",
                        sw.dpid
                    );
                }
            }
            assert!(
                received(net, a).is_empty(),
                "{a}'s broadcast came back to it"
            );
            for &h in hosts.iter().filter(|&&h| h != a) {
                let got = received(net, h);
                assert_eq!(
                    got,
                    std::slice::from_ref(&who_has),
                    "{a} → {h}: the broadcast, once"
                );
            }
            net.send(b, &is_at);
            net.send(a, &ping);
            net.send(b, &pong);
            assert_eq!(received(net, b), [ping], "{a} → {b}");
            assert_eq!(received(net, a), [is_at, pong], "{b} → {a}");
            for &h in hosts {
                assert!(received(net, h).is_empty(), "{h} got frames not for it");
            }
        }
    }
}

/// Hosts on `hosts_at` of a network whose cables are not discovered yet ping each other
/// at once: see [`pingall_at_once`]; no host is ever seen moving or forgotten, each is
/// where it is plugged in. Then discovery completes: the same hosts, the same places,
/// and traffic by flows.
fn starts_without_storm(
    switches: &[Dpid],
    links: &[Link],
    ports: u32,
    version: fn(u64) -> Version,
    hosts_at: &[(u64, u32)],
) {
    let mut net = undiscovered(switches, links, ports, version);
    let events = host_events(&net);
    let hosts: Vec<usize> = hosts_at
        .iter()
        .enumerate()
        .map(|(i, &(d, p))| net.add_host(mac(i as u16 + 1), d, p))
        .collect();
    pingall_at_once(&mut net, &hosts);
    let devices = net.service::<Devices>();
    let check_places = |net: &Net, when: &str| {
        for &h in &hosts {
            let host = net.host(h);
            assert_eq!(
                devices
                    .attachment(host.mac, None)
                    .map(|a| (a.dpid.0, a.port)),
                Some(host.at),
                "{when}: host {h}"
            );
        }
        let events = events.lock().unwrap();
        let wrong: Vec<&HostEvent> = events
            .iter()
            .filter(|e| !matches!(e, HostEvent::Added { .. } | HostEvent::IpAdded { .. }))
            .collect();
        assert!(
            wrong.is_empty(),
            "{when}: hosts moved or forgotten: {wrong:?}"
        );
    };
    check_places(&net, "before discovery");
    // The discovery frames arrive: every cable is found, nobody moves.
    net.release_lldp();
    net.advance(Duration::from_millis(200));
    let mut found: Vec<Link> = net
        .service::<Topology>()
        .snapshot()
        .links()
        .iter()
        .copied()
        .collect();
    let mut cabled = links.to_vec();
    cabled.sort();
    found.sort();
    assert_eq!(found, cabled);
    check_places(&net, "after discovery");
    pingall(&mut net, &hosts);
    check_places(&net, "after a second pingall");
}

#[test]
fn at_start_up_a_ring_floods_around_no_loop_and_no_host_moves() {
    let (switches, links) = topo::ring(4);
    let hosts: Vec<(u64, u32)> = (1..=4).map(|d| (d, 3)).collect();
    for version in [v13 as fn(u64) -> Version, mixed, |_| Version::V1_0] {
        starts_without_storm(&switches, &links, 3, version, &hosts);
    }
}

#[test]
fn at_start_up_a_fat_tree_floods_around_no_loop_and_no_host_moves() {
    let ft = topo::FatTree { k: 4 };
    let mut hosts = Vec::new();
    for pod in 0..4 {
        for e in 0..2 {
            hosts.extend((1..=2).map(|port| (ft.edge(pod, e).0, port)));
        }
    }
    starts_without_storm(&ft.switches(), &ft.links(), 4, mixed, &hosts);
}

#[test]
fn at_start_up_a_single_switch_forwards_at_once() {
    let hosts: Vec<(u64, u32)> = (1..=4).map(|p| (1, p)).collect();
    starts_without_storm(&[Dpid(1)], &[], 4, v13, &hosts);
}

#[test]
fn at_start_up_a_host_placed_on_an_undiscovered_cable_gets_its_frame_once_without_bouncing() {
    let (switches, links) = topo::ring(4);
    let mut net = undiscovered(&switches, &links, 3, v13);
    let h1 = net.add_host(mac(1), 1, 3);
    // mac(9)'s first frame arrives on s2's port 1, the cable from s1 (as a flow left
    // from before a restart would carry it): it is "placed" there.
    net.inject(2, 1, &frames::arp_request(mac(9), ip(9), ip(0)));
    let devices = net.service::<Devices>();
    assert_eq!(
        devices.attachment(mac(9), None),
        Some(AttachmentPoint::new(2, 1))
    );
    net.clear_logs();
    // h1 sends to it: straight out of s2:1, back into s1 by the cable, where the
    // repeat is dropped instead of being sent out of s2:1 again, and again.
    net.send(h1, &frames::ipv4(mac(1), mac(9), ip(1), ip(9)));
    assert_eq!(net.switch(2).tx.get(&1), Some(&1), "out of s2:1 once");
    assert_eq!(net.switch(1).packet_ins, 2, "the frame, and its one return");
}

/// A PACKET_IN the switch buffered, as (is it a FLOW_MOD, buffer_id) for each FLOW_MOD
/// and PACKET_OUT switch `dpid` received since the logs were cleared.
fn answers(lab: &Lab, dpid: u64) -> Vec<(&'static str, u32)> {
    lab.net
        .switch(dpid)
        .received
        .iter()
        .filter_map(|m| match m {
            Message::V10(of10::Message::FlowMod(f)) => Some(("FLOW_MOD", f.buffer_id)),
            Message::V13(of13::Message::FlowMod(f)) => Some(("FLOW_MOD", f.buffer_id)),
            Message::V10(of10::Message::PacketOut(p)) => Some(("PACKET_OUT", p.buffer_id)),
            Message::V13(of13::Message::PacketOut(p)) => Some(("PACKET_OUT", p.buffer_id)),
            _ => None,
        })
        .collect()
}

/// A packet the switch buffered rides on the FLOW_MOD of its own switch (the switch
/// applies the new flow to it: 1.0.0 §5.3.3, 1.3.5 §7.3.4.1), as the learning switch
/// answers: no PACKET_OUT, whether the route is new (step 5: the other switches' flows
/// carry no buffer) or installed already (step 4). An unbuffered packet still follows
/// in a PACKET_OUT.
#[test]
fn a_buffered_packet_rides_on_its_switchs_flow_mod_without_a_packet_out() {
    const NO_BUFFER: u32 = openflow::model::NO_BUFFER;
    for version in [v13 as fn(u64) -> Version, mixed] {
        let (switches, links) = topo::linear(3);
        let mut lab = Lab::new(&switches, &links, 3, version, "");
        lab.host(1, 1, 3);
        lab.host(3, 3, 3);
        let f = frame(1, 3, &[7; 200]);
        lab.net.clear_logs();
        let v1 = version(1);
        lab.net
            .switch_sends(1, &frames::packet_in_message(v1, 3, &f, 41));
        lab.deliver();
        assert_eq!(answers(&lab, 1), [("FLOW_MOD", 41)], "{v1}: step 5");
        for dpid in [2, 3] {
            assert_eq!(
                answers(&lab, dpid),
                [("FLOW_MOD", NO_BUFFER)],
                "switch {dpid}"
            );
        }
        assert_eq!(lab.adds(mac(1), mac(3)), [(1, 3, 2), (2, 1, 2), (3, 1, 3)]);

        // Installed already (the switch lost its flow, or the packet overtook it).
        lab.net.clear_logs();
        lab.net
            .switch_sends(1, &frames::packet_in_message(v1, 3, &f, 42));
        assert_eq!(answers(&lab, 1), [("FLOW_MOD", 42)], "{v1}: step 4");
        assert_eq!(lab.adds(mac(1), mac(3)), [(1, 3, 2)]);

        // Unbuffered: the FLOW_MOD, then the packet itself.
        lab.net.clear_logs();
        lab.net
            .switch_sends(1, &frames::packet_in_message(v1, 3, &f, NO_BUFFER));
        assert_eq!(
            answers(&lab, 1),
            [("FLOW_MOD", NO_BUFFER), ("PACKET_OUT", NO_BUFFER)],
            "{v1}: unbuffered"
        );
    }
}
