//! The codec against ../shared/openflow-vectors: every OpenFlow 1.0 and 1.3 vector must
//! decode, agree field by field with Ryu's decode beside it, re-encode byte for byte
//! (directly and through our JSON), and every truncation of it must fail cleanly.
//! Vectors of 1.2, 1.4 and 1.5 must be refused as unsupported versions.
//!
//! The places carried opaquely (as the comparison with Ryu finds them, and as
//! `Message::opaque_parts` lists them) are pinned in `vectors_opaque.txt`: an opaque place the
//! list does not have (a known action or field decoded as "unknown") fails the suite,
//! and so does a listed one that is gone (decoded now: take it off the list).

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

/// The pinned opaque places of `version_dir` (`of10/...` lines of vectors_opaque.txt).
fn pinned_opaque(version_dir: &str) -> Vec<String> {
    let text = include_str!("vectors_opaque.txt");
    let prefix = format!("{version_dir}/");
    let mut out: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && l.starts_with(&prefix))
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// What differs between the opaque places found and the pinned ones: one line per
/// place, saying which way.
fn opaque_drift(found: &[String], pinned: &[String]) -> Vec<String> {
    let mut drift: Vec<String> = found
        .iter()
        .filter(|f| !pinned.contains(f))
        .map(|f| format!("newly opaque (a regression, or a new vector to pin): {f}"))
        .collect();
    drift.extend(
        pinned
            .iter()
            .filter(|p| !found.contains(p))
            .map(|p| format!("no longer opaque (take it off vectors_opaque.txt): {p}")),
    );
    drift
}

#[test]
fn a_place_newly_opaque_or_no_longer_opaque_is_drift() {
    let pinned = vec![
        "of13/a.packet: $.OFPFlowMod.actions[0]: Nicira action".to_string(),
        "of13/b.packet: $.OFPFlowMod.match.OFPMatch.oxm_fields[6]: OXM class 0x0001 field 31"
            .to_string(),
    ];
    assert!(opaque_drift(&pinned, &pinned).is_empty());
    // An OUTPUT action that regressed to "unknown action 0": still byte-exact, but drift.
    let mut found = pinned.clone();
    found.push("of13/c.packet: $.OFPPacketOut.actions[0]: unknown action 0".to_string());
    let drift = opaque_drift(&found, &pinned);
    assert_eq!(drift.len(), 1);
    assert!(drift[0].starts_with("newly opaque") && drift[0].contains("unknown action 0"));
    let drift = opaque_drift(&pinned[..1], &pinned);
    assert!(drift[0].starts_with("no longer opaque"), "{drift:?}");
    // The pinned list itself has only vendor extensions: nothing "unknown".
    for dir in ["of10", "of13"] {
        for place in pinned_opaque(dir) {
            assert!(!place.contains("unknown"), "{place}");
        }
    }
    assert!(!pinned_opaque("of13").is_empty());
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
        // What the codec itself says it carries opaquely (what `pharos ofp decode` shows).
        for part in env.message.opaque_parts() {
            opaque_report.push(format!("{name}: codec: {part}"));
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
    opaque_report.sort();
    let drift = opaque_drift(&opaque_report, &pinned_opaque(version_dir));
    if !drift.is_empty() {
        failures.push(format!(
            "the opaque places differ from tests/vectors_opaque.txt:\n  {}",
            drift.join("\n  ")
        ));
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
