//! The app on a pipeline driven by hand: what a connecting switch is sent, in what
//! order, and what the switch's answers make of each flow's status.

use std::time::Instant;

use controller::driver::Driver;
use controller::host::{AppHost, Core};
use controller::info::SwitchInfo;
use controller::services::Services;
use openflow::ofctl::parse_flow;
use openflow::{Dpid, Version, HEADER_LEN};

use super::*;
use crate::LearningSwitch;

fn info(dpid: u64, version: Version) -> SwitchInfo {
    SwitchInfo {
        n_buffers: 256,
        n_tables: 254,
        ..SwitchInfo::new(openflow::Dpid(dpid), version)
    }
}

/// Every message in `out`, with its xid.
fn messages(out: &[u8]) -> Vec<(u32, Message)> {
    let mut v = Vec::new();
    let mut rest = out;
    while rest.len() >= HEADER_LEN {
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        v.push(Message::decode(&rest[..len]).unwrap());
        rest = &rest[len..];
    }
    v
}

fn is_delete_all(m: &Message) -> bool {
    match m {
        Message::V10(of10::Message::FlowMod(f)) => f.command == of10::FlowModCommand::Delete,
        Message::V13(of13::Message::FlowMod(f)) => f.command == of13::FlowModCommand::Delete,
        _ => false,
    }
}

fn is_barrier(m: &Message) -> bool {
    matches!(
        m,
        Message::V10(of10::Message::BarrierRequest) | Message::V13(of13::Message::BarrierRequest)
    )
}

/// The learning switch first (its initializer empties the table), the static flows
/// last, as `pharos run` orders them.
fn pipeline(store: &Arc<StaticFlows>) -> Core {
    let apps: Vec<Box<dyn controller::app::AnyApp>> = vec![
        Box::new(LearningSwitch::default()),
        Box::new(StaticFlowsApp::new(Arc::clone(store))),
    ];
    AppHost::build(apps, Services::new()).unwrap()
}

fn store_with(flows: &[(&str, u64, &str)]) -> Arc<StaticFlows> {
    let s = StaticFlows::in_memory();
    for (name, dpid, text) in flows {
        s.add(name, Dpid(*dpid), parse_flow(text).unwrap(), false)
            .unwrap();
    }
    Arc::new(s)
}

fn status(s: &StaticFlows, name: &str) -> Status {
    s.get(name).unwrap().status
}

/// An ERROR answering the FLOW_MOD `frame` (its first 64 bytes, as switches send).
fn error_for(version: Version, err_type: u16, code: u16, request: &[u8]) -> Vec<u8> {
    let body = ErrorBody::Standard {
        err_type,
        code,
        data: request[..request.len().min(64)].to_vec(),
    };
    let msg = match version {
        Version::V1_0 => Message::V10(of10::Message::Error(body)),
        Version::V1_3 => Message::V13(of13::Message::Error(body)),
    };
    let xid = u32::from_be_bytes([request[4], request[5], request[6], request[7]]);
    msg.to_bytes(xid).unwrap()
}

fn barrier_reply(version: Version, xid: u32) -> Vec<u8> {
    match version {
        Version::V1_0 => Message::V10(of10::Message::BarrierReply),
        Version::V1_3 => Message::V13(of13::Message::BarrierReply),
    }
    .to_bytes(xid)
    .unwrap()
}

