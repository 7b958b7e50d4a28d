//! Byte vectors written from the 1.0.0 spec's structure layouts, for the messages the
//! Ryu vectors do not cover: each parses to the expected value and emits the same bytes.
//! Then the length rules: every way a length can lie is a typed error at the right place.

use crate::common::PortCounters;

use std::net::Ipv4Addr;

use super::action::NX_VENDOR_ID;
use super::flow_match::OFPFW_ALL;
use super::port::{OFPPC_PORT_DOWN, OFPP_ALL, OFPP_NONE};
use super::queue::OFPQ_ALL;
use super::stats::*;
use super::*;
use crate::common::{AggregateStats, DescStats};
use crate::types::{FixedStr, MacAddr};
use crate::DecodeError;

/// A 1.0 frame: header (xid 0x11223344, length computed) and `body`.
fn frame(msg_type: u8, body: &[u8]) -> Vec<u8> {
    let len = (8 + body.len()) as u16;
    let mut f = vec![
        1,
        msg_type,
        (len >> 8) as u8,
        len as u8,
        0x11,
        0x22,
        0x33,
        0x44,
    ];
    f.extend_from_slice(body);
    f
}

fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
    match crate::Message::decode(bytes)? {
        (0x1122_3344, crate::Message::V10(m)) => Ok(m),
        other => panic!("unexpected decode {other:?}"),
    }
}

/// Parses `body` as a message of `msg_type`, checks it is `want`, and that it emits the
/// same bytes (directly and after a trip through JSON).
fn both_ways(msg_type: u8, body: &[u8], want: Message) {
    let bytes = frame(msg_type, body);
    let got = decode(&bytes).unwrap();
    assert_eq!(got, want);
    let m = crate::Message::V10(want);
    assert_eq!(m.to_bytes(0x1122_3344).unwrap(), bytes);
    let json = serde_json::to_string(&m).unwrap();
    let back: crate::Message = serde_json::from_str(&json).unwrap();
    assert_eq!(back, m, "{json}");
}

/// The all-wildcards match as bytes (`OFPFW_ALL`, every field zero).
fn any_match() -> Vec<u8> {
    let mut b = vec![0, 0x3f, 0xff, 0xff];
    b.resize(40, 0);
    b
}

/// A match on `in_port=1,dl_type=0x0800,nw_src=10.0.0.0/8`.
#[rustfmt::skip]
const MATCH_BYTES: [u8; 40] = [
    0x00, 0x38, 0x18, 0xee,             // wildcards: all but IN_PORT, DL_TYPE; nw_src /8; nw_dst *
    0x00, 0x01,                         // in_port 1
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // dl_src, dl_dst
    0x00, 0x00, 0x00, 0x00,             // dl_vlan, dl_vlan_pcp, pad
    0x08, 0x00, 0x00, 0x00, 0x00, 0x00, // dl_type, nw_tos, nw_proto, pad
    10, 0, 0, 0,                        // nw_src
    0, 0, 0, 0,                         // nw_dst
    0, 0, 0, 0,                         // tp_src, tp_dst
];

