//! `/api/v1/static_flows` over real HTTP against a real controller (learning_switch,
//! whose initializer empties the table, then static_flows, as `pharos run` orders them)
//! with emulated switches: flows kept, sent at once to a connected switch, installed
//! when a switch connects and again when it reconnects, refused with the switch's
//! error, deleted from the switch; every JSON response checked against
//! `/api/v1/openapi.json`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::auth::{Token, TokenSource};
use api::{Core, Server, Settings};
use apps::static_flows::StaticFlowConfig;
use apps::static_flows::{StaticFlows, StaticFlowsApp};
use contract::Contract;
use controller::config::CoreConfig;
use controller::controller::{Controller, Handle};
use controller::host::AppHost;
use controller::services::Services;
use emu::{Emu, Spec};
use http::{request, Resp};
use openflow::common::ErrorBody;
use openflow::{of10, of13, Dpid, Message, Version};
use serde_json::{json, Value};
use testkit::contract;
use testkit::emu;
use testkit::http;

const T: Duration = Duration::from_secs(10);
const TOKEN: &str = "test-token-static-flows";

/// A directory of its own under the temp dir, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let d =
            std::env::temp_dir().join(format!("pharos-api-static-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Running {
    api: Server,
    handle: Arc<Handle>,
    pipeline: Arc<controller::host::Core>,
    of_addr: SocketAddr,
    api_addr: SocketAddr,
    contract: Contract,
    /// The state file.
    state: PathBuf,
}

impl Running {
    /// The controller, its API, and the static flows of `config` and of `state`.
    fn start(state: PathBuf, config: &[StaticFlowConfig]) -> Running {
        let net = CoreConfig {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            workers: 2,
            ..CoreConfig::default()
        };
        let store = Arc::new(StaticFlows::open(&state, config).expect("the state file reads"));
        let apps: Vec<Box<dyn controller::app::AnyApp>> = vec![
            apps::by_name("learning_switch", &Default::default()).unwrap(),
            Box::new(StaticFlowsApp::new(store)),
        ];
        let pipeline = Arc::new(AppHost::build(apps, Services::new()).expect("apps start"));
        let handle = Arc::new(
            Controller::start(&net.net(), Arc::clone(&pipeline.dispatcher))
                .expect("controller starts"),
        );
        let settings = Settings {
            listen: "127.0.0.1:0".parse().unwrap(),
            token: Token::new(TOKEN, TokenSource::Env),
            read_auth: false,
            switch_timeout: Duration::from_secs(5),
            tls: None,
        };
        let core = Core::new(&pipeline, Arc::clone(&handle));
        let api = Server::start(settings, core).expect("the API starts");
        let api_addr = api.local_addr();
        Running {
            of_addr: handle.local_addrs()[0],
            contract: Contract::fetch(api_addr, TOKEN),
            api,
            handle,
            pipeline,
            api_addr,
            state,
        }
    }

    fn call(&self, method: &str, path: &str, auth: bool, body: Option<&Value>) -> Resp {
        let token = format!("Bearer {TOKEN}");
        let mut headers = vec![("Content-Type", "application/json")];
        if auth {
            headers.push(("Authorization", &token));
        }
        let body = body.map(|b| b.to_string().into_bytes());
        let r = request(self.api_addr, method, path, &headers, body.as_deref());
        self.contract.check(method, path, &r);
        r
    }

    fn post(&self, body: Value) -> Resp {
        self.call("POST", "/api/v1/static_flows", true, Some(&body))
    }

    fn get(&self, path: &str) -> Resp {
        self.call("GET", path, false, None)
    }

    /// Waits until the API lists switch `dpid` as connected, or panics at the deadline.
    fn switch_listed(&self, dpid: u64) {
        let deadline = Instant::now() + T;
        let want = format!("00:00:00:00:00:00:00:{dpid:02x}");
        loop {
            let list = self.get("/api/v1/switches").json();
            if list.as_array().unwrap().iter().any(|s| s["dpid"] == want) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "switch {want} never listed: {list:#}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// GETs static flow `name` until `done` holds, or panics at the deadline.
    fn poll(&self, name: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + T;
        loop {
            let r = self.get(&format!("/api/v1/static_flows/{name}"));
            assert_eq!(r.status, 200, "{}", r.text());
            let v = r.json();
            if done(&v) {
                return v;
            }
            assert!(Instant::now() < deadline, "{name} never got there: {v:#}");
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

/// The FLOW_MODs in the switch's log with this priority, as (command, ofctl text; a
/// delete's without its actions, which a delete ignores).
fn flow_mods(emu: &Emu, priority: u16) -> Vec<(String, String)> {
    let list: Vec<(String, String)> = emu
        .log
        .iter()
        .filter_map(|(_, m)| match m {
            Message::V10(of10::Message::FlowMod(f)) if f.priority == priority => Some((
                format!("{:?}", f.command),
                openflow::ofctl::Flow::from_of10(f).unwrap().to_string(),
            )),
            Message::V13(of13::Message::FlowMod(f)) if f.priority == priority => Some((
                format!("{:?}", f.command),
                openflow::ofctl::Flow::from_of13(f).unwrap().to_string(),
            )),
            _ => None,
        })
        .collect();
    list.into_iter()
        .map(|(command, text)| match text.split_once(",actions=") {
            Some((selection, _)) if command.starts_with("Delete") => (command, selection.into()),
            _ => (command, text),
        })
        .collect()
}

fn is_flow_mod_with(m: &Message, priority: u16) -> bool {
    match m {
        Message::V10(of10::Message::FlowMod(f)) => f.priority == priority,
        Message::V13(of13::Message::FlowMod(f)) => f.priority == priority,
        _ => false,
    }
}

/// The switch answers the FLOW_MOD `(xid, msg)` with BAD_ACTION/BAD_OUT_PORT, carrying
/// its first 64 bytes as switches do.
fn refuse(emu: &mut Emu, xid: u32, msg: &Message) {
    let request = msg.to_bytes(xid).unwrap();
    let body = ErrorBody::Standard {
        err_type: 2,
        code: 4,
        data: request[..request.len().min(64)].to_vec(),
    };
    let err = match emu.ver() {
        Version::V1_0 => Message::V10(of10::Message::Error(body)),
        Version::V1_3 => Message::V13(of13::Message::Error(body)),
    };
    emu.send_raw(&err.to_bytes(xid).unwrap()).unwrap();
}

#[test]
fn a_static_flow_is_kept_sent_at_once_listed_replaced_and_deleted_from_its_switch() {
    for (spec, tag) in [(Spec::v13(1), "v13"), (Spec::v10(1), "v10")] {
        let dir = TempDir::new(&format!("crud-{tag}"));
        let c = Running::start(dir.0.join("static.json"), &[]);
        let mut emu = connect(c.of_addr, spec);
        // Connected, and past its initializers: listed, then an echo answered by its
        // worker, which only takes the switch's messages once the apps' initializers
        // (static_flows's among them) have run. A flow posted while the switch is
        // still between the two is sent by both the app and the API (a harmless
        // second ADD), which the log below would show.
        c.switch_listed(1);
        emu.ping(T).expect("the worker answers");
        let switch = emu.in_background();
        assert_eq!(c.get("/api/v1/static_flows").json(), json!([]));

        let r = c.post(json!({"name": "to-h2", "dpid": "1",
            "flow": "priority=100,ip,nw_dst=10.0.0.2,actions=output:2"}));
        assert_eq!(r.status, 201, "{tag}: {}", r.text());
        let f = r.json();
        assert_eq!(f["name"], "to-h2");
        assert_eq!(f["dpid"], "00:00:00:00:00:00:00:01");
        assert_eq!(
            f["flow"],
            "priority=100,ip,nw_dst=10.0.0.2,actions=output:2"
        );
        assert_eq!(f["source"], "api");
        assert_eq!(
            (&f["status"], &f["error"], &f["connected"]),
            (&json!("installed"), &json!(null), &json!(true)),
            "{tag}: the switch's barrier reply came before the answer"
        );
        // Kept in the state file.
        let state = std::fs::read_to_string(&c.state).unwrap();
        assert!(
            state.contains("priority=100,ip,nw_dst=10.0.0.2,actions=output:2"),
            "{state}"
        );

        // Listed, and found by name.
        let list = c.get("/api/v1/static_flows").json();
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["name"], "to-h2");
        assert_eq!(
            c.get("/api/v1/static_flows/to-h2").json()["status"],
            "installed"
        );

        // A taken name is 409 unless replaced; a replacement with another match first
        // removes the old flow from the switch.
        let dup = json!({"name": "to-h2", "dpid": "1", "flow": "priority=100,ip,nw_dst=10.0.0.3,actions=output:3"});
        let r = c.post(dup.clone());
        assert_eq!(r.status, 409, "{}", r.text());
        assert!(
            r.json()["error"].as_str().unwrap().contains("replace"),
            "{}",
            r.text()
        );
        let mut replace = dup;
        replace["replace"] = json!(true);
        let r = c.post(replace);
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(
            r.json()["flow"],
            "priority=100,ip,nw_dst=10.0.0.3,actions=output:3"
        );
        assert_eq!(r.json()["status"], "installed");

        // Deleted: forgotten, and a strict delete to the switch.
        let r = c.call("DELETE", "/api/v1/static_flows/to-h2", true, None);
        assert_eq!(r.status, 200, "{}", r.text());
        let d = r.json();
        assert_eq!(d["removed_from_switch"], true, "{d}");
        assert_eq!(d["deleted"]["name"], "to-h2");
        assert_eq!(c.get("/api/v1/static_flows/to-h2").status, 404);
        assert_eq!(
            c.call("DELETE", "/api/v1/static_flows/to-h2", true, None)
                .status,
            404
        );
        assert!(!std::fs::read_to_string(&c.state).unwrap().contains("to-h2"));

        let emu = switch.take();
        // The cookie carries the static_flows app's tag (controller::cookie), and on
        // 1.3 a delete is limited to it by the cookie mask.
        let cookie =
            controller::cookie::with_tag(controller::cookie::app_tag(apps::static_flows::NAME), 0);
        let mask = if tag == "v13" {
            format!("/{:#x}", controller::cookie::TAG_MASK)
        } else {
            String::new()
        };
        let add = |dst: u8| {
            (
                "Add".to_string(),
                format!(
                    "priority=100,cookie={cookie:#x},ip,nw_dst=10.0.0.{dst},actions=output:{dst}"
                ),
            )
        };
        let delete_strict = |dst: u8| {
            (
                "DeleteStrict".to_string(),
                format!("priority=100,cookie={cookie:#x}{mask},ip,nw_dst=10.0.0.{dst}"),
            )
        };
        assert_eq!(
            flow_mods(&emu, 100),
            [add(2), delete_strict(2), add(3), delete_strict(3)],
            "{tag}"
        );
    }
}

#[test]
fn bad_requests_say_why_and_change_nothing() {
    let dir = TempDir::new("bad");
    let config = [StaticFlowConfig {
        name: "from-file".into(),
        dpid: Dpid(1),
        flow: "arp,actions=flood".into(),
    }];
    let c = Running::start(dir.0.join("static.json"), &config);
    let body = json!({"name": "x", "dpid": "1", "flow": "actions=drop"});
    // Writes need the token.
    let r = c.call("POST", "/api/v1/static_flows", false, Some(&body));
    assert_eq!(r.status, 401);
    let r = c.call("DELETE", "/api/v1/static_flows/from-file", false, None);
    assert_eq!(r.status, 401);

    let r = c.post(json!({"name": "x", "dpid": "1", "flow": "ip,nw_dst=10.0.0.300,actions=drop"}));
    assert_eq!(r.status, 400);
    let e = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        e.contains("nw_dst=10.0.0.300") && e.contains("at byte"),
        "{e}"
    );
    let r = c.post(json!({"name": "x", "dpid": "1", "flow": "ip,actions=frobnicate"}));
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"].as_str().unwrap().contains("frobnicate"),
        "{}",
        r.text()
    );
    let r = c.post(json!({"name": "x", "dpid": "00:01", "flow": "actions=drop"}));
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("exactly 8 groups of 2 hex digits"),
        "{}",
        r.text()
    );
    let r = c.post(json!({"name": "x/y", "dpid": "1", "flow": "actions=drop"}));
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"].as_str().unwrap().contains("'/'"),
        "{}",
        r.text()
    );
    let r = c.post(json!({"name": "x", "dpid": "1"}));
    assert_eq!(r.status, 400, "{}", r.text());

    // The configuration file's flow is listed, read-only.
    let f = c.get("/api/v1/static_flows/from-file").json();
    assert_eq!(
        (&f["source"], &f["status"], &f["connected"]),
        (&json!("config"), &json!("pending"), &json!(false))
    );
    let r =
        c.post(json!({"name": "from-file", "dpid": "1", "flow": "actions=drop", "replace": true}));
    assert_eq!(r.status, 409);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("configuration file"),
        "{}",
        r.text()
    );
    let r = c.call("DELETE", "/api/v1/static_flows/from-file", true, None);
    assert_eq!(r.status, 409);
    assert_eq!(c.get("/api/v1/static_flows/nope").status, 404);
    // The same selection as another flow of the switch.
    let r = c.post(json!({"name": "twin", "dpid": "1", "flow": "arp,actions=drop"}));
    assert_eq!(r.status, 409);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("same table, priority and match"),
        "{}",
        r.text()
    );

    assert_eq!(
        c.get("/api/v1/static_flows")
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(!c.state.exists(), "nothing was written");
}

