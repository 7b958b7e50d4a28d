//! What a WASM app costs per PACKET_IN, against the native app, as the pipeline runs
//! them driven by hand (no sockets): the load of `pharos bench controller -s 16` (16
//! switches, each 1.0 PACKET_INs of a 60-byte frame from 1,000 hosts in pairs behind
//! ports 1 and 2, every destination known after a first pass, so every PACKET_IN is
//! answered with a FLOW_MOD and a PACKET_OUT), in worker turns of 16 PACKET_INs of one
//! switch, each turn ended as a worker ends it (`Pipeline::turn_end`, where a batching
//! WASM app is called). Criterion's time is per turn; its throughput, PACKET_INs/s.
//!
//! * `wasm/packet_in/native_ls`: the native learning switch;
//! * `wasm/packet_in/wasm_ls`: the WASM learning switch alone (it batches: one call per
//!   turn, its sends returned in the call's result);
//! * `wasm/packet_in/firewall_then_native_ls`: the WASM firewall with no rule (one
//!   call that sends nothing) in front of the native learning switch: the cost of one
//!   crossing is the difference with `noop_then_native_ls`. The frames are IPv4, so
//!   the firewall asks for the packet's bytes (`packet-data`: a second crossing, whose
//!   list is lowered into guest memory through the guest's allocator);
//! * `wasm/packet_in/firewall_then_native_ls_not_ip`: the same with frames of another
//!   EtherType (0x88b5), which the firewall lets through at once: one crossing alone;
//! * `wasm/packet_in/noop_then_native_ls`: a native app that does nothing in front of
//!   the native learning switch (what the dispatcher adds per app, WASM or not).
//!
//! Run: `cargo bench -p pharos-wasm --bench crossing`. Figures go in BENCHMARKS.md
//! ("WebAssembly apps").

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use controller::app::PacketIn;
use controller::app::{AnyApp, App, Builder, Flow, Order, SwitchCtx};
use controller::dispatch::SwitchState;
use controller::host::{AppHost, Core};
use controller::info::{PortInfo, SwitchInfo};
use controller::services::Services;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use openflow::{of10, MacAddr, Message, Version};
use wasm::{LoadSpec, WasmLoader};

const SWITCHES: u64 = 16;
const MACS: u32 = 1024;
/// PACKET_INs of one switch per worker turn (a worker takes up to 64).
const TURN: u32 = 16;

fn info(dpid: u64) -> SwitchInfo {
    let ports = (1..=2)
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

fn host(dpid: u64, i: u32) -> [u8; 6] {
    let d = (dpid as u16).to_be_bytes();
    let n = i.to_be_bytes();
    [0x02, d[0], d[1], n[1], n[2], n[3]]
}

/// Host `i` (behind port 1 if even, 2 if odd) to its partner `i ^ 1`: IPv4/UDP (or
/// the same bytes with EtherType 0x88b5 unless `ip`), 60 bytes.
fn packet_in(dpid: u64, i: u32, ip: bool) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&host(dpid, i ^ 1));
    f.extend_from_slice(&host(dpid, i));
    f.extend_from_slice(if ip { &[0x08, 0x00] } else { &[0x88, 0xb5] });
    f.extend_from_slice(&[0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[
        10, 0, 0, 1, 10, 0, 0, 2, 0x04, 0xd2, 0x16, 0x2e, 0, 26, 0, 0,
    ]);
    f.resize(60, 0);
    Message::V10(of10::Message::PacketIn(of10::PacketIn {
        buffer_id: openflow::view::NO_BUFFER,
        total_len: 60,
        in_port: 1 + (i % 2) as u16,
        reason: of10::PacketInReason::NoMatch,
        data: f,
    }))
    .to_bytes(0)
    .unwrap()
}

/// Does nothing with every PACKET_IN (lets the next app have it).
struct Noop;

impl App for Noop {
    type State = ();

    fn name(&self) -> &'static str {
        "noop"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::advise(0), noop_packet_in);
    }
}

fn noop_packet_in(_: &Noop, _: &mut SwitchCtx<'_>, _: &mut (), p: &PacketIn) -> Flow {
    black_box(p);
    Flow::Continue
}

