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
//! static_flows      StaticFlowsApp (`static_flows`): installs named flows in
//!                   `ovs-ofctl` syntax on each switch that connects, learns from the
//!                   switch whether they took; StaticFlows: the flows, their status and
//!                   the state file (the REST API's service); config: `[static_flows]`
//!                   of pharos.toml. `pharos run` always runs it, last; it is not one
//!                   of the `--apps`
//! config            AppConfig: one `[[apps]]` entry of pharos.toml (name, params); the
//!                   list's checks (named, once, known)
//! net               what the apps share about the network: Link, Cable, the MAC index,
//!                   test topologies (topology, devices and routing import it, not
//!                   each other for it)
//! mac_table, key_index, lines
//!                   the open-addressed tables (learning switch, route index) and the
//!                   memory they and the MAC index share: cache lines, prefetch, huge
//!                   pages
//! ```
//!
//! [`by_name`] turns the names and parameters of `pharos run --apps` and `pharos.toml`
//! ([`config::AppConfig`]) into apps:
//!
//! ```
//! let params: toml::Table = toml::from_str("idle_timeout = 30").unwrap();
//! let app = apps::by_name("learning_switch", &params).unwrap();
//! assert_eq!(app.app_name(), "learning_switch");
//! assert!(apps::by_name("learning_swich", &toml::Table::new()).is_err());
//! ```

pub mod config;
pub mod devices;
pub mod key_index;
pub mod learning_switch;
pub mod lines;
pub mod mac_table;
pub mod net;
pub mod routing;
pub mod static_flows;
pub mod topology;

pub use learning_switch::{Hub, LearningSwitch};

/// The lines logged while a closure runs (this thread only), for tests of what the apps
/// say.
#[cfg(test)]
pub(crate) fn logged(level: tracing::Level, f: impl FnOnce()) -> String {
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .without_time()
        .with_target(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = sink.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

use controller::app::AnyApp;

/// The default apps, in order: link discovery, host tracking, and forwarding on shortest
/// paths with flooding on a spanning tree (for any network, loops included); what `pharos
/// run` runs when the configuration names no apps. The classic mode is `learning_switch`
/// alone.
pub const DEFAULT_APPS: [&str; 3] = ["topology", "device_manager", "routing"];

/// The names [`by_name`] knows.
pub const NAMES: &[&str] = &[
    "device_manager",
    "hub",
    "learning_switch",
    "routing",
    "topology",
];

/// Why an app refused its parameters: the parameter at fault (when one is) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    /// The app.
    pub app: String,
    /// The parameter (`lldp_interval`), or `None` when the app as a whole is at fault
    /// (an unknown app, parameters given to one that takes none).
    pub param: Option<String>,
    /// What is wrong, and what would be right.
    pub reason: String,
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.param {
            Some(p) => write!(f, "app {} parameter `{p}`: {}", self.app, self.reason),
            None => write!(f, "app {}: {}", self.app, self.reason),
        }
    }
}

impl std::error::Error for ParamError {}

impl ParamError {
    fn new(app: &str, param: Option<&str>, reason: impl Into<String>) -> ParamError {
        ParamError {
            app: app.to_string(),
            param: param.map(str::to_string),
            reason: reason.into(),
        }
    }
}

/// `params` read into the app's typed parameters; an error names the parameter, and a
/// misspelt one gets the nearest known name.
fn parse<P: serde::de::DeserializeOwned>(app: &str, params: &toml::Table) -> Result<P, ParamError> {
    serde_path_to_error::deserialize(toml::Value::Table(params.clone())).map_err(|e| {
        let path = e.path().to_string();
        // The message alone: the error's Display adds "in `key`" on a line of its own.
        let message = e.inner().message().trim_end().replace('\n', "; ");
        let message = message.as_str();
        if let Some((field, expected)) = message
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split_once('`'))
        {
            let expected = expected.trim_start_matches(", ");
            let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            let guess = controller::app::settings::did_you_mean(field, &known);
            return ParamError::new(
                app,
                Some(field),
                format!("unknown parameter{guess}; {expected}"),
            );
        }
        let param = (path != ".").then_some(path.as_str());
        ParamError::new(app, param, message)
    })
}

/// The app called `name`, configured from `params`. The error names the app and the
/// parameter, and says what is wrong (an unknown app or parameter, a value out of
/// range).
pub fn by_name(name: &str, params: &toml::Table) -> Result<Box<dyn AnyApp>, ParamError> {
    match name {
        "hub" if params.is_empty() => Ok(Box::new(Hub)),
        "hub" => Err(ParamError::new(
            name,
            params.keys().next().map(String::as_str),
            "hub takes no parameters",
        )),
        "learning_switch" => Ok(Box::new(LearningSwitch {
            params: parse(name, params)?,
        })),
        "device_manager" => {
            let params: devices::app::Params = parse(name, params)?;
            let app = devices::DeviceManager::new(params)
                .map_err(|(param, reason)| ParamError::new(name, Some(param), reason))?;
            Ok(Box::new(app))
        }
        "routing" => Ok(Box::new(routing::Routing::new(parse(name, params)?))),
        "topology" => {
            let params: topology::Params = parse(name, params)?;
            let app = topology::TopologyApp::new(params)
                .map_err(|(param, reason)| ParamError::new(name, param, reason))?;
            Ok(Box::new(app))
        }
        _ => Err(ParamError::new(
            name,
            None,
            config::unknown_app(name, NAMES),
        )),
    }
}

