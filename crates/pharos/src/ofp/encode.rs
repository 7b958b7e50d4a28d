//! `pharos ofp encode`: JSON envelopes into OpenFlow bytes.
//!
//! The input is read as a stream of JSON values (serde_json's `StreamDeserializer`), each
//! an envelope object or an array of them, so a JSON array, one object per line and
//! concatenated objects are all accepted. Every value is first taken as raw JSON text so
//! that an error inside it can be placed at its line and column in the whole input.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Context};
use openflow::Envelope;
use serde_json::value::RawValue;

use super::foreign::Foreign;
use super::{input, EncodeArgs};

/// One envelope read: a message of the codec's versions, or a HELLO or ERROR of another
/// (see [`Foreign`]).
#[derive(Debug)]
enum Item {
    Codec(Envelope),
    Foreign(Foreign),
}

impl Item {
    fn xid(&self) -> u32 {
        match self {
            Item::Codec(e) => e.xid,
            Item::Foreign(f) => f.xid,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Item::Codec(e) => e.message.type_name(),
            Item::Foreign(f) => f.type_name(),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) -> openflow::EncodeResult<usize> {
        match self {
            Item::Codec(e) => e.encode(out),
            Item::Foreign(f) => f.encode(out),
        }
    }
}

/// Keys `decode --json` adds to an envelope, which are not part of the message.
const IGNORED_KEYS: [&str; 2] = ["source", "notes"];

pub fn run(args: &EncodeArgs) -> anyhow::Result<ExitCode> {
    let data = input::read_all(&args.input)?;
    let name = if args.input == "-" {
        "stdin"
    } else {
        args.input.as_str()
    };
    let text = std::str::from_utf8(&data).map_err(|e| {
        anyhow::anyhow!(
            "{name}: invalid JSON: not UTF-8 text (at byte {})",
            e.valid_up_to()
        )
    })?;
    let envelopes = parse(text).with_context(|| format!("{name}: invalid JSON"))?;
    let mut out = Vec::new();
    for (i, env) in envelopes.iter().enumerate() {
        let start = out.len();
        env.encode(&mut out).with_context(|| {
            format!(
                "envelope {} (xid {}, {}): cannot encode",
                i + 1,
                env.xid(),
                env.type_name()
            )
        })?;
        if args.hex {
            let hex = openflow::types::to_hex(&out[start..]);
            out.truncate(start);
            out.extend_from_slice(hex.as_bytes());
            out.push(b'\n');
        }
    }
    match &args.output {
        Some(path) => {
            std::fs::write(path, &out).with_context(|| format!("writing {}", path.display()))?
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&out).context("writing stdout")?;
            stdout.flush().context("writing stdout")?;
        }
    }
    eprintln!(
        "{} message{} encoded",
        envelopes.len(),
        if envelopes.len() == 1 { "" } else { "s" }
    );
    Ok(ExitCode::SUCCESS)
}

/// Every envelope in `text`, in order.
fn parse(text: &str) -> anyhow::Result<Vec<Item>> {
    let mut out = Vec::new();
    let stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    for value in stream {
        let value = value.map_err(|e| {
            anyhow::anyhow!(
                "line {} column {}: {}",
                e.line(),
                e.column(),
                strip_position(&e)
            )
        })?;
        if value.get().starts_with('[') {
            let items: Vec<&RawValue> =
                serde_json::from_str(value.get()).map_err(|e| located(text, value.get(), &e))?;
            for item in items {
                out.push(envelope(text, item)?);
            }
        } else {
            out.push(envelope(text, value)?);
        }
    }
    Ok(out)
}

fn envelope(text: &str, raw: &RawValue) -> anyhow::Result<Item> {
    let json = raw.get();
    if !json.starts_with('{') {
        let (line, col) = position_of(text, json);
        bail!("line {line} column {col}: expected an envelope object like {{\"xid\":0,\"version\":\"1.3\",\"type\":\"HELLO\"}}");
    }
    match serde_json::from_str::<Envelope>(json) {
        Ok(env) => Ok(Item::Codec(env)),
        Err(first) => {
            // The codec may refuse keys it does not know: try again without ours.
            let mut value: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(json).map_err(|e| located(text, json, &e))?;
            let foreign = value
                .get("version")
                .and_then(|v| v.as_str())
                .is_some_and(Foreign::is_foreign_version);
            let stripped = IGNORED_KEYS
                .iter()
                .any(|k| value.shift_remove(*k).is_some());
            let value = serde_json::Value::Object(value);
            if foreign {
                // A HELLO or ERROR of 1.1, 1.2, 1.4 or 1.5, as `decode` prints them.
                return serde_json::from_value(value)
                    .map(Item::Foreign)
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "{}: of OpenFlow {{1.1, 1.2, 1.4, 1.5}} only HELLO and ERROR can be encoded: {e}",
                            position_text(text, json)
                        )
                    });
            }
            if stripped {
                if let Ok(env) = serde_json::from_value(value) {
                    return Ok(Item::Codec(env));
                }
            }
            Err(located(text, json, &first))
        }
    }
}

/// An error inside `part` (a slice of `text`), placed in `text`.
fn located(text: &str, part: &str, e: &serde_json::Error) -> anyhow::Error {
    let (base_line, base_col) = position_of(text, part);
    let (line, col) = if e.line() <= 1 {
        (base_line, base_col + e.column().saturating_sub(1))
    } else {
        (base_line + e.line() - 1, e.column())
    };
    anyhow::anyhow!("line {line} column {col}: {}", strip_position(e))
}

/// serde_json's message without the position it appends (` at line L column C`).
fn strip_position(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

/// "line L column C" of `part`, a slice of `text`.
fn position_text(text: &str, part: &str) -> String {
    let (line, col) = position_of(text, part);
    format!("line {line} column {col}")
}

/// The 1-based line and column where `part`, a slice of `text`, starts.
fn position_of(text: &str, part: &str) -> (usize, usize) {
    let offset = (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_lines_and_concatenation() {
        let one = r#"{"xid":1,"version":"1.0","type":"HELLO"}"#;
        let two = r#"{"xid":2,"version":"1.3","type":"BARRIER_REQUEST","source":{"offset":8}}"#;
        for text in [
            format!("[{one},\n{two}]"),
            format!("{one}\n{two}\n"),
            format!("{one}{two}"),
            format!("[{one}] {two}"),
        ] {
            let envs = parse(&text).unwrap();
            assert_eq!(
                envs.iter().map(Item::xid).collect::<Vec<_>>(),
                [1, 2],
                "{text}"
            );
        }
    }

    #[test]
    fn errors_have_lines_and_columns() {
        let text = "{\"xid\":1,\"version\":\"1.0\",\"type\":\"HELLO\"}\n{\"xid\":2,\n \"version\":\"1.3\",\"type\":\"NOPE\"}";
        let e = parse(text).unwrap_err().to_string();
        assert!(e.starts_with("line 3 column "), "{e}");
        assert!(e.contains("NOPE"), "{e}");
        let e = parse("{\"xid\":1,,}").unwrap_err().to_string();
        assert!(e.contains("line 1 column 10"), "{e}");
        let e = parse("[{\"xid\": \"x\", \"version\":\"1.0\",\"type\":\"HELLO\"}]")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 1 column "), "{e}");
        let e = parse("42").unwrap_err().to_string();
        assert!(e.contains("expected an envelope"), "{e}");
    }

    #[test]
    fn positions() {
        let text = "ab\ncd";
        assert_eq!(position_of(text, &text[4..]), (2, 2));
        assert_eq!(position_of(text, &text[0..]), (1, 1));
    }
}
