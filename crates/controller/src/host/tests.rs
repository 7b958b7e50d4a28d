//! The lifecycle, driven by hand (no network): every change seen by a switch between
//! two messages, whole.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openflow::model::{Action, FlowMod, Match};
use openflow::Version;

use super::*;
use crate::app::{AnyApp, App, Builder, Flow, Order, Required, SwitchCtx};
use crate::driver::Driver;
use crate::events::{Publisher, Subscribers};
use crate::host::{AppHost, Core};
use crate::info::SwitchInfo;
use crate::requests::Reply;
use crate::services::Services;

fn info(dpid: u64) -> SwitchInfo {
    SwitchInfo {
        n_buffers: 256,
        n_tables: 1,
        ..SwitchInfo::new(openflow::Dpid(dpid), Version::V1_3)
    }
}

/// An OpenFlow 1.0 PACKET_IN carrying a 60-byte frame.
fn packet_in() -> Vec<u8> {
    let mut frame = vec![1, 10, 0, 0, 0, 0, 0, 0];
    frame.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 60, 0, 1, 0, 0]);
    frame.extend_from_slice(&[0u8; 60]);
    let len = frame.len() as u16;
    frame[2..4].copy_from_slice(&len.to_be_bytes());
    frame
}

/// What the test apps did, in order.
type Log = Arc<Mutex<Vec<String>>>;

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// Logs `name:packet_in:N` (N: PACKET_INs its state counted on this switch),
/// `name:init`, `name:timer`, `name:global`, `name:started`, `name:stopped`; stops
/// PACKET_IN when `stops`.
struct Logger {
    name: &'static str,
    log: Log,
    stops: bool,
}

impl Logger {
    fn boxed(name: &'static str, log: &Log, stops: bool) -> Box<dyn AnyApp> {
        Box::new(Logger {
            name,
            log: Arc::clone(log),
            stops,
        })
    }

    fn note(&self, what: &str) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{}:{what}", self.name));
    }
}

impl App for Logger {
    type State = u32;
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), |app, _, n, _| {
            *n += 1;
            app.note(&format!("packet_in:{n}"));
            match app.stops {
                true => Flow::Stop,
                false => Flow::Continue,
            }
        });
        b.on_initialize(|app, ctx, _| {
            app.note("init");
            let drop_all = FlowMod::add(Match::default(), &[] as &[Action]);
            ctx.send_flow_mod(&drop_all);
        });
        b.every(Duration::from_millis(100), Duration::ZERO, |app, _, _| {
            app.note("timer")
        });
        b.every_global(Duration::from_millis(100), |app, _, _| app.note("global"));
    }
    fn start(&self, _: &Services) -> Result<(), StartError> {
        self.note("started");
        Ok(())
    }
    fn stop(&self) {
        self.note("stopped");
    }
}

fn pipeline(apps: Vec<Box<dyn AnyApp>>) -> Core {
    let p = AppHost::build(apps, Services::new()).unwrap();
    // Nobody answers a switch driven by hand: the flow removal of a stopped app only
    // queues its request.
    p.apps.set_flow_removal_timeout(Duration::ZERO);
    p
}

