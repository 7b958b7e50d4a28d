use std::time::Instant;

use openflow::Version;

use super::*;
use crate::app::{App, Builder, Flow, MessageKind, Order, StartError};
use crate::events::{AppEvent, Publisher, Quarantine};
use crate::host::{AppHost, Core};
use crate::info::{Dpid, SwitchInfo};
use crate::services::Services;
use std::sync::Mutex;

fn info(dpid: u64, version: Version) -> SwitchInfo {
    SwitchInfo {
        n_buffers: 256,
        n_tables: 1,
        ..SwitchInfo::new(openflow::Dpid(dpid), version)
    }
}

#[test]
fn orders_sort_by_phase_then_number() {
    let mut v = [
        Order::observe(-5),
        Order::direct(3),
        Order::advise(10),
        Order::direct(-1),
    ];
    v.sort();
    assert_eq!(
        v,
        [
            Order::advise(10),
            Order::direct(-1),
            Order::direct(3),
            Order::observe(-5)
        ]
    );
}

#[test]
fn message_kinds_follow_each_versions_numbering() {
    use MessageKind::*;
    assert_eq!(MessageKind::from_wire(Version::V1_0, 10), None);
    assert_eq!(MessageKind::from_wire(Version::V1_3, 10), None);
    assert_eq!(
        MessageKind::from_wire(Version::V1_0, 17),
        Some(MultipartReply)
    );
    assert_eq!(
        MessageKind::from_wire(Version::V1_3, 19),
        Some(MultipartReply)
    );
    assert_eq!(
        MessageKind::from_wire(Version::V1_0, 19),
        Some(BarrierReply)
    );
    assert_eq!(
        MessageKind::from_wire(Version::V1_3, 21),
        Some(BarrierReply)
    );
    assert_eq!(MessageKind::from_wire(Version::V1_3, 12), Some(PortStatus));
    assert_eq!(MessageKind::from_wire(Version::V1_0, 25), Some(Other));
}

struct Nothing;
impl App for Nothing {
    type State = u32;
    fn name(&self) -> &'static str {
        "nothing"
    }
    fn build(&self, _: &mut Builder<Self>) {}
}

#[test]
fn an_empty_pipeline_counts_what_nobody_handles() {
    let p = AppHost::build(vec![Box::new(Nothing)], Services::new()).unwrap();
    assert_eq!(p.apps.app_names(), ["nothing"]);
    let mut sw = p.dispatcher.new_switch(info(1, Version::V1_3));
    let mut out = Vec::new();
    let now = Instant::now();
    p.dispatcher.switch_added(&mut sw, &mut out, now);
    // A 1.3 BARRIER_REPLY nobody asked for, and a short frame.
    p.dispatcher
        .handle(&mut sw, &[4, 21, 0, 8, 0, 0, 0, 9], &mut out, now);
    p.dispatcher.handle(&mut sw, &[4, 21, 0], &mut out, now);
    assert!(out.is_empty());
    let c = p.apps.counters();
    assert_eq!((c.unhandled, c.decode_errors), (1, 1));
    assert_eq!(sw.info().dpid, openflow::Dpid(1));
    p.dispatcher.disconnected(sw, "test", now);
}

#[test]
fn two_apps_with_one_name_are_refused() {
    let e =
        AppHost::build(vec![Box::new(Nothing), Box::new(Nothing)], Services::new()).unwrap_err();
    assert_eq!(e, StartError::DuplicateApp { app: "nothing" });
}

/// Timers, `Switches` and SwitchGone, driven by hand: a clock that moves only when told.
mod by_hand {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use openflow::model::{Action, PacketOut, PortNo};
    use openflow::{of13, Message};

    use super::*;
    use crate::requests::Reply;
    use crate::switches::{SendError, Switches};

    const MS: Duration = Duration::from_millis(1);

    /// Every 100 ms (no jitter) sends a PACKET_OUT to the next switch (dpid + 1)
    /// through `Switches`; every 50 ms globally, notes the switches it sees; on
    /// switch-added, asks for a barrier and notes how it ended.
    struct Clocked {
        log: Arc<Mutex<Vec<String>>>,
    }

