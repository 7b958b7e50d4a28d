//! Everything a user can set: [`Config`], read from TOML (`pharos.toml`) with defaults
//! for every key.
//!
//! The file is strict: an unknown key, a bad value or an impossible setting is refused
//! with a [`ConfigError`] naming the key (`keepalive.interval`, `apps[1].name`), its line
//! (found by key with [`line_of_key`] when the check ran after parsing) and the reason;
//! a misspelt name gets the nearest known one ([`nearest`]). Durations are strings with
//! a unit: `"250ms"`, `"5s"`, `"1m"`, `"1h"`; apps read their times in seconds with
//! [`seconds`] and [`whole_seconds`], which take a number or such a duration.
//!
//! ```toml
//! listen = ["0.0.0.0:6653", "0.0.0.0:6633"]
//! workers = 2
//!
//! # Or OpenFlow over TLS (mutual authentication), beside or instead of plain ports:
//! # [[listen]]
//! # addr = "0.0.0.0:6654"
//! # tls = { cert = "ctl-cert.pem", key = "ctl-key.pem", client_ca = "ca.pem" }
//!
//! [keepalive]
//! interval = "5s"
//! max_unanswered = 3
//!
//! [[apps]]
//! name = "learning_switch"
//! params = { idle_timeout = 10 }
//!
//! [[static_flows.flow]]
//! name = "drop-ping"
//! dpid = "00:00:00:00:00:00:00:01"
//! flow = "priority=1000,icmp,actions=drop"
//! ```
//!
//! The repository's `pharos.toml` documents every key. App names are checked against
//! the apps the binary knows with [`Config::check_app_names`]; an app's `params` are
//! its own business (each app parses them into its own typed config).

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::conn::{BackpressureConfig, KeepaliveConfig};
pub use crate::handshake::HandshakeConfig;
pub use crate::tls::{ClientAuth, TlsSettings};
pub use crate::units::{duration, seconds, whole_seconds};

/// The controller's settings. `Config::default()` is what `pharos run` uses with no
/// arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Addresses to accept switches on; OpenFlow's port 6653 and the legacy 6633. An
    /// entry is an address (`"0.0.0.0:6653"`, clear text) or a table with `addr` and a
    /// `tls` table ([`ListenEntry`]).
    pub listen: Vec<ListenEntry>,
    /// Worker threads, each with its own event loop and its own switches. Default: one
    /// per available core.
    pub workers: usize,
    /// The apps to run, in order: their `start` runs in this order. `None` (no `apps`
    /// in the file): the binary's default set (the core knows no app by name; `pharos
    /// run` fills in `apps::DEFAULT_APPS`). `Some(empty)`: no app.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apps: Option<Vec<AppConfig>>,
    /// Connections open at once (handshaking or served); more are refused at accept.
    pub max_connections: usize,
    /// The handshake and the admission tier's limits (`[handshake]` in the file:
    /// `timeout`, `max_pending`, `max_pending_per_ip`, `max_waiting`,
    /// `max_waiting_per_ip`, `max_wait`, `versions`, `miss_send_len`,
    /// `barrier`).
    #[serde(with = "handshake_table")]
    pub handshake: HandshakeConfig,
    /// Echo keepalive and dead-peer detection on served switches.
    pub keepalive: KeepaliveConfig,
    /// The hard cap on bytes queued for one switch that the kernel has not taken yet. A
    /// switch past `backpressure.high_water` is no longer read, so its own replies stop
    /// growing the queue; this cap bounds what others send it meanwhile (`Switches`,
    /// timers): a message sent from elsewhere that would pass it is dropped, counted
    /// and logged, and a queue the worker itself pushed past it (timers) closes the
    /// connection as `output_overflow`.
    pub output_buffer_limit: usize,
    /// Flow control toward switches that read slower than the controller answers.
    pub backpressure: BackpressureConfig,
    /// The longest message a switch may send, header included; a header announcing more
    /// closes the connection. OpenFlow's own ceiling is 65535 (a 16-bit length).
    pub max_message_len: usize,
    /// How often the counters are printed at info level.
    #[serde(with = "duration")]
    pub counters_interval: Duration,
    /// The log filter when `--log-level` and `RUST_LOG` do not say otherwise
    /// (`"info"`, `"debug"`, `"controller=debug,info"`).
    pub log_level: String,
    /// The REST API (`[api]`). The core does not serve it (it stays free of HTTP; the
    /// `pharos-api` crate does): it is here so one file is checked in one place.
    pub api: ApiConfig,
    /// Static flows (`[static_flows]`): where the ones added through the REST API are
    /// kept, and the ones the file itself lists (`[[static_flows.flow]]`).
    pub static_flows: StaticFlowsConfig,
}

