//! Apps at run time on real Open vSwitch (issue 13's lab acceptance): a mixed `linear,3`
//! lab (s1 and s3 speak OpenFlow 1.0, s2 1.3) with the default apps, plus three small
//! test apps that show the app order and a quarantine:
//!
//! * `routing` stopped: every flow whose cookie carries routing's tag leaves every switch
//!   (1.3 by cookie and mask, 1.0 by strict deletes of the flows read), the flows of the
//!   other apps stay, and pings fail; started again: pingall 100%.
//! * two apps swapped in the app order: the first PACKET_IN handled after the change
//!   runs them in the new order, none before it.
//! * an app quarantined by a panic is restarted: it runs again, fresh.
//!
//! Needs root and Open vSwitch like `tests/lab.rs` (`PHAROS_SKIP_LAB=1` skips it,
//! recorded); own lab name (`i13c`) and `PHAROS_LAB_DIR`.

mod common;
use common::lab as harness;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use controller::app::{AnyApp, App, Builder, Flow, Order};
use controller::host::AppState;
use harness::{dump_flows, enabled, parse_topo, serial, wait_until, Lab, Of, Topo};

const CONNECT: Duration = Duration::from_secs(20);

/// The app order each PACKET_IN was seen in: one entry per message, the names of the
/// `Witness` apps in the order they ran (a single worker runs messages one at a time).
type Seen = Arc<Mutex<Vec<Vec<&'static str>>>>;

/// Notes its name on every PACKET_IN, before every other app.
struct Witness {
    name: &'static str,
    seen: Seen,
}

impl App for Witness {
    type State = ();
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::advise(-100), |app, _, _, _| {
            let mut seen = app.seen.lock().unwrap();
            match seen.last_mut() {
                // The other witness started this message's entry.
                Some(e) if e.len() == 1 && e[0] != app.name => e.push(app.name),
                _ => seen.push(vec![app.name]),
            }
            Flow::Continue
        });
    }
}

/// Panics on PACKET_IN while armed; counts the PACKET_INs it saw otherwise.
struct Tripwire {
    armed: Arc<AtomicBool>,
    seen: Arc<AtomicU64>,
}

impl App for Tripwire {
    type State = ();
    fn name(&self) -> &'static str {
        "tripwire"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::advise(-200), |app, _, _, _| {
            assert!(!app.armed.load(Ordering::Relaxed), "tripwire armed");
            app.seen.fetch_add(1, Ordering::Relaxed);
            Flow::Continue
        });
    }
}

/// The cookie tags (top 16 bits) of the flows on `switch`.
fn tags(lab: &Lab, topo: &Topo, switch: &str) -> Vec<u16> {
    dump_flows(lab, topo, switch)
        .iter()
        .map(|f| {
            f.line
                .split([',', ' '])
                .find_map(|p| p.strip_prefix("cookie=0x"))
                .map_or(0, |c| {
                    (u64::from_str_radix(c, 16).expect("a hex cookie") >> 48) as u16
                })
        })
        .collect()
}

/// pingall until 100% (the first may race discovery or learning), or panics.
fn pingall_ok(lab: &Lab, when: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = lab.pingall();
        if out.ok() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "pingall {when} is not 100%:\n{out}"
        );
    }
}