    impl App for Clocked {
        type State = u32;
        fn name(&self) -> &'static str {
            "clocked"
        }
        fn build(&self, b: &mut Builder<Self>) {
            b.every(100 * MS, Duration::ZERO, |app, ctx, n| {
                *n += 1;
                let flood = [Action::output(PortNo::Flood)];
                let data = n.to_be_bytes();
                let po = PacketOut::unbuffered(&data, PortNo::Controller, &flood);
                let r = ctx.switches().send_packet_out(Dpid(ctx.dpid().0 + 1), &po);
                app.log
                    .lock()
                    .unwrap()
                    .push(format!("tick {} #{n} {r:?}", ctx.dpid().0));
            });
            b.every_global(50 * MS, |app, switches: &Switches, _| {
                app.log.lock().unwrap().push(format!(
                    "global {:?}",
                    switches.dpids().iter().map(|d| d.0).collect::<Vec<_>>()
                ));
            });
            b.on_switch_added(|_, ctx, _| {
                ctx.barrier(Duration::from_secs(60), |app: &Clocked, ctx, n, reply| {
                    app.log
                        .lock()
                        .unwrap()
                        .push(format!("barrier {} after {n}: {reply:?}", ctx.dpid().0));
                });
            });
        }
    }

    fn take(log: &Mutex<Vec<String>>) -> Vec<String> {
        std::mem::take(&mut *log.lock().unwrap())
    }

    #[test]
    fn timers_switches_and_switch_gone_without_a_network() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let app = Clocked {
            log: Arc::clone(&log),
        };
        let p = AppHost::build(vec![Box::new(app)], Services::new()).unwrap();
        let t0 = Instant::now();
        assert_eq!(
            p.dispatcher.global_tick(t0),
            Some(t0 + 50 * MS),
            "the clock starts"
        );

        let mut a = p.dispatcher.new_switch(info(1, Version::V1_0));
        let mut b = p.dispatcher.new_switch(info(2, Version::V1_3));
        let (mut out_a, mut out_b) = (Vec::new(), Vec::new());
        p.dispatcher.switch_added(&mut a, &mut out_a, t0);
        p.dispatcher.switch_added(&mut b, &mut out_b, t0);
        assert_eq!(p.switches().dpids(), [Dpid(1), Dpid(2)]);
        // The barriers went out; first runs are due at once (no jitter).
        assert_eq!(a.pending_requests(), 1);
        assert_eq!(a.next_deadline(), Some(t0));

        p.dispatcher.tick(&mut a, &mut out_a, t0);
        assert_eq!(take(&log), ["tick 1 #1 Ok(())"]);
        assert_eq!(a.next_deadline(), Some(t0 + 100 * MS));
        p.dispatcher.tick(&mut a, &mut out_a, t0 + 99 * MS);
        assert!(take(&log).is_empty());

        // What A sent B waits in B's queue until taken, in B's version, fresh xid.
        out_b.clear();
        p.dispatcher.take_queued(&mut b, &mut out_b, t0);
        let (xid, m) = Message::decode(&out_b).unwrap();
        assert!(xid > 1, "after the barrier's xid");
        assert!(
            matches!(m, Message::V13(of13::Message::PacketOut(ref po)) if po.data == [0, 0, 0, 1])
        );
        out_b.clear();
        p.dispatcher.take_queued(&mut b, &mut out_b, t0);
        assert!(out_b.is_empty());

        // B's first run, due at t0, runs late (once, not twice) and sends to dpid 3:
        // nobody. Its next run counts from when it ran.
        p.dispatcher.tick(&mut b, &mut out_b, t0 + 100 * MS);
        assert_eq!(take(&log), ["tick 2 #1 Err(NotConnected(Dpid(3)))"]);
        assert_eq!(b.next_deadline(), Some(t0 + 200 * MS));

        assert_eq!(p.dispatcher.global_tick(t0 + 49 * MS), Some(t0 + 50 * MS));
        assert!(take(&log).is_empty());
        assert_eq!(p.dispatcher.global_tick(t0 + 60 * MS), Some(t0 + 110 * MS));
        assert_eq!(take(&log), ["global [1, 2]"]);

        // A leaves: its barrier's callback gets SwitchGone, with A already unlisted.
        p.dispatcher.disconnected(a, "test", t0 + 150 * MS);
        assert_eq!(take(&log), ["barrier 1 after 1: SwitchGone"]);
        assert_eq!(p.switches().dpids(), [Dpid(2)]);
        let flood = [Action::output(PortNo::Flood)];
        let po = PacketOut::unbuffered(b"x", PortNo::Controller, &flood);
        assert_eq!(
            p.switches().send_packet_out(openflow::Dpid(1), &po),
            Err(SendError::NotConnected(crate::info::Dpid(1)))
        );
        p.dispatcher.disconnected(b, "test", t0 + 150 * MS);
        assert!(p.switches().is_empty());
        assert_eq!(
            take(&log),
            [format!("barrier 2 after 1: {:?}", Reply::SwitchGone)]
        );
    }

    #[test]
    fn a_hand_driven_switch_jitters_the_same_way_every_run() {
        struct Jittery;
        impl App for Jittery {
            type State = ();
            fn name(&self) -> &'static str {
                "jittery"
            }
            fn build(&self, b: &mut Builder<Self>) {
                b.every(100 * MS, 50 * MS, |_, _, _| {});
            }
        }
        let run = || {
            let p = AppHost::build(vec![Box::new(Jittery)], Services::new()).unwrap();
            let t0 = Instant::now();
            let mut sw = p.dispatcher.new_switch(info(7, Version::V1_3));
            let mut out = Vec::new();
            p.dispatcher.switch_added(&mut sw, &mut out, t0);
            let mut due = Vec::new();
            for _ in 0..5 {
                let t = sw.next_deadline().unwrap();
                due.push(t - t0);
                p.dispatcher.tick(&mut sw, &mut out, t);
            }
            due
        };
        let first = run();
        assert_eq!(first, run());
        assert!(
            first.windows(2).any(|w| w[1] - w[0] != 100 * MS),
            "{first:?}"
        );
    }

    #[test]
    fn the_core_provides_switches_and_nobody_else_may() {
        struct Impostor;
        impl App for Impostor {
            type State = ();
            fn name(&self) -> &'static str {
                "impostor"
            }
            fn build(&self, b: &mut Builder<Self>) {
                b.provide(Arc::new(Switches::new()));
            }
        }
        let e = AppHost::build(vec![Box::new(Impostor)], Services::new()).unwrap_err();
        assert!(
            matches!(
                e,
                StartError::DuplicateService {
                    first: "controller",
                    second: "impostor",
                    ..
                }
            ),
            "{e}"
        );
        let p = AppHost::build(Vec::new(), Services::new()).unwrap();
        assert!(p.services().get::<Switches>().is_some());
        assert_eq!(
            p.dispatcher.global_tick(Instant::now()),
            None,
            "no global timers"
        );
    }
}

