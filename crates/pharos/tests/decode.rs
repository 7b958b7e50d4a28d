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

/// Text names what has a name, as `ovs-ofctl ofp-print` does; JSON keeps the numbers,
/// which `encode` reads back.
#[test]
fn text_names_reserved_values_flags_and_the_packet_json_keeps_numbers() {
    let vector = |name: &str| {
        let dir = common::vectors_dir();
        let file = if name.starts_with("1-") {
            "of10"
        } else {
            "of13"
        };
        std::fs::read(dir.join(file).join(format!("{name}.packet"))).unwrap()
    };
    let text = |bytes: &[u8]| {
        let run = pharos(&["ofp", "decode", "-"], bytes);
        assert!(run.ok(), "{}", run.stderr);
        run.stdout_text()
    };
    let out = vector("4-1-ofp_packet_out");
    let t = text(&out);
    for want in [
        "  buffer_id: none\n",
        "  in_port: CONTROLLER\n",
        "{action: output, port: ALL, max_len: 65535}",
        "  packet: icmp,dl_src=f2:0b:a4:7d:f8:ea,dl_dst=f2:0b:a4:d0:3f:70,nw_src=10.0.0.1,nw_dst=10.0.0.2,",
    ] {
        assert!(t.contains(want), "{want:?} in\n{t}");
    }
    let json = pharos(&["ofp", "decode", "--json", "-"], &out);
    let m = &json_lines(&json)[0];
    assert_eq!(m["in_port"], 4294967293u64);
    assert_eq!(m["buffer_id"], 4294967295u64);
    assert!(m.get("packet").is_none(), "{m}");
    let again = pharos(&["ofp", "encode"], &json.stdout);
    assert_eq!(again.stdout, out);

    let t = text(&vector("4-4-ofp_packet_in"));
    assert!(t.contains("{field: eth_type, value: 0x0806}"), "{t}");
    assert!(t.contains("  packet: arp,dl_src=f2:0b:a4:7d:f8:ea,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=10.0.0.1,arp_tpa=10.0.0.3,arp_op=1,"), "{t}");
    let t = text(&vector("4-6-ofp_features_reply"));
    assert!(
        t.contains("  capabilities: FLOW_STATS TABLE_STATS PORT_STATS GROUP_STATS QUEUE_STATS\n"),
        "{t}"
    );
    let t = text(&vector("4-39-ofp_port_status"));
    assert!(
        t.contains("    state: LIVE\n    curr: 100MB_FD COPPER AUTONEG\n"),
        "{t}"
    );
    let t = text(&vector("1-6-ofp_switch_features"));
    assert!(
        t.contains("  actions: OUTPUT SET_VLAN_VID SET_NW_SRC ENQUEUE\n"),
        "{t}"
    );
    let t = text(&vector("1-2-ofp_flow_mod"));
    assert!(
        t.contains("  out_port: ALL\n") && t.contains("    dl_type: 0x0000\n"),
        "{t}"
    );
    let t = text(&vector("4-15-ofp_error_msg"));
    assert!(
        t.contains("  err_type: BAD_ACTION\n  code: UNSUPPORTED_ORDER\n"),
        "{t}"
    );
    // Pharos's own HELLO: versions, not the bitmap's number.
    let t = text(&[4, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12]);
    assert!(
        t.contains("{kind: version_bitmap, bitmaps: [1.0, 1.3]}"),
        "{t}"
    );
    // An LLDP frame in a PACKET_OUT.
    let mut lldp = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x0e, 0, 0, 0, 0, 0, 1, 0x88, 0xcc, // Ethernet
        0x02, 0x07, 7, b'd', b'p', b'i', b'd', b':', b'1', // chassis id
        0x04, 0x02, 7, b'2', // port id
        0x06, 0x02, 0, 120, 0, 0, // ttl, end
    ];
    let mut po = vec![
        4, 13, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd,
    ];
    po.extend_from_slice(&[
        0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0,
    ]);
    po.append(&mut lldp);
    let len = po.len() as u16;
    po[2..4].copy_from_slice(&len.to_be_bytes());
    let t = text(&po);
    assert!(
        t.contains("  packet: lldp,dl_src=00:00:00:00:00:01,dl_dst=01:80:c2:00:00:0e,lldp_chassis_id=local:dpid:1,lldp_port_id=local:2,lldp_ttl=120\n"),
        "{t}"
    );
}
