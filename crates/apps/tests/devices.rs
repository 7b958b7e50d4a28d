//! The device app on the sans-IO test network (crates/sim), with the topology app
//! discovering the links and, where frames must cross switches, the hub flooding them
//! (on loop-free networks): hosts are learned where they are plugged in and never on
//! inter-switch ports, even though copies of their frames reach every switch; what was
//! learned on a port before it proved to be a link is forgotten, and copies of its frames
//! that crossed cables not discovered yet are not moves; hosts move, age out,
//! and go with their port or their switch; addresses come from ARP, IPv4, IPv6 and
//! neighbour discovery; VLANs keep hosts apart; subscribers hear all of it in order.
//! Switches alternate OpenFlow 1.3 (odd dpids) and 1.0 (even).

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use apps::devices::app::Params;
use apps::devices::table::{AttachmentPoint, HostEvent, HostKey};
use apps::devices::{DeviceManager, Devices};
use apps::routing::topo;
use apps::topology::{Topology, TopologyApp};
use apps::Hub;
use controller::app::AnyApp;
use controller::info::Dpid;
use frames::{arp_reply, arp_request, ipv4, ipv6, mac, neighbor_advert, tagged, v4, v6};
use openflow::{MacAddr, Version};
use sim::Net;
use testkit::frames;

const S: Duration = Duration::from_secs(1);

/// Odd dpids speak 1.3, even ones 1.0.
fn mixed(dpid: u64) -> Version {
    if dpid % 2 == 0 {
        Version::V1_0
    } else {
        Version::V1_3
    }
}

fn ap(dpid: u64, port: u32) -> AttachmentPoint {
    AttachmentPoint::new(dpid, port)
}

fn key(mac: MacAddr) -> HostKey {
    HostKey { mac, vlan: None }
}

/// A network running topology, device_manager and (if `flood`) the hub, with a
/// subscriber that records every host event.
struct Lab {
    net: Net,
    devices: Arc<Devices>,
    topology: Arc<Topology>,
    events: Arc<Mutex<Vec<HostEvent>>>,
}

impl Lab {
    fn new(
        params: Params,
        switches: &[Dpid],
        links: &[apps::routing::Link],
        ports: u32,
        flood: bool,
    ) -> Lab {
        let mut apps: Vec<Box<dyn AnyApp>> = vec![
            Box::new(TopologyApp::new(Default::default()).unwrap()),
            Box::new(DeviceManager::new(params).unwrap()),
        ];
        if flood {
            apps.push(Box::new(Hub));
        }
        let mut net = Net::new(apps);
        // Discovery frames stay in flight until `discover`: before it, the network is
        // one whose cables are not known yet.
        net.hold_lldp = true;
        for l in links {
            net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
        }
        for d in switches {
            net.add_switch(d.0, mixed(d.0), ports);
        }
        let devices = net.service::<Devices>();
        let topology = net.service::<Topology>();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        devices.subscribe(Box::new(move |e| sink.lock().unwrap().push(e.clone())));
        Lab {
            net,
            devices,
            topology,
            events,
        }
    }

    /// `n` switches in a line (4 ports each: 1 and 2 for the line, 3 and 4 for hosts).
    fn linear(n: u64, params: Params) -> Lab {
        let (switches, links) = topo::linear(n);
        Lab::new(params, &switches, &links, 4, true)
    }

    /// Lets the topology app find every link (the probes sent when the switches joined
    /// arrive now).
    fn discover(&mut self) {
        self.net.release_lldp();
        self.net.advance(S / 5);
        assert!(!self.topology.snapshot().links().is_empty());
    }

    fn events(&self) -> Vec<HostEvent> {
        std::mem::take(&mut *self.events.lock().unwrap())
    }

    fn at(&self, mac: MacAddr) -> Option<(u64, u32)> {
        self.devices
            .attachment(mac, None)
            .map(|a| (a.dpid.0, a.port))
    }

    fn packet_ins(&self) -> u64 {
        self.net.switches().map(|s| s.packet_ins).sum()
    }
}

