//! What the kernel holds of a lab: interfaces (`/sys/class/net`), network namespaces
//! (`/run/netns`, and `/etc/netns` for their `hosts` files), IPv6 per interface
//! (`/proc/sys`), and the links' states (`ip -j link show`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cmd::Cmd;

/// A generous timeout for an `ip -batch` of `n` lines.
pub(crate) fn batch_timeout(n: usize) -> Duration {
    Duration::from_secs(10) + Duration::from_millis(50 * n as u64)
}

pub(crate) fn etc_netns(ns: &str) -> PathBuf {
    Path::new("/etc/netns").join(ns)
}

pub(crate) fn iface_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

pub(crate) fn netns_exists(ns: &str) -> bool {
    Path::new("/run/netns").join(ns).exists()
}

pub(crate) fn disable_ipv6(iface: &str) {
    let p = Path::new("/proc/sys/net/ipv6/conf")
        .join(iface)
        .join("disable_ipv6");
    // No IPv6 in this kernel: nothing to turn off.
    let _ = fs::write(p, "1");
}

/// Root-namespace interfaces and whether each is operationally up.
pub(crate) fn iface_states(ip: &Path) -> BTreeMap<String, bool> {
    let Ok(out) = Cmd::new(ip).args(["-j", "link", "show"]).run(false) else {
        return BTreeMap::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&out.stdout) else {
        return BTreeMap::new();
    };
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            let name = i["ifname"].as_str()?.to_string();
            let up = i["operstate"].as_str() == Some("UP");
            Some((name, up))
        })
        .collect()
}
