//! `[static_flows]` in `pharos.toml`: where the flows added through the REST API are
//! kept (`state_file`), and the flows the file itself lists (`[[static_flows.flow]]`).
//!
//! ```toml
//! [static_flows]
//! state_file = "/var/lib/pharos/static-flows.json"
//!
//! [[static_flows.flow]]
//! name = "drop-ping"
//! dpid = "00:00:00:00:00:00:00:01"
//! flow = "priority=1000,icmp,actions=drop"
//! ```
//!
//! The binary's schema puts [`StaticFlowsConfig`] under the `static_flows` key; the
//! errors of [`StaticFlowsConfig::validate`] name their keys from the top of the file
//! (`static_flows.flow[1].name`).

use std::path::PathBuf;

use controller::app::settings::ConfigError;
use openflow::Dpid;
use serde::{Deserialize, Serialize};

/// Static flows, as Floodlight's static entry pusher keeps them (`[static_flows]` in
/// the file): named flows in `ovs-ofctl` syntax, installed on their switch whenever it
/// connects.
///
/// The flows listed here are the file's: the REST API shows them but cannot replace or
/// delete them (edit the file and restart). The ones added through the REST API are
/// kept in `state_file`, which the controller alone writes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StaticFlowsConfig {
    /// Where the flows added through the REST API are kept (JSON, written whole to a
    /// temporary file then renamed over it). Default: [`default_state_file`].
    pub state_file: Option<PathBuf>,
    /// The flows of the file (`[[static_flows.flow]]`).
    pub flow: Vec<StaticFlowConfig>,
}

/// One static flow listed in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticFlowConfig {
    /// Its name: 1 to 64 letters, digits, `.`, `_` or `-` ([`check_static_flow_name`]).
    pub name: String,
    /// Its switch: `"00:00:00:00:00:00:00:01"`, `"0x1"`, `1` (see [`openflow::dpid`]).
    #[serde(with = "dpid_value")]
    pub dpid: Dpid,
    /// The flow, as `ovs-ofctl add-flow` takes it.
    pub flow: String,
}

/// The longest static flow name.
pub const MAX_STATIC_FLOW_NAME: usize = 64;

/// Checks a static flow's name: 1 to [`MAX_STATIC_FLOW_NAME`] ASCII letters, digits,
/// `.`, `_` or `-`, so that it is a URL path segment as it stands
/// (`/api/v1/static_flows/NAME`) and a word in a shell.
pub fn check_static_flow_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a static flow needs a name, e.g. \"block-h1-h2\"".into());
    }
    if name.len() > MAX_STATIC_FLOW_NAME {
        return Err(format!(
            "the name {name:?} is longer than {MAX_STATIC_FLOW_NAME} characters"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "the name {name:?} holds {c:?}: use letters, digits, '.', '_' and '-'"
        ));
    }
    Ok(())
}

/// Where static flows are kept when `[static_flows] state_file` does not say: beside
/// the user's other state, `$XDG_STATE_HOME/pharos/static-flows.json`, else
/// `$HOME/.local/state/pharos/static-flows.json` (the XDG default), else
/// `./pharos-static-flows.json`. Not the runtime directory, where the API token goes:
/// static flows must outlive a reboot.
pub fn default_state_file(xdg_state_home: Option<PathBuf>, home: Option<PathBuf>) -> PathBuf {
    let absolute = |p: Option<PathBuf>| p.filter(|p| p.is_absolute());
    if let Some(dir) = absolute(xdg_state_home) {
        return dir.join("pharos").join("static-flows.json");
    }
    if let Some(home) = absolute(home) {
        return home
            .join(".local")
            .join("state")
            .join("pharos")
            .join("static-flows.json");
    }
    PathBuf::from("pharos-static-flows.json")
}

impl StaticFlowsConfig {
    /// The state file: the one set, or [`default_state_file`] from the environment.
    pub fn state_file(&self) -> PathBuf {
        match &self.state_file {
            Some(p) => p.clone(),
            None => default_state_file(
                std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
                std::env::var_os("HOME").map(PathBuf::from),
            ),
        }
    }

    /// Checks the names (valid, each once), and each flow's syntax (the error names the
    /// offending token, as `ovs-ofctl` users expect).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self
            .state_file
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(ConfigError::new(
                "static_flows.state_file",
                "is empty: name a file, or leave the key out for the default",
            ));
        }
        for (i, f) in self.flow.iter().enumerate() {
            check_static_flow_name(&f.name)
                .map_err(|r| ConfigError::new(format!("static_flows.flow[{i}].name"), r))?;
            if let Some(j) = self.flow[..i].iter().position(|g| g.name == f.name) {
                return Err(ConfigError::new(
                    format!("static_flows.flow[{i}].name"),
                    format!("`{}` is already static_flows.flow[{j}]", f.name),
                ));
            }
            openflow::ofctl::parse_flow(&f.flow).map_err(|e| {
                ConfigError::new(format!("static_flows.flow[{i}].flow"), e.to_string())
            })?;
        }
        Ok(())
    }
}

