use super::*;
use crate::ipv6::Ipv6Packet;
use crate::testdata;
use proptest::prelude::*;

#[test]
fn walk_hop_by_hop_and_fragment() {
    let p = Ipv6Packet::new_checked(&testdata::TCP_SYN_IPV6_EXT[14..]).unwrap();
    let mut w = p.ext_headers();
    let hbh = w.next().unwrap().unwrap();
    assert_eq!(hbh.offset, 40);
    assert_eq!(hbh.header.kind(), IpProtocol::HopByHop);
    assert_eq!(hbh.header.header_len(), 8);
    let opts: Vec<_> = hbh.header.options().map(|o| o.unwrap()).collect();
    assert_eq!(
        opts,
        [
            Ipv6Option {
                kind: 5,
                data: &[0, 0]
            },
            Ipv6Option { kind: 1, data: &[] }
        ]
    );
    let frag = w.next().unwrap().unwrap();
    assert_eq!(frag.offset, 48);
    let f = Ipv6FragmentRepr::parse(&frag.header).unwrap();
    assert_eq!(
        f,
        Ipv6FragmentRepr {
            next_header: IpProtocol::Tcp,
            offset: 0,
            more_frags: false,
            ident: 0xdeadbeef
        }
    );
    let mut out = [0u8; 8];
    f.emit(&mut out).unwrap();
    assert_eq!(&out[..], &testdata::TCP_SYN_IPV6_EXT[14 + 48..14 + 56]);
    assert!(w.next().is_none());
    let u = w.upper_layer();
    assert_eq!(u.protocol, IpProtocol::Tcp);
    assert_eq!(u.offset, 56);
    assert!(u.has_header());
    assert_eq!(u.exthdr, exthdr::HOP | exthdr::FRAG);
    // The generic repr re-emits the hop-by-hop header byte for byte.
    let r = Ipv6ExtHeaderRepr::parse(&hbh.header).unwrap();
    r.emit(&mut out).unwrap();
    assert_eq!(&out[..], &testdata::TCP_SYN_IPV6_EXT[14 + 40..14 + 48]);
}

#[test]
fn every_truncation() {
    let p = &testdata::TCP_SYN_IPV6_EXT[14..];
    for n in 40..p.len() {
        let w = Ipv6ExtHeaders::new(IpProtocol::HopByHop, &p[40..n], 40);
        match w.walk() {
            Ok(u) => {
                assert!(n >= 56);
                assert_eq!(u.offset, 56);
            }
            Err(e) => {
                assert!(n < 56, "{n}");
                assert!(e.is_truncated());
                assert_eq!(e.offset(), if n < 48 { 40 } else { 48 });
            }
        }
    }
}