#[test]
fn a_connecting_switch_gets_its_flows_then_a_barrier_and_its_table_is_not_emptied() {
    for version in [Version::V1_0, Version::V1_3] {
        let store = store_with(&[
            ("a", 1, "priority=100,ip,nw_dst=10.0.0.2,actions=output:2"),
            ("b", 1, "priority=90,arp,actions=flood"),
            ("other", 2, "actions=drop"),
        ]);
        let p = pipeline(&store);
        let mut sw = p.dispatcher.new_switch(info(1, version));
        let mut out = Vec::new();
        let now = Instant::now();
        p.dispatcher.switch_added(&mut sw, &mut out, now);
        let msgs = messages(&out);
        // A restart must not cut traffic: nothing empties the table any more
        // (controller::reconcile deletes only what no app owns).
        assert!(!msgs.iter().any(|(_, m)| is_delete_all(m)), "{msgs:?}");
        let barrier = msgs.iter().position(|(_, m)| is_barrier(m)).unwrap();
        let adds: Vec<String> = msgs
            .iter()
            .filter_map(|(_, m)| match m {
                Message::V10(of10::Message::FlowMod(f)) => {
                    Some(openflow::ofctl::Flow::from_of10(f).unwrap())
                }
                Message::V13(of13::Message::FlowMod(f)) if !f.instructions.is_empty() => {
                    Some(openflow::ofctl::Flow::from_of13(f).unwrap())
                }
                _ => None,
            })
            .filter(|f| f.priority >= 90)
            .map(|mut f| {
                // The app's tag, stamped by the core on the user's cookie (0).
                let tag = controller::cookie::app_tag(super::NAME);
                assert_eq!(f.cookie, controller::cookie::with_tag(tag, 0));
                f.cookie = 0;
                f.to_string()
            })
            .filter(|s| s.contains("priority=100") || s.contains("priority=90"))
            .collect();
        assert_eq!(
            adds,
            [
                "priority=100,ip,nw_dst=10.0.0.2,actions=output:2",
                "priority=90,arp,actions=FLOOD"
            ],
            "{version}"
        );
        let first_add = msgs
            .iter()
            .position(|(_, m)| match m {
                Message::V10(of10::Message::FlowMod(f)) => f.priority == 100,
                Message::V13(of13::Message::FlowMod(f)) => f.priority == 100,
                _ => false,
            })
            .unwrap();
        assert!(first_add < barrier, "{version}: {msgs:?}");
        assert_eq!(barrier, msgs.len() - 1, "the barrier comes last");
        assert_eq!(status(&store, "a"), Status::Pending);

        let barrier_xid = msgs[barrier].0;
        let mut out = Vec::new();
        p.dispatcher
            .handle(&mut sw, &barrier_reply(version, barrier_xid), &mut out, now);
        assert_eq!(status(&store, "a"), Status::Installed, "{version}");
        assert_eq!(status(&store, "b"), Status::Installed, "{version}");
        assert_eq!(status(&store, "other"), Status::Pending, "another switch's");
    }
}

#[test]
fn a_flow_the_switch_refuses_is_refused_with_the_errors_names_and_the_others_installed() {
    for version in [Version::V1_0, Version::V1_3] {
        let store = store_with(&[
            ("bad", 1, "priority=100,ip,actions=output:99"),
            ("good", 1, "priority=90,arp,actions=flood"),
        ]);
        let p = pipeline(&store);
        let mut sw = p.dispatcher.new_switch(info(1, version));
        let mut out = Vec::new();
        let now = Instant::now();
        p.dispatcher.switch_added(&mut sw, &mut out, now);
        // The FLOW_MOD of "bad": its frame, as it went out.
        let mut rest = &out[..];
        let mut bad_frame = None;
        let mut barrier_xid = None;
        while rest.len() >= HEADER_LEN {
            let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
            let (xid, m) = Message::decode(&rest[..len]).unwrap();
            match &m {
                Message::V10(of10::Message::FlowMod(f)) if f.priority == 100 => {
                    bad_frame = Some(rest[..len].to_vec())
                }
                Message::V13(of13::Message::FlowMod(f)) if f.priority == 100 => {
                    bad_frame = Some(rest[..len].to_vec())
                }
                m if is_barrier(m) => barrier_xid = Some(xid),
                _ => {}
            }
            rest = &rest[len..];
        }
        // BAD_ACTION (2) / BAD_OUT_PORT (4) in both versions.
        let err = error_for(version, 2, 4, &bad_frame.unwrap());
        let mut out = Vec::new();
        p.dispatcher.handle(&mut sw, &err, &mut out, now);
        assert_eq!(
            status(&store, "bad"),
            Status::Refused("BAD_ACTION/BAD_OUT_PORT".into()),
            "{version}"
        );
        p.dispatcher.handle(
            &mut sw,
            &barrier_reply(version, barrier_xid.unwrap()),
            &mut out,
            now,
        );
        assert_eq!(status(&store, "good"), Status::Installed, "{version}");
        assert!(
            matches!(status(&store, "bad"), Status::Refused(_)),
            "the barrier does not undo a refusal"
        );
    }
}

#[test]
fn a_flow_the_version_cannot_express_is_refused_without_sending() {
    let store = store_with(&[("meter", 1, "priority=5,actions=meter:1,output:1")]);
    let p = pipeline(&store);
    let mut sw = p.dispatcher.new_switch(info(1, Version::V1_0));
    let mut out = Vec::new();
    p.dispatcher.switch_added(&mut sw, &mut out, Instant::now());
    match status(&store, "meter") {
        Status::Refused(why) => assert!(why.contains("OpenFlow 1.0"), "{why}"),
        s => panic!("{s:?}"),
    }
    assert!(
        !messages(&out).iter().any(|(_, m)| is_barrier(m)),
        "nothing to wait for"
    );
}

