//! `GET /api/v1/events`: a Server-Sent Events stream of what happens to switches,
//! ports, links, hosts and apps, for the web UI and scripts.
//!
//! ```text
//! worker threads (publishers' order lock held)        pharos-api thread
//! Switches ─ SwitchEvent ──┐                         ┌─► client 1: filter ─► SSE
//! Topology ─ TopologyEvent ┼─► Hub::post ─► broadcast┼─► client 2: filter ─► SSE
//! Devices  ─ HostEvent ────┤   (seq, time,  (bounded)└─► ...
//! Pipeline ─ AppEvent ─────┘    try-send)
//! ```
//!
//! The [`Hub`] subscribes once, when the API starts, to the core's `Switches`, the
//! pipeline's app events and, when their apps run, `Topology` and `Devices`. Its
//! callbacks run on the worker (or timer) thread that made the change: each copies the
//! event, numbers it and puts it into a `tokio::sync::broadcast` channel of
//! [`CAPACITY`] events, which never waits (a full channel overwrites its oldest event).
//! The rendering to JSON happens on the API's thread, per client. A client too slow to
//! keep up does not slow anyone: it skips what was overwritten and gets a `lagged`
//! event saying how many it missed.
//!
//! Each event is `event: TYPE` (`switch`, `port`, `link`, `host`, `app`, or `lagged`),
//! `id: SEQ` and one line of JSON data with `seq` (one counter over every type, so a
//! gap means a filtered or a missed event) and `time` (Unix seconds, with fractions),
//! then the fields of its type ([`SwitchEventData`], [`PortEventData`],
//! [`LinkEventData`], [`HostEventData`], [`AppEventData`], [`LaggedData`]). A comment
//! line (`: heartbeat`) goes out every [`HEARTBEAT`] of silence (`?heartbeat=SECS` for
//! another interval), so proxies keep the connection and clients see it alive. Events
//! are not kept: a client that reconnects gets what happens from then on (the
//! resources give the state; `Last-Event-ID` replays nothing).

use std::convert::Infallible;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use apps::devices::table::{AttachmentPoint, HostEvent};
use apps::devices::Devices;
use apps::topology::{Topology, TopologyEvent};
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use controller::events::{AppEvent, Publisher};
use controller::info::PortReason;
use controller::switches::SwitchEvent;
use futures_util::stream::{self, Stream};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;
use utoipa::{IntoParams, ToSchema};

use crate::error::ApiError;
use crate::model::{Endpoint, ErrorBody, Link, Port};
use crate::{dpid, Core, Shared};

/// Events the channel holds for the slowest client before it skips (and gets a
/// `lagged` event). A burst this large is a whole fat-tree's links found at once.
pub const CAPACITY: usize = 4096;

/// Silence after which a heartbeat comment is sent.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// One change, as a publisher told it, numbered.
#[derive(Debug, Clone)]
pub struct Posted {
    /// Its place among every event the hub posted, from 1.
    pub seq: u64,
    /// When it was posted.
    pub time: SystemTime,
    /// What happened.
    pub what: What,
}

/// What happened, as the publishers say it (rendered per client, on the API's thread).
#[derive(Debug, Clone)]
pub enum What {
    Switch(SwitchEvent),
    Topology(TopologyEvent),
    Host(HostEvent),
    App(AppEvent),
}

/// The channel every client's stream reads from (see the module doc).
#[derive(Debug)]
pub struct Hub {
    /// The next sequence number, held while an event is numbered and sent so that
    /// numbers go out in order.
    seq: Mutex<u64>,
    /// Never waits: a full channel drops its oldest event for the lagging receivers.
    tx: broadcast::Sender<Arc<Posted>>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            seq: Mutex::new(0),
            tx: broadcast::channel(CAPACITY).0,
        }
    }
}

