//! `pharos run`: the controller.
//!
//! With no arguments it listens on 0.0.0.0:6653 and 0.0.0.0:6633 and runs topology
//! discovery, host tracking and shortest-path routing (`topology`, `device_manager`,
//! `routing`), which serve any network, loops included; `--apps learning_switch` is the
//! classic mode. The `static_flows` app always runs too, last (its initializer must
//! follow the ones that empty the flow table), installing the flows of `[static_flows]`
//! and of its state file on each switch that connects. The REST API (`pharos-api`) listens on 127.0.0.1:8080 unless `--api`
//! or `[api] listen` says otherwise (`off`: none). Settings come from the defaults, then
//! `--config FILE` (see `pharos.toml` in the repository for every key), then the flags,
//! each overriding the one before.
//!
//! A configuration that is refused (a bad key, value or app name, in the file or on the
//! command line) ends the process with exit status 2 and a message naming the key and
//! the reason. Ctrl-C or SIGTERM shuts down cleanly through `Handle::shutdown` (switches
//! closed, switch-removed events fired, threads joined, apps stopped); a second one
//! during shutdown ends the process at once.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context as _;
use controller::config::{self, AppConfig, Config, ConfigError};
use controller::controller::Controller;
use controller::host::AppHost;
use controller::services::Services;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use tracing_subscriber::EnvFilter;

/// Exit status for a configuration that is refused.
pub const EXIT_CONFIG: u8 = 2;

/// Run the controller (by default: topology, device_manager and routing on ports 6653
/// and 6633) until Ctrl-C or SIGTERM.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to accept switches on; repeat for several [default: 0.0.0.0:6653 and
    /// 0.0.0.0:6633]
    #[arg(long = "listen", value_name = "ADDR:PORT")]
    pub listen: Vec<SocketAddr>,
    /// The controller's certificate (PEM): every --listen address then speaks TLS
    /// only, with --tls-key and --tls-client-ca (switches must present a certificate
    /// signed by it); for TLS on some ports only, or without client certificates, use
    /// `[[listen]]` entries in the --config file
    #[arg(long, value_name = "FILE", requires_all = ["listen", "tls_key", "tls_client_ca"])]
    pub tls_cert: Option<PathBuf>,
    /// The controller's private key (PEM) for --tls-cert
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The CA certificate (PEM) the switches' certificates must be signed by
    /// (--tls-cert)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// Worker threads, each serving its own switches (at most 4 per core) [default: one
    /// per core]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub workers: Option<usize>,
    /// Apps to run, in order, comma-separated (device_manager, hub, learning_switch,
    /// routing, topology) [default: topology,device_manager,routing]
    #[arg(long, value_name = "APP,...", value_delimiter = ',')]
    pub apps: Option<Vec<String>>,
    /// Log filter: a level (error, warn, info, debug, trace, off; `warning` is taken for
    /// warn) or tracing directives (`controller=debug,info`); overrides RUST_LOG and the
    /// file's `log_level`
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
    /// Where the REST API listens, or `off` for none [default: 127.0.0.1:8080]
    #[arg(long = "api", value_name = "ADDR|off")]
    pub api: Option<String>,
    /// Settings file (TOML); the flags override it
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A WebAssembly app to run after the --apps (repeat for several): NAME=FILE.wasm,
    /// or NAME@ORDER=FILE.wasm with ORDER advise:N, direct:N or observe:N [default
    /// order: direct:0]
    #[arg(long = "wasm-app", value_name = "NAME[@ORDER]=FILE")]
    pub wasm_apps: Vec<String>,
    /// The parameters of a --wasm-app, as JSON: NAME=JSON (repeat for several)
    #[arg(long = "wasm-params", value_name = "NAME=JSON")]
    pub wasm_params: Vec<String>,
}

