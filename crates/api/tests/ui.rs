//! The web UI as a browser fetches it from a running API: the files, `index.html` for
//! client routes, the JSON 404 kept for `/api/...`, no token for any of it even when
//! reads need one, the security headers, content types, and ETag revalidation.

use std::sync::Arc;

use api::auth::{Token, TokenSource};
use api::{Core, Server, Settings};
use controller::config::CoreConfig;
use controller::controller::{Controller, Handle};
use controller::host::AppHost;
use controller::services::Services;
use http::{request, Resp};
use testkit::http;

const TOKEN: &str = "ui-test-token";

/// A controller with no apps and its API on a free loopback port.
struct Running {
    api: Server,
    handle: Arc<Handle>,
    pipeline: Arc<controller::host::Core>,
}

impl Running {
    fn start(read_auth: bool) -> Running {
        let config = CoreConfig {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            workers: 1,
            ..CoreConfig::default()
        };
        let pipeline = Arc::new(AppHost::build(Vec::new(), Services::new()).expect("start"));
        let handle = Arc::new(
            Controller::start(&config.net(), Arc::clone(&pipeline.dispatcher))
                .expect("controller starts"),
        );
        let settings = Settings {
            listen: "127.0.0.1:0".parse().unwrap(),
            token: Token::new(TOKEN, TokenSource::Env),
            read_auth,
            switch_timeout: std::time::Duration::from_secs(5),
            tls: None,
        };
        let core = Core::new(&pipeline, Arc::clone(&handle));
        let api = Server::start(settings, core).expect("the API starts");
        Running {
            api,
            handle,
            pipeline,
        }
    }

    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Resp {
        request(self.api.local_addr(), "GET", path, headers, None)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.api.shutdown();
        self.handle.shutdown();
        self.pipeline.apps.stop();
    }
}

const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
                   script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

fn assert_ui_headers(r: &Resp, path: &str) {
    assert_eq!(r.header("content-security-policy"), Some(CSP), "{path}");
    assert_eq!(
        r.header("x-content-type-options"),
        Some("nosniff"),
        "{path}"
    );
    assert_eq!(r.header("cache-control"), Some("no-cache"), "{path}");
    assert!(
        r.header("etag").is_some_and(|e| e.starts_with('"')),
        "{path}: {:?}",
        r.headers
    );
}

#[test]
fn the_index_is_served_at_the_root_and_for_every_client_route_without_a_token() {
    // Reads need the token here, as they do off loopback: the UI's files still do not.
    let c = Running::start(true);
    let root = c.get("/", &[]);
    assert_eq!(root.status, 200, "{}", root.text());
    assert_eq!(
        root.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(root
        .text()
        .contains(r#"<script type="module" src="/ui/app.js">"#));
    assert!(root.text().contains(r#"id="stale-banner""#));
    assert_ui_headers(&root, "/");
    for route in [
        "/switches",
        "/switches/00:00:00:00:00:00:00:01?tab=flows",
        "/hosts?q=10.0.0.1",
        "/apps",
        "/controller",
        "/?select=switch:00:00:00:00:00:00:00:01&hosts=1",
        "/no/such/page",
    ] {
        let r = c.get(route, &[]);
        assert_eq!(r.status, 200, "{route}");
        assert_eq!(r.body, root.body, "{route} is the index");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert_ui_headers(&r, route);
    }
    // The API's own paths still need the token here.
    assert_eq!(c.get("/api/v1/switches", &[]).status, 401);
    assert_eq!(c.get("/metrics", &[]).status, 401);
}

#[test]
fn assets_have_their_content_types_and_missing_ones_are_404() {
    let c = Running::start(true);
    for (path, ctype, needle) in [
        (
            "/ui/app.js",
            "text/javascript; charset=utf-8",
            "export function navigate",
        ),
        ("/ui/api.js", "text/javascript; charset=utf-8", "Bearer"),
        (
            "/ui/live.js",
            "text/javascript; charset=utf-8",
            "/api/v1/events",
        ),
        ("/ui/style.css", "text/css; charset=utf-8", ":focus-visible"),
        (
            "/ui/pages/topology.js",
            "text/javascript; charset=utf-8",
            "export function mount",
        ),
    ] {
        let r = c.get(path, &[]);
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.header("content-type"), Some(ctype), "{path}");
        assert!(r.text().contains(needle), "{path}");
        assert_ui_headers(&r, path);
    }
    let missing = c.get("/ui/nothing.js", &[]);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("content-security-policy"), Some(CSP));
    // Nothing but the UI is served: the browser tests' and the benchmark's Node packages
    // live in ui-tests/ and ui-bench/, not in ui/.
    assert_eq!(c.get("/ui/package.json", &[]).status, 404);
}

#[test]
fn api_paths_keep_their_json_404_and_writes_to_ui_paths_need_the_token() {
    let c = Running::start(false);
    for path in ["/api/v1/nothing", "/api/nothing", "/api"] {
        let r = c.get(path, &[]);
        assert_eq!(r.status, 404, "{path}");
        assert!(
            r.header("content-type")
                .unwrap()
                .starts_with("application/json"),
            "{path}"
        );
        assert!(r.json()["error"].as_str().unwrap().contains(path), "{path}");
    }
    let post = request(c.api.local_addr(), "POST", "/switches", &[], Some(b"{}"));
    assert_eq!(post.status, 401, "{}", post.text());
}

#[test]
fn a_matching_if_none_match_gets_a_304_and_another_the_file() {
    let c = Running::start(false);
    for path in ["/ui/app.js", "/", "/hosts"] {
        let first = c.get(path, &[]);
        let etag = first.header("etag").unwrap().to_string();
        let again = c.get(path, &[("If-None-Match", &etag)]);
        assert_eq!(again.status, 304, "{path}");
        assert!(again.body.is_empty(), "{path}");
        assert_eq!(again.header("etag"), Some(etag.as_str()));
        let list = format!("\"0000\", W/{etag}");
        assert_eq!(
            c.get(path, &[("If-None-Match", &list)]).status,
            304,
            "{path}"
        );
        let stale = c.get(path, &[("If-None-Match", "\"0123456789abcdef\"")]);
        assert_eq!(stale.status, 200, "{path}");
        assert_eq!(stale.body, first.body);
    }
    // Different files, different tags.
    assert_ne!(
        c.get("/ui/app.js", &[]).header("etag"),
        c.get("/ui/api.js", &[]).header("etag")
    );
}

#[test]
fn head_of_the_index_answers_without_a_body() {
    let c = Running::start(false);
    let r = request(c.api.local_addr(), "HEAD", "/switches", &[], None);
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
}