impl Hub {
    /// A hub subscribed to the core's switches, the pipeline's apps and, when their
    /// apps run, the `Topology` and `Devices` services.
    pub fn attach(core: &Core) -> Arc<Hub> {
        let hub = Arc::new(Hub::default());
        let services = core.services();
        let h = Arc::clone(&hub);
        core.switches()
            .subscribers()
            .subscribe(Box::new(move |e: &SwitchEvent| {
                h.post(What::Switch(e.clone()))
            }));
        let h = Arc::clone(&hub);
        core.apps
            .subscribers()
            .subscribe(Box::new(move |e: &AppEvent| h.post(What::App(e.clone()))));
        if let Some(t) = services.get::<Topology>() {
            let h = Arc::clone(&hub);
            t.subscribers()
                .subscribe(Box::new(move |e: &TopologyEvent| {
                    // Switches come and go through the core's own events.
                    if matches!(
                        e,
                        TopologyEvent::LinkAdded(_) | TopologyEvent::LinkRemoved(..)
                    ) {
                        h.post(What::Topology(e.clone()))
                    }
                }));
        }
        if let Some(d) = services.get::<Devices>() {
            let h = Arc::clone(&hub);
            d.subscribers()
                .subscribe(Box::new(move |e: &HostEvent| h.post(What::Host(e.clone()))));
        }
        hub
    }

    /// Numbers `what` and puts it in the channel; never waits for a client. Called on
    /// the publisher's thread.
    pub fn post(&self, what: What) {
        let mut seq = self.seq.lock().unwrap_or_else(|e| e.into_inner());
        *seq += 1;
        let posted = Arc::new(Posted {
            seq: *seq,
            time: SystemTime::now(),
            what,
        });
        // No receiver (no client) is not an error: the event is for nobody.
        let _ = self.tx.send(posted);
    }

    /// A receiver of what is posted from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Posted>> {
        self.tx.subscribe()
    }
}

/// The event types a client can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    Switch,
    Port,
    Link,
    Host,
    App,
}

impl EventType {
    const ALL: [EventType; 5] = [
        EventType::Switch,
        EventType::Port,
        EventType::Link,
        EventType::Host,
        EventType::App,
    ];

    /// The SSE `event:` name.
    pub fn name(self) -> &'static str {
        match self {
            EventType::Switch => "switch",
            EventType::Port => "port",
            EventType::Link => "link",
            EventType::Host => "host",
            EventType::App => "app",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl FromStr for EventType {
    type Err = String;
    fn from_str(s: &str) -> Result<EventType, String> {
        EventType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                format!("unknown event type {s:?}: the types are switch, port, link, host, app")
            })
    }
}

/// `GET /events`'s query.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// The types wanted, comma-separated (`switch,link`); every type when absent.
    pub types: Option<String>,
    /// Seconds of silence before a heartbeat comment (1 to 300; default 15).
    pub heartbeat: Option<u64>,
}

/// A set of [`EventType`]s, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Types(u8);

impl Types {
    fn parse(list: Option<&str>) -> Result<Types, String> {
        let Some(list) = list.filter(|l| !l.trim().is_empty()) else {
            return Ok(Types(u8::MAX));
        };
        let mut bits = 0;
        for t in list.split(',') {
            bits |= t.trim().parse::<EventType>()?.bit();
        }
        Ok(Types(bits))
    }

    fn has(self, t: EventType) -> bool {
        self.0 & t.bit() != 0
    }
}

/// `event: switch`: a switch connected (its handshake completed) or disconnected.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SwitchEventData {
    pub seq: u64,
    /// Unix seconds, with fractions.
    pub time: f64,
    /// `connected` or `disconnected`.
    pub event: String,
    pub dpid: String,
    /// `"1.0"` or `"1.3"` (connected only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its address (connected only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// Its ports (connected only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_ports: Option<usize>,
    /// Why its connection closed (disconnected only): `closed_by_switch`,
    /// `dead_peer`, `stalled`, `shutdown`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `event: port`: a switch's PORT_STATUS.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PortEventData {
    pub seq: u64,
    pub time: f64,
    /// `added`, `removed`, `up` or `down` (a change that made the port able to carry
    /// traffic, or unable), `modified` (any other change), or `unknown` (a reason
    /// neither version defines).
    pub event: String,
    pub dpid: String,
    /// The port as the message described it.
    pub port: Port,
    /// Whether it could carry traffic before; `null` when it was not listed.
    pub was_up: Option<bool>,
}

