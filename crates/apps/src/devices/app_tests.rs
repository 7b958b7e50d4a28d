//! The device app without a network: who a frame says sent it ([`Sender::of`]), and the
//! app in a pipeline driven by hand, with the Topology service driven by hand too (the
//! whole app on an emulated network is in `tests/devices.rs`).

use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use controller::dispatch::SwitchState;
use controller::driver::Driver;
use controller::host::{AppHost, Core};
use controller::info::SwitchInfo;
use openflow::{of10, Dpid, Message, Version};
use packet::arp::ArpOperation;

use super::*;
use crate::devices::table::HostEvent;
use crate::net::topo::cable;
use crate::topology::LinkGone;
use controller::services::Services;

use frames::*;
use testkit::frames;

#[test]
fn the_sender_of_each_kind_of_frame() {
    let (a, b) = (mac(1), mac(2));
    let ip = |n| Some(IpAddr::V4(v4(n)));
    let ip6 = |n| Some(IpAddr::V6(v6(n)));
    let s = |f: &[u8]| Sender::of(f).unwrap();
    // ARP, either way: the sender's address.
    assert_eq!(
        s(&arp_request(a, v4(1), v4(2))),
        Sender {
            mac: a,
            vlan: None,
            ips: [ip(1), None]
        }
    );
    assert_eq!(s(&arp_reply(b, v4(2), a, v4(1))).ips, [ip(2), None]);
    // An ARP whose sender is not the frame's source speaks for someone else.
    let proxy = arp(a, b, ArpOperation::Reply, mac(9), v4(9), v4(2));
    assert_eq!(
        s(&proxy),
        Sender {
            mac: a,
            vlan: None,
            ips: [None, None]
        }
    );
    // IPv4 and IPv6: the source.
    assert_eq!(s(&ipv4(a, b, v4(1), v4(2))).ips, [ip(1), None]);
    assert_eq!(s(&ipv6(a, b, v6(1), v6(2))).ips, [ip6(1), None]);
    // Neighbour advertisement: its source and its target (here a second address).
    let na = neighbor_advert(a, v6(1), v6(11), Some(a), b, v6(2));
    assert_eq!(s(&na).ips, [ip6(1), ip6(11)]);
    // ... not when its link-layer option names another host; fine without one.
    let na = neighbor_advert(a, v6(1), v6(11), Some(mac(9)), b, v6(2));
    assert_eq!(s(&na).ips, [ip6(1), None]);
    let na = neighbor_advert(a, v6(1), v6(11), None, b, v6(2));
    assert_eq!(s(&na).ips, [ip6(1), ip6(11)]);
    // A solicitation's target is what it looks for, not its sender's.
    assert_eq!(s(&neighbor_solicit(a, v6(1), v6(2))).ips, [ip6(1), None]);
    // Duplicate address detection: from ::, which the table drops.
    let dad = neighbor_solicit(a, Ipv6Addr::UNSPECIFIED, v6(1));
    assert_eq!(s(&dad).ips, [Some(IpAddr::V6(Ipv6Addr::UNSPECIFIED)), None]);
    // Tagged: the VLAN id, and the addresses under the tag.
    assert_eq!(
        s(&tagged(42, &arp_request(a, v4(1), v4(2)))),
        Sender {
            mac: a,
            vlan: Some(42),
            ips: [ip(1), None]
        }
    );
    // Not a host's: LLDP, a runt.
    assert_eq!(Sender::of(&lldp(a)), None);
    assert_eq!(Sender::of(&[0u8; 10]), None);
}

fn info(dpid: u64, version: Version) -> SwitchInfo {
    SwitchInfo {
        n_tables: 1,
        ..SwitchInfo::new(openflow::Dpid(dpid), version)
    }
}

/// Counts the packets that reach the direct phase (the device app stops none).
struct Forwarder(Arc<AtomicUsize>);

impl App for Forwarder {
    type State = ();
    fn name(&self) -> &'static str {
        "forwarder"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), |app, _, _, _| {
            app.0.fetch_add(1, Ordering::Relaxed);
            Flow::Stop
        });
    }
}

/// A pipeline of the device app (and a counter after it), with a Topology driven by
/// hand, two switches (1.0 and 1.3) and a clock.
struct Rig {
    p: Core,
    topology: Arc<Topology>,
    devices: Arc<Devices>,
    switches: Vec<SwitchState>,
    heard: Arc<Mutex<Vec<HostEvent>>>,
    forwarded: Arc<AtomicUsize>,
    t0: Instant,
}

