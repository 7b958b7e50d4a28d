//! The app host: apps as live things, started, stopped, restarted, re-ordered, added
//! and removed while switches are connected, and what the rest of the controller may
//! ask of them.
//!
//! An [`AppHost`] keeps every app it knows, each at an index that is never reused,
//! with its [`Registry`] (what its `build` registered), and publishes a *plan* of the
//! running apps' handlers under a generation number into the `PlanCell` the
//! dispatcher reads. A change (`lifecycle.rs`) builds a new plan and publishes it; each
//! switch compares its plan's generation with the published one before each message
//! (one relaxed load) and, when they differ, *migrates* on its worker between two
//! messages (see [`crate::dispatch`]). No message ever sees half a change. A change also
//! wakes every worker ([`crate::command::Control::Refresh`]) so idle switches migrate
//! too, and returns once every worker has done so ([`Change::took`]).
//!
//! ```text
//! AppHost::build(apps, services) ─► every app's build ─► Registries ─► start in order
//!                                 ─► plan 1 published ─► Core { apps, dispatcher, .. }
//! stop("routing") ─► refuse if a running app requires its services (or cascade)
//!                 ─► out of the plan (generation + 1) ─► Refresh to every worker
//!                 ─► app.stop(), its subscriptions end, its global timers stop
//!                 ─► its flows removed from every switch (crate::removal)
//! ```
//!
//! The REST API, `pharos run` and the WebAssembly host hold an `AppHost` (the
//! app-control handle), the [`Switches`] directory and the [`Services`]: never the
//! dispatcher, which only the workers drive. The lifecycle methods block until the
//! workers acknowledge: never call them on a worker thread (from a handler); the REST
//! API calls them from a blocking task. Apps arrive at run time through an
//! [`AppLoader`] (the WebAssembly host implements it): `POST /api/v1/apps` gives it a
//! module and a [`LoadSpec`].

mod lifecycle;

use std::collections::HashSet;
use std::sync::atomic::{
    AtomicU64,
    Ordering::{Acquire, Relaxed},
};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::counters::{AppCounterValue, PipelineCounters, PipelineCountersSnapshot};
use crate::dispatch::Dispatcher;
use crate::events::{AppEvent, AppGuard, Publisher, Quarantine, Subscribers};
use crate::handlers::{AnyApp, Order, Plan, PlanApp, PlanCell, Registry};
use crate::services::{Services, StartError};
use crate::switches::Switches;
use crate::sync::lock;
use crate::timing::{HandlerTiming, Timings};

/// How long a stopped app's flows may take to leave each switch, unless set.
pub const FLOW_REMOVAL_TIMEOUT: Duration = Duration::from_secs(5);

/// What `POST /api/v1/apps` uploads: a module and how to run it.
pub struct LoadSpec {
    /// The app's name (unique among the pipeline's apps).
    pub name: String,
    /// Where its handlers run.
    pub order: Order,
    /// Its parameters, as JSON text (`"{}"` when none were given).
    pub params_json: String,
}

/// Makes an app from an uploaded module (the WASM host implements it).
pub trait AppLoader: Send + Sync + 'static {
    /// An app made from `module` as `spec` says, or why not (shown to the user).
    fn load(&self, spec: &LoadSpec, module: &[u8]) -> Result<Box<dyn AnyApp>, String>;
}

/// App names are `&'static str` (logs, counters, handler timings): a name loaded at run
/// time is leaked once, and the same name loaded again (a reload) reuses it, so
/// reloading does not grow memory.
pub fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = lock(&NAMES);
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// Where an app stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AppState {
    /// Its handlers run.
    Running,
    /// Stopped (or never started): none of its code runs.
    Stopped,
    /// It panicked: none of its code runs until it is restarted.
    Quarantined,
}

/// One app as [`AppHost::app_status`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppStatus {
    /// The app.
    pub name: &'static str,
    /// Running, stopped or quarantined.
    pub state: AppState,
    /// Its position in the app order (0 first).
    pub position: usize,
    /// The apps whose services it requires ([`crate::app::Builder::require`]).
    pub requires: Vec<&'static str>,
    /// The running apps that require its services.
    pub required_by: Vec<&'static str>,
    /// Why it is quarantined.
    pub quarantine: Option<Quarantine>,
    /// Loaded at run time ([`AppHost::add_app`]): it can be removed.
    pub loaded: bool,
    /// Times it was started (1 after start-up; a restart adds one).
    pub starts: u64,
}

