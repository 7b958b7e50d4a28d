//! [`Switches::request`] and [`Switches::request_flow_mod`] on a pipeline driven by
//! hand: the messages wait in the switch's queue, `take_queued` gives them xids and
//! registers the request, replies go through `handle`, deadlines through `tick`; no
//! network, no sleeping.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openflow::common::{ErrorBody, PortCounters};
use openflow::model::{Action, FlowMod, Ipv6Prefix, Match, PacketOut, PortNo};
use openflow::of13::multipart::{
    MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody, PortStats,
};
use openflow::{of10, of13, Message, Version};

use super::*;
use crate::dispatch::SwitchState;
use crate::driver::Driver;
use crate::host::{AppHost, Core};
use crate::services::Services;

const SECOND: Duration = Duration::from_secs(1);

fn info(dpid: u64, version: Version) -> SwitchInfo {
    SwitchInfo {
        n_buffers: 256,
        n_tables: 1,
        ..SwitchInfo::new(openflow::Dpid(dpid), version)
    }
}

/// Every reply a callback got, in order.
type Log = Arc<Mutex<Vec<Reply>>>;

fn recorder() -> (Log, impl Fn() -> ReplyFn) {
    let log: Log = Arc::default();
    let l = Arc::clone(&log);
    (log, move || {
        let l = Arc::clone(&l);
        Box::new(move |r| l.lock().unwrap().push(r))
    })
}

fn taken(log: &Log) -> Vec<Reply> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// A pipeline with no apps and one hand-driven switch, its handshake done at `t0`.
fn one_switch(version: Version, t0: Instant) -> (Core, SwitchState) {
    let p = AppHost::build(Vec::new(), Services::new()).unwrap();
    let mut sw = p.dispatcher.new_switch(info(1, version));
    p.dispatcher.switch_added(&mut sw, &mut Vec::new(), t0);
    (p, sw)
}

/// The messages in `out`, with their xids.
fn sent(out: &[u8]) -> Vec<(u32, Message)> {
    let mut v = Vec::new();
    let mut rest = out;
    while !rest.is_empty() {
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        v.push(Message::decode(&rest[..len]).unwrap());
        rest = &rest[len..];
    }
    v
}

fn port_stats_request() -> Message {
    Message::V13(of13::Message::MultipartRequest(MultipartRequest {
        flags: 0,
        body: MultipartRequestBody::PortStats {
            port_no: 0xffff_ffff,
        },
    }))
}

/// One part of a PORT_STATS reply, for port `port`; `more`: the MORE flag.
fn port_stats_part(port: u32, more: bool) -> Message {
    Message::V13(of13::Message::MultipartReply(MultipartReply {
        flags: u16::from(more),
        body: MultipartReplyBody::PortStats {
            stats: vec![PortStats {
                port_no: port,
                counters: PortCounters {
                    rx_packets: u64::from(port) * 10,
                    ..PortCounters::default()
                },
                duration_sec: 1,
                duration_nsec: 0,
            }],
        },
    }))
}

/// FLOW_MOD_FAILED/TABLE_FULL (1.3 §7.4.4), the way a switch refuses a flow.
fn table_full() -> Message {
    Message::V13(of13::Message::Error(ErrorBody::Standard {
        err_type: 5,
        code: 1,
        data: vec![4, 14, 0, 8],
    }))
}

fn frame(xid: u32, m: &Message) -> Vec<u8> {
    m.to_bytes(xid).unwrap()
}

fn drop_all() -> FlowMod<'static> {
    FlowMod::add(Match::default(), &[]).priority(7)
}

#[test]
fn a_stats_reply_is_gathered_over_its_parts_and_given_once() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    let (log, reply) = recorder();
    p.switches()
        .request(openflow::Dpid(1), &port_stats_request(), SECOND, reply())
        .unwrap();
    // Nothing goes out, and nothing is pending, until the queue is taken.
    assert_eq!(sw.pending_requests(), 0);
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, t0);
    let msgs = sent(&out);
    assert_eq!(msgs.len(), 1);
    let (xid, ref m) = msgs[0];
    assert_eq!(m, &port_stats_request());
    assert_ne!(xid, 0, "a fresh xid");
    assert_eq!(sw.pending_requests(), 1);
    assert_eq!(sw.next_deadline(), Some(t0 + SECOND));

    out.clear();
    for (port, more) in [(1, true), (2, true)] {
        p.dispatcher.handle(
            &mut sw,
            &frame(xid, &port_stats_part(port, more)),
            &mut out,
            t0,
        );
        assert!(taken(&log).is_empty(), "not before the last part");
    }
    // Another xid is not this request's.
    p.dispatcher.handle(
        &mut sw,
        &frame(xid + 1, &port_stats_part(9, false)),
        &mut out,
        t0,
    );
    assert!(taken(&log).is_empty());
    p.dispatcher.handle(
        &mut sw,
        &frame(xid, &port_stats_part(3, false)),
        &mut out,
        t0,
    );
    assert_eq!(
        taken(&log),
        [Reply::Messages(vec![
            port_stats_part(1, true),
            port_stats_part(2, true),
            port_stats_part(3, false),
        ])]
    );
    assert_eq!(sw.pending_requests(), 0);
    assert_eq!(p.apps.counters().replies, 1);
    // Neither a late part nor the deadline calls it again.
    p.dispatcher.handle(
        &mut sw,
        &frame(xid, &port_stats_part(4, false)),
        &mut out,
        t0,
    );
    p.dispatcher.tick(&mut sw, &mut out, t0 + 10 * SECOND);
    assert!(taken(&log).is_empty());
    assert!(out.is_empty(), "the request's reply sends nothing");
}

