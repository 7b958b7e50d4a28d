//! Tests of the conversions to and from the wire: what one version cannot express, the
//! FLOW_MODs and flow-stats replies of both versions, an app's FLOW_MOD in this syntax,
//! a 1.0 match read back, and selections as flow-stats requests.

use crate::ofctl::*;
use crate::Version;

#[test]
fn not_expressible_in_one_version() {
    let refuse = |s: &str, v: Version| {
        let f = parse_flow(s).unwrap();
        match f.to_message(v, FlowModCommand::Add) {
            Err(crate::EncodeError::NotExpressible { what, .. }) => what,
            other => panic!("{s} in {v}: {other:?}"),
        }
    };
    assert_eq!(
        refuse("actions=goto_table:1", Version::V1_0),
        "a goto_table instruction"
    );
    assert_eq!(
        refuse("actions=meter:1", Version::V1_0),
        "a meter instruction"
    );
    assert_eq!(refuse("actions=group:1", Version::V1_0), "a group action");
    assert_eq!(refuse("ip,actions=dec_ttl", Version::V1_0), "dec_ttl");
    assert_eq!(
        refuse("table=1,actions=drop", Version::V1_0),
        "a table other than 0"
    );
    assert_eq!(
        refuse("ipv6,ipv6_dst=::1,actions=drop", Version::V1_0),
        "an IPv6 field match"
    );
    assert_eq!(
        refuse(
            "dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=drop",
            Version::V1_0
        ),
        "a masked Ethernet address match"
    );
    assert_eq!(
        refuse("ip,nw_src=10.0.0.0/255.0.255.0,actions=drop", Version::V1_0),
        "an IPv4 mask that is not a prefix"
    );
    assert_eq!(
        refuse("ip,actions=set_field:1->udp_src", Version::V1_0),
        "setting a TCP or UDP port without that protocol in the match"
    );
    // 1.3 refuses what its prerequisites forbid, when a flow is built by hand.
    let mut f = parse_flow("actions=drop").unwrap();
    f.matching.tp_dst = Some(80);
    assert!(f.to_message(Version::V1_3, FlowModCommand::Add).is_err());
}

#[test]
fn both_versions_on_the_wire() {
    let f = parse_flow(
        "priority=100,tcp,nw_dst=10.0.0.0/24,tp_dst=80,actions=mod_tp_dst:8080,output:2",
    )
    .unwrap();
    let of10 = f.to_of10(FlowModCommand::Add).unwrap();
    assert_eq!(of10.match_.nw_dst_prefix_len(), 24);
    assert_eq!(
        of10.actions[0],
        crate::of10::Action::SetTpDst { tp_port: 8080 }
    );
    assert_eq!(Flow::from_of10(&of10).unwrap(), f);
    let of13 = f.to_of13(FlowModCommand::Add).unwrap();
    assert_eq!(
        of13.match_
            .get(crate::of13::OxmField::TcpDst)
            .map(|b| b.value),
        Some(crate::of13::OxmValue::Int(80))
    );
    assert_eq!(Flow::from_of13(&of13).unwrap(), f);
    // A delete carries no instructions.
    let d = f.to_of13(FlowModCommand::Delete).unwrap();
    assert!(d.instructions.is_empty());
}

#[test]
fn flow_stats_replies_of_both_versions() {
    let f = parse_flow("cookie=0x5,priority=9,ip,nw_dst=10.0.0.2,actions=output:2").unwrap();
    let fm = f.to_of10(FlowModCommand::Add).unwrap();
    let s10 = crate::of10::stats::FlowStats {
        table_id: 0,
        match_: fm.match_,
        duration_sec: 1,
        duration_nsec: 500_000_000,
        priority: fm.priority,
        idle_timeout: 0,
        hard_timeout: 0,
        cookie: fm.cookie,
        packet_count: 3,
        byte_count: 300,
        actions: fm.actions,
    };
    let e = FlowEntry::from_of10(&s10).unwrap();
    assert_eq!(e.flow, f);
    assert_eq!(
        e.to_string(),
        "cookie=0x5, duration=1.500s, table=0, n_packets=3, n_bytes=300, \
         priority=9,ip,nw_dst=10.0.0.2 actions=output:2"
    );
    let fm13 = f.to_of13(FlowModCommand::Add).unwrap();
    let s13 = crate::of13::multipart::FlowStats {
        table_id: 0,
        duration_sec: 1,
        duration_nsec: 0,
        priority: fm13.priority,
        idle_timeout: 0,
        hard_timeout: 0,
        flags: 0,
        cookie: fm13.cookie,
        packet_count: 0,
        byte_count: 0,
        match_: fm13.match_,
        instructions: fm13.instructions,
    };
    let reply = crate::Message::V13(crate::of13::Message::MultipartReply(
        crate::of13::multipart::MultipartReply {
            flags: 0,
            body: crate::of13::multipart::MultipartReplyBody::Flow { stats: vec![s13] },
        },
    ));
    let entries = FlowEntry::from_message(&reply).unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].as_ref().unwrap().flow, f);
    // What the syntax cannot show is an error naming it.
    let vendor = crate::of10::stats::FlowStats {
        actions: vec![crate::of10::Action::Vendor {
            vendor: 0x2320,
            body: vec![0; 8],
        }],
        ..s10
    };
    assert!(FlowEntry::from_of10(&vendor)
        .unwrap_err()
        .to_string()
        .contains("vendor action"));
}

