//! An HTTP/1.1 client for the API tests, on `ureq`: one request per connection
//! (`Connection: close`, no pool), blocking, with a deadline, any status returned as a
//! response (a 4xx is what many tests check), no redirect followed, and no header the
//! test did not ask for beyond `Host` and the body's length (no `User-Agent`, no
//! `Accept`). (`pharos`'s tests use it too.)

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use ureq::config::AutoHeaderValue;
use ureq::http;
use ureq::Agent;

/// How long a connect, or one read or write of a request, may take.
const DEADLINE: Duration = Duration::from_secs(10);

/// A response.
#[derive(Debug)]
pub struct Resp {
    /// The status code.
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Resp {
    /// The first header `name` (lower case), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics, showing the body, if it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The agent every request goes through: what a test sends is what the server sees.
/// `stream`: for a response read as it comes (an event stream), which may be silent for
/// long: no deadline on its reads.
pub(crate) fn agent(stream: bool) -> &'static Agent {
    static AGENTS: [OnceLock<Agent>; 2] = [OnceLock::new(), OnceLock::new()];
    let read_deadline = (!stream).then_some(DEADLINE);
    AGENTS[usize::from(stream)].get_or_init(|| {
        Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_idle_connections(0)
            .max_idle_connections_per_host(0)
            .allow_non_standard_methods(true)
            .user_agent(AutoHeaderValue::None)
            .accept(AutoHeaderValue::None)
            .accept_encoding(AutoHeaderValue::None)
            .timeout_connect(Some(DEADLINE))
            .timeout_per_read(read_deadline)
            .timeout_per_write(Some(DEADLINE))
            .build()
            .new_agent()
    })
}

/// A request to `addr`: `method path`, with `headers`.
pub(crate) fn builder(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> http::request::Builder {
    let method = http::Method::from_bytes(method.as_bytes())
        .unwrap_or_else(|e| panic!("method {method:?}: {e}"));
    let mut b = http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"));
    for (n, v) in headers {
        let value = http::HeaderValue::from_bytes(v.as_bytes())
            .unwrap_or_else(|e| panic!("header {n}: {v:?}: {e}"));
        b = b.header(*n, value);
    }
    b
}

/// Sends one request (`Connection: close`) and reads the whole response.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Resp {
    let b = builder(addr, method, path, headers).header("Connection", "close");
    let sent = match body {
        Some(body) => agent(false).run(b.body(body).expect("a request")),
        None => agent(false).run(b.body(()).expect("a request")),
    };
    let mut r = sent.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = r.status().as_u16();
    let headers = r
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = r
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_vec()
        .unwrap_or_else(|e| panic!("reading the response to {method} {path}: {e}"));
    Resp {
        status,
        headers,
        body,
    }
}
