//! Issue 12's acceptance for what the REST API reads, on real Open vSwitch: a mixed
//! `ring,4` lab (1.0 and 1.3 switches, a loop) under the default apps, the API served
//! on the test's controller as `pharos run --api` serves it, and every JSON answer
//! checked against `/api/v1/openapi.json`.
//!
//! ```text
//! /switches      exactly the lab's switches, each in the version the lab gave it
//! /links         exactly the lab's cables, each once each way
//! /hosts         every host after a pingall: its MAC, its IP, its switch and port
//! /topology      the same three in one document
//! PORT_MOD       POST .../ports/{port} {"up": false} on a cable's port: the port shows
//!                down in /switches/{dpid}, the cable leaves /links and /topology;
//!                {"up": true} brings both back
//! ```
//!
//! Needs root and Open vSwitch (`scripts/install-test-deps`), like `lab.rs`;
//! `PHAROS_SKIP_LAB=1` skips it, saying so and recording it.

mod common;
use common::lab as harness;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use contract::Contract;
use harness::{apps_by_name, enabled, parse_topo, serial, wait_until, Lab, Of, Topo};
use serde_json::Value;
use testkit::contract;
use testkit::http;

/// The default app set of `pharos run`.
const APPS: &[&str] = &["topology", "device_manager", "routing"];
const TOKEN: &str = "lab-api-token-5b1c0e";
/// How long the switches get to connect, discovery to find the cables, a port change to
/// show.
const SETTLE: Duration = Duration::from_secs(15);

/// The API of a lab's controller, every answer checked against the contract.
struct Api {
    at: SocketAddr,
    contract: Contract,
}

impl Api {
    fn call(&self, method: &str, path: &str, body: Option<&[u8]>) -> http::Resp {
        let auth = format!("Bearer {TOKEN}");
        let mut headers = vec![("Authorization", auth.as_str())];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        let r = http::request(self.at, method, path, &headers, body);
        self.contract.check(method, path, &r);
        r
    }

    /// GET `path` (under /api/v1), which must answer 200 with JSON.
    fn get(&self, path: &str) -> Value {
        let path = format!("/api/v1{path}");
        let r = self.call("GET", &path, None);
        assert_eq!(r.status, 200, "GET {path}: {}", r.text());
        r.json()
    }

    /// GETs `path` until `done` holds for its body; the last body either way.
    fn poll(&self, path: &str, mut done: impl FnMut(&Value) -> bool) -> (bool, Value) {
        let mut last = Value::Null;
        let ok = wait_until(SETTLE, || {
            last = self.get(path);
            done(&last)
        });
        (ok, last)
    }
}

/// A directed link as (src dpid, src port, dst dpid, dst port).
type Directed = (String, u32, String, u32);

/// The lab's cables, each both ways, `except` one (by switch names and port).
fn cables(topo: &Topo, except: Option<(&str, u32)>) -> BTreeSet<Directed> {
    let mut want = BTreeSet::new();
    for l in &topo.links {
        if except.is_some_and(|(s, p)| (l.a == s && l.port_a == p) || (l.b == s && l.port_b == p)) {
            continue;
        }
        let a = api::dpid::format(topo.switches[&l.a].dpid);
        let b = api::dpid::format(topo.switches[&l.b].dpid);
        want.insert((a.clone(), l.port_a, b.clone(), l.port_b));
        want.insert((b, l.port_b, a, l.port_a));
    }
    want
}

/// The links of a `/links` answer (or a `/topology`'s `links`).
fn links_of(v: &Value) -> BTreeSet<Directed> {
    v.as_array()
        .expect("an array of links")
        .iter()
        .map(|l| {
            let end = |e: &Value| {
                (
                    e["dpid"].as_str().expect("dpid").to_string(),
                    e["port"].as_u64().expect("port") as u32,
                )
            };
            let (s, sp) = end(&l["src"]);
            let (d, dp) = end(&l["dst"]);
            (s, sp, d, dp)
        })
        .collect()
}

