//! `pharos bench api`: a steady load of REST requests on a controller's API, and the
//! latency each one saw.
//!
//! The load is open-loop: request `j` is due at `start + j / rate` whatever happened to
//! the ones before it, and its latency runs from when it was due, not from when a busy
//! connection got round to sending it. A server that stalls therefore shows its stall in
//! every request queued behind it (no coordinated omission), as a client with a clock
//! would see it. Requests are dealt round-robin to `connections` threads, each with its
//! own keep-alive connection.
//!
//! The load is bounded in count (`rate × duration`) and in time (the run ends at
//! `duration` plus one request timeout, sent or not), and goes to a loopback address
//! only unless the caller allows another: a benchmark is not a way to flood someone
//! else's controller.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::stats::{rounded, Percentiles};

/// What to load and how hard.
#[derive(Debug, Clone)]
pub struct ApiLoadConfig {
    /// The API's base URL, `http://127.0.0.1:8080`.
    pub url: String,
    /// The path requested, `/api/v1/switches`.
    pub path: String,
    /// Requests per second.
    pub rate: f64,
    /// How long the load lasts.
    pub duration: Duration,
    /// Threads, each with its own connection.
    pub connections: usize,
    /// Sent as `Authorization: Bearer TOKEN` when given.
    pub token: Option<String>,
    /// How long one request may take before it counts as timed out.
    pub timeout: Duration,
    /// Allow a host other than loopback.
    pub allow_remote: bool,
}

impl Default for ApiLoadConfig {
    fn default() -> Self {
        ApiLoadConfig {
            url: "http://127.0.0.1:8080".into(),
            path: "/api/v1/switches".into(),
            rate: 1000.0,
            duration: Duration::from_secs(10),
            connections: 4,
            token: None,
            timeout: Duration::from_secs(5),
            allow_remote: false,
        }
    }
}

/// Why the load could not run.
#[derive(Debug, thiserror::Error)]
pub enum ApiLoadError {
    /// A setting out of range.
    #[error("{0}")]
    Config(String),
    /// The URL is not one.
    #[error("{url:?} is not an http URL: {why}")]
    Url { url: String, why: String },
    /// Not loopback, and not allowed.
    #[error(
        "{host} is not a loopback address: `pharos bench api` loads a remote API only with --allow-remote"
    )]
    Remote { host: String },
    /// The first request did not get through at all.
    #[error("cannot reach the API at {url}: {why}")]
    Unreachable { url: String, why: String },
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct ApiLoadReport {
    /// The URL requested.
    pub url: String,
    /// The rate asked for.
    #[serde(serialize_with = "rounded::three")]
    pub rate: f64,
    /// How long the run lasted (from the first request due to the last answer).
    #[serde(serialize_with = "rounded::three")]
    pub elapsed_secs: f64,
    /// Requests sent.
    pub sent: u64,
    /// Answered 2xx.
    pub ok: u64,
    /// The others, by what they got: `"status 503"`, `"timeout"`, `"io: ..."`.
    pub errors: BTreeMap<String, u64>,
    /// Requests due but not sent before the run ended (the client could not keep up).
    pub unsent: u64,
    /// 2xx answers per second.
    #[serde(serialize_with = "rounded::three")]
    pub achieved_rate: f64,
    /// Mean size of a 2xx body, bytes.
    #[serde(serialize_with = "rounded::three")]
    pub mean_body_bytes: f64,
    /// Latency of the 2xx answers, from when each request was due.
    pub latency: Option<Percentiles>,
}

/// What one thread saw.
#[derive(Default)]
struct Tally {
    sent: u64,
    ok: u64,
    unsent: u64,
    body_bytes: u64,
    errors: BTreeMap<String, u64>,
    latencies_ns: Vec<u64>,
}

/// Checks `url` and returns its host; refuses a remote one unless allowed.
fn check_url(url: &str, allow_remote: bool) -> Result<(), ApiLoadError> {
    let bad = |why: &str| ApiLoadError::Url {
        url: url.into(),
        why: why.into(),
    };
    let uri: ureq::http::Uri = url.parse().map_err(|e| bad(&format!("{e}")))?;
    if uri.scheme_str() != Some("http") {
        return Err(bad("only http:// is supported"));
    }
    let host = uri.host().ok_or_else(|| bad("no host"))?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = bare == "localhost"
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback && !allow_remote {
        return Err(ApiLoadError::Remote { host: host.into() });
    }
    Ok(())
}

