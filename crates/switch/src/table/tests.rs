use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use openflow::model::{FlowModCommand, PortNo};
use openflow::ofctl::{parse_flow, parse_match, Flow, FlowAction, FlowMatch};
use openflow::Version;

use super::testutil::{checksums_ok, frame, udp, Ip4, Recorder};
use super::*;
use crate::{Egress, ToController};

fn v10() -> Pipeline {
    Pipeline::new(PipelineConfig {
        version: Version::V1_0,
        tables: 1,
        max_flows: 1000,
    })
}

pub(super) fn v13(tables: u8) -> Pipeline {
    Pipeline::new(PipelineConfig {
        version: Version::V1_3,
        tables,
        max_flows: 1000,
    })
}

fn flow(s: &str) -> Flow {
    parse_flow(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn fm(
    p: &mut Pipeline,
    command: FlowModCommand,
    s: &str,
) -> Result<Vec<RemovedFlow>, FlowModError> {
    fm_out(p, command, s, None)
}

fn fm_out(
    p: &mut Pipeline,
    command: FlowModCommand,
    s: &str,
    out_port: Option<PortNo>,
) -> Result<Vec<RemovedFlow>, FlowModError> {
    let f = flow(s);
    let mut removed = Vec::new();
    p.flow_mod(
        &FlowModRequest {
            command,
            flow: &f,
            out_port,
            out_group: None,
        },
        Instant::now(),
        &mut removed,
    )?;
    Ok(removed)
}

/// A flow with a cookie mask (which the add-flow parser refuses).
fn masked(s: &str, cookie: u64, cookie_mask: u64) -> Flow {
    Flow {
        cookie,
        cookie_mask,
        ..flow(s)
    }
}

fn fm_flow(p: &mut Pipeline, command: FlowModCommand, f: &Flow) -> Vec<RemovedFlow> {
    let mut removed = Vec::new();
    let req = FlowModRequest {
        command,
        flow: f,
        out_port: None,
        out_group: None,
    };
    p.flow_mod(&req, Instant::now(), &mut removed).unwrap();
    removed
}

fn add(p: &mut Pipeline, s: &str) {
    fm(p, FlowModCommand::Add, s).unwrap();
}

fn run(p: &mut Pipeline, in_port: u32, f: &[u8]) -> Vec<Egress> {
    let mut r = Recorder::default();
    p.process(in_port, f, Instant::now(), &mut r);
    r.egresses()
}

fn all_flows(p: &Pipeline) -> Vec<openflow::ofctl::FlowEntry> {
    let any = FlowMatch::default();
    p.flows(
        &StatsFilter {
            table: None,
            matching: &any,
            out_port: None,
            out_group: None,
            cookie: 0,
            cookie_mask: 0,
        },
        Instant::now(),
    )
}

const NO_MATCH: Egress = Egress::Controller {
    max_len: 0xffff,
    reason: ToController::NoMatch,
    table_id: 0,
    cookie: 0,
};

/// The 1.0 match with no wildcards of `udp(1, 2)` on port 1.
const EXACT_UDP: &str = "in_port=1,dl_src=02:00:00:00:00:01,dl_dst=02:00:00:00:00:02,dl_vlan=0xffff,udp,nw_tos=0,nw_src=10.0.0.1,nw_dst=10.0.0.2,tp_src=1000,tp_dst=2000";

/// The 1.0 match of `packet_arp()` on port 3 (the ports and TOS wildcarded, as
/// `packet::of10_match` gives it).
const ARP_MATCH: &str = "in_port=3,dl_src=02:00:00:00:00:01,dl_dst=ff:ff:ff:ff:ff:ff,dl_vlan=0xffff,arp,arp_op=1,arp_spa=10.0.0.1,arp_tpa=10.0.0.2";

#[test]
fn v10_miss_goes_to_the_controller_and_v13_miss_is_dropped() {
    assert_eq!(run(&mut v10(), 1, &udp(1, 2)), vec![NO_MATCH]);
    assert_eq!(run(&mut v13(4), 1, &udp(1, 2)), vec![]);
    let mut p = v13(4);
    add(&mut p, "priority=0,actions=controller");
    assert_eq!(
        run(&mut p, 1, &udp(1, 2)),
        vec![NO_MATCH],
        "the table-miss flow's PACKET_IN says no match"
    );
    add(&mut p, "priority=1,actions=controller");
    let e = run(&mut p, 1, &udp(1, 2));
    assert!(
        matches!(
            e[..],
            [Egress::Controller {
                reason: ToController::Action,
                ..
            }]
        ),
        "{e:?}"
    );
}

#[test]
fn higher_priority_wins_among_wildcard_flows() {
    let mut p = v10();
    add(&mut p, "priority=10,in_port=1,actions=output:2");
    add(&mut p, "priority=20,udp,actions=output:3");
    add(&mut p, "priority=5,actions=output:4");
    assert_eq!(run(&mut p, 1, &udp(1, 2)), vec![Egress::Port(3)]);
    let arp = packet_arp();
    assert_eq!(run(&mut p, 1, &arp), vec![Egress::Port(2)]);
    assert_eq!(run(&mut p, 2, &arp), vec![Egress::Port(4)]);
    add(
        &mut p,
        "priority=30,dl_src=02:00:00:00:00:01,actions=output:5",
    );
    assert_eq!(run(&mut p, 1, &udp(1, 2)), vec![Egress::Port(5)]);
    assert_eq!(run(&mut p, 2, &arp), vec![Egress::Port(5)]);
    assert_eq!(run(&mut p, 7, &udp(9, 2)), vec![Egress::Port(3)]);
}

fn packet_arp() -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    f
}

#[test]
fn v10_exact_flow_beats_any_wildcard_flow() {
    let mut p = v10();
    let f = udp(1, 2);
    add(&mut p, "priority=65535,ip,actions=output:3");
    let exact = EXACT_UDP;
    add(&mut p, &format!("priority=1,{exact},actions=output:2"));
    assert_eq!(run(&mut p, 1, &f), vec![Egress::Port(2)], "{exact}");
    // In 1.3 priority decides.
    let mut p = v13(1);
    add(&mut p, "priority=65535,ip,actions=output:3");
    add(&mut p, &format!("priority=1,{exact},actions=output:2"));
    assert_eq!(run(&mut p, 1, &f), vec![Egress::Port(3)]);
}

#[test]
fn v10_exact_flow_from_an_untagged_arp_frame_is_exact() {
    let mut p = v10();
    let f = packet_arp();
    add(&mut p, "priority=65535,arp,actions=output:9");
    add(&mut p, &format!("priority=1,{ARP_MATCH},actions=output:2"));
    // With the ports and TOS wildcarded it is not exact: priority decides.
    assert_eq!(run(&mut p, 3, &f), vec![Egress::Port(9)]);
    // With them given (0, what the frame's key holds), it is exact and wins.
    let exact = Flow {
        priority: 1,
        actions: vec![FlowAction::Output {
            port: PortNo::Physical(4),
        }],
        matching: FlowMatch {
            tp_src: Some(0),
            tp_dst: Some(0),
            ip_dscp: Some(0),
            ..flow(&format!("{ARP_MATCH},actions=drop")).matching
        },
        ..Flow::default()
    };
    let mut removed = Vec::new();
    p.flow_mod(
        &FlowModRequest {
            command: FlowModCommand::Add,
            flow: &exact,
            out_port: None,
            out_group: None,
        },
        Instant::now(),
        &mut removed,
    )
    .unwrap();
    assert_eq!(run(&mut p, 3, &f), vec![Egress::Port(4)]);
}

#[test]
fn add_replaces_an_identical_flow_and_counters_follow_each_spec() {
    for (version, reset, kept) in [
        (Version::V1_0, "", false),
        (Version::V1_3, "", true),
        (Version::V1_3, "reset_counts,", false),
    ] {
        let mut p = Pipeline::new(PipelineConfig {
            version,
            tables: 1,
            max_flows: 10,
        });
        add(&mut p, "priority=10,udp,actions=output:2");
        run(&mut p, 1, &udp(1, 2));
        run(&mut p, 1, &udp(1, 2));
        add(&mut p, &format!("priority=10,{reset}udp,actions=output:3"));
        assert_eq!(p.len(), 1);
        assert_eq!(run(&mut p, 1, &udp(1, 2)), vec![Egress::Port(3)]);
        let n = all_flows(&p)[0].counters.unwrap().packet_count;
        assert_eq!(n, if kept { 3 } else { 1 }, "{version:?} {reset}");
        // Another priority is another flow.
        add(&mut p, "priority=11,udp,actions=output:4");
        assert_eq!(p.len(), 2);
    }
}

#[test]
fn modify_changes_covered_flows_and_v10_adds_when_none() {
    let mut p = v10();
    add(&mut p, "priority=10,udp,nw_dst=10.0.0.2,actions=output:2");
    add(&mut p, "priority=10,tcp,actions=output:2");
    fm(&mut p, FlowModCommand::Modify, "udp,actions=output:7").unwrap();
    assert_eq!(run(&mut p, 1, &udp(1, 2)), vec![Egress::Port(7)]);
    let tcp = frame(
        [2; 6],
        [3; 6],
        None,
        &Ip4 {
            proto: 6,
            ..Ip4::default()
        },
    );
    assert_eq!(
        run(&mut p, 1, &tcp),
        vec![Egress::Port(2)],
        "not covered by udp"
    );
    assert_eq!(p.len(), 2);
    // modify_strict needs the same match and priority.
    fm(
        &mut p,
        FlowModCommand::ModifyStrict,
        "priority=9,tcp,actions=output:8",
    )
    .unwrap();
    assert_eq!(p.len(), 3, "1.0: a modify that selects nothing adds");
    assert_eq!(run(&mut p, 1, &tcp), vec![Egress::Port(2)]);
    fm(
        &mut p,
        FlowModCommand::ModifyStrict,
        "priority=10,tcp,actions=output:9",
    )
    .unwrap();
    assert_eq!(run(&mut p, 1, &tcp), vec![Egress::Port(9)]);

    let mut p = v13(1);
    fm(&mut p, FlowModCommand::Modify, "udp,actions=output:7").unwrap();
    assert!(
        p.is_empty(),
        "1.3: a modify that selects nothing adds nothing"
    );
}

#[test]
fn delete_selects_covered_flows_with_out_port_and_strict() {
    let mut p = v10();
    add(&mut p, "priority=10,udp,nw_dst=10.0.0.2,actions=output:2");
    add(&mut p, "priority=11,udp,nw_dst=10.0.0.3,actions=output:3");
    add(&mut p, "priority=12,tcp,actions=output:2");
    add(&mut p, "priority=13,actions=output:2");
    let r = fm_out(
        &mut p,
        FlowModCommand::Delete,
        "udp,actions=drop",
        Some(PortNo::Physical(3)),
    )
    .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].flow.priority, 11);
    assert_eq!(r[0].reason, RemovedReason::Delete);
    let r = fm(
        &mut p,
        FlowModCommand::DeleteStrict,
        "priority=12,ip,actions=drop",
    )
    .unwrap();
    assert!(r.is_empty(), "strict: the match must be identical");
    let r = fm(
        &mut p,
        FlowModCommand::DeleteStrict,
        "priority=12,tcp,actions=drop",
    )
    .unwrap();
    assert_eq!(r.len(), 1);
    let r = fm(&mut p, FlowModCommand::Delete, "ip,actions=drop").unwrap();
    assert_eq!(r.len(), 1, "the catch-all flow is not covered by ip");
    let r = fm(&mut p, FlowModCommand::Delete, "actions=drop").unwrap();
    assert_eq!(r.len(), 1);
    assert!(p.is_empty());
    assert_eq!(run(&mut p, 1, &udp(1, 2)), vec![NO_MATCH]);
}

