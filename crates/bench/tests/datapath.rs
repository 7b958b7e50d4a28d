//! The data-path traffic generator against the kernel's forwarding and Open vSwitch on
//! the test bed: paced, counted, forwarded as configured (root, iproute2 and Open
//! vSwitch needed; the namespaces are deleted when each test ends).
//!
//! An integration test rather than the library's unit tests, so that its pacing is not
//! measured while the library's load tests (API load, floods) run beside it; and the
//! tests of this file take turns ([`one_at_a_time`]): each paces a generator that
//! spins between frames, and two of them at once on a 2-core machine starved each
//! other's senders (a stream of 20,000 frames/s offered 14,500).

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use bench::datapath::gen::{probe_frame, run, run_streams, GenConfig, GenReport, Stream};
use bench::datapath::testbed::{Testbed, D2_MAC, G2_MAC};

fn light(size: usize) -> GenConfig {
    GenConfig {
        size,
        rate_pps: 20_000,
        duration: Duration::from_millis(300),
        ..GenConfig::default()
    }
}

/// Held for a test's whole run, so that no two of this file's generators run at once.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn the_generator_measures_the_linux_bridge_with_no_loss_at_a_light_load() {
    let _turn = one_at_a_time();
    let mut bed = Testbed::new().unwrap();
    let addrs = bed.linux_bridge().unwrap();
    for size in [64, 1518] {
        let r = run(&mut bed.tx, &mut bed.rx, &addrs, &light(size));
        assert!(r.sent > 4000, "{r:?}");
        assert_eq!(r.received, r.sent, "{r:?}");
        assert!((15_000.0..25_000.0).contains(&r.offered_pps), "{r:?}");
        assert!(r.latency_ns[0] > 0 && r.latency_ns[0] < 5_000_000, "{r:?}");
    }
}

#[test]
fn two_streams_on_one_port_are_paced_and_counted_apart() {
    let _turn = one_at_a_time();
    let mut bed = Testbed::new().unwrap();
    let addrs = bed.linux_bridge().unwrap();
    let slow = Stream {
        port: 0,
        addrs,
        cfg: light(64),
    };
    let fast = Stream {
        cfg: GenConfig {
            rate_pps: 60_000,
            first_flow: 1,
            ..light(64)
        },
        ..slow
    };
    let r = run_streams(&mut [&mut bed.tx], &mut bed.rx, &[slow, fast]);
    assert_paced(&r, [20_000.0, 60_000.0]);
}

/// The fairness test's second scenario: one stream on `g1`, one on `g3`, both
/// forwarded to `g2`, by the bridge and by IP forwarding.
#[test]
fn two_streams_on_two_ports_both_reach_the_receiver() {
    let _turn = one_at_a_time();
    for ip in [false, true] {
        let mut bed = Testbed::new().unwrap();
        let addrs = if ip {
            bed.ip_forwarding().unwrap()
        } else {
            bed.linux_bridge().unwrap()
        };
        let first = Stream {
            port: 0,
            addrs,
            cfg: light(64),
        };
        let second = Stream {
            port: 1,
            addrs: bed.addrs3.expect("the second port's addresses"),
            cfg: GenConfig {
                rate_pps: 40_000,
                ..light(64)
            },
        };
        let Testbed { tx, tx3, rx, .. } = &mut bed;
        let r = run_streams(&mut [tx, tx3], rx, &[first, second]);
        assert_paced(&r, [20_000.0, 40_000.0]);
    }
}

/// Every stream of `r` was sent at its rate (within 20%) and all of it received.
fn assert_paced<const N: usize>(r: &[GenReport], rates: [f64; N]) {
    assert_eq!(r.len(), N);
    for (got, want) in r.iter().zip(rates) {
        assert!(got.sent > 0 && got.received == got.sent, "{got:?}");
        assert!(
            (got.offered_pps - want).abs() < want * 0.2,
            "offered {} for {want}: {got:?}",
            got.offered_pps
        );
    }
}

#[test]
fn open_vswitch_userspace_forwards_by_its_flow() {
    let _turn = one_at_a_time();
    let mut bed = Testbed::new().unwrap();
    let addrs = bed.ovs_userspace().unwrap();
    // The flow may take a moment to reach the data path: wait for a probe.
    let probe = probe_frame(&addrs, 64);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut through = false;
    while !through && std::time::Instant::now() < deadline {
        bed.tx.send(&probe);
        bed.tx.flush().unwrap();
        afpacket::wait_readable(std::os::fd::AsRawFd::as_raw_fd(&bed.rx), 50);
        bed.rx.recv_batch(64, |f| through |= f == &probe[..]);
    }
    assert!(through, "no probe crossed Open vSwitch");
    // Open vSwitch's own capacity is what the benchmark measures, not this test:
    // a gentle rate, and most frames through (it drops some when the machine is
    // busy, as with every test running at once).
    let gentle = GenConfig {
        rate_pps: 2000,
        ..light(64)
    };
    let r = run(&mut bed.tx, &mut bed.rx, &addrs, &gentle);
    assert!(r.sent > 400, "{r:?}");
    assert!(r.received * 2 >= r.sent, "{r:?}");
}

#[test]
fn ip_forwarding_delivers_routed_frames_with_the_ttl_decremented() {
    let _turn = one_at_a_time();
    let mut bed = Testbed::new().unwrap();
    let addrs = bed.ip_forwarding().unwrap();
    let r = run(&mut bed.tx, &mut bed.rx, &addrs, &light(64));
    assert!(r.sent > 4000, "{r:?}");
    assert_eq!(r.received, r.sent, "{r:?}");
    // What arrived was routed: the DUT's address as source, the TTL one less.
    let hello = probe_frame(&addrs, 64);
    bed.tx.send(&hello);
    bed.tx.flush().unwrap();
    let mut got = None;
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while got.is_none() && std::time::Instant::now() < deadline {
        afpacket::wait_readable(std::os::fd::AsRawFd::as_raw_fd(&bed.rx), 5);
        bed.rx.recv_batch(64, |f| {
            if f.len() >= 34 && f[26..34] == hello[26..34] {
                got = Some(f.to_vec());
            }
        });
    }
    let got = got.expect("the probe was forwarded");
    assert_eq!(&got[0..6], &G2_MAC);
    assert_eq!(&got[6..12], &D2_MAC);
    assert_eq!(got[22], hello[22] - 1);
}
