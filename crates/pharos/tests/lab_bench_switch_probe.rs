//! The data-plane side of `pharos bench switch`, on real interfaces and Open vSwitch:
//!
//! ```text
//! calibration      the probe's kernel timestamps against a known delay: the test's own
//!                  forwarder in a namespace holds each frame 5 ms (measured within 10%),
//!                  and the floor of a direct veth pair (tens of µs at most)
//! lab --probe      `pharos lab up --controller none --probe`: probe interfaces pb-NAME-M in
//!                  the root namespace, listed by show; the switch forwards nothing without
//!                  a controller; installed flows forward probes; `down` removes them
//! modify 1.0/1.3   test 1 (packet modification latency) against OVS, shortened: every
//!                  action measured, frames leave with the headers the action gives;
//!                  a refused action (1.3: a missing group) and a dropping flow reported
//! ```
//!
//! Needs root and Open vSwitch (`scripts/install-test-deps`): without them the tests fail
//! saying so, unless `PHAROS_SKIP_LAB=1`, when the skip is recorded.

mod common;
use common::lab as harness;

use std::process::Command;
use std::thread;
use std::time::Duration;

use bench::oflops::channel::{Channel, ChannelConfig, DataPort, Endpoint, Listener};
use bench::oflops::delay;
use bench::oflops::flows::FlowSet;
use bench::oflops::modify::{self, Case, ModifyConfig};
use bench::oflops::probe::{self, CaptureOptions, FrameSpec, Session, StreamSpec};
use harness::{apps_by_name, enabled, serial, Lab, Of};
use openflow::model::Action;

fn iface_exists(name: &str) -> bool {
    std::path::Path::new("/sys/class/net").join(name).exists()
}

#[test]
fn calibration_against_a_5_ms_forwarder_and_the_veth_floor() {
    if !enabled("lab_bench_switch_probe::calibration_against_a_5_ms_forwarder_and_the_veth_floor") {
        return;
    }
    let _lock = serial();
    let c = delay::calibrate(
        "pbc1",
        Duration::from_millis(5),
        10_000.0,
        Duration::from_secs(1),
    )
    .expect("calibration runs");
    let text = serde_json::to_string_pretty(&c).unwrap();
    eprintln!("{text}");
    // The known delay, measured through the probe's timestamps: within 10%.
    let hold = c.hold_ns as f64;
    assert!(
        ((c.delayed.median - c.floor.median) as f64 - hold).abs() < hold * 0.10,
        "5 ms forwarder measured {} ns (floor {} ns):\n{text}",
        c.delayed.median,
        c.floor.median
    );
    assert!(c.error_pct.abs() < 10.0, "{text}");
    // Nothing arrives sooner than the hold: the stamps are of the right frames.
    assert!(c.delayed.min >= c.hold_ns, "{text}");
    // The floor: a direct veth pair costs the kernel well under 50 µs.
    assert!(
        c.floor.median > 0 && c.floor.median < 50_000,
        "veth floor {} ns:\n{text}",
        c.floor.median
    );
    // Kernel stamps both ways, and (almost) no loss at 10 kpps.
    assert_eq!(c.tx_source, probe::TsSource::Software, "{text}");
    assert_eq!(c.rx_source, probe::TsSource::Software, "{text}");
    assert!(c.tx_stamped > 0.99, "{text}");
    assert!(c.floor_lost * 100 <= c.floor.n as u64, "{text}");
    assert!(c.delayed_lost * 100 <= c.delayed.n as u64, "{text}");
    // Everything the calibration made is gone.
    for i in ["pbv-pbc1-a", "pbv-pbc1-b", "pbd-pbc1-a", "pbd-pbc1-b"] {
        assert!(!iface_exists(i), "{i} left behind");
    }
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&ns.stdout).contains("pbd-pbc1"),
        "namespace pbd-pbc1 left behind"
    );
}

