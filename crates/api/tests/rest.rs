//! The REST API over real HTTP against a real controller with emulated switches: what
//! it lists, how it reads dpids, what it refuses and why, auth, the PORT_MOD it sends;
//! and every JSON response checked against `/api/v1/openapi.json`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::auth::{Token, TokenSource};
use api::{Core, Server, Settings};
use contract::Contract;
use controller::config::CoreConfig;
use controller::controller::{Controller, Handle};
use controller::host::AppHost;
use controller::info::PORT_CONFIG_DOWN;
use controller::services::Services;
use emu::{host, Emu, Spec};
use http::{request, Resp};
use openflow::{of10, of13, Message};
use serde_json::Value;
use testkit::contract;
use testkit::emu;
use testkit::http;
use testkit::sse;

const T: Duration = Duration::from_secs(10);
const TOKEN: &str = "test-token-0123456789abcdef";

/// A controller (topology and device_manager) and its API, on loopback, free ports.
struct Running {
    api: Server,
    handle: Arc<Handle>,
    pipeline: Arc<controller::host::Core>,
    /// Where switches connect.
    of_addr: SocketAddr,
    contract: Option<Contract>,
    /// Where the tests reach the API.
    api_addr: SocketAddr,
}

/// The apps the REST tests run unless they say otherwise.
fn default_apps() -> Vec<Box<dyn controller::app::AnyApp>> {
    ["topology", "device_manager"]
        .iter()
        .map(|n| apps::by_name(n, &Default::default()).unwrap())
        .collect()
}

impl Running {
    fn start(read_auth: bool) -> Running {
        Running::start_on("127.0.0.1:0".parse().unwrap(), read_auth)
    }

    /// With the API on `listen`.
    fn start_on(listen: SocketAddr, read_auth: bool) -> Running {
        Running::start_with(listen, read_auth, default_apps())
    }

    /// With these apps, the API on `listen`.
    fn start_with(
        listen: SocketAddr,
        read_auth: bool,
        apps: Vec<Box<dyn controller::app::AnyApp>>,
    ) -> Running {
        Running::start_full(listen, read_auth, apps, T)
    }

    /// With these apps, the API on `listen`, waiting `switch_timeout` for switches.
    fn start_full(
        listen: SocketAddr,
        read_auth: bool,
        apps: Vec<Box<dyn controller::app::AnyApp>>,
        switch_timeout: Duration,
    ) -> Running {
        let config = CoreConfig {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            workers: 2,
            ..CoreConfig::default()
        };
        let pipeline = Arc::new(AppHost::build(apps, Services::new()).expect("apps start"));
        let handle = Arc::new(
            Controller::start(&config.net(), Arc::clone(&pipeline.dispatcher))
                .expect("controller starts"),
        );
        let settings = Settings {
            listen,
            token: Token::new(TOKEN, TokenSource::Env),
            read_auth,
            switch_timeout,
            tls: None,
        };
        let core = Core::new(&pipeline, Arc::clone(&handle));
        let api = Server::start(settings, core).expect("the API starts");
        let mut r = Running {
            of_addr: handle.local_addrs()[0],
            api,
            handle,
            pipeline,
            contract: None,
            api_addr: listen,
        };
        // An unspecified address (0.0.0.0) is reached through loopback.
        let mut at = r.api.local_addr();
        if at.ip().is_unspecified() {
            at.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        r.api_addr = at;
        r.contract = Some(Contract::fetch(at, TOKEN));
        r
    }

    /// `method path` with `headers` and `body`, its answer checked against openapi.json.
    fn call(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Resp {
        let r = request(self.api_addr, method, path, headers, body);
        self.contract.as_ref().unwrap().check(method, path, &r);
        r
    }

    /// An anonymous GET.
    fn get(&self, path: &str) -> Resp {
        self.call("GET", path, &[], None)
    }

    /// A GET with the token.
    fn get_auth(&self, path: &str) -> Resp {
        let auth = format!("Bearer {TOKEN}");
        self.call("GET", path, &[("Authorization", &auth)], None)
    }

    /// A POST of `body` as JSON with `auth` as the Authorization header (if any).
    fn post(&self, path: &str, auth: Option<&str>, body: &[u8]) -> Resp {
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(a) = auth {
            headers.push(("Authorization", a));
        }
        self.call("POST", path, &headers, Some(body))
    }

    /// A DELETE with the token, and `body` as JSON if any.
    fn delete(&self, path: &str, body: Option<&[u8]>) -> Resp {
        let auth = bearer(TOKEN);
        let mut headers = vec![("Authorization", auth.as_str())];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        self.call("DELETE", path, &headers, body)
    }

    /// GETs `path` until `done` holds for its JSON body, or panics at the deadline.
    fn poll(&self, path: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + T;
        loop {
            let r = self.get(path);
            assert_eq!(r.status, 200, "{}", r.text());
            let v = r.json();
            if done(&v) {
                return v;
            }
            assert!(Instant::now() < deadline, "{path} never got there: {v:#}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.api.shutdown();
        self.handle.shutdown();
        self.pipeline.apps.stop();
    }
}

fn connect(addr: SocketAddr, spec: Spec) -> Emu {
    Emu::connect_and_handshake(addr, spec, T).expect("handshake")
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[test]
fn switches_lists_exactly_the_connected_switches_with_their_dpids_and_versions() {
    let c = Running::start(false);
    assert_eq!(c.get("/api/v1/switches").json(), serde_json::json!([]));
    let mut a = connect(c.of_addr, Spec::v10(1));
    let b = connect(c.of_addr, Spec::v13(0x0102_0304_0506_0708));
    let list = c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 2);
    let got: Vec<(&str, &str, &str)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["dpid"].as_str().unwrap(),
                s["version"].as_str().unwrap(),
                s["peer"].as_str().unwrap(),
            )
        })
        .collect();
    let (pa, pb) = (a.local_addr().to_string(), b.local_addr().to_string());
    assert_eq!(
        got,
        [
            ("00:00:00:00:00:00:00:01", "1.0", pa.as_str()),
            ("01:02:03:04:05:06:07:08", "1.3", pb.as_str()),
        ]
    );
    assert_eq!(list[1]["n_ports"], 4);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let since = list[0]["connected_since"].as_u64().unwrap();
    assert!(now - 60 < since && since <= now, "{since} vs {now}");

    // One switch, in every spelling of its dpid.
    for id in [
        "01:02:03:04:05:06:07:08",
        "0102030405060708",
        "0x102030405060708",
        "72623859790382856",
    ] {
        let r = c.get(&format!("/api/v1/switches/{id}"));
        assert_eq!(r.status, 200, "{id}: {}", r.text());
        let s = r.json();
        assert_eq!(s["dpid"], "01:02:03:04:05:06:07:08", "{id}");
        assert_eq!(s["version"], "1.3");
        assert_eq!(s["features"]["n_tables"], 254);
        let ports: Vec<u64> = s["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["port_no"].as_u64().unwrap())
            .collect();
        assert_eq!(ports, [1, 2, 3, 4]);
    }
    for id in ["00:00:00:00:00:00:00:01", "0000000000000001", "1"] {
        let s = c.get(&format!("/api/v1/switches/{id}")).json();
        assert_eq!(
            (s["dpid"].as_str(), s["version"].as_str()),
            (Some("00:00:00:00:00:00:00:01"), Some("1.0"))
        );
    }
    // Its connection's counters, as its worker publishes them.
    a.ping(T).expect("an echo answered");
    c.poll("/api/v1/switches/1", |s| {
        s["counters"]["msgs_in"]["1.0 ECHO_REQUEST"].as_u64() >= Some(1)
    });

    // A switch that leaves leaves the list.
    drop(a);
    let list = c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    assert_eq!(list[0]["dpid"], "01:02:03:04:05:06:07:08");
    assert_eq!(c.get("/api/v1/switches/1").status, 404);
    drop(b);
}

#[test]
fn unknown_and_malformed_dpids_are_404_and_400_with_the_reason() {
    let c = Running::start(false);
    let r = c.get("/api/v1/switches/00:00:00:00:00:00:00:09");
    assert_eq!(r.status, 404);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("00:00:00:00:00:00:00:09"),
        "{}",
        r.text()
    );
    let r = c.get("/api/v1/switches/00:00:01");
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("exactly 8 groups of 2 hex digits, as 00:00:00:00:00:00:00:01"),
        "{}",
        r.text()
    );
    // A short colon form has no one reading (`pharos switch` once read 1:2 as 0x12).
    let r = c.get("/api/v1/switches/1:2");
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"],
        "\"1:2\" is not a dpid: the colon form is exactly 8 groups of 2 hex digits, as \
         00:00:00:00:00:00:00:01; this has 2 groups"
    );
    // Hex is not guessed: a bare number is decimal.
    let r = c.get("/api/v1/switches/1a");
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"].as_str().unwrap().contains("write 0x1a"),
        "{}",
        r.text()
    );
    let r = c.get("/api/v1/switches/switch-one");
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("\"switch-one\" is not a dpid: write it as 00:00:00:00:00:00:00:01"),
        "{}",
        r.text()
    );
    // Routes and methods that do not exist are JSON errors too.
    let r = request(c.api.local_addr(), "GET", "/api/v1/nothing", &[], None);
    assert_eq!(r.status, 404);
    assert!(r.json()["error"]
        .as_str()
        .unwrap()
        .contains("/api/v1/nothing"));
    let r = request(
        c.api.local_addr(),
        "DELETE",
        "/api/v1/switches",
        &[("Authorization", &bearer(TOKEN))],
        None,
    );
    assert_eq!(r.status, 405, "{}", r.text());
    assert!(r.json()["error"].is_string());
}

