//! `[handshake]` as it reads in the file, for `#[serde(with = "...::handshake_table")]`
//! on a [`HandshakeConfig`]: every key optional (the default fills it in), durations as
//! strings with a unit, versions as `"1.0"` / `"1.3"` (or the bare numbers), sorted and
//! each once.

use std::time::Duration;

use openflow::Version;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::handshake::HandshakeConfig;
use crate::units::duration;

/// The table, key for key.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Table {
    #[serde(with = "duration")]
    timeout: Duration,
    max_pending: usize,
    max_pending_per_ip: usize,
    max_waiting: usize,
    max_waiting_per_ip: usize,
    #[serde(with = "duration")]
    max_wait: Duration,
    #[serde(with = "versions")]
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

/// Writes the table.
pub fn serialize<S: Serializer>(h: &HandshakeConfig, s: S) -> Result<S::Ok, S::Error> {
    Table::from(h).serialize(s)
}

/// Reads the table; a key left out keeps its default.
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
