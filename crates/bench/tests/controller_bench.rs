//! `pharos bench controller` against in-process controllers: the responder (plain,
//! noisy, delayed, silent), a peer that never handshakes, and the real Pharos controller
//! with the learning switch. Loops are short (100-200 ms): these check behaviour, not
//! speed.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench::{
    run_controller_bench, run_responder, run_responder_with, BenchReport, ControllerBenchConfig,
    Counting, Mode, ResponderHandle, ResponderOptions,
};
use openflow::Version;

fn config(addr: SocketAddr, version: Version) -> ControllerBenchConfig {
    ControllerBenchConfig {
        switches: 4,
        macs: 1000,
        loops: 3,
        loop_ms: 150,
        warmup: 1,
        version,
        // These tests are of the windowed mode (tests/unbounded.rs has the other).
        window: 64,
        threads: 2,
        connect_timeout: Duration::from_secs(5),
        response_timeout: Duration::from_millis(500),
        ..ControllerBenchConfig::new(addr)
    }
}

fn responder(opts: ResponderOptions) -> ResponderHandle {
    run_responder_with(
        "127.0.0.1:0".parse().unwrap(),
        ResponderOptions { threads: 2, ..opts },
        Arc::new(AtomicBool::new(false)),
    )
    .expect("the responder starts")
}

fn run(cfg: &ControllerBenchConfig) -> BenchReport {
    let mut seen = 0;
    let report = run_controller_bench(cfg, &mut |_| seen += 1).expect("the run takes place");
    assert_eq!(seen, report.loops.len(), "progress is called once per loop");
    report
}

/// Every answer the responder sent is counted once, no more, and every PACKET_IN was
/// answered (the announcements of the learning phase were answered too, and counted
/// apart).
fn assert_exact(report: &BenchReport, resp: &ResponderHandle) {
    assert!(report.silent_switches.is_empty(), "{}", report.to_table());
    assert_eq!(report.connected, report.switches, "{}", report.to_table());
    assert!(report.responses_total > 0, "{}", report.to_table());
    let learning = report.learning.as_ref().expect("a learning phase");
    assert_eq!(learning.switches_done, report.switches);
    assert_eq!(
        learning.announced,
        (report.switches * report.macs) as u64,
        "every address announced once"
    );
    assert_eq!(learning.responses, learning.announced, "one FLOW_MOD each");
    assert_eq!(
        report.responses_total + learning.responses,
        resp.answers_sent(),
        "{}",
        report.to_table()
    );
    assert_eq!(
        report.packet_ins_sent + learning.announced,
        resp.packet_ins_received()
    );
    assert_eq!(report.packet_ins_sent, report.responses_total);
    assert_eq!(report.timeouts, 0);
    let in_loops: u64 = report.loops.iter().map(|l| l.responses).sum();
    assert!(in_loops <= report.responses_total);
    assert!(report.overall.mean > 0.0 && report.overall.min <= report.overall.max);
    assert_eq!(report.loops.len(), 3);
    assert!(report.loops[0].warmup && !report.loops[1].warmup);
}

#[test]
fn counts_exactly_what_was_answered_of10() {
    let resp = responder(ResponderOptions::default());
    let report = run(&config(resp.local_addr(), Version::V1_0));
    assert_exact(&report, &resp);
    assert_eq!(
        report.latency, None,
        "throughput mode measures no round trips"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["version"], "1.0");
    assert_eq!(json["mode"], "throughput");
}

#[test]
fn counts_exactly_what_was_answered_of13() {
    let resp = responder(ResponderOptions::default());
    let report = run(&config(resp.local_addr(), Version::V1_3));
    assert_exact(&report, &resp);
}

#[test]
fn echo_barrier_and_port_status_are_not_responses() {
    for version in [Version::V1_0, Version::V1_3] {
        let resp = responder(ResponderOptions {
            noise: true,
            ..ResponderOptions::default()
        });
        let report = run(&config(resp.local_addr(), version));
        assert_exact(&report, &resp);
        // Three other messages per answer, all seen, none counted.
        assert!(
            report.other_messages >= 3 * report.responses_total,
            "{}",
            report.to_table()
        );
    }
}

#[test]
fn per_packet_in_counts_each_packet_in_once() {
    let resp = responder(ResponderOptions {
        noise: true,
        ..ResponderOptions::default()
    });
    let cfg = ControllerBenchConfig {
        per_packet_in: true,
        ..config(resp.local_addr(), Version::V1_3)
    };
    let report = run(&cfg);
    assert_eq!(report.counting, Counting::PerPacketIn);
    assert_exact(&report, &resp);
}

