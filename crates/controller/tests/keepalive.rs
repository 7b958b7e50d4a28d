//! Echo keepalive, dead-peer detection, and what a disconnect does: switch-removed
//! fires and the per-switch state is dropped.

mod harness;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use controller::config::{CoreConfig, KeepaliveConfig};
use emu::{Emu, Spec};
use harness::{eventually, logs, test_config, Recorder, Running, T};
use testkit::emu;

fn fast_keepalive() -> CoreConfig {
    CoreConfig {
        keepalive: KeepaliveConfig {
            interval: Duration::from_millis(100),
            max_unanswered: 3,
        },
        ..test_config()
    }
}

#[test]
fn a_quiet_switch_that_answers_echo_stays_connected() {
    let ctl = Running::start(&fast_keepalive(), Vec::new());
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(0xe1), T).unwrap();
    // Several rounds of keepalive go by with nothing but echo from us.
    let deadline = Instant::now() + T;
    while sw.echo_requests < 8 {
        assert!(
            !matches!(sw.next_until(deadline), emu::Event::Closed),
            "closed; log: {:?}",
            sw.log
        );
        assert!(
            Instant::now() < deadline,
            "only {} echo requests",
            sw.echo_requests
        );
    }
    sw.ping(T).expect("still served");
}

#[test]
fn a_dead_peer_is_detected_and_removed() {
    let (rec, seen) = Recorder::new();
    let ctl = Running::start(&fast_keepalive(), vec![Box::new(rec)]);
    let spec = Spec {
        answer_echo: false,
        ..Spec::v10(0xdead)
    };
    let mut sw = Emu::connect_and_handshake(ctl.addr, spec, T).unwrap();
    let healthy = Emu::connect_and_handshake(ctl.addr, Spec::v13(0xbeef), T).unwrap();
    let bg = healthy.in_background();
    let started = Instant::now();
    sw.wait_closed(T).expect("the silent switch is closed");
    let took = started.elapsed();
    let mut healthy = bg.take();
    assert!(
        sw.echo_requests >= 2,
        "echo requests went out first: {}",
        sw.echo_requests
    );
    // 3 unanswered at 100 ms apart: well under two seconds, even on a loaded machine.
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(eventually(T, || seen.removed_dpids() == vec![0xdead]));
    assert!(eventually(T, || seen.states_dropped.load(Ordering::SeqCst) == 1));
    healthy.ping(T).expect("the other switch is untouched");
    assert!(
        eventually(T, || logs().lines().any(|l| l
            .contains("00:00:00:00:00:00:de:ad")
            && l.contains("dead_peer"))),
        "the close is logged with the dpid"
    );
}

#[test]
fn a_disconnect_fires_switch_removed_and_drops_the_state() {
    let (rec, seen) = Recorder::new();
    let ctl = Running::start(&test_config(), vec![Box::new(rec)]);
    let mut a = Emu::connect_and_handshake(ctl.addr, Spec::v10(0xa), T).unwrap();
    let mut b = Emu::connect_and_handshake(ctl.addr, Spec::v13(0xb), T).unwrap();
    a.ping(T).unwrap();
    b.ping(T).unwrap();
    assert!(eventually(T, || seen.added_dpids().len() == 2));
    assert_eq!(seen.states_dropped.load(Ordering::SeqCst), 0);
    drop(a); // the switch goes away: EOF
    assert!(
        eventually(T, || seen.removed_dpids() == vec![0xa]),
        "removed: {:?}",
        seen.removed_dpids()
    );
    assert!(eventually(T, || seen.states_dropped.load(Ordering::SeqCst) == 1));
    b.ping(T).unwrap();
    // A half-close is a disconnect too.
    b.shutdown_write();
    b.wait_closed(T).unwrap();
    assert!(eventually(T, || seen.states_dropped.load(Ordering::SeqCst) == 2));
    let mut removed = seen.removed_dpids();
    removed.sort();
    assert_eq!(removed, vec![0xa, 0xb]);
}

/// A switch that sends its last message and closes at once: the bytes and the close
/// can reach the worker in one readiness event, and the close must not wait for a
/// keepalive to be noticed (a short read does not mean the socket said all it had).
#[test]
fn a_switch_that_sends_and_closes_at_once_is_removed_at_once() {
    let (app, seen) = Recorder::new();
    // A keepalive far beyond the deadline below, so only the close can remove them.
    let config = CoreConfig {
        keepalive: KeepaliveConfig {
            interval: Duration::from_secs(60),
            max_unanswered: 3,
        },
        ..test_config()
    };
    let ctl = Running::start(&config, vec![Box::new(app)]);
    const N: u64 = 20;
    for dpid in 1..=N {
        let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(dpid), T).unwrap();
        // Everything the controller sent is read, so the close is a FIN (with unread
        // bytes it would be a reset, which the worker sees as an error).
        sw.ping(T).unwrap();
        // A PACKET_IN and the FIN back to back.
        let msg = sw.packet_in(1, &emu::frame(emu::host(1), emu::host(2)), None);
        sw.send(&msg).unwrap();
        drop(sw);
    }
    let start = Instant::now();
    assert!(
        eventually(Duration::from_secs(3), || seen.removed_dpids().len()
            == N as usize),
        "{} of {N} removed after {:?}",
        seen.removed_dpids().len(),
        start.elapsed()
    );
}
