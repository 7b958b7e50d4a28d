//! `down`: removing what a lab made, from its `state.json` ([`plan_teardown`]), whole or
//! partial, and what was removed ([`DownReport`]).

use std::fmt;
use std::fs;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::cmd::Cmd;
use crate::kernel::{batch_timeout, iface_exists, netns_exists};
use crate::lab::resolve;
use crate::ovs::vsctl;
use crate::procfs::{daemon_pid, stop_pid};
use crate::state::{self, plan_teardown, State, Step};
use crate::tools::Tools;
use crate::words::{plural, title};
use crate::{validate_lab_name, Lab, LabError};

/// What `down` removed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DownReport {
    /// The lab's name.
    pub name: String,
    /// Whether there was a lab to take down.
    pub existed: bool,
    /// Open vSwitch bridges deleted.
    pub bridges: usize,
    /// Veth pairs deleted.
    pub veths: usize,
    /// Network namespaces deleted.
    pub netns: usize,
    /// Daemons stopped: OVS's two, or one Pharos switch per switch.
    pub daemons: usize,
    /// Processes left running in the hosts' namespaces, stopped.
    pub processes: usize,
}

impl fmt::Display for DownReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.existed {
            return write!(f, "no lab named {}: nothing to remove", self.name);
        }
        write!(
            f,
            "{} removed: {}, {}, {}, {}",
            title(&self.name),
            plural(self.bridges, "bridge", "bridges"),
            plural(self.veths, "veth pair", "veth pairs"),
            plural(self.netns, "namespace", "namespaces"),
            plural(self.daemons, "daemon", "daemons"),
        )?;
        if self.processes > 0 {
            write!(
                f,
                ", {} left in the hosts",
                plural(self.processes, "process", "processes")
            )?;
        }
        Ok(())
    }
}

impl Lab {
    /// Removes everything lab `name` in `dir` created, from its `state.json`, whole or
    /// partial. Idempotent: no lab is not an error.
    pub fn down(name: &str, dir: &Path) -> Result<DownReport, LabError> {
        Lab::down_verbose(name, dir, false)
    }

    /// [`Lab::down`], printing the commands it runs.
    pub fn down_verbose(name: &str, dir: &Path, verbose: bool) -> Result<DownReport, LabError> {
        validate_lab_name(name)?;
        let lab_dir = resolve(&dir.join(name));
        let Some(state) = State::load(&lab_dir)? else {
            return Ok(DownReport {
                name: name.to_string(),
                ..DownReport::default()
            });
        };
        let tools = Tools::get()?;
        teardown(&lab_dir, &state, &tools, verbose)
    }
}

// ----------------------------------------------------------------------------------------
// Teardown

