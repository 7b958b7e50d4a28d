//! The REST API's switch routes against real Open vSwitch, with a real `pharos run`
//! (`--api 127.0.0.1:PORT`, the token from `PHAROS_API_TOKEN`):
//!
//! * every flow of the `ovs-ofctl` corpus (`crates/openflow/tests/ofctl_corpus.txt`) goes
//!   in through `POST /switches/{dpid}/flows` on a bridge of each version it is for (a
//!   mixed `linear,2` lab: s1 speaks OpenFlow 1.0, s2 1.3); `ovs-ofctl dump-flows` must
//!   show the flow our parser made of the line (as that version reports it), and
//!   `GET /switches/{dpid}/flows` must equal the dumped line field by field (table,
//!   priority, cookie, timeouts, counters, match, actions and instructions, the whole
//!   `ofctl` string). Then the description, port statistics, tables, groups and meters
//!   Open vSwitch reports come back through REST too.
//! * a flow added through REST that drops h1→h2 ICMP stops that ping, and
//!   `ovs-ofctl dump-flows` shows it; deleting it through REST brings the ping back.
//!
//! Needs root and Open vSwitch like `tests/lab.rs` (`PHAROS_SKIP_LAB=1` skips it,
//! recorded); own lab names (`i12r`, `i12p`) and `PHAROS_LAB_DIR`s.

mod common;
use common::lab as harness;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness::{
    enabled, flow_lines, free_port, ofctl, parse_topo, run, serial, wait_until, Lab, Of,
};
use openflow::ofctl::{parse_flow, parse_flow_entry, parse_match, FlowEntry};
use openflow::Version;
use serde_json::Value;
use testkit::http;

const CORPUS: &str = include_str!("../../openflow/tests/ofctl_corpus.txt");
const TOKEN: &str = "lab-rest-token-0123456789";
const CONNECT: Duration = Duration::from_secs(10);

/// `pharos run` with the REST API, killed on drop.
struct Pharos {
    child: Child,
    /// Where switches connect.
    of: SocketAddr,
    /// Where the API listens.
    api: SocketAddr,
}

