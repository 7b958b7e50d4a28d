//! The codec against ../shared/openflow-vectors: every OpenFlow 1.0 and 1.3 vector must
//! decode, agree field by field with Ryu's decode beside it, re-encode byte for byte
//! (directly and through our JSON), and every truncation of it must fail cleanly.
//! Vectors of 1.2, 1.4 and 1.5 must be refused as unsupported versions.

mod ryu;

use std::path::{Path, PathBuf};

use openflow::{DecodeError, Envelope, Message};

fn vectors_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = here.join("../../../shared/openflow-vectors");
    assert!(
        dir.join("MANIFEST.tsv").exists(),
        "the vectors are expected at {} (../shared beside the repository)",
        dir.display()
    );
    dir
}

struct Vector {
    dir: String,
    file: String,
    bytes: Vec<u8>,
    json: serde_json::Value,
}

fn vectors(version_dir: &str) -> Vec<Vector> {
    let root = vectors_dir();
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let mut out = Vec::new();
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols[0] != version_dir {
            continue;
        }
        let path = root.join(cols[0]).join(cols[1]);
        let bytes = std::fs::read(&path).unwrap();
        let json_path = root.join(cols[0]).join(format!("{}.json", cols[1]));
        let json = serde_json::from_str(&std::fs::read_to_string(json_path).unwrap()).unwrap();
        out.push(Vector {
            dir: cols[0].to_string(),
            file: cols[1].to_string(),
            bytes,
            json,
        });
    }
    assert!(!out.is_empty(), "no vectors for {version_dir}");
    out
}

fn ryu_shape(m: &Message) -> serde_json::Value {
    match m {
        Message::V10(m) => ryu::of10::message(m),
        Message::V13(m) => ryu::of13::message(m),
    }
}

fn check_version(version_dir: &str) {
    let mut failures = Vec::new();
    let mut opaque_report = Vec::new();
    let vs = vectors(version_dir);
    for v in &vs {
        let name = format!("{}/{}", v.dir, v.file);
        let env = match Envelope::decode(&v.bytes) {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!("{name}: decode failed: {e}"));
                continue;
            }
        };
        // Byte-exact re-encode.
        let mut out = Vec::new();
        if let Err(e) = env.encode(&mut out) {
            failures.push(format!("{name}: encode failed: {e}"));
        } else if out != v.bytes {
            failures.push(format!(
                "{name}: re-encode differs\n  want {}\n  got  {}",
                openflow::types::to_hex(&v.bytes),
                openflow::types::to_hex(&out)
            ));
        }
        // Through our JSON and back.
        let json = serde_json::to_string(&env).unwrap();
        match serde_json::from_str::<Envelope>(&json) {
            Ok(back) => {
                let mut out = Vec::new();
                match back.encode(&mut out) {
                    Ok(_) if out == v.bytes => {}
                    Ok(_) => {
                        failures.push(format!("{name}: JSON round trip changed bytes: {json}"))
                    }
                    Err(e) => failures.push(format!("{name}: JSON round trip encode failed: {e}")),
                }
            }
            Err(e) => failures.push(format!("{name}: our JSON does not parse back: {e}: {json}")),
        }
        // Field by field against Ryu, except where Ryu decoded the frame with its packet
        // library instead of giving bytes (README quirk 4).
        if !v.file.contains("packet_library") {
            let ours = ryu_shape(&env.message);
            let mut diffs = Vec::new();
            let mut opaques = Vec::new();
            ryu::compare("$", &ours, &v.json, &mut diffs, &mut opaques);
            if !diffs.is_empty() {
                failures.push(format!(
                    "{name}: fields disagree with Ryu:\n  {}",
                    diffs.join("\n  ")
                ));
            }
            for o in opaques {
                if o.contains("no ryu adapter") {
                    failures.push(format!("{name}: {o}"));
                }
                opaque_report.push(format!("{name}: {o}"));
            }
        }
    }
    println!("{} vectors in {version_dir}; opaque places:", vs.len());
    for o in &opaque_report {
        println!("  {o}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn of10_vectors_decode_agree_and_reencode() {
    check_version("of10");
}

#[test]
fn of13_vectors_decode_agree_and_reencode() {
    check_version("of13");
}

#[test]
fn other_versions_are_refused_as_unsupported() {
    for (dir, wire) in [("of12", 3u8), ("of14", 5), ("of15", 6)] {
        for v in vectors(dir) {
            let e = Message::decode(&v.bytes).unwrap_err();
            assert_eq!(
                e,
                DecodeError::UnsupportedVersion { version: wire },
                "{}",
                v.file
            );
        }
    }
}

/// Every prefix of every vector: as given (the header then claims more than is there)
/// and with the header length patched to the prefix (the body then ends early). Neither
/// may panic; the first must fail; the second must fail or be a valid message that
/// re-encodes to exactly the prefix (cutting a list between elements is valid).
#[test]
fn every_truncation_of_every_vector_fails_cleanly() {
    let mut checked = 0;
    for dir in ["of10", "of13"] {
        for v in vectors(dir) {
            for cut in 0..v.bytes.len() {
                let prefix = &v.bytes[..cut];
                assert!(
                    Message::decode(prefix).is_err(),
                    "{}: cut at {cut} decoded",
                    v.file
                );
                if cut >= 8 {
                    let mut patched = prefix.to_vec();
                    patched[2..4].copy_from_slice(&(cut as u16).to_be_bytes());
                    if let Ok((xid, m)) = Message::decode(&patched) {
                        let out = m.to_bytes(xid).unwrap();
                        assert_eq!(
                            out, patched,
                            "{}: cut at {cut} decoded to something else",
                            v.file
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    println!("{checked} truncations checked");
}