fn port_mod(m: &Message) -> Option<(u32, u32, u32)> {
    match m {
        Message::V10(of10::Message::PortMod(p)) => Some((u32::from(p.port_no), p.config, p.mask)),
        Message::V13(of13::Message::PortMod(p)) => Some((p.port_no, p.config, p.mask)),
        _ => None,
    }
}

#[test]
fn a_write_needs_the_token_and_sends_port_mod() {
    let c = Running::start(false);
    let mut sw = connect(c.of_addr, Spec::v13(7));
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    let path = "/api/v1/switches/7/ports/2";
    let down = br#"{"up": false}"#;

    let r = c.post(path, None, down);
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(r
        .header("www-authenticate")
        .is_some_and(|v| v.starts_with("Bearer")));
    let r = c.post(path, Some("Basic dXNlcjpwYXNz"), down);
    assert_eq!(r.status, 401);
    let r = c.post(path, Some(&bearer("not-the-token")), down);
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(r.json()["error"], "wrong API token");
    // Nothing was sent for those (the echo's answer comes after anything queued).
    sw.ping(T).expect("the switch is still served");
    assert!(sw.log.iter().all(|(_, m)| port_mod(m).is_none()));

    let r = c.post(path, Some(&bearer(TOKEN)), down);
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.json()["port"], 2);
    let (_, m) = sw
        .wait_for(T, |m| port_mod(m).is_some())
        .expect("a PORT_MOD");
    assert_eq!(port_mod(&m), Some((2, PORT_CONFIG_DOWN, PORT_CONFIG_DOWN)));
    if let Message::V13(of13::Message::PortMod(p)) = &m {
        assert_eq!(p.hw_addr, sw.spec.port_mac(2));
    }
    // The switch confirms with PORT_STATUS, as Open vSwitch does: the port list shows it.
    sw.send_port_status(2, 2, PORT_CONFIG_DOWN, 0).unwrap();
    let s = c.poll("/api/v1/switches/7", |s| {
        s["ports"][1]["admin_down"] == true
    });
    assert_eq!(
        (
            s["ports"][1]["port_no"].as_u64(),
            s["ports"][1]["up"].as_bool()
        ),
        (Some(2), Some(false))
    );
    // Up again, the port named by its name; an unknown port or switch is 404.
    let r = c.post(
        "/api/v1/switches/7/ports/eth2",
        Some(&bearer(TOKEN)),
        br#"{"up":true}"#,
    );
    assert_eq!(r.status, 202);
    let (_, m) = sw
        .wait_for(T, |m| port_mod(m).is_some())
        .expect("a PORT_MOD");
    assert_eq!(port_mod(&m), Some((2, 0, PORT_CONFIG_DOWN)));
    let r = c.post("/api/v1/switches/7/ports/99", Some(&bearer(TOKEN)), down);
    assert_eq!(r.status, 404);
    let r = c.post("/api/v1/switches/8/ports/1", Some(&bearer(TOKEN)), down);
    assert_eq!(r.status, 404);
}

#[test]
fn bad_bodies_are_400_with_the_position_and_413_past_1_mib() {
    let c = Running::start(false);
    let mut sw = connect(c.of_addr, Spec::v10(3));
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    let path = "/api/v1/switches/3/ports/1";
    let auth = bearer(TOKEN);

    let r = c.post(path, Some(&auth), b"{\"up\": fals}");
    assert_eq!(r.status, 400, "{}", r.text());
    let e = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        e.starts_with("malformed JSON") && e.contains("line 1 column"),
        "{e}"
    );
    let r = c.post(path, Some(&auth), br#"{"down": true}"#);
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("unknown field `down`"),
        "{}",
        r.text()
    );

    // 1 MiB and one byte of JSON-looking padding.
    let mut big = b"{\"up\": false, \"pad\": \"".to_vec();
    big.resize((1 << 20) - 2, b'x');
    big.extend_from_slice(b"\"}");
    big.push(b' ');
    assert_eq!(big.len(), (1 << 20) + 1);
    let r = c.post(path, Some(&auth), &big);
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(r.json()["error"].as_str().unwrap().contains("1 MiB"));

    // None of it reached the switch, which is still served.
    sw.ping(T).expect("the switch is still served");
    assert!(
        sw.log.iter().all(|(_, m)| port_mod(m).is_none()),
        "{:?}",
        sw.log
    );
}

#[test]
fn with_read_auth_reads_need_the_token_but_healthz_does_not() {
    let c = Running::start(true);
    let r = c.get("/api/v1/switches");
    assert_eq!(r.status, 401);
    let r = c.call(
        "GET",
        "/api/v1/switches",
        &[("Authorization", &bearer("nope"))],
        None,
    );
    assert_eq!(r.status, 403);
    assert_eq!(c.get_auth("/api/v1/switches").status, 200);
    assert_eq!(c.get("/api/v1/healthz").json()["status"], "ok");
}

#[test]
fn controller_apps_topology_links_and_hosts() {
    let c = Running::start(false);
    let info = c.get("/api/v1/controller").json();
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["workers"], 2);
    assert_eq!(info["listen"], serde_json::json!([c.of_addr.to_string()]));
    assert_eq!(info["api_listen"], c.api.local_addr().to_string());
    assert_eq!(
        info["apps"],
        serde_json::json!(["topology", "device_manager"])
    );

    let apps = c.get("/api/v1/apps").json();
    let names: Vec<(&str, u64, &str)> = apps
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap(),
                a["order"].as_u64().unwrap(),
                a["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [("topology", 0, "running"), ("device_manager", 1, "running")]
    );

    // A host seen on port 3 of switch 5.
    let mut sw = connect(c.of_addr, Spec::v13(5));
    let frame = emu::frame(host(1), host(2));
    sw.send_packet_in(3, &frame, None).unwrap();
    let hosts = c.poll("/api/v1/hosts", |v| !v.as_array().unwrap().is_empty());
    let h = &hosts[0];
    assert_eq!(h["mac"], host(1).to_string());
    assert_eq!(h["attachment"]["dpid"], "00:00:00:00:00:00:00:05");
    assert_eq!(h["attachment"]["port"], 3);
    assert_eq!(c.get("/api/v1/links").json(), serde_json::json!([]));
    let topo = c.get("/api/v1/topology").json();
    assert_eq!(topo["switches"][0]["dpid"], "00:00:00:00:00:00:00:05");
    assert_eq!(topo["hosts"][0]["mac"], host(1).to_string());
    // The counters have seen the PACKET_IN once a worker published.
    c.poll("/api/v1/controller", |v| {
        v["counters"]["packet_ins"].as_u64() >= Some(1)
    });
}

#[test]
fn the_openapi_document_describes_every_route_with_bearer_auth_on_writes() {
    let c = Running::start(false);
    let doc = &c.contract.as_ref().unwrap().doc;
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    for p in [
        "/api/v1/healthz",
        "/api/v1/controller",
        "/api/v1/switches",
        "/api/v1/switches/{dpid}",
        "/api/v1/switches/{dpid}/ports/{port}",
        "/api/v1/switches/{dpid}/ports",
        "/api/v1/switches/{dpid}/flows",
        "/api/v1/switches/{dpid}/groups",
        "/api/v1/switches/{dpid}/meters",
        "/api/v1/switches/{dpid}/tables",
        "/api/v1/switches/{dpid}/packet_out",
        "/api/v1/links",
        "/api/v1/hosts",
        "/api/v1/topology",
        "/api/v1/apps",
        "/api/v1/openapi.json",
        "/metrics",
        "/api/v1/metrics",
        "/api/v1/events",
        "/api/v1/paths/{src}/{dst}",
    ] {
        assert!(paths.iter().any(|k| *k == p), "{p} missing from {paths:?}");
    }
    // The event stream is documented as one, with the schemas of its events' data.
    assert!(
        doc["paths"]["/api/v1/events"]["get"]["responses"]["200"]["content"]
            .get("text/event-stream")
            .is_some()
    );
    for schema in [
        "SwitchEventData",
        "PortEventData",
        "LinkEventData",
        "HostEventData",
        "AppEventData",
        "LaggedData",
    ] {
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{schema}"
        );
    }
    assert_eq!(
        doc["paths"]["/api/v1/switches/{dpid}/ports/{port}"]["post"]["security"],
        serde_json::json!([{"bearer": []}])
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}

