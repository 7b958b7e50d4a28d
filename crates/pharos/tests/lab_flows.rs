//! Flows owned by their app, on real Open vSwitch:
//!
//! * removal: the default apps on a `linear,3` lab (OpenFlow 1.0, then 1.3) after a
//!   pingall; `controller::removal::remove_flows_of` with routing's tag leaves no flow
//!   carrying that tag on any switch, and every other flow in place: the topology app's,
//!   and one added by hand with another app's tag and exactly the match and priority of
//!   one of routing's (so a 1.0 delete by match alone would have taken it).
//! * restart: `pharos run` (the default apps) on a running `fattree,4` lab (1.0, then 1.3), killed with
//!   SIGKILL and started again on the same port while h1 pings h16 every 10 ms: no ping
//!   is lost; every switch is back and pingall is 100% within 3 s of the restart; after
//!   reconciliation `ovs-ofctl dump-flows` shows no flow without an owner among the
//!   running apps (two planted before the kill, one with no tag and one with the tag of
//!   an app that does not run, are gone).
//!
//! Why the restart can be seamless on Open vSwitch: the lab's bridges are
//! `fail_mode=secure` (a switch without its controller keeps its flows and forwards by
//! them; `standalone` would fall back to learning), and retry a missing controller every
//! second (`max_backoff=1000`, so a switch is back about a second after the kill). A
//! `kill -9` closes the process's sockets at once, so the switches see the connection
//! go without waiting for their inactivity probe (5 s).
//!
//! Needs root and Open vSwitch like `tests/lab.rs` (`PHAROS_SKIP_LAB=1` skips it,
//! recorded); own lab names (`i13r`, `i13s`, `i13j`, `i13k`) and `PHAROS_LAB_DIR`s.

mod common;
use common::lab as harness;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use controller::cookie::{app_tag, tag_of, with_tag};
use harness::{
    apps_by_name, enabled, flow_lines, free_port, ofctl, parse_topo, serial, wait_until, Lab, Of,
    Topo,
};
use openflow::ofctl::{parse_flow_entry, FlowEntry};
use openflow::Version;
use serde_json::Value;
use testkit::http;

/// The apps `pharos run` runs by default, as the controller names them.
const DEFAULT_APPS: [&str; 3] = ["topology", "device_manager", "routing"];

