//! The sans-IO test network itself (crates/sim): frames cross cables, the flow table
//! forwards and expires, a table miss reaches the apps, timers and global timers run on
//! the hand-moved clock, messages sent through `Switches` are delivered, PORT_STATUS and
//! disconnections reach the apps, barriers are answered, storms are caught.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use apps::routing::topo;
use apps::{Hub, LearningSwitch};
use controller::app::{App, Builder, Flow, Order};
use controller::switches::Switches;
use openflow::model::{Action, FlowModCommand, PacketOut, PortNo};
use openflow::Version;
use sim::{mac, Net};

const S: Duration = Duration::from_secs(1);

fn mixed(dpid: u64) -> Version {
    if dpid % 2 == 0 {
        Version::V1_0
    } else {
        Version::V1_3
    }
}

#[test]
fn the_learning_switch_floods_then_forwards_by_flows_on_mixed_versions() {
    let (switches, links) = topo::linear(3);
    let mut net = Net::new(vec![Box::new(LearningSwitch::default())]);
    // Real 1.3: a miss drops, so the learning switch's table-miss entry must work.
    net.of13_miss_drops = true;
    for l in &links {
        net.cable(l.src.0, l.src_port, l.dst.0, l.dst_port);
    }
    for d in &switches {
        net.add_switch(d.0, mixed(d.0), 3);
    }
    // No switch was emptied (a restart must not cut traffic); the 1.3 ones got a
    // table-miss entry.
    for sw in net.switches() {
        assert!(sw
            .flow_mods
            .iter()
            .all(|m| m.command != FlowModCommand::Delete));
        let misses = sw.flows.iter().filter(|f| f.priority == 0).count();
        assert_eq!(
            misses,
            usize::from(sw.version == Version::V1_3),
            "{}",
            sw.dpid
        );
    }
    let h1 = net.add_host(mac(1), 1, 3);
    let h2 = net.add_host(mac(2), 3, 3);

    let ip = |n| Ipv4Addr::new(10, 0, 0, n);
    net.send(h1, &sim::arp_request(mac(1), ip(1), ip(2)));
    assert_eq!(net.take_received(h2).len(), 1, "flooded once to h2");
    assert!(net.take_received(h1).is_empty(), "never back to the sender");
    net.send(h2, &sim::eth(mac(2), mac(1), 0x0806, b"reply"));
    assert_eq!(net.take_received(h1).len(), 1);
    // The reply installed h2 → h1 flows on every switch; h1 → h2 installs the rest.
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
        .unwrap();
    assert_eq!(
        (to_h2.matching.in_port, &to_h2.outputs[..]),
        (Some(1), &[2][..])
    );
    assert_eq!(to_h2.packets, 1);

    // Idle for longer than the idle timeout (60 s): the learned flows expire.
    net.advance(61 * S);
    for sw in net.switches() {
        assert!(sw.flows.iter().all(|f| f.priority == 0), "{:?}", sw.flows);
    }
}

#[test]
#[should_panic(expected = "broadcast storm")]
fn a_hub_on_a_ring_is_a_storm() {
    let (switches, links) = topo::ring(3);
    let mut net = Net::topology(vec![Box::new(Hub)], &switches, &links, 3, mixed);
    let h = net.add_host(mac(1), 1, 3);
    net.send(h, &sim::eth(mac(1), sim::BROADCAST, 0x0800, b"loop"));
}

/// What the prober saw.
#[derive(Default)]
struct Seen {
    log: Mutex<Vec<String>>,
}

/// Every second, a PACKET_OUT out of every up port carrying "probe dpid:port"; every
/// 500 ms globally, one out of port 1 of every switch through `Switches`; logs what
/// comes back, port changes, barriers and departures.
struct Prober {
    seen: Arc<Seen>,
}

impl Prober {
    fn log(&self, s: String) {
        self.seen.log.lock().unwrap().push(s);
    }
}

fn probe(dpid: u64, port: u32, what: &str) -> Vec<u8> {
    sim::eth(
        sim::port_mac(dpid, port),
        sim::BROADCAST,
        0x9999,
        format!("{what} {dpid}:{port}").as_bytes(),
    )
}

impl App for Prober {
    type State = u32;