/// Static flows, as Floodlight's static entry pusher keeps them (`[static_flows]` in
/// the file): named flows in `ovs-ofctl` syntax, installed on their switch whenever it
/// connects.
///
/// The flows listed here are the file's: the REST API shows them but cannot replace or
/// delete them (edit the file and restart). The ones added through the REST API are
/// kept in `state_file`, which the controller alone writes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StaticFlowsConfig {
    /// Where the flows added through the REST API are kept (JSON, written whole to a
    /// temporary file then renamed over it). Default: [`default_state_file`].
    pub state_file: Option<PathBuf>,
    /// The flows of the file (`[[static_flows.flow]]`).
    pub flow: Vec<StaticFlowConfig>,
}

/// One static flow listed in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticFlowConfig {
    /// Its name: 1 to 64 letters, digits, `.`, `_` or `-` ([`check_static_flow_name`]).
    pub name: String,
    /// Its switch: `"00:00:00:00:00:00:00:01"`, `"0x1"`, `1` (see [`crate::dpid`]).
    #[serde(with = "dpid_value")]
    pub dpid: u64,
    /// The flow, as `ovs-ofctl add-flow` takes it.
    pub flow: String,
}

/// The longest static flow name.
pub const MAX_STATIC_FLOW_NAME: usize = 64;

/// Checks a static flow's name: 1 to [`MAX_STATIC_FLOW_NAME`] ASCII letters, digits,
/// `.`, `_` or `-`, so that it is a URL path segment as it stands
/// (`/api/v1/static_flows/NAME`) and a word in a shell.
pub fn check_static_flow_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a static flow needs a name, e.g. \"block-h1-h2\"".into());
    }
    if name.len() > MAX_STATIC_FLOW_NAME {
        return Err(format!(
            "the name {name:?} is longer than {MAX_STATIC_FLOW_NAME} characters"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "the name {name:?} holds {c:?}: use letters, digits, '.', '_' and '-'"
        ));
    }
    Ok(())
}

/// Where static flows are kept when `[static_flows] state_file` does not say: beside
/// the user's other state, `$XDG_STATE_HOME/pharos/static-flows.json`, else
/// `$HOME/.local/state/pharos/static-flows.json` (the XDG default), else
/// `./pharos-static-flows.json`. Not the runtime directory, where the API token goes:
/// static flows must outlive a reboot.
pub fn default_state_file(xdg_state_home: Option<PathBuf>, home: Option<PathBuf>) -> PathBuf {
    let absolute = |p: Option<PathBuf>| p.filter(|p| p.is_absolute());
    if let Some(dir) = absolute(xdg_state_home) {
        return dir.join("pharos").join("static-flows.json");
    }
    if let Some(home) = absolute(home) {
        return home
            .join(".local")
            .join("state")
            .join("pharos")
            .join("static-flows.json");
    }
    PathBuf::from("pharos-static-flows.json")
}

impl StaticFlowsConfig {
    /// The state file: the one set, or [`default_state_file`] from the environment.
    pub fn state_file(&self) -> PathBuf {
        match &self.state_file {
            Some(p) => p.clone(),
            None => default_state_file(
                std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
                std::env::var_os("HOME").map(PathBuf::from),
            ),
        }
    }

