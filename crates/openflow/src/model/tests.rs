use std::net::{Ipv4Addr, Ipv6Addr};

use super::v10::{emit_actions_v10, match_v10_bytes};
use super::v13::{emit_action_v13, emit_match_v13};
use super::*;
use crate::error::EncodeError;
use crate::header::Version;
use crate::of10::flow_match::{
    OFPFW_DL_TYPE, OFPFW_DL_VLAN, OFPFW_NW_DST_SHIFT, OFPFW_NW_SRC_SHIFT, OFPFW_NW_TOS,
};
use crate::types::{from_hex, MacAddr};

fn hex(s: &str) -> Vec<u8> {
    from_hex(s).unwrap()
}

fn learning_flow() -> (Match, [Action; 1]) {
    let m = Match {
        in_port: Some(1),
        eth_dst: Some(MacAddr([2, 0, 0, 0, 0, 9])),
        ..Match::default()
    };
    (m, [Action::output(PortNo::Physical(2))])
}

#[test]
fn flow_mod_v10_bytes() {
    let (m, actions) = learning_flow();
    let fm = FlowMod::add(m, &actions)
        .idle_timeout(10)
        .priority(100)
        .buffer_id(Some(5));
    let mut out = Vec::new();
    assert_eq!(fm.encode(Version::V1_0, 7, &mut out).unwrap(), 80);
    let want = hex(concat!(
        "010e0050 00000007",
        // wildcards: all but IN_PORT and DL_DST; nw_src/nw_dst wildcard width 32
        "003820f6 0001 000000000000 020000000009 0000 00 00 0000 00 00 0000",
        "00000000 00000000 0000 0000",
        "0000000000000000 0000 000a 0000 0064 00000005 ffff 0000",
        "0000 0008 0002 ffff",
    ));
    assert_eq!(out, want);
}

#[test]
fn flow_mod_v13_bytes() {
    let (m, actions) = learning_flow();
    let fm = FlowMod::add(m, &actions)
        .idle_timeout(10)
        .priority(100)
        .buffer_id(Some(5));
    let mut out = Vec::new();
    assert_eq!(fm.encode(Version::V1_3, 7, &mut out).unwrap(), 96);
    let want = hex(concat!(
        "040e0060 00000007",
        "0000000000000000 0000000000000000 00 00 000a 0000 0064 00000005 ffffffff ffffffff 0000 0000",
        "0001 0016 80000004 00000001 80000606 020000000009 0000",
        "0004 0018 00000000 0000 0010 00000002 ffff 000000000000",
    ));
    assert_eq!(out, want);
}

#[test]
fn v10_prefixes_and_vlan_none() {
    let m = Match {
        eth_type: Some(0x0800),
        vlan: Some(Vlan::Untagged),
        ipv4_src: Some(Ipv4Prefix {
            addr: Ipv4Addr::new(10, 1, 2, 3),
            len: 8,
        }),
        ip_dscp: Some(46),
        ..Match::default()
    };
    let out = match_v10_bytes(&m).unwrap();
    let w = u32::from_be_bytes(out[0..4].try_into().unwrap());
    assert_eq!(w & OFPFW_DL_VLAN, 0);
    assert_eq!(w & OFPFW_DL_TYPE, 0);
    assert_eq!(w & OFPFW_NW_TOS, 0);
    assert_eq!(
        (w >> OFPFW_NW_SRC_SHIFT) & 0x3f,
        24,
        "8-bit prefix wildcards 24 bits"
    );
    assert_eq!((w >> OFPFW_NW_DST_SHIFT) & 0x3f, 32);
    assert_eq!(&out[18..20], &[0xff, 0xff], "OFP_VLAN_NONE");
    assert_eq!(out[24], 46 << 2, "nw_tos holds DSCP << 2");
    assert_eq!(&out[28..32], &[10, 0, 0, 0], "address masked to its prefix");
}

