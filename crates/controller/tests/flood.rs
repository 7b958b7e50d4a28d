//! Admission under a connection flood: once the handshake and waiting caps refuse a
//! connection, accepting pauses and the kernel's backlog holds the rest, so a flood costs
//! the controller's core little; a switch already connected keeps getting its replies.
//! And its other side: many well-behaved switches connecting at once from one address
//! (a lab on one host) wait for a handshake slot instead of being reset.

mod harness;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use emu::{host, is_packet_out, Emu, Spec};
use harness::{eventually, test_config, Running, T};
use testkit::emu;

#[test]
fn a_flood_past_the_caps_is_left_in_the_backlog_while_switches_are_served() {
    let app = apps::by_name("learning_switch", &toml::Table::new()).unwrap();
    let mut config = test_config();
    config.handshake.max_waiting_per_ip = 100;
    let ctl = Running::start(&config, vec![app]);
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v10(1), T).unwrap();
    let accepted_before = ctl.handle().counters().total.accepted;

    // 300 silent connections from one address: over the per-address caps of pending
    // handshakes (64) and waiting connections (100 here). The kernel completes them all
    // at once (they sit in the listener's backlog); admission must not take them all in
    // one go.
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
    assert_eq!(
        c.total.refused.get("max_waiting_per_ip").copied(),
        Some(300 - 64 - 100),
        "{:?}",
        c.total.refused
    );
    assert_eq!(c.total.waiting_handshakes, 100);
    assert!(
        took >= Duration::from_millis(100),
        "300 queued connections accepted in {took:?}: accepting did not pause"
    );
    drop(flood);
}

#[test]
fn a_thousand_switches_connecting_at_once_from_one_address_all_get_in_without_a_reset() {
    emu::raise_fd_limit(8192);
    let mut config = test_config();
    // Short enough that a switch kept waiting past its turn would fail the test.
    config.handshake.timeout = Duration::from_secs(5);
    let ctl = Running::start(&config, Vec::new());
    // All connect (and send their HELLO) before any handshake is answered: 64 get a
    // handshake slot (the per-address cap), the other 936 wait for one.
    let mut switches: Vec<Emu> = (0..1000u64)
        .map(|i| {
            let spec = if i % 2 == 0 {
                Spec::v10(0x1_0000 + i)
            } else {
                Spec::v13(0x1_0000 + i)
            };
            Emu::connect(ctl.addr, spec).expect("connected")
        })
        .collect();
    assert!(eventually(T, || {
        let t = ctl.handle().counters().total;
        t.pending_handshakes + t.waiting_handshakes == 1000
    }));
    let t = ctl.handle().counters().total;
    assert_eq!(t.pending_handshakes, 64, "{t:?}");
    assert_eq!(t.waiting_handshakes, 936, "{t:?}");
    // In connect order, each switch finishes its handshake: as one finishes, the next
    // waiting one gets its slot, HELLO and FEATURES_REQUEST.
    let started = Instant::now();
    for (i, sw) in switches.iter_mut().enumerate() {
        sw.handshake(T)
            .unwrap_or_else(|e| panic!("switch {i} of 1000: {e}"));
    }
    let took = started.elapsed();
    assert!(eventually(T, || ctl
        .handle()
        .counters()
        .total
        .connected_switches
        == 1000));
    let t = ctl.handle().counters().total;
    assert!(t.refused.is_empty(), "refused: {:?}", t.refused);
    assert!(
        t.handshake_failures.is_empty(),
        "failed: {:?}",
        t.handshake_failures
    );
    assert_eq!(t.waiting_handshakes, 0);
    eprintln!("1000 handshakes from one address, 936 of them queued first, in {took:?}");
    // And every one of them is served.
    for sw in switches.iter_mut().step_by(97) {
        sw.ping(T).unwrap();
    }
}

/// The sum of a counter map.
fn total(m: &std::collections::BTreeMap<String, u64>) -> u64 {
    m.values().sum()
}

