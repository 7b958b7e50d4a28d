//! Byte-level peers against the handshake state machine.

use super::*;
use openflow::common::HelloElement;
use openflow::model::PortNo;
use openflow::of13::multipart::{MultipartReply, OFPMPF_REPLY_MORE};
use openflow::{frame_len, FixedStr, MacAddr};

const DPID: u64 = 0x0000_0000_00ab_cdef;

fn split(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    while let Some(n) = frame_len(bytes).expect("frameable output") {
        frames.push(bytes[..n].to_vec());
        bytes = &bytes[n..];
    }
    assert!(bytes.is_empty(), "partial frame in output: {bytes:?}");
    frames
}

fn hello(version: u8, bitmap: Option<&[u8]>) -> Vec<u8> {
    let h = match bitmap {
        Some(vs) => Hello::with_versions(vs),
        None => Hello::default(),
    };
    let mut out = Vec::new();
    header::encode_with(&mut out, version, 0, 77, |o| h.emit(o)).unwrap();
    out
}

fn v10_port(no: u16, name: &str) -> of10::PhyPort {
    of10::PhyPort {
        port_no: no,
        hw_addr: MacAddr([2, 0, 0, 0, 0, no as u8]),
        name: FixedStr::new(name).unwrap(),
        config: 0,
        state: 0,
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
    }
}

fn v13_port(no: u32) -> of13::port::Port {
    of13::port::Port {
        port_no: no,
        hw_addr: MacAddr([2, 0, 0, 0, 1, no as u8]),
        name: FixedStr::new(&format!("eth{no}")).unwrap(),
        config: 0,
        state: 4,
        curr: 0,
        advertised: 0,
        supported: 0,
        peer: 0,
        curr_speed: 0,
        max_speed: 0,
    }
}

fn features_v10(xid: u32, ports: Vec<of10::PhyPort>) -> Vec<u8> {
    Message::V10(of10::Message::FeaturesReply(of10::SwitchFeatures {
        datapath_id: DPID,
        n_buffers: 256,
        n_tables: 1,
        capabilities: 0xc7,
        actions: 0xfff,
        ports,
    }))
    .to_bytes(xid)
    .unwrap()
}

fn features_v13(xid: u32) -> Vec<u8> {
    Message::V13(of13::Message::FeaturesReply(of13::FeaturesReply {
        datapath_id: DPID,
        n_buffers: 0,
        n_tables: 254,
        auxiliary_id: 0,
        capabilities: 0x4f,
        reserved: 0,
    }))
    .to_bytes(xid)
    .unwrap()
}

fn port_desc(xid: u32, ports: Vec<of13::port::Port>, more: bool) -> Vec<u8> {
    let mut r = MultipartReply::new(MultipartReplyBody::PortDesc { ports });
    if more {
        r.flags = OFPMPF_REPLY_MORE;
    }
    Message::V13(of13::Message::MultipartReply(r))
        .to_bytes(xid)
        .unwrap()
}

fn barrier_reply(version: Version, xid: u32) -> Vec<u8> {
    match version {
        Version::V1_0 => Message::V10(of10::Message::BarrierReply),
        Version::V1_3 => Message::V13(of13::Message::BarrierReply),
    }
    .to_bytes(xid)
    .unwrap()
}

fn decode_all(bytes: &[u8]) -> Vec<(u32, Message)> {
    split(bytes)
        .iter()
        .map(|f| Message::decode(f).expect("decodable"))
        .collect()
}

fn xid_of(frame: &[u8]) -> u32 {
    Header::new_unchecked(frame).xid()
}

/// A handshake that does not read the switch's flows (the steps those tests follow;
/// the flows' own tests are `read_flows_*`).
fn start() -> Handshake {
    start_with(&HandshakeConfig {
        read_flows: false,
        ..HandshakeConfig::default()
    })
}

fn start_with(cfg: &HandshakeConfig) -> Handshake {
    let (hs, out) = Handshake::new(cfg);
    let frames = split(&out);
    assert_eq!(frames.len(), 1);
    // Our HELLO: 1.3 header, bitmap {1.0, 1.3}.
    assert_eq!(
        frames[0],
        vec![0x04, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12]
    );
    hs
}

