//! The engine every WASM app runs on, and the clock that interrupts a guest that runs
//! too long.
//!
//! Epoch interruption: a ticker thread raises the engine's epoch every
//! [`Limits::tick`], and compiled code checks the epoch at function entries and loop
//! heads (a load and a compare: far cheaper than fuel's counting). Before each call
//! the store's deadline is set [`Limits::first_check_ticks`] epochs ahead. A deadline
//! reached does not trap at once: wall time is not the guest's doing (a worker
//! preempted on a busy machine would see a healthy app interrupted). It reads the
//! thread's CPU time and checks again a tick later; the call is interrupted once it
//! has used [`Limits::cpu`] of CPU since that first check. On an idle core a guest in
//! an endless loop is thus stopped after `first_check_ticks * tick + cpu` plus a tick
//! at most: 1 + 5 + 1 = 7 ms by default, inside the 10 ms the sandbox promises, with
//! 3 ms to spare for a ticker that runs late on a busy machine (each tick it is late
//! is CPU the guest keeps). Only calls that cross a tick read the clock (one call in
//! about 3,000 for a learning switch's 350 ns calls); the others pay nothing.
//!
//! The ticker runs only while an app is loaded (the runtime lives as long as its
//! apps) and stops with the last one.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wasmtime::{Config, Engine};

/// The sandbox's bounds for an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory of all of an app's instances together (default 64 MiB).
    pub memory: usize,
    /// The epoch ticker's period (default 1 ms).
    pub tick: Duration,
    /// Epochs a call runs before its CPU time is first read (default 1: the next tick).
    pub first_check_ticks: u64,
    /// CPU time a call may use after that first check (default 5 ms).
    pub cpu: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory: 64 << 20,
            tick: Duration::from_millis(1),
            first_check_ticks: 1,
            cpu: Duration::from_millis(5),
        }
    }
}

impl Limits {
    /// The longest a call runs on an idle core before it is interrupted (the ticker's
    /// lateness aside).
    pub fn max_call(&self) -> Duration {
        self.tick * (self.first_check_ticks as u32 + 1) + self.cpu
    }
}

/// The CPU time the calling thread has used (what [`Limits::cpu`] bounds).
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_THREAD_CPUTIME_ID exists on
    // every Linux (the call cannot fail with these arguments).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The wasmtime engine and its epoch ticker.
pub(crate) struct Runtime {
    /// Compiles and runs the apps' modules (epoch interruption on).
    pub(crate) engine: Engine,
    /// When this runtime (the WASM host) started: guests' `now-ms` counts from it.
    pub(crate) epoch: Instant,
    /// Tells the ticker to stop.
    stop: Arc<AtomicBool>,
    /// The ticker thread, joined on drop.
    ticker: Option<JoinHandle<()>>,
}

impl Runtime {
    pub(crate) fn new(tick: Duration) -> Result<Arc<Runtime>, String> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        if std::env::var_os("PHAROS_WASM_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        // Guests run on the worker's stack: a bounded share of it.
        config.max_wasm_stack(512 << 10);
        let engine = Engine::new(&config).map_err(|e| format!("wasm engine: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (engine, stop) = (engine.clone(), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("wasm-epoch".into())
                .spawn(move || {
                    while !stop.load(Relaxed) {
                        std::thread::sleep(tick);
                        engine.increment_epoch();
                    }
                })
                .map_err(|e| format!("wasm epoch ticker: {e}"))?
        };
        Ok(Arc::new(Runtime {
            engine,
            epoch: Instant::now(),
            stop,
            ticker: Some(ticker),
        }))
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}