/// The flows of `bridge` as `ovs-ofctl dump-flows` shows them, read by our parser.
fn flows(topo: &Topo, version: Version, bridge: &str) -> Vec<FlowEntry> {
    let dump = ofctl(
        &topo.run_dir,
        version,
        &["--no-names", "dump-flows", bridge],
    );
    dump.expect_ok();
    flow_lines(&dump)
        .iter()
        .map(|l| parse_flow_entry(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn add_flow(topo: &Topo, version: Version, bridge: &str, flow: &str) {
    ofctl(&topo.run_dir, version, &["add-flow", bridge, flow]).expect_ok();
}

fn removal(of: Of, name: &str) {
    let version = of.version();
    let apps = apps_by_name(&DEFAULT_APPS);
    let lab = Lab::with_apps(name, of, apps, false);
    lab.up("linear,3");
    let topo = parse_topo(&lab.show());
    assert!(
        wait_until(Duration::from_secs(30), || lab.pingall().ok()),
        "pingall never reached 100%"
    );
    let routing = app_tag("routing");
    // Another app's flow with exactly the match and priority of one of routing's: one
    // of routing's flows on s1, copied onto s3 under device_manager's tag (a table
    // cannot hold both under one match and priority, so s3's own flow of that match,
    // if any, is replaced by the copy). A 1.0 delete by match would take it.
    let s1 = &topo.switches["s1"].bridge;
    let s3 = &topo.switches["s3"].bridge;
    let theirs = flows(&topo, version, s1)
        .into_iter()
        .find(|e| tag_of(e.flow.cookie) == routing && e.flow.priority != 0)
        .expect("routing installed flows on s1");
    let mut copy = theirs.flow.clone();
    copy.cookie = with_tag(app_tag("device_manager"), 7);
    copy.idle_timeout = 0;
    copy.hard_timeout = 0;
    // Outputs to a port s3 has (its port 1), so the flow is valid there.
    copy.actions = vec![openflow::ofctl::FlowAction::Output {
        port: openflow::ofctl::PortNo::Physical(1),
    }];
    let already = flows(&topo, version, s3)
        .iter()
        .any(|e| e.flow.matching == copy.matching && e.flow.priority == copy.priority);
    if already {
        // Replace s3's flow of that match by the copy: it must survive the removal.
        let mut sel = copy.clone();
        sel.cookie = 0;
        sel.table = 0xff;
        ofctl(
            &topo.run_dir,
            version,
            &["--strict", "del-flows", s3, &sel.selection_to_ofctl()],
        )
        .expect_ok();
    }
    add_flow(&topo, version, s3, &copy.to_string());
    let before: usize = topo
        .switches
        .values()
        .map(|s| flows(&topo, version, &s.bridge).len())
        .sum();

    let report = controller::removal::remove_flows_of(
        lab.ctl.pipeline().switches(),
        routing,
        Duration::from_secs(10),
    );
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.switches.len(), 3);

    let mut left = 0;
    for s in topo.switches.values() {
        let now = flows(&topo, version, &s.bridge);
        left += now.len();
        let routing_left: Vec<String> = now
            .iter()
            .filter(|e| tag_of(e.flow.cookie) == routing)
            .map(|e| e.to_string())
            .collect();
        assert!(
            routing_left.is_empty(),
            "{}: routing's flows left after the removal: {routing_left:#?}",
            s.bridge
        );
        // The topology app's LLDP flow stays.
        assert!(
            now.iter()
                .any(|e| e.flow.cookie == apps::topology::LLDP_COOKIE),
            "{}: the topology app's flow went too: {now:#?}",
            s.bridge
        );
    }
    let copy_left = flows(&topo, version, s3)
        .into_iter()
        .any(|e| e.flow.cookie == copy.cookie && e.flow.matching == copy.matching);
    assert!(
        copy_left,
        "another app's flow with routing's match was deleted"
    );
    assert!(left < before, "nothing was removed ({before} flows before)");
    eprintln!(
        "lab_flows: OpenFlow {version}: {} of {before} flows removed: {report:?}",
        before - left
    );
}

#[test]
fn removing_an_apps_flows_takes_exactly_its_own_on_1_0() {
    if !enabled("lab_flows::removing_an_apps_flows_takes_exactly_its_own_on_1_0") {
        return;
    }
    let _serial = serial();
    removal(Of::V10, "i13r");
}

#[test]
fn removing_an_apps_flows_takes_exactly_its_own_on_1_3() {
    if !enabled("lab_flows::removing_an_apps_flows_takes_exactly_its_own_on_1_3") {
        return;
    }
    let _serial = serial();
    removal(Of::V13, "i13s");
}

/// `pharos run` with the default apps, on fixed ports (a restart takes the same ones).
struct Pharos(Child);

impl Pharos {
    fn start(of: SocketAddr, api: SocketAddr, dir: &Path, log: &str) -> Pharos {
        let cfg = dir.join("pharos.toml");
        std::fs::write(&cfg, "").unwrap();
        let log = std::fs::File::create(dir.join(log)).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["run", "--listen", &of.to_string(), "--workers", "1"])
            .args(["--api", &api.to_string(), "--config"])
            .arg(&cfg)
            .env("PHAROS_API_TOKEN", "lab-flows-token-0123456789")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        Pharos(child)
    }

    /// SIGKILL, as `kill -9`: no goodbye to the switches, no app stopped.
    fn kill_9(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Pharos {
    fn drop(&mut self) {
        self.kill_9();
    }
}

/// The switches `pharos run` lists (0 while its API does not answer).
fn listed(api: SocketAddr) -> usize {
    if std::net::TcpStream::connect(api).is_err() {
        return 0;
    }
    let r = std::panic::catch_unwind(|| http::request(api, "GET", "/api/v1/switches", &[], None));
    match r {
        Ok(r) if r.status == 200 => serde_json::from_slice::<Value>(&r.body)
            .ok()
            .and_then(|v| v.as_array().map(Vec::len))
            .unwrap_or(0),
        _ => 0,
    }
}

/// ping's summary: (transmitted, received).
fn ping_summary(text: &str) -> Option<(u32, u32)> {
    let line = text.lines().find(|l| l.contains("packets transmitted"))?;
    let mut nums = line
        .split(", ")
        .filter_map(|p| p.split_whitespace().next()?.parse().ok());
    Some((nums.next()?, nums.next()?))
}

#[test]
fn kill_9_and_restart_on_fattree_4_cuts_no_traffic_on_1_3() {
    if !enabled("lab_flows::kill_9_and_restart_on_fattree_4_cuts_no_traffic_on_1_3") {
        return;
    }
    let _serial = serial();
    restart(Of::V13, "i13k");
}

#[test]
fn kill_9_and_restart_on_fattree_4_cuts_no_traffic_on_1_0() {
    if !enabled("lab_flows::kill_9_and_restart_on_fattree_4_cuts_no_traffic_on_1_0") {
        return;
    }
    let _serial = serial();
    restart(Of::V10, "i13j");
}

fn restart(of_version: Of, name: &str) {
    let version = of_version.version();
    // The lab's in-process controller runs no app: the switches go to pharos run.
    let mut lab = Lab::with_apps(name, of_version, apps_by_name(&[]), false);
    let of = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let api = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut pharos = Pharos::start(of, api, lab.lab_dir(), "pharos.log");
    assert!(
        wait_until(Duration::from_secs(10), || std::net::TcpStream::connect(
            api
        )
        .is_ok()),
        "pharos run did not serve its API"
    );
    lab.lab(
        "up",
        &[
            "--topo",
            "fattree,4",
            "--of",
            of_version.flag(),
            "--controller",
            &format!("tcp:{of}"),
        ],
    )
    .expect_ok();
    let topo = parse_topo(&lab.show());
    let n = topo.switches.len();
    assert_eq!(n, 20);
    assert!(wait_until(Duration::from_secs(20), || listed(api) == n));
    assert!(
        wait_until(Duration::from_secs(60), || lab.pingall().ok()),
        "pingall never reached 100% before the restart"
    );

    // Planted: a flow with no tag and one with the tag of an app that does not run.
    let s1 = topo.switches["s1"].bridge.clone();
    let ghost = with_tag(app_tag("learning_switch"), 1);
    add_flow(&topo, version, &s1, "priority=5,in_port=99,actions=drop");
    add_flow(
        &topo,
        version,
        &s1,
        &format!("cookie={ghost:#x},priority=6,in_port=98,actions=drop"),
    );

    // h1 pings h16 (another pod: the path crosses a core switch) every 10 ms.
    let (from, to) = ("h1", "h16");
    let to_ip = topo.hosts[to].ip.clone();
    let log = "ping.log";
    let ping = lab.spawn_exec(
        from,
        &["ping", "-n", "-i", "0.01", "-c", "700", "-W", "1", &to_ip],
        log,
    );
    let replies = |lab: &Lab| {
        std::fs::read_to_string(lab.lab_dir().join(log))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("bytes from"))
            .count()
    };
    assert!(
        wait_until(Duration::from_secs(5), || replies(&lab) >= 50),
        "the ping did not get going"
    );

    pharos.kill_9();
    let restarted = Instant::now();
    let _pharos = Pharos::start(of, api, lab.lab_dir(), "pharos2.log");
    let back = wait_until(Duration::from_secs(10), || listed(api) == n);
    let all_back = restarted.elapsed();
    assert!(
        back,
        "not every switch came back to the restarted controller"
    );
    let pingall = lab.pingall();
    let pinged = restarted.elapsed();
    assert!(
        pingall.ok(),
        "pingall after the restart is not 100%:\n{pingall}"
    );
    eprintln!(
        "lab_flows: OpenFlow {version}: every switch back {all_back:.2?} after the restart, pingall 100% at {pinged:.2?}"
    );
    assert!(
        pinged <= Duration::from_secs(3),
        "switches back at {all_back:.2?}, pingall done at {pinged:.2?}: over 3 s"
    );

    let (code, text) = lab.wait_background(ping, log, Duration::from_secs(20));
    let (sent, got) = ping_summary(&text).unwrap_or_else(|| panic!("ping said:\n{text}"));
    assert_eq!(
        (code, sent - got),
        (Some(0), 0),
        "pings lost across the restart ({got} of {sent} answered)"
    );

    // No flow left that no running app owns.
    let running: Vec<u16> = DEFAULT_APPS
        .iter()
        .chain(&[apps::static_flows::NAME])
        .map(|a| app_tag(a))
        .collect();
    for s in topo.switches.values() {
        let unowned: Vec<String> = flows(&topo, version, &s.bridge)
            .iter()
            .filter(|e| !running.contains(&tag_of(e.flow.cookie)))
            .map(|e| e.to_string())
            .collect();
        assert!(
            unowned.is_empty(),
            "{}: flows no running app owns: {unowned:#?}",
            s.bridge
        );
    }
}
