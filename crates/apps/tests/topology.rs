//! The topology app on the sans-IO test network (crates/sim): discovery finds exactly
//! the cables of linear, ring and fat-tree networks of mixed 1.0/1.3 switches; forged,
//! foreign, stale and looped-back LLDP makes no link and is never flooded; links go
//! when their frames stop, at once when a port goes down or is deleted or a switch
//! leaves, and come back; subscribers see every change in order, after the snapshot.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use apps::routing::{topo, Link};
use apps::topology::lldp::{self, DiscoveryKey, Reject};
use apps::topology::{
    LinkGone, Params, Stats, Topology, TopologyApp, TopologyEvent, LLDP_COOKIE, LLDP_PRIORITY,
};
use apps::Hub;
use controller::app::AnyApp;
use controller::info::Dpid;
use openflow::model::{FlowModCommand, PortNo};
use openflow::{of10, of13, Message, Version};
use sim::{mac, Net};

const S: Duration = Duration::from_secs(1);
const KEY: [u8; 16] = *b"pharos-topo-test";

/// Odd dpids speak 1.3, even ones 1.0.
fn mixed(dpid: u64) -> Version {
    if dpid % 2 == 0 {
        Version::V1_0
    } else {
        Version::V1_3
    }
}

/// A network running the topology app (and `then`, after it), with a subscriber that
/// logs every event with the snapshot's version and whether the snapshot already
/// showed it.
struct Lab {
    net: Net,
    topo: Arc<Topology>,
    stats: Arc<Stats>,
    events: Arc<Mutex<Vec<(TopologyEvent, bool)>>>,
}

impl Lab {
    fn new(then: Vec<Box<dyn AnyApp>>) -> Lab {
        let app = TopologyApp::with_key(Params::default(), DiscoveryKey::from_bytes(KEY));
        let (topo, stats) = (app.topology(), app.stats());
        let events = Arc::new(Mutex::new(Vec::new()));
        let (sink, reader) = (Arc::clone(&events), Arc::clone(&topo));
        topo.subscribe(Box::new(move |e| {
            let s = reader.snapshot();
            let shown = match e {
                TopologyEvent::SwitchAdded(d) => s.switches().contains_key(d),
                TopologyEvent::SwitchRemoved(d) => !s.switches().contains_key(d),
                TopologyEvent::LinkAdded(l) => s.links().contains(l),
                TopologyEvent::LinkRemoved(l, _) => !s.links().contains(l),
            };
            sink.lock().unwrap().push((e.clone(), shown));
        }));
        let mut apps: Vec<Box<dyn AnyApp>> = vec![Box::new(app)];
        apps.extend(then);
        let mut net = Net::new(apps);
        // Real 1.3: what no flow matches is dropped, so LLDP needs the app's flow.
        net.of13_miss_drops = true;
        Lab {
            net,
            topo,
            stats,
            events,
        }
    }

    /// `switches` with `ports` ports, cabled as `links` say, all connected.
    fn with(
        switches: &[Dpid],
        links: &[Link],
        ports: u32,
        version: fn(u64) -> Version,
        then: Vec<Box<dyn AnyApp>>,
    ) -> Lab {
        let mut lab = Lab::new(then);
        for l in links {
            lab.net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
        }
        for d in switches {
            lab.net.add_switch(d.0, version(d.0), ports);
        }
        lab
    }

    fn links(&self) -> BTreeSet<Link> {
        self.topo.snapshot().links().clone()
    }

    fn take_events(&self) -> Vec<TopologyEvent> {
        let events = std::mem::take(&mut *self.events.lock().unwrap());
        assert!(
            events.iter().all(|(_, shown)| *shown),
            "an event came before its snapshot: {events:?}"
        );
        events.into_iter().map(|(e, _)| e).collect()
    }
}

fn set(links: &[Link]) -> BTreeSet<Link> {
    links.iter().copied().collect()
}