#[test]
fn v13_cookie_mask_selects_and_table_all_deletes_everywhere() {
    let mut p = v13(3);
    add(&mut p, "table=0,cookie=0x1234,priority=1,actions=output:1");
    add(&mut p, "table=1,cookie=0x1299,priority=1,actions=output:1");
    add(&mut p, "table=2,cookie=0x5599,priority=1,actions=output:1");
    let r = fm_flow(
        &mut p,
        FlowModCommand::Delete,
        &masked("table=255,actions=drop", 0x1200, 0xff00),
    );
    assert_eq!(r.len(), 2);
    assert_eq!(p.len(), 1);
    fm_flow(
        &mut p,
        FlowModCommand::Modify,
        &masked("table=2,actions=output:5", 0x1, 0xff),
    );
    assert_eq!(
        all_flows(&p)[0].flow.actions,
        flow("actions=output:1").actions
    );
    fm_flow(
        &mut p,
        FlowModCommand::Modify,
        &masked("table=2,actions=output:5", 0x99, 0xff),
    );
    assert_eq!(
        all_flows(&p)[0].flow.actions,
        flow("actions=output:5").actions
    );
    assert_eq!(
        fm(&mut p, FlowModCommand::Delete, "table=3,actions=drop").unwrap_err(),
        FlowModError::BadTableId(3)
    );
}