impl Drop for Pharos {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Pharos {
    /// `pharos run --api 127.0.0.1:PORT` with `config` (a pharos.toml's text), its log
    /// in `dir/pharos.log`; returns once the API answers.
    fn start(dir: &Path, config: &str) -> Pharos {
        let cfg = dir.join("pharos.toml");
        std::fs::write(&cfg, config).unwrap();
        let of = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let api = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let log = std::fs::File::create(dir.join("pharos.log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["run", "--listen", &of.to_string(), "--workers", "1"])
            .args(["--api", &api.to_string(), "--config"])
            .arg(&cfg)
            .env("PHAROS_API_TOKEN", TOKEN)
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let p = Pharos { child, of, api };
        assert!(
            wait_until(Duration::from_secs(10), || std::net::TcpStream::connect(
                api
            )
            .is_ok()),
            "pharos run did not serve its API on {api}"
        );
        p
    }

    /// `METHOD path` with the token and `body` (JSON); status and JSON body.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let auth = format!("Bearer {TOKEN}");
        let text = body.map(|b| b.to_string());
        let mut headers = vec![("Authorization", auth.as_str())];
        if text.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        let r = http::request(
            self.api,
            method,
            path,
            &headers,
            text.as_deref().map(str::as_bytes),
        );
        let v = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        (r.status, v)
    }

    /// A GET that must answer 200.
    fn get(&self, path: &str) -> Value {
        let (status, v) = self.call("GET", path, None);
        assert_eq!(status, 200, "GET {path}: {v}");
        v
    }
}

/// The flow `GET .../flows` shows, compared field by field with the line
/// `ovs-ofctl dump-flows` printed (read a moment before: counters may only grow).
fn rest_differs(ctx: &str, rest: &Value, dumped: &FlowEntry) -> Option<String> {
    let f = &dumped.flow;
    let c = dumped.counters.expect("dump-flows prints counters");
    let mut wrong = Vec::new();
    let mut check = |what: &str, got: &Value, want: Value| {
        if *got != want {
            wrong.push(format!("{what}: REST {got}, dump-flows {want}"));
        }
    };
    check("table", &rest["table"], f.table.into());
    check("priority", &rest["priority"], f.priority.into());
    check("cookie", &rest["cookie"], format!("{:#x}", f.cookie).into());
    check("idle_timeout", &rest["idle_timeout"], f.idle_timeout.into());
    check("hard_timeout", &rest["hard_timeout"], f.hard_timeout.into());
    let grew = |field: &str, dumped: u64| {
        rest[field]
            .as_u64()
            .is_some_and(|n| n >= dumped && n <= dumped + 1000)
    };
    if !grew("packets", c.packet_count) || !grew("bytes", c.byte_count) {
        wrong.push(format!(
            "counters: REST {} packets {} bytes, dump-flows {} and {}",
            rest["packets"], rest["bytes"], c.packet_count, c.byte_count
        ));
    }
    let duration = f64::from(c.duration_sec) + f64::from(c.duration_nsec) / 1e9;
    let rest_duration = rest["duration_secs"].as_f64().unwrap_or(-1.0);
    if !(duration - 0.01..duration + 10.0).contains(&rest_duration) {
        wrong.push(format!(
            "duration: REST {rest_duration}, dump-flows {duration}"
        ));
    }
    // The match, as {field: value}.
    let items: Vec<String> = rest["match"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| match v.as_str() {
                    Some("") => k.clone(),
                    Some(v) => format!("{k}={v}"),
                    None => format!("{k}={v}"),
                })
                .collect()
        })
        .unwrap_or_default();
    match parse_match(&items.join(",")) {
        Ok(m) if m.matching == f.matching => {}
        Ok(m) => wrong.push(format!(
            "match: REST {} ({}), dump-flows {}",
            rest["match"],
            m.matching.to_ofctl(),
            f.matching.to_ofctl()
        )),
        Err(e) => wrong.push(format!("match {}: {e}", rest["match"])),
    }
    // Actions and instructions, in 1.3's order.
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (meter, rest_instr): (Vec<String>, Vec<String>) = strings(&rest["instructions"])
        .into_iter()
        .partition(|i| i.starts_with("meter"));
    let all: Vec<String> = meter
        .into_iter()
        .chain(strings(&rest["actions"]))
        .chain(rest_instr)
        .collect();
    let actions = if all.is_empty() {
        "drop".to_string()
    } else {
        all.join(",")
    };
    if actions != f.actions_to_ofctl() {
        wrong.push(format!(
            "actions: REST {actions}, dump-flows {}",
            f.actions_to_ofctl()
        ));
    }
    // The whole line.
    match rest["ofctl"].as_str().map(parse_flow_entry) {
        Some(Ok(e)) if e.flow == *f => {}
        other => wrong.push(format!("ofctl: REST {} ({other:?})", rest["ofctl"])),
    }
    (!wrong.is_empty()).then(|| format!("{ctx}\n  {}", wrong.join("\n  ")))
}

