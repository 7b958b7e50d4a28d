//! The routes that ask a switch: its description, port statistics, flow table (read,
//! added to, deleted from), groups, meters and tables, and PACKET_OUT. Each goes
//! through the core's request path ([`crate::ask`]) and waits at most
//! `[api] switch_timeout` for the switch; none blocks a worker.
//!
//! Flows are written and shown in `ovs-ofctl` syntax ([`openflow::ofctl`]): a flow
//! added as `{"flow": "priority=100,ip,nw_dst=10.0.0.2,actions=output:2"}` or as JSON
//! whose match is `{field: value}` and whose actions are `ovs-ofctl` action strings, the
//! JSON form being the string's parts (so the JSON a `GET` shows can be sent back). A
//! flow is added with its barrier: `201` means the switch applied it, `422` that it
//! refused it (with the error it sent).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use controller::info::SwitchInfo;
use openflow::common::DescStats;
use openflow::ofctl::{
    actions_from_of13, parse_flow, parse_match, Flow, FlowEntry, FlowModCommand, PortNo,
};
use openflow::{of10, of13, Message, Version};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::ask::{apply, ask};
use crate::error::{ApiError, JsonBody};
use crate::model::{ErrorBody, Port};
use crate::{dpid, Shared};

type St = State<Arc<Shared>>;

// ---------------------------------------------------------------------------------
// The documents

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
    fn new(d: &DescStats) -> SwitchDescription {
        SwitchDescription {
            mfr: d.mfr_desc.to_string_lossy(),
            hw: d.hw_desc.to_string_lossy(),
            sw: d.sw_desc.to_string_lossy(),
            serial: d.serial_num.to_string_lossy(),
            dp_desc: d.dp_desc.to_string_lossy(),
        }
    }
}

/// Each switch's description with the time its connection was listed (a reconnected
/// switch is asked again); `None` while it is being asked.
#[derive(Debug, Default)]
pub struct Descriptions(Mutex<HashMap<u64, (SystemTime, Option<SwitchDescription>)>>);

/// `GET /switches/{dpid}/ports`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PortList {
    pub dpid: String,
    pub ports: Vec<PortEntry>,
}

/// A port, with its statistics when they were asked for (`?stats=true`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PortEntry {
    #[serde(flatten)]
    pub port: Port,
    /// Its counters (PORT_STATS), with `?stats=true`; `null` when the switch reported
    /// none for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<PortStatistics>,
}

/// A port's counters (PORT_STATS).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PortStatistics {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    /// How long the port has been up (1.3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_secs: Option<f64>,
}

/// `GET /switches/{dpid}/flows`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowList {
    pub dpid: String,
    /// The flows, in the order the switch sent them.
    pub flows: Vec<FlowInfo>,
    /// Flows the switch holds that `ovs-ofctl` syntax cannot show (a vendor action,
    /// an unknown field), one sentence each.
    pub unreadable: Vec<String>,
}

/// One flow of a switch's table.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowInfo {
    pub table: u8,
    pub priority: u16,
    /// `0x` and hex digits.
    pub cookie: String,
    /// Match fields by their `ovs-ofctl` name (`nw_dst`), values as `ovs-ofctl` writes
    /// them (`10.0.0.0/24`); shorthands (`ip`, `tcp`) are given as `dl_type` and
    /// `nw_proto`.
    #[serde(rename = "match")]
    pub matching: BTreeMap<String, String>,
    /// The actions (1.3: apply-actions) as `ovs-ofctl` writes them; empty: drop.
    pub actions: Vec<String>,
    /// 1.3's other instructions (`meter:1`, `clear_actions`, `write_actions(...)`,
    /// `write_metadata:...`, `goto_table:1`), when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Vec<String>>,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub packets: u64,
    pub bytes: u64,
    /// How long the flow has been installed.
    pub duration_secs: f64,
    /// The app that installed it, when its cookie says so (`routing`, `topology`).
    pub owner: Option<String>,
    /// The whole flow as `ovs-ofctl dump-flows` prints it.
    pub ofctl: String,
}

/// What `POST /switches/{dpid}/flows` does with the flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowCommand {
    /// Add it (replacing a flow with the same match and priority).
    #[default]
    Add,
    /// Change the actions of every flow it matches (as `ovs-ofctl mod-flows`).
    Modify,
    /// Change the actions of the flow with exactly this match and priority.
    ModifyStrict,
}

/// `POST /switches/{dpid}/flows`: either `flow`, an `ovs-ofctl add-flow` string, or the
/// flow as JSON (the fields of a flow `GET` shows; `actions` required).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFlow {
    /// `priority=100,ip,nw_dst=10.0.0.2,actions=output:2`.
    pub flow: Option<String>,
    pub table: Option<u8>,
    pub priority: Option<u16>,
    /// `0x1f` or decimal.
    pub cookie: Option<String>,
    /// `{field: value}`, `ovs-ofctl` names and values; a shorthand (`ip`) with an
    /// empty value.
    #[serde(rename = "match")]
    pub matching: Option<BTreeMap<String, String>>,
    /// `ovs-ofctl` action strings (`output:2`); empty: drop.
    pub actions: Option<Vec<String>>,
    /// 1.3 instructions other than the actions (`goto_table:1`, `meter:1`).
    pub instructions: Option<Vec<String>>,
    pub idle_timeout: Option<u16>,
    pub hard_timeout: Option<u16>,
    /// `add` (the default), `modify` or `modify_strict`.
    pub command: Option<FlowCommand>,
}

