//! The views, from documents shaped as the API sends them (and some it does not).

use serde_json::json;

use super::*;

#[test]
fn tables_align_their_columns_and_leave_no_trailing_blanks() {
    let mut t = Table::new(&["A", "LONGER", "C"]);
    t.row(vec!["xyz".into(), "1".into(), "last".into()]);
    t.row(vec!["é".into(), "22".into(), String::new()]);
    assert_eq!(
        t.render(),
        "A    LONGER  C\n\
         xyz  1       last\n\
         é    22\n"
    );
}

#[test]
fn durations_are_short() {
    assert_eq!(duration(0.0002), "200µs");
    assert_eq!(duration(0.25), "250ms");
    assert_eq!(duration(42.9), "42s");
    assert_eq!(duration(192.0), "3m12s");
    assert_eq!(duration(5.0 * 3600.0 + 180.0), "5h03m");
    assert_eq!(duration(2.0 * 86400.0 + 4.0 * 3600.0), "2d04h");
    assert_eq!(duration(-1.0), "-");
}

#[test]
fn switches_show_dpid_version_peer_ports_and_age_and_missing_fields_as_dashes() {
    let now = now_secs() as u64;
    let v = json!([
        {"dpid": "00:00:00:00:00:00:00:01", "version": "1.3", "peer": "127.0.0.1:40000",
         "connected_since": now - 75, "n_ports": 4, "ports_up": 3},
        {"dpid": "00:00:00:00:00:00:00:02", "version": "1.0"}
    ]);
    let text = switches(&v);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "DPID                     VERSION  PEER             PORTS  UP  AGE"
    );
    assert!(
        lines[1].starts_with("00:00:00:00:00:00:00:01  1.3      127.0.0.1:40000  4      3   1m1"),
        "{text}"
    );
    assert_eq!(
        lines[2],
        "00:00:00:00:00:00:00:02  1.0      -                -      -   -"
    );
    assert_eq!(switches(&json!([])), "no switch is connected\n");
}

#[test]
fn a_switch_shows_its_description_when_sent_and_its_ports_state_in_words() {
    let v = json!({
        "dpid": "00:00:00:00:00:00:00:07", "version": "1.3", "peer": "10.0.0.9:5555",
        "connected_since": 0,
        "description": {"mfr": "Nicira, Inc.", "hw": "Open vSwitch", "sw": "3.1.0",
                        "serial": null, "dp_desc": "s7"},
        "features": {"n_buffers": 0, "n_tables": 254, "capabilities": 79},
        "ports": [
            {"port_no": 1, "name": "s7-eth1", "hw_addr": "02:00:00:00:07:01", "up": true,
             "admin_down": false, "link_down": false},
            {"port_no": 2, "name": "s7-eth2", "hw_addr": "02:00:00:00:07:02", "up": false,
             "admin_down": true, "link_down": true},
            {"port_no": 3, "name": "s7-eth3", "up": false, "admin_down": false, "link_down": true}
        ],
        "counters": null
    });
    let text = switch(&v);
    for want in [
        "dpid:         00:00:00:00:00:00:00:07\n",
        "manufacturer: Nicira, Inc.\n",
        "hardware:     Open vSwitch\n",
        "software:     3.1.0\n",
        "serial:       -\n",
        "datapath:     s7\n",
        "tables:       254\n",
        "capabilities: 0x4f\n",
        "PORT  NAME     HW_ADDR            STATE\n",
        "1     s7-eth1  02:00:00:00:07:01  up\n",
        "2     s7-eth2  02:00:00:00:07:02  down (admin, link)\n",
        "3     s7-eth3  -                  down (link)\n",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    // No description sent (a server before it): no such lines.
    let mut bare = v.clone();
    bare.as_object_mut().unwrap().remove("description");
    assert!(!switch(&bare).contains("manufacturer"));
}

#[test]
fn ports_with_stats_get_the_traffic_columns() {
    let v = json!({"dpid": "00:00:00:00:00:00:00:01", "ports": [
        {"port_no": 1, "name": "eth1", "hw_addr": "02:00:00:00:00:01", "up": true,
         "stats": {"rx_packets": 10, "tx_packets": 20, "rx_bytes": 1000, "tx_bytes": 2000,
                   "rx_dropped": 0, "tx_dropped": 1, "rx_errors": 0, "tx_errors": 0}},
        {"port_no": 4294967294u32, "name": "br0", "up": true},
        {"port_no": 2, "name": "eth2", "hw_addr": "02:00:00:00:00:02", "up": true,
         "stats": {"rx_packets": 0, "tx_packets": 0, "rx_bytes": 0, "tx_bytes": 0,
                   "rx_dropped": u64::MAX, "tx_dropped": u64::MAX, "rx_errors": u64::MAX, "tx_errors": 0}}
    ]});
    let text = ports(&v);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "PORT        NAME  HW_ADDR            STATE  RX_PKTS  TX_PKTS  RX_BYTES  TX_BYTES  RX_DROP  TX_DROP  RX_ERR  TX_ERR"
    );
    assert_eq!(
        lines[1],
        "1           eth1  02:00:00:00:00:01  up     10       20       1000      2000      0        1        0       0"
    );
    assert_eq!(
        lines[2],
        "4294967294  br0   -                  up     -        -        -         -         -        -        -       -"
    );
    // All ones: a counter the switch does not keep.
    assert_eq!(
        lines[3],
        "2           eth2  02:00:00:00:00:02  up     0        0        0         0         -        -        -       0"
    );
}

