//! `pharos ctl`: a client of the REST API of a running `pharos run`.
//!
//! - [`client`]: the API's address, the token (flag, variable, else the file the
//!   controller wrote), one request, and failures in words a user can act on.
//! - [`render`]: the human views (aligned tables, flows in `ovs-ofctl` syntax);
//!   `--json` prints the server's JSON instead, as sent, pretty.
//! - [`sse`]: the event stream's framing, for `events`.
//!
//! Exit status: 0 done, 1 the server refused (its status and its `error` shown as sent)
//! or cannot be reached, 2 a usage error (clap's, a bad `--api`, an unreadable
//! `--token-file`).

mod client;
mod render;
mod sse;

use std::io::{BufReader, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use openflow::Dpid;
use serde_json::{json, Value};

use client::{segment, Client, Failure, TokenFrom};

/// Exit status of a usage error (clap's own).
const EXIT_USAGE: u8 = 2;

const LONG_ABOUT: &str = "\
Talks to a running controller (`pharos run`) through its REST API: lists what it knows \
(switches, ports, flows, hosts, links, apps), changes the network (flows in ovs-ofctl syntax, \
static flows, ports up or down) and follows its events live.

Output is a table for people; --json prints the server's JSON document as it sent it \
(pretty), for scripts and jq.

The API: --api URL, else $PHAROS_API, else http://127.0.0.1:8080 (where `pharos run` \
listens by default).

The token (writes need it; reads need it only when the API is not on loopback or has \
read_auth): --token, else $PHAROS_API_TOKEN, else --token-file, else the file `pharos run` \
writes a generated token to ($XDG_RUNTIME_DIR/pharos/api-token, else ./pharos-api-token). \
It is sent only when found. --token shows the token to other users in `ps`: prefer the \
variable or the file.

Exit status: 0 done; 1 the server refused (its status and error shown as sent) or cannot \
be reached; 2 a usage error.";

const EXAMPLES: &str = "\
Examples:
  pharos ctl switches
  pharos ctl ports 1 --stats
  pharos ctl flows 00:00:00:00:00:00:00:01
  pharos ctl add-flow 1 'priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop'
  pharos ctl del-flows 1 'icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2'
  pharos ctl static add block-h1 1 'priority=200,ip,nw_src=10.0.0.1,actions=drop'
  pharos ctl port 1 2 down
  pharos ctl app stop routing
  pharos ctl app order topology,device_manager,routing
  pharos ctl app load firewall.wasm --name firewall --order advise:5
  pharos ctl events --types switch,link
  pharos ctl --json hosts | jq '.[].mac'";

/// Talk to a running controller through its REST API: switches, ports, flows, hosts,
/// links, apps, static flows, live events.
#[derive(Debug, clap::Args)]
#[command(long_about = LONG_ABOUT, after_help = EXAMPLES)]
pub struct Args {
    /// The API's URL [default: $PHAROS_API, else http://127.0.0.1:8080]
    #[arg(long, global = true, value_name = "URL")]
    api: Option<String>,
    /// The API token [default: $PHAROS_API_TOKEN, else the file `pharos run` wrote]
    #[arg(long, global = true, value_name = "TOKEN")]
    token: Option<String>,
    /// Read the token from this file (the `[api] token_file` the controller was given)
    #[arg(long, global = true, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// Print the server's JSON, as sent (pretty), instead of a table
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Cmd,
}

