//! The pipeline's choice of flow against a naive reference: a linear scan over the
//! rules with a matcher written from the packet's parameters (not from the packed key),
//! for random rules, deletions and packets, in 1.0 (exact flows first) and 1.3.

use std::net::Ipv4Addr;
use std::time::Instant;

use openflow::model::{FlowModCommand, PortNo};
use openflow::ofctl::{Flow, FlowAction, FlowMatch, Masked, VlanMatch};
use openflow::{MacAddr, Version};
use proptest::prelude::*;

use super::testutil::{frame, Ip4, Recorder};
use super::*;
use crate::Egress;

/// A packet, as the parameters its frame is built from.
#[derive(Debug, Clone, Copy)]
struct Pkt {
    in_port: u32,
    src: u8,
    dst: u8,
    vlan: Option<(u16, u8)>,
    proto: u8,
    nw_src: [u8; 4],
    nw_dst: [u8; 4],
    sport: u16,
    dport: u16,
    dscp: u8,
}

impl Pkt {
    fn mac(b: u8) -> [u8; 6] {
        [2, 0, 0, 0, b >> 2, b]
    }

    fn frame(&self) -> Vec<u8> {
        frame(
            Pkt::mac(self.src),
            Pkt::mac(self.dst),
            self.vlan,
            &Ip4 {
                src: self.nw_src.into(),
                dst: self.nw_dst.into(),
                proto: self.proto,
                sport: self.sport,
                dport: self.dport,
                tos: self.dscp << 2,
                ttl: 64,
            },
        )
    }
}

fn pkt() -> impl Strategy<Value = Pkt> {
    (
        1u32..4,
        0u8..6,
        0u8..6,
        prop_oneof![Just(None), (1u16..3, 0u8..2).prop_map(Some)],
        prop_oneof![Just(6u8), Just(17u8)],
        (0u8..3, 0u8..3),
        (0u8..3, 0u8..3),
        (1u16..4, 1u16..4),
        0u8..2,
    )
        .prop_map(
            |(in_port, src, dst, vlan, proto, s, d, (sport, dport), dscp)| Pkt {
                in_port,
                src,
                dst,
                vlan,
                proto,
                nw_src: [10, s.0, 0, s.1],
                nw_dst: [10, d.0, 0, d.1],
                sport,
                dport,
                dscp,
            },
        )
}

/// The no-wildcard 1.0 match of a packet.
fn exact(p: &Pkt) -> FlowMatch {
    FlowMatch {
        in_port: Some(PortNo::Physical(p.in_port)),
        eth_src: Some(Masked::exact(MacAddr(Pkt::mac(p.src)))),
        eth_dst: Some(Masked::exact(MacAddr(Pkt::mac(p.dst)))),
        eth_type: Some(0x0800),
        vlan: Some(
            p.vlan
                .map_or(VlanMatch::Untagged, |(v, _)| VlanMatch::Id(v)),
        ),
        vlan_pcp: p.vlan.map(|(_, pcp)| pcp),
        ip_dscp: Some(p.dscp),
        ip_proto: Some(p.proto),
        ipv4_src: Some(Masked::exact(p.nw_src.into())),
        ipv4_dst: Some(Masked::exact(p.nw_dst.into())),
        tp_src: Some(p.sport),
        tp_dst: Some(p.dport),
        ..FlowMatch::default()
    }
}

fn prefix(a: [u8; 4], len: u8) -> Masked<Ipv4Addr> {
    if len == 32 {
        return Masked::exact(a.into());
    }
    let m = u32::MAX << (32 - len);
    Masked {
        value: Ipv4Addr::from(u32::from_be_bytes(a) & m),
        mask: Some(Ipv4Addr::from(m)),
    }
}

