//! `pharos bench switch` against Open vSwitch in a lab: the control channel (handshake,
//! barrier, echo, flow stats, a refused action, a silent switch) and tests 2-5 of the
//! OFLOPS paper, shortened, on OpenFlow 1.0 and 1.3.
//!
//! Needs root and Open vSwitch (`scripts/install-test-deps`): without them the test fails
//! saying so, unless `PHAROS_SKIP_LAB=1`, when the skip is recorded.

#[path = "common/lab.rs"]
mod harness;

use std::net::{SocketAddr, TcpListener};
use std::thread;
use std::time::{Duration, Instant};

use bench::oflops::channel::{Channel, ChannelConfig, ChannelError, Endpoint, Listener};
use harness::{apps_by_name, enabled, serial, Lab, Of};
use openflow::model::{Action, FlowMod, Match, PortNo};
use openflow::Version;

/// A lab of one switch whose controller is a bench channel (not the harness's Pharos,
/// which stays idle): `pharos lab up --topo TOPO --controller tcp:127.0.0.1:PORT`.
fn lab_with_channel(name: &str, of: Of, topo: &str, extra: &[&str]) -> (Lab, Channel) {
    let lab = Lab::with_apps(name, of, apps_by_name(&[]), false);
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap()).expect("bind");
    let target = format!("tcp:{}", listener.local_addr());
    let mut cfg = ChannelConfig::new(Endpoint::Listen(listener.local_addr()), of.version());
    cfg.connect_timeout = Duration::from_secs(30);
    let accept = thread::spawn(move || listener.accept(&cfg));
    let mut args = vec!["--topo", topo, "--of", of.flag(), "--controller", &target];
    args.extend_from_slice(extra);
    let out = lab.lab("up", &args);
    let ch = accept
        .join()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}\n{out}"));
    (lab, ch)
}

fn channel_basics(name: &str, of: Of) {
    let (mut lab, mut ch) = lab_with_channel(name, of, "single,2", &[]);
    assert_eq!(ch.version(), of.version());
    let names: Vec<&str> = ch.info().ports.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.len() >= 2,
        "the switch should report its ports: {names:?}"
    );
    // Barrier and echo round trips on loopback: well under the timeout.
    let b = ch.barrier().expect("barrier");
    assert!(b.rtt_ns() > 0 && b.rtt_ns() < 1_000_000_000, "{b:?}");
    let e = ch.echo(64).expect("echo");
    assert!(e > 0 && e < 1_000_000_000, "echo {e} ns");
    // 100 exact flows, then full-table stats report them all.
    ch.delete_all_flows().expect("delete");
    let phys = ch.info().physical_ports();
    assert!(phys.len() >= 2, "{:?}", ch.info());
    let out = [Action::output(PortNo::Physical(phys[0]))];
    let fms: Vec<FlowMod> = (0..100u32)
        .map(|i| {
            FlowMod::add(
                Match {
                    eth_type: Some(0x0800),
                    ipv4_dst: Some(openflow::model::Ipv4Prefix::exact(
                        std::net::Ipv4Addr::from(0x0a00_0000 + i),
                    )),
                    ..Match::default()
                },
                &out,
            )
        })
        .collect();
    let sent = ch.send_flow_mods(&fms).expect("flow mods");
    assert_eq!(sent.messages, 100);
    ch.barrier().expect("barrier after the flows");
    let stats = ch.flow_stats().expect("flow stats");
    assert_eq!(stats.flows, 100, "{stats:?}");
    assert!(stats.parts >= 1 && stats.response_ns() > 0, "{stats:?}");
    // A refused action is an error naming the message refused, at the barrier after it:
    // 1.3 a group that does not exist; 1.0 an action type that does not exist (the
    // FLOW_MOD of a SET_VLAN_VID with its type patched: OpenFlow 1.0 has no type 0xee).
    match of.version() {
        Version::V1_3 => {
            let bad = [Action::Group { group_id: 77 }];
            ch.send_flow_mods(&[FlowMod::add(Match::default(), &bad)])
                .expect("send");
        }
        Version::V1_0 => {
            let a = [Action::SetVlanVid { vid: 5 }];
            let mut bytes = Vec::new();
            FlowMod::add(Match::default(), &a)
                .encode(Version::V1_0, 4242, &mut bytes)
                .unwrap();
            bytes[72..74].copy_from_slice(&0x00eeu16.to_be_bytes());
            ch.send_raw(&bytes).expect("send");
        }
    }
    match ch.barrier() {
        Err(ChannelError::Refused { refused, error, .. }) => {
            assert_eq!(refused, "FLOW_MOD", "{error}");
        }
        other => panic!("a flow with a bad action should be refused: {other:?}"),
    }
    // The channel still works after it.
    ch.barrier().expect("barrier after the refusal");
    drop(ch);
    let down = lab.down();
    assert!(down.ok(), "{down}");
}

#[test]
fn channel_against_open_vswitch_1_0() {
    if !enabled("lab_bench_switch::channel_against_open_vswitch_1_0") {
        return;
    }
    let _lock = serial();
    channel_basics("bc0", Of::V10);
}

#[test]
fn channel_against_open_vswitch_1_3() {
    if !enabled("lab_bench_switch::channel_against_open_vswitch_1_3") {
        return;
    }
    let _lock = serial();
    channel_basics("bc3", Of::V13);
}

/// A "switch" that completes the handshake and then never answers a barrier: the
/// channel reports it within its timeout.
#[test]
fn a_switch_that_never_answers_a_barrier_is_reported() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let fake = thread::spawn(move || silent_switch(listener));
    let mut cfg = ChannelConfig::new(Endpoint::Connect(addr), Version::V1_3);
    cfg.timeout = Duration::from_millis(500);
    let started = Instant::now();
    let r = Channel::open(&cfg);
    let took = started.elapsed();
    match r {
        Err(ChannelError::Timeout { what, .. }) => {
            assert!(what.contains("BARRIER"), "{what}")
        }
        Err(e) => panic!("expected a barrier timeout, got {e}"),
        Ok(_) => panic!("expected a barrier timeout, the channel opened"),
    }
    assert!(took < Duration::from_secs(3), "took {took:?}");
    fake.join().unwrap();
}

/// Answers HELLO, FEATURES_REQUEST and PORT_DESC (1.3), ignores everything else, and
/// hangs up after 2 s.
fn silent_switch(listener: TcpListener) {
    use std::io::{Read, Write};
    let (mut s, _) = listener.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let until = Instant::now() + Duration::from_secs(2);
    let mut buf = Vec::new();
    while Instant::now() < until {
        let mut chunk = [0u8; 4096];
        match s.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => continue,
        }
        while buf.len() >= 8 {
            let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
            if buf.len() < len {
                break;
            }
            let frame: Vec<u8> = buf.drain(..len).collect();
            let xid = &frame[4..8];
            let mut reply = |t: u8, body: &[u8]| {
                let mut m = vec![4, t, 0, 0];
                m.extend_from_slice(xid);
                m.extend_from_slice(body);
                let l = (m.len() as u16).to_be_bytes();
                m[2] = l[0];
                m[3] = l[1];
                s.write_all(&m).unwrap();
            };
            match frame[1] {
                0 => reply(0, &[0, 1, 0, 8, 0, 0, 0, 0x10]),
                5 => reply(
                    6,
                    &[
                        0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    ],
                ),
                18 => reply(19, &[0, 13, 0, 0, 0, 0, 0, 0]),
                _ => {}
            }
        }
    }
}