/// What `POST /switches/{dpid}/flows` did: the switch applied this flow.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowAdded {
    /// The flow as `ovs-ofctl` writes it.
    pub flow: String,
}

/// A table, or every table.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum TableSelection {
    /// One table.
    Id(u8),
    /// `"all"`.
    Name(String),
}

/// `DELETE /switches/{dpid}/flows` body (none: every flow of every table).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowDeletion {
    /// The flows to delete, in `ovs-ofctl del-flows` syntax (`ip,nw_dst=10.0.0.2`);
    /// none: every flow.
    #[serde(rename = "match")]
    pub matching: Option<String>,
    /// Only the flow with exactly this match and `priority`.
    #[serde(default)]
    pub strict: bool,
    /// The priority, for a strict delete.
    pub priority: Option<u16>,
    /// A table number, or `"all"` (the default).
    pub table: Option<TableSelection>,
    /// Only flows that output to this port.
    pub out_port: Option<u32>,
}

/// What `DELETE /switches/{dpid}/flows` did: the switch deleted the flows.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowsDeleted {
    pub deleted: bool,
}

/// `GET /switches/{dpid}/groups` (OpenFlow 1.3).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GroupList {
    pub dpid: String,
    pub groups: Vec<GroupInfo>,
}

/// A group (GROUP_DESC and GROUP statistics).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GroupInfo {
    pub group_id: u32,
    /// `all`, `select`, `indirect` or `ff`.
    #[serde(rename = "type")]
    pub group_type: String,
    pub buckets: Vec<BucketInfo>,
    /// Flows and groups pointing at it.
    pub ref_count: Option<u32>,
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
    pub duration_secs: Option<f64>,
}

/// A group's bucket.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BucketInfo {
    pub weight: u16,
    /// The port whose liveness it follows (fast failover); `null`: none.
    pub watch_port: Option<u32>,
    /// The group whose liveness it follows; `null`: none.
    pub watch_group: Option<u32>,
    /// `ovs-ofctl` action strings.
    pub actions: Vec<String>,
}

/// `GET /switches/{dpid}/meters` (OpenFlow 1.3).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MeterList {
    pub dpid: String,
    pub meters: Vec<MeterInfo>,
}

/// A meter (METER_CONFIG and METER statistics).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MeterInfo {
    pub meter_id: u32,
    /// Of `kbps`, `pktps`, `burst`, `stats`.
    pub flags: Vec<String>,
    pub bands: Vec<BandInfo>,
    pub flow_count: Option<u32>,
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
    pub duration_secs: Option<f64>,
}

/// A meter band.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BandInfo {
    /// `drop`, `dscp_remark` or `experimenter`.
    #[serde(rename = "type")]
    pub band_type: String,
    pub rate: u32,
    pub burst_size: u32,
    /// For `dscp_remark`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prec_level: Option<u8>,
}

/// `GET /switches/{dpid}/tables`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TableList {
    pub dpid: String,
    pub tables: Vec<TableInfo>,
}

/// A flow table's statistics (TABLE).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TableInfo {
    pub table_id: u8,
    /// Its name (1.0 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its capacity (1.0 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_entries: Option<u32>,
    /// Flows in it.
    pub active_count: u32,
    pub lookup_count: u64,
    pub matched_count: u64,
}

/// A port as a number or a name.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum PortSpec {
    Number(u32),
    /// `controller`, `local` or `none`.
    Name(String),
}

/// `POST /switches/{dpid}/packet_out`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketOutRequest {
    /// The port the packet counts as having come in on; `"controller"` by default.
    pub in_port: Option<PortSpec>,
    /// `ovs-ofctl` action strings (`output:2`, `flood`).
    pub actions: Vec<String>,
    /// The frame, in hex.
    pub data_hex: String,
}

/// What `POST /switches/{dpid}/packet_out` did: the switch took the packet.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PacketOutSent {
    pub sent: bool,
}

/// `?stats=true`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PortsQuery {
    /// `true`: ask the switch for each port's counters (PORT_STATS).
    pub stats: Option<String>,
}

/// `?table=N&match=...`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FlowsQuery {
    /// Only this table (a number, or `all`, the default).
    pub table: Option<String>,
    /// Only the flows this `ovs-ofctl dump-flows` selection names (`ip,nw_dst=10.0.0.2`).
    #[serde(rename = "match")]
    #[param(rename = "match")]
    pub matching: Option<String>,
}

// ---------------------------------------------------------------------------------
// Helpers

fn path_dpid(text: &str) -> Result<u64, ApiError> {
    dpid::parse(text).map_err(ApiError::bad_request)
}

/// The switch, or 404.
fn switch_info(s: &Shared, dpid: u64) -> Result<Arc<SwitchInfo>, ApiError> {
    s.core.pipeline.switches().info(dpid).ok_or_else(|| {
        ApiError::not_found(format!("no switch {} is connected", dpid::format(dpid)))
    })
}

/// A statistics request of `version`: `v10` for 1.0, `v13` for 1.3.
fn stats_request(
    version: Version,
    v10: of10::stats::StatsRequestBody,
    v13: of13::multipart::MultipartRequestBody,
) -> Message {
    match version {
        Version::V1_0 => Message::V10(of10::Message::StatsRequest(of10::StatsRequest {
            flags: 0,
            body: v10,
        })),
        Version::V1_3 => Message::V13(of13::Message::MultipartRequest(
            of13::multipart::MultipartRequest {
                flags: 0,
                body: v13,
            },
        )),
    }
}

