//! Bad input closes only the connection it came on, with a logged reason, while a
//! healthy switch connected at the same time keeps getting its replies.

mod harness;

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use controller::config::{CoreConfig, KeepaliveConfig};
use emu::{host, is_packet_out, output_ports, Emu, Spec, FLOOD};
use harness::{eventually, logs, test_config, Panicker, Recorder, Running, T};
use openflow::{of13, Message};
use testkit::emu;

fn config() -> CoreConfig {
    let mut c = CoreConfig {
        keepalive: KeepaliveConfig {
            interval: Duration::from_millis(150),
            max_unanswered: 3,
        },
        max_message_len: 1024,
        ..test_config()
    };
    c.handshake.timeout = Duration::from_secs(1);
    c
}

fn start(config: &CoreConfig) -> Running {
    let hub = apps::by_name("hub", &toml::Table::new()).unwrap();
    Running::start(config, vec![hub])
}

/// A PACKET_IN answered by the hub's flood, and an echo: the switch is served.
fn assert_served(sw: &mut Emu) {
    sw.send_packet_in(1, &emu::frame(host(1), host(2)), None)
        .unwrap();
    let (_, out) = sw
        .wait_for(T, is_packet_out)
        .expect("PACKET_OUT from the hub");
    assert_eq!(output_ports(&out), vec![FLOOD]);
    sw.ping(T).expect("echo answered");
}

/// The log line that says why `peer`'s connection was closed.
fn close_reason(peer: SocketAddr) -> Option<String> {
    let needle = format!("peer={peer}");
    logs()
        .lines()
        .find(|l| {
            l.contains(&needle) && (l.contains("disconnected") || l.contains("handshake failed"))
        })
        .map(str::to_string)
}

/// Connects a healthy switch and a bad one, lets `misbehave` act once the bad one is
/// set up (`handshake`: after its handshake), and checks that only the bad one is
/// closed, with a logged reason.
fn only_the_bad_one_closes(bad: Spec, handshake: bool, misbehave: impl FnOnce(&mut Emu)) -> String {
    // An address of its own, so that its `peer=` field cannot be another test's.
    let dpid = bad.dpid as u8;
    let bad = bad.from(std::net::IpAddr::from([127, 66, 0, dpid]));
    let ctl = start(&config());
    let mut healthy = Emu::connect_and_handshake(ctl.addr, Spec::v13(0x600d), T).unwrap();
    assert_served(&mut healthy);
    let mut sw = if handshake {
        Emu::connect_and_handshake(ctl.addr, bad, T).unwrap()
    } else {
        Emu::connect_silent(ctl.addr, bad).unwrap()
    };
    let peer = sw.local_addr();
    // The healthy switch answers keepalive on its own meanwhile.
    let bg = healthy.in_background();
    misbehave(&mut sw);
    sw.wait_closed(T).expect("the bad connection is closed");
    let mut healthy = bg.take();
    assert!(
        !healthy.is_closed(),
        "the healthy switch was closed; log: {:?}",
        healthy.log
    );
    assert_served(&mut healthy);
    assert!(
        eventually(T, || close_reason(peer).is_some()),
        "no close logged for {peer}"
    );
    let line = close_reason(peer).unwrap();
    assert!(line.contains("reason="), "{line}");
    assert_served(&mut healthy);
    line
}

#[test]
fn garbage_bytes_after_the_handshake() {
    let line = only_the_bad_one_closes(Spec::v10(0xb1), true, |sw| {
        sw.send_raw(&[0xde, 0xad, 0xbe, 0xef, 0x13, 0x37, 0x00, 0x42, 0xff, 0xff])
            .unwrap()
    });
    assert!(line.contains("wrong_version"), "{line}");
}

#[test]
fn garbage_bytes_instead_of_hello() {
    only_the_bad_one_closes(Spec::v13(0xb2), false, |sw| {
        sw.send_raw(b"GET / HTTP/1.1\r\nHost: pharos\r\n\r\n")
            .unwrap()
    });
}

#[test]
fn a_wrong_version_after_the_handshake() {
    // A 1.0 switch sends a 1.3 ECHO_REQUEST.
    let line = only_the_bad_one_closes(Spec::v10(0xb3), true, |sw| {
        let echo = Message::V13(of13::Message::EchoRequest { data: vec![1] });
        sw.send(&echo).unwrap();
    });
    assert!(line.contains("wrong_version"), "{line}");
}

