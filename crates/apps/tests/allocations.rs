//! Heap use, counted per thread by allocation-counter's global allocator (this test
//! binary alone installs it; bytes are what was asked for, without the allocator's own
//! rounding and headers): the
//! memory the host table takes per tracked host, and the paths that must not allocate
//! (LLDP `verify`, `observe` of a known host, `expire` with nothing to expire, the
//! device app's PACKET_IN from a known host, the default set's flood from known hosts,
//! routing's PACKET_IN to a known host).
//!
//! The figure for BENCHMARKS.md:
//! `cargo test -p pharos-apps --test allocations -- --nocapture memory_per_host`

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

use std::sync::Arc;

use apps::devices::table::{AttachmentPoint, Host, HostTable, Limits};
use apps::devices::{DeviceManager, Devices};
use apps::topology::lldp::{self, DiscoveryKey};
use apps::topology::{Topology, TopologyEvent};
use controller::driver::Driver;
use controller::host::AppHost;
use controller::info::SwitchInfo;
use controller::services::Services;
use openflow::{of13, Dpid, MacAddr, Message, Version};

use testkit::frames;

fn host(i: u32) -> (MacAddr, AttachmentPoint, IpAddr, IpAddr) {
    let [a, b, c, d] = i.to_be_bytes();
    let mac = MacAddr([0x02, a, b, c, d, 1]);
    let ap = AttachmentPoint::new(u64::from(i / 48) + 1, i % 48 + 1);
    let v4 = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
    let v6 = IpAddr::V6(Ipv6Addr::from((0xfd00_u128 << 112) + u128::from(i)));
    (mac, ap, v4, v6)
}

#[test]
fn memory_per_host() {
    const N: u32 = 100_000;
    let t0 = Instant::now();
    let mut table = None;
    // Bytes still held when the closure returns: the table's, which it hands out.
    let used = allocation_counter::measure(|| {
        let mut t = HostTable::new(Limits {
            max_hosts: N as usize,
            ..Limits::default()
        });
        for i in 0..N {
            let (mac, ap, v4, v6) = host(i);
            t.observe(mac, None, ap, Some(v4), t0);
            t.observe(mac, None, ap, Some(v6), t0);
        }
        table = Some(t);
    })
    .bytes_current;
    let t = table.take().unwrap();
    assert_eq!(t.len(), N as usize);
    let freed = allocation_counter::measure(|| drop(t)).bytes_current;
    // Before printing: the test harness's capture of stderr allocates.
    assert_eq!(freed, -used, "the table gives everything back");
    let per_host = used as f64 / f64::from(N);
    eprintln!(
        "host table: {N} hosts with one IPv4 and one IPv6 address each: {used} heap bytes, \
         {per_host:.1} bytes per host (a host's slot is {} bytes)",
        std::mem::size_of::<Option<Host>>()
    );
    // A regression guard, with room: the table is about 230 bytes per host.
    assert!(per_host < 320.0, "{per_host} bytes per host");
}

#[test]
fn hot_paths_do_not_allocate() {
    let t0 = Instant::now();
    let mut t = HostTable::default();
    for i in 0..1_000 {
        let (mac, ap, v4, v6) = host(i);
        t.observe(mac, None, ap, Some(v4), t0);
        t.observe(mac, None, ap, Some(v6), t0);
    }
    let (mac, ap, v4, v6) = host(7);
    let later = t0 + Duration::from_secs(1);
    let info = allocation_counter::measure(|| {
        for _ in 0..100 {
            assert_eq!(t.observe(mac, None, ap, Some(v4), later), None);
            assert_eq!(t.observe(mac, None, ap, Some(v6), later), None);
            assert_eq!(t.observe(mac, None, ap, None, later), None);
            assert!(t.expire(later, Duration::from_secs(300)).is_empty());
            assert!(t.by_ip(v4).is_some());
            assert_eq!(t.by_mac(mac).count(), 1);
        }
    });
    assert_eq!(info.count_total, 0, "allocations on the hot path");
    // A scan that finds nothing to remove does not allocate either. To make one, the
    // bound must be stale: a host first seen a second before the others, seen again.
    t.remove(host(0).0, None);
    t.observe(host(0).0, None, ap, None, t0 - Duration::from_secs(1));
    t.observe(host(0).0, None, ap, None, later);
    let info = allocation_counter::measure(|| {
        assert!(t.expire(later, Duration::from_secs(2)).is_empty());
    });
    assert_eq!(info.count_total, 0, "allocations in a scan");
}