#[test]
fn hosts_are_learned_where_they_are_plugged_in_never_on_links() {
    let mut lab = Lab::linear(3, Params::default());
    lab.discover();
    let h: Vec<usize> = (1..=3)
        .map(|n| lab.net.add_host(mac(n), u64::from(n), 3))
        .collect();
    let before = lab.packet_ins();
    // Each host ARPs: the hub floods the request through every switch, so each
    // switch sends a PACKET_IN for it, two of them from link ports.
    for (i, &host) in h.iter().enumerate() {
        let n = i as u8 + 1;
        lab.net.send(host, &arp_request(mac(n), v4(n), v4(9)));
    }
    assert_eq!(
        lab.packet_ins() - before,
        9,
        "every switch saw every request"
    );
    for n in 1..=3u8 {
        assert_eq!(lab.at(mac(n)), Some((u64::from(n), 3)), "host {n}");
        let by_ip = lab.devices.by_ip(IpAddr::V4(v4(n))).unwrap();
        assert_eq!(by_ip.mac(), mac(n));
    }
    assert_eq!(lab.devices.len(), 3);
    // Three hosts added, nothing moved.
    let events = lab.events();
    assert_eq!(
        events,
        (1..=3u8)
            .map(|n| HostEvent::Added {
                key: key(mac(n)),
                ap: ap(u64::from(n), 3)
            })
            .collect::<Vec<_>>()
    );
    // Unicast between them (flooded by the hub) teaches nothing new either.
    lab.net.send(h[0], &ipv4(mac(1), mac(3), v4(1), v4(3)));
    lab.net.send(h[2], &ipv4(mac(3), mac(1), v4(3), v4(1)));
    assert!(lab.events().is_empty());
    // Still true after many LLDP rounds (which teach nothing).
    lab.net.advance(S * 5);
    assert_eq!(lab.devices.len(), 3);
}

#[test]
fn on_a_fat_tree_nothing_is_learned_on_any_inter_switch_port() {
    let ft = topo::FatTree { k: 4 };
    let (switches, links) = (ft.switches(), ft.links());
    let mut lab = Lab::new(Params::default(), &switches, &links, 4, false);
    lab.discover();
    assert_eq!(lab.topology.snapshot().links().len(), links.len());
    // A second on, every port has been up long enough for a link on it to be found:
    // the ports with none are confirmed edge ports, where a host seen is a host moved.
    lab.net.advance(S);
    // A frame from one host arrives on every port of every switch (as copies of a
    // flood would): only the unused ports, the edge switches' host ports, are edges.
    let (host, ip) = (mac(1), v4(1));
    let mut edges = Vec::new();
    for d in &switches {
        for port in 1..=4 {
            lab.net.inject(d.0, port, &arp_request(host, ip, v4(9)));
            if !lab.topology.is_link_port(*d, port) {
                edges.push((d.0, port));
            }
            let want = edges.last().copied();
            assert_eq!(lab.at(host), want, "after {}:{port}", d.0);
        }
    }
    // 8 edge switches with 2 host ports each: 16 places the host was seen, in turn.
    assert_eq!(edges.len(), 16);
    let moves = lab
        .events()
        .into_iter()
        .filter(|e| matches!(e, HostEvent::Moved { .. }))
        .count();
    assert_eq!(moves, 15);
}

