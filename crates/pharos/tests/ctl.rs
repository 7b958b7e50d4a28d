//! `pharos ctl` as a user runs it: the real binary against a real `pharos run` (its REST
//! API on a free port, emulated switches connected), for the routes the controller
//! serves; and against a small scripted HTTP server (`fake`) for the shape of what it
//! sends and how it shows answers of routes that are being built elsewhere (flows,
//! static flows, events, paths, port stats).

mod ctl_kit;

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::thread;

use ctl_kit::*;
use emu::{host, Spec};
use testkit::emu;
use testkit::http;

#[test]
fn ctl_shows_switches_ports_links_hosts_topology_apps_and_health_of_a_real_controller() {
    let c = Controller::start("reads");
    let sw1 = c.connect(Spec::v13(1));
    let mut sw2 = c.connect(Spec::v10(2));
    // A host behind port 3 of switch 2.
    sw2.send_packet_in(3, &emu::frame(host(1), host(2)), None)
        .unwrap();
    let cable = Cable::new(sw1, sw2);

    let out = c.ctl_until(&["switches"], |o| o.stdout.lines().count() == 3);
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["DPID", "VERSION", "PEER", "PORTS", "UP", "AGE"]
    );
    let r1 = row(&out.stdout, DP1).expect("switch 1 listed");
    assert_eq!((r1[1], r1[3], r1[4]), ("1.3", "4", "4"), "{}", out.stdout);
    assert!(r1[2].starts_with("127.0.0.1:"), "{}", out.stdout);
    let r2 = row(&out.stdout, DP2).expect("switch 2 listed");
    assert_eq!(r2[1], "1.0");

    // --json is the server's document as sent.
    let out = c.ctl(&["--json", "switches"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let served = http::request(c.api, "GET", "/api/v1/switches", &[], None).json();
    let dpids = |v: &serde_json::Value| {
        let mut d: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["dpid"].as_str().unwrap().to_string())
            .collect();
        d.sort();
        d
    };
    assert_eq!(dpids(&doc), dpids(&served));
    assert_eq!(
        doc[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        served[0].as_object().unwrap().keys().collect::<Vec<_>>()
    );

    // One switch, in any dpid spelling the API takes.
    let out = c.ctl(&["switch", "0x1"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    for want in [
        format!("dpid:         {DP1}\n"),
        "version:      1.3\n".into(),
        "tables:       254\n".into(),
    ] {
        assert!(out.stdout.contains(&want), "no {want:?} in\n{}", out.stdout);
    }
    assert_eq!(
        row(&out.stdout, "4").map(|r| r[3]),
        Some("up"),
        "{}",
        out.stdout
    );

    let out = c.ctl(&["ports", DP2]);
    assert_eq!(out.stdout.lines().count(), 5, "{}", out.stdout);
    assert_eq!(
        row(&out.stdout, "3").map(|r| (r[1], r[3])),
        Some(("eth3", "up")),
        "{}",
        out.stdout
    );

    // The cable, both ways, once discovery has seen it.
    let out = c.ctl_until(&["links"], |o| o.stdout.lines().count() == 3);
    let lines: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(lines.contains(&vec![DP1, "1", DP2, "1"]), "{}", out.stdout);
    assert!(lines.contains(&vec![DP2, "1", DP1, "1"]), "{}", out.stdout);

    let mac = host(1).to_string();
    let out = c.ctl_until(&["hosts"], |o| o.stdout.contains(&mac));
    let h = row(&out.stdout, &mac).expect("the host's row");
    assert_eq!((h[2], h[3]), (DP2, "3"), "{}", out.stdout);

    let out = c.ctl(&["topology"]);
    for want in ["SWITCHES (2)\n", "LINKS (2)\n", "HOSTS (1)\n"] {
        assert!(out.stdout.contains(want), "no {want:?} in\n{}", out.stdout);
    }

    let out = c.ctl(&["apps"]);
    for (order, name) in [("0", "topology"), ("1", "device_manager"), ("2", "routing")] {
        let r = row(&out.stdout, order).unwrap_or_else(|| panic!("{}", out.stdout));
        assert_eq!((r[1], r[2]), (name, "running"), "{}", out.stdout);
    }

    // The counters are a worker's snapshot, published every 500 ms.
    let out = c.ctl_until(&["controller"], |o| o.stdout.contains("switches:   2\n"));
    assert!(
        out.stdout.contains(&format!("listen:     {}\n", c.of_addr)),
        "{}",
        out.stdout
    );

    let out = c.ctl(&["health"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), format!("ok (http://{})\n", c.api).as_str())
    );

    drop(cable.take());
}

#[test]
fn ctl_sets_a_port_down_and_up_with_the_token_the_controller_wrote() {
    let c = Controller::start("port");
    let sw = c.connect(Spec::v13(7));
    // The switch answers (echo, barrier) on a thread while ctl runs.
    let bg = sw.in_background();
    c.ctl_until(&["switches"], |o| {
        o.stdout.contains("00:00:00:00:00:00:00:07")
    });

    let out = c.ctl(&["port", "7", "2", "down"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "PORT_MOD sent: switch 00:00:00:00:00:00:00:07 port 2 down (the port list shows it once the switch confirms)\n"
    );
    let mut sw = bg.take();
    assert_eq!(
        await_port_mod(&mut sw, 0),
        (2, PORT_CONFIG_DOWN, PORT_CONFIG_DOWN)
    );
    // The switch confirms, as Open vSwitch does: the port list says why it is down.
    sw.send_port_status(2, 2, PORT_CONFIG_DOWN, 0).unwrap();
    let bg = sw.in_background();
    let out = c.ctl_until(&["ports", "7"], |o| {
        row(&o.stdout, "2").is_some_and(|r| r[3] == "down")
    });
    assert_eq!(
        row(&out.stdout, "2").unwrap()[3..],
        ["down", "(admin)"],
        "{}",
        out.stdout
    );

    // Up again, the port by its name, the token given in the environment this time.
    let token = c.token();
    let out = ctl_env(
        &c.api.to_string(),
        &["port", "7", "eth2", "up"],
        &[("PHAROS_API_TOKEN", &token)],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let mut sw = bg.take();
    assert_eq!(await_port_mod(&mut sw, 1), (2, 0, PORT_CONFIG_DOWN));
}

#[test]
fn ctl_shows_auth_refusals_and_server_errors_as_sent_and_exits_1() {
    let c = Controller::start("auth");
    let mut sw = c.connect(Spec::v13(3));
    c.ctl_until(&["switches"], |o| {
        o.stdout.contains("00:00:00:00:00:00:00:03")
    });
    let api = c.api.to_string();
    let nowhere = TempDir::new("auth-no-token");

    // No token anywhere: reads work on loopback, the write is refused with the
    // server's words, and ctl says where it looked.
    let env = [("XDG_RUNTIME_DIR", nowhere.path().to_str().unwrap())];
    let out = ctl_env(&api, &["switches"], &env);
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = ctl_env(&api, &["port", "3", "1", "down"], &env);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .starts_with("pharos ctl: 401 Unauthorized: this request needs the API token"),
        "{}",
        out.stderr
    );
    let looked = nowhere.path().join("pharos").join("api-token");
    assert!(out.stderr.contains("no token was found"), "{}", out.stderr);
    assert!(
        out.stderr.contains(&looked.display().to_string()),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");

    // A wrong token: 403 as sent, and where that token came from.
    let wrong = "0".repeat(64);
    let env = [("PHAROS_API_TOKEN", wrong.as_str())];
    let out = ctl_env(&api, &["port", "3", "1", "down"], &env);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        "pharos ctl: 403 Forbidden: wrong API token\nthe token sent came from PHAROS_API_TOKEN\n"
    );
    let out = ctl_env(&api, &["--token", "nope", "port", "3", "1", "down"], &[]);
    assert!(
        out.stderr.contains("403 Forbidden") && out.stderr.contains("from --token"),
        "{}",
        out.stderr
    );
    // None of them reached the switch.
    sw.ping(T).expect("the switch is still served");
    assert!(sw.log.iter().all(|(_, m)| port_mod(m).is_none()));

    // --token-file: the file given.
    let file = nowhere.path().join("given-token");
    std::fs::write(&file, format!("{}\n", c.token())).unwrap();
    let out = ctl_env(
        &api,
        &[
            "--token-file",
            file.to_str().unwrap(),
            "port",
            "3",
            "1",
            "down",
        ],
        &[],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        await_port_mod(&mut sw, 0),
        (1, PORT_CONFIG_DOWN, PORT_CONFIG_DOWN)
    );

    // Errors of the server are shown as sent: status, reason, its `error`.
    let out = c.ctl(&["switch", "9"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "pharos ctl: 404 Not Found: no switch 00:00:00:00:00:00:00:09 is connected\n"
    );
    // A dpid is read here, by the one parser, and refused before any request.
    let out = c.ctl(&["switch", "not-a-dpid"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("\"not-a-dpid\" is not a dpid: write it as 00:00:00:00:00:00:00:01"),
        "{}",
        out.stderr
    );
    // With --json the error document goes to standard output too.
    let out = c.ctl(&["--json", "ports", "9"]);
    assert_eq!(out.code, Some(1));
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON on stdout");
    assert_eq!(
        doc["error"],
        "no switch 00:00:00:00:00:00:00:09 is connected"
    );
}

#[test]
fn ctl_says_when_the_controller_is_not_there_and_usage_errors_exit_2() {
    // Nothing listens there.
    let port = free_port();
    let api = format!("127.0.0.1:{port}");
    let out = ctl_env(&api, &["switches"], &[]);
    assert_eq!(out.code, Some(1), "{out:?}");
    let url = format!("http://{api}");
    assert!(
        out.stderr.contains(&format!(
            "cannot reach the controller's API at {url}: connection refused"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("is `pharos run` running?"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    // PHAROS_API is where it looks without --api.
    let mut c = Command::new(env!("CARGO_BIN_EXE_pharos"));
    let out = c
        .args(["ctl", "health"])
        .env("PHAROS_API", &url)
        .env_remove("PHAROS_API_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("tried {url}")));

    // Usage errors: 2, before any request.
    for args in [
        &["port", "1", "2", "sideways"][..],
        &["bogus"][..],
        &[][..],
        &["--api", "https://127.0.0.1:1", "switches"][..],
        &["add-flow", "1"][..],
        &["switch", "1:2"][..],
        &["flows", "1a"][..],
        &["static", "add", "x", "0:0:0:0:0:0:0:1", "actions=drop"][..],
    ] {
        let out = ctl_env("", args, &[]);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
    }
    let out = ctl_env(
        &api,
        &["--token-file", "/nonexistent/pharos-token", "switches"],
        &[],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("/nonexistent/pharos-token"),
        "{}",
        out.stderr
    );
}

/// A scripted HTTP server: answers each `METHOD /path?query` with the canned status and
/// body, and records what came (for the request's shape). `None` body with `sse`:
/// the events given, then the connection closed.
mod fake {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{SocketAddr, TcpListener};
    use std::sync::{Arc, Mutex};
    use std::thread;

    #[derive(Debug, Clone)]
    pub struct Seen {
        pub method: String,
        pub target: String,
        pub headers: Vec<(String, String)>,
        pub body: String,
    }

    impl Seen {
        pub fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        }
    }

    pub struct Server {
        pub addr: SocketAddr,
        pub seen: Arc<Mutex<Vec<Seen>>>,
    }

    /// `routes`: (`"GET /api/v1/x"`, status, content type, body).
    pub fn serve(routes: Vec<(&'static str, u16, &'static str, String)>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut r = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if r.read_line(&mut line).is_err() {
                    continue;
                }
                let mut parts = line.split_whitespace();
                let (method, target) = (
                    parts.next().unwrap_or("").to_string(),
                    parts.next().unwrap_or("").to_string(),
                );
                let mut headers = Vec::new();
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some((n, v)) = h.split_once(':') {
                        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
                    }
                }
                let len = headers
                    .iter()
                    .find(|(n, _)| n == "content-length")
                    .and_then(|(_, v)| v.parse::<usize>().ok())
                    .unwrap_or(0);
                let mut body = vec![0; len];
                let _ = r.read_exact(&mut body);
                let key = format!("{method} {target}");
                log.lock().unwrap().push(Seen {
                    method,
                    target,
                    headers,
                    body: String::from_utf8_lossy(&body).into_owned(),
                });
                let (status, ctype, body) = routes
                    .iter()
                    .find(|(k, ..)| *k == key)
                    .map(|(_, s, t, b)| (*s, *t, b.clone()))
                    .unwrap_or((
                        404,
                        "application/json",
                        r#"{"error":"no such route"}"#.into(),
                    ));
                let head = if ctype == "text/event-stream" {
                    format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\nconnection: close\r\n\r\n"
                    )
                } else {
                    format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    )
                };
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
            }
        });
        Server { addr, seen }
    }

    impl Server {
        pub fn seen(&self) -> Vec<Seen> {
            self.seen.lock().unwrap().clone()
        }
    }
}

#[test]
fn flows_add_and_delete_send_the_documented_shapes_and_show_flows_as_ofctl_lines() {
    let flows = r#"{"dpid":"00:00:00:00:00:00:00:01","flows":[
        {"table":0,"priority":100,"cookie":"0x0","match":{"icmp":""},"actions":["drop"],
         "idle_timeout":0,"hard_timeout":0,"packets":3,"bytes":294,"duration_secs":2.5,
         "owner":null,"ofctl":"priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop"},
        {"table":0,"priority":0,"packets":9,"bytes":900,"duration_secs":60,
         "owner":"learning_switch","ofctl":"priority=0,actions=CONTROLLER:65535"}],
        "unreadable":["table 0 priority 7: an experimenter action"]}"#;
    let s = fake::serve(vec![
        (
            "GET /api/v1/switches/00:00:00:00:00:00:00:01/flows",
            200,
            "application/json",
            flows.into(),
        ),
        (
            "GET /api/v1/switches/00:00:00:00:00:00:00:01/flows?table=3",
            200,
            "application/json",
            r#"{"dpid":"x","flows":[]}"#.into(),
        ),
        (
            "POST /api/v1/switches/00:00:00:00:00:00:00:01/flows",
            201,
            "application/json",
            r#"{"flow":"priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop"}"#.into(),
        ),
        (
            "POST /api/v1/switches/00:00:00:00:00:00:00:02/flows",
            400,
            "application/json",
            r#"{"error":"unknown field `nw_dsst` at 14: expected a match field or `actions`"}"#
                .into(),
        ),
        (
            "DELETE /api/v1/switches/00:00:00:00:00:00:00:01/flows",
            200,
            "application/json",
            r#"{"deleted":true}"#.into(),
        ),
    ]);
    let api = s.addr.to_string();
    let token_env = [("PHAROS_API_TOKEN", "t0ken")];

    let out = ctl_env(&api, &["flows", DP1], &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "APP              FLOW\n\
         -                duration=2.500s, n_packets=3, n_bytes=294, priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop\n\
         learning_switch  duration=60.000s, n_packets=9, n_bytes=900, priority=0,actions=CONTROLLER:65535\n"
    );
    let out = ctl_env(&api, &["flows", DP1, "--no-stats"], &[]);
    assert_eq!(
        out.stdout,
        "priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop\npriority=0,actions=CONTROLLER:65535\n"
    );
    // What ovs-ofctl syntax cannot show is said on standard error.
    assert!(
        out.stderr
            .contains("1 flow of this switch cannot be written in ovs-ofctl syntax")
            && out
                .stderr
                .contains("  table 0 priority 7: an experimenter action\n"),
        "{}",
        out.stderr
    );
    let out = ctl_env(&api, &["flows", "1", "--table", "3"], &[]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "no flows\n"));
    let out = ctl_env(&api, &["--json", "flows", DP1], &[]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        doc,
        serde_json::from_str::<serde_json::Value>(flows).unwrap()
    );

    let flow = "priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop";
    let out = ctl_env(&api, &["add-flow", "1", flow], &token_env);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), format!("added: {flow}\n").as_str()),
        "{out:?}"
    );
    let out = ctl_env(
        &api,
        &["add-flow", "2", "nw_dsst=1,actions=drop"],
        &token_env,
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "pharos ctl: 400 Bad Request: unknown field `nw_dsst` at 14: expected a match field or `actions`\n"
    );

    let out = ctl_env(&api, &["del-flows", "1"], &token_env);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "deleted every flow\n"),
        "{out:?}"
    );
    let out = ctl_env(
        &api,
        &[
            "del-flows",
            "1",
            "icmp,nw_dst=10.0.0.2",
            "--strict",
            "--priority",
            "100",
        ],
        &token_env,
    );
    assert_eq!(
        out.stdout,
        "deleted the flows matching icmp,nw_dst=10.0.0.2\n"
    );

    let seen = s.seen();
    let posts: Vec<&fake::Seen> = seen.iter().filter(|r| r.method != "GET").collect();
    let body = |r: &fake::Seen| serde_json::from_str::<serde_json::Value>(&r.body).ok();
    assert_eq!(body(posts[0]), Some(serde_json::json!({"flow": flow})));
    assert_eq!(posts[0].header("authorization"), Some("Bearer t0ken"));
    assert_eq!(posts[0].header("content-type"), Some("application/json"));
    // No body: every flow.
    assert_eq!(
        (posts[2].method.as_str(), posts[2].body.as_str()),
        ("DELETE", "")
    );
    assert_eq!(
        body(posts[3]),
        Some(serde_json::json!({"match": "icmp,nw_dst=10.0.0.2", "strict": true, "priority": 100}))
    );
    // Reads sent no token (none was found).
    assert!(seen
        .iter()
        .filter(|r| r.method == "GET")
        .all(|r| r.header("authorization").is_none()));
}