fn the_match() -> Match {
    let mut m = Match::all();
    m.wildcards = 0x0038_18ee;
    m.in_port = 1;
    m.dl_type = 0x0800;
    m.nw_src = Ipv4Addr::new(10, 0, 0, 0);
    m
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn match_bytes_mean_what_the_comment_says() {
    let m = the_match();
    assert_eq!(m.to_string(), "in_port=1,dl_type=0x0800,nw_src=10.0.0.0/8");
    let mut out = Vec::new();
    m.emit(&mut out);
    assert_eq!(out, MATCH_BYTES);
}

#[test]
fn error_vendor_echo_hello() {
    // BAD_ACTION / BAD_OUT_PORT, data = the offending header.
    both_ways(
        1,
        &[0, 2, 0, 4, 1, 14, 0, 72, 0, 0, 0, 9],
        Message::Error(ErrorBody::Standard {
            err_type: ErrorType::BadAction.to_raw(),
            code: error_codes::BadActionCode::BadOutPort.to_raw(),
            data: vec![1, 14, 0, 72, 0, 0, 0, 9],
        }),
    );
    // In 1.0, type 0xffff is just a type: no experimenter layout.
    both_ways(
        1,
        &[0xff, 0xff, 0, 1],
        Message::Error(ErrorBody::Standard {
            err_type: 0xffff,
            code: 1,
            data: vec![],
        }),
    );
    both_ways(
        4,
        &[0, 0, 0x23, 0x20, 0, 0, 0, 10, 0xab],
        Message::Vendor(Vendor {
            vendor: NX_VENDOR_ID,
            data: vec![0, 0, 0, 10, 0xab],
        }),
    );
    both_ways(
        2,
        b"ping",
        Message::EchoRequest {
            data: b"ping".to_vec(),
        },
    );
    both_ways(3, b"", Message::EchoReply { data: vec![] });
    both_ways(0, b"", Message::Hello(Hello::default()));
    let m = decode(&frame(4, &[0, 0, 0x23, 0x20])).unwrap();
    let mut parts = Vec::new();
    m.opaque_parts(&mut parts);
    assert_eq!(parts, ["vendor message, vendor 0x00002320 (0 data bytes)"]);
}

#[test]
fn config_and_barrier_messages() {
    let c = SwitchConfig {
        flags: 0,
        miss_send_len: 128,
    };
    both_ways(7, &[], Message::GetConfigRequest);
    both_ways(8, &[0, 0, 0, 128], Message::GetConfigReply(c));
    both_ways(9, &[0, 0, 0, 128], Message::SetConfig(c));
    both_ways(18, &[], Message::BarrierRequest);
    both_ways(19, &[], Message::BarrierReply);
}

#[rustfmt::skip]
const PORT_BYTES: [u8; 48] = [
    0x00, 0x03,                                     // port_no 3
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55,             // hw_addr
    b'e', b't', b'h', b'3', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // name
    0x00, 0x00, 0x00, 0x01,                         // config PORT_DOWN
    0x00, 0x00, 0x02, 0x01,                         // state LINK_DOWN | STP_FORWARD
    0x00, 0x00, 0x02, 0xa0,                         // curr 1GB_FD | COPPER | AUTONEG
    0x00, 0x00, 0x02, 0xa0,                         // advertised
    0x00, 0x00, 0x0f, 0xff,                         // supported
    0x00, 0x00, 0x00, 0x00,                         // peer
];

fn the_port() -> PhyPort {
    PhyPort {
        port_no: 3,
        hw_addr: MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]),
        name: FixedStr::new("eth3").unwrap(),
        config: OFPPC_PORT_DOWN,
        state: port::OFPPS_LINK_DOWN | port::OFPPS_STP_FORWARD,
        curr: port::OFPPF_1GB_FD | port::OFPPF_COPPER | port::OFPPF_AUTONEG,
        advertised: 0x2a0,
        supported: 0xfff,
        peer: 0,
    }
}

#[test]
fn features_reply_port_status_port_mod() {
    #[rustfmt::skip]
    let fixed = [
        0, 0, 0, 0, 0, 0, 0, 1,   // datapath_id
        0, 0, 1, 0,               // n_buffers 256
        254, 0, 0, 0,             // n_tables, pad
        0, 0, 0, 0xc7,            // capabilities
        0, 0, 0x0f, 0xff,         // actions
    ];
    let features = SwitchFeatures {
        datapath_id: 1,
        n_buffers: 256,
        n_tables: 254,
        capabilities: features::OFPC_FLOW_STATS
            | features::OFPC_TABLE_STATS
            | features::OFPC_PORT_STATS
            | features::OFPC_QUEUE_STATS
            | features::OFPC_ARP_MATCH_IP,
        actions: 0xfff,
        ports: vec![the_port(), the_port()],
    };
    both_ways(
        6,
        &cat(&[&fixed, &PORT_BYTES, &PORT_BYTES]),
        Message::FeaturesReply(features),
    );
    both_ways(
        12,
        &cat(&[&[2, 0, 0, 0, 0, 0, 0, 0], &PORT_BYTES]),
        Message::PortStatus(PortStatus {
            reason: PortReason::Modify,
            desc: the_port(),
        }),
    );
    #[rustfmt::skip]
    let port_mod = [
        0x00, 0x03, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // port_no, hw_addr
        0, 0, 0, 1,     // config
        0, 0, 0, 1,     // mask
        0, 0, 0, 0,     // advertise
        0, 0, 0, 0,     // pad
    ];
    both_ways(
        15,
        &port_mod,
        Message::PortMod(PortMod {
            port_no: 3,
            hw_addr: MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]),
            config: OFPPC_PORT_DOWN,
            mask: OFPPC_PORT_DOWN,
            advertise: 0,
        }),
    );
}