fn module(name: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../../wasm/prebuilt", name]
        .iter()
        .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn wasm_app(loader: &WasmLoader, file: &str, name: &str) -> Box<dyn AnyApp> {
    let spec = LoadSpec {
        name: name.into(),
        order: Order::advise(0),
        params_json: "{}".into(),
    };
    Box::new(loader.load_wasm(&spec, &module(file)).unwrap())
}

fn pipeline(apps: Vec<Box<dyn AnyApp>>) -> (Core, Vec<SwitchState>) {
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

/// One turn: a switch's index and its PACKET_INs read together.
type Turn = (usize, Vec<Vec<u8>>);

/// Handles one turn as a worker does: each message, then the turn's end.
fn turn(p: &Core, switches: &mut [SwitchState], t: &Turn, out: &mut Vec<u8>, now: Instant) {
    let sw = &mut switches[t.0];
    for m in &t.1 {
        p.dispatcher.handle(sw, black_box(m), out, now);
    }
    p.dispatcher.turn_end(sw, out, now);
}

fn bench(c: &mut Criterion) {
    // Turns of TURN PACKET_INs of one switch, the switches in turn (host i of switch d
    // in turn i / TURN).
    let messages = |ip: bool| -> Vec<Turn> {
        (0..MACS / TURN)
            .flat_map(|k| {
                (0..SWITCHES).map(move |d| {
                    let t = (k * TURN..(k + 1) * TURN).map(|i| packet_in(d + 1, i, ip));
                    (d as usize, t.collect())
                })
            })
            .collect()
    };
    let (ip, not_ip) = (messages(true), messages(false));
    let loader = WasmLoader::default();
    let native = || Box::new(apps::LearningSwitch::default()) as Box<dyn AnyApp>;
    let mut g = c.benchmark_group("wasm/packet_in");
    g.throughput(Throughput::Elements(u64::from(TURN)));
    type Make<'a> = Box<dyn Fn() -> Vec<Box<dyn AnyApp>> + 'a>;
    type Messages<'a> = &'a [Turn];
    let sets: [(&str, Messages, Make); 5] = [
        ("native_ls", &ip, Box::new(|| vec![native()])),
        (
            "wasm_ls",
            &ip,
            Box::new(|| {
                vec![wasm_app(
                    &loader,
                    "pharos_wasm_learning_switch.wasm",
                    "wasm_ls",
                )]
            }),
        ),
        (
            "noop_then_native_ls",
            &ip,
            Box::new(|| vec![Box::new(Noop) as Box<dyn AnyApp>, native()]),
        ),
        (
            "firewall_then_native_ls",
            &ip,
            Box::new(|| {
                vec![
                    wasm_app(&loader, "pharos_wasm_firewall.wasm", "firewall"),
                    native(),
                ]
            }),
        ),
        (
            "firewall_then_native_ls_not_ip",
            &not_ip,
            Box::new(|| {
                vec![
                    wasm_app(&loader, "pharos_wasm_firewall.wasm", "firewall"),
                    native(),
                ]
            }),
        ),
    ];
    for (name, messages, make) in sets {
        let (p, mut switches) = pipeline(make());
        let mut out = Vec::with_capacity(1 << 16);
        let now = Instant::now();
        // Two passes: every host learned, so every PACKET_IN is forwarded by a flow.
        for _ in 0..2 {
            for t in messages {
                out.clear();
                turn(&p, &mut switches, t, &mut out, now);
            }
        }
        out.clear();
        turn(&p, &mut switches, &messages[17], &mut out, now);
        let answered = 2 * TURN as usize;
        assert_eq!(
            count_messages(&out),
            answered,
            "{name}: a FLOW_MOD and a PACKET_OUT per PACKET_IN"
        );
        let mut next = messages.iter().cycle();
        g.bench_function(name, |b| {
            b.iter(|| {
                let t = next.next().unwrap();
                out.clear();
                turn(&p, &mut switches, t, &mut out, now);
                black_box(out.len());
            })
        });
    }
    g.finish();
}

/// How many OpenFlow messages `out` holds (by their headers' lengths).
fn count_messages(out: &[u8]) -> usize {
    let (mut at, mut n) = (0, 0);
    while at + 8 <= out.len() {
        at += usize::from(u16::from_be_bytes([out[at + 2], out[at + 3]]));
        n += 1;
    }
    n
}

criterion_group!(benches, bench);
criterion_main!(benches);