#[test]
fn static_flows_port_stats_and_paths_show_the_documented_shapes() {
    // The shapes of i12static's `StaticFlowInfo` and `DeletedStaticFlow`.
    let block = r#"{"name":"block-h1","dpid":"00:00:00:00:00:00:00:02","flow":"priority=200,ip,nw_src=10.0.0.1,actions=drop",
        "source":"api","status":"installed","error":null,"connected":true,"updated_at":1795615509}"#;
    let bad = r#"{"name":"bad-group","dpid":"00:00:00:00:00:00:00:03","flow":"actions=group:9","source":"config",
        "status":"refused","error":"BAD_ACTION/BAD_OUT_GROUP","connected":true,"updated_at":1795615509}"#;
    let list = format!("[{block},{bad}]");
    let added = r#"{"name":"block-h1","dpid":"00:00:00:00:00:00:00:02","flow":"priority=200,ip,nw_src=10.0.0.1,actions=drop",
        "source":"api","status":"pending","error":null,"connected":false,"updated_at":1795615509}"#;
    let ports = r#"{"dpid":"00:00:00:00:00:00:00:01","ports":[{"port_no":1,"name":"s1-eth1","hw_addr":"02:00:00:00:01:01",
        "up":true,"admin_down":false,"link_down":false,"config":0,"state":0,
        "stats":{"rx_packets":5,"tx_packets":6,"rx_bytes":500,"tx_bytes":600,"rx_dropped":0,"tx_dropped":0,"rx_errors":0,"tx_errors":0}}]}"#;
    // i12events' `PathBody`.
    let path = r#"{"src":"00:00:00:00:00:01","dst":"00:00:00:00:00:02","length":1,
        "hops":[{"dpid":"00:00:00:00:00:00:00:01","in_port":3,"out_port":1},{"dpid":"00:00:00:00:00:00:00:02","in_port":1,"out_port":3}]}"#;
    let s = fake::serve(vec![
        ("GET /api/v1/static_flows", 200, "application/json", list),
        (
            "POST /api/v1/static_flows",
            201,
            "application/json",
            added.into(),
        ),
        (
            "DELETE /api/v1/static_flows/bad-group",
            200,
            "application/json",
            format!(r#"{{"deleted":{bad},"removed_from_switch":true,"error":null}}"#),
        ),
        (
            "GET /api/v1/static_flows/nope",
            404,
            "application/json",
            r#"{"error":"no static flow \"nope\""}"#.into(),
        ),
        (
            "GET /api/v1/switches/00:00:00:00:00:00:00:01/ports?stats=true",
            200,
            "application/json",
            ports.into(),
        ),
        (
            "GET /api/v1/paths/00:00:00:00:00:01/00:00:00:00:00:02",
            200,
            "application/json",
            path.into(),
        ),
    ]);
    let api = s.addr.to_string();
    let token_env = [("PHAROS_API_TOKEN", "t0ken")];

    let out = ctl_env(&api, &["static", "list"], &[]);
    assert_eq!(
        out.stdout,
        "NAME       DPID                     SOURCE  STATUS     FLOW                                          ERROR\n\
         block-h1   00:00:00:00:00:00:00:02  api     installed  priority=200,ip,nw_src=10.0.0.1,actions=drop  -\n\
         bad-group  00:00:00:00:00:00:00:03  config  refused    actions=group:9                               BAD_ACTION/BAD_OUT_GROUP\n"
    );
    let out = ctl_env(
        &api,
        &[
            "static",
            "add",
            "block-h1",
            "2",
            "priority=200,ip,nw_src=10.0.0.1,actions=drop",
            "--replace",
        ],
        &token_env,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with("name:    block-h1\ndpid:    00:00:00:00:00:00:00:02\nsource:  api\nstatus:  pending (switch not connected)\n"),
        "{}",
        out.stdout
    );
    let out = ctl_env(&api, &["static", "del", "bad-group"], &token_env);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            Some(0),
            "deleted static flow bad-group, and removed it from 00:00:00:00:00:00:00:03\n"
        ),
        "{out:?}"
    );
    let out = ctl_env(&api, &["static", "show", "nope"], &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            Some(1),
            "pharos ctl: 404 Not Found: no static flow \"nope\"\n"
        )
    );
    // A name taken: the server's words, and how to replace it from here.
    let taken = fake::serve(vec![(
        "POST /api/v1/static_flows",
        409,
        "application/json",
        r#"{"error":"a static flow named \"block-h1\" exists"}"#.into(),
    )]);
    let out = ctl_env(
        &taken.addr.to_string(),
        &["static", "add", "block-h1", "2", "actions=drop"],
        &token_env,
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "pharos ctl: 409 Conflict: a static flow named \"block-h1\" exists\n\
         `pharos ctl static add block-h1 ... --replace` replaces it\n"
    );
    let posted = s.seen().into_iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(posted.target, "/api/v1/static_flows");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&posted.body).unwrap(),
        serde_json::json!({"name": "block-h1", "dpid": "00:00:00:00:00:00:00:02", "flow": "priority=200,ip,nw_src=10.0.0.1,actions=drop", "replace": true})
    );

    let out = ctl_env(&api, &["ports", "1", "--stats"], &[]);
    assert_eq!(
        out.stdout,
        "PORT  NAME     HW_ADDR            STATE  RX_PKTS  TX_PKTS  RX_BYTES  TX_BYTES  RX_DROP  TX_DROP  RX_ERR  TX_ERR\n\
         1     s1-eth1  02:00:00:00:01:01  up     5        6        500       600       0        0        0       0\n"
    );

    let out = ctl_env(
        &api,
        &["paths", "00:00:00:00:00:01", "00:00:00:00:00:02"],
        &[],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "from:  00:00:00:00:00:01\n\
         to:    00:00:00:00:00:02\n\
         links: 1\n\
         \n\
         HOP  DPID                     IN_PORT  OUT_PORT\n\
         1    00:00:00:00:00:00:00:01  3        1\n\
         2    00:00:00:00:00:00:00:02  1        3\n"
    );
}