#[test]
fn a_stopped_app_sees_no_message_timer_or_global_tick_and_a_started_one_starts_fresh() {
    let log: Log = Arc::default();
    let p = pipeline(vec![Logger::boxed("a", &log, false)]);
    let t0 = Instant::now();
    let mut sw = p.dispatcher.new_switch(info(1));
    let mut out = Vec::new();
    p.dispatcher.switch_added(&mut sw, &mut out, t0);
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, t0);
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, t0);
    p.dispatcher
        .tick(&mut sw, &mut out, t0 + Duration::from_millis(1));
    p.dispatcher.global_tick(t0);
    assert_eq!(
        p.dispatcher.global_tick(t0 + Duration::from_millis(100)),
        Some(t0 + Duration::from_millis(200))
    );
    assert_eq!(
        take(&log),
        [
            "a:started",
            "a:init",
            "a:packet_in:1",
            "a:packet_in:2",
            "a:timer",
            "a:global"
        ]
    );

    let change = p.apps.stop_app("a", false).unwrap();
    assert_eq!(change.stopped, ["a"]);
    assert_eq!(take(&log), ["a:stopped"]);
    let unhandled = p.apps.counters().unhandled;
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, t0);
    assert_eq!(
        p.apps.counters().unhandled,
        unhandled + 1,
        "no app handled it: counted"
    );
    assert_eq!(
        sw.next_deadline(),
        None,
        "its timers left the switch's schedule"
    );
    assert_eq!(p.dispatcher.global_tick(t0 + Duration::from_secs(1)), None);
    assert_eq!(take(&log), Vec::<String>::new());
    assert_eq!(p.apps.app_status()[0].state, AppState::Stopped);

    out.clear();
    p.apps.start_app("a").unwrap();
    // An idle switch reaches the change when told (a worker is told by Refresh).
    p.dispatcher.refresh(&mut sw, &mut out, t0);
    assert!(!out.is_empty(), "the initializer sent its FLOW_MOD");
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, t0);
    // Fresh state: counting starts again at 1.
    assert_eq!(take(&log), ["a:started", "a:init", "a:packet_in:1"]);
    assert!(sw.next_deadline().is_some(), "its timer runs again");
    assert_eq!(p.apps.app_status()[0].starts, 2);
}

#[test]
fn a_message_never_sees_half_a_change() {
    // Two apps that both see every PACKET_IN; another thread swaps their order and
    // stops and starts one of them as fast as it can. Every message must have run
    // with one plan, whole: [a, b], [b, a] or [b] (a stopped).
    let log: Log = Arc::default();
    let p = Arc::new(pipeline(vec![
        Logger::boxed("a", &log, false),
        Logger::boxed("b", &log, false),
    ]));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let changer = {
        let (p, done) = (Arc::clone(&p), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut n = 0;
            while !done.load(Ordering::Relaxed) {
                match n % 4 {
                    0 => p.apps.set_order(&["b", "a"]).unwrap(),
                    1 => p.apps.stop_app("a", false).unwrap(),
                    2 => p.apps.start_app("a").unwrap(),
                    _ => p.apps.set_order(&["a", "b"]).unwrap(),
                };
                n += 1;
            }
            n
        })
    };
    let now = Instant::now();
    let mut sw = p.dispatcher.new_switch(info(2));
    let mut out = Vec::new();
    p.dispatcher.switch_added(&mut sw, &mut out, now);
    let mut seen = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.len() < 3 && Instant::now() < deadline {
        for _ in 0..200 {
            take(&log);
            p.dispatcher.handle(&mut sw, &packet_in(), &mut out, now);
            out.clear();
            let mut one: Vec<String> = take(&log)
                .into_iter()
                .filter(|l| l.contains("packet_in"))
                .map(|l| l[..1].to_string())
                .collect();
            one.dedup();
            let one = one.join("");
            assert!(
                ["ab", "ba", "b"].contains(&one.as_str()),
                "a message ran with half a change: {one:?}"
            );
            seen.insert(one);
        }
    }
    done.store(true, Ordering::Relaxed);
    let changes = changer.join().unwrap();
    assert_eq!(
        seen.len(),
        3,
        "every plan was seen ({changes} changes made): {seen:?}"
    );
}

/// Provides `Counter`; `user` requires it.
struct Counter(AtomicUsize, Subscribers<usize>);
impl Publisher<usize> for Counter {
    fn subscribers(&self) -> &Subscribers<usize> {
        &self.1
    }
}

struct Provider;
impl App for Provider {
    type State = ();
    fn name(&self) -> &'static str {
        "provider"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.provide(Arc::new(Counter(
            AtomicUsize::new(0),
            Subscribers::default(),
        )));
    }
}