#[test]
fn the_contract_check_refuses_bodies_the_document_does_not_describe() {
    let c = Running::start(false);
    let contract = c.contract.as_ref().unwrap();
    let resp = |status: u16, body: &str| Resp {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
    };
    let refused = |method: &str, path: &str, r: Resp| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            contract.check(method, path, &r)
        }))
        .is_err()
    };
    // A real answer passes; a dpid as a number, a missing field, an unlisted status or
    // an undocumented path do not.
    let good = c.get("/api/v1/switches/0x1");
    assert_eq!(good.status, 404);
    assert!(!refused("GET", "/api/v1/switches/0x1", good));
    assert!(refused(
        "GET",
        "/api/v1/switches",
        resp(200, r#"[{"dpid": 1}]"#)
    ));
    assert!(refused("GET", "/api/v1/healthz", resp(200, "{}")));
    assert!(refused(
        "GET",
        "/api/v1/healthz",
        resp(404, r#"{"error": "x"}"#)
    ));
    assert!(refused("GET", "/api/v1/flows", resp(200, "[]")));
}

#[test]
fn off_loopback_reads_need_the_token() {
    let c = Running::start_on("0.0.0.0:0".parse().unwrap(), false);
    assert_eq!(c.get("/api/v1/switches").status, 401);
    assert_eq!(c.get("/api/v1/controller").status, 401);
    assert_eq!(c.get_auth("/api/v1/switches").status, 200);
    assert_eq!(c.get("/api/v1/healthz").status, 200);
}

#[test]
fn shutdown_closes_idle_keep_alive_connections_and_returns_promptly() {
    use std::io::{Read, Write};
    let c = Running::start(false);
    // A client that keeps its connection open after an answer.
    let mut s = std::net::TcpStream::connect(c.api_addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(b"GET /api/v1/healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 1024];
    while !String::from_utf8_lossy(&got).contains("\"ok\"") {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "closed before answering");
        got.extend_from_slice(&chunk[..n]);
    }
    let started = Instant::now();
    c.api.shutdown();
    assert!(started.elapsed() < api::GRACE, "{:?}", started.elapsed());
    // The idle connection was closed, and nothing listens any more.
    assert_eq!(s.read(&mut chunk).unwrap_or(0), 0);
    assert!(std::net::TcpStream::connect(c.api_addr).is_err());
}

/// One sample: its name, its labels in order, its value.
type Sample = (String, Vec<(String, String)>, f64);

/// The samples of a Prometheus text body: `(name, labels, value)`, comments skipped. A
/// small reader for the format `prometheus-client` writes (label values here hold no
/// quotes or commas).
fn samples(body: &str) -> Vec<Sample> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("a sample line");
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => {
                    let inner = rest.strip_suffix('}').expect("closing brace");
                    let labels = inner
                        .split(',')
                        .map(|kv| {
                            let (k, v) = kv.split_once('=').expect("label=value");
                            (k.to_string(), v.trim_matches('"').to_string())
                        })
                        .collect();
                    (n, labels)
                }
                None => (series, Vec::new()),
            };
            (name.to_string(), labels, value.parse().expect("a number"))
        })
        .collect()
}

/// The value of the sample `name` whose labels include every one of `want`.
fn sample(body: &str, name: &str, want: &[(&str, &str)]) -> Option<f64> {
    samples(body).into_iter().find_map(|(n, labels, v)| {
        let all = want
            .iter()
            .all(|(k, w)| labels.iter().any(|(lk, lv)| lk == k && lv == w));
        (n == name && all).then_some(v)
    })
}

/// Sends `n` PACKET_INs from `sw` (source MACs `host(first)` and on, on port 1) and
/// waits for the controller to have read them (the echo's answer comes after them).
fn send_packet_ins(sw: &mut Emu, first: u16, n: u16) {
    for i in 0..n {
        sw.send_packet_in(1, &emu::frame(host(first + i), host(2)), None)
            .unwrap();
    }
    sw.ping(T).expect("the switch is still served");
}

const DP_A: &str = "0x00000000000000a1";

#[test]
fn metrics_count_each_switchs_packet_ins_in_the_prometheus_format_promtool_accepts() {
    let c = Running::start(false);
    let mut a = connect(c.of_addr, Spec::v13(0xa1));
    let mut b = connect(c.of_addr, Spec::v10(0xb2));
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 2);
    send_packet_ins(&mut a, 10, 5);
    send_packet_ins(&mut b, 20, 2);

    // The workers publish every 500 ms: poll until both counts show.
    let deadline = Instant::now() + T;
    let body = loop {
        let r = c.get("/metrics");
        assert_eq!(r.status, 200, "{}", r.text());
        let body = r.text();
        let got = |d| sample(&body, "of_packet_ins_total", &[("dp_id", d)]);
        if got(DP_A) == Some(5.0) && got("0x00000000000000b2") == Some(2.0) {
            break body;
        }
        assert!(Instant::now() < deadline, "never counted:\n{body}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(c
        .get("/metrics")
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/plain; version=0.0.4")),);
    assert!(
        body.contains("# TYPE of_packet_ins_total counter"),
        "{body}"
    );
    assert_eq!(
        sample(
            &body,
            "pharos_messages_in_total",
            &[("dp_id", DP_A), ("version", "1.3"), ("type", "PACKET_IN")]
        ),
        Some(5.0)
    );
    assert_eq!(sample(&body, "dp_status", &[("dp_id", DP_A)]), Some(1.0));
    for port in ["1", "2", "3", "4"] {
        assert_eq!(
            sample(&body, "port_status", &[("dp_id", DP_A), ("port", port)]),
            Some(1.0),
            "port {port}"
        );
    }
    assert_eq!(sample(&body, "of_dp_connections_total", &[]), Some(2.0));
    assert_eq!(sample(&body, "pharos_connected_switches", &[]), Some(2.0));
    assert_eq!(sample(&body, "pharos_links", &[]), Some(0.0));
    // The device manager learned the 5 + 2 source MACs.
    let hosts = |body: &str, d| sample(body, "vlan_hosts_learned", &[("dp_id", d)]);
    assert_eq!(hosts(&body, DP_A), Some(5.0), "{body}");
    assert_eq!(hosts(&body, "0x00000000000000b2"), Some(2.0), "{body}");
    // The same under /api/v1, and from the same counters.
    let v1 = c.get("/api/v1/metrics").text();
    assert_eq!(
        sample(&v1, "of_packet_ins_total", &[("dp_id", DP_A)]),
        Some(5.0)
    );

    // promtool, Prometheus's own checker, finds nothing to say.
    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("promtool: {e}: {PROMETHEUS_HINT}"));
    use std::io::Write as _;
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool: {said}\n{body}");
    assert!(said.trim().is_empty(), "promtool: {said}\n{body}");

    // A port the switch reports down is 0.
    a.send_port_status(2, 2, PORT_CONFIG_DOWN, 0).unwrap();
    let deadline = Instant::now() + T;
    let port = |body: &str, p| sample(body, "port_status", &[("dp_id", DP_A), ("port", p)]);
    loop {
        let body = c.get("/metrics").text();
        if port(&body, "2") == Some(0.0) {
            assert_eq!(port(&body, "3"), Some(1.0));
            break;
        }
        assert!(Instant::now() < deadline, "port 2 never down:\n{body}");
        std::thread::sleep(Duration::from_millis(20));
    }

    // A switch that leaves has no series any more.
    drop(b);
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    let body = c.get("/metrics").text();
    assert_eq!(
        sample(&body, "dp_status", &[("dp_id", "0x00000000000000b2")]),
        None
    );
    drop(a);
}

#[test]
fn metrics_follow_the_read_rules() {
    let c = Running::start(true);
    assert_eq!(c.get("/metrics").status, 401);
    let r = c.get_auth("/metrics");
    assert_eq!(r.status, 200);
    assert!(r.text().contains("# TYPE of_packet_ins_total counter"));
}

const PROMETHEUS_HINT: &str =
    "Prometheus is needed (Debian package `prometheus`): run scripts/install-test-deps as root";

/// A Prometheus server on a free loopback port with its own data directory, stopped
/// and its directory removed on drop.
struct Prometheus {
    child: std::process::Child,
    dir: std::path::PathBuf,
    addr: SocketAddr,
}