/// Drives a whole 1.0 handshake; returns the result and everything we sent after HELLO.
fn run_v10(peer_hello: Vec<u8>) -> (Established, Vec<u8>) {
    let mut hs = start();
    let mut out = Vec::new();
    assert_eq!(hs.feed(&peer_hello, &mut out).unwrap(), Progress::NeedMore);
    let sent = decode_all(&out);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1, Message::V10(of10::Message::FeaturesRequest));
    let mut all = out.clone();
    out.clear();
    let reply = features_v10(
        sent[0].0,
        vec![v10_port(1, "eth1"), v10_port(0xfffe, "br0")],
    );
    assert_eq!(hs.feed(&reply, &mut out).unwrap(), Progress::NeedMore);
    let sent = decode_all(&out);
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].1,
        Message::V10(of10::Message::SetConfig(SwitchConfig {
            flags: 0,
            miss_send_len: 128
        }))
    );
    assert_eq!(sent[1].1, Message::V10(of10::Message::BarrierRequest));
    all.extend_from_slice(&out);
    out.clear();
    let mut tail = barrier_reply(Version::V1_0, sent[1].0);
    tail.extend_from_slice(&[1, 10, 0]); // the start of the next message
    let Progress::Established(e) = hs.feed(&tail, &mut out).unwrap() else {
        panic!("not established");
    };
    assert!(out.is_empty());
    (e, all)
}

#[test]
fn openflow_10_only_peer() {
    let (e, _) = run_v10(hello(0x01, None));
    assert_eq!(e.version, Version::V1_0);
    assert_eq!(e.dpid, openflow::Dpid(DPID));
    assert_eq!(e.n_buffers, 256);
    assert_eq!(e.n_tables, 1);
    assert_eq!(e.capabilities, 0xc7);
    assert_eq!(e.ports.len(), 2);
    assert_eq!(e.ports[0].port_no, 1);
    assert_eq!(e.ports[0].name, "eth1");
    // 1.0's OFPP_LOCAL 0xfffe widened to 1.3's 0xfffffffe.
    assert_eq!(e.ports[1].port_no, 0xffff_fffe);
    assert_eq!(e.leftover, vec![1, 10, 0]);
    let peer = "127.0.0.1:1234".parse().unwrap();
    let (info, leftover) = e.into_info(peer);
    assert_eq!(info.peer, peer);
    assert_eq!(info.dpid, openflow::Dpid(DPID));
    assert_eq!(leftover, vec![1, 10, 0]);
}

#[test]
fn openflow_10_peer_with_a_bitmap_for_10() {
    let (e, _) = run_v10(hello(0x01, Some(&[0x01])));
    assert_eq!(e.version, Version::V1_0);
}

#[test]
fn openflow_10_hello_with_a_junk_body_is_ignored() {
    let mut h = hello(0x01, None);
    h.extend_from_slice(b"junk");
    h[3] = 12;
    let (e, _) = run_v10(h);
    assert_eq!(e.version, Version::V1_0);
}

/// Drives a whole 1.3 handshake with the PORT_DESC reply in `parts` parts.
fn run_v13(peer_hello: Vec<u8>, parts: usize) -> Established {
    let mut hs = start();
    let mut out = Vec::new();
    assert_eq!(hs.feed(&peer_hello, &mut out).unwrap(), Progress::NeedMore);
    assert_eq!(hs.version(), Some(Version::V1_3));
    let sent = decode_all(&out);
    assert_eq!(
        sent,
        vec![(2, Message::V13(of13::Message::FeaturesRequest))]
    );
    out.clear();
    assert_eq!(
        hs.feed(&features_v13(2), &mut out).unwrap(),
        Progress::NeedMore
    );
    let sent = decode_all(&out);
    assert_eq!(
        sent,
        vec![(
            3,
            Message::V13(of13::Message::MultipartRequest(MultipartRequest::new(
                MultipartRequestBody::PortDesc
            )))
        )]
    );
    out.clear();
    for i in 0..parts {
        let last = i + 1 == parts;
        let r = port_desc(
            3,
            vec![v13_port(2 * i as u32 + 1), v13_port(2 * i as u32 + 2)],
            !last,
        );
        assert_eq!(hs.feed(&r, &mut out).unwrap(), Progress::NeedMore);
        if !last {
            assert!(out.is_empty());
        }
    }
    let sent = decode_all(&out);
    assert_eq!(
        sent,
        vec![
            (
                4,
                Message::V13(of13::Message::SetConfig(SwitchConfig {
                    flags: 0,
                    miss_send_len: 128
                }))
            ),
            (5, Message::V13(of13::Message::BarrierRequest)),
        ]
    );
    out.clear();
    let Progress::Established(e) = hs.feed(&barrier_reply(Version::V1_3, 5), &mut out).unwrap()
    else {
        panic!("not established");
    };
    assert!(e.leftover.is_empty());
    e
}

