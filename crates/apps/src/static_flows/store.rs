//! [`StaticFlows`]: the named flows, their status, and the state file that keeps the
//! ones added through the REST API.
//!
//! The state file is JSON, written whole to a temporary file in the same directory,
//! synced, then renamed over the old one (and the directory synced), so a crash leaves
//! the old file or the new one, never half of one:
//!
//! ```json
//! {"format": 1, "flows": [
//!   {"name": "drop-ping", "dpid": "00:00:00:00:00:00:00:02",
//!    "flow": "priority=1000,icmp,actions=drop", "updated_at": 1764000000}]}
//! ```
//!
//! Only the controller writes it. A file that cannot be read or parsed, or that holds a
//! flow that does not parse, is a [`LoadError`] naming the file (and the entry): the
//! controller refuses to start rather than run without flows the user counts on. A
//! missing file is an empty one.
//!
//! Writes (add, replace, remove) are serialised by one lock held across the change and
//! the file write; the map itself has its own lock, held only for the change, so a
//! worker recording a switch's answer ([`StaticFlows::set_status`]) never waits for a
//! disk.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use openflow::ofctl::{parse_flow, Flow};
use openflow::Dpid;
use serde::{Deserialize, Serialize};

use super::config::{check_static_flow_name, StaticFlowConfig};

/// Where a static flow comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// `[[static_flows.flow]]` in the configuration file: read-only through the API.
    Config,
    /// Added through the REST API; kept in the state file.
    Api,
}

/// What the flow's switch made of it, the last time it was sent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not sent yet (its switch is not connected), or sent and not answered yet.
    Pending,
    /// The switch applied it (its barrier reply came after the FLOW_MOD).
    Installed,
    /// The switch refused it (`BAD_MATCH/BAD_PREREQ`), or it cannot be expressed in the
    /// switch's OpenFlow version; the text says which.
    Refused(String),
}

/// One static flow.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticFlow {
    /// Its name, unique among static flows.
    pub name: String,
    /// Its switch.
    pub dpid: Dpid,
    /// The flow.
    pub flow: Flow,
    /// The configuration file's, or the API's.
    pub source: Source,
    /// The last known outcome on its switch.
    pub status: Status,
    /// When it was added or replaced, or its status last changed.
    pub updated_at: SystemTime,
    /// Changes with every add and replace: an answer to an older version of the flow
    /// (sent before a replace) does not change the status of the new one.
    pub generation: u64,
}

/// Why a static flow could not be added or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The name is taken (and replacing was not asked for).
    #[error(
        "a static flow named {0:?} exists: choose another name, or replace it (\"replace\": true)"
    )]
    Exists(String),
    /// The flow is the configuration file's.
    #[error("static flow {0:?} is defined in the configuration file ([[static_flows.flow]]): change it there and restart")]
    FromConfig(String),
    /// Another static flow of the switch has the same table, priority and match: the
    /// switch would keep one of the two (an ADD replaces a flow with the same
    /// selection), and a strict delete of either would remove both.
    #[error("static flow {other:?} has the same table, priority and match on this switch: the switch keeps only one flow per selection; replace {other:?} instead, or change the priority")]
    SameSelection {
        /// The flow already there.
        other: String,
    },
    /// No flow has this name.
    #[error("no static flow is named {0:?}")]
    NotFound(String),
    /// The name is not one ([`check_static_flow_name`]).
    #[error("{0}")]
    BadName(String),
    /// The state file could not be written; nothing changed.
    #[error("cannot write the static flows' state file {}: {reason}; nothing was changed", path.display())]
    Save {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// A state file that cannot be used: the controller does not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("static flows' state file {}: {reason}", path.display())]
pub struct LoadError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

/// The state file's format.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    /// 1; a later layout would bump it.
    format: u32,
    flows: Vec<FileFlow>,
}

/// One flow in the state file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFlow {
    name: String,
    /// The colon form.
    dpid: String,
    /// `ovs-ofctl` syntax, as the printer writes it.
    flow: String,
    /// Unix seconds.
    updated_at: u64,
}

const FORMAT: u32 = 1;