    /// Checks the names (valid, each once), and each flow's syntax (the error names the
    /// offending token, as `ovs-ofctl` users expect).
    fn validate(&self) -> Result<(), ConfigError> {
        if self
            .state_file
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(ConfigError::new(
                "static_flows.state_file",
                "is empty: name a file, or leave the key out for the default",
            ));
        }
        for (i, f) in self.flow.iter().enumerate() {
            check_static_flow_name(&f.name)
                .map_err(|r| ConfigError::new(format!("static_flows.flow[{i}].name"), r))?;
            if let Some(j) = self.flow[..i].iter().position(|g| g.name == f.name) {
                return Err(ConfigError::new(
                    format!("static_flows.flow[{i}].name"),
                    format!("`{}` is already static_flows.flow[{j}]", f.name),
                ));
            }
            openflow::ofctl::parse_flow(&f.flow).map_err(|e| {
                ConfigError::new(format!("static_flows.flow[{i}].flow"), e.to_string())
            })?;
        }
        Ok(())
    }
}

/// A dpid in the file: a string in any form [`crate::dpid::parse`] reads, or a number.
mod dpid_value {
    use serde::{de, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::dpid::format(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
        }
        match Raw::deserialize(d).map_err(|_: D::Error| {
            de::Error::custom("expected a dpid: \"00:00:00:00:00:00:00:01\", \"0x1\" or 1")
        })? {
            Raw::Text(t) => crate::dpid::parse(&t).map_err(de::Error::custom),
            Raw::Int(n) => u64::try_from(n)
                .map_err(|_| de::Error::custom(format!("{n} is not a dpid: it is negative"))),
        }
    }
}

/// One `listen` entry: an address, and TLS settings when the port speaks TLS.
///
/// In the file an entry is either an address string (clear text) or a table:
/// `{ addr = "0.0.0.0:6654", tls = { cert = "...", key = "...", client_ca = "..." } }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenEntry {
    /// Where to listen.
    pub addr: SocketAddr,
    /// `Some`: the port speaks TLS only (OpenFlow inside it).
    pub tls: Option<TlsSettings>,
}

impl ListenEntry {
    /// A clear-text entry.
    pub fn plain(addr: SocketAddr) -> ListenEntry {
        ListenEntry { addr, tls: None }
    }
}

impl From<SocketAddr> for ListenEntry {
    fn from(addr: SocketAddr) -> ListenEntry {
        ListenEntry::plain(addr)
    }
}

/// A clear-text entry from an address (`"0.0.0.0:6653"`).
impl std::str::FromStr for ListenEntry {
    type Err = std::net::AddrParseError;
    fn from_str(s: &str) -> Result<ListenEntry, Self::Err> {
        s.parse().map(ListenEntry::plain)
    }
}

impl fmt::Display for ListenEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tls {
            None => write!(f, "{}", self.addr),
            Some(_) => write!(f, "{} (TLS)", self.addr),
        }
    }
}

impl Serialize for ListenEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match &self.tls {
            None => s.serialize_str(&self.addr.to_string()),
            Some(tls) => {
                let mut t = s.serialize_struct("ListenEntry", 2)?;
                t.serialize_field("addr", &self.addr.to_string())?;
                t.serialize_field("tls", tls)?;
                t.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ListenEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ListenEntry, D::Error> {
        use serde::de::{self, MapAccess, Visitor};

        /// The table form, with serde's own errors for unknown or missing keys.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            addr: String,
            tls: Option<TlsSettings>,
        }

        fn addr<E: de::Error>(text: &str) -> Result<SocketAddr, E> {
            text.trim().parse().map_err(|_| {
                E::custom(format!(
                    "{text:?} is not an address: expected e.g. \"0.0.0.0:6653\" or \"[::]:6653\""
                ))
            })
        }

        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = ListenEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "an address (\"0.0.0.0:6653\") or a table { addr = \"0.0.0.0:6654\", tls = { cert, key, client_ca } }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ListenEntry, E> {
                Ok(ListenEntry::plain(addr(v)?))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ListenEntry, A::Error> {
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ListenEntry {
                    addr: addr(&t.addr)?,
                    tls: t.tls,
                })
            }
        }
        d.deserialize_any(EntryVisitor)
    }
}

