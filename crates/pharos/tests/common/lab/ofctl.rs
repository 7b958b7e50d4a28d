//! `ovs-ofctl` against a lab's switches (either kind: a Pharos switch has its management
//! socket where a bridge has its own), and its `dump-flows` lines read.

use std::process::Command;
use std::time::Duration;

use super::command::{run, Out};
use super::guard::Lab;
use super::show::Topo;

/// One line of `ovs-ofctl dump-flows`.
#[derive(Debug, Clone)]
pub struct FlowEntry {
    pub priority: u32,
    pub n_packets: u64,
    pub dl_src: Option<String>,
    pub dl_dst: Option<String>,
    pub actions: String,
    pub line: String,
}

/// `ovs-ofctl -O VERSION --no-names dump-flows BRIDGE` against the lab's own Open vSwitch.
pub fn dump_flows(lab: &Lab, topo: &Topo, switch: &str) -> Vec<FlowEntry> {
    let bridge = &topo.switches[switch].bridge;
    let out = run(
        Command::new("ovs-ofctl")
            .args(["-O", lab.of.ofctl(), "--no-names", "dump-flows", bridge])
            .env("OVS_RUNDIR", &topo.run_dir),
        Duration::from_secs(15),
    );
    out.expect_ok();
    out.stdout
        .lines()
        .filter(|l| l.contains("actions="))
        .map(parse_flow)
        .collect()
}

pub fn parse_flow(line: &str) -> FlowEntry {
    let (fields, actions) = line.rsplit_once("actions=").expect("actions=");
    let mut e = FlowEntry {
        priority: 32768,
        n_packets: 0,
        dl_src: None,
        dl_dst: None,
        actions: actions.trim().to_string(),
        line: line.trim().to_string(),
    };
    for part in fields.split([',', ' ']).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        match k {
            "priority" => e.priority = v.parse().expect("priority"),
            "n_packets" => e.n_packets = v.parse().expect("n_packets"),
            "dl_src" => e.dl_src = Some(v.to_ascii_lowercase()),
            "dl_dst" => e.dl_dst = Some(v.to_ascii_lowercase()),
            _ => {}
        }
    }
    e
}

/// How long one `ovs-ofctl` command may take.
pub const OFCTL_TIMEOUT: Duration = Duration::from_secs(15);

/// `ovs-ofctl -O VERSION ARGS...` against the lab's Open vSwitch (`OVS_RUNDIR`).
pub fn ofctl(run_dir: &str, version: openflow::Version, args: &[&str]) -> Out {
    let proto = match version {
        openflow::Version::V1_0 => "OpenFlow10",
        openflow::Version::V1_3 => "OpenFlow13",
    };
    run(
        Command::new("ovs-ofctl")
            .args(["-O", proto])
            .args(args)
            .env("OVS_RUNDIR", run_dir),
        OFCTL_TIMEOUT,
    )
}

/// The flow lines of `ovs-ofctl dump-flows`.
pub fn flow_lines(dump: &Out) -> Vec<String> {
    dump.stdout
        .lines()
        .filter(|l| l.contains("actions="))
        .map(|l| l.trim().to_string())
        .collect()
}
