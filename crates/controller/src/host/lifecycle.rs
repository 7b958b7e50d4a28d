//! The changes: start, stop, restart, re-order, add, remove, load and reload an app
//! while switches are connected (see the [host](super) for how a change reaches every
//! switch).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{providers, register, AppHost, Apps, Change, Known, LifecycleError, LoadSpec};
use crate::app::{App, Builder};
use crate::command::Control;
use crate::events::{AppEvent, AppGuard};
use crate::handlers::{AnyApp, Registry};
use crate::services::StartError;
use crate::sync::lock;

/// How long a change waits for the workers to move their switches to it.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(10);

/// What stands at a removed app's index (its handlers and module are freed).
struct Gone(&'static str);

impl App for Gone {
    type State = ();
    fn name(&self) -> &'static str {
        self.0
    }
    fn build(&self, _: &mut Builder<Self>) {}
}

impl AppHost {
    /// Starts the app named `name`: its subscriptions are made, its `start` runs, it
    /// joins the plan, and its initializers and switch-added listeners run on every
    /// connected switch. A quarantined app is restarted. Refused when an app whose
    /// services it requires is stopped. Blocks until every worker has the change.
    pub fn start_app(&self, name: &str) -> Result<Change, LifecycleError> {
        let t0 = Instant::now();
        let mut apps = lock(&self.apps);
        let i = known_index(&apps, name)?;
        let k = &apps.known[i];
        if k.running && !k.guard.is_quarantined() {
            return Err(LifecycleError::AlreadyRunning(k.name));
        }
        if k.running {
            drop(apps);
            return self.restart_app(name);
        }
        let providers: Vec<&'static str> = providers(&apps, &self.services, i)
            .into_iter()
            .filter(|&p| !apps.known[p].running)
            .map(|p| apps.known[p].name)
            .collect();
        if !providers.is_empty() {
            return Err(LifecycleError::NeedsProviders {
                app: apps.known[i].name,
                providers,
            });
        }
        self.start_index(&mut apps, i)?;
        let started = vec![apps.known[i].name];
        Ok(self.commit(&mut apps, t0, started, Vec::new()))
    }

    /// Stops the app named `name`: it leaves the plan (its handlers, per-switch timers,
    /// state and pending requests leave every switch), its subscriptions end, its
    /// global timers stop, then its `stop` runs. Refused, naming them, when running
    /// apps require its services, unless `cascade`: then they stop too, dependents
    /// first. Blocks until every worker has the change.
    pub fn stop_app(&self, name: &str, cascade: bool) -> Result<Change, LifecycleError> {
        let t0 = Instant::now();
        let mut apps = lock(&self.apps);
        let i = known_index(&apps, name)?;
        if !apps.known[i].running {
            return Err(LifecycleError::AlreadyStopped(apps.known[i].name));
        }
        let order = self.stop_order(&apps, i);
        if order.len() > 1 && !cascade {
            return Err(LifecycleError::RequiredBy {
                app: apps.known[i].name,
                dependents: order[..order.len() - 1]
                    .iter()
                    .map(|&d| apps.known[d].name)
                    .collect(),
            });
        }
        Ok(self.stop_indexes(&mut apps, t0, &order))
    }

    /// Stops then starts the app named `name` (quarantine cleared, fresh state on every
    /// switch, initializers run again), in one change: every switch moves from the old
    /// start to the new between two messages. The apps requiring it keep running (its
    /// services are the same objects). A stopped app is started.
    pub fn restart_app(&self, name: &str) -> Result<Change, LifecycleError> {
        let t0 = Instant::now();
        let mut apps = lock(&self.apps);
        let i = known_index(&apps, name)?;
        if !apps.known[i].running {
            drop(apps);
            return self.start_app(name);
        }
        let app = apps.known[i].name;
        // Out of the plan first, so no worker runs it while it stops and starts.
        apps.known[i].running = false;
        self.publish_plan(&mut apps);
        self.refresh_workers();
        self.stop_index(&mut apps, i);
        let f0 = Instant::now();
        self.removed_flows(app);
        let flows_took = f0.elapsed();
        let result = self.start_index(&mut apps, i);
        let stopped = vec![app];
        match result {
            Ok(()) => Ok(self
                .commit(&mut apps, t0, vec![app], stopped)
                .without_flows(flows_took)),
            Err(e) => {
                self.commit(&mut apps, t0, Vec::new(), stopped);
                Err(e.into())
            }
        }
    }