/// Runs the load (until its end or until `stop` is set) and reports.
pub fn run_api_load(cfg: &ApiLoadConfig, stop: &AtomicBool) -> Result<ApiLoadReport, ApiLoadError> {
    if !(cfg.rate.is_finite() && cfg.rate > 0.0 && cfg.rate <= 1_000_000.0) {
        return Err(ApiLoadError::Config(format!(
            "--rate {}: requests per second must be above 0 and at most 1000000",
            cfg.rate
        )));
    }
    if cfg.connections == 0 || cfg.connections > 256 {
        return Err(ApiLoadError::Config(format!(
            "--connections {}: between 1 and 256",
            cfg.connections
        )));
    }
    check_url(&cfg.url, cfg.allow_remote)?;
    let url = format!("{}{}", cfg.url.trim_end_matches('/'), cfg.path);
    // One request first, outside the measurement: an API that is not there is an
    // error, not a report full of failures.
    if let Err(e) = send(&agent(cfg.timeout), &url, cfg.token.as_deref()) {
        return Err(ApiLoadError::Unreachable {
            url,
            why: e.to_string(),
        });
    }
    let total = (cfg.rate * cfg.duration.as_secs_f64()).round() as u64;
    let start = Instant::now() + Duration::from_millis(10);
    let end = start + cfg.duration + cfg.timeout;
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..cfg.connections)
            .map(|k| {
                let url = url.as_str();
                s.spawn(move || run_connection(cfg, url, k as u64, total, start, end, stop))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a load thread panicked"))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let mut all = Tally::default();
    for t in tallies {
        all.sent += t.sent;
        all.ok += t.ok;
        all.unsent += t.unsent;
        all.body_bytes += t.body_bytes;
        for (k, v) in t.errors {
            *all.errors.entry(k).or_default() += v;
        }
        all.latencies_ns.extend(t.latencies_ns);
    }
    Ok(ApiLoadReport {
        url,
        rate: cfg.rate,
        elapsed_secs: elapsed,
        sent: all.sent,
        ok: all.ok,
        errors: all.errors,
        unsent: all.unsent,
        achieved_rate: all.ok as f64 / elapsed.max(1e-9),
        mean_body_bytes: all.body_bytes as f64 / (all.ok.max(1)) as f64,
        latency: Percentiles::of_ns(&mut all.latencies_ns),
    })
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into()
}

/// One request: its status and body size, or the transport's error.
fn send(agent: &ureq::Agent, url: &str, token: Option<&str>) -> Result<(u16, usize), ureq::Error> {
    let mut req = agent.get(url);
    if let Some(t) = token {
        req = req.header("Authorization", format!("Bearer {t}"));
    }
    let mut resp = req.call()?;
    let status = resp.status().as_u16();
    // Read whole, so the connection can carry the next request.
    let body = resp
        .body_mut()
        .with_config()
        .limit(256 << 20)
        .read_to_vec()?;
    Ok((status, body.len()))
}

/// Thread `k`: requests `k`, `k + connections`, ... each at its due time.
fn run_connection(
    cfg: &ApiLoadConfig,
    url: &str,
    k: u64,
    total: u64,
    start: Instant,
    end: Instant,
    stop: &AtomicBool,
) -> Tally {
    let agent = agent(cfg.timeout);
    let mut t = Tally::default();
    let step = cfg.connections as u64;
    let mut j = k;
    while j < total {
        let due = start + Duration::from_secs_f64(j as f64 / cfg.rate);
        if stop.load(Ordering::Relaxed) || due >= end || Instant::now() >= end {
            t.unsent += (total - j).div_ceil(step);
            break;
        }
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        t.sent += 1;
        match send(&agent, url, cfg.token.as_deref()) {
            Ok((status, bytes)) if (200..300).contains(&status) => {
                t.ok += 1;
                t.body_bytes += bytes as u64;
                let ns = due.elapsed().as_nanos();
                t.latencies_ns.push(u64::try_from(ns).unwrap_or(u64::MAX));
            }
            Ok((status, _)) => *t.errors.entry(format!("status {status}")).or_default() += 1,
            Err(ureq::Error::Timeout(_)) => *t.errors.entry("timeout".into()).or_default() += 1,
            Err(e) => *t.errors.entry(format!("io: {e}")).or_default() += 1,
        }
        j += step;
    }
    t
}

/// The report as people read it.
pub fn print_report(r: &ApiLoadReport) {
    println!("GET {} at {:.0} requests/s", r.url, r.rate);
    println!(
        "  sent {}  ok {}  unsent {}  in {:.2} s  ({:.1} ok/s, {:.0} bytes a body)",
        r.sent, r.ok, r.unsent, r.elapsed_secs, r.achieved_rate, r.mean_body_bytes
    );
    for (what, n) in &r.errors {
        println!("  error {what}: {n}");
    }
    match &r.latency {
        Some(p) => println!(
            "  latency from due time: p50 {:.0} µs  p90 {:.0} µs  p99 {:.0} µs  p99.9 {:.0} µs  max {:.0} µs",
            p.p50_us, p.p90_us, p.p99_us, p.p999_us, p.max_us
        ),
        None => println!("  no request answered 2xx"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_unless_allowed() {
        for ok in [
            "http://127.0.0.1:8080",
            "http://localhost:8080",
            "http://[::1]:8080",
        ] {
            check_url(ok, false).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        let e = check_url("http://10.1.2.3:8080", false).unwrap_err();
        assert!(e.to_string().contains("--allow-remote"), "{e}");
        check_url("http://10.1.2.3:8080", true).unwrap();
        let e = check_url("https://127.0.0.1:8080", false).unwrap_err();
        assert!(e.to_string().contains("only http://"), "{e}");
        assert!(check_url("not a url", false).is_err());
    }

    #[test]
    fn refuses_a_silly_rate_and_an_absent_api() {
        let stop = AtomicBool::new(false);
        let cfg = ApiLoadConfig {
            rate: 0.0,
            ..ApiLoadConfig::default()
        };
        assert!(matches!(
            run_api_load(&cfg, &stop),
            Err(ApiLoadError::Config(_))
        ));
        // A port nobody listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cfg = ApiLoadConfig {
            url: format!("http://127.0.0.1:{port}"),
            timeout: Duration::from_secs(2),
            ..ApiLoadConfig::default()
        };
        let e = run_api_load(&cfg, &stop).unwrap_err();
        assert!(matches!(e, ApiLoadError::Unreachable { .. }), "{e}");
    }

    /// A server on loopback answering `200 ok` to every request on a keep-alive
    /// connection, the second request after a `stall`: its address.
    fn stalling_server(stall: Duration) -> std::net::SocketAddr {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let mut answered = 0u32;
            for conn in l.incoming() {
                let Ok(mut c) = conn else { return };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                loop {
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        answered += 1;
                        // The probe is the first request; the stall hits the load's first.
                        if answered == 2 {
                            std::thread::sleep(stall);
                        }
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if c.write_all(ok).is_err() {
                            break;
                        }
                    }
                    match c.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            }
        });
        at
    }

    #[test]
    fn a_stall_shows_in_every_request_queued_behind_it() {
        // 100 requests/s on one connection for 1 s; the server stalls 300 ms on the
        // first. Requests 0..9 were due within the first 100 ms and answered after
        // 300 ms: counted from when they were due, the slowest tenth is over 200 ms.
        // (Counted from when they were sent, only the first would be slow.)
        let at = stalling_server(Duration::from_millis(300));
        let cfg = ApiLoadConfig {
            url: format!("http://{at}"),
            path: "/x".into(),
            rate: 100.0,
            duration: Duration::from_secs(1),
            connections: 1,
            ..ApiLoadConfig::default()
        };
        let r = run_api_load(&cfg, &AtomicBool::new(false)).unwrap();
        assert_eq!((r.sent, r.ok, r.unsent), (100, 100, 0), "{r:?}");
        assert!(r.errors.is_empty(), "{r:?}");
        assert_eq!(r.mean_body_bytes, 2.0);
        let p = r.latency.expect("latencies");
        assert_eq!(p.samples, 100);
        assert!(
            p.p90_us >= 200_000.0,
            "p90 {} µs: the stall is hidden",
            p.p90_us
        );
        assert!(p.max_us >= 290_000.0, "max {} µs", p.max_us);
        assert!(
            p.p50_us < 100_000.0,
            "p50 {} µs: most came after the stall",
            p.p50_us
        );
    }
}