#[test]
fn check_overlap_and_table_full_leave_the_table_unchanged() {
    let mut p = Pipeline::new(PipelineConfig {
        version: Version::V1_0,
        tables: 1,
        max_flows: 2,
    });
    add(&mut p, "priority=10,udp,actions=output:2");
    assert_eq!(
        fm(
            &mut p,
            FlowModCommand::Add,
            "priority=10,check_overlap,nw_dst=10.0.0.2,ip,actions=output:3"
        )
        .unwrap_err(),
        FlowModError::Overlap
    );
    // Another priority, or disjoint matches, do not overlap.
    add(
        &mut p,
        "priority=11,check_overlap,ip,nw_dst=10.0.0.2,actions=output:3",
    );
    assert_eq!(
        fm(
            &mut p,
            FlowModCommand::Add,
            "priority=10,tcp,actions=output:3"
        )
        .unwrap_err(),
        FlowModError::TableFull(2)
    );
    assert_eq!(p.len(), 2);
    // Replacing needs no room.
    add(&mut p, "priority=10,udp,actions=output:4");
    assert_eq!(run(&mut p, 1, &udp(1, 2)), vec![Egress::Port(3)]);
    assert_eq!(
        fm(
            &mut p,
            FlowModCommand::Add,
            "priority=10,check_overlap,tcp,actions=output:3"
        )
        .unwrap_err(),
        FlowModError::TableFull(2),
    );
    let e = fm(
        &mut p,
        FlowModCommand::Add,
        "priority=10,check_overlap,ip,actions=output:3",
    );
    assert_eq!(e.unwrap_err(), FlowModError::Overlap);
    assert_eq!(p.len(), 2);
}

