//! `/api/v1/apps`: the apps, started, stopped, restarted, re-ordered, loaded, replaced
//! and deleted while the controller runs (see `controller::host`).
//!
//! A change blocks until every worker has it, so it runs on a blocking task, never on
//! the API's thread. Refusals: 404 no such app; 409 the state forbids it (running
//! already, stopped already, required by running apps — named —, a built-in app
//! cannot be deleted, a name taken); 400 a bad order or query; 422 the module or the
//! app's start failed; 501 no loader configured.
//!
//! `POST /apps` and `PUT /apps/{name}` take the module as the raw body
//! (`Content-Type: application/wasm`), with `name`, `order` and `params` in the query.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use controller::app::Order;
use controller::host::{self, Change, LifecycleError, LoadSpec};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::{ApiError, JsonBody};
use crate::model::*;
use crate::{dpid, Shared};

type St = State<Arc<Shared>>;

/// The largest module `POST /apps` takes (the API's other bodies are capped at 1 MiB).
pub const MAX_MODULE: usize = 64 * 1024 * 1024;

/// The apps, in app order, with their state, dependencies, why one is quarantined,
/// and their handlers' calls and time.
#[utoipa::path(get, path = "/api/v1/apps", tag = "apps",
    responses((status = 200, description = "The apps", body = Vec<AppInfo>),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn app_list(State(s): St) -> Json<Vec<AppInfo>> {
    let p = &s.core.apps;
    let timings = p.handler_timings();
    let handlers = |app: &str| {
        timings
            .iter()
            .filter(|t| t.app == app)
            .map(|t| HandlerStats {
                handler: t.handler.into(),
                calls: t.calls,
                time_secs: t.time_secs,
            })
            .collect()
    };
    let all_counters = p.app_counters();
    let counters = |app: &str| {
        all_counters
            .iter()
            .filter(|c| c.app == app)
            .map(|c| AppCounterInfo {
                name: c.name.into(),
                help: c.help.into(),
                value: c.value,
            })
            .collect()
    };
    let names = |v: Vec<&'static str>| v.into_iter().map(String::from).collect();
    Json(
        p.app_status()
            .into_iter()
            .map(|a| AppInfo {
                name: a.name.into(),
                order: a.position,
                state: match a.state {
                    host::AppState::Running => AppState::Running,
                    host::AppState::Stopped => AppState::Stopped,
                    host::AppState::Quarantined => AppState::Quarantined,
                },
                requires: names(a.requires),
                required_by: names(a.required_by),
                loaded: a.loaded,
                starts: a.starts,
                panics: p.panics(a.name).unwrap_or(0),
                reason: a.quarantine.map(|q| QuarantineReason {
                    handler: q.handler,
                    panic: q.panic,
                    dpid: q.dpid.map(dpid::format),
                }),
                handlers: handlers(a.name),
                counters: counters(a.name),
            })
            .collect(),
    )
}

/// `POST /apps/{name}/stop`'s query.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StopQuery {
    /// Stop the running apps that require this one's services too (dependents first),
    /// instead of refusing.
    #[serde(default)]
    pub cascade: bool,
}

/// Starts an app: its `start` runs, its handlers join the pipeline and its
/// initializers run on every connected switch. A quarantined app is restarted.
#[utoipa::path(post, path = "/api/v1/apps/{name}/start", tag = "apps",
    params(("name" = String, Path, description = "The app")),
    security(("bearer" = [])),
    responses((status = 200, description = "Started; on every worker", body = AppChange),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No app has this name", body = ErrorBody),
        (status = 409, description = "It runs, or apps it requires are stopped (named)", body = ErrorBody),
        (status = 422, description = "Its start failed", body = ErrorBody)))]
pub async fn start(State(s): St, Path(name): Path<String>) -> Result<Json<AppChange>, ApiError> {
    change(&s, move |p| p.start_app(&name)).await
}