#[test]
fn verify_does_not_allocate() {
    let key = DiscoveryKey::from_bytes([7; 16]);
    let mut frame = Vec::new();
    lldp::encode(&key, 1, 2, MacAddr([2, 0, 0, 0, 0, 1]), 1_000, &mut frame);
    let other = DiscoveryKey::from_bytes([8; 16]);
    let mut truncated = frame.clone();
    truncated.truncate(60);
    let info = allocation_counter::measure(|| {
        for _ in 0..100 {
            assert!(lldp::verify(&key, &frame, 1_000, 10_000).is_ok());
            assert!(lldp::verify(&other, &frame, 1_000, 10_000).is_err());
            assert!(lldp::verify(&key, &frame, 100_000, 10_000).is_err());
            assert!(lldp::verify(&key, &truncated, 1_000, 10_000).is_err());
            assert!(lldp::verify(&key, &frame[..20], 1_000, 10_000).is_err());
        }
    });
    assert_eq!(info.count_total, 0, "verify allocated");
}

#[test]
fn the_device_app_learns_a_known_host_without_allocating() {
    let topology = Arc::new(Topology::new());
    let [ab, ba] = apps::routing::topo::cable(1, 2, 2, 1);
    topology.update(|s| {
        s.add_link(ab);
        s.add_link(ba);
        vec![TopologyEvent::LinkAdded(ab), TopologyEvent::LinkAdded(ba)]
    });
    let mut services = Services::new();
    services.provide(topology, "test").unwrap();
    let p = AppHost::build(vec![Box::new(DeviceManager::default())], services).unwrap();
    let devices = p.services().require::<Devices>("test").unwrap();
    let mut sw = p.dispatcher.new_switch(SwitchInfo {
        n_tables: 1,
        ..SwitchInfo::new(openflow::Dpid(1), Version::V1_3)
    });
    let (mut out, t0) = (Vec::with_capacity(4096), Instant::now());
    p.dispatcher.switch_added(&mut sw, &mut out, t0);
    let (h1, h2) = (frames::mac(1), frames::mac(2));
    let edge = [
        frames::packet_in(
            Version::V1_3,
            1,
            &frames::arp_request(h1, frames::v4(1), frames::v4(2)),
        ),
        frames::packet_in(
            Version::V1_3,
            1,
            &frames::ipv4(h1, h2, frames::v4(1), frames::v4(2)),
        ),
        frames::packet_in(
            Version::V1_3,
            1,
            &frames::ipv6(h1, h2, frames::v6(1), frames::v6(2)),
        ),
    ];
    // On the link's port: looked at, not learned.
    let link = frames::packet_in(
        Version::V1_3,
        2,
        &frames::ipv4(h2, h1, frames::v4(2), frames::v4(1)),
    );
    for m in &edge {
        p.dispatcher.handle(&mut sw, m, &mut out, t0);
    }
    p.dispatcher.global_tick(t0); // starts the timers' clock (once, allocating)
    let info = allocation_counter::measure(|| {
        for i in 0..100 {
            let now = t0 + Duration::from_millis(i);
            for m in edge.iter().chain([&link]) {
                p.dispatcher.handle(&mut sw, m, &mut out, now);
            }
            assert!(p.dispatcher.global_tick(now).is_some());
        }
    });
    assert_eq!(
        info.count_total, 0,
        "allocations on the device app's hot path"
    );
    assert_eq!(
        devices.attachment(h1, None),
        Some(AttachmentPoint::new(1, 1))
    );
    assert_eq!(devices.len(), 1);
}