#[test]
fn a_header_length_under_8() {
    let line = only_the_bad_one_closes(Spec::v13(0xb4), true, |sw| {
        sw.send_header(0x04, 2, 4).unwrap()
    });
    assert!(line.contains("bad_length"), "{line}");
}

#[test]
fn a_header_length_under_8_in_the_hello() {
    let line = only_the_bad_one_closes(Spec::v13(0xb5), false, |sw| {
        sw.send_header(0x04, 0, 7).unwrap()
    });
    assert!(line.contains("bad_length"), "{line}");
}

#[test]
fn a_header_length_over_the_limit() {
    // max_message_len is 1024 here: a header announcing 2048 is refused as it arrives.
    let line = only_the_bad_one_closes(Spec::v10(0xb6), true, |sw| {
        sw.send_header(0x01, 10, 2048).unwrap()
    });
    assert!(line.contains("message_too_long"), "{line}");
}

#[test]
fn a_message_cut_off_then_silence() {
    // Announces 100 bytes, sends 20, then nothing (echo unanswered too): keepalive
    // gives up on it.
    let spec = Spec {
        answer_echo: false,
        ..Spec::v13(0xb7)
    };
    let line = only_the_bad_one_closes(spec, true, |sw| sw.send_cut(100, 20).unwrap());
    assert!(line.contains("dead_peer"), "{line}");
}

#[test]
fn a_peer_that_never_sends_features_reply() {
    let spec = Spec {
        answer_features: false,
        ..Spec::v13(0xb8)
    };
    let line = only_the_bad_one_closes(spec, false, |sw| {
        let hello = sw.hello_bytes();
        sw.send_raw(&hello).unwrap();
    });
    assert!(line.contains("handshake failed"), "{line}");
    assert!(line.contains("timeout"), "{line}");
}

#[test]
fn five_hundred_connections_that_never_handshake() {
    emu::raise_fd_limit(8192);
    let mut config = config();
    config.handshake.max_pending = 100;
    config.handshake.max_pending_per_ip = 100;
    // 100 more wait for a slot; the other 300 are refused at accept.
    config.handshake.max_waiting = 100;
    config.handshake.timeout = Duration::from_secs(2);
    let ctl = start(&config);
    let mut healthy = Emu::connect_and_handshake(ctl.addr, Spec::v10(0x600d), T).unwrap();
    assert_served(&mut healthy);

    let bg = healthy.in_background();
    // A connection refused at accept is reset at once; on loopback the reset can beat
    // connect(2)'s return, which then fails with it: counted by the controller as
    // refused all the same, so it is one of the 500 below.
    let mut idle: Vec<Emu> = (0..500)
        .filter_map(
            |i| match Emu::connect_silent(ctl.addr, Spec::v10(0x1000 + i)) {
                Ok(e) => Some(e),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
                Err(e) => panic!("connection {i} of 500 not made: {e} ({e:?})"),
            },
        )
        .collect();
    // Every one is refused at accept (over the caps), waiting, pending, or failed by
    // the deadline (which frees room for more); no more than the caps are ever pending
    // or waiting.
    let mut most_pending = 0;
    let mut most_waiting = 0;
    let settled = eventually(T, || {
        let t = ctl.handle().counters().total;
        most_pending = most_pending.max(t.pending_handshakes);
        most_waiting = most_waiting.max(t.waiting_handshakes);
        let refused = t.refused.values().sum::<u64>();
        let failed = t.handshake_failures.values().sum::<u64>();
        (t.pending_handshakes + t.waiting_handshakes) as u64 + refused + failed == 500
    });
    let t = ctl.handle().counters().total;
    assert!(settled, "counters: {t:?}");
    assert!(most_pending <= 100, "pending cap: {most_pending}");
    assert!(most_waiting <= 100, "waiting cap: {most_waiting}");
    assert!(
        t.refused.get("max_waiting").is_some_and(|&n| n > 0),
        "the waiting cap refused some: {:?}",
        t.refused
    );
    let mut healthy = bg.take();
    assert_served(&mut healthy);

    // Past the deadline every one of them is closed, and the healthy switch is fine.
    let bg = healthy.in_background();
    for sw in &mut idle {
        sw.wait_closed(T).expect("an idle connection is closed");
    }
    let mut healthy = bg.take();
    assert_served(&mut healthy);
    let t = ctl.handle().counters().total;
    assert_eq!(t.pending_handshakes, 0);
    assert_eq!(t.waiting_handshakes, 0);
    // The first 100 had their handshake and its deadline. By the time the waiting ones'
    // turn came, those 100 failures had made their address a failing one (64 are
    // enough), so each, having said nothing, was refused at its turn rather than given a
    // handshake of its own to time out.
    let failing = t.refused.get("failing_address").copied().unwrap_or(0);
    assert!(t.handshake_failures["timeout"] >= 100, "{t:?}");
    assert!(t.handshake_failures["timeout"] + failing >= 200, "{t:?}");
    let refused = t.refused.values().sum::<u64>();
    assert_eq!(
        refused + t.handshake_failures.get("timeout").copied().unwrap_or(0),
        500,
        "{t:?}"
    );
    // The cap is free again: a new switch gets in.
    let mut late = Emu::connect_and_handshake(ctl.addr, Spec::v13(0x1a7e), T).unwrap();
    assert_served(&mut late);
}

