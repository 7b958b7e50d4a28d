//! The engine every WASM app runs on, and the clock that interrupts a guest that runs
//! too long.
//!
//! Epoch interruption: a ticker thread raises the engine's epoch every
//! [`Limits::tick`]; before each call into a guest the store's deadline is set
//! [`Limits::deadline_ticks`] epochs ahead, and compiled code checks the epoch at
//! function entries and loop heads, trapping once the deadline passed. A call is thus
//! stopped after between `(deadline_ticks - 1) * tick` and `deadline_ticks * tick` of
//! running (plus the ticker's lateness): 4 to 5 ms by default, inside the 10 ms the
//! sandbox promises. The check costs a load and a compare per loop iteration, far
//! less than fuel's counting. The ticker runs only while an app is loaded (the
//! [`Runtime`] lives as long as its apps) and stops with the last one.

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
    /// Epochs a call may run before it is interrupted (default 5).
    pub deadline_ticks: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory: 64 << 20,
            tick: Duration::from_millis(1),
            deadline_ticks: 5,
        }
    }
}

impl Limits {
    /// The longest a call runs before it is interrupted (ticker lateness aside).
    pub fn max_call(&self) -> Duration {
        self.tick * self.deadline_ticks as u32
    }
}

/// The wasmtime engine and its epoch ticker.
pub(crate) struct Runtime {
    pub(crate) engine: Engine,
    /// When the controller (this runtime) started: guests' `now-ms` counts from it.
    pub(crate) epoch: Instant,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl Runtime {
    pub(crate) fn new(tick: Duration) -> Result<Arc<Runtime>, String> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
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
