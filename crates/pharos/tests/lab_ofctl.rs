//! `ovs-ofctl` syntax against the real thing: every flow of the corpus
//! (`crates/openflow/tests/ofctl_corpus.txt`) is installed with `ovs-ofctl add-flow` on
//! an Open vSwitch bridge of each version the corpus gives it (a mixed `linear,2` lab:
//! s1 speaks OpenFlow 1.0, s2 1.3), read back with `ovs-ofctl dump-flows`, and the dumped
//! line, parsed by `openflow::ofctl`, must be the flow our parser made of the corpus line
//! (as that version reports it: `Flow::read_back`). Each flow goes in twice: as written
//! in the corpus (unless it uses a name Open vSwitch lacks) and as our printer writes it.
//! That proves that the syntax means to us what it means to Open vSwitch, and that what we
//! print is accepted and understood by it. Then each flow goes in a third time, as the
//! FLOW_MOD our encoder makes for the switch's version (`Flow::to_message`), sent by the
//! Pharos controller the switches are connected to: the dumped flow must be the same
//! again, which proves the wire encoding means what the syntax says (the REST API's path).
//! Last, the switch's own FLOW_STATS reply (asked for on the bridge's management socket,
//! as a controller asks) must decode (`FlowEntry::from_message`) to that flow too, and
//! print as a `dump-flows` line that parses back to it.
//!
//! Needs root and Open vSwitch (`scripts/install-test-deps`): without them the test fails
//! saying so, unless `PHAROS_SKIP_LAB=1`, when the skip is recorded (scripts/test counts
//! it; CI refuses it).

mod common;
use common::lab as harness;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use harness::{
    apps_by_name, enabled, flow_lines, ofctl, parse_topo, serial, wait_until, Lab, Of,
    OFCTL_TIMEOUT,
};
use openflow::ofctl::{parse_flow, parse_flow_entry, parse_match, Flow, FlowEntry, FlowModCommand};
use openflow::{of10, of13, Message, Version};

const CORPUS: &str = include_str!("../../openflow/tests/ofctl_corpus.txt");
const CONNECT: Duration = Duration::from_secs(10);

/// How long a FLOW_MOD sent through Pharos may take to show in dump-flows.
const APPLIED: Duration = Duration::from_secs(5);

/// Compares the one flow `lines` holds with `want`; a failure's text, or `None`.
fn differs(ctx: &str, lines: &[String], want: &Flow) -> Option<String> {
    if lines.len() != 1 {
        return Some(format!(
            "{ctx}\n  dump-flows shows {} flows: {lines:?}",
            lines.len()
        ));
    }
    let dumped = &lines[0];
    match parse_flow_entry(dumped) {
        Err(e) => Some(format!("{ctx}\n  dumped {dumped:?}\n  does not parse: {e}")),
        Ok(entry) if entry.counters.is_none() => {
            Some(format!("{ctx}\n  dumped {dumped:?}: no counters read"))
        }
        Ok(entry) if &entry.flow != want => Some(format!(
            "{ctx}\n  dumped   {dumped}\n  read as  {}\n  expected {want}",
            entry.flow
        )),
        Ok(_) => None,
    }
}

