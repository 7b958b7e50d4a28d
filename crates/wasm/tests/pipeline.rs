//! WASM apps in a real pipeline, on the sans-IO emulated network of the apps' tests
//! (crates/sim): the learning switch and the firewall at work on OpenFlow
//! 1.0 and 1.3 switches, and the sandbox quarantining bad guests while a native app
//! on the same switch keeps answering.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use apps::routing::topo;
use apps::LearningSwitch;
use controller::app::{AnyApp, Order};
use openflow::model::FlowModCommand;
use openflow::Version;
use sim::{mac, Net};
use wasm::sandbox::thread_cpu_time;
use wasm::{LoadSpec, WasmApp, WasmLoader};

const S: Duration = Duration::from_secs(1);

/// A module of wasm/prebuilt/ (scripts/build-wasm-apps builds them).
fn module(name: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../../wasm/prebuilt", name]
        .iter()
        .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load(loader: &WasmLoader, file: &str, name: &str, order: Order, params: &str) -> WasmApp {
    let spec = LoadSpec {
        name: name.into(),
        order,
        params_json: params.into(),
    };
    loader
        .load_wasm(&spec, &module(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn mixed(dpid: u64) -> Version {
    if dpid.is_multiple_of(2) {
        Version::V1_0
    } else {
        Version::V1_3
    }
}

fn ip(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, n)
}

#[test]
fn the_wasm_learning_switch_floods_then_forwards_by_flows_on_1_0_and_1_3() {
    let loader = WasmLoader::default();
    let ls = load(
        &loader,
        "pharos_wasm_learning_switch.wasm",
        "wasm_ls",
        Order::direct(0),
        r#"{"idle_timeout": 30}"#,
    );
    let (switches, links) = topo::linear(3);
    let mut net = Net::new(vec![Box::new(ls)]);
    // Real 1.3: a miss drops, so the app's table-miss entry must work.
    net.of13_miss_drops = true;
    for l in &links {
        net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
    }
    for d in &switches {
        net.add_switch(d.0, mixed(d.0), 3);
    }
    for sw in net.switches() {
        let misses = sw.flows.iter().filter(|f| f.priority == 0).count();
        let want = usize::from(sw.version == Version::V1_3);
        assert_eq!(misses, want, "table-miss entries on {}", sw.dpid);
    }
    let h1 = net.add_host(mac(1), 1, 3);
    let h2 = net.add_host(mac(2), 3, 3);

    net.send(h1, &sim::arp_request(mac(1), ip(1), ip(2)));
    assert_eq!(net.take_received(h2).len(), 1, "flooded once to h2");
    assert!(net.take_received(h1).is_empty(), "never back to the sender");
    net.send(h2, &sim::eth(mac(2), mac(1), 0x0806, b"reply"));
    assert_eq!(net.take_received(h1).len(), 1);
    net.send(h1, &sim::eth(mac(1), mac(2), 0x0800, b"one"));
    assert_eq!(net.take_received(h2).len(), 1);
    let ins: Vec<u64> = net.switches().map(|s| s.packet_ins).collect();
    net.send(h1, &sim::eth(mac(1), mac(2), 0x0800, b"two"));
    assert_eq!(
        net.take_received(h2),
        [sim::eth(mac(1), mac(2), 0x0800, b"two")]
    );
    let after: Vec<u64> = net.switches().map(|s| s.packet_ins).collect();
    assert_eq!(ins, after, "forwarded by the flow tables alone");
    let s2 = net.switch(2);
    let to_h2 = s2
        .flows
        .iter()
        .find(|f| f.matching.eth_dst == Some(mac(2)))
        .expect("a learned flow towards h2 on switch 2");
    assert_eq!(
        (to_h2.matching.in_port, &to_h2.outputs[..], to_h2.priority),
        (Some(1), &[2][..], 0x8000)
    );
    let fm = s2
        .flow_mods
        .iter()
        .find(|f| f.command == FlowModCommand::Add && f.priority == 0x8000)
        .unwrap();
    assert_eq!(fm.idle_timeout, 30, "the app's parameter reached its flows");

    // The idle timeout (30 s, from the parameters) expires the learned flows.
    net.advance(31 * S);
    for sw in net.switches() {
        assert!(sw.flows.iter().all(|f| f.priority == 0), "{:?}", sw.flows);
    }
    assert_eq!(net.pipeline.apps.is_quarantined("wasm_ls"), Some(false));
}

#[test]
fn the_wasm_learning_switchs_table_is_bounded_per_switch() {
    let loader = WasmLoader::default();
    let ls = load(
        &loader,
        "pharos_wasm_learning_switch.wasm",
        "wasm_ls",
        Order::direct(0),
        r#"{"max_addresses": 2}"#,
    );
    let mut net = Net::new(vec![Box::new(ls)]);
    net.add_switch(1, Version::V1_3, 3);
    let h1 = net.add_host(mac(1), 1, 1);
    let h2 = net.add_host(mac(2), 1, 2);
    let h3 = net.add_host(mac(3), 1, 3);
    net.send(h1, &sim::arp_request(mac(1), ip(1), ip(2)));
    net.send(h2, &sim::eth(mac(2), mac(1), 0x0806, b"reply"));
    assert_eq!(
        net.take_received(h1).len(),
        1,
        "h1 was learned: sent to it alone"
    );
    net.take_received(h2);
    net.take_received(h3);
    // A third address fills the table past its bound: it is emptied, so h1 is unknown
    // again and h3's packet to it is flooded (h2 gets it too).
    net.send(h3, &sim::eth(mac(3), mac(1), 0x0800, b"three"));
    assert_eq!(net.take_received(h1).len(), 1);
    assert_eq!(
        net.take_received(h2).len(),
        1,
        "flooded: the full table was emptied"
    );
    assert_eq!(net.pipeline.apps.is_quarantined("wasm_ls"), Some(false));
}

#[test]
fn the_wasm_firewall_drops_denied_ports_and_leaves_the_rest_to_the_native_learning_switch() {
    let loader = WasmLoader::default();
    let fw = load(
        &loader,
        "pharos_wasm_firewall.wasm",
        "wasm_fw",
        Order::advise(0),
        r#"{"deny_tcp": [22], "deny_udp": [53]}"#,
    );
    for version in [Version::V1_0, Version::V1_3] {
        let apps: Vec<Box<dyn AnyApp>> = vec![
            Box::new(load(
                &loader,
                "pharos_wasm_firewall.wasm",
                "wasm_fw",
                Order::advise(0),
                r#"{"deny_tcp": [22], "deny_udp": [53]}"#,
            )),
            Box::new(LearningSwitch::default()),
        ];
        let mut net = Net::new(apps);
        net.add_switch(1, version, 3);
        let h1 = net.add_host(mac(1), 1, 1);
        let h2 = net.add_host(mac(2), 1, 2);
        // Both hosts known to the learning switch.
        net.send(h1, &sim::eth(mac(1), sim::BROADCAST, 0x0806, b"hello"));
        net.send(h2, &sim::eth(mac(2), sim::BROADCAST, 0x0806, b"hello"));
        net.take_received(h1);
        net.take_received(h2);

        let ssh = tcp(mac(1), mac(2), ip(1), ip(2), 22);
        net.send(h1, &ssh);
        assert!(
            net.take_received(h2).is_empty(),
            "{version}: port 22 dropped"
        );
        let sw = net.switch(1);
        let drop = sw
            .flows
            .iter()
            .find(|f| f.priority == 0x9000)
            .expect("a drop flow");
        assert!(drop.outputs.is_empty(), "{version}: {drop:?}");
        assert_eq!(drop.matching.tp_dst, Some(22));
        assert_eq!(drop.matching.ip_proto, Some(6));

        let web = tcp(mac(1), mac(2), ip(1), ip(2), 80);
        net.send(h1, &web);
        assert_eq!(net.take_received(h2), [web], "{version}: port 80 forwarded");
        // The drop flow now drops on the switch: no PACKET_IN for the next try.
        let ins = net.switch(1).packet_ins;
        net.send(h1, &ssh);
        assert!(net.take_received(h2).is_empty());
        assert_eq!(
            net.switch(1).packet_ins,
            ins,
            "{version}: dropped by the switch"
        );
    }
    drop(fw);
}

/// A TCP SYN to `port`, IPv4, no options.
fn tcp(
    src: openflow::MacAddr,
    dst: openflow::MacAddr,
    sip: Ipv4Addr,
    dip: Ipv4Addr,
    port: u16,
) -> Vec<u8> {
    let mut ip = vec![0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0];
    ip.extend_from_slice(&sip.octets());
    ip.extend_from_slice(&dip.octets());
    ip.extend_from_slice(&40000u16.to_be_bytes());
    ip.extend_from_slice(&port.to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    sim::eth(src, dst, 0x0800, &ip)
}

/// A bad guest in the advise phase before the native learning switch, on one switch
/// of each version: the first PACKET_IN quarantines the guest (within `within`, with
/// a reason containing `cause`), and the learning switch answers that packet and the
/// next ones.
fn quarantined_while_the_native_app_answers(
    loader: &WasmLoader,
    file: &str,
    params: &str,
    cause: &str,
    within: Duration,
) {
    quiet_guest_panics();
    for version in [Version::V1_0, Version::V1_3] {
        let bad = load(loader, file, "bad", Order::advise(0), params);
        let mut net = Net::new(vec![Box::new(bad), Box::new(LearningSwitch::default())]);
        net.add_switch(1, version, 3);
        let h1 = net.add_host(mac(1), 1, 1);
        let h2 = net.add_host(mac(2), 1, 2);
        let frame = sim::eth(mac(1), mac(2), 0x0800, b"first");
        let (started, cpu) = (Instant::now(), thread_cpu_time());
        net.send(h1, &frame);
        let (took, cpu) = (started.elapsed(), thread_cpu_time() - cpu);
        let quarantined = net.pipeline.apps.is_quarantined("bad");
        assert_eq!(quarantined, Some(true), "{file} {version}");
        // The whole message: the guest's call, its interruption, the quarantine. In CPU
        // time, which is what the sandbox bounds (this thread may be preempted on a busy
        // machine: the wall time is only checked for a hang).
        assert!(
            cpu < within,
            "{file} {version}: stopped after {cpu:?} of CPU"
        );
        assert!(took < Duration::from_secs(1), "{file} {version}: {took:?}");
        let q = net
            .pipeline
            .apps
            .quarantine_reason("bad")
            .expect("a reason");
        assert!(
            q.panic.contains("wasm app bad (packet-in)") && q.panic.contains(cause),
            "{file} {version}: {}",
            q.panic
        );
        assert_eq!(
            net.pipeline.apps.is_quarantined("learning_switch"),
            Some(false)
        );
        // The native app answered the packet the guest failed on (flooded: h2 unknown).
        assert_eq!(net.take_received(h2), [frame], "{file} {version}");
        // And keeps answering: h2 → h1 is learned and forwarded by a flow.
        let back = sim::eth(mac(2), mac(1), 0x0800, b"back");
        net.send(h2, &back);
        assert_eq!(net.take_received(h1), [back], "{file} {version}");
        assert!(net
            .switch(1)
            .flows
            .iter()
            .any(|f| f.matching.eth_dst == Some(mac(1))));
    }
}

/// The bad guests' panics (which quarantine them) are expected: not printed, so that
/// a backtrace (RUST_BACKTRACE) is not counted in the time a message takes. Every
/// other panic is reported as usual.
fn quiet_guest_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info.payload().downcast_ref::<String>();
            if !message.is_some_and(|m| m.starts_with("wasm app bad ")) {
                report(info)
            }
        }));
    });
}

