//! The agent, driven by recorded controller messages: no sockets, the codec decoding
//! every reply.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use openflow::common::{ErrorBody, SwitchConfig};
use openflow::header::Version;
use openflow::ofctl::{parse_flow, Flow, FlowModCommand};
use openflow::{of10, of13, MacAddr, Message};

use super::fake::FakeTables;
use super::*;
use crate::datapath::PortCounters;

/// A port that records what it sends; its link state is shared with the test.
#[derive(Debug)]
pub struct TestPort {
    pub name: String,
    pub mac: MacAddr,
    pub up: Rc<Cell<bool>>,
    pub sent: Vec<Vec<u8>>,
    /// Whether `sent` keeps the frames (off for the allocation test).
    pub record: bool,
    pub sent_count: u64,
}

impl TestPort {
    fn new(n: u32) -> TestPort {
        TestPort {
            name: format!("veth{n}"),
            mac: MacAddr([2, 0, 0, 0, 0, n as u8]),
            up: Rc::new(Cell::new(true)),
            sent: Vec::new(),
            record: true,
            sent_count: 0,
        }
    }
}

impl PortIo for TestPort {
    fn name(&self) -> &str {
        &self.name
    }
    fn mac(&self) -> MacAddr {
        self.mac
    }
    fn link_up(&self) -> bool {
        self.up.get()
    }
    fn recv_batch(&mut self, _max: usize, _f: impl FnMut(&[u8])) -> usize {
        0
    }
    fn send(&mut self, frame: &[u8]) -> bool {
        self.sent_count += 1;
        if self.record {
            self.sent.push(frame.to_vec());
        }
        true
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn counters(&self) -> PortCounters {
        PortCounters {
            tx_packets: self.sent_count,
            ..PortCounters::default()
        }
    }
    fn raw_fd(&self) -> std::os::fd::RawFd {
        -1
    }
}

type TestAgent = Agent<TestPort, FakeTables>;

fn agent(versions: Versions, controllers: usize) -> TestAgent {
    agent_with(
        AgentConfig {
            dpid: 0xabc,
            name: "s1".into(),
            versions,
            n_buffers: 16,
            tables: 4,
            max_flows: 100,
        },
        controllers,
    )
}

fn agent_with(config: AgentConfig, controllers: usize) -> TestAgent {
    agent_on(config, controllers)
}

/// An agent on three test ports, on tables of type `T`.
pub(super) fn agent_on<T: Tables>(config: AgentConfig, controllers: usize) -> Agent<TestPort, T> {
    let ports = (1..=3).map(|n| (n, TestPort::new(n))).collect();
    Agent::new(config, ports, controllers, Instant::now())
}

pub(super) fn now() -> Instant {
    Instant::now()
}

/// Everything queued for controller `ch`, decoded (and removed).
pub(super) fn take<T: Tables>(a: &mut Agent<TestPort, T>, ch: usize) -> Vec<(u32, Message)> {
    let out = std::mem::take(&mut a.fabric.channels[ch].out);
    let mut at = 0;
    let mut msgs = Vec::new();
    while at < out.len() {
        let n = openflow::frame_len(&out[at..])
            .unwrap()
            .expect("whole messages");
        msgs.push(Message::decode(&out[at..at + n]).expect("the codec reads every reply"));
        at += n;
    }
    msgs
}

pub(super) fn feed_bytes<T: Tables>(
    a: &mut Agent<TestPort, T>,
    ch: usize,
    bytes: &[u8],
) -> Result<(), CloseReason> {
    a.fabric.channels[ch].rx.extend_from_slice(bytes);
    a.receive(ch, now())
}

pub(super) fn feed<T: Tables>(a: &mut Agent<TestPort, T>, ch: usize, msg: &Message, xid: u32) {
    feed_bytes(a, ch, &msg.to_bytes(xid).unwrap()).expect("the connection stays");
}

pub(super) fn hello(v: Version) -> Vec<u8> {
    match v {
        Version::V1_0 => Message::V10(of10::Message::Hello(Default::default())),
        Version::V1_3 => Message::V13(of13::Message::Hello(
            openflow::common::Hello::with_versions(&[4]),
        )),
    }
    .to_bytes(1)
    .unwrap()
}

/// Connects controller `ch` and completes the handshake in `v`.
pub(super) fn ready<T: Tables>(a: &mut Agent<TestPort, T>, ch: usize, v: Version) {
    a.connected(ch, now());
    take(a, ch);
    feed_bytes(a, ch, &hello(v)).unwrap();
    assert_eq!(a.fabric.channels[ch].version(), Some(v));
}

pub(super) fn flow_mod(v: Version, text: &str, command: FlowModCommand) -> Message {
    parse_flow(text).unwrap().to_message(v, command).unwrap()
}

pub(super) fn error_of(m: &Message) -> (u16, u16) {
    match m {
        Message::V10(of10::Message::Error(ErrorBody::Standard { err_type, code, .. }))
        | Message::V13(of13::Message::Error(ErrorBody::Standard { err_type, code, .. })) => {
            (*err_type, *code)
        }
        other => panic!("not an error: {other:?}"),
    }
}

/// An Ethernet/IPv4/UDP frame of `len` bytes.
pub(super) fn frame(len: usize, dst: u8) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&[2, 0, 0, 0, 0, dst]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0x99]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    let ip_len = (len - 14) as u16;
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f[22] = 64;
    f[23] = 17;
    for (i, b) in f.iter_mut().enumerate().skip(42) {
        *b = i as u8;
    }
    f
}

