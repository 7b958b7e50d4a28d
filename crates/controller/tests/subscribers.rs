//! Service subscribers run under their own app's panic guard (`Builder::subscribe`):
//! a subscriber that panics is quarantined, named as the culprit, and hears nothing
//! more; the app whose handler published the change, and the other subscribers, carry
//! on. Driven sans-IO through `Pipeline::handle`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use controller::app::PacketIn;
use controller::app::{AnyApp, App, Builder, Flow, Order, SwitchCtx};
use controller::events::{Publisher, Subscribers};
use controller::host::AppHost;
use controller::info::SwitchInfo;
use controller::services::{Services, StartError};
use openflow::Version;
use testkit::frames;

/// A service that numbers the PACKET_INs its app saw, and tells its subscribers.
#[derive(Default)]
struct Gauge {
    subscribers: Subscribers<u32>,
}

impl Publisher<u32> for Gauge {
    fn subscribers(&self) -> &Subscribers<u32> {
        &self.subscribers
    }
}

/// Publishes one event per PACKET_IN, from its handler (inside its own guard).
#[derive(Default)]
struct Publishing {
    gauge: Arc<Gauge>,
    /// PACKET_INs handled (shared with the test).
    handled: Arc<AtomicU32>,
}

impl App for Publishing {
    type State = ();
    fn name(&self) -> &'static str {
        "publishing"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.provide(Arc::clone(&self.gauge));
        b.on_packet_in(Order::direct(0), Publishing::packet_in);
    }
}

impl Publishing {
    fn packet_in(&self, _: &mut SwitchCtx, _: &mut (), _: &PacketIn) -> Flow {
        let n = self.handled.fetch_add(1, Relaxed) + 1;
        self.gauge.subscribers.publish(|| vec![n]);
        Flow::Continue
    }
}

/// Hears every event; panics on event 2 when `fragile`.
struct Listening {
    name: &'static str,
    fragile: bool,
    /// Events heard (shared with the test).
    heard: Arc<AtomicU32>,
}

impl App for Listening {
    type State = ();
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.subscribe::<Gauge, _>(|app, &n| {
            app.heard.fetch_add(1, Relaxed);
            assert!(!(app.fragile && n == 2), "{} cannot take event 2", app.name);
        });
    }
}

fn listening(name: &'static str, fragile: bool) -> (Box<Listening>, Arc<AtomicU32>) {
    let heard = Arc::new(AtomicU32::new(0));
    let app = Listening {
        name,
        fragile,
        heard: Arc::clone(&heard),
    };
    (Box::new(app), heard)
}

fn packet_in() -> Vec<u8> {
    frames::packet_in(Version::V1_0, 1, &[0; 14])
}

fn info() -> SwitchInfo {
    SwitchInfo {
        peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
        ..SwitchInfo::new(openflow::Dpid(7), Version::V1_0)
    }
}

#[test]
fn a_panicking_subscriber_is_quarantined_and_the_publisher_carries_on() {
    let publishing = Publishing::default();
    let handled = Arc::clone(&publishing.handled);
    let (fragile, fragile_heard) = listening("fragile", true);
    let (calm, calm_heard) = listening("calm", false);
    let apps: Vec<Box<dyn AnyApp>> = vec![Box::new(publishing), fragile, calm];
    let p = AppHost::build(apps, Services::new()).expect("the pipeline starts");
    let mut sw = p.dispatcher.new_switch(info());
    let (frame, mut out, now) = (packet_in(), Vec::new(), Instant::now());
    for _ in 0..3 {
        p.dispatcher.handle(&mut sw, &frame, &mut out, now);
    }
    // The subscriber that panicked is the one quarantined, and counted.
    assert_eq!(p.apps.is_quarantined("fragile"), Some(true));
    assert_eq!(p.apps.panics("fragile"), Some(1));
    assert_eq!(p.apps.counters().handler_panics, 1);
    // The publisher handled every PACKET_IN, before and after the panic.
    assert_eq!(p.apps.is_quarantined("publishing"), Some(false));
    assert_eq!(p.apps.panics("publishing"), Some(0));
    assert_eq!(handled.load(Relaxed), 3);
    // The other subscriber heard every event; the quarantined one none after its panic.
    assert_eq!(p.apps.is_quarantined("calm"), Some(false));
    assert_eq!(calm_heard.load(Relaxed), 3);
    assert_eq!(fragile_heard.load(Relaxed), 2);
}

#[test]
fn subscribing_to_a_service_no_one_provides_fails_start_up_naming_both() {
    let apps: Vec<Box<dyn AnyApp>> = vec![listening("lonely", false).0];
    match AppHost::build(apps, Services::new()) {
        Err(StartError::MissingService { service, app }) => {
            assert!(service.ends_with("Gauge"), "{service}");
            assert_eq!(app, "lonely");
        }
        other => panic!("expected a missing service, got {:?}", other.map(|_| ())),
    }
}
