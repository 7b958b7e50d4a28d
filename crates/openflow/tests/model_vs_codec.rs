//! The version-neutral model's encoder against the owned decoders: for random flows,
//! what the model writes must decode as a fully understood message (nothing opaque)
//! and re-encode to the same bytes, in both versions. Two independent encoders agreeing
//! byte for byte is the check.

use std::net::{Ipv4Addr, Ipv6Addr};

use openflow::model::{
    Action, FlowMod, FlowModCommand, Ipv4Prefix, Ipv6Prefix, Match, PacketOut, PortNo, Vlan,
};
use openflow::{EncodeError, MacAddr, Message, Version};
use proptest::prelude::*;

fn port() -> impl Strategy<Value = PortNo> {
    prop_oneof![
        (0u32..0xff00).prop_map(PortNo::Physical),
        Just(PortNo::InPort),
        Just(PortNo::Flood),
        Just(PortNo::All),
        Just(PortNo::Controller),
        Just(PortNo::Local),
        Just(PortNo::Normal),
    ]
}

fn mac() -> impl Strategy<Value = MacAddr> {
    any::<[u8; 6]>().prop_map(MacAddr)
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (port(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
        (0u16..4096).prop_map(|vid| Action::SetVlanVid { vid }),
        (0u8..8).prop_map(|pcp| Action::SetVlanPcp { pcp }),
        Just(Action::PopVlan),
        mac().prop_map(|addr| Action::SetEthSrc { addr }),
        mac().prop_map(|addr| Action::SetEthDst { addr }),
        any::<u32>().prop_map(|a| Action::SetIpv4Src {
            addr: Ipv4Addr::from(a)
        }),
        any::<u32>().prop_map(|a| Action::SetIpv4Dst {
            addr: Ipv4Addr::from(a)
        }),
        (0u8..64).prop_map(|dscp| Action::SetIpDscp { dscp }),
        any::<u16>().prop_map(|port| Action::SetTcpSrc { port }),
        any::<u16>().prop_map(|port| Action::SetUdpDst { port }),
        (port(), any::<u32>()).prop_map(|(port, queue_id)| Action::Enqueue { port, queue_id }),
        any::<u32>().prop_map(|group_id| Action::Group { group_id }),
        Just(Action::DecNwTtl),
        Just(Action::PushVlan { ethertype: 0x8100 }),
    ]
}

/// Matches that respect the 1.3 prerequisites (eth_type before IP fields, ip_proto
/// before ports), as an app that follows the spec writes them.
fn matching() -> impl Strategy<Value = Match> {
    let l2 = (
        proptest::option::of(0u32..0xff00),
        proptest::option::of(mac()),
        proptest::option::of(mac()),
        proptest::option::of(prop_oneof![
            Just(Vlan::Untagged),
            (0u16..4096).prop_map(Vlan::Id)
        ]),
    );
    // IPv4 fields, or none; ports only with a protocol that says which header.
    let l3 = proptest::option::of((
        proptest::option::of(0u8..64),
        proptest::option::of(prop_oneof![Just(6u8), Just(17), Just(1)]),
        proptest::option::of((any::<u32>(), 0u8..=32)),
        proptest::option::of((any::<u32>(), 0u8..=32)),
        proptest::option::of((any::<u16>(), any::<u16>())),
    ));
    (l2, l3).prop_map(|((in_port, eth_src, eth_dst, vlan), l3)| {
        let (eth_type, (ip_dscp, ip_proto, src, dst, ports)) = match l3 {
            Some(l3) => (Some(0x0800), l3),
            None => (None, (None, None, None, None, None)),
        };
        let (tp_src, tp_dst) = match (ip_proto, ports) {
            (Some(1), Some((a, b))) => (Some(a & 0xff), Some(b & 0xff)),
            (Some(_), Some((a, b))) => (Some(a), Some(b)),
            _ => (None, None),
        };
        Match {
            in_port,
            eth_src,
            eth_dst,
            vlan,
            eth_type,
            ip_dscp,
            ip_proto,
            ipv4_src: src.map(|(a, len)| Ipv4Prefix {
                addr: Ipv4Addr::from(a),
                len,
            }),
            ipv4_dst: dst.map(|(a, len)| Ipv4Prefix {
                addr: Ipv4Addr::from(a),
                len,
            }),
            tp_src,
            tp_dst,
            ..Match::default()
        }
    })
}

/// Decodes `bytes`, requires nothing opaque and an identical re-encode.
fn agrees(bytes: &[u8], want_type: &str) -> Result<(), TestCaseError> {
    let (xid, msg) = Message::decode(bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(msg.type_name(), want_type);
    prop_assert!(msg.opaque_parts().is_empty(), "{:?}", msg.opaque_parts());
    prop_assert_eq!(msg.to_bytes(xid).unwrap(), bytes.to_vec());
    Ok(())
}

proptest! {
    #[test]
    fn model_flow_mods_decode_as_what_they_say(
        m in matching(),
        actions in proptest::collection::vec(action(), 0..6),
        cmd in prop_oneof![Just(FlowModCommand::Add), Just(FlowModCommand::Modify), Just(FlowModCommand::DeleteStrict)],
        idle in any::<u16>(), prio in any::<u16>(), buffer in proptest::option::of(any::<u32>()),
    ) {
        let mut fm = FlowMod::add(m, &actions).idle_timeout(idle).priority(prio).buffer_id(buffer);
        fm.command = cmd;
        for v in [Version::V1_0, Version::V1_3] {
            let mut out = Vec::new();
            match fm.encode(v, 9, &mut out) {
                Ok(_) => agrees(&out, "FLOW_MOD")?,
                // Only 1.3-only actions may be refused, and only by 1.0.
                Err(EncodeError::NotExpressible { version, .. }) => {
                    prop_assert_eq!(version, Version::V1_0);
                    let only_v13 = actions.iter().any(|a| {
                        matches!(a, Action::Group { .. } | Action::DecNwTtl | Action::PushVlan { .. })
                    });
                    prop_assert!(only_v13);
                    prop_assert!(out.is_empty());
                }
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            }
        }
    }

    #[test]
    fn model_packet_outs_decode_as_what_they_say(
        actions in proptest::collection::vec(action(), 0..4),
        data in proptest::collection::vec(any::<u8>(), 0..100),
        in_port in port(),
    ) {
        let po = PacketOut::unbuffered(&data, in_port, &actions);
        let mut out = Vec::new();
        if po.encode(Version::V1_0, 1, &mut out).is_ok() {
            agrees(&out, "PACKET_OUT")?;
        }
        out.clear();
        po.encode(Version::V1_3, 1, &mut out).unwrap();
        agrees(&out, "PACKET_OUT")?;
    }
}

#[test]
fn decoded_matches_read_as_the_model_said() {
    let m = Match {
        in_port: Some(3),
        eth_type: Some(0x86dd),
        ipv6_dst: Some(Ipv6Prefix {
            addr: Ipv6Addr::LOCALHOST,
            len: 128,
        }),
        ..Match::default()
    };
    let mut out = Vec::new();
    FlowMod::add(m, &[Action::output(PortNo::Physical(1))])
        .encode(Version::V1_3, 1, &mut out)
        .unwrap();
    let Message::V13(openflow::of13::Message::FlowMod(fm)) = Message::decode(&out).unwrap().1
    else {
        panic!("not a 1.3 FLOW_MOD");
    };
    assert_eq!(
        fm.match_.to_string(),
        "in_port=3,eth_type=0x86dd,ipv6_dst=::1"
    );
}
