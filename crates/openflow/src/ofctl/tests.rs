//! Unit tests: each field and action under each of its names, errors with their tokens,
//! print → parse identity (property), dump-flows lines, and the wire both ways.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;
use crate::Version;

fn m(s: &str) -> FlowMatch {
    parse_flow(&format!("{s},actions=drop"))
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .matching
}

fn acts(s: &str) -> Vec<FlowAction> {
    parse_flow(&format!("actions={s}"))
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .actions
}

fn mac(s: &str) -> MacAddr {
    s.parse().unwrap()
}

fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

#[test]
fn fields_under_old_and_new_names() {
    let a = Some(Masked::exact(mac("00:00:00:00:00:01")));
    assert_eq!(m("dl_src=00:00:00:00:00:01").eth_src, a);
    assert_eq!(m("eth_src=00:00:00:00:00:01").eth_src, a);
    assert_eq!(m("dl_dst=00:00:00:00:00:01").eth_dst, a);
    assert_eq!(m("eth_dst=00:00:00:00:00:01").eth_dst, a);
    assert_eq!(m("dl_type=0x88cc").eth_type, Some(0x88cc));
    assert_eq!(m("eth_type=2048").eth_type, Some(0x0800));
    let n = Some(Masked::exact(v4("10.0.0.1")));
    for k in ["nw_dst", "ip_dst", "ipv4_dst"] {
        assert_eq!(m(&format!("ip,{k}=10.0.0.1")).ipv4_dst, n, "{k}");
    }
    for k in ["nw_src", "ip_src", "ipv4_src"] {
        assert_eq!(m(&format!("ip,{k}=10.0.0.1")).ipv4_src, n, "{k}");
    }
    assert_eq!(m("arp,arp_spa=10.0.0.1").ipv4_src, n);
    assert_eq!(m("arp,arp_tpa=10.0.0.1").ipv4_dst, n);
    assert_eq!(m("arp,arp_op=2").ip_proto, Some(2));
    assert_eq!(m("ip,nw_proto=89").ip_proto, Some(89));
    assert_eq!(m("ip,ip_proto=89").ip_proto, Some(89));
    assert_eq!(m("ip,nw_tos=184").ip_dscp, Some(46));
    assert_eq!(m("ip,ip_dscp=46").ip_dscp, Some(46));
    assert_eq!(m("ip,nw_ecn=3").ip_ecn, Some(3));
    assert_eq!(m("ip,ip_ecn=3").ip_ecn, Some(3));
    for k in ["tp_dst", "tcp_dst"] {
        assert_eq!(m(&format!("tcp,{k}=80")).tp_dst, Some(80), "{k}");
    }
    assert_eq!(m("udp,udp_src=68").tp_src, Some(68));
    assert_eq!(m("sctp,sctp_dst=9").tp_dst, Some(9));
    assert_eq!(m("icmp,icmp_type=8,icmp_code=1").tp_src, Some(8));
    assert_eq!(m("icmp,icmpv4_code=3").tp_dst, Some(3));
    assert_eq!(m("icmp6,icmpv6_type=135").tp_src, Some(135));
    assert_eq!(m("in_port=7").in_port, Some(PortNo::Physical(7)));
    assert_eq!(m("in_port=LOCAL").in_port, Some(PortNo::Local));
    assert_eq!(m("in_port=65534").in_port, Some(PortNo::Local));
    assert_eq!(m("dl_vlan=5").vlan, Some(VlanMatch::Id(5)));
    assert_eq!(m("dl_vlan=0xffff").vlan, Some(VlanMatch::Untagged));
    assert_eq!(m("vlan_vid=0x1005").vlan, Some(VlanMatch::Id(5)));
    assert_eq!(m("vlan_vid=0").vlan, Some(VlanMatch::Untagged));
    assert_eq!(m("vlan_tci=0x0000").vlan, Some(VlanMatch::Untagged));
    assert_eq!(m("vlan_tci=0x0000/0x1fff").vlan, Some(VlanMatch::Untagged));
    assert_eq!(m("vlan_tci=0x1000/0x1000").vlan, Some(VlanMatch::AnyTagged));
    let pcp = m("dl_vlan_pcp=3");
    assert_eq!(
        (pcp.vlan, pcp.vlan_pcp),
        (Some(VlanMatch::AnyTagged), Some(3))
    );
    assert_eq!(m("dl_vlan=1,vlan_pcp=3").vlan_pcp, Some(3));
    assert_eq!(
        m("ipv6,ipv6_src=2001:db8::1").ipv6_src,
        Some(Masked::exact(v6("2001:db8::1")))
    );
    assert_eq!(m("ipv6,ipv6_label=0x12345").ipv6_label, Some(0x12345));
    assert_eq!(m("ipv6,ipv6_flabel=5").ipv6_label, Some(5));
    assert_eq!(
        m("arp,arp_sha=00:00:00:00:00:01").arp_sha,
        Some(mac("00:00:00:00:00:01"))
    );
    assert_eq!(
        m("arp,arp_tha=00:00:00:00:00:01").arp_tha,
        Some(mac("00:00:00:00:00:01"))
    );
    assert_eq!(m("metadata=0x5").metadata, Some(Masked::exact(5)));
}