impl Prometheus {
    /// Starts Prometheus scraping `target`'s `/metrics` every second.
    fn start(target: SocketAddr) -> Prometheus {
        let dir = std::env::temp_dir().join(format!("pharos-prometheus-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: pharos\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        // A free port: bound, read, released (Prometheus binds it a moment later).
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = std::process::Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("prometheus: {e}: {PROMETHEUS_HINT}"));
        Prometheus { child, dir, addr }
    }

    /// The instant-query result for `query`, or `None` while Prometheus does not answer.
    fn query(&self, query: &str) -> Option<Value> {
        std::net::TcpStream::connect(self.addr).ok()?;
        let r = request(
            self.addr,
            "GET",
            &format!("/api/v1/query?query={query}"),
            &[],
            None,
        );
        (r.status == 200).then(|| r.json()["data"]["result"].clone())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_real_prometheus_scrapes_of_packet_ins_total() {
    let c = Running::start(false);
    let mut a = connect(c.of_addr, Spec::v13(0xa1));
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    send_packet_ins(&mut a, 10, 3);
    let prom = Prometheus::start(c.api_addr);
    // Prometheus starts, scrapes every second, and the workers publish every 500 ms.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let result = prom.query("of_packet_ins_total");
        let value = result.as_ref().and_then(|r| {
            r.as_array()?
                .iter()
                .find(|s| s["metric"]["dp_id"] == DP_A)
                .and_then(|s| s["value"][1].as_str().map(String::from))
        });
        if value.as_deref() == Some("3") {
            let r = result.unwrap();
            assert_eq!(r[0]["metric"]["job"], "pharos");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never had of_packet_ins_total 3 for {DP_A}: {result:?}\n{}",
            prom.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let dir = prom.dir.clone();
    drop(prom);
    assert!(!dir.exists(), "{} left behind", dir.display());
}

/// An app whose PACKET_IN handler panics for packets that come in on port 9.
struct Fragile;

impl controller::app::App for Fragile {
    type State = ();
    fn name(&self) -> &'static str {
        "fragile"
    }
    fn build(&self, b: &mut controller::app::Builder<Self>) {
        b.on_packet_in(controller::app::Order::direct(100), |_, _, _, p| {
            if p.in_port() == 9 {
                panic!("port 9 is cursed");
            }
            controller::app::Flow::Continue
        });
    }
}

/// The default test apps, and `Fragile` last.
fn with_fragile() -> Running {
    let mut apps: Vec<Box<dyn controller::app::AnyApp>> = ["topology", "device_manager"]
        .iter()
        .map(|n| apps::by_name(n, &Default::default()).unwrap())
        .collect();
    apps.push(Box::new(Fragile));
    Running::start_with("127.0.0.1:0".parse().unwrap(), false, apps)
}

/// The event's data validated against its schema in openapi.json.
fn check_event(c: &Running, event: &str, data: &Value) {
    let schema = match event {
        "switch" => "SwitchEventData",
        "port" => "PortEventData",
        "link" => "LinkEventData",
        "host" => "HostEventData",
        "app" => "AppEventData",
        "lagged" => "LaggedData",
        other => panic!("an event type the API does not document: {other}"),
    };
    c.contract.as_ref().unwrap().check_component(schema, data);
}

#[test]
fn the_event_stream_tells_switches_ports_links_hosts_and_quarantines_as_they_happen() {
    let c = with_fragile();
    let mut all = sse::SseStream::open(c.api_addr, "/api/v1/events?heartbeat=1", &[]);
    assert_eq!(all.status, 200, "{}", all.head);
    assert!(
        all.head
            .to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{}",
        all.head
    );
    let mut only = sse::SseStream::open(c.api_addr, "/api/v1/events?types=switch,app", &[]);
    assert_eq!(only.status, 200, "{}", only.head);

    let mut seqs = Vec::new();
    let next = |s: &mut sse::SseStream, event: &str, what: &str| {
        let (e, v) = s.expect(T, |e, v| e == event && v["event"] == what);
        check_event(&c, &e, &v);
        assert!(v["time"].as_f64().unwrap() > 1.7e9, "{v}");
        v
    };

    // A switch connects: its dpid, version, peer.
    let mut sw = connect(c.of_addr, Spec::v13(5));
    let v = next(&mut all, "switch", "connected");
    assert_eq!(
        (
            v["dpid"].as_str(),
            v["version"].as_str(),
            v["n_ports"].as_u64()
        ),
        (Some("00:00:00:00:00:00:00:05"), Some("1.3"), Some(4))
    );
    assert_eq!(v["peer"], sw.local_addr().to_string());
    seqs.push(v["seq"].as_u64().unwrap());

    // Port 2's link goes down, then port 7 appears.
    sw.send_port_status(2, 2, 0, PORT_CONFIG_DOWN).unwrap();
    let v = next(&mut all, "port", "down");
    assert_eq!(
        (v["dpid"].as_str(), v["port"]["port_no"].as_u64()),
        (Some("00:00:00:00:00:00:00:05"), Some(2))
    );
    assert_eq!(
        (v["was_up"].as_bool(), v["port"]["up"].as_bool()),
        (Some(true), Some(false))
    );
    seqs.push(v["seq"].as_u64().unwrap());
    sw.send_port_status(0, 7, 0, 0).unwrap();
    let v = next(&mut all, "port", "added");
    assert_eq!(v["port"]["port_no"], 7);
    assert_eq!(v["was_up"], Value::Null);

    // A host is seen on port 3.
    sw.send_packet_in(3, &emu::frame(host(1), host(2)), None)
        .unwrap();
    let v = next(&mut all, "host", "added");
    assert_eq!(v["mac"], host(1).to_string());
    assert_eq!(v["attachment"]["port"], 3);
    seqs.push(v["seq"].as_u64().unwrap());

    // The topology service finds a link (as the topology app does, through update).
    let topo = c
        .pipeline
        .services()
        .get::<apps::topology::Topology>()
        .unwrap();
    let link = apps::routing::Link::new(5, 1, 6, 1);
    topo.update(|t| {
        t.add_link(link);
        vec![apps::topology::TopologyEvent::LinkAdded(link)]
    });
    let v = next(&mut all, "link", "added");
    assert_eq!(v["link"]["src"]["dpid"], "00:00:00:00:00:00:00:05");
    assert_eq!(v["link"]["dst"]["dpid"], "00:00:00:00:00:00:00:06");
    seqs.push(v["seq"].as_u64().unwrap());

    // An app panics: quarantined, with the panic and the handler.
    sw.send_packet_in(9, &emu::frame(host(3), host(2)), None)
        .unwrap();
    let v = next(&mut all, "app", "quarantined");
    assert_eq!(
        (v["app"].as_str(), v["handler"].as_str()),
        (Some("fragile"), Some("PACKET_IN"))
    );
    assert_eq!(v["reason"], "port 9 is cursed");
    assert_eq!(v["dpid"], "00:00:00:00:00:00:00:05");
    seqs.push(v["seq"].as_u64().unwrap());

    // The switch leaves: the reason its connection closed.
    drop(sw);
    let v = next(&mut all, "switch", "disconnected");
    assert_eq!(v["dpid"], "00:00:00:00:00:00:00:05");
    assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()), "{v}");
    seqs.push(v["seq"].as_u64().unwrap());
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    // Quiet for a second: a heartbeat comment.
    let deadline = Instant::now() + T;
    loop {
        match all.next_until(deadline) {
            Some(sse::Item::Comment(c)) => {
                assert_eq!(c, "heartbeat");
                break;
            }
            Some(_) => {}
            None => panic!("no heartbeat within {T:?}"),
        }
    }

    // The filtered stream saw the switch and app events only, in the same order.
    let mut got = Vec::new();
    while got.len() < 3 {
        match only.next_until(Instant::now() + T) {
            Some(sse::Item::Event { event, data, .. }) => {
                let v: Value = serde_json::from_str(&data).unwrap();
                got.push((event, v["event"].as_str().unwrap().to_string()));
            }
            Some(sse::Item::Comment(_)) => {}
            None => panic!("the filtered stream stopped at {got:?}"),
        }
    }
    let want = [
        ("switch", "connected"),
        ("app", "quarantined"),
        ("switch", "disconnected"),
    ];
    assert_eq!(
        got.iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect::<Vec<_>>(),
        want
    );

    // /apps says why the app is quarantined.
    let apps = c.get("/api/v1/apps").json();
    let fragile = &apps[2];
    assert_eq!(
        (fragile["name"].as_str(), fragile["state"].as_str()),
        (Some("fragile"), Some("quarantined"))
    );
    assert_eq!(fragile["reason"]["panic"], "port 9 is cursed");
    assert_eq!(fragile["reason"]["handler"], "PACKET_IN");
    assert_eq!(apps[0]["reason"], Value::Null);
}

#[test]
fn the_event_stream_refuses_unknown_types_and_follows_the_read_rules() {
    let c = Running::start(true);
    let auth = bearer(TOKEN);
    let r = c.call(
        "GET",
        "/api/v1/events?types=switch,flows",
        &[("Authorization", &auth)],
        None,
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.json()["error"].as_str().unwrap().contains("\"flows\""),
        "{}",
        r.text()
    );
    let r = c.call(
        "GET",
        "/api/v1/events?heartbeat=0",
        &[("Authorization", &auth)],
        None,
    );
    assert_eq!(r.status, 400, "{}", r.text());
    // Reads need the token here: the stream too.
    let r = c.get("/api/v1/events");
    assert_eq!(r.status, 401);
    let s = sse::SseStream::open(c.api_addr, "/api/v1/events", &[("Authorization", &auth)]);
    assert_eq!(s.status, 200, "{}", s.head);
}

#[test]
fn shutdown_ends_open_event_streams_promptly() {
    let c = Running::start(false);
    let mut s = sse::SseStream::open(c.api_addr, "/api/v1/events", &[]);
    assert_eq!(s.status, 200);
    let started = Instant::now();
    c.api.shutdown();
    assert!(started.elapsed() < api::GRACE, "{:?}", started.elapsed());
    // The stream ended (no event came, and it did not wait for the deadline).
    assert_eq!(s.next_until(Instant::now() + T), None);
    assert!(started.elapsed() < T / 2, "{:?}", started.elapsed());
}

/// Relays switch `a`'s next discovery frame out of `a_port` to switch `b`, as if it came
/// in on `b_port` (an emulated cable, one way).
fn relay_lldp(a: &mut Emu, a_port: u32, b: &mut Emu, b_port: u32) {
    let lldp_out = |m: &Message| {
        emu::output_ports(m) == [a_port]
            && emu::packet_out_parts(m)
                .is_some_and(|(_, data)| data.len() > 14 && data[12..14] == [0x88, 0xcc])
    };
    // The latest one read already (the handshake reads what follows it), else the next.
    let m = match a.log.iter().rev().find(|(_, m)| lldp_out(m)) {
        Some((_, m)) => m.clone(),
        None => {
            a.wait_for(T, lldp_out)
                .unwrap_or_else(|e| panic!("no discovery frame out of port {a_port}: {e}"))
                .1
        }
    };
    let (_, data) = emu::packet_out_parts(&m).unwrap();
    b.send_packet_in(b_port, data, None).unwrap();
}

#[test]
fn paths_follow_the_routing_engine_between_switches_and_hosts() {
    // Links that last the whole test, even on a slow machine.
    let topology: toml::Table = toml::from_str("link_timeout = 120\nlldp_interval = 30").unwrap();
    let apps = vec![
        apps::by_name("topology", &topology).unwrap(),
        apps::by_name("device_manager", &Default::default()).unwrap(),
        apps::by_name("routing", &Default::default()).unwrap(),
    ];
    let c = Running::start_with("127.0.0.1:0".parse().unwrap(), false, apps);
    // 1:2 <-> 2:1 and 2:2 <-> 3:1; switch 4 stands alone.
    let mut s1 = connect(c.of_addr, Spec::v13(1));
    let mut s2 = connect(c.of_addr, Spec::v10(2));
    let mut s3 = connect(c.of_addr, Spec::v13(3));
    let _s4 = connect(c.of_addr, Spec::v13(4));
    relay_lldp(&mut s1, 2, &mut s2, 1);
    relay_lldp(&mut s2, 1, &mut s1, 2);
    relay_lldp(&mut s2, 2, &mut s3, 1);
    relay_lldp(&mut s3, 1, &mut s2, 2);
    c.poll("/api/v1/links", |v| v.as_array().unwrap().len() == 4);

    let hop = |d: &str, i: Option<u32>, o: Option<u32>| serde_json::json!({"dpid": d, "in_port": i, "out_port": o});
    let (d1, d2, d3) = (
        "00:00:00:00:00:00:00:01",
        "00:00:00:00:00:00:00:02",
        "00:00:00:00:00:00:00:03",
    );
    // Between switches, in any dpid spelling.
    let p = c.poll("/api/v1/paths/1/0000000000000003", |v| v["length"] == 2);
    assert_eq!((p["src"].as_str(), p["dst"].as_str()), (Some(d1), Some(d3)));
    assert_eq!(
        p["hops"],
        serde_json::json!([
            hop(d1, None, Some(2)),
            hop(d2, Some(1), Some(2)),
            hop(d3, Some(1), None)
        ])
    );
    let p = c.get("/api/v1/paths/3/1").json();
    assert_eq!(
        p["hops"],
        serde_json::json!([
            hop(d3, None, Some(1)),
            hop(d2, Some(2), Some(1)),
            hop(d1, Some(2), None)
        ])
    );
    let p = c.get("/api/v1/paths/2/2").json();
    assert_eq!(
        (p["length"].as_u64(), p["hops"].clone()),
        (Some(0), serde_json::json!([hop(d2, None, None)]))
    );

    // Between hosts: their ports at both ends.
    s1.send_packet_in(3, &emu::frame(host(1), host(2)), None)
        .unwrap();
    s3.send_packet_in(4, &emu::frame(host(2), host(1)), None)
        .unwrap();
    c.poll("/api/v1/hosts", |v| v.as_array().unwrap().len() == 2);
    let path = format!("/api/v1/paths/{}/{}", host(1), host(2));
    let p = c.get(&path).json();
    assert_eq!(p["src"], host(1).to_string());
    assert_eq!(
        p["hops"],
        serde_json::json!([
            hop(d1, Some(3), Some(2)),
            hop(d2, Some(1), Some(2)),
            hop(d3, Some(1), Some(4))
        ])
    );
    // A host and a switch.
    let p = c.get(&format!("/api/v1/paths/{}/2", host(2))).json();
    assert_eq!(
        p["hops"],
        serde_json::json!([hop(d3, Some(4), Some(1)), hop(d2, Some(2), None)])
    );

    // No path to the lone switch; a switch not there; a host not known; not an end.
    let r = c.get("/api/v1/paths/1/4");
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(
        r.json()["error"].as_str().unwrap().contains("no path"),
        "{}",
        r.text()
    );
    let r = c.get("/api/v1/paths/1/9");
    assert_eq!(r.status, 404);
    assert!(
        r.json()["error"].as_str().unwrap().contains("no switch"),
        "{}",
        r.text()
    );
    let r = c.get(&format!("/api/v1/paths/{}/1", host(7)));
    assert_eq!(r.status, 404);
    assert!(
        r.json()["error"].as_str().unwrap().contains("no host"),
        "{}",
        r.text()
    );
    for bad in [
        "/api/v1/paths/switch-one/1",
        "/api/v1/paths/1/aa:bb:cc:dd:ee:zz",
    ] {
        let r = c.get(bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
    }
    drop((s1, s2, s3));
}

#[test]
fn paths_without_the_routing_app_are_503_saying_so() {
    let c = Running::start(false);
    let _sw = connect(c.of_addr, Spec::v13(1));
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    let r = c.get("/api/v1/paths/1/1");
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(
        r.json()["error"].as_str().unwrap().contains("routing app"),
        "{}",
        r.text()
    );
}

#[test]
fn apps_show_each_handlers_calls_and_time_and_metrics_their_histogram() {
    let c = Running::start(false);
    let mut sw = connect(c.of_addr, Spec::v13(0xc3));
    send_packet_ins(&mut sw, 100, 200);

    // Published at the workers' interval: poll until all 200 show.
    let handler = |apps: &Value, app: &str, handler: &str| -> Option<Value> {
        let a = apps.as_array()?.iter().find(|a| a["name"] == app)?;
        a["handlers"]
            .as_array()?
            .iter()
            .find(|h| h["handler"] == handler)
            .cloned()
    };
    let apps = c.poll("/api/v1/apps", |v| {
        handler(v, "device_manager", "PACKET_IN").is_some_and(|h| h["calls"] == 200)
    });
    for app in ["topology", "device_manager"] {
        let h = handler(&apps, app, "PACKET_IN").unwrap();
        assert_eq!(h["calls"], 200, "{app}: {h}");
        // The first PACKET_IN's handlers were timed (then one PACKET_IN in 1024).
        assert!(h["time_secs"].as_f64().unwrap() > 0.0, "{app}: {h}");
    }
    // Both apps' switch listeners ran once for this switch.
    let added = handler(&apps, "topology", "switch_added")
        .or_else(|| handler(&apps, "topology", "initialize"));
    assert!(
        added.is_some_and(|h| h["calls"].as_u64() >= Some(1)),
        "{apps:#}"
    );

    // The device manager publishes its own counters: listed with the app, and in
    // /metrics (200 hosts were new).
    let dm_app = apps
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "device_manager")
        .unwrap();
    let counter = |name: &str| {
        dm_app["counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no counter {name}: {dm_app}"))
    };
    assert_eq!(counter("hosts_added")["value"], 200, "{dm_app}");
    assert_eq!(counter("hosts_moved")["value"], 0, "{dm_app}");
    assert!(counter("hosts_added")["help"]
        .as_str()
        .unwrap()
        .contains("learned"));