/// A 1.3 multipart request, or 409 for a 1.0 switch (`what`: "groups").
fn request_13(
    info: &SwitchInfo,
    what: &str,
    body: of13::multipart::MultipartRequestBody,
) -> Result<Message, ApiError> {
    if info.version != Version::V1_3 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "switch {} speaks OpenFlow {}, which has no {what} (1.3 has)",
                dpid::format(info.dpid),
                info.version
            ),
        ));
    }
    Ok(Message::V13(of13::Message::MultipartRequest(
        of13::multipart::MultipartRequest { flags: 0, body },
    )))
}

/// The bodies of 1.3 multipart replies.
fn bodies_13(msgs: &[Message]) -> impl Iterator<Item = &of13::multipart::MultipartReplyBody> {
    msgs.iter().filter_map(|m| match m {
        Message::V13(of13::Message::MultipartReply(r)) => Some(&r.body),
        _ => None,
    })
}

/// The bodies of 1.0 stats replies.
fn bodies_10(msgs: &[Message]) -> impl Iterator<Item = &of10::stats::StatsReplyBody> {
    msgs.iter().filter_map(|m| match m {
        Message::V10(of10::Message::StatsReply(r)) => Some(&r.body),
        _ => None,
    })
}

fn secs(sec: u32, nsec: u32) -> f64 {
    f64::from(sec) + f64::from(nsec) / 1e9
}

/// A 1.0 port number with its reserved values widened to 1.3's, as the port list has them.
fn widen(p: u16) -> u32 {
    if p >= 0xff00 {
        0xffff_0000 | u32::from(p)
    } else {
        u32::from(p)
    }
}

/// Splits `a,b(c,d),e` at the commas outside parentheses.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < s.len() {
        out.push(s[start..].to_string());
    }
    out
}

/// What a match shorthand stands for.
fn shorthand(word: &str) -> Option<&'static [(&'static str, &'static str)]> {
    Some(match word {
        "ip" => &[("dl_type", "0x0800")],
        "ipv6" => &[("dl_type", "0x86dd")],
        "arp" => &[("dl_type", "0x0806")],
        "rarp" => &[("dl_type", "0x8035")],
        "icmp" => &[("dl_type", "0x0800"), ("nw_proto", "1")],
        "tcp" => &[("dl_type", "0x0800"), ("nw_proto", "6")],
        "udp" => &[("dl_type", "0x0800"), ("nw_proto", "17")],
        "sctp" => &[("dl_type", "0x0800"), ("nw_proto", "132")],
        "icmp6" => &[("dl_type", "0x86dd"), ("nw_proto", "58")],
        "tcp6" => &[("dl_type", "0x86dd"), ("nw_proto", "6")],
        "udp6" => &[("dl_type", "0x86dd"), ("nw_proto", "17")],
        "sctp6" => &[("dl_type", "0x86dd"), ("nw_proto", "132")],
        _ => return None,
    })
}

/// A flow's match as `{field: value}`.
fn match_map(flow: &Flow) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for item in split_top(&flow.matching.to_ofctl()) {
        match item.split_once('=') {
            Some((k, v)) => {
                m.insert(k.to_string(), v.to_string());
            }
            None => match shorthand(&item) {
                Some(pairs) => {
                    for (k, v) in pairs {
                        m.insert(k.to_string(), v.to_string());
                    }
                }
                None => {
                    m.insert(item, String::new());
                }
            },
        }
    }
    m
}

/// A flow's actions (1.3: apply-actions) and its other instructions, as `ovs-ofctl`
/// writes them.
fn actions_and_instructions(flow: &Flow) -> (Vec<String>, Option<Vec<String>>) {
    let mut only_actions = flow.clone();
    only_actions.meter = None;
    only_actions.clear_actions = false;
    only_actions.write_actions = None;
    only_actions.write_metadata = None;
    only_actions.goto_table = None;
    let mut only_instructions = flow.clone();
    only_instructions.actions.clear();
    let list = |f: &Flow| {
        let text = f.actions_to_ofctl();
        if text == "drop" {
            Vec::new()
        } else {
            split_top(&text)
        }
    };
    let instructions = list(&only_instructions);
    (
        list(&only_actions),
        (!instructions.is_empty()).then_some(instructions),
    )
}

fn flow_info(e: &FlowEntry) -> FlowInfo {
    let f = &e.flow;
    let (actions, instructions) = actions_and_instructions(f);
    let c = e.counters.unwrap_or(openflow::ofctl::FlowCounters {
        duration_sec: 0,
        duration_nsec: 0,
        packet_count: 0,
        byte_count: 0,
    });
    FlowInfo {
        table: f.table,
        priority: f.priority,
        cookie: format!("{:#x}", f.cookie),
        matching: match_map(f),
        actions,
        instructions,
        idle_timeout: f.idle_timeout,
        hard_timeout: f.hard_timeout,
        packets: c.packet_count,
        bytes: c.byte_count,
        duration_secs: secs(c.duration_sec, c.duration_nsec),
        owner: apps::cookie_owner(f.cookie).map(String::from),
        ofctl: e.to_string(),
    }
}

/// A parse error as a 400 naming the token and its place in `what`.
fn bad_flow(what: &str, e: &openflow::ofctl::ParseError) -> ApiError {
    ApiError::bad_request(format!("{what}: {e}"))
}

