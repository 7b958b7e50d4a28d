//! `/api/v1/static_flows`: named flows the controller keeps and installs on their
//! switch each time it connects (the `static_flows` app; see its module doc for how the
//! status is learnt).
//!
//! - `GET /static_flows`, `GET /static_flows/{name}`: each flow with its status on its
//!   switch: `installed`, `pending` (the switch is not connected, or has not answered
//!   yet) or `refused` (with the switch's error, `BAD_ACTION/BAD_OUT_PORT`).
//! - `POST /static_flows` `{"name", "dpid", "flow", "replace"?}`: kept (state file), and
//!   sent at once to the switch if it is connected; the answer waits for the switch's
//!   (up to `[api] switch_timeout`), so the status says what the switch made of it. A
//!   refused flow is still kept (201, status `refused`): the switch may take it later
//!   (a missing group or meter), and it is tried again at each connection. A flow
//!   replaced with another match, priority or table is first removed from its switch.
//! - `DELETE /static_flows/{name}`: forgotten, and removed from its switch (a strict
//!   delete: its table, priority and match) if connected.
//!
//! The flows of the configuration file (`source: "config"`) are listed but cannot be
//! replaced or deleted here (409): the file is theirs.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use apps::static_flows::{describe, Source, StaticFlow, StaticFlows, Status, StoreError};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use controller::requests::Reply;
use controller::switches::Switches;
use openflow::ofctl::{parse_flow, FlowModCommand};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::dpid::Dpid;
use crate::error::{ApiError, JsonBody};
use crate::model::ErrorBody;
use crate::{dpid, Shared};

/// A static flow and its status.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StaticFlowInfo {
    /// Its name (letters, digits, `.`, `_`, `-`).
    pub name: String,
    /// Its switch, `00:00:00:00:00:00:00:01`.
    pub dpid: String,
    /// The flow in `ovs-ofctl` syntax, as Pharos prints it.
    pub flow: String,
    /// `config` (pharos.toml, read-only here) or `api`.
    pub source: FlowSource,
    /// What the switch made of it.
    pub status: FlowStatus,
    /// Why it was refused (`BAD_ACTION/BAD_OUT_PORT`, or what the switch's OpenFlow
    /// version cannot express); null otherwise.
    pub error: Option<String>,
    /// Whether its switch is connected now (a flow of a switch not connected is
    /// pending).
    pub connected: bool,
    /// When it was added or replaced, or its status last changed, in Unix seconds.
    pub updated_at: u64,
}

/// Where a static flow comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FlowSource {
    /// `[[static_flows.flow]]` in the configuration file.
    Config,
    /// Added through this API.
    Api,
}

/// A static flow's status on its switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FlowStatus {
    /// The switch applied it.
    Installed,
    /// Its switch is not connected, or has not answered yet.
    Pending,
    /// The switch refused it (see `error`).
    Refused,
}

/// `POST /static_flows`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewStaticFlow {
    /// 1 to 64 letters, digits, `.`, `_` or `-`.
    pub name: String,
    /// The switch: `00:00:00:00:00:00:00:01`, `0x1`, `1`.
    pub dpid: String,
    /// The flow, as `ovs-ofctl add-flow` takes it:
    /// `priority=100,ip,nw_dst=10.0.0.2,actions=output:2`.
    pub flow: String,
    /// Replace a static flow of the same name (else 409).
    #[serde(default)]
    pub replace: bool,
}

/// `DELETE /static_flows/{name}`: the flow forgotten, and whether it left its switch.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DeletedStaticFlow {
    /// The flow as it was.
    pub deleted: StaticFlowInfo,
    /// The switch confirmed the strict delete (false: not connected, no answer, or
    /// refused, see `error`).
    pub removed_from_switch: bool,
    /// The switch's error for the delete, or why it was not sent; null otherwise.
    pub error: Option<String>,
}