/// The `--wasm-app`s, loaded (sandboxed, see `pharos-wasm`) in the order given.
pub fn wasm_apps(
    args: &Args,
    loader: &wasm::WasmLoader,
) -> Result<Vec<wasm::WasmApp>, ConfigError> {
    let refuse = |reason: String| ConfigError::new("--wasm-app", reason);
    let mut params = std::collections::HashMap::new();
    for p in &args.wasm_params {
        let (name, json) = p.split_once('=').ok_or_else(|| {
            ConfigError::new("--wasm-params", format!("{p:?}: expected NAME=JSON"))
        })?;
        params.insert(name.trim(), json);
    }
    let mut loaded = Vec::new();
    for a in &args.wasm_apps {
        let (head, file) = a.split_once('=').ok_or_else(|| {
            refuse(format!(
                "{a:?}: expected NAME=FILE.wasm or NAME@ORDER=FILE.wasm"
            ))
        })?;
        let (name, order) = match head.split_once('@') {
            Some((name, order)) => (name, order.parse().map_err(refuse)?),
            None => (head, controller::app::Order::direct(0)),
        };
        let module = std::fs::read(file).map_err(|e| refuse(format!("{file}: {e}")))?;
        let spec = controller::host::LoadSpec {
            name: name.trim().to_string(),
            order,
            params_json: params.remove(name.trim()).unwrap_or("{}").to_string(),
        };
        loaded.push(loader.load_wasm(&spec, &module).map_err(refuse)?);
    }
    if let Some(name) = params.keys().next() {
        return Err(ConfigError::new(
            "--wasm-params",
            format!("{name}: no --wasm-app of that name"),
        ));
    }
    Ok(loaded)
}

/// The settings `args` describe: defaults, then the file, then the flags; validated,
/// apps checked (names, parameters, and the set as a whole: an app missing what it needs
/// is refused).
///
/// Each error points where the user can fix it: a value from the file by file, line and
/// key; a value from a flag by the flag.
pub fn effective_config(args: &Args) -> Result<Config, ConfigError> {
    let file = match &args.config {
        Some(path) => Some((path, config::read_file(path)?)),
        None => None,
    };
    let mut config = match &file {
        Some((path, text)) => {
            let c = Config::from_toml_str(text).map_err(|e| e.in_file(path, text))?;
            check_apps(c.app_list()).map_err(|e| e.in_file(path, text))?;
            c
        }
        None => Config::default(),
    };
    if !args.listen.is_empty() {
        let tls = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(config::TlsSettings {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: args.tls_client_ca.clone(),
                client_auth: config::ClientAuth::Required,
            }),
            _ => None,
        };
        config.listen = args
            .listen
            .iter()
            .map(|&addr| config::ListenEntry {
                addr,
                tls: tls.clone(),
            })
            .collect();
    }
    if let Some(n) = args.workers {
        config.workers = n;
    }
    if let Some(names) = &args.apps {
        // An app also configured in the file keeps its parameters from there.
        config.apps = Some(names
            .iter()
            .map(|name| {
                let name = name.trim();
                if name.is_empty() {
                    return Err(ConfigError::new(
                        "--apps",
                        format!(
                            "an empty app name in {:?}: the apps are separated by single commas, e.g. --apps topology,device_manager,routing",
                            names.join(",")
                        ),
                    ));
                }
                if name == apps::static_flows::NAME {
                    return Err(ConfigError::new("--apps", static_flows_listed()));
                }
                match config.app_list().iter().find(|a| a.name == name) {
                    Some(a) => Ok(a.clone()),
                    None if apps::NAMES.contains(&name) => Ok(AppConfig::named(name)),
                    None => Err(ConfigError::new(
                        "--apps",
                        config::unknown_app(name, apps::NAMES),
                    )),
                }
            })
            .collect::<Result<_, _>>()?);
    }
    // None named, in the file or the flags: the default set (the core knows no app by
    // name; the set lives here, with the apps).
    if config.apps.is_none() {
        config.apps = Some(
            apps::DEFAULT_APPS
                .iter()
                .map(|a| AppConfig::named(a))
                .collect(),
        );
    }
    if let Some(level) = &args.log_level {
        config.log_level = level.clone();
    }
    if let Some(api) = &args.api {
        config.api.listen =
            config::api_listen::parse(api).map_err(|reason| ConfigError::new("--api", reason))?;
    }
    config.validate().map_err(|e| {
        // The file passed; a flag made it wrong: name the flag.
        let flag = match e.key.split(['.', '[']).next() {
            Some("workers") => "--workers",
            Some("listen") => "--listen",
            Some("log_level") => "--log-level",
            Some("apps") => "--apps",
            _ => {
                return ConfigError {
                    reason: format!("{} (after the command-line flags)", e.reason),
                    ..e
                }
            }
        };
        ConfigError {
            key: flag.to_string(),
            ..e
        }
    })?;
    // The TLS files are read now: a missing or bad one is refused before anything
    // starts, naming the flag or the file's key.
    config.check_tls().map_err(|e| {
        if args.tls_cert.is_some() {
            let flag = match e.key.rsplit('.').next() {
                Some("key") => "--tls-key",
                Some("client_ca") => "--tls-client-ca",
                _ => "--tls-cert",
            };
            return ConfigError::new(flag, e.reason);
        }
        match &file {
            Some((path, text)) => {
                // A key that is missing (`client_ca`) is reported at its table's line.
                let mut parent = e.key.as_str();
                let mut line = None;
                while line.is_none() {
                    line = config::line_of_key(text, parent);
                    match parent.rsplit_once('.') {
                        Some((p, _)) => parent = p,
                        None => break,
                    }
                }
                ConfigError { line, ..e }.in_file(path, text)
            }
            None => e,
        }
    })?;
    let names: Vec<&str> = config.app_list().iter().map(|a| a.name.as_str()).collect();
    if let Err(reason) = apps::check_set(&names) {
        return Err(match (&args.apps, &file) {
            (None, Some((path, text))) => ConfigError::new("apps", reason).in_file(path, text),
            (None, None) => ConfigError::new("apps", reason),
            (Some(_), _) => ConfigError::new("--apps", reason),
        });
    }
    Ok(config)
}

