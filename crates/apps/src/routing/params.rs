//! The routing app's parameters (`[apps.params]` in `pharos.toml`).

use openflow::model::FlowMod;
use serde::Deserialize;

/// The routing app's parameters. Timeouts are whole seconds: a number (`60`) or a
/// duration (`"60s"`, `"1m"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Seconds without traffic before a route's flows expire (default 10).
    #[serde(deserialize_with = "controller::app::settings::whole_seconds::deserialize")]
    pub idle_timeout: u16,
    /// Seconds before a route's flows expire regardless (default 0: never).
    #[serde(deserialize_with = "controller::app::settings::whole_seconds::deserialize")]
    pub hard_timeout: u16,
    /// Priority of the routes' flows (default 0x8000, OpenFlow's default).
    pub priority: u16,
    /// Routes installed at once at most (default 100,000); beyond, the oldest installed
    /// is evicted (its flows deleted).
    pub max_routes: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            idle_timeout: 10,
            hard_timeout: 0,
            priority: FlowMod::DEFAULT_PRIORITY,
            max_routes: 100_000,
        }
    }
}
