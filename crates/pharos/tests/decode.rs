//! `pharos ofp decode` on raw files and hex dumps, and `encode` on its output.

mod common;

use common::{fixture, headers, json_lines, path_str, pharos, vector_files};

/// (type, xid, offset) of every message: the type and xid from the text output (the
/// JSON "type" of a message the codec carries opaquely is "UNKNOWN"), the offsets from
/// the JSON output, which must agree.
fn summary(args: &[&str], stdin: &[u8]) -> Vec<(String, u64, u64)> {
    let json = pharos(&[args, &["--json"]].concat(), stdin);
    assert!(json.ok(), "{}", json.stderr);
    let text = pharos(args, stdin);
    assert!(text.ok(), "{}", text.stderr);
    let lines = json_lines(&json);
    let headers = headers(&text);
    assert_eq!(lines.len(), headers.len());
    lines
        .iter()
        .zip(&headers)
        .map(|(m, h)| {
            let offset = m["source"]["offset"].as_u64().unwrap();
            assert_eq!(h.source, format!("offset {offset}"));
            assert_eq!(m["xid"].as_u64().unwrap(), h.xid);
            (h.type_name.clone(), h.xid, offset)
        })
        .collect()
}

const SEVERAL: [(&str, u64, u64); 6] = [
    ("HELLO", 1, 0),
    ("FEATURES_REQUEST", 2, 16),
    ("FLOW_MOD", 3, 24),
    ("ECHO_REQUEST", 4, 304),
    ("FLOW_MOD", 5, 360),
    ("ECHO_REPLY", 6, 440),
];

fn several() -> Vec<(String, u64, u64)> {
    SEVERAL
        .iter()
        .map(|(t, x, o)| (t.to_string(), *x, *o))
        .collect()
}

#[test]
fn concatenated_messages_in_a_raw_file() {
    let path = fixture("several.bin");
    assert_eq!(summary(&["ofp", "decode", path_str(&path)], b""), several());
    let run = pharos(&["ofp", "decode", path_str(&path)], b"");
    assert!(run.stderr.contains("6 messages decoded"), "{}", run.stderr);

    // Every OpenFlow 1.0 and 1.3 vector back to back, through stdin, and back again.
    let mut all = Vec::new();
    let mut count = 0;
    for dir in ["of10", "of13"] {
        for f in vector_files(dir) {
            all.extend(std::fs::read(f).unwrap());
            count += 1;
        }
    }
    let run = pharos(&["ofp", "decode", "--json", "-"], &all);
    assert!(run.ok(), "{}", run.stderr);
    assert_eq!(json_lines(&run).len(), count);
    let again = pharos(&["ofp", "encode", "-"], &run.stdout);
    assert!(again.ok(), "{}", again.stderr);
    assert!(again.stdout == all, "the concatenation did not round-trip");

    let text = pharos(&["ofp", "decode", "-"], &all);
    assert!(text.ok(), "{}", text.stderr);
    assert_eq!(
        text.stdout_text()
            .lines()
            .filter(|l| l.starts_with('#'))
            .count(),
        count
    );
}

#[test]
fn hex_dumps_of_every_style() {
    let raw = pharos(&["ofp", "decode", path_str(&fixture("several.bin"))], b"");
    for dump in [
        "several.xxd",
        "several.od",
        "several.od-octal",
        "several.hexdump",
        "several.hex",
    ] {
        let path = fixture(dump);
        assert_eq!(
            summary(&["ofp", "decode", "--hex", path_str(&path)], b""),
            several(),
            "{dump}"
        );
        let text = pharos(&["ofp", "decode", "--hex", path_str(&path)], b"");
        assert_eq!(text.stdout, raw.stdout, "{dump}");
    }
    // Plain hex in other spellings, through stdin.
    let bytes = std::fs::read(fixture("several.bin")).unwrap();
    let spaced: Vec<String> = bytes.iter().map(|b| format!("0x{b:02x}")).collect();
    for text in [
        spaced.join(", "),
        spaced.join("\n"),
        format!("# a comment\n{}\n", hex_of(&bytes)),
    ] {
        assert_eq!(
            summary(&["ofp", "decode", "--hex", "-"], text.as_bytes()),
            several()
        );
    }
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X} ")).collect()
}

#[test]
fn text_output_shows_header_fields_and_notes() {
    let run = pharos(&["ofp", "decode", path_str(&fixture("several.bin"))], b"");
    let out = run.stdout_text();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "#1 offset 0: OF1.3 HELLO xid=0x1 len=16");
    assert!(
        out.contains("#4 offset 304: OF1.3 ECHO_REQUEST xid=0x4 len=56\n  data: "),
        "{out}"
    );
    assert!(
        out.contains("#5 offset 360: OF1.0 FLOW_MOD xid=0x5 len=80"),
        "{out}"
    );
    // Every line is a header, a field (indented) or a note.
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with('#') || l.starts_with("  ")),
        "{out}"
    );
}

#[test]
fn encode_accepts_arrays_streams_and_writes_hex_or_files() {
    let one = r#"{"xid":1,"version":"1.0","type":"HELLO"}"#;
    let two =
        r#"{"xid":2,"version":"1.3","type":"ECHO_REQUEST","data":"cafe","source":{"offset":8}}"#;
    let want = "0100000800000001\n0402000a00000002cafe\n";
    for input in [
        format!("[{one},{two}]"),
        format!("{one}\n{two}\n"),
        format!("{one}{two}"),
    ] {
        let run = pharos(&["ofp", "encode", "--hex"], input.as_bytes());
        assert!(run.ok(), "{}", run.stderr);
        assert_eq!(run.stdout_text(), want);
    }
    let dir = std::env::temp_dir().join(format!("pharos-encode-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("in.json");
    let out = dir.join("out.bin");
    std::fs::write(&json, format!("[{one},{two}]")).unwrap();
    let run = pharos(
        &["ofp", "encode", "-o", path_str(&out), path_str(&json)],
        b"",
    );
    assert!(run.ok() && run.stdout.is_empty(), "{}", run.stderr);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        b"\x01\x00\x00\x08\x00\x00\x00\x01\x04\x02\x00\x0a\x00\x00\x00\x02\xca\xfe"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_explains_the_formats() {
    let run = pharos(&["ofp", "decode", "--help"], b"");
    let help = run.stdout_text();
    for needle in [
        "pcapng",
        "xxd",
        "hexdump -C",
        "od -A x -t x1",
        "--json",
        "EXAMPLES",
    ] {
        assert!(help.contains(needle), "decode --help lacks {needle:?}");
    }
    let run = pharos(&["ofp", "encode", "--help"], b"");
    assert!(
        run.stdout_text().contains("StreamDeserializer")
            || run.stdout_text().contains("concatenated")
    );
    let run = pharos(&["ofp", "--help"], b"");
    assert!(run.stdout_text().contains("pharos ofp decode --json"));
}
