//! # pharos-api: the northbound REST API
//!
//! axum on a tokio runtime of its own: one thread, `pharos-api`, never a worker thread.
//! Handlers read what the core and the services publish for readers (the `Switches`
//! directory, the counters snapshots, `Topology` and `Devices`), so a request never
//! waits for a worker, and a worker never waits for a request.
//!
//! ```text
//! pharos run ─► Controller::start ─► Handle ──┐
//!            └► Pipeline (services) ──────────┤ Core
//!                                             ▼
//!            api::Server::start ─► thread "pharos-api": current-thread tokio runtime
//!                                   └─ axum: auth layer ─► routes (/api/v1/..., /metrics,
//!                                                              the UI at /)
//! ```
//!
//! - [`auth`]: the bearer token (environment, file, or generated into a 0600 file) and
//!   its constant-time check. Writes always need it; reads need it off loopback and
//!   with `read_auth`. `/api/v1/healthz` is always open (a liveness probe holds no
//!   secret and reveals nothing).
//! - [`routes`]: the resources and the OpenAPI 3.1 document made from their
//!   annotations (`utoipa`), served at `/api/v1/openapi.json`.
//! - [`routes_app`]: `/api/v1/apps`: the apps listed, started, stopped, restarted,
//!   re-ordered, loaded (a module given to the pipeline's loader), replaced and deleted
//!   while switches are connected.
//! - [`static_flows`]: `/api/v1/static_flows`, the named flows the `static_flows` app
//!   installs on each switch that connects, with their status on it.
//! - [`metrics`]: `GET /metrics` (also `/api/v1/metrics`), the counters in the
//!   Prometheus text format, read from the core's snapshots at scrape time.
//! - [`events`]: `GET /api/v1/events`, the live events as Server-Sent Events, from a
//!   [`events::Hub`] the core's publishers post into without waiting.
//! - [`paths`]: `GET /api/v1/paths/{src}/{dst}`, the routing engine's path.
//! - [`port_rates`]: `GET /api/v1/port_rates`, each port's bit rates and utilisation
//!   from port statistics polled every few seconds while someone reads them.
//! - [`routes_switch`]: the routes that ask a switch (description, port statistics,
//!   the flow table read, added to and deleted from, groups, meters, tables,
//!   PACKET_OUT), through [`ask`]: the core's request path with `[api] switch_timeout`;
//!   their documents and the JSON form of a flow in [`switch_model`].
//! - [`ui`]: the web UI, embedded in the binary at build time, at `/` (files under
//!   `/ui/...`, `index.html` for the UI's own routes); never behind the token.
//! - [`model`]: the JSON documents; [`error`]: `{"error": "..."}` refusals, the JSON
//!   body extractor, the 1 MiB body limit; [`dpid`]: dpids as people write them.
//!
//! Shutdown ([`Server::shutdown`], also on drop) stops accepting, lets requests in
//! flight finish for up to [`GRACE`], and joins the thread.

pub mod ask;
pub mod auth;
pub mod dpid;
pub mod error;
pub mod events;
pub mod metrics;
pub mod model;
pub mod paths;
pub mod port_rates;
pub mod routes;
pub mod routes_app;
pub mod routes_switch;
pub mod static_flows;
pub mod switch_model;
pub mod tls;
pub mod ui;

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::Router;
use controller::controller::Handle;
use controller::host::AppHost;
use controller::services::Services;
use controller::switches::Switches;
use tokio::sync::watch;
use utoipa::OpenApi as _;

use crate::auth::{Check, Token};
use crate::error::{ApiError, MAX_BODY};

/// How long requests in flight may take to finish at shutdown before they are cut.
pub const GRACE: Duration = Duration::from_secs(2);

/// What the API reads from: the core's narrow handles (never its dispatcher), and the
/// running controller.
#[derive(Debug, Clone)]
pub struct Core {
    /// The app-control handle: the apps' states, starts, stops, loads, timings and
    /// counters.
    pub apps: Arc<AppHost>,
    /// The directory of connected switches, and the way to send to them.
    pub switches: Arc<Switches>,
    /// The services (`Topology`, `Devices`, `Paths`, static flows).
    pub services: Arc<Services>,
    /// The running controller: listen addresses, workers, counters.
    pub controller: Arc<Handle>,
}

impl Core {
    /// The handles of `core` (what `AppHost::build` made) and the running `controller`.
    pub fn new(core: &controller::host::Core, controller: Arc<Handle>) -> Core {
        Core {
            apps: Arc::clone(&core.apps),
            switches: Arc::clone(&core.switches),
            services: Arc::clone(&core.services),
            controller,
        }
    }

    /// The directory of connected switches.
    pub fn switches(&self) -> &Arc<Switches> {
        &self.switches
    }

    /// The services.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }
}

