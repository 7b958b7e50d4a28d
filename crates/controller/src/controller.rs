//! Wiring: [`Controller::start`] binds the listeners, spawns the admission thread and N
//! workers, attaches the workers to the driver (so the core's `Switches` service and the
//! app host can reach them), starts the timer thread (for the apps' global timers), and
//! returns a
//! [`Handle`] for the bound addresses, the counters and an orderly shutdown (stop the
//! timers, stop accepting, close every switch firing switch-removed, join).

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::Waker;
use tracing::info;

use crate::admission::{Admission, AdmissionConfig};
use crate::command::{Control, WorkerHandle};
use crate::conn::{BackpressureConfig, ConnLimits, KeepaliveConfig};
use crate::counters::{CountersSnapshot, Published};
use crate::driver::Driver;
use crate::handshake::HandshakeConfig;
use crate::info::Dpid;
use crate::sync::lock;
use crate::tls::TlsSettings;
use crate::worker::{Worker, WorkerConfig};

/// Every network setting of the controller core (`config::Config` maps onto it).
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Addresses to listen on (port 0 picks a free port; see [`Handle::local_addrs`]).
    pub listen: Vec<SocketAddr>,
    /// TLS settings of the address at the same index of `listen` (`None`, or no entry:
    /// clear text). The files are read by [`Controller::start`].
    pub tls: Vec<Option<TlsSettings>>,
    /// Worker threads (at least 1).
    pub workers: usize,
    /// Open connections allowed at once (handshaking and established).
    pub max_connections: usize,
    /// Handshake deadline, pending caps, versions, miss_send_len, barrier.
    pub handshake: HandshakeConfig,
    /// Echo keepalive.
    pub keepalive: KeepaliveConfig,
    /// The hard cap on bytes queued for one switch (see `Config::output_buffer_limit`).
    pub output_buffer_limit: usize,
    /// When a switch is no longer read, read again, and given up on.
    pub backpressure: BackpressureConfig,
    /// Longest message accepted from a switch (at most 65535).
    pub max_message_len: usize,
    /// How often counters are printed (and at most how stale a snapshot is, capped
    /// at 500 ms).
    pub counters_interval: Duration,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            listen: vec![
                SocketAddr::from(([0, 0, 0, 0], 6653)),
                SocketAddr::from(([0, 0, 0, 0], 6633)),
            ],
            tls: Vec::new(),
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_connections: 20_000,
            handshake: HandshakeConfig::default(),
            keepalive: KeepaliveConfig::default(),
            output_buffer_limit: 16 << 20,
            backpressure: BackpressureConfig::default(),
            max_message_len: 65535,
            counters_interval: Duration::from_secs(10),
        }
    }
}

/// The timer thread's flags and the condition variable it sleeps on.
type TimerStop = Arc<(Mutex<TimerFlags>, Condvar)>;

/// What wakes the timer thread.
#[derive(Debug, Default)]
struct TimerFlags {
    /// Shut down.
    stopped: bool,
    /// The apps changed: ask the driver again when the next timer is due.
    kicked: bool,
}