/// The REST API's settings (`[api]` in the file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApiConfig {
    /// Where the API listens; `None` (`"off"` in the file, `--api off`) runs none.
    /// Loopback by default: reads are open there, so anything wider is a choice.
    #[serde(with = "api_listen")]
    pub listen: Option<SocketAddr>,
    /// A file holding the token writes need (and reads, off loopback). When neither it
    /// nor `PHAROS_API_TOKEN` is set, a random token is made at start-up and written to
    /// a file only the user can read.
    pub token_file: Option<PathBuf>,
    /// Reads need the token too, even on a loopback address.
    pub read_auth: bool,
    /// How long a request the API makes to a switch (flow table, statistics, a flow
    /// added) waits for the answer before it is a 504.
    #[serde(with = "duration")]
    pub switch_timeout: Duration,
    /// HTTPS (`tls = { cert = "...", key = "..." }`): the API serves TLS 1.2 and 1.3 with
    /// this certificate chain and private key (PEM) instead of plain HTTP.
    pub tls: Option<ApiTlsConfig>,
}

/// `[api] tls`: the API's certificate chain and private key, PEM files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiTlsConfig {
    /// The certificate, then any intermediate certificates.
    pub cert: PathBuf,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// The API's default address: loopback only, port 8080 (as ONOS's 8181 and Floodlight's
/// 8080 are the ports their users know, 8080 is the one most tools try first).
pub const DEFAULT_API_LISTEN: &str = "127.0.0.1:8080";

impl Default for ApiConfig {
    fn default() -> ApiConfig {
        ApiConfig {
            listen: Some(DEFAULT_API_LISTEN.parse().expect("a valid literal")),
            token_file: None,
            read_auth: false,
            switch_timeout: Duration::from_secs(5),
            tls: None,
        }
    }
}

/// `[api] listen`: an address, or `"off"`.
pub mod api_listen {
    use std::net::SocketAddr;

    use serde::{de, Deserialize, Deserializer, Serializer};

    /// Parses `"127.0.0.1:8080"`, `"[::1]:8080"` or `"off"` (`None`).
    pub fn parse(text: &str) -> Result<Option<SocketAddr>, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        t.parse().map(Some).map_err(|_| {
            format!("{text:?} is not an address: expected e.g. \"127.0.0.1:8080\", or \"off\" for no API")
        })
    }

    pub fn serialize<S: Serializer>(a: &Option<SocketAddr>, s: S) -> Result<S::Ok, S::Error> {
        match a {
            Some(a) => s.serialize_str(&a.to_string()),
            None => s.serialize_str("off"),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SocketAddr>, D::Error> {
        parse(&String::deserialize(d)?).map_err(de::Error::custom)
    }
}

/// One app to run and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    /// The app's name (`"routing"`, `"learning_switch"`).
    pub name: String,
    /// App-specific settings (`{ idle_timeout = 10 }`), parsed by the app itself.
    #[serde(default)]
    pub params: toml::Table,
}

impl AppConfig {
    /// An app with no parameters.
    pub fn named(name: &str) -> AppConfig {
        AppConfig {
            name: name.to_string(),
            params: toml::Table::new(),
        }
    }
}

/// The default listen addresses: every interface, ports 6653 and 6633.
pub const DEFAULT_LISTEN: [&str; 2] = ["0.0.0.0:6653", "0.0.0.0:6633"];

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: DEFAULT_LISTEN
                .iter()
                .map(|a| ListenEntry::plain(a.parse().expect("a valid literal")))
                .collect(),
            workers: std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(1),
            apps: None,
            max_connections: 20_000,
            handshake: HandshakeConfig::default(),
            keepalive: KeepaliveConfig::default(),
            output_buffer_limit: 16 << 20,
            backpressure: BackpressureConfig::default(),
            max_message_len: 65535,
            counters_interval: Duration::from_secs(10),
            log_level: "info".to_string(),
            api: ApiConfig::default(),
            static_flows: StaticFlowsConfig::default(),
        }
    }
}

