//! End to end on real Open vSwitch: `pharos lab` (the real binary) builds labs whose
//! switches connect to a Pharos controller running in this test process (the learning
//! switch, on a free port), and hosts in network namespaces reach each other through
//! them. For OpenFlow 1.0 and 1.3 each:
//!
//! ```text
//! single,4   pingall 100%; flows in ovs-ofctl dump-flows; a second pingall rides them
//!            (no new PACKET_IN, every flow's packet count grows); a dumpcap capture of the
//!            whole session decodes with no error in `pharos ofp decode` and in tshark
//! linear,3   the same checks; iperf3 for 2 s from h1 to h3; Pharos restarted → switches
//!            back, the learned flows kept (adopted by the new controller), pingall 100%
//!            within 5 s; `pharos lab restart s2` → s2 handshaken
//!            again, pingall 100%; the capture of all that decodes cleanly too
//! tree,2,2   the same checks as single,4 (no capture)
//! ```
//!
//! Every test takes the serial lock (2 cores), uses its own lab name and its own
//! `PHAROS_LAB_DIR`, and removes everything it made even when it fails (the `Lab` guard
//! runs `pharos lab down`, stops the controller and the capture, then checks that no
//! namespace, interface or daemon of the lab is left).
//!
//! Needs root and Open vSwitch, iproute2, ping, ethtool, iperf3 and tshark
//! (`scripts/install-test-deps`): without them the tests fail saying so, unless
//! `PHAROS_SKIP_LAB=1`, when each prints "SKIPPED NAME: PHAROS_SKIP_LAB=1" and records it
//! in the file `PHAROS_SKIP_LOG` names (scripts/test counts them; CI fails on any).

mod common;
use common::lab as harness;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use harness::{dump_flows, enabled, parse_topo, run, serial, wait_until, Lab, Of, Topo};

/// How long the switches get to connect after `up` (or a restart).
const CONNECT: Duration = Duration::from_secs(10);

impl Topo {
    /// The switches a frame from host `a` to host `b` crosses (every topology here is a
    /// tree: the path is unique).
    fn path(&self, a: &str, b: &str) -> Vec<String> {
        let (from, to) = (&self.hosts[a].switch, &self.hosts[b].switch);
        let mut prev: HashMap<&str, &str> = HashMap::new();
        let mut queue = VecDeque::from([from.as_str()]);
        prev.insert(from, from);
        while let Some(s) = queue.pop_front() {
            for l in &self.links {
                for (p, q) in [(&l.a, &l.b), (&l.b, &l.a)] {
                    if p == s && !prev.contains_key(q.as_str()) {
                        prev.insert(q, s);
                        queue.push_back(q);
                    }
                }
            }
        }
        let mut path = vec![to.clone()];
        let mut at = to.as_str();
        while at != from {
            at = prev
                .get(at)
                .unwrap_or_else(|| panic!("no path from {a} to {b}"));
            path.push(at.to_string());
        }
        path.reverse();
        path
    }

    /// For each switch, the (eth_src, eth_dst) pairs of every host pair whose traffic
    /// crosses it: after a pingall the learning switch has a flow for each.
    fn expected_flows(&self) -> BTreeMap<String, BTreeSet<(String, String)>> {
        let mut want: BTreeMap<String, BTreeSet<(String, String)>> = self
            .switches
            .keys()
            .map(|s| (s.clone(), BTreeSet::new()))
            .collect();
        for a in self.hosts.keys() {
            for b in self.hosts.keys().filter(|b| *b != a) {
                for s in self.path(a, b) {
                    want.get_mut(&s)
                        .expect("a known switch")
                        .insert((self.hosts[a].mac.clone(), self.hosts[b].mac.clone()));
                }
            }
        }
        want
    }
}

// ---------------------------------------------------------------------------------------
// Learned flows