#[test]
fn flows_are_installed_when_their_switch_connects_and_again_when_it_reconnects() {
    let dir = TempDir::new("reconnect");
    let state = dir.0.join("static.json");
    // One flow from the configuration file, one from the state file of an earlier run.
    std::fs::write(
        &state,
        r#"{"format":1,"flows":[{"name":"kept","dpid":"00:00:00:00:00:00:00:02","flow":"priority=300,arp,actions=drop","updated_at":0}]}"#,
    )
    .unwrap();
    let config = [StaticFlowConfig {
        name: "from-file".into(),
        dpid: Dpid(2),
        flow: "priority=200,ip,actions=drop".into(),
    }];
    let c = Running::start(state, &config);
    // A flow added while its switch is away: kept, pending.
    let r = c.post(json!({"name": "later", "dpid": "2", "flow": "priority=100,icmp,actions=drop"}));
    assert_eq!(r.status, 201, "{}", r.text());
    let f = r.json();
    assert_eq!(
        (&f["status"], &f["connected"]),
        (&json!("pending"), &json!(false))
    );

    for round in 0..2 {
        let mut emu = connect(c.of_addr, Spec::v13(2));
        // Each flow (in name order: from-file, kept, later); nothing empties the
        // table (a restart must not cut traffic).
        for priority in [200, 300, 100] {
            emu.wait_for(T, |m| is_flow_mod_with(m, priority))
                .unwrap_or_else(|e| panic!("round {round}: priority {priority}: {e}"));
        }
        let delete_all = emu
            .log
            .iter()
            .any(|(_, m)| matches!(m, Message::V13(of13::Message::FlowMod(f)) if f.command == of13::FlowModCommand::Delete));
        assert!(!delete_all, "round {round}");
        let switch = emu.in_background();
        for name in ["later", "from-file", "kept"] {
            c.poll(name, |v| v["status"] == "installed");
        }
        // Gone: pending again.
        let emu = switch.take();
        drop(emu);
        c.poll("later", |v| {
            v["status"] == "pending" && v["connected"] == false
        });
    }
}

