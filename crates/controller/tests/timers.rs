//! Timers over real TCP: a per-switch timer runs on the switch's worker first within the
//! jitter, then every period ± jitter, sends through its `ctx`, and stops when the
//! switch leaves; a global timer runs every period with the switches at hand; a
//! panicking timer quarantines its app; and an idle controller with timers sleeps
//! between them (its workers' poll turns stay few).

mod harness;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use controller::app::{App, Builder};
use controller::config::CoreConfig;
use emu::{is_packet_out, Emu, Spec};
use harness::{eventually, test_config, Running, T};
use openflow::model::{Action, PacketOut, PortNo};
use testkit::emu;

const PERIOD: Duration = Duration::from_millis(200);
const JITTER: Duration = Duration::from_millis(50);
/// How late a timer may run on a busy shared machine (it is never early).
const LATE: Duration = Duration::from_millis(150);

/// What the timers saw.
#[derive(Default)]
struct Seen {
    /// Per switch: when it was added (`ctx.now()`).
    added: Mutex<Vec<(u64, Instant)>>,
    /// Per-switch timer runs: (dpid, `ctx.now()`, run number on that switch).
    runs: Mutex<Vec<(u64, Instant, u32)>>,
    /// Global timer runs: (time, switches connected then).
    global: Mutex<Vec<(Instant, usize)>>,
}

struct Ticker {
    seen: Arc<Seen>,
}

impl App for Ticker {
    /// Runs on this switch so far.
    type State = u32;

    fn name(&self) -> &'static str {
        "ticker"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|app, ctx, _| {
            app.seen
                .added
                .lock()
                .unwrap()
                .push((ctx.dpid().0, ctx.now()));
        });
        b.every(PERIOD, JITTER, |app, ctx, n| {
            *n += 1;
            app.seen
                .runs
                .lock()
                .unwrap()
                .push((ctx.dpid().0, ctx.now(), *n));
            // What an LLDP prober does: a packet out of every port.
            let ports: Vec<u32> = ctx.info().ports.iter().map(|p| p.port_no).collect();
            for port in ports {
                let out = [Action::output(PortNo::from_u32(port))];
                let data = n.to_be_bytes();
                ctx.send_packet_out(&PacketOut::unbuffered(&data, PortNo::Controller, &out));
            }
        });
        b.every_global(Duration::from_millis(100), |app, switches, now| {
            app.seen.global.lock().unwrap().push((now, switches.len()));
        });
    }
}

fn ticker() -> (Ticker, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    (
        Ticker {
            seen: Arc::clone(&seen),
        },
        seen,
    )
}

fn runs_on(seen: &Seen, dpid: u64) -> Vec<Instant> {
    let runs = seen.runs.lock().unwrap();
    runs.iter().filter(|r| r.0 == dpid).map(|r| r.1).collect()
}

#[test]
fn a_switch_timer_runs_every_period_with_jitter_until_the_switch_leaves() {
    let (app, seen) = ticker();
    let ctl = Running::start(&test_config(), vec![Box::new(app)]);
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(1), T).unwrap();
    let other = Emu::connect_and_handshake(ctl.addr, Spec::v10(2), T).unwrap();
    let other = other.in_background();

    // The timer's PACKET_OUTs arrive: one per port per run.
    let mut outs = 0;
    while outs < 4 * 6 {
        sw.wait_for(T, is_packet_out).unwrap();
        outs += 1;
    }
    let runs = runs_on(&seen, 1);
    assert!(runs.len() >= 6, "{} runs", runs.len());
    let added = seen
        .added
        .lock()
        .unwrap()
        .iter()
        .find(|a| a.0 == 1)
        .unwrap()
        .1;
    let first = runs[0] - added;
    assert!(
        first <= JITTER + LATE,
        "first run {first:?} after the switch came"
    );
    let gaps: Vec<Duration> = runs.windows(2).map(|w| w[1] - w[0]).collect();
    for g in &gaps {
        assert!(
            *g >= PERIOD - JITTER && *g <= PERIOD + JITTER + LATE,
            "gaps {gaps:?}"
        );
    }
    let (lo, hi) = (gaps.iter().min().unwrap(), gaps.iter().max().unwrap());
    assert!(*hi - *lo > Duration::from_millis(2), "no jitter: {gaps:?}");
    // The other switch has its own schedule.
    assert!(eventually(T, || runs_on(&seen, 2).len() >= 2));

    // Gone: its timer stops (the other switch's goes on).
    drop(sw);
    let switches = Arc::clone(ctl.pipeline.switches());
    assert!(eventually(T, || !switches.is_connected(openflow::Dpid(1))));
    let after_leaving = runs_on(&seen, 1).len();
    let other_before = runs_on(&seen, 2).len();
    // Three more periods of the other switch's timer: time for switch 1's to have run.
    assert!(eventually(T, || runs_on(&seen, 2).len() >= other_before + 3));
    assert_eq!(runs_on(&seen, 1).len(), after_leaving);
    drop(other.take());
}