/// A configuration that was refused: where (file, key, line) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file, when the configuration came from one.
    pub file: Option<PathBuf>,
    /// The key path (`keepalive.interval`, `apps[1].name`); empty for a file that is not
    /// TOML at all or cannot be read.
    pub key: String,
    /// The 1-based line in the file, when known.
    pub line: Option<usize>,
    /// What is wrong, and what would be right.
    pub reason: String,
}

impl ConfigError {
    /// This error, found in the file `path` whose text is `text`: the file is named, and
    /// the line of the key is looked up when the error does not carry one.
    pub fn in_file(self, path: &Path, text: &str) -> ConfigError {
        let line = self.line.or_else(|| line_of_key(text, &self.key));
        ConfigError {
            file: Some(path.to_path_buf()),
            line,
            ..self
        }
    }

    /// An error about `key`.
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
        ConfigError {
            file: None,
            key: key.into(),
            line: None,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        } else if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if !self.key.is_empty() {
            write!(f, "`{}`: ", self.key)?;
        }
        // Parser messages may end in a newline; the error is one line (or a few), never
        // followed by a blank one.
        f.write_str(self.reason.trim_end())
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Parses and validates a TOML document; every key missing takes its default.
    pub fn from_toml_str(text: &str) -> Result<Config, ConfigError> {
        let de = toml::Deserializer::new(text);
        let config: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let inner = e.inner();
            let line = inner.span().map(|s| line_of(text, s.start));
            // A parser's message may run over several lines: one line here.
            let message = inner.message().trim_end().replace('\n', "; ");
            let (key, reason) = key_and_reason(&e.path().to_string(), &message);
            ConfigError {
                file: None,
                key,
                line,
                reason,
            }
        })?;
        config.validate().map_err(|e| ConfigError {
            line: line_of_key(text, &e.key),
            ..e
        })?;
        Ok(config)
    }

    /// Reads, parses and validates a TOML file; errors name the file and the line too.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = read_file(path)?;
        Config::from_toml_str(&text).map_err(|e| e.in_file(path, &text))
    }

    /// The apps configured (none when the binary's default set is meant: `apps` is
    /// `None`).
    pub fn app_list(&self) -> &[AppConfig] {
        self.apps.as_deref().unwrap_or(&[])
    }

    /// Checks the rules serde cannot express: counts that must be positive, lists that
    /// must not be empty, apps named once.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.listen.is_empty() {
            return Err(ConfigError::new(
                "listen",
                "no address to listen on: give at least one, e.g. [\"0.0.0.0:6653\"]",
            ));
        }
        for (i, a) in self.listen.iter().enumerate() {
            if self.listen[..i].iter().any(|b| b.addr == a.addr) {
                return Err(ConfigError::new(
                    format!("listen[{i}]"),
                    format!("{} is listed twice", a.addr),
                ));
            }
        }
        let positive: [(&str, usize); 5] = [
            ("workers", self.workers),
            ("max_connections", self.max_connections),
            ("handshake.max_pending", self.handshake.max_pending),
            (
                "handshake.max_pending_per_ip",
                self.handshake.max_pending_per_ip,
            ),
            (
                "keepalive.max_unanswered",
                self.keepalive.max_unanswered as usize,
            ),
        ];
        for (key, value) in positive {
            if value == 0 {
                return Err(ConfigError::new(key, "must be at least 1"));
            }
        }
        let most = max_workers();
        if self.workers > most {
            return Err(ConfigError::new(
                "workers",
                format!(
                    "{} is more than {most} (4 workers per core, {} cores here): each worker is a thread with its own event loop, and workers beyond the cores only take turns on them; the default is one per core",
                    self.workers,
                    most / 4
                ),
            ));
        }
        let durations = [
            ("handshake.timeout", self.handshake.timeout),
            ("keepalive.interval", self.keepalive.interval),
            (
                "backpressure.stall_timeout",
                self.backpressure.stall_timeout,
            ),
            ("counters_interval", self.counters_interval),
            ("api.switch_timeout", self.api.switch_timeout),
        ];
        for (key, value) in durations {
            if value.is_zero() {
                return Err(ConfigError::new(
                    key,
                    "must be longer than zero, e.g. \"5s\"",
                ));
            }
        }
        if !(64..=65535).contains(&self.max_message_len) {
            return Err(ConfigError::new(
                "max_message_len",
                format!(
                    "{} is out of range: from 64 to 65535 bytes (OpenFlow lengths are 16 bits)",
                    self.max_message_len
                ),
            ));
        }
        if self.output_buffer_limit < self.max_message_len {
            return Err(ConfigError::new(
                "output_buffer_limit",
                format!(
                    "{} bytes cannot hold one message of max_message_len ({})",
                    self.output_buffer_limit, self.max_message_len
                ),
            ));
        }
        let bp = &self.backpressure;
        if bp.high_water == 0 {
            return Err(ConfigError::new(
                "backpressure.high_water",
                "must be at least 1 byte, e.g. 1048576",
            ));
        }
        if bp.low_water >= bp.high_water {
            return Err(ConfigError::new(
                "backpressure.low_water",
                format!(
                    "{} must be below backpressure.high_water ({}): a paused switch is read again once its queue drains to it",
                    bp.low_water, bp.high_water
                ),
            ));
        }
        if bp.high_water > self.output_buffer_limit {
            return Err(ConfigError::new(
                "backpressure.high_water",
                format!(
                    "{} is above output_buffer_limit ({}): the switch must be paused before its queue reaches the hard cap",
                    bp.high_water, self.output_buffer_limit
                ),
            ));
        }
        if self.handshake.versions.is_empty() {
            return Err(ConfigError::new(
                "handshake.versions",
                "no version to offer: use [\"1.0\", \"1.3\"] or a part of it",
            ));
        }
        let apps = self.app_list();
        for (i, app) in apps.iter().enumerate() {
            if app.name.is_empty() {
                return Err(ConfigError::new(format!("apps[{i}].name"), "is empty"));
            }
            if let Some(j) = apps[..i].iter().position(|a| a.name == app.name) {
                return Err(ConfigError::new(
                    format!("apps[{i}].name"),
                    format!("`{}` is already apps[{j}]; an app runs once", app.name),
                ));
            }
        }
        log_filter(&self.log_level).map_err(|reason| ConfigError::new("log_level", reason))?;
        if self
            .api
            .token_file
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(ConfigError::new(
                "api.token_file",
                "is empty: name a file holding the token, or leave the key out for a generated one",
            ));
        }
        self.static_flows.validate()?;
        Ok(())
    }

    /// The network settings [`Controller::start`](crate::controller::Controller::start)
    /// takes.
    pub fn net(&self) -> crate::controller::NetConfig {
        crate::controller::NetConfig {
            listen: self.listen.iter().map(|l| l.addr).collect(),
            tls: self.listen.iter().map(|l| l.tls.clone()).collect(),
            workers: self.workers,
            max_connections: self.max_connections,
            handshake: self.handshake.clone(),
            keepalive: self.keepalive.clone(),
            output_buffer_limit: self.output_buffer_limit,
            backpressure: self.backpressure.clone(),
            max_message_len: self.max_message_len,
            counters_interval: self.counters_interval,
        }
    }

    /// Reads and checks the files of every `listen` entry's `tls` table (what
    /// [`Controller::start`](crate::controller::Controller::start) will load): an error
    /// names the key (`listen[1].tls.cert`) and the file.
    pub fn check_tls(&self) -> Result<(), ConfigError> {
        for (i, l) in self.listen.iter().enumerate() {
            if let Some(tls) = &l.tls {
                crate::tls::server_config(tls).map_err(|e| tls_error(i, &e))?;
            }
        }
        Ok(())
    }

    /// Checks every app name against the ones this binary knows; an unknown one is
    /// refused with the nearest known name and the list of them.
    pub fn check_app_names(&self, known: &[&str]) -> Result<(), ConfigError> {
        for (i, app) in self.app_list().iter().enumerate() {
            if !known.contains(&app.name.as_str()) {
                return Err(ConfigError::new(
                    format!("apps[{i}].name"),
                    unknown_app(&app.name, known),
                ));
            }
        }
        Ok(())
    }
}