#[test]
fn v13_bad_goto_and_unsupported_are_refused() {
    let mut p = v13(3);
    let err = |p: &mut Pipeline, s| fm(p, FlowModCommand::Add, s).unwrap_err();
    assert_eq!(
        err(&mut p, "table=1,actions=goto_table:1"),
        FlowModError::BadGoto(1)
    );
    assert_eq!(
        err(&mut p, "table=1,actions=goto_table:0"),
        FlowModError::BadGoto(0)
    );
    assert_eq!(
        err(&mut p, "table=1,actions=goto_table:3"),
        FlowModError::BadTableId(3)
    );
    assert_eq!(
        err(&mut p, "table=3,actions=drop"),
        FlowModError::BadTableId(3)
    );
    assert_eq!(
        err(&mut p, "actions=group:1"),
        FlowModError::UnknownGroup(1)
    );
    assert!(matches!(
        err(&mut p, "actions=normal"),
        FlowModError::Unsupported(_)
    ));
    assert!(p.is_empty());
}

#[test]
fn idle_and_hard_timeouts_expire_flows() {
    let mut p = v10();
    let t0 = Instant::now();
    let mut removed = Vec::new();
    for s in [
        "priority=1,idle_timeout=5,udp,actions=output:1",
        "priority=2,hard_timeout=7,tcp,actions=output:1",
        "priority=3,arp,actions=output:1",
    ] {
        let f = flow(s);
        p.flow_mod(
            &FlowModRequest {
                command: FlowModCommand::Add,
                flow: &f,
                out_port: None,
                out_group: None,
            },
            t0,
            &mut removed,
        )
        .unwrap();
    }
    let s = |n| t0 + Duration::from_secs(n);
    let mut r = Recorder::default();
    p.process(1, &udp(1, 2), s(4), &mut r);
    p.expire(s(6), &mut removed);
    assert!(removed.is_empty(), "used at 4 s: idle until 9 s");
    p.expire(s(7), &mut removed);
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].reason, RemovedReason::HardTimeout);
    assert_eq!(removed[0].duration, Duration::from_secs(7));
    p.expire(s(9), &mut removed);
    assert_eq!(removed.len(), 2);
    assert_eq!(removed[1].reason, RemovedReason::IdleTimeout);
    assert_eq!(
        (removed[1].packets, removed[1].bytes),
        (1, udp(1, 2).len() as u64)
    );
    p.expire(s(1000), &mut removed);
    assert_eq!(p.len(), 1);
}