#[test]
fn flow_mod_flow_removed_packet_in_out() {
    #[rustfmt::skip]
    let fm_fixed = [
        1, 2, 3, 4, 5, 6, 7, 8,   // cookie
        0, 4,                     // command DELETE_STRICT
        0, 60, 0, 0,              // idle, hard timeout
        0x80, 0,                  // priority
        0xff, 0xff, 0xff, 0xff,   // buffer_id
        0xff, 0xff,               // out_port NONE
        0, 1,                     // flags SEND_FLOW_REM
    ];
    #[rustfmt::skip]
    let fm_actions = [
        0, 0, 0, 8, 0xff, 0xfd, 0, 128,                    // output CONTROLLER 128
        0xff, 0xff, 0, 16, 0, 0, 0x23, 0x20, 0, 18, 0, 0, 0, 0, 0, 0, // NX dec_ttl
    ];
    let fm = FlowMod {
        match_: the_match(),
        cookie: 0x0102_0304_0506_0708,
        command: FlowModCommand::DeleteStrict,
        idle_timeout: 60,
        hard_timeout: 0,
        priority: flow::OFP_DEFAULT_PRIORITY,
        buffer_id: flow::OFP_NO_BUFFER,
        out_port: OFPP_NONE,
        flags: flow::OFPFF_SEND_FLOW_REM,
        actions: vec![
            Action::Output {
                port: port::OFPP_CONTROLLER,
                max_len: 128,
            },
            Action::Vendor {
                vendor: NX_VENDOR_ID,
                body: vec![0, 18, 0, 0, 0, 0, 0, 0],
            },
        ],
    };
    let m = Message::FlowMod(fm);
    let mut parts = Vec::new();
    m.opaque_parts(&mut parts);
    assert_eq!(
        parts,
        ["Nicira vendor action subtype 18 (NXAST_DEC_TTL, 8 body bytes)"]
    );
    both_ways(14, &cat(&[&MATCH_BYTES, &fm_fixed, &fm_actions]), m);

    #[rustfmt::skip]
    let fr = [
        1, 2, 3, 4, 5, 6, 7, 8,   // cookie
        0x80, 0, 2, 0,            // priority, reason DELETE, pad
        0, 0, 0, 10,              // duration_sec
        0, 0, 1, 0xf4,            // duration_nsec 500
        0, 60, 0, 0,              // idle_timeout, pad
        0, 0, 0, 0, 0, 0, 0, 3,   // packet_count
        0, 0, 0, 0, 0, 0, 0, 180, // byte_count
    ];
    both_ways(
        11,
        &cat(&[&MATCH_BYTES, &fr]),
        Message::FlowRemoved(FlowRemoved {
            match_: the_match(),
            cookie: 0x0102_0304_0506_0708,
            priority: 0x8000,
            reason: FlowRemovedReason::Delete,
            duration_sec: 10,
            duration_nsec: 500,
            idle_timeout: 60,
            packet_count: 3,
            byte_count: 180,
        }),
    );

    both_ways(
        10,
        &[0, 0, 1, 0, 0, 60, 0, 7, 0, 0, 0xaa, 0xbb],
        Message::PacketIn(PacketIn {
            buffer_id: 256,
            total_len: 60,
            in_port: 7,
            reason: PacketInReason::NoMatch,
            data: vec![0xaa, 0xbb],
        }),
    );
    #[rustfmt::skip]
    let po = [
        0xff, 0xff, 0xff, 0xff,   // buffer_id
        0xff, 0xff, 0, 16,        // in_port NONE, actions_len 16
        0, 3, 0, 8, 0, 0, 0, 0,   // strip_vlan
        0, 0, 0, 8, 0xff, 0xfb, 0, 0, // output FLOOD
        1, 2, 3,                  // data
    ];
    both_ways(
        13,
        &po,
        Message::PacketOut(PacketOut {
            buffer_id: flow::OFP_NO_BUFFER,
            in_port: OFPP_NONE,
            actions: vec![
                Action::StripVlan,
                Action::Output {
                    port: port::OFPP_FLOOD,
                    max_len: 0,
                },
            ],
            data: vec![1, 2, 3],
        }),
    );
}