#[test]
fn events_prints_one_line_per_event_as_it_comes_and_says_when_the_stream_ends() {
    let stream = ": heartbeat\n\n\
        event: switch\ndata: {\"seq\":1,\"time\":1795615509.5,\"event\":\"connected\",\"dpid\":\"00:00:00:00:00:00:00:01\",\"version\":\"1.3\"}\n\n\
        : heartbeat\n\n\
        event: link\ndata: {\"seq\":2,\"time\":1795615510.25,\"event\":\"added\",\"link\":{\"src\":{\"dpid\":\"00:00:00:00:00:00:00:01\",\"port\":1},\"dst\":{\"dpid\":\"00:00:00:00:00:00:00:02\",\"port\":1}}}\n\n";
    let s = fake::serve(vec![
        (
            "GET /api/v1/events?types=switch,link",
            200,
            "text/event-stream",
            stream.into(),
        ),
        (
            "GET /api/v1/events",
            200,
            "text/event-stream",
            stream.into(),
        ),
    ]);
    let api = s.addr.to_string();
    let out = ctl_env(&api, &["events", "--types", "switch,link"], &[]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    // The server's time (UTC), the type, what happened, the rest.
    assert_eq!(
        lines,
        [
            "14:05:09.500  switch  connected     dpid=00:00:00:00:00:00:00:01 version=1.3",
            "14:05:10.250  link    added         link=00:00:00:00:00:00:00:01/1->00:00:00:00:00:00:00:02/1",
        ]
    );
    // The stream ending is the controller going away: said, and exit 1.
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("the event stream ended"),
        "{}",
        out.stderr
    );
    assert_eq!(s.seen()[0].header("accept"), Some("text/event-stream"));

    // --json: one JSON document a line.
    let out = ctl_env(&api, &["--json", "events"], &[]);
    let docs: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 2);
    assert_eq!(
        docs[0],
        serde_json::json!({"event": "switch", "data": {"seq": 1, "time": 1795615509.5,
            "event": "connected", "dpid": DP1, "version": "1.3"}})
    );
}