#[test]
fn a_flow_mod_then_a_barrier_reply_means_applied() {
    let t0 = Instant::now();
    for version in [Version::V1_0, Version::V1_3] {
        let (p, mut sw) = one_switch(version, t0);
        let (log, reply) = recorder();
        p.switches()
            .request_flow_mod(openflow::Dpid(1), &drop_all(), SECOND, reply())
            .unwrap();
        let mut out = Vec::new();
        p.dispatcher.take_queued(&mut sw, &mut out, t0);
        let msgs = sent(&out);
        let (barrier_reply, fm_priority) = match (&msgs[0].1, &msgs[1].1) {
            (
                Message::V10(of10::Message::FlowMod(fm)),
                Message::V10(of10::Message::BarrierRequest),
            ) => (Message::V10(of10::Message::BarrierReply), fm.priority),
            (
                Message::V13(of13::Message::FlowMod(fm)),
                Message::V13(of13::Message::BarrierRequest),
            ) => (Message::V13(of13::Message::BarrierReply), fm.priority),
            other => panic!("{version}: a FLOW_MOD then a barrier, not {other:?}"),
        };
        assert_eq!((msgs.len(), fm_priority), (2, 7));
        let (fm_xid, barrier_xid) = (msgs[0].0, msgs[1].0);
        assert_eq!(barrier_xid, fm_xid + 1, "consecutive xids");
        assert_eq!(sw.pending_requests(), 1, "one entry for both");

        out.clear();
        p.dispatcher
            .handle(&mut sw, &frame(barrier_xid, &barrier_reply), &mut out, t0);
        assert_eq!(taken(&log), [Reply::Messages(vec![barrier_reply])]);
        assert_eq!(sw.pending_requests(), 0);
    }
}

#[test]
fn an_error_on_the_flow_mod_xid_is_the_answer_and_the_barrier_reply_is_not() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    let (log, reply) = recorder();
    p.switches()
        .request_flow_mod(openflow::Dpid(1), &drop_all(), SECOND, reply())
        .unwrap();
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, t0);
    let msgs = sent(&out);
    let (fm_xid, barrier_xid) = (msgs[0].0, msgs[1].0);

    p.dispatcher
        .handle(&mut sw, &frame(fm_xid, &table_full()), &mut out, t0);
    assert_eq!(taken(&log), [Reply::Error(table_full())]);
    // The switch still answers the barrier: nobody waits for it any more.
    let barrier_reply = Message::V13(of13::Message::BarrierReply);
    p.dispatcher
        .handle(&mut sw, &frame(barrier_xid, &barrier_reply), &mut out, t0);
    assert!(taken(&log).is_empty());
    assert_eq!(p.apps.counters().replies, 1);
}

#[test]
fn an_error_on_the_barrier_xid_ends_it_too() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    let (log, reply) = recorder();
    p.switches()
        .request_flow_mod(openflow::Dpid(1), &drop_all(), SECOND, reply())
        .unwrap();
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, t0);
    let barrier_xid = sent(&out)[1].0;
    p.dispatcher
        .handle(&mut sw, &frame(barrier_xid, &table_full()), &mut out, t0);
    assert_eq!(taken(&log), [Reply::Error(table_full())]);
}

#[test]
fn a_silent_switch_times_out_at_the_deadline_counted_from_when_it_was_sent() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    let (log, reply) = recorder();
    p.switches()
        .request(openflow::Dpid(1), &port_stats_request(), SECOND, reply())
        .unwrap();
    let mut out = Vec::new();
    // Taken (sent) a while after it was asked: the second starts now.
    let sent_at = t0 + 5 * SECOND;
    p.dispatcher.take_queued(&mut sw, &mut out, sent_at);
    let xid = sent(&out)[0].0;
    p.dispatcher.tick(
        &mut sw,
        &mut out,
        sent_at + SECOND - Duration::from_millis(1),
    );
    assert!(taken(&log).is_empty());
    p.dispatcher.tick(&mut sw, &mut out, sent_at + SECOND);
    assert_eq!(taken(&log), [Reply::TimedOut]);
    assert_eq!(p.apps.counters().request_timeouts, 1);
    // A reply after the timeout goes nowhere.
    p.dispatcher.handle(
        &mut sw,
        &frame(xid, &port_stats_part(1, false)),
        &mut out,
        t0,
    );
    assert!(taken(&log).is_empty());
    assert_eq!(p.apps.counters().replies, 0);
}