struct User {
    counter: Required<Counter>,
    log: Log,
    name: &'static str,
}
impl App for User {
    type State = ();
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.require_into(&self.counter);
        b.subscribe::<Counter, usize>(|app, n| {
            app.log
                .lock()
                .unwrap()
                .push(format!("{}:event:{n}", app.name))
        });
        b.on_packet_in(Order::direct(0), |app, _, _, _| {
            // The handle derefs: no OnceLock, no "not started" branch.
            app.counter.0.fetch_add(1, Ordering::Relaxed);
            Flow::Continue
        });
    }
}

fn user(name: &'static str, log: &Log) -> Box<dyn AnyApp> {
    Box::new(User {
        counter: Required::new(),
        log: Arc::clone(log),
        name,
    })
}

#[test]
fn stopping_a_provider_is_refused_naming_its_dependents_or_cascades_dependents_first() {
    let log: Log = Arc::default();
    let p = pipeline(vec![
        Box::new(Provider),
        user("user", &log),
        user("other", &log),
    ]);
    let status = p.apps.app_status();
    assert_eq!(status[0].required_by, ["user", "other"]);
    assert_eq!(status[1].requires, ["provider"]);
    let e = p.apps.stop_app("provider", false).unwrap_err();
    assert_eq!(
        e,
        LifecycleError::RequiredBy {
            app: "provider",
            dependents: vec!["user", "other"],
        }
    );
    assert!(e.to_string().contains("user, other"), "{e}");
    assert!(p
        .apps
        .app_status()
        .iter()
        .all(|s| s.state == AppState::Running));
    // Stopping a dependent is fine; starting it again too.
    p.apps.stop_app("other", false).unwrap();
    assert_eq!(p.apps.app_status()[0].required_by, ["user"]);
    let change = p.apps.stop_app("provider", true).unwrap();
    assert_eq!(change.stopped, ["user", "provider"]);
    let e = p.apps.start_app("user").unwrap_err();
    assert_eq!(
        e,
        LifecycleError::NeedsProviders {
            app: "user",
            providers: vec!["provider"],
        }
    );
    p.apps.start_app("provider").unwrap();
    p.apps.start_app("user").unwrap();
    assert_eq!(
        p.apps.stop_app("nobody", false).unwrap_err(),
        LifecycleError::UnknownApp("nobody".into())
    );
    assert_eq!(
        p.apps.start_app("user").unwrap_err(),
        LifecycleError::AlreadyRunning("user")
    );
}

#[test]
fn subscriptions_end_when_their_app_stops_and_are_made_again_when_it_starts() {
    let log: Log = Arc::default();
    let p = pipeline(vec![Box::new(Provider), user("user", &log)]);
    let counter = p.services().get::<Counter>().unwrap();
    let before = counter.subscribers().len();
    counter.subscribers().publish(|| vec![1]);
    assert_eq!(take(&log), ["user:event:1"]);
    p.apps.stop_app("user", false).unwrap();
    assert_eq!(
        counter.subscribers().len(),
        before - 1,
        "unsubscribed, not just muted"
    );
    counter.subscribers().publish(|| vec![2]);
    assert_eq!(take(&log), Vec::<String>::new());
    p.apps.start_app("user").unwrap();
    counter.subscribers().publish(|| vec![3]);
    assert_eq!(take(&log), ["user:event:3"]);
    // A required handle works in handlers.
    let mut sw = p.dispatcher.new_switch(info(3));
    p.dispatcher
        .switch_added(&mut sw, &mut Vec::new(), Instant::now());
    p.dispatcher
        .handle(&mut sw, &packet_in(), &mut Vec::new(), Instant::now());
    assert_eq!(counter.0.load(Ordering::Relaxed), 1);
}