/// What a change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The apps started, in the order they started.
    pub started: Vec<&'static str>,
    /// The apps stopped, in the order they stopped.
    pub stopped: Vec<&'static str>,
    /// The plan's generation now.
    pub generation: u64,
    /// From the change's start until every worker had migrated its switches to it (the
    /// flows' removal, which follows, not included).
    pub took: Duration,
    /// Spent removing stopped apps' flows from every switch (a round trip per switch,
    /// up to the removal timeout for a switch that does not answer); zero when no app
    /// stopped.
    pub flows_took: Duration,
}

impl Change {
    /// The change, `flows_took` of whose time went to removing flows: told apart.
    fn without_flows(mut self, flows_took: Duration) -> Change {
        self.took = self.took.saturating_sub(flows_took);
        self.flows_took = flows_took;
        self
    }
}

/// Why a change was refused (nothing changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LifecycleError {
    /// No app of that name.
    #[error("no app is named {0}")]
    UnknownApp(String),
    /// Start of an app that runs.
    #[error("app {0} is running already")]
    AlreadyRunning(&'static str),
    /// Stop of an app that is stopped.
    #[error("app {0} is stopped already")]
    AlreadyStopped(&'static str),
    /// Stop of an app whose services running apps require.
    #[error("app {app} provides services that running apps require: {}; stop them first, or cascade", .dependents.join(", "))]
    RequiredBy {
        /// The app.
        app: &'static str,
        /// The running apps that require it, dependents first.
        dependents: Vec<&'static str>,
    },
    /// Start of an app whose providers are stopped.
    #[error("app {app} requires services of stopped apps: {}; start them first", .providers.join(", "))]
    NeedsProviders {
        /// The app.
        app: &'static str,
        /// The stopped apps providing what it requires.
        providers: Vec<&'static str>,
    },
    /// A new order that is not a permutation of the apps.
    #[error("bad app order: {0}")]
    BadOrder(String),
    /// Remove or replace of an app built into the binary.
    #[error("app {0} was not loaded at run time; it can be stopped, not removed")]
    NotLoaded(&'static str),
    /// An app added with a name already taken.
    #[error("an app is named {0} already")]
    Duplicate(String),
    /// The app's start (or build) failed.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The loader refused the module.
    #[error("cannot load the app: {0}")]
    Load(String),
    /// No loader is configured (`POST /api/v1/apps` answers 501).
    #[error("no app loader is configured: this controller cannot load apps at run time")]
    NoLoader,
}

/// An app the host knows: its handlers (built once), its state and, while it runs,
/// how to end its subscriptions.
pub(crate) struct Known {
    /// The app.
    pub(crate) app: Arc<dyn AnyApp>,
    /// Its name.
    pub(crate) name: &'static str,
    /// The cookie tag marked on its flows ([`crate::cookie::app_tag`] of `name`).
    pub(crate) tag: u16,
    /// Its handlers, services, subscriptions and requirements, from `build`.
    pub(crate) reg: Registry,
    /// Started (and not stopped since). A quarantined app still "runs" until stopped.
    pub(crate) running: bool,
    /// Removed at run time: it stays at its index (never reused), out of the order.
    pub(crate) removed: bool,
    /// Added at run time (it can be removed or replaced).
    pub(crate) loaded: bool,
    /// Times it was started.
    pub(crate) starts: u64,
    /// The guard of its current (or last) start.
    pub(crate) guard: AppGuard,
    /// Ends its service subscriptions (while it runs).
    pub(crate) unsubscribe: Vec<crate::handlers::Unsubscribe>,
    /// Its panics over all its starts.
    pub(crate) panics: Arc<AtomicU64>,
}

/// The apps, as the lifecycle changes them (under the host's lock).
pub(crate) struct Apps {
    /// By app index.
    pub(crate) known: Vec<Known>,
    /// The app order: app indexes, removed apps left out.
    pub(crate) order: Vec<usize>,
    /// The last plan's generation.
    pub(crate) generation: u64,
}

impl Apps {
    /// The index of the app named `name` (not removed).
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.order
            .iter()
            .copied()
            .find(|&i| self.known[i].name == name)
    }
}

/// The app host (see the module doc): the app-control handle.
pub struct AppHost {
    /// The apps, changed by the lifecycle (one change at a time: this lock).
    pub(crate) apps: Mutex<Apps>,
    /// Where each plan is published for the dispatcher.
    plans: Arc<PlanCell>,
    /// The core's directory of switches (the stopped apps' flows are removed through
    /// it; the workers told of a change are its workers).
    switches: Arc<Switches>,
    /// The services apps and the caller provided, and the core's [`Switches`].
    services: Arc<Services>,
    /// The dispatcher's counters (shared), which the apps' guards count panics in.
    pub(crate) counters: Arc<PipelineCounters>,
    /// Every handler's calls and time (shared with the dispatcher).
    timings: Arc<Timings>,
    /// Told of each app's quarantine (shared with the guards), start and stop.
    pub(crate) app_events: Arc<Subscribers<AppEvent>>,
    /// How long a stopped app's flows may take to leave each switch, in ms.
    flow_removal_ms: AtomicU64,
    /// Makes apps from modules uploaded at run time ([`AppLoader`]).
    pub(crate) loader: Mutex<Option<Arc<dyn AppLoader>>>,
}

/// What [`AppHost::build`] makes: the handles to the running core, each for its
/// callers (see the module doc).
#[derive(Debug, Clone)]
pub struct Core {
    /// The app-control handle (REST, `pharos ctl`, the WebAssembly host).
    pub apps: Arc<AppHost>,
    /// What the workers drive ([`crate::controller::Controller::start`] takes it).
    pub dispatcher: Arc<Dispatcher>,
    /// The directory of connected switches.
    pub switches: Arc<Switches>,
    /// The services (the apps' and the caller's, and [`Switches`]).
    pub services: Arc<Services>,
}

impl Core {
    /// The directory of connected switches.
    pub fn switches(&self) -> &Arc<Switches> {
        &self.switches
    }

    /// The services.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }
}

/// Apps quarantined, started, stopped, loaded, as they happen (the REST API's event
/// stream subscribes).
impl Publisher<AppEvent> for AppHost {
    fn subscribers(&self) -> &Subscribers<AppEvent> {
        &self.app_events
    }
}

impl std::fmt::Debug for AppHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppHost")
            .field("apps", &self.app_names())
            .finish()
    }
}