/// Checks each app's name and parameters (`apps[i].name`, `apps[i].params.KEY`).
fn check_apps(list: &[AppConfig]) -> Result<(), ConfigError> {
    for (i, a) in list.iter().enumerate() {
        if a.name == apps::static_flows::NAME {
            return Err(ConfigError::new(
                format!("apps[{i}].name"),
                static_flows_listed(),
            ));
        }
        if !apps::NAMES.contains(&a.name.as_str()) {
            return Err(ConfigError::new(
                format!("apps[{i}].name"),
                config::unknown_app(&a.name, apps::NAMES),
            ));
        }
        if let Err(e) = apps::by_name(&a.name, &a.params) {
            let key = match &e.param {
                Some(p) => format!("apps[{i}].params.{p}"),
                None => format!("apps[{i}].params"),
            };
            return Err(ConfigError::new(key, format!("{}: {}", a.name, e.reason)));
        }
    }
    Ok(())
}

/// The apps of `config`, built with their parameters; an app refusing its parameters
/// is a configuration error on `apps[i].params`.
pub fn build_apps(config: &Config) -> Result<Vec<Box<dyn controller::app::AnyApp>>, ConfigError> {
    config
        .app_list()
        .iter()
        .enumerate()
        .map(|(i, a)| {
            apps::by_name(&a.name, &a.params)
                .map_err(|e| ConfigError::new(format!("apps[{i}].params"), e.to_string()))
        })
        .collect()
}

/// The `static_flows` app over the flows of the file (`[[static_flows.flow]]`) and of
/// the state file; a state file that cannot be read or parsed is an error naming it.
pub fn static_flows_app(
    config: &Config,
) -> Result<apps::static_flows::StaticFlowsApp, apps::static_flows::LoadError> {
    let path = config.static_flows.state_file();
    let store = apps::static_flows::StaticFlows::open(&path, &config.static_flows.flow)?;
    Ok(apps::static_flows::StaticFlowsApp::new(Arc::new(store)))
}