#[test]
fn shorthands() {
    let t = |s: &str| {
        let x = m(s);
        (x.eth_type, x.ip_proto)
    };
    assert_eq!(t("ip"), (Some(0x0800), None));
    assert_eq!(t("ipv6"), (Some(0x86dd), None));
    assert_eq!(t("arp"), (Some(0x0806), None));
    assert_eq!(t("rarp"), (Some(0x8035), None));
    assert_eq!(t("icmp"), (Some(0x0800), Some(1)));
    assert_eq!(t("icmp6"), (Some(0x86dd), Some(58)));
    assert_eq!(t("tcp"), (Some(0x0800), Some(6)));
    assert_eq!(t("tcp6"), (Some(0x86dd), Some(6)));
    assert_eq!(t("udp"), (Some(0x0800), Some(17)));
    assert_eq!(t("udp6"), (Some(0x86dd), Some(17)));
    assert_eq!(t("sctp"), (Some(0x0800), Some(132)));
    // A shorthand and the fields it sets may both be given when they agree.
    assert_eq!(t("tcp,dl_type=0x0800,nw_proto=6"), (Some(0x0800), Some(6)));
}

#[test]
fn prefixes_and_masks() {
    let x = m("ip,nw_src=10.1.2.3/8,nw_dst=10.1.2.3/255.255.0.0");
    assert_eq!(
        x.ipv4_src,
        Some(Masked {
            value: v4("10.0.0.0"),
            mask: Some(v4("255.0.0.0"))
        })
    );
    assert_eq!(
        x.ipv4_dst,
        Some(Masked {
            value: v4("10.1.0.0"),
            mask: Some(v4("255.255.0.0"))
        })
    );
    // /32 and an all-ones mask are exact; /0 is no match on the field at all.
    assert_eq!(
        m("ip,nw_src=10.0.0.1/32").ipv4_src,
        Some(Masked::exact(v4("10.0.0.1")))
    );
    assert_eq!(m("ip,nw_src=10.0.0.1/0").ipv4_src, None);
    let y = m("ipv6,ipv6_dst=2001:db8::1/32");
    assert_eq!(
        y.ipv6_dst,
        Some(Masked {
            value: v6("2001:db8::"),
            mask: Some(v6("ffff:ffff::"))
        })
    );
    let e = m("dl_dst=01:00:00:00:00:05/01:00:00:00:00:00");
    assert_eq!(
        e.eth_dst,
        Some(Masked {
            value: mac("01:00:00:00:00:00"),
            mask: Some(mac("01:00:00:00:00:00"))
        })
    );
    assert_eq!(
        m("metadata=0x1f/0xf0").metadata,
        Some(Masked {
            value: 0x10,
            mask: Some(0xf0)
        })
    );
    // Printed back: prefixes as /LEN, other masks in full.
    let f = parse_flow("ip,nw_src=10.0.0.0/255.0.255.0,nw_dst=10.0.0.0/255.255.255.0,actions=drop")
        .unwrap();
    assert_eq!(
        f.to_string(),
        "ip,nw_src=10.0.0.0/255.0.255.0,nw_dst=10.0.0.0/24,actions=drop"
    );
}

