use std::net::SocketAddr;
use std::time::Instant;

use openflow::Version;

use super::*;
use crate::info::SwitchInfo;

fn info(dpid: u64, version: Version) -> SwitchInfo {
    SwitchInfo {
        dpid,
        version,
        n_buffers: 256,
        n_tables: 1,
        capabilities: 0,
        ports: Vec::new(),
        peer: SocketAddr::from(([127, 0, 0, 1], 1)),
    }
}

#[test]
fn orders_sort_by_phase_then_number() {
    let mut v = [
        Order::observe(-5),
        Order::direct(3),
        Order::advise(10),
        Order::direct(-1),
    ];
    v.sort();
    assert_eq!(
        v,
        [
            Order::advise(10),
            Order::direct(-1),
            Order::direct(3),
            Order::observe(-5)
        ]
    );
}

#[test]
fn message_kinds_follow_each_versions_numbering() {
    use MessageKind::*;
    assert_eq!(MessageKind::from_wire(Version::V1_0, 10), None);
    assert_eq!(MessageKind::from_wire(Version::V1_3, 10), None);
    assert_eq!(
        MessageKind::from_wire(Version::V1_0, 17),
        Some(MultipartReply)
    );
    assert_eq!(
        MessageKind::from_wire(Version::V1_3, 19),
        Some(MultipartReply)
    );
    assert_eq!(
        MessageKind::from_wire(Version::V1_0, 19),
        Some(BarrierReply)
    );
    assert_eq!(
        MessageKind::from_wire(Version::V1_3, 21),
        Some(BarrierReply)
    );
    assert_eq!(MessageKind::from_wire(Version::V1_3, 12), Some(PortStatus));
    assert_eq!(MessageKind::from_wire(Version::V1_0, 25), Some(Other));
}

struct Nothing;
impl App for Nothing {
    type State = u32;
    fn name(&self) -> &'static str {
        "nothing"
    }
    fn build(&self, _: &mut Builder<Self>) {}
}

#[test]
fn an_empty_pipeline_counts_what_nobody_handles() {
    let p = Pipeline::build(vec![Box::new(Nothing)], Services::new()).unwrap();
    assert_eq!(p.app_names(), ["nothing"]);
    let mut sw = p.new_switch(info(1, Version::V1_3));
    let mut out = Vec::new();
    let now = Instant::now();
    p.switch_added(&mut sw, &mut out, now);
    // A 1.3 BARRIER_REPLY nobody asked for, and a short frame.
    p.handle(&mut sw, &[4, 21, 0, 8, 0, 0, 0, 9], &mut out, now);
    p.handle(&mut sw, &[4, 21, 0], &mut out, now);
    assert!(out.is_empty());
    let c = p.counters();
    assert_eq!((c.unhandled, c.decode_errors), (1, 1));
    assert_eq!(p.info(&sw).dpid, 1);
    p.switch_removed(sw, "test", now);
}

#[test]
fn two_apps_with_one_name_are_refused() {
    let e =
        Pipeline::build(vec![Box::new(Nothing), Box::new(Nothing)], Services::new()).unwrap_err();
    assert_eq!(e, StartError::DuplicateApp { app: "nothing" });
}
