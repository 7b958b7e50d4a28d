//! The resources under `/api/v1`, one handler each, and the OpenAPI document made from
//! their annotations ([`ApiDoc`]).
//!
//! Every read takes what the core and the services already publish for readers: the
//! `Switches` directory (a read lock held for a copy of a few `Arc`s), the counters
//! snapshots, `Topology::snapshot`, `Devices::all`. None of them waits for a worker.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use apps::devices::Devices;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use controller::info::PORT_CONFIG_DOWN;
use openflow::{of10, of13, Message, Version};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::dpid::Dpid;
use crate::error::{ApiError, JsonBody};
use crate::model::*;
use crate::routes_switch::lock;
use crate::{dpid, Shared};

/// The OpenAPI 3.1 document, generated from the handlers' annotations.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Pharos REST API",
        description = "The northbound interface of the Pharos OpenFlow controller. Writes need `Authorization: Bearer TOKEN`; reads are open on a loopback address unless `[api] read_auth = true`."
    ),
    paths(
        healthz,
        controller_info,
        switches,
        switch,
        port_change,
        crate::routes_switch::ports,
        crate::routes_switch::flows,
        crate::routes_switch::add_flow,
        crate::routes_switch::delete_flows,
        crate::routes_switch::groups,
        crate::routes_switch::meters,
        crate::routes_switch::tables,
        crate::routes_switch::packet_out,
        links,
        hosts,
        crate::port_rates::port_rates,
        topology,
        crate::routes_app::app_list,
        crate::routes_app::start,
        crate::routes_app::stop,
        crate::routes_app::restart,
        crate::routes_app::order,
        crate::routes_app::load,
        crate::routes_app::reload,
        crate::routes_app::unload,
        crate::events::events,
        crate::paths::path,
        crate::static_flows::list,
        crate::static_flows::get_one,
        crate::static_flows::create,
        crate::static_flows::delete,
        metrics,
        metrics_v1,
        openapi
    ),
    components(schemas(
        crate::events::SwitchEventData,
        crate::events::PortEventData,
        crate::events::LinkEventData,
        crate::events::HostEventData,
        crate::events::AppEventData,
        crate::events::LaggedData
    )),
    modifiers(&BearerAuth),
    tags(
        (name = "controller", description = "The controller itself"),
        (name = "switches", description = "Connected switches"),
        (name = "flows", description = "Switches' flow tables, groups, meters and tables, read live and changed; PACKET_OUT"),
        (name = "network", description = "Links and hosts found by the apps"),
        (name = "apps", description = "The app pipeline: apps started, stopped, re-ordered, loaded and deleted while switches are connected"),
        (name = "static_flows", description = "Named flows the controller keeps and installs on their switch at each connection")
    )
)]
pub struct ApiDoc;

/// Declares the `bearer` security scheme the write routes name.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

type St = State<Arc<Shared>>;