#[test]
fn actions_under_each_name() {
    use FlowAction::*;
    let p = PortNo::Physical;
    assert_eq!(acts("output:2"), [Output { port: p(2) }]);
    assert_eq!(acts("2"), [Output { port: p(2) }]);
    assert_eq!(acts("drop"), []);
    assert_eq!(acts("flood,all,in_port,normal,local").len(), 5);
    assert_eq!(
        acts("FLOOD"),
        [Output {
            port: PortNo::Flood
        }]
    );
    assert_eq!(acts("ALL"), [Output { port: PortNo::All }]);
    assert_eq!(
        acts("IN_PORT"),
        [Output {
            port: PortNo::InPort
        }]
    );
    assert_eq!(acts("controller"), [Controller { max_len: 0xffff }]);
    assert_eq!(acts("controller:128"), [Controller { max_len: 128 }]);
    assert_eq!(acts("CONTROLLER:65535"), [Controller { max_len: 0xffff }]);
    assert_eq!(acts("controller(max_len=64)"), [Controller { max_len: 64 }]);
    assert_eq!(acts("output:controller"), [Controller { max_len: 0xffff }]);
    assert_eq!(
        acts("enqueue:1:3"),
        [Enqueue {
            port: p(1),
            queue: 3
        }]
    );
    assert_eq!(acts("set_queue:3"), [SetQueue { queue: 3 }]);
    assert_eq!(acts("group:4"), [Group { group_id: 4 }]);
    assert_eq!(acts("dec_ttl"), [DecTtl]);
    assert_eq!(acts("strip_vlan"), [PopVlan]);
    assert_eq!(acts("pop_vlan"), [PopVlan]);
    assert_eq!(acts("push_vlan:0x8100"), [PushVlan { ethertype: 0x8100 }]);
    let set = |s: &str| match acts(s).as_slice() {
        [Set(f)] => *f,
        other => panic!("{s}: {other:?}"),
    };
    assert_eq!(set("mod_vlan_vid:7"), SetField::VlanVid(7));
    assert_eq!(set("set_field:4103->vlan_vid"), SetField::VlanVid(7));
    assert_eq!(set("mod_vlan_pcp:3"), SetField::VlanPcp(3));
    assert_eq!(set("set_field:3->vlan_pcp"), SetField::VlanPcp(3));
    let a = mac("00:00:00:00:00:0a");
    assert_eq!(set("mod_dl_src:00:00:00:00:00:0a"), SetField::EthSrc(a));
    assert_eq!(
        set("set_field:00:00:00:00:00:0a->eth_src"),
        SetField::EthSrc(a)
    );
    assert_eq!(set("mod_dl_dst:00:00:00:00:00:0a"), SetField::EthDst(a));
    assert_eq!(set("mod_nw_src:1.2.3.4"), SetField::Ipv4Src(v4("1.2.3.4")));
    assert_eq!(
        set("set_field:1.2.3.4->ip_src"),
        SetField::Ipv4Src(v4("1.2.3.4"))
    );
    assert_eq!(
        set("set_field:1.2.3.4->ipv4_dst"),
        SetField::Ipv4Dst(v4("1.2.3.4"))
    );
    assert_eq!(set("mod_nw_dst:1.2.3.4"), SetField::Ipv4Dst(v4("1.2.3.4")));
    assert_eq!(set("mod_nw_tos:16"), SetField::IpDscp(4));
    assert_eq!(set("set_field:4->ip_dscp"), SetField::IpDscp(4));
    assert_eq!(set("mod_nw_ecn:2"), SetField::IpEcn(2));
    assert_eq!(set("set_field:2->nw_ecn"), SetField::IpEcn(2));
    assert_eq!(set("set_field:5->sctp_src"), SetField::SctpSrc(5));
    assert_eq!(set("set_field:0x5->ipv6_label"), SetField::Ipv6Label(5));
    assert_eq!(
        set("set_field:2001:db8::1->ipv6_dst"),
        SetField::Ipv6Dst(v6("2001:db8::1"))
    );
    assert_eq!(set("set_field:2->arp_op"), SetField::ArpOp(2));
    // mod_tp_* write the ports of the match's protocol.
    let tp = |s: &str| parse_flow(s).unwrap().actions;
    assert_eq!(tp("tcp,actions=mod_tp_src:1"), [Set(SetField::TcpSrc(1))]);
    assert_eq!(tp("udp,actions=mod_tp_dst:2"), [Set(SetField::UdpDst(2))]);
    assert_eq!(
        tp("sctp6,actions=mod_tp_dst:3"),
        [Set(SetField::SctpDst(3))]
    );
    assert_eq!(
        tp("udp,actions=set_field:4->tp_src"),
        [Set(SetField::UdpSrc(4))]
    );
}

