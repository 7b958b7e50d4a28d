//! Tests of the syntax as a whole: print → parse is the identity (properties over
//! random flows and over strings of the grammar's own words), the wire round trip where a
//! version can express a flow, and the JSON form of a flow.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;
use crate::types::MacAddr;
use crate::Version;

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