#[test]
fn latency_percentiles_on_a_known_delay() {
    let resp = responder(ResponderOptions {
        delay: Some(Duration::from_millis(1)),
        ..ResponderOptions::default()
    });
    let cfg = ControllerBenchConfig {
        mode: Mode::Latency,
        switches: 2,
        loops: 2,
        loop_ms: 200,
        ..config(resp.local_addr(), Version::V1_0)
    };
    let report = run(&cfg);
    let p = report.latency.expect("latency mode measures round trips");
    assert!(p.samples > 20, "{p:?}");
    assert!(p.p50_us >= 1000.0 && p.p50_us < 2000.0, "{p:?}");
    assert!(p.p50_us <= p.p90_us && p.p90_us <= p.p99_us && p.p99_us <= p.p999_us);
    assert!(p.p999_us <= p.max_us);
    // One in flight per switch: a switch answered every ~1 ms does at most ~1000/s.
    assert!(
        report.overall.max < 2.0 * 1000.0 * 1.05,
        "{}",
        report.to_table()
    );
    assert!(report.silent_switches.is_empty());
    assert_eq!(report.window, 1);
}

#[test]
fn a_controller_that_never_answers_is_reported_not_waited_for() {
    let resp = responder(ResponderOptions {
        silent: true,
        ..ResponderOptions::default()
    });
    let cfg = ControllerBenchConfig {
        loops: 2,
        loop_ms: 100,
        response_timeout: Duration::from_millis(200),
        ..config(resp.local_addr(), Version::V1_3)
    };
    let start = Instant::now();
    let report = run(&cfg);
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(report.connected, 4);
    assert_eq!(report.silent_switches.count, 4);
    assert_eq!(report.silent_switches.first, vec![1, 2, 3, 4]);
    assert_eq!(report.responses_total, 0);
    assert!(report.packet_ins_sent > 0);
    assert!(resp.packet_ins_received() > 0);
    assert!(report.to_table().contains("SILENT: 4 of 4 switches"));
}

#[test]
fn a_controller_that_never_handshakes_is_reported_not_waited_for() {
    // Accepts (the kernel does), never says a word.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let cfg = ControllerBenchConfig {
        switches: 3,
        connect_timeout: Duration::from_millis(300),
        ..config(listener.local_addr().unwrap(), Version::V1_0)
    };
    let start = Instant::now();
    let report = run(&cfg);
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(report.connected, 0);
    assert!(report.loops.is_empty());
    assert_eq!(report.silent_switches.first, vec![1, 2, 3]);
    assert_eq!(report.not_connected.count, 3);
    assert!(
        report.not_connected.first[0]
            .reason
            .contains("no HELLO from the controller"),
        "{:?}",
        report.not_connected
    );
    assert!(report.to_table().contains("NOT CONNECTED"));
    drop(listener);
}

#[test]
fn a_controller_that_closes_is_reported_at_once() {
    // Says HELLO and hangs up: the bytes and the FIN reach each switch together, in
    // one readiness event, and the close must still be seen (not left to a timeout).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        for _ in 0..3 {
            let (mut s, _) = listener.accept().unwrap();
            std::io::Write::write_all(&mut s, &[1, 0, 0, 8, 0, 0, 0, 1]).unwrap();
        }
    });
    let cfg = ControllerBenchConfig {
        switches: 3,
        connect_timeout: Duration::from_secs(4),
        ..config(addr, Version::V1_0)
    };
    let start = Instant::now();
    let report = run(&cfg);
    server.join().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(report.connected, 0);
    assert_eq!(report.not_connected.count, 3);
    for nc in &report.not_connected.first {
        assert!(
            nc.reason.contains("closed") || nc.reason.contains("reset"),
            "{:?}",
            report.not_connected
        );
    }
}

#[test]
fn bad_settings_are_refused() {
    let addr = "127.0.0.1:9".parse().unwrap();
    for cfg in [
        ControllerBenchConfig {
            warmup: 3,
            loops: 3,
            ..ControllerBenchConfig::new(addr)
        },
        ControllerBenchConfig {
            switches: 0,
            ..ControllerBenchConfig::new(addr)
        },
        ControllerBenchConfig {
            macs: 0,
            ..ControllerBenchConfig::new(addr)
        },
    ] {
        assert!(run_controller_bench(&cfg, &mut |_| {}).is_err());
    }
}