#[test]
fn counters_and_table_stats_count() {
    let mut p = v13(2);
    add(&mut p, "table=0,priority=1,udp,actions=goto_table:1");
    add(
        &mut p,
        "table=1,priority=1,nw_dst=10.0.0.2,ip,actions=output:2",
    );
    for _ in 0..3 {
        run(&mut p, 1, &udp(1, 2));
    }
    run(&mut p, 1, &packet_arp());
    let st = p.table_stats();
    assert_eq!(st.len(), 2);
    assert_eq!((st[0].lookups, st[0].matched, st[0].active), (4, 3, 1));
    assert_eq!((st[1].lookups, st[1].matched, st[1].active), (3, 3, 1));
    assert_eq!(st[1].max_entries, 1000);
    let f = all_flows(&p);
    assert!(f.iter().all(|e| e.counters.unwrap().packet_count == 3));
    assert!(f
        .iter()
        .all(|e| e.counters.unwrap().byte_count == 3 * udp(1, 2).len() as u64));
}

#[test]
fn flow_stats_filter_by_table_match_out_port_and_cookie() {
    let mut p = v13(2);
    add(&mut p, "table=0,cookie=0x1,priority=1,udp,actions=output:2");
    add(&mut p, "table=0,cookie=0x2,priority=1,tcp,actions=output:3");
    add(&mut p, "table=1,cookie=0x1,priority=1,ip,actions=output:2");
    let m = parse_match("ip").unwrap().matching;
    let q = |table, out_port, cookie_mask| {
        p.flows(
            &StatsFilter {
                table,
                matching: &m,
                out_port,
                out_group: None,
                cookie: 1,
                cookie_mask,
            },
            Instant::now(),
        )
        .len()
    };
    assert_eq!(q(None, None, 0), 3);
    assert_eq!(q(Some(0), None, 0), 2);
    assert_eq!(q(None, Some(PortNo::Physical(2)), 0), 2);
    assert_eq!(q(None, None, 0xff), 2);
    let udp_only = parse_match("udp").unwrap().matching;
    let n = p
        .flows(
            &StatsFilter {
                table: None,
                matching: &udp_only,
                out_port: None,
                out_group: None,
                cookie: 0,
                cookie_mask: 0,
            },
            Instant::now(),
        )
        .len();
    assert_eq!(n, 1, "ip flows are not covered by udp");
}