#[test]
fn a_global_timer_runs_every_period_with_the_switches() {
    let (app, seen) = ticker();
    let ctl = Running::start(&test_config(), vec![Box::new(app)]);
    let sw = Emu::connect_and_handshake(ctl.addr, Spec::v10(7), T)
        .unwrap()
        .in_background();
    assert!(eventually(T, || {
        let g = seen.global.lock().unwrap();
        g.len() >= 4 && g.iter().any(|&(_, n)| n == 1)
    }));
    let times: Vec<Instant> = seen.global.lock().unwrap().iter().map(|g| g.0).collect();
    for w in times.windows(2) {
        assert!(w[1] - w[0] >= Duration::from_millis(100), "{times:?}");
    }
    // Stopped with the controller.
    ctl.shutdown();
    let n = seen.global.lock().unwrap().len();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(seen.global.lock().unwrap().len(), n);
    drop(sw.take());
}

/// A per-switch timer that panics.
struct Faulty;

impl App for Faulty {
    type State = ();

    fn name(&self) -> &'static str {
        "faulty"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.every(Duration::from_millis(20), Duration::ZERO, |_, _, _| {
            panic!("faulty: a per-switch timer fails (on purpose, in a test)")
        });
    }
}

/// A global timer that panics.
struct FaultyGlobal {
    runs: Arc<AtomicUsize>,
}

impl App for FaultyGlobal {
    type State = ();

    fn name(&self) -> &'static str {
        "faulty_global"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.every_global(Duration::from_millis(20), |app, _, _| {
            app.runs.fetch_add(1, Ordering::SeqCst);
            panic!("faulty_global: a global timer fails (on purpose, in a test)")
        });
    }
}

#[test]
fn a_panicking_timer_quarantines_its_app_and_nothing_else() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (app, seen) = ticker();
    let ctl = Running::start(
        &test_config(),
        vec![
            Box::new(Faulty),
            Box::new(FaultyGlobal {
                runs: Arc::clone(&runs),
            }),
            Box::new(app),
        ],
    );
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(3), T).unwrap();
    assert!(eventually(T, || ctl.pipeline.apps.is_quarantined("faulty")
        == Some(true)
        && ctl.pipeline.apps.is_quarantined("faulty_global")
            == Some(true)));
    // The switch and the other app carry on.
    sw.ping(T).unwrap();
    let before = runs_on(&seen, 3).len();
    assert!(eventually(T, || runs_on(&seen, 3).len() >= before + 2));
    assert_eq!(ctl.pipeline.apps.is_quarantined("ticker"), Some(false));
    // Each ran once, though the ticker's periods show their own came round again:
    // quarantined at its first panic.
    assert_eq!(ctl.pipeline.apps.panics("faulty"), Some(1));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn an_idle_controller_with_timers_sleeps_between_them() {
    let (app, seen) = ticker();
    let config = CoreConfig {
        // Published often, so the poll-turn counts are fresh.
        counters_interval: Duration::from_millis(100),
        ..test_config()
    };
    let ctl = Running::start(&config, vec![Box::new(app)]);
    let sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(9), T)
        .unwrap()
        .in_background();
    assert!(eventually(T, || runs_on(&seen, 9).len() >= 2));
    let turns = || ctl.handle().counters().total.poll_turns;
    let (t0, runs0) = (turns(), runs_on(&seen, 9).len());
    let quiet = Duration::from_secs(2);
    std::thread::sleep(quiet);
    let (turns, runs) = (turns() - t0, runs_on(&seen, 9).len() - runs0);
    // What wakes the two workers in 2 s: ~10 timer runs (and the background switch
    // reading their PACKET_OUTs makes no traffic back), 2 × 20 publishes of the
    // counters. A worker that spun would turn thousands of times.
    println!("{turns} poll turns and {runs} timer runs in {quiet:?}");
    assert!(runs >= 5, "{runs} runs");
    assert!(turns < 150, "{turns} poll turns in {quiet:?}");
    drop(sw.take());
}
