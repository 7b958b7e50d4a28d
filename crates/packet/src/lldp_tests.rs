use super::*;
use crate::ethernet::{EtherType, EthernetFrame};
use crate::testdata;
use proptest::prelude::*;

fn pdu(frame: &[u8]) -> &[u8] {
    let f = EthernetFrame::new_checked(frame).unwrap();
    assert_eq!(f.ethertype(), EtherType::Lldp);
    assert_eq!(f.dst_addr(), MULTICAST_NEAREST_BRIDGE);
    &frame[14..]
}

#[test]
fn open_vswitch_style_vector() {
    let b = pdu(testdata::LLDP_OVS);
    let p = LldpPdu::new_checked(b).unwrap();
    assert_eq!(
        p.chassis_id(),
        ChassisId {
            subtype: ChassisIdSubtype::LocallyAssigned,
            id: b"dpid:0000000000000001"
        }
    );
    assert_eq!(
        p.port_id(),
        PortId {
            subtype: PortIdSubtype::PortComponent,
            id: &[0, 0, 0, 1]
        }
    );
    assert_eq!(p.ttl(), 120);
    assert_eq!(p.system_name(), None);
    assert_eq!(validate(b).unwrap(), 24 + 7 + 4 + 2);
    let r = LldpRepr::parse(&p).unwrap();
    assert_eq!(r, LldpRepr::new(p.chassis_id(), p.port_id(), 120));
    let mut out = vec![0u8; r.buffer_len()];
    assert_eq!(r.emit(&mut out).unwrap(), 37);
    assert_eq!(&out[..], &b[..37]);
}

#[test]
fn switch_vector() {
    let b = pdu(testdata::LLDP_SWITCH);
    let p = LldpPdu::new_checked(b).unwrap();
    let chassis = p.chassis_id();
    assert_eq!(chassis.mac(), Some(MacAddr([0, 0, 0x5e, 0, 0x53, 0x0a])));
    assert_eq!(p.port_id().subtype, PortIdSubtype::InterfaceName);
    assert_eq!(p.port_id().id, b"Gi1/0/1");
    assert_eq!(p.port_id().mac(), None);
    assert_eq!(p.ttl(), 120);
    assert_eq!(p.port_description(), Some(&b"GigabitEthernet1/0/1"[..]));
    assert_eq!(p.system_name(), Some(&b"sw1.example.net"[..]));
    assert_eq!(p.system_description(), Some(&b"Pharos test switch"[..]));
    let orgs: Vec<_> = p.org_specific().collect();
    assert_eq!(orgs.len(), 2);
    assert_eq!(
        orgs[0],
        OrgSpecific {
            oui: OUI_IEEE_8021,
            subtype: 1,
            info: &[0, 1]
        }
    );
    assert_eq!(orgs[1].oui, OUI_IEEE_8023);
    let r = LldpRepr::parse(&p).unwrap();
    assert_eq!(r.other.len(), 2);
    assert_eq!(r.other[0].tlv_type, LldpTlvType::SystemCapabilities);
    assert_eq!(r.other[1].tlv_type, LldpTlvType::ManagementAddress);
    // The switch sent the TLVs in emit's order, so they re-encode byte for byte.
    let len = validate(b).unwrap();
    let mut out = vec![0u8; r.buffer_len()];
    assert_eq!(r.emit(&mut out).unwrap(), len);
    assert_eq!(&out[..], &b[..len]);
}

#[test]
fn every_truncation() {
    for frame in [testdata::LLDP_OVS, testdata::LLDP_SWITCH] {
        let b = pdu(frame);
        let len = validate(b).unwrap();
        for n in 0..len {
            let e = LldpPdu::new_checked(&b[..n]).unwrap_err();
            match e {
                // Cut between TLVs: the End TLV is missing.
                Error::Truncated {
                    layer: "lldp",
                    offset,
                    needed: 2,
                    available: 0,
                } => assert_eq!(offset, n),
                Error::Truncated {
                    layer: "lldp tlv",
                    offset,
                    needed: 2,
                    available: 1,
                } => assert_eq!(offset + 1, n),
                Error::LengthOverrun {
                    layer: "lldp tlv",
                    offset,
                    available,
                    ..
                } => assert_eq!(offset + 2 + available, n),
                e => panic!("{n}: {e}"),
            }
        }
    }
}

/// The Ryu-style frame with one byte changed at `at`.
fn mutated(at: usize, v: u8) -> Vec<u8> {
    let mut b = pdu(testdata::LLDP_OVS)[..37].to_vec();
    b[at] = v;
    b
}

