//! Tests for `multipart/` and `table_features.rs`: byte vectors for the types Ryu's
//! vectors do not cover, every truncation of them, length errors, and a property test
//! that emit-then-parse is the identity for every multipart type.

use crate::common::PortCounters;

use proptest::prelude::*;

use super::*;
use crate::error::DecodeError;
use crate::of13::arb;
use crate::of13::group::GroupType;
use crate::of13::oxm::{OxmField, OxmHeader};
use crate::of13::table_features::{FeatureId, OxmId, TableFeatureProp};
use crate::types::{from_hex, FixedStr};

fn bytes(hex: &str) -> Vec<u8> {
    from_hex(hex).unwrap()
}

fn parse_req(b: &[u8]) -> DecodeResult<MultipartRequest> {
    MultipartRequest::parse(&mut Reader::new(b, 8, "ofp_multipart_request"))
}

fn parse_rep(b: &[u8]) -> DecodeResult<MultipartReply> {
    MultipartReply::parse(&mut Reader::new(b, 8, "ofp_multipart_reply"))
}

fn emit_req(m: &MultipartRequest) -> Vec<u8> {
    let mut out = Vec::new();
    m.emit(&mut out).unwrap();
    out
}

fn emit_rep(m: &MultipartReply) -> Vec<u8> {
    let mut out = Vec::new();
    m.emit(&mut out).unwrap();
    out
}

/// Every prefix of `b` must fail to parse or re-encode to exactly that prefix (a
/// list cut between entries is valid).
fn check_truncations(b: &[u8], request: bool) {
    for cut in 0..b.len() {
        let p = &b[..cut];
        if request {
            if let Ok(m) = parse_req(p) {
                assert_eq!(emit_req(&m), p, "request cut at {cut}");
            }
        } else if let Ok(m) = parse_rep(p) {
            assert_eq!(emit_rep(&m), p, "reply cut at {cut}");
        }
    }
}

/// Parses a request, checks it re-encodes exactly and survives JSON.
fn request_vector(hex: &str) -> MultipartRequest {
    let b = bytes(hex);
    let m = parse_req(&b).unwrap();
    assert_eq!(emit_req(&m), b);
    let json = serde_json::to_string(&m).unwrap();
    assert_eq!(
        serde_json::from_str::<MultipartRequest>(&json).unwrap(),
        m,
        "{json}"
    );
    check_truncations(&b, true);
    m
}

/// Parses a reply, checks it re-encodes exactly and survives JSON.
fn reply_vector(hex: &str) -> MultipartReply {
    let b = bytes(hex);
    let m = parse_rep(&b).unwrap();
    assert_eq!(emit_rep(&m), b);
    let json = serde_json::to_string(&m).unwrap();
    assert_eq!(
        serde_json::from_str::<MultipartReply>(&json).unwrap(),
        m,
        "{json}"
    );
    check_truncations(&b, false);
    m
}

#[test]
fn meter_stats_request_and_config_request() {
    let m = request_vector("0009 0000 00000000 00000005 00000000");
    assert_eq!(
        m,
        MultipartRequest::new(MultipartRequestBody::Meter { meter_id: 5 })
    );
    assert!(!m.more());
    assert_eq!(m.kind(), MultipartType::Meter);
    let m = request_vector("000a 0001 00000000 ffffffff 00000000");
    assert!(m.more());
    assert_eq!(
        m.body,
        MultipartRequestBody::MeterConfig {
            meter_id: 0xffff_ffff
        }
    );
}