/// Why `static_flows` is not an app to list.
fn static_flows_listed() -> String {
    format!(
        "{} always runs, after every listed app; do not list it (its flows are set in [static_flows] and through the REST API)",
        apps::static_flows::NAME
    )
}

/// The log filter: `--log-level`, else RUST_LOG, else the file's `log_level`.
fn log_filter(args: &Args, config: &Config) -> Result<EnvFilter, ConfigError> {
    let (key, text) = match (&args.log_level, std::env::var("RUST_LOG")) {
        (Some(flag), _) => ("--log-level", flag.clone()),
        (None, Ok(env)) if !env.trim().is_empty() => ("RUST_LOG", env),
        _ => ("log_level", config.log_level.clone()),
    };
    let checked = config::log_filter(&text).map_err(|reason| ConfigError::new(key, reason))?;
    EnvFilter::try_new(&checked).map_err(|e| {
        ConfigError::new(
            key,
            format!("{text:?} is not a log filter ({e}): use e.g. \"info\" or \"controller=debug,info\""),
        )
    })
}

/// Says why the controller or the API could not start listening; the exit code: 2 for
/// an address that cannot be listened on (the user's to change), else 1.
fn listen_failed(e: &std::io::Error) -> ExitCode {
    eprintln!("pharos run: {e}");
    match e.kind() {
        ErrorKind::AddrInUse | ErrorKind::AddrNotAvailable | ErrorKind::PermissionDenied => {
            ExitCode::from(EXIT_CONFIG)
        }
        _ => ExitCode::FAILURE,
    }
}