// ---- handshake ---------------------------------------------------------------

#[test]
fn a_10_handshake_then_features_with_the_ports() {
    let mut a = agent(Versions::V10, 1);
    a.connected(0, now());
    let sent = take(&mut a, 0);
    assert!(matches!(
        sent[..],
        [(_, Message::V10(of10::Message::Hello(_)))]
    ));
    feed_bytes(&mut a, 0, &hello(Version::V1_0)).unwrap();
    feed(&mut a, 0, &Message::V10(of10::Message::FeaturesRequest), 7);
    let r = take(&mut a, 0);
    let (xid, Message::V10(of10::Message::FeaturesReply(f))) = &r[0] else {
        panic!("{r:?}")
    };
    assert_eq!(*xid, 7);
    assert_eq!(f.datapath_id, 0xabc);
    assert_eq!(f.n_buffers, 16);
    assert_eq!(f.n_tables, 1);
    let ports: Vec<(u16, String)> = f
        .ports
        .iter()
        .map(|p| (p.port_no, p.name.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        ports,
        [
            (1, "veth1".into()),
            (2, "veth2".into()),
            (3, "veth3".into())
        ]
    );
    assert_eq!(f.ports[1].hw_addr, MacAddr([2, 0, 0, 0, 0, 2]));
}

#[test]
fn a_13_handshake_from_a_newer_controller_by_bitmap_then_port_desc() {
    let mut a = agent(Versions::Both, 1);
    a.connected(0, now());
    let sent = take(&mut a, 0);
    let (_, Message::V13(of13::Message::Hello(h))) = &sent[0] else {
        panic!("{sent:?}")
    };
    assert_eq!(h.versions(), Some(vec![1, 4]), "1.0 and 1.3 offered");
    // A 1.5 controller's HELLO: header version 6, bitmap {1.0, 1.3, 1.5}.
    let bitmap: u32 = (1 << 1) | (1 << 4) | (1 << 6);
    let mut h15 = vec![6, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8];
    h15.extend_from_slice(&bitmap.to_be_bytes());
    feed_bytes(&mut a, 0, &h15).unwrap();
    assert_eq!(a.fabric.channels[0].version(), Some(Version::V1_3));
    let req =
        of13::multipart::MultipartRequest::new(of13::multipart::MultipartRequestBody::PortDesc);
    feed(
        &mut a,
        0,
        &Message::V13(of13::Message::MultipartRequest(req)),
        9,
    );
    let r = take(&mut a, 0);
    let Message::V13(of13::Message::MultipartReply(m)) = &r[0].1 else {
        panic!("{r:?}")
    };
    let of13::multipart::MultipartReplyBody::PortDesc { ports } = &m.body else {
        panic!("{m:?}")
    };
    assert_eq!(
        ports.iter().map(|p| p.port_no).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(ports[0].state, of13::port::state::LIVE);
}

#[test]
fn both_versions_keep_the_first_controllers_and_refuse_another() {
    let mut a = agent(Versions::Both, 2);
    ready(&mut a, 0, Version::V1_0);
    assert_eq!(a.offered(), Versions::V10);
    // The second connection is offered 1.0 only; a 1.3-only controller gets HELLO_FAILED.
    a.connected(1, now());
    let sent = take(&mut a, 1);
    let (_, Message::V10(of10::Message::Hello(_))) = &sent[0] else {
        panic!("{sent:?}")
    };
    let mut h13 = vec![4, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8];
    h13.extend_from_slice(&(1u32 << 4).to_be_bytes());
    let e = feed_bytes(&mut a, 1, &h13).unwrap_err();
    assert!(matches!(e, CloseReason::NoCommonVersion(_)), "{e}");
    let r = take(&mut a, 1);
    assert_eq!(error_of(&r[0].1), (0, 0), "HELLO_FAILED/INCOMPATIBLE");
}

#[test]
fn a_first_message_other_than_hello_closes_the_connection() {
    let mut a = agent(Versions::V10, 1);
    a.connected(0, now());
    take(&mut a, 0);
    let bytes = Message::V10(of10::Message::FeaturesRequest)
        .to_bytes(1)
        .unwrap();
    assert!(matches!(
        feed_bytes(&mut a, 0, &bytes),
        Err(CloseReason::NoHello(_))
    ));
}

#[test]
fn a_hello_split_across_reads_is_reassembled() {
    let mut a = agent(Versions::V13, 1);
    a.connected(0, now());
    let h = hello(Version::V1_3);
    feed_bytes(&mut a, 0, &h[..5]).unwrap();
    assert!(!a.fabric.channels[0].is_ready());
    feed_bytes(&mut a, 0, &h[5..]).unwrap();
    assert!(a.fabric.channels[0].is_ready());
}

// ---- bad input -----------------------------------------------------------------

#[test]
fn unknown_and_malformed_messages_get_errors_and_the_connection_goes_on() {
    for v in [Version::V1_0, Version::V1_3] {
        let mut a = agent(Versions::Both, 1);
        ready(&mut a, 0, v);
        // An unknown message type.
        feed_bytes(&mut a, 0, &[v.wire(), 200, 0, 12, 0, 0, 0, 5, 1, 2, 3, 4]).unwrap();
        // A FLOW_MOD cut short (its header's length says 16 bytes).
        let mut short = vec![v.wire(), 14, 0, 16, 0, 0, 0, 6];
        short.extend_from_slice(&[0; 8]);
        feed_bytes(&mut a, 0, &short).unwrap();
        // The other version's message.
        let other = if v == Version::V1_0 { 4 } else { 1 };
        feed_bytes(&mut a, 0, &[other, 2, 0, 8, 0, 0, 0, 7]).unwrap();
        // Then an echo still works.
        let echo = match v {
            Version::V1_0 => Message::V10(of10::Message::EchoRequest { data: vec![9, 9] }),
            Version::V1_3 => Message::V13(of13::Message::EchoRequest { data: vec![9, 9] }),
        };
        feed(&mut a, 0, &echo, 8);
        let r = take(&mut a, 0);
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(
            (r[0].0, error_of(&r[0].1)),
            (5, (1, 1)),
            "BAD_REQUEST/BAD_TYPE"
        );
        assert_eq!(
            (r[1].0, error_of(&r[1].1)),
            (6, (1, 6)),
            "BAD_REQUEST/BAD_LEN"
        );
        assert_eq!(
            (r[2].0, error_of(&r[2].1)),
            (7, (1, 0)),
            "BAD_REQUEST/BAD_VERSION"
        );
        assert_eq!(r[3].0, 8);
        assert!(matches!(
            &r[3].1,
            Message::V10(of10::Message::EchoReply { data }) | Message::V13(of13::Message::EchoReply { data }) if data == &[9, 9]
        ));
        // The error carries the start of the request.
        let (Message::V10(of10::Message::Error(ErrorBody::Standard { data, .. }))
        | Message::V13(of13::Message::Error(ErrorBody::Standard { data, .. }))) = &r[0].1
        else {
            unreachable!()
        };
        assert_eq!(data[..], [v.wire(), 200, 0, 12, 0, 0, 0, 5, 1, 2, 3, 4]);
    }
}

#[test]
fn garbage_framing_closes_only_that_connection() {
    let mut a = agent(Versions::V10, 2);
    ready(&mut a, 0, Version::V1_0);
    ready(&mut a, 1, Version::V1_0);
    let e = feed_bytes(&mut a, 0, &[1, 2, 0, 3, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(e, CloseReason::Framing(_)), "{e}");
    a.closed(0);
    assert!(!a.fabric.channels[0].is_ready());
    assert!(a.fabric.channels[1].is_ready());
    feed(&mut a, 1, &Message::V10(of10::Message::BarrierRequest), 3);
    assert_eq!(take(&mut a, 1).len(), 1);
}

// ---- flow mods, barrier ------------------------------------------------------------

#[test]
fn flow_mod_errors_in_each_versions_codes_leave_the_table_unchanged() {
    for v in [Version::V1_0, Version::V1_3] {
        let mut a = agent_with(
            AgentConfig {
                max_flows: 1,
                versions: Versions::Both,
                ..AgentConfig::default()
            },
            1,
        );
        ready(&mut a, 0, v);
        let add = |t: &str| flow_mod(v, t, FlowModCommand::Add);
        feed(&mut a, 0, &add("priority=5,in_port=1,actions=output:2"), 1);
        // Table full.
        feed(&mut a, 0, &add("priority=6,in_port=2,actions=output:1"), 2);
        // Overlap (check_overlap, same priority).
        feed(
            &mut a,
            0,
            &add("priority=5,check_overlap,actions=output:3"),
            3,
        );
        // Output to NORMAL.
        feed(&mut a, 0, &add("priority=7,actions=normal"), 4);
        let r = take(&mut a, 0);
        let codes: Vec<(u32, (u16, u16))> = r.iter().map(|(x, m)| (*x, error_of(m))).collect();
        let expected = match v {
            Version::V1_0 => [(2, (3, 0)), (3, (3, 1)), (4, (2, 4))],
            Version::V1_3 => [(2, (5, 1)), (3, (5, 3)), (4, (2, 4))],
        };
        assert_eq!(codes, expected, "{v}");
        assert_eq!(a.tables.as_ref().unwrap().flows.len(), 1);
    }
    // 1.3 only: a table that does not exist, a group.
    let mut a = agent(Versions::V13, 1);
    ready(&mut a, 0, Version::V1_3);
    feed(
        &mut a,
        0,
        &flow_mod(Version::V1_3, "table=9,actions=drop", FlowModCommand::Add),
        1,
    );
    feed(
        &mut a,
        0,
        &flow_mod(Version::V1_3, "actions=group:1", FlowModCommand::Add),
        2,
    );
    let r = take(&mut a, 0);
    assert_eq!(error_of(&r[0].1), (5, 2), "FLOW_MOD_FAILED/BAD_TABLE_ID");
    assert_eq!(error_of(&r[1].1), (2, 9), "BAD_ACTION/BAD_OUT_GROUP");
    assert!(a.tables.as_ref().unwrap().flows.is_empty());
}

#[test]
fn a_barrier_reply_follows_every_earlier_change_and_reply() {
    let mut a = agent(Versions::V10, 1);
    ready(&mut a, 0, Version::V1_0);
    // One read: a bad FLOW_MOD, a good one, a barrier.
    let mut bytes = flow_mod(Version::V1_0, "actions=normal", FlowModCommand::Add)
        .to_bytes(1)
        .unwrap();
    bytes.extend(
        flow_mod(
            Version::V1_0,
            "in_port=1,actions=output:3",
            FlowModCommand::Add,
        )
        .to_bytes(2)
        .unwrap(),
    );
    bytes.extend(
        Message::V10(of10::Message::BarrierRequest)
            .to_bytes(3)
            .unwrap(),
    );
    feed_bytes(&mut a, 0, &bytes).unwrap();
    let r = take(&mut a, 0);
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].0, error_of(&r[0].1)), (1, (2, 4)));
    assert_eq!(r[1], (3, Message::V10(of10::Message::BarrierReply)));
    // The reply is out, and the very next frame takes the new flow.
    a.frame_in(0, &frame(60, 7), now());
    assert_eq!(a.fabric.ports[2].io.sent.len(), 1);
}