/// The other apps `name` needs in the same set: the ones providing the services it
/// uses. (Their order does not matter: services are provided before any app starts.)
pub fn needs(name: &str) -> &'static [&'static str] {
    match name {
        "routing" => &["topology", "device_manager"],
        "device_manager" => &["topology"],
        _ => &[],
    }
}

/// The apps that decide every PACKET_IN (and stop it there): of two in one set, the
/// one listed later sees none.
pub const FORWARDERS: &[&str] = &["hub", "learning_switch", "routing"];

/// Checks a set of apps, in order, as a whole: an app whose needs are missing is an
/// error in the user's words (`routing needs topology: add it to --apps, e.g. --apps
/// topology,device_manager,routing`); two forwarding apps give a warning (returned).
pub fn check_set(names: &[&str]) -> Result<Vec<String>, String> {
    for name in names {
        let missing: Vec<&str> = needs(name)
            .iter()
            .copied()
            .filter(|n| !names.contains(n))
            .collect();
        if missing.is_empty() {
            continue;
        }
        // The set with what is missing put before the first app that needs it.
        let mut fixed: Vec<&str> = Vec::new();
        for n in names {
            if *n == *name {
                for m in needs(name).iter().flat_map(|m| needs(m).iter().chain([m])) {
                    if !fixed.contains(m) && !names.contains(m) {
                        fixed.push(m);
                    }
                }
            }
            fixed.push(n);
        }
        return Err(format!(
            "{name} needs {}: add {} to --apps (or `apps` in the file), e.g. --apps {}",
            missing.join(" and "),
            if missing.len() == 1 { "it" } else { "them" },
            fixed.join(",")
        ));
    }
    let forwarders: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| FORWARDERS.contains(n))
        .collect();
    let mut warnings = Vec::new();
    if let [first, rest @ ..] = forwarders.as_slice() {
        for later in rest {
            warnings.push(format!(
                "apps {first} and {later} both answer every PACKET_IN: {first} comes first and stops each one, so {later} will see none; run one of them"
            ));
        }
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apps_own_cookies_carry_the_tags_the_core_stamps() {
        // The core stamps app_tag(name) (controller::cookie); the cookies routing and
        // topology make themselves must agree, or FLOW_REMOVED and flow dumps would
        // not find them.
        let owners = controller::cookie::Owners::new(["routing", "topology"]).unwrap();
        assert_eq!(owners.owner(topology::LLDP_COOKIE), Some("topology"));
        assert_eq!(owners.owner(routing::COOKIE_TAG | 42), Some("routing"));
        assert_eq!(
            owners.owner(routing::COOKIE_TAG | routing::COOKIE_SEQ),
            Some("routing")
        );
        assert_eq!(owners.owner(0), None);
        assert_eq!(owners.owner(0x1234), None);
    }

    #[test]
    fn parameters_are_checked() {
        let t: toml::Table = toml::from_str("idle_timeout = 5\npriority = 7").unwrap();
        assert!(by_name("learning_switch", &t).is_ok());
        let t: toml::Table = toml::from_str("idle = 5").unwrap();
        let e = by_name("learning_switch", &t).err().unwrap();
        assert_eq!(e.param.as_deref(), Some("idle"));
        assert!(e.reason.contains("idle_timeout"), "{e}");
        let t: toml::Table = toml::from_str("idle_timeout = 70000").unwrap();
        assert!(by_name("learning_switch", &t).is_err());
        let t: toml::Table = toml::from_str("x = 1").unwrap();
        assert!(by_name("hub", &t).err().unwrap().to_string().contains("x"));
        assert!(by_name("hub", &toml::Table::new()).is_ok());
        let t: toml::Table = toml::from_str("lldp_interval = 0.5\nlink_timeout = 2").unwrap();
        assert_eq!(by_name("topology", &t).unwrap().app_name(), "topology");
        let t: toml::Table = toml::from_str("lldp_interval = 2\nlink_timeout = 1").unwrap();
        assert!(by_name("topology", &t)
            .err()
            .unwrap()
            .to_string()
            .contains("link_timeout"));
        let t: toml::Table = toml::from_str("lldp_interval = 0").unwrap();
        assert!(by_name("topology", &t)
            .err()
            .unwrap()
            .to_string()
            .contains("lldp_interval"));
        let t: toml::Table = toml::from_str("link_timeout = 3").unwrap();
        assert!(by_name("topology", &t).is_ok(), "an integer is seconds too");
        let t: toml::Table = toml::from_str("lldp = 1").unwrap();
        assert!(by_name("topology", &t)
            .err()
            .unwrap()
            .to_string()
            .contains("lldp"));
        assert!(by_name("nope", &toml::Table::new())
            .err()
            .unwrap()
            .to_string()
            .contains("learning_switch"));
    }

    #[test]
    fn device_manager_parameters_are_checked() {
        let ok = |text: &str| by_name("device_manager", &toml::from_str(text).unwrap());
        assert!(ok("").is_ok());
        assert!(ok("host_timeout = 30\nmax_hosts = 10\nmax_ips_per_family = 0").is_ok());
        assert!(ok("host_timeout = 2.5").is_ok());
        for (bad, named) in [
            ("host_timeout = \"30x\"", "host_timeout"),
            ("host_timeout = true", "host_timeout"),
            ("host_timeout = 0.5", "host_timeout"),
            ("host_timeout = 86401", "host_timeout"),
            ("host_timeout = nan", "host_timeout"),
            ("max_hosts = 0", "max_hosts"),
            ("max_ips_per_family = 65", "max_ips_per_family"),
            ("timeout = \"5s\"", "timeout"),
        ] {
            let e = ok(bad).err().unwrap().to_string();
            assert!(
                e.contains("device_manager") && e.contains(named),
                "{bad}: {e}"
            );
        }
        assert!(ok("host_timeout = \"30s\"\nmove_quiet = \"500ms\"").is_ok());
        let p = devices::app::Params::default();
        assert_eq!(p.host_timeout(), std::time::Duration::from_secs(300));
        assert_eq!(p.expire_interval(), std::time::Duration::from_secs(10));
    }

    #[test]
    fn parameters_take_durations_as_the_core_does() {
        let t: toml::Table =
            toml::from_str("lldp_interval = \"500ms\"\nlink_timeout = \"2s\"").unwrap();
        assert!(by_name("topology", &t).is_ok());
        let t: toml::Table =
            toml::from_str("lldp_interval = \"2s\"\nlink_timeout = \"1s\"").unwrap();
        let e = by_name("topology", &t).err().unwrap();
        assert_eq!(e.param.as_deref(), Some("link_timeout"));
        for app in ["learning_switch", "routing"] {
            let t: toml::Table = toml::from_str("idle_timeout = \"1m\"\nhard_timeout = 5").unwrap();
            assert!(by_name(app, &t).is_ok(), "{app}");
            let t: toml::Table = toml::from_str("idle_timeout = \"500ms\"").unwrap();
            let e = by_name(app, &t).err().unwrap();
            assert_eq!(e.param.as_deref(), Some("idle_timeout"), "{app}");
            assert!(e.reason.contains("whole number of seconds"), "{e}");
        }
    }

    #[test]
    fn a_misspelt_parameter_names_itself_and_the_nearest_one() {
        let t: toml::Table = toml::from_str("lldp_intervall = 2").unwrap();
        let e = by_name("topology", &t).err().unwrap();
        assert_eq!(e.param.as_deref(), Some("lldp_intervall"));
        assert!(
            e.reason
                .starts_with("unknown parameter (did you mean `lldp_interval`?)"),
            "{e}"
        );
        let t: toml::Table = toml::from_str("max_routes = \"many\"").unwrap();
        let e = by_name("routing", &t).err().unwrap();
        assert_eq!(e.param.as_deref(), Some("max_routes"));
        let e = by_name("routeing", &toml::Table::new()).err().unwrap();
        assert!(e.reason.contains("did you mean `routing`?"), "{e}");
    }

    #[test]
    fn a_set_missing_what_an_app_needs_says_what_to_add() {
        assert_eq!(
            check_set(&["routing"]).unwrap_err(),
            "routing needs topology and device_manager: add them to --apps (or `apps` in the file), e.g. --apps topology,device_manager,routing"
        );
        assert_eq!(
            check_set(&["topology", "routing"]).unwrap_err(),
            "routing needs device_manager: add it to --apps (or `apps` in the file), e.g. --apps topology,device_manager,routing"
        );
        assert!(check_set(&["device_manager"])
            .unwrap_err()
            .ends_with("e.g. --apps topology,device_manager"));
        assert_eq!(
            check_set(&["routing", "device_manager", "topology"]),
            Ok(vec![])
        );
        assert_eq!(check_set(&[]), Ok(vec![]));
    }

    #[test]
    fn two_forwarding_apps_give_a_warning() {
        let w = check_set(&["hub", "learning_switch"]).unwrap();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("apps hub and learning_switch both answer every PACKET_IN"),
            "{w:?}"
        );
        assert!(w[0].contains("learning_switch will see none"), "{w:?}");
        assert!(check_set(&["learning_switch"]).unwrap().is_empty());
        assert!(check_set(&["topology", "device_manager", "routing"])
            .unwrap()
            .is_empty());
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
