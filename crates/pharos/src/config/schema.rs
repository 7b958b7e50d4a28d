//! The file's schema: every top-level key of `pharos.toml`, in the order the file
//! documents them, each with the type of the crate that owns it.
//!
//! The core's keys sit at the top of the file beside the binary's own (`log_level`)
//! and the other crates' tables (`[api]`, `[static_flows]`, `[[apps]]`), so the core's
//! section cannot be one serde field: `#[serde(flatten)]` does not work with
//! `deny_unknown_fields` (and buffers the values, losing the parser's spans). Instead
//! [`File`] names each key, and [`Config`] is made from it and back with no key left
//! out: a key added to [`CoreConfig`] and not here does not compile.

use std::time::Duration;

use api::config::ApiConfig;
use apps::config::AppConfig;
use apps::static_flows::StaticFlowsConfig;
use controller::config::{
    BackpressureConfig, CoreConfig, HandshakeConfig, KeepaliveConfig, ListenEntry,
};
use serde::{Deserialize, Serialize};

use super::Config;

/// `pharos.toml` as it is written: a missing key takes its default, an unknown one is
/// refused (serde names the known ones, in this order).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(super) struct File {
    /// The core's: where switches connect ([`CoreConfig::listen`]).
    listen: Vec<ListenEntry>,
    /// The core's: worker threads.
    workers: usize,
    /// The app list (`[[apps]]`); left out when `None` (the default set is meant).
    #[serde(skip_serializing_if = "Option::is_none")]
    apps: Option<Vec<AppConfig>>,
    /// The core's: connections open at once.
    max_connections: usize,
    /// The core's `[handshake]`, in the file's form.
    #[serde(with = "controller::config::handshake_table")]
    handshake: HandshakeConfig,
    /// The core's `[keepalive]`.
    keepalive: KeepaliveConfig,
    /// The core's: the hard cap on bytes queued for one switch.
    output_buffer_limit: usize,
    /// The core's `[backpressure]`.
    backpressure: BackpressureConfig,
    /// The core's: the longest message a switch may send.
    max_message_len: usize,
    /// The core's: how often the counters are printed, a duration with a unit.
    #[serde(with = "controller::config::duration")]
    counters_interval: Duration,
    /// The binary's: the log filter.
    log_level: String,
    /// The REST API's `[api]`.
    api: ApiConfig,
    /// The static-flows app's `[static_flows]`.
    static_flows: StaticFlowsConfig,
}

impl Default for File {
    fn default() -> File {
        File::from(Config::default())
    }
}

impl From<Config> for File {
    fn from(c: Config) -> File {
        let CoreConfig {
            listen,
            workers,
            max_connections,
            handshake,
            keepalive,
            output_buffer_limit,
            backpressure,
            max_message_len,
            counters_interval,
        } = c.core;
        File {
            listen,
            workers,
            apps: c.apps,
            max_connections,
            handshake,
            keepalive,
            output_buffer_limit,
            backpressure,
            max_message_len,
            counters_interval,
            log_level: c.log_level,
            api: c.api,
            static_flows: c.static_flows,
        }
    }
}

impl From<File> for Config {
    fn from(f: File) -> Config {
        Config {
            core: CoreConfig {
                listen: f.listen,
                workers: f.workers,
                max_connections: f.max_connections,
                handshake: f.handshake,
                keepalive: f.keepalive,
                output_buffer_limit: f.output_buffer_limit,
                backpressure: f.backpressure,
                max_message_len: f.max_message_len,
                counters_interval: f.counters_interval,
            },
            apps: f.apps,
            log_level: f.log_level,
            api: f.api,
            static_flows: f.static_flows,
        }
    }
}