#[test]
fn before_discovery_copies_of_a_hosts_frames_are_no_moves() {
    let mut lab = Lab::linear(3, Params::default());
    // No discovery frame has arrived yet: h1's flooded ARP reaches s2's port 1 and
    // s3's port 1, which look like edge ports, milliseconds after h1's own port. The
    // old rule took each copy for a move (h1 "at" s3:1, then forgotten when that port
    // proved a link); copies are not moves.
    let h1 = lab.net.add_host(mac(1), 1, 3);
    lab.net.send(h1, &arp_request(mac(1), v4(1), v4(9)));
    assert_eq!(lab.net.switch(3).packet_ins, 1, "the copy reached s3");
    assert_eq!(lab.at(mac(1)), Some((1, 3)));
    assert_eq!(
        lab.events(),
        [HostEvent::Added {
            key: key(mac(1)),
            ap: ap(1, 3)
        }]
    );
    // A host first seen on a port that then proves to be a link (a frame carried by a
    // flow left from before) was behind another switch: forgotten.
    lab.net.inject(3, 1, &arp_request(mac(5), v4(5), v4(9)));
    assert_eq!(lab.at(mac(5)), Some((3, 1)));
    lab.discover();
    assert_eq!(lab.at(mac(5)), None);
    assert_eq!(lab.at(mac(1)), Some((1, 3)), "h1 stays where it is");
    let events = lab.events();
    assert!(
        matches!(&events[1..], [HostEvent::Removed { host }] if host.mac() == mac(5)),
        "{events:?}"
    );
    // h1 speaks again: still at its port, nothing to say.
    lab.net.send(h1, &arp_request(mac(1), v4(1), v4(9)));
    assert_eq!(lab.at(mac(1)), Some((1, 3)));
    assert!(lab.events().is_empty());
}

#[test]
fn a_host_that_moves_is_found_at_its_new_place() {
    let mut lab = Lab::linear(3, Params::default());
    lab.discover();
    let h1 = lab.net.add_host(mac(1), 1, 3);
    lab.net.send(h1, &arp_request(mac(1), v4(1), v4(9)));
    lab.events();
    // Unplugged from s1 (1.3), plugged into s2 (1.0); its next frame tells.
    lab.net.move_host(h1, 2, 3);
    lab.net.advance(S);
    lab.net.send(h1, &ipv4(mac(1), mac(9), v4(1), v4(9)));
    assert_eq!(lab.at(mac(1)), Some((2, 3)));
    assert_eq!(
        lab.events(),
        [HostEvent::Moved {
            key: key(mac(1)),
            from: ap(1, 3),
            to: ap(2, 3)
        }]
    );
    let h = lab.devices.by_ip(IpAddr::V4(v4(1))).unwrap();
    assert_eq!(h.attachment_point(), ap(2, 3));
    assert!(h.last_seen() > h.first_seen());
    // And on to s3.
    lab.net.move_host(h1, 3, 3);
    lab.net.send(h1, &ipv4(mac(1), mac(9), v4(1), v4(9)));
    assert_eq!(lab.at(mac(1)), Some((3, 3)));
    assert_eq!(lab.devices.len(), 1);
}

#[test]
fn silent_hosts_age_out_and_talkers_stay() {
    let mut lab = Lab::linear(
        2,
        Params {
            host_timeout: 10.0,
            ..Params::default()
        },
    );
    lab.discover();
    let quiet = lab.net.add_host(mac(1), 1, 3);
    let talker = lab.net.add_host(mac(2), 2, 3);
    lab.net.send(quiet, &arp_request(mac(1), v4(1), v4(9)));
    lab.net.send(talker, &arp_request(mac(2), v4(2), v4(9)));
    lab.events();
    // The talker speaks every 3 s; LLDP flows all along and refreshes nobody.
    for _ in 0..3 {
        lab.net.advance(S * 3);
        lab.net.send(talker, &ipv4(mac(2), mac(9), v4(2), v4(9)));
    }
    // 9 s: both there.
    assert_eq!(lab.devices.len(), 2);
    // The quiet one goes between its timeout (10 s) and one check later (1 s).
    lab.net.advance(S);
    lab.net.advance(S);
    assert_eq!(lab.at(mac(1)), None);
    assert_eq!(lab.at(mac(2)), Some((2, 3)));
    let events = lab.events();
    assert!(
        matches!(&events[..], [HostEvent::Removed { host }] if host.mac() == mac(1) && host.ips() == [IpAddr::V4(v4(1))]),
        "{events:?}"
    );
    assert!(lab.devices.by_ip(IpAddr::V4(v4(1))).is_none());
    // Quiet from now on, the talker goes too.
    lab.net.advance(S * 12);
    assert!(lab.devices.is_empty());
}