#[test]
fn meter_stats_reply_with_and_without_bands() {
    let m = reply_vector(
        "0009 0001 00000000
         00000001 0048 000000000000 00000003 0000000000000064 0000000000001000
           0000000a 00000014
           0000000000000001 0000000000000002
           0000000000000003 0000000000000004
         00000002 0028 000000000000 00000000 0000000000000000 0000000000000000
           00000000 00000000",
    );
    assert!(m.more());
    let MultipartReplyBody::Meter { stats } = &m.body else {
        panic!("{m:?}")
    };
    assert_eq!(stats.len(), 2);
    assert_eq!(
        stats[0],
        MeterStats {
            meter_id: 1,
            flow_count: 3,
            packet_in_count: 100,
            byte_in_count: 0x1000,
            duration_sec: 10,
            duration_nsec: 20,
            band_stats: vec![
                Counter {
                    packet_count: 1,
                    byte_count: 2
                },
                Counter {
                    packet_count: 3,
                    byte_count: 4
                }
            ],
        }
    );
    assert!(stats[1].band_stats.is_empty());
}

#[test]
fn empty_body_requests() {
    for (hex, kind) in [
        ("0000 0000 00000000", MultipartType::Desc),
        ("0003 0000 00000000", MultipartType::Table),
        ("0007 0000 00000000", MultipartType::GroupDesc),
        ("0008 0000 00000000", MultipartType::GroupFeatures),
        ("000b 0000 00000000", MultipartType::MeterFeatures),
        ("000c 0000 00000000", MultipartType::TableFeatures),
        ("000d 0000 00000000", MultipartType::PortDesc),
    ] {
        assert_eq!(request_vector(hex).kind(), kind, "{hex}");
    }
}

#[test]
fn queue_and_port_stats_requests() {
    let m = request_vector("0005 0000 00000000 00000001 ffffffff");
    assert_eq!(
        m.body,
        MultipartRequestBody::Queue {
            port_no: 1,
            queue_id: 0xffff_ffff
        }
    );
    let m = request_vector("0004 0000 00000000 fffffffc 00000000");
    assert_eq!(
        m.body,
        MultipartRequestBody::PortStats {
            port_no: 0xffff_fffc
        }
    );
}

#[test]
fn experimenter_request_and_reply() {
    let m = request_vector("ffff 0000 00000000 00002320 00000007 0102030405");
    assert_eq!(
        m.body,
        MultipartRequestBody::Experimenter(ExperimenterMultipart {
            experimenter: 0x2320,
            exp_type: 7,
            data: vec![1, 2, 3, 4, 5],
        })
    );
    let mut parts = Vec::new();
    m.opaque_parts(&mut parts);
    assert_eq!(parts.len(), 1);
    let m = reply_vector("ffff 0000 00000000 00002320 00000007");
    assert_eq!(
        m.body,
        MultipartReplyBody::Experimenter(ExperimenterMultipart {
            experimenter: 0x2320,
            exp_type: 7,
            data: vec![],
        })
    );
}

#[test]
fn unknown_types_are_opaque() {
    let m = request_vector("0042 0000 00000000 deadbeef");
    assert_eq!(m.kind(), MultipartType::Unknown(0x42));
    let m = reply_vector("0042 0000 00000000 deadbeef");
    let mut parts = Vec::new();
    m.opaque_parts(&mut parts);
    assert_eq!(parts, ["unknown multipart reply type 66 (4 body bytes)"]);
}

#[test]
fn port_desc_reply() {
    let m = reply_vector(&format!(
        "000d 0000 00000000
         00000007 00000000 f20ba4d03f70 0000 506f727437{pad} 00000001 00000004 00002808
           00002800 00002808 00002808 00001388 00001388",
        pad = "00".repeat(11)
    ));
    let MultipartReplyBody::PortDesc { ports } = &m.body else {
        panic!("{m:?}")
    };
    assert_eq!(ports[0].port_no, 7);
    assert_eq!(ports[0].name.as_str(), Some("Port7"));
}