#[test]
fn a_switch_that_leaves_answers_switch_gone_sent_or_not() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    let (log, reply) = recorder();
    let switches = Arc::clone(p.switches());
    switches
        .request(openflow::Dpid(1), &port_stats_request(), SECOND, reply())
        .unwrap();
    p.dispatcher.take_queued(&mut sw, &mut Vec::new(), t0);
    // A second one still waits in the queue when the switch leaves.
    switches
        .request_flow_mod(openflow::Dpid(1), &drop_all(), SECOND, reply())
        .unwrap();
    p.dispatcher.disconnected(sw, "test", t0);
    assert_eq!(taken(&log), [Reply::SwitchGone, Reply::SwitchGone]);
    // And a request to it now is an error; its callback is never called.
    assert_eq!(
        switches.request(openflow::Dpid(1), &port_stats_request(), SECOND, reply()),
        Err(SendError::NotConnected(Dpid(1)))
    );
    assert!(taken(&log).is_empty());
}

#[test]
fn refused_requests_are_errors_and_never_call_back() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_0, t0);
    let (log, reply) = recorder();
    let switches = p.switches();
    assert_eq!(
        switches.request(openflow::Dpid(2), &port_stats_request(), SECOND, reply()),
        Err(SendError::NotConnected(Dpid(2)))
    );
    assert_eq!(
        switches.request(openflow::Dpid(1), &port_stats_request(), SECOND, reply()),
        Err(SendError::WrongVersion {
            dpid: Dpid(1),
            message: Version::V1_3,
            switch: Version::V1_0
        })
    );
    // A 1.3-only match cannot go to a 1.0 switch.
    let v6 = Match {
        ipv6_src: Some(Ipv6Prefix {
            addr: "2001:db8::1".parse().unwrap(),
            len: 128,
        }),
        eth_type: Some(0x86dd),
        ..Match::default()
    };
    let fm = FlowMod::add(v6, &[]);
    assert!(matches!(
        switches.request_flow_mod(openflow::Dpid(1), &fm, SECOND, reply()),
        Err(SendError::Encode { .. })
    ));
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, t0);
    assert!(out.is_empty(), "nothing was queued");
    assert_eq!(sw.pending_requests(), 0);
    assert!(taken(&log).is_empty());
}

#[test]
fn requests_keep_their_place_among_plain_sends() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    let (log, reply) = recorder();
    let switches = p.switches();
    let flood = [Action::output(PortNo::Flood)];
    let po = PacketOut::unbuffered(b"x", PortNo::Controller, &flood);
    switches.send_packet_out(openflow::Dpid(1), &po).unwrap();
    switches
        .request(openflow::Dpid(1), &port_stats_request(), SECOND, reply())
        .unwrap();
    switches.send_packet_out(openflow::Dpid(1), &po).unwrap();
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, t0);
    let msgs = sent(&out);
    let kinds: Vec<&str> = msgs.iter().map(|(_, m)| m.type_name()).collect();
    assert_eq!(kinds, ["PACKET_OUT", "MULTIPART_REQUEST", "PACKET_OUT"]);
    let xids: Vec<u32> = msgs.iter().map(|(x, _)| *x).collect();
    assert!(xids.windows(2).all(|w| w[1] == w[0] + 1), "{xids:?}");
    p.dispatcher.handle(
        &mut sw,
        &frame(xids[1], &port_stats_part(1, false)),
        &mut out,
        t0,
    );
    assert_eq!(taken(&log).len(), 1);
}

#[test]
fn a_panicking_callback_is_contained() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    p.switches()
        .request(
            openflow::Dpid(1),
            &port_stats_request(),
            SECOND,
            Box::new(|_| panic!("a caller's bug")),
        )
        .unwrap();
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, t0);
    p.dispatcher.tick(&mut sw, &mut out, t0 + SECOND);
    // The pipeline carries on; no app is blamed.
    assert_eq!(p.apps.counters().handler_panics, 0);
    assert_eq!(sw.pending_requests(), 0);
}

#[test]
fn a_request_at_the_top_of_the_xid_range_keeps_consecutive_xids() {
    let t0 = Instant::now();
    let (p, mut sw) = one_switch(Version::V1_3, t0);
    sw.requests_mut().set_last_xid(u32::MAX - 3);
    let (log, reply) = recorder();
    p.switches()
        .request_flow_mod(openflow::Dpid(1), &drop_all(), SECOND, reply())
        .unwrap();
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, t0);
    let xids: Vec<u32> = sent(&out).iter().map(|(x, _)| *x).collect();
    assert_eq!(xids, [u32::MAX - 2, u32::MAX - 1]);
    let barrier_reply = Message::V13(of13::Message::BarrierReply);
    p.dispatcher
        .handle(&mut sw, &frame(u32::MAX - 1, &barrier_reply), &mut out, t0);
    assert_eq!(taken(&log), [Reply::Messages(vec![barrier_reply])]);
}