#[test]
fn apps_stopped_started_reordered_and_restarted_on_open_vswitch() {
    if !enabled("apps_stopped_started_reordered_and_restarted_on_open_vswitch") {
        return;
    }
    let _lock = serial();
    let seen: Seen = Arc::default();
    let armed = Arc::new(AtomicBool::new(false));
    let tripped = Arc::new(AtomicU64::new(0));
    let apps = {
        let (seen, armed, tripped) = (Arc::clone(&seen), Arc::clone(&armed), Arc::clone(&tripped));
        Arc::new(move || {
            let mut v: Vec<Box<dyn AnyApp>> = vec![
                Box::new(Tripwire {
                    armed: Arc::clone(&armed),
                    seen: Arc::clone(&tripped),
                }),
                Box::new(Witness {
                    name: "first",
                    seen: Arc::clone(&seen),
                }),
                Box::new(Witness {
                    name: "second",
                    seen: Arc::clone(&seen),
                }),
            ];
            for name in apps::DEFAULT_APPS {
                v.push(apps::by_name(name, &toml::Table::new()).unwrap());
            }
            v
        })
    };
    let lab = Lab::with_apps("i13c", Of::Mixed, apps, false);
    lab.up("linear,3");
    let topo = parse_topo(&lab.show());
    assert!(lab.ctl.wait_connected(3, CONNECT), "the 3 switches connect");
    let p = Arc::clone(lab.ctl.pipeline());
    pingall_ok(&lab, "on a fresh lab");

    // 1. routing's flows, and only they, leave every switch when it stops.
    let routing = controller::cookie::app_tag("routing");
    let topology = controller::cookie::app_tag("topology");
    let switches: Vec<String> = topo.switches.keys().cloned().collect();
    for s in &switches {
        let t = tags(&lab, &topo, s);
        assert!(
            t.contains(&routing),
            "{s} has routing's flows after pingall: {t:x?}"
        );
    }
    let change = p.apps.stop_app("routing", false).expect("routing stops");
    assert_eq!(change.stopped, ["routing"]);
    for s in &switches {
        let t = tags(&lab, &topo, s);
        assert!(
            !t.contains(&routing),
            "{s} still has routing's flows: {t:x?}"
        );
        assert!(
            t.contains(&topology),
            "{s} lost topology's flows too: {t:x?}"
        );
    }
    let out = lab.pingall();
    assert!(!out.ok(), "pings must fail with routing stopped:\n{out}");
    let change = p.apps.start_app("routing").expect("routing starts");
    eprintln!("routing started; on every worker in {:?}", change.took);
    pingall_ok(&lab, "after routing started again");

    // 2. The app order: first, second -> second, first, from the next message on.
    let before = |seen: &Seen| seen.lock().unwrap().iter().filter(|e| e.len() == 2).count();
    assert!(
        wait_until(CONNECT, || before(&seen) > 0),
        "the witnesses saw PACKET_INs"
    );
    let n0 = before(&seen);
    let order: Vec<&str> = p
        .apps
        .app_names()
        .into_iter()
        .map(|n| match n {
            "first" => "second",
            "second" => "first",
            other => other,
        })
        .collect();
    p.apps.set_order(&order).expect("a permutation");
    let n1 = seen.lock().unwrap().len();
    // LLDP probes keep coming: wait for messages after the change.
    assert!(
        wait_until(CONNECT, || before(&seen) >= n1 + 3),
        "PACKET_INs after the change"
    );
    let log = seen.lock().unwrap().clone();
    assert!(
        log[..n0].iter().all(|e| e == &["first", "second"]),
        "{log:?}"
    );
    assert!(
        log[n1..]
            .iter()
            .filter(|e| e.len() == 2)
            .all(|e| e == &["second", "first"]),
        "a message after the change ran in the old order: {log:?}"
    );

    // 3. A quarantined app restarted.
    armed.store(true, Ordering::Relaxed);
    assert!(
        wait_until(CONNECT, || p.apps.is_quarantined("tripwire") == Some(true)),
        "the armed tripwire panics on the next PACKET_IN"
    );
    let status = |p: &controller::host::Core| {
        p.apps
            .app_status()
            .into_iter()
            .find(|a| a.name == "tripwire")
            .unwrap()
    };
    assert_eq!(status(&p).state, AppState::Quarantined);
    pingall_ok(&lab, "with tripwire quarantined (the others carry on)");
    armed.store(false, Ordering::Relaxed);
    let n = tripped.load(Ordering::Relaxed);
    let change = p.apps.restart_app("tripwire").expect("restarts");
    assert_eq!(
        (change.stopped, change.started),
        (vec!["tripwire"], vec!["tripwire"])
    );
    let s = status(&p);
    assert_eq!(
        (s.state, s.starts, s.quarantine),
        (AppState::Running, 2, None)
    );
    assert!(
        wait_until(CONNECT, || tripped.load(Ordering::Relaxed) > n),
        "the restarted tripwire runs again"
    );
    pingall_ok(&lab, "at the end");
}
