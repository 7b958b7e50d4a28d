//! Groups on the pipeline: what each type does to a frame, their counters, GROUP_MOD's
//! errors (the groups and flows unchanged after each), and a deleted group taking its
//! flows with it.

use std::time::{Duration, Instant};

use openflow::model::FlowModCommand;
use openflow::of13::group::{GroupModCommand, GroupType};
use openflow::of13::{Action, Bucket, OFPG_ALL};
use openflow::ofctl::parse_flow;

use super::groups::code;
use super::testutil::{frame, Ip4, Recorder};
use super::*;
use crate::Egress;

fn v13() -> Pipeline {
    super::tests::v13(2)
}

fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

fn bucket(weight: u16, actions: Vec<Action>) -> Bucket {
    Bucket {
        weight,
        watch_port: 0xffff_ffff,
        watch_group: 0xffff_ffff,
        actions,
    }
}

fn group_mod(
    p: &mut Pipeline,
    command: GroupModCommand,
    group_type: GroupType,
    group_id: u32,
    buckets: &[Bucket],
) -> Result<Vec<RemovedFlow>, GroupModError> {
    let mut removed = Vec::new();
    p.group_mod(
        &GroupModRequest {
            command,
            group_type,
            group_id,
            buckets,
        },
        Instant::now(),
        &mut removed,
    )?;
    Ok(removed)
}

fn add_group(p: &mut Pipeline, t: GroupType, id: u32, buckets: &[Bucket]) {
    group_mod(p, GroupModCommand::Add, t, id, buckets).unwrap();
}

fn add_flow(p: &mut Pipeline, s: &str) -> Result<(), FlowModError> {
    let f = parse_flow(s).unwrap();
    p.flow_mod(
        &FlowModRequest {
            command: FlowModCommand::Add,
            flow: &f,
            out_port: None,
            out_group: None,
        },
        Instant::now(),
        &mut Vec::new(),
    )
}

fn udp_from(sport: u16) -> Vec<u8> {
    frame(
        [2, 0, 0, 0, 0, 1],
        [2, 0, 0, 0, 0, 2],
        None,
        &Ip4 {
            sport,
            ..Ip4::default()
        },
    )
}

const TTL: usize = 14 + 8;

#[test]
fn an_all_group_gives_every_bucket_its_own_copy_and_counts() {
    let mut p = v13();
    add_group(
        &mut p,
        GroupType::All,
        1,
        &[
            bucket(0, vec![Action::DecNwTtl, out(2)]),
            bucket(0, vec![out(3)]),
        ],
    );
    add_flow(&mut p, "priority=1,actions=group:1,output:4").unwrap();
    let f = udp_from(1000);
    let mut r = Recorder::default();
    p.process(1, &f, Instant::now(), &mut r);
    assert_eq!(
        r.egresses(),
        vec![Egress::Port(2), Egress::Port(3), Egress::Port(4)]
    );
    assert_eq!(r.out[0].2[TTL], 63, "bucket 1 decremented its copy's TTL");
    assert_eq!(r.out[1].2, f, "bucket 2 saw the frame as it came");
    assert_eq!(r.out[2].2, f, "the flow's next action too");

    let s = p.group_stats(1, Instant::now());
    let len = f.len() as u64;
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].ref_count, s[0].packets, s[0].bytes), (1, 1, len));
    assert_eq!(s[0].buckets, vec![(1, len), (1, len)]);
    assert!(p.group_stats(2, Instant::now()).is_empty(), "no group 2");
}

#[test]
fn a_select_group_keeps_each_flow_on_one_bucket_and_spreads_flows_by_weight() {
    let mut p = v13();
    add_group(
        &mut p,
        GroupType::Select,
        7,
        &[
            bucket(1, vec![out(2)]),
            bucket(3, vec![out(3)]),
            bucket(0, vec![out(4)]),
        ],
    );
    add_flow(&mut p, "priority=1,actions=group:7").unwrap();
    let (mut to2, mut to3) = (0, 0);
    for sport in 0..4000u16 {
        let f = udp_from(10_000 + sport);
        let a = run(&mut p, &f);
        assert_eq!(a, run(&mut p, &f), "a flow's frames take one bucket");
        match a[..] {
            [Egress::Port(2)] => to2 += 1,
            [Egress::Port(3)] => to3 += 1,
            _ => panic!("one bucket, never the weight-0 one: {a:?}"),
        }
    }
    let share = f64::from(to3) / f64::from(to2 + to3);
    assert!(
        (0.70..0.80).contains(&share),
        "weights 1 and 3: {to2} and {to3} flows"
    );
    let s = &p.group_stats(OFPG_ALL, Instant::now())[0];
    assert_eq!(s.packets, 8000);
    assert_eq!(s.buckets[0].0 + s.buckets[1].0, 8000);
    assert_eq!(s.buckets[2].0, 0);
}

fn run(p: &mut Pipeline, f: &[u8]) -> Vec<Egress> {
    let mut r = Recorder::default();
    p.process(1, f, Instant::now(), &mut r);
    r.egresses()
}

#[test]
fn in_the_action_set_a_group_takes_precedence_over_output() {
    let mut p = v13();
    add_group(&mut p, GroupType::Indirect, 3, &[bucket(0, vec![out(5)])]);
    add_flow(
        &mut p,
        "table=0,priority=1,actions=write_actions(output:9,group:3),goto_table:1",
    )
    .unwrap();
    add_flow(&mut p, "table=1,priority=1,actions=output:6").unwrap();
    assert_eq!(
        run(&mut p, &udp_from(1)),
        vec![Egress::Port(6), Egress::Port(5)]
    );
}

