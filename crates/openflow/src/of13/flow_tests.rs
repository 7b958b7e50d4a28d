use super::*;
use crate::of13::oxm::{Oxm, OxmField};
use crate::of13::OFPP_CONTROLLER;
use crate::types::from_hex;

fn reader(b: &[u8]) -> Reader<'_> {
    Reader::new(b, 8, "test")
}

#[test]
fn flow_mod_vector() {
    // Body of 4-3-ofp_flow_mod.packet.
    let b = from_hex(
        "0000000000000000 0000000000000000 00 00 0000 0000 007b 0000ffff ffffffff ffffffff
         0000 0000 00010016 80000004 00000006 80000806 f20ba47df8ea 0000 0001 0008 01000000",
    )
    .unwrap();
    let f = FlowMod::parse(&mut reader(&b)).unwrap();
    assert_eq!(f.priority, 123);
    assert_eq!(f.buffer_id, 0xffff);
    assert_eq!(f.command, FlowModCommand::Add);
    assert_eq!(f.match_.to_string(), "in_port=6,eth_src=f2:0b:a4:7d:f8:ea");
    assert_eq!(f.instructions, vec![Instruction::GotoTable { table_id: 1 }]);
    let mut out = Vec::new();
    f.emit(&mut out).unwrap();
    assert_eq!(out, b);
}

#[test]
fn flow_mod_default_is_a_sensible_add() {
    let f = FlowMod {
        instructions: vec![Instruction::ApplyActions {
            actions: vec![Action::output(OFPP_CONTROLLER)],
        }],
        ..FlowMod::default()
    };
    let mut out = Vec::new();
    f.emit(&mut out).unwrap();
    assert_eq!(out.len(), 40 + 8 + 24);
    assert_eq!(FlowMod::parse(&mut reader(&out)).unwrap(), f);
}

#[test]
fn packet_in_vector() {
    // Body of 4-4-ofp_packet_in.packet.
    let b = from_hex(
        "00000002002a0101000102030000000000010050800000040000000680000a02080680000606ffffffff\
         ffff80000806f20ba47df8ea80002a02000180002c040a00000180002e040a00000380003006f20ba47d\
         f8ea800032060000000000000000fffffffffffff20ba47df8ea08060001080006040001f20ba47df8ea\
         0a0000010000000000000a000003",
    )
    .unwrap();
    let p = PacketIn::parse(&mut reader(&b)).unwrap();
    assert_eq!(p.buffer_id, 2);
    assert_eq!(p.total_len, 42);
    assert_eq!(p.reason, PacketInReason::Action);
    assert_eq!(p.cookie, 0x0001020300000000);
    assert_eq!(p.in_port(), Some(6));
    assert_eq!(p.match_.fields().len(), 9);
    assert_eq!(p.data.len(), 42);
    let mut out = Vec::new();
    p.emit(&mut out).unwrap();
    assert_eq!(out, b);
}

#[test]
fn packet_in_without_its_two_pad_bytes_is_truncated() {
    let b = from_hex("ffffffff 0000 00 00 0000000000000000 00010004 00000000").unwrap();
    assert!(matches!(
        PacketIn::parse(&mut reader(&b)),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn flow_removed_vector_and_trailing_bytes() {
    // Body of 4-40-ofp_flow_removed.packet.
    let b = from_hex(
        "0000000000000000ffff00000000000302e902a80003000000000000000000010000000000000056\
         0001000e80000606f20ba47df8ea0000",
    )
    .unwrap();
    let f = FlowRemoved::parse(&mut reader(&b)).unwrap();
    assert_eq!(f.idle_timeout, 3);
    assert_eq!(f.byte_count, 86);
    assert_eq!(f.reason, FlowRemovedReason::IdleTimeout);
    assert_eq!(
        f.match_.fields(),
        &[Oxm::basic(
            OxmField::EthDst,
            "f2:0b:a4:7d:f8:ea".parse::<crate::MacAddr>().unwrap()
        )]
    );
    let mut out = Vec::new();
    f.emit(&mut out).unwrap();
    assert_eq!(out, b);
    let mut long = b.clone();
    long.extend_from_slice(&[0; 8]);
    assert!(matches!(
        FlowRemoved::parse(&mut reader(&long)),
        Err(DecodeError::LengthMismatch { .. })
    ));
}

#[test]
fn packet_out_actions_len_is_checked() {
    // Body of 4-1-ofp_packet_out.packet, frame shortened.
    let b =
        from_hex("ffffffff fffffffd 0010 000000000000 0000 0010 fffffffc ffff 000000000000 aabbcc")
            .unwrap();
    let p = PacketOut::parse(&mut reader(&b)).unwrap();
    assert_eq!(p.actions, vec![Action::output(crate::of13::OFPP_ALL)]);
    assert_eq!(p.data, vec![0xaa, 0xbb, 0xcc]);
    let mut out = Vec::new();
    p.emit(&mut out).unwrap();
    assert_eq!(out, b);
    // actions_len past the message.
    let mut bad = b.clone();
    bad[8..10].copy_from_slice(&[0, 0x40]);
    assert_eq!(
        PacketOut::parse(&mut reader(&bad)).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_packet_out",
            offset: 16,
            length: 64,
            available: 19
        }
    );
    // actions_len cutting an action in half.
    let mut cut = b.clone();
    cut[8..10].copy_from_slice(&[0, 8]);
    assert!(matches!(
        PacketOut::parse(&mut reader(&cut)),
        Err(DecodeError::LengthOverrun {
            layer: "ofp_action",
            ..
        })
    ));
}