/// Stops an app: its handlers leave the pipeline (its state, timers and pending
/// requests leave every switch), its subscriptions end, its flows are deleted from
/// every switch. Refused, naming them, while running apps require its services,
/// unless `?cascade=true`.
#[utoipa::path(post, path = "/api/v1/apps/{name}/stop", tag = "apps",
    params(("name" = String, Path, description = "The app"), StopQuery),
    security(("bearer" = [])),
    responses((status = 200, description = "Stopped; on every worker", body = AppChange),
        (status = 400, description = "A bad query", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No app has this name", body = ErrorBody),
        (status = 409, description = "Stopped already, or running apps require it (named)", body = ErrorBody)))]
pub async fn stop(
    State(s): St,
    Path(name): Path<String>,
    query: Result<Query<StopQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<AppChange>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    change(&s, move |p| p.stop_app(&name, q.cascade)).await
}

/// Stops and starts an app in one change: quarantine cleared, fresh state and
/// initializers on every switch; the apps requiring it keep running.
#[utoipa::path(post, path = "/api/v1/apps/{name}/restart", tag = "apps",
    params(("name" = String, Path, description = "The app")),
    security(("bearer" = [])),
    responses((status = 200, description = "Restarted; on every worker", body = AppChange),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No app has this name", body = ErrorBody),
        (status = 409, description = "Apps it requires are stopped (named)", body = ErrorBody),
        (status = 422, description = "Its start failed (it is stopped)", body = ErrorBody)))]
pub async fn restart(State(s): St, Path(name): Path<String>) -> Result<Json<AppChange>, ApiError> {
    change(&s, move |p| p.restart_app(&name)).await
}

/// Sets the app order: a JSON list naming every app once. Takes effect at each
/// switch's next message.
#[utoipa::path(put, path = "/api/v1/apps/order", tag = "apps",
    request_body(content = Vec<String>, description = "Every app's name, in the new order"),
    security(("bearer" = [])),
    responses((status = 200, description = "Re-ordered; on every worker", body = AppChange),
        (status = 400, description = "Not a permutation of the apps (what is wrong is said)", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn order(
    State(s): St,
    JsonBody(names): JsonBody<Vec<String>>,
) -> Result<Json<AppChange>, ApiError> {
    change(&s, move |p| {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        p.set_order(&names)
    })
    .await
}

/// `POST /apps` and `PUT /apps/{name}`'s query.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LoadQuery {
    /// The app's name (`POST` only; `PUT` takes it from the path).
    pub name: Option<String>,
    /// Where its handlers run: `advise|direct|observe[:NUMBER]` (default `direct:0`).
    pub order: Option<String>,
    /// Its parameters, as JSON text (default `{}`).
    pub params: Option<String>,
    /// Its place in the app order, from 0 (default: last; `POST` only).
    pub position: Option<usize>,
}

impl LoadQuery {
    fn spec(self, name: String) -> Result<(LoadSpec, Option<usize>), ApiError> {
        if name.is_empty()
            || name.len() > 64
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(ApiError::bad_request(format!(
                "bad app name {name:?}: 1 to 64 letters, digits, '_' or '-'"
            )));
        }
        // `/apps/order` is the order's resource.
        if name == "order" {
            return Err(ApiError::bad_request("an app cannot be named order"));
        }
        let order: Order = match &self.order {
            Some(o) => o.parse().map_err(ApiError::bad_request)?,
            None => Order::direct(0),
        };
        let params_json = self.params.unwrap_or_else(|| "{}".into());
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&params_json) {
            return Err(ApiError::bad_request(format!("params is not JSON: {e}")));
        }
        Ok((
            LoadSpec {
                name,
                order,
                params_json,
            },
            self.position,
        ))
    }
}

/// Why a module's body was not read, as the API's JSON error (over the cap: 413).
fn module_rejected(r: BytesRejection) -> ApiError {
    if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the module is larger than {MAX_MODULE} bytes (64 MiB)"),
        )
    } else {
        ApiError::new(r.status(), r.body_text())
    }
}

/// Loads an app at run time (a WebAssembly component, given to the configured
/// loader) and starts it. The body is the module (`application/wasm`).
#[utoipa::path(post, path = "/api/v1/apps", tag = "apps",
    params(LoadQuery),
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "The module"),
    security(("bearer" = [])),
    responses((status = 200, description = "Loaded and started; on every worker", body = AppChange),
        (status = 400, description = "A bad name, order or params", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
        (status = 413, description = "The module is larger than 64 MiB", body = ErrorBody),
        (status = 422, description = "The module did not load, or the app did not start", body = ErrorBody),
        (status = 501, description = "No loader is configured", body = ErrorBody)))]