#[test]
fn flows_are_ofctl_lines_with_counters_first_and_their_app_or_bare() {
    let v = json!({"dpid": "00:00:00:00:00:00:00:01", "flows": [
        {"table": 0, "priority": 100, "cookie": "0x0", "packets": 3, "bytes": 180,
         "duration_secs": 1.5, "owner": null,
         "ofctl": "priority=100,icmp,nw_dst=10.0.0.2,actions=drop"},
        {"table": 0, "priority": 0, "packets": 7, "bytes": 420, "duration_secs": 12.25,
         "owner": "learning_switch", "ofctl": "priority=0,actions=CONTROLLER:65535"},
        {"table": 1, "priority": 5}
    ]});
    assert_eq!(
        flows(&v, true),
        "APP              FLOW\n\
         -                duration=1.500s, n_packets=3, n_bytes=180, priority=100,icmp,nw_dst=10.0.0.2,actions=drop\n\
         learning_switch  duration=12.250s, n_packets=7, n_bytes=420, priority=0,actions=CONTROLLER:65535\n\
         -                {\"table\":1,\"priority\":5}\n"
    );
    let bare = flows(&v, false);
    assert!(bare.starts_with(
        "priority=100,icmp,nw_dst=10.0.0.2,actions=drop\npriority=0,actions=CONTROLLER:65535\n"
    ));
    assert_eq!(unreadable_flows(&v), None);
    let odd = json!({"flows": [], "unreadable": ["table 0 priority 5: an experimenter action"]});
    assert_eq!(
        unreadable_flows(&odd).unwrap(),
        "1 flow of this switch cannot be written in ovs-ofctl syntax (--json shows them all):\n  table 0 priority 5: an experimenter action\n"
    );
    assert_eq!(flows(&json!({"flows": []}), true), "no flows\n");
    // The server's `ofctl` written as dump-flows writes it (counters included): shown
    // as it is with stats, without its counters for add-flow.
    let dumped = json!({"flows": [{"owner": "topology", "packets": 4,
        "ofctl": "cookie=0x4c4c4450, duration=2.386s, table=0, n_packets=4, n_bytes=344, idle_age=1, priority=65280,dl_type=0x88cc actions=CONTROLLER:65535"}]});
    assert_eq!(
        flows(&dumped, true),
        "APP       FLOW\n\
         topology  cookie=0x4c4c4450, duration=2.386s, table=0, n_packets=4, n_bytes=344, idle_age=1, priority=65280,dl_type=0x88cc actions=CONTROLLER:65535\n"
    );
    assert_eq!(
        flows(&dumped, false),
        "cookie=0x4c4c4450,table=0,priority=65280,dl_type=0x88cc,actions=CONTROLLER:65535\n"
    );
    assert_eq!(
        without_counters("priority=0 actions=output:1,mod_nw_tos:4"),
        "priority=0,actions=output:1,mod_nw_tos:4"
    );
    assert_eq!(without_counters("cookie=0x1, duration=1s"), "cookie=0x1");
    assert_eq!(flows(&json!({"flows": []}), false), "");
}