/// `pharos run`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = match effective_config(&args) {
        Ok(c) => c,
        Err(e) => return Ok(refuse(&e)),
    };
    let filter = match log_filter(&args, &config) {
        Ok(f) => f,
        Err(e) => return Ok(refuse(&e)),
    };
    // Colours only on a terminal: redirected logs stay plain text.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let mut apps = match build_apps(&config) {
        Ok(a) => a,
        Err(e) => return Ok(refuse(&e)),
    };
    let mut names: Vec<&str> = config.app_list().iter().map(|a| a.name.as_str()).collect();
    for warning in apps::check_set(&names).unwrap_or_default() {
        tracing::warn!("{warning}");
    }
    // WebAssembly apps: loaded now (a bad module refuses the start), added to the
    // app host once it is built, as `pharos ctl app load` would (so they can be
    // unloaded and reloaded like any loaded app).
    let loader = Arc::new(wasm::WasmLoader::default());
    let wasm_apps = match wasm_apps(&args, &loader) {
        Ok(loaded) => loaded,
        Err(e) => return Ok(refuse(&e)),
    };
    // Static flows always run, last: switch initializers run in app order, and the
    // forwarding apps' empty the flow table.
    let static_flows = match static_flows_app(&config) {
        Ok(app) => {
            let store = Arc::clone(app.store());
            apps.push(Box::new(app));
            store
        }
        Err(e) => {
            eprintln!("pharos run: cannot start: {e}");
            return Ok(ExitCode::from(EXIT_CONFIG));
        }
    };
    names.push(apps::static_flows::NAME);
    let core = match AppHost::build(apps, Services::new()) {
        Ok(core) => core,
        // The set was checked, so this is an app's own failure: said once, here.
        Err(e) => {
            eprintln!("pharos run: cannot start the apps: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    // `POST /api/v1/apps` and `pharos ctl app load` load WebAssembly apps (the same
    // loader as --wasm-app's: one engine, one epoch ticker).
    core.apps.set_loader(loader);
    // The --wasm-apps, before static flows (which stays last in the app order).
    for app in wasm_apps {
        let name = controller::app::App::name(&app);
        let before_static_flows = Some(names.len() - 1);
        if let Err(e) = core.apps.add_app(Box::new(app), before_static_flows) {
            eprintln!("pharos run: cannot start the WebAssembly app {name}: {e}");
            core.apps.stop();
            return Ok(ExitCode::FAILURE);
        }
        names.insert(names.len() - 1, name);
    }
    // Signals are caught from here on: a Ctrl-C during start-up still shuts down cleanly.
    let mut signals = Signals::new([SIGINT, SIGTERM]).context("installing signal handlers")?;
    // The token is read (or made) before anything listens: a bad token file is a
    // configuration error, and no switch should connect to a controller about to refuse.
    let token = match &config.api.listen {
        Some(_) => match api_token(&args, &config) {
            Ok(t) => Some(t),
            Err(e) => {
                core.apps.stop();
                return Ok(refuse(&e));
            }
        },
        None => None,
    };
    // HTTPS: the certificate and key are read before anything listens, as the token is.
    let api_tls = match (&config.api.listen, &config.api.tls) {
        (Some(_), Some(t)) => match api::tls::server_config(&t.cert, &t.key) {
            Ok(c) => Some(c),
            Err(e) => {
                core.apps.stop();
                let e = ConfigError::new(e.key, e.reason);
                let e = match &args.config {
                    Some(path) => match config::read_file(path) {
                        Ok(text) => e.in_file(path, &text),
                        Err(_) => e,
                    },
                    None => e,
                };
                return Ok(refuse(&e));
            }
        },
        _ => None,
    };
    fd_limit_for(config.max_connections);
    let handle = match Controller::start(&config.net(), Arc::clone(&core.dispatcher)) {
        Ok(h) => Arc::new(h),
        Err(e) => {
            core.apps.stop();
            return Ok(listen_failed(&e));
        }
    };
    let api = match (config.api.listen, token) {
        (Some(listen), Some(token)) => {
            let settings = api::Settings {
                listen,
                token,
                read_auth: config.api.read_auth,
                switch_timeout: config.api.switch_timeout,
                tls: api_tls,
            };
            match api::Server::start(settings, api::Core::new(&core, Arc::clone(&handle))) {
                Ok(server) => {
                    let scheme = if config.api.tls.is_some() {
                        "https"
                    } else {
                        "http"
                    };
                    tracing::info!("REST API on {scheme}://{}/api/v1", server.local_addr());
                    Some(server)
                }
                Err(e) => {
                    handle.shutdown();
                    core.apps.stop();
                    return Ok(listen_failed(&e));
                }
            }
        }
        _ => None,
    };
    let listen: Vec<String> = handle.local_addrs().iter().map(|a| a.to_string()).collect();
    tracing::info!(
        "pharos controller running on {} ({} worker{}; apps {}); Ctrl-C or SIGTERM to stop",
        listen.join(", "),
        config.workers,
        if config.workers == 1 { "" } else { "s" },
        names.join(",")
    );
    tracing::info!(
        "static flows: {} ({} from the configuration file), kept in {}",
        static_flows.list().len(),
        config.static_flows.flow.len(),
        static_flows
            .file()
            .map_or_else(String::new, |p| p.display().to_string())
    );
    let signal = signals.forever().next().unwrap_or(SIGTERM);
    let name = if signal == SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    tracing::info!(signal = name, "shutting down");
    // A second signal while shutting down ends the process at once.
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 1, Arc::new(AtomicBool::new(true)))
            .context("installing signal handlers")?;
    }
    // The API first: no request reads a controller that is going away.
    if let Some(api) = api {
        api.shutdown();
    }
    handle.shutdown();
    core.apps.stop();
    tracing::info!("shut down cleanly");
    Ok(ExitCode::SUCCESS)
}

/// The API's token: `PHAROS_API_TOKEN`, else `[api] token_file`, else a new one written
/// to `$XDG_RUNTIME_DIR/pharos/api-token` (else `./pharos-api-token`). The log says
/// where it is, never what it is.
fn api_token(args: &Args, config: &Config) -> Result<api::auth::Token, ConfigError> {
    let env = std::env::var(api::auth::TOKEN_ENV).ok();
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let token = api::auth::Token::resolve(env, config.api.token_file.as_deref(), runtime_dir)
        .map_err(|reason| {
            let key = if config.api.token_file.is_some() {
                "api.token_file"
            } else {
                "api"
            };
            let e = ConfigError::new(key, reason);
            match &args.config {
                Some(path) if config.api.token_file.is_some() => match config::read_file(path) {
                    Ok(text) => e.in_file(path, &text),
                    Err(_) => e,
                },
                _ => e,
            }
        })?;
    tracing::info!("REST API token: {}", token.source);
    Ok(token)
}

