//! Services' change events, and the panic guard that runs each subscriber as its own
//! app.
//!
//! A service that tells others of its changes (the topology's links, the device table's
//! hosts) holds a [`Subscribers`] list and implements [`Publisher`]. An app subscribes
//! in [`crate::app::Builder::subscribe`]: the pipeline knows then which app each
//! callback belongs to, and runs it under that app's [`AppGuard`]. A panicking
//! subscriber quarantines its own app (named in the error log and in
//! `AppHost::is_quarantined`), not the app whose handler published
//! the change, which goes on; a quarantined subscriber hears nothing more.
//!
//! ```text
//! publisher's handler ─► service.update ─► Subscribers::publish ─┬─ guard(app B) ─► B's callback
//!   (publisher's guard)                    (order lock held)     └─ guard(app C) ─► C's callback
//! ```

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{Relaxed, Release},
};
use std::sync::{Arc, Mutex, RwLock};

use crate::info::Dpid;

/// Why an app was quarantined: the first panic caught in its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantine {
    /// The app.
    pub app: &'static str,
    /// The code that panicked: the handler's kind (`"PACKET_IN"`, `"timer"`,
    /// `"service event"`, ...).
    pub handler: String,
    /// The panic's message (`"(non-string panic payload)"` when it had none).
    pub panic: String,
    /// The switch it ran for, if it ran for one.
    pub dpid: Option<Dpid>,
}

