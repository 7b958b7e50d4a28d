//! The JSON documents the API sends and takes. Each is a plain struct deriving
//! `Serialize` and `ToSchema`, so the OpenAPI document describes exactly what is sent.
//!
//! The core's own types (`SwitchInfo`, `CountersSnapshot`) are not sent as they are:
//! these are the API's contract, and the core may change its types without changing it.
//! Dpids are strings in the colon form (JSON numbers lose 64-bit precision); times are
//! Unix seconds.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use controller::counters::PipelineCountersSnapshot;
use controller::counters::{CountersSnapshot, SwitchSnapshot};
use controller::info::{PortInfo, SwitchInfo, PORT_CONFIG_DOWN, PORT_STATE_LINK_DOWN};
use openflow::common::DescStats;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::dpid;
pub use crate::error::ErrorBody;

/// `GET /healthz`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Health {
    /// Always `"ok"`: the API answers, so the controller runs.
    pub status: String,
}

/// `GET /controller`: the controller as a whole.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ControllerInfo {
    /// Pharos's version.
    pub version: String,
    /// Seconds since the API started (with the controller).
    pub uptime_secs: f64,
    /// When it started, in Unix seconds.
    pub started_at: u64,
    /// Worker threads serving switches.
    pub workers: usize,
    /// The addresses switches connect to (the real ports when 0 was asked for).
    pub listen: Vec<String>,
    /// The address this API listens on.
    pub api_listen: String,
    /// The apps, in pipeline order.
    pub apps: Vec<String>,
    /// Counters of the whole controller (worker counters at most 500 ms old).
    pub counters: ControllerCounters,
}

/// The controller's counters, totals over every switch.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ControllerCounters {
    /// Switches connected now.
    pub connected_switches: usize,
    /// PACKET_INs received.
    pub packet_ins: u64,
    /// PACKET_INs per second, summed over the connected switches.
    pub packet_ins_per_sec: f64,
    /// Messages in, by `"version TYPE"` (`"1.3 PACKET_IN"`).
    pub msgs_in: BTreeMap<String, u64>,
    /// Messages out, by `"version TYPE"`.
    pub msgs_out: BTreeMap<String, u64>,
    /// Outgoing messages lost.
    pub drops: u64,
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused at accept, by reason.
    pub refused: BTreeMap<String, u64>,
    /// Handshakes completed.
    pub established: u64,
    /// Handshakes in progress.
    pub pending_handshakes: usize,
    /// Connections accepted and waiting for a handshake slot (the caps of
    /// `[handshake]`: `max_pending`, `max_pending_per_ip`).
    pub waiting_handshakes: usize,
    /// Handshake failures, by reason.
    pub handshake_failures: BTreeMap<String, u64>,
    /// Disconnects of established switches, by reason.
    pub disconnects: BTreeMap<String, u64>,
    /// Connections closed for a bad frame, by reason.
    pub bad_frames: BTreeMap<String, u64>,
    /// Handler panics caught (each quarantines its app).
    pub handler_panics: u64,
    /// Messages from switches that could not be decoded.
    pub decode_errors: u64,
    /// Messages apps tried to send that could not be encoded.
    pub encode_errors: u64,
    /// Messages no handler was registered for.
    pub unhandled: u64,
    /// Replies delivered to requesters.
    pub replies: u64,
    /// Requests that timed out.
    pub request_timeouts: u64,
}

impl ControllerCounters {
    pub fn new(c: &CountersSnapshot, p: &PipelineCountersSnapshot) -> ControllerCounters {
        let t = &c.total;
        ControllerCounters {
            connected_switches: t.connected_switches,
            packet_ins: t.packet_ins,
            // `+ 0.0` turns the -0.0 an idle rate can be into 0.
            packet_ins_per_sec: t.packet_ins_per_sec + 0.0,
            msgs_in: t.msgs_in.clone(),
            msgs_out: t.msgs_out.clone(),
            drops: t.drops,
            accepted: t.accepted,
            refused: t.refused.clone(),
            established: t.established,
            pending_handshakes: t.pending_handshakes,
            waiting_handshakes: t.waiting_handshakes,
            handshake_failures: t.handshake_failures.clone(),
            disconnects: t.disconnects.clone(),
            bad_frames: t.bad_frames.clone(),
            handler_panics: p.handler_panics,
            decode_errors: p.decode_errors,
            encode_errors: p.encode_errors,
            unhandled: p.unhandled,
            replies: p.replies,
            request_timeouts: p.request_timeouts,
        }
    }
}