    let body = c.get("/metrics").text();
    let added = [("app", "device_manager"), ("counter", "hosts_added")];
    assert_eq!(
        sample(&body, "pharos_app_events_total", &added),
        Some(200.0),
        "{body}"
    );
    assert!(
        body.contains("# TYPE pharos_app_events_total counter"),
        "{body}"
    );
    let dm = [("app", "device_manager"), ("handler", "PACKET_IN")];
    let count = sample(&body, "pharos_app_handler_seconds_count", &dm).expect(&body);
    // Only the first PACKET_IN of 200 was timed, standing for itself (the next is the
    // 1025th).
    assert_eq!(count, 1.0, "{body}");
    let inf = [
        ("app", "device_manager"),
        ("handler", "PACKET_IN"),
        ("le", "+Inf"),
    ];
    assert_eq!(
        sample(&body, "pharos_app_handler_seconds_bucket", &inf),
        Some(1.0)
    );
    assert!(sample(&body, "pharos_app_handler_seconds_sum", &dm).unwrap() > 0.0);
    assert!(
        body.contains("# TYPE pharos_app_handler_seconds histogram"),
        "{body}"
    );
    // Cumulative buckets, as the format wants: never going down, ending at the count.
    let buckets: Vec<f64> = samples(&body)
        .into_iter()
        .filter(|(n, labels, _)| {
            n == "pharos_app_handler_seconds_bucket"
                && dm
                    .iter()
                    .all(|(k, w)| labels.iter().any(|(lk, lv)| lk == k && lv == w))
        })
        .map(|(_, _, v)| v)
        .collect();
    assert_eq!(buckets.len(), 12, "{body}");
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
    assert!(body.contains("le=\"1e-06\""), "{body}");
}