#[test]
fn instructions_and_flow_keywords() {
    let f = parse_flow(
        "table=3 priority=7 cookie=0x10 idle_timeout=5 hard_timeout=6 send_flow_rem \
         check_overlap reset_counts no_packet_counts no_byte_counts ip \
         actions=meter:2,output:1,clear_actions,write_actions(group:1,output:2),\
         write_metadata:0x5/0xff,goto_table:4",
    )
    .unwrap();
    assert_eq!((f.table, f.priority, f.cookie), (3, 7, 0x10));
    assert_eq!((f.idle_timeout, f.hard_timeout), (5, 6));
    assert_eq!(
        f.flags,
        FlowFlags {
            send_flow_rem: true,
            check_overlap: true,
            reset_counts: true,
            no_packet_counts: true,
            no_byte_counts: true
        }
    );
    assert_eq!(f.meter, Some(2));
    assert_eq!(
        f.actions,
        [FlowAction::Output {
            port: PortNo::Physical(1)
        }]
    );
    assert!(f.clear_actions);
    assert_eq!(
        f.write_actions,
        Some(vec![
            FlowAction::Group { group_id: 1 },
            FlowAction::Output {
                port: PortNo::Physical(2)
            }
        ])
    );
    assert_eq!(
        f.write_metadata,
        Some(Masked {
            value: 5,
            mask: Some(0xff)
        })
    );
    assert_eq!(f.goto_table, Some(4));
    assert_eq!(
        f.to_string(),
        "table=3,idle_timeout=5,hard_timeout=6,send_flow_rem,check_overlap,reset_counts,\
         no_packet_counts,no_byte_counts,priority=7,cookie=0x10,ip,actions=meter:2,output:1,\
         clear_actions,write_actions(group:1,output:2),write_metadata:0x5/0xff,goto_table:4"
    );
    // A selection for del-flows: a cookie mask, every table unless one is named, no
    // actions; printed back as a selection.
    let d = parse_match("cookie=0x1/0xff,tcp,tp_dst=80").unwrap();
    assert_eq!((d.cookie, d.cookie_mask, d.table), (0x1, 0xff, 0xff));
    assert_eq!(d.selection_to_ofctl(), "cookie=0x1/0xff,tcp,tp_dst=80");
    assert_eq!(parse_match(&d.selection_to_ofctl()).unwrap(), d);
    assert_eq!(d.matching.to_ofctl(), "tcp,tp_dst=80");
    let t = parse_match("table=2,priority=5,in_port=1").unwrap();
    assert_eq!(t.selection_to_ofctl(), "table=2,priority=5,in_port=1");
    assert_eq!(parse_match("").unwrap().selection_to_ofctl(), "");
    // A delete of every table is expressible in both versions; a cookie mask in 1.3 only.
    let all = parse_match("tcp,tp_dst=80").unwrap();
    for v in [Version::V1_0, Version::V1_3] {
        all.to_message(v, FlowModCommand::Delete)
            .unwrap_or_else(|e| panic!("{v}: {e}"));
    }
    assert!(d.to_message(Version::V1_0, FlowModCommand::Delete).is_err());
    let Ok(crate::Message::V13(crate::of13::Message::FlowMod(fm))) =
        d.to_message(Version::V1_3, FlowModCommand::Delete)
    else {
        panic!()
    };
    assert_eq!((fm.table_id, fm.cookie_mask), (0xff, 0xff));
}

/// Parses `s`, expecting an error about `token` at its first occurrence, and returns the
/// message.
fn err(s: &str, token: &str) -> String {
    let e = parse_flow(s).expect_err(s);
    let at = if token.is_empty() {
        s.len()
    } else {
        s.find(token).unwrap()
    };
    assert_eq!(e.token, token, "{s}: {e}");
    assert_eq!(e.span, at..at + token.len(), "{s}: {e}");
    e.to_string()
}

#[test]
fn errors_name_the_token() {
    assert_eq!(
        err("ip,nw_dst=10.0.0.300,actions=drop", "nw_dst=10.0.0.300"),
        r#"nw_dst=10.0.0.300: bad IPv4 address "10.0.0.300" (at byte 3)"#
    );
    assert_eq!(
        err("ip,nw_dts=1.2.3.4,actions=drop", "nw_dts=1.2.3.4"),
        r#"nw_dts=1.2.3.4: unknown field or keyword "nw_dts" (at byte 3)"#
    );
    assert_eq!(
        err("ip,actions=output:1,frobnicate:3", "frobnicate:3"),
        r#"frobnicate:3: unknown action "frobnicate" (at byte 20)"#
    );
    assert!(err(
        "dl_src=00:00:00:00:00,actions=drop",
        "dl_src=00:00:00:00:00"
    )
    .contains("bad Ethernet address"));
    assert!(err("nw_dst=10.0.0.1,actions=drop", "nw_dst=10.0.0.1").contains("needs ip or arp"));
    assert!(err("ip,tp_dst=80,actions=drop", "tp_dst=80").contains("needs tcp, udp"));
    assert!(err("ipv6_src=::1,actions=drop", "ipv6_src=::1").contains("needs ipv6"));
    assert!(err("tcp,udp,actions=drop", "udp").contains("contradicts \"tcp\""));
    assert!(err("in_port=1,in_port=2,actions=drop", "in_port=2").contains("contradicts"));
    assert!(err("ip,actions=mod_tp_dst:80", "mod_tp_dst:80").contains("needs tcp, udp or sctp"));
    assert!(err("dl_vlan=4096,actions=drop", "dl_vlan=4096").contains("bad VLAN id"));
    assert!(err("priority=65536,actions=drop", "priority=65536").contains("bad priority"));
    assert!(
        err("ip,nw_src=10.0.0.0/33,actions=drop", "nw_src=10.0.0.0/33")
            .contains("bad IPv4 address")
    );
    assert!(err("ip,nw_tos=3,actions=drop", "nw_tos=3").contains("multiple of 4"));
    assert!(err("actions=output:1,meter:1", "meter:1").contains("this order"));
    assert!(err("actions=goto_table:1,output:1", "output:1").contains("this order"));
    assert!(err("actions=output:1,drop", "drop").contains("whole action list"));
    assert!(err("actions=write_actions(output:1,bogus)", "bogus").contains("unknown action"));
    assert!(
        err("actions=set_field:1->nw_bogus", "set_field:1->nw_bogus").contains("set_field field")
    );
    assert!(err("actions=controller:x", "controller:x").contains("bad max_len"));
    assert!(err("actions=group", "group").contains("needs a value"));
    assert!(err("ip=1,actions=drop", "ip=1").contains("takes no value"));
    assert!(err("cookie=1/1,actions=drop", "cookie=1/1").contains("cookie mask"));
    assert!(err("n_packets=3,actions=drop", "n_packets=3").contains("dump-flows"));
    assert_eq!(
        err("ip,nw_dst=10.0.0.1", ""),
        "no actions: end the flow with actions=... (actions=drop for none) (at byte 18)"
    );
    assert!(parse_match("ip,actions=drop")
        .unwrap_err()
        .to_string()
        .contains("no actions"));
    // The caret line for a terminal.
    let s = "ip,nw_dst=10.0.0.300,actions=drop";
    let shown = parse_flow(s).unwrap_err().show(s);
    assert_eq!(
        shown,
        "ip,nw_dst=10.0.0.300,actions=drop\n   ^^^^^^^^^^^^^^^^^ bad IPv4 address \"10.0.0.300\""
    );
}