/// What happens to apps, as subscribers of the app host's
/// [`Publisher`] see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppEvent {
    /// The app panicked and none of its code runs again (until it is restarted): told
    /// once per start of the app, by the thread that caught the first panic.
    Quarantined(Quarantine),
    /// The app started at run time (`AppHost::start_app`); every
    /// worker has it.
    Started(&'static str),
    /// The app stopped at run time; none of its code runs any more.
    Stopped(&'static str),
    /// The app was added at run time (`AppHost::add_app`).
    Loaded(&'static str),
    /// The app was removed at run time.
    Unloaded(&'static str),
}

/// One app's health, shared by the plan (which the dispatcher checks before every handler)
/// and the app's guards (which set it from wherever the app's code runs).
#[derive(Debug)]
pub(crate) struct AppHealth {
    /// The app, for the log.
    pub(crate) name: &'static str,
    /// Set when the app panicked: none of its code runs again (the plan's entry
    /// for the app holds the same flag).
    pub(crate) quarantined: Arc<AtomicBool>,
    /// Panics caught in the app's code (shared with the plan's entry).
    pub(crate) panics: Arc<AtomicU64>,
    /// The dispatcher's count of every app's panics (`handler_panics`).
    pub(crate) all_panics: Arc<AtomicU64>,
    /// Why it was quarantined (set once, by the first panic).
    pub(crate) reason: Mutex<Option<Quarantine>>,
    /// The app host's app events, told of the quarantine.
    pub(crate) events: Arc<Subscribers<AppEvent>>,
}

/// Runs an app's code outside the pipeline's handlers (its service subscriptions)
/// under the same rule as its handlers: a panic quarantines the app, is logged naming
/// it and counted; a quarantined app's code is skipped. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppGuard {
    /// Shared with the plan's entry for the app.
    health: Arc<AppHealth>,
}

impl AppGuard {
    /// A guard for one start of the app `name` (a restart gets a new one, not
    /// quarantined), adding its panics to `panics` (the app's, over its starts) and
    /// `all_panics`, and telling its quarantine to `events`.
    pub(crate) fn new(
        name: &'static str,
        panics: Arc<AtomicU64>,
        all_panics: Arc<AtomicU64>,
        events: Arc<Subscribers<AppEvent>>,
    ) -> AppGuard {
        AppGuard {
            health: Arc::new(AppHealth {
                name,
                quarantined: Arc::new(AtomicBool::new(false)),
                panics,
                all_panics,
                reason: Mutex::new(None),
                events,
            }),
        }
    }

    pub(crate) fn health(&self) -> &AppHealth {
        &self.health
    }

    /// The app guarded.
    pub fn app(&self) -> &'static str {
        self.health.name
    }

    /// Whether the app is quarantined.
    pub fn is_quarantined(&self) -> bool {
        is_quarantined(&self.health.quarantined)
    }

    /// Why the app is quarantined (`None` while it runs).
    pub fn quarantine_reason(&self) -> Option<Quarantine> {
        crate::sync::lock(&self.health.reason).clone()
    }

    /// Runs `f` unless the app is quarantined; a panic in it quarantines the app.
    /// `None`: not run, or panicked. `what` names the code in the log.
    pub fn run<R>(&self, what: &str, f: impl FnOnce() -> R) -> Option<R> {
        if self.is_quarantined() {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => Some(r),
            Err(payload) => {
                quarantine(&self.health, None, what, payload.as_ref());
                None
            }
        }
    }
}

/// Set by the first quarantine in this process, and never cleared: until then no app's
/// flag can be set, so the hot paths read this one line (which stays in cache) instead
/// of each app's flag (three or four lines per PACKET_IN, which a profile of the default
/// apps under cbench's load found missing cache: 4.5% of the worker).
static QUARANTINED_EVER: AtomicBool = AtomicBool::new(false);

/// Whether `flag`, an app's quarantine flag, is set. Cheap while no app of this process
/// was ever quarantined.
#[inline]
pub(crate) fn is_quarantined(flag: &AtomicBool) -> bool {
    QUARANTINED_EVER.load(Relaxed) && flag.load(Relaxed)
}

/// Quarantines the app of `health` after a panic with `payload` in `what` (on `dpid`
/// when the code ran for a switch): flagged, counted, logged at error level; the first
/// panic is kept as the reason and told to the app events' subscribers.
#[cold]
pub(crate) fn quarantine(
    health: &AppHealth,
    dpid: Option<Dpid>,
    what: &str,
    payload: &(dyn Any + Send),
) {
    health.panics.fetch_add(1, Relaxed);
    health.all_panics.fetch_add(1, Relaxed);
    let panic = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic payload)");
    tracing::error!(
        app = health.name,
        dpid = dpid.map(tracing::field::display),
        message = what,
        panic,
        "handler panicked: app quarantined on every switch"
    );
    // The reason is stored before the flag is raised, so whoever sees the app
    // quarantined also finds why (a reader that saw the flag first once found no reason).
    let first = {
        let mut reason = crate::sync::lock(&health.reason);
        let first = reason.is_none();
        if first {
            *reason = Some(Quarantine {
                app: health.name,
                handler: what.to_string(),
                panic: panic.to_string(),
                dpid,
            });
        }
        first.then(|| reason.clone()).flatten()
    };
    QUARANTINED_EVER.store(true, Relaxed);
    health.quarantined.store(true, Release);
    if let Some(q) = first {
        health.events.publish(|| vec![AppEvent::Quarantined(q)]);
    }
}

/// A subscriber's callback.
pub type Callback<E> = Box<dyn Fn(&E) + Send + Sync>;

/// One subscriber: its callback, and the guard of the app it belongs to (`None` for a
/// subscriber outside the pipeline, such as a test's probe: its panic is the
/// publisher's).
struct Subscriber<E> {
    /// What [`Subscribers::unsubscribe`] names it by.
    id: u64,
    guard: Option<AppGuard>,
    call: Callback<E>,
}

/// A service whose changes apps can subscribe to with
/// [`crate::app::Builder::subscribe`].
pub trait Publisher<E>: Send + Sync + 'static {
    /// The service's subscriber list.
    fn subscribers(&self) -> &Subscribers<E>;
}

