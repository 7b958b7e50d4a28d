//! The human views of the API's documents: aligned tables (`kubectl get`'s look), a
//! `key: value` block for one thing, flows one per line in `ovs-ofctl` syntax.
//!
//! Every renderer takes the JSON as the server sent it and is tolerant: a field that is
//! missing or `null` shows as `-`, an unknown field is ignored, and a document of a shape
//! not foreseen still shows (see [`generic`]), so a newer server never breaks an older
//! `pharos ctl`.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// What a missing or `null` field shows as.
pub const NONE: &str = "-";

/// A table: a header and rows, printed with the columns aligned.
#[derive(Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Columns two spaces apart, each as wide as its widest cell; the last is not padded
    /// (no trailing blanks).
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut width = vec![0; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(n) {
                if i + 1 == n {
                    line.push_str(c);
                } else {
                    let pad = width[i] - c.chars().count();
                    let _ = write!(line, "{c}{}  ", " ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// The field at `path` (`"a.b"`: field `b` of field `a`; a number indexes an array).
pub fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| match v {
        Value::Object(m) => m.get(k),
        Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

/// A scalar as a cell: strings bare, `null` or missing `-`, arrays joined by `,`.
pub fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => NONE.into(),
        Some(Value::String(s)) if s.is_empty() => NONE.into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.is_empty() => NONE.into(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| cell(Some(x)))
            .collect::<Vec<_>>()
            .join(","),
        Some(v) => v.to_string(),
    }
}

/// The field at `path` as a cell.
pub fn field(v: &Value, path: &str) -> String {
    cell(at(v, path))
}

/// The array at `path` (empty when missing or not one).
fn list<'a>(v: &'a Value, path: &str) -> &'a [Value] {
    at(v, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The array `v` is, or that its field `key` is (a list route may send either).
fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    match v {
        Value::Array(a) => a,
        v => list(v, key),
    }
}

/// A duration in seconds, short: `200µs`, `850ms`, `42s`, `3m12s`, `5h03m`, `2d04h`.
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return NONE.into();
    }
    if secs < 0.001 {
        return format!("{}µs", (secs * 1e6).round() as u64);
    }
    if secs < 1.0 {
        return format!("{}ms", (secs * 1000.0).round() as u64);
    }
    let s = secs as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// How long ago a Unix time was (`AGE`), in whole seconds as the API's times are;
/// `-` when missing.
fn age(v: &Value, path: &str) -> String {
    let Some(t) = at(v, path).and_then(Value::as_f64) else {
        return NONE.into();
    };
    match now_secs() - t {
        d if d < 1.0 => "0s".into(),
        d => duration(d),
    }
}

/// Seconds as a short duration, `-` when missing.
fn secs(v: &Value, path: &str) -> String {
    at(v, path)
        .and_then(Value::as_f64)
        .map_or_else(|| NONE.into(), duration)
}

/// `GET /switches`.
pub fn switches(v: &Value) -> String {
    let mut t = Table::new(&["DPID", "VERSION", "PEER", "PORTS", "UP", "AGE"]);
    for s in items(v, "switches") {
        t.row(vec![
            field(s, "dpid"),
            field(s, "version"),
            field(s, "peer"),
            field(s, "n_ports"),
            field(s, "ports_up"),
            age(s, "connected_since"),
        ]);
    }
    if t.is_empty() {
        return "no switch is connected\n".into();
    }
    t.render()
}

/// `key: value` lines, the keys aligned.
fn block(pairs: &[(&str, String)]) -> String {
    let w = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for (k, v) in pairs {
        let _ = writeln!(out, "{:<w$} {v}", format!("{k}:"), w = w);
    }
    out
}

/// `GET /switches/{dpid}`: the switch, its description when the server sends one, its
/// ports and its connection's counters.
pub fn switch(v: &Value) -> String {
    let mut pairs = vec![
        ("dpid", field(v, "dpid")),
        ("version", field(v, "version")),
        ("peer", field(v, "peer")),
        ("connected", format!("{} ago", age(v, "connected_since"))),
    ];
    if let Some(d) = at(v, "description").filter(|d| d.is_object()) {
        for (k, name) in [
            ("mfr_desc", "manufacturer"),
            ("hw_desc", "hardware"),
            ("sw_desc", "software"),
            ("serial_num", "serial"),
            ("dp_desc", "datapath"),
        ] {
            // The plan names them mfr, hw, sw, serial, dp_desc; OpenFlow's names too.
            let short = k.trim_end_matches("_desc").trim_end_matches("_num");
            let value = [k, short, name]
                .iter()
                .find_map(|k| at(d, k).filter(|x| !x.is_null()));
            pairs.push((name, cell(value)));
        }
    }
    pairs.push(("tables", field(v, "features.n_tables")));
    pairs.push(("buffers", field(v, "features.n_buffers")));
    pairs.push((
        "capabilities",
        at(v, "features.capabilities")
            .and_then(Value::as_u64)
            .map_or_else(|| NONE.into(), |c| format!("{c:#x}")),
    ));
    if let Some(c) = at(v, "counters").filter(|c| c.is_object()) {
        pairs.push((
            "packet-ins",
            format!(
                "{} ({}/s)",
                field(c, "packet_ins"),
                at(c, "packet_ins_per_sec")
                    .and_then(Value::as_f64)
                    .map_or_else(|| NONE.into(), |r| format!("{r:.1}"))
            ),
        ));
        pairs.push((
            "bytes",
            format!("in {}, out {}", field(c, "bytes_in"), field(c, "bytes_out")),
        ));
        pairs.push(("worker", field(c, "worker")));
    }
    let mut out = block(&pairs);
    out.push('\n');
    out.push_str(&ports(v));
    out
}

/// A port's state in words: `up`, or `down` and why.
fn port_state(p: &Value) -> String {
    let flag = |k| at(p, k).and_then(Value::as_bool);
    let mut why = Vec::new();
    if flag("admin_down") == Some(true) {
        why.push("admin");
    }
    if flag("link_down") == Some(true) {
        why.push("link");
    }
    match (flag("up"), why.is_empty()) {
        (Some(true), _) => "up".into(),
        (Some(false), true) => "down".into(),
        (_, false) => format!("down ({})", why.join(", ")),
        (None, true) => NONE.into(),
    }
}

/// The `ports` of a switch or of `GET /switches/{dpid}/ports`; with the traffic columns
/// when a port has `stats`.
pub fn ports(v: &Value) -> String {
    let ports = items(v, "ports");
    let with_stats = ports.iter().any(|p| at(p, "stats").is_some());
    let mut header = vec!["PORT", "NAME", "HW_ADDR", "STATE"];
    const STATS: [(&str, &str); 8] = [
        ("RX_PKTS", "rx_packets"),
        ("TX_PKTS", "tx_packets"),
        ("RX_BYTES", "rx_bytes"),
        ("TX_BYTES", "tx_bytes"),
        ("RX_DROP", "rx_dropped"),
        ("TX_DROP", "tx_dropped"),
        ("RX_ERR", "rx_errors"),
        ("TX_ERR", "tx_errors"),
    ];
    if with_stats {
        header.extend(STATS.iter().map(|(h, _)| *h));
    }
    let mut t = Table::new(&header);
    for p in ports {
        let mut row = vec![
            field(p, "port_no"),
            field(p, "name"),
            field(p, "hw_addr"),
            port_state(p),
        ];
        if with_stats {
            // A counter the switch does not keep is all ones (-1) in OpenFlow's
            // statistics (Open vSwitch's drops and errors on its local port): shown as
            // not there.
            row.extend(STATS.iter().map(|(_, k)| {
                match at(p, &format!("stats.{k}")).and_then(Value::as_u64) {
                    Some(u64::MAX) => NONE.into(),
                    _ => field(p, &format!("stats.{k}")),
                }
            }));
        }
        t.row(row);
    }
    if t.is_empty() {
        return "no ports\n".into();
    }
    t.render()
}

/// `GET /switches/{dpid}/flows`: one flow a line, in `ovs-ofctl` syntax (the `ofctl`
/// field). With `stats`, `ovs-ofctl dump-flows`'s counters go first (a line stays a
/// valid flow after them, as `actions=` must end it) and the app that installed the flow
/// in a column before; without, the bare flows, ready for `add-flow`.
pub fn flows(v: &Value, stats: bool) -> String {
    let flows = items(v, "flows");
    if flows.is_empty() {
        return if stats {
            "no flows\n".into()
        } else {
            String::new()
        };
    }
    let text = |f: &Value| match at(f, "ofctl").and_then(Value::as_str) {
        Some(s) => s.to_string(),
        // A server without `ofctl`: what it sent, so nothing is hidden.
        None => f.to_string(),
    };
    if !stats {
        return flows
            .iter()
            .map(|f| without_counters(&text(f)) + "\n")
            .collect();
    }
    let mut t = Table::new(&["APP", "FLOW"]);
    for f in flows {
        let ofctl = text(f);
        // Written as `ovs-ofctl dump-flows` writes it, counters included.
        if ofctl.contains("n_packets=") {
            t.row(vec![field(f, "owner"), ofctl]);
            continue;
        }
        let mut counters = Vec::new();
        if let Some(d) = at(f, "duration_secs").and_then(Value::as_f64) {
            counters.push(format!("duration={d:.3}s"));
        }
        for k in ["packets", "bytes"] {
            if let Some(n) = at(f, k).filter(|n| !n.is_null()) {
                counters.push(format!("n_{k}={n}"));
            }
        }
        counters.push(ofctl);
        t.row(vec![field(f, "owner"), counters.join(", ")]);
    }
    t.render()
}

/// The counters `ovs-ofctl dump-flows` writes before a flow's match, which `add-flow`
/// does not take.
const COUNTERS: [&str; 5] = [
    "duration=",
    "n_packets=",
    "n_bytes=",
    "idle_age=",
    "hard_age=",
];

/// A flow as `dump-flows` writes it, without its counters (as `ovs-ofctl --no-stats`
/// prints it): a line `add-flow` takes back. Everything from `actions=` on is kept as
/// it is.
pub fn without_counters(flow: &str) -> String {
    let (head, actions) = flow
        .find("actions=")
        .map_or((flow, ""), |i| flow.split_at(i));
    let mut parts: Vec<&str> = head
        .split(',')
        .flat_map(str::split_whitespace)
        .filter(|t| !COUNTERS.iter().any(|c| t.starts_with(c)))
        .collect();
    if !actions.is_empty() {
        parts.push(actions);
    }
    parts.join(",")
}

/// The flows the server could not write in `ovs-ofctl` syntax (its `unreadable`), as a
/// note for standard error; `None` when there are none.
pub fn unreadable_flows(v: &Value) -> Option<String> {
    let list = list(v, "unreadable");
    if list.is_empty() {
        return None;
    }
    let mut out = format!(
        "{} flow{} of this switch cannot be written in ovs-ofctl syntax (--json shows them all):\n",
        list.len(),
        if list.len() == 1 { "" } else { "s" }
    );
    for u in list {
        let _ = writeln!(out, "  {}", cell(Some(u)));
    }
    Some(out)
}

/// A static flow's status, with why it is pending when its switch is not connected.
fn static_status(s: &Value) -> String {
    let status = field(s, "status");
    let offline = at(s, "connected").and_then(Value::as_bool) == Some(false);
    if status == "pending" && offline {
        "pending (switch not connected)".into()
    } else {
        status
    }
}

/// `GET /static_flows`.
pub fn static_flows(v: &Value) -> String {
    let mut t = Table::new(&["NAME", "DPID", "SOURCE", "STATUS", "FLOW", "ERROR"]);
    for s in items(v, "static_flows") {
        t.row(vec![
            field(s, "name"),
            field(s, "dpid"),
            field(s, "source"),
            static_status(s),
            field(s, "flow"),
            field(s, "error"),
        ]);
    }
    if t.is_empty() {
        return "no static flows\n".into();
    }
    t.render()
}

/// One static flow (`GET /static_flows/{name}`, or what `POST` answered).
pub fn static_flow(v: &Value) -> String {
    let mut pairs = vec![
        ("name", field(v, "name")),
        ("dpid", field(v, "dpid")),
        ("source", field(v, "source")),
        ("status", static_status(v)),
        ("flow", field(v, "flow")),
    ];
    if at(v, "error").is_some_and(|e| !e.is_null()) {
        pairs.push(("error", field(v, "error")));
    }
    if let Some(t) = at(v, "updated_at").filter(|t| !t.is_null()) {
        let when = match t.as_f64() {
            Some(_) => format!("{} ago", age(v, "updated_at")),
            None => cell(Some(t)),
        };
        pairs.push(("updated", when));
    }
    block(&pairs)
}

/// What `DELETE /static_flows/{name}` answered: the flow forgotten, and whether its
/// switch confirmed the delete.
pub fn static_flow_deleted(name: &str, v: &Value) -> String {
    let dpid = field(v, "deleted.dpid");
    match at(v, "removed_from_switch").and_then(Value::as_bool) {
        Some(true) => format!("deleted static flow {name}, and removed it from {dpid}\n"),
        Some(false) => format!(
            "deleted static flow {name}; not removed from {dpid}: {}\n",
            field(v, "error")
        ),
        None => format!("deleted static flow {name}\n"),
    }
}

/// `GET /hosts`.
pub fn hosts(v: &Value) -> String {
    let mut t = Table::new(&["MAC", "VLAN", "SWITCH", "PORT", "IPS", "LAST_SEEN"]);
    for h in items(v, "hosts") {
        t.row(vec![
            field(h, "mac"),
            field(h, "vlan"),
            field(h, "attachment.dpid"),
            field(h, "attachment.port"),
            field(h, "ips"),
            match at(h, "last_seen_secs_ago").and_then(Value::as_f64) {
                Some(s) => format!("{} ago", duration(s)),
                None => NONE.into(),
            },
        ]);
    }
    if t.is_empty() {
        return "no hosts\n".into();
    }
    t.render()
}

/// `GET /links`: each directed link (a cable is two, one each way).
pub fn links(v: &Value) -> String {
    let mut t = Table::new(&["SRC", "PORT", "DST", "PORT"]);
    for l in items(v, "links") {
        t.row(vec![
            field(l, "src.dpid"),
            field(l, "src.port"),
            field(l, "dst.dpid"),
            field(l, "dst.port"),
        ]);
    }
    if t.is_empty() {
        return "no links\n".into();
    }
    t.render()
}

/// `GET /topology`: its switches, links and hosts, each under a heading.
pub fn topology(v: &Value) -> String {
    let n = |k| list(v, k).len();
    format!(
        "SWITCHES ({})\n{}\nLINKS ({})\n{}\nHOSTS ({})\n{}",
        n("switches"),
        switches(at(v, "switches").unwrap_or(&Value::Null)),
        n("links"),
        links(at(v, "links").unwrap_or(&Value::Null)),
        n("hosts"),
        hosts(at(v, "hosts").unwrap_or(&Value::Null)),
    )
}

/// `GET /apps`: the pipeline, then each app's handlers when the server counts them, then
/// the counters apps publish.
pub fn apps(v: &Value) -> String {
    let apps = items(v, "apps");
    let mut t = Table::new(&["ORDER", "NAME", "STATE", "REQUIRES", "PANICS", "REASON"]);
    let mut h = Table::new(&["APP", "HANDLER", "CALLS", "TIME", "AVG"]);
    let mut c = Table::new(&["APP", "COUNTER", "VALUE", "COUNTS"]);
    for a in apps {
        for x in list(a, "counters") {
            c.row(vec![
                field(a, "name"),
                field(x, "name"),
                field(x, "value"),
                field(x, "help"),
            ]);
        }
        t.row(vec![
            field(a, "order"),
            field(a, "name"),
            field(a, "state"),
            names(a, "requires"),
            field(a, "panics"),
            quarantine_reason(a),
        ]);
        for x in list(a, "handlers") {
            let calls = at(x, "calls").and_then(Value::as_f64);
            let time = at(x, "time_secs").and_then(Value::as_f64);
            let avg = match (calls, time) {
                (Some(c), Some(t)) if c > 0.0 => format!("{:.1}µs", t / c * 1e6),
                _ => NONE.into(),
            };
            h.row(vec![
                field(a, "name"),
                field(x, "handler"),
                field(x, "calls"),
                secs(x, "time_secs"),
                avg,
            ]);
        }
    }
    if t.is_empty() {
        return "no apps\n".into();
    }
    let mut out = t.render();
    for more in [h, c] {
        if !more.is_empty() {
            out.push('\n');
            out.push_str(&more.render());
        }
    }
    out
}

/// A list of names, comma-separated (`-` when empty or absent).
fn names(v: &Value, key: &str) -> String {
    let names: Vec<&str> = list(v, key).iter().filter_map(Value::as_str).collect();
    if names.is_empty() {
        NONE.into()
    } else {
        names.join(",")
    }
}

/// What a change of the apps did: `stopped routing; started ...; on every worker in
/// 3.2 ms`.
pub fn app_change(v: &Value) -> String {
    let mut parts = Vec::new();
    for (key, verb) in [("stopped", "stopped"), ("started", "started")] {
        let n = names(v, key);
        if n != NONE {
            parts.push(format!("{verb} {n}"));
        }
    }
    if parts.is_empty() {
        parts.push("done".into());
    }
    let took = at(v, "took_ms").and_then(Value::as_f64).unwrap_or(0.0);
    let flows = at(v, "flows_ms").and_then(Value::as_f64).unwrap_or(0.0);
    if flows > 0.0 {
        format!(
            "{}; on every worker in {took:.1} ms; its flows removed in {flows:.1} ms\n",
            parts.join("; ")
        )
    } else {
        format!("{}; on every worker in {took:.1} ms\n", parts.join("; "))
    }
}

/// Why an app is quarantined: `reason` is `{handler, panic, dpid}` (or a sentence).
fn quarantine_reason(a: &Value) -> String {
    match at(a, "reason") {
        Some(r @ Value::Object(_)) => {
            let mut text = format!("{} panicked: {}", field(r, "handler"), field(r, "panic"));
            if at(r, "dpid").is_some_and(|d| !d.is_null()) {
                text.push_str(&format!(" (switch {})", field(r, "dpid")));
            }
            text
        }
        r => cell(r),
    }
}

/// `GET /controller`.
pub fn controller(v: &Value) -> String {
    block(&[
        ("version", field(v, "version")),
        ("uptime", secs(v, "uptime_secs")),
        ("workers", field(v, "workers")),
        ("listen", field(v, "listen")),
        ("api", field(v, "api_listen")),
        ("apps", field(v, "apps")),
        ("switches", field(v, "counters.connected_switches")),
        ("packet-ins", field(v, "counters.packet_ins")),
    ])
}

/// `GET /paths/{src}/{dst}`: the ends, then each switch on the way with the ports the
/// traffic comes in and goes out by. A document without `hops` shows as [`generic`].
pub fn path(v: &Value) -> String {
    let Some(hops) = at(v, "hops").and_then(Value::as_array) else {
        return generic(v);
    };
    let mut out = block(&[
        ("from", field(v, "src")),
        ("to", field(v, "dst")),
        ("links", field(v, "length")),
    ]);
    let mut t = Table::new(&["HOP", "DPID", "IN_PORT", "OUT_PORT"]);
    for (i, h) in hops.iter().enumerate() {
        t.row(vec![
            (i + 1).to_string(),
            field(h, "dpid"),
            field(h, "in_port"),
            field(h, "out_port"),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render());
    out
}

/// Any JSON shown for people: an array of objects as a table (nested fields as
/// `a.b` columns), an object as `key: value` lines with its arrays as tables below,
/// a scalar as itself.
pub fn generic(v: &Value) -> String {
    match v {
        Value::Array(a) if a.iter().all(Value::is_object) && !a.is_empty() => {
            let rows: Vec<Vec<(String, String)>> = a.iter().map(flatten).collect();
            let mut cols: Vec<String> = Vec::new();
            for r in &rows {
                for (k, _) in r {
                    if !cols.contains(k) {
                        cols.push(k.clone());
                    }
                }
            }
            let header: Vec<String> = cols.iter().map(|c| c.to_uppercase()).collect();
            let mut t = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
            for r in rows {
                t.row(
                    cols.iter()
                        .map(|c| {
                            r.iter()
                                .find(|(k, _)| k == c)
                                .map_or_else(|| NONE.into(), |(_, v)| v.clone())
                        })
                        .collect(),
                );
            }
            t.render()
        }
        Value::Array(a) => a.iter().map(|x| cell(Some(x)) + "\n").collect(),
        Value::Object(m) => {
            let mut pairs = Vec::new();
            let mut tables = String::new();
            for (k, x) in m {
                match x {
                    Value::Array(a) if a.iter().any(Value::is_object) => {
                        let _ = write!(
                            tables,
                            "\n{} ({})\n{}",
                            k.to_uppercase(),
                            a.len(),
                            generic(x)
                        );
                    }
                    Value::Object(_) => {
                        for (fk, fv) in flatten(x) {
                            pairs.push((format!("{k}.{fk}"), fv));
                        }
                    }
                    x => pairs.push((k.clone(), cell(Some(x)))),
                }
            }
            let pairs: Vec<(&str, String)> =
                pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            block(&pairs) + &tables
        }
        v => cell(Some(v)) + "\n",
    }
}

/// An object's scalar fields as `(path, cell)`, nested objects as `a.b`.
fn flatten(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    fn walk(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, x, out);
                }
            }
            Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
                out.push((prefix.to_string(), Value::Array(a.clone()).to_string()));
            }
            x => out.push((prefix.to_string(), cell(Some(x)))),
        }
    }
    walk("", v, &mut out);
    out
}