#[test]
fn v13_pipeline_goto_write_actions_clear_and_metadata() {
    let mut p = v13(4);
    add(
        &mut p,
        "table=0,priority=1,actions=write_actions(output:9),write_metadata:0x5/0xff,goto_table:1",
    );
    add(
        &mut p,
        "table=1,priority=2,metadata=0x5/0xff,actions=output:1,goto_table:2",
    );
    add(&mut p, "table=1,priority=1,actions=output:7");
    add(
        &mut p,
        "table=2,priority=1,actions=write_actions(mod_nw_dst:10.9.9.9,output:3)",
    );
    let mut r = Recorder::default();
    p.process(1, &udp(1, 2), Instant::now(), &mut r);
    assert_eq!(r.egresses(), vec![Egress::Port(1), Egress::Port(3)]);
    // The action set ran at the end, its set-field before its output.
    assert_eq!(&r.out[1].2[30..34], &[10, 9, 9, 9]);
    assert!(checksums_ok(&r.out[1].2));
    assert_eq!(
        r.out[0].2,
        udp(1, 2),
        "apply-actions output saw the frame as it was"
    );

    add(&mut p, "table=2,priority=2,udp,actions=clear_actions");
    assert_eq!(
        run(&mut p, 1, &udp(1, 2)),
        vec![Egress::Port(1)],
        "the set was cleared"
    );
}

#[test]
fn v13_later_tables_match_the_frame_as_apply_actions_left_it() {
    let mut p = v13(2);
    add(
        &mut p,
        "table=0,priority=1,actions=mod_nw_dst:10.0.0.99,goto_table:1",
    );
    add(
        &mut p,
        "table=1,priority=2,ip,nw_dst=10.0.0.99,actions=output:5",
    );
    add(&mut p, "table=1,priority=1,actions=output:6");
    assert_eq!(run(&mut p, 1, &udp(1, 2)), vec![Egress::Port(5)]);
}

#[test]
fn set_fields_rewrite_and_fix_checksums() {
    for proto in [6u8, 17] {
        let mut p = v10();
        add(
            &mut p,
            &format!("priority=1,{},actions=mod_nw_src:192.168.7.1,mod_nw_dst:172.16.0.9,mod_tp_src:4444,mod_tp_dst:80,mod_nw_tos:184,mod_dl_src:0a:0b:0c:0d:0e:0f,mod_dl_dst:01:02:03:04:05:06,output:2", if proto == 6 { "tcp" } else { "udp" }),
        );
        let f = frame(
            [2; 6],
            [3; 6],
            None,
            &Ip4 {
                proto,
                ..Ip4::default()
            },
        );
        let mut r = Recorder::default();
        p.process(1, &f, Instant::now(), &mut r);
        let out = &r.out[0].2;
        let want = frame(
            [0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f],
            [1, 2, 3, 4, 5, 6],
            None,
            &Ip4 {
                src: Ipv4Addr::new(192, 168, 7, 1),
                dst: Ipv4Addr::new(172, 16, 0, 9),
                proto,
                sport: 4444,
                dport: 80,
                tos: 184,
                ttl: 64,
            },
        );
        assert_eq!(out, &want, "proto {proto}");
        assert!(checksums_ok(out));
    }
}

#[test]
fn vlan_actions_push_pop_and_set() {
    let untagged = udp(1, 2);
    let tagged = frame(
        [2, 0, 0, 0, 0, 1],
        [2, 0, 0, 0, 0, 2],
        Some((5, 3)),
        &Ip4::default(),
    );
    let out = |p: &mut Pipeline, f: &[u8]| {
        let mut r = Recorder::default();
        p.process(1, f, Instant::now(), &mut r);
        r.out.pop().unwrap().2
    };
    // 1.0: SET_VLAN_VID tags an untagged frame; STRIP_VLAN removes the tag.
    let mut p = v10();
    add(
        &mut p,
        "priority=1,dl_vlan=0xffff,actions=mod_vlan_vid:5,mod_vlan_pcp:3,output:2",
    );
    add(&mut p, "priority=1,dl_vlan=5,actions=strip_vlan,output:2");
    assert_eq!(out(&mut p, &untagged), tagged);
    assert_eq!(out(&mut p, &tagged), untagged);
    // 1.3: set-field on an untagged frame does nothing; push_vlan copies nothing, then set.
    let mut p = v13(1);
    add(
        &mut p,
        "priority=1,vlan_tci=0x0000/0x1fff,actions=mod_vlan_vid:7,output:2",
    );
    assert_eq!(out(&mut p, &untagged), untagged);
    add(&mut p, "priority=2,vlan_tci=0x0000/0x1fff,actions=push_vlan:0x8100,set_field:4101->vlan_vid,mod_vlan_pcp:3,output:2");
    assert_eq!(out(&mut p, &untagged), tagged);
    add(&mut p, "priority=2,dl_vlan=5,actions=pop_vlan,output:2");
    assert_eq!(out(&mut p, &tagged), untagged);
}