/// The `ovs-ofctl` string a JSON flow stands for.
fn flow_text(f: &NewFlow) -> Result<String, ApiError> {
    let mut items: Vec<String> = Vec::new();
    if let Some(t) = f.table {
        items.push(format!("table={t}"));
    }
    if let Some(p) = f.priority {
        items.push(format!("priority={p}"));
    }
    if let Some(c) = &f.cookie {
        items.push(format!("cookie={c}"));
    }
    if let Some(t) = f.idle_timeout {
        items.push(format!("idle_timeout={t}"));
    }
    if let Some(t) = f.hard_timeout {
        items.push(format!("hard_timeout={t}"));
    }
    for (k, v) in f.matching.iter().flatten() {
        if v.is_empty() {
            items.push(k.clone());
        } else {
            items.push(format!("{k}={v}"));
        }
    }
    let Some(actions) = &f.actions else {
        return Err(ApiError::bad_request(
            "a flow needs `actions` (an empty list drops), or give it whole as `flow`",
        ));
    };
    // 1.3's order: meter, apply-actions, then the other instructions.
    let instructions = f.instructions.as_deref().unwrap_or_default();
    let (meter, rest): (Vec<&String>, Vec<&String>) = instructions
        .iter()
        .partition(|i| i.trim_start().starts_with("meter"));
    let all: Vec<&str> = meter
        .into_iter()
        .chain(actions.iter())
        .chain(rest)
        .map(String::as_str)
        .collect();
    let acts = if all.is_empty() {
        "drop".to_string()
    } else {
        all.join(",")
    };
    items.push(format!("actions={acts}"));
    Ok(items.join(","))
}

// ---------------------------------------------------------------------------------
// Description

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The map is whole after any panic (one insert at a time).
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long `GET /switches/{dpid}` waits for a description not yet known: a switch
/// slow to answer DESC must not make the switch's page slow (the request goes on, and
/// its answer shows next time).
pub const DESCRIPTION_WAIT: Duration = Duration::from_secs(1);

/// The switch's description: from the cache for this connection, else asked (once at a
/// time, cached when it comes) and waited for at most [`DESCRIPTION_WAIT`]; `None`
/// when it has not come (yet).
pub async fn description(
    s: &Arc<Shared>,
    info: &SwitchInfo,
    since: SystemTime,
) -> Option<SwitchDescription> {
    let dpid = info.dpid;
    {
        let mut cache = lock(&s.descriptions.0);
        match cache.get(&dpid) {
            Some((t, Some(d))) if *t == since => return Some(d.clone()),
            // Asked already; its answer shows when it comes.
            Some((t, None)) if *t == since => return None,
            _ => {
                cache.insert(dpid, (since, None));
            }
        }
    }
    let msg = stats_request(
        info.version,
        of10::stats::StatsRequestBody::Desc,
        of13::multipart::MultipartRequestBody::Desc,
    );
    let shared = Arc::clone(s);
    let task = tokio::spawn(async move {
        let switches = shared.core.pipeline.switches();
        let desc = match ask(switches, dpid, &msg, shared.switch_timeout).await {
            Ok(reply) => read_description(&reply),
            Err(e) => {
                tracing::debug!(dpid = %controller::info::Dpid(dpid), error = e.message, "no description");
                None
            }
        };
        let mut cache = lock(&shared.descriptions.0);
        match &desc {
            Some(d) => {
                cache.insert(dpid, (since, Some(d.clone())));
            }
            // Not cached: asked again next time.
            None => {
                if cache.get(&dpid).is_some_and(|(t, _)| *t == since) {
                    cache.remove(&dpid);
                }
            }
        }
        desc
    });
    match tokio::time::timeout(DESCRIPTION_WAIT, task).await {
        Ok(Ok(desc)) => desc,
        _ => None,
    }
}

/// The description in a DESC reply of either version.
fn read_description(reply: &[Message]) -> Option<SwitchDescription> {
    bodies_10(reply)
        .find_map(|b| match b {
            of10::stats::StatsReplyBody::Desc(d) => Some(SwitchDescription::new(d)),
            _ => None,
        })
        .or_else(|| {
            bodies_13(reply).find_map(|b| match b {
                of13::multipart::MultipartReplyBody::Desc(d) => Some(SwitchDescription::new(d)),
                _ => None,
            })
        })
}

// ---------------------------------------------------------------------------------
// Handlers

/// The switch's ports; with `?stats=true`, each with its counters (PORT_STATS, asked
/// of the switch).
#[utoipa::path(get, path = "/api/v1/switches/{dpid}/ports", tag = "switches",
    params(("dpid" = String, Path, description = "The switch"), PortsQuery),
    responses((status = 200, description = "The ports", body = PortList),
        (status = 400, description = "Not a dpid, or a bad `stats` value", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn ports(
    State(s): St,
    Path(id): Path<String>,
    Query(q): Query<PortsQuery>,
) -> Result<Json<PortList>, ApiError> {
    let dpid = path_dpid(&id)?;
    let with_stats = match q.stats.as_deref() {
        None | Some("false") | Some("0") => false,
        Some("true") | Some("1") | Some("") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "stats={other:?}: expected true or false"
            )))
        }
    };
    let info = switch_info(&s, dpid)?;
    let mut stats: HashMap<u32, PortStatistics> = HashMap::new();
    if with_stats {
        let msg = stats_request(
            info.version,
            of10::stats::StatsRequestBody::Port(of10::stats::PortStatsRequest { port_no: 0xffff }),
            of13::multipart::MultipartRequestBody::PortStats {
                port_no: of13::port::OFPP_ANY,
            },
        );
        let reply = ask(s.core.pipeline.switches(), dpid, &msg, s.switch_timeout).await?;
        let counters = |c: &openflow::common::PortCounters, duration_secs| PortStatistics {
            rx_packets: c.rx_packets,
            tx_packets: c.tx_packets,
            rx_bytes: c.rx_bytes,
            tx_bytes: c.tx_bytes,
            rx_dropped: c.rx_dropped,
            tx_dropped: c.tx_dropped,
            rx_errors: c.rx_errors,
            tx_errors: c.tx_errors,
            duration_secs,
        };
        for b in bodies_10(&reply) {
            if let of10::stats::StatsReplyBody::Port { stats: list } = b {
                for p in list {
                    stats.insert(widen(p.port_no), counters(&p.counters, None));
                }
            }
        }
        for b in bodies_13(&reply) {
            if let of13::multipart::MultipartReplyBody::PortStats { stats: list } = b {
                for p in list {
                    let d = Some(secs(p.duration_sec, p.duration_nsec));
                    stats.insert(p.port_no, counters(&p.counters, d));
                }
            }
        }
    }
    // The port list as it is now (it may have changed while the switch answered).
    let info = switch_info(&s, dpid)?;
    Ok(Json(PortList {
        dpid: dpid::format(dpid),
        ports: info
            .ports
            .iter()
            .map(|p| PortEntry {
                port: Port::new(p),
                stats: stats.remove(&p.port_no),
            })
            .collect(),
    }))
}