#[test]
fn deleting_flows_sends_flow_removed_to_every_controller_for_those_that_asked() {
    let mut a = agent(Versions::V13, 2);
    ready(&mut a, 0, Version::V1_3);
    ready(&mut a, 1, Version::V1_3);
    let v = Version::V1_3;
    feed(
        &mut a,
        0,
        &flow_mod(
            v,
            "priority=9,cookie=0x77,send_flow_rem,in_port=1,actions=output:2",
            FlowModCommand::Add,
        ),
        1,
    );
    feed(
        &mut a,
        0,
        &flow_mod(
            v,
            "priority=8,in_port=2,actions=output:1",
            FlowModCommand::Add,
        ),
        2,
    );
    feed(
        &mut a,
        0,
        &flow_mod(v, "actions=drop", FlowModCommand::Delete),
        3,
    );
    for ch in 0..2 {
        let r = take(&mut a, ch);
        assert_eq!(r.len(), 1, "{r:?}");
        let Message::V13(of13::Message::FlowRemoved(fr)) = &r[0].1 else {
            panic!("{r:?}")
        };
        assert_eq!((fr.cookie, fr.priority), (0x77, 9));
        assert_eq!(fr.reason, of13::FlowRemovedReason::Delete);
    }
}

// ---- packet in, buffers, packet out ----------------------------------------------------

