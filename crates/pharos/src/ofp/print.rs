//! Renderings of a decoded message: readable text, and one JSON line.
//!
//! The text form is generic: the message's serde value (the same one `--json` prints)
//! with numbers named where they have a name ([`names`]), the frame of a
//! PACKET_IN or PACKET_OUT summarised ([`frame`]), shown as indented
//! `key: value` lines, small objects and lists on one line, long hex strings wrapped. It
//! needs no change when the codec learns a new message.

use std::fmt::Write as _;

use serde_json::Value;

use super::{frame, names};

/// Longest inline rendering of an object or list before it is broken into lines.
const INLINE_WIDTH: usize = 72;
/// Hex strings longer than this are wrapped, this many digits (32 bytes) a line.
const HEX_WRAP: usize = 64;

/// The fields of a message (its envelope as JSON, from a message of wire version
/// `version` and type `msg_type`) as indented text lines, each ending in a newline,
/// without the xid, version and type, which the header line carries.
pub fn fields(mut value: Value, version: u8, msg_type: &str) -> String {
    let mut out = String::new();
    match &mut value {
        Value::Object(map) => {
            for key in ["xid", "version", "type"] {
                map.shift_remove(key);
            }
            if matches!(msg_type, "PACKET_IN" | "PACKET_OUT") {
                add_packet_summary(map);
            }
            names::humanize(&mut value, &names::Context { version, msg_type });
            if let Value::Object(map) = &value {
                object_lines(map, 2, &mut out);
            }
        }
        other => {
            let _ = writeln!(out, "  {}", inline(other));
        }
    }
    out
}

/// Puts a `packet` line, the frame read, before the `data` it was read from.
fn add_packet_summary(map: &mut serde_json::Map<String, Value>) {
    let Some(bytes) = map
        .get("data")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .and_then(|d| openflow::types::from_hex(d).ok())
    else {
        return;
    };
    let old = std::mem::take(map);
    for (k, v) in old {
        if k == "data" {
            map.insert("packet".into(), Value::String(frame::summary(&bytes)));
        }
        map.insert(k, v);
    }
}

fn object_lines(map: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    for (key, value) in map {
        entry(key, value, indent, out);
    }
}

fn entry(key: &str, value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::String(s) if s.len() > HEX_WRAP && s.bytes().all(|c| c.is_ascii_hexdigit()) => {
            let _ = writeln!(out, "{pad}{key}: ({} bytes)", s.len() / 2);
            for chunk in s.as_bytes().chunks(HEX_WRAP) {
                let _ = writeln!(out, "{pad}  {}", String::from_utf8_lossy(chunk));
            }
        }
        Value::Object(_) | Value::Array(_) => {
            let flat = inline(value);
            if flat.len() + indent + key.len() <= INLINE_WIDTH + 2 && !flat.contains('\n') {
                let _ = writeln!(out, "{pad}{key}: {flat}");
            } else {
                let _ = writeln!(out, "{pad}{key}:");
                block(value, indent + 2, out);
            }
        }
        // On a line of its own a string needs no quotes unless it would read as
        // something else (empty, edge spaces, several lines).
        Value::String(s) if !s.is_empty() && s.trim() == s && !s.contains('\n') && s != "null" => {
            let _ = writeln!(out, "{pad}{key}: {s}");
        }
        scalar => {
            let _ = writeln!(out, "{pad}{key}: {}", inline(scalar));
        }
    }
}

/// An object or a list, one entry a line; list items marked `- `.
fn block(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) => object_lines(map, indent, out),
        Value::Array(items) => {
            let pad = " ".repeat(indent);
            for item in items {
                let mut lines = String::new();
                match item {
                    Value::Object(map)
                        if !map.is_empty() && inline(item).len() + indent > INLINE_WIDTH =>
                    {
                        object_lines(map, indent + 2, &mut lines);
                    }
                    Value::Array(_) if inline(item).len() + indent > INLINE_WIDTH => {
                        block(item, indent + 2, &mut lines);
                    }
                    other => {
                        let _ = writeln!(lines, "{pad}  {}", inline(other));
                    }
                }
                // The first line of the item carries the `- ` marker.
                let _ = write!(out, "{pad}- {}", &lines[indent + 2..]);
            }
        }
        scalar => {
            let _ = writeln!(out, "{}{}", " ".repeat(indent), inline(scalar));
        }
    }
}

/// A value on one line: `{key: value, ...}`, `[a, b]`, strings without quotes unless
/// they would read as something else.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let plain = !s.is_empty()
                && !s.starts_with(' ')
                && !s.ends_with(' ')
                && !s.contains([',', '{', '}', '[', ']', '"', '\n'])
                && s != "null";
            if plain {
                s.clone()
            } else {
                Value::String(s.clone()).to_string()
            }
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}: {}", inline(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// One JSON line: the envelope as serde writes it (key order kept), then `extra` keys
/// (`source`, `notes`).
pub fn json_line(mut value: Value, extra: &[(&str, Value)]) -> serde_json::Result<String> {
    if let Value::Object(map) = &mut value {
        for (k, v) in extra {
            map.insert((*k).to_string(), v.clone());
        }
    }
    serde_json::to_string(&value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(v: Value) -> String {
        let Value::Object(map) = v else { panic!() };
        let mut out = String::new();
        object_lines(&map, 2, &mut out);
        out
    }

    #[test]
    fn small_things_stay_on_one_line() {
        let text = render(
            json!({"port": 1, "config": {"flags": 0, "miss_send_len": 128}, "list": [1, 2]}),
        );
        assert_eq!(
            text,
            "  port: 1\n  config: {flags: 0, miss_send_len: 128}\n  list: [1, 2]\n"
        );
    }

    #[test]
    fn big_things_are_broken_into_lines() {
        let action = json!({"type": "OUTPUT", "port": "CONTROLLER", "max_len": 65535, "extra": "something long enough"});
        let text = render(
            json!({"actions": [action.clone(), action], "data": "ab".repeat(40), "name": ""}),
        );
        let want = "  actions:
    - type: OUTPUT
      port: CONTROLLER
      max_len: 65535
      extra: something long enough
    - type: OUTPUT
      port: CONTROLLER
      max_len: 65535
      extra: something long enough
  data: (40 bytes)
    abababababababababababababababababababababababababababababababab
    abababababababab
  name: \"\"
";
        assert_eq!(text, want);
    }

    #[test]
    fn list_items_that_fit_stay_inline() {
        let text = render(json!({"elements": [{"kind": "version_bitmap", "bitmaps": [16]}, 3]}));
        assert_eq!(
            text,
            "  elements: [{kind: version_bitmap, bitmaps: [16]}, 3]\n"
        );
        let long: Vec<Value> = (0..30).map(|i| json!({"n": i})).collect();
        let text = render(json!({ "l": long }));
        assert!(
            text.starts_with("  l:\n    - {n: 0}\n    - {n: 1}\n"),
            "{text}"
        );
    }
}