#[test]
fn static_flows_show_source_status_and_error() {
    let v = json!([
        {"name": "block", "dpid": "00:00:00:00:00:00:00:02", "flow": "priority=9,ip,actions=drop",
         "source": "api", "status": "installed", "error": null, "connected": true, "updated_at": 1},
        {"name": "bad", "dpid": "00:00:00:00:00:00:00:03", "flow": "actions=group:9",
         "source": "config", "status": "refused", "error": "BAD_ACTION/BAD_OUT_GROUP",
         "connected": true, "updated_at": 1},
        {"name": "later", "dpid": "00:00:00:00:00:00:00:04", "flow": "actions=drop",
         "source": "api", "status": "pending", "error": null, "connected": false, "updated_at": 1}
    ]);
    let text = static_flows(&v);
    assert_eq!(
        text,
        "NAME   DPID                     SOURCE  STATUS                          FLOW                        ERROR\n\
         block  00:00:00:00:00:00:00:02  api     installed                       priority=9,ip,actions=drop  -\n\
         bad    00:00:00:00:00:00:00:03  config  refused                         actions=group:9             BAD_ACTION/BAD_OUT_GROUP\n\
         later  00:00:00:00:00:00:00:04  api     pending (switch not connected)  actions=drop                -\n"
    );
    let one = static_flow(&v[1]);
    assert!(
        one.contains("status:  refused\n") && one.contains("error:   BAD_ACTION/BAD_OUT_GROUP\n"),
        "{one}"
    );
    assert_eq!(static_flows(&json!([])), "no static flows\n");
    // Times are whole seconds: just now is 0s, not milliseconds.
    let now = json!({"name": "n", "updated_at": now_secs()});
    assert!(
        static_flow(&now).contains("updated: 0s ago\n"),
        "{}",
        static_flow(&now)
    );
    let gone = json!({"deleted": v[0], "removed_from_switch": true, "error": null});
    assert_eq!(
        static_flow_deleted("block", &gone),
        "deleted static flow block, and removed it from 00:00:00:00:00:00:00:02\n"
    );
    let kept = json!({"deleted": v[2], "removed_from_switch": false, "error": "the switch is not connected"});
    assert_eq!(
        static_flow_deleted("later", &kept),
        "deleted static flow later; not removed from 00:00:00:00:00:00:00:04: the switch is not connected\n"
    );
}

#[test]
fn hosts_links_and_the_topology() {
    let hs = json!([{"mac": "00:00:00:00:00:01", "vlan": null,
        "attachment": {"dpid": "00:00:00:00:00:00:00:05", "port": 3},
        "ips": ["10.0.0.1", "fe80::1"], "last_seen_secs_ago": 2.5}]);
    assert_eq!(
        hosts(&hs),
        "MAC                VLAN  SWITCH                   PORT  IPS               LAST_SEEN\n\
         00:00:00:00:00:01  -     00:00:00:00:00:00:00:05  3     10.0.0.1,fe80::1  2s ago\n"
    );
    let ls = json!([{"src": {"dpid": "00:00:00:00:00:00:00:01", "port": 2},
                     "dst": {"dpid": "00:00:00:00:00:00:00:02", "port": 1}}]);
    assert_eq!(
        links(&ls),
        "SRC                      PORT  DST                      PORT\n\
         00:00:00:00:00:00:00:01  2     00:00:00:00:00:00:00:02  1\n"
    );
    let topo = topology(&json!({"switches": [], "links": ls, "hosts": hs}));
    assert!(
        topo.starts_with("SWITCHES (0)\nno switch is connected\n\nLINKS (1)\nSRC"),
        "{topo}"
    );
    assert!(topo.contains("\nHOSTS (1)\nMAC"), "{topo}");
}