#[test]
fn no_answer_leaves_the_flows_pending_and_a_reconnect_sends_them_again() {
    let store = store_with(&[("a", 1, "priority=7,actions=drop")]);
    let p = pipeline(&store);
    let mut sw = p.dispatcher.new_switch(info(1, Version::V1_3));
    let mut out = Vec::new();
    let now = Instant::now();
    p.dispatcher.switch_added(&mut sw, &mut out, now);
    p.dispatcher.tick(
        &mut sw,
        &mut Vec::new(),
        now + REPLY_TIMEOUT + Duration::from_secs(1),
    );
    assert_eq!(status(&store, "a"), Status::Pending);

    // The switch comes back: the flow goes out again and is installed this time.
    let mut sw = p.dispatcher.new_switch(info(1, Version::V1_3));
    let mut out = Vec::new();
    p.dispatcher.switch_added(&mut sw, &mut out, now);
    let msgs = messages(&out);
    let sent = msgs
        .iter()
        .filter(|(_, m)| matches!(m, Message::V13(of13::Message::FlowMod(f)) if f.priority == 7))
        .count();
    assert_eq!(sent, 1);
    let xid = msgs.iter().find(|(_, m)| is_barrier(m)).unwrap().0;
    p.dispatcher.handle(
        &mut sw,
        &barrier_reply(Version::V1_3, xid),
        &mut Vec::new(),
        now,
    );
    assert_eq!(status(&store, "a"), Status::Installed);
}

#[test]
fn errors_are_described_by_name_in_both_versions() {
    let v13 = Message::V13(of13::Message::Error(ErrorBody::Standard {
        err_type: 4,
        code: 9,
        data: vec![4, 14, 0, 64, 0, 0, 0, 42],
    }));
    assert_eq!(
        describe(&v13),
        Some((Some(42), "BAD_MATCH/BAD_PREREQ".into()))
    );
    let v10 = Message::V10(of10::Message::Error(ErrorBody::Standard {
        err_type: 3,
        code: 0,
        data: vec![1, 14, 0, 80, 0, 0, 0, 7],
    }));
    assert_eq!(
        describe(&v10),
        Some((Some(7), "FLOW_MOD_FAILED/ALL_TABLES_FULL".into()))
    );
    // An error about another message carries no FLOW_MOD xid.
    let other = Message::V13(of13::Message::Error(ErrorBody::Standard {
        err_type: 1,
        code: 1,
        data: vec![4, 18, 0, 16, 0, 0, 0, 9],
    }));
    assert_eq!(describe(&other).unwrap().0, None);
    assert_eq!(describe(&Message::V13(of13::Message::BarrierReply)), None);
}

/// What the REST API does for a connected switch: `Switches::request_applied` with
/// the FLOW_MOD `ofctl` made, answered once: the barrier reply (applied) or the ERROR on
/// the FLOW_MOD's xid (refused), which the app's ERROR observer does not see.
#[test]
fn a_flow_mod_pushed_from_outside_is_answered_by_the_barrier_or_the_error() {
    use std::sync::Mutex;
    let store = store_with(&[]);
    let p = pipeline(&store);
    let now = Instant::now();
    for (version, refuse) in [
        (Version::V1_0, false),
        (Version::V1_0, true),
        (Version::V1_3, false),
        (Version::V1_3, true),
    ] {
        let mut sw = p.dispatcher.new_switch(info(1, version));
        p.dispatcher.switch_added(&mut sw, &mut Vec::new(), now);
        let got: Arc<Mutex<Vec<Reply>>> = Arc::default();
        let g = Arc::clone(&got);
        let msg = parse_flow("priority=5,ip,actions=output:9")
            .unwrap()
            .to_message(version, FlowModCommand::Add)
            .unwrap();
        p.switches()
            .request_applied(
                openflow::Dpid(1),
                &msg,
                REPLY_TIMEOUT,
                Box::new(move |r| g.lock().unwrap().push(r)),
            )
            .unwrap();
        let mut out = Vec::new();
        p.dispatcher.take_queued(&mut sw, &mut out, now);
        let frames: Vec<(u32, Message)> = messages(&out);
        assert_eq!(frames.len(), 2, "{version}: {frames:?}");
        assert_eq!(frames[0].1, msg, "{version}");
        assert!(is_barrier(&frames[1].1), "{version}");
        let fm_len = usize::from(u16::from_be_bytes([out[2], out[3]]));
        if refuse {
            let err = error_for(version, 2, 4, &out[..fm_len]);
            p.dispatcher.handle(&mut sw, &err, &mut Vec::new(), now);
            let answer = got.lock().unwrap().clone();
            assert_eq!(answer.len(), 1, "{version}");
            match &answer[0] {
                Reply::Error(e) => {
                    assert_eq!(describe(e).unwrap().1, "BAD_ACTION/BAD_OUT_PORT")
                }
                other => panic!("{version}: {other:?}"),
            }
        }
        p.dispatcher.handle(
            &mut sw,
            &barrier_reply(version, frames[1].0),
            &mut Vec::new(),
            now,
        );
        let answer = got.lock().unwrap().clone();
        assert_eq!(answer.len(), 1, "{version}: answered once");
        assert_eq!(
            matches!(answer[0], Reply::Messages(_)),
            !refuse,
            "{version}: {answer:?}"
        );
    }
}