#[test]
fn a_flow_the_switch_refuses_is_refused_with_the_errors_names() {
    let dir = TempDir::new("refused");
    let c = Running::start(dir.0.join("static.json"), &[]);
    let mut emu = connect(c.of_addr, Spec::v13(3));
    // Joined before the POST: an echo answered after the handshake means the apps'
    // initializers have run for the switch (the worker handles the echo after them).
    // Otherwise the static_flows app's initializer, late on a busy machine, would find
    // the new flow in its store and send it too: a second FLOW_MOD, which this switch
    // accepts, making the POST's answer "installed".
    emu.ping(T).unwrap();
    // Added through the API while connected: the POST waits for the switch's answer.
    let api = c.api_addr;
    let post = std::thread::spawn(move || {
        let token = format!("Bearer {TOKEN}");
        let body =
            json!({"name": "bad-port", "dpid": "3", "flow": "priority=100,ip,actions=output:99"});
        request(
            api,
            "POST",
            "/api/v1/static_flows",
            &[
                ("Content-Type", "application/json"),
                ("Authorization", &token),
            ],
            Some(body.to_string().as_bytes()),
        )
    });
    let (xid, fm) = emu.wait_for(T, |m| is_flow_mod_with(m, 100)).unwrap();
    refuse(&mut emu, xid, &fm);
    let switch = emu.in_background();
    let r = post.join().unwrap();
    c.contract.check("POST", "/api/v1/static_flows", &r);
    assert_eq!(r.status, 201, "kept all the same: {}", r.text());
    let f = r.json();
    assert_eq!(
        (&f["status"], &f["error"]),
        (&json!("refused"), &json!("BAD_ACTION/BAD_OUT_PORT")),
        "{f}"
    );

    // At the next connection it is sent again, and refused again, through the app.
    drop(switch.take());
    let mut emu = connect(c.of_addr, Spec::v13(3));
    let (xid, fm) = emu.wait_for(T, |m| is_flow_mod_with(m, 100)).unwrap();
    c.poll("bad-port", |v| v["status"] == "pending");
    refuse(&mut emu, xid, &fm);
    let switch = emu.in_background();
    let f = c.poll("bad-port", |v| v["status"] == "refused");
    assert_eq!(f["error"], "BAD_ACTION/BAD_OUT_PORT");
    drop(switch);
}