#[test]
fn starting_an_app_runs_its_initializers_on_every_connected_switch() {
    let log: Log = Arc::default();
    let p = pipeline(vec![
        Logger::boxed("a", &log, false),
        Logger::boxed("b", &log, false),
    ]);
    p.apps.stop_app("b", false).unwrap();
    let now = Instant::now();
    let mut switches: Vec<_> = (10..13).map(|d| p.dispatcher.new_switch(info(d))).collect();
    for sw in &mut switches {
        p.dispatcher.switch_added(sw, &mut Vec::new(), now);
    }
    take(&log);
    p.apps.start_app("b").unwrap();
    for sw in &mut switches {
        let mut out = Vec::new();
        p.dispatcher.refresh(sw, &mut out, now);
        // One FLOW_MOD (type 14 in 1.3), stamped with b's cookie tag.
        assert_eq!(out[1], 14);
        let cookie = u64::from_be_bytes(out[8..16].try_into().unwrap());
        assert_eq!(crate::cookie::tag_of(cookie), crate::cookie::app_tag("b"));
    }
    assert_eq!(take(&log), ["b:started", "b:init", "b:init", "b:init"]);
}

/// Panics on its third PACKET_IN on a switch; sends a barrier on switch-added and
/// logs its reply.
struct Fragile {
    log: Log,
}
impl App for Fragile {
    type State = u32;
    fn name(&self) -> &'static str {
        "fragile"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), |app, _, n, _| {
            *n += 1;
            assert!(*n < 3, "third packet");
            app.log.lock().unwrap().push(format!("packet_in:{n}"));
            Flow::Stop
        });
        b.on_switch_added(|_, ctx: &mut SwitchCtx, _| {
            ctx.barrier::<Fragile>(Duration::from_secs(5), |app, _, _, r: Reply| {
                app.log.lock().unwrap().push(format!("reply:{r:?}"))
            });
        });
    }
}

#[test]
fn a_quarantined_app_is_restarted_with_fresh_state_and_its_old_requests_dropped() {
    let log: Log = Arc::default();
    let p = pipeline(vec![Box::new(Fragile {
        log: Arc::clone(&log),
    })]);
    let now = Instant::now();
    let mut sw = p.dispatcher.new_switch(info(5));
    let mut out = Vec::new();
    p.dispatcher.switch_added(&mut sw, &mut out, now);
    assert_eq!(sw.pending_requests(), 1, "the barrier waits");
    for _ in 0..3 {
        p.dispatcher.handle(&mut sw, &packet_in(), &mut out, now);
    }
    assert_eq!(p.apps.app_status()[0].state, AppState::Quarantined);
    assert!(p.apps.app_status()[0].quarantine.is_some());
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, now);
    assert_eq!(take(&log), ["packet_in:1", "packet_in:2"]);

    let change = p.apps.start_app("fragile").unwrap();
    assert_eq!(
        (change.stopped, change.started),
        (vec!["fragile"], vec!["fragile"])
    );
    let status = &p.apps.app_status()[0];
    assert_eq!(
        (status.state, status.starts, &status.quarantine),
        (AppState::Running, 2, &None)
    );
    assert_eq!(
        p.apps.panics("fragile"),
        Some(1),
        "panics are kept over restarts"
    );
    out.clear();
    p.dispatcher.refresh(&mut sw, &mut out, now);
    // The old barrier was dropped (its callback never runs), a new one sent.
    assert_eq!(sw.pending_requests(), 1);
    let new_xid = u32::from_be_bytes(out[4..8].try_into().unwrap());
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, now);
    assert_eq!(take(&log), ["packet_in:1"], "fresh state");
    // The new barrier's reply reaches the new start.
    let mut reply = vec![4, 21, 0, 8];
    reply.extend_from_slice(&new_xid.to_be_bytes());
    p.dispatcher.handle(&mut sw, &reply, &mut out, now);
    assert_eq!(take(&log).len(), 1);
}