/// A DPID, read here by the codec's one parser (and sent in its printed form).
const DPID_HELP: &str =
    "The switch: 00:00:00:00:00:00:00:01, 0x1, of:0000000000000001, 0000000000000001 or decimal 1";

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The connected switches
    Switches,
    /// One switch: version, peer, description, features, ports, counters
    Switch {
        #[arg(help = DPID_HELP)]
        dpid: Dpid,
    },
    /// A switch's ports and their state; with --stats, their traffic (PORT_STATS)
    Ports {
        #[arg(help = DPID_HELP)]
        dpid: Dpid,
        /// Ask the switch for its port counters
        #[arg(long)]
        stats: bool,
    },
    /// A switch's flow table (FLOW_STATS), one flow a line in ovs-ofctl syntax
    Flows {
        #[arg(help = DPID_HELP)]
        dpid: Dpid,
        /// Only this table
        #[arg(long, value_name = "N")]
        table: Option<u8>,
        /// The bare flows (no counters, no app), ready for add-flow
        #[arg(long)]
        no_stats: bool,
    },
    /// Adds one flow, in ovs-ofctl syntax; done once the switch has applied it
    #[command(name = "add-flow")]
    AddFlow {
        #[arg(help = DPID_HELP)]
        dpid: Dpid,
        /// The flow: 'priority=100,ip,nw_dst=10.0.0.2,actions=output:2'
        flow: String,
    },
    /// Deletes the flows that match MATCH (every flow when no MATCH)
    #[command(name = "del-flows")]
    DelFlows {
        #[arg(help = DPID_HELP)]
        dpid: Dpid,
        /// A match in ovs-ofctl syntax: 'ip,nw_dst=10.0.0.2'
        #[arg(value_name = "MATCH")]
        matches: Option<String>,
        /// Only the flow with exactly this match (and --priority)
        #[arg(long)]
        strict: bool,
        /// The priority, for --strict
        #[arg(long, value_name = "N")]
        priority: Option<u16>,
        /// Only in this table (a number, or `all`)
        #[arg(long, value_name = "N|all")]
        table: Option<String>,
        /// Only flows that output to this port
        #[arg(long, value_name = "PORT")]
        out_port: Option<u32>,
    },
    /// Static flows: named flows the controller keeps and installs when their switch connects
    #[command(subcommand)]
    Static(StaticCmd),
    /// The hosts the device manager tracks
    Hosts,
    /// The links topology discovery found (a cable shows as two, one each way)
    Links,
    /// Switches, links and hosts in one view
    Topology,
    /// The app pipeline: order, state, dependencies, handlers and their time
    Apps,
    /// Apps while the controller runs: start, stop, restart, re-order, load, unload
    #[command(subcommand)]
    App(AppCmd),
    /// The controller: version, uptime, workers, listen addresses, counters
    Controller,
    /// Follows the controller's events live, one a line, until interrupted
    Events {
        /// Only these kinds: switch, port, link, host, app (comma-separated)
        #[arg(long, value_delimiter = ',', value_name = "TYPES")]
        types: Vec<String>,
    },
    /// The path routing takes between two switches or hosts
    Paths {
        /// A dpid or a host's MAC address
        src: String,
        /// A dpid or a host's MAC address
        dst: String,
    },
    /// Sets a port administratively up or down (PORT_MOD)
    Port {
        #[arg(help = DPID_HELP)]
        dpid: Dpid,
        /// The port number, or its name
        port: String,
        state: UpDown,
    },
    /// Whether the API answers
    Health,
}

#[derive(Debug, Subcommand)]
enum StaticCmd {
    /// Every static flow and its status
    List,
    /// One static flow
    Show { name: String },
    /// Adds a static flow (refused if NAME exists, unless --replace)
    Add {
        name: String,
        #[arg(help = DPID_HELP)]
        dpid: Dpid,
        /// The flow, in ovs-ofctl syntax
        flow: String,
        /// Replace a static flow of the same name
        #[arg(long)]
        replace: bool,
    },
    /// Deletes a static flow (and removes it from its switch)
    Del { name: String },
}