/// Every switch's learned flows, keyed (switch, eth_src, eth_dst) → packets; checks that
/// each host pair crossing a switch has its flow there, sending out a port.
fn learned_flows(lab: &Lab, topo: &Topo) -> BTreeMap<(String, String, String), u64> {
    let want = topo.expected_flows();
    let mut got = BTreeMap::new();
    for (switch, pairs) in &want {
        let flows = dump_flows(lab, topo, switch);
        let listing = || {
            flows
                .iter()
                .map(|f| f.line.as_str())
                .collect::<Vec<_>>()
                .join("\n  ")
        };
        if lab.of == Of::V13 {
            assert!(
                flows
                    .iter()
                    .any(|f| f.priority == 0 && f.actions.starts_with("CONTROLLER")),
                "{switch}: no table-miss entry to the controller:\n  {}",
                listing()
            );
        }
        for (src, dst) in pairs {
            let flow = flows
                .iter()
                .find(|f| f.dl_src.as_ref() == Some(src) && f.dl_dst.as_ref() == Some(dst))
                .unwrap_or_else(|| {
                    panic!(
                        "{switch}: no flow for {src} -> {dst} after pingall; dump-flows:\n  {}",
                        listing()
                    )
                });
            assert!(
                flow.actions.starts_with("output:"),
                "{switch}: flow {src} -> {dst} does not output to a port: {}",
                flow.line
            );
            got.insert((switch.clone(), src.clone(), dst.clone()), flow.n_packets);
        }
    }
    got
}

// ---------------------------------------------------------------------------------------
// The checks

/// `up`, then the switches connected to our controller.
fn bring_up(lab: &Lab, topo: &str) -> Topo {
    let out = lab.up(topo);
    let t = parse_topo(&lab.show());
    let n = t.switches.len();
    assert!(
        lab.ctl.wait_connected(n, CONNECT),
        "{n} switches should connect to Pharos; connected: {:?}\n{out}",
        lab.ctl
            .counters()
            .switches
            .iter()
            .map(|s| &s.dpid)
            .collect::<Vec<_>>()
    );
    let dpids: BTreeSet<u64> = lab
        .ctl
        .counters()
        .switches
        .iter()
        .map(|s| s.dpid.parse::<openflow::Dpid>().expect("dpid").0)
        .collect();
    let want: BTreeSet<u64> = t.switches.values().map(|s| s.dpid).collect();
    assert_eq!(dpids, want, "the connected switches are the lab's");
    for s in lab.ctl.counters().switches {
        assert_eq!(
            s.version,
            lab.of.version(),
            "switch {} negotiated the wrong version",
            s.dpid
        );
    }
    t
}

/// pingall must reach 100%.
#[track_caller]
fn pingall_ok(lab: &Lab, when: &str) {
    let out = lab.pingall();
    assert!(out.ok(), "pingall {when} is not 100%:\n{out}");
}

/// pingall 100%; the flows are in dump-flows; a second pingall adds no PACKET_IN for
/// the same pairs (IPv4 or ARP) and goes through those flows (their packet counts grow).
///
/// The controller's own counters (`Handle::counters`) must agree with the observer's
/// count of every PACKET_IN; the hosts' own IPv6 chatter is reported, not held against
/// the flows.
fn pingall_and_flows(lab: &Lab, topo: &Topo) {
    pingall_ok(lab, "on a fresh lab");
    lab.ctl.agreeing_counters();
    let (ip1, other1) = (lab.ctl.ipv4_arp_packet_ins(), lab.ctl.other_packet_ins());
    assert!(
        ip1 > 0,
        "pingall went through without a single IPv4/ARP PACKET_IN: the controller was not involved"
    );
    let before = learned_flows(lab, topo);
    pingall_ok(lab, "the second time");
    let second = lab.ctl.agreeing_counters();
    let (ip2, other2) = (lab.ctl.ipv4_arp_packet_ins(), lab.ctl.other_packet_ins());
    eprintln!(
        "PACKET_INs: first pingall {ip1} IPv4/ARP + {other1} other; second pingall {} IPv4/ARP + {} other; per switch {:?}",
        ip2 - ip1,
        other2 - other1,
        second
            .switches
            .iter()
            .map(|s| (s.dpid.trim_start_matches('0'), s.packet_ins))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        ip2,
        ip1,
        "the second pingall should ride the installed flows, yet sent {} IPv4/ARP PACKET_INs",
        ip2 - ip1
    );
    // The userspace datapath hands its packet counts to the OpenFlow flows from its
    // revalidator threads, about every 500 ms: counts right after the pings lag.
    let mut after = BTreeMap::new();
    let grew = wait_until(Duration::from_secs(5), || {
        after = learned_flows(lab, topo);
        before.iter().all(|(key, n)| after[key] > *n)
    });
    if !grew {
        for (key, n) in &before {
            assert!(
                after[key] > *n,
                "flow {key:?} carried none of the second pingall ({n} packets before, {} after)",
                after[key]
            );
        }
    }
}

