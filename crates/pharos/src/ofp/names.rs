//! Numbers by name, for the text output only: reserved ports (`CONTROLLER`), buffer ids
//! (`none`), Ethernet types (`0x88cc`), cookies and datapath ids in hex, flags and
//! bitmaps (capabilities, port config, state and features, flow-mod flags, the HELLO
//! version bitmap), error types and codes, as `ovs-ofctl ofp-print` shows them.
//!
//! It rewrites the message's serde value (the one `--json` prints) after the fact, by
//! field name, so the JSON output keeps the numbers `pharos ofp encode` reads back. A
//! value that has no name (an ordinary port number, an unknown bit) stays a number.

use openflow::of13::error_codes::ErrorType as ErrorType13;
use serde_json::{Map, Value};

/// What the rules need to know about the message being rendered.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The header's version byte (0x01 for 1.0, 0x04 for 1.3, others for the HELLO and
    /// ERROR messages of versions the codec does not speak).
    pub version: u8,
    /// The message type's name (`"FLOW_MOD"`).
    pub msg_type: &'a str,
}

impl Context<'_> {
    fn v10(&self) -> bool {
        self.version == 0x01
    }
}

/// Rewrites the fields of one message (an object) in place.
pub fn humanize(value: &mut Value, ctx: &Context<'_>) {
    if let Value::Object(map) = value {
        object(map, ctx);
    }
}

fn walk(value: &mut Value, ctx: &Context<'_>) {
    match value {
        Value::Object(map) => object(map, ctx),
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, ctx)),
        _ => {}
    }
}

fn object(map: &mut Map<String, Value>, ctx: &Context<'_>) {
    // An OXM field, {field: NAME, value: V[, mask: M]}: the value is named by its field.
    if let Some(Value::String(field)) = map.get("field") {
        let field = field.clone();
        for key in ["value", "mask"] {
            if let Some(v) = map.get_mut(key) {
                if let Some(n) = v.as_u64() {
                    if let Some(text) = oxm_value(&field, n, ctx) {
                        *v = Value::String(text);
                    }
                }
            }
        }
    }
    // The HELLO version bitmap: the versions it lists.
    if map.get("kind").and_then(Value::as_str) == Some("version_bitmap") {
        if let Some(Value::Array(words)) = map.get("bitmaps") {
            let words: Vec<u64> = words.iter().filter_map(Value::as_u64).collect();
            map.insert("bitmaps".into(), versions(&words));
        }
    }
    // A port (a port description, PORT_MOD): its config, state and features.
    let is_port = map.contains_key("hw_addr");
    // A flow (FLOW_MOD, a flow statistics entry): its flags.
    let is_flow = map.contains_key("priority") && map.contains_key("cookie");
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let Some(v) = map.get_mut(&key) else {
            continue;
        };
        if let Some(n) = v.as_u64() {
            if let Some(text) = field(&key, n, is_port, is_flow, ctx) {
                *v = Value::String(text);
            }
        } else {
            walk(v, ctx);
        }
    }
    if ctx.msg_type == "ERROR" {
        error_fields(map, ctx);
    }
}

/// A named rendering of the number `n` in field `key`, if it has one.
fn field(key: &str, n: u64, is_port: bool, is_flow: bool, ctx: &Context<'_>) -> Option<String> {
    match key {
        "in_port" | "out_port" | "port" | "port_no" | "watch_port" | "in_phy_port" => port(n, ctx),
        "buffer_id" if n == 0xffff_ffff => Some("none".into()),
        "out_group" | "watch_group" | "group_id" => group(n),
        "queue_id" if n == 0xffff_ffff => Some("ALL".into()),
        "meter_id" => meter(n),
        "table_id" if n == 0xff => Some("ALL".into()),
        "ethertype" | "eth_type" | "dl_type" => Some(format!("{n:#06x}")),
        "cookie" | "cookie_mask" => Some(format!("{n:#x}")),
        "datapath_id" => Some(format!("{n:#018x}")),
        "capabilities" => Some(bits(n, capability_names(ctx))),
        // 1.0's FEATURES_REPLY: the actions the switch supports (elsewhere `actions` is
        // a list).
        "actions" if ctx.v10() => Some(bits(n, ACTIONS_10)),
        "config" | "mask" if is_port => Some(bits(n, port_config_names(ctx))),
        "state" if is_port => Some(port_state(n, ctx)),
        "curr" | "advertised" | "supported" | "peer" | "advertise" if is_port => {
            Some(bits(n, port_feature_names(ctx)))
        }
        "flags" => flags(n, is_flow, ctx),
        _ => None,
    }
}