/// The port `port_no` of a `/switches/{dpid}` answer.
fn port_of(sw: &Value, port_no: u32) -> Value {
    sw["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| p["port_no"] == port_no)
        .cloned()
        .unwrap_or_else(|| panic!("no port {port_no} in {sw:#}"))
}

#[test]
fn rest_shows_the_lab_as_it_is_and_changes_a_port() {
    if !enabled("lab_api::rest_shows_the_lab_as_it_is_and_changes_a_port") {
        return;
    }
    let _lock = serial();
    let mut lab = Lab::with_apps("api", Of::Mixed, apps_by_name(APPS), false);
    let at = lab.ctl.start_api(TOKEN);
    let api = Api {
        at,
        contract: Contract::fetch(at, TOKEN),
    };
    let out = lab.up("ring,4");
    let topo = parse_topo(&lab.show());
    assert!(lab.ctl.wait_connected(4, SETTLE), "4 switches\n{out}");

    // /switches: exactly the lab's, each in its version.
    let want: BTreeSet<(String, String)> = topo
        .switches
        .values()
        .map(|s| {
            let v = match Of::Mixed.version_of(s.dpid) {
                openflow::Version::V1_0 => "1.0",
                openflow::Version::V1_3 => "1.3",
            };
            (api::dpid::format(s.dpid), v.to_string())
        })
        .collect();
    let got: BTreeSet<(String, String)> = api
        .get("/switches")
        .as_array()
        .expect("an array")
        .iter()
        .map(|s| {
            (
                s["dpid"].as_str().unwrap().to_string(),
                s["version"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got, want, "/switches against the lab's switches");

    // /links: exactly the cables, once discovery has seen them all.
    let want = cables(&topo, None);
    let (ok, last) = api.poll("/links", |v| links_of(v) == want);
    assert!(
        ok,
        "/links never equalled the lab's cables\n  want {want:?}\n  got  {:?}",
        links_of(&last)
    );

    // /hosts: every host after a pingall, where the lab put it.
    let ping = lab.pingall();
    assert!(ping.ok(), "pingall\n{ping}");
    let want: BTreeSet<(String, String, String, u32)> = topo
        .hosts
        .values()
        .map(|h| {
            let dpid = api::dpid::format(topo.switches[&h.switch].dpid);
            (h.mac.clone(), h.ip.clone(), dpid, h.port)
        })
        .collect();
    let hosts_of = |v: &Value| -> BTreeSet<(String, String, String, u32)> {
        v.as_array()
            .expect("an array of hosts")
            .iter()
            .flat_map(|h| {
                let mac = h["mac"].as_str().unwrap().to_lowercase();
                let dpid = h["attachment"]["dpid"].as_str().unwrap().to_string();
                let port = h["attachment"]["port"].as_u64().unwrap() as u32;
                h["ips"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|ip| ip.as_str())
                    .filter(|ip| ip.contains('.'))
                    .map(move |ip| (mac.clone(), ip.to_string(), dpid.clone(), port))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (ok, last) = api.poll("/hosts", |v| want.is_subset(&hosts_of(v)));
    assert!(
        ok,
        "/hosts lacks hosts of the lab\n  want {want:?}\n  got  {:?}",
        hosts_of(&last)
    );
    let macs: BTreeSet<String> = hosts_of(&last).into_iter().map(|h| h.0).collect();
    let lab_macs: BTreeSet<String> = topo.hosts.values().map(|h| h.mac.clone()).collect();
    assert_eq!(macs, lab_macs, "/hosts lists a host the lab does not have");

    // /topology: the same switches, links and hosts in one document.
    let t = api.get("/topology");
    assert_eq!(t["switches"].as_array().unwrap().len(), topo.switches.len());
    assert_eq!(links_of(&t["links"]), cables(&topo, None));
    assert_eq!(hosts_of(&t["hosts"]), hosts_of(&last));

    // PORT_MOD down on one end of the first cable, then up again.
    let cable = &topo.links[0];
    let (name, port) = (cable.a.as_str(), cable.port_a);
    let dpid = api::dpid::format(topo.switches[name].dpid);
    let path = format!("/api/v1/switches/{dpid}/ports/{port}");
    let r = api.call("POST", &path, Some(br#"{"up": false}"#));
    assert_eq!(r.status, 202, "POST {path}: {}", r.text());
    let sw_path = format!("/switches/{dpid}");
    let (ok, sw) = api.poll(&sw_path, |sw| {
        let p = port_of(sw, port);
        p["admin_down"] == true && p["up"] == false
    });
    assert!(ok, "port {port} of {name} never showed down: {sw:#}");
    let without = cables(&topo, Some((name, port)));
    let (ok, last) = api.poll("/links", |v| links_of(v) == without);
    assert!(
        ok,
        "the cable of a port set down stayed in /links\n  want {without:?}\n  got  {:?}",
        links_of(&last)
    );
    assert_eq!(links_of(&api.get("/topology")["links"]), without);

    let r = api.call("POST", &path, Some(br#"{"up": true}"#));
    assert_eq!(r.status, 202, "POST {path}: {}", r.text());
    let (ok, sw) = api.poll(&sw_path, |sw| {
        let p = port_of(sw, port);
        p["admin_down"] == false && p["up"] == true
    });
    assert!(ok, "port {port} of {name} never came back up: {sw:#}");
    let all = cables(&topo, None);
    let (ok, last) = api.poll("/links", |v| links_of(v) == all);
    assert!(
        ok,
        "the cable did not come back to /links\n  want {all:?}\n  got  {:?}",
        links_of(&last)
    );
    let down = lab.down();
    assert!(down.ok(), "{down}");
}
