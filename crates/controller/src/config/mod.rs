//! The core's settings: [`CoreConfig`], the keys of `pharos.toml` that configure the
//! controller core (listen addresses and their TLS, workers, the connection limits, the
//! handshake, keepalive, backpressure, the counters), with a default for each, the
//! rules serde cannot express ([`CoreConfig::validate`]) and the mapping onto what
//! [`Controller::start`](crate::controller::Controller::start) takes
//! ([`CoreConfig::net`]).
//!
//! ```text
//! mod.rs             CoreConfig: defaults, checks, net(), check_tls()
//! listen.rs          ListenEntry: an address, or a table with `addr` and `tls`
//! handshake_table.rs `[handshake]` as the file writes it (durations, versions)
//! ```
//!
//! The file itself (which key goes where, unknown keys refused, errors with their line)
//! is the binary's, `pharos::config`: the core's keys sit at the top of the file beside
//! the other crates' sections, so the binary names each of them with the type this
//! module gives it (`listen` a list of [`ListenEntry`], `handshake` through
//! [`handshake_table`], `counters_interval` through [`duration`]). Errors are
//! [`ConfigError`]s naming the key as it is written in the
//! file (`keepalive.max_unanswered`, `listen[1]`).
//!
//! The duration helpers are re-exported here for the apps' parameters
//! (`controller::config::seconds`).

pub mod handshake_table;
mod listen;

use std::time::Duration;

pub use crate::conn::{BackpressureConfig, KeepaliveConfig};
use crate::controller::NetConfig;
pub use crate::handshake::HandshakeConfig;
use crate::settings::{ConfigError, ZERO_DURATION};
pub use crate::tls::{ClientAuth, TlsSettings};
pub use crate::units::{duration, seconds, whole_seconds};
pub use listen::ListenEntry;

/// The default listen addresses: every interface, ports 6653 and 6633.
pub const DEFAULT_LISTEN: [&str; 2] = ["0.0.0.0:6653", "0.0.0.0:6633"];

/// The controller core's settings. `CoreConfig::default()` is what `pharos run` uses
/// with no arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreConfig {
    /// Addresses to accept switches on; OpenFlow's port 6653 and the legacy 6633. An
    /// entry is an address (`"0.0.0.0:6653"`, clear text) or a table with `addr` and a
    /// `tls` table ([`ListenEntry`]).
    pub listen: Vec<ListenEntry>,
    /// Worker threads, each with its own event loop and its own switches. Default: one
    /// per available core.
    pub workers: usize,
    /// Connections open at once (handshaking or served); more are refused at accept.
    pub max_connections: usize,
    /// The handshake and the admission tier's limits (`[handshake]` in the file:
    /// `timeout`, `max_pending`, `max_pending_per_ip`, `max_waiting`,
    /// `max_waiting_per_ip`, `max_wait`, `versions`, `miss_send_len`, `barrier`,
    /// `read_flows`; read through [`handshake_table`]).
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
    /// How often the counters are printed at info level (a string with a unit in the
    /// file, read through [`duration`]).
    pub counters_interval: Duration,
}

impl Default for CoreConfig {
    fn default() -> CoreConfig {
        CoreConfig {
            listen: DEFAULT_LISTEN
                .iter()
                .map(|a| ListenEntry::plain(a.parse().expect("a valid literal")))
                .collect(),
            workers: std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(1),
            max_connections: 20_000,
            handshake: HandshakeConfig::default(),
            keepalive: KeepaliveConfig::default(),
            output_buffer_limit: 16 << 20,
            backpressure: BackpressureConfig::default(),
            max_message_len: 65535,
            counters_interval: Duration::from_secs(10),
        }
    }
}

/// The most workers [`CoreConfig::validate`] accepts: 4 per core. A worker is a thread
/// with an event loop; far more than the cores buys nothing and, in the thousands, runs
/// out of file descriptors (each has an epoll and a waker).
pub fn max_workers() -> usize {
    4 * std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
}

impl CoreConfig {
    /// Checks the rules serde cannot express: an address to listen on, each once;
    /// counts that must be positive; workers within [`max_workers`]; durations longer
    /// than zero; message and buffer limits that fit each other; backpressure marks in
    /// order (`low_water < high_water <= output_buffer_limit`); a version to offer.
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
        ];
        for (key, value) in durations {
            if value.is_zero() {
                return Err(ConfigError::new(key, ZERO_DURATION));
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
        Ok(())
    }

    /// The network settings [`Controller::start`](crate::controller::Controller::start)
    /// takes.
    pub fn net(&self) -> NetConfig {
        NetConfig {
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

#[cfg(test)]
mod tests;