/// One event of the stream, on one line: its time (the server's `time` when it sent
/// one, else `arrival`; UTC), its type, what happened (`event`), and the rest of its
/// fields as `key=value`, endpoints as `dpid/port`, a link as `a/1->b/2`, a port as
/// `2(s1-eth2)`. `seq` is left to `--json`. Data that is not a JSON object shows as it
/// came.
pub fn event(arrival: f64, kind: &str, data: &str) -> String {
    let kind = if kind.is_empty() { "message" } else { kind };
    let v = serde_json::from_str::<Value>(data).ok();
    let when = v
        .as_ref()
        .and_then(|v| at(v, "time"))
        .and_then(Value::as_f64)
        .unwrap_or(arrival);
    let day = when.rem_euclid(86400.0);
    let clock = format!(
        "{:02}:{:02}:{:06.3}",
        (day / 3600.0) as u32,
        (day % 3600.0 / 60.0) as u32,
        day % 60.0
    );
    let (what, rest) = match &v {
        Some(Value::Object(m)) => {
            let mut parts = Vec::new();
            for (k, x) in m {
                if matches!(k.as_str(), "seq" | "time" | "event") || x.is_null() {
                    continue;
                }
                match compact(x) {
                    Some(c) => parts.push(format!("{k}={c}")),
                    None => parts.extend(flatten(x).into_iter().map(|(fk, fv)| {
                        let key = if fk.is_empty() {
                            k.clone()
                        } else {
                            format!("{k}.{fk}")
                        };
                        if fv.contains(' ') {
                            format!("{key}={fv:?}")
                        } else {
                            format!("{key}={fv}")
                        }
                    })),
                }
            }
            (
                at(v.as_ref().unwrap(), "event")
                    .map(|e| cell(Some(e)))
                    .unwrap_or_default(),
                parts.join(" "),
            )
        }
        Some(v) => (String::new(), v.to_string()),
        None => (String::new(), data.replace('\n', "\\n")),
    };
    let line = format!("{clock}  {kind:<6}  {what:<12}  {rest}");
    line.trim_end().to_string()
}

/// The short forms of [`event`]: an endpoint `{dpid, port}`, a link `{src, dst}`, a
/// port `{port_no, name, ...}`.
fn compact(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    let endpoint = |e: &Value| -> Option<String> {
        let o = e.as_object()?;
        (o.len() == 2 && o.contains_key("dpid") && o.contains_key("port"))
            .then(|| format!("{}/{}", field(e, "dpid"), field(e, "port")))
    };
    if let Some(e) = endpoint(v) {
        return Some(e);
    }
    if m.len() == 2 {
        if let (Some(a), Some(b)) = (m.get("src"), m.get("dst")) {
            return Some(format!("{}->{}", endpoint(a)?, endpoint(b)?));
        }
    }
    if m.contains_key("port_no") {
        return Some(format!("{}({})", field(v, "port_no"), field(v, "name")));
    }
    None
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