#[test]
fn later_fragment_stops_the_walk() {
    // Fragment header, offset 185 (1480 bytes), then data that looks like a header.
    let b = [6, 0, 0x05, 0xc8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    let u = Ipv6ExtHeaders::new(IpProtocol::Ipv6Frag, &b, 0)
        .walk()
        .unwrap();
    assert_eq!(u.protocol, IpProtocol::Tcp);
    assert_eq!(
        u.fragment,
        Some(FragmentInfo {
            offset: 185,
            more: false,
            ident: 1
        })
    );
    assert!(!u.has_header());
}

#[test]
fn chain_is_bounded() {
    // Destination options headers that each point at another one.
    let b = [60u8, 0, 1, 4, 0, 0, 0, 0].repeat(MAX_EXT_HEADERS + 1);
    let e = Ipv6ExtHeaders::new(IpProtocol::Ipv6Opts, &b, 40)
        .walk()
        .unwrap_err();
    assert_eq!(
        e,
        Error::TooManyHeaders {
            layer: "ipv6 extension headers",
            offset: 40 + 8 * MAX_EXT_HEADERS,
            limit: MAX_EXT_HEADERS
        }
    );
}

#[test]
fn flags_for_odd_chains() {
    // Routing, then hop-by-hop (out of order), then AH (length 1: 12 bytes), then
    // "no next header".
    let mut b = vec![0u8, 0, 0, 0, 0, 0, 0, 0];
    b.extend_from_slice(&[51, 0, 1, 4, 0, 0, 0, 0]);
    b.extend_from_slice(&[59, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let u = Ipv6ExtHeaders::new(IpProtocol::Ipv6Route, &b, 0)
        .walk()
        .unwrap();
    assert_eq!(u.protocol, IpProtocol::Ipv6NoNxt);
    assert_eq!(u.offset, 28);
    assert_eq!(
        u.exthdr,
        exthdr::ROUTER | exthdr::HOP | exthdr::AUTH | exthdr::UNSEQ | exthdr::NONEXT
    );
    assert!(!u.has_header());
    // Two fragment headers: a repeat.
    let b = [44u8, 0, 0, 0, 0, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0];
    let u = Ipv6ExtHeaders::new(IpProtocol::Ipv6Frag, &b, 0)
        .walk()
        .unwrap();
    assert_eq!(u.exthdr, exthdr::FRAG | exthdr::UNREP);
    // Destination options before and after a routing header: expected.
    let b = [
        43u8, 0, 1, 4, 0, 0, 0, 0, 60, 0, 0, 0, 0, 0, 0, 0, 6, 0, 1, 4, 0, 0, 0, 0,
    ];
    let u = Ipv6ExtHeaders::new(IpProtocol::Ipv6Opts, &b, 0)
        .walk()
        .unwrap();
    assert_eq!(u.exthdr, exthdr::DEST | exthdr::ROUTER);
    assert_eq!(u.protocol, IpProtocol::Tcp);
}

#[test]
fn option_running_past_header() {
    let b = [6u8, 0, 5, 9, 0, 0, 0, 0];
    let h = Ipv6ExtHeader::new_checked(&b[..], IpProtocol::HopByHop).unwrap();
    let e = h.options().next().unwrap().unwrap_err();
    assert_eq!(
        e,
        Error::LengthOverrun {
            layer: "ipv6 option",
            field: "length",
            offset: 3,
            length: 9,
            available: 4
        }
    );
    assert!(h.options().nth(1).is_none());
}

fn kind() -> impl Strategy<Value = IpProtocol> {
    prop_oneof![
        Just(IpProtocol::HopByHop),
        Just(IpProtocol::Ipv6Route),
        Just(IpProtocol::Ipv6Opts),
        Just(IpProtocol::Ah),
    ]
}

proptest! {
    #[test]
    fn round_trip(kind in kind(), nh: u8, units in 0usize..20, fill: u8) {
        let len = if kind == IpProtocol::Ah { 8 + units * 4 } else { 8 + units * 8 };
        let data = vec![fill; len - 2];
        let r = Ipv6ExtHeaderRepr { kind, next_header: nh.into(), data: &data };
        let mut buf = vec![0u8; r.buffer_len()];
        prop_assert_eq!(r.emit(&mut buf).unwrap(), len);
        let h = Ipv6ExtHeader::new_checked(&buf[..], kind).unwrap();
        prop_assert_eq!(Ipv6ExtHeaderRepr::parse(&h).unwrap(), r);
    }

    #[test]
    fn fragment_round_trip(nh: u8, offset in 0u16..0x2000, more: bool, ident: u32) {
        let r = Ipv6FragmentRepr { next_header: nh.into(), offset, more_frags: more, ident };
        let mut buf = [0u8; 8];
        r.emit(&mut buf).unwrap();
        let h = Ipv6ExtHeader::new_checked(&buf[..], IpProtocol::Ipv6Frag).unwrap();
        prop_assert_eq!(Ipv6FragmentRepr::parse(&h).unwrap(), r);
    }

    #[test]
    fn walk_never_panics(nh: u8, bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Ipv6ExtHeaders::new(nh.into(), &bytes, 0).walk();
    }
}