/// A probe stream of `n` frames from `tx` captured on `rx`: how many arrived.
fn probe_through(tx: &str, rx: &str, n: u64) -> u64 {
    let i = probe::Iface::lookup(tx).unwrap();
    let spec = FrameSpec::udp(
        i.mac,
        [0x02, 0, 0, 0, 0, 2],
        [10, 0, 0, 1].into(),
        [10, 0, 0, 2].into(),
    );
    let s = Session::start(
        vec![(
            tx.to_string(),
            StreamSpec::new(7, vec![spec]).rate(5_000.0).count(n),
        )],
        &[rx],
        CaptureOptions::default(),
    )
    .unwrap();
    s.wait().unwrap().received(7)
}

#[test]
fn lab_up_with_no_controller_and_probe_interfaces() {
    if !enabled("lab_bench_switch_probe::lab_up_with_no_controller_and_probe_interfaces") {
        return;
    }
    let _lock = serial();
    let mut lab = Lab::with_apps("pbl", Of::V13, apps_by_name(&[]), false);
    let out = lab.lab(
        "up",
        &["--topo", "single,2", "--controller", "none", "--probe"],
    );
    out.expect_ok();
    assert!(out.stdout.contains("pb-pbl-1 (s1:1)"), "{out}");
    assert!(out.stdout.contains("no controller"), "{out}");
    let show = lab.show();
    assert_eq!(show["controller"], "none", "{show}");
    let probes = show["probes"].as_array().expect("probes listed");
    let names: Vec<&str> = probes
        .iter()
        .map(|p| p["interface"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pb-pbl-1", "pb-pbl-2"], "{show}");
    assert_eq!(probes[1]["switch"], "s1");
    assert_eq!(probes[1]["port"], 2);
    assert!(show["hosts"].as_array().unwrap().is_empty(), "{show}");
    for n in &names {
        assert!(iface_exists(n), "{n} missing");
    }
    let text = lab.lab("show", &[]);
    assert!(
        text.stdout.contains("controller none\n") && text.stdout.contains("pb-pbl-2"),
        "{text}"
    );
    // No namespaces: commands on hosts say so.
    let ping = lab.lab("ping", &["h1", "h2"]);
    assert!(
        !ping.ok() && ping.stderr.contains("probe interfaces"),
        "{ping}"
    );
    // No controller and fail_mode secure: nothing is forwarded.
    assert_eq!(probe_through("pb-pbl-1", "pb-pbl-2", 200), 0);
    // A flow installed by hand forwards the probes, port 1 to port 2.
    let dir = lab.lab_dir().join("pbl");
    let ofctl = Command::new("ovs-ofctl")
        .args([
            "-O",
            "OpenFlow13",
            "add-flow",
            "pbl-s1",
            "in_port=1,actions=output:2",
        ])
        .env("OVS_RUNDIR", &dir)
        .output()
        .unwrap();
    assert!(
        ofctl.status.success(),
        "{}",
        String::from_utf8_lossy(&ofctl.stderr)
    );
    let got = probe_through("pb-pbl-1", "pb-pbl-2", 200);
    assert!(got >= 190, "{got}/200 probes forwarded");
    let down = lab.down();
    assert!(down.ok(), "{down}");
    for n in &names {
        assert!(!iface_exists(n), "{n} left behind");
    }
}

/// Test 1 against OVS: a lab of one switch whose two ports are probe interfaces and whose
/// controller is the bench's channel.
fn modify_against_ovs(name: &str, of: Of) {
    let mut lab = Lab::with_apps(name, of, apps_by_name(&[]), false);
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap()).expect("bind");
    let target = format!("tcp:{}", listener.local_addr());
    let mut cfg = ChannelConfig::new(Endpoint::Listen(listener.local_addr()), of.version());
    cfg.connect_timeout = Duration::from_secs(30);
    let accept = thread::spawn(move || listener.accept(&cfg));
    let out = lab.lab(
        "up",
        &[
            "--topo",
            "single,2",
            "--of",
            of.flag(),
            "--controller",
            &target,
            "--probe",
        ],
    );
    let mut ch: Channel = accept
        .join()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}\n{out}"));
    let port = |n: u32| {
        DataPort::resolve(ch.info(), &format!("{name}-s1-eth{n}=pb-{name}-{n}"))
            .expect("the switch has the port")
    };
    let set = FlowSet::new(&port(1), &port(2)).expect("probe interfaces");
    let cfg = ModifyConfig {
        rate_pps: 20_000.0,
        duration: Duration::from_millis(600),
        warmup: Duration::from_millis(100),
        ..ModifyConfig::default()
    };
    let result = modify::run(&mut ch, &set, &cfg, None).expect("test 1 runs");
    let text = result.render();
    eprintln!("{text}");
    let cases = result.data["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), Case::ALL.len(), "{text}");
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let status = c["status"].as_str().unwrap();
        if name == "dec_ttl" && of == Of::V10 {
            assert_eq!(status, "not in OpenFlow 1.0", "{text}");
            continue;
        }
        assert_eq!(status, "measured", "{name}: {c}\n{text}");
        // Frames came out with the headers the action gives, every one checked.
        let (checked, matched) = (
            c["checked"].as_u64().unwrap(),
            c["matched"].as_u64().unwrap(),
        );
        assert!(checked > 0 && checked == matched, "{name}: {c}");
        // Sane: a software switch forwards in 1 µs .. 50 ms, and loses little at 20 kpps.
        let median = c["delay"]["median"].as_i64().unwrap();
        assert!(
            (1_000..50_000_000).contains(&median),
            "{name}: {median} ns\n{text}"
        );
        let (sent, lost) = (c["sent"].as_u64().unwrap(), c["lost"].as_u64().unwrap());
        assert!(sent > 5_000, "{name}: sent {sent}\n{text}");
        // (A busy 2-core machine makes OVS's userspace datapath drop bursts: bounds only.)
        assert!(lost * 4 < sent, "{name}: lost {lost} of {sent}\n{text}");
    }
    assert!(result.plots.len() == 1 && !result.plots[0].series[0].points.is_empty());
    // A switch that refuses the action, or drops the probes, is reported, not waited on.
    let short = ModifyConfig {
        duration: Duration::from_millis(300),
        ..cfg.clone()
    };
    let mut plan = Case::Output.plan(&set, of.version()).unwrap();
    if of == Of::V13 {
        // A group that does not exist: OVS refuses the FLOW_MOD.
        plan.actions.insert(0, Action::Group { group_id: 77 });
        let refused = modify::run_case(&mut ch, &set, &plan, &short, 0x77)
            .expect("the channel works")
            .expect_err("the flow is refused");
        assert!(refused.contains("GROUP"), "{refused}");
        ch.barrier().expect("the channel still answers");
    }
    // A flow without an output: every probe dropped, and counted.
    plan.actions.clear();
    let rec = modify::run_case(&mut ch, &set, &plan, &short, 0x78)
        .expect("the channel works")
        .expect("a drop flow is accepted");
    assert!(rec.sent(0x78) > 1_000, "{}", rec.sent(0x78));
    assert_eq!(rec.lost(0x78), rec.sent(0x78));
    drop(ch);
    let down = lab.down();
    assert!(down.ok(), "{down}");
}

#[test]
fn modify_against_open_vswitch_1_0() {
    if !enabled("lab_bench_switch_probe::modify_against_open_vswitch_1_0") {
        return;
    }
    let _lock = serial();
    modify_against_ovs("pm0", Of::V10);
}

#[test]
fn modify_against_open_vswitch_1_3() {
    if !enabled("lab_bench_switch_probe::modify_against_open_vswitch_1_3") {
        return;
    }
    let _lock = serial();
    modify_against_ovs("pm3", Of::V13);
}
