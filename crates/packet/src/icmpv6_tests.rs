use super::*;
use crate::testdata;
use proptest::prelude::*;

const HOST1: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
const HOST2: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2);
const SOLICITED: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 1, 0xff00, 2);

#[test]
fn neighbor_solicitation_vector() {
    let m = &testdata::ICMPV6_NS_SLL[14 + 40..];
    let p = Icmpv6Packet::new_checked(m).unwrap();
    assert_eq!(p.msg_type(), Icmpv6Type::NeighborSolicit);
    assert!(p.verify_checksum(HOST1, SOLICITED));
    assert!(!p.verify_checksum(HOST2, SOLICITED));
    assert_eq!(p.nd_target(), Some(HOST2));
    let opts: Vec<_> = p.nd_options().map(|o| o.unwrap()).collect();
    assert_eq!(opts.len(), 1);
    assert_eq!(opts[0].kind, NdOptionType::SourceLinkLayerAddr);
    assert_eq!(opts[0].offset, 24);
    let sll = MacAddr([0, 0, 0x5e, 0, 0x53, 1]);
    assert_eq!(opts[0].link_layer_addr(), Some(sll));
    let r = Icmpv6Repr::parse(&p).unwrap();
    assert_eq!(
        r,
        Icmpv6Repr::NeighborSolicit {
            target_addr: HOST2,
            lladdr: Some(sll)
        }
    );
    let mut out = [0u8; 32];
    r.emit(HOST1, SOLICITED, &mut out).unwrap();
    assert_eq!(&out[..], m);
}

#[test]
fn neighbor_advertisement_vector() {
    let m = &testdata::ICMPV6_NA_TLL[14 + 40..];
    let p = Icmpv6Packet::new_checked(m).unwrap();
    assert!(p.verify_checksum(HOST2, HOST1));
    assert!(!p.na_router() && p.na_solicited() && p.na_override());
    let r = Icmpv6Repr::parse(&p).unwrap();
    assert_eq!(
        r,
        Icmpv6Repr::NeighborAdvert {
            router: false,
            solicited: true,
            override_: true,
            target_addr: HOST2,
            lladdr: Some(MacAddr([0, 0, 0x5e, 0, 0x53, 2])),
        }
    );
    let mut out = [0u8; 32];
    r.emit(HOST2, HOST1, &mut out).unwrap();
    assert_eq!(&out[..], m);
}

#[test]
fn every_truncation() {
    let m = &testdata::ICMPV6_NS_SLL[14 + 40..];
    for n in 0..m.len() {
        let r = Icmpv6Packet::new_checked(&m[..n]);
        if n < 24 {
            let needed = if n < 8 { 8 } else { 24 };
            assert_eq!(
                r.unwrap_err(),
                Error::Truncated {
                    layer: "icmpv6",
                    offset: 0,
                    needed,
                    available: n
                }
            );
            continue;
        }
        let p = r.unwrap();
        // A cut option is a typed error; no options at all is a plain solicitation.
        match Icmpv6Repr::parse(&p) {
            Ok(r) => {
                assert_eq!(n, 24);
                assert_eq!(
                    r,
                    Icmpv6Repr::NeighborSolicit {
                        target_addr: HOST2,
                        lladdr: None
                    }
                );
            }
            Err(e) => assert_eq!(e.offset(), if n == 25 { 24 } else { 25 }, "{n}: {e}"),
        }
    }
}

#[test]
fn bad_options() {
    let mut m = testdata::ICMPV6_NS_SLL[14 + 40..].to_vec();
    m[25] = 0;
    let p = Icmpv6Packet::new_checked(&m[..]).unwrap();
    assert!(matches!(
        Icmpv6Repr::parse(&p).unwrap_err(),
        Error::LengthTooShort {
            offset: 25,
            length: 0,
            ..
        }
    ));
    m[25] = 2;
    let p = Icmpv6Packet::new_checked(&m[..]).unwrap();
    assert!(matches!(
        Icmpv6Repr::parse(&p).unwrap_err(),
        Error::LengthOverrun {
            offset: 25,
            length: 16,
            available: 8,
            ..
        }
    ));
    // A well-formed but unusual option list keeps the message as `Other`.
    m[24] = 14; // nonce option
    m[25] = 1;
    let p = Icmpv6Packet::new_checked(&m[..]).unwrap();
    assert!(matches!(
        Icmpv6Repr::parse(&p).unwrap(),
        Icmpv6Repr::Other {
            msg_type: Icmpv6Type::NeighborSolicit,
            ..
        }
    ));
}

fn addr() -> impl Strategy<Value = Ipv6Addr> {
    any::<[u8; 16]>().prop_map(Ipv6Addr::from)
}

fn lladdr() -> impl Strategy<Value = Option<MacAddr>> {
    proptest::option::of(any::<[u8; 6]>().prop_map(MacAddr))
}

proptest! {
    #[test]
    fn round_trip(
        which in 0u8..5, ident: u16, seq_no: u16, data in proptest::collection::vec(any::<u8>(), 4..40),
        target in addr(), ll in lladdr(), flags in 0u8..8, ty: u8, code: u8, src in addr(), dst in addr(),
    ) {
        let r = match which {
            0 => Icmpv6Repr::EchoRequest { ident, seq_no, data: &data },
            1 => Icmpv6Repr::EchoReply { ident, seq_no, data: &data },
            2 => Icmpv6Repr::NeighborSolicit { target_addr: target, lladdr: ll },
            3 => Icmpv6Repr::NeighborAdvert {
                router: flags & 4 != 0, solicited: flags & 2 != 0, override_: flags & 1 != 0,
                target_addr: target, lladdr: ll,
            },
            _ => {
                // Types whose fields are named above would parse into their variant.
                let ty = if (128..=137).contains(&ty) { 1 } else { ty };
                Icmpv6Repr::Other { msg_type: ty.into(), code, body: &data }
            }
        };
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(src, dst, &mut buf).unwrap();
        let p = Icmpv6Packet::new_checked(&buf[..]).unwrap();
        prop_assert!(p.verify_checksum(src, dst));
        prop_assert_eq!(Icmpv6Repr::parse(&p).unwrap(), r);
    }
}