pub async fn load(
    State(s): St,
    query: Result<Query<LoadQuery>, axum::extract::rejection::QueryRejection>,
    module: Result<Bytes, BytesRejection>,
) -> Result<Json<AppChange>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let module = module.map_err(module_rejected)?;
    let name = q
        .name
        .clone()
        .ok_or_else(|| ApiError::bad_request("the app's name is needed: ?name=NAME"))?;
    let (spec, position) = q.spec(name)?;
    change(&s, move |p| p.load_app(&spec, &module, position)).await
}

/// Replaces an app loaded at run time with a new module, in place (same position);
/// the old one stops, the new one starts. A module that does not load leaves the old
/// app running.
#[utoipa::path(put, path = "/api/v1/apps/{name}", tag = "apps",
    params(("name" = String, Path, description = "The loaded app"), LoadQuery),
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "The module"),
    security(("bearer" = [])),
    responses((status = 200, description = "Replaced; on every worker", body = AppChange),
        (status = 400, description = "A bad order or params", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No app has this name", body = ErrorBody),
        (status = 409, description = "The app is built in", body = ErrorBody),
        (status = 413, description = "The module is larger than 64 MiB", body = ErrorBody),
        (status = 422, description = "The module did not load, or the app did not start", body = ErrorBody),
        (status = 501, description = "No loader is configured", body = ErrorBody)))]
pub async fn reload(
    State(s): St,
    Path(name): Path<String>,
    query: Result<Query<LoadQuery>, axum::extract::rejection::QueryRejection>,
    module: Result<Bytes, BytesRejection>,
) -> Result<Json<AppChange>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let module = module.map_err(module_rejected)?;
    let (spec, _) = q.spec(name)?;
    change(&s, move |p| p.reload_app(&spec, &module)).await
}

/// Deletes an app loaded at run time: stopped (its flows deleted), then forgotten.
#[utoipa::path(delete, path = "/api/v1/apps/{name}", tag = "apps",
    params(("name" = String, Path, description = "The loaded app")),
    security(("bearer" = [])),
    responses((status = 200, description = "Deleted; on every worker", body = AppChange),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No app has this name", body = ErrorBody),
        (status = 409, description = "The app is built in (stop it instead)", body = ErrorBody)))]
pub async fn unload(State(s): St, Path(name): Path<String>) -> Result<Json<AppChange>, ApiError> {
    change(&s, move |p| p.remove_app(&name)).await
}

/// Runs a lifecycle change on a blocking task (it waits for every worker).
async fn change(
    s: &Shared,
    f: impl FnOnce(&controller::host::AppHost) -> Result<Change, LifecycleError> + Send + 'static,
) -> Result<Json<AppChange>, ApiError> {
    let p = Arc::clone(&s.core.apps);
    let r = tokio::task::spawn_blocking(move || f(&p))
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the change failed: {e}"),
            )
        })?;
    match r {
        Ok(c) => Ok(Json(AppChange {
            started: c.started.into_iter().map(String::from).collect(),
            stopped: c.stopped.into_iter().map(String::from).collect(),
            generation: c.generation,
            took_ms: c.took.as_secs_f64() * 1e3,
            flows_ms: c.flows_took.as_secs_f64() * 1e3,
        })),
        Err(e) => Err(refusal(&e)),
    }
}

/// The status a refused change answers with.
fn refusal(e: &LifecycleError) -> ApiError {
    use LifecycleError::*;
    let status = match e {
        UnknownApp(_) => StatusCode::NOT_FOUND,
        AlreadyRunning(_)
        | AlreadyStopped(_)
        | RequiredBy { .. }
        | NeedsProviders { .. }
        | NotLoaded(_)
        | Duplicate(_) => StatusCode::CONFLICT,
        BadOrder(_) => StatusCode::BAD_REQUEST,
        Start(_) | Load(_) => StatusCode::UNPROCESSABLE_ENTITY,
        NoLoader => StatusCode::NOT_IMPLEMENTED,
    };
    ApiError::new(status, e.to_string())
}