#[test]
fn v13_arp_and_icmp_fields_follow_eth_type() {
    let arp = Match {
        eth_type: Some(0x0806),
        ip_proto: Some(1),
        ipv4_dst: Some(Ipv4Prefix::exact(Ipv4Addr::new(10, 0, 0, 3))),
        ..Match::default()
    };
    let mut out = Vec::new();
    emit_match_v13(&arp, &mut out).unwrap();
    assert_eq!(
        out,
        hex("0001 0018 80000a02 0806 80002a02 0001 80002e04 0a000003")
    );
    let icmp = Match {
        eth_type: Some(0x0800),
        ip_proto: Some(1),
        tp_src: Some(8),
        tp_dst: Some(0),
        ..Match::default()
    };
    let mut out = Vec::new();
    emit_match_v13(&icmp, &mut out).unwrap();
    assert_eq!(
        out,
        hex("0001 0019 80000a02 0800 80001401 01 80002601 08 80002801 00 00000000000000")
    );
}

#[test]
fn v13_masks_and_prefixes() {
    let m = Match {
        eth_type: Some(0x86dd),
        ipv6_src: Some(Ipv6Prefix {
            addr: "2001:db8::1".parse().unwrap(),
            len: 32,
        }),
        eth_dst: Some(MacAddr([1, 0, 0, 0, 0, 0])),
        eth_dst_mask: Some(MacAddr([1, 0, 0, 0, 0, 0])),
        ..Match::default()
    };
    let mut out = Vec::new();
    emit_match_v13(&m, &mut out).unwrap();
    assert_eq!(
        out,
        hex(concat!(
            "0001 003e 8000070c 010000000000 010000000000 80000a02 86dd",
            "8000352020010db8000000000000000000000000 ffffffff000000000000000000000000",
            "0000"
        ))
    );
}

#[test]
fn what_1_0_cannot_express_is_named() {
    let cases: Vec<(Match, Vec<Action>, &str)> = vec![
        (
            Match {
                eth_type: Some(0x86dd),
                ipv6_dst: Some(Ipv6Prefix {
                    addr: Ipv6Addr::LOCALHOST,
                    len: 128,
                }),
                ..Match::default()
            },
            vec![],
            "an IPv6 address match",
        ),
        (
            Match {
                eth_src: Some(MacAddr::BROADCAST),
                eth_src_mask: Some(MacAddr::BROADCAST),
                ..Match::default()
            },
            vec![],
            "a masked Ethernet address match",
        ),
        (
            Match::default(),
            vec![Action::Group { group_id: 1 }],
            "a group action",
        ),
        (
            Match::default(),
            vec![Action::PushVlan { ethertype: 0x8100 }],
            "a push-VLAN action",
        ),
    ];
    for (m, actions, what) in cases {
        let mut out = vec![0xaa];
        let e = FlowMod::add(m, &actions)
            .encode(Version::V1_0, 1, &mut out)
            .unwrap_err();
        assert_eq!(
            e,
            EncodeError::NotExpressible {
                what,
                version: Version::V1_0
            }
        );
        assert!(e.to_string().contains("OpenFlow 1.0"));
        assert_eq!(out, [0xaa], "nothing partial left behind");
    }
    let mut out = Vec::new();
    let e = FlowMod::add(Match::default(), &[])
        .table_id(3)
        .encode(Version::V1_0, 1, &mut out);
    assert!(matches!(e, Err(EncodeError::NotExpressible { .. })));
    let e = FlowMod::add(
        Match::default(),
        &[Action::output(PortNo::Physical(0x1_0000))],
    )
    .encode(Version::V1_0, 1, &mut out);
    assert!(matches!(e, Err(EncodeError::BadValue { .. })));
}

#[test]
fn v13_refuses_fields_without_prerequisites() {
    let m = Match {
        tp_dst: Some(80),
        ..Match::default()
    };
    let e = FlowMod::add(m, &[])
        .encode(Version::V1_3, 1, &mut Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("transport port"), "{e}");
    let m = Match {
        ipv4_src: Some(Ipv4Prefix::exact(Ipv4Addr::LOCALHOST)),
        ..Match::default()
    };
    assert!(FlowMod::add(m, &[])
        .encode(Version::V1_3, 1, &mut Vec::new())
        .is_err());
    // The same TCP match is fine in both versions once the prerequisites are there.
    let m = Match {
        eth_type: Some(0x0800),
        ip_proto: Some(6),
        tp_dst: Some(80),
        ..Match::default()
    };
    for v in [Version::V1_0, Version::V1_3] {
        FlowMod::add(m, &[Action::output(PortNo::Normal)])
            .encode(v, 1, &mut Vec::new())
            .unwrap();
    }
}

