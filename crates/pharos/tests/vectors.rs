//! `pharos ofp` against every vector in ../shared/openflow-vectors: OpenFlow 1.0 and 1.3
//! files survive `decode --json | encode` byte for byte and decode as text; 1.2, 1.4 and
//! 1.5 files are refused as unsupported versions, cleanly.

mod common;

use common::{json_lines, path_str, pharos, vector_files};

fn round_trip(version_dir: &str) {
    for file in vector_files(version_dir) {
        let name = path_str(&file);
        let bytes = std::fs::read(&file).unwrap();
        let json = pharos(&["ofp", "decode", "--json", name], b"");
        assert!(json.ok(), "{name}: {}", json.stderr);
        let lines = json_lines(&json);
        assert_eq!(lines.len(), 1, "{name}");
        assert_eq!(lines[0]["source"]["offset"], 0, "{name}");
        let again = pharos(&["ofp", "encode"], &json.stdout);
        assert!(again.ok(), "{name}: {}", again.stderr);
        assert!(
            again.stdout == bytes,
            "{name}: encode did not reproduce the file"
        );

        let text = pharos(&["ofp", "decode", name], b"");
        assert!(text.ok(), "{name}: {}", text.stderr);
        let out = text.stdout_text();
        assert!(out.starts_with("#1 offset 0: OF1."), "{name}: {out}");
        assert!(
            out.contains(&format!("len={}", bytes.len())),
            "{name}: {out}"
        );
        assert!(
            text.stderr.contains("1 message decoded"),
            "{name}: {}",
            text.stderr
        );
    }
}

#[test]
fn of10_vectors_round_trip() {
    round_trip("of10");
}

#[test]
fn of13_vectors_round_trip() {
    round_trip("of13");
}

#[test]
fn other_versions_are_refused_cleanly_but_hello_and_error() {
    for (dir, name) in [
        ("of12", "OpenFlow 1.2"),
        ("of14", "OpenFlow 1.4"),
        ("of15", "OpenFlow 1.5"),
    ] {
        for file in vector_files(dir) {
            let path = path_str(&file);
            let bytes = std::fs::read(&file).unwrap();
            if matches!(bytes.get(1), Some(0 | 1)) {
                // HELLO and ERROR: the same layout in every version (version negotiation
                // crosses versions), so they decode, and round-trip.
                let json = pharos(&["ofp", "decode", "--json", path], b"");
                assert_eq!(json.code, Some(0), "{path}: {}", json.stderr);
                let again = pharos(&["ofp", "encode"], &json.stdout);
                assert!(again.ok(), "{path}: {}", again.stderr);
                assert_eq!(again.stdout, bytes, "{path}");
                continue;
            }
            for args in [
                vec!["ofp", "decode", path],
                vec!["ofp", "decode", "--json", path],
            ] {
                let run = pharos(&args, b"");
                assert_eq!(run.code, Some(1), "{path}: {}", run.stderr);
                assert!(
                    run.stderr.contains("unsupported OpenFlow version")
                        && run.stderr.contains(name),
                    "{path}: {}",
                    run.stderr
                );
                assert!(run.stdout.is_empty(), "{path}");
            }
        }
    }
}