#[test]
fn openflow_13_only_peer() {
    let e = run_v13(hello(0x04, Some(&[0x04])), 1);
    assert_eq!(e.version, Version::V1_3);
    assert_eq!(e.dpid, openflow::Dpid(DPID));
    assert_eq!(e.n_tables, 254);
    assert_eq!(e.capabilities, 0x4f);
    let nos: Vec<u32> = e.ports.iter().map(|p| p.port_no).collect();
    assert_eq!(nos, vec![1, 2]);
    assert_eq!(e.ports[1].name, "eth2");
    assert_eq!(e.ports[1].state, 4);
}

#[test]
fn openflow_13_header_without_a_bitmap() {
    assert_eq!(run_v13(hello(0x04, None), 1).version, Version::V1_3);
}

#[test]
fn bitmap_10_to_15_picks_13() {
    let e = run_v13(hello(0x06, Some(&[1, 2, 3, 4, 5, 6])), 1);
    assert_eq!(e.version, Version::V1_3);
}

#[test]
fn no_bitmap_15_header_negotiates_13() {
    assert_eq!(run_v13(hello(0x06, None), 1).version, Version::V1_3);
}

#[test]
fn bitmap_10_and_12_picks_10() {
    let (e, _) = run_v10(hello(0x03, Some(&[1, 3])));
    assert_eq!(e.version, Version::V1_0);
}