/// The default set (topology, device_manager, routing) under `pharos bench`'s load: 16
/// switches, 200 source MACs each, all from one IPv4 address (contested after a few
/// moves), every destination unknown and flooded along the tree. Once every source is
/// known, a PACKET_IN allocates nothing in any of the three apps.
#[test]
fn the_default_set_floods_from_known_hosts_without_allocating() {
    let apps = ["topology", "device_manager", "routing"]
        .iter()
        .map(|a| apps::by_name(a, &toml::Table::new()).unwrap())
        .collect();
    let p = AppHost::build(apps, Services::new()).unwrap();
    let t0 = Instant::now();
    let port = |dpid: u64, n: u32| controller::info::PortInfo {
        port_no: n,
        hw_addr: MacAddr([6, 0, 0, 0, dpid as u8, n as u8]),
        name: format!("eth{n}"),
        config: 0,
        state: 0,
    };
    let mut out = Vec::with_capacity(1 << 16);
    let mut switches: Vec<_> = (1..=16u64)
        .map(|dpid| {
            let mut sw = p.dispatcher.new_switch(SwitchInfo {
                ports: (1..=4).map(|n| port(dpid, n)).collect(),
                ..SwitchInfo::new(openflow::Dpid(dpid), Version::V1_0)
            });
            p.dispatcher.switch_added(&mut sw, &mut out, t0);
            sw
        })
        .collect();
    let (sip, dip) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
    let messages: Vec<(usize, Vec<u8>)> = (0..200u32)
        .flat_map(|i| {
            (0..16usize).map(move |s| {
                let [_, _, a, b] = i.to_be_bytes();
                let src = MacAddr([2, s as u8, 0, a, b, 1]);
                let dst = MacAddr([0x0a, s as u8, 0, 0, 0, 1]);
                (
                    s,
                    frames::packet_in(Version::V1_0, 1, &frames::ipv4(src, dst, sip, dip)),
                )
            })
        })
        .collect();
    let pass = |switches: &mut Vec<_>, out: &mut Vec<u8>, now: Instant| {
        let mut sent = 0;
        for (s, m) in &messages {
            out.clear();
            p.dispatcher.handle(&mut switches[*s], m, &mut *out, now);
            sent += usize::from(!out.is_empty());
        }
        sent
    };
    // Learns every source (allocates), then fills each switch's flood memory.
    pass(&mut switches, &mut out, t0);
    pass(&mut switches, &mut out, t0 + Duration::from_millis(300));
    let mut flooded = 0;
    let info = allocation_counter::measure(|| {
        flooded = pass(&mut switches, &mut out, t0 + Duration::from_millis(600));
    });
    assert_eq!(
        info.count_total, 0,
        "allocations on the default set's PACKET_IN path"
    );
    assert_eq!(flooded, messages.len(), "every PACKET_IN is flooded");
    let devices = p.services().require::<Devices>("test").unwrap();
    assert_eq!(devices.len(), messages.len());
}

/// The messages in `out`, decoded.
fn messages(out: &[u8]) -> Vec<Message> {
    let mut found = Vec::new();
    let mut rest = out;
    while rest.len() >= 8 {
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        found.push(Message::decode(&rest[..len]).unwrap().1);
        rest = &rest[len..];
    }
    found
}