impl StaticFlowInfo {
    fn new(f: &StaticFlow, connected: bool) -> StaticFlowInfo {
        let (status, error) = match (&f.status, connected) {
            (Status::Refused(why), _) => (FlowStatus::Refused, Some(why.clone())),
            (_, false) | (Status::Pending, _) => (FlowStatus::Pending, None),
            (Status::Installed, true) => (FlowStatus::Installed, None),
        };
        StaticFlowInfo {
            name: f.name.clone(),
            dpid: dpid::format(f.dpid),
            flow: f.flow.to_string(),
            source: match f.source {
                Source::Config => FlowSource::Config,
                Source::Api => FlowSource::Api,
            },
            status,
            error,
            connected,
            updated_at: f
                .updated_at
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }
}

type St = State<Arc<Shared>>;

fn store(s: &Shared) -> Result<Arc<StaticFlows>, ApiError> {
    s.core.services().get::<StaticFlows>().ok_or_else(|| {
        ApiError::unavailable("static flows are kept by the static_flows app, which is not running")
    })
}

fn info(s: &Shared, f: &StaticFlow) -> StaticFlowInfo {
    StaticFlowInfo::new(f, s.core.switches().is_connected(f.dpid))
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        let status = match e {
            StoreError::Exists(_)
            | StoreError::FromConfig(_)
            | StoreError::SameSelection { .. } => StatusCode::CONFLICT,
            StoreError::NotFound(_) => StatusCode::NOT_FOUND,
            StoreError::BadName(_) => StatusCode::BAD_REQUEST,
            StoreError::Save { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

/// The static flows, by name, with their status.
#[utoipa::path(get, path = "/api/v1/static_flows", tag = "static_flows",
    responses((status = 200, description = "The static flows", body = Vec<StaticFlowInfo>),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 503, description = "The static_flows app is not running", body = ErrorBody)))]
pub async fn list(State(s): St) -> Result<Json<Vec<StaticFlowInfo>>, ApiError> {
    let store = store(&s)?;
    Ok(Json(store.list().iter().map(|f| info(&s, f)).collect()))
}

/// One static flow.
#[utoipa::path(get, path = "/api/v1/static_flows/{name}", tag = "static_flows",
    params(("name" = String, Path, description = "The flow's name")),
    responses((status = 200, description = "The flow", body = StaticFlowInfo),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No static flow has this name", body = ErrorBody),
        (status = 503, description = "The static_flows app is not running", body = ErrorBody)))]
pub async fn get_one(
    State(s): St,
    Path(name): Path<String>,
) -> Result<Json<StaticFlowInfo>, ApiError> {
    let store = store(&s)?;
    let f = store
        .get(&name)
        .ok_or_else(|| ApiError::from(StoreError::NotFound(name)))?;
    Ok(Json(info(&s, &f)))
}

/// Adds (or with `"replace": true` replaces) a static flow, keeps it in the state
/// file, and sends it to its switch if connected; answers once the switch has (or
/// after the timeout, still pending).
#[utoipa::path(post, path = "/api/v1/static_flows", tag = "static_flows",
    request_body = NewStaticFlow,
    security(("bearer" = [])),
    responses((status = 201, description = "Kept; its status on the switch", body = StaticFlowInfo),
        (status = 400, description = "A bad name, dpid or flow (the offending token named), or malformed JSON", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 409, description = "The name is taken (and replace is not set), the flow is the configuration file's, or another static flow of the switch has the same table, priority and match", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 500, description = "The state file could not be written (nothing changed)", body = ErrorBody),
        (status = 503, description = "The static_flows app is not running", body = ErrorBody)))]
pub async fn create(
    State(s): St,
    JsonBody(new): JsonBody<NewStaticFlow>,
) -> Result<(StatusCode, Json<StaticFlowInfo>), ApiError> {
    let store = store(&s)?;
    apps::static_flows::config::check_static_flow_name(&new.name).map_err(ApiError::bad_request)?;
    let dpid = dpid::parse(&new.dpid).map_err(ApiError::bad_request)?;
    let flow =
        parse_flow(&new.flow).map_err(|e| ApiError::bad_request(format!("bad flow: {e}")))?;
    let (added, old) = store.add(&new.name, dpid, flow, new.replace)?;
    let switches = s.core.switches();
    if let Some(old) = old {
        let moved = old.dpid != added.dpid
            || old.flow.table != added.flow.table
            || old.flow.priority != added.flow.priority
            || old.flow.matching != added.flow.matching;
        if moved {
            // Its table, priority or match changed: the new ADD does not overwrite it.
            let _ = remove_from_switch(switches, &old, s.switch_timeout).await;
        }
    }
    tracing::info!(name = added.name, dpid = %dpid, flow = %added.flow, "REST: static flow kept");
    push(&store, switches, &added, s.switch_timeout).await;
    let now = store.get(&added.name).unwrap_or(added);
    Ok((StatusCode::CREATED, Json(info(&s, &now))))
}

