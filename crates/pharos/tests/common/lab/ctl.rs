//! Pharos in the test process: any set of apps plus an observer counting PACKET_INs by
//! kind and recording PORT_STATUS, its counters, and its REST API when a test wants it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use controller::app::{AnyApp, App, Builder, SwitchCtx};
use controller::controller::{Controller, Handle, NetConfig};
use controller::counters::CountersSnapshot;
use controller::host::{AppHost, Core};
use controller::info::{PortInfo, PortReason};
use controller::services::Services;

use testkit::wait_until;

/// How often the in-process controller publishes its counters: a snapshot is at most
/// this old.
pub const COUNTERS_EVERY: Duration = Duration::from_millis(100);

/// PACKET_INs by what they carry, counted by an observer after the apps (observers see
/// every PACKET_IN, even one an app stopped, and cannot change what happens to it); and
/// every PORT_STATUS, with the time it was handled.
///
/// IPv4 and ARP are the pingall's own traffic; LLDP is topology discovery's; the rest is
/// the hosts' kernels talking on their own (IPv6 router solicitations, MLD reports), or
/// frames a test sends, which a check about the pingall's pairs must not count.
#[derive(Debug, Default)]
pub struct PacketInKinds {
    pub ipv4_arp: AtomicU64,
    pub lldp: AtomicU64,
    pub other: AtomicU64,
    /// LLDP PACKET_INs by (dpid, in_port).
    pub lldp_at: Mutex<BTreeMap<(u64, u32), u64>>,
    /// Every PORT_STATUS, in the order handled.
    pub port_status: Mutex<Vec<PortStatusSeen>>,
}

/// One PORT_STATUS as the observer saw it.
#[derive(Debug, Clone)]
pub struct PortStatusSeen {
    pub at: Instant,
    pub dpid: u64,
    pub reason: PortReason,
    pub port: PortInfo,
}

impl PortStatusSeen {
    /// The port's link is down (`OFPPS_LINK_DOWN`, bit 0 in both versions) or it is
    /// administratively down (`OFPPC_PORT_DOWN`, bit 0), or it was deleted.
    pub fn down(&self) -> bool {
        self.reason == PortReason::Delete || self.port.state & 1 != 0 || self.port.config & 1 != 0
    }
}

/// The observer app feeding [`PacketInKinds`].
struct CountKinds(Arc<PacketInKinds>);

impl App for CountKinds {
    type State = ();

    fn name(&self) -> &'static str {
        "e2e_count_kinds"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.observe_packet_in(0, |app, ctx: &mut SwitchCtx, _, p| {
            let data = p.data();
            let ethertype = data.get(12..14).map(|t| u16::from_be_bytes([t[0], t[1]]));
            let counter = match ethertype {
                Some(0x0800 | 0x0806) => &app.0.ipv4_arp,
                Some(0x88cc) => {
                    *app.0
                        .lldp_at
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .entry((ctx.dpid().0, p.in_port()))
                        .or_default() += 1;
                    &app.0.lldp
                }
                _ => &app.0.other,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        });
        b.on_port_status(|app, ctx: &mut SwitchCtx, _, reason, port| {
            let seen = PortStatusSeen {
                at: Instant::now(),
                dpid: ctx.dpid().0,
                reason,
                port: port.clone(),
            };
            app.0
                .port_status
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(seen);
        });
    }
}

/// Makes the apps of a controller, afresh for every start (a restart gets new state).
pub type AppSet = Arc<dyn Fn() -> Vec<Box<dyn AnyApp>> + Send + Sync>;

/// The learning switch with its defaults, as `pharos run --apps learning_switch` has it.
pub fn learning_switch() -> AppSet {
    apps_by_name(&["learning_switch"])
}