// ---------------------------------------------------------------------------------
// Routes that ask a switch (routes_switch.rs): the emulated switches keep a flow table
// and answer statistics (the test kit's `emu::tables`).

/// An emulated switch connected and listed, left to answer on its own thread.
fn serve(c: &Running, spec: Spec, setup: impl FnOnce(&mut Emu)) -> emu::Background {
    let dpid = spec.dpid;
    let mut sw = Emu::connect(c.of_addr, spec).expect("connect");
    setup(&mut sw);
    sw.handshake(T).expect("handshake");
    c.poll("/api/v1/switches", |v| {
        v.as_array()
            .unwrap()
            .iter()
            .any(|s| s["dpid"] == api::dpid::format(dpid))
    });
    sw.in_background()
}

/// The flows `GET .../flows` lists, by priority (the topology app's LLDP flow aside).
fn flows_of(c: &Running, dpid: u64) -> Vec<Value> {
    let r = c.get(&format!("/api/v1/switches/{dpid}/flows"));
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["unreadable"], serde_json::json!([]));
    let mut flows: Vec<Value> = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["owner"] != "topology")
        .cloned()
        .collect();
    flows.sort_by_key(|f| f["priority"].as_u64());
    flows
}

#[test]
fn flows_are_added_listed_and_deleted_through_rest_in_both_versions() {
    let c = Running::start(false);
    let auth = bearer(TOKEN);
    for (dpid, spec) in [(0x10, Spec::v10(0x10)), (0x13, Spec::v13(0x13))] {
        let sw = serve(&c, spec, |_| {});
        let path = format!("/api/v1/switches/{dpid}/flows");
        // The topology app's LLDP flow is there, and says whose it is.
        let r = c.get(&path);
        assert_eq!(r.status, 200, "{}", r.text());
        let lldp = r.json()["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["match"]["dl_type"] == "0x88cc")
            .cloned()
            .expect("the LLDP flow");
        assert_eq!(lldp["owner"], "topology");
        assert_eq!(
            lldp["cookie"],
            format!("{:#x}", apps::topology::LLDP_COOKIE)
        );

        // As a string...
        let text = "priority=100,ip,nw_dst=10.0.0.2,actions=output:2";
        let body = serde_json::json!({ "flow": text }).to_string();
        let r = c.post(&path, Some(&auth), body.as_bytes());
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(r.json()["flow"], text);
        // ...and as JSON, with a cookie that carries the tag of an app of the
        // controller's (the owner comes from the tags of the pipeline's apps).
        let tag = controller::cookie::app_tag("device_manager");
        let cookie = format!("{:#x}", controller::cookie::with_tag(tag, 1));
        let body = serde_json::json!({
            "priority": 200,
            "cookie": cookie,
            "idle_timeout": 30,
            "match": {"dl_type": "0x0806", "in_port": "1"},
            "actions": ["output:3", "CONTROLLER:128"],
        });
        let r = c.post(&path, Some(&auth), body.to_string().as_bytes());
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(
            r.json()["flow"],
            format!("idle_timeout=30,priority=200,cookie={cookie},arp,in_port=1,actions=output:3,CONTROLLER:128")
        );

        // Read back live: two reply parts (one per flow), gathered.
        let flows = flows_of(&c, dpid);
        assert_eq!(flows.len(), 2, "{flows:#?}");
        let f = &flows[0];
        assert_eq!(f["priority"], 100);
        assert_eq!(
            f["match"],
            serde_json::json!({"dl_type": "0x0800", "nw_dst": "10.0.0.2"})
        );
        assert_eq!(f["actions"], serde_json::json!(["output:2"]));
        assert_eq!(f["owner"], Value::Null);
        assert_eq!(
            (f["packets"].as_u64(), f["bytes"].as_u64()),
            (Some(7), Some(700))
        );
        assert_eq!(f["duration_secs"], 3.5);
        let dumped = openflow::ofctl::parse_flow_entry(f["ofctl"].as_str().unwrap()).unwrap();
        assert_eq!(dumped.flow, openflow::ofctl::parse_flow(text).unwrap());
        assert_eq!(flows[1]["owner"], "device_manager");
        assert_eq!(flows[1]["idle_timeout"], 30);
        assert_eq!(
            flows[1]["actions"],
            serde_json::json!(["output:3", "CONTROLLER:128"])
        );
        // What a GET shows can be posted back as it is (minus what only a switch says).
        let mut again = flows[1].clone();
        for k in ["packets", "bytes", "duration_secs", "owner", "ofctl"] {
            again.as_object_mut().unwrap().remove(k);
        }
        let r = c.post(&path, Some(&auth), again.to_string().as_bytes());
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(flows_of(&c, dpid).len(), 2, "replaced, not added");

        // A table filter and a match filter are valid requests.
        let r = c.get(&format!("{path}?table=0&match=ip"));
        assert_eq!(r.status, 200, "{}", r.text());

        // A strict delete with another priority deletes nothing; out_port goes out as
        // the FLOW_MOD's out_port.
        let r = c.delete(
            &path,
            Some(br#"{"match": "ip,nw_dst=10.0.0.2", "strict": true, "priority": 99, "out_port": 2, "table": "all"}"#),
        );
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(flows_of(&c, dpid).len(), 2);
        // Delete one by its match, then the rest.
        let r = c.delete(&path, Some(br#"{"match": "ip,nw_dst=10.0.0.2"}"#));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json(), serde_json::json!({"deleted": true}));
        let flows = flows_of(&c, dpid);
        assert_eq!(flows.len(), 1);
        assert_eq!(flows[0]["priority"], 200);
        let r = c.delete(&path, None);
        assert_eq!(r.status, 200, "{}", r.text());
        let r = c.get(&path);
        assert_eq!(
            r.json()["flows"],
            serde_json::json!([]),
            "every flow, LLDP's too"
        );

        // The switch saw each FLOW_MOD followed by its barrier, and the strict delete
        // as it was asked for.
        let sw = sw.take();
        let strict: Vec<(u16, u32)> = sw
            .log
            .iter()
            .filter_map(|(_, m)| match m {
                Message::V10(of10::Message::FlowMod(f))
                    if f.command == of10::FlowModCommand::DeleteStrict =>
                {
                    Some((f.priority, u32::from(f.out_port)))
                }
                Message::V13(of13::Message::FlowMod(f))
                    if f.command == of13::FlowModCommand::DeleteStrict =>
                {
                    Some((f.priority, f.out_port))
                }
                _ => None,
            })
            .collect();
        assert_eq!(strict, [(99, 2)]);
        let kinds: Vec<&str> = sw
            .log
            .iter()
            .map(|(_, m)| m.type_name())
            .filter(|t| *t == "FLOW_MOD" || *t == "BARRIER_REQUEST")
            .collect();
        let pairs = kinds
            .windows(2)
            .filter(|w| w == &["FLOW_MOD", "BARRIER_REQUEST"])
            .count();
        assert!(pairs >= 5, "{kinds:?}");
    }
}

#[test]
fn a_refused_flow_is_422_naming_the_error_and_bad_flows_are_400_naming_the_token() {
    let c = Running::start(false);
    let auth = bearer(TOKEN);
    let _v13 = serve(&c, Spec::v13(0x13), |sw| sw.refuse_priority = Some(666));
    let _v10 = serve(&c, Spec::v10(0x10), |_| {});
    let path = "/api/v1/switches/0x13/flows";

    let r = c.post(
        path,
        Some(&auth),
        br#"{"flow": "priority=666,actions=drop"}"#,
    );
    assert_eq!(r.status, 422, "{}", r.text());
    let e = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        e.contains("FLOW_MOD_FAILED/TABLE_FULL (type 5, code 1)"),
        "{e}"
    );

    let r = c.post(
        path,
        Some(&auth),
        br#"{"flow": "ip,nw_dst=10.0.0.300,actions=drop"}"#,
    );
    assert_eq!(r.status, 400);
    let e = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        e.contains("nw_dst=10.0.0.300") && e.contains("at byte 3"),
        "{e}"
    );
    let r = c.post(
        path,
        Some(&auth),
        br#"{"match": {"nw_dst": "10.0.0.2"}, "actions": []}"#,
    );
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"].as_str().unwrap().contains("nw_dst"),
        "{}",
        r.text()
    );
    let r = c.post(
        path,
        Some(&auth),
        br#"{"flow": "actions=drop", "priority": 1}"#,
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let r = c.post(path, Some(&auth), br#"{"priority": 1}"#);
    assert_eq!(r.status, 400, "{}", r.text());
    let r = c.post(path, Some(&auth), br#"{"flow": "actions=drop", "prio": 1}"#);
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.json()["error"].as_str().unwrap().contains("prio"));
    // What 1.0 cannot say.
    let r = c.post(
        "/api/v1/switches/0x10/flows",
        Some(&auth),
        br#"{"flow": "actions=goto_table:1"}"#,
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.json()["error"].as_str().unwrap().contains("OpenFlow 1.0"));
    let r = c.delete(
        "/api/v1/switches/0x13/flows",
        Some(br#"{"match": "tp_dst=80"}"#),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.json()["error"].as_str().unwrap().contains("tp_dst=80"));
    let r = c.delete("/api/v1/switches/0x13/flows", Some(b"{\"strict\": tru"));
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"].as_str().unwrap().contains("column"),
        "{}",
        r.text()
    );
    // No such switch; no token.
    let r = c.post(
        "/api/v1/switches/0x99/flows",
        Some(&auth),
        br#"{"flow": "actions=drop"}"#,
    );
    assert_eq!(r.status, 404);
    let r = c.get("/api/v1/switches/0x99/flows");
    assert_eq!(r.status, 404);
    let r = c.call("DELETE", path, &[], None);
    assert_eq!(r.status, 401);
    assert_eq!(flows_of(&c, 0x13).len(), 0, "nothing was installed");
}

#[test]
fn a_switch_that_does_not_answer_is_504_within_the_switch_timeout() {
    let timeout = Duration::from_millis(300);
    let c = Running::start_full(
        "127.0.0.1:0".parse().unwrap(),
        false,
        default_apps(),
        timeout,
    );
    let _sw = serve(&c, Spec::v13(0x13), |sw| sw.answer_stats = false);
    for path in [
        "/api/v1/switches/0x13/flows",
        "/api/v1/switches/0x13/ports?stats=true",
        "/api/v1/switches/0x13/tables",
    ] {
        let asked = Instant::now();
        let r = c.get(path);
        let took = asked.elapsed();
        assert_eq!(r.status, 504, "{path}: {}", r.text());
        assert!(r.json()["error"]
            .as_str()
            .unwrap()
            .contains("did not answer"));
        assert!(
            took >= timeout && took < Duration::from_secs(3),
            "{path}: {took:?}"
        );
    }
    // The switch itself still shows, without its description, at once.
    let asked = Instant::now();
    let r = c.get("/api/v1/switches/0x13");
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["description"], Value::Null);
    assert!(asked.elapsed() < Duration::from_secs(2));
    // And it is still served: the barrier of a flow is answered.
    let r = c.post(
        "/api/v1/switches/0x13/flows",
        Some(&bearer(TOKEN)),
        br#"{"flow": "actions=drop"}"#,
    );
    assert_eq!(r.status, 201, "{}", r.text());
}

#[test]
fn description_port_statistics_tables_groups_and_meters() {
    let c = Running::start(false);
    let v13 = serve(&c, Spec::v13(0x13), |_| {});
    let _v10 = serve(&c, Spec::v10(0x10), |_| {});

    let s = c.get("/api/v1/switches/0x13").json();
    assert_eq!(
        c.get("/api/v1/switches/0x13").json()["description"],
        s["description"]
    );
    assert_eq!(
        s["description"],
        serde_json::json!({"mfr": "Pharos tests", "hw": "emulated switch", "sw": "1.0",
            "serial": "E13", "dp_desc": "emu"})
    );
    for dpid in [0x10, 0x13] {
        let v = c.get(&format!("/api/v1/switches/{dpid}/ports")).json();
        assert_eq!(v["ports"].as_array().unwrap().len(), 4);
        assert!(v["ports"][0].get("stats").is_none(), "{v:#}");
        let v = c
            .get(&format!("/api/v1/switches/{dpid}/ports?stats=true"))
            .json();
        for p in v["ports"].as_array().unwrap() {
            let n = p["port_no"].as_u64().unwrap();
            assert_eq!(p["stats"]["rx_packets"].as_u64(), Some(n * 100), "{p:#}");
            assert_eq!(p["stats"]["tx_bytes"].as_u64(), Some(n * 2000));
            let duration = if dpid == 0x13 {
                serde_json::json!(60.0)
            } else {
                Value::Null
            };
            assert_eq!(
                p["stats"]
                    .get("duration_secs")
                    .cloned()
                    .unwrap_or(Value::Null),
                duration
            );
        }
        let r = c.get(&format!("/api/v1/switches/{dpid}/ports?stats=maybe"));
        assert_eq!(r.status, 400);
        let t = c.get(&format!("/api/v1/switches/{dpid}/tables")).json();
        assert_eq!(t["tables"][0]["table_id"], 0);
        assert_eq!(t["tables"][0]["active_count"], 1, "the LLDP flow");
    }
    assert_eq!(
        c.get("/api/v1/switches/0x10/tables").json()["tables"][0]["name"],
        "classifier"
    );

    let g = c.get("/api/v1/switches/0x13/groups").json();
    assert_eq!(
        g["groups"],
        serde_json::json!([{"group_id": 1, "type": "all", "ref_count": 0, "packets": 4,
            "bytes": 400, "duration_secs": 9.0,
            "buckets": [{"weight": 0, "watch_port": null, "watch_group": null, "actions": ["output:1"]}]}])
    );
    let m = c.get("/api/v1/switches/0x13/meters").json();
    assert_eq!(
        m["meters"],
        serde_json::json!([{"meter_id": 1, "flags": ["kbps", "stats"], "flow_count": 0,
            "packets": 2, "bytes": 200, "duration_secs": 9.0,
            "bands": [{"type": "drop", "rate": 1000, "burst_size": 0}]}])
    );
    for what in ["groups", "meters"] {
        let r = c.get(&format!("/api/v1/switches/0x10/{what}"));
        assert_eq!(r.status, 409, "{}", r.text());
        assert!(r.json()["error"].as_str().unwrap().contains("OpenFlow 1.0"));
    }
    // The description was asked for once for the two GETs: it is kept per connection.
    let sw = v13.take();
    let descs = sw
        .log
        .iter()
        .filter(|(_, m)| {
            matches!(m, Message::V13(of13::Message::MultipartRequest(r))
                if matches!(r.body, openflow::of13::multipart::MultipartRequestBody::Desc))
        })
        .count();
    assert_eq!(descs, 1);
}

#[test]
fn packet_out_sends_the_frame_through_the_actions() {
    let c = Running::start(false);
    let sw = serve(&c, Spec::v13(0x13), |_| {});
    let auth = bearer(TOKEN);
    let frame = emu::frame(host(1), host(2));
    let hex: String = frame.iter().map(|b| format!("{b:02x}")).collect();
    let body =
        serde_json::json!({"in_port": "controller", "actions": ["output:2"], "data_hex": hex});
    let r = c.post(
        "/api/v1/switches/0x13/packet_out",
        Some(&auth),
        body.to_string().as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), serde_json::json!({"sent": true}));
    let r = c.post(
        "/api/v1/switches/0x13/packet_out",
        Some(&auth),
        br#"{"actions": ["output:2"], "data_hex": "0g"}"#,
    );
    assert_eq!(r.status, 400);
    let r = c.post(
        "/api/v1/switches/0x13/packet_out",
        Some(&auth),
        br#"{"actions": ["outptu:2"], "data_hex": "00"}"#,
    );
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"].as_str().unwrap().contains("outptu"),
        "{}",
        r.text()
    );
    let sw = sw.take();
    let outs: Vec<(Vec<u32>, Vec<u8>)> = sw
        .log
        .iter()
        .filter_map(|(_, m)| match m {
            Message::V13(of13::Message::PacketOut(p)) if p.data == frame => {
                Some((emu::output_ports(m), p.data.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(outs, [(vec![2], frame)]);
}

#[test]
fn the_switch_list_is_made_again_when_a_switch_comes_goes_or_changes_a_port() {
    // `/switches` is kept between requests while the directory does not change: a
    // port going down, a switch arriving and one leaving must each show at once.
    let c = Running::start(false);
    let ports_up = |v: &Value, dpid: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|s| s["dpid"] == dpid)
            .map(|s| s["ports_up"].as_u64().unwrap())
    };
    let mut a = Emu::connect_and_handshake(c.of_addr, Spec::v13(0xa1), T).unwrap();
    let first = c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    let before = ports_up(&first, "00:00:00:00:00:00:00:a1").unwrap();
    // Served again unchanged while nothing happens.
    assert_eq!(c.get("/api/v1/switches").json(), first);
    a.send_port_status(2, 2, PORT_CONFIG_DOWN, 0).unwrap();
    c.poll("/api/v1/switches", |v| {
        ports_up(v, "00:00:00:00:00:00:00:a1") == Some(before - 1)
    });
    let b = Emu::connect_and_handshake(c.of_addr, Spec::v10(0xb2), T).unwrap();
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 2);
    drop(a);
    let last = c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 1);
    assert_eq!(last[0]["dpid"], "00:00:00:00:00:00:00:b2");
    drop(b);
}

/// A loader for the tests: the "module" is text naming a built-in app's kind (`hub`);
/// anything else is refused with a reason.
struct TextLoader;

impl controller::host::AppLoader for TextLoader {
    fn load(
        &self,
        spec: &controller::host::LoadSpec,
        module: &[u8],
    ) -> Result<Box<dyn controller::app::AnyApp>, String> {
        match module {
            b"hub" => Ok(Box::new(LoadedHub(controller::host::intern(&spec.name)))),
            _ => Err("not a module this loader knows".into()),
        }
    }
}

/// Floods every PACKET_IN, under the name it was loaded as.
struct LoadedHub(&'static str);

impl controller::app::App for LoadedHub {
    type State = ();
    fn name(&self) -> &'static str {
        self.0
    }
    fn build(&self, b: &mut controller::app::Builder<Self>) {
        b.on_packet_in(controller::app::Order::direct(0), |_, ctx, _, p| {
            use openflow::model::{Action, PacketOut, PortNo};
            let flood = [Action::output(PortNo::Flood)];
            let in_port = PortNo::from_u32(p.in_port());
            ctx.send_packet_out(&PacketOut::unbuffered(p.data(), in_port, &flood));
            controller::app::Flow::Stop
        });
    }
}

#[test]
fn apps_are_stopped_started_restarted_reordered_loaded_and_deleted_over_rest() {
    let apps = ["topology", "device_manager", "learning_switch"]
        .iter()
        .map(|n| apps::by_name(n, &Default::default()).unwrap())
        .collect();
    let c = Running::start_with("127.0.0.1:0".parse().unwrap(), false, apps);
    let auth = bearer(TOKEN);
    let post = |path: &str| c.post(path, Some(&auth), b"");
    let mut events = sse::SseStream::open(c.api_addr, "/api/v1/events?types=app", &[]);
    assert_eq!(events.status, 200, "{}", events.head);
    let list = c.get("/api/v1/apps").json();
    assert_eq!(
        list[0]["required_by"],
        serde_json::json!(["device_manager"])
    );
    assert_eq!(list[1]["requires"], serde_json::json!(["topology"]));
    assert_eq!(list[2]["state"], "running");

    assert_eq!(
        c.post("/api/v1/apps/learning_switch/stop", None, b"")
            .status,
        401
    );
    let r = post("/api/v1/apps/topology/stop");
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("device_manager"), "{}", r.text());
    assert_eq!(post("/api/v1/apps/nobody/start").status, 404);

    // A switch connected while learning_switch is stopped gets its initializer when it
    // starts (the table-miss entry).
    let r = post("/api/v1/apps/learning_switch/stop");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["stopped"], serde_json::json!(["learning_switch"]));
    assert_eq!(c.get("/api/v1/apps").json()[2]["state"], "stopped");
    let (_, v) = events.expect(T, |e, v| e == "app" && v["event"] == "stopped");
    assert_eq!(v["app"], "learning_switch");
    let mut sw = connect(c.of_addr, Spec::v13(0x51));
    let r = post("/api/v1/apps/learning_switch/start");
    assert_eq!(r.status, 200, "{}", r.text());
    sw.wait_for(
        T,
        |m| matches!(m, Message::V13(of13::Message::FlowMod(f)) if f.priority == 0),
    )
    .expect("the table-miss entry of the started app");
    // Answering as a switch from here on (the barriers of the flow removals of the
    // apps stopped next).
    let _sw = sw.in_background();

    let r = post("/api/v1/apps/topology/stop?cascade=true");
    assert_eq!(
        r.json()["stopped"],
        serde_json::json!(["device_manager", "topology"])
    );
    for app in ["topology", "device_manager"] {
        assert_eq!(post(&format!("/api/v1/apps/{app}/start")).status, 200);
    }
    let r = post("/api/v1/apps/learning_switch/restart");
    assert_eq!(c.get("/api/v1/apps").json()[2]["starts"], 3, "{}", r.text());

    let order = |body: &[u8]| {
        c.call(
            "PUT",
            "/api/v1/apps/order",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            Some(body),
        )
    };
    let r = order(br#"["learning_switch","topology","device_manager"]"#);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(c.get("/api/v1/apps").json()[0]["name"], "learning_switch");
    assert_eq!(order(br#"["topology"]"#).status, 400);

    // Loading: none without a loader; then a module in, replaced, deleted.
    let load = |path: &str, method: &str, module: &[u8]| {
        c.call(
            method,
            path,
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/wasm"),
            ],
            Some(module),
        )
    };
    let r = load("/api/v1/apps?name=hub1", "POST", b"hub");
    assert_eq!(r.status, 501, "{}", r.text());
    c.pipeline.apps.set_loader(Arc::new(TextLoader));
    let r = load(
        "/api/v1/apps?name=hub1&order=direct:5&position=0",
        "POST",
        b"junk",
    );
    assert_eq!(r.status, 422, "{}", r.text());
    assert!(r.text().contains("not a module"), "{}", r.text());
    assert_eq!(
        load("/api/v1/apps?name=hub1&order=sideways", "POST", b"hub").status,
        400
    );
    assert_eq!(load("/api/v1/apps?name=order", "POST", b"hub").status, 400);
    // A module past the cap is refused before the loader sees it; nothing is loaded.
    let huge = vec![0u8; api::routes_app::MAX_MODULE + 1];
    let r = load("/api/v1/apps?name=huge", "POST", &huge);
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(
        r.json()["error"].as_str().unwrap().contains("64 MiB"),
        "{}",
        r.text()
    );
    assert!(c
        .get("/api/v1/apps")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["name"] != "huge"));
    let r = load(
        "/api/v1/apps?name=hub1&order=direct:5&position=0",
        "POST",
        b"hub",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["started"], serde_json::json!(["hub1"]));
    for what in ["loaded", "started"] {
        let (_, v) = events.expect(T, |e, v| e == "app" && v["event"] == what);
        assert_eq!(v["app"], "hub1");
    }
    let list = c.get("/api/v1/apps").json();
    assert_eq!(
        (&list[0]["name"], &list[0]["loaded"]),
        (&"hub1".into(), &true.into())
    );
    assert_eq!(load("/api/v1/apps?name=hub1", "POST", b"hub").status, 409);
    let r = load("/api/v1/apps/hub1", "PUT", b"hub");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(c.get("/api/v1/apps").json()[0]["name"], "hub1", "in place");
    assert_eq!(load("/api/v1/apps/topology", "PUT", b"hub").status, 409);
    assert_eq!(c.delete("/api/v1/apps/topology", None).status, 409);
    let r = c.delete("/api/v1/apps/hub1", None);
    assert_eq!(r.status, 200, "{}", r.text());
    let names: Vec<String> = c
        .get("/api/v1/apps")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["learning_switch", "topology", "device_manager"]);
}