#[test]
fn actions_in_both_versions() {
    let actions = [
        Action::SetVlanVid { vid: 10 },
        Action::SetEthDst {
            addr: MacAddr([1, 2, 3, 4, 5, 6]),
        },
        Action::SetIpv4Src {
            addr: Ipv4Addr::new(1, 2, 3, 4),
        },
        Action::SetTcpDst { port: 8080 },
        Action::Enqueue {
            port: PortNo::Physical(3),
            queue_id: 7,
        },
        Action::PopVlan,
    ];
    // Through the stack buffer of one action, as FLOW_MOD and PACKET_OUT write them
    // (the 16-byte ones fill it).
    let mut v10 = Vec::new();
    emit_actions_v10(&actions, &mut v10).unwrap();
    assert_eq!(
        v10,
        hex(concat!(
            "0001 0008 000a 0000",
            "0005 0010 010203040506 000000000000",
            "0006 0008 01020304",
            "000a 0008 1f90 0000",
            "000b 0010 0003 000000000000 00000007",
            "0003 0008 00000000",
        ))
    );
    let mut v13 = Vec::new();
    for a in &actions {
        emit_action_v13(a, &mut v13).unwrap();
    }
    assert_eq!(
        v13,
        hex(concat!(
            "0019 0010 80000c02 100a 000000000000",
            "0019 0010 80000606 010203040506 0000",
            "0019 0010 80001604 01020304 00000000",
            "0019 0010 80001c02 1f90 000000000000",
            "0015 0008 00000007 0000 0010 00000003 ffff 000000000000",
            "0012 0008 00000000",
        ))
    );
}

#[test]
fn packet_out_both_versions() {
    let actions = [Action::output(PortNo::Flood)];
    let po = PacketOut::unbuffered(b"hoge", PortNo::Physical(1), &actions);
    let mut out = Vec::new();
    po.encode(Version::V1_0, 3, &mut out).unwrap();
    assert_eq!(
        out,
        hex("010d001c 00000003 ffffffff 0001 0008 0000 0008 fffb ffff 686f6765")
    );
    out.clear();
    po.encode(Version::V1_3, 3, &mut out).unwrap();
    assert_eq!(
        out,
        hex(concat!(
            "040d002c 00000003 ffffffff 00000001 0010 000000000000",
            "0000 0010 fffffffb ffff 000000000000 686f6765"
        ))
    );
    out.clear();
    PacketOut::buffered(9, PortNo::Physical(1), &actions)
        .encode(Version::V1_0, 3, &mut out)
        .unwrap();
    assert_eq!(&out[8..12], &[0, 0, 0, 9]);
    assert_eq!(out.len(), 24);
}

#[test]
fn delete_has_no_instructions_and_means_all_tables() {
    let (m, _) = learning_flow();
    let mut out = Vec::new();
    FlowMod::delete(m)
        .encode(Version::V1_3, 1, &mut out)
        .unwrap();
    assert_eq!(out[24], 0xff, "table_id OFPTT_ALL");
    assert_eq!(out[25], 3, "OFPFC_DELETE");
    assert_eq!(out.len(), 48 + 24);
    out.clear();
    FlowMod::delete(m)
        .encode(Version::V1_0, 1, &mut out)
        .unwrap();
    assert_eq!(out.len(), 72);
}

#[test]
fn port_numbers_map_between_versions() {
    for p in [
        PortNo::InPort,
        PortNo::Table,
        PortNo::Normal,
        PortNo::Flood,
        PortNo::All,
        PortNo::Controller,
        PortNo::Local,
        PortNo::Any,
        PortNo::Physical(42),
    ] {
        let w = crate::view::widen_port(p.to_v10().unwrap());
        assert_eq!(w, p.to_v13().unwrap());
        assert_eq!(PortNo::from_u32(w), p);
    }
}

