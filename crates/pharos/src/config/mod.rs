//! `pharos.toml`, everything a user can set for `pharos run`: [`Config`], read from
//! TOML with defaults for every key.
//!
//! ```text
//! mod.rs        Config: the sections composed; read, checked, errors placed in the file
//! schema.rs     File: every top-level key, each with the type of the crate owning it
//! log_level.rs  `log_level`: a log filter checked and spelt as tracing reads it
//! ```
//!
//! Each section is owned by the crate it configures, with its defaults and its checks:
//!
//! ```text
//! listen, workers, max_connections, [handshake],   controller::config::CoreConfig
//!   [keepalive], output_buffer_limit,
//!   [backpressure], max_message_len,
//!   counters_interval
//! [[apps]]                                         apps::config (AppConfig, the list)
//! [api]                                            api::config::ApiConfig
//! [static_flows]                                   apps::static_flows::config
//! log_level                                        here (log_level.rs)
//! ```
//!
//! The file is strict: an unknown key, a bad value or an impossible setting is refused
//! with a [`ConfigError`] naming the key (`keepalive.interval`, `apps[1].name`), its line
//! (found by key with [`line_of_key`](controller::settings::line_of_key) when the check
//! ran after parsing) and the reason; a misspelt name gets the nearest known one. The
//! machinery is `controller::settings`, shared with the crates that own the sections.
//! Durations are strings with a unit: `"250ms"`, `"5s"`, `"1m"`, `"1h"`.
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
//! the apps the binary knows by `pharos run` (`apps::config::check_names`); an app's
//! `params` are its own business (each app parses them into its own typed config).

pub mod log_level;
mod schema;

use std::path::Path;

use api::config::ApiConfig;
use apps::config::AppConfig;
use apps::static_flows::StaticFlowsConfig;
use controller::config::CoreConfig;
pub use controller::settings::{read_file, ConfigError};
use serde::{Deserialize, Serialize};

/// The controller's settings, section by section. `Config::default()` is what `pharos
/// run` uses with no arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The controller core's keys (the top of the file: `listen`, `workers`,
    /// `[handshake]`, `[keepalive]`, `[backpressure]` ...).
    pub core: CoreConfig,
    /// The apps to run, in order: their `start` runs in this order. `None` (no `apps`
    /// in the file): the binary's default set (`pharos run` fills in
    /// `apps::DEFAULT_APPS`). `Some(empty)`: no app.
    pub apps: Option<Vec<AppConfig>>,
    /// The log filter when `--log-level` and `RUST_LOG` do not say otherwise
    /// (`"info"`, `"debug"`, `"controller=debug,info"`).
    pub log_level: String,
    /// The REST API (`[api]`), served by the `pharos-api` crate (the core stays free of
    /// HTTP).
    pub api: ApiConfig,
    /// Static flows (`[static_flows]`): where the ones added through the REST API are
    /// kept, and the ones the file itself lists (`[[static_flows.flow]]`).
    pub static_flows: StaticFlowsConfig,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            core: CoreConfig::default(),
            apps: None,
            log_level: "info".to_string(),
            api: ApiConfig::default(),
            static_flows: StaticFlowsConfig::default(),
        }
    }
}

impl Serialize for Config {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        schema::File::from(self.clone()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Config, D::Error> {
        schema::File::deserialize(d).map(Config::from)
    }
}

impl Config {
    /// Parses and validates a TOML document; every key missing takes its default.
    pub fn from_toml_str(text: &str) -> Result<Config, ConfigError> {
        let config: Config = controller::settings::from_toml_str(text)?;
        config.validate().map_err(|e| e.in_text(text))?;
        Ok(config)
    }

    /// Reads, parses and validates a TOML file; errors name the file and the line too.
    /// The text comes back with the settings, to place in it the errors found later
    /// (the apps' parameters, the TLS files).
    pub fn from_file(path: &Path) -> Result<(Config, String), ConfigError> {
        let text = read_file(path)?;
        match Config::from_toml_str(&text) {
            Ok(c) => Ok((c, text)),
            Err(e) => Err(e.in_file(path, &text)),
        }
    }

    /// The apps configured (none when the binary's default set is meant: `apps` is
    /// `None`).
    pub fn app_list(&self) -> &[AppConfig] {
        self.apps.as_deref().unwrap_or(&[])
    }

    /// Checks the rules serde cannot express, section by section: the core's (counts,
    /// limits, marks in order), the app list's (each named, once), the log filter, the
    /// API's and the static flows'.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.core.validate()?;
        apps::config::check_list(self.app_list())?;
        log_level::filter(&self.log_level)
            .map_err(|reason| ConfigError::new("log_level", reason))?;
        self.api.validate()?;
        self.static_flows.validate()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
