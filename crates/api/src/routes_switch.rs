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
//! refused it (with the error it sent). The documents and the conversions are in
//! [`crate::switch_model`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use controller::cookie::Owners;
use controller::info::SwitchInfo;
use openflow::ofctl::{parse_flow, parse_match, FlowEntry, FlowModCommand, PortNo};
use openflow::{of10, of13, Message, Version};

use crate::ask::{apply, ask};
use crate::dpid::Dpid;
use crate::error::{ApiError, JsonBody};
use crate::model::{ErrorBody, Port};
use crate::switch_model::*;
use crate::{dpid, Shared};

type St = State<Arc<Shared>>;

// ---------------------------------------------------------------------------------
// Helpers

fn path_dpid(text: &str) -> Result<Dpid, ApiError> {
    dpid::parse(text).map_err(ApiError::bad_request)
}

/// The switch, or 404.
fn switch_info(s: &Shared, dpid: Dpid) -> Result<Arc<SwitchInfo>, ApiError> {
    s.core.switches().info(dpid).ok_or_else(|| {
        ApiError::not_found(format!("no switch {} is connected", dpid::format(dpid)))
    })
}

/// A statistics request of `version`: `v10` for 1.0, `v13` for 1.3.
pub(crate) fn stats_request(
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
pub(crate) fn bodies_13(
    msgs: &[Message],
) -> impl Iterator<Item = &of13::multipart::MultipartReplyBody> {
    msgs.iter().filter_map(|m| match m {
        Message::V13(of13::Message::MultipartReply(r)) => Some(&r.body),
        _ => None,
    })
}

/// The bodies of 1.0 stats replies.
pub(crate) fn bodies_10(msgs: &[Message]) -> impl Iterator<Item = &of10::stats::StatsReplyBody> {
    msgs.iter().filter_map(|m| match m {
        Message::V10(of10::Message::StatsReply(r)) => Some(&r.body),
        _ => None,
    })
}

/// A parse error as a 400 naming the token and its place in `what`.
fn bad_flow(what: &str, e: &openflow::ofctl::ParseError) -> ApiError {
    ApiError::bad_request(format!("{what}: {e}"))
}

// ---------------------------------------------------------------------------------
// Description

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
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
        let switches = shared.core.switches();
        let desc = match ask(switches, dpid, &msg, shared.switch_timeout).await {
            Ok(reply) => read_description(&reply),
            Err(e) => {
                tracing::debug!(dpid = %dpid, error = e.message, "no description");
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
        let reply = ask(s.core.switches(), dpid, &msg, s.switch_timeout).await?;
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
/// `ovs-ofctl dump-flows` prints it, with the app that installed it: the one whose
/// tag its cookie carries (`controller::cookie`).
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
    let reply = ask(s.core.switches(), dpid, &msg, s.switch_timeout).await?;
    let mut flows = Vec::new();
    let mut unreadable = Vec::new();
    // Tags are distinct among the pipeline's apps (checked at start-up).
    let owners = Owners::new(s.core.apps.app_names()).unwrap_or_default();
    for m in &reply {
        for e in FlowEntry::from_message(m).into_iter().flatten() {
            match e {
                Ok(e) => flows.push(flow_info(&e, &owners)),
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
    apply(s.core.switches(), dpid, &msg, s.switch_timeout).await?;
    tracing::info!(dpid = %dpid, flow = %flow, "REST: flow applied");
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
    apply(s.core.switches(), dpid, &msg, s.switch_timeout).await?;
    tracing::info!(dpid = %dpid, selection = %sel.selection_to_ofctl(), strict = del.strict, "REST: flows deleted");
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
    let switches = s.core.switches();
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
    let switches = s.core.switches();
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
    let reply = ask(s.core.switches(), dpid, &msg, s.switch_timeout).await?;
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
    apply(s.core.switches(), dpid, &msg, s.switch_timeout).await?;
    Ok(Json(PacketOutSent { sent: true }))
}