/// Panics in its switch-added listener.
struct FailsOnAdd;
impl App for FailsOnAdd {
    type State = ();
    fn name(&self) -> &'static str {
        "fails_on_add"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|_, _, _| panic!("no room for switch"));
    }
}

#[test]
fn a_quarantine_keeps_its_first_panic_and_is_told_once() {
    let p = AppHost::build(
        vec![Box::new(Nothing), Box::new(FailsOnAdd)],
        Services::new(),
    )
    .unwrap();
    let told: Arc<Mutex<Vec<AppEvent>>> = Arc::default();
    let log = Arc::clone(&told);
    p.apps
        .subscribers()
        .subscribe(Box::new(move |e| log.lock().unwrap().push(e.clone())));
    assert_eq!(p.apps.quarantine_reason("fails_on_add"), None);
    let mut out = Vec::new();
    let mut sw = p.dispatcher.new_switch(info(7, Version::V1_3));
    p.dispatcher.switch_added(&mut sw, &mut out, Instant::now());
    let want = Quarantine {
        app: "fails_on_add",
        handler: "switch_added".into(),
        panic: "no room for switch".into(),
        dpid: Some(openflow::Dpid(7)),
    };
    assert_eq!(p.apps.quarantine_reason("fails_on_add"), Some(want.clone()));
    assert_eq!(p.apps.quarantine_reason("nothing"), None);
    assert_eq!(*told.lock().unwrap(), [AppEvent::Quarantined(want)]);
}