/// A random match over the packets' field space: each field given or not.
fn rule_match(v13: bool) -> impl Strategy<Value = FlowMatch> {
    (
        (
            proptest::option::weighted(0.3, 1u32..4),
            proptest::option::weighted(0.3, (0u8..6, any::<bool>())),
        ),
        (
            proptest::option::weighted(0.3, 0u8..6),
            proptest::option::weighted(0.3, 0u8..4),
        ),
        (
            proptest::option::weighted(0.2, 0u8..2),
            proptest::option::weighted(0.2, 0u8..2),
        ),
        (
            proptest::option::weighted(0.3, prop_oneof![Just(6u8), Just(17u8)]),
            any::<bool>(),
        ),
        (proptest::option::weighted(
            0.4,
            (
                (0u8..3, 0u8..3),
                prop_oneof![Just(8u8), Just(16), Just(24), Just(32)],
            ),
        )),
        (proptest::option::weighted(
            0.4,
            (
                (0u8..3, 0u8..3),
                prop_oneof![Just(8u8), Just(16), Just(24), Just(32)],
            ),
        )),
        (
            proptest::option::weighted(0.3, 1u16..4),
            proptest::option::weighted(0.3, 1u16..4),
        ),
    )
        .prop_map(
            move |(
                (port, src),
                (dst, vlan),
                (pcp, dscp),
                (proto, arp),
                nw_src,
                nw_dst,
                (sport, dport),
            )| {
                let mut m = FlowMatch {
                    in_port: port.map(PortNo::Physical),
                    ..FlowMatch::default()
                };
                if let Some((s, masked)) = src {
                    m.eth_src = Some(if masked {
                        // The low two bits masked off.
                        Masked {
                            value: MacAddr(Pkt::mac(s & !3)),
                            mask: Some(MacAddr([0xff, 0xff, 0xff, 0xff, 0xff, 0xfc])),
                        }
                    } else {
                        Masked::exact(MacAddr(Pkt::mac(s)))
                    });
                }
                m.eth_dst = dst.map(|d| Masked::exact(MacAddr(Pkt::mac(d))));
                m.vlan = match vlan {
                    None => None,
                    Some(0) => Some(VlanMatch::Untagged),
                    Some(3) if v13 => Some(VlanMatch::AnyTagged),
                    Some(v) => Some(VlanMatch::Id(u16::from(v.min(2)))),
                };
                if matches!(m.vlan, Some(VlanMatch::Id(_) | VlanMatch::AnyTagged)) {
                    m.vlan_pcp = pcp;
                }
                let ip = dscp.is_some() || proto.is_some() || nw_src.is_some() || nw_dst.is_some();
                if ip {
                    m.eth_type = Some(if arp { 0x0806 } else { 0x0800 });
                    m.ip_dscp = dscp;
                    m.ip_proto = proto;
                    m.ipv4_src = nw_src.map(|((a, b), l)| prefix([10, a, 0, b], l));
                    m.ipv4_dst = nw_dst.map(|((a, b), l)| prefix([10, a, 0, b], l));
                    if proto.is_some() {
                        m.tp_src = sport;
                        m.tp_dst = dport;
                    }
                }
                m
            },
        )
}

/// The reference matcher, from the packet's parameters.
fn matches(m: &FlowMatch, p: &Pkt) -> bool {
    let mac_ok = |x: Option<Masked<MacAddr>>, b: u8| {
        x.is_none_or(|x| {
            let mask = x.mask.map_or([0xff; 6], |m| m.0);
            let a = Pkt::mac(b);
            (0..6).all(|i| a[i] & mask[i] == x.value.0[i])
        })
    };
    let ip_ok = |x: Option<Masked<Ipv4Addr>>, a: [u8; 4]| {
        x.is_none_or(|x| {
            let mask = x.mask.map_or(u32::MAX, u32::from);
            u32::from_be_bytes(a) & mask == u32::from(x.value)
        })
    };
    m.in_port.is_none_or(|q| q == PortNo::Physical(p.in_port))
        && mac_ok(m.eth_src, p.src)
        && mac_ok(m.eth_dst, p.dst)
        && m.eth_type.is_none_or(|t| t == 0x0800)
        && m.vlan.is_none_or(|v| match (v, p.vlan) {
            (VlanMatch::Untagged, None) => true,
            (VlanMatch::AnyTagged, Some(_)) => true,
            (VlanMatch::Id(a), Some((b, _))) => a == b,
            _ => false,
        })
        && m.vlan_pcp
            .is_none_or(|c| p.vlan.is_some_and(|(_, pcp)| pcp == c))
        && m.ip_dscp.is_none_or(|d| d == p.dscp)
        && m.ip_proto.is_none_or(|x| x == p.proto)
        && ip_ok(m.ipv4_src, p.nw_src)
        && ip_ok(m.ipv4_dst, p.nw_dst)
        && m.tp_src.is_none_or(|x| x == p.sport)
        && m.tp_dst.is_none_or(|x| x == p.dport)
}

/// A 1.0 flow with no wildcard (the pcp of an untagged match counts as given).
fn is_exact(m: &FlowMatch) -> bool {
    m.in_port.is_some()
        && m.eth_src.is_some_and(|x| x.mask.is_none())
        && m.eth_dst.is_some_and(|x| x.mask.is_none())
        && m.eth_type.is_some()
        && m.vlan.is_some()
        && (m.vlan_pcp.is_some() || m.vlan == Some(VlanMatch::Untagged))
        && m.ip_dscp.is_some()
        && m.ip_proto.is_some()
        && m.ipv4_src.is_some_and(|x| x.mask.is_none())
        && m.ipv4_dst.is_some_and(|x| x.mask.is_none())
        && m.tp_src.is_some()
        && m.tp_dst.is_some()
}