pub(super) fn packet_in_10(m: &Message) -> &of10::PacketIn {
    match m {
        Message::V10(of10::Message::PacketIn(p)) => p,
        other => panic!("not a PACKET_IN: {other:?}"),
    }
}

#[test]
fn a_table_miss_is_buffered_and_cut_to_miss_send_len() {
    let mut a = agent(Versions::V10, 1);
    ready(&mut a, 0, Version::V1_0);
    let f = frame(200, 5);
    a.frame_in(1, &f, now());
    let r = take(&mut a, 0);
    let p = packet_in_10(&r[0].1);
    assert_eq!((p.in_port, p.total_len, p.data.len()), (2, 200, 128));
    assert_eq!(p.reason, of10::PacketInReason::NoMatch);
    assert_eq!(p.data[..], f[..128]);
    let first = p.buffer_id;
    assert_ne!(first, openflow::model::NO_BUFFER);
    feed(
        &mut a,
        0,
        &Message::V10(of10::Message::SetConfig(SwitchConfig {
            flags: 0,
            miss_send_len: 64,
        })),
        1,
    );
    feed(&mut a, 0, &Message::V10(of10::Message::GetConfigRequest), 2);
    a.frame_in(1, &f, now());
    let r = take(&mut a, 0);
    assert_eq!(
        r[0].1,
        Message::V10(of10::Message::GetConfigReply(SwitchConfig {
            flags: 0,
            miss_send_len: 64
        }))
    );
    let p = packet_in_10(&r[1].1);
    assert_eq!(p.data.len(), 64);
    assert_ne!(p.buffer_id, first);
    // The whole buffered frame goes out on a PACKET_OUT naming the buffer.
    let out = |buffer_id: u32| {
        Message::V10(of10::Message::PacketOut(of10::PacketOut {
            buffer_id,
            in_port: 2,
            actions: vec![of10::Action::Output {
                port: 3,
                max_len: 0,
            }],
            data: Vec::new(),
        }))
    };
    feed(&mut a, 0, &out(first), 3);
    assert_eq!(a.fabric.ports[2].io.sent, std::slice::from_ref(&f));
    // Used once: a second time is BUFFER_EMPTY; an id never given, BUFFER_UNKNOWN.
    feed(&mut a, 0, &out(first), 4);
    feed(&mut a, 0, &out(0x1234_5678), 5);
    let r = take(&mut a, 0);
    assert_eq!((r[0].0, error_of(&r[0].1)), (4, (1, 7)));
    assert_eq!((r[1].0, error_of(&r[1].1)), (5, (1, 8)));
    assert_eq!(a.fabric.ports[2].io.sent.len(), 1);
}