#[test]
fn multipart_port_desc_in_three_parts() {
    let e = run_v13(hello(0x04, Some(&[0x04])), 3);
    let nos: Vec<u32> = e.ports.iter().map(|p| p.port_no).collect();
    assert_eq!(nos, vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn byte_at_a_time() {
    let mut hs = start();
    let mut out = Vec::new();
    let mut input = hello(0x01, None);
    input.extend(features_v10(1, vec![]));
    input.extend(barrier_reply(Version::V1_0, 4));
    input.extend([9, 9]);
    let mut result = None;
    for (i, b) in input.iter().enumerate() {
        match hs.feed(&[*b], &mut out).unwrap() {
            Progress::NeedMore => assert!(i + 1 < input.len()),
            Progress::Established(e) => {
                result = Some(e);
                // The rest arrives after the handshake; it is the worker's.
                assert_eq!(i + 1, input.len() - 2);
                break;
            }
        }
    }
    let e = result.expect("established");
    assert!(e.leftover.is_empty());
    assert_eq!(e.version, Version::V1_0);
    assert_eq!(split(&out).len(), 3);
}

#[test]
fn everything_in_one_read_leaves_the_rest() {
    let mut hs = start();
    let mut out = Vec::new();
    let mut input = hello(0x01, None);
    input.extend(features_v10(1, vec![]));
    input.extend(barrier_reply(Version::V1_0, 4));
    let echo = Message::V10(of10::Message::EchoRequest { data: vec![1] })
        .to_bytes(9)
        .unwrap();
    input.extend(&echo);
    let Progress::Established(e) = hs.feed(&input, &mut out).unwrap() else {
        panic!("not established");
    };
    assert_eq!(e.leftover, echo);
}

#[test]
fn without_barrier_established_after_set_config() {
    let cfg = HandshakeConfig {
        barrier: false,
        miss_send_len: 0xffff,
        ..HandshakeConfig::default()
    };
    let (mut hs, _) = Handshake::new(&cfg);
    let mut out = Vec::new();
    hs.feed(&hello(0x01, None), &mut out).unwrap();
    out.clear();
    let Progress::Established(e) = hs.feed(&features_v10(1, vec![]), &mut out).unwrap() else {
        panic!("not established");
    };
    assert_eq!(e.version, Version::V1_0);
    assert_eq!(
        decode_all(&out),
        vec![(
            3,
            Message::V10(of10::Message::SetConfig(SwitchConfig {
                flags: 0,
                miss_send_len: 0xffff
            }))
        )]
    );
}

#[test]
fn only_13_configured_refuses_10_peer() {
    let cfg = HandshakeConfig {
        versions: vec![Version::V1_3],
        ..HandshakeConfig::default()
    };
    let (mut hs, first) = Handshake::new(&cfg);
    // HELLO 1.3 with bitmap {1.3}.
    assert_eq!(
        first,
        vec![4, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x10]
    );
    let mut out = Vec::new();
    let err = hs.feed(&hello(0x01, None), &mut out).unwrap_err();
    assert_eq!(err.reason(), "incompatible_version");
    assert_eq!(out[0], 0x01);
}

#[test]
fn incompatible_14_only_gets_hello_failed() {
    let mut hs = start();
    let mut out = Vec::new();
    let err = hs.feed(&hello(0x05, Some(&[0x05])), &mut out).unwrap_err();
    assert_eq!(err.reason(), "incompatible_version");
    let reason = b"pharos speaks OpenFlow 1.0 and OpenFlow 1.3; the peer offered OpenFlow 1.4";
    let mut expected = vec![0x05, 0x01, 0, 0, 0, 0, 0, 77, 0, 0, 0, 0];
    expected.extend_from_slice(reason);
    let len = expected.len() as u16;
    expected[2..4].copy_from_slice(&len.to_be_bytes());
    assert_eq!(out, expected);
    assert_eq!(
        err,
        HandshakeError::Incompatible {
            detail: String::from_utf8(reason.to_vec()).unwrap()
        }
    );
}

#[test]
fn incompatible_12_without_bitmap() {
    let mut hs = start();
    let mut out = Vec::new();
    let err = hs.feed(&hello(0x03, None), &mut out).unwrap_err();
    assert_eq!(err.reason(), "incompatible_version");
    // Framed in the peer's 1.2, type ERROR, HELLO_FAILED/INCOMPATIBLE.
    assert_eq!(&out[..2], &[0x03, 0x01]);
    assert_eq!(&out[8..12], &[0, 0, 0, 0]);
    assert!(out[12..].ends_with(b"the peer offered OpenFlow 1.2"));
}

#[test]
fn unknown_future_version_with_disjoint_bitmap_framed_as_10() {
    let mut hs = start();
    let mut out = Vec::new();
    let err = hs.feed(&hello(0x09, Some(&[0x09])), &mut out).unwrap_err();
    assert_eq!(err.reason(), "incompatible_version");
    assert_eq!(&out[..2], &[0x01, 0x01]);
}

#[test]
fn garbage_is_not_hello() {
    let mut hs = start();
    let mut out = Vec::new();
    let err = hs.feed(b"GET / HTTP/1.1\r\n\r\n", &mut out).unwrap_err();
    assert_eq!(err.reason(), "not_hello");
    assert!(out.is_empty());
}

#[test]
fn short_garbage_waits_for_a_header() {
    let mut hs = start();
    let mut out = Vec::new();
    assert_eq!(hs.feed(b"\x04\x00", &mut out).unwrap(), Progress::NeedMore);
}

#[test]
fn hello_with_length_under_8() {
    let mut hs = start();
    let err = hs
        .feed(&[4, 0, 0, 4, 0, 0, 0, 1], &mut Vec::new())
        .unwrap_err();
    assert_eq!(
        err,
        HandshakeError::BadLength {
            length: 4,
            min: 8,
            max: MAX_HELLO_LEN
        }
    );
    assert_eq!(err.reason(), "bad_length");
}

#[test]
fn hello_too_long() {
    let mut hs = start();
    let err = hs
        .feed(&[4, 0, 0x10, 0, 0, 0, 0, 1], &mut Vec::new())
        .unwrap_err();
    assert_eq!(err.reason(), "bad_length");
}

#[test]
fn version_zero_hello() {
    let mut hs = start();
    let err = hs
        .feed(&[0, 0, 0, 8, 0, 0, 0, 1], &mut Vec::new())
        .unwrap_err();
    // The message is a HELLO (type 0); what is wrong is its version, and the log says so.
    assert_eq!(err.reason(), "bad_version");
    let text = err.to_string();
    assert!(text.starts_with("HELLO with version 0x00"), "{text}");
    assert!(!text.contains("expected HELLO"), "{text}");
}

#[test]
fn wrong_version_mid_handshake() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x04, Some(&[4])), &mut out).unwrap();
    // A 1.0 FEATURES_REPLY after negotiating 1.3.
    let err = hs.feed(&features_v10(2, vec![]), &mut out).unwrap_err();
    assert_eq!(
        err,
        HandshakeError::WrongVersion {
            expected: 4,
            got: 1
        }
    );
    assert_eq!(err.reason(), "wrong_version");
}