impl AppHost {
    /// Builds every app (in order), merges the services they and the caller provide,
    /// then starts every app in order. A failing start stops the apps already started
    /// (in reverse) and returns the error.
    ///
    /// The core's [`Switches`] is among the services every app's `start` sees.
    pub fn build(apps: Vec<Box<dyn AnyApp>>, mut services: Services) -> Result<Core, StartError> {
        let switches = Arc::new(Switches::new());
        services.provide(Arc::clone(&switches), "controller")?;
        let counters = Arc::new(PipelineCounters::default());
        let app_events: Arc<Subscribers<AppEvent>> = Arc::default();
        let timings = Arc::new(Timings::new());
        let mut known: Vec<Known> = Vec::with_capacity(apps.len());
        for (index, app) in apps.into_iter().enumerate() {
            let app: Arc<dyn AnyApp> = Arc::from(app);
            let name = app.app_name();
            if known.iter().any(|k| k.name == name) {
                return Err(StartError::DuplicateApp { app: name });
            }
            let tag = crate::cookie::app_tag(name);
            if let Some(k) = known.iter().find(|k| k.tag == tag) {
                return Err(StartError::CookieTagCollision {
                    first: k.name,
                    second: name,
                });
            }
            let mut reg = register(&app, index, &timings)?;
            services.merge(std::mem::take(&mut reg.services))?;
            let panics = Arc::new(AtomicU64::new(0));
            let guard = AppGuard::new(
                name,
                Arc::clone(&panics),
                Arc::clone(&counters.handler_panics),
                Arc::clone(&app_events),
            );
            known.push(Known {
                app,
                name,
                tag,
                reg,
                running: false,
                removed: false,
                loaded: false,
                starts: 0,
                guard,
                unsubscribe: Vec::new(),
                panics,
            });
        }
        let order = (0..known.len()).collect();
        let apps = Apps {
            known,
            order,
            generation: 0,
        };
        let plans = Arc::new(PlanCell::new(plan_of(&apps, &services)));
        let services = Arc::new(services);
        let host = AppHost {
            apps: Mutex::new(apps),
            plans: Arc::clone(&plans),
            switches: Arc::clone(&switches),
            services: Arc::clone(&services),
            counters: Arc::clone(&counters),
            timings: Arc::clone(&timings),
            app_events,
            flow_removal_ms: AtomicU64::new(FLOW_REMOVAL_TIMEOUT.as_millis() as u64),
            loader: Mutex::new(None),
        };
        {
            let mut apps = lock(&host.apps);
            for i in 0..apps.known.len() {
                if let Err(err) = host.start_index(&mut apps, i) {
                    // Not logged here: the caller reports the error it gets, once.
                    for j in (0..i).rev() {
                        host.stop_index(&mut apps, j);
                    }
                    return Err(err);
                }
                tracing::debug!(app = apps.known[i].name, "app started");
            }
            host.publish_plan(&mut apps);
        }
        let dispatcher = Arc::new(Dispatcher::new(
            plans,
            Arc::clone(&switches),
            counters,
            timings,
        ));
        Ok(Core {
            apps: Arc::new(host),
            dispatcher,
            switches,
            services,
        })
    }