/// Forgets a static flow and removes it from its switch (strict delete) if connected.
#[utoipa::path(delete, path = "/api/v1/static_flows/{name}", tag = "static_flows",
    params(("name" = String, Path, description = "The flow's name")),
    security(("bearer" = [])),
    responses((status = 200, description = "Forgotten; whether it left its switch", body = DeletedStaticFlow),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No static flow has this name", body = ErrorBody),
        (status = 409, description = "The flow is the configuration file's", body = ErrorBody),
        (status = 500, description = "The state file could not be written (nothing changed)", body = ErrorBody),
        (status = 503, description = "The static_flows app is not running", body = ErrorBody)))]
pub async fn delete(
    State(s): St,
    Path(name): Path<String>,
) -> Result<Json<DeletedStaticFlow>, ApiError> {
    let store = store(&s)?;
    let old = store.remove(&name)?;
    let deleted = info(&s, &old);
    tracing::info!(name, dpid = %old.dpid, "REST: static flow deleted");
    let outcome = remove_from_switch(s.core.switches(), &old, s.switch_timeout).await;
    Ok(Json(DeletedStaticFlow {
        deleted,
        removed_from_switch: outcome.is_ok(),
        error: outcome.err(),
    }))
}

/// Sends `msg` then a barrier to `dpid` and waits (up to `timeout`) for the
/// answer. `None`: not sent (the switch is not connected).
async fn ask(
    switches: &Switches,
    dpid: Dpid,
    msg: &openflow::Message,
    timeout: Duration,
) -> Option<Reply> {
    crate::ask::applied_reply(switches, dpid, msg, timeout)
        .await
        .ok()
}

/// Sends `f` to its switch, if connected, and records what the switch made of it.
async fn push(store: &StaticFlows, switches: &Switches, f: &StaticFlow, timeout: Duration) {
    let Some(version) = switches.info(f.dpid).map(|i| i.version) else {
        return;
    };
    let msg = match apps::static_flows::flow_mod(&f.flow, version, FlowModCommand::Add) {
        Ok(m) => m,
        Err(e) => {
            let why = format!("cannot be sent to this OpenFlow {version} switch: {e}");
            store.set_status(&f.name, f.generation, Status::Refused(why));
            return;
        }
    };
    let status = match ask(switches, f.dpid, &msg, timeout).await {
        Some(Reply::Messages(_)) => Status::Installed,
        Some(Reply::Error(e)) => Status::Refused(
            describe(&e).map_or_else(|| "refused with an ERROR".into(), |(_, text)| text),
        ),
        // Not connected, no answer in time, or gone: sent again when it connects.
        _ => Status::Pending,
    };
    if let Status::Refused(why) = &status {
        tracing::warn!(name = f.name, dpid = %f.dpid, error = why, "static flow refused by the switch");
    }
    store.set_status(&f.name, f.generation, status);
}

/// Removes `f` from its switch (strict delete: its table, priority and match) and
/// waits for the switch's answer; `Err` says why it is not known to be gone.
async fn remove_from_switch(
    switches: &Switches,
    f: &StaticFlow,
    timeout: Duration,
) -> Result<(), String> {
    let Some(version) = switches.info(f.dpid).map(|i| i.version) else {
        return Err(format!("switch {} is not connected", dpid::format(f.dpid)));
    };
    let msg = apps::static_flows::flow_mod(&f.flow, version, FlowModCommand::DeleteStrict)
        .map_err(|e| format!("cannot be sent to this OpenFlow {version} switch: {e}"))?;
    match ask(switches, f.dpid, &msg, timeout).await {
        Some(Reply::Messages(_)) => Ok(()),
        Some(Reply::Error(e)) => Err(describe(&e).map_or_else(
            || "refused with an ERROR".into(),
            |(_, text)| format!("the switch refused the delete: {text}"),
        )),
        Some(Reply::TimedOut) => Err(format!(
            "the switch did not answer the delete in {timeout:?}"
        )),
        Some(Reply::SwitchGone) | None => {
            Err(format!("switch {} is not connected", dpid::format(f.dpid)))
        }
        Some(Reply::Busy) => Err(format!(
            "switch {} is busy (its queue is full): try again",
            dpid::format(f.dpid)
        )),
    }
}