/// iperf3 for 2 s from h1 to h3 (server `-1` in h3).
fn iperf(lab: &mut Lab, topo: &Topo) {
    let server_ip = topo.hosts["h3"].ip.clone();
    let log = "iperf3-server.log";
    let server = lab.spawn_exec("h3", &["iperf3", "-s", "-1", "-p", "5201"], log);
    // The server listens within a moment; a refused client is retried until it does.
    let deadline = Instant::now() + Duration::from_secs(10);
    let client = loop {
        let out = lab.lab(
            "exec",
            &[
                "h1",
                "--",
                "iperf3",
                "-c",
                &server_ip,
                "-p",
                "5201",
                "-t",
                "2",
                "-J",
                "--connect-timeout",
                "3000",
            ],
        );
        // iperf3 3.12 with -J exits 0 even when it could not connect: the JSON's
        // "error" says so.
        let refused = out.stdout.contains("Connection refused");
        if !refused || Instant::now() > deadline {
            break out;
        }
        thread::sleep(Duration::from_millis(100));
    };
    let (code, server_log) = lab.wait_background(server, log, Duration::from_secs(10));
    assert!(
        client.ok(),
        "iperf3 h1 -> h3 failed:\n{client}\nserver (exit {code:?}):\n{server_log}"
    );
    let report: serde_json::Value = serde_json::from_str(&client.stdout).expect("iperf3 -J");
    assert!(
        report.get("error").is_none(),
        "iperf3 h1 -> h3 failed:\n{client}\nserver (exit {code:?}):\n{server_log}"
    );
    let received = report["end"]["sum_received"]["bytes"].as_u64().unwrap_or(0);
    let bps = report["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or(0.0);
    let seconds = report["end"]["sum_received"]["seconds"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(
        received > 1_000_000 && seconds >= 1.5,
        "iperf3 moved {received} bytes in {seconds:.1} s:\n{client}"
    );
    eprintln!(
        "iperf3 h1 -> h3: {:.1} MB in {seconds:.1} s, {:.0} Mbit/s",
        received as f64 / 1e6,
        bps / 1e6
    );
    assert_eq!(code, Some(0), "iperf3 server:\n{server_log}");
}

/// Pharos stopped and started again on the same port: every switch back, the learned
/// flows still there (the switches keep their flows while disconnected, fail_mode=secure,
/// and the new controller adopts the flows that carry the learning switch's tag instead
/// of emptying the tables: see `controller::reconcile`), and pingall 100% within 5 s of
/// the restart.
fn restart_pharos(lab: &mut Lab, topo: &Topo) {
    let n = topo.switches.len();
    let learned = |lab: &Lab| -> BTreeSet<String> {
        topo.switches
            .keys()
            .flat_map(|s| {
                dump_flows(lab, topo, s)
                    .into_iter()
                    .filter(|f| f.dl_src.is_some())
                    .map(move |f| format!("{s} {:?} {:?}", f.dl_src, f.dl_dst))
            })
            .collect()
    };
    let before = learned(lab);
    assert!(!before.is_empty(), "no learned flow before the restart");
    let t0 = Instant::now();
    lab.ctl.restart();
    let back = lab.ctl.wait_connected(n, Duration::from_secs(5));
    let connected = t0.elapsed();
    assert!(
        back,
        "{n} switches should reconnect within 5 s of the restart; {} did",
        lab.ctl.counters().switches.len()
    );
    // Handshaken by the new controller, which read every table and kept the learning
    // switch's flows: none of them went.
    let after = learned(lab);
    let gone: Vec<&String> = before.difference(&after).collect();
    assert!(
        gone.is_empty(),
        "the new controller should keep the learned flows; gone: {gone:#?}"
    );
    let tag = controller::cookie::app_tag("learning_switch");
    for s in topo.switches.keys() {
        for f in dump_flows(lab, topo, s) {
            let e = openflow::ofctl::parse_flow_entry(&f.line).expect("a dump-flows line");
            assert_eq!(
                controller::cookie::tag_of(e.flow.cookie),
                tag,
                "{s}: a flow that is not the learning switch's: {}",
                f.line
            );
        }
    }
    pingall_ok(lab, "after Pharos restarted");
    let took = t0.elapsed();
    eprintln!(
        "Pharos restarted: switches back after {connected:.1?}, pingall 100% after {took:.1?}"
    );
    assert!(
        took < Duration::from_secs(5),
        "pingall 100% should come within 5 s of the restart; took {took:.1?}"
    );
}

/// `pharos lab restart s2`: s2 deleted and re-created, handshaken again by Pharos, and
/// pingall 100%.
fn restart_switch(lab: &Lab, topo: &Topo) {
    let dpid = openflow::Dpid(topo.switches["s2"].dpid).to_string();
    let before = lab.ctl.counters();
    let out = lab.lab("restart", &["s2"]);
    out.expect_ok();
    let handshaken = wait_until(CONNECT, || {
        let c = lab.ctl.counters();
        c.total.established > before.total.established && c.switches.iter().any(|s| s.dpid == dpid)
    });
    let now = lab.ctl.counters();
    assert!(
        handshaken,
        "s2 should be handshaken again after pharos lab restart s2 (established {} -> {}, connected {:?})\n{out}",
        before.total.established,
        now.total.established,
        now.switches.iter().map(|s| &s.dpid).collect::<Vec<_>>()
    );
    assert!(
        lab.ctl.wait_connected(topo.switches.len(), CONNECT),
        "every switch connected after the restart of s2"
    );
    pingall_ok(lab, "after pharos lab restart s2");
    // The re-created s2 started with an empty table: its flows for every pair crossing
    // it were learned from the new session (learned_flows fails if one is missing).
    learned_flows(lab, topo);
}

/// The capture of the whole session decodes with no error in `pharos ofp decode` and in
/// tshark, and both see the same number of OpenFlow messages of the lab's version.
fn check_capture(lab: &mut Lab) {
    let port = lab.ctl.port;
    let out = lab.down();
    out.expect_ok();
    lab.ctl.stop();
    let captured = lab.stop_capture();
    // Outside the lab dir, so that a failing check leaves it for a look.
    let file = std::env::temp_dir().join(format!("pharos-e2e-{}-{port}.pcapng", lab.name));
    std::fs::copy(&captured, &file).expect("copy the capture");
    let kept = KeepOnPanic(file.clone());
    let file_s = file.to_str().expect("UTF-8 path").to_string();
    let port_s = port.to_string();

    let decode = run(
        Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["ofp", "decode", "--port", &port_s, &file_s]),
        Duration::from_secs(60),
    );
    assert!(
        decode.ok(),
        "pharos ofp decode found errors:\n{}\n{}",
        decode.what,
        decode.stderr
    );
    let summary = decode.stderr.lines().last().unwrap_or("");
    assert!(
        summary.contains(" 0 errors") && !summary.contains("warning"),
        "pharos ofp decode: {summary}"
    );
    let want_version = match lab.of {
        Of::V10 => "OF1.0",
        Of::V13 => "OF1.3",
        Of::Mixed => unimplemented!("the capture checks take one version"),
    };
    let ours: Vec<&str> = decode
        .stdout
        .lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(": ").map(|(_, m)| m))
        .collect();
    for t in [
        "HELLO",
        "FEATURES_REPLY",
        "PACKET_IN",
        "PACKET_OUT",
        "FLOW_MOD",
    ] {
        assert!(
            ours.iter()
                .any(|m| m.starts_with(&format!("{want_version} {t} "))),
            "pharos ofp decode shows no {want_version} {t}:\n{summary}"
        );
    }

    let decode_as = format!("tcp.port=={port},openflow");
    let bad = run(
        Command::new("tshark").args([
            "-r",
            &file_s,
            "-d",
            &decode_as,
            "-Y",
            "_ws.malformed || _ws.expert.severity == \"Error\"",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ]),
        Duration::from_secs(60),
    );
    assert!(bad.ok(), "tshark failed:\n{bad}");
    // Wireshark 4.0's OpenFlow 1.0 dissector reads an action header after every
    // FLOW_MOD, so it calls one with no actions (72 bytes) malformed. OpenFlow 1.0
    // allows none (`actions[0]`, the length says how many; a DELETE needs none), and the
    // learning switch's delete-all is one. Such frames are let through, and only they:
    // pharos ofp decode must find such a FLOW_MOD in each frame tshark complains about.
    let action_less = |frame: &str| {
        decode.stdout.lines().any(|l| {
            l.starts_with('#')
                && l.contains(&format!(" frame {frame} "))
                && l.contains(": OF1.0 FLOW_MOD ")
                && l.ends_with(" len=72")
        })
    };
    let (tolerated, errors): (Vec<&str>, Vec<&str>) = bad
        .stdout
        .lines()
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .partition(|f| action_less(f));
    assert!(
        errors.is_empty(),
        "tshark finds malformed packets or expert errors in frames {errors:?} of {file_s}:\n{}",
        run(
            Command::new("tshark").args([
                "-r",
                &file_s,
                "-d",
                &decode_as,
                "-Y",
                "_ws.malformed || _ws.expert.severity == \"Error\""
            ]),
            Duration::from_secs(60)
        )
        .stdout
    );
    if !tolerated.is_empty() {
        eprintln!(
            "tshark: frames {tolerated:?} hold OpenFlow 1.0 FLOW_MODs without actions, which Wireshark 4.0 calls malformed (they are not)"
        );
    }
    let type_field = match lab.of {
        Of::V10 => "openflow_1_0.type",
        Of::V13 => "openflow_v4.type",
        Of::Mixed => unimplemented!("the capture checks take one version"),
    };
    let types = run(
        Command::new("tshark").args([
            "-r",
            &file_s,
            "-d",
            &decode_as,
            "-Y",
            lab.of.tshark_proto(),
            "-T",
            "fields",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=,",
            "-e",
            type_field,
        ]),
        Duration::from_secs(60),
    );
    assert!(types.ok(), "tshark failed:\n{types}");
    let theirs = types
        .stdout
        .lines()
        .flat_map(|l| l.split(','))
        .filter(|t| !t.trim().is_empty())
        .count();
    let ours_n = ours.iter().filter(|m| m.starts_with(want_version)).count();
    eprintln!(
        "capture: {} bytes, {ours_n} {want_version} messages in pharos ofp decode, {theirs} in tshark; {summary}",
        std::fs::metadata(&file).map_or(0, |m| m.len())
    );
    assert_eq!(
        ours_n, theirs,
        "pharos ofp decode and tshark count different numbers of {want_version} messages"
    );
    drop(kept);
}