/// A dpid in the file: a string in any form [`Dpid`] reads, or a number (with this
/// file's own message for anything else).
mod dpid_value {
    use openflow::Dpid;
    use serde::{de, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Dpid, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(d)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Dpid, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
        }
        match Raw::deserialize(d).map_err(|_: D::Error| {
            de::Error::custom("expected a dpid: \"00:00:00:00:00:00:00:01\", \"0x1\" or 1")
        })? {
            Raw::Text(t) => t.parse().map_err(de::Error::custom),
            Raw::Int(n) => u64::try_from(n)
                .map(Dpid)
                .map_err(|_| de::Error::custom(format!("{n} is not a dpid: it is negative"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use controller::app::settings::{from_toml_str, ConfigError};

    use super::*;

    /// The section where the file puts it, read and checked as the binary does.
    fn parse(text: &str) -> Result<StaticFlowsConfig, ConfigError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default)]
            static_flows: StaticFlowsConfig,
        }
        let f: File = from_toml_str(text)?;
        f.static_flows.validate().map_err(|e| e.in_text(text))?;
        Ok(f.static_flows)
    }

    fn err(text: &str) -> ConfigError {
        parse(text).expect_err("should be refused")
    }

    #[test]
    fn static_flows_are_read_with_their_dpids_in_any_form() {
        let s = parse(
            r#"
            [static_flows]
            state_file = "/var/lib/pharos/static.json"

            [[static_flows.flow]]
            name = "drop-h1-h2"
            dpid = "00:00:00:00:00:00:00:02"
            flow = "priority=100,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,actions=drop"

            [[static_flows.flow]]
            name = "arp.flood"
            dpid = 1
            flow = "arp,actions=flood"
            "#,
        )
        .unwrap();
        assert_eq!(s.state_file(), PathBuf::from("/var/lib/pharos/static.json"));
        assert_eq!(s.flow.len(), 2);
        assert_eq!(
            (s.flow[0].name.as_str(), s.flow[0].dpid),
            ("drop-h1-h2", Dpid(2))
        );
        assert_eq!(
            (s.flow[1].name.as_str(), s.flow[1].dpid),
            ("arp.flood", Dpid(1))
        );
        assert_eq!(s.flow[1].flow, "arp,actions=flood");
        // None by default.
        assert_eq!(parse("").unwrap(), StaticFlowsConfig::default());
        assert_eq!(StaticFlowsConfig::default().validate(), Ok(()));
        // Written back, the dpid in its printed form, it reads the same.
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("\"00:00:00:00:00:00:00:01\""), "{text}");
        assert_eq!(toml::from_str::<StaticFlowsConfig>(&text).unwrap(), s);
    }

    #[test]
    fn bad_static_flows_name_file_line_and_key() {
        let text = "[static_flows]\n\n[[static_flows.flow]]\nname = \"a\"\ndpid = 1\nflow = \"actions=drop\"\n\n[[static_flows.flow]]\nname = \"b\"\ndpid = 1\nflow = \"ip,nw_dst=10.0.0.300,actions=drop\"\n";
        let e = err(text);
        assert_eq!(e.key, "static_flows.flow[1].flow");
        assert_eq!(e.line, Some(11));
        assert!(e.reason.contains("nw_dst=10.0.0.300"), "{e}");
        let e = e.in_file(Path::new("pharos.toml"), text);
        assert!(
            e.to_string()
                .starts_with("pharos.toml:11: `static_flows.flow[1].flow`: "),
            "{e}"
        );

        let e = err("[[static_flows.flow]]\nname = \"a\"\ndpid = 1\nflow = \"actions=drop\"\n[[static_flows.flow]]\nname = \"a\"\ndpid = 2\nflow = \"actions=drop\"\n");
        assert_eq!(e.key, "static_flows.flow[1].name");
        assert!(e.reason.contains("already static_flows.flow[0]"), "{e}");

        let e = err("[[static_flows.flow]]\nname = \"a b\"\ndpid = 1\nflow = \"actions=drop\"\n");
        assert_eq!(e.key, "static_flows.flow[0].name");
        assert!(e.reason.contains("' '"), "{e}");

        let e =
            err("[[static_flows.flow]]\nname = \"a\"\ndpid = \"00:01\"\nflow = \"actions=drop\"\n");
        assert_eq!(e.key, "static_flows.flow[0].dpid");
        assert!(e.reason.contains("exactly 8 groups of 2 hex digits"), "{e}");
        assert_eq!(e.line, Some(3));

        let e = err("[[static_flows.flow]]\nname = \"a\"\ndpid = -1\nflow = \"actions=drop\"\n");
        assert_eq!(e.key, "static_flows.flow[0].dpid");

        let e = err("[[static_flows.flow]]\nname = \"a\"\nflow = \"actions=drop\"\n");
        assert!(e.reason.contains("dpid"), "{e}");

        let e = err("[static_flows]\nstate_file = \"\"\n");
        assert_eq!(e.key, "static_flows.state_file");

        let e = err("[static_flows]\nstatefile = \"x\"\n");
        assert_eq!(e.key, "static_flows.statefile");
        assert!(e.reason.contains("did you mean `state_file`?"), "{e}");
    }

    #[test]
    fn static_flow_names_are_url_and_shell_words() {
        for ok in ["a", "drop-h1_h2.v4", &"x".repeat(64)] {
            assert_eq!(check_static_flow_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "a/b", "a b", "é", &"x".repeat(65), "a?b"] {
            assert!(check_static_flow_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_default_state_file_is_beside_the_users_state() {
        assert_eq!(
            default_state_file(Some("/s".into()), Some("/home/u".into())),
            PathBuf::from("/s/pharos/static-flows.json")
        );
        assert_eq!(
            default_state_file(None, Some("/home/u".into())),
            PathBuf::from("/home/u/.local/state/pharos/static-flows.json")
        );
        // A relative XDG path is ignored, as the XDG spec asks.
        assert_eq!(
            default_state_file(Some("rel".into()), None),
            PathBuf::from("pharos-static-flows.json")
        );
    }
}
