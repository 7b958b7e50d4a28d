//! Static flows on real Open vSwitch, with the real `pharos run` (the default apps, then
//! `static_flows`, whose flows carry its cookie tag): a flow added through
//! the REST API shows in `ovs-ofctl dump-flows` at once; it is there again after
//! `pharos lab restart s2` (the bridge made anew, its table empty) and after the
//! controller itself restarts (read back from the state file); a flow of the
//! configuration file is installed too; deleting through the API removes it from the
//! switch.
//!
//! Needs root and Open vSwitch like `tests/lab.rs`; its own lab name (`i12s`) and
//! `PHAROS_LAB_DIR`.

mod common;
use common::lab as harness;

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness::{
    apps_by_name, enabled, free_port, parse_topo, run, serial, wait_until, Lab, Of, Out, TempDir,
};
use openflow::ofctl::{parse_flow, parse_flow_entry, Flow};
use openflow::Version;
use serde_json::{json, Value};
use testkit::http;

const T: Duration = Duration::from_secs(20);
const TOKEN: &str = "lab-static-flows-token";
const DROP_PING: &str = "priority=1000,icmp,actions=drop";
const FROM_FILE: &str = "priority=900,udp,tp_dst=9999,actions=drop";

/// `pharos run` with the default apps, the API on `api` and `config`; stopped with
/// SIGTERM (as a user stops it) on drop.
struct Run(Child);

impl Run {
    fn start(of: SocketAddr, api: SocketAddr, config: &Path, log: &Path) -> Run {
        let log = std::fs::File::create(log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["run", "--listen", &of.to_string(), "--workers", "1"])
            .args(["--api", &api.to_string(), "--config"])
            .arg(config)
            .env("PHAROS_API_TOKEN", TOKEN)
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        assert!(
            wait_until(T, || TcpStream::connect(api).is_ok()),
            "pharos run's API did not listen on {api}"
        );
        Run(child)
    }

    fn stop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            self.stop();
        }
    }
}

fn call(api: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let token = format!("Bearer {TOKEN}");
    let body = body.map(|b| b.to_string().into_bytes());
    let r = http::request(
        api,
        method,
        path,
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &token),
        ],
        body.as_deref(),
    );
    let v = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    (r.status, v)
}

/// The flows of `bridge` with this priority, as `ovs-ofctl dump-flows` shows them, read
/// by our parser.
fn dumped(run_dir: &str, bridge: &str, priority: u16) -> Vec<Flow> {
    let out: Out = run(
        Command::new("ovs-ofctl")
            .args(["-O", "OpenFlow13", "dump-flows", bridge])
            .env("OVS_RUNDIR", run_dir),
        Duration::from_secs(15),
    );
    out.expect_ok();
    out.stdout
        .lines()
        .filter(|l| l.contains("actions="))
        .map(|l| {
            parse_flow_entry(l.trim())
                .unwrap_or_else(|e| panic!("{l}: {e}"))
                .flow
        })
        .filter(|f| f.priority == priority)
        .collect()
}

/// Waits until `bridge` holds exactly `want` (read back as 1.3 reports it, its cookie
/// carrying the `static_flows` app's tag, which the core stamps) at its priority.
fn wait_installed(run_dir: &str, bridge: &str, want: &str, when: &str) {
    let mut want = parse_flow(want).unwrap().read_back(Version::V1_3);
    let tag = controller::cookie::app_tag(apps::static_flows::NAME);
    want.cookie = controller::cookie::with_tag(tag, want.cookie);
    let mut last = Vec::new();
    let ok = wait_until(T, || {
        last = dumped(run_dir, bridge, want.priority);
        last == [want.clone()]
    });
    assert!(
        ok,
        "{when}: {bridge} should hold {want}; dump-flows has {last:?}"
    );
}