/// Prints a refused configuration and gives the exit status for it.
fn refuse(e: &ConfigError) -> ExitCode {
    eprintln!("pharos run: bad configuration: {e}");
    ExitCode::from(EXIT_CONFIG)
}

/// Raises the soft limit on open files to the hard one, as far as `max_connections`
/// needs (a socket each, and some for the rest of the process), and warns when even the
/// hard limit is short: connections past it could not be accepted (EMFILE, upon which
/// admission pauses accepting).
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on 64-bit Linux, narrower elsewhere
fn fd_limit_for(max_connections: usize) {
    let want = max_connections as u64 + 256;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with a valid pointer to a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return;
        }
        if (lim.rlim_cur as u64) < want && lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: (want as libc::rlim_t).min(lim.rlim_max),
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    let soft = lim.rlim_cur as u64;
    if soft < max_connections as u64 {
        tracing::warn!(
            limit = soft,
            max_connections,
            "the open-file limit is lower than max_connections needs: connections past it \
             cannot be accepted (raise the hard limit, e.g. `ulimit -Hn` or LimitNOFILE=)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(argv: &[&str]) -> Args {
        Cli::try_parse_from(std::iter::once("run").chain(argv.iter().copied()))
            .expect("valid flags")
            .args
    }

    #[test]
    fn no_arguments_is_the_default_config() {
        let c = effective_config(&args(&[])).unwrap();
        // The defaults, with the apps' default set filled in by the binary.
        let d = Config {
            apps: c.apps.clone(),
            ..Config::default()
        };
        assert_eq!(c, d);
        assert_eq!(Config::default().apps, None, "the core names no app");
        let ports: Vec<u16> = c.listen.iter().map(|a| a.addr.port()).collect();
        assert_eq!(ports, vec![6653, 6633]);
        let names: Vec<&str> = c.app_list().iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["topology", "device_manager", "routing"]);
        assert_eq!(build_apps(&c).unwrap().len(), 3);
        // The classic mode.
        let c = effective_config(&args(&["--apps", "learning_switch"])).unwrap();
        assert_eq!(c.app_list(), [AppConfig::named("learning_switch")]);
    }

    #[test]
    fn flags_set_listen_workers_apps_and_log_level() {
        let c = effective_config(&args(&[
            "--listen",
            "127.0.0.1:7000",
            "--listen",
            "127.0.0.1:7001",
            "--workers",
            "3",
            "--apps",
            "hub,learning_switch",
            "--log-level",
            "debug",
        ]))
        .unwrap();
        assert_eq!(c.listen.len(), 2);
        assert_eq!(c.listen[1].addr.port(), 7001);
        assert_eq!(c.workers, 3);
        let names: Vec<&str> = c.app_list().iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["hub", "learning_switch"]);
        assert_eq!(c.log_level, "debug");
    }

    fn write(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pharos-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn flags_override_the_file_and_apps_keep_their_params() {
        let path = write(
            "override.toml",
            "workers = 7\nlisten = [\"127.0.0.1:9000\"]\n[[apps]]\nname = \"learning_switch\"\nparams = { idle_timeout = 9 }\n",
        );
        let p = path.to_str().unwrap();
        let c = effective_config(&args(&["--config", p])).unwrap();
        assert_eq!((c.workers, c.listen[0].addr.port()), (7, 9000));
        let c = effective_config(&args(&[
            "--config",
            p,
            "--workers",
            "2",
            "--apps",
            "hub,learning_switch",
        ]))
        .unwrap();
        assert_eq!(c.workers, 2);
        assert_eq!(c.listen[0].addr.port(), 9000);
        assert_eq!(c.app_list()[0], AppConfig::named("hub"));
        assert_eq!(
            c.app_list()[1]
                .params
                .get("idle_timeout")
                .and_then(|v| v.as_integer()),
            Some(9)
        );
        assert_eq!(build_apps(&c).unwrap().len(), 2);
    }

    #[test]
    fn bad_flags_and_files_name_the_key() {
        let e = effective_config(&args(&["--workers", "0"])).unwrap_err();
        assert_eq!(e.key, "--workers");
        let e = effective_config(&args(&["--apps", "hub,learning"])).unwrap_err();
        assert_eq!(e.key, "--apps");
        assert!(e.reason.contains("hub, learning_switch"), "{e}");
        let e = effective_config(&args(&["--apps", "topology,,routing"])).unwrap_err();
        assert!(e.reason.starts_with("an empty app name"), "{e}");
        // A negative count is a bad value of --workers, not an unknown flag `-1`.
        let e = Cli::try_parse_from(["run", "--workers", "-1"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{e}");
        let e = effective_config(&args(&["--apps", "routeing"])).unwrap_err();
        assert!(e.reason.contains("did you mean `routing`?"), "{e}");
        let e = effective_config(&args(&["--workers", "100000"])).unwrap_err();
        assert_eq!(e.key, "--workers");
        let e = effective_config(&args(&["--log-level", "verbose"])).unwrap_err();
        assert_eq!(e.key, "--log-level");
        let path = write("bad.toml", "[keepalive]\ninterval = \"5x\"\n");
        let e = effective_config(&args(&["--config", path.to_str().unwrap()])).unwrap_err();
        assert_eq!(e.key, "keepalive.interval");
        assert!(e.to_string().contains("bad.toml:2"), "{e}");
    }

    #[test]
    fn bad_app_params_and_names_in_the_file_give_file_line_and_key() {
        let path = write(
            "params.toml",
            "[[apps]]\nname = \"learning_switch\"\nparams = { idle_timout = 9 }\n",
        );
        let e = effective_config(&args(&["--config", path.to_str().unwrap()])).unwrap_err();
        assert_eq!(e.key, "apps[0].params.idle_timout");
        assert_eq!((e.file.as_ref(), e.line), (Some(&path), Some(3)));
        assert!(e.reason.contains("did you mean `idle_timeout`?"), "{e}");

        let path = write(
            "lldp.toml",
            "[[apps]]\nname = \"topology\"\n[apps.params]\nlink_timeout = \"4s\"\nlldp_intervall = 2\n",
        );
        let e = effective_config(&args(&["--config", path.to_str().unwrap()])).unwrap_err();
        assert_eq!(e.key, "apps[0].params.lldp_intervall");
        assert_eq!(e.line, Some(5));
        assert!(e.reason.contains("did you mean `lldp_interval`?"), "{e}");

        let path = write(
            "name.toml",
            "[[apps]]\nname = \"topology\"\n[[apps]]\nname = \"routeing\"\n",
        );
        let e = effective_config(&args(&["--config", path.to_str().unwrap()])).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("apps[1].name", Some(4)));
        assert!(e.reason.contains("did you mean `routing`?"), "{e}");
        // The file's apps are checked even when --apps picks others.
        let e = effective_config(&args(&[
            "--config",
            path.to_str().unwrap(),
            "--apps",
            "hub",
        ]))
        .unwrap_err();
        assert_eq!(e.key, "apps[1].name");
    }

    #[test]
    fn a_set_missing_what_an_app_needs_is_refused_in_the_users_words() {
        let e = effective_config(&args(&["--apps", "routing"])).unwrap_err();
        assert_eq!(e.key, "--apps");
        assert!(
            e.reason
                .starts_with("routing needs topology and device_manager")
                && e.reason
                    .ends_with("e.g. --apps topology,device_manager,routing"),
            "{e}"
        );
        let path = write(
            "needs.toml",
            "workers = 1\n\n[[apps]]\nname = \"routing\"\n",
        );
        let e = effective_config(&args(&["--config", path.to_str().unwrap()])).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("apps", Some(3)));
    }

    #[test]
    fn the_example_pharos_toml_is_accepted() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../pharos.toml");
        let c = effective_config(&args(&["--config", path])).unwrap();
        assert_eq!(build_apps(&c).unwrap().len(), 3);
        // It spells out each app's default parameters.
        fn parse<P: serde::de::DeserializeOwned>(t: &toml::Table) -> P {
            toml::Value::Table(t.clone()).try_into().unwrap()
        }
        let p = |i: usize| &c.app_list()[i].params;
        let topology: apps::topology::Params = parse(p(0));
        assert_eq!(topology, Default::default());
        let devices: apps::devices::app::Params = parse(p(1));
        assert_eq!(devices, Default::default());
        let routing: apps::routing::app::Params = parse(p(2));
        assert_eq!(routing, Default::default());
    }

    #[test]
    fn api_flag_sets_or_turns_off_the_api_and_bad_values_name_it() {
        let c = effective_config(&args(&[])).unwrap();
        assert_eq!(c.api.listen, Some("127.0.0.1:8080".parse().unwrap()));
        let c = effective_config(&args(&["--api", "off"])).unwrap();
        assert_eq!(c.api.listen, None);
        let c = effective_config(&args(&["--api", "[::1]:9000"])).unwrap();
        assert_eq!(c.api.listen, Some("[::1]:9000".parse().unwrap()));
        let path = write(
            "api.toml",
            "[api]\nlisten = \"127.0.0.1:9001\"\nread_auth = true\n",
        );
        let p = path.to_str().unwrap();
        let c = effective_config(&args(&["--config", p])).unwrap();
        assert_eq!(c.api.listen, Some("127.0.0.1:9001".parse().unwrap()));
        assert!(c.api.read_auth);
        let c = effective_config(&args(&["--config", p, "--api", "off"])).unwrap();
        assert_eq!(c.api.listen, None);
        let e = effective_config(&args(&["--api", "8080"])).unwrap_err();
        assert_eq!(e.key, "--api");
    }

    #[test]
    fn static_flows_is_never_listed_and_its_state_file_must_be_readable() {
        let e = effective_config(&args(&["--apps", "hub,static_flows"])).unwrap_err();
        assert_eq!(e.key, "--apps");
        assert!(e.reason.contains("always runs"), "{e}");
        let path = write("sf.toml", "[[apps]]\nname = \"static_flows\"\n");
        let e = effective_config(&args(&["--config", path.to_str().unwrap()])).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("apps[0].name", Some(2)));

        let state = write("sf-state.json", "{not json");
        let conf = write(
            "sf-ok.toml",
            &format!(
                "[static_flows]\nstate_file = {:?}\n[[static_flows.flow]]\nname = \"c\"\ndpid = 1\nflow = \"actions=drop\"\n",
                state.to_str().unwrap()
            ),
        );
        let c = effective_config(&args(&["--config", conf.to_str().unwrap()])).unwrap();
        let e = static_flows_app(&c).unwrap_err();
        assert!(e.to_string().contains("sf-state.json"), "{e}");
        std::fs::remove_file(&state).unwrap();
        let app = static_flows_app(&c).unwrap();
        assert_eq!(app.store().list().len(), 1, "the file's flow, no state yet");
        assert_eq!(app.store().file(), Some(state.as_path()));
    }

    #[test]
    fn log_filters_are_checked() {
        let a = args(&["--log-level", "controller=debug,info"]);
        assert!(log_filter(&a, &Config::default()).is_ok());
        let a = args(&["--log-level", "controller=[bad"]);
        let e = log_filter(&a, &Config::default()).unwrap_err();
        assert_eq!(e.key, "--log-level");
        let a = args(&["--log-level", "warning"]);
        assert!(log_filter(&a, &Config::default()).is_ok());
    }
}
