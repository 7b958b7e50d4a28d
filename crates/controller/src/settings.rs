//! How a settings file is read and how a refusal is reported, for every crate that owns
//! a part of `pharos.toml`: [`ConfigError`] (file, key, line and reason), [`from_toml_str`]
//! (serde's errors turned into one, with the key's path and a guess for a misspelt key),
//! [`line_of_key`] (the line of a key found wrong after parsing) and [`nearest`] /
//! [`did_you_mean`] (the known name a slip of the finger away).
//!
//! It lives in the controller because the controller is the lowest crate whose settings
//! are checked (the core's own keys); the apps, the REST API and the binary sit above it
//! and use it as it stands. It depends on no other module of the crate.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// A configuration that was refused: where (file, key, line) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file, when the configuration came from one.
    pub file: Option<PathBuf>,
    /// The key path (`keepalive.interval`, `apps[1].name`); empty for a file that is not
    /// TOML at all or cannot be read.
    pub key: String,
    /// The 1-based line in the file, when known.
    pub line: Option<usize>,
    /// What is wrong, and what would be right.
    pub reason: String,
}

impl ConfigError {
    /// An error about `key`.
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
        ConfigError {
            file: None,
            key: key.into(),
            line: None,
            reason: reason.into(),
        }
    }

    /// This error, found in the TOML `text`: the line of the key is looked up when the
    /// error does not carry one (a check that ran after parsing has no spans).
    pub fn in_text(self, text: &str) -> ConfigError {
        let line = self.line.or_else(|| line_of_key(text, &self.key));
        ConfigError { line, ..self }
    }

    /// This error, found in the file `path` whose text is `text`: the file is named, and
    /// the line of the key is looked up when the error does not carry one.
    pub fn in_file(self, path: &Path, text: &str) -> ConfigError {
        ConfigError {
            file: Some(path.to_path_buf()),
            ..self.in_text(text)
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        } else if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if !self.key.is_empty() {
            write!(f, "`{}`: ", self.key)?;
        }
        // Parser messages may end in a newline; the error is one line (or a few), never
        // followed by a blank one.
        f.write_str(self.reason.trim_end())
    }
}

impl std::error::Error for ConfigError {}

/// The reason given for a duration of zero, on any key that must be longer.
pub const ZERO_DURATION: &str = "must be longer than zero, e.g. \"5s\"";

/// Reads a settings file; an unreadable one is a [`ConfigError`] naming it.
pub fn read_file(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: Some(path.to_path_buf()),
        key: String::new(),
        line: None,
        reason: format!("cannot read the file: {e}"),
    })
}

/// Parses the TOML `text` into `T` (no checks beyond serde's): an error names the key by
/// its path (`keepalive.interval`, `apps[1].name`), gives the line where the parser
/// stopped, and, for an unknown key, the nearest known one and the list of them.
pub fn from_toml_str<T: DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let inner = e.inner();
        let line = inner.span().map(|s| line_of(text, s.start));
        // A parser's message may run over several lines: one line here.
        let message = inner.message().trim_end().replace('\n', "; ");
        let (key, reason) = key_and_reason(&e.path().to_string(), &message);
        ConfigError {
            file: None,
            key,
            line,
            reason,
        }
    })
}

/// The key path and reason of a serde error: an unknown field is named by its own path
/// (`keepalive.intervl`), and serde's list of expected fields follows.
fn key_and_reason(path: &str, message: &str) -> (String, String) {
    let path = if path == "." { "" } else { path };
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some((field, expected)) = rest.split_once('`') {
            // serde_path_to_error already ends the path with the unknown key; older
            // versions stop at its table.
            let key = if path == field || path.ends_with(&format!(".{field}")) {
                path.to_string()
            } else if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            let expected = expected.trim_start_matches(", ");
            let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            return (
                key,
                format!("unknown key{}; {expected}", did_you_mean(field, &known)),
            );
        }
    }
    (path.to_string(), message.to_string())
}

