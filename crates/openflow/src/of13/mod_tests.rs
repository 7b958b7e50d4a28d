//! Whole 1.3 messages: dispatch, message-level length errors, and the property test
//! that every message decodes to itself after encoding, also through JSON.

use proptest::prelude::*;

use super::*;
use crate::error::DecodeError;
use crate::types::from_hex;

fn decode(b: &[u8]) -> crate::DecodeResult<Message> {
    match crate::Message::decode(b)? {
        (_, crate::Message::V13(m)) => Ok(m),
        (_, other) => panic!("not 1.3: {other:?}"),
    }
}

fn encode(m: &Message) -> Vec<u8> {
    crate::Message::V13(m.clone()).to_bytes(7).unwrap()
}

#[test]
fn fixed_size_messages_with_the_wrong_length_are_refused() {
    // FEATURES_REPLY with one byte too many.
    let b =
        from_hex("0406 0021 00000000 0000086066cbc9e7 00000000 ff 63 0000 0000004f 00000000 00")
            .unwrap();
    assert_eq!(
        decode(&b).unwrap_err(),
        DecodeError::LengthMismatch {
            layer: "ofp_switch_features",
            offset: 8,
            length: 25,
            expected: 24
        }
    );
    // ROLE_REQUEST one byte short.
    let b = from_hex("0418 0017 00000000 00000002 00000000 f0000000000000").unwrap();
    assert!(matches!(
        decode(&b),
        Err(DecodeError::Truncated {
            layer: "ofp_role_request",
            ..
        })
    ));
    // BARRIER_REQUEST and GET_ASYNC_REQUEST with a body.
    for t in [0x14u8, 0x1a] {
        let b = [4, t, 0, 9, 0, 0, 0, 0, 0];
        assert!(matches!(
            decode(&b),
            Err(DecodeError::LengthMismatch { length: 1, .. })
        ));
    }
    // PORT_MOD, TABLE_MOD, SET_ASYNC, QUEUE_GET_CONFIG_REQUEST with trailing bytes.
    for (t, len) in [(0x10u8, 32usize), (0x11, 8), (0x1c, 24), (0x16, 8)] {
        let mut b = vec![4, t, 0, 0, 0, 0, 0, 0];
        b.resize(8 + len + 4, 0);
        let n = b.len() as u16;
        b[2..4].copy_from_slice(&n.to_be_bytes());
        assert!(
            matches!(decode(&b), Err(DecodeError::LengthMismatch { .. })),
            "type {t}"
        );
    }
}

#[test]
fn match_length_past_the_message_is_refused() {
    // FLOW_MOD whose match claims 0x40 bytes.
    let mut b = from_hex(
        "040e 0048 00000000 0000000000000000 0000000000000000 00 00 0000 0000 007b ffffffff
         ffffffff ffffffff 0000 0000 00010040 80000004 00000006",
    )
    .unwrap();
    let n = b.len() as u16;
    b[2..4].copy_from_slice(&n.to_be_bytes());
    assert_eq!(
        decode(&b).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_match",
            offset: 48,
            length: 64,
            available: 12
        }
    );
}

#[test]
fn instruction_overrunning_the_flow_mod_is_refused() {
    let mut b = from_hex(
        "040e 0000 00000000 0000000000000000 0000000000000000 00 00 0000 0000 007b ffffffff
         ffffffff ffffffff 0000 0000 00010004 00000000 0001 0010 01000000",
    )
    .unwrap();
    let n = b.len() as u16;
    b[2..4].copy_from_slice(&n.to_be_bytes());
    assert!(matches!(
        decode(&b),
        Err(DecodeError::LengthOverrun {
            layer: "ofp_instruction",
            offset: 56,
            ..
        })
    ));
}

#[test]
fn opaque_parts_are_listed() {
    let m = Message::FlowMod(FlowMod {
        match_: Match::new(vec![Oxm::Raw {
            class: 1,
            field: 33,
            hasmask: false,
            payload: vec![0, 0, 0, 1],
        }]),
        instructions: vec![Instruction::ApplyActions {
            actions: vec![Action::Experimenter {
                experimenter: 0x2320,
                data: vec![0, 35, 0, 0, 0, 0, 0, 0],
            }],
        }],
        ..FlowMod::default()
    });
    let parts = crate::Message::V13(m).opaque_parts();
    assert_eq!(
        parts,
        vec![
            "OXM class 0x0001 field 33 (Nicira NXM)",
            "experimenter action 0x00002320 subtype 35 (Nicira)"
        ]
    );
    assert!(crate::Message::V13(Message::BarrierRequest)
        .opaque_parts()
        .is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_message_round_trips(m in arb::message()) {
        let b = encode(&m);
        prop_assert_eq!(&decode(&b).unwrap(), &m);
        let json = serde_json::to_string(&crate::Message::V13(m.clone())).unwrap();
        let back: crate::Message = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, crate::Message::V13(m));
    }

    #[test]
    fn every_truncation_fails_cleanly(m in arb::message()) {
        let b = encode(&m);
        for cut in 8..b.len() {
            let mut p = b[..cut].to_vec();
            p[2..4].copy_from_slice(&(cut as u16).to_be_bytes());
            if let Ok(d) = decode(&p) {
                prop_assert_eq!(encode(&d), p);
            }
        }
    }
}