/// The switch's flow table, read live (FLOW_STATS): each flow as JSON and as
/// `ovs-ofctl dump-flows` prints it, with the app that installed it when its cookie
/// says so.
#[utoipa::path(get, path = "/api/v1/switches/{dpid}/flows", tag = "flows",
    params(("dpid" = String, Path, description = "The switch"), FlowsQuery),
    responses((status = 200, description = "The flows", body = FlowList),
        (status = 400, description = "Not a dpid, or a bad table or match (naming the token)", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 422, description = "The switch refused the request", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn flows(
    State(s): St,
    Path(id): Path<String>,
    Query(q): Query<FlowsQuery>,
) -> Result<Json<FlowList>, ApiError> {
    let dpid = path_dpid(&id)?;
    let info = switch_info(&s, dpid)?;
    let text = q.matching.as_deref().unwrap_or("");
    let mut sel = parse_match(text).map_err(|e| bad_flow("match", &e))?;
    match q.table.as_deref() {
        None | Some("all") => {}
        Some(t) => {
            sel.table = t.parse().map_err(|_| {
                ApiError::bad_request(format!("table={t:?}: expected 0 to 254, or all"))
            })?
        }
    }
    let msg = sel
        .stats_request(info.version)
        .map_err(|e| ApiError::bad_request(format!("match: {e}")))?;
    let reply = ask(s.core.pipeline.switches(), dpid, &msg, s.switch_timeout).await?;
    let mut flows = Vec::new();
    let mut unreadable = Vec::new();
    for m in &reply {
        for e in FlowEntry::from_message(m).into_iter().flatten() {
            match e {
                Ok(e) => flows.push(flow_info(&e)),
                Err(e) => unreadable.push(e.to_string()),
            }
        }
    }
    Ok(Json(FlowList {
        dpid: dpid::format(dpid),
        flows,
        unreadable,
    }))
}

/// Adds a flow (or modifies flows), and answers once the switch applied it (its
/// barrier reply came) or refused it.
#[utoipa::path(post, path = "/api/v1/switches/{dpid}/flows", tag = "flows",
    params(("dpid" = String, Path, description = "The switch")),
    request_body = NewFlow,
    security(("bearer" = [])),
    responses((status = 201, description = "The switch applied the flow", body = FlowAdded),
        (status = 400, description = "Not a dpid, malformed JSON, or a bad flow (naming the token and its position), or one the switch's version cannot express", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 422, description = "The switch refused the flow (its error's type and code)", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn add_flow(
    State(s): St,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<NewFlow>,
) -> Result<(StatusCode, Json<FlowAdded>), ApiError> {
    let dpid = path_dpid(&id)?;
    let info = switch_info(&s, dpid)?;
    let flow = match &body.flow {
        Some(text) => {
            let json_form = body.table.is_some()
                || body.priority.is_some()
                || body.cookie.is_some()
                || body.matching.is_some()
                || body.actions.is_some()
                || body.instructions.is_some()
                || body.idle_timeout.is_some()
                || body.hard_timeout.is_some();
            if json_form {
                return Err(ApiError::bad_request(
                    "give the flow either as `flow` (a string) or as JSON fields, not both",
                ));
            }
            parse_flow(text).map_err(|e| bad_flow("flow", &e))?
        }
        None => {
            let text = flow_text(&body)?;
            parse_flow(&text).map_err(|e| bad_flow(&format!("the flow {text:?}"), &e))?
        }
    };
    let command = match body.command.unwrap_or_default() {
        FlowCommand::Add => FlowModCommand::Add,
        FlowCommand::Modify => FlowModCommand::Modify,
        FlowCommand::ModifyStrict => FlowModCommand::ModifyStrict,
    };
    let msg = flow.to_message(info.version, command).map_err(|e| {
        ApiError::bad_request(format!(
            "switch {} speaks OpenFlow {}: {e}",
            dpid::format(dpid),
            info.version
        ))
    })?;
    apply(s.core.pipeline.switches(), dpid, &msg, s.switch_timeout).await?;
    tracing::info!(dpid = %controller::info::Dpid(dpid), flow = %flow, "REST: flow applied");
    Ok((
        StatusCode::CREATED,
        Json(FlowAdded {
            flow: flow.to_string(),
        }),
    ))
}

/// Deletes flows: every flow (no body), or those a match selects (strictly: the one
/// with exactly that match and priority); answers once the switch applied it.
#[utoipa::path(delete, path = "/api/v1/switches/{dpid}/flows", tag = "flows",
    params(("dpid" = String, Path, description = "The switch")),
    request_body(content = Option<FlowDeletion>, description = "Which flows; none: every flow"),
    security(("bearer" = [])),
    responses((status = 200, description = "The switch deleted them", body = FlowsDeleted),
        (status = 400, description = "Not a dpid, malformed JSON, or a bad match (naming the token)", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 422, description = "The switch refused it", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn delete_flows(
    State(s): St,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<FlowsDeleted>, ApiError> {
    let dpid = path_dpid(&id)?;
    let info = switch_info(&s, dpid)?;
    let del: FlowDeletion = if body.iter().all(u8::is_ascii_whitespace) {
        FlowDeletion::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?
    };
    let mut sel =
        parse_match(del.matching.as_deref().unwrap_or("")).map_err(|e| bad_flow("match", &e))?;
    match &del.table {
        None => {}
        Some(TableSelection::Id(t)) => sel.table = *t,
        Some(TableSelection::Name(n)) if n == "all" => sel.table = 0xff,
        Some(TableSelection::Name(n)) => {
            return Err(ApiError::bad_request(format!(
                "table {n:?}: expected a table number, or \"all\""
            )))
        }
    }
    if let Some(p) = del.priority {
        sel.priority = p;
    }
    let command = if del.strict {
        FlowModCommand::DeleteStrict
    } else {
        FlowModCommand::Delete
    };
    let mut msg = sel.to_message(info.version, command).map_err(|e| {
        ApiError::bad_request(format!(
            "switch {} speaks OpenFlow {}: {e}",
            dpid::format(dpid),
            info.version
        ))
    })?;
    if let Some(port) = del.out_port {
        let port = PortNo::from_u32(port);
        match &mut msg {
            Message::V10(of10::Message::FlowMod(fm)) => {
                fm.out_port = port
                    .to_v10()
                    .map_err(|e| ApiError::bad_request(format!("out_port: {e}")))?
            }
            Message::V13(of13::Message::FlowMod(fm)) => {
                fm.out_port = port
                    .to_v13()
                    .map_err(|e| ApiError::bad_request(format!("out_port: {e}")))?
            }
            _ => {}
        }
    }
    apply(s.core.pipeline.switches(), dpid, &msg, s.switch_timeout).await?;
    tracing::info!(dpid = %controller::info::Dpid(dpid), selection = %sel.selection_to_ofctl(), strict = del.strict, "REST: flows deleted");
    Ok(Json(FlowsDeleted { deleted: true }))
}

/// The switch's groups (GROUP_DESC, with GROUP statistics). OpenFlow 1.3 only.
#[utoipa::path(get, path = "/api/v1/switches/{dpid}/groups", tag = "flows",
    params(("dpid" = String, Path, description = "The switch")),
    responses((status = 200, description = "The groups", body = GroupList),
        (status = 400, description = "Not a dpid", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 409, description = "An OpenFlow 1.0 switch: no groups", body = ErrorBody),
        (status = 422, description = "The switch refused the request", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn groups(State(s): St, Path(id): Path<String>) -> Result<Json<GroupList>, ApiError> {
    use of13::multipart::{MultipartReplyBody as B, MultipartRequestBody as R};
    let dpid = path_dpid(&id)?;
    let info = switch_info(&s, dpid)?;
    let switches = s.core.pipeline.switches();
    let desc = request_13(&info, "groups", R::GroupDesc)?;
    let stats = request_13(
        &info,
        "groups",
        R::Group {
            group_id: of13::OFPG_ALL,
        },
    )?;
    let descs = ask(switches, dpid, &desc, s.switch_timeout).await?;
    let stats = ask(switches, dpid, &stats, s.switch_timeout).await?;
    let mut by_id: HashMap<u32, &of13::multipart::GroupStats> = HashMap::new();
    for b in bodies_13(&stats) {
        if let B::Group { stats } = b {
            for g in stats {
                by_id.insert(g.group_id, g);
            }
        }
    }
    let mut groups = Vec::new();
    for b in bodies_13(&descs) {
        let B::GroupDesc { groups: list } = b else {
            continue;
        };
        for g in list {
            let st = by_id.get(&g.group_id);
            groups.push(GroupInfo {
                group_id: g.group_id,
                group_type: g.group_type.to_string().to_ascii_lowercase(),
                buckets: g
                    .buckets
                    .iter()
                    .map(|b| BucketInfo {
                        weight: b.weight,
                        watch_port: (b.watch_port != of13::port::OFPP_ANY).then_some(b.watch_port),
                        watch_group: (b.watch_group != of13::OFPG_ANY).then_some(b.watch_group),
                        actions: bucket_actions(&b.actions),
                    })
                    .collect(),
                ref_count: st.map(|g| g.ref_count),
                packets: st.map(|g| g.packet_count),
                bytes: st.map(|g| g.byte_count),
                duration_secs: st.map(|g| secs(g.duration_sec, g.duration_nsec)),
            });
        }
    }
    groups.sort_by_key(|g| g.group_id);
    Ok(Json(GroupList {
        dpid: dpid::format(dpid),
        groups,
    }))
}

/// A bucket's actions as `ovs-ofctl` strings (one naming what cannot be shown).
fn bucket_actions(list: &[of13::Action]) -> Vec<String> {
    match actions_from_of13(list) {
        Ok(actions) => {
            let f = Flow {
                actions,
                ..Flow::default()
            };
            actions_and_instructions(&f).0
        }
        Err(e) => vec![format!("({e})")],
    }
}

/// The switch's meters (METER_CONFIG, with METER statistics). OpenFlow 1.3 only.
#[utoipa::path(get, path = "/api/v1/switches/{dpid}/meters", tag = "flows",
    params(("dpid" = String, Path, description = "The switch")),
    responses((status = 200, description = "The meters", body = MeterList),
        (status = 400, description = "Not a dpid", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 409, description = "An OpenFlow 1.0 switch: no meters", body = ErrorBody),
        (status = 422, description = "The switch refused the request", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn meters(State(s): St, Path(id): Path<String>) -> Result<Json<MeterList>, ApiError> {
    use of13::meter::flags as mf;
    use of13::multipart::{MultipartReplyBody as B, MultipartRequestBody as R};
    let dpid = path_dpid(&id)?;
    let info = switch_info(&s, dpid)?;
    let switches = s.core.pipeline.switches();
    let config = request_13(
        &info,
        "meters",
        R::MeterConfig {
            meter_id: of13::OFPM_ALL,
        },
    )?;
    let stats = request_13(
        &info,
        "meters",
        R::Meter {
            meter_id: of13::OFPM_ALL,
        },
    )?;
    let configs = ask(switches, dpid, &config, s.switch_timeout).await?;
    let stats = ask(switches, dpid, &stats, s.switch_timeout).await?;
    let mut by_id: HashMap<u32, &of13::multipart::MeterStats> = HashMap::new();
    for b in bodies_13(&stats) {
        if let B::Meter { stats } = b {
            for m in stats {
                by_id.insert(m.meter_id, m);
            }
        }
    }
    let mut meters = Vec::new();
    for b in bodies_13(&configs) {
        let B::MeterConfig { meters: list } = b else {
            continue;
        };
        for m in list {
            let st = by_id.get(&m.meter_id);
            let flags = [
                (mf::KBPS, "kbps"),
                (mf::PKTPS, "pktps"),
                (mf::BURST, "burst"),
                (mf::STATS, "stats"),
            ]
            .iter()
            .filter(|(bit, _)| m.flags & bit != 0)
            .map(|(_, name)| name.to_string())
            .collect();
            let bands = m
                .bands
                .iter()
                .map(|b| match b {
                    of13::MeterBand::Drop { rate, burst_size } => BandInfo {
                        band_type: "drop".into(),
                        rate: *rate,
                        burst_size: *burst_size,
                        prec_level: None,
                    },
                    of13::MeterBand::DscpRemark {
                        rate,
                        burst_size,
                        prec_level,
                    } => BandInfo {
                        band_type: "dscp_remark".into(),
                        rate: *rate,
                        burst_size: *burst_size,
                        prec_level: Some(*prec_level),
                    },
                    of13::MeterBand::Unknown {
                        band_type,
                        rate,
                        burst_size,
                        ..
                    } => BandInfo {
                        band_type: format!("type {band_type}"),
                        rate: *rate,
                        burst_size: *burst_size,
                        prec_level: None,
                    },
                    of13::MeterBand::Experimenter {
                        rate, burst_size, ..
                    } => BandInfo {
                        band_type: "experimenter".into(),
                        rate: *rate,
                        burst_size: *burst_size,
                        prec_level: None,
                    },
                })
                .collect();
            meters.push(MeterInfo {
                meter_id: m.meter_id,
                flags,
                bands,
                flow_count: st.map(|m| m.flow_count),
                packets: st.map(|m| m.packet_in_count),
                bytes: st.map(|m| m.byte_in_count),
                duration_secs: st.map(|m| secs(m.duration_sec, m.duration_nsec)),
            });
        }
    }
    meters.sort_by_key(|m| m.meter_id);
    Ok(Json(MeterList {
        dpid: dpid::format(dpid),
        meters,
    }))
}

/// The switch's flow tables and their counters (TABLE statistics), both versions.
#[utoipa::path(get, path = "/api/v1/switches/{dpid}/tables", tag = "flows",
    params(("dpid" = String, Path, description = "The switch")),
    responses((status = 200, description = "The tables", body = TableList),
        (status = 400, description = "Not a dpid", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 422, description = "The switch refused the request", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn tables(State(s): St, Path(id): Path<String>) -> Result<Json<TableList>, ApiError> {
    let dpid = path_dpid(&id)?;
    let info = switch_info(&s, dpid)?;
    let msg = stats_request(
        info.version,
        of10::stats::StatsRequestBody::Table,
        of13::multipart::MultipartRequestBody::Table,
    );
    let reply = ask(s.core.pipeline.switches(), dpid, &msg, s.switch_timeout).await?;
    let mut tables = Vec::new();
    for b in bodies_10(&reply) {
        if let of10::stats::StatsReplyBody::Table { stats } = b {
            tables.extend(stats.iter().map(|t| TableInfo {
                table_id: t.table_id,
                name: Some(t.name.to_string_lossy()),
                max_entries: Some(t.max_entries),
                active_count: t.active_count,
                lookup_count: t.lookup_count,
                matched_count: t.matched_count,
            }));
        }
    }
    for b in bodies_13(&reply) {
        if let of13::multipart::MultipartReplyBody::Table { stats } = b {
            tables.extend(stats.iter().map(|t| TableInfo {
                table_id: t.table_id,
                name: None,
                max_entries: None,
                active_count: t.active_count,
                lookup_count: t.lookup_count,
                matched_count: t.matched_count,
            }));
        }
    }
    Ok(Json(TableList {
        dpid: dpid::format(dpid),
        tables,
    }))
}

/// Sends a packet out of the switch (PACKET_OUT through `ovs-ofctl` actions); answers
/// once the switch took it (its barrier reply came) or refused it.
#[utoipa::path(post, path = "/api/v1/switches/{dpid}/packet_out", tag = "flows",
    params(("dpid" = String, Path, description = "The switch")),
    request_body = PacketOutRequest,
    security(("bearer" = [])),
    responses((status = 200, description = "The switch took the packet", body = PacketOutSent),
        (status = 400, description = "Not a dpid, malformed JSON, bad actions (naming the token) or bad hex", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected", body = ErrorBody),
        (status = 413, description = "Body over 1 MiB", body = ErrorBody),
        (status = 422, description = "The switch refused it (its error's type and code)", body = ErrorBody),
        (status = 503, description = "The switch left before it answered", body = ErrorBody),
        (status = 504, description = "The switch did not answer in time", body = ErrorBody)))]
pub async fn packet_out(
    State(s): St,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<PacketOutRequest>,
) -> Result<Json<PacketOutSent>, ApiError> {
    let dpid = path_dpid(&id)?;
    let info = switch_info(&s, dpid)?;
    let in_port = match &body.in_port {
        None => PortNo::Controller,
        Some(PortSpec::Number(n)) => PortNo::from_u32(*n),
        Some(PortSpec::Name(n)) => match n.to_ascii_lowercase().as_str() {
            "controller" => PortNo::Controller,
            "local" => PortNo::Local,
            "none" | "any" => PortNo::Any,
            other => match other.parse() {
                Ok(n) => PortNo::from_u32(n),
                Err(_) => {
                    return Err(ApiError::bad_request(format!(
                    "in_port {n:?}: expected a port number, \"controller\", \"local\" or \"none\""
                )))
                }
            },
        },
    };
    let text = format!(
        "actions={}",
        if body.actions.is_empty() {
            "drop".to_string()
        } else {
            body.actions.join(",")
        }
    );
    let flow = parse_flow(&text).map_err(|e| bad_flow("actions", &e))?;
    let data = hex(&body.data_hex)?;
    let msg = flow.packet_out(info.version, in_port, data).map_err(|e| {
        ApiError::bad_request(format!(
            "switch {} speaks OpenFlow {}: {e}",
            dpid::format(dpid),
            info.version
        ))
    })?;
    apply(s.core.pipeline.switches(), dpid, &msg, s.switch_timeout).await?;
    Ok(Json(PacketOutSent { sent: true }))
}

/// Bytes from hex (white space and `:` between bytes allowed).
fn hex(text: &str) -> Result<Vec<u8>, ApiError> {
    let digits: Vec<u8> = text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b':')
        .collect();
    if digits.len() % 2 != 0 {
        return Err(ApiError::bad_request(
            "data_hex: an odd number of hex digits",
        ));
    }
    digits
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "data_hex: {:?} (byte {i}) is not hex",
                        String::from_utf8_lossy(pair)
                    ))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_shows_as_json_parts_that_make_the_same_flow_again() {
        for text in [
            "priority=100,ip,nw_dst=10.0.0.2,actions=output:2",
            "table=1,priority=7,cookie=0x1f,idle_timeout=5,tcp,tp_dst=80,actions=mod_tp_dst:8080,output:3",
            "icmp,icmp_type=8,actions=drop",
            "arp,arp_spa=10.0.0.1,actions=controller:128,flood",
            "ipv6,ipv6_dst=2001:db8::/32,actions=meter:1,write_actions(output:1,output:2),goto_table:2",
        ] {
            let flow = parse_flow(text).unwrap();
            let entry = FlowEntry {
                flow: flow.clone(),
                counters: None,
            };
            let info = flow_info(&entry);
            let back = NewFlow {
                table: Some(info.table),
                priority: Some(info.priority),
                cookie: Some(info.cookie.clone()),
                matching: Some(info.matching.clone()),
                actions: Some(info.actions.clone()),
                instructions: info.instructions.clone(),
                idle_timeout: Some(info.idle_timeout),
                hard_timeout: Some(info.hard_timeout),
                ..NewFlow::default()
            };
            let rebuilt = parse_flow(&flow_text(&back).unwrap()).unwrap();
            assert_eq!(rebuilt, flow, "{text} → {info:?}");
        }
    }

    #[test]
    fn matches_and_actions_split_as_people_read_them() {
        let flow = parse_flow(
            "tcp,nw_src=10.0.0.0/8,tp_dst=22,actions=write_actions(output:1,output:2),goto_table:3",
        )
        .unwrap();
        let m = match_map(&flow);
        assert_eq!(m["dl_type"], "0x0800");
        assert_eq!(m["nw_proto"], "6");
        assert_eq!(m["nw_src"], "10.0.0.0/8");
        assert_eq!(m["tp_dst"], "22");
        let (actions, instructions) = actions_and_instructions(&flow);
        assert!(actions.is_empty());
        assert_eq!(
            instructions.unwrap(),
            ["write_actions(output:1,output:2)", "goto_table:3"]
        );
        assert_eq!(split_top("a,b(c,d),e"), ["a", "b(c,d)", "e"]);
        assert_eq!(hex("ff:00 0a").unwrap(), [0xff, 0, 0x0a]);
        assert!(hex("f").unwrap_err().message.contains("odd"));
        assert!(hex("zz").unwrap_err().message.contains("\"zz\""));
    }
}