#[test]
fn the_plain_run_responder_answers() {
    let stop = Arc::new(AtomicBool::new(false));
    let resp = run_responder("127.0.0.1:0".parse().unwrap(), None, 1, Arc::clone(&stop)).unwrap();
    let report = run(&ControllerBenchConfig {
        switches: 2,
        ..config(resp.local_addr(), Version::V1_0)
    });
    assert_exact(&report, &resp);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    resp.join();
}

#[test]
fn against_the_pharos_learning_switch() {
    use controller::controller::Controller;
    use controller::host::AppHost;
    use controller::services::Services;

    let config = controller::config::CoreConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        ..controller::config::CoreConfig::default()
    };
    let app = apps::by_name("learning_switch", &toml::Table::new()).unwrap();
    let pipeline = Arc::new(AppHost::build(vec![app], Services::new()).unwrap());
    let handle = Controller::start(&config.net(), Arc::clone(&pipeline.dispatcher)).unwrap();
    let addr = handle.local_addrs()[0];
    for version in [Version::V1_0, Version::V1_3] {
        let report = run(&config_for_pharos(addr, version));
        assert!(report.silent_switches.is_empty(), "{}", report.to_table());
        assert!(report.not_connected.is_empty(), "{}", report.to_table());
        assert!(report.responses_total > 0, "{}", report.to_table());
        assert!(report.overall.mean > 0.0);
    }
    // After the learning phase the learning switch knows both ends of every packet and
    // installs a flow for each: every answer names its PACKET_IN by buffer id, and
    // counted per PACKET_IN, none is counted twice.
    for window in [64, 0] {
        let report = run(&ControllerBenchConfig {
            per_packet_in: true,
            window,
            ..config_for_pharos(addr, Version::V1_3)
        });
        let t = report.to_table();
        assert!(report.silent_switches.is_empty(), "{t}");
        let learning = report.learning.as_ref().unwrap();
        assert_eq!(learning.switches_done, 4, "{t}");
        assert!(report.responses_total > 0, "{t}");
        assert!(report.flow_mods >= report.packet_ins_answered, "{t}");
        assert!(report.packet_ins_answered <= report.packet_ins_sent, "{t}");
    }
    handle.shutdown();
}

fn config_for_pharos(addr: SocketAddr, version: Version) -> ControllerBenchConfig {
    ControllerBenchConfig {
        switches: 4,
        ..config(addr, version)
    }
}

/// A silent flood of `addr` at `rate` connections/s for the loops of a test run: at
/// most 50 open, lasting until the run stops it.
fn test_flood(addr: SocketAddr, rate: u32) -> bench::flood::FloodConfig {
    use bench::flood::{FloodConfig, FloodStyle};

    let mut flood = FloodConfig::new(addr, rate, FloodStyle::Silent);
    flood.max_connections = 50;
    flood.duration = Duration::from_secs(60);
    flood
}

#[test]
fn a_flood_runs_during_the_loops_and_is_reported() {
    let resp = responder(ResponderOptions::default());
    let cfg = ControllerBenchConfig {
        switches: 2,
        loops: 2,
        loop_ms: 150,
        flood: Some(test_flood(resp.local_addr(), 200)),
        ..config(resp.local_addr(), Version::V1_0)
    };
    let start = Instant::now();
    let report = run(&cfg);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the flood ends with the run"
    );
    let f = report.flood.as_ref().expect("a flood report");
    assert!(f.attempted > 0, "{f:?}");
    assert!(report.silent_switches.is_empty(), "{}", report.to_table());
    assert!(report.to_table().contains("flood: silent"));
}