fn both(a: u64, pa: u32, b: u64, pb: u32) -> BTreeSet<Link> {
    set(&topo::cable(a, pa, b, pb))
}

fn discovers_exactly(switches: &[Dpid], links: &[Link], ports: u32) {
    for version in [
        mixed as fn(u64) -> Version,
        |_| Version::V1_3,
        |_| Version::V1_0,
    ] {
        let mut lab = Lab::with(switches, links, ports, version, Vec::new());
        // Each switch probes as it joins: the frames of the later end of each cable
        // arrive at once (those of the earlier one found no one listening), and each
        // link found is answered by a probe back, which finds the other direction: the
        // network is known as soon as it is connected, with no clock moving.
        assert_eq!(lab.links(), set(links));
        // Every switch probes again within the first jitter (100 ms).
        lab.net.advance(S / 5);
        assert_eq!(lab.links(), set(links));
        let snapshot = lab.topo.snapshot();
        let dpids: Vec<Dpid> = snapshot.switches().keys().copied().collect();
        assert_eq!(dpids, switches);
        // And keeps them, round after round; nothing else shows up.
        lab.net.advance(S * 10);
        assert_eq!(lab.links(), set(links));
        assert_eq!(lab.stats.rejected(Reject::NotOurs), 0);
        assert_eq!(lab.stats.rejected(Reject::BadTag), 0);
        assert_eq!(lab.stats.rejected(Reject::Stale), 0);
        let events = lab.take_events();
        let added = events
            .iter()
            .filter(|e| matches!(e, TopologyEvent::LinkAdded(_)))
            .count();
        assert_eq!(added, links.len(), "each link announced once");
        assert_eq!(events.len(), links.len() + switches.len());
    }
}

#[test]
fn a_linear_network_is_discovered_exactly() {
    let (switches, links) = topo::linear(4);
    discovers_exactly(&switches, &links, 3);
}

#[test]
fn a_ring_is_discovered_exactly() {
    let (switches, links) = topo::ring(4);
    discovers_exactly(&switches, &links, 3);
}

#[test]
fn a_k4_fat_tree_is_discovered_exactly() {
    let ft = topo::FatTree { k: 4 };
    discovers_exactly(&ft.switches(), &ft.links(), 4);
}

#[test]
fn every_switch_gets_the_lldp_flow_and_probes_in_its_version() {
    let (switches, links) = topo::linear(2);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net.advance(S * 3 + S / 2);
    for sw in lab.net.switches() {
        let fm = &sw.flow_mods[0];
        assert_eq!(fm.command, FlowModCommand::Add);
        assert_eq!(fm.matching.eth_type, Some(0x88cc));
        assert_eq!(fm.outputs, [PortNo::Controller.to_v13().unwrap()]);
        assert_eq!((fm.priority, fm.cookie), (LLDP_PRIORITY, LLDP_COOKIE));
        // One frame per port (3 up ports) per round: 5 rounds by 3.5 s (one as it
        // joined, then within 100 ms, then every 1 s ± 100 ms); s1 one more, the
        // answer to the link s2 found as it joined.
        let lldp = sw.lldp_packet_outs();
        let answers = usize::from(sw.dpid == 1);
        assert!(
            (12..=15).contains(&(lldp - answers)),
            "{} sent {lldp}",
            sw.dpid
        );
        // From the controller: 1.0 says OFPP_NONE, 1.3 OFPP_CONTROLLER.
        let in_port = sw.received.iter().find_map(|m| match m {
            Message::V10(of10::Message::PacketOut(po)) => Some(u32::from(po.in_port)),
            Message::V13(of13::Message::PacketOut(po)) => Some(po.in_port),
            _ => None,
        });
        let want = match sw.version {
            Version::V1_0 => 0xffff,
            Version::V1_3 => 0xffff_fffd,
        };
        assert_eq!(in_port, Some(want));
    }
    assert_eq!(
        lab.stats.sent.load(std::sync::atomic::Ordering::Relaxed),
        2 * 15 + 1
    );
    // Host ports are not link ports; cabled ones are.
    assert!(lab.topo.is_link_port(Dpid(1), 2) && lab.topo.is_link_port(Dpid(2), 1));
    assert!(!lab.topo.is_link_port(Dpid(1), 3) && !lab.topo.is_link_port(Dpid(2), 3));
}