/// Counts barrier replies, and says hello on switch-added.
struct Counted;
impl App for Counted {
    type State = u32;
    fn name(&self) -> &'static str {
        "counted"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|_, _, _| {});
        b.on_message(MessageKind::BarrierReply, Order::direct(0), |_, _, n, _| {
            *n += 1;
            Flow::Continue
        });
    }
}

#[test]
fn handlers_are_counted_on_the_switch_and_published_with_one_call_in_64_timed() {
    let p = AppHost::build(vec![Box::new(Nothing), Box::new(Counted)], Services::new()).unwrap();
    let mut sw = p.dispatcher.new_switch(info(3, Version::V1_3));
    let mut out = Vec::new();
    let now = Instant::now();
    p.dispatcher.switch_added(&mut sw, &mut out, now);
    let mut frame = Vec::new();
    openflow::Message::V13(openflow::of13::Message::BarrierReply)
        .encode(0, &mut frame)
        .unwrap();
    for _ in 0..130 {
        p.dispatcher.handle(&mut sw, &frame, &mut out, now);
    }
    let calls = |p: &Core| -> Vec<(&str, &str, u64)> {
        p.apps
            .handler_timings()
            .iter()
            .map(|t| (t.app, t.handler, t.calls))
            .collect()
    };
    // Nothing shared is written per call: readers see the counts once published.
    assert_eq!(
        calls(&p),
        [
            ("counted", "BARRIER_REPLY", 0),
            ("counted", "switch_added", 0)
        ]
    );
    p.dispatcher.publish_timings(&mut sw);
    assert_eq!(
        calls(&p),
        [
            ("counted", "BARRIER_REPLY", 130),
            ("counted", "switch_added", 1)
        ]
    );
    let t = &p.apps.handler_timings()[0];
    // Calls 1, 65 and 129 were timed, standing for 1 + 64 + 64 calls.
    assert_eq!(t.timed_calls, 129);
    assert_eq!(t.buckets.iter().map(|b| b.1).sum::<u64>(), 129);
    assert!(t.time_secs > 0.0);
    // What a switch counted after its last publish is added when it leaves.
    p.dispatcher.handle(&mut sw, &frame, &mut out, now);
    p.dispatcher.disconnected(sw, "test", now);
    assert_eq!(p.apps.handler_timings()[0].calls, 131);
}

/// Counts the PACKET_INs it handles.
struct PacketIns;
impl App for PacketIns {
    type State = u32;
    fn name(&self) -> &'static str {
        "packet_ins"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), |_, _, n, _| {
            *n += 1;
            Flow::Continue
        });
    }
}