/// OpenFlow 1.0 ports are 16 bits, 1.3 ports 32; the reserved ones sit at the top.
fn port(n: u64, ctx: &Context<'_>) -> Option<String> {
    const RESERVED: [&str; 8] = [
        "IN_PORT",
        "TABLE",
        "NORMAL",
        "FLOOD",
        "ALL",
        "CONTROLLER",
        "LOCAL",
        "ANY",
    ];
    let (top, max) = if ctx.v10() {
        (0xffff, 0xff00)
    } else {
        (0xffff_ffff, 0xffff_ff00)
    };
    if n == max {
        return Some("MAX".into());
    }
    if n > top || n < top - 7 {
        return None;
    }
    let name = RESERVED[(n - (top - 7)) as usize];
    // 1.0 calls the last one OFPP_NONE.
    Some(
        if ctx.v10() && name == "ANY" {
            "NONE"
        } else {
            name
        }
        .into(),
    )
}

fn group(n: u64) -> Option<String> {
    match n {
        0xffff_ff00 => Some("MAX".into()),
        0xffff_fffc => Some("ALL".into()),
        0xffff_ffff => Some("ANY".into()),
        _ => None,
    }
}

fn meter(n: u64) -> Option<String> {
    match n {
        0xffff_0000 => Some("MAX".into()),
        0xffff_fffd => Some("SLOWPATH".into()),
        0xffff_fffe => Some("CONTROLLER".into()),
        0xffff_ffff => Some("ALL".into()),
        _ => None,
    }
}

fn oxm_value(field: &str, n: u64, ctx: &Context<'_>) -> Option<String> {
    match field {
        "in_port" | "in_phy_port" => port(n, ctx),
        "eth_type" => Some(format!("{n:#06x}")),
        "metadata" | "tunnel_id" => Some(format!("{n:#x}")),
        _ => None,
    }
}

fn flags(n: u64, is_flow: bool, ctx: &Context<'_>) -> Option<String> {
    match ctx.msg_type {
        "FLOW_MOD" | "FLOW_REMOVED" => Some(bits(n, flow_flag_names(ctx))),
        "MULTIPART_REQUEST" | "STATS_REQUEST" if !is_flow => Some(bits(n, &["REQ_MORE"])),
        "MULTIPART_REPLY" | "STATS_REPLY" if !is_flow => Some(bits(n, &["REPLY_MORE"])),
        _ if is_flow => Some(bits(n, flow_flag_names(ctx))),
        "SET_CONFIG" | "GET_CONFIG_REPLY" => Some(
            match n & 3 {
                0 => "FRAG_NORMAL",
                1 => "FRAG_DROP",
                2 => "FRAG_REASM",
                _ => "FRAG_MASK",
            }
            .to_string()
                + &unknown_bits(n & !3),
        ),
        "METER_MOD" => Some(bits(n, &["KBPS", "PKTPS", "BURST", "STATS"])),
        _ => None,
    }
}

