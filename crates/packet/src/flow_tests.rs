use super::*;
use crate::ipv6ext::exthdr;
use crate::testdata;
use proptest::prelude::*;

const A: MacAddr = MacAddr([0x00, 0x00, 0x5e, 0x00, 0x53, 0x01]);
const B: MacAddr = MacAddr([0x00, 0x00, 0x5e, 0x00, 0x53, 0x02]);
const HOST1: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
const HOST2: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2);

fn key(frame: &[u8]) -> FlowKey {
    FlowKey::extract(frame).unwrap()
}

#[test]
fn arp_request() {
    let k = key(testdata::ARP_REQUEST);
    assert_eq!(
        k,
        FlowKey {
            eth_dst: MacAddr::BROADCAST,
            eth_src: A,
            eth_type: 0x0806,
            arp: Some(ArpKey {
                op: 1,
                spa: Ipv4Addr::new(192, 0, 2, 1),
                tpa: Ipv4Addr::new(192, 0, 2, 2),
                sha: A,
                tha: MacAddr::ZERO,
            }),
            l3_offset: 14,
            ..FlowKey::default()
        }
    );
}

#[test]
fn icmp_echo_in_ipv4_with_options() {
    let k = key(testdata::ICMP_ECHO_IPV4_OPTIONS);
    assert_eq!(
        k,
        FlowKey {
            eth_dst: B,
            eth_src: A,
            eth_type: 0x0800,
            ip: Some(IpKey {
                proto: 1,
                dscp: 46,
                ecn: 1,
                ttl: 64,
                frag: IpFrag::No
            }),
            ipv4: Some(Ipv4Key {
                src: Ipv4Addr::new(192, 0, 2, 1),
                dst: Ipv4Addr::new(198, 51, 100, 7)
            }),
            l4: Some(L4Key::Icmpv4 {
                icmp_type: 8,
                code: 0
            }),
            l3_offset: 14,
            l4_offset: Some(38),
            ..FlowKey::default()
        }
    );
}

#[test]
fn tcp_syn_over_ipv6_with_extension_headers() {
    let k = key(testdata::TCP_SYN_IPV6_EXT);
    assert_eq!(
        k,
        FlowKey {
            eth_dst: B,
            eth_src: A,
            eth_type: 0x86dd,
            ip: Some(IpKey {
                proto: 6,
                dscp: 10,
                ecn: 2,
                ttl: 64,
                frag: IpFrag::First
            }),
            ipv6: Some(Ipv6Key {
                src: HOST1,
                dst: HOST2,
                flow_label: 0x12345,
                exthdr: exthdr::HOP | exthdr::FRAG
            }),
            l4: Some(L4Key::Tcp {
                src: 49152,
                dst: 80,
                flags: 0x002
            }),
            l3_offset: 14,
            l4_offset: Some(70),
            ..FlowKey::default()
        }
    );
    assert_eq!((k.tp_src(), k.tp_dst()), (Some(49152), Some(80)));
}

#[test]
fn neighbor_discovery() {
    let k = key(testdata::ICMPV6_NS_SLL);
    assert_eq!(
        k.l4,
        Some(L4Key::Icmpv6 {
            icmp_type: 135,
            code: 0
        })
    );
    assert_eq!(k.ip.unwrap().ttl, 255);
    assert_eq!(
        k.nd,
        Some(NdKey {
            target: HOST2,
            sll: Some(A),
            tll: None
        })
    );
    assert_eq!(k.error, None);
    let k = key(testdata::ICMPV6_NA_TLL);
    assert_eq!(
        k.nd,
        Some(NdKey {
            target: HOST2,
            sll: None,
            tll: Some(B)
        })
    );
    assert_eq!(k.ipv6.unwrap().src, HOST2);
}

