//! `pharos ctl` against the routes that ask a switch (flows, port statistics, the
//! description) and the static flows, end to end: the real binary, a real `pharos run`
//! with its API on a free port, emulated switches that keep a flow table and answer
//! statistics (`emu/tables.rs`).

mod ctl_kit;

use std::time::{Duration, Instant};

use ctl_kit::*;
use emu::{Emu, Spec};
use openflow::ofctl::{parse_flow, Flow};
use testkit::emu;

const DP1: &str = "00:00:00:00:00:00:00:01";
const DP2: &str = "00:00:00:00:00:00:00:02";

/// Whether the switch's table holds `flow` (same match, priority and actions).
fn holds(sw: &Emu, flow: &str) -> bool {
    let want = parse_flow(flow).expect("a flow");
    let same = |f: &Flow| {
        f.matching == want.matching && f.priority == want.priority && f.actions == want.actions
    };
    sw.flows.iter().any(same)
}

const DROP_ICMP: &str = "priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop";

#[test]
fn ctl_adds_lists_and_deletes_flows_of_a_switch_and_shows_refusals_as_sent() {
    let c = Controller::start("flows");
    let sw = c.connect(Spec::v13(1));
    let bg = sw.in_background();
    c.ctl_until(&["switches"], |o| o.stdout.contains(DP1));

    // Added: 201 once the switch applied it (its barrier answered).
    let out = c.ctl(&["add-flow", "1", DROP_ICMP]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let added = out.stdout.strip_prefix("added: ").expect("added: FLOW");
    assert_eq!(parse_flow(added.trim()), parse_flow(DROP_ICMP));
    let sw = bg.take();
    assert!(holds(&sw, DROP_ICMP), "{:?}", sw.flows);
    let bg = sw.in_background();

    // Listed, with its counters and no app (it was not an app's).
    let out = c.ctl(&["flows", DP1]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("nw_dst=10.0.0.2"))
        .unwrap_or_else(|| panic!("not listed:\n{}", out.stdout));
    assert!(line.starts_with("-  "), "{line}");
    assert!(line.contains("n_packets="), "{line}");
    // --no-stats: lines add-flow takes back, the same flow.
    let out = c.ctl(&["flows", DP1, "--no-stats"]);
    let bare = out
        .stdout
        .lines()
        .find(|l| l.contains("nw_dst=10.0.0.2"))
        .unwrap_or_else(|| panic!("not listed:\n{}", out.stdout));
    assert!(
        !bare.contains("n_packets") && !bare.contains("duration"),
        "{bare}"
    );
    let read = parse_flow(bare).unwrap_or_else(|e| panic!("{bare}: {e}"));
    let want = parse_flow(DROP_ICMP).unwrap();
    assert_eq!(
        (read.matching, read.priority, read.actions),
        (want.matching, want.priority, want.actions)
    );
    let out = c.ctl(&["add-flow", "1", bare]);
    assert_eq!(out.code, Some(0), "{out:?}");

    // A bad flow: 400 naming the token, as sent; nothing reaches the switch.
    let out = c.ctl(&["add-flow", "1", "priority=5,nw_dsst=10.0.0.2,actions=drop"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.starts_with("pharos ctl: 400 Bad Request: ") && out.stderr.contains("nw_dsst"),
        "{}",
        out.stderr
    );
    // Refused by the switch: 422 with the error's names.
    let mut sw = bg.take();
    sw.refuse_priority = Some(7);
    let bg = sw.in_background();
    let out = c.ctl(&["add-flow", "1", "priority=7,ip,actions=drop"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .starts_with("pharos ctl: 422 Unprocessable Entity: ")
            && out.stderr.contains("FLOW_MOD_FAILED"),
        "{}",
        out.stderr
    );

    // Deleted by match: gone from the switch.
    let out = c.ctl(&["del-flows", "1", "icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            Some(0),
            "deleted the flows matching icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2\n"
        ),
        "{out:?}"
    );
    let sw = bg.take();
    assert!(!holds(&sw, DROP_ICMP), "{:?}", sw.flows);
    assert!(!sw.flows.is_empty(), "the apps' flows stay");
    let bg = sw.in_background();
    // Every flow.
    let out = c.ctl(&["del-flows", "1"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let sw = bg.take();
    assert_eq!(sw.flows, Vec::<Flow>::new());
    let bg = sw.in_background();
    let out = c.ctl(&["flows", "1"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "no flows\n"));
    drop(bg.take());
}

#[test]
fn ctl_shows_port_statistics_and_the_switch_description_and_a_silent_switch_is_504() {
    let c = Controller::start("stats");
    let sw = c.connect(Spec::v10(1));
    let bg = sw.in_background();
    c.ctl_until(&["switches"], |o| o.stdout.contains(DP1));

    // The emulated switch counts p*100 packets in, p*200 out, p*1000 bytes in...
    let out = c.ctl(&["ports", "1", "--stats"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        [
            "PORT", "NAME", "HW_ADDR", "STATE", "RX_PKTS", "TX_PKTS", "RX_BYTES", "TX_BYTES",
            "RX_DROP", "TX_DROP", "RX_ERR", "TX_ERR"
        ]
    );
    let port2 = lines.iter().find(|r| r[0] == "2").expect("port 2");
    assert_eq!(
        port2[3..8],
        ["up", "200", "400", "2000", "4000"],
        "{}",
        out.stdout
    );

    let out = c.ctl(&["switch", "1"]);
    for want in [
        "manufacturer: Pharos tests\n",
        "serial:       E1\n",
        "datapath:     emu\n",
    ] {
        assert!(out.stdout.contains(want), "no {want:?} in\n{}", out.stdout);
    }

    // A switch that never answers statistics: the server's 504, as sent, in about its
    // switch_timeout (5 s).
    let mut quiet = c.connect(Spec::v13(2));
    quiet.answer_stats = false;
    let quiet = quiet.in_background();
    c.ctl_until(&["switches"], |o| o.stdout.contains(DP2));
    let started = Instant::now();
    let out = c.ctl(&["flows", "2"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.starts_with("pharos ctl: 504 Gateway Timeout: "),
        "{}",
        out.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    drop(quiet.take());
    drop(bg.take());
}

#[test]
fn ctl_keeps_static_flows_installs_them_and_deletes_them_from_the_switch() {
    let c = Controller::start("static");
    let sw = c.connect(Spec::v13(2));
    let bg = sw.in_background();
    c.ctl_until(&["switches"], |o| o.stdout.contains(DP2));
    let block = "priority=200,ip,nw_src=10.0.0.1,actions=drop";

    let out = c.ctl(&["static", "add", "block-h1", "2", block]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains("status:  installed\n") && out.stdout.contains("source:  api\n"),
        "{}",
        out.stdout
    );
    let sw = bg.take();
    assert!(holds(&sw, block), "{:?}", sw.flows);
    let bg = sw.in_background();

    // A name taken: 409 as sent, and how to replace it.
    let out = c.ctl(&["static", "add", "block-h1", "2", block]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.starts_with("pharos ctl: 409 Conflict: ")
            && out
                .stderr
                .contains("`pharos ctl static add block-h1 ... --replace` replaces it"),
        "{}",
        out.stderr
    );
    // A flow for a switch not connected waits.
    let out = c.ctl(&["static", "add", "later", "9", "priority=5,actions=drop"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("status:  pending (switch not connected)\n"),
        "{}",
        out.stdout
    );
    let out = c.ctl(&["static", "list"]);
    let row = |name: &str| {
        out.stdout
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|r| r.first() == Some(&name))
            .unwrap_or_else(|| panic!("no {name} in\n{}", out.stdout))
    };
    assert_eq!(row("block-h1")[1..4], [DP2, "api", "installed"]);
    assert_eq!(row("later")[3], "pending");

    // Deleted: gone from the switch too.
    let out = c.ctl(&["static", "del", "block-h1"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            Some(0),
            format!("deleted static flow block-h1, and removed it from {DP2}\n").as_str()
        ),
        "{out:?}"
    );
    let sw = bg.take();
    assert!(!holds(&sw, block), "{:?}", sw.flows);
    let out = c.ctl(&["static", "show", "block-h1"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.starts_with("pharos ctl: 404 Not Found: "),
        "{}",
        out.stderr
    );
}