/// Runs the driver's global timers on their own thread (`pharos-timers`), sleeping
/// until the next one is due, until the apps change (an app started at run time may
/// bring timers: [`timer_waker`] wakes the thread) or until told to stop.
fn start_timers<D: Driver>(driver: &Arc<D>, stop: TimerStop) -> io::Result<Timers> {
    // The first call starts the timers' clock.
    let first = driver.global_tick(Instant::now());
    let far = || Instant::now() + Duration::from_secs(3600);
    let mut next = first.unwrap_or_else(far);
    let (driver, flag) = (Arc::clone(driver), Arc::clone(&stop));
    let thread = std::thread::Builder::new()
        .name("pharos-timers".into())
        .spawn(move || {
            let (flags, wake) = &*flag;
            let mut flags = lock(flags);
            loop {
                let now = Instant::now();
                if flags.stopped {
                    return;
                }
                if now < next && !flags.kicked {
                    flags = wake
                        .wait_timeout(flags, next - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    continue;
                }
                flags.kicked = false;
                drop(flags);
                // Timers not yet due are not run: a kick only asks when the next is.
                let after = driver.global_tick(now);
                flags = lock(&flag.0);
                // None: no timer runs (none, or their apps stopped or quarantined):
                // sleep until kicked or stopped.
                next = after.unwrap_or_else(far);
            }
        })?;
    Ok(Timers { stop, thread })
}

/// What wakes the timer thread of `stop` when the apps change.
fn timer_waker(stop: &TimerStop) -> Box<dyn Fn() + Send + Sync> {
    let kick = Arc::clone(stop);
    Box::new(move || {
        lock(&kick.0).kicked = true;
        kick.1.notify_all();
    })
}

/// The running timer thread.
#[derive(Debug)]
struct Timers {
    /// Set to stop it; the condition variable wakes it.
    stop: TimerStop,
    /// Joined at shutdown.
    thread: JoinHandle<()>,
}

impl Timers {
    fn stop(self) {
        lock(&self.stop.0).stopped = true;
        self.stop.1.notify_all();
        let _ = self.thread.join();
    }
}

/// The controller core (see the module doc).
#[derive(Debug)]
pub struct Controller;

impl Controller {
    /// Binds every listen address, starts admission and the workers.
    pub fn start<D: Driver>(config: &NetConfig, driver: Arc<D>) -> io::Result<Handle> {
        // The TLS files first: a bad one stops start-up before anything listens.
        let mut tls = Vec::new();
        for (i, settings) in config.tls.iter().enumerate().take(config.listen.len()) {
            let Some(settings) = settings else {
                tls.push(None);
                continue;
            };
            let server = crate::tls::server_config(settings).map_err(|e| {
                let key = match e.key {
                    "" => "tls".to_string(),
                    k => format!("tls.{k}"),
                };
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("listen[{i}] ({}) {key}: {}", config.listen[i], e.reason),
                )
            })?;
            tls.push(Some(server));
        }
        let mut listeners = Vec::new();
        let mut local_addrs = Vec::new();
        for addr in &config.listen {
            let l = bind_listener(*addr)
                .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?;
            l.set_nonblocking(true)?;
            local_addrs.push(l.local_addr()?);
            listeners.push(mio::net::TcpListener::from_std(l));
        }
        let n = config.workers.max(1);
        let published = Arc::new(Published::new(n));
        let registry = Arc::new(Mutex::new(HashMap::new()));
        // `Config::validate` keeps low < high <= cap; a NetConfig built by hand is
        // brought into that order rather than refused.
        let mut backpressure = config.backpressure.clone();
        backpressure.high_water = backpressure
            .high_water
            .clamp(1, config.output_buffer_limit.max(1));
        backpressure.low_water = backpressure.low_water.min(backpressure.high_water - 1);
        let limits = ConnLimits {
            max_message_len: config.max_message_len.min(65535),
            output_buffer_limit: config.output_buffer_limit,
            backpressure,
            keepalive: config.keepalive.clone(),
        };
        let publish_interval = config.counters_interval.min(Duration::from_millis(500));
        let mut workers = Vec::new();
        let mut threads = Vec::new();
        for index in 0..n {
            let cfg = WorkerConfig {
                index,
                limits: limits.clone(),
                publish_interval,
            };
            let (worker, handle) = Worker::new(
                cfg,
                Arc::clone(&driver),
                registry.clone(),
                published.workers[index].clone(),
            )?;
            threads.push(
                std::thread::Builder::new()
                    .name(format!("pharos-worker-{index}"))
                    .spawn(move || worker.run())?,
            );
            workers.push(handle);
        }
        let timer_stop: TimerStop = Arc::default();
        driver.attach(&workers, timer_waker(&timer_stop));
        let timers = Some(start_timers(&driver, timer_stop)?);
        let stop = Arc::new(AtomicBool::new(false));
        let (admission, admission_waker) = Admission::new(
            AdmissionConfig {
                max_connections: config.max_connections,
                handshake: config.handshake.clone(),
                counters_interval: config.counters_interval,
            },
            listeners,
            workers.clone(),
            registry,
            published.clone(),
            stop.clone(),
        )?;
        let mut admission = admission;
        admission.set_tls(tls);
        let admission_thread = std::thread::Builder::new()
            .name("pharos-admission".into())
            .spawn(move || admission.run())?;
        let tls_ports: Vec<SocketAddr> = local_addrs
            .iter()
            .zip(&config.tls)
            .filter(|(_, t)| t.is_some())
            .map(|(a, _)| *a)
            .collect();
        info!(listen = ?local_addrs, tls = ?tls_ports, workers = n, "controller started");
        Ok(Handle {
            local_addrs,
            published,
            workers,
            stop,
            admission_waker,
            timers: Mutex::new(timers),
            threads: Mutex::new(Some((admission_thread, threads))),
        })
    }
}

