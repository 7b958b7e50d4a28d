//! `pharos bench api`: a steady rate of GET requests at the REST API.

use std::process::ExitCode;

use super::{seconds, stop_on_signals};

/// Load a controller's REST API with a steady rate of GET requests and report latency
///
/// Open-loop: request j is due at j/RATE seconds whatever became of the ones before, and
/// its latency counts from when it was due, so a stall of the server shows in every
/// request behind it. Requests are dealt round-robin to --connections threads, each with
/// a keep-alive connection. Bounded in count (RATE x DURATION) and time; loopback only
/// unless --allow-remote. Run it beside `pharos bench controller` to see what API
/// traffic costs the switches.
#[derive(Debug, clap::Args)]
pub struct ApiArgs {
    /// The API's base URL
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    api: String,
    /// The path requested
    #[arg(long, default_value = "/api/v1/switches")]
    path: String,
    /// Requests per second
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// Seconds of load
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    duration: f64,
    /// Threads, each with its own connection
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Seconds one request may take
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    timeout: f64,
    /// Sent as a bearer token (else PHAROS_API_TOKEN, if set; reads on loopback need none)
    #[arg(long)]
    token: Option<String>,
    /// Allow an API that is not on a loopback address
    #[arg(long)]
    allow_remote: bool,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub(super) fn run(a: ApiArgs) -> anyhow::Result<ExitCode> {
    let cfg = bench::api_load::ApiLoadConfig {
        url: a.api,
        path: a.path,
        rate: a.rate,
        duration: seconds(a.duration, "--duration")?,
        connections: a.connections,
        token: a.token.or_else(|| {
            std::env::var("PHAROS_API_TOKEN")
                .ok()
                .filter(|t| !t.is_empty())
        }),
        timeout: seconds(a.timeout, "--timeout")?,
        allow_remote: a.allow_remote,
    };
    let stop = stop_on_signals()?;
    let report = bench::api_load::run_api_load(&cfg, &stop)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        bench::api_load::print_report(&report);
    }
    Ok(if report.ok == report.sent && report.unsent == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