#[test]
fn header_length_under_8_mid_handshake() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x01, None), &mut out).unwrap();
    let err = hs.feed(&[1, 6, 0, 7, 0, 0, 0, 2], &mut out).unwrap_err();
    assert_eq!(err.reason(), "bad_length");
}

#[test]
fn error_reply_fails_with_type_and_code() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x04, None), &mut out).unwrap();
    let error = Message::V13(of13::Message::Error(ErrorBody::Standard {
        err_type: 1,
        code: 1,
        data: vec![],
    }))
    .to_bytes(2)
    .unwrap();
    let err = hs.feed(&error, &mut out).unwrap_err();
    assert_eq!(
        err,
        HandshakeError::SwitchError {
            err_type: 1,
            code: 1,
            waiting_for: "waiting for FEATURES_REPLY"
        }
    );
    assert_eq!(err.reason(), "switch_error");
}

#[test]
fn error_to_set_config_is_caught_by_the_barrier() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x01, None), &mut out).unwrap();
    hs.feed(&features_v10(1, vec![]), &mut out).unwrap();
    let error = Message::V10(of10::Message::Error(ErrorBody::Standard {
        err_type: 1,
        code: 0,
        data: vec![],
    }))
    .to_bytes(3)
    .unwrap();
    let err = hs.feed(&error, &mut out).unwrap_err();
    assert_eq!(err.reason(), "switch_error");
}

#[test]
fn echo_is_answered_during_the_handshake() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x04, None), &mut out).unwrap();
    out.clear();
    let echo = Message::V13(of13::Message::EchoRequest {
        data: b"ping".to_vec(),
    })
    .to_bytes(0x1234)
    .unwrap();
    assert_eq!(hs.feed(&echo, &mut out).unwrap(), Progress::NeedMore);
    assert_eq!(
        decode_all(&out),
        vec![(
            0x1234,
            Message::V13(of13::Message::EchoReply {
                data: b"ping".to_vec()
            })
        )]
    );
    assert_eq!(xid_of(&out), 0x1234);
}

/// A 1.0 PACKET_IN of `n` bytes in all, xid `xid` (its body zeros: only framing matters).
fn packet_in_v10(xid: u32, n: u16) -> Vec<u8> {
    let mut m = vec![1u8, 10];
    m.extend_from_slice(&n.to_be_bytes());
    m.extend_from_slice(&xid.to_be_bytes());
    m.resize(usize::from(n), 0);
    m
}

#[test]
fn async_messages_during_the_handshake_are_held_for_the_apps_in_order() {
    let (mut hs, _, barrier_xid) = up_to_the_barrier(Version::V1_0);
    let mut out = Vec::new();
    // cbench's gratuitous ARP right after its FEATURES_REPLY, a PORT_STATUS, an
    // ECHO_REPLY (skipped) and a FLOW_REMOVED, all before the barrier's reply.
    let arp = packet_in_v10(7, 78);
    let status = [1u8, 12, 0, 8, 0, 0, 0, 8];
    let echo_reply = [1u8, 3, 0, 8, 0, 0, 0, 9];
    let removed = [1u8, 11, 0, 8, 0, 0, 0, 10];
    for m in [&arp[..], &status, &echo_reply, &removed] {
        assert_eq!(hs.feed(m, &mut out).unwrap(), Progress::NeedMore);
    }
    let mut tail = barrier_reply(Version::V1_0, barrier_xid);
    tail.extend_from_slice(&[1, 10, 0]);
    let Progress::Established(e) = hs.feed(&tail, &mut out).unwrap() else {
        panic!("not established");
    };
    let mut expected = arp.clone();
    expected.extend_from_slice(&status);
    expected.extend_from_slice(&removed);
    expected.extend_from_slice(&[1, 10, 0]);
    assert_eq!(e.leftover, expected, "held first, in order, then the rest");
    assert_eq!(e.dropped, 0);
}