/// The cookie of the one FLOW_MOD in `out`, and how many PACKET_OUTs go with it.
fn flow_mod_cookie(out: &[u8]) -> (u64, usize) {
    let (mut cookie, mut packet_outs) = (None, 0);
    for m in messages(out) {
        match m {
            Message::V13(of13::Message::FlowMod(fm)) => {
                assert!(cookie.replace(fm.cookie).is_none(), "one FLOW_MOD");
            }
            Message::V13(of13::Message::PacketOut(_)) => packet_outs += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    (cookie.expect("a FLOW_MOD"), packet_outs)
}

/// The routing app's PACKET_IN for a known destination (with device_manager, as it
/// always runs), in the steady state: s1 (ports 1 to 3) and s2 (ports 1, 2) joined by
/// the cable s1:2 — s2:2, h1 on s1:1, h2 on s2:1, h3 on s1:3. Allocation-free are:
///
/// - step 4, the packet that overtook its route's flow, on the route's first switch
///   and on a later one (h1 -> h2 at s1:1, and at s2:2): the flow sent again and the
///   packet out of the route's port, through the switch's own output;
/// - step 5, a route installed on one switch (h1 -> h3, after its FLOW_REMOVED): the
///   route computed, put in the slab, its flow and the packet sent.
///
/// What allocates, legitimately: the first sighting of a host, the slab and its indexes
/// growing (the install-order queue too, up to its bound: so this counts after a warm-up
/// of 200 rounds), and a route's flows for other switches (a route across switches is a
/// `Vec` of links, and each FLOW_MOD for another switch is queued to that switch's
/// worker as a message of its own). Flooding to an unknown destination is the default
/// set's test above.
#[test]
fn routing_forwards_to_a_known_host_without_allocating() {
    let topology = Arc::new(Topology::new());
    let [l12, l21] = apps::routing::topo::cable(1, 2, 2, 2);
    topology.update(|s| {
        s.set_switch(Dpid(1), Vec::new());
        s.set_switch(Dpid(2), Vec::new());
        s.add_link(l12);
        s.add_link(l21);
        vec![
            TopologyEvent::SwitchAdded(Dpid(1)),
            TopologyEvent::SwitchAdded(Dpid(2)),
            TopologyEvent::LinkAdded(l12),
            TopologyEvent::LinkAdded(l21),
        ]
    });
    let mut services = Services::new();
    services.provide(topology, "test").unwrap();
    let apps = vec![
        Box::new(DeviceManager::default()) as Box<dyn controller::app::AnyApp>,
        apps::by_name("routing", &toml::Table::new()).unwrap(),
    ];
    let p = AppHost::build(apps, services).unwrap();
    let port = |n: u32| controller::info::PortInfo {
        port_no: n,
        hw_addr: MacAddr([6, 0, 0, 0, 0, n as u8]),
        name: format!("eth{n}"),
        config: 0,
        state: 0,
    };
    let switch = |dpid: u64, ports: u32| {
        p.dispatcher.new_switch(SwitchInfo {
            n_tables: 1,
            ports: (1..=ports).map(port).collect(),
            ..SwitchInfo::new(Dpid(dpid), Version::V1_3)
        })
    };
    let (mut s1, mut s2) = (switch(1, 3), switch(2, 2));
    let (mut out, t0) = (Vec::with_capacity(4096), Instant::now());
    p.dispatcher.switch_added(&mut s1, &mut out, t0);
    p.dispatcher.switch_added(&mut s2, &mut out, t0);
    let (h1, h2, h3, nobody) = (
        frames::mac(1),
        frames::mac(2),
        frames::mac(3),
        frames::mac(9),
    );
    let frame = |src: MacAddr, dst: MacAddr| frames::ipv4(src, dst, frames::v4(1), frames::v4(2));
    let pin = |in_port: u32, src, dst| frames::packet_in(Version::V1_3, in_port, &frame(src, dst));
    // Each host speaks once (to no one known: flooded) and is learned.
    p.dispatcher
        .handle(&mut s1, &pin(1, h1, nobody), &mut out, t0);
    p.dispatcher
        .handle(&mut s2, &pin(1, h2, nobody), &mut out, t0);
    p.dispatcher
        .handle(&mut s1, &pin(3, h3, nobody), &mut out, t0);
    let devices = p.services().require::<Devices>("test").unwrap();
    assert_eq!(devices.len(), 3);
    // The routes, installed once (allocating): h1 -> h2 across the cable, h1 -> h3 and
    // h3 -> h1 on s1 (the last keeps the slab from emptying when h1 -> h3 goes).
    let (h1_h2, h1_h3) = (pin(1, h1, h2), pin(1, h1, h3));
    let (at_s2, h3_h1) = (pin(2, h1, h2), pin(3, h3, h1));
    for m in [&h1_h2, &h1_h3, &h3_h1] {
        p.dispatcher.handle(&mut s1, m, &mut out, t0);
    }
    let gone = |cookie| {
        Message::V13(of13::Message::FlowRemoved(of13::FlowRemoved {
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
        }))
        .to_bytes(7)
        .unwrap()
    };
    out.clear();
    p.dispatcher.handle(&mut s1, &h1_h2, &mut out, t0);
    let (h1_h2_cookie, n) = flow_mod_cookie(&out);
    assert_eq!(n, 1, "step 4 sends the packet on");
    out.clear();
    p.dispatcher.handle(&mut s1, &h1_h3, &mut out, t0);
    let (mut h1_h3_cookie, _) = flow_mod_cookie(&out);
    // Counted after 200 rounds: the install-order queue of the slab grows (doubling)
    // up to its bound, twice the routes plus 64, before it is pruned in place.
    let mut allocations = 0;
    for i in 0..300 {
        let (now, counted) = (t0 + Duration::from_millis(i), i >= 200);
        // Step 4 on the route's first switch, then on the second.
        out.clear();
        let c = allocation_counter::measure(|| {
            p.dispatcher.handle(&mut s1, &h1_h2, &mut out, now);
        });
        allocations += c.count_total * u64::from(counted);
        assert_eq!(flow_mod_cookie(&out), (h1_h2_cookie, 1), "step 4 at s1");
        out.clear();
        let c = allocation_counter::measure(|| {
            p.dispatcher.handle(&mut s2, &at_s2, &mut out, now);
        });
        allocations += c.count_total * u64::from(counted);
        assert_eq!(flow_mod_cookie(&out), (h1_h2_cookie, 1), "step 4 at s2");
        // Step 5 on one switch: h1 -> h3's flow expired, the next packet installs it.
        p.dispatcher
            .handle(&mut s1, &gone(h1_h3_cookie), &mut out, now);
        out.clear();
        let c = allocation_counter::measure(|| {
            p.dispatcher.handle(&mut s1, &h1_h3, &mut out, now);
        });
        allocations += c.count_total * u64::from(counted);
        let (cookie, n) = flow_mod_cookie(&out);
        assert!(cookie != h1_h3_cookie && n == 1, "a new route at step 5");
        h1_h3_cookie = cookie;
    }
    assert_eq!(
        allocations, 0,
        "allocations on routing's PACKET_IN path to a known host"
    );
}
