//! `state.json`: the lab's intent log.
//!
//! `up` records each resource here *before* creating it (atomically: a temporary file
//! renamed over the old one), so `down` after a crash, a kill or a failed step removes
//! exactly what may have been created and nothing else. An entry whose resource was never
//! made costs `down` a "not found", which it ignores.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::LabError;

pub const STATE_FILE: &str = "state.json";
pub const STATE_VERSION: u32 = 1;

/// An Open vSwitch daemon of the lab: its process name (as in /proc/PID/comm) and its pid
/// file inside the lab directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Daemon {
    pub name: String,
    pub pidfile: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    /// The lab's name (the prefix of everything it creates).
    pub name: String,
    /// The topology spec, normalised (`linear,3`); the topology is rebuilt from it.
    pub topo: String,
    /// "1.0" or "1.3".
    pub of: String,
    pub controller: String,
    /// The pid of the `pharos lab up` that made it.
    pub up_pid: u32,
    /// Set once `up` finished building everything.
    pub complete: bool,
    /// Daemons, in start order (ovsdb-server, ovs-vswitchd).
    pub daemons: Vec<Daemon>,
    /// Network namespaces (`lab-h1`).
    pub netns: Vec<String>,
    /// Directories `/etc/netns/lab-h1` holding the hosts' `hosts` files.
    pub etc_netns: Vec<PathBuf>,
    /// Root-namespace veth ends (`lab-s1-eth1`); deleting one deletes its peer.
    pub veths: Vec<String>,
    /// Bridges (`lab-s1`).
    pub bridges: Vec<String>,
    /// Other tap interfaces of ovs-vswitchd: the userspace datapath's own (`lab-dp`),
    /// which labs made before the `dummy` datapath type renamed from `ovs-netdev`; kept
    /// so that `down` still removes one such lab's leftovers (new labs record none).
    #[serde(default)]
    pub taps: Vec<String>,
    /// Hosts moved by `pharos lab move`, in order: replayed on the topology parsed from
    /// `topo` to get the lab as it is.
    #[serde(default)]
    pub moves: Vec<Move>,
    /// Made with probe interfaces instead of hosts (`up --probe`): no namespaces.
    #[serde(default)]
    pub probe: bool,
    /// The probe interfaces (`pb-lab-1`), the root-namespace peers of the host-port veths
    /// (deleting the veth in `veths` deletes them).
    #[serde(default)]
    pub probes: Vec<String>,
    /// The OpenFlow channel is over TLS with these files (`up --tls`).
    #[serde(default)]
    pub tls: Option<crate::TlsFiles>,
    /// The switches are Pharos switches run from this executable (`up --switch pharos`),
    /// one process per switch recorded in `daemons`; `None`: Open vSwitch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pharos_switch: Option<PathBuf>,
    /// The Pharos switches' `--datapath` (`up --switch-datapath`); `None`: theirs by
    /// default (AF_PACKET).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pharos_datapath: Option<String>,
}

/// Host hN re-attached to switch sM (on a new port after sM's highest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub host: u32,
    pub switch: u32,
}

impl State {
    pub fn new(name: &str, topo: &str, of: &str, controller: &str) -> State {
        State {
            version: STATE_VERSION,
            name: name.to_string(),
            topo: topo.to_string(),
            of: of.to_string(),
            controller: controller.to_string(),
            up_pid: std::process::id(),
            complete: false,
            daemons: vec![],
            netns: vec![],
            etc_netns: vec![],
            veths: vec![],
            bridges: vec![],
            taps: vec![],
            moves: vec![],
            probe: false,
            probes: vec![],
            tls: None,
            pharos_switch: None,
            pharos_datapath: None,
        }
    }

