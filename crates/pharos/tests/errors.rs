//! Bad input: every case ends with a clear message on stderr, a non-zero exit status and
//! no panic (`common::pharos` checks the last two for every run).

mod common;

use common::{fixture, headers, pharos};

#[test]
fn garbage_is_not_openflow() {
    let run = pharos(
        &["ofp", "decode", "-"],
        b"this is not OpenFlow at all, just some text\n",
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("not an OpenFlow version"),
        "{}",
        run.stderr
    );
    let run = pharos(&["ofp", "decode", "-"], b"0400 0008 0000 0001\n");
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("use --hex"), "{}", run.stderr);
    let run = pharos(&["ofp", "decode", "-"], &[0x74; 64]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("1 error"), "{}", run.stderr);
}

#[test]
fn header_length_under_8() {
    let mut input = vec![4, 2, 0, 9, 0, 0, 0, 1, 0xaa]; // a good ECHO_REQUEST first
    input.extend_from_slice(&[4, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0]);
    let run = pharos(&["ofp", "decode", "-"], &input);
    assert_eq!(run.code, Some(1));
    assert_eq!(headers(&run).len(), 1);
    assert!(
        run.stderr
            .contains("#2 offset 9: error: ofp_header: length 4")
            && run.stderr.contains("below the minimum of 8"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("1 message decoded, 0 with opaque parts, 1 error"),
        "{}",
        run.stderr
    );
}

#[test]
fn truncated_final_message() {
    let mut bytes = std::fs::read(fixture("several.bin")).unwrap();
    bytes.truncate(bytes.len() - 3);
    for args in [
        vec!["ofp", "decode", "-"],
        vec!["ofp", "decode", "--json", "-"],
    ] {
        let run = pharos(&args, &bytes);
        assert_eq!(run.code, Some(1));
        assert_eq!(
            run.stdout_text()
                .lines()
                .filter(|l| l.starts_with(['#', '{']))
                .count(),
            5
        );
        assert!(
            run.stderr.contains("#6 offset 440: error: truncated message: the input ends 9 bytes into it and its header says 12 bytes"),
            "{}",
            run.stderr
        );
    }
    assert!(
        pharos(&["ofp", "decode", "-"], &bytes)
            .stderr
            .ends_with("5 messages decoded, 1 with opaque parts, 0 errors, 1 input problem: FAILED: the input is damaged (exit status 1)\n"),
    );
    // Shorter than a header.
    let run = pharos(&["ofp", "decode", "-"], &[4, 0, 0]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("a header needs 8 bytes"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_bad_message_is_reported_and_the_next_one_decoded() {
    let mut input = vec![4, 5, 0, 9, 0, 0, 0, 1, 0xff]; // FEATURES_REQUEST with a body
    input.extend_from_slice(&[5, 5, 0, 8, 0, 0, 0, 2]); // OpenFlow 1.4 FEATURES_REQUEST
    input.extend_from_slice(&[4, 2, 0, 8, 0, 0, 0, 3]); // ECHO_REQUEST
    let run = pharos(&["ofp", "decode", "-"], &input);
    assert_eq!(run.code, Some(1));
    let h = headers(&run);
    assert_eq!(
        (
            h.len(),
            h[0].type_name.as_str(),
            h[0].xid,
            h[0].source.as_str()
        ),
        (1, "ECHO_REQUEST", 3, "offset 17")
    );
    assert!(
        run.stderr.contains("#1 offset 0: error: "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("#2 offset 9: error: unsupported OpenFlow version 0x05 (OpenFlow 1.4)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "1 message decoded, 0 with opaque parts, 2 errors: FAILED: 2 messages did not decode (exit status 1)"
        ),
        "{}",
        run.stderr
    );
}

/// Pharos answers a switch that speaks only OpenFlow 1.1 with HELLO_FAILED framed in 1.1
/// (the peer's version, as OpenFlow 1.3 §6.3.1 asks). A capture of that exchange is not
/// damaged and holds no bad message: it decodes with status 0, and round-trips.
#[test]
fn a_failed_version_negotiation_is_not_a_decode_error() {
    let reason = b"pharos speaks OpenFlow 1.0 and OpenFlow 1.3; the peer offered OpenFlow 1.1";
    let mut input = vec![2, 0, 0, 8, 0, 0, 0, 7]; // the switch's 1.1 HELLO
    input.extend_from_slice(&[2, 1, 0, 12 + reason.len() as u8, 0, 0, 0, 7, 0, 0, 0, 0]);
    input.extend_from_slice(reason);
    let run = pharos(&["ofp", "decode", "-"], &input);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = run.stdout_text();
    assert!(
        out.contains("#1 offset 0: OF1.1 HELLO xid=0x7 len=8"),
        "{out}"
    );
    assert!(
        out.contains("#2 offset 8: OF1.1 ERROR xid=0x7")
            && out.contains("  err_type: HELLO_FAILED\n  code: INCOMPATIBLE\n")
            && out.contains("the peer offered OpenFlow 1.1\""),
        "{out}"
    );
    assert!(
        run.stderr
            .contains("2 messages decoded, 0 with opaque parts, 0 errors: everything decoded"),
        "{}",
        run.stderr
    );
    let json = pharos(&["ofp", "decode", "--json", "-"], &input);
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let again = pharos(&["ofp", "encode"], &json.stdout);
    assert!(again.ok(), "{}", again.stderr);
    assert_eq!(again.stdout, input);
    // Any other message of 1.1 is still an unsupported version.
    let run = pharos(&["ofp", "decode", "-"], &[2, 5, 0, 8, 0, 0, 0, 1]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("unsupported OpenFlow version 0x02"),
        "{}",
        run.stderr
    );
}

#[test]
fn invalid_hex() {
    let run = pharos(
        &["ofp", "decode", "--hex", "-"],
        b"04 02 00 08\n00 00 00 0g\n",
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .contains("invalid hex at line 2, column 11: 'g' is not a hex digit"),
        "{}",
        run.stderr
    );
    let run = pharos(&["ofp", "decode", "--hex", "-"], b"04 02 00 08 00 00 00 0");
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("odd number of hex digits"),
        "{}",
        run.stderr
    );
    let run = pharos(
        &["ofp", "decode", "--hex", "-"],
        b"00000000: 0402 0008 0000 0001\n00000009: 00\n",
    );
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("line 2"), "{}", run.stderr);
    let run = pharos(&["ofp", "decode", "--hex", "-"], &[0xff, 0xfe, 0x30]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("not text"), "{}", run.stderr);
}

#[test]
fn invalid_json() {
    let cases: [(&str, &str); 6] = [
        ("{\"xid\": 1, \"version\": \"1.3\", \"type\": \"HELLO\"", "line 1 column 44: EOF while parsing an object"),
        ("{\"xid\": 1,\n \"version\": \"1.3\",\n \"type\": \"NO_SUCH_TYPE\"}", "line 3 column "),
        ("[{\"xid\": 1, \"version\": \"1.3\", \"type\": \"HELLO\"},\n {\"xid\": \"one\", \"version\": \"1.3\", \"type\": \"HELLO\"}]", "line 2 column "),
        ("{\"xid\": 1, \"version\": \"9.9\", \"type\": \"HELLO\"}", "9.9"),
        ("{\"xid\": 1, \"version\": \"1.3\", \"type\": \"ECHO_REQUEST\", \"data\": \"xyz\"}", "line 1 column "),
        ("not json", "line 1 column 2: expected ident"),
    ];
    for (input, want) in cases {
        let run = pharos(&["ofp", "encode"], input.as_bytes());
        assert_eq!(run.code, Some(1), "{input}");
        assert!(run.stdout.is_empty(), "{input}");
        assert!(
            run.stderr.contains("invalid JSON") && run.stderr.contains(want),
            "{input}: {}",
            run.stderr
        );
    }
}

#[test]
fn missing_files_and_damaged_captures() {
    let run = pharos(&["ofp", "decode", "/nonexistent/file.bin"], b"");
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("reading /nonexistent/file.bin"),
        "{}",
        run.stderr
    );
    let run = pharos(&["ofp", "encode", "/nonexistent/file.json"], b"");
    assert_eq!(run.code, Some(1));

    // A capture cut short keeps what came before the cut, says the input is damaged,
    // and exits 1.
    let pcap = std::fs::read(fixture("session-lo.pcap")).unwrap();
    for cut in [25, 60, 500, 1000, 2000, 3000, pcap.len() - 1] {
        let run = pharos(&["ofp", "decode", "-"], &pcap[..cut]);
        assert!(
            run.stderr
                .contains("error: damaged input: capture file ends"),
            "{cut}: {}",
            run.stderr
        );
        assert_eq!(run.code, Some(1), "{cut}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("FAILED: the input is damaged (exit status 1)"),
            "{cut}: {}",
            run.stderr
        );
    }
    let ng = std::fs::read(fixture("session-reordered.pcapng")).unwrap();
    for cut in [30, 200, 1000, 3000, ng.len() - 1] {
        let run = pharos(&["ofp", "decode", "-"], &ng[..cut]);
        assert_eq!(run.code, Some(1), "{cut}: {}", run.stderr);
    }
    // A pcap header followed by garbage.
    let mut garbage = pcap[..24].to_vec();
    garbage.extend_from_slice(b"this is not a pcap frame header");
    let run = pharos(&["ofp", "decode", "-"], &garbage);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("damaged input") && run.stderr.contains("the input is damaged"),
        "{}",
        run.stderr
    );
    // A pcap header alone: an empty capture, nothing wrong.
    let run = pharos(&["ofp", "decode", "-"], &pcap[..24]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("everything decoded"), "{}", run.stderr);
    // A whole capture decodes with status 0.
    let run = pharos(&["ofp", "decode", "-"], &pcap);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let run = pharos(&["ofp", "decode", "-"], &pcap[..4]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("not a readable pcap file"),
        "{}",
        run.stderr
    );
}