/// The most workers [`Config::validate`] accepts: 4 per core. A worker is a thread with
/// an event loop; far more than the cores buys nothing and, in the thousands, runs out
/// of file descriptors (each has an epoll and a waker).
pub fn max_workers() -> usize {
    4 * std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
}

/// A refused `tls` table of `listen[i]` as a [`ConfigError`] on its key.
fn tls_error(i: usize, e: &crate::tls::TlsSetupError) -> ConfigError {
    let key = if e.key.is_empty() {
        format!("listen[{i}].tls")
    } else {
        format!("listen[{i}].tls.{}", e.key)
    };
    ConfigError::new(key, e.reason.clone())
}

/// Reads a settings file; an unreadable one is a [`ConfigError`] naming it.
pub fn read_file(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: Some(path.to_path_buf()),
        key: String::new(),
        line: None,
        reason: format!("cannot read the file: {e}"),
    })
}

/// Why an app name is refused: the nearest known name, then all of them.
pub fn unknown_app(name: &str, known: &[&str]) -> String {
    format!(
        "unknown app `{name}`{}; the apps are: {}",
        did_you_mean(name, known),
        known.join(", ")
    )
}

/// The known name nearest to `word`, if one is near enough to be a slip of the finger
/// (at most a third of its letters edited, and at least one).
pub fn nearest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(word, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `" (did you mean `x`?)"` when a known name is near `word`, else nothing.
pub fn did_you_mean(word: &str, known: &[&str]) -> String {
    match nearest(word, known) {
        Some(k) => format!(" (did you mean `{k}`?)"),
        None => String::new(),
    }
}

/// The levels a log filter may name, and the other spellings taken for them.
const LEVELS: [(&str, &[&str]); 6] = [
    ("error", &["err"]),
    ("warn", &["warning"]),
    ("info", &["information"]),
    ("debug", &[]),
    ("trace", &[]),
    ("off", &["none"]),
];

/// The level `word` names, in `tracing`'s spelling (any case; `warning`, `err`,
/// `information` and `none` taken too).
fn level(word: &str) -> Option<&'static str> {
    let w = word.trim().to_ascii_lowercase();
    LEVELS
        .iter()
        .find(|(name, other)| *name == w || other.contains(&w.as_str()))
        .map(|(name, _)| *name)
}