/// The apps `names`, in order, each with its default parameters (`apps::by_name`).
pub fn apps_by_name(names: &[&'static str]) -> AppSet {
    let names = names.to_vec();
    Arc::new(move || {
        names
            .iter()
            .map(|n| apps::by_name(n, &toml::Table::new()).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    })
}

/// Pharos in the test process: the apps of an [`AppSet`] (by default the learning switch)
/// and the [`PacketInKinds`] observer, one worker, on 127.0.0.1.
pub struct Ctl {
    handle: Option<Arc<Handle>>,
    /// The REST API on this controller, when [`Ctl::start_api`] started it.
    api: Option<api::Server>,
    /// Its token and address, to start it again on a restart.
    api_at: Option<(String, SocketAddr)>,
    pipeline: Option<Arc<Core>>,
    /// What it runs (again, on a restart).
    apps: AppSet,
    /// PACKET_INs by kind, since this start.
    pub kinds: Arc<PacketInKinds>,
    /// The port it listens on (the same across restarts).
    pub port: u16,
}

impl Ctl {
    /// Starts the learning switch on `port` (0: a free one). A port just released can be
    /// refused for a moment: retried for 5 s.
    pub fn start(port: u16) -> Ctl {
        Ctl::start_with(port, learning_switch())
    }

    /// Starts `apps` on `port` (0: a free one), as [`Ctl::start`].
    pub fn start_with(port: u16, apps: AppSet) -> Ctl {
        let kinds = Arc::new(PacketInKinds::default());
        let observer = Box::new(CountKinds(Arc::clone(&kinds)));
        let mut set = apps();
        set.push(observer);
        let pipeline = Arc::new(AppHost::build(set, Services::new()).expect("pipeline"));
        let config = NetConfig {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], port))],
            workers: 1,
            counters_interval: COUNTERS_EVERY,
            ..NetConfig::default()
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let handle = loop {
            match Controller::start(&config, Arc::clone(&pipeline.dispatcher)) {
                Ok(h) => break h,
                Err(e) if Instant::now() < deadline => {
                    eprintln!("controller start on port {port}: {e}; retrying");
                    thread::sleep(Duration::from_millis(100));
                }
                Err(e) => {
                    pipeline.apps.stop();
                    panic!("cannot start the controller on port {port}: {e}");
                }
            }
        };
        let port = handle.local_addrs()[0].port();
        Ctl {
            handle: Some(Arc::new(handle)),
            api: None,
            api_at: None,
            pipeline: Some(pipeline),
            apps,
            kinds,
            port,
        }
    }

    /// The running pipeline (its services: `pipeline().services().get::<T>()`).
    pub fn pipeline(&self) -> &Arc<Core> {
        self.pipeline.as_ref().expect("the controller is running")
    }

    /// LLDP PACKET_INs so far.
    pub fn lldp_packet_ins(&self) -> u64 {
        self.kinds.lldp.load(Ordering::Relaxed)
    }

    /// LLDP PACKET_INs so far from port `port` of switch `dpid`.
    pub fn lldp_packet_ins_at(&self, dpid: u64, port: u32) -> u64 {
        self.kinds
            .lldp_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(dpid, port))
            .copied()
            .unwrap_or(0)
    }

    /// The PORT_STATUS messages handled so far.
    pub fn port_status(&self) -> Vec<PortStatusSeen> {
        self.kinds
            .port_status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `tcp:127.0.0.1:PORT`, for `pharos lab up --controller`.
    pub fn target(&self) -> String {
        format!("tcp:127.0.0.1:{}", self.port)
    }

    /// The counters (at most [`COUNTERS_EVERY`] old); empty once stopped.
    pub fn counters(&self) -> CountersSnapshot {
        self.handle
            .as_ref()
            .map(|h| h.counters())
            .unwrap_or_default()
    }

    /// IPv4 and ARP PACKET_INs so far (exact, no publishing delay).
    pub fn ipv4_arp_packet_ins(&self) -> u64 {
        self.kinds.ipv4_arp.load(Ordering::Relaxed)
    }

    /// Other PACKET_INs so far (IPv6 and the like; not LLDP).
    pub fn other_packet_ins(&self) -> u64 {
        self.kinds.other.load(Ordering::Relaxed)
    }

    /// The counters once `Handle::counters()` has caught up with the observer: its
    /// `packet_ins` equal to every PACKET_IN the observer saw (the snapshot is
    /// published every [`COUNTERS_EVERY`]; the hosts' chatter can land in between, so
    /// it is read again until both agree). Panics if they never agree within 3 s.
    pub fn agreeing_counters(&self) -> CountersSnapshot {
        let mut last = (0, 0);
        let agreed = wait_until(Duration::from_secs(3), || {
            let seen =
                self.ipv4_arp_packet_ins() + self.lldp_packet_ins() + self.other_packet_ins();
            let counted = self.counters().total.packet_ins;
            last = (counted, seen);
            counted == seen
        });
        assert!(
            agreed,
            "Handle::counters() says {} PACKET_INs, the observer saw {}",
            last.0, last.1
        );
        self.counters()
    }

    /// Stops it as `pharos run` does on SIGTERM (switches closed, threads joined, apps
    /// stopped). Harmless twice.
    pub fn stop(&mut self) {
        if let Some(api) = self.api.take() {
            api.shutdown();
        }
        if let Some(h) = self.handle.take() {
            h.shutdown();
        }
        if let Some(p) = self.pipeline.take() {
            p.apps.stop();
        }
    }

    /// Stops it and starts a new one (new app state, new counters) on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let api_at = self.api_at.take();
        *self = Ctl::start_with(self.port, Arc::clone(&self.apps));
        if let Some((token, at)) = api_at {
            self.start_api_on(&token, at);
        }
    }

    /// Serves the REST API of this controller on a free loopback port with `token`
    /// (as `pharos run --api` does); returns its address. A restart serves it again on
    /// the same address.
    pub fn start_api(&mut self, token: &str) -> SocketAddr {
        self.start_api_on(token, SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    fn start_api_on(&mut self, token: &str, listen: SocketAddr) -> SocketAddr {
        let core = api::Core::new(
            self.pipeline(),
            Arc::clone(self.handle.as_ref().expect("the controller is running")),
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        let server = loop {
            let settings = api::Settings {
                listen,
                token: api::auth::Token::new(token, api::auth::TokenSource::Env),
                read_auth: false,
                switch_timeout: Duration::from_secs(5),
                tls: None,
            };
            match api::Server::start(settings, core.clone()) {
                Ok(s) => break s,
                // The port of the API just stopped by a restart can be refused a moment.
                Err(e) if Instant::now() < deadline => {
                    eprintln!("API start on {listen}: {e}; retrying");
                    thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("cannot start the API on {listen}: {e}"),
            }
        };
        let at = server.local_addr();
        self.api = Some(server);
        self.api_at = Some((token.to_string(), at));
        at
    }

    /// Waits until `n` switches are connected; false at the deadline.
    pub fn wait_connected(&self, n: usize, timeout: Duration) -> bool {
        wait_until(timeout, || self.counters().switches.len() >= n)
    }
}

impl Drop for Ctl {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A loopback port free a moment ago (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