    /// Sets the app order (a permutation of every app's name): handlers of equal
    /// [`crate::app::Order`] run in it, and so do initializers and the other
    /// per-switch listeners. Takes effect at each switch's next message.
    pub fn set_order(&self, names: &[&str]) -> Result<Change, LifecycleError> {
        let t0 = Instant::now();
        let mut apps = lock(&self.apps);
        let mut order = Vec::with_capacity(names.len());
        for n in names {
            let i = apps
                .index(n)
                .ok_or_else(|| LifecycleError::BadOrder(format!("no app is named {n}")))?;
            if order.contains(&i) {
                return Err(LifecycleError::BadOrder(format!("{n} is named twice")));
            }
            order.push(i);
        }
        let missing: Vec<&str> = apps
            .order
            .iter()
            .filter(|i| !order.contains(i))
            .map(|&i| apps.known[i].name)
            .collect();
        if !missing.is_empty() {
            return Err(LifecycleError::BadOrder(format!(
                "every app must be named; missing: {}",
                missing.join(", ")
            )));
        }
        apps.order = order;
        Ok(self.commit(&mut apps, t0, Vec::new(), Vec::new()))
    }

    /// Adds an app at run time (a loaded module) at `position` in the app order (the
    /// end when `None` or past it), and starts it. Its name must be free. An app added
    /// this way cannot provide services (nothing built before it could require them).
    pub fn add_app(
        &self,
        app: Box<dyn AnyApp>,
        position: Option<usize>,
    ) -> Result<Change, LifecycleError> {
        let t0 = Instant::now();
        let mut apps = lock(&self.apps);
        let i = self.add_known(&mut apps, app, position)?;
        let name = apps.known[i].name;
        if let Err(e) = self.start_index(&mut apps, i) {
            self.forget(&mut apps, i);
            return Err(e.into());
        }
        self.app_events.publish(|| vec![AppEvent::Loaded(name)]);
        Ok(self.commit(&mut apps, t0, vec![name], Vec::new()))
    }

    /// Removes an app added at run time: stopped (if it runs), then forgotten (its
    /// handlers and module freed; its name free again).
    pub fn remove_app(&self, name: &str) -> Result<Change, LifecycleError> {
        let t0 = Instant::now();
        let mut apps = lock(&self.apps);
        let i = known_index(&apps, name)?;
        if !apps.known[i].loaded {
            return Err(LifecycleError::NotLoaded(apps.known[i].name));
        }
        let name = apps.known[i].name;
        let change = match apps.known[i].running {
            true => self.stop_indexes(&mut apps, t0, &[i]),
            false => self.commit(&mut apps, t0, Vec::new(), Vec::new()),
        };
        self.forget(&mut apps, i);
        let mut change = Change {
            took: t0.elapsed(),
            ..change
        }
        .without_flows(change.flows_took);
        change.generation = self.publish_plan(&mut apps);
        self.refresh_workers();
        self.app_events.publish(|| vec![AppEvent::Unloaded(name)]);
        Ok(change)
    }

    /// Replaces an app added at run time with `app` (a new module of the same name, or
    /// another), at the same place in the app order: the old one stops, the new one
    /// starts, in one change. If the new one fails to start, the old one is gone.
    pub fn replace_app(&self, name: &str, app: Box<dyn AnyApp>) -> Result<Change, LifecycleError> {
        let t0 = Instant::now();
        let mut apps = lock(&self.apps);
        let old = known_index(&apps, name)?;
        if !apps.known[old].loaded {
            return Err(LifecycleError::NotLoaded(apps.known[old].name));
        }
        let position = apps.order.iter().position(|&i| i == old);
        let old_name = apps.known[old].name;
        let mut stopped = Vec::new();
        let mut flows_took = Duration::ZERO;
        if apps.known[old].running {
            apps.known[old].running = false;
            self.publish_plan(&mut apps);
            self.refresh_workers();
            self.stop_index(&mut apps, old);
            let f0 = Instant::now();
            self.removed_flows(old_name);
            flows_took = f0.elapsed();
            stopped.push(old_name);
        }
        self.forget(&mut apps, old);
        let new = match self.add_known(&mut apps, app, position) {
            Ok(i) => i,
            Err(e) => {
                self.commit(&mut apps, t0, Vec::new(), stopped);
                return Err(e);
            }
        };
        let new_name = apps.known[new].name;
        if let Err(e) = self.start_index(&mut apps, new) {
            self.forget(&mut apps, new);
            self.commit(&mut apps, t0, Vec::new(), stopped);
            return Err(e.into());
        }
        self.app_events
            .publish(|| vec![AppEvent::Unloaded(old_name), AppEvent::Loaded(new_name)]);
        Ok(self
            .commit(&mut apps, t0, vec![new_name], stopped)
            .without_flows(flows_took))
    }

