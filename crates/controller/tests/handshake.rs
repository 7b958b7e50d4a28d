//! The handshake over real loopback TCP: 1.0, 1.3, mixed offers, an incompatible peer,
//! and what the apps are told about the switch.

use testkit::emu;
mod harness;

use emu::{Emu, Event, Spec};
use harness::{eventually, test_config, Recorder, Running, T};
use openflow::{of10, of13, Message, Version};

/// Connects `spec`, completes the handshake, and checks the version and what the apps
/// were told.
fn handshake_gives(spec: Spec, want: Version) {
    let (rec, seen) = Recorder::new();
    let ctl = Running::start(&test_config(), vec![Box::new(rec)]);
    let dpid = spec.dpid;
    let ports = spec.ports.clone();
    let mut sw = Emu::connect_and_handshake(ctl.addr, spec, T).expect("handshake");
    assert_eq!(sw.version, Some(want));
    sw.ping(T).expect("served after the handshake");
    assert!(
        eventually(T, || seen.info(dpid).is_some()),
        "switch-added fired"
    );
    let info = seen.info(dpid).unwrap();
    assert_eq!(info.version, want);
    assert_eq!(info.dpid, openflow::Dpid(dpid));
    assert_eq!(info.n_buffers, 256);
    assert_eq!(
        info.ports.iter().map(|p| p.port_no).collect::<Vec<_>>(),
        ports
    );
    assert_eq!(info.ports[0].name, "eth1");
    assert_eq!(info.ports[0].hw_addr, sw.spec.port_mac(1));
    assert_eq!(info.peer, sw.local_addr());
    assert_eq!(
        sw.miss_send_len,
        Some(128),
        "SET_CONFIG carries the default miss_send_len"
    );
}

#[test]
fn openflow_10_handshake() {
    handshake_gives(Spec::v10(0x10), Version::V1_0);
}

#[test]
fn openflow_13_handshake() {
    handshake_gives(Spec::v13(0x13), Version::V1_3);
}

#[test]
fn a_switch_offering_10_to_15_gets_13() {
    handshake_gives(Spec::v10_to_v15(0x15), Version::V1_3);
}

#[test]
fn a_13_hello_without_bitmap_gets_13() {
    handshake_gives(
        Spec {
            bitmap: None,
            ..Spec::v13(0x1300)
        },
        Version::V1_3,
    );
}

#[test]
fn a_14_hello_without_bitmap_gets_13() {
    // Header version 5, no bitmap: the lower of 1.4 and our 1.3.
    handshake_gives(
        Spec {
            hello_version: 5,
            bitmap: None,
            ..Spec::v13(0x1400)
        },
        Version::V1_3,
    );
}

#[test]
fn a_switch_offering_10_and_13_to_a_10_only_controller_gets_10() {
    let mut config = test_config();
    config.handshake.versions = vec![Version::V1_0];
    let ctl = Running::start(&config, Vec::new());
    let spec = Spec {
        bitmap: Some(0b1_0010),
        ..Spec::v13(0x99)
    };
    let mut sw = Emu::connect_and_handshake(ctl.addr, spec, T).expect("handshake");
    assert_eq!(sw.version, Some(Version::V1_0));
    sw.ping(T).unwrap();
}

#[test]
fn a_14_only_peer_gets_hello_failed_and_is_closed() {
    let ctl = Running::start(&test_config(), Vec::new());
    let spec = Spec {
        hello_version: 5,
        bitmap: Some(1 << 5),
        ..Spec::v13(0x14)
    };
    let mut sw = Emu::connect(ctl.addr, spec).unwrap();
    let mut hello_failed = false;
    loop {
        match sw.next(T) {
            Event::Message(_, Message::V13(of13::Message::Error(e)))
            | Event::Message(_, Message::V10(of10::Message::Error(e))) => {
                // OFPET_HELLO_FAILED (0) / OFPHFC_INCOMPATIBLE (0).
                let openflow::common::ErrorBody::Standard { err_type, code, .. } = e else {
                    panic!("{e:?}")
                };
                assert_eq!((err_type, code), (0, 0));
                hello_failed = true;
            }
            Event::Undecodable(frame, _) if frame[1] == openflow::msg_type::ERROR => {
                assert_eq!(&frame[8..12], &[0, 0, 0, 0], "HELLO_FAILED/INCOMPATIBLE");
                hello_failed = true;
            }
            Event::Message(..) | Event::Undecodable(..) => {}
            Event::Closed => break,
            Event::Timeout => panic!("still open; log: {:?}", sw.log),
        }
    }
    assert!(
        hello_failed,
        "an ERROR HELLO_FAILED came before the close; log: {:?}",
        sw.log
    );
    // The controller is fine: a good switch still gets in.
    let mut good = Emu::connect_and_handshake(ctl.addr, Spec::v13(0x15), T).unwrap();
    good.ping(T).unwrap();
}

#[test]
fn a_second_connection_with_the_same_dpid_replaces_the_first() {
    let (rec, seen) = Recorder::new();
    let ctl = Running::start(&test_config(), vec![Box::new(rec)]);
    let mut first = Emu::connect_and_handshake(ctl.addr, Spec::v13(0x77), T).unwrap();
    first.ping(T).unwrap();
    let mut second = Emu::connect_and_handshake(ctl.addr, Spec::v10(0x77), T).unwrap();
    second.ping(T).unwrap();
    first
        .wait_closed(T)
        .expect("the first connection is closed");
    second.ping(T).unwrap();
    assert!(eventually(T, || seen.removed_dpids() == vec![0x77]));
    assert_eq!(seen.added_dpids(), vec![0x77, 0x77]);
}

#[test]
fn shutdown_closes_switches_and_fires_switch_removed() {
    let (rec, seen) = Recorder::new();
    let ctl = Running::start(&test_config(), vec![Box::new(rec)]);
    let mut a = Emu::connect_and_handshake(ctl.addr, Spec::v10(1), T).unwrap();
    let mut b = Emu::connect_and_handshake(ctl.addr, Spec::v13(2), T).unwrap();
    a.ping(T).unwrap();
    b.ping(T).unwrap();
    ctl.shutdown();
    a.wait_closed(T).unwrap();
    b.wait_closed(T).unwrap();
    let mut removed = seen.removed_dpids();
    removed.sort();
    assert_eq!(removed, vec![1, 2]);
    assert_eq!(
        seen.states_dropped
            .load(std::sync::atomic::Ordering::SeqCst),
        2
    );
}