fn req(flags: u16, body: StatsRequestBody) -> Message {
    Message::StatsRequest(StatsRequest { flags, body })
}

fn rep(flags: u16, body: StatsReplyBody) -> Message {
    Message::StatsReply(StatsReply { flags, body })
}

#[test]
fn stats_requests_of_every_kind() {
    both_ways(16, &[0, 0, 0, 0], req(0, StatsRequestBody::Desc));
    both_ways(16, &[0, 3, 0, 0], req(0, StatsRequestBody::Table));
    let fsr = FlowStatsRequest {
        match_: Match::all(),
        table_id: OFPTT_ALL,
        out_port: OFPP_NONE,
    };
    let tail = [0xff, 0, 0xff, 0xff];
    both_ways(
        16,
        &cat(&[&[0, 1, 0, 0], &any_match(), &tail]),
        req(0, StatsRequestBody::Flow(fsr)),
    );
    both_ways(
        16,
        &cat(&[&[0, 2, 0, 0], &any_match(), &tail]),
        req(0, StatsRequestBody::Aggregate(fsr)),
    );
    both_ways(
        16,
        &[0, 4, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0],
        req(
            0,
            StatsRequestBody::Port(PortStatsRequest { port_no: OFPP_NONE }),
        ),
    );
    both_ways(
        16,
        &[0, 5, 0, 0, 0xff, 0xfc, 0, 0, 0xff, 0xff, 0xff, 0xff],
        req(
            0,
            StatsRequestBody::Queue(QueueStatsRequest {
                port_no: OFPP_ALL,
                queue_id: OFPQ_ALL,
            }),
        ),
    );
    both_ways(
        16,
        &[0xff, 0xff, 0, 0, 0, 0, 0x23, 0x20, 1, 2],
        req(
            0,
            StatsRequestBody::Vendor {
                vendor: NX_VENDOR_ID,
                data: vec![1, 2],
            },
        ),
    );
    let unknown = req(
        7,
        StatsRequestBody::Unknown {
            raw_type: 9,
            body: vec![5],
        },
    );
    let mut parts = Vec::new();
    unknown.opaque_parts(&mut parts);
    assert_eq!(parts, ["unknown stats request type 9 (1 body bytes)"]);
    both_ways(16, &[0, 9, 0, 7, 5], unknown);
}

