//! Admission under a connection flood: once the handshake caps refuse a connection,
//! accepting pauses and the kernel's backlog holds the rest, so a flood costs the
//! controller's core little; a switch already connected keeps getting its replies.

mod emu;
mod harness;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use emu::{host, is_packet_out, Emu, Spec};
use harness::{eventually, test_config, Running, T};

#[test]
fn a_flood_past_the_caps_is_left_in_the_backlog_while_switches_are_served() {
    let app = apps::by_name("learning_switch", &toml::Table::new()).unwrap();
    let ctl = Running::start(&test_config(), vec![app]);
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v10(1), T).unwrap();
    let accepted_before = ctl.handle().counters().total.accepted;

    // 300 silent connections from one address: over the per-address cap (64) of
    // pending handshakes. The kernel completes them all at once (they sit in the
    // listener's backlog); admission must not take them all in one go.
    let started = Instant::now();
    let flood: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(ctl.addr).unwrap())
        .collect();

    // The connected switch is served during the flood.
    sw.send_packet_in(1, &emu::frame(host(1), host(2)), None)
        .unwrap();
    sw.wait_for(T, is_packet_out)
        .expect("a reply during the flood");

    // Every flood connection is eventually accepted (and refused), but only after at
    // least one pause: without the pause admission accepts 300 connections in a few
    // milliseconds.
    assert!(eventually(Duration::from_secs(20), || {
        ctl.handle().counters().total.accepted >= accepted_before + 300
    }));
    let took = started.elapsed();
    let c = ctl.handle().counters();
    assert!(
        c.total
            .refused
            .get("max_pending_per_ip")
            .copied()
            .unwrap_or(0)
            > 0,
        "{:?}",
        c.total.refused
    );
    assert!(
        took >= Duration::from_millis(100),
        "300 queued connections accepted in {took:?}: accepting did not pause"
    );
    drop(flood);
}
