//! The web UI, served from the binary: the files under `crates/api/ui/` (plain ES
//! modules, a stylesheet, `index.html`; no build step) are embedded at compile time.
//!
//! How: `build.rs` lists `ui/` (the browser tests live apart, in `ui-tests/`) into
//! `$OUT_DIR/ui_assets.rs`, one `include_bytes!` per file with its content type and an
//! ETag (FNV-1a of the bytes), and tells Cargo to run again when anything under `ui/`
//! changes. So a plain
//! `cargo build` gives a binary that serves the current UI, with no new dependency and
//! no file read at run time (`rust-embed` would do the same with a crate and a derive).
//!
//! What is served (GET and HEAD; no token ever, see the auth layer in `lib.rs`):
//! - `/ui/{path}`: the file at `ui/{path}`; a missing one is a 404 (a typo in an
//!   import fails loudly rather than loading the page again).
//! - any other path that is not `/api/...` nor `/metrics`: `index.html`, so the UI's
//!   client routes (`/switches/{dpid}`, `/hosts?q=...`) can be linked and reloaded.
//!   `/api/...` keeps its JSON 404.
//!
//! Every answer has [`CSP`] (nothing from any other origin, no inline script or
//! style), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
//! `Cache-Control: no-cache` and the ETag; a matching `If-None-Match` gets a 304.

use axum::body::Body;
use axum::extract::{Path, Request};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    /// Its path under `ui/`, with `/` separators (`pages/hosts.js`).
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its ETag, quoted.
    pub etag: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

/// The embedded files, sorted by path.
pub static ASSETS: &[Asset] = include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));

/// The Content-Security-Policy of every UI answer.
pub const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
                       script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/// The embedded file at `path` (relative to `ui/`).
pub fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS
        .binary_search_by(|a| a.path.cmp(path))
        .ok()
        .map(|i| &ASSETS[i])
}

/// Whether `path` belongs to the API (its JSON answers, its token rules) rather than
/// to the UI.
pub fn is_api_path(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/") || path == "/metrics"
}

/// `GET /ui/{*path}`.
pub async fn file(Path(path): Path<String>, headers: HeaderMap) -> Response {
    match asset(&path) {
        Some(a) => serve(a, &headers),
        None => with_headers(
            (StatusCode::NOT_FOUND, format!("no UI file {path}\n")).into_response(),
            "text/plain; charset=utf-8",
        ),
    }
}

/// `index.html` for a client route (GET or HEAD); `None` for any other request.
pub fn index_for(req: &Request) -> Option<Response> {
    if !matches!(*req.method(), Method::GET | Method::HEAD) || is_api_path(req.uri().path()) {
        return None;
    }
    let index = asset("index.html")?;
    Some(serve(index, req.headers()))
}

/// The file, or a 304 when the client has this version.
fn serve(a: &'static Asset, headers: &HeaderMap) -> Response {
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/") == a.etag
        });
    let mut r = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        Response::new(Body::from(a.body))
    };
    r.headers_mut()
        .insert(header::ETAG, HeaderValue::from_static(a.etag));
    if fresh {
        // A 304 carries no Content-Type (RFC 9110 §15.4.5); the other headers still apply.
        let mut r = with_headers(r, a.content_type);
        r.headers_mut().remove(header::CONTENT_TYPE);
        return r;
    }
    with_headers(r, a.content_type)
}

/// Adds the content type and the headers every UI answer has.
fn with_headers(mut r: Response, content_type: &'static str) -> Response {
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_is_embedded_with_its_types_and_the_tests_are_not() {
        let index = asset("index.html").expect("index.html embedded");
        assert_eq!(index.content_type, "text/html; charset=utf-8");
        assert!(std::str::from_utf8(index.body)
            .unwrap()
            .contains("/ui/app.js"));
        assert_eq!(
            asset("app.js").unwrap().content_type,
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            asset("style.css").unwrap().content_type,
            "text/css; charset=utf-8"
        );
        assert!(asset("pages/topology.js").is_some());
        assert!(ASSETS.iter().all(|a| !a.path.starts_with("tests/")));
        assert!(ASSETS.windows(2).all(|w| w[0].path < w[1].path), "sorted");
    }

    #[test]
    fn api_paths_are_told_from_client_routes() {
        for p in ["/api", "/api/", "/api/v1/nothing", "/metrics"] {
            assert!(is_api_path(p), "{p}");
        }
        for p in [
            "/",
            "/switches/00:00:00:00:00:00:00:01",
            "/apis",
            "/metrics/x",
        ] {
            assert!(!is_api_path(p), "{p}");
        }
    }
}