#[test]
fn a_new_order_takes_effect_at_the_next_message() {
    let log: Log = Arc::default();
    let p = pipeline(vec![
        Logger::boxed("a", &log, true),
        Logger::boxed("b", &log, true),
    ]);
    let now = Instant::now();
    let mut sw = p.dispatcher.new_switch(info(6));
    p.dispatcher.switch_added(&mut sw, &mut Vec::new(), now);
    take(&log);
    p.dispatcher
        .handle(&mut sw, &packet_in(), &mut Vec::new(), now);
    assert_eq!(take(&log), ["a:packet_in:1"]);
    p.apps.set_order(&["b", "a"]).unwrap();
    assert_eq!(p.apps.app_names(), ["b", "a"]);
    p.dispatcher
        .handle(&mut sw, &packet_in(), &mut Vec::new(), now);
    assert_eq!(take(&log), ["b:packet_in:1"]);
    for bad in [&["a"][..], &["a", "a"], &["a", "b", "c"]] {
        assert!(
            matches!(p.apps.set_order(bad), Err(LifecycleError::BadOrder(_))),
            "{bad:?}"
        );
    }
}

#[test]
fn apps_added_at_run_time_can_be_replaced_and_removed_but_built_in_ones_only_stopped() {
    let log: Log = Arc::default();
    let p = pipeline(vec![Logger::boxed("a", &log, true)]);
    let now = Instant::now();
    let mut sw = p.dispatcher.new_switch(info(8));
    p.dispatcher.switch_added(&mut sw, &mut Vec::new(), now);
    take(&log);
    let loaded = intern("loaded");
    p.apps
        .add_app(Logger::boxed(loaded, &log, true), Some(0))
        .unwrap();
    assert_eq!(p.apps.app_names(), ["loaded", "a"]);
    p.dispatcher
        .handle(&mut sw, &packet_in(), &mut Vec::new(), now);
    assert_eq!(
        take(&log),
        ["loaded:started", "loaded:init", "loaded:packet_in:1"]
    );
    assert!(p.apps.app_status()[0].loaded);
    assert!(matches!(
        p.apps.add_app(Logger::boxed("a", &log, true), None),
        Err(LifecycleError::Duplicate(_))
    ));
    assert_eq!(
        p.apps.remove_app("a").unwrap_err(),
        LifecycleError::NotLoaded("a")
    );

    p.apps
        .replace_app("loaded", Logger::boxed(intern("loaded"), &log, true))
        .unwrap();
    assert_eq!(p.apps.app_names(), ["loaded", "a"], "in place");
    p.dispatcher
        .handle(&mut sw, &packet_in(), &mut Vec::new(), now);
    assert_eq!(
        take(&log),
        [
            "loaded:stopped",
            "loaded:started",
            "loaded:init",
            "loaded:packet_in:1"
        ]
    );

    p.apps.remove_app("loaded").unwrap();
    assert_eq!(p.apps.app_names(), ["a"]);
    p.dispatcher
        .handle(&mut sw, &packet_in(), &mut Vec::new(), now);
    assert_eq!(take(&log), ["loaded:stopped", "a:packet_in:1"]);
    // Its name is free again, and interned once.
    assert!(std::ptr::eq(intern("loaded"), loaded));
    p.apps
        .add_app(Logger::boxed(loaded, &log, true), None)
        .unwrap();
    assert_eq!(p.apps.app_names(), ["a", "loaded"]);
}

#[test]
fn stopping_an_app_asks_every_switch_to_delete_its_flows() {
    let log: Log = Arc::default();
    let p = pipeline(vec![Logger::boxed("a", &log, true)]);
    let now = Instant::now();
    let mut sw = p.dispatcher.new_switch(info(9));
    p.dispatcher.switch_added(&mut sw, &mut Vec::new(), now);
    // Nobody answers a switch driven by hand: the removal waits its whole timeout, which
    // the change reports apart from its time to reach every worker.
    let wait = Duration::from_millis(150);
    p.apps.set_flow_removal_timeout(wait);
    let c = p.apps.stop_app("a", false).unwrap();
    assert!(c.flows_took >= wait, "{c:?}");
    assert!(c.took < wait, "{c:?}");
    let mut out = Vec::new();
    p.dispatcher.take_queued(&mut sw, &mut out, now);
    // A 1.3 FLOW_MOD DELETE (command 3) whose cookie and mask name a's tag.
    assert_eq!(out[1], 14, "{out:?}");
    let cookie = u64::from_be_bytes(out[8..16].try_into().unwrap());
    let mask = u64::from_be_bytes(out[16..24].try_into().unwrap());
    assert_eq!(crate::cookie::tag_of(cookie), crate::cookie::app_tag("a"));
    assert_eq!(mask >> 48, 0xffff);
    assert_eq!(out[25], 3);
}