#[derive(Debug, Clone)]
enum Op {
    Add(FlowMatch, u16),
    /// Add the exact match of the test packet at this index (modulo their number).
    AddExact(usize, u16),
    /// Delete (strict) the rule at this index of the live rules, modulo their number.
    Del(usize),
}

fn ops(v13: bool) -> impl Strategy<Value = Vec<Op>> {
    let add = (rule_match(v13), 1u16..6).prop_map(|(m, p)| Op::Add(m, p));
    let add_exact = (any::<usize>(), 1u16..6).prop_map(|(i, pr)| Op::AddExact(i, pr));
    let del = any::<usize>().prop_map(Op::Del);
    proptest::collection::vec(prop_oneof![6 => add, 2 => add_exact, 2 => del], 1..80)
}

fn verify(
    p: &mut Pipeline,
    v10: bool,
    live: &[(FlowMatch, u16, u32)],
    pk: &Pkt,
) -> Result<(), TestCaseError> {
    let mut r = Recorder::default();
    p.process(pk.in_port, &pk.frame(), Instant::now(), &mut r);
    let hits: Vec<&(FlowMatch, u16, u32)> =
        live.iter().filter(|(m, _, _)| matches(m, pk)).collect();
    let exact_hits: Vec<_> = hits.iter().filter(|(m, _, _)| v10 && is_exact(m)).collect();
    let candidates: Vec<_> = if exact_hits.is_empty() {
        hits.clone()
    } else {
        exact_hits.into_iter().copied().collect()
    };
    let best = candidates.iter().map(|(_, prio, _)| *prio).max();
    match (best, r.egresses().as_slice()) {
        (None, []) if !v10 => {}
        (None, [Egress::Controller { .. }]) if v10 => {}
        (Some(b), [Egress::Port(port)]) => {
            let chosen = candidates.iter().find(|(_, _, o)| o == port);
            prop_assert!(
                chosen.is_some_and(|(_, prio, _)| *prio == b),
                "{pk:?}: took port {port}, best priority {b}, candidates {candidates:?}"
            );
        }
        (b, e) => prop_assert!(false, "{pk:?}: best {b:?}, got {e:?}; matching {hits:?}"),
    }
    Ok(())
}

