//! The codec's hot path, as a learning switch walks it:
//!
//! * `packet_in_v10` / `packet_in_v13`: a PACKET_IN carrying a 64-byte frame, decoded in
//!   place down to in_port, buffer_id and the Ethernet source and destination;
//! * `flow_mod_v10` / `flow_mod_v13`: a FLOW_MOD with an exact match and one output
//!   action, encoded from the version-neutral model into a reused output buffer
//!   (`l2` matches in_port + eth src/dst as the learning switch does; `exact12` is 1.0's
//!   full 12-tuple exact match).
//!
//! Run: `cargo bench -p pharos-openflow --bench codec`. Figures go in BENCHMARKS.md.

use std::hint::black_box;
use std::net::Ipv4Addr;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use openflow::model::{
    Action, EncodedActions, FlowMod, Ipv4Prefix, Match, PacketOut, PortNo, Vlan,
};
use openflow::view::PacketIn;
use openflow::{MacAddr, Version};
use packet::ethernet::EthernetFrame;

fn packet_in(version: Version) -> Vec<u8> {
    let mut frame = vec![0u8; 64];
    frame[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    frame[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    let mut m = Vec::new();
    match version {
        Version::V1_0 => {
            m.extend_from_slice(&[1, 10, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 64, 0, 3, 0, 0]);
        }
        Version::V1_3 => {
            // buffer_id, total_len, reason, table_id, cookie; match [in_port=3]; pad
            m.extend_from_slice(&[4, 10, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 64, 0, 0]);
            m.extend_from_slice(&[0; 8]);
            m.extend_from_slice(&[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0]);
            m.extend_from_slice(&[0, 0]);
        }
    }
    m.extend_from_slice(&frame);
    let len = m.len() as u16;
    m[2..4].copy_from_slice(&len.to_be_bytes());
    m
}

/// What a learning switch reads from a PACKET_IN.
#[inline(always)]
fn learn_fields(msg: &[u8]) -> (u32, Option<u32>, MacAddr, MacAddr) {
    let p = PacketIn::new_checked(msg).unwrap();
    let eth = EthernetFrame::new_checked(p.data()).unwrap();
    (p.in_port(), p.buffer_id(), eth.src_addr(), eth.dst_addr())
}

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(1));
    for (name, v) in [
        ("packet_in_v10", Version::V1_0),
        ("packet_in_v13", Version::V1_3),
    ] {
        let msg = packet_in(v);
        g.bench_function(name, |b| b.iter(|| learn_fields(black_box(&msg))));
    }
    g.finish();
}

fn encode(c: &mut Criterion) {
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Elements(1));
    let l2 = Match {
        in_port: Some(3),
        eth_src: Some(MacAddr([2, 0, 0, 0, 0, 1])),
        eth_dst: Some(MacAddr([2, 0, 0, 0, 0, 2])),
        ..Match::default()
    };
    let exact12 = Match {
        in_port: Some(3),
        eth_src: Some(MacAddr([2, 0, 0, 0, 0, 1])),
        eth_dst: Some(MacAddr([2, 0, 0, 0, 0, 2])),
        eth_type: Some(0x0800),
        vlan: Some(Vlan::Untagged),
        vlan_pcp: Some(0),
        ip_dscp: Some(0),
        ip_proto: Some(17),
        ipv4_src: Some(Ipv4Prefix::exact(Ipv4Addr::new(10, 0, 0, 1))),
        ipv4_dst: Some(Ipv4Prefix::exact(Ipv4Addr::new(10, 0, 0, 2))),
        tp_src: Some(1234),
        tp_dst: Some(53),
        ..Match::default()
    };
    let actions = [Action::output(PortNo::Physical(1))];
    let mut out = Vec::with_capacity(4096);
    for (name, m, v) in [
        ("flow_mod_v10_l2", l2, Version::V1_0),
        ("flow_mod_v13_l2", l2, Version::V1_3),
        ("flow_mod_v10_exact12", exact12, Version::V1_0),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                FlowMod::add(black_box(m), &actions)
                    .idle_timeout(5)
                    .encode(v, 1, &mut out)
                    .unwrap()
            })
        });
    }
    // The routing app's flood of a buffered packet that came in by port 2 of a
    // 4-port switch: out of 1, 3 and 4. As a list of actions built per packet, and
    // from the plan's outputs encoded once (`EncodedActions`) less the in-port's.
    let plan: Vec<Action> = (1..=4)
        .map(|n| Action::output(PortNo::Physical(n)))
        .collect();
    for (v, list, encoded) in [
        (
            Version::V1_0,
            "packet_out_v10_flood_list",
            "packet_out_v10_flood_encoded",
        ),
        (
            Version::V1_3,
            "packet_out_v13_flood_list",
            "packet_out_v13_flood_encoded",
        ),
    ] {
        let mut outs = Vec::with_capacity(4);
        g.bench_function(list, |b| {
            b.iter(|| {
                out.clear();
                outs.clear();
                let in_port = black_box(2);
                let ports = (1..=4u32).filter(|&n| n != in_port);
                outs.extend(ports.map(|n| Action::output(PortNo::Physical(n))));
                PacketOut::buffered(7, PortNo::Physical(in_port), &outs)
                    .encode(v, 1, &mut out)
                    .unwrap()
            })
        });
        let pre = EncodedActions::new(v, &plan).unwrap();
        g.bench_function(encoded, |b| {
            b.iter(|| {
                out.clear();
                let in_port = black_box(2);
                let skip = (1..=4u32).position(|n| n == in_port);
                PacketOut::buffered(7, PortNo::Physical(in_port), &[])
                    .encode_with(v, 1, &pre, skip, &mut out)
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, decode, encode);
criterion_main!(benches);
