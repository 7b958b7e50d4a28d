//! Apps as live things: started, stopped, restarted, re-ordered, added and removed
//! while switches are connected.
//!
//! The [`crate::dispatch::Pipeline`] keeps every app it knows, each at an index that is
//! never reused, and a *plan*: the ordered handlers of the running apps and a
//! generation number. A change (the methods below) builds a new plan and publishes it;
//! each switch compares its plan's generation with the published one before each
//! message (one relaxed load) and, when they differ, *migrates* on its worker between
//! two messages: the slots, pending requests and timers of apps that stopped are
//! dropped (callbacks not run); apps that started get fresh state, and their
//! initializers and switch-added listeners run on that switch. No message ever sees
//! half a change: a message runs with one plan, whole. A change also wakes every
//! worker ([`crate::worker::Command::Refresh`]) so idle switches migrate too, and
//! returns once every worker has done so ([`Change::took`]).
//!
//! ```text
//! stop("routing") ─► refuse if a running app requires its services (or cascade)
//!                 ─► app.stop(), its subscriptions end, its global timers stop
//!                 ─► new Plan (generation + 1) published ─► Refresh to every worker
//!                 ─► each switch: slots/timers/requests of routing dropped ─► ack
//! ```
//!
//! The lifecycle methods block until the workers acknowledge: never call them on a
//! worker thread (from a handler); the REST API calls them from a blocking task.
//!
//! Apps arrive at run time through an [`AppLoader`] (the WebAssembly host implements
//! it): `POST /api/v1/apps` gives it a module and a [`LoadSpec`].

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use crate::events::Quarantine;
use crate::services::StartError;

/// What `POST /api/v1/apps` uploads: a module and how to run it.
pub struct LoadSpec {
    /// The app's name (unique among the pipeline's apps).
    pub name: String,
    /// Where its handlers run.
    pub order: crate::app::Order,
    /// Its parameters, as JSON text (`"{}"` when none were given).
    pub params_json: String,
}

/// Makes an app from an uploaded module (the WASM host implements it).
pub trait AppLoader: Send + Sync + 'static {
    /// An app made from `module` as `spec` says, or why not (shown to the user).
    fn load(&self, spec: &LoadSpec, module: &[u8]) -> Result<Box<dyn crate::app::AnyApp>, String>;
}

/// App names are `&'static str` (logs, counters, handler timings): a name loaded at run
/// time is leaked once, and the same name loaded again (a reload) reuses it, so
/// reloading does not grow memory.
pub fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = crate::counters::lock(&NAMES);
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

/// One app as [`crate::dispatch::Pipeline::app_status`] reports it.
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
    /// Loaded at run time ([`crate::dispatch::Pipeline::add_app`]): it can be removed.
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
    /// From the change's start until every worker had migrated its switches to it.
    pub took: Duration,
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