impl Rig {
    fn new(params: Params) -> Rig {
        let topology = Arc::new(Topology::new());
        let mut services = Services::new();
        services.provide(Arc::clone(&topology), "test").unwrap();
        let forwarded = Arc::new(AtomicUsize::new(0));
        // The forwarder first: phases order handlers, not app order.
        let apps: Vec<Box<dyn controller::app::AnyApp>> = vec![
            Box::new(Forwarder(Arc::clone(&forwarded))),
            Box::new(DeviceManager::new(params).unwrap()),
        ];
        let p = AppHost::build(apps, services).unwrap();
        let devices = p.services().require::<Devices>("test").unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        devices.subscribe(Box::new(move |e| sink.lock().unwrap().push(e.clone())));
        let t0 = Instant::now();
        p.dispatcher.global_tick(t0);
        let mut switches = Vec::new();
        for (dpid, v) in [(1, Version::V1_0), (2, Version::V1_3)] {
            let mut sw = p.dispatcher.new_switch(info(dpid, v));
            p.dispatcher.switch_added(&mut sw, &mut Vec::new(), t0);
            switches.push(sw);
        }
        Rig {
            p,
            topology,
            devices,
            switches,
            heard,
            forwarded,
            t0,
        }
    }

    /// A frame arrives at `port` of switch `dpid` (1 or 2), `secs` after the start.
    fn packet(&mut self, dpid: u64, port: u32, frame: &[u8], secs: u64) {
        let sw = &mut self.switches[dpid as usize - 1];
        let msg = packet_in(sw.info().version, port, frame);
        self.p.dispatcher.handle(
            sw,
            &msg,
            &mut Vec::new(),
            self.t0 + Duration::from_secs(secs),
        );
    }

    fn heard(&self) -> Vec<HostEvent> {
        std::mem::take(&mut *self.heard.lock().unwrap())
    }

    fn forwarded(&self) -> usize {
        self.forwarded.load(Ordering::Relaxed)
    }
}

fn ap(dpid: u64, port: u32) -> AttachmentPoint {
    AttachmentPoint::new(dpid, port)
}

#[test]
fn learns_hosts_at_the_edge_and_never_on_a_link_port() {
    let mut r = Rig::new(Params::default());
    // h1 on s1 port 1 (1.0), h2 on s2 port 3 (1.3).
    r.packet(1, 1, &arp_request(mac(1), v4(1), v4(2)), 0);
    r.packet(2, 3, &arp_reply(mac(2), v4(2), mac(1), v4(1)), 0);
    assert_eq!(
        r.devices.attachment(mac(1), None),
        Some(AttachmentPoint::new(1, 1))
    );
    assert_eq!(
        r.devices.attachment(mac(2), None),
        Some(AttachmentPoint::new(2, 3))
    );
    assert_eq!(r.devices.by_ip(IpAddr::V4(v4(2))).unwrap().mac(), mac(2));
    // The copy of h1's broadcast that s1 flooded to s2 arrived on s2's port 1, before
    // the link s1:2 - s2:1 was discovered: "learned" there (it moved, as far as the
    // table can tell).
    r.packet(2, 1, &arp_request(mac(1), v4(1), v4(2)), 1);
    assert_eq!(
        r.devices.attachment(mac(1), None),
        Some(AttachmentPoint::new(2, 1))
    );
    let k1 = r.devices.by_mac(mac(1))[0].key();
    assert_eq!(
        r.heard(),
        [
            HostEvent::Added {
                key: k1,
                ap: ap(1, 1)
            },
            HostEvent::Added {
                key: r.devices.by_mac(mac(2))[0].key(),
                ap: ap(2, 3)
            },
            HostEvent::Moved {
                key: k1,
                from: ap(1, 1),
                to: ap(2, 1)
            },
        ]
    );
    // The link is discovered: what was learned at either end is forgotten.
    let [ab, ba] = cable(1, 2, 2, 1);
    r.topology.update(|s| {
        s.add_link(ab);
        s.add_link(ba);
        vec![TopologyEvent::LinkAdded(ab), TopologyEvent::LinkAdded(ba)]
    });
    assert_eq!(r.devices.attachment(mac(1), None), None);
    assert!(matches!(&r.heard()[..], [HostEvent::Removed { host }] if host.mac() == mac(1)));
    // From now on, nothing is learned on the link's ports, on either switch.
    r.packet(2, 1, &ipv4(mac(1), mac(2), v4(1), v4(2)), 2);
    r.packet(1, 2, &ipv4(mac(2), mac(1), v4(2), v4(1)), 2);
    assert_eq!(r.devices.attachment(mac(1), None), None);
    assert_eq!(
        r.devices.attachment(mac(2), None),
        Some(AttachmentPoint::new(2, 3))
    );
    assert!(r.heard().is_empty());
    // h1 speaks at its edge port again: back.
    r.packet(1, 1, &ipv4(mac(1), mac(2), v4(1), v4(2)), 3);
    assert_eq!(
        r.devices.attachment(mac(1), None),
        Some(AttachmentPoint::new(1, 1))
    );
    assert_eq!(r.devices.len(), 2);
    // Every packet went on to the forwarding app: the device app stops none.
    assert_eq!(r.forwarded(), 6);
}