/// A connected switch, in the list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SwitchSummary {
    /// `00:00:00:00:00:00:00:01`.
    pub dpid: String,
    /// The negotiated OpenFlow version, `"1.0"` or `"1.3"`.
    pub version: String,
    /// The switch's address, as the controller sees it.
    pub peer: String,
    /// When its handshake completed, in Unix seconds.
    pub connected_since: u64,
    /// Ports it has.
    pub n_ports: usize,
    /// Ports that can carry traffic (not configured down, link not down).
    pub ports_up: usize,
    /// PACKET_INs per second over its worker's last publish interval, as in the
    /// switch's `counters` (0 until its worker has published since it connected).
    pub packet_ins_per_sec: f64,
}

impl SwitchSummary {
    /// The summary, with `packet_ins_per_sec` 0 (the caller fills it from the counters).
    pub fn new(info: &SwitchInfo, since: SystemTime) -> SwitchSummary {
        SwitchSummary {
            dpid: dpid::format(info.dpid),
            version: info.version.to_string(),
            peer: info.peer.to_string(),
            connected_since: unix_secs(since),
            n_ports: info.ports.len(),
            ports_up: info.ports.iter().filter(|p| p.is_up()).count(),
            packet_ins_per_sec: 0.0,
        }
    }
}

/// One switch in full.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SwitchDetail {
    /// `00:00:00:00:00:00:00:01`.
    pub dpid: String,
    /// The negotiated OpenFlow version, `"1.0"` or `"1.3"`.
    pub version: String,
    /// The switch's address, as the controller sees it.
    pub peer: String,
    /// When its handshake completed, in Unix seconds.
    pub connected_since: u64,
    /// What FEATURES_REPLY said.
    pub features: Features,
    /// Its ports as they are now (every PORT_STATUS applied).
    pub ports: Vec<Port>,
    /// Its connection's counters; `null` in the first half second after it connected
    /// (before its worker first published them).
    pub counters: Option<SwitchCounters>,
    /// What the switch says it is (DESC), asked once per connection; `null` until it
    /// answered (the page waits for it at most a second).
    pub description: Option<SwitchDescription>,
}

impl SwitchDetail {
    pub fn new(
        info: &SwitchInfo,
        since: SystemTime,
        counters: Option<&SwitchSnapshot>,
    ) -> SwitchDetail {
        SwitchDetail {
            dpid: dpid::format(info.dpid),
            version: info.version.to_string(),
            peer: info.peer.to_string(),
            connected_since: unix_secs(since),
            features: Features {
                n_buffers: info.n_buffers,
                n_tables: info.n_tables,
                capabilities: info.capabilities,
            },
            ports: info.ports.iter().map(Port::new).collect(),
            counters: counters.map(SwitchCounters::new),
            description: None,
        }
    }
}

/// A switch's features (FEATURES_REPLY).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Features {
    /// Packets it can buffer.
    pub n_buffers: u32,
    /// Flow tables it has.
    pub n_tables: u8,
    /// `OFPC_*` capability bits, as sent.
    pub capabilities: u32,
}

/// One port of a switch.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Port {
    /// The port number (1.0 reserved ports widened to their 1.3 values).
    pub port_no: u32,
    /// Its name (`s1-eth1`).
    pub name: String,
    /// Its Ethernet address.
    pub hw_addr: String,
    /// Whether it can carry traffic: not configured down and its link not down.
    pub up: bool,
    /// Configured down (`OFPPC_PORT_DOWN`): what `POST .../ports/{port}` sets.
    pub admin_down: bool,
    /// Its link is down (`OFPPS_LINK_DOWN`).
    pub link_down: bool,
    /// `OFPPC_*` bits, as sent.
    pub config: u32,
    /// `OFPPS_*` bits, as sent.
    pub state: u32,
}

