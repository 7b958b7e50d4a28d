//! The agent on the real flow tables ([`Pipeline`]): what a controller sees of the
//! tables' own behaviour (barrier then forwarding, expiry, table full, 1.3's
//! table-miss).
//!
//! They need the table helper's `Pipeline` (on main): on the agent branch alone, whose
//! `Pipeline` is the interface's `unimplemented!` stub, they fail.
//!
//! [`Pipeline`]: crate::table::Pipeline

use std::time::{Duration, Instant};

use openflow::header::Version;
use openflow::ofctl::{Flow, FlowModCommand};
use openflow::{of10, of13, Message};

use super::tests::{
    agent_on, error_of, feed, feed_bytes, flow_mod, frame, now, packet_in_10, ready, take, TestPort,
};
use super::*;
use crate::table::Pipeline;

type RealAgent = Agent<TestPort, Pipeline>;

fn agent(versions: Versions, max_flows: usize) -> RealAgent {
    agent_on(
        AgentConfig {
            versions,
            max_flows,
            n_buffers: 16,
            tables: 4,
            ..AgentConfig::default()
        },
        1,
    )
}

#[test]
fn after_a_barrier_reply_the_next_frame_takes_the_new_flow() {
    let mut a = agent(Versions::V10, 100);
    ready(&mut a, 0, Version::V1_0);
    // A miss first: PACKET_IN.
    a.frame_in(0, &frame(60, 7), now());
    assert!(matches!(
        packet_in_10(&take(&mut a, 0)[0].1).reason,
        of10::PacketInReason::NoMatch
    ));
    let mut bytes = flow_mod(
        Version::V1_0,
        "in_port=1,actions=output:3",
        FlowModCommand::Add,
    )
    .to_bytes(1)
    .unwrap();
    bytes.extend(
        Message::V10(of10::Message::BarrierRequest)
            .to_bytes(2)
            .unwrap(),
    );
    feed_bytes(&mut a, 0, &bytes).unwrap();
    assert_eq!(
        take(&mut a, 0),
        [(2, Message::V10(of10::Message::BarrierReply))]
    );
    a.frame_in(0, &frame(60, 7), now());
    assert_eq!(a.fabric.ports[2].io.sent.len(), 1);
    assert!(
        take(&mut a, 0).is_empty(),
        "no PACKET_IN once the flow is in"
    );
}

#[test]
fn an_idle_flow_expires_with_a_flow_removed() {
    let mut a = agent(Versions::V13, 100);
    ready(&mut a, 0, Version::V1_3);
    let t0 = Instant::now();
    feed(
        &mut a,
        0,
        &flow_mod(
            Version::V1_3,
            "priority=5,idle_timeout=1,send_flow_rem,cookie=0x42,in_port=1,actions=output:2",
            FlowModCommand::Add,
        ),
        1,
    );
    a.expire(t0 + Duration::from_millis(100));
    assert!(take(&mut a, 0).is_empty());
    a.expire(t0 + Duration::from_secs(3));
    let r = take(&mut a, 0);
    let Message::V13(of13::Message::FlowRemoved(fr)) = &r[0].1 else {
        panic!("{r:?}")
    };
    assert_eq!(
        (fr.cookie, fr.reason),
        (0x42, of13::FlowRemovedReason::IdleTimeout)
    );
}

#[test]
fn a_full_table_refuses_an_add_and_keeps_its_flows() {
    for v in [Version::V1_0, Version::V1_3] {
        let mut a = agent(Versions::Both, 2);
        ready(&mut a, 0, v);
        for (i, t) in [
            "in_port=1,actions=output:2",
            "in_port=2,actions=output:1",
            "in_port=3,actions=drop",
        ]
        .iter()
        .enumerate()
        {
            feed(&mut a, 0, &flow_mod(v, t, FlowModCommand::Add), i as u32);
        }
        let r = take(&mut a, 0);
        let full = if v == Version::V1_0 { (3, 0) } else { (5, 1) };
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].0, error_of(&r[0].1)), (2, full), "{v}");
        feed(&mut a, 0, &Flow::default().stats_request(v).unwrap(), 9);
        let r = take(&mut a, 0);
        assert_eq!(
            openflow::ofctl::FlowEntry::from_message(&r[0].1)
                .unwrap()
                .len(),
            2
        );
    }
}

#[test]
fn in_13_a_miss_without_a_table_miss_flow_is_dropped_and_with_one_goes_up_whole() {
    let mut a = agent(Versions::V13, 100);
    ready(&mut a, 0, Version::V1_3);
    a.frame_in(0, &frame(300, 7), now());
    assert!(take(&mut a, 0).is_empty());
    feed(
        &mut a,
        0,
        &flow_mod(
            Version::V1_3,
            "priority=0,actions=controller",
            FlowModCommand::Add,
        ),
        1,
    );
    a.frame_in(0, &frame(300, 7), now());
    let r = take(&mut a, 0);
    let Message::V13(of13::Message::PacketIn(p)) = &r[0].1 else {
        panic!("{r:?}")
    };
    assert_eq!(p.in_port(), Some(1));
    assert_eq!(p.data.len(), 300, "controller:65535 is OFPCML_NO_BUFFER");
    assert_eq!(p.buffer_id, openflow::model::NO_BUFFER);
}

fn group_mod_msg(
    command: of13::group::GroupModCommand,
    group_type: of13::group::GroupType,
    group_id: u32,
    ports: &[u32],
) -> Message {
    Message::V13(of13::Message::GroupMod(of13::GroupMod {
        command,
        group_type,
        group_id,
        buckets: ports
            .iter()
            .map(|p| of13::Bucket {
                weight: u16::from(group_type == of13::group::GroupType::Select),
                watch_port: of13::OFPP_ANY,
                watch_group: of13::OFPG_ANY,
                actions: vec![of13::Action::Output {
                    port: *p,
                    max_len: 0,
                }],
            })
            .collect(),
    }))
}