#[test]
fn lldp_and_reserved_in_ports_teach_nothing() {
    let mut r = Rig::new(Params::default());
    r.packet(2, 4, &lldp(mac(1)), 0);
    r.packet(2, 4, &arp_request(mac(2), v4(2), v4(1)), 0);
    assert_eq!(r.devices.len(), 1);
    assert_eq!(
        r.devices.attachment(mac(2), None),
        Some(AttachmentPoint::new(2, 4))
    );
    // CONTROLLER (0xfffffffd) names no host; LOCAL (0xfffffffe), the switch's own
    // stack, does.
    r.packet(2, 0xffff_fffd, &arp_request(mac(3), v4(3), v4(1)), 0);
    r.packet(2, 0xffff_fffe, &arp_request(mac(4), v4(4), v4(1)), 0);
    assert_eq!(r.devices.attachment(mac(3), None), None);
    assert_eq!(
        r.devices.attachment(mac(4), None),
        Some(AttachmentPoint::new(2, 0xffff_fffe))
    );
    assert_eq!(r.forwarded(), 4);
}

#[test]
fn hosts_go_with_their_switch_their_port_and_their_silence() {
    let mut r = Rig::new(Params {
        host_timeout: 30.0,
        ..Params::default()
    });
    r.packet(1, 1, &arp_request(mac(1), v4(1), v4(9)), 0);
    r.packet(1, 2, &arp_request(mac(2), v4(2), v4(9)), 0);
    r.packet(2, 1, &arp_request(mac(3), v4(3), v4(9)), 0);
    r.packet(2, 2, &arp_request(mac(4), v4(4), v4(9)), 0);
    assert_eq!(r.devices.len(), 4);
    r.heard();

    // s1's port 2 goes down (1.0 PORT_STATUS modify, link down): h2 is forgotten.
    let down = Message::V10(of10::Message::PortStatus(of10::PortStatus {
        reason: of10::PortReason::Modify,
        desc: of10::PhyPort {
            port_no: 2,
            hw_addr: mac(0xf2),
            name: openflow::FixedStr::new("eth2").unwrap(),
            config: 0,
            state: controller::info::PORT_STATE_LINK_DOWN,
            curr: 0,
            advertised: 0,
            supported: 0,
            peer: 0,
        },
    }));
    let mut msg = Vec::new();
    down.encode(7, &mut msg).unwrap();
    r.p.dispatcher
        .handle(&mut r.switches[0], &msg, &mut Vec::new(), r.t0);
    assert_eq!(r.devices.attachment(mac(2), None), None);
    assert!(matches!(&r.heard()[..], [HostEvent::Removed { host }] if host.mac() == mac(2)));

    // s2 leaves the topology: h3 and h4 go.
    r.topology.update(|s| {
        s.remove_switch(Dpid(2));
        vec![TopologyEvent::SwitchRemoved(Dpid(2))]
    });
    assert_eq!(r.devices.len(), 1);
    assert_eq!(r.heard().len(), 2);
    // A link going away teaches nothing about hosts.
    let [ab, _] = cable(1, 3, 3, 1);
    r.topology.update(|s| {
        s.add_link(ab);
        vec![TopologyEvent::LinkRemoved(ab, LinkGone::Timeout)]
    });
    assert!(r.heard().is_empty());

    // h1 speaks at 20 s, so it outlives the timeout measured from 0 s ...
    r.packet(1, 1, &ipv4(mac(1), mac(9), v4(1), v4(9)), 20);
    // (the timer runs every 3 s: a tenth of the timeout)
    assert_eq!(
        r.p.dispatcher.global_tick(r.t0 + Duration::from_secs(45)),
        Some(r.t0 + Duration::from_secs(48))
    );
    assert_eq!(r.devices.len(), 1);
    // ... and not 30 s after it spoke.
    r.p.dispatcher.global_tick(r.t0 + Duration::from_secs(50));
    assert!(r.devices.is_empty());
    assert!(matches!(&r.heard()[..], [HostEvent::Removed { host }] if host.mac() == mac(1)));
}