/// Events are printed as they come, not when the stream ends: the first line is out
/// while the server still holds the connection open.
#[test]
fn events_are_printed_live() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let api = listener.local_addr().unwrap().to_string();
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let server = thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nevent: host\ndata: {\"mac\":\"00:00:5e:00:00:01\"}\n\n").unwrap();
        s.flush().unwrap();
        let _ = wait.recv_timeout(T);
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(["ctl", "--api", &api, "events"])
        .env_remove("PHAROS_API_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert!(
        line.contains("  host  ") && line.ends_with("  mac=00:00:5e:00:00:01\n"),
        "{line:?}"
    );
    // Still running: the stream is open.
    assert!(child.try_wait().unwrap().is_none());
    release.send(()).unwrap();
    server.join().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn ctl_app_stops_starts_restarts_and_reorders_the_apps_of_a_real_controller() {
    let c = Controller::start("apps-lifecycle");
    // The STATE column of the app's row in `app list`.
    let state = |name: &str| {
        let out = c.ctl(&["app", "list"]);
        out.stdout
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|cols| cols.get(1) == Some(&name))
            .map(|cols| cols[2].to_string())
    };
    // Refused, naming who requires it, with the way out.
    let out = c.ctl(&["app", "stop", "topology"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("409"), "{out:?}");
    assert!(out.stderr.contains("routing, device_manager"), "{out:?}");
    assert!(out.stderr.contains("--cascade"), "{out:?}");
    assert_eq!(state("topology").as_deref(), Some("running"));

    let out = c.ctl(&["app", "stop", "routing"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with("stopped routing; on every worker in"),
        "{out:?}"
    );
    assert_eq!(state("routing").as_deref(), Some("stopped"));
    let out = c.ctl(&["app", "start", "routing"]);
    assert!(out.stdout.starts_with("started routing;"), "{out:?}");

    // Dependents first.
    let out = c.ctl(&["app", "stop", "topology", "--cascade"]);
    assert!(
        out.stdout
            .starts_with("stopped routing,device_manager,topology;"),
        "{out:?}"
    );
    for app in ["topology", "device_manager", "routing"] {
        let out = c.ctl(&["app", "start", app]);
        assert_eq!(out.code, Some(0), "{app}: {out:?}");
    }
    let out = c.ctl(&["app", "restart", "routing"]);
    assert!(
        out.stdout.starts_with("stopped routing; started routing;"),
        "{out:?}"
    );

    let out = c.ctl(&[
        "app",
        "order",
        "static_flows,topology,device_manager,routing",
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&c.ctl(&["--json", "app", "list"]).stdout).unwrap();
    let names: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["static_flows", "topology", "device_manager", "routing"]
    );
    assert_eq!(
        doc[3]["requires"],
        serde_json::json!(["topology", "device_manager"])
    );
    let out = c.ctl(&["app", "order", "routing"]);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("missing"), "{out:?}");

    // Built-in apps are not unloaded; `pharos run`'s loader (the WASM host) refuses a
    // module that is not a component, saying why.
    let out = c.ctl(&["app", "unload", "routing"]);
    assert!(out.stderr.contains("not loaded at run time"), "{out:?}");
    let module = c.runtime.path().join("m.wasm");
    std::fs::write(&module, b"\0asm").unwrap();
    let out = c.ctl(&["app", "load", module.to_str().unwrap(), "--name", "w"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("422") && out.stderr.contains("wasm app w: not a valid component"),
        "{out:?}"
    );
    let out = c.ctl(&["app", "load", "/nonexistent.wasm", "--name", "w"]);
    assert_eq!(out.code, Some(2), "{out:?}");
}
