use std::time::{Duration, Instant};

use openflow::{of13, Message};

use super::*;

fn noop() -> Callback {
    Box::new(|_, _, _, _| {})
}

fn barrier_reply() -> Message {
    Message::V13(of13::Message::BarrierReply)
}

#[test]
fn xids_count_up_and_skip_zero_on_wrap() {
    let mut r = Requests::new();
    assert_eq!(r.next_xid(), 1);
    assert_eq!(r.next_xid(), 2);
    r.last_xid = u32::MAX - 1;
    assert_eq!(r.next_xid(), u32::MAX);
    assert_eq!(r.next_xid(), 1);
}

#[test]
fn multipart_parts_are_gathered_until_more_clears() {
    let t0 = Instant::now();
    let mut r = Requests::new();
    r.insert(7, 3, t0 + Duration::from_secs(1), noop());
    assert!(r.is_pending(7));
    assert!(!r.is_pending(8));
    assert!(r.on_reply(8, barrier_reply(), false, false).is_none());
    assert!(r.on_reply(7, barrier_reply(), true, false).is_none());
    assert!(r.on_reply(7, barrier_reply(), true, false).is_none());
    let done = r.on_reply(7, barrier_reply(), false, false).unwrap();
    assert_eq!(done.app, 3);
    assert_eq!(done.reply, Reply::Messages(vec![barrier_reply(); 3]));
    assert!(r.is_empty());
}

#[test]
fn an_error_ends_the_request() {
    let t0 = Instant::now();
    let mut r = Requests::new();
    r.insert(7, 0, t0, noop());
    assert!(r.on_reply(7, barrier_reply(), true, false).is_none());
    let done = r.on_reply(7, barrier_reply(), false, true).unwrap();
    assert_eq!(done.reply, Reply::Error(barrier_reply()));
    assert!(r.is_empty());
}

#[test]
fn deadlines_expire_in_any_order() {
    let t0 = Instant::now();
    let mut r = Requests::new();
    r.insert(1, 0, t0 + Duration::from_millis(300), noop());
    r.insert(2, 1, t0 + Duration::from_millis(100), noop());
    assert_eq!(r.next_deadline(), Some(t0 + Duration::from_millis(100)));
    assert!(r.pop_expired(t0 + Duration::from_millis(99)).is_none());
    let d = r.pop_expired(t0 + Duration::from_millis(100)).unwrap();
    assert_eq!((d.app, d.reply), (1, Reply::TimedOut));
    assert_eq!(r.next_deadline(), Some(t0 + Duration::from_millis(300)));
    assert!(r.pop_expired(t0 + Duration::from_millis(200)).is_none());
    assert_eq!(r.pop_expired(t0 + Duration::from_secs(5)).unwrap().app, 0);
    assert_eq!(r.next_deadline(), None);
}

#[test]
fn a_leaving_switch_ends_every_request_oldest_first() {
    let t0 = Instant::now();
    let mut r = Requests::new();
    r.insert(1, 4, t0 + Duration::from_secs(9), noop());
    r.insert(2, 5, t0 + Duration::from_secs(1), noop());
    let first = r.pop_gone().unwrap();
    assert_eq!((first.app, first.reply), (4, Reply::SwitchGone));
    assert_eq!(r.pop_gone().unwrap().app, 5);
    assert!(r.pop_gone().is_none());
    assert!(r.is_empty());
}