    /// Stops every running app, in reverse order (at controller shutdown, after the
    /// switches).
    pub fn stop(&self) {
        let mut apps = lock(&self.apps);
        for i in apps.order.clone().into_iter().rev() {
            if apps.known[i].running {
                self.stop_index(&mut apps, i);
            }
        }
        self.publish_plan(&mut apps);
    }

    /// Makes the running apps' plan the current one (a new generation); switches
    /// move to it before their next message, or when their worker is told.
    pub(crate) fn publish_plan(&self, apps: &mut Apps) -> u64 {
        apps.generation += 1;
        self.plans.publish(plan_of(apps, &self.services));
        apps.generation
    }

    /// The plan in force.
    fn current_plan(&self) -> Arc<Plan> {
        self.plans.current()
    }

    /// How long a stopped app's flows may take to leave each switch (a test driving
    /// switches by hand sets it short: nobody answers them).
    pub fn set_flow_removal_timeout(&self, timeout: Duration) {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.flow_removal_ms.store(ms, Relaxed);
    }

    pub(crate) fn flow_removal_timeout(&self) -> Duration {
        Duration::from_millis(self.flow_removal_ms.load(Relaxed))
    }

    /// Forgets when the global timers of an app (its registry `reg`) are due (it
    /// stopped: a restart starts their clock again). Waits for a global tick in
    /// progress to end.
    pub(crate) fn forget_global_timers(&self, reg: &Registry) {
        let mut due = lock(&self.plans.global_due);
        for (_, h) in &reg.global_timers {
            due.remove(&h.id);
        }
    }

    /// The services apps and the caller provided, and the core's [`Switches`].
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// The core's directory of switches.
    pub fn switches(&self) -> &Arc<Switches> {
        &self.switches
    }

    /// The dispatcher's counters.
    pub fn counters(&self) -> PipelineCountersSnapshot {
        self.counters.snapshot()
    }

