use proptest::prelude::*;

use super::*;
use crate::types::from_hex;

fn parse_match(b: &[u8]) -> DecodeResult<Match> {
    let mut r = Reader::new(b, 0, "test");
    let m = Match::parse(&mut r)?;
    r.finish()?;
    Ok(m)
}

fn emit_match(m: &Match) -> Vec<u8> {
    let mut out = Vec::new();
    m.emit(&mut out).unwrap();
    out
}

#[test]
fn match_from_flow_mod_vector() {
    // 4-3-ofp_flow_mod.packet: in_port=6, eth_src=f2:0b:a4:7d:f8:ea, length 22, 2 pad.
    let b = from_hex("00010016 80000004 00000006 80000806 f20ba47df8ea 0000").unwrap();
    let m = parse_match(&b).unwrap();
    assert_eq!(
        m,
        Match::new(vec![
            Oxm::basic(OxmField::InPort, 6u64),
            Oxm::basic(
                OxmField::EthSrc,
                "f2:0b:a4:7d:f8:ea".parse::<MacAddr>().unwrap()
            ),
        ])
    );
    assert_eq!(m.to_string(), "in_port=6,eth_src=f2:0b:a4:7d:f8:ea");
    assert_eq!(m.wire_len(), 22);
    assert_eq!(emit_match(&m), b);
    assert_eq!(m.get(OxmField::InPort).unwrap().value, OxmValue::Int(6));
}