#[test]
fn hosts_go_with_their_port_and_their_switch() {
    let mut lab = Lab::linear(3, Params::default());
    lab.discover();
    let hosts: Vec<usize> = (1..=3u8)
        .map(|n| lab.net.add_host(mac(n), u64::from(n), 3))
        .collect();
    for (i, &h) in hosts.iter().enumerate() {
        let n = i as u8 + 1;
        lab.net.send(h, &arp_request(mac(n), v4(n), v4(9)));
    }
    lab.events();
    let removed = |events: Vec<HostEvent>| -> Vec<MacAddr> {
        events
            .into_iter()
            .map(|e| match e {
                HostEvent::Removed { host } => host.mac(),
                e => panic!("not a removal: {e:?}"),
            })
            .collect()
    };
    // h1's port goes down (link down, 1.3 PORT_STATUS).
    lab.net.set_port(1, 3, false);
    assert_eq!(removed(lab.events()), [mac(1)]);
    // h2's port is deleted (1.0).
    lab.net.delete_port(2, 3);
    assert_eq!(removed(lab.events()), [mac(2)]);
    // s3 disconnects: h3 goes with it.
    lab.net.disconnect(3);
    assert_eq!(removed(lab.events()), [mac(3)]);
    assert!(lab.devices.is_empty());
    // A link port going down forgets nobody (there is nobody there).
    lab.net.set_port(1, 2, false);
    assert!(lab.events().is_empty());
}

#[test]
fn addresses_from_arp_ip_and_neighbour_discovery() {
    let mut lab = Lab::linear(2, Params::default());
    lab.discover();
    let h1 = lab.net.add_host(mac(1), 1, 3);
    let h2 = lab.net.add_host(mac(2), 2, 3);
    // h1 asks for h2, h2 answers: both found by address.
    lab.net.send(h1, &arp_request(mac(1), v4(1), v4(2)));
    lab.net.send(h2, &arp_reply(mac(2), v4(2), mac(1), v4(1)));
    assert_eq!(lab.devices.by_ip(IpAddr::V4(v4(1))).unwrap().mac(), mac(1));
    assert_eq!(lab.devices.by_ip(IpAddr::V4(v4(2))).unwrap().mac(), mac(2));
    // IPv6: h2 advertises its global address from its link-local one; h1 sends from
    // its address. Both families end up on each host.
    let ll2 = "fe80::2".parse().unwrap();
    lab.net.send(
        h2,
        &neighbor_advert(mac(2), ll2, v6(2), Some(mac(2)), mac(1), v6(1)),
    );
    lab.net.send(h1, &ipv6(mac(1), mac(2), v6(1), v6(2)));
    let h2_host = lab.devices.by_ip(IpAddr::V6(v6(2))).unwrap();
    assert_eq!(h2_host.mac(), mac(2));
    assert_eq!(h2_host.ipv6().collect::<Vec<_>>(), [ll2, v6(2)]);
    assert_eq!(lab.devices.by_ip(IpAddr::V6(ll2)).unwrap().mac(), mac(2));
    let h1_host = lab.devices.by_ip(IpAddr::V6(v6(1))).unwrap();
    assert_eq!(h1_host.ips(), [IpAddr::V4(v4(1)), IpAddr::V6(v6(1))]);
    assert_eq!(lab.devices.all().len(), 2);
    // The events told each address as it came.
    let added: Vec<(MacAddr, Option<IpAddr>)> = lab
        .events()
        .into_iter()
        .map(|e| match e {
            HostEvent::Added { key, .. } => (key.mac, None),
            HostEvent::IpAdded {
                key,
                ip,
                from: None,
            } => (key.mac, Some(ip)),
            e => panic!("unexpected {e:?}"),
        })
        .collect();
    assert_eq!(
        added,
        [
            (mac(1), None),
            (mac(2), None),
            (mac(2), Some(IpAddr::V6(ll2))),
            (mac(2), Some(IpAddr::V6(v6(2)))),
            (mac(1), Some(IpAddr::V6(v6(1)))),
        ]
    );
}