    /// Claims `dir/state.json` for a new lab: fails with [`LabError::Exists`] when a lab is
    /// already recorded there (two `up`s of one name cannot both win).
    pub fn claim(&self, dir: &Path) -> Result<(), LabError> {
        let path = dir.join(STATE_FILE);
        let mut f = match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(LabError::Exists {
                    name: self.name.clone(),
                    dir: dir.to_path_buf(),
                })
            }
            Err(e) => return Err(LabError::io(format!("create {}", path.display()), e)),
        };
        f.write_all(&self.to_json())
            .map_err(|e| LabError::io(format!("write {}", path.display()), e))
    }

    /// Writes `dir/state.json` atomically (temporary file, then rename).
    pub fn save(&self, dir: &Path) -> Result<(), LabError> {
        let path = dir.join(STATE_FILE);
        let tmp = dir.join(format!(".{STATE_FILE}.{}.tmp", std::process::id()));
        fs::write(&tmp, self.to_json())
            .map_err(|e| LabError::io(format!("write {}", tmp.display()), e))?;
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            LabError::io(format!("rename {} to {}", tmp.display(), path.display()), e)
        })
    }

    /// Reads `dir/state.json`; `Ok(None)` when there is none.
    pub fn load(dir: &Path) -> Result<Option<State>, LabError> {
        let path = dir.join(STATE_FILE);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(LabError::io(format!("read {}", path.display()), e)),
        };
        let state: State = serde_json::from_slice(&bytes).map_err(|e| {
            LabError::Invalid(format!(
                "{} is not a lab state file ({e}); remove what it lists by hand, then the file",
                path.display()
            ))
        })?;
        if state.version != STATE_VERSION {
            return Err(LabError::Invalid(format!(
                "{} has version {}, this pharos understands {STATE_VERSION}",
                path.display(),
                state.version
            )));
        }
        Ok(Some(state))
    }

    fn to_json(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("state serialises");
        v.push(b'\n');
        v
    }

    /// Whether nothing is recorded any more.
    pub fn is_empty(&self) -> bool {
        self.daemons.is_empty()
            && self.netns.is_empty()
            && self.etc_netns.is_empty()
            && self.veths.is_empty()
            && self.bridges.is_empty()
            && self.taps.is_empty()
    }
}

/// One step of tearing a lab down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `ovs-vsctl --if-exists del-br` each, in one transaction (needs the daemons).
    DelBridges(Vec<String>),
    /// `ip link del` each root-namespace veth end.
    DelVeths(Vec<String>),
    /// Stop the processes left running inside each namespace, then `ip netns del` it.
    DelNetns(Vec<String>),
    /// Remove the `hosts` file and the directory.
    RemoveEtcNetns(Vec<PathBuf>),
    /// Stop each daemon, last started first, by its recorded pid after checking the name.
    StopDaemons(Vec<Daemon>),
    /// Taps of ovs-vswitchd (bridges' internal interfaces, the datapath's) that outlived
    /// it (it was killed): `ip link del` each that exists.
    DelLeftoverTaps(Vec<String>),
}

