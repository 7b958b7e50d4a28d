//! The host table with 100,000 hosts, each with one IPv4 and one IPv6 address:
//!
//! * `devices/observe_known/{same,spread}`: a PACKET_IN from a known host at its known
//!   place, with its IPv4 address (the common case: nothing changes, no event). `same`
//!   is one host again and again (its entries stay in cache); `spread` walks every
//!   host in a shuffled order, as traffic from many hosts does;
//! * `devices/expire/nothing_due`: `expire` when no host can have timed out (one
//!   comparison against the bound on the oldest last-seen time);
//! * `devices/expire/scan_nothing_expired`: `expire` when the bound is stale (the
//!   host idle longest was seen again) so every host is looked at, and none removed:
//!   the worst an `expire` that removes nothing costs;
//! * `devices/remove_attached_to/none`: a port found to be an inter-switch link, with
//!   no host on it: a scan of every host.
//! * `devices/app_packet_in/{known_host,link_port}`: the device app's whole PACKET_IN
//!   handling in a pipeline driven by hand (the PACKET_IN checked, the frame read, the
//!   `Devices` lock, the topology's link-port check, `observe`), for a 1.3 PACKET_IN
//!   with an IPv4 packet from a known host at its known place among 100,000 hosts, and
//!   for one that came in on an inter-switch link (not learned).
//!
//! Memory per host is measured by `tests/allocations.rs`. Run: `cargo bench -p
//! pharos-apps --bench devices`. Figures go in BENCHMARKS.md ("Device tracking").

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

use std::sync::Arc;

use apps::devices::table::{AttachmentPoint, HostTable, Limits};
use apps::devices::{DeviceManager, Devices};
use apps::topology::{Topology, TopologyEvent};
use controller::host::AppHost;
use controller::info::SwitchInfo;
use controller::services::Services;
use criterion::{criterion_group, criterion_main, Criterion};
use openflow::{MacAddr, Version};

use testkit::frames;

const N: u32 = 100_000;
const MAX_IDLE: Duration = Duration::from_secs(300);

fn host(i: u32) -> (MacAddr, AttachmentPoint, IpAddr, IpAddr) {
    let [a, b, c, d] = i.to_be_bytes();
    let mac = MacAddr([0x02, a, b, c, d, 1]);
    let ap = AttachmentPoint::new(u64::from(i / 48) + 1, i % 48 + 1);
    let v4 = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
    let v6 = IpAddr::V6(Ipv6Addr::from((0xfd00_u128 << 112) + u128::from(i)));
    (mac, ap, v4, v6)
}

fn table(t0: Instant) -> HostTable {
    let mut t = HostTable::new(Limits {
        max_hosts: N as usize,
        ..Limits::default()
    });
    for i in 0..N {
        let (mac, ap, v4, v6) = host(i);
        t.observe(mac, None, ap, Some(v4), t0);
        t.observe(mac, None, ap, Some(v6), t0);
    }
    t
}

/// The hosts in a fixed shuffled order (a multiplicative permutation of 0..N).
fn shuffled() -> Vec<(MacAddr, AttachmentPoint, IpAddr, IpAddr)> {
    (0..N)
        .map(|i| host((i as u64 * 7_919 % N as u64) as u32))
        .collect()
}

