//! `pharos ofp decode` on pcap and pcapng captures made with tcpdump, editcap and
//! mergecap (tests/fixtures/README.md says how). Both directions of each connection are
//! reassembled; the message sequence (type, xid, direction) must come out in capture order.

mod common;

use common::{fixture, headers, json_lines, path_str, pharos};

const SW: &str = "switch";
const CTL: &str = "controller";

/// (type, xid, sender) for the three conversations of tests/fixtures/session.py.
fn expected(
    include_gap_loss: bool,
    include_port_16653: bool,
) -> Vec<(&'static str, u64, &'static str, &'static str)> {
    let mut v = vec![
        ("HELLO", 1, SW, "1.3"),
        ("HELLO", 1, CTL, "1.3"),
        ("FEATURES_REQUEST", 2, CTL, "1.3"),
        ("FEATURES_REPLY", 2, SW, "1.3"),
    ];
    if include_gap_loss {
        v.push(("FLOW_MOD", 3, CTL, "1.3"));
    }
    v.extend([
        ("BARRIER_REQUEST", 5, CTL, "1.3"),
        ("ECHO_REQUEST", 6, CTL, "1.3"),
        ("PACKET_IN", 4, SW, "1.3"),
        ("BARRIER_REPLY", 5, SW, "1.3"),
        ("ECHO_REPLY", 6, SW, "1.3"),
        ("HELLO", 11, SW, "1.0"),
        ("HELLO", 11, CTL, "1.0"),
        ("FEATURES_REQUEST", 12, CTL, "1.0"),
        ("FEATURES_REPLY", 12, SW, "1.0"),
        ("FLOW_MOD", 13, CTL, "1.0"),
    ]);
    if include_port_16653 {
        v.extend([("HELLO", 21, SW, "1.3"), ("HELLO", 21, CTL, "1.3")]);
    }
    v
}

/// (type, xid, sender, version) of every message, from the text output, checking the
/// addresses on the way, that the JSON output agrees, and the exit status (1 for a
/// damaged capture).
fn decoded(args: &[&str], damaged: bool) -> Vec<(String, u64, &'static str, String)> {
    let text = pharos(args, b"");
    let json = pharos(&[&args[..2], &["--json"], &args[2..]].concat(), b"");
    for run in [&text, &json] {
        let code = if damaged { 1 } else { 0 };
        assert_eq!(run.code, Some(code), "{}", run.stderr);
        assert_eq!(
            run.stderr
                .contains("FAILED: the input is damaged (exit status 1)"),
            damaged,
            "{}",
            run.stderr
        );
    }
    let lines = json_lines(&json);
    let headers = headers(&text);
    assert_eq!(lines.len(), headers.len());
    lines
        .iter()
        .zip(&headers)
        .map(|(m, h)| {
            let src = m["source"]["src"].as_str().unwrap();
            let dst = m["source"]["dst"].as_str().unwrap();
            let frame = m["source"]["frame"].as_u64().unwrap();
            let time = m["source"]["timestamp"].as_str().unwrap();
            assert_eq!(h.source, format!("frame {frame} {time} {src} -> {dst}"));
            assert!(time.starts_with("17"), "{time}");
            let ports = [6653, 6633, 16653].map(|p| format!(":{p}"));
            let from_controller = ports.iter().any(|p| src.ends_with(p.as_str()));
            let to_controller = ports.iter().any(|p| dst.ends_with(p.as_str()));
            assert!(from_controller != to_controller, "{src} -> {dst}");
            let host = if h.version == "1.0" {
                "[::1]:"
            } else {
                "127.0.0.1:"
            };
            assert!(
                src.starts_with(host) && dst.starts_with(host),
                "{src} -> {dst}"
            );
            assert_eq!(m["xid"].as_u64().unwrap(), h.xid);
            assert_eq!(m["version"].as_str().unwrap(), h.version);
            (
                h.type_name.clone(),
                h.xid,
                if from_controller { CTL } else { SW },
                h.version.clone(),
            )
        })
        .collect()
}

fn check(name: &str, extra: &[&str], gap: bool, port_16653: bool) -> common::Run {
    let path = fixture(name);
    let mut args = vec!["ofp", "decode"];
    args.extend(extra);
    args.push(path_str(&path));
    let want: Vec<(String, u64, &str, String)> = expected(!gap, port_16653)
        .into_iter()
        .map(|(t, x, s, v)| (t.to_string(), x, s, v.to_string()))
        .collect();
    assert_eq!(decoded(&args, gap), want, "{name}");
    args.insert(2, "--json");
    pharos(&args, b"")
}