    /// The apps' names, in app order (removed apps left out).
    pub fn app_names(&self) -> Vec<&'static str> {
        let plan = self.current_plan();
        plan.order.iter().map(|&i| plan.apps[i].name).collect()
    }

    /// Whether the app named `name` is quarantined (`None`: no such app).
    pub fn is_quarantined(&self, name: &str) -> Option<bool> {
        let plan = self.current_plan();
        let i = plan.index(name)?;
        // Acquire pairs with the quarantine's Release: once this reads true, the
        // reason is there too.
        Some(plan.apps[i].quarantined.load(Acquire))
    }

    /// Why the app named `name` is quarantined: its first panic since it last started
    /// (`None`: it runs, or there is no such app).
    pub fn quarantine_reason(&self, name: &str) -> Option<Quarantine> {
        let plan = self.current_plan();
        let i = plan.index(name)?;
        plan.apps[i].guard.quarantine_reason()
    }

    /// Every handler's calls and time, by app (in app order) then handler, as last
    /// published (see [`crate::timing`] for how they are measured). An app's `reply`
    /// handler shows once it was called; removed apps' handlers do not show.
    pub fn handler_timings(&self) -> Vec<HandlerTiming> {
        let plan = self.current_plan();
        let name = |app: usize| plan.apps.get(app).map_or("(unknown)", |a| a.name);
        let mut v = self.timings.snapshot(name);
        v.retain(|t| t.handler != "reply" || t.calls > 0);
        let order = |t: &HandlerTiming| plan.order.iter().position(|&i| plan.apps[i].name == t.app);
        v.retain(|t| order(t).is_some());
        v.sort_by_key(order);
        v
    }

    /// The counters the apps publish ([`crate::app::Builder::counter`]), in app order
    /// (stopped apps' too; removed apps' not).
    pub fn app_counters(&self) -> Vec<AppCounterValue> {
        let plan = self.current_plan();
        plan.order
            .iter()
            .flat_map(|&i| {
                let app = &plan.apps[i];
                app.counters.iter().map(|c| AppCounterValue {
                    app: app.name,
                    name: c.name,
                    help: c.help,
                    value: c.counter.get(),
                })
            })
            .collect()
    }

    /// Panics caught in the handlers of the app named `name` (over all its starts).
    pub fn panics(&self, name: &str) -> Option<u64> {
        let plan = self.current_plan();
        let i = plan.index(name)?;
        Some(plan.apps[i].panics.load(Relaxed))
    }

    /// Every app, in app order: its state, requirements and dependents. Read from the
    /// plan in force: never waits for a change in progress.
    pub fn app_status(&self) -> Vec<AppStatus> {
        let plan = self.current_plan();
        plan.order
            .iter()
            .enumerate()
            .map(|(position, &i)| {
                let a = &plan.apps[i];
                let state = match (a.running, a.quarantined.load(Acquire)) {
                    (false, _) => AppState::Stopped,
                    (true, true) => AppState::Quarantined,
                    (true, false) => AppState::Running,
                };
                AppStatus {
                    name: a.name,
                    state,
                    position,
                    requires: a.requires.iter().map(|&p| plan.apps[p].name).collect(),
                    required_by: plan
                        .order
                        .iter()
                        .filter(|&&j| j != i && plan.apps[j].running)
                        .filter(|&&j| plan.apps[j].requires.contains(&i))
                        .map(|&j| plan.apps[j].name)
                        .collect(),
                    quarantine: a.guard.quarantine_reason(),
                    loaded: a.loaded,
                    starts: a.start,
                }
            })
            .collect()
    }

    /// The loader of apps uploaded at run time (the WASM host); without one,
    /// [`AppHost::load_app`] refuses with [`LifecycleError::NoLoader`].
    pub fn set_loader(&self, loader: Arc<dyn AppLoader>) {
        *lock(&self.loader) = Some(loader);
    }

    /// Whether a loader is set.
    pub fn has_loader(&self) -> bool {
        lock(&self.loader).is_some()
    }
}

/// The plan of `apps`' running apps, by their registries; requirements resolved by
/// `services`' providers.
fn plan_of(apps: &Apps, services: &Services) -> Plan {
    let entries = apps
        .known
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let app = PlanApp {
                app: Arc::clone(&k.app),
                name: k.name,
                tag: k.tag,
                running: k.running,
                start: k.starts,
                quarantined: Arc::clone(&k.guard.health().quarantined),
                guard: k.guard.clone(),
                panics: Arc::clone(&k.panics),
                loaded: k.loaded,
                requires: providers(apps, services, i),
                counters: k.reg.counters.clone(),
            };
            (app, &k.reg)
        })
        .collect();
    Plan::new(apps.generation, entries, apps.order.clone())
}

/// The apps whose services app `i` requires (app indexes; the core's left out).
pub(crate) fn providers(apps: &Apps, services: &Services, i: usize) -> Vec<usize> {
    let mut v = Vec::new();
    for (id, _) in apps.known[i].reg.requires() {
        let Some(provider) = services.provider(*id) else {
            continue;
        };
        if let Some(p) = apps.index(provider) {
            if p != i && !v.contains(&p) {
                v.push(p);
            }
        }
    }
    v
}

/// Runs `app`'s `build` into a registry of its own (app number `index`), and numbers
/// its handlers for their counts and time.
pub(crate) fn register(
    app: &Arc<dyn AnyApp>,
    index: usize,
    timings: &Timings,
) -> Result<Registry, StartError> {
    let mut reg = Registry::default();
    Arc::clone(app).register(index, &mut reg)?;
    reg.number(index, |app, name| timings.id(app, name));
    Ok(reg)
}

#[cfg(test)]
mod tests;