#[test]
fn a_panicking_app_is_quarantined_and_the_rest_keep_working() {
    let (rec, seen) = Recorder::new();
    let hub = apps::by_name("hub", &toml::Table::new()).unwrap();
    let ctl = Running::start(&config(), vec![Box::new(Panicker), Box::new(rec), hub]);
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(0xc0de), T).unwrap();
    let other = Emu::connect_and_handshake(ctl.addr, Spec::v10(0xc0df), T).unwrap();
    // The other switch answers the controller's echoes meanwhile (every 150 ms here): a
    // panic logged with its backtrace can take longer than three of them on a busy
    // machine, and the test is not about keepalive.
    let bg = other.in_background();
    // The panicker runs first on this PACKET_IN and panics; the hub still floods it.
    assert_served(&mut sw);
    assert_eq!(ctl.pipeline.apps.is_quarantined("panicker"), Some(true));
    assert_eq!(ctl.pipeline.apps.is_quarantined("hub"), Some(false));
    assert!(ctl.pipeline.apps.panics("panicker").unwrap() >= 1);
    // Quarantined everywhere: later PACKET_INs, on this switch and another, are served.
    assert_served(&mut sw);
    let mut other = bg.take();
    assert_served(&mut other);
    assert_eq!(
        ctl.pipeline.apps.panics("panicker"),
        Some(1),
        "skipped once quarantined"
    );
    assert!(eventually(T, || seen
        .packet_ins
        .load(std::sync::atomic::Ordering::SeqCst)
        == 3));
    assert!(seen.removed_dpids().is_empty(), "no switch was dropped");
    let log = logs();
    assert!(
        log.lines()
            .any(|l| l.contains("panicker") && l.contains("00:00:00:00:00:00:c0:de")),
        "the panic is logged with the app and the dpid"
    );
}

#[test]
fn a_switch_that_stops_reading_is_paused_then_dropped_as_stalled() {
    // Small limits, so that the kernel's buffers fill soon: every PACKET_IN of 1000
    // bytes comes back flooded by the hub, and this switch never reads. It is paused
    // at the high-water mark, and closed once it has taken nothing for stall_timeout.
    let mut config = config();
    config.backpressure.high_water = 4096;
    config.backpressure.low_water = 1024;
    config.backpressure.stall_timeout = Duration::from_millis(500);
    config.keepalive.interval = Duration::from_secs(5);
    let ctl = start(&config);
    let healthy = Emu::connect_and_handshake(ctl.addr, Spec::v10(0x600d), T).unwrap();
    let bg = healthy.in_background();
    let sw = Emu::connect_and_handshake(
        ctl.addr,
        Spec::v10(0x510).from([127, 66, 0, 0x10].into()),
        T,
    )
    .unwrap();
    sw.shrink_receive_buffer();
    let peer = sw.local_addr();
    // A writer thread sends PACKET_INs until the controller closes the connection (the
    // write fails) or the deadline; nothing ever reads the floods coming back.
    let bytes = sw
        .packet_in(1, &emu::long_frame(host(1), host(2), 1000), None)
        .to_bytes(7)
        .unwrap();
    let mut w = sw.writer();
    let writer = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + T;
        while std::time::Instant::now() < deadline && w.write_all(&bytes).is_ok() {}
    });
    assert!(
        eventually(T, || close_reason(peer)
            .is_some_and(|l| l.contains("stalled"))),
        "no stalled close logged for {peer}"
    );
    writer.join().unwrap();
    drop(sw);
    let mut healthy = bg.take();
    assert!(!healthy.is_closed());
    assert_served(&mut healthy);
}