#[test]
fn a_packet_out_too_long_for_its_header_leaves_nothing_behind() {
    let data = vec![0u8; 70_000];
    let flood = [Action::output(PortNo::Flood)];
    // With no action of its own, the 1.0 message takes a path of its own.
    for (v, actions) in [
        (Version::V1_0, &flood[..]),
        (Version::V1_3, &flood[..]),
        (Version::V1_0, &[][..]),
    ] {
        let mut out = vec![7u8; 3];
        let e = PacketOut::unbuffered(&data, PortNo::Physical(1), actions)
            .encode(v, 1, &mut out)
            .unwrap_err();
        assert!(
            matches!(e, crate::EncodeError::TooLong { layer: "ofp_header", length, .. } if length > 70_000),
            "{v:?}: {e:?}"
        );
        assert_eq!(out, [7, 7, 7], "{v:?}");
    }
}

/// The 1.0 FLOW_MOD's shapes beside the common one (one output): no action, several
/// (the first an output or not), into a buffer already holding a message, and the
/// errors met after the fixed part was written, which leave nothing behind.
#[test]
fn flow_mod_v10_action_shapes_and_late_errors() {
    let (m, _) = learning_flow();
    let fixed = |len: &str| {
        format!(
            "010e{len} 00000009 003820f6 0001 000000000000 020000000009 0000 00 00 0000 00 00 0000 \
             00000000 00000000 0000 0000 0000000000000000 0000 0000 0000 8000 ffffffff ffff 0000"
        )
    };
    let shapes: [(&[Action], String); 3] = [
        (&[], fixed("0048")),
        (
            &[
                Action::output(PortNo::Physical(2)),
                Action::SetVlanVid { vid: 10 },
                Action::output(PortNo::Flood),
            ],
            fixed("0060") + "0000 0008 0002 ffff 0001 0008 000a 0000 0000 0008 fffb ffff",
        ),
        (
            &[Action::PopVlan, Action::output(PortNo::InPort)],
            fixed("0058") + "0003 0008 00000000 0000 0008 fff8 ffff",
        ),
    ];
    for (actions, want) in shapes {
        let mut out = vec![0xaa, 0xbb];
        let n = FlowMod::add(m, actions)
            .encode(Version::V1_0, 9, &mut out)
            .unwrap();
        let mut expected = vec![0xaa, 0xbb];
        expected.extend(hex(&want));
        assert_eq!(out, expected, "{actions:?}");
        assert_eq!(n, out.len() - 2);
    }
    // An action 1.0 cannot express after the first, and more actions than a 16-bit
    // length can hold: the fixed part was written, and is taken back.
    let bad_second = [
        Action::output(PortNo::Physical(2)),
        Action::Group { group_id: 1 },
    ];
    let too_many = vec![Action::output(PortNo::Physical(2)); 8200];
    for actions in [&bad_second[..], &too_many[..]] {
        let mut out = vec![0xaa];
        assert!(FlowMod::add(m, actions)
            .encode(Version::V1_0, 9, &mut out)
            .is_err());
        assert_eq!(out, [0xaa], "nothing partial left behind");
    }
}