#[test]
fn packet_in_handlers_are_counted_exactly_and_timed_one_packet_in_1024() {
    let p = AppHost::build(vec![Box::new(PacketIns)], Services::new()).unwrap();
    let mut sw = p.dispatcher.new_switch(info(4, Version::V1_0));
    let mut out = Vec::new();
    let now = Instant::now();
    // An OpenFlow 1.0 PACKET_IN carrying a 60-byte IPv4 frame.
    let mut eth = vec![0u8; 60];
    eth[..6].copy_from_slice(&[0, 0, 0, 0, 0, 2]);
    eth[6..12].copy_from_slice(&[0, 0, 0, 0, 0, 1]);
    eth[12..14].copy_from_slice(&[0x08, 0x00]);
    let mut frame = vec![1, 10, 0, 0, 0, 0, 0, 0];
    frame.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 60, 0, 1, 0, 0]);
    frame.extend_from_slice(&eth);
    let len = frame.len() as u16;
    frame[2..4].copy_from_slice(&len.to_be_bytes());
    let n = 1 + crate::timing::PACKET_IN_SAMPLE_EVERY as u64 + 100;
    for _ in 0..n {
        p.dispatcher.handle(&mut sw, &frame, &mut out, now);
    }
    p.dispatcher.publish_timings(&mut sw);
    let t = p
        .apps
        .handler_timings()
        .into_iter()
        .find(|t| t.handler == "PACKET_IN")
        .expect("the PACKET_IN handler is listed");
    assert_eq!((t.app, t.calls), ("packet_ins", n));
    // The first PACKET_IN (standing for itself) and the 1025th (for the 1024 since)
    // were timed: the estimate covers every call up to the last timed one (one call in
    // 64 of the handler would have been 1089).
    assert_eq!(
        t.timed_calls,
        1 + u64::from(crate::timing::PACKET_IN_SAMPLE_EVERY)
    );
    assert_eq!(t.buckets.iter().map(|b| b.1).sum::<u64>(), t.timed_calls);
}

#[test]
fn orders_are_written_phase_colon_number_and_read_back() {
    for o in [Order::advise(-5), Order::direct(10), Order::observe(0)] {
        assert_eq!(o.to_string().parse::<Order>(), Ok(o));
    }
    assert_eq!(Order::direct(10).to_string(), "direct:10");
    assert_eq!("observe".parse::<Order>(), Ok(Order::observe(0)));
    assert!("sideways:1"
        .parse::<Order>()
        .unwrap_err()
        .contains("advise, direct or observe"));
    assert!("direct:x".parse::<Order>().unwrap_err().contains("integer"));
}

/// Counts PACKET_INs, and at each turn's end sends one BARRIER_REQUEST per PACKET_IN
/// counted in the turn (a batch answered at once).
struct Batcher;
impl App for Batcher {
    type State = u32;
    fn name(&self) -> &'static str {
        "batcher"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), |_, _, n, _| {
            *n += 1;
            Flow::Continue
        });
        b.on_turn_end(|_, ctx, n| {
            for _ in 0..std::mem::take(n) {
                ctx.barrier::<Batcher>(std::time::Duration::from_secs(1), |_, _, _, _| {});
            }
        });
    }
}

#[test]
fn turn_end_handlers_run_once_after_a_turn_with_messages_and_send_after_them() {
    let p = AppHost::build(vec![Box::new(Batcher)], Services::new()).unwrap();
    let mut sw = p.dispatcher.new_switch(info(5, Version::V1_0));
    let mut out = Vec::new();
    let now = Instant::now();
    let mut frame = vec![1, 10, 0, 0, 0, 0, 0, 0];
    frame.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 14, 0, 1, 0, 0]);
    frame.extend_from_slice(&[0u8; 14]);
    let len = frame.len() as u16;
    frame[2..4].copy_from_slice(&len.to_be_bytes());
    for _ in 0..3 {
        p.dispatcher.handle(&mut sw, &frame, &mut out, now);
    }
    assert!(out.is_empty(), "nothing is sent before the turn ends");
    p.dispatcher.turn_end(&mut sw, &mut out, now);
    let types: Vec<u8> = frames(&out).map(|f| f[1]).collect();
    assert_eq!(types, [18, 18, 18], "three BARRIER_REQUESTs (1.0 type 18)");
    // A turn with no message runs nothing.
    out.clear();
    p.dispatcher.turn_end(&mut sw, &mut out, now);
    assert!(out.is_empty());
    p.dispatcher.publish_timings(&mut sw);
    let t = p
        .apps
        .handler_timings()
        .into_iter()
        .find(|t| t.handler == "turn_end")
        .expect("the turn-end handler is listed with the app's timings");
    assert_eq!((t.app, t.calls), ("batcher", 1));
}
