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