#[test]
fn encoded_actions_send_the_same_bytes_as_the_list_for_every_skip() {
    let ports: Vec<Action> = (1..=4)
        .map(|n| Action::output(PortNo::Physical(n)))
        .collect();
    // A 1.3-only action among the outputs must not be in a 1.0 list; a 16-byte one in
    // the middle checks that `skip` cuts at the action's end, not at 8-byte steps.
    let mixed = [
        Action::output(PortNo::Physical(1)),
        Action::SetEthDst {
            addr: MacAddr([2, 0, 0, 0, 0, 7]),
        },
        Action::output(PortNo::Physical(3)),
    ];
    let own = [Action::output(PortNo::Controller)];
    for version in [Version::V1_0, Version::V1_3] {
        for list in [&ports[..], &ports[..1], &mixed[..]] {
            let pre = EncodedActions::new(version, list).unwrap();
            assert_eq!((pre.version(), pre.len()), (Some(version), list.len()));
            // Past the end skips nothing.
            for skip in [None, Some(0), Some(1), Some(list.len() - 1), Some(9)] {
                let kept: Vec<Action> = list
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| Some(i) != skip)
                    .map(|(_, a)| *a)
                    .collect();
                for (mine, data) in [(&[][..], &b""[..]), (&own[..], &b"frame"[..])] {
                    let mut with_own = kept.clone();
                    with_own.extend_from_slice(mine);
                    for buffer in [Some(7), None] {
                        let po = |actions| PacketOut {
                            buffer_id: buffer,
                            in_port: PortNo::Physical(2),
                            actions,
                            data,
                        };
                        // Into a buffer that already holds something.
                        let (mut a, mut b) = (vec![0xee], vec![0xee]);
                        let n = po(mine)
                            .encode_with(version, 5, &pre, skip, &mut a)
                            .unwrap();
                        let m = po(&with_own).encode(version, 5, &mut b).unwrap();
                        assert_eq!((n, &a), (m, &b), "{version} {list:?} skip {skip:?}");
                    }
                }
            }
        }
    }
}

/// A 1.0 PACKET_OUT with no action (a drop), byte for byte: it takes the path of
/// pre-encoded actions, with none.
#[test]
fn packet_out_v10_without_actions_bytes() {
    let mut out = vec![0xee];
    let po = PacketOut::unbuffered(&[0xab, 0xcd], PortNo::Physical(2), &[]);
    assert_eq!(po.encode(Version::V1_0, 5, &mut out).unwrap(), 18);
    assert_eq!(out, hex("ee 010d0012 00000005 ffffffff 0002 0000 abcd"));
    let mut out = Vec::new();
    let po = PacketOut::buffered(0x0102_0304, PortNo::Any, &[]);
    assert_eq!(po.encode(Version::V1_0, 0xa0b0_c0d0, &mut out).unwrap(), 16);
    assert_eq!(out, hex("010d0010 a0b0c0d0 01020304 ffff 0000"));
}

#[test]
fn encoded_actions_of_another_version_are_refused_and_leave_nothing_behind() {
    let outs = [Action::output(PortNo::Physical(1))];
    let v13 = EncodedActions::new(Version::V1_3, &outs).unwrap();
    let po = PacketOut::buffered(1, PortNo::Physical(2), &[]);
    let mut out = vec![1, 2, 3];
    let e = po
        .encode_with(Version::V1_0, 1, &v13, None, &mut out)
        .unwrap_err();
    assert!(e.to_string().contains("another version"), "{e}");
    assert_eq!(out, [1, 2, 3]);
    // An action one version cannot express is refused when encoding, not when sent.
    let e = EncodedActions::new(Version::V1_0, &[Action::PushVlan { ethertype: 0x8100 }]);
    assert!(e.is_err());
    // More encoded actions than 1.0's 16-bit actions_len holds: refused, nothing left.
    let many = vec![Action::output(PortNo::Physical(1)); 8_200];
    let many = EncodedActions::new(Version::V1_0, &many).unwrap();
    let e = po
        .encode_with(Version::V1_0, 1, &many, None, &mut out)
        .unwrap_err();
    assert!(
        matches!(
            e,
            crate::EncodeError::TooLong {
                layer: "ofp_packet_out.actions_len",
                length: 65_600,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(out, [1, 2, 3]);
    // The empty default goes with either version: the PACKET_OUT's own actions only.
    let empty = EncodedActions::default();
    assert_eq!((empty.version(), empty.len()), (None, 0));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let po = PacketOut::buffered(1, PortNo::Physical(2), &outs);
    po.encode_with(Version::V1_0, 1, &empty, Some(0), &mut a)
        .unwrap();
    po.encode(Version::V1_0, 1, &mut b).unwrap();
    assert_eq!(a, b);
}
