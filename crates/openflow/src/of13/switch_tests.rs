use super::*;
use crate::types::from_hex;

fn reader(b: &[u8]) -> Reader<'_> {
    Reader::new(b, 8, "test")
}

#[test]
fn features_reply_vector() {
    // Body of 4-6-ofp_features_reply.packet.
    let b = from_hex("000008606e7f74e7 00000000 ff 63 0000 0000004f 00000000").unwrap();
    let f = FeaturesReply::parse(&mut reader(&b)).unwrap();
    assert_eq!(f.datapath_id, 9210263729383);
    assert_eq!(f.n_tables, 255);
    assert_eq!(f.auxiliary_id, 99);
    assert_eq!(f.capabilities, 79);
    let mut out = Vec::new();
    f.emit(&mut out).unwrap();
    assert_eq!(out, b);
    assert!(matches!(
        FeaturesReply::parse(&mut reader(&[b.as_slice(), &[0]].concat())),
        Err(DecodeError::LengthMismatch {
            length: 25,
            expected: 24,
            ..
        })
    ));
}

#[test]
fn queue_config_reply_takes_unpadded_lengths_as_they_are() {
    // A 17-byte experimenter property inside a 49-byte queue.
    let b = from_hex(
        "ffffffff 00000000
         00000058 0000004d 0031 000000000000
         0001 0010 00000000 0064 000000000000
         ffff 0011 00000000 000003e7 00000000 01",
    )
    .unwrap();
    let q = QueueGetConfigReply::parse(&mut reader(&b)).unwrap();
    assert_eq!(q.queues[0].queue_id, 88);
    assert_eq!(
        q.queues[0].properties,
        vec![
            QueueProperty::MinRate { rate: 100 },
            QueueProperty::Experimenter {
                experimenter: 999,
                data: vec![1]
            }
        ]
    );
    let mut out = Vec::new();
    q.emit(&mut out).unwrap();
    assert_eq!(out, b);
    let mut o = Vec::new();
    q.opaque_parts(&mut o);
    assert_eq!(o, vec!["experimenter queue property 0x000003e7"]);
    // A queue length below its header, and one past the message.
    let mut bad = b.clone();
    bad[16..18].copy_from_slice(&[0, 8]);
    assert!(matches!(
        QueueGetConfigReply::parse(&mut reader(&bad)),
        Err(DecodeError::LengthTooShort { .. })
    ));
    bad[16..18].copy_from_slice(&[0, 0x40]);
    assert!(matches!(
        QueueGetConfigReply::parse(&mut reader(&bad)),
        Err(DecodeError::LengthOverrun { .. })
    ));
}

#[test]
fn role_and_async_are_fixed_size() {
    let b = from_hex("00000002 00000000 f000000000000000").unwrap();
    let r = Role::parse(&mut reader(&b)).unwrap();
    assert_eq!(r.role, ControllerRole::Master);
    assert_eq!(r.generation_id, 0xf000000000000000);
    assert!(Role::parse(&mut reader(&b[..15])).is_err());
    let b = from_hex("00000005 00000001 00000007 00000003 0000000f 00000003").unwrap();
    let c = AsyncConfig::parse(&mut reader(&b)).unwrap();
    assert_eq!(c.flow_removed_mask, [15, 3]);
    let mut out = Vec::new();
    c.emit(&mut out).unwrap();
    assert_eq!(out, b);
    assert!(matches!(
        AsyncConfig::parse(&mut reader(&[b.as_slice(), &[0; 4]].concat())),
        Err(DecodeError::LengthMismatch { .. })
    ));
    let t = TableMod::parse(&mut reader(&from_hex("ff000000 00000000").unwrap())).unwrap();
    assert_eq!(t.table_id, 0xff);
}
