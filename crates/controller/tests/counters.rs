//! Counters end to end: messages in and out by type, per switch and in total, handshake
//! failures by reason, disconnects by reason, a serializable snapshot (what the REST API
//! will serve), and the periodic info line.

mod harness;

use std::time::Duration;

use emu::{host, is_flow_mod, Emu, Spec};
use harness::{eventually, logs, test_config, Running, T};
use testkit::emu;

#[test]
fn counters_count_by_type_switch_and_reason() {
    let config = controller::config::CoreConfig {
        counters_interval: Duration::from_millis(100),
        ..test_config()
    };
    let app = apps::by_name("learning_switch", &toml::Table::new()).unwrap();
    let ctl = Running::start(&config, vec![app]);

    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(0x77), T).unwrap();
    let (a, b) = (host(1), host(2));
    sw.send_packet_in(1, &emu::frame(a, b), None).unwrap();
    sw.send_packet_in(2, &emu::frame(b, a), None).unwrap();
    sw.wait_for(T, is_flow_mod).unwrap();

    // A peer that offers only OpenFlow 1.4 (its HELLO's bitmap says so): a handshake
    // failure, counted by reason.
    let only_1_4 = Spec {
        hello_version: 5,
        bitmap: Some(1 << 5),
        ..Spec::v13(0x78)
    };
    let _bad = Emu::connect(ctl.addr, only_1_4).unwrap();

    let counted = eventually(T, || {
        let c = ctl.handle().counters();
        c.msgs_in("1.3 PACKET_IN") == 2
            && c.total.msgs_out.get("1.3 FLOW_MOD").copied().unwrap_or(0) >= 2
            && c.total.handshake_failures.get("incompatible_version") == Some(&1)
    });
    let c = ctl.handle().counters();
    assert!(counted, "{c:#?}");
    // Per switch, under its dpid.
    let s = c
        .switches
        .iter()
        .find(|s| s.dpid == "00:00:00:00:00:00:00:77")
        .expect("switch listed");
    assert_eq!(s.packet_ins, 2);
    assert_eq!(s.msgs_in.get("1.3 PACKET_IN"), Some(&2));
    // One learned flow (the table-miss entry at connect, then the learned FLOW_MOD;
    // the table is not emptied).
    assert!(
        s.msgs_out.get("1.3 FLOW_MOD").copied().unwrap_or(0) >= 2,
        "{s:#?}"
    );
    assert!(
        s.msgs_out.get("1.3 PACKET_OUT").copied().unwrap_or(0) >= 2,
        "{s:#?}"
    );
    // The snapshot serializes as the REST API will serve it.
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["total"]["packet_ins"], 2);

    // A disconnect, counted by reason. Everything the controller sent is read first (an
    // echo answered after it): a socket closed with unread bytes sends a reset, which
    // the controller counts under another reason.
    sw.ping(T).unwrap();
    drop(sw);
    let closed = eventually(T, || {
        ctl.handle()
            .counters()
            .total
            .disconnects
            .get("closed_by_peer")
            == Some(&1)
    });
    assert!(closed, "{:?}", ctl.handle().counters().total.disconnects);
    // The periodic report at info level.
    assert!(eventually(T, || logs().contains("counters")
        && logs().contains("packet_ins_per_sec")));
}