/// The names of the bits set in `n` (bit i named `names[i]`), space-separated as
/// `ovs-ofctl` prints them; bits without a name in hex; `0` when none is set.
fn bits(n: u64, names: &[&str]) -> String {
    if n == 0 {
        return "0".into();
    }
    let mut out: Vec<String> = Vec::new();
    let mut rest = n;
    for (i, name) in names.iter().enumerate() {
        if !name.is_empty() && n & (1 << i) != 0 {
            out.push((*name).to_string());
            rest &= !(1 << i);
        }
    }
    let mut text = out.join(" ");
    text += &unknown_bits(rest);
    text.trim_start().to_string()
}

fn unknown_bits(rest: u64) -> String {
    if rest == 0 {
        String::new()
    } else {
        format!(" {rest:#x}")
    }
}

/// The versions a HELLO version bitmap lists, `[1.0, 1.3]` (bit n: wire version n).
fn versions(words: &[u64]) -> Value {
    let mut out = Vec::new();
    for (w, word) in words.iter().enumerate() {
        for bit in 0..32 {
            if word & (1 << bit) != 0 {
                out.push(Value::String(version_name((w * 32 + bit) as u64)));
            }
        }
    }
    Value::Array(out)
}

/// `1.3` for wire version 4; `0x07` for a version no OpenFlow release has.
pub fn version_name(wire: u64) -> String {
    match wire {
        1..=6 => format!("1.{}", wire - 1),
        _ => format!("{wire:#04x}"),
    }
}