/// Carries out [`plan_teardown`] for `state`; on success removes the lab directory. What
/// could not be removed is named in the error, and `state.json` stays so `down` can be run
/// again.
pub(crate) fn teardown(
    dir: &Path,
    state: &State,
    tools: &Tools,
    verbose: bool,
) -> Result<DownReport, LabError> {
    let mut report = DownReport {
        name: state.name.clone(),
        existed: true,
        ..DownReport::default()
    };
    let mut problems: Vec<String> = Vec::new();
    // del-br needs both daemons (without ovsdb-server, ovs-vsctl would wait out its
    // timeout); when either is gone the taps are checked for at the end instead.
    let alive = |name: &str| {
        state
            .daemons
            .iter()
            .find(|d| d.name == name)
            .and_then(|d| daemon_pid(dir, d))
            .is_some()
    };
    let vswitchd_alive = alive("ovs-vswitchd") && alive("ovsdb-server");
    for step in plan_teardown(state) {
        match step {
            Step::DelBridges(bridges) => {
                if !vswitchd_alive {
                    // The bridges died with ovs-vswitchd, or cannot be reached without
                    // ovsdb-server (stopping ovs-vswitchd removes them): their taps are
                    // checked for last.
                    continue;
                }
                let mut c = vsctl(tools, dir).label("ovs-vsctl del-br");
                for b in &bridges {
                    c = c.args(["--", "--if-exists", "del-br", b.as_str()]);
                }
                match c.run(verbose) {
                    Ok(_) => report.bridges = bridges.len(),
                    Err(e) => problems.push(e.to_string()),
                }
            }
            Step::DelVeths(veths) => {
                let present: Vec<&String> = veths.iter().filter(|v| iface_exists(v)).collect();
                if !present.is_empty() {
                    let batch: String = present.iter().map(|v| format!("link del {v}\n")).collect();
                    let c = Cmd::new(&tools.ip)
                        .args(["-force", "-batch", "-"])
                        .stdin(batch)
                        .timeout(batch_timeout(present.len()))
                        .label("ip link del");
                    if let Err(e) = c.output(verbose) {
                        problems.push(e.to_string());
                    }
                }
                let left: Vec<&String> = veths.iter().filter(|v| iface_exists(v)).collect();
                report.veths = present.len().saturating_sub(left.len());
                if !left.is_empty() {
                    problems.push(format!("could not delete interfaces {}", join(&left)));
                }
            }
            Step::DelNetns(nss) => {
                let present: Vec<&String> = nss.iter().filter(|n| netns_exists(n)).collect();
                for ns in &present {
                    report.processes += stop_netns_processes(tools, ns, verbose);
                }
                if !present.is_empty() {
                    let batch: String =
                        present.iter().map(|n| format!("netns del {n}\n")).collect();
                    let c = Cmd::new(&tools.ip)
                        .args(["-force", "-batch", "-"])
                        .stdin(batch)
                        .timeout(batch_timeout(present.len()))
                        .label("ip netns del");
                    if let Err(e) = c.output(verbose) {
                        problems.push(e.to_string());
                    }
                }
                let left: Vec<&String> = nss.iter().filter(|n| netns_exists(n)).collect();
                report.netns = present.len().saturating_sub(left.len());
                if !left.is_empty() {
                    problems.push(format!("could not delete namespaces {}", join(&left)));
                }
            }
            Step::RemoveEtcNetns(dirs) => {
                for d in dirs {
                    let hosts = d.join("hosts");
                    match fs::remove_file(&hosts) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => problems.push(format!("remove {}: {e}", hosts.display())),
                    }
                    match fs::remove_dir(&d) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => problems.push(format!("remove {}: {e}", d.display())),
                    }
                }
            }
            Step::StopDaemons(daemons) => {
                for d in daemons {
                    if let Some(pid) = daemon_pid(dir, &d) {
                        if verbose {
                            eprintln!("+ kill {pid} ({})", d.name);
                        }
                        if stop_pid(pid, Duration::from_secs(3)) {
                            report.daemons += 1;
                        } else {
                            problems.push(format!("{} (pid {pid}) did not stop", d.name));
                        }
                    }
                }
            }
            Step::DelLeftoverTaps(taps) => {
                for b in taps.iter().filter(|b| iface_exists(b)) {
                    let c = Cmd::new(&tools.ip).args(["link", "del", b.as_str()]);
                    if let Err(e) = c.run(verbose) {
                        if iface_exists(b) {
                            problems.push(e.to_string());
                        }
                    } else if state.bridges.contains(b) {
                        report.bridges += 1;
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        fs::remove_dir_all(dir)
            .map_err(|e| LabError::io(format!("remove {}", dir.display()), e))?;
        Ok(report)
    } else {
        Err(LabError::Other(format!(
            "{} not fully removed: {} (state kept in {}; run pharos lab down again)",
            title(&state.name),
            problems.join("; "),
            dir.join(state::STATE_FILE).display()
        )))
    }
}

fn join(v: &[&String]) -> String {
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

/// Stops the processes running in namespace `ns` (started there by `pharos lab exec` and
/// left behind); returns how many there were.
fn stop_netns_processes(tools: &Tools, ns: &str, verbose: bool) -> usize {
    let Ok(out) = Cmd::new(&tools.ip).args(["netns", "pids", ns]).run(verbose) else {
        return 0;
    };
    let pids: Vec<i32> = out
        .stdout
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|p| *p > 1 && *p != std::process::id() as i32)
        .collect();
    for &pid in &pids {
        if verbose {
            eprintln!("+ kill {pid} (in {ns})");
        }
        stop_pid(pid, Duration::from_secs(1));
    }
    pids.len()
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::DEFAULT_NAME;
    #[test]
    fn the_default_lab_is_not_called_lab_lab() {
        assert_eq!(title(DEFAULT_NAME), "lab");
        assert_eq!(title("t1"), "lab t1");
        let report = DownReport {
            name: DEFAULT_NAME.into(),
            existed: true,
            ..DownReport::default()
        };
        assert!(report.to_string().starts_with("lab removed: "), "{report}");
    }
}
