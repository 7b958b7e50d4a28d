//! The default app set (topology, device_manager, routing) against the learning switch,
//! as the pipeline runs them, driven by hand (no sockets): the load of `pharos bench
//! controller -s 16 -M 1000` (16 switches, each sending 1.0 PACKET_INs of a 60-byte
//! IPv4/UDP frame on port 1 from 1,000 source MACs in turn, all to one destination
//! never seen, all from 10.0.0.1), after one pass that learns every source.
//!
//! * `default_set/packet_in/default_apps`: per PACKET_IN, through the three apps
//!   (every one flooded along the spanning tree);
//! * `default_set/packet_in/learning_switch`: the same PACKET_INs through the learning
//!   switch (every one flooded).
//!
//! The ratio of the two is what the default set costs in app code beyond the learning
//! switch; the I/O both share is not in it. Run: `cargo bench -p pharos-apps --bench
//! default_set`. Figures go in BENCHMARKS.md ("The default app set under pharos bench").

use std::hint::black_box;
use std::time::Instant;

use controller::dispatch::SwitchState;
use controller::host::{AppHost, Core};
use controller::info::{PortInfo, SwitchInfo};
use controller::services::Services;
use criterion::{criterion_group, criterion_main, Criterion};
use openflow::view::NO_BUFFER;
use openflow::{MacAddr, Version};
use testkit::frames;

const SWITCHES: u64 = 16;
const MACS: u32 = 1000;

fn info(dpid: u64) -> SwitchInfo {
    let ports = (1..=4)
        .map(|p| PortInfo {
            port_no: p,
            hw_addr: MacAddr([6, 0, 0, 0, dpid as u8, p as u8]),
            name: format!("s{dpid}-eth{p}"),
            config: 0,
            state: 0,
        })
        .collect();
    SwitchInfo {
        ports,
        ..SwitchInfo::new(openflow::Dpid(dpid), Version::V1_0)
    }
}

/// The generator's frame: dst `0a:dd:dd:00:00:01`, src `02:dd:dd:ii:ii:ii`, IPv4/UDP
/// 10.0.0.1 → 10.0.0.2, 60 bytes.
fn frame(dpid: u64, i: u32) -> Vec<u8> {
    let d = (dpid as u16).to_be_bytes();
    let n = i.to_be_bytes();
    let mut f = vec![
        0x0a, d[0], d[1], 0, 0, 1, 0x02, d[0], d[1], n[1], n[2], n[3],
    ];
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[
        10, 0, 0, 1, 10, 0, 0, 2, 0x04, 0xd2, 0x16, 0x2e, 0, 26, 0, 0,
    ]);
    f.resize(60, 0);
    f
}

fn packet_in(dpid: u64, i: u32) -> Vec<u8> {
    frames::packet_in_message(Version::V1_0, 1, &frame(dpid, i), NO_BUFFER)
        .to_bytes(0)
        .unwrap()
}

fn pipeline(apps: &[&str]) -> (Core, Vec<SwitchState>) {
    let apps = apps
        .iter()
        .map(|a| apps::by_name(a, &toml::Table::new()).unwrap())
        .collect();
    let p = AppHost::build(apps, Services::new()).unwrap();
    let now = Instant::now();
    let switches = (1..=SWITCHES)
        .map(|d| {
            let mut sw = p.dispatcher.new_switch(info(d));
            p.dispatcher.switch_added(&mut sw, &mut Vec::new(), now);
            sw
        })
        .collect();
    (p, switches)
}

fn bench(c: &mut Criterion) {
    // In the generator's order: switch after switch, each its next MAC.
    let messages: Vec<(usize, Vec<u8>)> = (0..MACS)
        .flat_map(|i| (0..SWITCHES).map(move |d| (d as usize, packet_in(d + 1, i))))
        .collect();
    let mut g = c.benchmark_group("default_set/packet_in");
    for (name, apps) in [
        (
            "default_apps",
            &["topology", "device_manager", "routing"][..],
        ),
        ("learning_switch", &["learning_switch"][..]),
    ] {
        let (p, mut switches) = pipeline(apps);
        let mut out = Vec::with_capacity(1 << 16);
        let now = Instant::now();
        for (sw, m) in &messages {
            out.clear();
            p.dispatcher.handle(&mut switches[*sw], m, &mut out, now);
        }
        let mut next = messages.iter().cycle();
        g.bench_function(name, |b| {
            b.iter(|| {
                let (sw, m) = next.next().unwrap();
                out.clear();
                p.dispatcher
                    .handle(&mut switches[*sw], black_box(m), &mut out, now);
                black_box(out.len());
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
