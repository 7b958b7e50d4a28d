//! Starting a real controller on loopback for a test, and a recording app.
#![allow(dead_code)] // each test file uses a different part of it

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use controller::app::PacketIn;
use controller::app::{AnyApp, App, Builder, Flow, Order, SwitchCtx};
use controller::config::{CoreConfig, KeepaliveConfig};
use controller::controller::{Controller, Handle};
use controller::host::{AppHost, Core};
use controller::info::SwitchInfo;
use controller::services::Services;

/// A generous bound for anything that should happen "now" on loopback.
pub const T: Duration = Duration::from_secs(10);

/// A config for tests: loopback, a free port, two workers, the defaults otherwise.
pub fn test_config() -> CoreConfig {
    CoreConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 2,
        keepalive: KeepaliveConfig {
            interval: Duration::from_secs(5),
            max_unanswered: 3,
        },
        ..CoreConfig::default()
    }
}

/// A controller running for one test; shut down on drop.
pub struct Running {
    handle: Option<Handle>,
    pub pipeline: Arc<Core>,
    /// Where switches connect.
    pub addr: SocketAddr,
}

impl Running {
    pub fn start(config: &CoreConfig, apps: Vec<Box<dyn AnyApp>>) -> Running {
        init_logs();
        let pipeline = Arc::new(AppHost::build(apps, Services::new()).expect("apps start"));
        let handle = Controller::start(&config.net(), Arc::clone(&pipeline.dispatcher))
            .expect("controller starts");
        let addr = handle.local_addrs()[0];
        Running {
            handle: Some(handle),
            pipeline,
            addr,
        }
    }

    pub fn handle(&self) -> &Handle {
        self.handle.as_ref().expect("running")
    }

    /// Orderly shutdown: switches closed, switch-removed fired, threads joined.
    pub fn shutdown(mut self) {
        if let Some(h) = self.handle.take() {
            h.shutdown();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            h.shutdown();
        }
    }
}

/// What the recorder saw, shared with the test.
#[derive(Debug, Default)]
pub struct Seen {
    /// Switches added, in order.
    pub added: Mutex<Vec<SwitchInfo>>,
    /// Switches removed: dpid.
    pub removed: Mutex<Vec<u64>>,
    /// Per-switch states dropped (the state's Drop ran).
    pub states_dropped: AtomicUsize,
    /// PACKET_INs seen, all switches.
    pub packet_ins: AtomicUsize,
}

impl Seen {
    pub fn added_dpids(&self) -> Vec<u64> {
        self.added
            .lock()
            .unwrap()
            .iter()
            .map(|i| i.dpid.0)
            .collect()
    }

    pub fn info(&self, dpid: u64) -> Option<SwitchInfo> {
        self.added
            .lock()
            .unwrap()
            .iter()
            .find(|i| i.dpid == openflow::Dpid(dpid))
            .cloned()
    }

    pub fn removed_dpids(&self) -> Vec<u64> {
        self.removed.lock().unwrap().clone()
    }
}

/// An app that records switch-added, switch-removed and packet-ins, as an observer.
pub struct Recorder {
    pub seen: Arc<Seen>,
}

/// The recorder's per-switch state: counts its own drop.
#[derive(Default)]
pub struct RecorderState {
    seen: Option<Arc<Seen>>,
}

impl Drop for RecorderState {
    fn drop(&mut self) {
        if let Some(seen) = &self.seen {
            seen.states_dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Recorder {
    pub fn new() -> (Recorder, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        (
            Recorder {
                seen: Arc::clone(&seen),
            },
            seen,
        )
    }
}

impl App for Recorder {
    type State = RecorderState;

    fn name(&self) -> &'static str {
        "recorder"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|app, ctx, state| {
            state.seen = Some(Arc::clone(&app.seen));
            app.seen.added.lock().unwrap().push(ctx.info().clone());
        });
        b.on_switch_removed(|app, info, state| {
            app.seen.removed.lock().unwrap().push(info.dpid.0);
            drop(state);
        });
        b.observe_packet_in(0, |app, _, _, _| {
            app.seen.packet_ins.fetch_add(1, Ordering::SeqCst);
        });
    }
}

/// An app whose PACKET_IN handler panics (it runs first, as an advisor).
pub struct Panicker;

impl App for Panicker {
    type State = ();

    fn name(&self) -> &'static str {
        "panicker"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::advise(0), Panicker::packet_in);
    }
}

impl Panicker {
    fn packet_in(&self, _: &mut SwitchCtx, _: &mut (), _: &PacketIn) -> Flow {
        panic!("panicker: this app fails on every PACKET_IN (on purpose, in a test)");
    }
}

/// Polls `cond` until it holds or `timeout` passes; returns whether it held. For
/// state the controller changes on its own threads (there is nothing to read with a
/// timeout); the interval is short (5 ms) and the deadline is the bound: the test kit's
/// `poll_until`.
pub fn eventually(timeout: Duration, cond: impl FnMut() -> bool) -> bool {
    testkit::wait::poll_until(timeout, Duration::from_millis(5), cond)
}

/// Every log line of this test process, to check that a reason was logged.
pub fn logs() -> String {
    String::from_utf8_lossy(&LOG.get_or_init(Default::default).lock().unwrap()).into_owned()
}

static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Sends the process's logs (info and up, debug for the controller) to [`logs`].
pub fn init_logs() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let buf = Arc::clone(LOG.get_or_init(Default::default));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("controller=debug,info"))
            .with_ansi(false)
            .with_writer(move || LogWriter(Arc::clone(&buf)))
            .try_init();
    });
}