fn del_flows(run_dir: &str, bridge: &str, selection: &str) {
    run(
        Command::new("ovs-ofctl")
            .args([
                "-O",
                "OpenFlow13",
                "--strict",
                "del-flows",
                bridge,
                selection,
            ])
            .env("OVS_RUNDIR", run_dir),
        Duration::from_secs(15),
    )
    .expect_ok();
}

#[test]
fn a_static_flow_survives_a_switch_restart_and_a_controller_restart() {
    if !enabled(
        "lab_static_flows::a_static_flow_survives_a_switch_restart_and_a_controller_restart",
    ) {
        return;
    }
    let _serial = serial();
    let dir = TempDir::new("i12sf");
    let state = dir.0.join("static-flows.json");
    let config = dir.0.join("pharos.toml");
    std::fs::write(
        &config,
        format!(
            "[static_flows]\nstate_file = {:?}\n\n[[static_flows.flow]]\nname = \"from-file\"\ndpid = 1\nflow = {FROM_FILE:?}\n",
            state.to_str().unwrap()
        ),
    )
    .unwrap();
    let of = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let api = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let log = dir.0.join("pharos.log");
    let mut pharos = Run::start(of, api, &config, &log);

    // The lab's own in-process controller runs no app; the switches go to pharos run.
    let lab = Lab::with_apps("i12s", Of::V13, apps_by_name(&[]), false);
    let out = lab.lab(
        "up",
        &[
            "--topo",
            "linear,2",
            "--of",
            "1.3",
            "--controller",
            &format!("tcp:{of}"),
        ],
    );
    out.expect_ok();
    let topo = parse_topo(&lab.show());
    let rd = topo.run_dir.as_str();
    let (s1, s2) = (&topo.switches["s1"], &topo.switches["s2"]);
    assert!(
        wait_until(T, || call(api, "GET", "/api/v1/switches", None)
            .1
            .as_array()
            .map(Vec::len)
            == Some(2)),
        "both switches should connect to pharos run\n{out}"
    );
    // The configuration file's flow, on s1.
    wait_installed(rd, &s1.bridge, FROM_FILE, "the configuration's flow");

    // Added through the API: on s2 at once.
    let body = json!({"name": "drop-ping", "dpid": format!("{:#x}", s2.dpid), "flow": DROP_PING});
    let (status, f) = call(api, "POST", "/api/v1/static_flows", Some(&body));
    assert_eq!(status, 201, "{f}");
    assert_eq!(f["status"], "installed", "{f}");
    wait_installed(rd, &s2.bridge, DROP_PING, "added through the API");

    // s2 made anew, its table empty: installed again when it reconnects.
    lab.lab("restart", &["s2"]).expect_ok();
    wait_installed(rd, &s2.bridge, DROP_PING, "after pharos lab restart s2");

    // The controller restarts: the flow comes back from the state file. (Open vSwitch
    // keeps its flows while the controller is away, and the restarted controller keeps
    // them: they are removed first, so only a reinstall can bring them back.)
    pharos.stop();
    del_flows(rd, &s2.bridge, "priority=1000,icmp");
    del_flows(rd, &s1.bridge, "priority=900,udp,tp_dst=9999");
    assert!(dumped(rd, &s2.bridge, 1000).is_empty());
    let mut pharos = Run::start(of, api, &config, &dir.0.join("pharos2.log"));
    wait_installed(rd, &s2.bridge, DROP_PING, "after the controller restarted");
    wait_installed(
        rd,
        &s1.bridge,
        FROM_FILE,
        "the configuration's flow, after the restart",
    );
    let mut last = Value::Null;
    assert!(
        wait_until(T, || {
            last = call(api, "GET", "/api/v1/static_flows/drop-ping", None).1;
            last["status"] == "installed"
        }),
        "{last}"
    );
    assert_eq!(last["source"], "api");

    // Deleted through the API: gone from the switch.
    let (status, d) = call(api, "DELETE", "/api/v1/static_flows/drop-ping", None);
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["removed_from_switch"], true, "{d}");
    assert!(dumped(rd, &s2.bridge, 1000).is_empty());
    pharos.stop();
    drop(lab);
}