#[test]
fn a_flow_mod_naming_a_buffer_sends_the_frame_through_the_new_flow() {
    let mut a = agent(Versions::V10, 1);
    ready(&mut a, 0, Version::V1_0);
    let f = frame(90, 5);
    a.frame_in(0, &f, now());
    let id = packet_in_10(&take(&mut a, 0)[0].1).buffer_id;
    let Message::V10(of10::Message::FlowMod(mut fm)) = flow_mod(
        Version::V1_0,
        "in_port=1,actions=output:2",
        FlowModCommand::Add,
    ) else {
        unreachable!()
    };
    fm.buffer_id = id;
    feed(&mut a, 0, &Message::V10(of10::Message::FlowMod(fm)), 1);
    assert!(take(&mut a, 0).is_empty());
    assert_eq!(a.fabric.ports[1].io.sent, [f]);
}

#[test]
fn a_13_packet_in_carries_in_port_table_and_cookie_and_no_buffer_when_asked() {
    let mut a = agent(Versions::V13, 1);
    ready(&mut a, 0, Version::V1_3);
    let f = frame(300, 5);
    let fabric_emit = |a: &mut TestAgent, max_len: u16| {
        crate::Sink::emit(
            &mut a.fabric,
            crate::Egress::Controller {
                max_len,
                reason: crate::ToController::Action,
                table_id: 2,
                cookie: 0xfeed,
            },
            3,
            &f,
        );
        let r = take(a, 0);
        match &r[0].1 {
            Message::V13(of13::Message::PacketIn(p)) => p.clone(),
            other => panic!("{other:?}"),
        }
    };
    let p = fabric_emit(&mut a, 100);
    assert_eq!((p.in_port(), p.table_id, p.cookie), (Some(3), 2, 0xfeed));
    assert_eq!((p.total_len, p.data.len()), (300, 100));
    assert_eq!(p.reason, of13::PacketInReason::Action);
    assert_ne!(p.buffer_id, openflow::model::NO_BUFFER);
    // OFPCML_NO_BUFFER: the whole frame, unbuffered.
    let p = fabric_emit(&mut a, 0xffff);
    assert_eq!(p.buffer_id, openflow::model::NO_BUFFER);
    assert_eq!(p.data, f);
}