#[test]
fn the_corpus_goes_in_through_rest_and_reads_back_the_same() {
    if !enabled("lab_rest::the_corpus_goes_in_through_rest_and_reads_back_the_same") {
        return;
    }
    let _lock = serial();
    let lab = Lab::new("i12r", Of::Mixed, false);
    // No app: nothing but this test writes to the flow tables.
    let pharos = Pharos::start(lab.lab_dir(), "apps = []\n");
    let target = format!("tcp:{}", pharos.of);
    let out = lab.lab(
        "up",
        &[
            "--topo",
            "linear,2",
            "--of",
            "mixed",
            "--controller",
            &target,
        ],
    );
    out.expect_ok();
    let topo = parse_topo(&lab.show());
    assert!(
        wait_until(CONNECT, || pharos
            .get("/api/v1/switches")
            .as_array()
            .is_some_and(|a| a.len() == 2)),
        "both switches should connect\n{out}"
    );
    let s1 = topo.switches["s1"].clone();
    let s2 = topo.switches["s2"].clone();
    let sw = |v: Version| if v == Version::V1_0 { &s1 } else { &s2 };
    let rd = topo.run_dir.as_str();
    // What the corpus's 1.3 flows refer to: group 1, meters 1 and 2.
    ofctl(
        rd,
        Version::V1_3,
        &[
            "add-group",
            &s2.bridge,
            "group_id=1,type=all,bucket=output:1",
        ],
    )
    .expect_ok();
    for m in [
        "meter=1,kbps,band=type=drop,rate=1000",
        "meter=2,pktps,band=type=drop,rate=10",
    ] {
        ofctl(rd, Version::V1_3, &["add-meter", &s2.bridge, m]).expect_ok();
    }

    let mut failures = Vec::new();
    let (mut posted, mut compared) = (0, 0);
    for (no, line) in CORPUS.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (vs, text) = line.split_once(" | ").expect("VERSIONS | FLOW");
        let versions: &[Version] = match vs.trim_end_matches('*') {
            "both" => &[Version::V1_0, Version::V1_3],
            "1.0" => &[Version::V1_0],
            "1.3" => &[Version::V1_3],
            other => panic!("line {}: bad versions {other:?}", no + 1),
        };
        let flow = parse_flow(text).unwrap_or_else(|e| panic!("line {}: {e}", no + 1));
        for &v in versions {
            let s = sw(v);
            let ctx = format!("line {} on OpenFlow {v}: {text}", no + 1);
            let path = format!("/api/v1/switches/{}/flows", s.dpid);
            let (status, body) = pharos.call("DELETE", &path, None);
            assert_eq!(status, 200, "{ctx}: DELETE {body}");
            let (status, body) =
                pharos.call("POST", &path, Some(&serde_json::json!({ "flow": text })));
            if status != 201 {
                failures.push(format!("{ctx}\n  POST answered {status}: {body}"));
                continue;
            }
            posted += 1;
            // (a) What Open vSwitch holds is the flow we meant.
            let lines = flow_lines(&ofctl(rd, v, &["--no-names", "dump-flows", &s.bridge]));
            let want = flow.read_back(v);
            let dumped = match lines.as_slice() {
                [one] => parse_flow_entry(one),
                _ => {
                    failures.push(format!("{ctx}\n  dump-flows shows {lines:?}"));
                    continue;
                }
            };
            let dumped = match dumped {
                Ok(e) if e.flow == want => e,
                Ok(e) => {
                    failures.push(format!("{ctx}\n  dumped   {}\n  expected {want}", lines[0]));
                    let _ = e;
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{ctx}\n  dumped {:?}: {e}", lines[0]));
                    continue;
                }
            };
            // (b) What REST reads is what dump-flows printed, field by field.
            let got = pharos.get(&path);
            match got["flows"].as_array().map(Vec::as_slice) {
                Some([one]) => {
                    compared += 1;
                    failures.extend(rest_differs(&ctx, one, &dumped));
                }
                _ => failures.push(format!("{ctx}\n  GET flows: {got}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {posted} flows differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        posted >= 100 && compared == posted,
        "only {posted} flows posted, {compared} compared"
    );
    eprintln!(
        "lab_rest: {posted} corpus flows posted through REST, dumped and read back identically"
    );

    // The rest of what a switch tells: description, port counters, tables, and (1.3)
    // the group and meters made above.
    let d = pharos.get(&format!("/api/v1/switches/{}", s2.dpid));
    assert_eq!(d["description"]["hw"], "Open vSwitch", "{d:#}");
    assert_eq!(d["description"]["mfr"], "Nicira, Inc.", "{d:#}");
    for s in [&s1, &s2] {
        let ports = pharos.get(&format!("/api/v1/switches/{}/ports?stats=true", s.dpid));
        let list = ports["ports"].as_array().unwrap();
        assert!(!list.is_empty());
        for p in list {
            assert!(p["stats"]["rx_packets"].is_u64(), "{p:#}");
        }
        let tables = pharos.get(&format!("/api/v1/switches/{}/tables", s.dpid));
        assert!(tables["tables"][0]["active_count"].is_u64(), "{tables:#}");
    }
    let g = pharos.get(&format!("/api/v1/switches/{}/groups", s2.dpid));
    assert_eq!(g["groups"][0]["group_id"], 1, "{g:#}");
    assert_eq!(g["groups"][0]["type"], "all");
    assert_eq!(
        g["groups"][0]["buckets"][0]["actions"],
        serde_json::json!(["output:1"])
    );
    let m = pharos.get(&format!("/api/v1/switches/{}/meters", s2.dpid));
    let ids: Vec<u64> = m["meters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["meter_id"].as_u64())
        .collect();
    assert_eq!(ids, [1, 2], "{m:#}");
    assert_eq!(m["meters"][0]["bands"][0]["rate"], 1000);
    let (status, _) = pharos.call("GET", &format!("/api/v1/switches/{}/groups", s1.dpid), None);
    assert_eq!(status, 409, "1.0 has no groups");
    for s in [&s1, &s2] {
        let (status, _) = pharos.call(
            "DELETE",
            &format!("/api/v1/switches/{}/flows", s.dpid),
            None,
        );
        assert_eq!(status, 200);
    }
}

#[test]
fn a_rest_flow_that_drops_icmp_stops_the_ping_and_deleting_it_restores_it() {
    if !enabled("lab_rest::a_rest_flow_that_drops_icmp_stops_the_ping_and_deleting_it_restores_it")
    {
        return;
    }
    let _lock = serial();
    let lab = Lab::new("i12p", Of::V13, false);
    // The default apps: topology, device_manager, routing.
    let pharos = Pharos::start(lab.lab_dir(), "");
    let target = format!("tcp:{}", pharos.of);
    let out = lab.lab(
        "up",
        &["--topo", "linear,2", "--of", "1.3", "--controller", &target],
    );
    out.expect_ok();
    let topo = parse_topo(&lab.show());
    let rd = topo.run_dir.as_str();
    let (h1, h2) = (&topo.hosts["h1"], &topo.hosts["h2"]);
    let s1 = &topo.switches[&h1.switch];
    let ping = |count: u32| -> u32 {
        let out = run(
            Command::new("ip").args([
                "netns",
                "exec",
                &format!("{}-h1", lab.name),
                "ping",
                "-n",
                "-q",
                "-c",
                &count.to_string(),
                "-i",
                "0.2",
                "-W",
                "1",
                &h2.ip,
            ]),
            Duration::from_secs(30),
        );
        out.stdout
            .lines()
            .find(|l| l.contains("packets transmitted"))
            .and_then(|l| l.split(", ").nth(1))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    // The network works (routing learns the hosts on the way).
    assert!(
        wait_until(Duration::from_secs(20), || ping(1) == 1),
        "h1 cannot ping h2 before any flow was added"
    );

    let drop = format!(
        "priority=65000,icmp,nw_src={},nw_dst={},actions=drop",
        h1.ip, h2.ip
    );
    let path = format!("/api/v1/switches/{}/flows", s1.dpid);
    let (status, body) = pharos.call("POST", &path, Some(&serde_json::json!({ "flow": drop })));
    assert_eq!(status, 201, "{body}");
    // Applied in the flow table (the barrier came back before the 201). Open vSwitch's
    // kernel datapath may still hold a cached flow of the earlier pings until its
    // revalidators catch up (a barrier reply does not mean the data path changed, as
    // the OFLOPS paper found): the ping stops within a few seconds, then stays stopped.
    assert!(
        wait_until(Duration::from_secs(5), || ping(1) == 0),
        "the ping kept going through the drop flow"
    );
    assert_eq!(ping(5), 0, "the ping went through the drop flow");
    let lines = flow_lines(&ofctl(
        rd,
        Version::V1_3,
        &["--no-names", "dump-flows", &s1.bridge],
    ));
    let want = parse_flow(&drop).unwrap();
    let shown = lines
        .iter()
        .filter_map(|l| parse_flow_entry(l).ok())
        .find(|e| e.flow == want)
        .unwrap_or_else(|| panic!("dump-flows does not show {drop}: {lines:#?}"));
    let dropped = shown.counters.map_or(0, |c| c.packet_count);
    assert!(dropped >= 5, "the drop flow counted {dropped} packets");
    // REST shows it too, as the user's (no app's cookie).
    let flows = pharos.get(&path);
    let mine = flows["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["priority"] == 65000)
        .cloned()
        .expect("GET flows shows the drop flow");
    assert_eq!(mine["owner"], Value::Null);
    assert_eq!(mine["actions"], serde_json::json!([]));
    assert!(mine["packets"].as_u64().unwrap() >= 5);

    // Deleted (strictly: that flow only), the ping comes back.
    let del = serde_json::json!({
        "match": format!("icmp,nw_src={},nw_dst={}", h1.ip, h2.ip),
        "strict": true,
        "priority": 65000,
    });
    let (status, body) = pharos.call("DELETE", &path, Some(&del));
    assert_eq!(status, 200, "{body}");
    let lines = flow_lines(&ofctl(
        rd,
        Version::V1_3,
        &["--no-names", "dump-flows", &s1.bridge],
    ));
    assert!(
        !lines.iter().any(|l| l.contains("priority=65000")),
        "the drop flow is still there: {lines:#?}"
    );
    assert!(
        !lines.is_empty(),
        "a strict delete removed only the drop flow, not routing's"
    );
    assert!(
        wait_until(Duration::from_secs(10), || ping(1) == 1),
        "the ping did not come back after the drop flow was deleted"
    );
}
