//! The HTTP side of `pharos ctl`: where the API is, which token to send, one request
//! and its answer, and why a request failed in words a user can act on.
//!
//! The client is `ureq` (blocking, no async runtime), built without TLS, gzip or the
//! environment's proxy: the API serves plain HTTP, on loopback by default, and an
//! `http_proxy` meant for the outside world must not capture `127.0.0.1`.

use std::io::Read as _;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// The API's address when neither `--api` nor `PHAROS_API` says otherwise (where
/// `pharos run` listens by default).
pub const DEFAULT_API: &str = api::config::DEFAULT_URL;

/// How long one request may take in all (a switch that does not answer is the server's
/// 504 after its own `switch_timeout`, 5 s by default, well before this).
const TIMEOUT: Duration = Duration::from_secs(30);

/// How long the event stream may stay silent before it is taken for lost: the server
/// sends a heartbeat every 15 s, so this is six missed in a row.
pub const STREAM_SILENCE: Duration = Duration::from_secs(90);

/// Where the token came from, for the hint after a 401 or 403.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenFrom {
    /// `--token`.
    Flag,
    /// `PHAROS_API_TOKEN`.
    Env,
    /// A file: `--token-file`, or the one `pharos run` writes.
    File(PathBuf),
}

/// The token to send, if one was found.
#[derive(Clone)]
pub struct Token {
    /// The secret (never printed).
    secret: String,
    pub from: TokenFrom,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

/// Finds the token: `flag` (`--token`), else `env` (`PHAROS_API_TOKEN`), else the
/// content of `file` (`--token-file`, else the file `pharos run` writes a generated
/// token to). `None` when there is none: reads on loopback need none. A `--token-file`
/// that cannot be read is an error; the default file missing is not.
pub fn find_token(
    flag: Option<String>,
    env: Option<String>,
    file: Option<PathBuf>,
    runtime_dir: Option<PathBuf>,
) -> Result<Option<Token>, String> {
    let given = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    if let Some(secret) = given(flag) {
        return Ok(Some(Token {
            secret,
            from: TokenFrom::Flag,
        }));
    }
    if let Some(secret) = given(env) {
        return Ok(Some(Token {
            secret,
            from: TokenFrom::Env,
        }));
    }
    let (path, explicit) = match file {
        Some(p) => (p, true),
        None => (api::auth::default_token_path(runtime_dir), false),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(given(Some(text)).map(|secret| Token {
            secret,
            from: TokenFrom::File(path),
        })),
        Err(e) if explicit => Err(format!(
            "cannot read the token file {}: {e}",
            path.display()
        )),
        Err(_) => Ok(None),
    }
}

/// Where `pharos ctl` looks for the token when neither `--token` nor the variable gives
/// it, for the hint after a 401.
pub fn default_token_file() -> PathBuf {
    api::auth::default_token_path(std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from))
}

/// Why a request gave no answer to show.
#[derive(Debug)]
pub enum Failure {
    /// Nothing answers at the API's address (or it did not answer in time).
    Unreachable { url: String, reason: String },
    /// The server answered with an error status: shown as sent.
    Server {
        status: u16,
        /// The JSON `error`, else the body as text.
        message: String,
        /// The whole body, for `--json`.
        body: String,
    },
    /// The answer was not what an API sends (not JSON where JSON was due).
    Protocol(String),
    /// The command line named something unusable (a module file that cannot be read).
    Usage(String),
}

impl Failure {
    /// The process exit code: 1 for all of them (2 is for usage errors, which never get
    /// as far as a request).
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            _ => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Unreachable { url, reason } => write!(
                f,
                "cannot reach the controller's API at {url}: {reason}\n\
                 is `pharos run` running? (tried {url}; --api URL or PHAROS_API point elsewhere)"
            ),
            Failure::Server {
                status, message, ..
            } => write!(f, "{status} {}: {message}", reason_phrase(*status)),
            Failure::Protocol(m) | Failure::Usage(m) => f.write_str(m),
        }
    }
}

/// The standard reason phrase of the statuses the API sends.
fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Error",
    }
}

/// The API at one base URL, with or without a token.
pub struct Client {
    /// `http://host:port`, no trailing slash.
    pub base: String,
    pub token: Option<Token>,
    agent: ureq::Agent,
    /// The same with no overall deadline, but a limit on silence: for the event stream.
    streaming: ureq::Agent,
}

/// Turns what the user gave (`http://127.0.0.1:8080`, `127.0.0.1:8080`, with or without
/// a trailing `/` or `/api/v1`) into the base URL; an error sentence for what cannot
/// be one.
pub fn base_url(given: &str) -> Result<String, String> {
    let given = given.trim();
    if given.is_empty() {
        return Err("the API's URL is empty".into());
    }
    if given.starts_with("https://") {
        return Err(format!(
            "{given}: the API serves plain HTTP (put a TLS proxy in front of it and give http:// of the proxy's plain side)"
        ));
    }
    let url = if given.starts_with("http://") {
        given.to_string()
    } else if given.contains("://") {
        return Err(format!("{given}: not an http:// URL"));
    } else {
        format!("http://{given}")
    };
    let url = url.trim_end_matches('/');
    let url = url.strip_suffix("/api/v1").unwrap_or(url);
    if url.len() <= "http://".len() {
        return Err(format!("{given}: no host in the URL"));
    }
    Ok(url.to_string())
}