#[test]
fn stats_replies_of_every_kind() {
    let desc = DescStats {
        mfr_desc: FixedStr::new("Pharos").unwrap(),
        hw_desc: FixedStr::new("hw").unwrap(),
        sw_desc: FixedStr::new("sw").unwrap(),
        serial_num: FixedStr::new("42").unwrap(),
        dp_desc: FixedStr::new("dp").unwrap(),
    };
    let mut desc_bytes = vec![0, 0, 0, 0];
    for (s, n) in [
        ("Pharos", 256),
        ("hw", 256),
        ("sw", 256),
        ("42", 32),
        ("dp", 256),
    ] {
        let mut f = s.as_bytes().to_vec();
        f.resize(n, 0);
        desc_bytes.extend(f);
    }
    both_ways(
        17,
        &desc_bytes,
        rep(0, StatsReplyBody::Desc(Box::new(desc))),
    );

    #[rustfmt::skip]
    let flow_entry_fixed = [
        0, 96, 0, 0,              // length 96, table_id 0, pad
    ];
    #[rustfmt::skip]
    let flow_entry_rest = [
        0, 0, 0, 5, 0, 0, 0, 6,   // duration sec, nsec
        0x80, 0, 0, 10, 0, 20,    // priority, idle, hard
        0, 0, 0, 0, 0, 0,         // pad
        0, 0, 0, 0, 0, 0, 0, 9,   // cookie
        0, 0, 0, 0, 0, 0, 0, 2,   // packet_count
        0, 0, 0, 0, 0, 0, 0, 128, // byte_count
        0, 0, 0, 8, 0, 2, 0, 0,   // output port 2
    ];
    let fs = FlowStats {
        table_id: 0,
        match_: the_match(),
        duration_sec: 5,
        duration_nsec: 6,
        priority: 0x8000,
        idle_timeout: 10,
        hard_timeout: 20,
        cookie: 9,
        packet_count: 2,
        byte_count: 128,
        actions: vec![Action::Output {
            port: 2,
            max_len: 0,
        }],
    };
    let entry = cat(&[&flow_entry_fixed, &MATCH_BYTES, &flow_entry_rest]);
    both_ways(
        17,
        &cat(&[&[0, 1, 0, 1], &entry, &entry]),
        rep(
            OFPSF_REPLY_MORE,
            StatsReplyBody::Flow {
                stats: vec![fs.clone(), fs],
            },
        ),
    );
    both_ways(
        17,
        &[0, 1, 0, 0],
        rep(0, StatsReplyBody::Flow { stats: vec![] }),
    );

    #[rustfmt::skip]
    let agg = [
        0, 2, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 10,  // packet_count
        0, 0, 0, 0, 0, 0, 4, 0,   // byte_count
        0, 0, 0, 3, 0, 0, 0, 0,   // flow_count, pad
    ];
    both_ways(
        17,
        &agg,
        rep(
            0,
            StatsReplyBody::Aggregate(AggregateStats {
                packet_count: 10,
                byte_count: 1024,
                flow_count: 3,
            }),
        ),
    );

    let mut table = vec![0, 3, 0, 0, 0, 0, 0, 0];
    let mut name = b"classifier".to_vec();
    name.resize(32, 0);
    table.extend(name);
    #[rustfmt::skip]
    table.extend([
        0, 0x3f, 0xff, 0xff,      // wildcards
        0, 0x10, 0, 0,            // max_entries 1 Mi
        0, 0, 0, 4,               // active_count
        0, 0, 0, 0, 0, 0, 0, 100, // lookup_count
        0, 0, 0, 0, 0, 0, 0, 90,  // matched_count
    ]);
    both_ways(
        17,
        &table,
        rep(
            0,
            StatsReplyBody::Table {
                stats: vec![TableStats {
                    table_id: 0,
                    name: FixedStr::new("classifier").unwrap(),
                    wildcards: OFPFW_ALL,
                    max_entries: 0x0010_0000,
                    active_count: 4,
                    lookup_count: 100,
                    matched_count: 90,
                }],
            },
        ),
    );

    let mut port = vec![0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    for v in 1..=12u64 {
        port.extend(v.to_be_bytes());
    }
    both_ways(
        17,
        &port,
        rep(
            0,
            StatsReplyBody::Port {
                stats: vec![PortStats {
                    port_no: 1,
                    counters: PortCounters::from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
                }],
            },
        ),
    );

    #[rustfmt::skip]
    let queue = [
        0, 5, 0, 0,
        0, 1, 0, 0, 0, 0, 0, 7,   // port_no, pad, queue_id
        0, 0, 0, 0, 0, 0, 0, 64,  // tx_bytes
        0, 0, 0, 0, 0, 0, 0, 1,   // tx_packets
        0, 0, 0, 0, 0, 0, 0, 0,   // tx_errors
    ];
    both_ways(
        17,
        &queue,
        rep(
            0,
            StatsReplyBody::Queue {
                stats: vec![QueueStats {
                    port_no: 1,
                    queue_id: 7,
                    tx_bytes: 64,
                    tx_packets: 1,
                    tx_errors: 0,
                }],
            },
        ),
    );

    both_ways(
        17,
        &[0xff, 0xff, 0, 0, 0, 0, 0x23, 0x20, 9],
        rep(
            0,
            StatsReplyBody::Vendor {
                vendor: NX_VENDOR_ID,
                data: vec![9],
            },
        ),
    );
    both_ways(
        17,
        &[0, 6, 0, 0],
        rep(
            0,
            StatsReplyBody::Unknown {
                raw_type: 6,
                body: vec![],
            },
        ),
    );
}

#[test]
fn queue_config_request_and_reply() {
    both_ways(
        20,
        &[0, 1, 0, 0],
        Message::QueueGetConfigRequest(QueueGetConfigRequest { port: 1 }),
    );
    #[rustfmt::skip]
    let reply = [
        0, 1, 0, 0, 0, 0, 0, 0,   // port 1, pad
        0, 0, 0, 1, 0, 24, 0, 0,  // queue 1, len 24, pad
        0, 1, 0, 16, 0, 0, 0, 0,  // MIN_RATE, len 16, pad
        0x01, 0xf4, 0, 0, 0, 0, 0, 0, // rate 500 (50%), pad
        0, 0, 0, 2, 0, 8, 0, 0,   // queue 2, no properties
    ];
    both_ways(
        21,
        &reply,
        Message::QueueGetConfigReply(QueueGetConfigReply {
            port: 1,
            queues: vec![
                PacketQueue {
                    queue_id: 1,
                    properties: vec![QueueProperty::MinRate { rate: 500 }],
                },
                PacketQueue {
                    queue_id: 2,
                    properties: vec![],
                },
            ],
        }),
    );
    // A queue whose length does not even cover its own header.
    let bad = [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 4, 0, 0];
    assert_eq!(
        decode(&frame(21, &bad)).unwrap_err(),
        DecodeError::LengthTooShort {
            layer: "ofp_packet_queue",
            offset: 16,
            length: 4,
            min: 8
        }
    );
}

#[test]
fn unknown_message_types_are_kept() {
    let m = Message::Unknown {
        msg_type: 22,
        body: vec![1, 2, 3],
    };
    assert_eq!(m.name(), "UNKNOWN");
    both_ways(22, &[1, 2, 3], m);
}

// ---- length rules ----

fn flow_mod_with_actions(actions: &[u8]) -> Vec<u8> {
    let fixed = [0u8; 24];
    frame(14, &cat(&[&any_match(), &fixed, actions]))
}

#[test]
fn action_length_not_a_multiple_of_8() {
    let bytes = flow_mod_with_actions(&[0, 0, 0, 12, 0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::Misaligned {
            layer: "ofp_action",
            offset: 72,
            length: 12,
            align: 8
        }
    );
}

#[test]
fn action_length_running_past_the_action_list() {
    // An 8-byte output, then a SET_DL_SRC claiming 16 bytes with only 8 left.
    let bytes = flow_mod_with_actions(&[0, 0, 0, 8, 0, 1, 0, 0, 0, 4, 0, 16, 1, 2, 3, 4]);
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_action",
            offset: 80,
            length: 16,
            available: 8
        }
    );
    // In a PACKET_OUT the list ends at actions_len, even with data after it.
    let po = [
        0xff, 0xff, 0xff, 0xff, 0, 1, 0, 8, 0, 4, 0, 16, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9,
    ];
    assert_eq!(
        decode(&frame(13, &po)).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_action",
            offset: 16,
            length: 16,
            available: 8
        }
    );
}

