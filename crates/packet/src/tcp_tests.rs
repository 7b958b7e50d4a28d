use super::*;
use crate::testdata;
use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

fn v6() -> PseudoHeader {
    PseudoHeader::V6 {
        src: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1),
        dst: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2),
    }
}

fn segment() -> &'static [u8] {
    &testdata::TCP_SYN_IPV6_EXT[14 + 56..]
}

#[test]
fn syn_vector() {
    let p = TcpPacket::new_checked(segment()).unwrap();
    assert_eq!((p.src_port(), p.dst_port()), (49152, 80));
    assert_eq!(p.seq_number(), 0x01020304);
    assert_eq!(p.ack_number(), 0);
    assert_eq!(p.header_len(), 40);
    assert_eq!(p.flags(), TcpFlags(TcpFlags::SYN));
    assert!(p.flags().syn() && !p.flags().ack());
    assert_eq!(p.window_len(), 64800);
    assert!(p.verify_checksum(&v6()));
    assert!(p.payload().is_empty());
    let opts: Vec<_> = p.option_iter().map(|o| o.unwrap()).collect();
    assert_eq!(
        opts.iter().map(|o| o.kind).collect::<Vec<_>>(),
        [2, 4, 8, 1, 3]
    );
    assert_eq!(opts[0].mss(), Some(1460));
    assert_eq!(opts[4].window_scale(), Some(7));
    let r = TcpRepr::parse(&p).unwrap();
    let mut out = [0u8; 40];
    r.emit(&v6(), &mut out).unwrap();
    assert_eq!(&out[..], segment());
}

#[test]
fn every_truncation() {
    let s = segment();
    for n in 0..s.len() {
        let needed = if n < 20 { 20 } else { 40 };
        assert_eq!(
            TcpPacket::new_checked(&s[..n]).unwrap_err(),
            Error::Truncated {
                layer: "tcp",
                offset: 0,
                needed,
                available: n
            }
        );
    }
}

#[test]
fn bad_data_offset_and_options() {
    let mut s = segment().to_vec();
    s[12] = 0x40;
    assert!(matches!(
        TcpPacket::new_checked(&s[..]).unwrap_err(),
        Error::LengthTooShort {
            field: "data offset",
            offset: 12,
            length: 16,
            min: 20,
            ..
        }
    ));
    s[12] = 0xa0;
    s[20 + 1] = 1; // MSS length 1
    let p = TcpPacket::new_checked(&s[..]).unwrap();
    let e = p.option_iter().next().unwrap().unwrap_err();
    assert_eq!(
        e,
        Error::LengthTooShort {
            layer: "tcp option",
            field: "length",
            offset: 21,
            length: 1,
            min: 2
        }
    );
    assert!(p.option_iter().nth(1).is_none());
    s[20 + 1] = 30; // runs past the options
    let p = TcpPacket::new_checked(&s[..]).unwrap();
    assert!(matches!(
        p.option_iter().next().unwrap().unwrap_err(),
        Error::LengthOverrun {
            length: 30,
            available: 20,
            ..
        }
    ));
}

#[test]
fn end_of_list_stops_the_walk() {
    let mut s = segment().to_vec();
    s[20 + 4] = 0; // end of list where SACK-permitted was
    let p = TcpPacket::new_checked(&s[..]).unwrap();
    assert_eq!(p.option_iter().count(), 1);
}

fn pseudo() -> impl Strategy<Value = PseudoHeader> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<[u8; 4]>()).prop_map(|(s, d)| PseudoHeader::V4 {
            src: Ipv4Addr::from(s),
            dst: Ipv4Addr::from(d)
        }),
        (any::<[u8; 16]>(), any::<[u8; 16]>()).prop_map(|(s, d)| PseudoHeader::V6 {
            src: Ipv6Addr::from(s),
            dst: Ipv6Addr::from(d)
        }),
    ]
}

proptest! {
    #[test]
    fn round_trip(
        ports: (u16, u16), seq: u32, ack: u32, flags in 0u16..0x1000, win: u16, urg: u16,
        opt_words in 0usize..=10, payload in proptest::collection::vec(any::<u8>(), 0..100), pseudo in pseudo(),
    ) {
        let options = vec![1u8; opt_words * 4];
        let r = TcpRepr {
            src_port: ports.0, dst_port: ports.1, seq_number: seq, ack_number: ack, flags: TcpFlags(flags),
            window_len: win, urgent_at: urg, options: &options, payload: &payload,
        };
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&pseudo, &mut buf).unwrap();
        let p = TcpPacket::new_checked(&buf[..]).unwrap();
        prop_assert!(p.verify_checksum(&pseudo));
        prop_assert_eq!(p.option_iter().count(), opt_words * 4);
        prop_assert_eq!(TcpRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn options_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        let mut seg = vec![0u8; 20];
        seg[12] = ((20 + bytes.len()) / 4 * 16) as u8;
        seg.extend_from_slice(&bytes);
        if let Ok(p) = TcpPacket::new_checked(&seg[..]) {
            for o in p.option_iter() {
                let _ = o;
            }
        }
    }
}