#[test]
fn ipv6_vlans_and_moves() {
    let mut r = Rig::new(Params::default());
    // h1 advertises two addresses; its solicitation for h2 does not give it h2's.
    r.packet(1, 1, &neighbor_solicit(mac(1), v6(1), v6(2)), 0);
    r.packet(
        1,
        1,
        &neighbor_advert(mac(1), v6(1), v6(11), Some(mac(1)), mac(2), v6(2)),
        0,
    );
    let h1 = r.devices.by_ip(IpAddr::V6(v6(11))).unwrap();
    assert_eq!((h1.mac(), h1.ips().len()), (mac(1), 2));
    assert!(r.devices.by_ip(IpAddr::V6(v6(2))).is_none());
    // Duplicate address detection (from ::) adds no address.
    r.packet(
        1,
        3,
        &neighbor_solicit(mac(3), Ipv6Addr::UNSPECIFIED, v6(3)),
        0,
    );
    assert!(r.devices.by_mac(mac(3))[0].ips().is_empty());
    // One MAC on two VLANs is two hosts.
    r.packet(2, 5, &tagged(10, &arp_request(mac(5), v4(5), v4(9))), 0);
    r.packet(2, 6, &tagged(20, &ipv4(mac(5), mac(9), v4(55), v4(9))), 0);
    assert_eq!(
        r.devices.attachment(mac(5), Some(10)),
        Some(AttachmentPoint::new(2, 5))
    );
    assert_eq!(
        r.devices.attachment(mac(5), Some(20)),
        Some(AttachmentPoint::new(2, 6))
    );
    assert_eq!(r.devices.attachment(mac(5), None), None);
    assert_eq!(r.devices.by_mac(mac(5)).len(), 2);
    r.heard();
    // h1 moves to s2 port 7.
    r.packet(2, 7, &ipv6(mac(1), mac(2), v6(1), v6(2)), 5);
    let key = h1.key();
    assert_eq!(
        r.heard(),
        [HostEvent::Moved {
            key,
            from: ap(1, 1),
            to: ap(2, 7)
        }]
    );
    assert_eq!(
        r.devices
            .by_ip(IpAddr::V6(v6(11)))
            .unwrap()
            .attachment_point(),
        ap(2, 7)
    );
}

#[test]
fn a_full_table_refuses_new_hosts() {
    let mut r = Rig::new(Params {
        max_hosts: 2,
        ..Params::default()
    });
    for n in 1..=3 {
        r.packet(1, u32::from(n), &arp_request(mac(n), v4(n), v4(9)), 0);
    }
    assert_eq!(r.devices.len(), 2);
    assert_eq!(r.devices.attachment(mac(3), None), None);
    assert_eq!(r.devices.refused(), 1);
    // More new hosts, while full: refused and counted under the read lock, no write
    // (a flood of new source addresses must not make every PACKET_IN a write).
    let writes = r.devices.writes();
    for n in 4..=9 {
        r.packet(1, 1, &ipv4(mac(n), mac(1), v4(n), v4(1)), 0);
    }
    assert_eq!((r.devices.refused(), r.devices.writes()), (7, writes));
    assert_eq!(r.forwarded(), 9, "refused or not, every packet goes on");
    // A known host that moves is still followed (a write).
    r.packet(2, 5, &arp_request(mac(1), v4(1), v4(9)), 5);
    assert_eq!(
        r.devices.attachment(mac(1), None),
        Some(AttachmentPoint::new(2, 5))
    );
    assert_eq!(r.devices.writes(), writes + 1);
}