/// Checks a log filter (`--log-level`, `RUST_LOG`, `log_level`) and gives it in
/// `tracing`'s spelling: comma-separated directives, each a level (`info`) or
/// `target=level` (`controller=debug`).
///
/// `tracing` itself reads a bare word that is not a level as a module name, so
/// `verbose` would mean "everything from a module called verbose" and silence every
/// line: here such a word is refused. A level may be written in any case, and
/// `warning`, `err`, `information` and `none` are taken for `warn`, `error`, `info` and
/// `off`.
pub fn log_filter(text: &str) -> Result<String, String> {
    let names = "error, warn, info, debug, trace or off";
    let mut out = Vec::new();
    for directive in text.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        match directive.rsplit_once('=') {
            None => match level(directive) {
                Some(l) => out.push(l.to_string()),
                None => {
                    return Err(format!(
                        "`{directive}` is not a log level: use {names}, or `target=level` for one part (e.g. controller=debug,info)"
                    ))
                }
            },
            Some((target, word)) => match level(word) {
                Some(l) if !target.trim().is_empty() => out.push(format!("{}={l}", target.trim())),
                Some(_) => return Err(format!("`{directive}` names no target before `=`")),
                None => {
                    return Err(format!(
                        "`{word}` in `{directive}` is not a log level: use {names}"
                    ))
                }
            },
        }
    }
    if out.is_empty() {
        return Err(format!("no level given: use {names}, e.g. \"info\""));
    }
    Ok(out.join(","))
}