/// A file removed on drop, unless the test is failing: then it is kept and named.
struct KeepOnPanic(std::path::PathBuf);

impl Drop for KeepOnPanic {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("capture kept for a look: {}", self.0.display());
        } else {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The tests: one lab per topology and version, carrying several checks.

/// single,4: pingall, flows, a second pingall on the flows, and a capture of the whole
/// session decoding cleanly.
fn single(test: &str, name: &str, of: Of) {
    single_on(test, Lab::new(name, of, true))
}

fn single_on(test: &str, mut lab: Lab) {
    let _serial = serial();
    if !enabled(test) {
        return;
    }
    let t0 = Instant::now();
    let topo = bring_up(&lab, "single,4");
    assert_eq!((topo.switches.len(), topo.hosts.len()), (1, 4));
    pingall_and_flows(&lab, &topo);
    check_capture(&mut lab);
    drop(lab);
    eprintln!("lab::{test}: {:.1?}", t0.elapsed());
}

/// linear,3: pingall, flows, iperf3, Pharos restarted, s2 restarted, and the capture
/// of it all (two controller lifetimes, a switch re-created) decoding cleanly.
fn linear(test: &str, name: &str, of: Of) {
    linear_on(test, Lab::new(name, of, true))
}

fn linear_on(test: &str, mut lab: Lab) {
    let _serial = serial();
    if !enabled(test) {
        return;
    }
    let t0 = Instant::now();
    let topo = bring_up(&lab, "linear,3");
    assert_eq!((topo.switches.len(), topo.hosts.len()), (3, 3));
    pingall_and_flows(&lab, &topo);
    iperf(&mut lab, &topo);
    restart_pharos(&mut lab, &topo);
    restart_switch(&lab, &topo);
    check_capture(&mut lab);
    drop(lab);
    eprintln!("lab::{test}: {:.1?}", t0.elapsed());
}

/// tree,2,2: pingall, flows, a second pingall on the flows.
fn tree(test: &str, name: &str, of: Of) {
    tree_on(test, Lab::new(name, of, false))
}

fn tree_on(test: &str, lab: Lab) {
    let _serial = serial();
    if !enabled(test) {
        return;
    }
    let t0 = Instant::now();
    let topo = bring_up(&lab, "tree,2,2");
    assert_eq!((topo.switches.len(), topo.hosts.len()), (3, 4));
    pingall_and_flows(&lab, &topo);
    drop(lab);
    eprintln!("lab::{test}: {:.1?}", t0.elapsed());
}

#[test]
fn single_of10() {
    single("single_of10", "e2a", Of::V10);
}

#[test]
fn single_of13() {
    single("single_of13", "e2b", Of::V13);
}

#[test]
fn linear_of10() {
    linear("linear_of10", "e2c", Of::V10);
}

#[test]
fn linear_of13() {
    linear("linear_of13", "e2d", Of::V13);
}

#[test]
fn tree_of10() {
    tree("tree_of10", "e2e", Of::V10);
}

#[test]
fn tree_of13() {
    tree("tree_of13", "e2f", Of::V13);
}

// The same checks on Pharos's own switch (`pharos lab up --switch pharos`, issue 17).

#[test]
fn single_of10_pharos_switch() {
    single_on(
        "single_of10_pharos_switch",
        Lab::new("e2g", Of::V10, true).pharos_switch(),
    );
}

#[test]
fn single_of13_pharos_switch() {
    single_on(
        "single_of13_pharos_switch",
        Lab::new("e2h", Of::V13, true).pharos_switch(),
    );
}

#[test]
fn linear_of10_pharos_switch() {
    linear_on(
        "linear_of10_pharos_switch",
        Lab::new("e2i", Of::V10, true).pharos_switch(),
    );
}

#[test]
fn linear_of13_pharos_switch() {
    linear_on(
        "linear_of13_pharos_switch",
        Lab::new("e2j", Of::V13, true).pharos_switch(),
    );
}

#[test]
fn tree_of10_pharos_switch() {
    tree_on(
        "tree_of10_pharos_switch",
        Lab::new("e2k", Of::V10, false).pharos_switch(),
    );
}

#[test]
fn tree_of13_pharos_switch() {
    tree_on(
        "tree_of13_pharos_switch",
        Lab::new("e2l", Of::V13, false).pharos_switch(),
    );
}

// And with the switches' AF_XDP data path (`--switch-datapath af_xdp`): ping, iperf (TCP),
// restarts and the capture, as on AF_PACKET.

#[test]
fn linear_of10_pharos_switch_af_xdp() {
    linear_on(
        "linear_of10_pharos_switch_af_xdp",
        Lab::new("e2m", Of::V10, true).pharos_switch_on("af_xdp"),
    );
}

#[test]
fn linear_of13_pharos_switch_af_xdp() {
    linear_on(
        "linear_of13_pharos_switch_af_xdp",
        Lab::new("e2n", Of::V13, true).pharos_switch_on("af_xdp"),
    );
}

/// The skip is recorded where scripts/test counts it: this test binary, run again on
/// one lab test with `PHAROS_SKIP_LAB=1`, passes it and writes one line to the file
/// `PHAROS_SKIP_LOG` names.
#[test]
fn a_skipped_lab_test_is_recorded_not_silent() {
    let log = std::env::temp_dir().join(format!("pharos-skip-log-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "single_of13", "--nocapture"])
        .env("PHAROS_SKIP_LAB", "1")
        .env("PHAROS_SKIP_LOG", &log)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    let recorded = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(recorded, "SKIPPED single_of13: PHAROS_SKIP_LAB=1\n");
    std::fs::remove_file(&log).unwrap();
}