#[test]
fn an_address_whose_handshakes_keep_failing_gets_in_only_with_a_hello() {
    use std::io::Write as _;
    let config = test_config();
    let ctl = Running::start(&config, Vec::new());
    // 80 connections that open with garbage: the first 64 handshakes fail, which makes
    // the address failing; the others, queued behind them, are refused at their turn.
    let mut garbage: Vec<TcpStream> = (0..80)
        .map(|_| {
            let mut s = TcpStream::connect(ctl.addr).unwrap();
            s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
            s
        })
        .collect();
    let failing = |t: &controller::counters::TotalSnapshot| {
        t.refused.get("failing_address").copied().unwrap_or(0)
    };
    assert!(
        eventually(T, || {
            let t = ctl.handle().counters().total;
            total(&t.handshake_failures) + failing(&t) == 80
        }),
        "{:?}",
        ctl.handle().counters().total
    );
    let t = ctl.handle().counters().total;
    let failures = total(&t.handshake_failures);
    let refused = failing(&t);
    assert!(failures >= 64, "{t:?}");
    // Now garbage and silence from that address are refused at accept, without a
    // handshake (the silent ones once the listener stops deferring them, a second on).
    garbage.extend((0..10).map(|_| {
        let mut s = TcpStream::connect(ctl.addr).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        s
    }));
    let silent: Vec<TcpStream> = (0..10)
        .map(|_| TcpStream::connect(ctl.addr).unwrap())
        .collect();
    assert!(
        eventually(Duration::from_secs(10), || {
            failing(&ctl.handle().counters().total) == refused + 20
        }),
        "{:?}",
        ctl.handle().counters().total
    );
    let t = ctl.handle().counters().total;
    assert_eq!(
        total(&t.handshake_failures),
        failures,
        "refused at accept, not failed in a handshake: {t:?}"
    );
    // A switch from the same address, which says HELLO as it connects, gets in.
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(7), T).expect("the switch gets in");
    sw.ping(T).unwrap();
    drop((garbage, silent));
}

/// Admission's thread is a batch thread (`SCHED_BATCH`): its wake-ups under a flood
/// must not preempt a worker on the same core (see `admission::yield_to_workers`).
#[test]
fn the_admission_thread_does_not_preempt_the_workers() {
    let app = apps::by_name("learning_switch", &toml::Table::new()).unwrap();
    let ctl = Running::start(&test_config(), vec![app]);
    let _sw = Emu::connect_and_handshake(ctl.addr, Spec::v10(1), T).unwrap();
    // (name, policy) of this process's threads.
    let policies = || -> Vec<(String, i32)> {
        let tasks = std::fs::read_dir("/proc/self/task").unwrap();
        tasks
            .filter_map(|t| {
                let t = t.ok()?.path();
                let name = std::fs::read_to_string(t.join("comm")).ok()?;
                let tid: i32 = t.file_name()?.to_str()?.parse().ok()?;
                // SAFETY: a query of a thread of this process.
                let policy = unsafe { libc::sched_getscheduler(tid) };
                Some((name.trim().to_string(), policy))
            })
            .collect()
    };
    let of = |all: &[(String, i32)], prefix: &str| -> Vec<i32> {
        all.iter()
            .filter(|(n, _)| n.starts_with(prefix))
            .map(|&(_, p)| p)
            .collect()
    };
    // Other tests of this binary may run controllers beside this one, one perhaps
    // still starting (its admission thread named, not yet in its loop): every
    // admission thread is a batch thread once started, and there is one at least.
    let all_batch = |all: &[(String, i32)]| {
        let admission = of(all, "pharos-admissio");
        !admission.is_empty() && admission.iter().all(|&p| p == libc::SCHED_BATCH)
    };
    assert!(
        eventually(Duration::from_secs(5), || all_batch(&policies())),
        "{:?}",
        policies()
    );
    let workers = of(&policies(), "pharos-worker");
    assert!(!workers.is_empty());
    assert!(
        workers.iter().all(|&p| p == libc::SCHED_OTHER),
        "{workers:?}"
    );
}