/// The static flows (a service: the REST API reads and changes them, the
/// `static_flows` app installs them).
#[derive(Debug)]
pub struct StaticFlows {
    /// The flows by name.
    flows: Mutex<BTreeMap<String, StaticFlow>>,
    /// The state file; `None` keeps the API's flows in memory only (tests).
    file: Option<PathBuf>,
    /// Held across a change and its file write: writes happen one at a time, in order.
    writing: Mutex<()>,
    /// The last generation handed out.
    generation: Mutex<u64>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change is a whole insert, replace or remove: a panic leaves the map whole.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl StaticFlows {
    /// No flows and no state file: what is added lives as long as the process.
    pub fn in_memory() -> StaticFlows {
        StaticFlows {
            flows: Mutex::default(),
            file: None,
            writing: Mutex::default(),
            generation: Mutex::new(0),
        }
    }

    /// The flows of the configuration file (`config`, already checked) and of the state
    /// file `path` (missing: none). A name in both is the configuration's (logged).
    pub fn open(path: &Path, config: &[StaticFlowConfig]) -> Result<StaticFlows, LoadError> {
        let mut store = StaticFlows {
            file: Some(path.to_path_buf()),
            ..StaticFlows::in_memory()
        };
        let bad = |reason: String| LoadError {
            path: path.to_path_buf(),
            reason,
        };
        let now = SystemTime::now();
        let mut flows = BTreeMap::new();
        for c in config {
            let flow = parse_flow(&c.flow).map_err(|e| {
                bad(format!(
                    "static flow {:?} of the configuration: {e}",
                    c.name
                ))
            })?;
            let f = store.new_flow(c.name.clone(), c.dpid, flow, Source::Config, now);
            flows.insert(c.name.clone(), f);
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(bad(format!("cannot be read: {e}"))),
        };
        if let Some(text) = text {
            let doc: FileDoc = serde_json::from_str(&text).map_err(|e| {
                bad(format!(
                    "is not a static flows file ({e}); move it away to start without its flows"
                ))
            })?;
            if doc.format != FORMAT {
                return Err(bad(format!(
                    "has format {}, this controller reads format {FORMAT}",
                    doc.format
                )));
            }
            for (i, f) in doc.flows.into_iter().enumerate() {
                let at = |reason: String| bad(format!("flows[{i}] ({:?}): {reason}", f.name));
                check_static_flow_name(&f.name).map_err(at)?;
                let dpid = f.dpid.parse::<Dpid>().map_err(|e| at(e.to_string()))?;
                let flow = parse_flow(&f.flow).map_err(|e| at(e.to_string()))?;
                let taken: Option<&StaticFlow> = flows.get(&f.name);
                if taken.is_some_and(|t| t.source == Source::Api) {
                    return Err(at("the name is listed twice".into()));
                }
                if taken.is_some() {
                    tracing::warn!(
                        name = f.name,
                        file = %path.display(),
                        "a static flow of the state file has the name of one in the configuration file: the configuration's is used"
                    );
                    continue;
                }
                let updated = UNIX_EPOCH + Duration::from_secs(f.updated_at);
                let sf = store.new_flow(f.name.clone(), dpid, flow, Source::Api, updated);
                flows.insert(f.name.clone(), sf);
            }
        }
        store.flows = Mutex::new(flows);
        Ok(store)
    }

    fn new_flow(
        &self,
        name: String,
        dpid: Dpid,
        flow: Flow,
        source: Source,
        at: SystemTime,
    ) -> StaticFlow {
        let generation = {
            let mut g = lock(&self.generation);
            *g += 1;
            *g
        };
        StaticFlow {
            name,
            dpid,
            flow,
            source,
            status: Status::Pending,
            updated_at: at,
            generation,
        }
    }

    /// The state file, if there is one.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Every static flow, by name.
    pub fn list(&self) -> Vec<StaticFlow> {
        lock(&self.flows).values().cloned().collect()
    }

    /// The flow named `name`.
    pub fn get(&self, name: &str) -> Option<StaticFlow> {
        lock(&self.flows).get(name).cloned()
    }

    /// The flows of switch `dpid`, by name.
    pub fn of_switch(&self, dpid: Dpid) -> Vec<StaticFlow> {
        lock(&self.flows)
            .values()
            .filter(|f| f.dpid == dpid)
            .cloned()
            .collect()
    }

    /// Adds a flow (status pending) and saves the file; with `replace`, an API flow of
    /// that name is replaced (and returned second). A name of the configuration file's
    /// is never replaced.
    pub fn add(
        &self,
        name: &str,
        dpid: Dpid,
        flow: Flow,
        replace: bool,
    ) -> Result<(StaticFlow, Option<StaticFlow>), StoreError> {
        check_static_flow_name(name).map_err(StoreError::BadName)?;
        let _writing = lock(&self.writing);
        let new = self.new_flow(name.to_string(), dpid, flow, Source::Api, SystemTime::now());
        let (old, saved) = {
            let mut flows = lock(&self.flows);
            let old = flows.get(name).cloned();
            match &old {
                Some(o) if o.source == Source::Config => {
                    return Err(StoreError::FromConfig(name.into()))
                }
                Some(_) if !replace => return Err(StoreError::Exists(name.into())),
                _ => {}
            }
            if let Some(other) = flows.values().find(|f| {
                f.name != name
                    && f.dpid == dpid
                    && f.flow.table == new.flow.table
                    && f.flow.priority == new.flow.priority
                    && f.flow.matching == new.flow.matching
            }) {
                return Err(StoreError::SameSelection {
                    other: other.name.clone(),
                });
            }
            flows.insert(name.to_string(), new.clone());
            (old, Self::saved(&flows))
        };
        if let Err(e) = self.save(&saved) {
            let mut flows = lock(&self.flows);
            match &old {
                Some(o) => flows.insert(name.to_string(), o.clone()),
                None => flows.remove(name),
            };
            return Err(e);
        }
        Ok((new, old))
    }

    /// Removes an API flow and saves the file; returns it.
    pub fn remove(&self, name: &str) -> Result<StaticFlow, StoreError> {
        let _writing = lock(&self.writing);
        let (old, saved) = {
            let mut flows = lock(&self.flows);
            match flows.get(name) {
                None => return Err(StoreError::NotFound(name.into())),
                Some(f) if f.source == Source::Config => {
                    return Err(StoreError::FromConfig(name.into()))
                }
                Some(_) => {}
            }
            let old = flows.remove(name).expect("just found");
            (old, Self::saved(&flows))
        };
        if let Err(e) = self.save(&saved) {
            lock(&self.flows).insert(name.to_string(), old);
            return Err(e);
        }
        Ok(old)
    }

    /// Records what the switch made of generation `generation` of flow `name`; an
    /// answer about a flow since replaced or removed is dropped (returns false).
    pub fn set_status(&self, name: &str, generation: u64, status: Status) -> bool {
        let mut flows = lock(&self.flows);
        match flows.get_mut(name) {
            Some(f) if f.generation == generation => {
                if f.status != status {
                    f.status = status;
                    f.updated_at = SystemTime::now();
                }
                true
            }
            _ => false,
        }
    }

    /// What the state file holds: the API's flows.
    fn saved(flows: &BTreeMap<String, StaticFlow>) -> FileDoc {
        FileDoc {
            format: FORMAT,
            flows: flows
                .values()
                .filter(|f| f.source == Source::Api)
                .map(|f| FileFlow {
                    name: f.name.clone(),
                    dpid: f.dpid.to_string(),
                    flow: f.flow.to_string(),
                    updated_at: unix_secs(f.updated_at),
                })
                .collect(),
        }
    }

    fn save(&self, doc: &FileDoc) -> Result<(), StoreError> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let mut text = serde_json::to_string_pretty(doc).expect("plain data serializes");
        text.push('\n');
        write_atomically(path, text.as_bytes()).map_err(|e| StoreError::Save {
            path: path.clone(),
            reason: e.to_string(),
        })
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, renames it over `path`
/// and syncs the directory: after a crash, `path` is the old file or the new one.
/// Missing directories are made.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "static-flows".into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return written;
    }
    // The rename is durable once the directory is; a failure here loses nothing now.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