/// A TABLE_FEATURES entry with the properties Ryu's vector lacks: experimenter
/// instruction and action ids, NEXT_TABLES_MISS, WILDCARDS with an experimenter OXM
/// id, EXPERIMENTER_MISS, and an unknown property.
fn table_features_entry() -> String {
    format!(
        "0098 03 0000000000 74{name} ffffffffffffffff 00000000000000ff 00000003 00010000
         0001 0014 0001 0004 ffff 000c 00002320 0000000a 00000000
         0003 0007 040506 00
         0007 0010 0000 0004 ffff 0008 00002320
         000a 0010 80000004 ffff0205 4f4e4600
         ffff 000f 00000065 00000007 aabbcc 00
         0042 0005 01 000000",
        name = "00".repeat(31)
    )
}

#[test]
fn table_features_with_every_kind_of_id() {
    let m = request_vector(&format!("000c 0000 00000000 {}", table_features_entry()));
    let MultipartRequestBody::TableFeatures { tables } = &m.body else {
        panic!("{m:?}")
    };
    let t = &tables[0];
    assert_eq!(t.table_id, 3);
    assert_eq!(t.name.as_str(), Some("t"));
    assert_eq!(t.max_entries, 0x10000);
    assert_eq!(
        t.properties,
        vec![
            TableFeatureProp::InstructionsMiss {
                ids: vec![
                    FeatureId::Standard { id_type: 1 },
                    FeatureId::Experimenter {
                        experimenter: 0x2320,
                        data: vec![0, 0, 0, 0x0a]
                    },
                ]
            },
            TableFeatureProp::NextTablesMiss {
                table_ids: vec![4, 5, 6]
            },
            TableFeatureProp::ApplyActionsMiss {
                ids: vec![
                    FeatureId::Standard { id_type: 0 },
                    FeatureId::Experimenter {
                        experimenter: 0x2320,
                        data: vec![]
                    },
                ]
            },
            TableFeatureProp::Wildcards {
                oxm_ids: vec![
                    OxmId::new(OxmHeader::basic(OxmField::InPort, false, 4)),
                    OxmId {
                        header: OxmHeader(0xffff_0205),
                        experimenter: Some(0x4f4e_4600)
                    },
                ]
            },
            TableFeatureProp::ExperimenterMiss {
                experimenter: 0x65,
                exp_type: 7,
                data: vec![0xaa, 0xbb, 0xcc]
            },
            TableFeatureProp::Unknown {
                prop_type: 0x42,
                body: vec![1]
            },
        ]
    );
    let mut parts = Vec::new();
    m.opaque_parts(&mut parts);
    assert_eq!(parts.len(), 2, "{parts:?}");
    // The same entry in a reply.
    reply_vector(&format!("000c 0000 00000000 {}", table_features_entry()));
}

#[test]
fn entry_length_under_minimum() {
    let mut b = bytes("0006 0000 00000000 0008 0000 00000001");
    b.resize(8 + 40, 0);
    assert_eq!(
        parse_rep(&b).unwrap_err(),
        DecodeError::LengthTooShort {
            layer: "ofp_group_stats",
            offset: 16,
            length: 8,
            min: 40
        }
    );
    let mut b = bytes("0009 0000 00000000 00000001 0020");
    b.resize(8 + 40, 0);
    assert_eq!(
        parse_rep(&b).unwrap_err(),
        DecodeError::LengthTooShort {
            layer: "ofp_meter_stats",
            offset: 16,
            length: 32,
            min: 40
        }
    );
    let b = bytes("000a 0000 00000000 0004 0000 00000001");
    assert!(matches!(
        parse_rep(&b),
        Err(DecodeError::LengthTooShort {
            layer: "ofp_meter_config",
            min: 8,
            ..
        })
    ));
    let b = bytes("000c 0000 00000000 0010 0000 00000000 00000000 00000000");
    assert!(matches!(
        parse_req(&b),
        Err(DecodeError::LengthTooShort {
            layer: "ofp_table_features",
            min: 64,
            ..
        })
    ));
}