/// The known name nearest to `word`, if one is near enough to be a slip of the finger
/// (at most a third of its letters edited, and at least one).
pub fn nearest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(word, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `" (did you mean `x`?)"` when a known name is near `word`, else nothing.
pub fn did_you_mean(word: &str, known: &[&str]) -> String {
    match nearest(word, known) {
        Some(k) => format!(" (did you mean `{k}`?)"),
        None => String::new(),
    }
}

/// The 1-based line where `key` (`keepalive.interval`, `apps[1].params.idle_timeout`,
/// `listen[0]`) is set in the TOML `text`: the line of the key itself when it is a
/// table's key, of the value when it is an array element. `None` when the text does not
/// parse or does not set the key.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut item = doc.as_item();
    let mut span = None;
    for part in key.split('.') {
        let (name, indices) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            let table = item.as_table_like()?;
            span = table.key(name).and_then(|k| k.span());
            item = table.get(name)?;
        }
        for index in indices.split(['[', ']']).filter(|i| !i.is_empty()) {
            item = item.get(index.parse::<usize>().ok()?)?;
            span = match item {
                toml_edit::Item::Table(t) => t.span(),
                toml_edit::Item::Value(v) => v.span(),
                _ => None,
            };
        }
    }
    span.map(|s| line_of(text, s.start))
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small file of two tables, to read errors from.
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // read by serde only
    struct File {
        #[serde(default)]
        workers: usize,
        #[serde(default)]
        keepalive: Keepalive,
    }

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // read by serde only
    struct Keepalive {
        #[serde(default)]
        interval: u32,
        #[serde(default)]
        max_unanswered: u32,
    }

    fn err(text: &str) -> ConfigError {
        from_toml_str::<File>(text).expect_err("should be refused")
    }

    #[test]
    fn the_nearest_name_is_a_slip_of_the_finger_away() {
        let known = [
            "interval",
            "max_unanswered",
            "lldp_interval",
            "link_timeout",
        ];
        assert_eq!(nearest("intervl", &known), Some("interval"));
        assert_eq!(nearest("lldp_intervall", &known), Some("lldp_interval"));
        assert_eq!(nearest("link_timout", &known), Some("link_timeout"));
        assert_eq!(nearest("colour", &known), None);
        assert_eq!(nearest("x", &known), None);
        assert_eq!(
            did_you_mean("intervl", &known),
            " (did you mean `interval`?)"
        );
        assert_eq!(did_you_mean("colour", &known), "");
    }

    #[test]
    fn keys_are_found_in_every_table_form() {
        let text = "workers = 2\n[[apps]]\nname = \"hub\"\n[[apps]]\nname = \"topology\"\nparams = { lldp_interval = 2 }\n[[apps]]\nname = \"routing\"\n[apps.params]\n\nidle_timeout = 3\n";
        assert_eq!(line_of_key(text, "workers"), Some(1));
        assert_eq!(line_of_key(text, "apps[1].name"), Some(5));
        assert_eq!(line_of_key(text, "apps[1].params.lldp_interval"), Some(6));
        assert_eq!(line_of_key(text, "apps[2].params.idle_timeout"), Some(11));
        assert_eq!(line_of_key(text, "apps[2]"), Some(7));
        assert_eq!(line_of_key(text, "apps[3].name"), None);
        assert_eq!(line_of_key(text, "keepalive.interval"), None);
        assert_eq!(line_of_key("not [toml", "workers"), None);
    }

    #[test]
    fn serde_errors_name_the_key_its_line_and_the_nearest_known_one() {
        let e = err("wrokers = 4");
        assert_eq!(e.key, "wrokers");
        assert!(e.reason.starts_with("unknown key"), "{e}");
        assert!(e.reason.contains("did you mean `workers`?"), "{e}");
        assert!(e.reason.contains("`keepalive`"), "the keys are listed: {e}");
        let e = err("workers = 1\n[keepalive]\nintervl = 5");
        assert_eq!((e.key.as_str(), e.line), ("keepalive.intervl", Some(3)));
        assert!(e.reason.contains("did you mean `interval`?"), "{e}");
        let e = err("[keepalive]\ncolour = 1");
        assert!(!e.reason.contains("did you mean"), "{e}");
        let e = err("workers = \"four\"");
        assert_eq!((e.key.as_str(), e.line), ("workers", Some(1)));
        assert!(e.reason.contains("invalid type"), "{e}");
        // Not TOML: no key, the line of the fault, one line of text.
        let e = err("workers = 2\n[keepalive\n");
        assert_eq!((e.key.as_str(), e.line), ("", Some(2)));
        let shown = e.to_string();
        assert_eq!(shown, shown.trim_end(), "{shown:?}");
    }

    #[test]
    fn an_error_shown_names_file_line_and_key() {
        let e = ConfigError::new("keepalive.interval", "must be longer than zero\n");
        assert_eq!(
            e.to_string(),
            "`keepalive.interval`: must be longer than zero"
        );
        let text = "workers = 1\n[keepalive]\ninterval = 0\n";
        let e = e.in_text(text);
        assert_eq!(e.line, Some(3));
        assert_eq!(
            e.to_string(),
            "line 3: `keepalive.interval`: must be longer than zero"
        );
        let e = e.in_file(Path::new("pharos.toml"), text);
        assert_eq!(
            e.to_string(),
            "pharos.toml:3: `keepalive.interval`: must be longer than zero"
        );
        // A line already known is kept.
        let e = ConfigError {
            line: Some(1),
            ..ConfigError::new("workers", "x")
        };
        assert_eq!(e.in_text(text).line, Some(1));
    }

    #[test]
    fn an_unreadable_file_is_named() {
        let path = std::env::temp_dir().join(format!(
            "pharos-settings-missing-{}.toml",
            std::process::id()
        ));
        let e = read_file(&path).unwrap_err();
        assert_eq!(e.file.as_deref(), Some(path.as_path()));
        assert!(e.to_string().contains("cannot read the file"), "{e}");
    }
}