#[test]
fn a_guest_in_an_endless_loop_is_interrupted_within_10_ms_of_cpu_and_quarantined() {
    let loader = WasmLoader::default();
    quarantined_while_the_native_app_answers(
        &loader,
        "pharos_test_endless_loop.wasm",
        "{}",
        "more than its 5 ms (endless loop?)",
        Duration::from_millis(10),
    );
}

#[test]
fn a_guest_allocating_without_bound_hits_the_memory_cap_and_is_quarantined() {
    let loader = WasmLoader::default();
    quarantined_while_the_native_app_answers(
        &loader,
        "pharos_test_unbounded_alloc.wasm",
        "{}",
        "memory cap reached",
        Duration::from_millis(10),
    );
}

#[test]
fn a_trapping_guest_is_quarantined() {
    let loader = WasmLoader::default();
    quarantined_while_the_native_app_answers(
        &loader,
        "pharos_test_trap.wasm",
        r#"{"how": "unreachable"}"#,
        "wasm trap: wasm `unreachable` instruction executed",
        Duration::from_secs(1),
    );
}

#[test]
fn a_panicking_guest_is_quarantined_with_its_panic_message() {
    let loader = WasmLoader::default();
    quarantined_while_the_native_app_answers(
        &loader,
        "pharos_test_trap.wasm",
        r#"{"how": "panic"}"#,
        "it logged before: panicked at test-guests/trap/src/lib.rs",
        Duration::from_secs(1),
    );
    let q = {
        let bad = load(
            &loader,
            "pharos_test_trap.wasm",
            "bad",
            Order::advise(0),
            r#"{"how": "panic"}"#,
        );
        let mut net = Net::new(vec![Box::new(bad)]);
        net.add_switch(1, Version::V1_3, 2);
        let h = net.add_host(mac(1), 1, 1);
        net.send(h, &sim::eth(mac(1), mac(2), 0x0800, b"x"));
        net.pipeline
            .apps
            .quarantine_reason("bad")
            .expect("quarantined")
            .panic
    };
    assert!(q.contains("the guest's own words"), "{q}");
}

