//! `log_level` (and `--log-level`, `RUST_LOG`): a log filter, checked before `tracing`
//! reads it, and given in `tracing`'s spelling.

/// The levels a log filter may name, and the other spellings taken for them.
const LEVELS: [(&str, &[&str]); 6] = [
    ("error", &["err"]),
    ("warn", &["warning"]),
    ("info", &["information"]),
    ("debug", &[]),
    ("trace", &[]),
    ("off", &["none"]),
];

/// The level `word` names, in `tracing`'s spelling (any case; `warning`, `err`,
/// `information` and `none` taken too).
fn level(word: &str) -> Option<&'static str> {
    let w = word.trim().to_ascii_lowercase();
    LEVELS
        .iter()
        .find(|(name, other)| *name == w || other.contains(&w.as_str()))
        .map(|(name, _)| *name)
}

/// Checks a log filter (`--log-level`, `RUST_LOG`, `log_level`) and gives it in
/// `tracing`'s spelling: comma-separated directives, each a level (`info`) or
/// `target=level` (`controller=debug`).
///
/// `tracing` itself reads a bare word that is not a level as a module name, so
/// `verbose` would mean "everything from a module called verbose" and silence every
/// line: here such a word is refused. A level may be written in any case, and
/// `warning`, `err`, `information` and `none` are taken for `warn`, `error`, `info` and
/// `off`.
pub fn filter(text: &str) -> Result<String, String> {
    let names = "error, warn, info, debug, trace or off";
    let mut out = Vec::new();
    for directive in text.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        match directive.rsplit_once('=') {
            None => match level(directive) {
                Some(l) => out.push(l.to_string()),
                None => {
                    return Err(format!(
                        "`{directive}` is not a log level: use {names}, or `target=level` for one part (e.g. controller=debug,info)"
                    ))
                }
            },
            Some((target, word)) => match level(word) {
                Some(l) if !target.trim().is_empty() => out.push(format!("{}={l}", target.trim())),
                Some(_) => return Err(format!("`{directive}` names no target before `=`")),
                None => {
                    return Err(format!(
                        "`{word}` in `{directive}` is not a log level: use {names}"
                    ))
                }
            },
        }
    }
    if out.is_empty() {
        return Err(format!("no level given: use {names}, e.g. \"info\""));
    }
    Ok(out.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn log_filters_take_common_spellings_and_refuse_other_words() {
        for (given, read) in [
            ("info", "info"),
            ("warning", "warn"),
            ("WARN", "warn"),
            ("err", "error"),
            ("information", "info"),
            ("controller=Debug, info", "controller=debug,info"),
            ("controller::worker=warning", "controller::worker=warn"),
            ("none", "off"),
        ] {
            assert_eq!(filter(given).as_deref(), Ok(read), "{given}");
        }
        for (bad, says) in [
            ("verbose", "`verbose` is not a log level"),
            ("bogus,info", "`bogus` is not a log level"),
            (
                "controller=loud",
                "`loud` in `controller=loud` is not a log level",
            ),
            ("=info", "names no target"),
            ("", "no level given"),
            (" , ", "no level given"),
        ] {
            let e = filter(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        // In the file, as any other value.
        assert_eq!(
            Config::from_toml_str("log_level = \"warning\"")
                .unwrap()
                .log_level,
            "warning"
        );
        let e = Config::from_toml_str("log_level = \"verbose\"").unwrap_err();
        assert_eq!(e.key, "log_level");
    }
}