fn check(version: Version, ops: Vec<Op>, pkts: Vec<Pkt>) -> Result<(), TestCaseError> {
    let v10 = version == Version::V1_0;
    let mut p = Pipeline::new(PipelineConfig {
        version,
        tables: 1,
        max_flows: 10_000,
    });
    // Live rules: (match, priority, output port naming the rule).
    let mut live: Vec<(FlowMatch, u16, u32)> = Vec::new();
    let now = Instant::now();
    let mut removed = Vec::new();
    for (n, op) in ops.into_iter().enumerate() {
        let (command, m, prio, port) = match op {
            Op::Add(m, prio) => (FlowModCommand::Add, m, prio, n as u32 + 1),
            Op::AddExact(i, prio) => {
                let m = exact(&pkts[i % pkts.len()]);
                (FlowModCommand::Add, m, prio, n as u32 + 1)
            }
            Op::Del(i) if !live.is_empty() => {
                let (m, prio, _) = live[i % live.len()];
                (FlowModCommand::DeleteStrict, m, prio, 0)
            }
            Op::Del(_) => continue,
        };
        let f = Flow {
            priority: prio,
            matching: m,
            actions: vec![FlowAction::Output {
                port: PortNo::Physical(port),
            }],
            ..Flow::default()
        };
        let req = FlowModRequest {
            command,
            flow: &f,
            out_port: None,
            out_group: None,
        };
        p.flow_mod(&req, now, &mut removed).unwrap();
        live.retain(|(lm, lp, _)| !(*lm == m && *lp == prio));
        if command == FlowModCommand::Add {
            live.push((m, prio, port));
        }
        prop_assert_eq!(p.len(), live.len());
        // Frames between changes: a cached answer from before a change must not
        // survive it.
        verify(&mut p, v10, &live, &pkts[n % pkts.len()])?;
    }
    for pk in &pkts {
        verify(&mut p, v10, &live, pk)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn v10_pipeline_agrees_with_a_linear_reference(
        ops in ops(false),
        pkts in proptest::collection::vec(pkt(), 1..40),
    ) {
        check(Version::V1_0, ops, pkts)?;
    }

    #[test]
    fn v13_pipeline_agrees_with_a_linear_reference(
        ops in ops(true),
        pkts in proptest::collection::vec(pkt(), 1..40),
    ) {
        check(Version::V1_3, ops, pkts)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// check_overlap's answer (probes and scans of the subtables) against comparing the
    /// new match with every flow of its priority.
    #[test]
    fn overlap_check_agrees_with_pairwise_comparison(
        rules in proptest::collection::vec((rule_match(true), 1u16..4), 0..60),
        probes in proptest::collection::vec((rule_match(true), 1u16..4), 1..20),
    ) {
        use super::key::MatchKey;
        let mut c = Classifier::new(None);
        let mut live: Vec<(MatchKey, u16)> = Vec::new();
        for (id, (m, prio)) in rules.iter().enumerate() {
            let mk = MatchKey::from_match(m);
            c.insert(&mk, *prio, id as u32);
            live.push((mk, *prio));
        }
        for (m, prio) in &probes {
            let mk = MatchKey::from_match(m);
            let want = live.iter().any(|(l, p)| p == prio && l.overlaps(&mk));
            prop_assert_eq!(c.overlaps(&mk, *prio), want, "{:?} at {}", m, prio);
        }
    }
}

fn action() -> impl Strategy<Value = FlowAction> {
    use openflow::ofctl::SetField as S;
    let addr = any::<[u8; 4]>().prop_map(Ipv4Addr::from);
    prop_oneof![
        any::<[u8; 6]>().prop_map(|m| FlowAction::Set(S::EthSrc(MacAddr(m)))),
        any::<[u8; 6]>().prop_map(|m| FlowAction::Set(S::EthDst(MacAddr(m)))),
        (0u16..4096).prop_map(|v| FlowAction::Set(S::VlanVid(v))),
        (0u8..8).prop_map(|v| FlowAction::Set(S::VlanPcp(v))),
        addr.clone().prop_map(|a| FlowAction::Set(S::Ipv4Src(a))),
        addr.prop_map(|a| FlowAction::Set(S::Ipv4Dst(a))),
        (0u8..64).prop_map(|v| FlowAction::Set(S::IpDscp(v))),
        (0u8..4).prop_map(|v| FlowAction::Set(S::IpEcn(v))),
        any::<u16>().prop_map(|p| FlowAction::Set(S::TcpSrc(p))),
        any::<u16>().prop_map(|p| FlowAction::Set(S::TcpDst(p))),
        any::<u16>().prop_map(|p| FlowAction::Set(S::UdpSrc(p))),
        any::<u16>().prop_map(|p| FlowAction::Set(S::UdpDst(p))),
        any::<[u8; 16]>().prop_map(|a| FlowAction::Set(S::Ipv6Src(a.into()))),
        any::<u16>().prop_map(|o| FlowAction::Set(S::ArpOp(o))),
        Just(FlowAction::PopVlan),
        prop_oneof![Just(0x8100u16), Just(0x88a8)]
            .prop_map(|ethertype| FlowAction::PushVlan { ethertype }),
        Just(FlowAction::DecTtl),
        (1u32..4).prop_map(|p| FlowAction::Output {
            port: PortNo::Physical(p)
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Any action list on any bytes: no panic, in either version.
    #[test]
    fn actions_on_arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..120),
        actions in proptest::collection::vec(action(), 0..40),
        v13: bool,
    ) {
        let mut p = Pipeline::new(PipelineConfig {
            version: if v13 { Version::V1_3 } else { Version::V1_0 },
            tables: 1,
            max_flows: 10,
        });
        let mut r = Recorder::default();
        p.execute(&actions, 1, &bytes, Instant::now(), &mut r);
    }

    /// Field writes on TCP and UDP frames keep the IPv4 and transport checksums right.
    #[test]
    fn writes_keep_checksums_right(
        pk in pkt(),
        actions in proptest::collection::vec(action(), 0..12),
    ) {
        use super::testutil::checksums_ok;
        let mut actions = actions;
        // Pushing a second tag moves the IP header where the checker does not look.
        actions.retain(|a| !matches!(a, FlowAction::PushVlan { .. } | FlowAction::Set(openflow::ofctl::SetField::VlanVid(_) | openflow::ofctl::SetField::VlanPcp(_))));
        actions.push(FlowAction::Output { port: PortNo::Physical(9) });
        let mut p = Pipeline::new(PipelineConfig { version: Version::V1_3, tables: 1, max_flows: 10 });
        let mut r = Recorder::default();
        p.execute(&actions, 1, &pk.frame(), Instant::now(), &mut r);
        for (_, _, out) in &r.out {
            prop_assert!(checksums_ok(out), "{actions:?}");
        }
    }
}