#[test]
fn dump_flows_lines() {
    let line =
        " cookie=0x12, duration=3.042s, table=2, n_packets=7, n_bytes=686, idle_timeout=10, \
                idle_age=1, priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80 actions=output:2";
    let e = parse_flow_entry(line).unwrap();
    assert_eq!(
        e.counters,
        Some(FlowCounters {
            duration_sec: 3,
            duration_nsec: 42_000_000,
            packet_count: 7,
            byte_count: 686
        })
    );
    assert_eq!(
        (e.flow.cookie, e.flow.table, e.flow.priority),
        (0x12, 2, 100)
    );
    assert_eq!(e.flow.idle_timeout, 10);
    assert_eq!(
        e.to_string(),
        "cookie=0x12, duration=3.042s, table=2, n_packets=7, n_bytes=686, \
         idle_timeout=10,priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80 actions=output:2"
    );
    assert_eq!(parse_flow_entry(&e.to_string()).unwrap(), e);
    // Flags as Open vSwitch prints them, separated by spaces.
    let f = parse_flow_entry(
        " cookie=0x0, duration=0.003s, table=0, n_packets=0, n_bytes=0, send_flow_rem \
         check_overlap reset_counts vlan_tci=0x0000/0x1fff actions=drop",
    )
    .unwrap();
    assert!(f.flow.flags.send_flow_rem && f.flow.flags.check_overlap && f.flow.flags.reset_counts);
    assert_eq!(f.flow.matching.vlan, Some(VlanMatch::Untagged));
    // Without counters, an entry prints as its flow.
    let plain = FlowEntry {
        flow: e.flow.clone(),
        counters: None,
    };
    assert_eq!(plain.to_string(), e.flow.to_string());
}

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

// ---------------------------------------------------------------------------------
// Property: any flow in canonical form prints to a string that parses back to it.