#[test]
fn apps_show_state_reason_and_handler_times_when_sent() {
    let v = json!([
        {"name": "topology", "order": 0, "state": "running", "panics": 0,
         "handlers": [{"handler": "packet_in", "calls": 4, "time_secs": 0.0002}]},
        {"name": "broken", "order": 1, "state": "quarantined", "panics": 1,
         "requires": ["topology", "devices"],
         "reason": {"handler": "PACKET_IN", "panic": "index out of bounds", "dpid": "00:00:00:00:00:00:00:01"}}
    ]);
    let text = apps(&v);
    assert_eq!(
        text,
        "ORDER  NAME      STATE        REQUIRES          PANICS  REASON\n\
         0      topology  running      -                 0       -\n\
         1      broken    quarantined  topology,devices  1       PACKET_IN panicked: index out of bounds (switch 00:00:00:00:00:00:00:01)\n\
         \n\
         APP       HANDLER    CALLS  TIME   AVG\n\
         topology  packet_in  4      200µs  50.0µs\n"
    );
    // The counters apps publish, in a table of their own.
    let v = json!([{"name": "routing", "order": 0, "state": "running", "panics": 0,
        "counters": [{"name": "routes_installed", "help": "Routes installed", "value": 12}]}]);
    assert!(
        apps(&v).ends_with(
            "\nAPP      COUNTER           VALUE  COUNTS\n\
             routing  routes_installed  12     Routes installed\n"
        ),
        "{}",
        apps(&v)
    );
    // Without handlers (the server before them): no second table.
    assert!(
        !apps(&json!([{"name": "x", "order": 0, "state": "running", "panics": 0}]))
            .contains("HANDLER")
    );
}

#[test]
fn an_app_change_says_what_stopped_and_started_and_how_long_it_took() {
    let v = json!({"started": [], "stopped": ["device_manager", "topology"], "generation": 7, "took_ms": 3.25});
    assert_eq!(
        app_change(&v),
        "stopped device_manager,topology; on every worker in 3.2 ms\n"
    );
    let v =
        json!({"started": ["routing"], "stopped": ["routing"], "generation": 8, "took_ms": 1.0});
    assert_eq!(
        app_change(&v),
        "stopped routing; started routing; on every worker in 1.0 ms\n"
    );
    let v = json!({"started": [], "stopped": [], "generation": 9, "took_ms": 0.5});
    assert_eq!(app_change(&v), "done; on every worker in 0.5 ms\n");
    let v = json!({"started": [], "stopped": ["routing"], "generation": 10, "took_ms": 0.25, "flows_ms": 12.5});
    assert_eq!(
        app_change(&v),
        "stopped routing; on every worker in 0.2 ms; its flows removed in 12.5 ms\n"
    );
}

#[test]
fn a_document_of_unforeseen_shape_still_shows() {
    let v = json!({"src": "00:00:00:00:00:01", "dst": "00:00:00:00:00:02", "cost": 2,
        "hops": [{"dpid": "00:00:00:00:00:00:00:01", "in_port": 1, "out_port": 2},
                 {"dpid": "00:00:00:00:00:00:00:02", "in_port": 1, "out_port": 3, "extra": {"a": 1}}]});
    assert_eq!(
        generic(&v),
        "src:  00:00:00:00:00:01\n\
         dst:  00:00:00:00:00:02\n\
         cost: 2\n\
         \n\
         HOPS (2)\n\
         DPID                     IN_PORT  OUT_PORT  EXTRA.A\n\
         00:00:00:00:00:00:00:01  1        2         -\n\
         00:00:00:00:00:00:00:02  1        3         1\n"
    );
    assert_eq!(generic(&json!(["a", 1])), "a\n1\n");
}

