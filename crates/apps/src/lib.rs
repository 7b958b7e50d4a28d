//! # pharos-apps: the built-in Pharos apps
//!
//! Each app is one type implementing [`controller::app::App`], written against the
//! version-neutral model of `openflow::model`, so it drives OpenFlow 1.0 and 1.3
//! switches unchanged.
//!
//! ```text
//! learning_switch   LearningSwitch (per-switch MAC table, flows on known destinations)
//!                   Hub (floods everything); both in one file, to read side by side
//! routing           Routing, the app: flows along shortest paths to known hosts,
//!                   floods along a spanning tree; ShortestPaths (all-pairs shortest
//!                   paths behind the RoutingEngine trait, repaired incrementally),
//!                   SpanningTree (ports safe to flood): pure, no I/O
//! topology          TopologyApp: LLDP link discovery, the Topology service (switches,
//!                   ports, links, events); lldp: the discovery frame, signed with a
//!                   per-controller key (encode, verify), pure, no I/O
//! devices           DeviceManager (`device_manager`): learns hosts from PACKET_IN at
//!                   the network's edge, provides the Devices service; HostTable: hosts
//!                   by (MAC, VLAN) with IPs, attachment point and ages, indexed by MAC
//!                   and IP (pure, no I/O)
//! ```
//!
//! [`by_name`] turns the names and parameters of `pharos run --apps` and `pharos.toml`
//! into apps:
//!
//! ```
//! let params: toml::Table = toml::from_str("idle_timeout = 30").unwrap();
//! let app = apps::by_name("learning_switch", &params).unwrap();
//! assert_eq!(app.app_name(), "learning_switch");
//! assert!(apps::by_name("learning_swich", &toml::Table::new()).is_err());
//! ```

pub mod devices;
pub mod learning_switch;
pub mod mac_table;
pub mod routing;
pub mod topology;

pub use learning_switch::{Hub, LearningSwitch};

use controller::app::AnyApp;

/// The names [`by_name`] knows.
pub const NAMES: &[&str] = &[
    "device_manager",
    "hub",
    "learning_switch",
    "routing",
    "topology",
];

/// The app called `name`, configured from `params`. The error names the app and says
/// what is wrong (an unknown app, an unknown parameter, a value out of range).
pub fn by_name(name: &str, params: &toml::Table) -> Result<Box<dyn AnyApp>, String> {
    match name {
        "hub" if params.is_empty() => Ok(Box::new(Hub)),
        "hub" => Err(format!(
            "app hub takes no parameters (got: {})",
            params.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
        "learning_switch" => {
            let params = toml::Value::Table(params.clone())
                .try_into()
                .map_err(|e| format!("app learning_switch: {e}"))?;
            Ok(Box::new(LearningSwitch { params }))
        }
        "device_manager" => {
            let params: devices::app::Params = toml::Value::Table(params.clone())
                .try_into()
                .map_err(|e| format!("app device_manager: {e}"))?;
            let app = devices::DeviceManager::new(params)
                .map_err(|e| format!("app device_manager: {e}"))?;
            Ok(Box::new(app))
        }
        "routing" => {
            let params = toml::Value::Table(params.clone())
                .try_into()
                .map_err(|e| format!("app routing: {e}"))?;
            Ok(Box::new(routing::Routing::new(params)))
        }
        "topology" => {
            let params: topology::Params = toml::Value::Table(params.clone())
                .try_into()
                .map_err(|e| format!("app topology: {e}"))?;
            let app =
                topology::TopologyApp::new(params).map_err(|e| format!("app topology: {e}"))?;
            Ok(Box::new(app))
        }
        _ => Err(format!(
            "no app named {name:?} (known: {})",
            NAMES.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_checked() {
        let t: toml::Table = toml::from_str("idle_timeout = 5\npriority = 7").unwrap();
        assert!(by_name("learning_switch", &t).is_ok());
        let t: toml::Table = toml::from_str("idle = 5").unwrap();
        let e = by_name("learning_switch", &t).err().unwrap();
        assert!(e.contains("idle"), "{e}");
        let t: toml::Table = toml::from_str("idle_timeout = 70000").unwrap();
        assert!(by_name("learning_switch", &t).is_err());
        let t: toml::Table = toml::from_str("x = 1").unwrap();
        assert!(by_name("hub", &t).err().unwrap().contains("x"));
        assert!(by_name("hub", &toml::Table::new()).is_ok());
        let t: toml::Table = toml::from_str("lldp_interval = 0.5\nlink_timeout = 2").unwrap();
        assert_eq!(by_name("topology", &t).unwrap().app_name(), "topology");
        let t: toml::Table = toml::from_str("lldp_interval = 2\nlink_timeout = 1").unwrap();
        assert!(by_name("topology", &t)
            .err()
            .unwrap()
            .contains("link_timeout"));
        let t: toml::Table = toml::from_str("lldp_interval = 0").unwrap();
        assert!(by_name("topology", &t)
            .err()
            .unwrap()
            .contains("lldp_interval"));
        let t: toml::Table = toml::from_str("link_timeout = 3").unwrap();
        assert!(by_name("topology", &t).is_ok(), "an integer is seconds too");
        let t: toml::Table = toml::from_str("lldp = 1").unwrap();
        assert!(by_name("topology", &t).err().unwrap().contains("lldp"));
        assert!(by_name("nope", &toml::Table::new())
            .err()
            .unwrap()
            .contains("learning_switch"));
    }

    #[test]
    fn device_manager_parameters_are_checked() {
        let ok = |text: &str| by_name("device_manager", &toml::from_str(text).unwrap());
        assert!(ok("").is_ok());
        assert!(ok("host_timeout = 30\nmax_hosts = 10\nmax_ips_per_family = 0").is_ok());
        assert!(ok("host_timeout = 2.5").is_ok());
        for (bad, named) in [
            ("host_timeout = \"30s\"", "host_timeout"),
            ("host_timeout = 0.5", "host_timeout"),
            ("host_timeout = 86401", "host_timeout"),
            ("host_timeout = nan", "host_timeout"),
            ("max_hosts = 0", "max_hosts"),
            ("max_ips_per_family = 65", "max_ips_per_family"),
            ("timeout = \"5s\"", "timeout"),
        ] {
            let e = ok(bad).err().unwrap();
            assert!(
                e.contains("device_manager") && e.contains(named),
                "{bad}: {e}"
            );
        }
        let p = devices::app::Params::default();
        assert_eq!(p.host_timeout(), std::time::Duration::from_secs(300));
        assert_eq!(p.expire_interval(), std::time::Duration::from_secs(10));
    }

    #[test]
    fn defaults() {
        let p = learning_switch::Params::default();
        assert_eq!(
            (p.idle_timeout, p.hard_timeout, p.priority),
            (60, 0, 0x8000)
        );
        let p = topology::Params::default();
        assert_eq!(
            (p.lldp_interval, p.link_timeout, p.max_frame_age),
            (1.0, 3.5, 1.0)
        );
    }
}