/// Whether the API answers.
#[utoipa::path(get, path = "/api/v1/healthz", tag = "controller",
    responses((status = 200, description = "The API answers", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

/// Version, uptime, workers, listen addresses, apps and counters.
#[utoipa::path(get, path = "/api/v1/controller", tag = "controller",
    responses((status = 200, description = "The controller", body = ControllerInfo),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn controller_info(State(s): St) -> Json<ControllerInfo> {
    let core = &s.core;
    let counters = core.controller.counters();
    Json(ControllerInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        uptime_secs: s.started.elapsed().as_secs_f64(),
        started_at: unix_secs(s.started_at),
        workers: core.controller.workers(),
        listen: core
            .controller
            .local_addrs()
            .iter()
            .map(|a| a.to_string())
            .collect(),
        api_listen: s.local_addr.to_string(),
        apps: core
            .apps
            .app_names()
            .into_iter()
            .map(String::from)
            .collect(),
        counters: ControllerCounters::new(&counters, &core.apps.counters()),
    })
}

/// The connected switches, by dpid.
#[utoipa::path(get, path = "/api/v1/switches", tag = "switches",
    responses((status = 200, description = "The connected switches", body = Vec<SwitchSummary>),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn switches(State(s): St) -> Response {
    let directory = s.core.switches();
    // Loaded before the map is read: if a change comes in between, the document is
    // kept under the older generation and made again on the next request.
    let generation = directory.generation();
    let cached = lock(&s.switches_cache)
        .as_ref()
        .filter(|(g, at, _)| *g == generation && at.elapsed() < SWITCHES_FRESH)
        .map(|(_, _, body)| body.clone());
    let body = match cached {
        Some(body) => body,
        None => {
            let list = summaries(&s);
            let body = Bytes::from(serde_json::to_vec(&list).expect("a switch list serializes"));
            *lock(&s.switches_cache) = Some((generation, Instant::now(), body.clone()));
            body
        }
    };
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// How long a rendered `/switches` is served again while no switch came, left or
/// changed its ports: its PACKET_IN rates come from the workers' counters, published
/// every 500 ms, so a younger copy would say nothing newer.
pub const SWITCHES_FRESH: Duration = Duration::from_millis(500);

/// The connected switches, with their PACKET_IN rates from the workers' counters
/// (read once for all of them; a counter of an earlier connection is not used).
fn summaries(s: &Shared) -> Vec<SwitchSummary> {
    let counters = s.core.controller.counters();
    // The snapshot names its switch by the printed dpid: read back, for any form.
    let rates: HashMap<Dpid, (std::net::SocketAddr, f64)> = counters
        .switches
        .iter()
        .filter_map(|c| Some((dpid::parse(&c.dpid).ok()?, (c.peer, c.packet_ins_per_sec))))
        .collect();
    s.core
        .switches()
        .connected_since()
        .iter()
        .map(|(info, since)| {
            let mut sum = SwitchSummary::new(info, *since);
            if let Some(&(peer, rate)) = rates.get(&info.dpid) {
                if peer == info.peer {
                    sum.packet_ins_per_sec = rate + 0.0;
                }
            }
            sum
        })
        .collect()
}

/// Reads the `{dpid}` of a path; 400 with the reason when it is not one.
fn path_dpid(text: &str) -> Result<Dpid, ApiError> {
    dpid::parse(text).map_err(ApiError::bad_request)
}

fn no_switch(dpid: Dpid) -> ApiError {
    ApiError::not_found(format!(
        "no switch {} is connected",
        crate::dpid::format(dpid)
    ))
}

/// One switch: version, peer, connected since, description, features, ports,
/// counters. The description is asked of the switch once per connection (this waits
/// for it at most a second; `null` until it came).
#[utoipa::path(get, path = "/api/v1/switches/{dpid}", tag = "switches",
    params(("dpid" = String, Path, description = "`00:00:00:00:00:00:00:01`, `0x1`, `of:0000000000000001`, `0000000000000001` (16 hex digits) or decimal `1`")),
    responses((status = 200, description = "The switch", body = SwitchDetail),
        (status = 400, description = "Not a dpid", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody)))]
pub async fn switch(State(s): St, Path(id): Path<String>) -> Result<Json<SwitchDetail>, ApiError> {
    let dpid = path_dpid(&id)?;
    let (info, since) = s
        .core
        .switches()
        .info_since(dpid)
        .ok_or_else(|| no_switch(dpid))?;
    // The same connection's (a reconnected switch's new peer has none yet).
    let counters = s
        .core
        .controller
        .switch_counters(dpid)
        .filter(|c| c.peer == info.peer);
    let mut detail = SwitchDetail::new(&info, since, counters.as_ref());
    detail.description = crate::routes_switch::description(&s, &info, since).await;
    Ok(Json(detail))
}

/// Sets a port administratively up or down (PORT_MOD). Answers once the message is
/// queued to the switch; the port list shows the change when the switch confirms it
/// with PORT_STATUS.
#[utoipa::path(post, path = "/api/v1/switches/{dpid}/ports/{port}", tag = "switches",
    params(("dpid" = String, Path, description = "The switch"),
        ("port" = String, Path, description = "The port number, or its name")),
    request_body = PortChange,
    security(("bearer" = [])),
    responses((status = 202, description = "PORT_MOD sent", body = PortChangeSent),
        (status = 400, description = "Not a dpid, or malformed JSON (with its position)", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch or port", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody)))]
pub async fn port_change(
    State(s): St,
    Path((id, port)): Path<(String, String)>,
    JsonBody(change): JsonBody<PortChange>,
) -> Result<(StatusCode, Json<PortChangeSent>), ApiError> {
    let dpid = path_dpid(&id)?;
    let switches = s.core.switches();
    let info = switches.info(dpid).ok_or_else(|| no_switch(dpid))?;
    let p = match port.parse::<u32>() {
        Ok(n) => info.port(n),
        Err(_) => info.ports.iter().find(|p| p.name == port),
    }
    .ok_or_else(|| {
        ApiError::not_found(format!(
            "switch {} has no port {port:?}",
            dpid::format(dpid)
        ))
    })?;
    let config = if change.up { 0 } else { PORT_CONFIG_DOWN };
    let msg = match info.version {
        Version::V1_0 => {
            let port_no = u16::try_from(p.port_no).map_err(|_| {
                ApiError::bad_request(format!("port {} is not a 1.0 port", p.port_no))
            })?;
            Message::V10(of10::Message::PortMod(of10::PortMod {
                port_no,
                hw_addr: p.hw_addr,
                config,
                mask: PORT_CONFIG_DOWN,
                advertise: 0,
            }))
        }
        Version::V1_3 => Message::V13(of13::Message::PortMod(of13::PortMod {
            port_no: p.port_no,
            hw_addr: p.hw_addr,
            config,
            mask: PORT_CONFIG_DOWN,
            advertise: 0,
        })),
    };
    switches
        .send(dpid, &msg)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    tracing::info!(dpid = %dpid, port = p.port_no, up = change.up, "REST: PORT_MOD sent");
    Ok((
        StatusCode::ACCEPTED,
        Json(PortChangeSent {
            dpid: dpid::format(dpid),
            port: p.port_no,
            up: change.up,
        }),
    ))
}

fn topology_service(s: &Shared) -> Result<Arc<apps::topology::Topology>, ApiError> {
    s.core
        .services()
        .get::<apps::topology::Topology>()
        .ok_or_else(|| {
            ApiError::unavailable(
                "links are found by the topology app, which is not running (see --apps)",
            )
        })
}

fn devices_service(s: &Shared) -> Result<Arc<Devices>, ApiError> {
    s.core.services().get::<Devices>().ok_or_else(|| {
        ApiError::unavailable(
            "hosts are tracked by the device_manager app, which is not running (see --apps)",
        )
    })
}

fn link_list(t: &apps::topology::Topology) -> Vec<Link> {
    t.snapshot()
        .links()
        .iter()
        .map(|l| Link {
            src: Endpoint {
                dpid: dpid::format(l.src),
                port: l.src_port,
            },
            dst: Endpoint {
                dpid: dpid::format(l.dst),
                port: l.dst_port,
            },
        })
        .collect()
}

fn host_list(d: &Devices) -> Vec<Host> {
    let now = std::time::Instant::now();
    d.all()
        .iter()
        .map(|h| {
            let ap = h.attachment_point();
            Host {
                mac: h.mac().to_string(),
                vlan: h.vlan(),
                attachment: Endpoint {
                    dpid: dpid::format(ap.dpid),
                    port: ap.port,
                },
                ips: h.ips().iter().map(|ip| ip.to_string()).collect(),
                last_seen_secs_ago: now.saturating_duration_since(h.last_seen()).as_secs_f64(),
            }
        })
        .collect()
}

/// The directed links discovery found (a cable is two links, one each way).
#[utoipa::path(get, path = "/api/v1/links", tag = "network",
    responses((status = 200, description = "The links", body = Vec<Link>),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 503, description = "The topology app is not running", body = ErrorBody)))]
pub async fn links(State(s): St) -> Result<Json<Vec<Link>>, ApiError> {
    let t = topology_service(&s)?;
    Ok(Json(link_list(&t)))
}

/// The hosts the device manager tracks.
#[utoipa::path(get, path = "/api/v1/hosts", tag = "network",
    responses((status = 200, description = "The hosts", body = Vec<Host>),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 503, description = "The device_manager app is not running", body = ErrorBody)))]
