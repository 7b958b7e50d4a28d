use super::*;
use crate::testdata;
use openflow::of13::oxm::{Match as OxmMatch, OxmValue};
use openflow::wire::Reader;
use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

const A: MacAddr = MacAddr([0x00, 0x00, 0x5e, 0x00, 0x53, 0x01]);
const B: MacAddr = MacAddr([0x00, 0x00, 0x5e, 0x00, 0x53, 0x02]);

/// The wildcard word with exactly these fields matched.
fn exact(bits: u32) -> u32 {
    OFPFW_ALL & !bits
}

const L2: u32 = OFPFW_IN_PORT | OFPFW_DL_SRC | OFPFW_DL_DST | OFPFW_DL_TYPE | OFPFW_DL_VLAN;
const NW: u32 = OFPFW_NW_PROTO | OFPFW_NW_SRC_MASK | OFPFW_NW_DST_MASK;

#[test]
fn of10_arp() {
    let m = of10_match(testdata::ARP_REQUEST, 3);
    assert_eq!(
        m,
        of10::Match {
            wildcards: exact(L2 | NW),
            in_port: 3,
            dl_src: A,
            dl_dst: MacAddr::BROADCAST,
            dl_vlan: OFP_VLAN_NONE,
            dl_type: 0x0806,
            nw_proto: 1,
            nw_src: Ipv4Addr::new(192, 0, 2, 1),
            nw_dst: Ipv4Addr::new(192, 0, 2, 2),
            ..of10::Match::all()
        }
    );
    assert_eq!((m.nw_src_prefix_len(), m.nw_dst_prefix_len()), (32, 32));
}

#[test]
fn of10_icmp() {
    let m = of10_match(testdata::ICMP_ECHO_IPV4_OPTIONS, 1);
    assert_eq!(
        m.wildcards,
        exact(L2 | NW | OFPFW_NW_TOS | OFPFW_TP_SRC | OFPFW_TP_DST)
    );
    assert_eq!(
        (m.nw_tos, m.nw_proto, m.tp_src, m.tp_dst),
        (46 << 2, 1, 8, 0)
    );
    assert_eq!(m.nw_dst, Ipv4Addr::new(198, 51, 100, 7));
    assert!(m.is_wildcarded(OFPFW_DL_VLAN_PCP));
}

#[test]
fn of10_tagged_udp() {
    let m = of10_match(testdata::DOUBLE_TAGGED_UDP, 2);
    assert_eq!(
        m.wildcards,
        exact(L2 | OFPFW_DL_VLAN_PCP | NW | OFPFW_NW_TOS | OFPFW_TP_SRC | OFPFW_TP_DST)
    );
    assert_eq!((m.dl_vlan, m.dl_vlan_pcp, m.dl_type), (100, 5, 0x0800));
    assert_eq!((m.nw_proto, m.tp_src, m.tp_dst), (17, 5353, 53));
}

#[test]
fn of10_non_ip() {
    for (frame, dl_type) in [
        (testdata::TCP_SYN_IPV6_EXT, 0x86dd),
        (testdata::LLDP_OVS, 0x88cc),
        (testdata::MPLS_UDP, 0x8847),
    ] {
        let m = of10_match(frame, 7);
        assert_eq!(m.wildcards, exact(L2), "{dl_type:#x}");
        assert_eq!(m.dl_type, dl_type);
    }
    // 802.3: the not-an-EtherType type.
    let mut f = testdata::ARP_REQUEST.to_vec();
    f[12] = 0;
    f[13] = 46;
    assert_eq!(of10_match(&f, 1).dl_type, DL_TYPE_NOT_ETH_TYPE);
    // Too short for Ethernet: in_port only.
    assert_eq!(
        of10_match(&f[..10], 1),
        of10::Match {
            wildcards: exact(OFPFW_IN_PORT),
            in_port: 1,
            ..of10::Match::all()
        }
    );
}