/// The subscriber list of a service: [`Subscribers::publish`] runs a change and then
/// tells every subscriber of each event it produced, holding an order lock across both,
/// so subscribers see changes in the order they were made even when several workers
/// change the service at once.
pub struct Subscribers<E> {
    /// In the order they subscribed.
    list: RwLock<Vec<Subscriber<E>>>,
    /// Held from a change until its events are told.
    order: Mutex<()>,
    /// The last subscriber id given.
    last_id: AtomicU64,
}

impl<E> Default for Subscribers<E> {
    fn default() -> Self {
        Subscribers {
            list: RwLock::new(Vec::new()),
            order: Mutex::new(()),
            last_id: AtomicU64::new(0),
        }
    }
}

impl<E> std::fmt::Debug for Subscribers<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = self.list.read().unwrap_or_else(|e| e.into_inner());
        f.debug_list()
            .entries(list.iter().map(|s| s.guard.as_ref().map(AppGuard::app)))
            .finish()
    }
}

impl<E> Subscribers<E> {
    /// Adds a subscriber of the app `guard` guards: its panics quarantine that app.
    /// Returns its id, for [`Subscribers::unsubscribe`].
    pub fn subscribe_guarded(&self, guard: AppGuard, call: Callback<E>) -> u64 {
        self.push(Some(guard), call)
    }

    /// Adds a subscriber outside the pipeline (a test, a tool): unguarded, so its
    /// panic unwinds into whoever published. Returns its id.
    pub fn subscribe(&self, call: Callback<E>) -> u64 {
        self.push(None, call)
    }

    fn push(&self, guard: Option<AppGuard>, call: Callback<E>) -> u64 {
        let id = self.last_id.fetch_add(1, Relaxed) + 1;
        let s = Subscriber { id, guard, call };
        self.list.write().unwrap_or_else(|e| e.into_inner()).push(s);
        id
    }

    /// Ends subscription `id` (an app stopping). Waits for an event being told to
    /// finish: once this returns, the callback is never called again.
    pub fn unsubscribe(&self, id: u64) {
        let mut list = self.list.write().unwrap_or_else(|e| e.into_inner());
        list.retain(|s| s.id != id);
    }

    /// How many subscribe now.
    pub fn len(&self) -> usize {
        self.list.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True when none subscribes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `change` (which must release the service's own locks before it returns),
    /// then tells the subscribers about each event, in order, each app's callback under
    /// its own guard. A subscriber that calls back into a `publish` of the same service
    /// deadlocks: the services say so.
    pub fn publish(&self, change: impl FnOnce() -> Vec<E>) -> Vec<E> {
        let _order = self.order.lock().unwrap_or_else(|e| e.into_inner());
        let events = change();
        if !events.is_empty() {
            let list = self.list.read().unwrap_or_else(|e| e.into_inner());
            for e in &events {
                for s in list.iter() {
                    match &s.guard {
                        Some(g) => {
                            g.run("service event", || (s.call)(e));
                        }
                        None => (s.call)(e),
                    }
                }
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Acquire;

    /// Whoever sees an app quarantined finds the reason too: a test once read the
    /// flag, then no reason, because the flag was raised before the reason was kept.
    #[test]
    fn a_quarantined_app_always_has_its_reason() {
        let mut missing = 0;
        for _ in 0..500 {
            let guard = AppGuard::new(
                "racy",
                Arc::default(),
                Arc::default(),
                Arc::new(Subscribers::default()),
            );
            std::thread::scope(|s| {
                let reader = s.spawn(|| {
                    while !guard.health().quarantined.load(Acquire) {
                        std::hint::spin_loop();
                    }
                    guard.quarantine_reason().is_some()
                });
                let payload: Box<dyn Any + Send> = Box::new("boom");
                quarantine(
                    guard.health(),
                    Some(openflow::Dpid(1)),
                    "packet-in",
                    payload.as_ref(),
                );
                if !reader.join().unwrap() {
                    missing += 1;
                }
            });
        }
        assert_eq!(missing, 0, "flag seen without a reason, of 500");
    }
}