fn multipart(body: of13::multipart::MultipartRequestBody) -> Message {
    Message::V13(of13::Message::MultipartRequest(
        of13::multipart::MultipartRequest { flags: 0, body },
    ))
}

#[test]
fn groups_over_the_wire_forward_report_and_refuse_with_group_mod_failed() {
    use of13::group::{GroupModCommand as C, GroupType as G};
    use of13::multipart::{MultipartReplyBody as R, MultipartRequestBody as B};
    let mut a = agent(Versions::V13, 100);
    ready(&mut a, 0, Version::V1_3);

    // The features say so.
    feed(&mut a, 0, &Message::V13(of13::Message::FeaturesRequest), 1);
    let Message::V13(of13::Message::FeaturesReply(f)) = &take(&mut a, 0)[0].1 else {
        panic!()
    };
    assert_ne!(f.capabilities & (1 << 3), 0, "OFPC_GROUP_STATS");

    feed(&mut a, 0, &group_mod_msg(C::Add, G::All, 1, &[2, 3]), 2);
    feed(
        &mut a,
        0,
        &flow_mod(
            Version::V1_3,
            "priority=1,send_flow_rem,in_port=1,actions=group:1",
            FlowModCommand::Add,
        ),
        3,
    );
    assert!(take(&mut a, 0).is_empty(), "no error");
    a.frame_in(0, &frame(60, 7), now());
    assert_eq!(a.fabric.ports[1].io.sent.len(), 1, "out of port 2");
    assert_eq!(a.fabric.ports[2].io.sent.len(), 1, "and port 3");

    // Refusals: OFPET_GROUP_MOD_FAILED with the code; a flow or PACKET_OUT naming a
    // missing group: OFPET_BAD_ACTION / OFPBAC_BAD_OUT_GROUP.
    feed(&mut a, 0, &group_mod_msg(C::Add, G::All, 1, &[2]), 4);
    feed(&mut a, 0, &group_mod_msg(C::Modify, G::All, 9, &[2]), 5);
    feed(
        &mut a,
        0,
        &group_mod_msg(C::Add, G::FastFailover, 2, &[2]),
        6,
    );
    feed(
        &mut a,
        0,
        &flow_mod(
            Version::V1_3,
            "priority=2,actions=group:9",
            FlowModCommand::Add,
        ),
        7,
    );
    let po = Message::V13(of13::Message::PacketOut(of13::PacketOut {
        buffer_id: openflow::model::NO_BUFFER,
        in_port: of13::OFPP_CONTROLLER,
        actions: vec![of13::Action::Group { group_id: 9 }],
        data: frame(60, 7),
    }));
    feed(&mut a, 0, &po, 8);
    let errors: Vec<(u32, (u16, u16))> = take(&mut a, 0)
        .iter()
        .map(|(x, m)| (*x, error_of(m)))
        .collect();
    assert_eq!(
        errors,
        [
            (4, (6, 0)),
            (5, (6, 8)),
            (6, (6, 10)),
            (7, (2, 9)),
            (8, (2, 9))
        ]
    );

    // A PACKET_OUT through the group.
    let po = Message::V13(of13::Message::PacketOut(of13::PacketOut {
        buffer_id: openflow::model::NO_BUFFER,
        in_port: of13::OFPP_CONTROLLER,
        actions: vec![of13::Action::Group { group_id: 1 }],
        data: frame(60, 7),
    }));
    feed(&mut a, 0, &po, 9);
    assert!(take(&mut a, 0).is_empty());
    assert_eq!(a.fabric.ports[2].io.sent.len(), 2);

    // Statistics, description, features.
    feed(&mut a, 0, &multipart(B::Group { group_id: 1 }), 10);
    feed(&mut a, 0, &multipart(B::GroupDesc), 11);
    feed(&mut a, 0, &multipart(B::GroupFeatures), 12);
    let r = take(&mut a, 0);
    let bodies: Vec<&R> = r
        .iter()
        .map(|(_, m)| match m {
            Message::V13(of13::Message::MultipartReply(m)) => &m.body,
            other => panic!("{other:?}"),
        })
        .collect();
    let R::Group { stats } = bodies[0] else {
        panic!("{bodies:?}")
    };
    assert_eq!(
        (stats[0].group_id, stats[0].ref_count, stats[0].packet_count),
        (1, 1, 2)
    );
    assert_eq!(stats[0].bucket_stats.len(), 2);
    let R::GroupDesc { groups } = bodies[1] else {
        panic!("{bodies:?}")
    };
    assert_eq!(groups.len(), 1);
    assert_eq!((groups[0].group_type, groups[0].buckets.len()), (G::All, 2));
    let R::GroupFeatures(f) = bodies[2] else {
        panic!("{bodies:?}")
    };
    assert_eq!(f.types, 0b111, "all, select, indirect");

    // Deleting the group takes its flow, with FLOW_REMOVED reason GROUP_DELETE.
    feed(&mut a, 0, &group_mod_msg(C::Delete, G::All, 1, &[]), 13);
    let r = take(&mut a, 0);
    let Message::V13(of13::Message::FlowRemoved(fr)) = &r[0].1 else {
        panic!("{r:?}")
    };
    assert_eq!(fr.reason, of13::FlowRemovedReason::GroupDelete);
    feed(&mut a, 0, &multipart(B::GroupDesc), 14);
    let r = take(&mut a, 0);
    assert!(
        matches!(&r[0].1, Message::V13(of13::Message::MultipartReply(m)) if matches!(&m.body, R::GroupDesc { groups } if groups.is_empty()))
    );
}