#[test]
fn no_packet_in_without_a_controller_and_it_is_counted() {
    let mut a = agent(Versions::V10, 1);
    a.frame_in(0, &frame(60, 1), now());
    assert_eq!(a.fabric.drops.packet_in, 1);
}

// ---- ports -----------------------------------------------------------------------

#[test]
fn port_mod_configures_a_port_and_tells_the_controllers() {
    let mut a = agent(Versions::V10, 1);
    ready(&mut a, 0, Version::V1_0);
    let pm = |port_no: u16, hw: u8, config: u32| {
        Message::V10(of10::Message::PortMod(of10::PortMod {
            port_no,
            hw_addr: MacAddr([2, 0, 0, 0, 0, hw]),
            config,
            mask: port_config::NO_FWD | port_config::NO_FLOOD,
            advertise: 0,
        }))
    };
    feed(&mut a, 0, &pm(2, 2, port_config::NO_FWD), 1);
    feed(&mut a, 0, &pm(3, 3, port_config::NO_FLOOD), 2);
    feed(&mut a, 0, &pm(9, 9, 0), 3);
    feed(&mut a, 0, &pm(2, 7, 0), 4);
    let r = take(&mut a, 0);
    let Message::V10(of10::Message::PortStatus(ps)) = &r[0].1 else {
        panic!("{r:?}")
    };
    assert_eq!((ps.desc.port_no, ps.desc.config), (2, port_config::NO_FWD));
    assert!(matches!(r[1].1, Message::V10(of10::Message::PortStatus(_))));
    assert_eq!((r[2].0, error_of(&r[2].1)), (3, (4, 0)), "BAD_PORT");
    assert_eq!((r[3].0, error_of(&r[3].1)), (4, (4, 1)), "BAD_HW_ADDR");
    // Flood from port 1: port 2 does not forward, port 3 is not flooded.
    crate::Sink::emit(&mut a.fabric, crate::Egress::Flood, 1, &frame(60, 1));
    assert!(a.fabric.ports[1].io.sent.is_empty());
    assert!(a.fabric.ports[2].io.sent.is_empty());
    assert_eq!(a.fabric.ports[1].tx_dropped, 1);
    // ALL ignores NO_FLOOD, not NO_FWD.
    crate::Sink::emit(&mut a.fabric, crate::Egress::All, 1, &frame(60, 1));
    assert_eq!(a.fabric.ports[2].io.sent.len(), 1);
    assert!(a.fabric.ports[1].io.sent.is_empty());
}