#[test]
fn entry_overrunning_the_body() {
    let mut b = bytes("0001 0000 00000000 00c8");
    b.resize(8 + 56, 0);
    assert_eq!(
        parse_rep(&b).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_flow_stats",
            offset: 16,
            length: 200,
            available: 56
        }
    );
    let b = bytes("0007 0000 00000000 0010 00 00 00000001");
    assert_eq!(
        parse_rep(&b).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_group_desc",
            offset: 16,
            length: 16,
            available: 8
        }
    );
}

#[test]
fn entry_length_disagreeing_with_content() {
    // A group stats entry 4 bytes longer than its fixed part: not a whole bucket counter.
    let mut b = bytes("0006 0000 00000000 002c");
    b.resize(8 + 44, 0);
    assert_eq!(
        parse_rep(&b).unwrap_err(),
        DecodeError::LengthMismatch {
            layer: "ofp_bucket_counter",
            offset: 16 + 40,
            length: 4,
            expected: 0
        }
    );
    // A flow stats entry whose match runs past the entry's own length.
    let b = bytes(
        "0001 0000 00000000
         0038 00 00 00000000 00000000 0000 0000 0000 0000 00000000
         0000000000000000 0000000000000000 0000000000000000
         0001 000c 80000004",
    );
    assert!(parse_rep(&b).is_err());
}

#[test]
fn table_feature_property_lengths() {
    let fixed = format!(
        "000c 0000 00000000 {{len}} 00 0000000000 {} {} {} 00000000 00000000",
        "00".repeat(32),
        "00".repeat(8),
        "00".repeat(8)
    );
    let with = |len: &str, props: &str| bytes(&format!("{} {props}", fixed.replace("{len}", len)));
    // A property claiming more than its entry holds.
    assert_eq!(
        parse_req(&with("0048", "0002 000c 01020304")).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_table_feature_prop",
            offset: 16 + 64,
            length: 12,
            available: 8
        }
    );
    // A property length under its 4-byte header.
    assert!(matches!(
        parse_req(&with("0048", "0002 0002 01020304")).unwrap_err(),
        DecodeError::LengthTooShort {
            layer: "ofp_table_feature_prop",
            ..
        }
    ));
    // An instruction id list that does not fill its property.
    assert!(matches!(
        parse_req(&with("0048", "0000 0006 0001 0000")).unwrap_err(),
        DecodeError::Truncated { .. }
    ));
    // An instruction id whose own length runs past the property.
    assert!(matches!(
        parse_req(&with("0048", "0000 0008 0001 0008")).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_instruction_id",
            ..
        }
    ));
    // An OXM id list that is not whole headers.
    assert!(parse_req(&with("0050", "0008 000a 80000004 8000 000000000000")).is_err());
    // A property without its padding to 8.
    assert_eq!(
        parse_req(&with("0047", "0002 0007 010203")).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_table_feature_prop padding",
            offset: 16 + 64,
            length: 8,
            available: 7
        }
    );
}

#[test]
fn body_not_a_whole_number_of_fixed_entries() {
    let mut b = bytes("0003 0000 00000000");
    b.resize(8 + 30, 0);
    assert_eq!(
        parse_rep(&b).unwrap_err(),
        DecodeError::LengthMismatch {
            layer: "ofp_table_stats",
            offset: 16,
            length: 30,
            expected: 24
        }
    );
    let mut b = bytes("0004 0000 00000000");
    b.resize(8 + 111, 0);
    assert!(matches!(
        parse_rep(&b),
        Err(DecodeError::LengthMismatch {
            layer: "ofp_port_stats",
            ..
        })
    ));
    let mut b = bytes("0005 0000 00000000");
    b.resize(8 + 41, 0);
    assert!(matches!(
        parse_rep(&b),
        Err(DecodeError::LengthMismatch {
            layer: "ofp_queue_stats",
            ..
        })
    ));
    let mut b = bytes("000d 0000 00000000");
    b.resize(8 + 65, 0);
    assert!(matches!(
        parse_rep(&b),
        Err(DecodeError::LengthMismatch {
            layer: "ofp_port",
            ..
        })
    ));
}