/// `--flood-alternate`: the flood runs only in the second half of each cycle of four
/// loops, the loops after each start and stop are left out, and each measured loop
/// without the flood is paired with the next one with it.
#[test]
fn a_flood_in_alternate_loops_runs_only_in_its_loops_and_is_paired() {
    let resp = responder(ResponderOptions::default());
    let cfg = ControllerBenchConfig {
        switches: 2,
        loops: 9,
        loop_ms: 200,
        flood: Some(test_flood(resp.local_addr(), 400)),
        flood_alternate: true,
        ..config(resp.local_addr(), Version::V1_0)
    };
    let report = run(&cfg);
    let t = report.to_table();
    let phases: Vec<(bool, bool, Option<bool>)> = report
        .loops
        .iter()
        .map(|l| (l.warmup, l.settle, l.flood))
        .collect();
    let cycle = [
        (false, true, Some(false)),
        (false, false, Some(false)),
        (false, true, Some(true)),
        (false, false, Some(true)),
    ];
    let mut want = vec![(true, false, None)];
    want.extend(cycle);
    want.extend(cycle);
    assert_eq!(phases, want, "{t}");
    // The flood ran for the four loops of its two halves (0.8 s), not all nine (1.8 s).
    let f = report.flood.as_ref().expect("a flood report");
    assert!(
        f.elapsed_s > 0.6 && f.elapsed_s < 1.2,
        "the flood ran {} s:\n{t}",
        f.elapsed_s
    );
    assert!(
        f.attempted > 100 && f.ended_by == bench::flood::FloodEnd::Stopped,
        "{f:?}"
    );
    let e = report.flood_effect.as_ref().expect("the flood's effect");
    let measured: Vec<&bench::LoopResult> = report.loops.iter().filter(|l| l.measured()).collect();
    assert_eq!(measured.len(), 4, "{t}");
    let want_pairs = [
        measured[1].responses_per_sec / measured[0].responses_per_sec,
        measured[3].responses_per_sec / measured[2].responses_per_sec,
    ];
    assert_eq!(e.pairs, want_pairs, "{t}");
    assert_eq!(e.median, Some((want_pairs[0] + want_pairs[1]) / 2.0));
    // Settling loops count nowhere: the overall mean is the measured loops'.
    let mean = measured.iter().map(|l| l.responses_per_sec).sum::<f64>() / 4.0;
    assert!((report.overall.mean - mean).abs() < 1e-6 * mean, "{t}");
    assert!(
        t.contains("flood in alternate loops: with / without, per pair: "),
        "{t}"
    );
    assert!(t.contains("(flood starting: not counted)"), "{t}");

    // Without a flood, or without a whole cycle after the warm-up, it is refused.
    for bad in [
        ControllerBenchConfig {
            flood: None,
            ..cfg.clone()
        },
        ControllerBenchConfig {
            loops: 4,
            ..cfg.clone()
        },
    ] {
        let e = run_controller_bench(&bad, &mut |_| {})
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains("--flood-alternate needs"), "{e}");
    }
}

/// `--topology`: Pharos's link discovery finds the tree the switches are wired into
/// (LLDP relayed between them), and its device manager the hosts behind them, while the
/// network is held up and quiet.
#[test]
fn a_wired_tree_is_discovered_by_pharos_with_its_hosts() {
    use bench::topo::Shape;
    use controller::controller::Controller;
    use controller::host::AppHost;
    use controller::services::Services;

    let ctl_config = controller::config::CoreConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        ..controller::config::CoreConfig::default()
    };
    let apps = ["topology", "device_manager"]
        .iter()
        .map(|n| apps::by_name(n, &toml::Table::new()).unwrap())
        .collect();
    let pipeline = Arc::new(AppHost::build(apps, Services::new()).unwrap());
    let handle = Controller::start(&ctl_config.net(), Arc::clone(&pipeline.dispatcher)).unwrap();
    let addr = handle.local_addrs()[0];
    let cfg = ControllerBenchConfig {
        switches: 13,
        macs: 3,
        loops: 1,
        warmup: 0,
        topology: Some(Shape::Tree(3)),
        hold: Duration::from_secs(8),
        ..config(addr, Version::V1_3)
    };
    let bench = std::thread::spawn(move || run(&cfg));
    let topology = || pipeline.services().get::<apps::topology::Topology>();
    let devices = || pipeline.services().get::<apps::devices::Devices>();
    let deadline = Instant::now() + Duration::from_secs(8);
    let (mut links, mut hosts) = (0, 0);
    while Instant::now() < deadline {
        links = topology().map_or(0, |t| t.snapshot().links().len());
        hosts = devices().map_or(0, |d| d.all().len());
        if links == 24 && hosts == 39 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(links, 24, "12 cables, each found both ways");
    assert_eq!(hosts, 39, "3 hosts behind each of 13 switches");
    let snapshot = topology().unwrap().snapshot();
    let root_down: Vec<_> = snapshot
        .links()
        .iter()
        .filter(|l| l.src.0 == 1)
        .map(|l| (l.src_port, l.dst.0, l.dst_port))
        .collect();
    assert_eq!(
        root_down,
        [(4, 2, 3), (5, 3, 3), (6, 4, 3)],
        "the root's children"
    );
    let report = bench.join().unwrap();
    assert!(report.not_connected.is_empty(), "{}", report.to_table());
    handle.shutdown();
}