impl Port {
    pub fn new(p: &PortInfo) -> Port {
        Port {
            port_no: p.port_no,
            name: p.name.clone(),
            hw_addr: p.hw_addr.to_string(),
            up: p.is_up(),
            admin_down: p.config & PORT_CONFIG_DOWN != 0,
            link_down: p.state & PORT_STATE_LINK_DOWN != 0,
            config: p.config,
            state: p.state,
        }
    }
}

/// One switch connection's counters.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SwitchCounters {
    /// The worker serving the switch.
    pub worker: usize,
    /// Messages in, by `"version TYPE"`.
    pub msgs_in: BTreeMap<String, u64>,
    /// Messages out, by `"version TYPE"`.
    pub msgs_out: BTreeMap<String, u64>,
    /// PACKET_INs received.
    pub packet_ins: u64,
    /// PACKET_INs per second over the last publish interval.
    pub packet_ins_per_sec: f64,
    /// Outgoing messages lost.
    pub drops: u64,
    /// Bytes read.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Bytes queued now, not yet taken by the kernel.
    pub queued_bytes: usize,
    /// Whether it is paused now (backpressure: not read until its queue drains).
    pub paused: bool,
}

impl SwitchCounters {
    pub fn new(s: &SwitchSnapshot) -> SwitchCounters {
        SwitchCounters {
            worker: s.worker,
            msgs_in: s.msgs_in.clone(),
            msgs_out: s.msgs_out.clone(),
            packet_ins: s.packet_ins,
            packet_ins_per_sec: s.packet_ins_per_sec + 0.0,
            drops: s.drops,
            bytes_in: s.bytes_in,
            bytes_out: s.bytes_out,
            queued_bytes: s.queued_bytes,
            paused: s.paused,
        }
    }
}

/// One end of a link, or where a host is attached.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Endpoint {
    /// The switch, `00:00:00:00:00:00:00:01`.
    pub dpid: String,
    /// The port number.
    pub port: u32,
}

/// A directed link found by discovery: frames out of `src` arrive at `dst` (a cable
/// shows as two links, one each way).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Link {
    pub src: Endpoint,
    pub dst: Endpoint,
}

/// A host the device manager tracks.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Host {
    /// Its Ethernet address.
    pub mac: String,
    /// Its VLAN, `null` when untagged.
    pub vlan: Option<u16>,
    /// Where it was last seen.
    pub attachment: Endpoint,
    /// Its IPv4 and IPv6 addresses, least recently seen first.
    pub ips: Vec<String>,
    /// Seconds since it was last seen.
    pub last_seen_secs_ago: f64,
}

/// `GET /topology`: switches, links and hosts in one document.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Topology {
    pub switches: Vec<SwitchSummary>,
    pub links: Vec<Link>,
    pub hosts: Vec<Host>,
}

/// Whether an app runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppState {
    /// Its handlers run.
    Running,
    /// Stopped (`POST /apps/{name}/stop`): none of its code runs.
    Stopped,
    /// A handler panicked: its handlers are skipped on every switch until it is
    /// restarted.
    Quarantined,
}

/// One app of the pipeline.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AppInfo {
    /// Its name (`topology`).
    pub name: String,
    /// Its place in the app order, from 0 (`PUT /apps/order` changes it): handlers of
    /// equal order, initializers and listeners run in it.
    pub order: usize,
    /// Running, stopped or quarantined.
    pub state: AppState,
    /// The apps whose services it requires: they cannot stop while it runs.
    pub requires: Vec<String>,
    /// The running apps that require its services: it cannot stop before them
    /// (unless `?cascade=true`).
    pub required_by: Vec<String>,
    /// Loaded at run time (`POST /apps`): it can be replaced and deleted.
    pub loaded: bool,
    /// Times it was started (a restart adds one).
    pub starts: u64,
    /// Panics caught in its handlers.
    pub panics: u64,
    /// Why it is quarantined (its first panic); `null` while it runs.
    pub reason: Option<QuarantineReason>,
    /// Its handlers, with their calls and time (as the workers last published them,
    /// at most about half a second old).
    pub handlers: Vec<HandlerStats>,
    /// The counters it publishes (also in `/metrics` as `pharos_app_events_total`).
    pub counters: Vec<AppCounterInfo>,
}