#[test]
fn fixed_bodies_refuse_extra_bytes() {
    assert!(matches!(
        parse_req(&bytes("0000 0000 00000000 00")),
        Err(DecodeError::LengthMismatch { .. })
    ));
    assert!(matches!(
        parse_req(&bytes("0004 0000 00000000 00000001 00000000 00000000")),
        Err(DecodeError::LengthMismatch { .. })
    ));
    let mut b = bytes("000b 0000 00000000");
    b.resize(8 + 17, 0);
    assert!(matches!(
        parse_rep(&b),
        Err(DecodeError::LengthMismatch { .. })
    ));
    let mut b = bytes("0000 0000 00000000");
    b.resize(8 + 1057, 0);
    assert!(matches!(
        parse_rep(&b),
        Err(DecodeError::LengthMismatch { .. })
    ));
}

#[test]
fn ids_that_would_decode_differently_are_refused_on_encode() {
    let bad = [
        TableFeatureProp::Match {
            oxm_ids: vec![OxmId {
                header: OxmHeader(0xffff_0200),
                experimenter: None,
            }],
        },
        TableFeatureProp::Match {
            oxm_ids: vec![OxmId {
                header: OxmHeader(0x8000_0004),
                experimenter: Some(1),
            }],
        },
        TableFeatureProp::Instructions {
            ids: vec![FeatureId::Raw {
                id_type: 1,
                body: vec![],
            }],
        },
        TableFeatureProp::Instructions {
            ids: vec![FeatureId::Raw {
                id_type: 0xffff,
                body: vec![0; 4],
            }],
        },
        TableFeatureProp::Unknown {
            prop_type: 2,
            body: vec![],
        },
    ];
    for p in bad {
        assert!(p.emit(&mut Vec::new()).is_err(), "{p:?}");
    }
}

// ---- property test: emit-then-parse is the identity for every type ----

fn arb_counters() -> impl Strategy<Value = Vec<Counter>> {
    prop::collection::vec(
        (any::<u64>(), any::<u64>()).prop_map(|(packet_count, byte_count)| Counter {
            packet_count,
            byte_count,
        }),
        0..3,
    )
}

fn arb_name<const N: usize>() -> impl Strategy<Value = FixedStr<N>> {
    "[a-zA-Z0-9 ]{0,15}".prop_map(|s| FixedStr::new(&s).unwrap())
}

fn arb_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..12)
}

fn arb_experimenter() -> impl Strategy<Value = ExperimenterMultipart> {
    (any::<u32>(), any::<u32>(), arb_bytes()).prop_map(|(experimenter, exp_type, data)| {
        ExperimenterMultipart {
            experimenter,
            exp_type,
            data,
        }
    })
}

fn arb_flow_request() -> impl Strategy<Value = FlowStatsRequest> {
    (
        any::<u8>(),
        any::<u32>(),
        any::<u32>(),
        any::<u64>(),
        any::<u64>(),
        arb::match_(),
    )
        .prop_map(
            |(table_id, out_port, out_group, cookie, cookie_mask, match_)| FlowStatsRequest {
                table_id,
                out_port,
                out_group,
                cookie,
                cookie_mask,
                match_,
            },
        )
}

fn arb_feature_ids() -> impl Strategy<Value = Vec<FeatureId>> {
    prop::collection::vec(
        prop_oneof![
            any::<u16>().prop_map(|id_type| FeatureId::Standard { id_type }),
            (any::<u32>(), arb_bytes())
                .prop_map(|(experimenter, data)| FeatureId::Experimenter { experimenter, data }),
            (0u16..0xfffe, prop::collection::vec(any::<u8>(), 1..5))
                .prop_map(|(id_type, body)| FeatureId::Raw { id_type, body }),
        ],
        0..4,
    )
}