#[test]
fn group_mod_errors_leave_groups_and_flows_as_they_were() {
    let mut p = v13();
    add_group(&mut p, GroupType::All, 1, &[bucket(0, vec![out(2)])]);
    add_flow(&mut p, "priority=1,actions=group:1").unwrap();
    let before = (p.group_desc(), p.len());
    let err =
        |p: &mut Pipeline, c, t, id, b: &[Bucket]| group_mod(p, c, t, id, b).unwrap_err().code;
    use GroupModCommand::{Add, Modify};
    let one = [bucket(0, vec![out(3)])];
    assert_eq!(
        err(&mut p, Add, GroupType::All, 1, &one),
        code::GROUP_EXISTS
    );
    assert_eq!(
        err(&mut p, Modify, GroupType::All, 9, &one),
        code::UNKNOWN_GROUP
    );
    assert_eq!(
        err(&mut p, Add, GroupType::All, 0xffff_ff01, &one),
        code::INVALID_GROUP
    );
    assert_eq!(
        err(&mut p, Add, GroupType::FastFailover, 2, &one),
        code::BAD_TYPE
    );
    assert_eq!(
        err(&mut p, Add, GroupType::Unknown(9), 2, &one),
        code::BAD_TYPE
    );
    assert_eq!(
        err(
            &mut p,
            Add,
            GroupType::All,
            2,
            &[bucket(0, vec![Action::Group { group_id: 1 }])]
        ),
        code::CHAINING_UNSUPPORTED
    );
    assert_eq!(
        err(
            &mut p,
            Modify,
            GroupType::Indirect,
            1,
            &[bucket(0, vec![out(2)]), bucket(0, vec![out(3)])]
        ),
        code::INVALID_GROUP
    );
    assert_eq!(
        err(
            &mut p,
            Modify,
            GroupType::All,
            1,
            &[bucket(5, vec![out(2)])]
        ),
        code::WEIGHT_UNSUPPORTED
    );
    assert_eq!(
        err(
            &mut p,
            Modify,
            GroupType::All,
            1,
            &[bucket(0, vec![out(0xffff_fffa)])]
        ),
        code::BAD_BUCKET,
        "output to NORMAL"
    );
    assert_eq!(
        err(&mut p, GroupModCommand::Unknown(7), GroupType::All, 2, &one),
        code::BAD_COMMAND
    );
    assert_eq!((p.group_desc(), p.len()), before);
    assert_eq!(
        add_flow(&mut p, "priority=2,actions=group:2"),
        Err(FlowModError::UnknownGroup(2))
    );
    assert_eq!(p.len(), 1);
}

#[test]
fn modify_replaces_the_buckets_and_keeps_the_groups_counters() {
    let mut p = v13();
    add_group(&mut p, GroupType::All, 1, &[bucket(0, vec![out(2)])]);
    add_flow(&mut p, "priority=1,actions=group:1").unwrap();
    run(&mut p, &udp_from(1));
    group_mod(
        &mut p,
        GroupModCommand::Modify,
        GroupType::Select,
        1,
        &[bucket(1, vec![out(8)])],
    )
    .unwrap();
    assert_eq!(run(&mut p, &udp_from(1)), vec![Egress::Port(8)]);
    let s = &p.group_stats(1, Instant::now())[0];
    assert_eq!(s.packets, 2);
    assert_eq!(s.buckets, vec![(1, udp_from(1).len() as u64)]);
    let d = p.group_desc();
    assert_eq!(
        (d[0].group_type, d[0].buckets.len()),
        (GroupType::Select, 1)
    );
}

#[test]
fn deleting_a_group_removes_the_flows_that_forward_to_it() {
    let mut p = v13();
    for id in [1, 2] {
        add_group(&mut p, GroupType::All, id, &[bucket(0, vec![out(2)])]);
    }
    add_flow(&mut p, "priority=3,udp,actions=group:1").unwrap();
    add_flow(&mut p, "priority=2,actions=write_actions(group:1)").unwrap();
    add_flow(&mut p, "priority=1,tcp,actions=group:2").unwrap();
    add_flow(&mut p, "priority=1,arp,actions=output:1").unwrap();
    // No such group: nothing happens, no error.
    assert!(
        group_mod(&mut p, GroupModCommand::Delete, GroupType::All, 5, &[])
            .unwrap()
            .is_empty()
    );
    let gone = group_mod(&mut p, GroupModCommand::Delete, GroupType::All, 1, &[]).unwrap();
    assert_eq!(gone.len(), 2);
    assert!(gone
        .iter()
        .all(|r| r.reason == RemovedReason::GroupDelete && r.duration < Duration::from_secs(5)));
    assert_eq!(p.len(), 2);
    assert_eq!(p.groups(), 1);
    let gone = group_mod(
        &mut p,
        GroupModCommand::Delete,
        GroupType::All,
        OFPG_ALL,
        &[],
    )
    .unwrap();
    assert_eq!(gone.len(), 1, "OFPG_ALL: every group, and group 2's flow");
    assert_eq!((p.groups(), p.len()), (0, 1));
}