#[test]
fn a_link_going_down_is_reported() {
    let mut a = agent(Versions::V13, 1);
    ready(&mut a, 0, Version::V1_3);
    a.check_links();
    assert!(take(&mut a, 0).is_empty());
    a.fabric.ports[0].io.up.set(false);
    a.check_links();
    let r = take(&mut a, 0);
    let Message::V13(of13::Message::PortStatus(ps)) = &r[0].1 else {
        panic!("{r:?}")
    };
    assert_eq!(ps.desc.port_no, 1);
    assert_eq!(ps.desc.state, of13::port::state::LINK_DOWN);
    assert_eq!(ps.reason, of13::port::PortReason::Modify);
}

// ---- statistics -------------------------------------------------------------------

#[test]
fn statistics_replies_decode_in_both_versions() {
    for v in [Version::V1_0, Version::V1_3] {
        let mut a = agent(Versions::Both, 1);
        ready(&mut a, 0, v);
        feed(
            &mut a,
            0,
            &flow_mod(
                v,
                "priority=3,in_port=1,actions=output:2",
                FlowModCommand::Add,
            ),
            1,
        );
        feed(
            &mut a,
            0,
            &flow_mod(
                v,
                "priority=4,in_port=2,actions=output:1",
                FlowModCommand::Add,
            ),
            2,
        );
        let all = Flow::default();
        let req = all.stats_request(v).unwrap();
        feed(&mut a, 0, &req, 10);
        let r = take(&mut a, 0);
        let entries = openflow::ofctl::FlowEntry::from_message(&r[0].1).expect("flow stats");
        let mut texts: Vec<String> = entries
            .into_iter()
            .map(|e| e.unwrap().flow.to_string())
            .collect();
        texts.sort();
        assert_eq!(
            texts,
            [
                "priority=3,in_port=1,actions=output:2",
                "priority=4,in_port=2,actions=output:1"
            ],
            "{v}"
        );
        let stats = |body10: of10::StatsRequestBody,
                     body13: of13::multipart::MultipartRequestBody| match v {
            Version::V1_0 => Message::V10(of10::Message::StatsRequest(of10::StatsRequest {
                flags: 0,
                body: body10,
            })),
            Version::V1_3 => Message::V13(of13::Message::MultipartRequest(
                of13::multipart::MultipartRequest::new(body13),
            )),
        };
        use of10::StatsRequestBody as B10;
        use of13::multipart::MultipartRequestBody as B13;
        feed(&mut a, 0, &stats(B10::Desc, B13::Desc), 11);
        feed(&mut a, 0, &stats(B10::Table, B13::Table), 12);
        feed(
            &mut a,
            0,
            &stats(
                B10::Port(of10::stats::PortStatsRequest { port_no: 0xffff }),
                B13::PortStats {
                    port_no: of13::OFPP_ANY,
                },
            ),
            13,
        );
        let r = take(&mut a, 0);
        assert_eq!(r.len(), 3, "{r:?}");
        let names: Vec<&str> = r.iter().map(|(_, m)| m.type_name()).collect();
        let reply = if v == Version::V1_0 {
            "STATS_REPLY"
        } else {
            "MULTIPART_REPLY"
        };
        assert_eq!(names, [reply; 3]);
        let json = serde_json::to_string(&r[0].1).unwrap();
        assert!(json.contains("Pharos") && json.contains("s1"), "{json}");
        let json = serde_json::to_string(&r[1].1).unwrap();
        assert!(json.contains("\"active_count\":2"), "{json}");
        let json = serde_json::to_string(&r[2].1).unwrap();
        assert_eq!(json.matches("port_no").count(), 3, "{json}");
    }
}