fn arb_oxm_ids() -> impl Strategy<Value = Vec<OxmId>> {
    prop::collection::vec(
        (any::<u32>(), any::<u32>()).prop_map(|(h, e)| {
            let header = OxmHeader(h);
            OxmId {
                header,
                experimenter: (header.class() == 0xffff).then_some(e),
            }
        }),
        0..4,
    )
}

fn arb_prop() -> impl Strategy<Value = TableFeatureProp> {
    use TableFeatureProp as P;
    prop_oneof![
        arb_feature_ids().prop_map(|ids| P::Instructions { ids }),
        arb_feature_ids().prop_map(|ids| P::InstructionsMiss { ids }),
        arb_bytes().prop_map(|table_ids| P::NextTables { table_ids }),
        arb_bytes().prop_map(|table_ids| P::NextTablesMiss { table_ids }),
        arb_feature_ids().prop_map(|ids| P::WriteActions { ids }),
        arb_feature_ids().prop_map(|ids| P::WriteActionsMiss { ids }),
        arb_feature_ids().prop_map(|ids| P::ApplyActions { ids }),
        arb_feature_ids().prop_map(|ids| P::ApplyActionsMiss { ids }),
        arb_oxm_ids().prop_map(|oxm_ids| P::Match { oxm_ids }),
        arb_oxm_ids().prop_map(|oxm_ids| P::Wildcards { oxm_ids }),
        arb_oxm_ids().prop_map(|oxm_ids| P::WriteSetfield { oxm_ids }),
        arb_oxm_ids().prop_map(|oxm_ids| P::WriteSetfieldMiss { oxm_ids }),
        arb_oxm_ids().prop_map(|oxm_ids| P::ApplySetfield { oxm_ids }),
        arb_oxm_ids().prop_map(|oxm_ids| P::ApplySetfieldMiss { oxm_ids }),
        arb_experimenter().prop_map(|e| P::Experimenter {
            experimenter: e.experimenter,
            exp_type: e.exp_type,
            data: e.data
        }),
        arb_experimenter().prop_map(|e| P::ExperimenterMiss {
            experimenter: e.experimenter,
            exp_type: e.exp_type,
            data: e.data
        }),
        (16u16..0xfffe, arb_bytes()).prop_map(|(prop_type, body)| P::Unknown { prop_type, body }),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(|body| P::Unknown {
            prop_type: 0xfffe,
            body
        }),
    ]
}

fn arb_table_features() -> impl Strategy<Value = Vec<TableFeatures>> {
    prop::collection::vec(
        (
            any::<u8>(),
            arb_name::<32>(),
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
            any::<u32>(),
            prop::collection::vec(arb_prop(), 0..4),
        )
            .prop_map(
                |(
                    table_id,
                    name,
                    metadata_match,
                    metadata_write,
                    config,
                    max_entries,
                    properties,
                )| {
                    TableFeatures {
                        table_id,
                        name,
                        metadata_match,
                        metadata_write,
                        config,
                        max_entries,
                        properties,
                    }
                },
            ),
        0..3,
    )
}

fn arb_request() -> impl Strategy<Value = MultipartRequest> {
    use MultipartRequestBody as B;
    let body = prop_oneof![
        Just(B::Desc),
        arb_flow_request().prop_map(B::Flow),
        arb_flow_request().prop_map(B::Aggregate),
        Just(B::Table),
        any::<u32>().prop_map(|port_no| B::PortStats { port_no }),
        (any::<u32>(), any::<u32>()).prop_map(|(port_no, queue_id)| B::Queue { port_no, queue_id }),
        any::<u32>().prop_map(|group_id| B::Group { group_id }),
        Just(B::GroupDesc),
        Just(B::GroupFeatures),
        any::<u32>().prop_map(|meter_id| B::Meter { meter_id }),
        any::<u32>().prop_map(|meter_id| B::MeterConfig { meter_id }),
        Just(B::MeterFeatures),
        arb_table_features().prop_map(|tables| B::TableFeatures { tables }),
        Just(B::PortDesc),
        arb_experimenter().prop_map(B::Experimenter),
        (14u16..0xffff, arb_bytes()).prop_map(|(mp_type, body)| B::Unknown { mp_type, body }),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| MultipartRequest { flags, body })
}