/// The flow table of `bridge` as its FLOW_STATS reply gives it, asked for on the bridge's
/// management socket (`RUN_DIR/BRIDGE.mgmt`) in `version` with `Flow::stats_request`,
/// decoded by `FlowEntry::from_message`.
fn flow_stats(run_dir: &str, bridge: &str, version: Version) -> Vec<FlowEntry> {
    let path = format!("{run_dir}/{bridge}.mgmt");
    let mut sock = UnixStream::connect(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    sock.set_read_timeout(Some(OFCTL_TIMEOUT)).unwrap();
    let wire = match version {
        Version::V1_0 => 0x01,
        Version::V1_3 => 0x04,
    };
    // Every flow of every table, as `ovs-ofctl dump-flows` asks.
    let request = parse_match("").unwrap().stats_request(version).unwrap();
    let mut out = vec![wire, 0, 0, 8, 0, 0, 0, 1]; // HELLO
    request.encode(7, &mut out).unwrap();
    sock.write_all(&out).unwrap();
    let mut entries = Vec::new();
    loop {
        let mut head = [0u8; 8];
        sock.read_exact(&mut head)
            .unwrap_or_else(|e| panic!("{path}: no flow stats reply: {e}"));
        let len = u16::from_be_bytes([head[2], head[3]]) as usize;
        let mut frame = head.to_vec();
        frame.resize(len.max(8), 0);
        sock.read_exact(&mut frame[8..]).unwrap();
        let (xid, msg) = Message::decode(&frame).unwrap_or_else(|e| panic!("{path}: {e}"));
        if xid != 7 {
            continue; // the HELLO
        }
        let more = match &msg {
            Message::V10(of10::Message::StatsReply(r)) => r.flags & 1 != 0,
            Message::V13(of13::Message::MultipartReply(r)) => r.flags & 1 != 0,
            other => panic!("{path}: not a flow stats reply: {other:?}"),
        };
        for e in FlowEntry::from_message(&msg).expect("a flow stats reply") {
            entries.push(e.unwrap_or_else(|e| panic!("{path}: {e}")));
        }
        if !more {
            return entries;
        }
    }
}

#[test]
fn corpus_means_the_same_to_open_vswitch() {
    if !enabled("lab_ofctl::corpus_means_the_same_to_open_vswitch") {
        return;
    }
    let _lock = serial();
    // No app: nothing but this test writes to the flow tables.
    let lab = Lab::with_apps("ofc", Of::Mixed, apps_by_name(&[]), false);
    let out = lab.up("linear,2");
    let topo = parse_topo(&lab.show());
    assert!(
        lab.ctl.wait_connected(2, CONNECT),
        "both switches should connect\n{out}"
    );
    let bridge = |v: Version| match v {
        Version::V1_0 => topo.switches["s1"].bridge.clone(),
        Version::V1_3 => topo.switches["s2"].bridge.clone(),
    };
    let rd = topo.run_dir.as_str();
    // What the corpus's 1.3 flows refer to: group 1, meters 1 and 2.
    let b13 = bridge(Version::V1_3);
    ofctl(
        rd,
        Version::V1_3,
        &["add-group", &b13, "group_id=1,type=all,bucket=output:1"],
    )
    .expect_ok();
    for m in [
        "meter=1,kbps,band=type=drop,rate=1000",
        "meter=2,pktps,band=type=drop,rate=10",
    ] {
        ofctl(rd, Version::V1_3, &["add-meter", &b13, m]).expect_ok();
    }

    let mut failures = Vec::new();
    let mut installed = 0;
    let mut sent = 0;
    let mut read = 0;
    let switches = lab.ctl.pipeline().switches().clone();
    for (no, line) in CORPUS.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (vs, text) = line.split_once(" | ").expect("VERSIONS | FLOW");
        let ovs_knows_names = !vs.ends_with('*');
        let versions: &[Version] = match vs.trim_end_matches('*') {
            "both" => &[Version::V1_0, Version::V1_3],
            "1.0" => &[Version::V1_0],
            "1.3" => &[Version::V1_3],
            other => panic!("line {}: bad versions {other:?}", no + 1),
        };
        let flow = parse_flow(text).unwrap_or_else(|e| panic!("line {}: {e}", no + 1));
        let printed = flow.to_string();
        let mut forms = vec![];
        if ovs_knows_names {
            forms.push(text.to_string());
        }
        if printed != text {
            forms.push(printed);
        }
        for &v in versions {
            let br = bridge(v);
            let want = flow.read_back(v);
            // 1 and 2: as written and as printed, through ovs-ofctl.
            for form in &forms {
                let ctx = format!("line {} on OpenFlow {v}: {form}", no + 1);
                ofctl(rd, v, &["del-flows", &br]).expect_ok();
                let add = ofctl(rd, v, &["add-flow", &br, form]);
                if !add.ok() {
                    failures.push(format!(
                        "{ctx}\n  ovs-ofctl add-flow refused it: {}",
                        add.stderr.trim()
                    ));
                    continue;
                }
                installed += 1;
                let dump = ofctl(rd, v, &["--no-names", "dump-flows", &br]);
                dump.expect_ok();
                failures.extend(differs(&ctx, &flow_lines(&dump), &want));
            }
            // 3: our FLOW_MOD, sent by Pharos.
            let ctx = format!("line {} on OpenFlow {v}, sent by Pharos: {text}", no + 1);
            ofctl(rd, v, &["del-flows", &br]).expect_ok();
            let msg = flow
                .to_message(v, FlowModCommand::Add)
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let dpid = topo.switches[if v == Version::V1_0 { "s1" } else { "s2" }].dpid;
            switches
                .send(openflow::Dpid(dpid), &msg)
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let mut lines = Vec::new();
            wait_until(APPLIED, || {
                lines = flow_lines(&ofctl(rd, v, &["--no-names", "dump-flows", &br]));
                !lines.is_empty()
            });
            sent += 1;
            failures.extend(differs(&ctx, &lines, &want));
            // 4: the switch's FLOW_STATS reply, decoded and printed by us.
            let stats = flow_stats(rd, &br, v);
            let ctx = format!("line {} on OpenFlow {v}, FLOW_STATS: {text}", no + 1);
            match stats.as_slice() {
                [e] if e.flow == want && parse_flow_entry(&e.to_string()).as_ref() == Ok(e) => {
                    read += 1
                }
                other => failures.push(format!(
                    "{ctx}\n  reply read as {:?}\n  expected {want}",
                    other.iter().map(|e| e.to_string()).collect::<Vec<_>>()
                )),
            }
        }
    }
    ofctl(rd, Version::V1_0, &["del-flows", &bridge(Version::V1_0)]).expect_ok();
    ofctl(rd, Version::V1_3, &["del-flows", &b13]).expect_ok();
    assert!(
        failures.is_empty(),
        "{} of {} installs differ:\n\n{}",
        failures.len(),
        installed + sent + read,
        failures.join("\n\n")
    );
    assert!(
        installed >= 120 && sent >= 100 && read == sent,
        "only {installed} flows installed by ovs-ofctl, {sent} by Pharos, {read} read back"
    );
    eprintln!(
        "lab_ofctl: {installed} flows installed by ovs-ofctl and {sent} by Pharos, all dumped \
         identically; {read} FLOW_STATS replies decoded to the same flows"
    );
}
