//! The programs a lab runs, found on PATH or in the sbin directories, and the preflight
//! check that this machine can run a lab (the programs installed, and root).

use std::fs;
use std::path::{Path, PathBuf};

use crate::LabError;

const OVS_SCHEMA: &[&str] = &[
    "/usr/share/openvswitch/vswitch.ovsschema",
    "/usr/local/share/openvswitch/vswitch.ovsschema",
];

/// Paths of the programs the lab runs.
#[derive(Debug, Clone)]
pub(crate) struct Tools {
    /// iproute2's `ip`: namespaces, veths, links.
    pub(crate) ip: PathBuf,
    /// `ovs-vsctl`: bridges, ports, controllers.
    pub(crate) vsctl: PathBuf,
    /// `ovsdb-tool`: creates the lab's database.
    pub(crate) ovsdb_tool: PathBuf,
    /// `ovsdb-server`: the lab's database daemon.
    pub(crate) ovsdb_server: PathBuf,
    /// `ovs-vswitchd`: the lab's switch daemon.
    pub(crate) vswitchd: PathBuf,
    /// `ethtool`: transmit checksum offload off.
    pub(crate) ethtool: PathBuf,
    /// `ping`, run in the hosts' namespaces.
    pub(crate) ping: PathBuf,
    /// Open vSwitch's database schema, for `ovsdb-tool create`.
    pub(crate) schema: PathBuf,
}

/// Finds `name` on PATH or in the sbin directories (which a sudo'd PATH may lack).
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            [
                "/usr/local/sbin",
                "/usr/local/bin",
                "/usr/sbin",
                "/usr/bin",
                "/sbin",
                "/bin",
            ]
            .iter()
            .map(PathBuf::from),
        )
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Tools {
    /// The tools, or the list of (what, Debian package) missing.
    pub(crate) fn find() -> Result<Tools, Vec<(&'static str, &'static str)>> {
        let mut missing: Vec<(&str, &str)> = Vec::new();
        let mut need = |name: &str, what: &'static str, pkg: &'static str| {
            let p = which(name);
            if p.is_none() && !missing.iter().any(|m| m.1 == pkg) {
                missing.push((what, pkg));
            }
            p.unwrap_or_default()
        };
        let ovs = ("Open vSwitch", "openvswitch-switch");
        let ip = need("ip", "iproute2", "iproute2");
        let vsctl = need("ovs-vsctl", ovs.0, ovs.1);
        let ovsdb_tool = need("ovsdb-tool", ovs.0, ovs.1);
        let ovsdb_server = need("ovsdb-server", ovs.0, ovs.1);
        let vswitchd = need("ovs-vswitchd", ovs.0, ovs.1);
        let ethtool = need("ethtool", "ethtool", "ethtool");
        let ping = need("ping", "ping", "iputils-ping");
        let schema = OVS_SCHEMA.iter().map(PathBuf::from).find(|p| p.is_file());
        if schema.is_none() && !missing.iter().any(|m| m.1 == ovs.1) {
            missing.push(ovs);
        }
        if missing.is_empty() {
            Ok(Tools {
                ip,
                vsctl,
                ovsdb_tool,
                ovsdb_server,
                vswitchd,
                ethtool,
                ping,
                schema: schema.unwrap_or_default(),
            })
        } else {
            Err(missing)
        }
    }

    pub(crate) fn get() -> Result<Tools, LabError> {
        Tools::find().map_err(|m| LabError::Preflight(missing_message(&m)))
    }
}

fn missing_message(missing: &[(&str, &str)]) -> String {
    let whats: Vec<&str> = missing.iter().map(|m| m.0).collect();
    let pkgs: Vec<&str> = missing.iter().map(|m| m.1).collect();
    let (list, verb) = match whats.as_slice() {
        [one] => (one.to_string(), "is"),
        [init @ .., last] => (format!("{} and {last}", init.join(", ")), "are"),
        [] => (String::new(), "is"),
    };
    format!(
        "{list} {verb} not installed: apt-get install {}",
        pkgs.join(" ")
    )
}

/// Whether this machine can run a lab: the tools are installed and we are root. The
/// message names what is missing and how to install it.
pub fn preflight() -> Result<(), LabError> {
    Tools::get()?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(LabError::Preflight(
            "pharos lab needs root (network namespaces and Open vSwitch): run it as root or \
             with sudo"
                .into(),
        ));
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tools_name_the_packages() {
        assert_eq!(
            missing_message(&[("Open vSwitch", "openvswitch-switch")]),
            "Open vSwitch is not installed: apt-get install openvswitch-switch"
        );
        assert_eq!(
            missing_message(&[
                ("Open vSwitch", "openvswitch-switch"),
                ("ethtool", "ethtool"),
                ("ping", "iputils-ping")
            ]),
            "Open vSwitch, ethtool and ping are not installed: apt-get install \
             openvswitch-switch ethtool iputils-ping"
        );
    }
}