#[test]
fn pcap_ethernet_microseconds() {
    let run = check("session-lo.pcap", &[], false, false);
    assert!(run.stderr.contains("15 messages decoded"), "{}", run.stderr);
    assert!(run.stderr.contains(" 0 errors"), "{}", run.stderr);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    // Messages split across segments are stamped with the frame that completed them,
    // several messages in one segment with the same frame.
    let lines = json_lines(&run);
    assert_eq!(lines[2]["source"]["frame"], lines[1]["source"]["frame"]);
    assert!(lines[3]["source"]["frame"].as_u64() > lines[2]["source"]["frame"].as_u64());
    assert_eq!(lines[3]["source"]["stream_offset"], 16);
}

#[test]
fn pcap_linux_cooked_nanoseconds() {
    let run = check("session-any-nano.pcap", &[], false, false);
    let first = &json_lines(&run)[0];
    // Nanosecond timestamps keep all nine digits.
    assert_eq!(
        first["source"]["timestamp"]
            .as_str()
            .unwrap()
            .split('.')
            .nth(1)
            .unwrap()
            .len(),
        9
    );
}

#[test]
fn pcapng_with_out_of_order_and_retransmitted_segments() {
    let run = check("session-reordered.pcapng", &[], false, false);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
}

#[test]
fn extra_ports() {
    check("session-lo.pcap", &["--port", "16653"], false, true);
    check(
        "session-reordered.pcapng",
        &["--port", "16653"],
        false,
        true,
    );
}

#[test]
fn a_lost_segment_is_a_gap_and_decoding_resumes_after_it() {
    let run = check("session-gap.pcap", &[], true, false);
    assert!(
        run.stderr
            .contains("100 bytes missing from the capture at stream offset 124"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("where the next message starts"),
        "{}",
        run.stderr
    );
}

#[test]
fn text_output_names_frames_times_and_directions() {
    let run = pharos(
        &["ofp", "decode", path_str(&fixture("session-lo.pcap"))],
        b"",
    );
    assert!(run.ok(), "{}", run.stderr);
    let out = run.stdout_text();
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(headers.len(), 15);
    assert!(headers[0].starts_with("#1 frame 4 17"), "{}", headers[0]);
    assert!(headers[0].contains(" 127.0.0.1:"), "{}", headers[0]);
    assert!(
        headers[0].ends_with(" -> 127.0.0.1:6653: OF1.3 HELLO xid=0x1 len=16"),
        "{}",
        headers[0]
    );
    assert!(
        headers[10].contains("[::1]:") && headers[10].contains("OF1.0 HELLO xid=0xb"),
        "{}",
        headers[10]
    );
}

#[test]
fn captures_round_trip_through_encode() {
    // The messages of a capture, re-encoded, are the TCP payloads in stream order.
    let run = pharos(
        &[
            "ofp",
            "decode",
            "--json",
            path_str(&fixture("session-reordered.pcapng")),
        ],
        b"",
    );
    let enc = pharos(&["ofp", "encode", "--hex"], &run.stdout);
    assert!(enc.ok(), "{}", enc.stderr);
    assert_eq!(enc.stdout_text().lines().count(), 15);
}

#[test]
fn a_capture_that_starts_mid_connection() {
    let path = fixture("session-midstream.pcap");
    // Starting late loses nothing the capture should hold: not damage.
    let got = decoded(&["ofp", "decode", path_str(&path)], false);
    let want = expected(true, false);
    let want: Vec<(String, u64, &str, String)> = want[3..]
        .iter()
        .map(|(t, x, s, v)| (t.to_string(), *x, *s, v.to_string()))
        .collect();
    assert_eq!(got, want);
    let run = pharos(&["ofp", "decode", path_str(&path)], b"");
    assert_eq!(
        run.stderr
            .matches("starts in the middle of the connection")
            .count(),
        2,
        "{}",
        run.stderr
    );
}

#[test]
fn segments_cut_anywhere_reassemble_to_the_bytes_sent() {
    // Both ends sent several.bin ten times in 100-byte writes.
    let path = fixture("session-chunks.pcap");
    let run = pharos(&["ofp", "decode", "--json", path_str(&path)], b"");
    assert!(run.ok(), "{}", run.stderr);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let several = std::fs::read(fixture("several.bin")).unwrap();
    let lines = json_lines(&run);
    assert_eq!(lines.len(), 120);
    for to_controller in [true, false] {
        let mine: Vec<String> = lines
            .iter()
            .filter(|m| m["source"]["dst"].as_str().unwrap().ends_with(":6653") == to_controller)
            .map(|m| m.to_string())
            .collect();
        assert_eq!(mine.len(), 60);
        let xids: Vec<u64> = mine
            .iter()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["xid"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(xids, [1, 2, 3, 4, 5, 6].repeat(10));
        let enc = pharos(&["ofp", "encode"], mine.join("\n").as_bytes());
        assert!(enc.ok(), "{}", enc.stderr);
        assert!(
            enc.stdout == several.repeat(10),
            "direction to controller: {to_controller}"
        );
    }
}