#[derive(Debug, Subcommand)]
enum AppCmd {
    /// The apps: order, state, dependencies, handlers and their time (as `apps`)
    List,
    /// Starts an app: its initializers run on every connected switch (a quarantined
    /// app is restarted)
    Start { name: String },
    /// Stops an app: its handlers, timers and state leave every switch, its flows are
    /// deleted; refused while running apps require it, unless --cascade
    Stop {
        name: String,
        /// Stop the apps that require it too (dependents first)
        #[arg(long)]
        cascade: bool,
    },
    /// Stops and starts an app: fresh state, quarantine cleared
    Restart { name: String },
    /// Sets the app order: every app, comma-separated (a,b,c)
    Order {
        #[arg(value_delimiter = ',', required = true)]
        names: Vec<String>,
    },
    /// Loads an app from a WebAssembly component and starts it
    Load {
        /// The module (.wasm)
        file: PathBuf,
        /// The app's name
        #[arg(long)]
        name: String,
        /// Where its handlers run: PHASE:NUMBER, the phase advise, direct or observe
        #[arg(long, value_name = "ORDER", default_value = "direct:0")]
        order: String,
        /// Its parameters, as JSON
        #[arg(long, value_name = "JSON")]
        params: Option<String>,
    },
    /// Stops and deletes an app that was loaded
    Unload { name: String },
    /// Replaces a loaded app with a new module, in place
    Reload {
        name: String,
        /// The module (.wasm)
        file: PathBuf,
        /// Where its handlers run: PHASE:NUMBER, the phase advise, direct or observe
        #[arg(long, value_name = "ORDER", default_value = "direct:0")]
        order: String,
        /// Its parameters, as JSON
        #[arg(long, value_name = "JSON")]
        params: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum UpDown {
    Up,
    Down,
}

/// Why a command stopped.
enum Stop {
    /// The request failed (exit 1).
    Failed(Failure),
    /// Standard output went away, or could not be written.
    Output(std::io::Error),
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Stop {
        Stop::Failed(f)
    }
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        Stop::Output(e)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let given = args
        .api
        .clone()
        .or_else(|| std::env::var("PHAROS_API").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| client::DEFAULT_API.to_string());
    let base = match client::base_url(&given) {
        Ok(b) => b,
        Err(e) => return Ok(usage(&format!("--api: {e}"))),
    };
    let token = match client::find_token(
        args.token.clone(),
        std::env::var(api::auth::TOKEN_ENV).ok(),
        args.token_file.clone(),
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
    ) {
        Ok(t) => t,
        Err(e) => return Ok(usage(&format!("--token-file: {e}"))),
    };
    let c = Client::new(base, token);
    match command(&c, &args) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(Stop::Output(e)) => Err(e.into()),
        Err(Stop::Failed(f)) => {
            // With --json the server's error document goes to standard output too, as
            // any answer does, for scripts.
            if let (true, Failure::Server { body, .. }) = (args.json, &f) {
                if let Ok(doc) = serde_json::from_str::<Value>(body) {
                    print_json(&doc)?;
                }
            }
            eprintln!("pharos ctl: {f}");
            if let Some(hint) = auth_hint(&c, &f).or_else(|| hint(&args.command, &f)) {
                eprintln!("{hint}");
            }
            Ok(ExitCode::from(f.exit_code()))
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("pharos ctl: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// After a 401 or 403, where the token was looked for or came from.
fn auth_hint(c: &Client, f: &Failure) -> Option<String> {
    let Failure::Server { status, .. } = f else {
        return None;
    };
    match (status, &c.token) {
        (401, None) => Some(format!(
            "no token was found: give --token, set {}, or run where the controller's token file is ({} was not there; the controller's log names its file)",
            api::auth::TOKEN_ENV,
            client::default_token_file().display()
        )),
        (403, Some(t)) => Some(format!(
            "the token sent came from {}",
            match &t.from {
                TokenFrom::Flag => "--token".to_string(),
                TokenFrom::Env => api::auth::TOKEN_ENV.to_string(),
                TokenFrom::File(p) => p.display().to_string(),
            }
        )),
        _ => None,
    }
}

/// What to do after a refusal the command line can fix.
fn hint(command: &Cmd, f: &Failure) -> Option<String> {
    let Failure::Server { status, .. } = f else {
        return None;
    };
    match (command, status) {
        (
            Cmd::Static(StaticCmd::Add {
                name,
                replace: false,
                ..
            }),
            409,
        ) => Some(format!(
            "`pharos ctl static add {name} ... --replace` replaces it"
        )),
        (
            Cmd::App(AppCmd::Stop {
                name,
                cascade: false,
            }),
            409,
        ) => Some(format!(
            "`pharos ctl app stop {name} --cascade` stops the apps that require it too"
        )),
        _ => None,
    }
}

/// Prints `text` (a view, ending in a newline) or, with `--json`, `doc` pretty.
fn show(json: bool, doc: &Value, view: impl FnOnce(&Value) -> String) -> Result<(), Stop> {
    if json {
        return Ok(print_json(doc)?);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(view(doc).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `doc` pretty, on standard output.
fn print_json(doc: &Value) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, doc)?;
    writeln!(out)?;
    out.flush()
}

fn switch_path(dpid: &Dpid) -> String {
    format!("/api/v1/switches/{}", segment(&dpid.to_string()))
}

fn command(c: &Client, args: &Args) -> Result<(), Stop> {
    let json = args.json;
    let get = |path: &str| c.call("GET", path, None);
    match &args.command {
        Cmd::Switches => show(json, &get("/api/v1/switches")?, render::switches),
        Cmd::Switch { dpid } => show(json, &get(&switch_path(dpid))?, render::switch),
        Cmd::Ports { dpid, stats: true } => show(
            json,
            &get(&format!("{}/ports?stats=true", switch_path(dpid)))?,
            render::ports,
        ),
        // The switch's own document has its ports, and needs no trip to the switch.
        Cmd::Ports { dpid, stats: false } => show(json, &get(&switch_path(dpid))?, render::ports),
        Cmd::Flows {
            dpid,
            table,
            no_stats,
        } => {
            let query = table.map_or_else(String::new, |t| format!("?table={t}"));
            let doc = get(&format!("{}/flows{query}", switch_path(dpid)))?;
            show(json, &doc, |v| render::flows(v, !no_stats))?;
            // On standard error, so that standard output stays one flow a line.
            if let Some(note) = render::unreadable_flows(&doc).filter(|_| !json) {
                eprint!("{note}");
            }
            Ok(())
        }
        Cmd::AddFlow { dpid, flow } => {
            let path = format!("{}/flows", switch_path(dpid));
            let doc = c.call("POST", &path, Some(&json!({ "flow": flow })))?;
            show(json, &doc, |v| {
                format!("added: {}\n", render::field(v, "flow"))
            })
        }
        Cmd::DelFlows {
            dpid,
            matches,
            strict,
            priority,
            table,
            out_port,
        } => {
            // An empty MATCH ('') is no match: every flow (of --table, --out-port).
            let matches = matches.as_deref().filter(|m| !m.trim().is_empty());
            let body = del_flows_body(matches, *strict, *priority, table, *out_port);
            let path = format!("{}/flows", switch_path(dpid));
            let doc = c.call("DELETE", &path, body.as_ref())?;
            show(json, &doc, |_| match matches {
                Some(m) => format!("deleted the flows matching {m}\n"),
                None => "deleted every flow\n".to_string(),
            })
        }
        Cmd::Static(s) => static_command(c, json, s),
        Cmd::Hosts => show(json, &get("/api/v1/hosts")?, render::hosts),
        Cmd::Links => show(json, &get("/api/v1/links")?, render::links),
        Cmd::Topology => show(json, &get("/api/v1/topology")?, render::topology),
        Cmd::Apps => show(json, &get("/api/v1/apps")?, render::apps),
        Cmd::App(a) => app_command(c, json, a),
        Cmd::Controller => show(json, &get("/api/v1/controller")?, render::controller),
        Cmd::Events { types } => events(c, json, types),
        Cmd::Paths { src, dst } => {
            let path = format!("/api/v1/paths/{}/{}", segment(src), segment(dst));
            show(json, &get(&path)?, render::path)
        }
        Cmd::Port { dpid, port, state } => {
            let up = matches!(state, UpDown::Up);
            let path = format!("{}/ports/{}", switch_path(dpid), segment(port));
            let doc = c.call("POST", &path, Some(&json!({ "up": up })))?;
            show(json, &doc, |v| {
                format!(
                    "PORT_MOD sent: switch {} port {} {} (the port list shows it once the switch confirms)\n",
                    render::field(v, "dpid"),
                    render::field(v, "port"),
                    if up { "up" } else { "down" }
                )
            })
        }
        Cmd::Health => {
            let doc = get("/api/v1/healthz")?;
            show(json, &doc, |v| {
                format!("{} ({})\n", render::field(v, "status"), c.base)
            })
        }
    }
}

/// The body of `DELETE .../flows`: none when nothing narrows it (every flow goes).
fn del_flows_body(
    matches: Option<&str>,
    strict: bool,
    priority: Option<u16>,
    table: &Option<String>,
    out_port: Option<u32>,
) -> Option<Value> {
    let mut body = serde_json::Map::new();
    if let Some(m) = matches {
        body.insert("match".into(), json!(m));
    }
    if strict {
        body.insert("strict".into(), json!(true));
    }
    if let Some(p) = priority {
        body.insert("priority".into(), json!(p));
    }
    // A table number where one is given, else the word (`all`) as it is.
    if let Some(t) = table {
        let t = t.parse::<u8>().map_or_else(|_| json!(t), |n| json!(n));
        body.insert("table".into(), t);
    }
    if let Some(p) = out_port {
        body.insert("out_port".into(), json!(p));
    }
    (!body.is_empty()).then_some(Value::Object(body))
}

fn static_command(c: &Client, json: bool, s: &StaticCmd) -> Result<(), Stop> {
    let one = |name: &str| format!("/api/v1/static_flows/{}", segment(name));
    match s {
        StaticCmd::List => show(
            json,
            &c.call("GET", "/api/v1/static_flows", None)?,
            render::static_flows,
        ),
        StaticCmd::Show { name } => {
            show(json, &c.call("GET", &one(name), None)?, render::static_flow)
        }
        StaticCmd::Add {
            name,
            dpid,
            flow,
            replace,
        } => {
            let mut body = json!({ "name": name, "dpid": dpid.to_string(), "flow": flow });
            if *replace {
                body["replace"] = json!(true);
            }
            let doc = c.call("POST", "/api/v1/static_flows", Some(&body))?;
            show(json, &doc, render::static_flow)
        }
        StaticCmd::Del { name } => {
            let doc = c.call("DELETE", &one(name), None)?;
            show(json, &doc, |v| render::static_flow_deleted(name, v))
        }
    }
}

fn app_command(c: &Client, json: bool, a: &AppCmd) -> Result<(), Stop> {
    let one = |name: &str, what: &str| format!("/api/v1/apps/{}/{what}", segment(name));
    let doc = match a {
        AppCmd::List => return show(json, &c.call("GET", "/api/v1/apps", None)?, render::apps),
        AppCmd::Start { name } => c.call("POST", &one(name, "start"), None)?,
        AppCmd::Stop { name, cascade } => {
            let query = if *cascade { "?cascade=true" } else { "" };
            c.call("POST", &format!("{}{query}", one(name, "stop")), None)?
        }
        AppCmd::Restart { name } => c.call("POST", &one(name, "restart"), None)?,
        AppCmd::Order { names } => {
            let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
            c.call("PUT", "/api/v1/apps/order", Some(&json!(names)))?
        }
        AppCmd::Load {
            file,
            name,
            order,
            params,
        } => {
            let module = read_module(file)?;
            let path = format!("/api/v1/apps?{}", load_query(Some(name), order, params));
            c.upload("POST", &path, &module)?
        }
        AppCmd::Unload { name } => {
            c.call("DELETE", &format!("/api/v1/apps/{}", segment(name)), None)?
        }
        AppCmd::Reload {
            name,
            file,
            order,
            params,
        } => {
            let module = read_module(file)?;
            let path = format!(
                "/api/v1/apps/{}?{}",
                segment(name),
                load_query(None, order, params)
            );
            c.upload("PUT", &path, &module)?
        }
    };
    show(json, &doc, render::app_change)
}

/// The query of `POST /apps` and `PUT /apps/{name}`.
fn load_query(name: Option<&str>, order: &str, params: &Option<String>) -> String {
    let mut q = Vec::new();
    if let Some(n) = name {
        q.push(format!("name={}", segment(n)));
    }
    q.push(format!("order={}", segment(order)));
    if let Some(p) = params {
        q.push(format!("params={}", segment(p)));
    }
    q.join("&")
}

/// A module file's bytes; an unreadable file is a refusal naming it.
fn read_module(file: &std::path::Path) -> Result<Vec<u8>, Stop> {
    std::fs::read(file).map_err(|e| {
        Stop::Failed(Failure::Usage(format!(
            "cannot read {}: {e}",
            file.display()
        )))
    })
}

/// Prints the event stream as it comes, until the server ends it (an error: the
/// controller went away) or the user interrupts.
fn events(c: &Client, json: bool, types: &[String]) -> Result<(), Stop> {
    let types: Vec<&str> = types
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let path = if types.is_empty() {
        "/api/v1/events".to_string()
    } else {
        format!(
            "/api/v1/events?types={}",
            segment(&types.join(",")).replace("%2C", ",")
        )
    };
    let body = c.stream(&path)?;
    let mut out = std::io::stdout();
    for event in sse::Events::new(BufReader::new(body)) {
        let event = event.map_err(|e| Failure::Unreachable {
            url: c.base.clone(),
            reason: if client::is_timeout(&e) {
                format!(
                    "the event stream was silent for {} s, heartbeats included: the connection is lost",
                    client::STREAM_SILENCE.as_secs()
                )
            } else {
                format!("the event stream broke: {e}")
            },
        })?;
        let line = if json {
            // One JSON document a line (JSON Lines), for `jq` and scripts.
            let data = serde_json::from_str::<Value>(&event.data).unwrap_or(json!(event.data));
            json!({ "event": event.kind, "data": data }).to_string()
        } else {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            render::event(now, &event.kind, &event.data)
        };
        let mut lock = out.lock();
        writeln!(lock, "{line}")?;
        lock.flush()?;
    }
    out.flush()?;
    Err(Stop::Failed(Failure::Unreachable {
        url: c.base.clone(),
        reason: "the event stream ended (the controller stopped?)".into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn del_flows_sends_no_body_for_every_flow_and_only_what_was_given() {
        assert_eq!(del_flows_body(None, false, None, &None, None), None);
        assert_eq!(
            del_flows_body(
                Some("ip,nw_dst=10.0.0.2"),
                true,
                Some(100),
                &Some("all".into()),
                Some(2)
            ),
            Some(
                json!({"match": "ip,nw_dst=10.0.0.2", "strict": true, "priority": 100, "table": "all", "out_port": 2})
            )
        );
        assert_eq!(
            del_flows_body(None, false, None, &Some("3".into()), None),
            Some(json!({"table": 3}))
        );
    }
}