#[test]
fn actions_len_past_the_body() {
    let po = [0xff, 0xff, 0xff, 0xff, 0, 1, 0, 16, 0, 0, 0, 8, 0, 1, 0, 0];
    assert_eq!(
        decode(&frame(13, &po)).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_packet_out.actions_len",
            offset: 14,
            length: 16,
            available: 8
        }
    );
}

#[test]
fn fixed_size_messages_with_the_wrong_length() {
    // PORT_MOD with 4 bytes too many.
    let e = decode(&frame(15, &[0; 28])).unwrap_err();
    assert_eq!(
        e,
        DecodeError::LengthMismatch {
            layer: "ofp_port_mod",
            offset: 8,
            length: 28,
            expected: 24
        }
    );
    // ... and 4 too few.
    assert!(matches!(
        decode(&frame(15, &[0; 20])),
        Err(DecodeError::Truncated {
            layer: "ofp_port_mod",
            ..
        })
    ));
    // Bodiless messages with a body.
    for t in [5, 7, 18, 19] {
        assert!(matches!(
            decode(&frame(t, &[0])),
            Err(DecodeError::LengthMismatch {
                length: 1,
                expected: 0,
                ..
            })
        ));
    }
    // FLOW_REMOVED, PORT_STATUS, SET_CONFIG, QUEUE_GET_CONFIG_REQUEST one byte long.
    for (t, n) in [(11, 80), (12, 56), (9, 4), (20, 4)] {
        assert!(matches!(
            decode(&frame(t, &vec![0; n + 1])),
            Err(DecodeError::LengthMismatch { .. })
        ));
        assert!(matches!(
            decode(&frame(t, &vec![0; n - 1])),
            Err(DecodeError::Truncated { .. })
        ));
    }
    // A DESC stats request has no body; a PORT stats request has 8 bytes.
    assert!(matches!(
        decode(&frame(16, &[0, 0, 0, 0, 1])),
        Err(DecodeError::LengthMismatch {
            layer: "ofp_stats_request(DESC)",
            ..
        })
    ));
    assert!(matches!(
        decode(&frame(16, &[0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])),
        Err(DecodeError::LengthMismatch {
            layer: "ofp_port_stats_request",
            ..
        })
    ));
    // A desc reply one byte short.
    let mut d = vec![0, 0, 0, 0];
    d.resize(4 + 1055, 0);
    assert!(matches!(
        decode(&frame(17, &d)),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn truncated_lists() {
    // A features reply whose second port is cut short.
    let fixed = [0u8; 24];
    let bytes = frame(6, &cat(&[&fixed, &PORT_BYTES, &PORT_BYTES[..40]]));
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::LengthOverrun {
            layer: "ofp_phy_port",
            offset: 8 + 24 + 48,
            length: 48,
            available: 40
        }
    );
    // A port stats reply with a partial entry.
    let bytes = frame(17, &cat(&[&[0, 4, 0, 0], &[0; 104], &[0; 50]]));
    assert!(matches!(
        decode(&bytes),
        Err(DecodeError::LengthOverrun {
            layer: "ofp_port_stats",
            offset: 116,
            ..
        })
    ));
    // A flow stats entry whose length is under its fixed part.
    let mut entry = vec![0u8; 88];
    entry[1] = 80;
    let bytes = frame(17, &cat(&[&[0, 1, 0, 0], &entry]));
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::LengthTooShort {
            layer: "ofp_flow_stats",
            offset: 12,
            length: 80,
            min: 88
        }
    );
}

#[test]
fn json_shape_is_readable() {
    let m = crate::Message::V10(Message::FlowMod(FlowMod {
        match_: the_match(),
        cookie: 1,
        command: FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 1,
        buffer_id: flow::OFP_NO_BUFFER,
        out_port: OFPP_NONE,
        flags: 0,
        actions: vec![Action::SetNwDst {
            nw_addr: Ipv4Addr::new(10, 0, 0, 9),
        }],
    }));
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(v["version"], "1.0");
    assert_eq!(v["type"], "FLOW_MOD");
    assert_eq!(v["command"], "ADD");
    assert_eq!(v["match"]["nw_src"], "10.0.0.0");
    assert_eq!(v["actions"][0]["type"], "SET_NW_DST");
    assert_eq!(v["actions"][0]["nw_addr"], "10.0.0.9");
    let s = crate::Message::V10(req(0, StatsRequestBody::Desc));
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["body"]["stats_type"], "DESC");
}