/// Its `stop` waits until the test lets it go.
struct SlowStop {
    stopping: Mutex<Option<std::sync::mpsc::Sender<()>>>,
    go: Mutex<std::sync::mpsc::Receiver<()>>,
}
impl App for SlowStop {
    type State = ();
    fn name(&self) -> &'static str {
        "slow_stop"
    }
    fn build(&self, _: &mut Builder<Self>) {}
    fn stop(&self) {
        if let Some(tx) = self.stopping.lock().unwrap().take() {
            let _ = tx.send(());
            let _ = self.go.lock().unwrap().recv();
        }
    }
}

#[test]
fn the_apps_state_is_read_without_waiting_for_a_change_in_progress() {
    let (stopping_tx, stopping) = std::sync::mpsc::channel();
    let (go, go_rx) = std::sync::mpsc::channel();
    let p = Arc::new(pipeline(vec![Box::new(SlowStop {
        stopping: Mutex::new(Some(stopping_tx)),
        go: Mutex::new(go_rx),
    })]));
    let stopper = {
        let p = Arc::clone(&p);
        std::thread::spawn(move || p.apps.stop_app("slow_stop", false))
    };
    // The change is in progress (its stop runs, the lifecycle's lock is held)...
    stopping.recv_timeout(Duration::from_secs(10)).unwrap();
    // ...and the readers answer: the app already left the plan.
    assert_eq!(p.apps.app_status()[0].state, AppState::Stopped);
    assert_eq!(p.apps.app_names(), ["slow_stop"]);
    assert_eq!(p.apps.is_quarantined("slow_stop"), Some(false));
    let _ = p.apps.handler_timings();
    go.send(()).unwrap();
    assert_eq!(stopper.join().unwrap().unwrap().stopped, ["slow_stop"]);
}

/// Counts the PACKET_INs it sees in a counter it publishes.
struct Counting {
    seen: crate::app::Counter,
}

impl App for Counting {
    type State = ();
    fn name(&self) -> &'static str {
        "counting"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.counter("packet_ins_seen", "PACKET_INs this app saw", &self.seen);
        // The same name again keeps the first.
        b.counter(
            "packet_ins_seen",
            "a second registration",
            &crate::app::Counter::new(),
        );
        b.on_packet_in(Order::direct(0), |a, _, _, _| {
            a.seen.inc();
            Flow::Continue
        });
    }
}

#[test]
fn apps_publish_counters_that_outlive_a_stop() {
    let seen = crate::app::Counter::new();
    let p = AppHost::build(
        vec![Box::new(Counting { seen: seen.clone() })],
        Services::new(),
    )
    .unwrap();
    let mut sw = p.dispatcher.new_switch(info(1));
    let (mut out, now) = (Vec::new(), Instant::now());
    for _ in 0..3 {
        p.dispatcher.handle(&mut sw, &packet_in(), &mut out, now);
    }
    let read = |p: &Core| {
        let c = p.apps.app_counters();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(
            (c[0].app, c[0].name, c[0].help),
            ("counting", "packet_ins_seen", "PACKET_INs this app saw")
        );
        c[0].value
    };
    assert_eq!(read(&p), 3);
    // Stopped, it counts nothing more but its counter stays listed with its value.
    p.apps.stop_app("counting", false).unwrap();
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, now);
    assert_eq!(read(&p), 3);
    p.apps.start_app("counting").unwrap();
    p.dispatcher.handle(&mut sw, &packet_in(), &mut out, now);
    assert_eq!((read(&p), seen.get()), (4, 4));
}