/// The API's settings, resolved (the token read or made).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The token.
    pub token: Token,
    /// Reads need the token even on loopback (they always do elsewhere).
    pub read_auth: bool,
    /// How long a request to a switch waits for its answer (`[api] switch_timeout`).
    pub switch_timeout: Duration,
    /// HTTPS with these settings ([`tls::server_config`] from `[api] tls`); `None`:
    /// plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

/// What every handler shares.
#[derive(Debug)]
pub struct Shared {
    /// What is read.
    pub core: Core,
    /// The token requests are checked against.
    token: Token,
    /// Reads need the token: `read_auth`, or a listen address other than loopback.
    reads_need_token: bool,
    /// For `uptime_secs`.
    pub started: Instant,
    /// For `started_at`.
    pub started_at: SystemTime,
    /// The bound address (the real port when 0 was asked for).
    pub local_addr: SocketAddr,
    /// The OpenAPI document, rendered once.
    pub openapi: String,
    /// What `/metrics` renders: a collector reading the core at each scrape.
    pub metrics: prometheus_client::registry::Registry,
    /// The live events `/events` streams (subscribed to the core once, at start).
    pub events: Arc<events::Hub>,
    /// Becomes `true` when the API stops: event streams end then, so shutdown does
    /// not wait for them.
    pub stopping: watch::Receiver<bool>,
    /// How long a request to a switch waits for its answer.
    pub switch_timeout: Duration,
    /// The `/switches` document last rendered, with the `Switches` generation it was
    /// rendered at and when: served again while no switch came, left or changed its
    /// ports, for [`routes::SWITCHES_FRESH`] (its PACKET_IN rates age).
    pub switches_cache: Mutex<Option<(u64, Instant, axum::body::Bytes)>>,
    /// Each switch's description (DESC), read once per connection.
    pub descriptions: switch_model::Descriptions,
    /// The ports' rates, polled from the switches while someone reads them.
    pub port_rates: port_rates::Poller,
}

/// The running API.
#[derive(Debug)]
pub struct Server {
    /// The bound address.
    local_addr: SocketAddr,
    /// Set to `true` to stop.
    stop: watch::Sender<bool>,
    /// The `pharos-api` thread; taken by the first shutdown.
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The API's routes, with auth and the body limit, over `shared` (tests call it to
/// serve the API on their own runtime).
pub fn router(shared: Arc<Shared>) -> Router {
    use routes::*;
    let v1 = Router::new()
        .route("/healthz", get(healthz))
        .route("/controller", get(controller_info))
        .route("/switches", get(switches))
        .route("/switches/{dpid}", get(switch))
        .route("/switches/{dpid}/ports/{port}", post(port_change))
        .route("/switches/{dpid}/ports", get(routes_switch::ports))
        .route(
            "/switches/{dpid}/flows",
            get(routes_switch::flows)
                .post(routes_switch::add_flow)
                .delete(routes_switch::delete_flows),
        )
        .route("/switches/{dpid}/groups", get(routes_switch::groups))
        .route("/switches/{dpid}/meters", get(routes_switch::meters))
        .route("/switches/{dpid}/tables", get(routes_switch::tables))
        .route(
            "/switches/{dpid}/packet_out",
            post(routes_switch::packet_out),
        )
        .route("/links", get(links))
        .route("/hosts", get(hosts))
        .route("/port_rates", get(crate::port_rates::port_rates))
        .route("/topology", get(topology))
        .route(
            "/apps",
            get(routes_app::app_list)
                .post(routes_app::load)
                .layer(DefaultBodyLimit::max(routes_app::MAX_MODULE)),
        )
        .route("/apps/order", put(routes_app::order))
        .route(
            "/apps/{name}",
            put(routes_app::reload)
                .delete(routes_app::unload)
                .layer(DefaultBodyLimit::max(routes_app::MAX_MODULE)),
        )
        .route("/apps/{name}/start", post(routes_app::start))
        .route("/apps/{name}/stop", post(routes_app::stop))
        .route("/apps/{name}/restart", post(routes_app::restart))
        .route("/events", get(crate::events::events))
        .route("/paths/{src}/{dst}", get(crate::paths::path))
        .route(
            "/static_flows",
            get(static_flows::list).post(static_flows::create),
        )
        .route(
            "/static_flows/{name}",
            get(static_flows::get_one).delete(static_flows::delete),
        )
        .route("/metrics", get(metrics_v1))
        .route("/openapi.json", get(openapi));
    Router::new()
        // At the root, where Prometheus looks by default; also under /api/v1.
        .route("/metrics", get(metrics))
        .route("/ui/{*path}", get(ui::file))
        .nest("/api/v1", v1)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(Arc::clone(&shared), auth))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared)
}