fn capability_names(ctx: &Context<'_>) -> &'static [&'static str] {
    if ctx.v10() {
        &[
            "FLOW_STATS",
            "TABLE_STATS",
            "PORT_STATS",
            "STP",
            "RESERVED",
            "IP_REASM",
            "QUEUE_STATS",
            "ARP_MATCH_IP",
        ]
    } else {
        &[
            "FLOW_STATS",
            "TABLE_STATS",
            "PORT_STATS",
            "GROUP_STATS",
            "",
            "IP_REASM",
            "QUEUE_STATS",
            "",
            "PORT_BLOCKED",
        ]
    }
}

const ACTIONS_10: &[&str] = &[
    "OUTPUT",
    "SET_VLAN_VID",
    "SET_VLAN_PCP",
    "STRIP_VLAN",
    "SET_DL_SRC",
    "SET_DL_DST",
    "SET_NW_SRC",
    "SET_NW_DST",
    "SET_NW_TOS",
    "SET_TP_SRC",
    "SET_TP_DST",
    "ENQUEUE",
];

fn port_config_names(ctx: &Context<'_>) -> &'static [&'static str] {
    if ctx.v10() {
        &[
            "PORT_DOWN",
            "NO_STP",
            "NO_RECV",
            "NO_RECV_STP",
            "NO_FLOOD",
            "NO_FWD",
            "NO_PACKET_IN",
        ]
    } else {
        &["PORT_DOWN", "", "NO_RECV", "", "", "NO_FWD", "NO_PACKET_IN"]
    }
}

fn port_state(n: u64, ctx: &Context<'_>) -> String {
    if ctx.v10() {
        // Bit 0 is LINK_DOWN; bits 8-9 are the spanning tree state (0 is STP_LISTEN,
        // which says nothing on a switch without STP: left out).
        let stp = match n & 0x300 {
            0x100 => " STP_LEARN",
            0x200 => " STP_FORWARD",
            0x300 => " STP_BLOCK",
            _ => "",
        };
        let text = bits(n & !0x300, &["LINK_DOWN"]);
        match (text.as_str(), stp) {
            (_, "") => text,
            ("0", s) => s.trim_start().to_string(),
            (t, s) => format!("{t}{s}"),
        }
    } else {
        bits(n, &["LINK_DOWN", "BLOCKED", "LIVE"])
    }
}

fn port_feature_names(ctx: &Context<'_>) -> &'static [&'static str] {
    if ctx.v10() {
        &[
            "10MB_HD",
            "10MB_FD",
            "100MB_HD",
            "100MB_FD",
            "1GB_HD",
            "1GB_FD",
            "10GB_FD",
            "COPPER",
            "FIBER",
            "AUTONEG",
            "PAUSE",
            "PAUSE_ASYM",
        ]
    } else {
        &[
            "10MB_HD",
            "10MB_FD",
            "100MB_HD",
            "100MB_FD",
            "1GB_HD",
            "1GB_FD",
            "10GB_FD",
            "40GB_FD",
            "100GB_FD",
            "1TB_FD",
            "OTHER",
            "COPPER",
            "FIBER",
            "AUTONEG",
            "PAUSE",
            "PAUSE_ASYM",
        ]
    }
}

fn flow_flag_names(ctx: &Context<'_>) -> &'static [&'static str] {
    if ctx.v10() {
        &["SEND_FLOW_REM", "CHECK_OVERLAP", "EMERG"]
    } else {
        &[
            "SEND_FLOW_REM",
            "CHECK_OVERLAP",
            "RESET_COUNTS",
            "NO_PKT_COUNTS",
            "NO_BYT_COUNTS",
        ]
    }
}

/// ERROR: the type and code by name, and the data as text when it is text (a
/// HELLO_FAILED's explanation).
fn error_fields(map: &mut Map<String, Value>, ctx: &Context<'_>) {
    let (Some(t), Some(c)) = (
        map.get("err_type").and_then(Value::as_u64),
        map.get("code").and_then(Value::as_u64),
    ) else {
        return;
    };
    let (t, c) = (t as u16, c as u16);
    let (type_name, code_name) = match ctx.version {
        0x01 => (
            openflow::of10::error_codes::error_type_name(t),
            openflow::of10::error_codes::error_code_name(t, c),
        ),
        0x04 => {
            let et = ErrorType13::from_raw(t);
            (et.name(), et.code_name(c))
        }
        // HELLO_FAILED and its codes are the same in every version.
        _ if t == 0 => (
            Some("HELLO_FAILED"),
            ["INCOMPATIBLE", "EPERM"].get(c as usize).copied(),
        ),
        _ => (None, None),
    };
    if let Some(name) = type_name {
        map.insert("err_type".into(), Value::String(name.into()));
    }
    if let Some(name) = code_name {
        map.insert("code".into(), Value::String(name.into()));
    }
    if let Some(Value::String(hex)) = map.get("data") {
        if let Some(text) = printable(hex) {
            map.insert("data".into(), Value::String(format!("\"{text}\"")));
        }
    }
}

/// The bytes of a hex string as text, when they are all printable ASCII.
fn printable(hex: &str) -> Option<String> {
    let bytes = openflow::types::from_hex(hex).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    (!text.is_empty() && text.chars().all(|c| c.is_ascii_graphic() || c == ' ')).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn named(v: Value, version: u8, msg_type: &str) -> Value {
        let mut v = v;
        humanize(&mut v, &Context { version, msg_type });
        v
    }

    #[test]
    fn reserved_ports_by_version() {
        let v = named(
            json!({"in_port": 4294967293u64, "actions": [{"action": "output", "port": 4294967292u64}]}),
            4,
            "PACKET_OUT",
        );
        assert_eq!(v["in_port"], "CONTROLLER");
        assert_eq!(v["actions"][0]["port"], "ALL");
        let v = named(
            json!({"in_port": 65533, "out_port": 65535, "port": 3}),
            1,
            "FLOW_MOD",
        );
        assert_eq!(
            (v["in_port"].as_str(), v["out_port"].as_str()),
            (Some("CONTROLLER"), Some("NONE"))
        );
        assert_eq!(v["port"], 3);
        let v = named(
            json!({"out_port": 4294967295u64, "port_no": 4294967294u64}),
            4,
            "FLOW_MOD",
        );
        assert_eq!(
            (v["out_port"].as_str(), v["port_no"].as_str()),
            (Some("ANY"), Some("LOCAL"))
        );
        // A 1.3 port number that would be reserved in 1.0 is an ordinary port.
        assert_eq!(
            named(json!({"port": 65533}), 4, "PACKET_OUT")["port"],
            65533
        );
    }

    #[test]
    fn buffer_ids_ethertypes_and_oxm_values() {
        let v = named(
            json!({"buffer_id": 4294967295u64, "match": [{"field": "eth_type", "value": 35020}, {"field": "in_port", "value": 4294967294u64}],
                   "actions": [{"action": "push_vlan", "ethertype": 33024}]}),
            4,
            "PACKET_IN",
        );
        assert_eq!(v["buffer_id"], "none");
        assert_eq!(v["match"][0]["value"], "0x88cc");
        assert_eq!(v["match"][1]["value"], "LOCAL");
        assert_eq!(v["actions"][0]["ethertype"], "0x8100");
        assert_eq!(
            named(json!({"buffer_id": 7}), 4, "PACKET_IN")["buffer_id"],
            7
        );
    }

    #[test]
    fn flags_and_bitmaps() {
        let v = named(
            json!({"datapath_id": 1, "capabilities": 79}),
            4,
            "FEATURES_REPLY",
        );
        assert_eq!(
            v["capabilities"],
            "FLOW_STATS TABLE_STATS PORT_STATS GROUP_STATS QUEUE_STATS"
        );
        assert_eq!(v["datapath_id"], "0x0000000000000001");
        let v = named(
            json!({"desc": {"port_no": 7, "hw_addr": "f2:0b:a4:d0:3f:70", "config": 0, "state": 4, "curr": 10248}}),
            4,
            "PORT_STATUS",
        );
        assert_eq!(v["desc"]["config"], "0");
        assert_eq!(v["desc"]["state"], "LIVE");
        assert_eq!(v["desc"]["curr"], "100MB_FD COPPER AUTONEG");
        let v = named(
            json!({"desc": {"hw_addr": "00:00:00:00:00:01", "config": 65, "state": 0x201}}),
            1,
            "PORT_STATUS",
        );
        assert_eq!(v["desc"]["config"], "PORT_DOWN NO_PACKET_IN");
        assert_eq!(v["desc"]["state"], "LINK_DOWN STP_FORWARD");
        let v = named(
            json!({"priority": 1, "cookie": 0, "flags": 5}),
            4,
            "FLOW_MOD",
        );
        assert_eq!(v["flags"], "SEND_FLOW_REM RESET_COUNTS");
        assert_eq!(v["cookie"], "0x0");
        assert_eq!(
            named(json!({"flags": 1}), 4, "MULTIPART_REPLY")["flags"],
            "REPLY_MORE"
        );
        assert_eq!(
            named(json!({"flags": 2, "miss_send_len": 128}), 4, "SET_CONFIG")["flags"],
            "FRAG_REASM"
        );
        // Bits without a name stay visible, in hex.
        assert_eq!(
            named(json!({"capabilities": 0x10001}), 4, "FEATURES_REPLY")["capabilities"],
            "FLOW_STATS 0x10000"
        );
    }

    #[test]
    fn hello_versions_and_errors() {
        let v = named(
            json!({"elements": [{"kind": "version_bitmap", "bitmaps": [18]}]}),
            4,
            "HELLO",
        );
        assert_eq!(v["elements"][0]["bitmaps"], json!(["1.0", "1.3"]));
        let v = named(
            json!({"err_type": 2, "code": 4, "data": "0401"}),
            4,
            "ERROR",
        );
        assert_eq!(
            (v["err_type"].as_str(), v["code"].as_str()),
            (Some("BAD_ACTION"), Some("BAD_OUT_PORT"))
        );
        assert_eq!(v["data"], "0401");
        let v = named(
            json!({"err_type": 0, "code": 0, "data": "6869"}),
            2,
            "ERROR",
        );
        assert_eq!(
            (v["err_type"].as_str(), v["code"].as_str()),
            (Some("HELLO_FAILED"), Some("INCOMPATIBLE"))
        );
        assert_eq!(v["data"], "\"hi\"");
    }
}