impl Client {
    pub fn new(base: String, token: Option<Token>) -> Client {
        Client::with_stream_silence(base, token, STREAM_SILENCE)
    }

    /// With another limit on the event stream's silence than [`STREAM_SILENCE`].
    fn with_stream_silence(base: String, token: Option<Token>, silence: Duration) -> Client {
        let agent = |deadline: Option<Duration>, silence: Option<Duration>| -> ureq::Agent {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .proxy(None)
                .timeout_connect(Some(Duration::from_secs(5)))
                .timeout_global(deadline)
                .timeout_per_read(silence)
                .user_agent(concat!("pharos-ctl/", env!("CARGO_PKG_VERSION")))
                .build()
                .into()
        };
        Client {
            base,
            token,
            agent: agent(Some(TIMEOUT), None),
            streaming: agent(None, Some(silence)),
        }
    }

    /// The URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn auth(&self) -> Option<String> {
        self.token.as_ref().map(|t| format!("Bearer {}", t.secret))
    }

    /// Sends one request (`body`: JSON to send) and gives the JSON answer of a 2xx.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, Failure> {
        let text = self.call_text(method, path, body)?;
        serde_json::from_str(&text).map_err(|e| {
            Failure::Protocol(format!(
                "{} answered something that is not JSON ({e}): {}",
                self.url(path),
                text.chars().take(200).collect::<String>()
            ))
        })
    }

    /// As [`Client::call`], the answer's body as text.
    pub fn call_text(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<String, Failure> {
        let url = self.url(path);
        let auth = self.auth();
        let result = match (method, body) {
            ("GET", _) => with_auth(self.agent.get(&url), auth.as_deref()).call(),
            ("DELETE", None) => with_auth(self.agent.delete(&url), auth.as_deref()).call(),
            ("DELETE", Some(b)) => with_auth(self.agent.delete(&url), auth.as_deref())
                .force_send_body()
                .content_type("application/json")
                .send(b.to_string()),
            ("POST", b) => with_auth(self.agent.post(&url), auth.as_deref())
                .content_type("application/json")
                .send(b.map_or_else(|| "{}".to_string(), Value::to_string)),
            ("PUT", b) => with_auth(self.agent.put(&url), auth.as_deref())
                .content_type("application/json")
                .send(b.map_or_else(|| "{}".to_string(), Value::to_string)),
            _ => unreachable!("ctl sends GET, POST, PUT and DELETE only"),
        };
        self.answer(result)
    }

    /// `method` (POST or PUT) of `bytes` as `application/wasm` (a module); the answer
    /// as JSON.
    pub fn upload(&self, method: &str, path: &str, bytes: &[u8]) -> Result<Value, Failure> {
        let url = self.url(path);
        let auth = self.auth();
        let request = match method {
            "PUT" => self.agent.put(&url),
            _ => self.agent.post(&url),
        };
        let result = with_auth(request, auth.as_deref())
            .content_type("application/wasm")
            .send(bytes);
        let text = self.answer(result)?;
        serde_json::from_str(&text).map_err(|e| {
            Failure::Protocol(format!(
                "{} answered something that is not JSON ({e}): {}",
                self.url(path),
                text.chars().take(200).collect::<String>()
            ))
        })
    }

    /// The body of an answer as text; an error status is a [`Failure::Server`].
    fn answer(
        &self,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<String, Failure> {
        let response = result.map_err(|e| self.unreachable(e))?;
        let status = response.status().as_u16();
        let mut text = String::new();
        response
            .into_body()
            .into_reader()
            .read_to_string(&mut text)
            .map_err(|e| Failure::Unreachable {
                url: self.base.clone(),
                reason: format!("the answer was cut: {e}"),
            })?;
        if (200..300).contains(&status) {
            Ok(text)
        } else {
            Err(server_error(status, text))
        }
    }

    /// Opens the event stream at `path` and gives the reader of its body.
    pub fn stream(&self, path: &str) -> Result<impl std::io::Read, Failure> {
        let url = self.url(path);
        let response = with_auth(self.streaming.get(&url), self.auth().as_deref())
            .header("Accept", "text/event-stream")
            .call()
            .map_err(|e| self.unreachable(e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let mut text = String::new();
            let _ = response.into_body().into_reader().read_to_string(&mut text);
            return Err(server_error(status, text));
        }
        Ok(response.into_body().into_reader())
    }

    fn unreachable(&self, e: ureq::Error) -> Failure {
        let reason = match &e {
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                "connection refused".to_string()
            }
            ureq::Error::Timeout(t) => format!("no answer in time ({t})"),
            ureq::Error::HostNotFound => "unknown host".to_string(),
            e => e.to_string(),
        };
        Failure::Unreachable {
            url: self.base.clone(),
            reason,
        }
    }
}

/// Whether reading a body failed for a timeout (ureq wraps its `Timeout` in the
/// `io::Error` a body reader gives).
pub fn is_timeout(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::TimedOut
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ureq::Error>())
            .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)))
}

