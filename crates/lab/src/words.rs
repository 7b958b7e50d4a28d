//! How the lab speaks of itself in messages: a lab's title in a sentence, the `--name`
//! flag a hint repeats, spans of node names and plurals. Nothing here knows more than a
//! name and a number, so every other module may use it.

/// The lab name when none is given.
pub const DEFAULT_NAME: &str = "lab";

/// How a lab is named in a sentence: "lab" for the default one (not "lab lab"), "lab t1"
/// for the others.
pub fn title(name: &str) -> String {
    if name == DEFAULT_NAME {
        "lab".to_string()
    } else {
        format!("lab {name}")
    }
}

/// The ` --name NAME` to repeat in a hint for lab `name` (nothing for the default lab).
pub(crate) fn name_flag(name: &str) -> String {
    if name == DEFAULT_NAME {
        String::new()
    } else {
        format!(" --name {name}")
    }
}

/// "s1..s3", "s1", or "none".
pub fn span(prefix: &str, n: usize) -> String {
    match n {
        0 => "none".to_string(),
        1 => format!("{prefix}1"),
        n => format!("{prefix}1..{prefix}{n}"),
    }
}

/// "1 switch", "3 switches".
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