/// `event: link`: discovery found a directed link, or lost one.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LinkEventData {
    pub seq: u64,
    pub time: f64,
    /// `added` or `removed`.
    pub event: String,
    pub link: Link,
    /// Why it went (removed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `event: host`: the device manager saw a new host, saw one move or with a new
/// address, or forgot one.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HostEventData {
    pub seq: u64,
    pub time: f64,
    /// `added`, `moved`, `ip_added` or `removed`.
    pub event: String,
    pub mac: String,
    /// Its VLAN, `null` when untagged.
    pub vlan: Option<u16>,
    /// Where it is (where it was, for `removed`); `null` for `ip_added`.
    pub attachment: Option<Endpoint>,
    /// Where it was (`moved` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Endpoint>,
    /// The address it gained (`ip_added`) or its addresses (`removed`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ips: Vec<String>,
}

/// `event: app`: an app was quarantined.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AppEventData {
    pub seq: u64,
    pub time: f64,
    /// `quarantined`, `started`, `stopped`, `loaded` or `unloaded`.
    pub event: String,
    pub app: String,
    /// The code that panicked (`PACKET_IN`, `timer`, `service event`, ...); empty
    /// for the other events.
    pub handler: String,
    /// The panic's message; empty for the other events.
    pub reason: String,
    /// The switch it ran for, if any.
    pub dpid: Option<String>,
}

/// `event: lagged`: this client fell more than the channel holds behind, and missed
/// `missed` events (always sent, whatever `types` says).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LaggedData {
    pub missed: u64,
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn json<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("an event serializes")
}

fn endpoint(ap: AttachmentPoint) -> Endpoint {
    Endpoint {
        dpid: dpid::format(ap.dpid),
        port: ap.port,
    }
}

/// `p`'s type and JSON (`None`: not an event clients see).
pub fn render(p: &Posted) -> Option<(EventType, serde_json::Value)> {
    let (seq, time) = (p.seq, unix(p.time));
    Some(match &p.what {
        What::Switch(SwitchEvent::Connected(info)) => (
            EventType::Switch,
            json(&SwitchEventData {
                seq,
                time,
                event: "connected".into(),
                dpid: dpid::format(info.dpid),
                version: Some(info.version.to_string()),
                peer: Some(info.peer.to_string()),
                n_ports: Some(info.ports.len()),
                reason: None,
            }),
        ),
        What::Switch(SwitchEvent::Disconnected { dpid: d, reason }) => (
            EventType::Switch,
            json(&SwitchEventData {
                seq,
                time,
                event: "disconnected".into(),
                dpid: dpid::format(*d),
                version: None,
                peer: None,
                n_ports: None,
                reason: Some(reason.clone()),
            }),
        ),
        What::Switch(SwitchEvent::Port {
            dpid: d,
            reason,
            port,
            was_up,
        }) => {
            let event = match (reason, was_up) {
                (PortReason::Add, _) => "added",
                (PortReason::Delete, _) => "removed",
                (PortReason::Modify, Some(was)) if *was != port.is_up() => {
                    if port.is_up() {
                        "up"
                    } else {
                        "down"
                    }
                }
                (PortReason::Modify, _) => "modified",
                (PortReason::Unknown(_), _) => "unknown",
            };
            (
                EventType::Port,
                json(&PortEventData {
                    seq,
                    time,
                    event: event.into(),
                    dpid: dpid::format(*d),
                    port: Port::new(port),
                    was_up: *was_up,
                }),
            )
        }
        What::Topology(e) => {
            let (event, l, reason) = match e {
                TopologyEvent::LinkAdded(l) => ("added", l, None),
                TopologyEvent::LinkRemoved(l, why) => ("removed", l, Some(why.to_string())),
                TopologyEvent::SwitchAdded(_) | TopologyEvent::SwitchRemoved(_) => return None,
            };
            let link = Link {
                src: Endpoint {
                    dpid: dpid::format(l.src),
                    port: l.src_port,
                },
                dst: Endpoint {
                    dpid: dpid::format(l.dst),
                    port: l.dst_port,
                },
            };
            (
                EventType::Link,
                json(&LinkEventData {
                    seq,
                    time,
                    event: event.into(),
                    link,
                    reason,
                }),
            )
        }
        What::Host(e) => {
            let (event, key, attachment, from, ips) = match e {
                HostEvent::Added { key, ap } => ("added", *key, Some(*ap), None, Vec::new()),
                HostEvent::Moved { key, from, to } => {
                    ("moved", *key, Some(*to), Some(*from), Vec::new())
                }
                HostEvent::IpAdded { key, ip, .. } => {
                    ("ip_added", *key, None, None, vec![ip.to_string()])
                }
                HostEvent::Removed { host } => (
                    "removed",
                    host.key(),
                    Some(host.attachment_point()),
                    None,
                    host.ips().iter().map(|ip| ip.to_string()).collect(),
                ),
            };
            (
                EventType::Host,
                json(&HostEventData {
                    seq,
                    time,
                    event: event.into(),
                    mac: key.mac.to_string(),
                    vlan: key.vlan,
                    attachment: attachment.map(endpoint),
                    from: from.map(endpoint),
                    ips,
                }),
            )
        }
        What::App(AppEvent::Quarantined(q)) => (
            EventType::App,
            json(&AppEventData {
                seq,
                time,
                event: "quarantined".into(),
                app: q.app.into(),
                handler: q.handler.clone(),
                reason: q.panic.clone(),
                dpid: q.dpid.map(dpid::format),
            }),
        ),
        What::App(e) => {
            let (event, app) = match e {
                AppEvent::Started(a) => ("started", a),
                AppEvent::Stopped(a) => ("stopped", a),
                AppEvent::Loaded(a) => ("loaded", a),
                AppEvent::Unloaded(a) => ("unloaded", a),
                AppEvent::Quarantined(_) => return None,
            };
            (
                EventType::App,
                json(&AppEventData {
                    seq,
                    time,
                    event: event.into(),
                    app: (*app).into(),
                    handler: String::new(),
                    reason: String::new(),
                    dpid: None,
                }),
            )
        }
    })
}