fn with_auth<B>(r: ureq::RequestBuilder<B>, auth: Option<&str>) -> ureq::RequestBuilder<B> {
    match auth {
        Some(a) => r.header("Authorization", a),
        None => r,
    }
}

/// An error answer: its JSON `error` when it has one, else its text.
fn server_error(status: u16, body: String) -> Failure {
    let message = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(String::from))
        .unwrap_or_else(|| {
            let t = body.trim();
            if t.is_empty() {
                "(no body)".to_string()
            } else {
                t.to_string()
            }
        });
    Failure::Server {
        status,
        message,
        body,
    }
}

/// Percent-encodes one path segment (a static flow's name, a port's name, a MAC):
/// RFC 3986's unreserved characters and `:` stay as they are.
pub fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_as_people_write_them() {
        let ok = |s| base_url(s).unwrap();
        assert_eq!(ok("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(ok("127.0.0.1:9000/"), "http://127.0.0.1:9000");
        assert_eq!(ok("http://[::1]:8080/api/v1/"), "http://[::1]:8080");
        assert!(base_url("https://x:1").unwrap_err().contains("plain HTTP"));
        assert!(base_url("ftp://x").unwrap_err().contains("not an http"));
        assert!(base_url("http://").is_err());
        assert!(base_url(" ").is_err());
    }

    #[test]
    fn the_token_is_the_flag_then_the_variable_then_the_file() {
        let dir = std::env::temp_dir().join(format!("pharos-ctl-token-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("pharos")).unwrap();
        let from = |t: Option<Token>| t.map(|t| (t.secret, t.from));
        let rt = || Some(dir.clone());
        assert_eq!(from(find_token(None, None, None, rt()).unwrap()), None);
        std::fs::write(dir.join("pharos/api-token"), "from-file\n").unwrap();
        assert_eq!(
            from(find_token(None, None, None, rt()).unwrap()),
            Some((
                "from-file".into(),
                TokenFrom::File(dir.join("pharos/api-token"))
            ))
        );
        assert_eq!(
            from(find_token(None, Some("env".into()), None, rt()).unwrap()),
            Some(("env".into(), TokenFrom::Env))
        );
        assert_eq!(
            from(find_token(Some("flag".into()), Some("env".into()), None, rt()).unwrap()),
            Some(("flag".into(), TokenFrom::Flag))
        );
        // An empty variable is no token; a --token-file that is not there is an error.
        assert_eq!(
            from(find_token(None, Some(" ".into()), None, rt()).unwrap()).map(|t| t.1),
            Some(TokenFrom::File(dir.join("pharos/api-token")))
        );
        let e = find_token(None, None, Some(dir.join("absent")), rt()).unwrap_err();
        assert!(e.contains("absent"), "{e}");
        let t = find_token(Some("s3cret".into()), None, None, rt()).unwrap();
        assert!(!format!("{t:?}").contains("s3cret"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn server_errors_show_the_json_error_else_the_text() {
        let f = server_error(400, r#"{"error":"bad token `foo` at 12"}"#.into());
        assert_eq!(f.to_string(), "400 Bad Request: bad token `foo` at 12");
        let f = server_error(502, "upstream down".into());
        assert_eq!(f.to_string(), "502 Bad Gateway: upstream down");
        assert_eq!(
            server_error(500, String::new()).to_string(),
            "500 Internal Server Error: (no body)"
        );
    }

    #[test]
    fn a_silent_event_stream_is_a_timeout_error_not_a_hang() {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let _ = s.read(&mut [0u8; 4096]);
            s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n: hi\n\n")
                .unwrap();
            // Silent, the connection open, until the test is done.
            let _ = wait.recv_timeout(Duration::from_secs(20));
        });
        let c = Client::with_stream_silence(base, None, Duration::from_millis(200));
        let mut body = c
            .stream("/api/v1/events")
            .map_err(|f| f.to_string())
            .unwrap();
        let mut text = String::new();
        let e = body.read_to_string(&mut text).unwrap_err();
        assert!(is_timeout(&e), "{e:?}");
        assert_eq!(text, ": hi\n\n");
        done.send(()).unwrap();
        server.join().unwrap();
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(
            segment("00:00:00:00:00:00:00:01"),
            "00:00:00:00:00:00:00:01"
        );
        assert_eq!(segment("drop h1/h2 icmp"), "drop%20h1%2Fh2%20icmp");
        assert_eq!(segment("é"), "%C3%A9");
    }
}
