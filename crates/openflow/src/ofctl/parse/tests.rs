//! Tests of the parser (and of the printer, through what it prints): each field and
//! action under each of its names, instructions and flow keywords, errors with their
//! tokens, and dump-flows lines.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::ofctl::*;
use crate::types::MacAddr;
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