/// One client's stream: its receiver, its filter, and the API's stop signal.
struct Client {
    rx: broadcast::Receiver<Arc<Posted>>,
    types: Types,
    stopping: watch::Receiver<bool>,
}

/// One event as a client gets it, before SSE framing.
#[derive(Debug, Clone, PartialEq)]
struct Out {
    /// The `event:` name.
    name: &'static str,
    /// The `id:` (none for `lagged`).
    id: Option<u64>,
    /// The JSON data.
    data: String,
}

impl Out {
    fn into_event(self) -> Event {
        let e = Event::default().event(self.name).data(self.data);
        match self.id {
            Some(id) => e.id(id.to_string()),
            None => e,
        }
    }
}

impl Client {
    /// The client's next event; `None` when the API stops.
    async fn next(&mut self) -> Option<Out> {
        loop {
            let got = tokio::select! {
                r = self.rx.recv() => r,
                _ = self.stopping.wait_for(|s| *s) => return None,
            };
            match got {
                Ok(p) => {
                    let Some((t, data)) = render(&p) else {
                        continue;
                    };
                    if self.types.has(t) {
                        return Some(Out {
                            name: t.name(),
                            id: Some(p.seq),
                            data: data.to_string(),
                        });
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "an event stream client lagged");
                    return Some(Out {
                        name: "lagged",
                        id: None,
                        data: json(&LaggedData { missed }).to_string(),
                    });
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// The live events: `switch`, `port`, `link`, `host` and `app` (see the module doc
/// of `api::events` for each one's data), a `: heartbeat` comment after 15 s of
/// silence, and `lagged` when this client fell behind.
#[utoipa::path(get, path = "/api/v1/events", tag = "network",
    params(EventsQuery),
    responses((status = 200, description = "A Server-Sent Events stream: `event: switch|port|link|host|app|lagged`, `id: SEQ`, `data: JSON` (SwitchEventData, PortEventData, LinkEventData, HostEventData, AppEventData, LaggedData)", content_type = "text/event-stream", body = String),
        (status = 400, description = "An unknown event type, or a heartbeat out of range", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn events(
    State(s): State<Arc<Shared>>,
    Query(q): Query<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let types = Types::parse(q.types.as_deref()).map_err(ApiError::bad_request)?;
    let heartbeat = match q.heartbeat {
        None => HEARTBEAT,
        Some(secs @ 1..=300) => Duration::from_secs(secs),
        Some(secs) => {
            return Err(ApiError::bad_request(format!(
                "heartbeat {secs} is out of range: 1 to 300 seconds"
            )))
        }
    };
    let client = Client {
        rx: s.events.subscribe(),
        types,
        stopping: s.stopping.clone(),
    };
    let stream = stream::unfold(client, |mut c| async move {
        let e = c.next().await?.into_event();
        Some((Ok(e), c))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(heartbeat).text("heartbeat")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpid::Dpid;

    #[test]
    fn types_parse_and_filter() {
        let t = Types::parse(Some("switch, link")).unwrap();
        assert!(t.has(EventType::Switch) && t.has(EventType::Link));
        assert!(!t.has(EventType::Port) && !t.has(EventType::Host) && !t.has(EventType::App));
        let all = Types::parse(None).unwrap();
        assert!(EventType::ALL.iter().all(|&e| all.has(e)));
        let e = Types::parse(Some("switch,flows")).unwrap_err();
        assert!(e.contains("\"flows\""), "{e}");
    }

    fn gone(dpid: Dpid) -> What {
        What::Switch(SwitchEvent::Disconnected {
            dpid,
            reason: "test".into(),
        })
    }

    #[tokio::test]
    async fn a_lagging_client_is_told_how_many_it_missed_and_the_sender_never_waits() {
        let hub = Hub::default();
        let (_stop, stopping) = watch::channel(false);
        let client = |types| Client {
            rx: hub.subscribe(),
            types: Types::parse(types).unwrap(),
            stopping: stopping.clone(),
        };
        let mut slow = client(None);
        // Twice what the channel holds, with no one reading: post returns each time.
        for d in 0..2 * CAPACITY as u64 {
            hub.post(gone(openflow::Dpid(d)));
        }
        // A client that came after the burst has missed nothing.
        let mut late = client(Some("switch"));
        hub.post(gone(openflow::Dpid(99)));
        let out = late.next().await.unwrap();
        assert_eq!(
            (out.name, out.id),
            ("switch", Some(2 * CAPACITY as u64 + 1))
        );
        assert!(out.data.contains("\"disconnected\""), "{}", out.data);
        // The slow one is told how many it missed, then gets the oldest still held.
        let lagged = slow.next().await.unwrap();
        assert_eq!(lagged.name, "lagged");
        let missed = 2 * CAPACITY as u64 + 1 - CAPACITY as u64;
        assert_eq!(lagged.data, format!("{{\"missed\":{missed}}}"));
        let next = slow.next().await.unwrap();
        assert_eq!(next.id, Some(missed + 1));
    }

    #[tokio::test]
    async fn a_filtered_client_skips_other_types_and_ends_when_the_api_stops() {
        let hub = Hub::default();
        let (stop, stopping) = watch::channel(false);
        let mut c = Client {
            rx: hub.subscribe(),
            types: Types::parse(Some("app")).unwrap(),
            stopping,
        };
        hub.post(gone(openflow::Dpid(1)));
        hub.post(What::App(AppEvent::Quarantined(
            controller::events::Quarantine {
                app: "a",
                handler: "timer".into(),
                panic: "boom".into(),
                dpid: None,
            },
        )));
        let out = c.next().await.unwrap();
        assert_eq!((out.name, out.id), ("app", Some(2)));
        let v: serde_json::Value = serde_json::from_str(&out.data).unwrap();
        assert_eq!(
            (v["app"].as_str(), v["reason"].as_str()),
            (Some("a"), Some("boom"))
        );
        stop.send(true).unwrap();
        assert_eq!(c.next().await, None);
    }
}