/// A running controller.
#[derive(Debug)]
pub struct Handle {
    /// The bound addresses (the real ports when port 0 was asked for).
    local_addrs: Vec<SocketAddr>,
    /// The counters snapshots.
    published: Arc<Published>,
    /// The workers, to tell them to shut down.
    workers: Vec<WorkerHandle>,
    /// Tells admission to stop.
    stop: Arc<AtomicBool>,
    /// Wakes admission to see `stop`.
    admission_waker: Arc<Waker>,
    /// The global timers' thread, if any app has one; taken by the first shutdown.
    timers: Mutex<Option<Timers>>,
    /// The threads to join; taken by the first shutdown.
    #[allow(clippy::type_complexity)]
    threads: Mutex<Option<(JoinHandle<()>, Vec<JoinHandle<()>>)>>,
}

impl Handle {
    /// The addresses actually bound, in the order of the config's `listen`.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// The number of worker threads serving switches.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// The counters: admission's are current, the workers' at most 500 ms old.
    pub fn counters(&self) -> CountersSnapshot {
        self.published.snapshot()
    }

    /// One switch's counters (at most 500 ms old), without merging the rest; `None` when
    /// it is not connected or its worker has not published since it connected.
    pub fn switch_counters(&self, dpid: Dpid) -> Option<crate::counters::SwitchSnapshot> {
        self.published.switch(dpid)
    }

    /// Orderly shutdown: stop the global timers, stop accepting (pending handshakes
    /// closed), then every worker closes its switches (switch-removed with reason
    /// "shutdown") and exits; joins all threads. Calling it twice is harmless.
    pub fn shutdown(&self) {
        if let Some(timers) = lock(&self.timers).take() {
            timers.stop();
        }
        let Some((admission, workers)) = lock(&self.threads).take() else {
            return;
        };
        self.stop.store(true, Ordering::Release);
        let _ = self.admission_waker.wake();
        let _ = admission.join();
        for w in &self.workers {
            w.control(Control::Shutdown);
        }
        for t in workers {
            let _ = t.join();
        }
        info!("controller stopped");
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;

/// The kernel's queue of connections not yet accepted. std's `bind` asks for 128: a
/// thousand switches connecting at once overflow it, and the kernel drops their SYNs, to
/// be sent again a second later. The kernel caps this at `net.core.somaxconn` (4096 by
/// default).
const LISTEN_BACKLOG: i32 = 4096;

/// A listening socket on `addr` with [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`, as std sets).
fn bind_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    set_defer_accept(&socket, DEFER_ACCEPT_SECS)?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// How long the kernel holds a new connection that has sent nothing before handing it
/// to accept (`TCP_DEFER_ACCEPT`, in seconds; the kernel rounds up to its SYN-ACK
/// retransmissions: one, after a second).
///
/// A switch sends its HELLO (or its TLS ClientHello) as soon as it connects (OpenFlow
/// 1.3.0 §6.3.1: both sides "immediately"), so it is accepted with its first bytes
/// already there: admission can tell it from a silent connection with one peek (see
/// `admission::opens_like_a_switch`). A silent connection costs the controller nothing
/// for that second, and one reset meanwhile (a flood keeping a bounded number of
/// connections) never reaches accept at all. A peer that waits for our HELLO first is
/// accepted a second late, not refused.
const DEFER_ACCEPT_SECS: libc::c_int = 1;

fn set_defer_accept(socket: &socket2::Socket, secs: libc::c_int) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid socket descriptor, and a pointer to a c_int with its size.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&secs as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