#[test]
fn dec_ttl_decrements_and_drops_at_one() {
    let mut p = v13(1);
    add(&mut p, "priority=1,actions=dec_ttl,output:2");
    let f = frame(
        [2; 6],
        [3; 6],
        None,
        &Ip4 {
            ttl: 2,
            ..Ip4::default()
        },
    );
    let mut r = Recorder::default();
    p.process(1, &f, Instant::now(), &mut r);
    let o = &r.out[0].2;
    assert_eq!(o[22], 1);
    assert!(checksums_ok(o));
    let f1 = frame(
        [2; 6],
        [3; 6],
        None,
        &Ip4 {
            ttl: 1,
            ..Ip4::default()
        },
    );
    assert_eq!(run(&mut p, 1, &f1), vec![]);
}

#[test]
fn execute_applies_actions_and_output_table_runs_the_pipeline() {
    let mut p = v10();
    add(
        &mut p,
        "priority=1,in_port=3,nw_src=10.1.1.1,ip,actions=output:4",
    );
    let actions =
        flow("actions=mod_nw_src:10.1.1.1,output:1,output:table,output:in_port,controller:64")
            .actions;
    let mut r = Recorder::default();
    p.execute(&actions, 3, &udp(1, 2), Instant::now(), &mut r);
    let e = r.egresses();
    assert_eq!(e[..3], [Egress::Port(1), Egress::Port(4), Egress::InPort]);
    assert!(matches!(
        e[3],
        Egress::Controller {
            max_len: 64,
            reason: ToController::Action,
            ..
        }
    ));
    assert!(r.out.iter().all(|o| o.1 == 3 && checksums_ok(&o.2)));
}

#[test]
fn a_mask_on_an_address_matches_its_prefix() {
    let mut p = v13(1);
    add(&mut p, "priority=1,ip,nw_dst=10.0.0.0/8,actions=output:1");
    add(&mut p, "priority=2,ip,nw_dst=10.0.0.0/24,actions=output:2");
    add(
        &mut p,
        "priority=3,dl_dst=02:00:00:00:00:00/ff:ff:ff:ff:ff:f0,actions=output:3",
    );
    let to = |d: [u8; 4], mac: u8| {
        frame(
            [2; 6],
            [2, 0, 0, 0, 0, mac],
            None,
            &Ip4 {
                dst: d.into(),
                ..Ip4::default()
            },
        )
    };
    assert_eq!(
        run(&mut p, 1, &to([10, 0, 0, 5], 0x20)),
        vec![Egress::Port(2)]
    );
    assert_eq!(
        run(&mut p, 1, &to([10, 0, 1, 5], 0x20)),
        vec![Egress::Port(1)]
    );
    assert_eq!(run(&mut p, 1, &to([11, 0, 0, 5], 0x20)), vec![]);
    assert_eq!(
        run(&mut p, 1, &to([10, 0, 0, 5], 0x0f)),
        vec![Egress::Port(3)]
    );
}