fn devices(c: &mut Criterion) {
    let t0 = Instant::now();
    let mut t = table(t0);
    let now = t0 + Duration::from_secs(1);
    let mut g = c.benchmark_group("devices");

    let (mac, ap, v4, _) = host(N / 2);
    g.bench_function("observe_known/same", |b| {
        b.iter(|| black_box(t.observe(mac, None, ap, Some(v4), now)))
    });
    let order = shuffled();
    let mut next = 0;
    g.bench_function("observe_known/spread", |b| {
        b.iter(|| {
            let (mac, ap, v4, _) = order[next];
            next = (next + 1) % order.len();
            black_box(t.observe(mac, None, ap, Some(v4), now))
        })
    });
    assert_eq!(t.len(), N as usize);

    g.bench_function("expire/nothing_due", |b| {
        b.iter(|| black_box(t.expire(black_box(now), MAX_IDLE)))
    });
    // A host first seen a second before t0 and seen again now leaves the bound at
    // t0 - 1 s: `expire` at t0 - 1 s + MAX_IDLE must look at every host, and every
    // host was seen at t0 or later, so none goes. The scan fixes the bound, so each
    // iteration makes it stale again first (untimed).
    let (x, x_ap, _, _) = host(N + 1);
    let due = t0 - Duration::from_secs(1) + MAX_IDLE;
    t.remove(host(0).0, None);
    g.bench_function("expire/scan_nothing_expired", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                t.remove(x, None);
                t.observe(x, None, x_ap, None, t0 - Duration::from_secs(1));
                t.observe(x, None, x_ap, None, now);
                let start = Instant::now();
                let events = t.expire(due, MAX_IDLE);
                total += start.elapsed();
                assert!(events.is_empty());
            }
            total
        })
    });
    g.sample_size(20);
    g.bench_function("remove_attached_to/none", |b| {
        b.iter(|| black_box(t.remove_attached_to(openflow::Dpid(u64::MAX), 1)))
    });
    g.finish();
}

/// The device app in a pipeline: 100,000 hosts on switch 1 (ports 1..=48 taken as edge
/// ports, whatever the hosts' own numbering), port 100 an inter-switch link.
fn app(c: &mut Criterion) {
    let topology = Arc::new(Topology::new());
    let [ab, ba] = apps::routing::topo::cable(1, 100, 2, 100);
    topology.update(|s| {
        s.add_link(ab);
        s.add_link(ba);
        vec![TopologyEvent::LinkAdded(ab), TopologyEvent::LinkAdded(ba)]
    });
    let mut services = Services::new();
    services.provide(topology, "bench").unwrap();
    let params = apps::devices::app::Params {
        max_hosts: N as usize,
        ..Default::default()
    };
    let p = AppHost::build(
        vec![Box::new(DeviceManager::new(params).unwrap())],
        services,
    )
    .unwrap();
    let devices = p.services().require::<Devices>("bench").unwrap();
    let mut sw = p.dispatcher.new_switch(SwitchInfo {
        n_tables: 1,
        ..SwitchInfo::new(openflow::Dpid(1), Version::V1_3)
    });
    let (mut out, t0) = (Vec::new(), Instant::now());
    p.dispatcher.switch_added(&mut sw, &mut out, t0);
    let message = |i: u32, port: Option<u32>| {
        let (mac, ap, v4, _) = host(i);
        let IpAddr::V4(v4) = v4 else { unreachable!() };
        let frame = frames::ipv4(mac, frames::mac(0), v4, Ipv4Addr::new(10, 255, 255, 254));
        frames::packet_in(Version::V1_3, port.unwrap_or(ap.port), &frame)
    };
    for i in 0..N {
        p.dispatcher
            .handle(&mut sw, &message(i, None), &mut out, t0);
    }
    assert_eq!(devices.len(), N as usize);
    let now = t0 + Duration::from_secs(1);
    let mut g = c.benchmark_group("devices");
    let known = message(N / 2, None);
    g.bench_function("app_packet_in/known_host", |b| {
        b.iter(|| {
            p.dispatcher
                .handle(&mut sw, black_box(&known), &mut out, now)
        })
    });
    let on_link = message(N / 2, Some(100));
    g.bench_function("app_packet_in/link_port", |b| {
        b.iter(|| {
            p.dispatcher
                .handle(&mut sw, black_box(&on_link), &mut out, now)
        })
    });
    g.finish();
    assert_eq!(devices.len(), N as usize);
    assert!(out.is_empty(), "the device app sends nothing");
}

criterion_group!(benches, devices, app);
criterion_main!(benches);