#[test]
fn double_tagged_udp() {
    let k = key(testdata::DOUBLE_TAGGED_UDP);
    assert_eq!(
        k.vlan,
        Some(VlanKey {
            tpid: 0x88a8,
            vid: 100,
            pcp: 5,
            dei: false
        })
    );
    assert_eq!(k.vlan_depth, 2);
    assert_eq!(k.eth_type, 0x0800);
    assert_eq!(k.l3_offset, 22);
    assert_eq!(
        k.ip,
        Some(IpKey {
            proto: 17,
            dscp: 0,
            ecn: 0,
            ttl: 17,
            frag: IpFrag::No
        })
    );
    assert_eq!(k.l4, Some(L4Key::Udp { src: 5353, dst: 53 }));
    assert_eq!(k.l4_offset, Some(42));
}

#[test]
fn lldp_and_mpls() {
    let k = key(testdata::LLDP_OVS);
    assert_eq!(k.eth_type, 0x88cc);
    assert_eq!((k.ip, k.l4, k.error), (None, None, None));
    let k = key(testdata::MPLS_UDP);
    assert_eq!(k.eth_type, 0x8847);
    assert_eq!(
        k.mpls,
        Some(MplsKey {
            label: 16,
            tc: 0,
            bos: false,
            ttl: 64
        })
    );
    assert_eq!(k.ip, None);
}

#[test]
fn later_fragments_have_no_ports() {
    let mut f = testdata::DOUBLE_TAGGED_UDP.to_vec();
    f[22 + 6] = 0x00;
    f[22 + 7] = 0xb9; // offset 185, DF cleared
    let k = key(&f);
    assert_eq!(k.ip.unwrap().frag, IpFrag::Later);
    assert_eq!((k.l4, k.l4_offset, k.error), (None, None, None));
    f[22 + 6] = 0x20; // MF, offset 0: the first fragment
    f[22 + 7] = 0x00;
    let k = key(&f);
    assert_eq!(k.ip.unwrap().frag, IpFrag::First);
    assert_eq!(k.tp_dst(), Some(53));
}

#[test]
fn padding_is_not_payload() {
    // An IPv4 packet whose total length ends before the UDP header, in a padded frame.
    let mut f = testdata::DOUBLE_TAGGED_UDP.to_vec();
    f[22 + 3] = 20 + 4;
    let k = key(&f);
    assert!(k.l4.is_none());
    assert_eq!(
        k.error,
        Some(Error::Truncated {
            layer: "udp",
            offset: 42,
            needed: 8,
            available: 4
        })
    );
}

#[test]
fn non_ethernet_arp_and_bad_versions_are_reported() {
    let mut f = testdata::ARP_REQUEST.to_vec();
    f[14 + 1] = 6;
    let k = key(&f);
    assert!(k.arp.is_none());
    assert!(matches!(
        k.error,
        Some(Error::BadValue {
            layer: "arp",
            offset: 14,
            ..
        })
    ));
    let mut f = testdata::ICMP_ECHO_IPV4_OPTIONS.to_vec();
    f[14] = 0x56;
    let k = key(&f);
    assert!(k.ip.is_none() && k.ipv4.is_none());
    assert!(matches!(
        k.error,
        Some(Error::BadValue {
            field: "version",
            offset: 14,
            value: 5,
            ..
        })
    ));
}

#[test]
fn sctp_and_8023() {
    let mut f = testdata::DOUBLE_TAGGED_UDP[..42].to_vec();
    f[22 + 9] = 132;
    f.extend_from_slice(&[0x0b, 0x59, 0x0b, 0x5a, 0, 0, 0, 1, 0, 0, 0, 0]);
    f[22 + 3] = 32;
    let k = key(&f);
    assert_eq!(
        k.l4,
        Some(L4Key::Sctp {
            src: 2905,
            dst: 2906
        })
    );
    // An 802.3 frame: a length where the EtherType goes.
    let mut f = testdata::ARP_REQUEST.to_vec();
    f[12] = 0x00;
    f[13] = 0x2e;
    let k = key(&f);
    assert_eq!(k.eth_type, 0x002e);
    assert_eq!((k.arp, k.error), (None, None));
}

#[test]
fn short_frames() {
    for n in 0..14 {
        assert_eq!(
            FlowKey::extract(&testdata::ARP_REQUEST[..n]).unwrap_err(),
            Error::Truncated {
                layer: "ethernet",
                offset: 0,
                needed: 14,
                available: n
            }
        );
    }
}