/// The 1-based line where `key` (`keepalive.interval`, `apps[1].params.idle_timeout`,
/// `listen[0]`) is set in the TOML `text`: the line of the key itself when it is a
/// table's key, of the value when it is an array element. `None` when the text does not
/// parse or does not set the key.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut item = doc.as_item();
    let mut span = None;
    for part in key.split('.') {
        let (name, indices) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            let table = item.as_table_like()?;
            span = table.key(name).and_then(|k| k.span());
            item = table.get(name)?;
        }
        for index in indices.split(['[', ']']).filter(|i| !i.is_empty()) {
            item = item.get(index.parse::<usize>().ok()?)?;
            span = match item {
                toml_edit::Item::Table(t) => t.span(),
                toml_edit::Item::Value(v) => v.span(),
                _ => None,
            };
        }
    }
    span.map(|s| line_of(text, s.start))
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The key path and reason of a serde error: an unknown field is named by its own path
/// (`keepalive.intervl`), and serde's list of expected fields follows.
fn key_and_reason(path: &str, message: &str) -> (String, String) {
    let path = if path == "." { "" } else { path };
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some((field, expected)) = rest.split_once('`') {
            // serde_path_to_error already ends the path with the unknown key; older
            // versions stop at its table.
            let key = if path == field || path.ends_with(&format!(".{field}")) {
                path.to_string()
            } else if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            let expected = expected.trim_start_matches(", ");
            let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            return (
                key,
                format!("unknown key{}; {expected}", did_you_mean(field, &known)),
            );
        }
    }
    (path.to_string(), message.to_string())
}

/// `[handshake]` as it reads in the file: NET's [`HandshakeConfig`] with every key
/// optional and durations and versions as strings.
mod handshake_table {
    use std::time::Duration;

    use openflow::Version;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::HandshakeConfig;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Table {
        #[serde(with = "super::duration")]
        timeout: Duration,
        max_pending: usize,
        max_pending_per_ip: usize,
        max_waiting: usize,
        max_waiting_per_ip: usize,
        #[serde(with = "super::duration")]
        max_wait: Duration,
        #[serde(with = "super::versions")]
        versions: Vec<Version>,
        miss_send_len: u16,
        barrier: bool,
        read_flows: bool,
    }

    impl Default for Table {
        fn default() -> Table {
            Table::from(&HandshakeConfig::default())
        }
    }

    impl From<&HandshakeConfig> for Table {
        fn from(h: &HandshakeConfig) -> Table {
            Table {
                timeout: h.timeout,
                max_pending: h.max_pending,
                max_pending_per_ip: h.max_pending_per_ip,
                max_waiting: h.max_waiting,
                max_waiting_per_ip: h.max_waiting_per_ip,
                max_wait: h.max_wait,
                versions: h.versions.clone(),
                miss_send_len: h.miss_send_len,
                barrier: h.barrier,
                read_flows: h.read_flows,
            }
        }
    }

    pub fn serialize<S: Serializer>(h: &HandshakeConfig, s: S) -> Result<S::Ok, S::Error> {
        Table::from(h).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<HandshakeConfig, D::Error> {
        let t = Table::deserialize(d)?;
        Ok(HandshakeConfig {
            timeout: t.timeout,
            max_pending: t.max_pending,
            max_pending_per_ip: t.max_pending_per_ip,
            max_waiting: t.max_waiting,
            max_waiting_per_ip: t.max_waiting_per_ip,
            max_wait: t.max_wait,
            versions: t.versions,
            miss_send_len: t.miss_send_len,
            barrier: t.barrier,
            read_flows: t.read_flows,
        })
    }
}

/// Versions as `"1.0"` / `"1.3"` strings, or the bare numbers `1.0` / `1.3`.
mod versions {
    use openflow::Version;
    use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

    fn parse(text: &str) -> Result<Version, String> {
        match text {
            "1.0" => Ok(Version::V1_0),
            "1.3" => Ok(Version::V1_3),
            other => Err(format!(
                "unsupported OpenFlow version {other}: this controller speaks \"1.0\" and \"1.3\""
            )),
        }
    }

    pub fn serialize<S: Serializer>(v: &[Version], s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Version>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Float(f64),
        }
        let raw = Vec::<Raw>::deserialize(d)?;
        let mut out = Vec::with_capacity(raw.len());
        for r in raw {
            let v = match r {
                Raw::Text(t) => parse(&t),
                Raw::Float(x) => parse(&format!("{x:.1}")),
            }
            .map_err(de::Error::custom)?;
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
