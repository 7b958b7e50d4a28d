//! The `ovs-ofctl` syntax corpus (`ofctl_corpus.txt`): every line parses; printing then
//! parsing gives the same flow and the same text; each flow encodes as a FLOW_MOD for
//! the versions its line names, decodes back from those bytes to the same flow, and is
//! refused (as not expressible) by 1.0 when its line names 1.3 alone. The corpus covers every
//! field and action the issue lists, checked by `corpus_covers_every_name`.
//! (`crates/pharos/tests/lab_ofctl.rs` installs the same corpus on Open vSwitch.)

use openflow::ofctl::{parse_flow, Flow, FlowModCommand};
use openflow::{EncodeError, Message, Version};

const CORPUS: &str = include_str!("ofctl_corpus.txt");

struct Line {
    no: usize,
    versions: Vec<Version>,
    text: &'static str,
}

fn corpus() -> Vec<Line> {
    let mut out = Vec::new();
    for (i, line) in CORPUS.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (v, text) = line
            .split_once(" | ")
            .unwrap_or_else(|| panic!("line {}: no \" | \"", i + 1));
        let versions = match v.trim_end_matches('*') {
            "both" => vec![Version::V1_0, Version::V1_3],
            "1.0" => vec![Version::V1_0],
            "1.3" => vec![Version::V1_3],
            other => panic!("line {}: bad versions {other:?}", i + 1),
        };
        out.push(Line {
            no: i + 1,
            versions,
            text,
        });
    }
    out
}

#[test]
fn corpus_has_sixty_flows_for_each_version() {
    let c = corpus();
    let v10 = c
        .iter()
        .filter(|l| l.versions.contains(&Version::V1_0))
        .count();
    let v13 = c
        .iter()
        .filter(|l| l.versions.contains(&Version::V1_3))
        .count();
    assert!(c.len() >= 60, "{} flows", c.len());
    assert!(v10 >= 30 && v13 >= 60, "1.0: {v10}, 1.3: {v13}");
}

#[test]
fn corpus_prints_and_parses_back_identically() {
    for l in corpus() {
        let flow = parse_flow(l.text).unwrap_or_else(|e| panic!("line {}: {e}", l.no));
        let printed = flow.to_string();
        let again = parse_flow(&printed)
            .unwrap_or_else(|e| panic!("line {}: printed {printed:?} does not parse: {e}", l.no));
        assert_eq!(again, flow, "line {}: {printed}", l.no);
        assert_eq!(again.to_string(), printed, "line {}", l.no);
        // The JSON model round-trips too (the REST API's form).
        let json = serde_json::to_string(&flow).unwrap();
        let back: Flow = serde_json::from_str(&json).unwrap();
        assert_eq!(back, flow, "line {}: {json}", l.no);
    }
}

#[test]
fn corpus_encodes_for_its_versions_and_decodes_back() {
    for l in corpus() {
        let flow = parse_flow(l.text).unwrap();
        for v in [Version::V1_0, Version::V1_3] {
            let msg = flow.to_message(v, FlowModCommand::Add);
            // A 1.3-only line is refused by 1.0; a 1.0-only line is one whose meaning
            // 1.3 changes (see the corpus's header), so it is not sent as 1.3.
            if !l.versions.contains(&v) && v == Version::V1_3 {
                continue;
            }
            if !l.versions.contains(&v) {
                match msg {
                    Err(EncodeError::NotExpressible { .. }) => continue,
                    other => panic!(
                        "line {}: OpenFlow {v} should refuse {}, got {other:?}",
                        l.no, l.text
                    ),
                }
            }
            let msg = msg.unwrap_or_else(|e| panic!("line {} in {v}: {e}", l.no));
            let mut bytes = Vec::new();
            msg.encode(9, &mut bytes).unwrap();
            let (_, decoded) = Message::decode(&bytes).unwrap();
            let back = match decoded {
                Message::V10(openflow::of10::Message::FlowMod(fm)) => Flow::from_of10(&fm),
                Message::V13(openflow::of13::Message::FlowMod(fm)) => Flow::from_of13(&fm),
                other => panic!("not a flow mod: {other:?}"),
            }
            .unwrap_or_else(|e| panic!("line {} in {v}: {e}", l.no));
            // A FLOW_MOD keeps the flags that 1.0's flow stats lose.
            let mut want = flow.read_back(v);
            want.flags = flow.flags;
            assert_eq!(back, want, "line {} in {v}: {}", l.no, l.text);
        }
    }
}

#[test]
fn corpus_covers_every_name() {
    // The list: fields old and new, shorthands, masks and prefixes, actions,
    // instructions and flow keywords.
    let names = [
        "dl_src=",
        "eth_src=",
        "dl_dst=",
        "eth_dst=",
        "nw_dst=",
        "ipv4_dst=",
        "nw_src=",
        "ipv4_src=",
        "dl_type=",
        "eth_type=",
        "in_port=",
        "dl_vlan=",
        "vlan_vid=",
        "vlan_tci=",
        "dl_vlan_pcp=",
        "vlan_pcp=",
        "nw_tos=",
        "ip_dscp=",
        "nw_ecn=",
        "ip_ecn=",
        "nw_proto=",
        "tp_src=",
        "tp_dst=",
        "tcp_dst=",
        "udp_src=",
        "udp_dst=",
        "sctp_src=",
        "icmp_type=",
        "icmp_code=",
        "icmpv4_type=",
        "icmpv6_type=",
        "arp_op=",
        "arp_spa=",
        "arp_tpa=",
        "arp_sha=",
        "arp_tha=",
        "ipv6_src=",
        "ipv6_dst=",
        "ipv6_label=",
        "ipv6_flabel=",
        "metadata=",
        "ip,",
        "arp,",
        "rarp,",
        "tcp,",
        "udp,",
        "icmp,",
        "ipv6,",
        "tcp6,",
        "udp6,",
        "icmp6,",
        "sctp,",
        "/8,",
        "/24,",
        "/255.255.0.0",
        "/ffff:ffff::",
        "/01:00:00:00:00:00",
        "/0xf0",
        "output:",
        "actions=drop",
        "flood",
        "=all",
        "in_port\n",
        "normal",
        "local",
        "controller\n",
        "controller:128",
        "controller(max_len=",
        "enqueue:",
        "set_queue:",
        "set_field:",
        "mod_vlan_vid:",
        "mod_vlan_pcp:",
        "strip_vlan",
        "pop_vlan",
        "push_vlan:",
        "mod_dl_src:",
        "mod_dl_dst:",
        "mod_nw_src:",
        "mod_nw_dst:",
        "mod_nw_tos:",
        "mod_nw_ecn:",
        "mod_tp_src:",
        "mod_tp_dst:",
        "group:",
        "goto_table:",
        "write_metadata:",
        "meter:",
        "dec_ttl",
        "clear_actions",
        "write_actions(",
        "priority=",
        "table=",
        "cookie=",
        "idle_timeout=",
        "hard_timeout=",
        "send_flow_rem",
        "check_overlap",
        "reset_counts",
        "no_packet_counts",
        "no_byte_counts",
    ];
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !CORPUS.contains(n))
        .collect();
    assert!(missing.is_empty(), "the corpus never uses {missing:?}");
}