#[test]
fn a_path_shows_its_ends_and_each_hop_with_its_ports() {
    let v = json!({"src": "00:00:5e:00:00:01", "dst": "00:00:00:00:00:00:00:03", "length": 2,
        "hops": [{"dpid": "00:00:00:00:00:00:00:01", "in_port": 3, "out_port": 1},
                 {"dpid": "00:00:00:00:00:00:00:02", "in_port": 1, "out_port": 2},
                 {"dpid": "00:00:00:00:00:00:00:03", "in_port": 1, "out_port": null}]});
    assert_eq!(
        path(&v),
        "from:  00:00:5e:00:00:01\n\
         to:    00:00:00:00:00:00:00:03\n\
         links: 2\n\
         \n\
         HOP  DPID                     IN_PORT  OUT_PORT\n\
         1    00:00:00:00:00:00:00:01  3        1\n\
         2    00:00:00:00:00:00:00:02  1        2\n\
         3    00:00:00:00:00:00:00:03  1        -\n"
    );
}

#[test]
fn an_event_is_one_line_with_the_servers_time_its_type_what_happened_and_fields() {
    // 2026-11-25 14:05:09.5 UTC; the server's time wins over the arrival.
    let t = 1_795_615_509.5;
    let arrival = t + 3600.0;
    let line = |kind, data| event(arrival, kind, data);
    assert_eq!(
        line("switch", r#"{"seq":1,"time":1795615509.5,"event":"connected","dpid":"00:00:00:00:00:00:00:01","version":"1.3","peer":"127.0.0.1:5000","n_ports":4}"#),
        "14:05:09.500  switch  connected     dpid=00:00:00:00:00:00:00:01 version=1.3 peer=127.0.0.1:5000 n_ports=4"
    );
    assert_eq!(
        line(
            "link",
            r#"{"seq":2,"time":1795615509.5,"event":"removed","link":{"src":{"dpid":"01","port":1},"dst":{"dpid":"02","port":2}},"reason":"port down"}"#
        ),
        "14:05:09.500  link    removed       link=01/1->02/2 reason=\"port down\""
    );
    assert_eq!(
        line(
            "port",
            r#"{"seq":3,"time":1795615509.5,"event":"down","dpid":"01","port":{"port_no":2,"name":"s1-eth2","up":false},"was_up":true}"#
        ),
        "14:05:09.500  port    down          dpid=01 port=2(s1-eth2) was_up=true"
    );
    assert_eq!(
        line(
            "host",
            r#"{"seq":4,"time":1795615509.5,"event":"moved","mac":"00:00:5e:00:00:01","vlan":null,"attachment":{"dpid":"02","port":3},"from":{"dpid":"01","port":3}}"#
        ),
        "14:05:09.500  host    moved         mac=00:00:5e:00:00:01 attachment=02/3 from=01/3"
    );
    assert_eq!(
        line(
            "app",
            r#"{"seq":5,"time":1795615509.5,"event":"quarantined","app":"x","handler":"PACKET_IN","reason":"boom here","dpid":null}"#
        ),
        "14:05:09.500  app     quarantined   app=x handler=PACKET_IN reason=\"boom here\""
    );
    assert_eq!(
        line("lagged", r#"{"missed":7}"#),
        "15:05:09.500  lagged                missed=7"
    );
    assert_eq!(
        line("", "not json\nat all"),
        "15:05:09.500  message                not json\\nat all"
    );
}