    fn loaded(&self, spec: &LoadSpec, module: &[u8]) -> Result<Box<dyn AnyApp>, LifecycleError> {
        let loader = lock(&self.loader).clone().ok_or(LifecycleError::NoLoader)?;
        let app = loader.load(spec, module).map_err(LifecycleError::Load)?;
        if app.app_name() != spec.name {
            return Err(LifecycleError::Load(format!(
                "the loader made an app named {} for {}",
                app.app_name(),
                spec.name
            )));
        }
        Ok(app)
    }

    /// Loads `module` with the loader as `spec` says and adds the app at `position`
    /// ([`AppHost::add_app`]).
    pub fn load_app(
        &self,
        spec: &LoadSpec,
        module: &[u8],
        position: Option<usize>,
    ) -> Result<Change, LifecycleError> {
        let app = self.loaded(spec, module)?;
        self.add_app(app, position)
    }

    /// Loads `module` and puts it in the place of the loaded app `spec.name`
    /// ([`AppHost::replace_app`]). The module is loaded before anything stops: a
    /// module that does not load leaves the old app running.
    pub fn reload_app(&self, spec: &LoadSpec, module: &[u8]) -> Result<Change, LifecycleError> {
        {
            let apps = lock(&self.apps);
            let i = known_index(&apps, &spec.name)?;
            if !apps.known[i].loaded {
                return Err(LifecycleError::NotLoaded(apps.known[i].name));
            }
        }
        let app = self.loaded(spec, module)?;
        self.replace_app(&spec.name, app)
    }

