use proptest::prelude::*;

use super::*;
use crate::error::EncodeError;
use crate::of13::oxm::OxmField;
use crate::types::from_hex;

fn parse(b: &[u8]) -> DecodeResult<Vec<Action>> {
    Action::parse_list(&mut Reader::new(b, 0, "test"))
}

fn emit(a: &[Action]) -> Vec<u8> {
    let mut out = Vec::new();
    Action::emit_list(a, &mut out).unwrap();
    out
}

#[test]
fn every_action_from_the_flow_mod_vector() {
    // The apply-actions list of 4-2-ofp_flow_mod.packet.
    let b = from_hex(
        "0019 0010 80000c02 0102 000000000000
         000b 0008 00000000
         000c 0008 00000000
         001b 0008 00000000
         001a 0008 1234 0000
         0014 0008 9876 0000
         0013 0008 8847 0000
         0012 0008 00000000
         0011 0008 8100 0000
         0010 0008 00000000
         000f 0008 0a 000000
         0018 0008 00000000
         0017 0008 0a 000000
         ffff 0010 00000065 0001020304050607
         0015 0008 00000003
         0016 0008 00000063
         0000 0010 00000006 ffff 000000000000",
    )
    .unwrap();
    let a = parse(&b).unwrap();
    assert_eq!(
        a,
        vec![
            Action::SetField {
                field: Oxm::basic(OxmField::VlanVid, 258u64)
            },
            Action::CopyTtlOut,
            Action::CopyTtlIn,
            Action::PopPbb,
            Action::PushPbb { ethertype: 0x1234 },
            Action::PopMpls { ethertype: 0x9876 },
            Action::PushMpls { ethertype: 0x8847 },
            Action::PopVlan,
            Action::PushVlan { ethertype: 0x8100 },
            Action::DecMplsTtl,
            Action::SetMplsTtl { mpls_ttl: 10 },
            Action::DecNwTtl,
            Action::SetNwTtl { nw_ttl: 10 },
            Action::Experimenter {
                experimenter: 101,
                data: vec![0, 1, 2, 3, 4, 5, 6, 7]
            },
            Action::SetQueue { queue_id: 3 },
            Action::Group { group_id: 99 },
            Action::output(6),
        ]
    );
    assert_eq!(emit(&a), b);
    let texts: Vec<String> = a.iter().map(|x| x.to_string()).collect();
    assert_eq!(texts[0], "set_field:vlan_vid=0x102");
    assert_eq!(texts[1], "copy_ttl_out");
    assert_eq!(texts[16], "output:6");
    assert_eq!(
        Action::output(crate::of13::OFPP_CONTROLLER).to_string(),
        "output:CONTROLLER"
    );
    let mut o = Vec::new();
    Action::list_opaque_parts(&a, &mut o);
    assert_eq!(o, vec!["experimenter action 0x00000065"]);
}

#[test]
fn nicira_and_unknown_actions_are_opaque() {
    // NXAST_RESUBMIT (subtype 1) and an unknown action type 99.
    let b = from_hex("ffff 0010 00002320 0001 0005 00000000  0063 0008 01020304").unwrap();
    let a = parse(&b).unwrap();
    assert_eq!(emit(&a), b);
    let mut o = Vec::new();
    Action::list_opaque_parts(&a, &mut o);
    assert_eq!(
        o,
        vec![
            "experimenter action 0x00002320 subtype 1 (Nicira)",
            "unknown action type 99"
        ]
    );
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(serde_json::from_str::<Vec<Action>>(&json).unwrap(), a);
}

#[test]
fn action_lengths_are_checked() {
    // Not a multiple of 8.
    assert_eq!(
        parse(&from_hex("0012 000c 00000000 00000000").unwrap()).unwrap_err(),
        DecodeError::Misaligned {
            layer: "ofp_action",
            offset: 0,
            length: 12,
            align: 8
        }
    );
    // Below the 8-byte minimum.
    assert!(matches!(
        parse(&from_hex("0012 0004 00000000").unwrap()),
        Err(DecodeError::LengthTooShort { .. })
    ));
    // Overruns its container.
    assert!(matches!(
        parse(&from_hex("0000 0010 00000001 ffff0000").unwrap()),
        Err(DecodeError::LengthOverrun {
            layer: "ofp_action",
            length: 16,
            available: 12,
            ..
        })
    ));
    // A known fixed-size action of the wrong length.
    assert_eq!(
        parse(&from_hex("0012 0010 00000000 00000000 00000000").unwrap()).unwrap_err(),
        DecodeError::LengthMismatch {
            layer: "ofp_action_generic",
            offset: 0,
            length: 16,
            expected: 8
        }
    );
    assert!(matches!(
        parse(&from_hex("0000 0008 00000001").unwrap()),
        Err(DecodeError::Truncated {
            layer: "ofp_action_output",
            ..
        })
    ));
    // set_field with more than the padding after its OXM.
    assert!(matches!(
        parse(&from_hex("0019 0018 80000c02 0102 000000000000 0000000000000000").unwrap()),
        Err(DecodeError::LengthMismatch {
            layer: "ofp_action_set_field",
            ..
        })
    ));
    // set_field whose OXM runs past the action.
    assert!(matches!(
        parse(&from_hex("0019 0008 80000c08 0102 0000").unwrap()),
        Err(DecodeError::LengthOverrun {
            layer: "ofp_oxm",
            ..
        })
    ));
}

#[test]
fn set_field_with_bad_value_does_not_encode() {
    let a = Action::SetField {
        field: Oxm::basic(OxmField::IpProto, 300u64),
    };
    let mut out = Vec::new();
    assert!(matches!(
        a.emit(&mut out),
        Err(EncodeError::BadValue {
            field: "ip_proto",
            ..
        })
    ));
}

proptest! {
    #[test]
    fn any_actions_round_trip(a in crate::of13::arb::actions()) {
        let b = emit(&a);
        prop_assert_eq!(b.len() % 8, 0);
        prop_assert_eq!(&parse(&b).unwrap(), &a);
        let json = serde_json::to_string(&a).unwrap();
        prop_assert_eq!(&serde_json::from_str::<Vec<Action>>(&json).unwrap(), &a);
    }

    #[test]
    fn any_instructions_round_trip(i in crate::of13::arb::instructions()) {
        use crate::of13::instruction::Instruction;
        let mut b = Vec::new();
        Instruction::emit_list(&i, &mut b).unwrap();
        prop_assert_eq!(b.len() % 8, 0);
        prop_assert_eq!(&Instruction::parse_list(&mut Reader::new(&b, 0, "t")).unwrap(), &i);
        let json = serde_json::to_string(&i).unwrap();
        prop_assert_eq!(&serde_json::from_str::<Vec<Instruction>>(&json).unwrap(), &i);
    }

    #[test]
    fn any_bytes_parse_without_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(a) = parse(&b) {
            prop_assert_eq!(emit(&a).len(), b.len());
        }
    }
}