#[test]
fn malformed_tlvs_are_typed_errors() {
    // Port ID length 1: no id.
    let b = mutated(25, 1);
    assert!(matches!(
        validate(&b).unwrap_err(),
        Error::LengthTooShort {
            layer: "lldp port id tlv",
            offset: 24,
            length: 1,
            min: 2,
            ..
        }
    ));
    // TTL length 3 (swallowing a byte of the End TLV).
    let b = mutated(32, 3);
    assert!(matches!(
        validate(&b).unwrap_err(),
        Error::LengthMismatch {
            layer: "lldp ttl tlv",
            offset: 31,
            length: 3,
            expected: 2,
            ..
        }
    ));
    // Chassis ID length running past the frame.
    let b = mutated(1, 200);
    assert!(matches!(
        validate(&b).unwrap_err(),
        Error::LengthOverrun {
            layer: "lldp tlv",
            offset: 0,
            length: 200,
            ..
        }
    ));
    // Port ID first.
    let b = mutated(0, 2 << 1);
    assert!(matches!(
        validate(&b).unwrap_err(),
        Error::BadValue {
            field: "tlv type",
            offset: 0,
            value: 2,
            ..
        }
    ));
    // End TLV with a length.
    let mut b = mutated(36, 1);
    b.push(0);
    assert!(matches!(
        validate(&b).unwrap_err(),
        Error::LengthMismatch {
            layer: "lldp end tlv",
            expected: 0,
            ..
        }
    ));
    // A repeated TTL.
    let mut b = pdu(testdata::LLDP_OVS)[..35].to_vec();
    b.extend_from_slice(&[0x06, 0x02, 0x00, 0x10, 0, 0]);
    assert!(matches!(
        validate(&b).unwrap_err(),
        Error::BadValue {
            offset: 35,
            value: 3,
            ..
        }
    ));
    // Organisation-specific with no subtype.
    let mut b = pdu(testdata::LLDP_OVS)[..35].to_vec();
    b.extend_from_slice(&[0xfe, 0x03, 0x00, 0x80, 0xc2, 0, 0]);
    assert!(matches!(
        validate(&b).unwrap_err(),
        Error::LengthTooShort {
            offset: 35,
            length: 3,
            min: 4,
            ..
        }
    ));
}

#[test]
fn emit_rejects_bad_values() {
    let ok = LldpRepr::new(
        ChassisId {
            subtype: ChassisIdSubtype::LocallyAssigned,
            id: b"x",
        },
        PortId {
            subtype: PortIdSubtype::LocallyAssigned,
            id: b"y",
        },
        120,
    );
    let mut out = [0u8; 1024];
    assert!(ok.emit(&mut out).is_ok());
    let empty = LldpRepr {
        chassis_id: ChassisId {
            id: b"",
            ..ok.chassis_id
        },
        ..ok.clone()
    };
    assert!(empty.emit(&mut out).is_err());
    let long = [b'a'; 256];
    let r = LldpRepr {
        system_name: Some(&long),
        ..ok.clone()
    };
    assert!(r.emit(&mut out).is_err());
    let r = LldpRepr {
        other: vec![RawTlv {
            tlv_type: LldpTlvType::Ttl,
            value: &[0, 1],
        }],
        ..ok.clone()
    };
    assert!(r.emit(&mut out).is_err());
    let r = LldpRepr {
        other: vec![RawTlv {
            tlv_type: LldpTlvType::SystemCapabilities,
            value: &[0, 1],
        }],
        ..ok.clone()
    };
    assert!(r.emit(&mut out).is_err());
    assert!(ok.emit(&mut out[..ok.buffer_len() - 1]).is_err());
}

fn bytes(min: usize, max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), min..=max)
}

proptest! {
    #[test]
    fn round_trip(
        cs: u8, cid in bytes(1, 255), ps: u8, pid in bytes(1, 255), ttl: u16,
        pd in proptest::option::of(bytes(0, 255)), sn in proptest::option::of(bytes(0, 40)),
        sd in proptest::option::of(bytes(0, 255)),
        caps in proptest::option::of(any::<[u8; 4]>()), unknown in proptest::option::of((9u8..127, bytes(0, 100))),
        orgs in proptest::collection::vec((any::<[u8; 3]>(), any::<u8>(), bytes(0, 507)), 0..3),
    ) {
        let mut other = Vec::new();
        if let Some(c) = &caps {
            other.push(RawTlv { tlv_type: LldpTlvType::SystemCapabilities, value: c });
        }
        if let Some((t, v)) = &unknown {
            other.push(RawTlv { tlv_type: LldpTlvType::from_raw(*t), value: v });
        }
        let r = LldpRepr {
            chassis_id: ChassisId { subtype: cs.into(), id: &cid },
            port_id: PortId { subtype: ps.into(), id: &pid },
            ttl,
            port_description: pd.as_deref(),
            system_name: sn.as_deref(),
            system_description: sd.as_deref(),
            other,
            org_specific: orgs.iter().map(|(oui, subtype, info)| OrgSpecific { oui: *oui, subtype: *subtype, info }).collect(),
        };
        let mut buf = vec![0u8; r.buffer_len()];
        prop_assert_eq!(r.emit(&mut buf).unwrap(), buf.len());
        let p = LldpPdu::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(p.ttl(), ttl);
        prop_assert_eq!(LldpRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn never_panics(b in bytes(0, 300)) {
        if let Ok(p) = LldpPdu::new_checked(&b[..]) {
            let _ = (p.chassis_id(), p.port_id(), p.ttl(), p.system_name(), p.org_specific().count());
            LldpRepr::parse(&p).unwrap();
        }
    }
}