    /// Starts app `i` (not running): a guard of its own for this start, its
    /// [`crate::app::Required`] handles filled, its subscriptions made, its `start`
    /// run. Not yet in the plan (the caller publishes).
    pub(crate) fn start_index(&self, apps: &mut Apps, i: usize) -> Result<(), StartError> {
        let k = &mut apps.known[i];
        let guard = AppGuard::new(
            k.name,
            Arc::clone(&k.panics),
            Arc::clone(&self.counters.handler_panics),
            Arc::clone(&self.app_events),
        );
        for fill in &k.reg.fills {
            fill(&self.services)?;
        }
        let mut unsubscribe = Vec::with_capacity(k.reg.subscriptions.len());
        let mut result = Ok(());
        for subscribe in &k.reg.subscriptions {
            match subscribe(&self.services, &guard) {
                Ok(u) => unsubscribe.push(u),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if let Err(e) = result.and_then(|()| k.app.start_app(&self.services)) {
            for u in unsubscribe {
                u();
            }
            return Err(e);
        }
        k.guard = guard;
        k.unsubscribe = unsubscribe;
        k.running = true;
        k.starts += 1;
        Ok(())
    }

    /// Stops app `i`: its subscriptions end, its global timers are forgotten (waiting
    /// for a global tick in progress), its `stop` runs. The caller takes it out of the
    /// plan, before (at run time, so no worker runs it while it stops) or after.
    pub(crate) fn stop_index(&self, apps: &mut Apps, i: usize) {
        let k = &mut apps.known[i];
        k.running = false;
        for u in k.unsubscribe.drain(..) {
            u();
        }
        self.forget_global_timers(&k.reg);
        k.app.stop_app();
    }

    /// Stops the apps `order` (dependents first): out of the plan, workers told, then
    /// each stopped.
    fn stop_indexes(&self, apps: &mut Apps, t0: Instant, order: &[usize]) -> Change {
        for &j in order {
            apps.known[j].running = false;
        }
        self.publish_plan(apps);
        self.refresh_workers();
        let mut stopped = Vec::with_capacity(order.len());
        let mut flows_took = Duration::ZERO;
        for &j in order {
            self.stop_index(apps, j);
            let name = apps.known[j].name;
            let f0 = Instant::now();
            self.removed_flows(name);
            flows_took += f0.elapsed();
            stopped.push(name);
        }
        self.commit(apps, t0, Vec::new(), stopped)
            .without_flows(flows_took)
    }

    /// Publishes the plan, tells every worker and waits for them, tells the app
    /// events' subscribers.
    fn commit(
        &self,
        apps: &mut Apps,
        t0: Instant,
        started: Vec<&'static str>,
        stopped: Vec<&'static str>,
    ) -> Change {
        let generation = self.publish_plan(apps);
        self.refresh_workers();
        let took = t0.elapsed();
        self.app_events.publish(|| {
            stopped
                .iter()
                .map(|&a| AppEvent::Stopped(a))
                .chain(started.iter().map(|&a| AppEvent::Started(a)))
                .collect()
        });
        for a in &stopped {
            tracing::info!(app = a, "app stopped");
        }
        for a in &started {
            tracing::info!(app = a, "app started");
        }
        Change {
            started,
            stopped,
            generation,
            took,
            flows_took: Duration::ZERO,
        }
    }

    /// Tells every worker to move its switches to the current plan, and waits until
    /// each has (or [`REFRESH_TIMEOUT`] passed: logged).
    fn refresh_workers(&self) {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut told = 0;
        for w in self.switches.workers() {
            if w.control(Control::Refresh(tx.clone())) {
                told += 1;
            }
        }
        let deadline = Instant::now() + REFRESH_TIMEOUT;
        for _ in 0..told {
            let left = deadline.saturating_duration_since(Instant::now());
            if rx.recv_timeout(left).is_err() {
                tracing::warn!(
                    "a worker did not take an app change in time; it will before its next message"
                );
                return;
            }
        }
    }

    /// The flows of `app`, which stopped, leave every switch (exactly those whose
    /// cookie carries its tag, see [`crate::removal`]); what could not be removed is
    /// logged.
    fn removed_flows(&self, app: &'static str) {
        let tag = crate::cookie::app_tag(app);
        let timeout = self.flow_removal_timeout();
        let report = crate::removal::remove_flows_of(&self.switches, tag, timeout);
        for (dpid, why) in report.failures() {
            tracing::warn!(app, dpid = %dpid, why, "the stopped app's flows may remain on this switch");
        }
    }

    /// Registers `app` at a new index and puts it in the app order (not started).
    fn add_known(
        &self,
        apps: &mut Apps,
        app: Box<dyn AnyApp>,
        position: Option<usize>,
    ) -> Result<usize, LifecycleError> {
        let app: Arc<dyn AnyApp> = Arc::from(app);
        let name = app.app_name();
        if apps.index(name).is_some() {
            return Err(LifecycleError::Duplicate(name.to_string()));
        }
        let tag = crate::cookie::app_tag(name);
        if let Some(&other) = apps.order.iter().find(|&&i| apps.known[i].tag == tag) {
            return Err(StartError::CookieTagCollision {
                first: apps.known[other].name,
                second: name,
            }
            .into());
        }
        let index = apps.known.len();
        let reg = register(&app, index, &self.timings)?;
        if !reg.provides_nothing() {
            return Err(LifecycleError::Load(format!(
                "app {name} provides services: only apps built with the controller can"
            )));
        }
        let panics = Arc::default();
        let guard = AppGuard::new(
            name,
            Arc::clone(&panics),
            Arc::clone(&self.counters.handler_panics),
            Arc::clone(&self.app_events),
        );
        apps.known.push(Known {
            app,
            name,
            tag,
            reg,
            running: false,
            removed: false,
            loaded: true,
            starts: 0,
            guard,
            unsubscribe: Vec::new(),
            panics,
        });
        let at = position.unwrap_or(usize::MAX).min(apps.order.len());
        apps.order.insert(at, index);
        Ok(index)
    }

    /// Forgets app `i` (stopped): out of the order, its handlers and module freed.
    fn forget(&self, apps: &mut Apps, i: usize) {
        apps.order.retain(|&j| j != i);
        let k = &mut apps.known[i];
        k.removed = true;
        k.reg = Registry::default();
        k.app = Arc::new(Gone(k.name));
    }

    /// The running apps that require app `i`'s services, directly.
    fn dependents(&self, apps: &Apps, i: usize) -> Vec<usize> {
        apps.order
            .iter()
            .copied()
            .filter(|&j| j != i && apps.known[j].running)
            .filter(|&j| providers(apps, &self.services, j).contains(&i))
            .collect()
    }

    /// App `i` and every running app that requires it, directly or not, in an order
    /// to stop them: dependents first, `i` last.
    fn stop_order(&self, apps: &Apps, i: usize) -> Vec<usize> {
        let mut set = vec![i];
        let mut k = 0;
        while k < set.len() {
            for d in self.dependents(apps, set[k]) {
                if !set.contains(&d) {
                    set.push(d);
                }
            }
            k += 1;
        }
        let mut order = Vec::with_capacity(set.len());
        while !set.is_empty() {
            // One no other app left in the set requires.
            let pos = set
                .iter()
                .position(|&x| {
                    set.iter()
                        .all(|&y| y == x || !providers(apps, &self.services, y).contains(&x))
                })
                .unwrap_or(set.len() - 1);
            order.push(set.remove(pos));
        }
        // `i` last (a cycle put it elsewhere: still last).
        order.retain(|&x| x != i);
        order.push(i);
        order
    }
}

/// The index of the app named `name`, or [`LifecycleError::UnknownApp`].
fn known_index(apps: &Apps, name: &str) -> Result<usize, LifecycleError> {
    apps.index(name)
        .ok_or_else(|| LifecycleError::UnknownApp(name.to_string()))
}