/// The teardown of `state`, in the order the Open vSwitch notes require: bridges, veths,
/// namespaces (and their /etc/netns entries), daemons, then any of ovs-vswitchd's tap
/// interfaces left.
/// Bridges are deleted through ovs-vswitchd only if one was recorded; empty steps are left
/// out.
pub fn plan_teardown(state: &State) -> Vec<Step> {
    let mut plan = Vec::new();
    // Pharos switches go first, while their ports still exist (they would log every
    // interface vanishing under them otherwise).
    if state.pharos_switch.is_some() && !state.daemons.is_empty() {
        plan.push(Step::StopDaemons(
            state.daemons.iter().rev().cloned().collect(),
        ));
    }
    let has_vswitchd = state.daemons.iter().any(|d| d.name == "ovs-vswitchd");
    if !state.bridges.is_empty() && has_vswitchd {
        plan.push(Step::DelBridges(state.bridges.clone()));
    }
    // Probe interfaces are the peers of veths listed here: they go with them.
    if !state.veths.is_empty() {
        plan.push(Step::DelVeths(state.veths.clone()));
    }
    if !state.netns.is_empty() {
        plan.push(Step::DelNetns(state.netns.clone()));
    }
    if !state.etc_netns.is_empty() {
        plan.push(Step::RemoveEtcNetns(state.etc_netns.clone()));
    }
    if state.pharos_switch.is_none() && !state.daemons.is_empty() {
        plan.push(Step::StopDaemons(
            state.daemons.iter().rev().cloned().collect(),
        ));
    }
    let taps: Vec<String> = state.bridges.iter().chain(&state.taps).cloned().collect();
    if !taps.is_empty() {
        plan.push(Step::DelLeftoverTaps(taps));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> State {
        let mut s = State::new("t1", "linear,2", "1.3", "tcp:127.0.0.1:6653");
        s.daemons = vec![
            Daemon {
                name: "ovsdb-server".into(),
                pidfile: "/x/ovsdb-server.pid".into(),
            },
            Daemon {
                name: "ovs-vswitchd".into(),
                pidfile: "/x/ovs-vswitchd.pid".into(),
            },
        ];
        s.netns = vec!["t1-h1".into(), "t1-h2".into()];
        s.etc_netns = vec!["/etc/netns/t1-h1".into(), "/etc/netns/t1-h2".into()];
        s.veths = vec![
            "t1-s1-eth1".into(),
            "t1-s2-eth1".into(),
            "t1-s1-eth2".into(),
        ];
        s.bridges = vec!["t1-s1".into(), "t1-s2".into()];
        s.taps = vec!["t1-dp".into()];
        s.complete = true;
        s
    }

    fn tempdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pharos-lab-state-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn round_trip() {
        let d = tempdir("rt");
        assert_eq!(State::load(&d).unwrap(), None);
        let s = full();
        s.claim(&d).unwrap();
        assert_eq!(State::load(&d).unwrap(), Some(s.clone()));
        let mut s2 = s.clone();
        s2.bridges.pop();
        s2.save(&d).unwrap();
        assert_eq!(State::load(&d).unwrap(), Some(s2));
        // No temporary file left behind.
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec![STATE_FILE.to_string()]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_state_written_before_taps_existed_loads() {
        let d = tempdir("notaps");
        let mut v = serde_json::to_value(full()).unwrap();
        v.as_object_mut().unwrap().remove("taps");
        v.as_object_mut().unwrap().remove("moves");
        fs::write(d.join(STATE_FILE), v.to_string()).unwrap();
        let s = State::load(&d).unwrap().unwrap();
        assert!(s.taps.is_empty());
        assert!(s.moves.is_empty());
        assert_eq!(s.bridges, full().bridges);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_second_claim_fails() {
        let d = tempdir("claim");
        let s = full();
        s.claim(&d).unwrap();
        let e = s.claim(&d).unwrap_err();
        assert!(matches!(e, LabError::Exists { .. }), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn garbage_is_refused_with_the_path() {
        let d = tempdir("garbage");
        fs::write(d.join(STATE_FILE), b"{not json").unwrap();
        let e = State::load(&d).unwrap_err().to_string();
        assert!(e.contains("is not a lab state file"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn full_teardown_in_order() {
        let s = full();
        let plan = plan_teardown(&s);
        assert_eq!(
            plan,
            vec![
                Step::DelBridges(s.bridges.clone()),
                Step::DelVeths(s.veths.clone()),
                Step::DelNetns(s.netns.clone()),
                Step::RemoveEtcNetns(s.etc_netns.clone()),
                Step::StopDaemons(vec![s.daemons[1].clone(), s.daemons[0].clone()]),
                Step::DelLeftoverTaps(vec!["t1-s1".into(), "t1-s2".into(), "t1-dp".into()]),
            ]
        );
    }

    #[test]
    fn pharos_switches_stop_before_their_ports_go() {
        let mut s = State::new("t1", "linear,2", "1.3", "tcp:127.0.0.1:6653");
        s.pharos_switch = Some("/usr/bin/pharos".into());
        s.daemons = (1..=2)
            .map(|n| Daemon {
                name: "pharos".into(),
                pidfile: format!("/x/s{n}.pid").into(),
            })
            .collect();
        s.veths = vec!["t1-s1-eth1".into()];
        s.netns = vec!["t1-h1".into()];
        assert_eq!(
            plan_teardown(&s),
            vec![
                Step::StopDaemons(vec![s.daemons[1].clone(), s.daemons[0].clone()]),
                Step::DelVeths(s.veths.clone()),
                Step::DelNetns(s.netns.clone()),
            ]
        );
        // Written by a pharos that knew only Open vSwitch: no key, Open vSwitch.
        let text = String::from_utf8(full().to_json()).unwrap();
        assert!(!text.contains("pharos_switch"), "{text}");
    }

    #[test]
    fn partial_state_plans_only_what_was_recorded() {
        // A crash after the daemons and the namespaces, before any veth or bridge.
        let mut s = full();
        s.veths.clear();
        s.bridges.clear();
        s.taps.clear();
        s.complete = false;
        let plan = plan_teardown(&s);
        assert_eq!(
            plan,
            vec![
                Step::DelNetns(s.netns.clone()),
                Step::RemoveEtcNetns(s.etc_netns.clone()),
                Step::StopDaemons(vec![s.daemons[1].clone(), s.daemons[0].clone()]),
            ]
        );
        // Only ovsdb-server recorded: nothing else to do.
        let mut s = State::new("t1", "single,2", "1.0", "tcp:127.0.0.1:1");
        s.daemons.push(Daemon {
            name: "ovsdb-server".into(),
            pidfile: "/x/ovsdb-server.pid".into(),
        });
        assert_eq!(
            plan_teardown(&s),
            vec![Step::StopDaemons(s.daemons.clone())]
        );
        // Bridges recorded but ovs-vswitchd not: no del-br (it would hang), but the
        // interfaces are still checked for.
        let mut s = full();
        s.daemons.truncate(1);
        let plan = plan_teardown(&s);
        assert!(!plan.iter().any(|p| matches!(p, Step::DelBridges(_))));
        assert_eq!(
            plan.last(),
            Some(&Step::DelLeftoverTaps(vec![
                "t1-s1".into(),
                "t1-s2".into(),
                "t1-dp".into()
            ]))
        );
        // Nothing recorded: nothing to do.
        let s = State::new("t1", "single,2", "1.0", "tcp:127.0.0.1:1");
        assert!(s.is_empty());
        assert!(plan_teardown(&s).is_empty());
    }
}