#[test]
fn a_guest_reading_a_file_or_the_environment_traps_and_is_quarantined() {
    let loader = WasmLoader::default();
    for how in ["read-file", "env"] {
        quarantined_while_the_native_app_answers(
            &loader,
            "pharos_test_trap.wasm",
            &format!(r#"{{"how": "{how}"}}"#),
            "trapped: unknown import: `wasi:",
            Duration::from_secs(1),
        );
    }
}

#[test]
fn loads_are_refused_with_the_reason() {
    let loader = WasmLoader::default();
    let spec = |name: &str, params: &str| LoadSpec {
        name: name.into(),
        order: Order::direct(0),
        params_json: params.into(),
    };
    let err = |r: Result<WasmApp, String>| r.err().expect("refused");
    let e = err(loader.load_wasm(&spec("x", "{}"), b"\0asm not really"));
    assert!(e.contains("wasm app x: not a valid component"), "{e}");
    let fw = module("pharos_wasm_firewall.wasm");
    let e = err(loader.load_wasm(&spec("fw", r#"{"deny_tcp": [ssh]}"#), &fw));
    assert!(
        e.contains("wasm app fw: init refused: deny_tcp: ssh"),
        "{e}"
    );
    let e = err(loader.load_wasm(&spec("no name!", "{}"), &fw));
    assert!(e.contains("letters, digits"), "{e}");
}

#[test]
fn a_wasm_app_is_added_replaced_and_removed_while_switches_are_connected() {
    let loader = WasmLoader::default();
    let ls = || {
        Box::new(load(
            &loader,
            "pharos_wasm_learning_switch.wasm",
            "wasm_ls",
            Order::direct(0),
            "{}",
        ))
    };
    let mut net = Net::new(Vec::new());
    // Removing a stopped app's flows waits for the switches' answers, which this
    // single-threaded network gives only between steps: do not wait for them here
    // (the flows themselves are not what this test is about).
    net.pipeline
        .apps
        .set_flow_removal_timeout(Duration::from_millis(10));
    net.add_switch(1, Version::V1_3, 3);
    net.add_switch(2, Version::V1_0, 3);
    net.cable(1, 3, 2, 3);
    let h1 = net.add_host(mac(1), 1, 1);
    let h2 = net.add_host(mac(2), 2, 1);
    let hello = sim::eth(mac(1), mac(2), 0x0800, b"hello");
    net.send(h1, &hello);
    assert!(net.take_received(h2).is_empty(), "no app: nothing forwards");

    // Loaded: its initializer runs on the connected 1.3 switch (table-miss entry).
    net.pipeline.apps.add_app(ls(), None).expect("added");
    net.send(h1, &hello);
    assert_eq!(
        net.take_received(h2),
        std::slice::from_ref(&hello),
        "flooded by the new app"
    );
    let misses = |net: &Net| {
        net.switch(1)
            .flows
            .iter()
            .filter(|f| f.priority == 0)
            .count()
    };
    assert_eq!(misses(&net), 1);
    let back = sim::eth(mac(2), mac(1), 0x0800, b"back");
    net.send(h2, &back);
    assert_eq!(net.take_received(h1), std::slice::from_ref(&back));

    // Reloaded in place: a fresh instance. The old one knew h2 behind port 3 of
    // switch 1 and would have installed a flow for this packet; the new one learned
    // nothing yet and floods it.
    net.pipeline
        .apps
        .replace_app("wasm_ls", ls())
        .expect("replaced");
    net.send(h1, &hello);
    assert_eq!(net.take_received(h2), std::slice::from_ref(&hello));
    let to_h2 = |net: &Net| {
        let s1 = net.switch(1);
        s1.flows.iter().any(|f| f.matching.eth_dst == Some(mac(2)))
    };
    assert!(!to_h2(&net), "flooded by a fresh instance");
    // Which learns as the first did (a broadcast: the old flows do not cover it).
    net.send(h2, &sim::eth(mac(2), sim::BROADCAST, 0x0806, b"who"));
    net.send(h1, &hello);
    assert!(to_h2(&net), "learned again");
    assert_eq!(net.pipeline.apps.is_quarantined("wasm_ls"), Some(false));

    // Unloaded: the packets reach no app again.
    net.pipeline.apps.remove_app("wasm_ls").expect("removed");
    net.take_received(h1);
    net.take_received(h2);
    let unknown = sim::eth(mac(1), mac(7), 0x0800, b"after");
    net.send(h1, &unknown);
    assert!(net.take_received(h2).is_empty(), "removed: nothing floods");
    assert_eq!(
        net.pipeline.apps.is_quarantined("wasm_ls"),
        None,
        "forgotten"
    );
}

#[test]
fn the_imports_work_and_the_per_switch_store_is_per_switch_and_dropped_with_it() {
    let loader = WasmLoader::default();
    let probe = load(
        &loader,
        "pharos_test_host_probe.wasm",
        "probe",
        Order::direct(0),
        "{}",
    );
    let mut net = Net::new(vec![Box::new(probe)]);
    for (dpid, version) in [(1, Version::V1_3), (2, Version::V1_0)] {
        net.add_switch(dpid, version, 3);
    }
    let port1 = net.add_host(mac(11), 1, 1);
    let port2 = net.add_host(mac(12), 1, 2);
    let other1 = net.add_host(mac(21), 2, 1);
    let src = net.add_host(mac(1), 1, 3);
    let src_on_2 = net.add_host(mac(1), 2, 3);
    let frame = sim::eth(mac(1), sim::BROADCAST, 0x0800, b"count me");
    // The n-th packet from mac(1) on switch 1 leaves by port n, bytes intact.
    net.send(src, &frame);
    assert_eq!(net.take_received(port1), std::slice::from_ref(&frame));
    net.send(src, &frame);
    assert_eq!(net.take_received(port2), std::slice::from_ref(&frame));
    assert!(net.take_received(port1).is_empty());
    // Switch 2 counts apart: its first packet from the same address leaves by port 1.
    net.send(src_on_2, &frame);
    assert_eq!(net.take_received(other1), std::slice::from_ref(&frame));
    // Each PACKET_OUT was followed by a barrier.
    let barriers = |net: &Net, dpid| {
        let sw = net.switch(dpid);
        let is_barrier = |m: &&openflow::Message| {
            matches!(
                m,
                openflow::Message::V10(openflow::of10::Message::BarrierRequest)
                    | openflow::Message::V13(openflow::of13::Message::BarrierRequest)
            )
        };
        sw.received.iter().filter(is_barrier).count()
    };
    assert_eq!((barriers(&net, 1), barriers(&net, 2)), (2, 1));
    // The switch leaves and comes back: its store was dropped, counting starts over.
    net.reconnect(1);
    net.send(src, &frame);
    assert_eq!(net.take_received(port1), std::slice::from_ref(&frame));
    assert_eq!(net.pipeline.apps.is_quarantined("probe"), Some(false));
}

#[test]
fn an_apps_memory_is_counted_against_its_cap_and_released_with_its_instances() {
    let loader = WasmLoader::default();
    let ls = load(
        &loader,
        "pharos_wasm_learning_switch.wasm",
        "mem",
        Order::direct(0),
        "{}",
    );
    // The instance `init` ran in: its linear memory (64 KiB stack, data, heap).
    let used = ls.memory_used();
    assert!((64 << 10..4 << 20).contains(&used), "{used} bytes");
    controller::app::App::stop(&ls);
    assert_eq!(
        ls.memory_used(),
        0,
        "the instances dropped, their memory with them"
    );
}

/// An OpenFlow 1.0 PACKET_IN (unbuffered) of a frame from `src` to `dst`, in on `port`.
fn packet_in_10(src: u16, dst: u16, port: u16) -> Vec<u8> {
    let mut frame = sim::eth(mac(src), mac(dst), 0x0800, b"batched");
    frame.resize(60, 0);
    testkit::frames::packet_in_message(
        Version::V1_0,
        u32::from(port),
        &frame,
        openflow::view::NO_BUFFER,
    )
    .to_bytes(0)
    .unwrap()
}

#[test]
fn a_batching_guest_answers_a_turns_packet_ins_at_its_end_in_one_call_in_order() {
    let loader = WasmLoader::default();
    let ls = load(
        &loader,
        "pharos_wasm_learning_switch.wasm",
        "wasm_ls",
        Order::direct(0),
        "{}",
    );
    let p =
        controller::host::AppHost::build(vec![Box::new(ls)], controller::services::Services::new())
            .unwrap();
    let info = controller::info::SwitchInfo::new(openflow::Dpid(1), Version::V1_0);
    let mut sw = p.dispatcher.new_switch(info);
    let now = Instant::now();
    p.dispatcher.switch_added(&mut sw, &mut Vec::new(), now);
    // Hosts 1..=8 behind port 1, 11..=18 behind port 2: a first turn teaches them all.
    let mut out = Vec::new();
    for h in 1..=8 {
        p.dispatcher
            .handle(&mut sw, &packet_in_10(h, 100, 1), &mut out, now);
        p.dispatcher
            .handle(&mut sw, &packet_in_10(h + 10, 100, 2), &mut out, now);
    }
    p.dispatcher.turn_end(&mut sw, &mut out, now);
    // A turn of 8 PACKET_INs, each to a known host.
    out.clear();
    for h in 1..=8 {
        p.dispatcher
            .handle(&mut sw, &packet_in_10(h, h + 10, 1), &mut out, now);
        assert!(out.is_empty(), "nothing is answered before the turn ends");
    }
    p.dispatcher.turn_end(&mut sw, &mut out, now);
    let mut answers = Vec::new();
    let mut rest = &out[..];
    while !rest.is_empty() {
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        let (_, m) = openflow::Message::decode(&rest[..len]).unwrap();
        rest = &rest[len..];
        answers.push(m);
    }
    assert_eq!(
        answers.len(),
        16,
        "a FLOW_MOD and a PACKET_OUT per PACKET_IN"
    );
    for (i, pair) in answers.chunks(2).enumerate() {
        let h = i as u16 + 1;
        let (fm, po) = match pair {
            [openflow::Message::V10(openflow::of10::Message::FlowMod(fm)), openflow::Message::V10(openflow::of10::Message::PacketOut(po))] => {
                (fm, po)
            }
            other => panic!("answer {i}: {other:?}"),
        };
        assert_eq!(fm.match_.dl_dst.0, mac(h + 10).0, "answer {i} in order");
        assert_eq!(po.data[..6], mac(h + 10).0, "the packet of PACKET_IN {i}");
    }
    // The guest was called once for the turn (and once for the first), not per packet.
    p.dispatcher.publish_timings(&mut sw);
    let calls = |handler: &str| {
        p.apps
            .handler_timings()
            .into_iter()
            .find(|t| t.app == "wasm_ls" && t.handler == handler)
            .map(|t| t.calls)
    };
    assert_eq!(calls("turn_end"), Some(2));
    assert_eq!(calls("PACKET_IN"), Some(24));
}