/// `part` (from a truncated frame) holds nothing `full` does not, and what it lacks
/// is explained by an error.
fn check_subset(part: &FlowKey, full: &FlowKey, n: usize) {
    fn sub<T: PartialEq + core::fmt::Debug>(
        p: &Option<T>,
        f: &Option<T>,
        n: usize,
        what: &str,
    ) -> bool {
        if p.is_some() {
            assert_eq!(p, f, "{what} at {n}");
        }
        p.is_none() && f.is_some()
    }
    assert_eq!((part.eth_dst, part.eth_src), (full.eth_dst, full.eth_src));
    let mut missing = sub(&part.vlan, &full.vlan, n, "vlan");
    missing |= sub(&part.mpls, &full.mpls, n, "mpls");
    missing |= sub(&part.arp, &full.arp, n, "arp");
    missing |= sub(&part.ip, &full.ip, n, "ip");
    missing |= sub(&part.ipv4, &full.ipv4, n, "ipv4");
    missing |= sub(&part.l4, &full.l4, n, "l4");
    if let (Some(p), Some(f)) = (part.ipv6, full.ipv6) {
        assert_eq!(
            (p.src, p.dst, p.flow_label),
            (f.src, f.dst, f.flow_label),
            "ipv6 at {n}"
        );
        assert!(p.exthdr == f.exthdr || p.exthdr == 0, "exthdr at {n}");
    }
    missing |= part.ipv6.is_none() && full.ipv6.is_some();
    if let (Some(p), Some(f)) = (part.nd, full.nd) {
        assert_eq!(p.target, f.target);
        missing |= sub(&p.sll, &f.sll, n, "sll") | sub(&p.tll, &f.tll, n, "tll");
    }
    missing |= part.nd.is_none() && full.nd.is_some();
    if missing {
        let e = part
            .error
            .unwrap_or_else(|| panic!("fields missing without an error at {n}: {part:?}"));
        assert!(e.is_truncated(), "{n}: {e}");
        assert!(e.offset() <= n, "{n}: {e}");
    }
    if part.error.is_none() {
        assert_eq!(part.eth_type, full.eth_type, "{n}");
    }
}

#[test]
fn every_truncation_of_every_vector() {
    let vectors = [
        testdata::ARP_REQUEST,
        testdata::ICMP_ECHO_IPV4_OPTIONS,
        testdata::TCP_SYN_IPV6_EXT,
        testdata::ICMPV6_NS_SLL,
        testdata::ICMPV6_NA_TLL,
        testdata::DOUBLE_TAGGED_UDP,
        testdata::LLDP_OVS,
        testdata::LLDP_SWITCH,
        testdata::MPLS_UDP,
    ];
    for v in vectors {
        let full = key(v);
        assert_eq!(full.error, None, "{full:?}");
        for n in 14..v.len() {
            check_subset(&key(&v[..n]), &full, n);
        }
    }
}

fn frame() -> impl Strategy<Value = Vec<u8>> {
    let ethertype = prop_oneof![
        Just(0x0800u16),
        Just(0x86dd),
        Just(0x0806),
        Just(0x8100),
        Just(0x88a8),
        Just(0x8847),
        any::<u16>(),
    ];
    (
        ethertype,
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(|(t, fix_version, mut body)| {
            let mut f = vec![0u8; 12];
            f.extend_from_slice(&t.to_be_bytes());
            if fix_version && !body.is_empty() {
                body[0] = if t == 0x86dd {
                    0x60 | (body[0] & 0x0f)
                } else {
                    0x45
                };
            }
            f.extend_from_slice(&body);
            f
        })
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = FlowKey::extract(&b);
    }

    #[test]
    fn never_panics_on_plausible_frames(f in frame()) {
        let k = FlowKey::extract(&f).unwrap();
        if let Some(e) = k.error {
            prop_assert!(e.offset() <= f.len());
        }
        if let Some(o) = k.l4_offset {
            prop_assert!(o <= f.len());
        }
    }
}
