//! What a run is asked to do: [`Mode`], [`ControllerBenchConfig`] (cbench's defaults),
//! and [`BenchError`] for a run that cannot take place.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::thread;
use std::time::Duration;

use openflow::Version;
use serde::Serialize;

use crate::flood::FloodConfig;
use crate::topo::Shape;

/// Throughput or latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every switch keeps `window` PACKET_INs in flight.
    Throughput,
    /// Every switch keeps one PACKET_IN in flight.
    Latency,
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "throughput" | "t" => Ok(Mode::Throughput),
            "latency" | "l" => Ok(Mode::Latency),
            other => Err(format!(
                "unknown mode {other:?}: expected throughput or latency"
            )),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Throughput => "throughput",
            Mode::Latency => "latency",
        })
    }
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct ControllerBenchConfig {
    /// The controller.
    pub addr: SocketAddr,
    /// Switches emulated.
    pub switches: usize,
    /// Unique source MAC addresses per switch (at most 2^24).
    pub macs: usize,
    /// Loops.
    pub loops: usize,
    /// Milliseconds per loop.
    pub loop_ms: u64,
    /// Loops at the start left out of the overall figures.
    pub warmup: usize,
    /// Throughput or latency.
    pub mode: Mode,
    /// The OpenFlow version the switches speak.
    pub version: Version,
    /// PACKET_INs in flight per switch in throughput mode; 0: unbounded (keep the socket
    /// full, as cbench does).
    pub window: usize,
    /// PACKET_INs carry buffer ids (as cbench's do); otherwise `NO_BUFFER`.
    pub buffered: bool,
    /// Announce every address before the loops (the learning phase).
    pub learn: bool,
    /// The learning phase ends by then, done or not.
    pub learn_timeout: Duration,
    /// Generator threads (at most one per switch).
    pub threads: usize,
    /// Count PACKET_INs answered instead of FLOW_MODs and PACKET_OUTs.
    pub per_packet_in: bool,
    /// Switches not ready by then take no part and are reported.
    pub connect_timeout: Duration,
    /// A PACKET_IN unanswered this long is given up.
    pub response_timeout: Duration,
    /// A connection flood run during the loops (`--flood RATE,STYLE`): how well the
    /// controller serves its switches while under attack. Its duration is cut short
    /// when the loops end.
    pub flood: Option<FloodConfig>,
    /// Run the flood in alternate loops instead of through all of them
    /// (`--flood-alternate`), in cycles of four after the warm-up: a loop for the
    /// flood's end to settle, one measured without it, a loop for its start to settle,
    /// one measured with it. The report pairs each measured loop without the flood with
    /// the next one with it ([`super::report::FloodEffect`]).
    pub flood_alternate: bool,
    /// Wire the switches into this shape (`--topology`, see [`crate::topo`]): LLDP
    /// frames are relayed between them, port statistics answered. All switches then
    /// run on one generator thread (a relay is a hand-over between two of them).
    pub topology: Option<Shape>,
    /// After the learning phase, keep the switches connected, sending nothing of their
    /// own, this long before the loops (`--hold`): a network to look at, for the web UI.
    pub hold: Duration,
    /// Spread the switches over this many loopback source addresses (switch `i` from
    /// the `i % n`-th of 127.0.0.1, 127.0.0.2, ...); 0: the system's choice.
    pub source_addrs: usize,
    /// A switch whose connection is refused (closed or reset before the controller's
    /// HELLO) connects again after a backoff (100 ms, doubling to 2 s, ±25%), as a real
    /// switch does, until `connect_timeout`.
    pub retry: bool,
    /// Connect over TLS with this client configuration (`--tls-cert`, `--tls-key`,
    /// `--tls-ca`; see [`crate::tls`]); `None`: clear text.
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

impl ControllerBenchConfig {
    /// cbench's defaults (16 switches, 100,000 MACs, 16 loops of 1 s, 1 warm-up,
    /// OpenFlow 1.0, throughput with the socket kept full, buffered PACKET_INs, a
    /// learning phase) against `addr`.
    pub fn new(addr: SocketAddr) -> ControllerBenchConfig {
        ControllerBenchConfig {
            addr,
            switches: 16,
            macs: 100_000,
            loops: 16,
            loop_ms: 1000,
            warmup: 1,
            mode: Mode::Throughput,
            version: Version::V1_0,
            window: 0,
            buffered: true,
            learn: true,
            learn_timeout: Duration::from_secs(60),
            threads: thread::available_parallelism().map_or(1, |n| n.get()),
            per_packet_in: false,
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(1),
            flood: None,
            flood_alternate: false,
            topology: None,
            hold: Duration::ZERO,
            source_addrs: 0,
            retry: true,
            tls: None,
        }
    }
}

/// Why a run could not take place.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A setting out of range.
    #[error("invalid setting: {0}")]
    Config(String),
    /// The generator could not start (threads, event loops).
    #[error("the generator could not start: {0}")]
    Io(#[from] std::io::Error),
    /// The flood could not run.
    #[error("the flood failed: {0}")]
    Flood(std::io::Error),
}