#[test]
fn the_switch_list_gives_each_switchs_packet_in_rate_from_its_counters() {
    let c = Running::start(false);
    let mut busy = connect(c.of_addr, Spec::v13(0xa1));
    let _idle = connect(c.of_addr, Spec::v10(0xb2));
    c.poll("/api/v1/switches", |v| v.as_array().unwrap().len() == 2);
    let rate = |v: &Value, dpid: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|s| s["dpid"] == dpid)
            .map(|s| s["packet_ins_per_sec"].as_f64().expect("a number"))
    };
    // The rate is over the workers' last 500 ms: keep sending until it shows.
    let deadline = Instant::now() + T;
    let list = loop {
        send_packet_ins(&mut busy, 10, 20);
        let v = c.get("/api/v1/switches").json();
        if rate(&v, "00:00:00:00:00:00:00:a1").is_some_and(|r| r > 0.0) {
            break v;
        }
        assert!(Instant::now() < deadline, "no rate shown: {v:#}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        rate(&list, "00:00:00:00:00:00:00:b2"),
        Some(0.0),
        "{list:#}"
    );
    // The topology document's switches say the same.
    let topo = c.get("/api/v1/topology").json();
    assert!(rate(&topo["switches"], "00:00:00:00:00:00:00:b2") == Some(0.0));
}

