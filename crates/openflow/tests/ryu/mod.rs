//! Adapters from our model to Ryu's `to_jsondict` shape, and the comparison used by
//! `tests/vectors.rs`. The vectors in ../shared/openflow-vectors carry Ryu's expected
//! decode beside each message; an adapter renders our decode in that shape so the two
//! can be compared field by field.
//!
//! Where our codec carries something opaquely (a Nicira action, an NXM field, an
//! experimenter body it does not know), the adapter emits [`opaque()`], which matches
//! whatever Ryu decoded there; the test counts those places and prints them.

#![allow(dead_code)]

use base64::Engine;
use serde_json::{json, Map, Value};

pub mod of10;
pub mod of13;
pub mod of13mp;

/// The marker for "carried opaquely by our codec: accept Ryu's decode as is".
pub fn opaque(what: &str) -> Value {
    json!({ "__opaque__": what })
}

/// `{"Class": {fields}}`.
pub fn wrap(class: &str, fields: Value) -> Value {
    let mut m = Map::new();
    m.insert(class.to_string(), fields);
    Value::Object(m)
}

/// Ryu's encoding of raw bytes.
pub fn b64(bytes: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Keys Ryu prints that are pure framing (lengths); the byte-exact re-encode checks
/// those, so the field comparison skips them.
const FRAMING_KEYS: &[&str] = &["len", "length", "actions_len"];

/// Compares `ours` (adapter output) with `expected` (Ryu's JSON). Pushes one line per
/// difference to `diffs` and one per opaque match to `opaques`.
pub fn compare(
    path: &str,
    ours: &Value,
    expected: &Value,
    diffs: &mut Vec<String>,
    opaques: &mut Vec<String>,
) {
    if let Some(what) = ours.get("__opaque__") {
        opaques.push(format!("{path}: {}", what.as_str().unwrap_or("?")));
        return;
    }
    match (ours, expected) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, vb) in b {
                if FRAMING_KEYS.contains(&k.as_str()) && !a.contains_key(k) {
                    continue;
                }
                match a.get(k) {
                    Some(va) => compare(&format!("{path}.{k}"), va, vb, diffs, opaques),
                    None => diffs.push(format!("{path}.{k}: missing in ours (ryu: {vb})")),
                }
            }
            for k in a.keys() {
                if !b.contains_key(k) {
                    diffs.push(format!("{path}.{k}: not in ryu's decode (ours: {})", a[k]));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                diffs.push(format!(
                    "{path}: {} elements in ours, {} in ryu's",
                    a.len(),
                    b.len()
                ));
                return;
            }
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                compare(&format!("{path}[{i}]"), va, vb, diffs, opaques);
            }
        }
        (a, b) => {
            if a != b {
                diffs.push(format!("{path}: ours {a}, ryu {b}"));
            }
        }
    }
}