#[test]
fn of10_truncated_transport_is_wildcarded() {
    let f = &testdata::ICMP_ECHO_IPV4_OPTIONS[..14 + 24 + 3];
    let m = of10_match(f, 1);
    assert_eq!(m.wildcards, exact(L2 | NW | OFPFW_NW_TOS));
}

fn field_names(m: &OxmMatch) -> Vec<OxmField> {
    m.fields()
        .iter()
        .map(|o| o.basic_field().unwrap())
        .collect()
}

fn value(m: &OxmMatch, f: OxmField) -> OxmValue {
    m.get(f).unwrap_or_else(|| panic!("{f:?} missing")).value
}

#[test]
fn oxm_tcp_over_ipv6() {
    use OxmField::*;
    let m = oxm_match(testdata::TCP_SYN_IPV6_EXT, 5);
    assert_eq!(
        field_names(&m),
        [
            InPort, EthDst, EthSrc, EthType, VlanVid, IpDscp, IpEcn, IpProto, TcpSrc, TcpDst,
            Ipv6Src, Ipv6Dst, Ipv6Flabel
        ]
    );
    assert_eq!(value(&m, InPort), OxmValue::Int(5));
    assert_eq!(value(&m, EthDst), OxmValue::Mac(B));
    assert_eq!(value(&m, VlanVid), OxmValue::Int(OFPVID_NONE.into()));
    assert_eq!(value(&m, IpProto), OxmValue::Int(6));
    assert_eq!(value(&m, IpDscp), OxmValue::Int(10));
    assert_eq!(value(&m, TcpSrc), OxmValue::Int(49152));
    assert_eq!(value(&m, Ipv6Flabel), OxmValue::Int(0x12345));
    assert_eq!(
        value(&m, Ipv6Dst),
        OxmValue::Ipv6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2))
    );
}

#[test]
fn oxm_arp_and_vlan() {
    use OxmField::*;
    let m = oxm_match(testdata::ARP_REQUEST, 1);
    assert_eq!(
        field_names(&m),
        [InPort, EthDst, EthSrc, EthType, VlanVid, ArpOp, ArpSpa, ArpTpa, ArpSha, ArpTha]
    );
    assert_eq!(value(&m, ArpOp), OxmValue::Int(1));
    assert_eq!(value(&m, ArpTha), OxmValue::Mac(MacAddr::ZERO));
    let m = oxm_match(testdata::DOUBLE_TAGGED_UDP, 1);
    assert_eq!(
        value(&m, VlanVid),
        OxmValue::Int(u64::from(OFPVID_PRESENT | 100))
    );
    assert_eq!(value(&m, VlanPcp), OxmValue::Int(5));
    assert_eq!(value(&m, UdpDst), OxmValue::Int(53));
    assert_eq!(
        value(&m, Ipv4Src),
        OxmValue::Ipv4(Ipv4Addr::new(192, 0, 2, 1))
    );
}

#[test]
fn oxm_neighbor_discovery() {
    use OxmField::*;
    let m = oxm_match(testdata::ICMPV6_NS_SLL, 1);
    let names = field_names(&m);
    assert_eq!(
        &names[names.len() - 4..],
        [Icmpv6Type, Icmpv6Code, Ipv6NdTarget, Ipv6NdSll]
    );
    assert_eq!(value(&m, Ipv6NdSll), OxmValue::Mac(A));
    let m = oxm_match(testdata::ICMPV6_NA_TLL, 1);
    assert_eq!(value(&m, Ipv6NdTll), OxmValue::Mac(B));
    assert!(m.get(Ipv6NdSll).is_none());
}

#[test]
fn oxm_mpls_and_short_frames() {
    use OxmField::*;
    let m = oxm_match(testdata::MPLS_UDP, 1);
    assert_eq!(
        field_names(&m),
        [InPort, EthDst, EthSrc, EthType, VlanVid, MplsLabel, MplsTc, MplsBos]
    );
    assert_eq!(value(&m, MplsLabel), OxmValue::Int(16));
    assert_eq!(value(&m, MplsBos), OxmValue::Int(0));
    assert_eq!(field_names(&oxm_match(&[0; 13], 9)), [InPort]);
}

