//! The JSON documents of the routes that ask a switch ([`crate::routes_switch`]), and
//! the conversions between a flow in `ovs-ofctl` syntax and its JSON form: the match as
//! `{field: value}` (shorthands spelled out as `dl_type` and `nw_proto`), the actions
//! and 1.3 instructions as `ovs-ofctl` strings, each flow also whole as `dump-flows`
//! prints it. The JSON form is the string's parts, so what a `GET` shows can be posted
//! back (`flow_text` puts it together again).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::SystemTime;

use openflow::of13;
use openflow::ofctl::{actions_from_of13, Flow, FlowEntry};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::ApiError;
use crate::model::Port;
pub use crate::model::SwitchDescription;

// ---------------------------------------------------------------------------------
// The documents

/// Each switch's description with the time its connection was listed (a reconnected
/// switch is asked again); `None` while it is being asked.
#[derive(Debug, Default)]
pub struct Descriptions(
    pub(crate) Mutex<HashMap<crate::dpid::Dpid, (SystemTime, Option<SwitchDescription>)>>,
);

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
    /// The app that installed it: the app among the controller's whose tag the
    /// cookie's top 16 bits carry (see `controller::cookie`); none for a flow added by
    /// hand or by an app the controller does not know.
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
// Conversions

/// Seconds and nanoseconds as seconds.
pub(crate) fn secs(sec: u32, nsec: u32) -> f64 {
    f64::from(sec) + f64::from(nsec) / 1e9
}

/// A 1.0 port number with its reserved values widened to 1.3's, as the port list has them.
pub(crate) fn widen(p: u16) -> u32 {
    if p >= 0xff00 {
        0xffff_0000 | u32::from(p)
    } else {
        u32::from(p)
    }
}

/// Splits `a,b(c,d),e` at the commas outside parentheses.
pub(crate) fn split_top(s: &str) -> Vec<String> {
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
pub(crate) fn shorthand(word: &str) -> Option<&'static [(&'static str, &'static str)]> {
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
pub(crate) fn match_map(flow: &Flow) -> BTreeMap<String, String> {
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
pub(crate) fn actions_and_instructions(flow: &Flow) -> (Vec<String>, Option<Vec<String>>) {
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

/// `e` as the REST API shows it; `owners` names the app whose tag its cookie carries.
pub(crate) fn flow_info(e: &FlowEntry, owners: &controller::cookie::Owners) -> FlowInfo {
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
        owner: owners.owner(f.cookie).map(String::from),
        ofctl: e.to_string(),
    }
}

/// The `ovs-ofctl` string a JSON flow stands for.
pub(crate) fn flow_text(f: &NewFlow) -> Result<String, ApiError> {
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

/// A bucket's actions as `ovs-ofctl` strings (one naming what cannot be shown).
pub(crate) fn bucket_actions(list: &[of13::Action]) -> Vec<String> {
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

/// Bytes from hex (white space and `:` between bytes allowed).
pub(crate) fn hex(text: &str) -> Result<Vec<u8>, ApiError> {
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
    use openflow::ofctl::parse_flow;

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
            let info = flow_info(&entry, &controller::cookie::Owners::default());
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