/// An IPv6 UDP frame with a valid checksum.
fn udp6(src: std::net::Ipv6Addr, dst: std::net::Ipv6Addr) -> Vec<u8> {
    use packet::checksum::{transport, PseudoHeader};
    let mut u = vec![0u8; 8];
    u[0..2].copy_from_slice(&1000u16.to_be_bytes());
    u[2..4].copy_from_slice(&2000u16.to_be_bytes());
    u[4..6].copy_from_slice(&16u16.to_be_bytes());
    u.extend_from_slice(b"pharos!!");
    let c = transport(&PseudoHeader::V6 { src, dst }, 17, &u);
    u[6..8].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 16, 17, 64]);
    f.extend_from_slice(&src.octets());
    f.extend_from_slice(&dst.octets());
    f.extend_from_slice(&u);
    f
}

#[test]
fn ipv6_matches_and_address_writes_fix_the_udp_checksum() {
    use packet::checksum::{verify_transport, PseudoHeader};
    let (a, b) = (
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
    );
    let mut p = v13(1);
    add(&mut p, "priority=1,udp6,ipv6_dst=2001:db8::/64,actions=set_field:2001:db8:ffff::9->ipv6_src,mod_tp_dst:53,output:2");
    let mut r = Recorder::default();
    p.process(1, &udp6(a, b), Instant::now(), &mut r);
    assert_eq!(r.egresses(), vec![Egress::Port(2)]);
    let o = &r.out[0].2;
    let src: std::net::Ipv6Addr = "2001:db8:ffff::9".parse().unwrap();
    assert_eq!(&o[22..38], &src.octets());
    assert_eq!(&o[56..58], &53u16.to_be_bytes());
    assert!(verify_transport(
        &PseudoHeader::V6 { src, dst: b },
        17,
        &o[54..]
    ));
    let other: std::net::Ipv6Addr = "2001:db9::2".parse().unwrap();
    assert_eq!(run(&mut p, 1, &udp6(a, other)), vec![]);
}

#[test]
fn v10_holds_128k_exact_flows_and_refuses_one_more() {
    use openflow::ofctl::{Masked, VlanMatch};
    use openflow::MacAddr;
    const N: u32 = 128 * 1024;
    let mut p = Pipeline::new(PipelineConfig {
        version: Version::V1_0,
        tables: 1,
        max_flows: N as usize,
    });
    let host = |i: u32| {
        let b = i.to_be_bytes();
        [2, 0, b[0], b[1], b[2], b[3]]
    };
    let exact = |i: u32| FlowMatch {
        in_port: Some(PortNo::Physical(1)),
        eth_src: Some(Masked::exact(MacAddr(host(i)))),
        eth_dst: Some(Masked::exact(MacAddr(host(i + 1)))),
        eth_type: Some(0x0800),
        vlan: Some(VlanMatch::Untagged),
        ip_dscp: Some(0),
        ip_proto: Some(17),
        ipv4_src: Some(Masked::exact(Ipv4Addr::new(10, 0, 0, 1))),
        ipv4_dst: Some(Masked::exact(Ipv4Addr::new(10, 0, 0, 2))),
        tp_src: Some(1000),
        tp_dst: Some(2000),
        ..FlowMatch::default()
    };
    let mut removed = Vec::new();
    let mut add = |p: &mut Pipeline, i: u32| {
        let f = Flow {
            matching: exact(i),
            actions: vec![FlowAction::Output {
                port: PortNo::Physical(i % 1000 + 2),
            }],
            ..Flow::default()
        };
        let req = FlowModRequest {
            command: FlowModCommand::Add,
            flow: &f,
            out_port: None,
            out_group: None,
        };
        p.flow_mod(&req, Instant::now(), &mut removed)
    };
    for i in 0..N {
        add(&mut p, i).unwrap();
    }
    assert_eq!(
        add(&mut p, N).unwrap_err(),
        FlowModError::TableFull(N as usize)
    );
    assert_eq!(p.len(), N as usize);
    for i in [0, 1, 4095, 65_536, N - 1] {
        let f = frame(host(i), host(i + 1), None, &Ip4::default());
        assert_eq!(
            run(&mut p, 1, &f),
            vec![Egress::Port(i % 1000 + 2)],
            "flow {i}"
        );
    }
    let f = frame(host(N), host(N + 1), None, &Ip4::default());
    assert_eq!(run(&mut p, 1, &f), vec![NO_MATCH]);
}