fn arb_reply() -> impl Strategy<Value = MultipartReply> {
    use MultipartReplyBody as B;
    let desc = (
        arb_name::<256>(),
        arb_name::<256>(),
        arb_name::<256>(),
        arb_name::<32>(),
        arb_name::<256>(),
    )
        .prop_map(|(mfr_desc, hw_desc, sw_desc, serial_num, dp_desc)| {
            B::Desc(Box::new(DescStats {
                mfr_desc,
                hw_desc,
                sw_desc,
                serial_num,
                dp_desc,
            }))
        });
    let flow = (
        (any::<u8>(), any::<u32>(), any::<u32>(), any::<u16>()),
        (any::<u16>(), any::<u16>(), any::<u16>()),
        (any::<u64>(), any::<u64>(), any::<u64>()),
        arb::match_(),
        arb::instructions(),
    )
        .prop_map(
            |(
                (table_id, duration_sec, duration_nsec, priority),
                (idle_timeout, hard_timeout, flags),
                (cookie, packet_count, byte_count),
                match_,
                instructions,
            )| FlowStats {
                table_id,
                duration_sec,
                duration_nsec,
                priority,
                idle_timeout,
                hard_timeout,
                flags,
                cookie,
                packet_count,
                byte_count,
                match_,
                instructions,
            },
        );
    let table = (any::<u8>(), any::<u32>(), any::<u64>(), any::<u64>()).prop_map(
        |(table_id, active_count, lookup_count, matched_count)| TableStats {
            table_id,
            active_count,
            lookup_count,
            matched_count,
        },
    );
    let port = (any::<u32>(), any::<[u64; 12]>(), any::<u32>(), any::<u32>()).prop_map(
        |(port_no, c, duration_sec, duration_nsec)| PortStats {
            port_no,
            counters: PortCounters::from(c),
            duration_sec,
            duration_nsec,
        },
    );
    let queue = (any::<[u32; 4]>(), any::<[u64; 3]>()).prop_map(|(a, b)| QueueStats {
        port_no: a[0],
        queue_id: a[1],
        tx_bytes: b[0],
        tx_packets: b[1],
        tx_errors: b[2],
        duration_sec: a[2],
        duration_nsec: a[3],
    });
    let group =
        (any::<[u32; 4]>(), any::<[u64; 2]>(), arb_counters()).prop_map(|(a, b, c)| GroupStats {
            group_id: a[0],
            ref_count: a[1],
            packet_count: b[0],
            byte_count: b[1],
            duration_sec: a[2],
            duration_nsec: a[3],
            bucket_stats: c,
        });
    let group_desc = (
        any::<u8>(),
        any::<u32>(),
        prop::collection::vec(arb::bucket(), 0..3),
    )
        .prop_map(|(t, group_id, buckets)| GroupDesc {
            group_type: GroupType::from_raw(t),
            group_id,
            buckets,
        });
    let group_features = (any::<[u32; 2]>(), any::<[u32; 4]>(), any::<[u32; 4]>()).prop_map(
        |(a, max_groups, actions)| GroupFeatures {
            types: a[0],
            capabilities: a[1],
            max_groups,
            actions,
        },
    );
    let meter =
        (any::<[u32; 4]>(), any::<[u64; 2]>(), arb_counters()).prop_map(|(a, b, c)| MeterStats {
            meter_id: a[0],
            flow_count: a[1],
            packet_in_count: b[0],
            byte_in_count: b[1],
            duration_sec: a[2],
            duration_nsec: a[3],
            band_stats: c,
        });
    let meter_config = (
        any::<u16>(),
        any::<u32>(),
        prop::collection::vec(arb::meter_band(), 0..3),
    )
        .prop_map(|(flags, meter_id, bands)| MeterConfig {
            flags,
            meter_id,
            bands,
        });
    let meter_features = (any::<[u32; 3]>(), any::<[u8; 2]>()).prop_map(|(a, b)| MeterFeatures {
        max_meter: a[0],
        band_types: a[1],
        capabilities: a[2],
        max_bands: b[0],
        max_color: b[1],
    });
    let aggregate = (any::<u64>(), any::<u64>(), any::<u32>()).prop_map(
        |(packet_count, byte_count, flow_count)| {
            B::Aggregate(AggregateStats {
                packet_count,
                byte_count,
                flow_count,
            })
        },
    );
    let body = prop_oneof![
        desc,
        prop::collection::vec(flow, 0..3).prop_map(|stats| B::Flow { stats }),
        aggregate,
        prop::collection::vec(table, 0..3).prop_map(|stats| B::Table { stats }),
        prop::collection::vec(port, 0..3).prop_map(|stats| B::PortStats { stats }),
        prop::collection::vec(queue, 0..3).prop_map(|stats| B::Queue { stats }),
        prop::collection::vec(group, 0..3).prop_map(|stats| B::Group { stats }),
        prop::collection::vec(group_desc, 0..3).prop_map(|groups| B::GroupDesc { groups }),
        group_features.prop_map(B::GroupFeatures),
        prop::collection::vec(meter, 0..3).prop_map(|stats| B::Meter { stats }),
        prop::collection::vec(meter_config, 0..3).prop_map(|meters| B::MeterConfig { meters }),
        meter_features.prop_map(B::MeterFeatures),
        arb_table_features().prop_map(|tables| B::TableFeatures { tables }),
        prop::collection::vec(arb::port(), 0..3).prop_map(|ports| B::PortDesc { ports }),
        arb_experimenter().prop_map(B::Experimenter),
        (14u16..0xffff, arb_bytes()).prop_map(|(mp_type, body)| B::Unknown { mp_type, body }),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| MultipartReply { flags, body })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn request_emit_then_parse_is_identity(m in arb_request()) {
        let b = emit_req(&m);
        prop_assert_eq!(parse_req(&b).unwrap(), m.clone());
        let json = serde_json::to_string(&m).unwrap();
        prop_assert_eq!(serde_json::from_str::<MultipartRequest>(&json).unwrap(), m);
    }

    #[test]
    fn reply_emit_then_parse_is_identity(m in arb_reply()) {
        let b = emit_rep(&m);
        prop_assert_eq!(parse_rep(&b).unwrap(), m.clone());
        let json = serde_json::to_string(&m).unwrap();
        prop_assert_eq!(serde_json::from_str::<MultipartReply>(&json).unwrap(), m);
    }

    #[test]
    fn every_truncation_of_random_messages_fails_or_is_exact(
        req in arb_request(),
        rep in arb_reply(),
    ) {
        check_truncations(&emit_req(&req), true);
        check_truncations(&emit_rep(&rep), false);
    }

    #[test]
    fn random_bodies_never_panic(mp_type in prop_oneof![0u16..16, Just(0xffff)], body in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut b = mp_type.to_be_bytes().to_vec();
        b.extend_from_slice(&[0; 6]);
        b.extend_from_slice(&body);
        if let Ok(m) = parse_req(&b) {
            prop_assert_eq!(parse_req(&emit_req(&m)).unwrap(), m);
        }
        if let Ok(m) = parse_rep(&b) {
            prop_assert_eq!(parse_rep(&emit_rep(&m)).unwrap(), m);
        }
    }
}
