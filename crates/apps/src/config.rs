//! `[[apps]]` in `pharos.toml`: the apps to run, in order, each with its parameters,
//! which [`by_name`](crate::by_name) turns into apps.
//!
//! ```toml
//! [[apps]]
//! name = "learning_switch"
//! params = { idle_timeout = 10 }
//! ```
//!
//! The list as such is checked here ([`check_list`]: each app named, and once;
//! [`check_names`]: each a name this binary knows); an app's `params` are its own
//! business, read by the app into its own typed parameters. Errors name the keys from
//! the top of the file (`apps[1].name`).

use controller::app::settings::{did_you_mean, ConfigError};
use serde::{Deserialize, Serialize};

/// One app to run and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    /// The app's name (`"routing"`, `"learning_switch"`).
    pub name: String,
    /// App-specific settings (`{ idle_timeout = 10 }`), parsed by the app itself.
    #[serde(default)]
    pub params: toml::Table,
}

impl AppConfig {
    /// An app with no parameters.
    pub fn named(name: &str) -> AppConfig {
        AppConfig {
            name: name.to_string(),
            params: toml::Table::new(),
        }
    }
}

/// Checks the list as such: every app has a name, and none is listed twice (an app
/// runs once).
pub fn check_list(list: &[AppConfig]) -> Result<(), ConfigError> {
    for (i, app) in list.iter().enumerate() {
        if app.name.is_empty() {
            return Err(ConfigError::new(format!("apps[{i}].name"), "is empty"));
        }
        if let Some(j) = list[..i].iter().position(|a| a.name == app.name) {
            return Err(ConfigError::new(
                format!("apps[{i}].name"),
                format!("`{}` is already apps[{j}]; an app runs once", app.name),
            ));
        }
    }
    Ok(())
}

/// Checks every app name against the ones this binary knows; an unknown one is refused
/// with the nearest known name and the list of them.
pub fn check_names(list: &[AppConfig], known: &[&str]) -> Result<(), ConfigError> {
    for (i, app) in list.iter().enumerate() {
        if !known.contains(&app.name.as_str()) {
            return Err(ConfigError::new(
                format!("apps[{i}].name"),
                unknown_app(&app.name, known),
            ));
        }
    }
    Ok(())
}

/// Why an app name is refused: the nearest known name, then all of them.
pub fn unknown_app(name: &str, known: &[&str]) -> String {
    format!(
        "unknown app `{name}`{}; the apps are: {}",
        did_you_mean(name, known),
        known.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_are_named_once_and_not_empty() {
        let list = [AppConfig::named("hub"), AppConfig::named("hub")];
        let e = check_list(&list).unwrap_err();
        assert_eq!(e.key, "apps[1].name");
        assert!(e.reason.contains("already apps[0]"), "{e}");
        let e = check_list(&[AppConfig::named("")]).unwrap_err();
        assert_eq!(e.key, "apps[0].name");
        assert_eq!(e.reason, "is empty");
        assert_eq!(check_list(&[]), Ok(()));
        let list = [AppConfig::named("hub"), AppConfig::named("topology")];
        assert_eq!(check_list(&list), Ok(()));
    }

    #[test]
    fn unknown_app_names_list_the_known_ones() {
        let list = [AppConfig::named("hub"), AppConfig::named("learning")];
        let e = check_names(&list, &["hub", "learning_switch"]).unwrap_err();
        assert_eq!(e.key, "apps[1].name");
        assert_eq!(
            e.reason,
            "unknown app `learning`; the apps are: hub, learning_switch"
        );
        assert!(check_names(&list, &["hub", "learning"]).is_ok());
        let known = ["device_manager", "hub", "routing", "topology"];
        assert_eq!(
            unknown_app("routeing", &known),
            "unknown app `routeing` (did you mean `routing`?); the apps are: device_manager, hub, routing, topology"
        );
    }
}