pub async fn hosts(State(s): St) -> Result<Json<Vec<Host>>, ApiError> {
    let d = devices_service(&s)?;
    Ok(Json(host_list(&d)))
}

/// Switches, links and hosts in one document (links and hosts empty when their app is
/// not running).
#[utoipa::path(get, path = "/api/v1/topology", tag = "network",
    responses((status = 200, description = "The network", body = Topology),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn topology(State(s): St) -> Json<Topology> {
    let switches = summaries(&s);
    Json(Topology {
        switches,
        links: topology_service(&s).map_or_else(|_| Vec::new(), |t| link_list(&t)),
        hosts: devices_service(&s).map_or_else(|_| Vec::new(), |d| host_list(&d)),
    })
}

/// The counters in the Prometheus text exposition format 0.0.4 (Faucet's names where
/// Faucet has one, `dp_id` as `0x` and 16 hex digits; the list is in the README).
#[utoipa::path(get, path = "/metrics", tag = "controller",
    responses((status = 200, description = "The metrics, Prometheus text format", content_type = "text/plain", body = String),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn metrics(State(s): St) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        [(
            axum::http::header::CONTENT_TYPE,
            crate::metrics::CONTENT_TYPE,
        )],
        crate::metrics::render(&s.metrics),
    )
        .into_response()
}

/// The same as `/metrics`.
#[utoipa::path(get, path = "/api/v1/metrics", tag = "controller",
    responses((status = 200, description = "The metrics, Prometheus text format", content_type = "text/plain", body = String),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn metrics_v1(state: St) -> axum::response::Response {
    metrics(state).await
}

/// This document: OpenAPI 3.1, generated from the code.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "controller",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json"),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn openapi(State(s): St) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        s.openapi.clone(),
    )
        .into_response()
}