#[test]
fn vlan_tagged_hosts_are_hosts_of_their_vlan() {
    let mut lab = Lab::linear(2, Params::default());
    lab.discover();
    // One MAC on VLAN 10 behind s1 and on VLAN 20 behind s2 (a trunk to a server with
    // one NIC, say): two hosts.
    lab.net
        .inject(1, 3, &tagged(10, &arp_request(mac(5), v4(5), v4(9))));
    lab.net
        .inject(2, 3, &tagged(20, &ipv4(mac(5), mac(9), v4(50), v4(9))));
    assert_eq!(
        lab.devices.attachment(mac(5), Some(10)),
        Some(AttachmentPoint::new(1, 3))
    );
    assert_eq!(
        lab.devices.attachment(mac(5), Some(20)),
        Some(AttachmentPoint::new(2, 3))
    );
    assert_eq!(lab.devices.attachment(mac(5), None), None);
    let on_10 = lab.devices.by_ip(IpAddr::V4(v4(5))).unwrap();
    assert_eq!(on_10.vlan(), Some(10));
    assert_eq!(
        lab.devices.by_ip(IpAddr::V4(v4(50))).unwrap().vlan(),
        Some(20)
    );
    assert_eq!(lab.devices.by_mac(mac(5)).len(), 2);
    // The flooded tagged copies crossed the link: still not learned there.
    assert_eq!(lab.devices.len(), 2);
    let events = lab.events();
    assert_eq!(
        events,
        [
            HostEvent::Added {
                key: HostKey {
                    mac: mac(5),
                    vlan: Some(10)
                },
                ap: ap(1, 3)
            },
            HostEvent::Added {
                key: HostKey {
                    mac: mac(5),
                    vlan: Some(20)
                },
                ap: ap(2, 3)
            },
        ]
    );
}

#[test]
fn subscribers_hear_every_change_in_order() {
    let mut lab = Lab::linear(
        2,
        Params {
            host_timeout: 5.0,
            ..Params::default()
        },
    );
    lab.discover();
    let h1 = lab.net.add_host(mac(1), 1, 3);
    let h2 = lab.net.add_host(mac(2), 2, 3);
    lab.net.send(h1, &arp_request(mac(1), v4(1), v4(2)));
    lab.net.send(h2, &arp_reply(mac(2), v4(2), mac(1), v4(1)));
    lab.net.send(h1, &ipv6(mac(1), mac(2), v6(1), v6(2)));
    // Unplugged, and plugged in a second later at s2:4.
    lab.net.move_host(h1, 2, 4);
    lab.net.advance(S);
    lab.net.send(h1, &ipv4(mac(1), mac(2), v4(1), v4(2)));
    // h2 takes over h1's IPv4 address (a failover): the address changes hands.
    lab.net.send(h2, &ipv4(mac(2), mac(1), v4(1), v4(2)));
    // Both fall silent and age out.
    lab.net.advance(S * 7);
    let events = lab.events();
    let removed: Vec<(MacAddr, Vec<IpAddr>)> = events[5..]
        .iter()
        .map(|e| match e {
            HostEvent::Removed { host } => (host.mac(), host.ips().to_vec()),
            e => panic!("not a removal: {e:?}"),
        })
        .collect();
    assert_eq!(
        events[..5],
        [
            HostEvent::Added {
                key: key(mac(1)),
                ap: ap(1, 3)
            },
            HostEvent::Added {
                key: key(mac(2)),
                ap: ap(2, 3)
            },
            HostEvent::IpAdded {
                key: key(mac(1)),
                ip: IpAddr::V6(v6(1)),
                from: None
            },
            HostEvent::Moved {
                key: key(mac(1)),
                from: ap(1, 3),
                to: ap(2, 4)
            },
            HostEvent::IpAdded {
                key: key(mac(2)),
                ip: IpAddr::V4(v4(1)),
                from: Some(key(mac(1)))
            },
        ]
    );
    assert_eq!(
        removed,
        [
            (mac(1), vec![IpAddr::V6(v6(1))]),
            (mac(2), vec![IpAddr::V4(v4(2)), IpAddr::V4(v4(1))]),
        ]
    );
    assert!(lab.devices.is_empty());
}