#[test]
fn async_messages_past_the_bound_are_dropped_and_counted() {
    let (mut hs, _, barrier_xid) = up_to_the_barrier(Version::V1_0);
    let mut out = Vec::new();
    let n = 1000u16;
    let fits = MAX_HELD / usize::from(n);
    for xid in 0..fits as u32 + 5 {
        hs.feed(&packet_in_v10(xid, n), &mut out).unwrap();
    }
    let Progress::Established(e) = hs
        .feed(&barrier_reply(Version::V1_0, barrier_xid), &mut out)
        .unwrap()
    else {
        panic!("not established");
    };
    assert_eq!(e.leftover.len(), fits * usize::from(n));
    assert!(e.leftover.len() <= MAX_HELD);
    assert_eq!(e.dropped, 5);
    // The ones held are the first ones.
    assert_eq!(&e.leftover[..usize::from(n)], &packet_in_v10(0, n)[..]);
}

#[test]
fn unexpected_message_type() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x01, None), &mut out).unwrap();
    // A FLOW_MOD from the switch.
    let err = hs.feed(&[1, 14, 0, 8, 0, 0, 0, 2], &mut out).unwrap_err();
    assert_eq!(
        err,
        HandshakeError::Unexpected {
            msg_type: 14,
            waiting_for: "waiting for FEATURES_REPLY"
        }
    );
    assert_eq!(err.reason(), "unexpected_message");
}

#[test]
fn second_hello_is_unexpected() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x01, None), &mut out).unwrap();
    let err = hs.feed(&hello(0x01, None), &mut out).unwrap_err();
    assert_eq!(err.reason(), "unexpected_message");
}

#[test]
fn barrier_reply_before_features_is_unexpected() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x04, None), &mut out).unwrap();
    let err = hs
        .feed(&barrier_reply(Version::V1_3, 2), &mut out)
        .unwrap_err();
    assert_eq!(err.reason(), "unexpected_message");
}

#[test]
fn truncated_features_reply_is_malformed() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x04, None), &mut out).unwrap();
    let mut f = features_v13(2);
    f.truncate(20);
    f[2..4].copy_from_slice(&20u16.to_be_bytes());
    let err = hs.feed(&f, &mut out).unwrap_err();
    assert_eq!(err.reason(), "malformed");
}

#[test]
fn wrong_multipart_type() {
    let mut hs = start();
    let mut out = Vec::new();
    hs.feed(&hello(0x04, None), &mut out).unwrap();
    hs.feed(&features_v13(2), &mut out).unwrap();
    let r = Message::V13(of13::Message::MultipartReply(MultipartReply::new(
        MultipartReplyBody::Table { stats: vec![] },
    )))
    .to_bytes(3)
    .unwrap();
    let err = hs.feed(&r, &mut out).unwrap_err();
    assert_eq!(err, HandshakeError::WrongMultipart { mp_type: 3 });
}

#[test]
fn every_truncation_of_a_good_exchange_needs_more() {
    let mut input = hello(0x01, None);
    input.extend(features_v10(1, vec![v10_port(1, "a")]));
    input.extend(barrier_reply(Version::V1_0, 4));
    for cut in 0..input.len() {
        let mut hs = start();
        let mut out = Vec::new();
        assert_eq!(
            hs.feed(&input[..cut], &mut out).unwrap(),
            Progress::NeedMore,
            "cut at {cut}"
        );
    }
}

#[test]
fn hello_element_kinds_other_than_bitmap_are_ignored() {
    let h = Hello {
        elements: vec![HelloElement::Unknown {
            elem_type: 7,
            body: vec![0, 0, 0, 0],
        }],
    };
    let mut bytes = Vec::new();
    header::encode_with(&mut bytes, 0x04, 0, 1, |o| h.emit(o)).unwrap();
    assert_eq!(run_v13(bytes, 1).version, Version::V1_3);
}

/// The flows table of a switch, as a FLOW_STATS reply in `parts` parts.
fn flows_reply(version: Version, xid: u32, parts: usize) -> Vec<u8> {
    use openflow::model::{Action, FlowMod, Match, PortNo};
    let out = [Action::output(PortNo::Physical(3))];
    let flows = [
        FlowMod::add(Match::default(), &out).cookie(0x6b9e_0000_0000_0001),
        FlowMod::add(Match::default(), &out).priority(0),
        FlowMod::add(
            Match {
                in_port: Some(2),
                ..Match::default()
            },
            &out,
        )
        .cookie(7),
    ];
    crate::removal::tests::Table::new(version, &flows).reply(xid, parts)
}