    fn name(&self) -> &'static str {
        "prober"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.every(S, Duration::from_millis(100), |_, ctx, runs| {
            *runs += 1;
            for p in ctx.info().ports.iter().filter(|p| p.is_up()) {
                let out = [Action::output(PortNo::Physical(p.port_no))];
                let data = probe(ctx.dpid().0, p.port_no, "probe");
                ctx.send_packet_out(&PacketOut::unbuffered(&data, PortNo::Controller, &out));
            }
        });
        b.every_global(S / 2, |_, switches: &Switches, _| {
            for d in switches.dpids() {
                let out = [Action::output(PortNo::Physical(1))];
                let data = probe(d.0, 1, "global");
                let po = PacketOut::unbuffered(&data, PortNo::Controller, &out);
                switches.send_packet_out(d, &po).unwrap();
            }
        });
        b.on_packet_in(Order::direct(0), |app, ctx, _, p| {
            let text = String::from_utf8_lossy(&p.data()[14..]);
            let text = text.trim_end_matches('\0');
            app.log(format!("{}:{} got {text}", ctx.dpid().0, p.in_port()));
            Flow::Stop
        });
        b.on_port_status(|app, ctx, _, reason, port| {
            app.log(format!(
                "{} port {} {reason:?} up={}",
                ctx.dpid().0,
                port.port_no,
                port.is_up()
            ));
        });
        b.on_switch_added(|_, ctx, _| {
            ctx.barrier(S, |app: &Prober, ctx, _, reply| {
                app.log(format!("{} barrier {reply:?}", ctx.dpid().0));
            });
        });
        b.on_switch_removed(|app, info, runs| {
            app.log(format!("{} removed after {runs} runs", info.dpid.0));
        });
    }
}

fn prober_net() -> (Net, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Prober {
        seen: Arc::clone(&seen),
    };
    let (switches, links) = topo::linear(2);
    let net = Net::topology(vec![Box::new(app)], &switches, &links, 2, mixed);
    (net, seen)
}

fn take(seen: &Seen) -> Vec<String> {
    let mut v = std::mem::take(&mut *seen.log.lock().unwrap());
    v.sort();
    v
}

#[test]
fn timers_cables_ports_barriers_and_departures() {
    let (mut net, seen) = prober_net();
    assert_eq!(
        take(&seen),
        [
            "1 barrier Messages([V13(BarrierReply)])",
            "2 barrier Messages([V10(BarrierReply)])"
        ]
    );
    // Within the first jitter every switch probed once: across the cable 1:2 — 2:1;
    // ports 1 of s1 and 2 of s2 lead nowhere.
    net.advance(S / 10);
    assert_eq!(take(&seen), ["1:2 got probe 2:1", "2:1 got probe 1:2"]);
    // The global timer (every 500 ms) goes out of port 1 of each: only s2's arrives.
    net.advance(S / 2);
    assert_eq!(take(&seen), ["1:2 got global 2:1"]);
    net.advance(S * 2);
    let got = take(&seen);
    assert_eq!(
        got.iter().filter(|s| s.contains("probe")).count(),
        4,
        "{got:?}"
    );

    // The cable goes down: both ends say so, nothing crosses; up again: it does.
    net.set_cable(1, 2, false);
    assert_eq!(
        take(&seen),
        ["1 port 2 Modify up=false", "2 port 1 Modify up=false"]
    );
    net.advance(S * 3);
    assert_eq!(take(&seen), Vec::<String>::new());
    net.set_cable(2, 1, true);
    net.advance(S + S / 5);
    let got = take(&seen);
    assert!(got.contains(&"1:2 got probe 2:1".to_string()), "{got:?}");

    // A port deleted: the app hears it, the port sends nothing more.
    net.delete_port(2, 1);
    assert_eq!(take(&seen), ["2 port 1 Delete up=true"]);
    let tx = net.switch(2).tx.get(&1).copied();
    net.advance(S * 2);
    assert_eq!(net.switch(2).tx.get(&1).copied(), tx);
    net.add_port(2, 1);
    assert_eq!(take(&seen)[0], "2 port 1 Add up=true");
    net.advance(S * 2);

    // A switch leaves: its state goes to switch-removed; frames into it are dropped.
    net.disconnect(2);
    let got = take(&seen);
    assert!(
        got.iter().any(|s| s.starts_with("2 removed after")),
        "{got:?}"
    );
    net.advance(S * 2);
    assert!(take(&seen).iter().all(|s| !s.starts_with("2:")));
    net.connect(2);
    net.advance(S * 2);
    assert!(take(&seen)
        .iter()
        .any(|s| s.starts_with("2:1 got probe 1:2")));
}

#[test]
fn the_same_story_twice_is_the_same() {
    let run = || {
        let (mut net, seen) = prober_net();
        net.advance(S * 5);
        net.set_port(1, 2, false);
        net.advance(S * 2);
        let log = seen.log.lock().unwrap().clone();
        (log, net.total_frames, net.elapsed())
    };
    assert_eq!(run(), run());
}