#[test]
fn an_apps_flow_mod_in_this_syntax() {
    use crate::model::{self, Action, Ipv4Prefix};
    let m = model::Match {
        in_port: Some(1),
        eth_type: Some(0x0800),
        ip_proto: Some(6),
        ipv4_dst: Some(Ipv4Prefix {
            addr: "10.0.0.7".parse().unwrap(),
            len: 24,
        }),
        tp_dst: Some(80),
        ..model::Match::default()
    };
    let actions = [
        Action::SetTcpDst { port: 8080 },
        Action::output(PortNo::Physical(2)),
        Action::output(PortNo::Controller),
    ];
    let fm = model::FlowMod::add(m, &actions).priority(10).cookie(0x7);
    let flow = Flow::from(&fm);
    assert_eq!(
        flow.to_string(),
        "priority=10,cookie=0x7,tcp,in_port=1,nw_dst=10.0.0.0/24,tp_dst=80,\
         actions=mod_tp_dst:8080,output:2,CONTROLLER:65535"
    );
    // The same bytes on the wire, whichever way the flow was built.
    for v in [Version::V1_0, Version::V1_3] {
        let mut a = Vec::new();
        fm.encode(v, 1, &mut a).unwrap();
        let (_, decoded) = crate::Message::decode(&a).unwrap();
        let back = match decoded {
            crate::Message::V10(crate::of10::Message::FlowMod(x)) => Flow::from_of10(&x),
            crate::Message::V13(crate::of13::Message::FlowMod(x)) => Flow::from_of13(&x),
            other => panic!("{other:?}"),
        }
        .unwrap();
        assert_eq!(back, flow, "{v}");
    }
}

#[test]
fn an_untagged_1_0_match_drops_its_priority() {
    // Open vSwitch's 1.0 flow stats: dl_vlan=0xffff with dl_vlan_pcp exact and 0.
    let f = parse_flow("dl_vlan=0xffff,actions=drop").unwrap();
    let mut fm = f.to_of10(FlowModCommand::Add).unwrap();
    fm.match_.wildcards &= !crate::of10::flow_match::OFPFW_DL_VLAN_PCP;
    assert_eq!(Flow::from_of10(&fm).unwrap(), f);
    // A priority alone is a tagged packet's.
    let p = parse_flow("dl_vlan_pcp=5,actions=drop").unwrap();
    let fm = p.to_of10(FlowModCommand::Add).unwrap();
    assert_eq!(
        fm.match_.wildcards & crate::of10::flow_match::OFPFW_DL_VLAN,
        crate::of10::flow_match::OFPFW_DL_VLAN
    );
    assert_eq!(Flow::from_of10(&fm).unwrap(), p);
}

#[test]
fn stats_requests_for_a_selection() {
    let sel = parse_match("cookie=0x100/0xff00,tcp,tp_dst=80").unwrap();
    let Ok(crate::Message::V13(crate::of13::Message::MultipartRequest(r))) =
        sel.stats_request(Version::V1_3)
    else {
        panic!()
    };
    let crate::of13::multipart::MultipartRequestBody::Flow(f) = r.body else {
        panic!()
    };
    assert_eq!((f.table_id, f.cookie, f.cookie_mask), (0xff, 0x100, 0xff00));
    assert_eq!(
        f.match_.get(crate::of13::OxmField::TcpDst).map(|b| b.value),
        Some(crate::of13::OxmValue::Int(80))
    );
    // 1.0 has no cookie mask; without one the request is 1.0's.
    assert!(sel.stats_request(Version::V1_0).is_err());
    let all = parse_match("table=0").unwrap();
    let Ok(crate::Message::V10(crate::of10::Message::StatsRequest(r))) =
        all.stats_request(Version::V1_0)
    else {
        panic!()
    };
    let crate::of10::StatsRequestBody::Flow(f) = r.body else {
        panic!()
    };
    // Every field wildcarded (nw_src/nw_dst as 32 ignored bits, which is "all").
    use crate::of10::flow_match::{OFPFW_ALL, OFPFW_NW_DST_MASK, OFPFW_NW_SRC_MASK};
    assert_eq!(f.table_id, 0);
    let w = f.match_.wildcards;
    assert_eq!(w | OFPFW_NW_SRC_MASK | OFPFW_NW_DST_MASK, OFPFW_ALL);
    assert_eq!(
        (f.match_.nw_src_prefix_len(), f.match_.nw_dst_prefix_len()),
        (0, 0)
    );
}