/// Drives a handshake that reads the flows up to its barrier; returns the
/// handshake, the xids of the FLOW_STATS request and of the barrier.
fn up_to_the_barrier(version: Version) -> (Handshake, u32, u32) {
    let mut hs = start_with(&HandshakeConfig::default());
    let mut out = Vec::new();
    let wire = version.wire();
    hs.feed(&hello(wire, Some(&[wire])), &mut out).unwrap();
    let features = match version {
        Version::V1_0 => features_v10(xid_of(&out), vec![]),
        Version::V1_3 => features_v13(xid_of(&out)),
    };
    out.clear();
    hs.feed(&features, &mut out).unwrap();
    if version == Version::V1_3 {
        let xid = xid_of(&out);
        out.clear();
        hs.feed(&port_desc(xid, vec![v13_port(1)], false), &mut out)
            .unwrap();
    }
    let sent = decode_all(&out);
    let kinds: Vec<&str> = sent.iter().map(|(_, m)| m.type_name()).collect();
    let stats = if version == Version::V1_0 {
        "STATS_REQUEST"
    } else {
        "MULTIPART_REQUEST"
    };
    assert_eq!(kinds, [stats, "SET_CONFIG", "BARRIER_REQUEST"], "{version}");
    let expected = crate::removal::all_flows_request(version);
    assert_eq!(sent[0].1, expected);
    (hs, sent[0].0, sent[2].0)
}

#[test]
fn read_flows_gathers_every_part_before_the_barrier() {
    for version in [Version::V1_0, Version::V1_3] {
        let (mut hs, stats, barrier) = up_to_the_barrier(version);
        let mut input = flows_reply(version, stats, 2);
        input.extend(barrier_reply(version, barrier));
        let mut out = Vec::new();
        let Progress::Established(e) = hs.feed(&input, &mut out).unwrap() else {
            panic!("not established");
        };
        let flows = e.flows.expect("the flows are known");
        let cookies: Vec<u64> = flows.iter().map(|f| f.flow.cookie).collect();
        assert_eq!(cookies, [0x6b9e_0000_0000_0001, 0, 7], "{version}");
        assert_eq!(flows[2].flow.matching.in_port, Some(PortNo::Physical(2)));
    }
}

#[test]
fn read_flows_unknown_when_the_barrier_comes_first_or_the_switch_refuses() {
    for version in [Version::V1_0, Version::V1_3] {
        // An emulator that ignores the request: the barrier comes alone.
        let (mut hs, _, barrier) = up_to_the_barrier(version);
        let mut out = Vec::new();
        let Progress::Established(e) = hs.feed(&barrier_reply(version, barrier), &mut out).unwrap()
        else {
            panic!("not established");
        };
        assert_eq!(e.flows, None);
        // One that answers only the first part.
        let (mut hs, stats, barrier) = up_to_the_barrier(version);
        let first = flows_reply(version, stats, 2);
        let n = openflow::frame_len(&first).unwrap().unwrap();
        let mut input = first[..n].to_vec();
        input.extend(barrier_reply(version, barrier));
        let Progress::Established(e) = hs.feed(&input, &mut out).unwrap() else {
            panic!("not established");
        };
        assert_eq!(e.flows, None);
        // One that refuses the request with an ERROR: not a failed handshake.
        let (mut hs, stats, barrier) = up_to_the_barrier(version);
        let error = ErrorBody::Standard {
            err_type: 1,
            code: 2,
            data: vec![],
        };
        let mut input = Vec::new();
        header::encode_with(&mut input, version.wire(), 1, stats, |o| {
            error.emit(o);
            Ok(())
        })
        .unwrap();
        input.extend(barrier_reply(version, barrier));
        let Progress::Established(e) = hs.feed(&input, &mut out).unwrap() else {
            panic!("not established");
        };
        assert_eq!(e.flows, None, "{version}");
    }
}

#[test]
fn read_flows_unknown_when_the_reply_is_of_another_kind() {
    // A switch that answers any stats request with its description (as simple
    // emulators do): not an empty table, an unknown one.
    let (mut hs, stats, barrier) = up_to_the_barrier(Version::V1_0);
    let desc = Message::V10(of10::Message::StatsReply(of10::StatsReply {
        flags: 0,
        body: of10::StatsReplyBody::Desc(Default::default()),
    }));
    let mut input = desc.to_bytes(stats).unwrap();
    input.extend(barrier_reply(Version::V1_0, barrier));
    let mut out = Vec::new();
    let Progress::Established(e) = hs.feed(&input, &mut out).unwrap() else {
        panic!("not established");
    };
    assert_eq!(e.flows, None);
}