#[test]
fn a_large_flow_dump_is_split_with_the_more_flag() {
    let mut a = agent_with(
        AgentConfig {
            versions: Versions::V10,
            max_flows: 10_000,
            ..AgentConfig::default()
        },
        1,
    );
    ready(&mut a, 0, Version::V1_0);
    for i in 0..1500u32 {
        let t = format!("priority={i},in_port={},actions=output:2", i + 1);
        feed(
            &mut a,
            0,
            &flow_mod(Version::V1_0, &t, FlowModCommand::Add),
            i,
        );
    }
    feed(
        &mut a,
        0,
        &Flow::default().stats_request(Version::V1_0).unwrap(),
        99,
    );
    let r = take(&mut a, 0);
    assert!(r.len() > 1);
    let mut total = 0;
    for (i, (xid, m)) in r.iter().enumerate() {
        assert_eq!(*xid, 99);
        let Message::V10(of10::Message::StatsReply(s)) = m else {
            panic!("{m:?}")
        };
        assert_eq!(
            s.flags & 1 != 0,
            i + 1 < r.len(),
            "more on all but the last"
        );
        total += openflow::ofctl::FlowEntry::from_message(m).unwrap().len();
    }
    assert_eq!(total, 1500);
}

#[test]
fn table_features_carry_the_eight_properties_ovs_ofctl_requires() {
    let mut a = agent(Versions::V13, 1);
    ready(&mut a, 0, Version::V1_3);
    let req = of13::multipart::MultipartRequest::new(
        of13::multipart::MultipartRequestBody::TableFeatures { tables: Vec::new() },
    );
    feed(
        &mut a,
        0,
        &Message::V13(of13::Message::MultipartRequest(req)),
        4,
    );
    let r = take(&mut a, 0);
    let Message::V13(of13::Message::MultipartReply(m)) = &r[0].1 else {
        panic!("{r:?}")
    };
    let of13::multipart::MultipartReplyBody::TableFeatures { tables } = &m.body else {
        panic!("{m:?}")
    };
    assert_eq!(tables.len(), 4);
    for t in tables {
        // INSTRUCTIONS, NEXT_TABLES, WRITE_ACTIONS, APPLY_ACTIONS, MATCH, WILDCARDS,
        // WRITE_SETFIELD, APPLY_SETFIELD (1.3.3 §7.3.5.5.2).
        assert_eq!(t.properties.len(), 8, "table {}", t.table_id);
    }
}

// ---- keepalive ----------------------------------------------------------------------

#[test]
fn a_silent_controller_is_sent_an_echo_then_dropped() {
    let mut a = agent(Versions::V10, 1);
    ready(&mut a, 0, Version::V1_0);
    let t0 = now();
    let i = Duration::from_secs(5);
    assert!(a.keepalive(t0 + Duration::from_secs(1), i).is_empty());
    assert!(take(&mut a, 0).is_empty());
    assert!(a.keepalive(t0 + Duration::from_secs(6), i).is_empty());
    let r = take(&mut a, 0);
    assert!(matches!(
        r[0].1,
        Message::V10(of10::Message::EchoRequest { .. })
    ));
    let close = a.keepalive(t0 + Duration::from_secs(16), i);
    assert!(matches!(close[..], [(0, CloseReason::EchoTimeout(_))]));
}

// ---- no allocation -----------------------------------------------------------------------

#[test]
fn forwarding_and_packet_in_allocate_nothing() {
    let mut a = agent(Versions::V10, 2);
    ready(&mut a, 0, Version::V1_0);
    ready(&mut a, 1, Version::V1_0);
    for p in &mut a.fabric.ports {
        p.io.record = false;
    }
    let f = frame(1000, 9);
    // Warm up: buffers and output vectors reach their size.
    for _ in 0..64 {
        crate::Sink::emit(&mut a.fabric, crate::Egress::Flood, 1, &f);
        a.frame_in(0, &f, now());
    }
    for ch in &mut a.fabric.channels {
        ch.out.clear();
    }
    let n = allocation_counter::measure(|| {
        for _ in 0..32 {
            crate::Sink::emit(&mut a.fabric, crate::Egress::Flood, 1, &f);
            crate::Sink::emit(&mut a.fabric, crate::Egress::Port(2), 1, &f);
            crate::Sink::emit(
                &mut a.fabric,
                crate::Egress::Controller {
                    max_len: 128,
                    reason: crate::ToController::Action,
                    table_id: 0,
                    cookie: 0,
                },
                1,
                &f,
            );
        }
    });
    assert_eq!(n.count_total, 0, "the data path allocated");
    assert_eq!(
        a.fabric.ports[2].io.sent_count,
        64 + 32,
        "64 floods to warm up, 32 measured"
    );
}