/// A counter an app publishes.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AppCounterInfo {
    /// Its name (`routes_installed`).
    pub name: String,
    /// What it counts, in the app's words.
    pub help: String,
    /// Its value now (never reset while the controller runs).
    pub value: u64,
}

/// What a change of the apps did (`POST /apps/{name}/start|stop|restart`, `PUT
/// /apps/order`, `POST /apps`, `PUT` and `DELETE /apps/{name}`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AppChange {
    /// The apps started, in order.
    pub started: Vec<String>,
    /// The apps stopped, in order (dependents first).
    pub stopped: Vec<String>,
    /// The plan's generation now (raised by every change).
    pub generation: u64,
    /// Milliseconds from the request until every worker had the change (its handlers,
    /// timers and state on every switch), the flows' removal not included.
    pub took_ms: f64,
    /// Milliseconds spent removing the stopped apps' flows from every switch (a round
    /// trip per switch, all switches at once; up to 5 s when a switch does not answer);
    /// 0 when no app stopped.
    pub flows_ms: f64,
}

/// One handler of an app: an app's code for one kind of call.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HandlerStats {
    /// `PACKET_IN`, a message type (`FLOW_REMOVED`), `PORT_STATUS`, `timer`,
    /// `global timer`, `initialize`, `switch_added`, `switch_removed`, `reply`.
    pub handler: String,
    /// Calls so far.
    pub calls: u64,
    /// Seconds spent in them: estimated from one call in 64 per switch, timed (one
    /// PACKET_IN in 1024 for the PACKET_IN handlers).
    pub time_secs: f64,
}

/// Why an app was quarantined: the first panic caught in its code.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct QuarantineReason {
    /// The code that panicked: `PACKET_IN`, a message type, `PORT_STATUS`, `timer`,
    /// `global timer`, `switch_added`, `reply`, `service event`, ...
    pub handler: String,
    /// The panic's message.
    pub panic: String,
    /// The switch it ran for, if any.
    pub dpid: Option<String>,
}

/// `POST /switches/{dpid}/ports/{port}`: set a port administratively up or down.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PortChange {
    /// `false` sets `OFPPC_PORT_DOWN`, `true` clears it.
    pub up: bool,
}

/// What `POST /switches/{dpid}/ports/{port}` did: the PORT_MOD is queued to the switch
/// (the port list changes when the switch confirms with PORT_STATUS).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PortChangeSent {
    pub dpid: String,
    pub port: u32,
    pub up: bool,
}

/// Unix seconds (0 for a time before 1970, which a clock set wrong can give).
pub fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// What a switch says it is (DESC statistics), read once per connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SwitchDescription {
    /// Manufacturer (`Nicira, Inc.`).
    pub mfr: String,
    /// Hardware (`Open vSwitch`).
    pub hw: String,
    /// Software version (`3.1.0`).
    pub sw: String,
    /// Serial number.
    pub serial: String,
    /// The datapath's own description (Open vSwitch: the bridge's name).
    pub dp_desc: String,
}

impl SwitchDescription {
    pub fn new(d: &DescStats) -> SwitchDescription {
        SwitchDescription {
            mfr: d.mfr_desc.to_string_lossy(),
            hw: d.hw_desc.to_string_lossy(),
            sw: d.sw_desc.to_string_lossy(),
            serial: d.serial_num.to_string_lossy(),
            dp_desc: d.dp_desc.to_string_lossy(),
        }
    }
}