/// The fast path (a known host at its place, seen within `refresh`: nothing written)
/// never hides a change: a host that moved away and back, or lost its address to a new
/// host and claims it again, is recorded again, however soon. (The move rule is off
/// here, `move_quiet` 0, so that a move within the second is a move: with it on, such a
/// quick return is an echo, as crates/apps/tests/devices.rs tests.)
#[test]
fn a_known_host_seen_again_is_recorded_again_when_anything_changed() {
    let mut r = Rig::new(Params {
        move_quiet: 0.0,
        ..Params::default()
    });
    let from_h1 = ipv4(mac(1), mac(2), v4(1), v4(2));
    r.packet(1, 1, &from_h1, 0);
    r.packet(1, 1, &from_h1, 0); // nothing to do
    assert!(matches!(&r.heard()[..], [HostEvent::Added { .. }]));
    // Away to s2 and back to s1 within the same second: both moves are seen.
    r.packet(2, 4, &from_h1, 0);
    r.packet(1, 1, &from_h1, 0);
    let moves: Vec<_> = r
        .heard()
        .into_iter()
        .map(|e| match e {
            HostEvent::Moved { to, .. } => to,
            e => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(moves, [ap(2, 4), ap(1, 1)]);
    // h3, new, takes h1's address; h1 claims it again at once: it is h1's again.
    r.packet(1, 2, &ipv4(mac(3), mac(2), v4(1), v4(2)), 0);
    assert_eq!(r.devices.by_ip(IpAddr::V4(v4(1))).unwrap().mac(), mac(3));
    r.packet(1, 1, &from_h1, 0);
    assert_eq!(r.devices.by_ip(IpAddr::V4(v4(1))).unwrap().mac(), mac(1));
    let heard = r.heard();
    assert!(
        matches!(&heard[..], [HostEvent::Added { key: k3, .. }, HostEvent::IpAdded { key, .. }] if k3.mac == mac(3) && key.mac == mac(1)),
        "{heard:?}"
    );
    // Two seconds later (past `refresh`) the sighting is written again.
    r.packet(1, 1, &from_h1, 2);
    let seen = r.devices.by_mac(mac(1))[0].last_seen();
    assert_eq!(seen, r.t0 + Duration::from_secs(2));
}

mod sender_fast_path {
    use super::*;
    use proptest::prelude::*;

    /// Frames of every kind the fast path reads or hands on, then damaged: cut short,
    /// bytes overwritten (the VLAN tag, the EtherType, the ARP and IP headers alike).
    fn frame() -> impl Strategy<Value = Vec<u8>> {
        let base = prop_oneof![
            Just(arp_request(mac(1), v4(1), v4(2))),
            Just(arp_reply(mac(1), v4(1), mac(2), v4(2))),
            Just(arp_reply(mac(3), v4(1), mac(2), v4(2))),
            Just(ipv4(mac(1), mac(2), v4(1), v4(2))),
            Just(ipv6(mac(1), mac(2), v6(1), v6(2))),
            Just(neighbor_solicit(mac(1), v6(1), v6(2))),
            Just(lldp(mac(1))),
        ];
        (
            base,
            0u8..3,
            proptest::collection::vec((0usize..80, any::<u8>()), 0..4),
            0usize..100,
        )
            .prop_map(|(f, tags, edits, cut)| {
                let mut f = f;
                for t in 0..tags {
                    f = tagged(10 + u16::from(t), &f);
                }
                for (at, b) in edits {
                    if let Some(x) = f.get_mut(at) {
                        *x = b;
                    }
                }
                if cut < f.len() && cut % 3 == 0 {
                    f.truncate(cut);
                }
                f
            })
    }

    proptest! {
        /// What the fast path reads equals what the flow key says.
        #[test]
        fn agrees_with_the_flow_key(f in frame()) {
            let fast = EthernetFrame::new_checked(&f[..])
                .ok()
                .and_then(|eth| Sender::of_arp_or_ipv4(&eth));
            if let Some(fast) = fast {
                prop_assert_eq!(fast, Sender::of_any(&f));
            }
            prop_assert_eq!(Sender::of(&f), Sender::of_any(&f));
        }
    }

    #[test]
    fn takes_the_common_frames_itself() {
        for f in [
            arp_request(mac(1), v4(1), v4(2)),
            ipv4(mac(1), mac(2), v4(1), v4(2)),
            tagged(5, &ipv4(mac(1), mac(2), v4(1), v4(2))),
        ] {
            let eth = EthernetFrame::new_checked(&f[..]).unwrap();
            assert!(Sender::of_arp_or_ipv4(&eth).is_some());
        }
        let v6 = ipv6(mac(1), mac(2), v6(1), v6(2));
        let eth = EthernetFrame::new_checked(&v6[..]).unwrap();
        assert!(Sender::of_arp_or_ipv4(&eth).is_none());
    }
}