/// Table 12 of OpenFlow 1.3.5: does `m` hold what `field` needs, before it?
fn prerequisites_hold(m: &OxmMatch) -> Result<(), String> {
    use OxmField::*;
    let fields = m.fields();
    for (i, o) in fields.iter().enumerate() {
        let before = &fields[..i];
        let has = |f: OxmField, ok: &dyn Fn(u64) -> bool| {
            before.iter().any(|o| match o {
                Oxm::Basic(b) if b.field == f => matches!(b.value, OxmValue::Int(v) if ok(v)),
                _ => false,
            })
        };
        let eth = |types: &[u64]| has(EthType, &|v| types.contains(&v));
        let proto = |p: u64| has(IpProto, &|v| v == p);
        let field = o.basic_field().unwrap();
        let ok = match field {
            VlanPcp => has(VlanVid, &|v| v != u64::from(OFPVID_NONE)),
            IpDscp | IpEcn | IpProto => eth(&[0x0800, 0x86dd]),
            Ipv4Src | Ipv4Dst => eth(&[0x0800]),
            TcpSrc | TcpDst => proto(6),
            UdpSrc | UdpDst => proto(17),
            SctpSrc | SctpDst => proto(132),
            Icmpv4Type | Icmpv4Code => proto(1) && eth(&[0x0800]),
            ArpOp | ArpSpa | ArpTpa | ArpSha | ArpTha => eth(&[0x0806]),
            Ipv6Src | Ipv6Dst | Ipv6Flabel | Ipv6Exthdr => eth(&[0x86dd]),
            Icmpv6Type | Icmpv6Code => proto(58) && eth(&[0x86dd]),
            Ipv6NdTarget => has(Icmpv6Type, &|v| v == 135 || v == 136),
            Ipv6NdSll => has(Icmpv6Type, &|v| v == 135),
            Ipv6NdTll => has(Icmpv6Type, &|v| v == 136),
            MplsLabel | MplsTc | MplsBos => eth(&[0x8847, 0x8848]),
            _ => true,
        };
        if !ok {
            return Err(format!("{field:?} without its prerequisites in {fields:?}"));
        }
    }
    Ok(())
}

/// The match encodes (every value fits its field) and decodes to itself.
fn encodes(m: &OxmMatch) {
    let mut out = Vec::new();
    m.emit(&mut out).unwrap();
    assert_eq!(out.len() % 8, 0);
    let back = OxmMatch::parse(&mut Reader::new(&out, 0, "ofp_match")).unwrap();
    assert_eq!(&back, m);
}

#[test]
fn every_vector_and_truncation_meets_prerequisites() {
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
        for n in 0..=v.len() {
            let m = oxm_match(&v[..n], 1);
            prerequisites_hold(&m).unwrap();
            encodes(&m);
            let m10 = of10_match(&v[..n], 1);
            let mut out = Vec::new();
            m10.emit(&mut out);
            assert_eq!(out.len(), of10::Match::LEN);
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_frames(mut b in proptest::collection::vec(any::<u8>(), 0..200), t in prop_oneof![
        Just(0x0800u16), Just(0x86dd), Just(0x0806), Just(0x8100), Just(0x8847), any::<u16>()
    ]) {
        if b.len() >= 15 {
            b[12..14].copy_from_slice(&t.to_be_bytes());
            b[14] = match t { 0x0800 => 0x45, 0x86dd => 0x60, _ => b[14] };
        }
        let m = oxm_match(&b, 1);
        prop_assert!(prerequisites_hold(&m).is_ok(), "{:?}", prerequisites_hold(&m));
        encodes(&m);
        let _ = of10_match(&b, 1);
    }
}