/// A flow built from random numbers: every field and action reachable, each in the
/// canonical (normalised) form the parser produces.
fn flow_from(r: &[u64]) -> Flow {
    // splitmix64, seeded by the property's numbers.
    let mut state = r
        .iter()
        .fold(0x9e37_79b9_7f4a_7c15u64, |a, b| a.rotate_left(5) ^ b);
    let mut n = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let port = |v: u64| match v % 9 {
        0 => PortNo::InPort,
        1 => PortNo::Normal,
        2 => PortNo::Flood,
        3 => PortNo::All,
        4 => PortNo::Local,
        5 => PortNo::Table,
        6 => PortNo::Any,
        _ => PortNo::Physical((v >> 8) as u32 % 0xfff0),
    };
    let macv = |v: u64| MacAddr((v.to_be_bytes()[2..]).try_into().unwrap());
    let mut m = FlowMatch::default();
    if n() % 2 == 0 {
        m.in_port = Some(port(n()));
    }
    for slot in [&mut m.eth_src, &mut m.eth_dst] {
        match n() % 3 {
            0 => *slot = Some(Masked::exact(macv(n()))),
            1 => {
                let mut mask = macv(n() | 1 << 40);
                if mask == MacAddr::BROADCAST {
                    mask.0[5] = 0;
                }
                let mut v = macv(n()).0;
                for (b, k) in v.iter_mut().zip(mask.0) {
                    *b &= k;
                }
                *slot = Some(Masked {
                    value: MacAddr(v),
                    mask: Some(mask),
                });
            }
            _ => {}
        }
    }
    match n() % 4 {
        0 => m.vlan = Some(VlanMatch::Id((n() % 4096) as u16)),
        1 => m.vlan = Some(VlanMatch::Untagged),
        2 => m.vlan = Some(VlanMatch::AnyTagged),
        _ => {}
    }
    if matches!(m.vlan, Some(VlanMatch::Id(_)) | Some(VlanMatch::AnyTagged)) && n() % 2 == 0 {
        m.vlan_pcp = Some((n() % 8) as u8);
    }
    let v4m = |a: u64, l: u64| {
        let len = (l % 33) as u32;
        let mask = if len == 0 {
            u32::MAX ^ 1
        } else {
            u32::MAX << (32 - len)
        };
        let mask = if l % 5 == 0 {
            (l >> 8) as u32 | 0x8000_0000
        } else {
            mask
        };
        if mask == u32::MAX {
            Masked::exact(Ipv4Addr::from(a as u32))
        } else {
            Masked {
                value: Ipv4Addr::from(a as u32 & mask),
                mask: Some(Ipv4Addr::from(mask)),
            }
        }
    };
    let v6m = |a: u64, l: u64| {
        let addr = (a as u128) << 64 | (l as u128);
        let len = (l % 129) as u32;
        let mask = if len == 0 {
            1u128 << 127
        } else {
            u128::MAX << (128 - len)
        };
        if mask == u128::MAX {
            Masked::exact(Ipv6Addr::from(addr))
        } else {
            Masked {
                value: Ipv6Addr::from(addr & mask),
                mask: Some(Ipv6Addr::from(mask)),
            }
        }
    };
    match n() % 6 {
        0 | 1 => {
            m.eth_type = Some(ETH_IPV4);
            m.ip_proto =
                [None, Some(1), Some(6), Some(17), Some(132), Some(89)][(n() % 6) as usize];
            if n() % 2 == 0 {
                m.ipv4_src = Some(v4m(n(), n()));
            }
            if n() % 2 == 0 {
                m.ipv4_dst = Some(v4m(n(), n()));
            }
        }
        2 => {
            m.eth_type = Some(ETH_IPV6);
            m.ip_proto = [None, Some(58), Some(6), Some(17), Some(132)][(n() % 5) as usize];
            if n() % 2 == 0 {
                m.ipv6_src = Some(v6m(n(), n()));
            }
            if n() % 2 == 0 {
                m.ipv6_dst = Some(v6m(n(), n()));
            }
            if n() % 2 == 0 {
                m.ipv6_label = Some((n() % (1 << 20)) as u32);
            }
        }
        3 => {
            m.eth_type = Some([ETH_ARP, ETH_RARP][(n() % 2) as usize]);
            if n() % 2 == 0 {
                m.ip_proto = Some(n() as u8);
            }
            if n() % 2 == 0 {
                m.ipv4_src = Some(v4m(n(), n()));
            }
            if n() % 2 == 0 {
                m.arp_sha = Some(macv(n()));
                m.arp_tha = Some(macv(n()));
            }
        }
        4 => m.eth_type = Some(0x88cc),
        _ => {}
    }
    if m.is_ip() {
        if n() % 2 == 0 {
            m.ip_dscp = Some((n() % 64) as u8);
        }
        if n() % 2 == 0 {
            m.ip_ecn = Some((n() % 4) as u8);
        }
        let wide = if m.is_icmp() { 256 } else { 65536 };
        if m.transport().is_some() || m.is_icmp() {
            if n() % 2 == 0 {
                m.tp_src = Some((n() % wide) as u16);
            }
            if n() % 2 == 0 {
                m.tp_dst = Some((n() % wide) as u16);
            }
        }
    }
    if n() % 3 == 0 {
        m.metadata = Some(if n() % 2 == 0 {
            Masked::exact(n())
        } else {
            let mask = n() | 1;
            let mask = if mask == u64::MAX { 1 } else { mask };
            Masked {
                value: n() & mask,
                mask: Some(mask),
            }
        });
    }
    let action = |n: &mut dyn FnMut() -> u64| -> FlowAction {
        match n() % 14 {
            0 => FlowAction::Output { port: port(n()) },
            1 => FlowAction::Controller {
                max_len: n() as u16,
            },
            2 => FlowAction::Enqueue {
                port: port(n()),
                queue: n() as u32,
            },
            3 => FlowAction::SetQueue { queue: n() as u32 },
            4 => FlowAction::PushVlan {
                ethertype: n() as u16,
            },
            5 => FlowAction::PopVlan,
            6 => FlowAction::Group {
                group_id: n() as u32,
            },
            7 => FlowAction::DecTtl,
            _ => FlowAction::Set(match n() % 22 {
                0 => SetField::EthSrc(macv(n())),
                1 => SetField::EthDst(macv(n())),
                2 => SetField::VlanVid((n() % 4096) as u16),
                3 => SetField::VlanPcp((n() % 8) as u8),
                4 => SetField::Ipv4Src(Ipv4Addr::from(n() as u32)),
                5 => SetField::Ipv4Dst(Ipv4Addr::from(n() as u32)),
                6 => SetField::IpDscp((n() % 64) as u8),
                7 => SetField::IpEcn((n() % 4) as u8),
                8 => SetField::TcpSrc(n() as u16),
                9 => SetField::TcpDst(n() as u16),
                10 => SetField::UdpSrc(n() as u16),
                11 => SetField::UdpDst(n() as u16),
                12 => SetField::SctpSrc(n() as u16),
                13 => SetField::SctpDst(n() as u16),
                14 => SetField::Ipv6Src(Ipv6Addr::from((n() as u128) << 64 | n() as u128)),
                15 => SetField::Ipv6Dst(Ipv6Addr::from(n() as u128)),
                16 => SetField::Ipv6Label((n() % (1 << 20)) as u32),
                17 => SetField::ArpOp(n() as u16),
                18 => SetField::ArpSpa(Ipv4Addr::from(n() as u32)),
                19 => SetField::ArpTpa(Ipv4Addr::from(n() as u32)),
                20 => SetField::ArpSha(macv(n())),
                _ => SetField::ArpTha(macv(n())),
            }),
        }
    };
    let count = (n() % 5) as usize;
    let actions: Vec<FlowAction> = (0..count).map(|_| action(&mut n)).collect();
    let write_actions = (n() % 3 == 0).then(|| {
        let c = (n() % 3) as usize;
        (0..c).map(|_| action(&mut n)).collect()
    });
    Flow {
        table: n() as u8,
        priority: n() as u16,
        cookie: if n() % 2 == 0 { 0 } else { n() },
        cookie_mask: 0,
        idle_timeout: if n() % 2 == 0 { 0 } else { n() as u16 },
        hard_timeout: if n() % 2 == 0 { 0 } else { n() as u16 },
        flags: FlowFlags {
            send_flow_rem: n() % 2 == 0,
            check_overlap: n() % 2 == 0,
            reset_counts: n() % 2 == 0,
            no_packet_counts: n() % 2 == 0,
            no_byte_counts: n() % 2 == 0,
        },
        matching: m,
        meter: (n() % 3 == 0).then(|| n() as u32),
        actions,
        clear_actions: n() % 3 == 0,
        write_actions,
        write_metadata: (n() % 3 == 0).then(|| {
            let mask = n() | 1;
            if mask == u64::MAX || n() % 2 == 0 {
                Masked::exact(n())
            } else {
                Masked {
                    value: n() & mask,
                    mask: Some(mask),
                }
            }
        }),
        goto_table: (n() % 3 == 0).then(|| n() as u8),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn print_then_parse_is_the_identity(r in prop::collection::vec(any::<u64>(), 8..16)) {
        let flow = flow_from(&r);
        let text = flow.to_string();
        let back = parse_flow(&text).map_err(|e| TestCaseError::fail(format!("{text}\n{e}")))?;
        prop_assert_eq!(&back, &flow, "{}", text);
        prop_assert_eq!(back.to_string(), text);
        // And as a dump-flows line with counters.
        let entry = FlowEntry {
            flow: flow.clone(),
            counters: Some(FlowCounters {
                duration_sec: r[0] as u32,
                duration_nsec: (r[1] % 1000) as u32 * 1_000_000,
                packet_count: r[2],
                byte_count: r[3],
            }),
        };
        let line = entry.to_string();
        let back = parse_flow_entry(&line).map_err(|e| TestCaseError::fail(format!("{line}\n{e}")))?;
        prop_assert_eq!(back, entry, "{}", line);
    }

    #[test]
    fn wire_round_trip_where_expressible(r in prop::collection::vec(any::<u64>(), 8..16)) {
        let flow = flow_from(&r);
        for v in [Version::V1_0, Version::V1_3] {
            let Ok(msg) = flow.to_message(v, FlowModCommand::Add) else { continue };
            let mut bytes = Vec::new();
            msg.encode(1, &mut bytes).unwrap();
            let (_, decoded) = crate::Message::decode(&bytes).unwrap();
            let back = match decoded {
                crate::Message::V10(crate::of10::Message::FlowMod(fm)) => Flow::from_of10(&fm),
                crate::Message::V13(crate::of13::Message::FlowMod(fm)) => Flow::from_of13(&fm),
                other => panic!("{other:?}"),
            }.unwrap();
            // A FLOW_MOD keeps the flags that 1.0's flow stats lose.
            let mut want = flow.read_back(v);
            want.flags = flow.flags;
            prop_assert_eq!(back, want, "{} in {}", flow, v);
        }
    }

    #[test]
    fn parse_then_print_then_parse_is_stable(
        items in prop::collection::vec(prop::sample::select(MATCH_WORDS), 0..6),
        acts in prop::collection::vec(prop::sample::select(ACTION_WORDS), 0..5),
    ) {
        // Strings from the grammar's own words, valid or not: an error names a token of
        // the input, and a flow prints to a string that parses back to it.
        let s = format!("{},actions={}", items.join(","), acts.join(","));
        match parse_flow(&s) {
            Ok(f) => {
                let again = parse_flow(&f.to_string()).unwrap();
                prop_assert_eq!(&again, &f);
                prop_assert_eq!(again.to_string(), f.to_string());
            }
            Err(e) => {
                prop_assert!(e.span.end <= s.len(), "{}: {}", s, e);
                prop_assert_eq!(&s[e.span.clone()], e.token.as_str());
            }
        }
    }

    #[test]
    fn errors_point_into_any_input(s in "\\PC{0,80}") {
        if let Err(e) = parse_flow(&s) {
            prop_assert!(s.get(e.span.clone()).is_some(), "{:?}: {}", s, e);
            prop_assert_eq!(&s[e.span.clone()], e.token.as_str());
        }
    }
}

const MATCH_WORDS: &[&str] = &[
    "ip",
    "ipv6",
    "arp",
    "tcp",
    "udp",
    "icmp",
    "icmp6",
    "tcp6",
    "sctp",
    "rarp",
    "in_port=3",
    "in_port=LOCAL",
    "dl_src=00:00:00:00:00:01",
    "eth_dst=01:00:00:00:00:00/01:00:00:00:00:00",
    "dl_type=0x0800",
    "dl_vlan=5",
    "dl_vlan=0xffff",
    "vlan_tci=0x1000/0x1000",
    "dl_vlan_pcp=3",
    "nw_src=10.0.0.0/8",
    "ipv4_dst=10.1.2.3",
    "nw_dst=10.0.0.0/255.0.255.0",
    "nw_proto=6",
    "arp_op=1",
    "nw_tos=8",
    "ip_dscp=2",
    "ip_ecn=1",
    "tp_src=80",
    "tcp_dst=22",
    "udp_src=1",
    "icmp_type=8",
    "icmp_code=0",
    "ipv6_src=2001:db8::/32",
    "ipv6_label=5",
    "arp_sha=00:00:00:00:00:02",
    "metadata=0x1/0xff",
    "priority=5",
    "table=2",
    "cookie=0x9",
    "idle_timeout=3",
    "hard_timeout=4",
    "send_flow_rem",
    "reset_counts",
    "nw_dst=1.2.3.400",
    "bogus=1",
];

const ACTION_WORDS: &[&str] = &[
    "output:1",
    "2",
    "drop",
    "flood",
    "all",
    "in_port",
    "normal",
    "local",
    "controller",
    "controller:64",
    "enqueue:1:2",
    "set_queue:3",
    "mod_vlan_vid:9",
    "mod_vlan_pcp:1",
    "strip_vlan",
    "pop_vlan",
    "push_vlan:0x8100",
    "mod_dl_src:00:00:00:00:00:03",
    "mod_nw_dst:10.0.0.1",
    "mod_nw_tos:4",
    "mod_nw_ecn:1",
    "mod_tp_src:5",
    "mod_tp_dst:6",
    "set_field:7->udp_dst",
    "set_field:2001:db8::1->ipv6_src",
    "group:1",
    "dec_ttl",
    "meter:1",
    "clear_actions",
    "write_actions(output:2,group:1)",
    "write_metadata:0x1/0x3",
    "goto_table:4",
    "frob",
];

#[test]
fn an_apps_flow_mod_in_this_syntax() {
    use crate::model::{self, Action, Ipv4Prefix};
    let m = model::Match {
        in_port: Some(1),
        eth_type: Some(0x0800),
        ip_proto: Some(6),
        ipv4_dst: Some(Ipv4Prefix {
            addr: v4("10.0.0.7"),
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
fn json_form_leaves_out_what_is_absent() {
    // The REST API's JSON for a flow: fields that are absent are left out, and the JSON
    // reads back to the same flow.
    let f = parse_flow("priority=100,tcp,nw_dst=10.0.0.0/24,tp_dst=80,actions=mod_tp_dst:8080,output:2,goto_table:2")
        .unwrap();
    let json = serde_json::to_value(&f).unwrap();
    assert_eq!(
        json["match"],
        serde_json::json!({
            "eth_type": 2048,
            "ip_proto": 6,
            "ipv4_dst": {"value": "10.0.0.0", "mask": "255.255.255.0"},
            "tp_dst": 80
        })
    );
    assert_eq!(
        json["actions"],
        serde_json::json!([
            {"action": "set", "field": "tcp_dst", "value": 8080},
            {"action": "output", "port": {"physical": 2}}
        ])
    );
    assert_eq!(json["goto_table"], 2);
    assert!(json.get("meter").is_none());
    assert_eq!(serde_json::from_value::<Flow>(json).unwrap(), f);
    // A hand-written JSON flow: what is left out takes its default.
    let hand: Flow = serde_json::from_str(r#"{"match": {"in_port": {"physical": 1}}, "actions": [{"action": "output", "port": "flood"}]}"#).unwrap();
    assert_eq!(hand.to_string(), "in_port=1,actions=FLOOD");
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
