use std::time::{Duration, Instant};

use openflow::{of13, Message};

use super::*;

/// The table as the tests make it: an app's callback is a number, what it says.
type Callback = u32;

fn noop() -> Callback {
    0
}

/// The app that made a finished request.
fn app_of(done: &Done<Callback>) -> usize {
    match done.owner {
        Owner::App { app, .. } => app,
        Owner::External(_) => panic!("an external request"),
    }
}

fn barrier_reply() -> Message {
    Message::V13(of13::Message::BarrierReply)
}

#[test]
fn xids_count_up_and_skip_zero_on_wrap() {
    let mut r = Requests::<Callback>::new();
    assert_eq!(r.next_xid(), 1);
    assert_eq!(r.next_xid(), 2);
    r.last_xid = u32::MAX - 1;
    assert_eq!(r.next_xid(), u32::MAX);
    assert_eq!(r.next_xid(), 1);
}

#[test]
fn multipart_parts_are_gathered_until_more_clears() {
    let t0 = Instant::now();
    let mut r = Requests::<Callback>::new();
    r.insert(7, 3, t0 + Duration::from_secs(1), noop());
    assert!(r.is_pending(7));
    assert!(!r.is_pending(8));
    assert!(r.on_reply(8, barrier_reply(), false, false).is_none());
    assert!(r.on_reply(7, barrier_reply(), true, false).is_none());
    assert!(r.on_reply(7, barrier_reply(), true, false).is_none());
    let done = r.on_reply(7, barrier_reply(), false, false).unwrap();
    assert_eq!(app_of(&done), 3);
    assert_eq!(done.reply, Reply::Messages(vec![barrier_reply(); 3]));
    assert!(r.is_empty());
}

#[test]
fn an_error_ends_the_request() {
    let t0 = Instant::now();
    let mut r = Requests::<Callback>::new();
    r.insert(7, 0, t0, noop());
    assert!(r.on_reply(7, barrier_reply(), true, false).is_none());
    let done = r.on_reply(7, barrier_reply(), false, true).unwrap();
    assert_eq!(done.reply, Reply::Error(barrier_reply()));
    assert!(r.is_empty());
}

#[test]
fn deadlines_expire_in_any_order() {
    let t0 = Instant::now();
    let mut r = Requests::<Callback>::new();
    r.insert(1, 0, t0 + Duration::from_millis(300), noop());
    r.insert(2, 1, t0 + Duration::from_millis(100), noop());
    assert_eq!(r.next_deadline(), Some(t0 + Duration::from_millis(100)));
    assert!(r.pop_expired(t0 + Duration::from_millis(99)).is_none());
    let d = r.pop_expired(t0 + Duration::from_millis(100)).unwrap();
    assert_eq!((app_of(&d), d.reply), (1, Reply::TimedOut));
    assert_eq!(r.next_deadline(), Some(t0 + Duration::from_millis(300)));
    assert!(r.pop_expired(t0 + Duration::from_millis(200)).is_none());
    assert_eq!(
        app_of(&r.pop_expired(t0 + Duration::from_secs(5)).unwrap()),
        0
    );
    assert_eq!(r.next_deadline(), None);
}

#[test]
fn a_leaving_switch_ends_every_request_oldest_first() {
    let t0 = Instant::now();
    let mut r = Requests::<Callback>::new();
    r.insert(1, 4, t0 + Duration::from_secs(9), noop());
    r.insert(2, 5, t0 + Duration::from_secs(1), noop());
    let first = r.pop_gone().unwrap();
    assert_eq!((app_of(&first), first.reply), (4, Reply::SwitchGone));
    assert_eq!(app_of(&r.pop_gone().unwrap()), 5);
    assert!(r.pop_gone().is_none());
    assert!(r.is_empty());
}

fn external(log: &std::sync::Arc<std::sync::Mutex<Vec<Reply>>>) -> Answer {
    let log = std::sync::Arc::clone(log);
    Answer::new(Box::new(move |r| log.lock().unwrap().push(r)))
}

#[test]
fn a_range_of_xids_is_one_request_answered_by_its_last_or_any_error() {
    let t0 = Instant::now();
    let log = std::sync::Arc::default();
    let mut r = Requests::<Callback>::new();
    let first = r.next_xids(3);
    assert_eq!(first, 1);
    assert_eq!(r.next_xid(), 4, "the range is taken");
    r.insert_external(1, 3, t0, external(&log));
    assert!(r.is_pending(1) && r.is_pending(2) && r.is_pending(3));
    assert!(!r.is_pending(0) && !r.is_pending(4));
    // A reply to an earlier message is dropped; the last one's ends it.
    assert!(r.on_reply(2, barrier_reply(), false, false).is_none());
    assert_eq!(r.len(), 1);
    let done = r.on_reply(3, barrier_reply(), false, false).unwrap();
    assert_eq!(done.reply, Reply::Messages(vec![barrier_reply()]));
    // An ERROR with the first xid ends another.
    r.insert_external(5, 6, t0, external(&log));
    let done = r.on_reply(5, barrier_reply(), false, true).unwrap();
    assert_eq!(done.reply, Reply::Error(barrier_reply()));
    assert!(r.is_empty());
}

#[test]
fn xid_ranges_never_wrap() {
    let mut r = Requests::<Callback>::new();
    r.last_xid = u32::MAX - 2;
    assert_eq!(r.next_xids(2), u32::MAX - 1);
    assert_eq!(r.last_xid, u32::MAX);
    r.last_xid = u32::MAX - 1;
    assert_eq!(r.next_xids(2), 1, "MAX, 0 would wrap: starts again at 1");
    assert_eq!(r.next_xid(), 3);
}

#[test]
fn an_answer_dropped_unanswered_says_switch_gone_and_a_defused_one_nothing() {
    let log: std::sync::Arc<std::sync::Mutex<Vec<Reply>>> = std::sync::Arc::default();
    drop(external(&log));
    assert_eq!(*log.lock().unwrap(), [Reply::SwitchGone]);
    log.lock().unwrap().clear();
    external(&log).send(Reply::TimedOut);
    assert_eq!(*log.lock().unwrap(), [Reply::TimedOut], "once");
    log.lock().unwrap().clear();
    drop(external(&log).defuse());
    assert!(log.lock().unwrap().is_empty());
}