#[test]
fn every_value_kind_and_masks_round_trip() {
    let m = Match::new(vec![
        Oxm::masked(OxmField::Metadata, 0x1234u64, 0xffffu64),
        Oxm::basic(OxmField::VlanVid, (OFPVID_PRESENT | 999) as u64),
        Oxm::masked(
            OxmField::Ipv4Dst,
            Ipv4Addr::new(10, 0, 0, 0),
            Ipv4Addr::new(255, 0, 0, 0),
        ),
        Oxm::basic(OxmField::Ipv6Src, "fe80::1".parse::<Ipv6Addr>().unwrap()),
        Oxm::basic(OxmField::PbbIsid, 0xabcdefu64),
        Oxm::masked(
            OxmField::EthDst,
            MacAddr([1, 0, 0, 0, 0, 0]),
            MacAddr([1, 0, 0, 0, 0, 0]),
        ),
    ]);
    let b = emit_match(&m);
    assert_eq!(b.len() % 8, 0);
    // pbb_isid is 3 bytes: header 0x80004a03.
    assert!(b
        .windows(7)
        .any(|w| w == [0x80, 0, 0x4a, 3, 0xab, 0xcd, 0xef]));
    assert_eq!(parse_match(&b).unwrap(), m);
    assert_eq!(
        m.to_string(),
        "metadata=0x1234/0xffff,vlan_vid=0x13e7,ipv4_dst=10.0.0.0/255.0.0.0,ipv6_src=fe80::1,\
         pbb_isid=11259375,eth_dst=01:00:00:00:00:00/01:00:00:00:00:00"
    );
    let json = serde_json::to_string(&m).unwrap();
    assert!(json.contains(r#"{"field":"ipv4_dst","value":"10.0.0.0","mask":"255.0.0.0"}"#));
    assert_eq!(serde_json::from_str::<Match>(&json).unwrap(), m);
}

#[test]
fn opaque_oxms_round_trip_byte_for_byte() {
    // Nicira pkt_mark (class 1, field 33, masked), ONF pbb_uca (experimenter), and an
    // OpenFlow-basic field id from 1.4 (41, pbb_uca) this codec does not know.
    let b = from_hex(
        "0001005c 00014308 0000d431 0000ffff ffff0a05 4f4e4600 01 fffffe05 deadbeef 00 80005201 01",
    )
    .unwrap();
    let mut b2 = b.clone();
    b2[2..4].copy_from_slice(&((b.len()) as u16).to_be_bytes());
    let len = b2.len();
    b2.resize(len + crate::wire::padding_for(len), 0);
    let m = parse_match(&b2).unwrap();
    assert_eq!(m.fields().len(), 4);
    assert!(matches!(
        m.fields()[0],
        Oxm::Raw {
            class: 1,
            field: 33,
            hasmask: true,
            ..
        }
    ));
    assert!(matches!(
        m.fields()[1],
        Oxm::Experimenter {
            experimenter: 0x4f4e4600,
            field: 5,
            ..
        }
    ));
    assert!(matches!(
        m.fields()[3],
        Oxm::Raw {
            class: 0x8000,
            field: 41,
            ..
        }
    ));
    assert_eq!(emit_match(&m), b2);
    let mut o = Vec::new();
    m.opaque_parts(&mut o);
    assert_eq!(
        o,
        vec![
            "OXM class 0x0001 field 33 (Nicira NXM)",
            "experimenter OXM 0x4f4e4600 field 5 (ONF)",
            "experimenter OXM 0xdeadbeef field 127",
            "OXM class 0x8000 field 41 (unknown OpenFlow-basic field)",
        ]
    );
    let json = serde_json::to_string(&m).unwrap();
    assert_eq!(serde_json::from_str::<Match>(&json).unwrap(), m);
}

#[test]
fn standard_match_is_opaque() {
    let mut b = vec![0, 0, 0, 12, 1, 2, 3, 4, 5, 6, 7, 8];
    b.resize(16, 0);
    let m = parse_match(&b).unwrap();
    assert_eq!(
        m,
        Match::Other {
            match_type: 0,
            body: vec![1, 2, 3, 4, 5, 6, 7, 8]
        }
    );
    assert_eq!(emit_match(&m), b);
}

#[test]
fn wrong_payload_width_names_the_field() {
    // eth_type with a 4-byte payload.
    let b = from_hex("0001000c 80000a04 00000800 00000000").unwrap();
    let e = parse_match(&b).unwrap_err();
    assert_eq!(
        e,
        DecodeError::BadValue {
            layer: "ofp_oxm",
            field: "eth_type",
            offset: 4,
            value: 4,
            reason: "payload length does not match the field's width",
        }
    );
    // in_port flagged as masked but only 4 bytes long.
    let b = from_hex("0001000c 80000104 00000001 00000000").unwrap();
    assert!(matches!(
        parse_match(&b),
        Err(DecodeError::BadValue {
            field: "in_port",
            ..
        })
    ));
}

#[test]
fn oxm_overrunning_its_match_is_an_error() {
    // Match length 10 holds an in_port OXM that claims 4 payload bytes; only 2 are inside.
    let b = from_hex("0001000a 80000004 0000 000000000000").unwrap();
    assert_eq!(
        parse_match(&b).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_oxm",
            offset: 4,
            length: 8,
            available: 6
        }
    );
    // A header cut short inside the match.
    let b = from_hex("00010006 8000 0000").unwrap();
    assert!(matches!(
        parse_match(&b),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn match_length_past_the_message_is_an_error() {
    let b = from_hex("00010020 80000004 00000006").unwrap();
    assert!(matches!(
        parse_match(&b),
        Err(DecodeError::LengthOverrun {
            layer: "ofp_match",
            offset: 0,
            length: 32,
            ..
        })
    ));
    // The match fits but its padding does not.
    let b = from_hex("0001000c 80000004 00000006").unwrap();
    assert!(matches!(
        parse_match(&b),
        Err(DecodeError::LengthOverrun {
            layer: "ofp_match",
            length: 16,
            ..
        })
    ));
    // Length below its own header.
    let b = from_hex("00010002 00000000").unwrap();
    assert!(matches!(
        parse_match(&b),
        Err(DecodeError::LengthTooShort { .. })
    ));
    // An experimenter OXM too short for its experimenter id.
    let b = from_hex("00010008 ffff0a00").unwrap();
    assert!(matches!(
        parse_match(&b),
        Err(DecodeError::LengthTooShort {
            layer: "ofp_oxm_experimenter",
            ..
        })
    ));
}

#[test]
fn emit_refuses_values_that_do_not_fit() {
    let mut out = Vec::new();
    let e = Oxm::basic(OxmField::VlanPcp, 256u64)
        .emit(&mut out)
        .unwrap_err();
    assert!(matches!(
        e,
        EncodeError::BadValue {
            field: "vlan_pcp",
            ..
        }
    ));
    let e = Oxm::basic(OxmField::EthDst, 1u64)
        .emit(&mut out)
        .unwrap_err();
    assert!(matches!(
        e,
        EncodeError::BadValue {
            field: "eth_dst",
            ..
        }
    ));
    let e = Oxm::Raw {
        class: 1,
        field: 1,
        hasmask: false,
        payload: vec![0; 300],
    }
    .emit(&mut out)
    .unwrap_err();
    assert!(matches!(e, EncodeError::TooLong { .. }));
}

#[test]
fn header_helpers() {
    let h = OxmHeader(0x0001_4308);
    assert_eq!(
        (h.class(), h.field(), h.hasmask(), h.length()),
        (1, 33, true, 8)
    );
    assert_eq!(OxmHeader::new(1, 33, true, 8), h);
    assert_eq!(OxmHeader::basic(OxmField::VlanVid, false, 2).0, 0x8000_0c02);
    assert_eq!(OxmField::from_raw(39), OxmField::Ipv6Exthdr);
    assert_eq!(OxmField::Ipv6Exthdr.kind(), Some(ValueKind::Int(2)));
    assert_eq!(OxmField::Unknown(40).kind(), None);
}

proptest! {
    #[test]
    fn any_match_round_trips(m in crate::of13::arb::match_()) {
        let b = emit_match(&m);
        prop_assert_eq!(b.len() % 8, 0);
        prop_assert_eq!(&parse_match(&b).unwrap(), &m);
        let json = serde_json::to_string(&m).unwrap();
        prop_assert_eq!(&serde_json::from_str::<Match>(&json).unwrap(), &m);
    }

    #[test]
    fn any_bytes_parse_without_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(m) = parse_match(&b) {
            prop_assert_eq!(emit_match(&m).len(), b.len());
        }
    }
}