/// An LLDP frame without Pharos's TLV, as a host or a non-OpenFlow switch sends.
fn plain_lldp(from: openflow::MacAddr) -> Vec<u8> {
    let mut pdu = Vec::new();
    pdu.extend_from_slice(&[0x02, 0x07, 0x04]); // Chassis ID, 7 bytes, MAC subtype
    pdu.extend_from_slice(&from.0);
    pdu.extend_from_slice(&[0x04, 0x02, 0x07, b'1']); // Port ID, local "1"
    pdu.extend_from_slice(&[0x06, 0x02, 0x00, 0x78]); // TTL 120
    pdu.extend_from_slice(&[0x00, 0x00]); // End
    sim::eth(
        from,
        openflow::MacAddr([1, 0x80, 0xc2, 0, 0, 0x0e]),
        0x88cc,
        &pdu,
    )
}

#[test]
fn forged_foreign_stale_and_looped_lldp_make_no_link_and_are_not_flooded() {
    // Two switches with a host each; a hub after the topology app floods anything
    // that reaches it.
    let (switches, links) = topo::linear(2);
    let mut lab = Lab::with(&switches, &links, 3, mixed, vec![Box::new(Hub)]);
    let h1 = lab.net.add_host(mac(1), 1, 3);
    let h2 = lab.net.add_host(mac(2), 2, 3);
    lab.net.advance(S / 5);
    let cable = both(1, 2, 2, 1);
    assert_eq!(lab.links(), cable);
    // The host on s1:3 hears s1's discovery frames (sent out of every port).
    let heard: Vec<Vec<u8>> = lab.net.take_received(h1);
    assert_eq!(heard.len(), 1);
    let genuine = heard[0].clone();
    assert_eq!(
        lldp::verify(&DiscoveryKey::from_bytes(KEY), &genuine, 0, u64::MAX)
            .unwrap()
            .port,
        3
    );
    lab.net.take_received(h2);

    // Signed with another key: a forgery, or another controller's.
    let other = DiscoveryKey::from_bytes(*b"another-key-0000");
    let mut forged = Vec::new();
    lldp::encode(&other, 2, 3, mac(1), 100, &mut forged);
    lab.net.send(h1, &forged);
    assert_eq!(lab.stats.rejected(Reject::BadTag), 1);
    // A host's (or a plain switch's) own LLDP.
    lab.net.send(h1, &plain_lldp(mac(1)));
    assert_eq!(lab.stats.rejected(Reject::NotOurs), 1);
    // The genuine frame sent back where it came from: a link from a port to itself.
    lab.net.send(h1, &genuine);
    assert_eq!(
        lab.stats
            .same_port
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    // The genuine frame replayed later, from the other switch's host: too old.
    lab.net.advance(S * 2);
    lab.net.take_received(h2);
    lab.net.send(h2, &genuine);
    assert_eq!(lab.stats.rejected(Reject::Stale), 1);
    // Signed with our key, from a switch that is not there.
    let mut ghost = Vec::new();
    let now_ms = lab.net.elapsed().as_millis() as u64;
    lldp::encode(
        &DiscoveryKey::from_bytes(KEY),
        99,
        1,
        mac(9),
        now_ms,
        &mut ghost,
    );
    lab.net.send(h2, &ghost);
    assert_eq!(
        lab.stats
            .unknown_switch
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );

    assert_eq!(lab.links(), cable, "no link from any of them");
    // None of them reached the hub: nothing was flooded to the other host.
    assert!(lab.net.take_received(h2).is_empty());
    assert!(lab.net.take_received(h1).iter().all(|f| sim::is_lldp(f)));
    // While ordinary traffic is flooded by the hub.
    lab.net
        .send(h1, &sim::eth(mac(1), sim::BROADCAST, 0x0800, b"hello"));
    assert_eq!(lab.net.take_received(h2).len(), 1);
}

#[test]
fn a_link_whose_frames_stop_times_out() {
    let (switches, links) = topo::ring(3);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net.advance(S / 5);
    assert_eq!(lab.links(), set(&links));
    lab.take_events();
    // Frames between 1:2 and 2:1 are lost from now on; no port notices.
    lab.net.uncable(1, 2);
    // Last seen within the last round (≤ 1.1 s ago): still there 3 s on...
    lab.net.advance(S * 3);
    assert_eq!(lab.links(), set(&links));
    // ...gone by link_timeout (3.5 s) plus a sweep (1 s) plus a round.
    lab.net.advance(S * 2);
    let mut left = set(&links);
    for l in both(1, 2, 2, 1) {
        left.remove(&l);
    }
    assert_eq!(lab.links(), left);
    let mut events = lab.take_events();
    events.sort_by_key(|e| format!("{e:?}"));
    let mut want: Vec<TopologyEvent> = both(1, 2, 2, 1)
        .into_iter()
        .map(|l| TopologyEvent::LinkRemoved(l, LinkGone::Timeout))
        .collect();
    want.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(events, want);
    // Plugged back: found again within a round.
    lab.net.cable(1, 2, 2, 1);
    lab.net.advance(S + S / 5);
    assert_eq!(lab.links(), set(&links));
}

#[test]
fn a_port_down_removes_its_links_at_once_and_up_brings_them_back() {
    let (switches, links) = topo::linear(3);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net.advance(S / 2);
    lab.take_events();
    let all = set(&links);
    let cable = both(2, 2, 3, 1);

    // One end's link goes down: both directions of that cable go, no clock needed.
    lab.net.set_port(2, 2, false);
    assert_eq!(lab.links(), &all - &cable);
    let events = lab.take_events();
    assert_eq!(events.len(), 2);
    for e in &events {
        assert!(
            matches!(e, TopologyEvent::LinkRemoved(l, LinkGone::PortDown) if cable.contains(l)),
            "{e:?}"
        );
    }
    // The snapshot's port list shows it.
    let snapshot = lab.topo.snapshot();
    let ports = &snapshot.switches()[&Dpid(2)];
    assert!(!ports.iter().find(|p| p.port_no == 2).unwrap().is_up());
    // Rounds go by: nothing comes back through a down port.
    lab.net.advance(S * 3);
    assert_eq!(lab.links(), &all - &cable);

    // Up again: probed at once, so this direction is back with no clock, and the
    // other with the peer's answer to it.
    lab.net.set_port(2, 2, true);
    assert_eq!(lab.links(), all);

    // Both ends down and up together (a veth pair): both directions at once.
    lab.net.set_cable(2, 2, false);
    assert_eq!(lab.links(), &all - &cable);
    lab.net.set_cable(2, 2, true);
    assert_eq!(lab.links(), all);
}

#[test]
fn a_deleted_port_removes_its_links_and_an_added_one_is_probed() {
    let (switches, links) = topo::linear(2);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net.advance(S / 2);
    lab.take_events();
    lab.net.delete_port(1, 2);
    assert!(lab.links().is_empty());
    let events = lab.take_events();
    assert_eq!(events.len(), 2);
    assert!(events
        .iter()
        .all(|e| matches!(e, TopologyEvent::LinkRemoved(_, LinkGone::PortDeleted))));
    assert!(!lab.topo.snapshot().switches()[&Dpid(1)]
        .iter()
        .any(|p| p.port_no == 2));
    // Probed at once, and answered: both directions with no clock moving.
    lab.net.add_port(1, 2);
    assert_eq!(lab.links(), set(&links));
}

#[test]
fn a_flapping_port_ends_where_it_stopped_with_every_change_announced() {
    let (switches, links) = topo::ring(4);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net.advance(S / 2);
    lab.take_events();
    let all = set(&links);
    let cable = both(3, 2, 4, 1);
    for i in 0..20 {
        lab.net.set_cable(3, 2, i % 2 == 1);
        lab.net.advance(Duration::from_millis(37));
    }
    // Ended up: every link there, each change announced once, in alternation.
    assert_eq!(lab.links(), all);
    let events = lab.take_events();
    let mut state: BTreeSet<Link> = cable.clone();
    for e in &events {
        match e {
            TopologyEvent::LinkAdded(l) => assert!(state.insert(*l), "added twice: {e:?}"),
            TopologyEvent::LinkRemoved(l, LinkGone::PortDown) => {
                assert!(state.remove(l), "removed twice: {e:?}")
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(state, cable);
    assert_eq!(events.len(), 2 * 20, "10 downs and 10 ups, two links each");
    // Down for good: gone, and stays gone round after round.
    lab.net.set_cable(3, 2, false);
    lab.net.advance(S * 5);
    assert_eq!(lab.links(), &all - &cable);
}

#[test]
fn a_switch_that_leaves_takes_its_links_and_comes_back() {
    let (switches, links) = topo::linear(3);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net.advance(S / 2);
    lab.take_events();
    lab.net.disconnect(2);
    assert!(lab.links().is_empty(), "every link of the line touches s2");
    let events = lab.take_events();
    assert_eq!(events.len(), 5);
    assert!(events[..4]
        .iter()
        .all(|e| matches!(e, TopologyEvent::LinkRemoved(_, LinkGone::SwitchLeft))));
    assert_eq!(events[4], TopologyEvent::SwitchRemoved(Dpid(2)));
    assert!(!lab.topo.snapshot().switches().contains_key(&Dpid(2)));
    // Frames still in flight or replayed from s2 make no link while it is away.
    lab.net.advance(S * 2);
    assert!(lab.links().is_empty());
    lab.net.connect(2);
    assert_eq!(lab.take_events()[0], TopologyEvent::SwitchAdded(Dpid(2)));
    lab.net.advance(S + S / 5);
    assert_eq!(lab.links(), set(&links));
}

#[test]
fn a_connection_replaced_by_a_newer_one_keeps_the_switch_and_its_links() {
    let (switches, links) = topo::linear(3);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net.advance(S / 2);
    lab.take_events();
    // The old connection's switch-removed comes after the new one is listed.
    lab.net.reconnect(2);
    assert_eq!(lab.links(), set(&links));
    assert_eq!(lab.take_events(), []);
    assert!(lab.topo.snapshot().switches().contains_key(&Dpid(2)));
    lab.net.advance(S * 5);
    assert_eq!(lab.links(), set(&links));
}

#[test]
fn subscribers_see_every_change_in_order_after_the_snapshot() {
    let (switches, links) = topo::ring(3);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    let v0 = lab.topo.snapshot().version();
    lab.net.advance(S / 2);
    lab.net.set_cable(1, 2, false);
    lab.net.uncable(2, 2);
    lab.net.advance(S * 6);
    lab.net.disconnect(3);
    let events = lab.take_events(); // checks each came after its snapshot
                                    // Switches as they connect, each link after both its ends (found by the later
                                    // one's first probe, or a round later).
    let added_at = |d: u64| {
        events
            .iter()
            .position(|e| *e == TopologyEvent::SwitchAdded(Dpid(d)))
    };
    let switches: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            TopologyEvent::SwitchAdded(d) => Some(d.0),
            _ => None,
        })
        .collect();
    assert_eq!(switches, [1, 2, 3], "{events:?}");
    for (i, e) in events.iter().enumerate() {
        if let TopologyEvent::LinkAdded(l) = e {
            assert!(added_at(l.src.0) < Some(i) && added_at(l.dst.0) < Some(i));
        }
    }
    let added: BTreeSet<Link> = events
        .iter()
        .filter_map(|e| match e {
            TopologyEvent::LinkAdded(l) => Some(*l),
            _ => None,
        })
        .collect();
    assert_eq!(added, set(&links));
    // Then, in the order they happened: the port down, the timeout, the departure
    // (the cable 3:2 — 1:1 was still up).
    let gone: Vec<LinkGone> = events
        .iter()
        .filter_map(|e| match e {
            TopologyEvent::LinkRemoved(_, why) => Some(*why),
            _ => None,
        })
        .collect();
    use LinkGone::*;
    assert_eq!(
        gone,
        [PortDown, PortDown, Timeout, Timeout, SwitchLeft, SwitchLeft]
    );
    assert_eq!(events.last(), Some(&TopologyEvent::SwitchRemoved(Dpid(3))));
    assert!(lab.links().is_empty());
    assert!(lab.topo.snapshot().version() > v0);
}

/// The next discovery frame host `h` hears (moving the clock until one comes).
fn next_frame_heard(lab: &mut Lab, h: usize) -> Vec<u8> {
    lab.net.take_received(h);
    for _ in 0..30 {
        lab.net.advance(S / 10);
        if let Some(f) = lab
            .net
            .take_received(h)
            .into_iter()
            .rfind(|f| sim::is_lldp(f))
        {
            return f;
        }
    }
    panic!("host {h} heard no discovery frame in 3 s");
}

#[test]
fn frames_relayed_between_hosts_make_no_link_once_the_hosts_have_spoken() {
    let (switches, links) = topo::linear(2);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    let h1 = lab.net.add_host(mac(1), 1, 3);
    let h2 = lab.net.add_host(mac(2), 2, 3);
    // Past the settling time after the switches joined; the hosts say something.
    lab.net.advance(S * 3);
    lab.net
        .send(h1, &sim::eth(mac(1), sim::BROADCAST, 0x0800, b"hi"));
    lab.net
        .send(h2, &sim::eth(mac(2), sim::BROADCAST, 0x0800, b"hi"));
    let cable = both(1, 2, 2, 1);
    assert_eq!(lab.links(), cable);
    // Each host hears its switch's next frame and hands it to the other at once: a
    // fresh, genuine frame arriving on a port it was never sent to.
    let from_s1 = next_frame_heard(&mut lab, h1);
    lab.net.send(h2, &from_s1);
    let from_s2 = next_frame_heard(&mut lab, h2);
    lab.net.send(h1, &from_s2);
    assert_eq!(lab.links(), cable, "no link between the hosts' ports");
    let refused = || {
        lab.stats
            .host_port
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    assert_eq!(refused(), 2);
    // The host's port going down and up forgets its mark: a switch may be there now.
    lab.net.set_port(2, 3, false);
    lab.net.set_port(2, 3, true);
    let from_s1 = next_frame_heard(&mut lab, h1);
    lab.net.send(h2, &from_s1);
    assert!(lab.links().contains(&Link::new(1, 3, 2, 3)));
}

#[test]
fn a_hosts_packet_on_a_link_port_while_switches_join_does_not_block_discovery() {
    // After a controller restart a switch may still carry a host's packets on flows from
    // before, so its first PACKET_IN can come from a link port of another switch.
    let (switches, links) = topo::linear(2);
    let mut lab = Lab::with(&switches, &links, 3, mixed, Vec::new());
    lab.net
        .inject(2, 1, &sim::eth(mac(7), sim::BROADCAST, 0x0800, b"stale"));
    lab.net.advance(S * 2);
    assert_eq!(lab.links(), both(1, 2, 2, 1));
}