/// The UI's `index.html` for a client route; the API's JSON 404 for anything else.
async fn not_found(req: Request) -> Response {
    if let Some(index) = ui::index_for(&req) {
        return index;
    }
    ApiError::not_found(format!(
        "no resource {}: see /api/v1/openapi.json",
        req.uri().path()
    ))
    .into_response()
}

async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} is not allowed on {}: see /api/v1/openapi.json",
            req.method(),
            req.uri().path()
        ),
    )
}

/// Writes need the token; reads when `reads_need_token`; `/api/v1/healthz` and the
/// web UI's files (every path but `/api/...` and `/metrics`) never: they hold no secret,
/// and the UI asks for the token itself when it needs it.
async fn auth(State(s): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let write = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let path = req.uri().path();
    let open = !write && (path == "/api/v1/healthz" || !ui::is_api_path(path));
    if (write || s.reads_need_token) && !open {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        match s.token.check(given) {
            Check::Ok => {}
            Check::Missing => return ApiError::unauthorized().into_response(),
            Check::Wrong => return ApiError::forbidden().into_response(),
        }
    }
    next.run(req).await
}

impl Server {
    /// Binds `settings.listen` (an address in use is an `AddrInUse` error naming it) and
    /// serves the API on its own thread until [`Server::shutdown`].
    pub fn start(settings: Settings, core: Core) -> io::Result<Server> {
        let addr = settings.listen;
        let listener = std::net::TcpListener::bind(addr).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot listen on {addr} for the API: {e}"),
            )
        })?;
        listener.set_nonblocking(true)?;
        let local_addr = listener.local_addr()?;
        let (stop, stopped) = watch::channel(false);
        let shared = Arc::new(Shared {
            reads_need_token: settings.read_auth || !addr.ip().is_loopback(),
            token: settings.token,
            started: Instant::now(),
            started_at: SystemTime::now(),
            local_addr,
            openapi: openapi_json(),
            metrics: metrics::registry(core.clone()),
            events: events::Hub::attach(&core),
            stopping: stopped.clone(),
            switch_timeout: settings.switch_timeout,
            descriptions: Default::default(),
            port_rates: Default::default(),
            switches_cache: Mutex::new(None),
            core,
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let app = router(shared);
        let tls = settings.tls;
        let thread = std::thread::Builder::new()
            .name("pharos-api".into())
            .spawn(move || {
                yield_to_workers();
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            tracing::error!("the API cannot serve on {local_addr}: {e}");
                            return;
                        }
                    };
                    match tls {
                        Some(config) => match tls::TlsListener::new(listener, config) {
                            Ok(l) => serve_until_stopped(l, app, stopped).await,
                            Err(e) => tracing::error!("the API cannot serve on {local_addr}: {e}"),
                        },
                        None => serve_until_stopped(listener, app, stopped).await,
                    }
                });
            })?;
        Ok(Server {
            local_addr,
            stop,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, lets requests in flight finish (up to [`GRACE`]), joins the
    /// thread. Calling it twice is harmless.
    pub fn shutdown(&self) {
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = thread {
            let _ = self.stop.send(true);
            let _ = t.join();
            tracing::info!("API stopped");
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Serves `app` on `listener` until `stopped` turns true, then lets requests in flight
/// finish for up to [`GRACE`].
async fn serve_until_stopped<L>(listener: L, app: Router, stopped: watch::Receiver<bool>)
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    let mut signal = stopped.clone();
    let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
        let _ = signal.wait_for(|s| *s).await;
    });
    let mut stopped = stopped;
    let cut = async move {
        let _ = stopped.wait_for(|s| *s).await;
        tokio::time::sleep(GRACE).await;
    };
    tokio::select! {
        r = serve => if let Err(e) = r {
            tracing::error!("the API stopped: {e}");
        },
        () = cut => tracing::warn!("the API's requests in flight were cut at shutdown"),
    }
}

/// The OpenAPI document as JSON.
pub fn openapi_json() -> String {
    routes::ApiDoc::openapi()
        .to_pretty_json()
        .expect("the OpenAPI document serializes")
}

/// How much lower than the workers' the API thread's scheduling priority is (a nice
/// value added): on a core it shares with a busy worker, the API gets a tenth of the
/// core's time or so rather than half, and its wake-ups preempt the worker less. Reads
/// at 1,000 requests/s need a few percent of a core; the switches come first.
pub const API_NICE: i32 = 10;

/// Lowers this thread's priority by [`API_NICE`] (Linux: `setpriority` on the thread's
/// id changes that thread alone). A failure is logged and ignored: the API still runs.
fn yield_to_workers() {
    // SAFETY: gettid has no preconditions; setpriority only reads its arguments.
    let r = unsafe {
        let tid = libc::gettid();
        let now = libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t);
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, now + API_NICE)
    };
    if r != 0 {
        tracing::debug!(
            "the API thread keeps the workers' priority: {}",
            io::Error::last_os_error()
        );
    }
}