/// `GET /port_rates`: the first read starts the polling; a few seconds later every port
/// of every switch has its rates (the emulated counters stand still: 0 bit/s), with the
/// speed a 1.3 switch gives in PORT_DESC (10 Gbit/s, so a utilisation of 0) and none for
/// a 1.0 switch whose ports name no speed (so no utilisation either).
#[test]
fn port_rates_poll_the_switches_while_read() {
    let c = Running::start(false);
    let _v13 = serve(&c, Spec::v13(0x13), |_| {});
    let _v10 = serve(&c, Spec::v10(0x10), |_| {});
    let first = c.get("/api/v1/port_rates").json();
    assert_eq!(first["polling"], true);
    assert_eq!(
        first["ports"],
        serde_json::json!([]),
        "no rate from one sample"
    );
    assert_eq!(first["interval_secs"], 3.0);
    let v = c.poll("/api/v1/port_rates", |v| {
        v["ports"].as_array().is_some_and(|p| p.len() == 8)
    });
    for p in v["ports"].as_array().unwrap() {
        assert_eq!(p["rx_bps"], 0.0, "{p}");
        assert_eq!(p["tx_bps"], 0.0, "{p}");
        if p["dpid"] == "00:00:00:00:00:00:00:13" {
            assert_eq!(p["speed_bps"], 10_000_000_000u64, "{p}");
            assert_eq!(p["utilisation"], 0.0, "{p}");
        } else {
            assert_eq!(p["dpid"], "00:00:00:00:00:00:00:10", "{p}");
            assert_eq!(p["speed_bps"], Value::Null, "{p}");
            assert_eq!(p["utilisation"], Value::Null, "{p}");
        }
        assert!(p["age_secs"].as_f64().unwrap() < 10.0, "{p}");
    }
}
