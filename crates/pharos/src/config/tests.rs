//! The file as a whole: every key read where the schema puts it, the defaults, unknown
//! keys refused with their path, line and a guess, each section's checks reached from
//! the file, the repository's example. Each section's own rules are tested in its
//! crate too (`controller::config`, `api::config`, `apps::config`,
//! `apps::static_flows::config`).

use std::path::PathBuf;
use std::time::Duration;

use apps::config::{check_names, unknown_app};
use controller::config::{max_workers, ClientAuth, HandshakeConfig, KeepaliveConfig, ListenEntry};
use openflow::Version;

use super::*;

fn err(text: &str) -> ConfigError {
    Config::from_toml_str(text).expect_err("should be refused")
}

#[test]
fn empty_file_is_the_defaults() {
    let c = Config::from_toml_str("").unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(c.core.listen.len(), 2);
    assert_eq!(c.core.listen[0].addr.port(), 6653);
    assert_eq!(c.core.listen[1].addr.port(), 6633);
    assert!(c.core.workers >= 1);
    // No apps named: the binary's default set (the core knows no app by name).
    assert_eq!(c.apps, None);
    assert_eq!(c.core.max_connections, 20_000);
    assert_eq!(c.core.handshake.timeout, Duration::from_secs(5));
    assert_eq!(c.core.handshake.max_pending, 1000);
    assert_eq!(c.core.handshake.max_pending_per_ip, 64);
    assert_eq!(c.core.keepalive.interval, Duration::from_secs(5));
    assert_eq!(c.core.keepalive.max_unanswered, 3);
    assert_eq!(c.core.output_buffer_limit, 16 << 20);
    assert_eq!(c.core.backpressure.high_water, 1 << 20);
    assert_eq!(c.core.backpressure.low_water, 256 << 10);
    assert_eq!(c.core.backpressure.stall_timeout, Duration::from_secs(30));
    assert_eq!(c.core.counters_interval, Duration::from_secs(10));
    assert_eq!(
        c.core.handshake.versions,
        vec![Version::V1_0, Version::V1_3]
    );
    assert_eq!(c.core.handshake.miss_send_len, 128);
    assert!(c.core.handshake.barrier);
}

#[test]
fn every_key_is_read() {
    let c = Config::from_toml_str(
        r#"
        listen = ["127.0.0.1:7000", "[::1]:7001"]
        workers = 3
        max_connections = 50
        output_buffer_limit = 100000
        max_message_len = 4096
        counters_interval = "1m"
        log_level = "debug"

        [handshake]
        timeout = "250ms"
        max_pending = 10
        max_pending_per_ip = 2
        max_waiting = 40
        max_waiting_per_ip = 0
        max_wait = "2s"
        versions = ["1.3"]
        miss_send_len = 65535
        barrier = false

        [keepalive]
        interval = "2s"
        max_unanswered = 5

        [backpressure]
        high_water = 65536
        low_water = 1000
        stall_timeout = "3s"

        [[apps]]
        name = "hub"

        [[apps]]
        name = "learning_switch"
        params = { idle_timeout = 30 }
        "#,
    )
    .unwrap();
    assert_eq!(
        c.core.listen,
        vec![
            "127.0.0.1:7000".parse::<ListenEntry>().unwrap(),
            "[::1]:7001".parse().unwrap()
        ]
    );
    assert_eq!(c.core.workers, 3);
    assert_eq!(c.core.max_connections, 50);
    assert_eq!(c.core.output_buffer_limit, 100_000);
    assert_eq!(c.core.backpressure.high_water, 65536);
    assert_eq!(c.core.backpressure.low_water, 1000);
    assert_eq!(c.core.backpressure.stall_timeout, Duration::from_secs(3));
    assert_eq!(c.core.max_message_len, 4096);
    assert_eq!(c.core.counters_interval, Duration::from_secs(60));
    assert_eq!(c.log_level, "debug");
    assert_eq!(
        c.core.handshake,
        HandshakeConfig {
            timeout: Duration::from_millis(250),
            max_pending: 10,
            max_pending_per_ip: 2,
            max_waiting: 40,
            max_waiting_per_ip: 0,
            max_wait: Duration::from_secs(2),
            versions: vec![Version::V1_3],
            miss_send_len: 0xffff,
            barrier: false,
            read_flows: true,
        }
    );
    assert_eq!(
        c.core.keepalive,
        KeepaliveConfig {
            interval: Duration::from_secs(2),
            max_unanswered: 5
        }
    );
    assert_eq!(c.app_list()[0], AppConfig::named("hub"));
    assert_eq!(c.app_list()[1].name, "learning_switch");
    assert_eq!(
        c.app_list()[1]
            .params
            .get("idle_timeout")
            .and_then(|v| v.as_integer()),
        Some(30)
    );
}

#[test]
fn a_partial_table_keeps_the_other_defaults() {
    let c = Config::from_toml_str("[keepalive]\ninterval = \"1s\"\n").unwrap();
    assert_eq!(c.core.keepalive.interval, Duration::from_secs(1));
    assert_eq!(c.core.keepalive.max_unanswered, 3);
}

#[test]
fn versions_as_bare_numbers_are_sorted_and_deduplicated() {
    let c = Config::from_toml_str("[handshake]\nversions = [1.3, 1.0, 1.3]").unwrap();
    assert_eq!(
        c.core.handshake.versions,
        vec![Version::V1_0, Version::V1_3]
    );
}

#[test]
fn bad_duration_names_the_key_and_the_expected_form() {
    let e = err("[keepalive]\ninterval = \"5x\"\n");
    assert_eq!(e.key, "keepalive.interval");
    assert!(e.reason.contains("\"5x\""), "{e}");
    assert!(
        e.reason.contains("expected e.g. \"5s\" or \"500ms\""),
        "{e}"
    );
    assert_eq!(e.line, Some(2));
    let shown = e.to_string();
    assert!(
        shown.contains("`keepalive.interval`") && shown.contains("line 2"),
        "{shown}"
    );
}

#[test]
fn a_number_is_not_a_duration() {
    let e = err("counters_interval = 10");
    assert_eq!(e.key, "counters_interval");
    assert!(e.reason.contains("invalid duration 10"), "{e}");
    let e = err("[handshake]\ntimeout = 1.5");
    assert_eq!(e.key, "handshake.timeout");
}

#[test]
fn zero_durations_are_refused() {
    for (text, key) in [
        ("[keepalive]\ninterval = \"0s\"", "keepalive.interval"),
        ("[handshake]\ntimeout = \"0ms\"", "handshake.timeout"),
        ("counters_interval = \"0m\"", "counters_interval"),
    ] {
        let e = err(text);
        assert_eq!(e.key, key);
        assert!(e.reason.contains("longer than zero"), "{e}");
    }
}

#[test]
fn unknown_keys_are_named_with_their_path() {
    let e = err("wrokers = 4");
    assert_eq!(e.key, "wrokers");
    assert!(e.reason.starts_with("unknown key"), "{e}");
    assert!(
        e.reason.contains("workers"),
        "the expected keys are listed: {e}"
    );

    assert!(e.reason.contains("did you mean `workers`?"), "{e}");

    let e = err("[keepalive]\nintervl = \"5s\"");
    assert_eq!(e.key, "keepalive.intervl");
    assert!(e.reason.contains("did you mean `interval`?"), "{e}");
    assert_eq!(e.line, Some(2));
    // Nothing near: no guess.
    let e = err("[keepalive]\ncolour = 1");
    assert!(!e.reason.contains("did you mean"), "{e}");

    let e = err("[[apps]]\nname = \"hub\"\nidle_timeout = 3");
    assert_eq!(e.key, "apps[0].idle_timeout");
    assert!(e.reason.contains("params"), "{e}");
}

#[test]
fn zero_counts_are_refused() {
    for (text, key) in [
        ("workers = 0", "workers"),
        ("max_connections = 0", "max_connections"),
        ("[handshake]\nmax_pending = 0", "handshake.max_pending"),
        (
            "[handshake]\nmax_pending_per_ip = 0",
            "handshake.max_pending_per_ip",
        ),
        (
            "[keepalive]\nmax_unanswered = 0",
            "keepalive.max_unanswered",
        ),
    ] {
        let e = err(text);
        assert_eq!(e.key, key, "{text}");
        assert_eq!(e.reason, "must be at least 1");
    }
}

#[test]
fn negative_and_wrong_type_values_name_the_key() {
    let e = err("workers = -1");
    assert_eq!(e.key, "workers");
    let e = err("workers = \"four\"");
    assert_eq!(e.key, "workers");
    assert!(e.reason.contains("invalid type"), "{e}");
    let e = err("[handshake]\nmiss_send_len = 70000");
    assert_eq!(e.key, "handshake.miss_send_len");
}

#[test]
fn empty_listen_is_refused() {
    let e = err("listen = []");
    assert_eq!(e.key, "listen");
    assert!(e.reason.contains("at least one"), "{e}");
}

#[test]
fn a_bad_listen_address_is_refused() {
    let e = err("listen = [\"localhost\"]");
    assert!(e.key.starts_with("listen"), "{e}");
    assert!(e.reason.contains("not an address"), "{e}");
    let e = err("listen = [\"127.0.0.1:1\", \"127.0.0.1:1\"]");
    assert_eq!(e.key, "listen[1]");
    assert!(e.reason.contains("twice"), "{e}");
}

#[test]
fn unsupported_or_no_versions_are_refused() {
    let e = err("[handshake]\nversions = [\"1.0\", \"1.4\"]");
    assert_eq!(e.key, "handshake.versions");
    assert!(
        e.reason.contains("1.4") && e.reason.contains("\"1.3\""),
        "{e}"
    );
    let e = err("[handshake]\nversions = []");
    assert_eq!(e.key, "handshake.versions");
    let e = err("[handshake]\nbarier = true");
    assert_eq!(e.key, "handshake.barier");
    let e = err("versions = [\"1.3\"]");
    assert_eq!(e.key, "versions");
    assert!(e.reason.starts_with("unknown key"), "{e}");
}

#[test]
fn message_and_buffer_limits_are_checked() {
    let e = err("max_message_len = 70000");
    assert_eq!(e.key, "max_message_len");
    let e = err("max_message_len = 8");
    assert_eq!(e.key, "max_message_len");
    let e = err("output_buffer_limit = 1000");
    assert_eq!(e.key, "output_buffer_limit");
    assert!(e.reason.contains("max_message_len"), "{e}");
}

#[test]
fn backpressure_marks_are_ordered() {
    // low < high <= output_buffer_limit, each error naming its key and the other one.
    let e = err("[backpressure]\nlow_water = 2000000");
    assert_eq!(e.key, "backpressure.low_water");
    assert!(
        e.reason.contains("backpressure.high_water (1048576)"),
        "{e}"
    );
    let e = err("[backpressure]\nhigh_water = 1000\nlow_water = 1000");
    assert_eq!(e.key, "backpressure.low_water");
    let e = err("output_buffer_limit = 100000");
    assert_eq!(e.key, "backpressure.high_water");
    assert!(e.reason.contains("output_buffer_limit (100000)"), "{e}");
    let e = err("[backpressure]\nhigh_water = 0\nlow_water = 0");
    assert_eq!(e.key, "backpressure.high_water");
    let e = err("[backpressure]\nstall_timeout = \"0s\"");
    assert_eq!(e.key, "backpressure.stall_timeout");
    let e = err("[backpressure]\nhigh_watr = 5");
    assert_eq!(e.key, "backpressure.high_watr");
    let ok = Config::from_toml_str(
        "output_buffer_limit = 100000\n[backpressure]\nhigh_water = 100000\nlow_water = 0",
    )
    .unwrap();
    assert_eq!(ok.core.backpressure.high_water, 100_000);
}

#[test]
fn apps_are_named_once_and_not_empty() {
    let e = err("[[apps]]\nname = \"hub\"\n[[apps]]\nname = \"hub\"");
    assert_eq!(e.key, "apps[1].name");
    assert!(e.reason.contains("already apps[0]"), "{e}");
    let e = err("[[apps]]\nname = \"\"");
    assert_eq!(e.key, "apps[0].name");
    let e = err("[[apps]]\nparams = {}");
    assert_eq!(e.key, "apps[0]");
    assert!(e.reason.contains("name"), "{e}");
}

#[test]
fn no_apps_is_allowed() {
    assert_eq!(
        Config::from_toml_str("apps = []").unwrap().apps,
        Some(Vec::new())
    );
}

#[test]
fn unknown_app_names_list_the_known_ones() {
    let c =
        Config::from_toml_str("[[apps]]\nname = \"hub\"\n[[apps]]\nname = \"learning\"").unwrap();
    let e = check_names(c.app_list(), &["hub", "learning_switch"]).unwrap_err();
    assert_eq!(e.key, "apps[1].name");
    assert_eq!(
        e.reason,
        "unknown app `learning`; the apps are: hub, learning_switch"
    );
    assert!(check_names(c.app_list(), &["hub", "learning"]).is_ok());
    let known = ["device_manager", "hub", "routing", "topology"];
    assert_eq!(
        unknown_app("routeing", &known),
        "unknown app `routeing` (did you mean `routing`?); the apps are: device_manager, hub, routing, topology"
    );
}

#[test]
fn errors_found_after_parsing_still_give_the_line() {
    // `validate` runs on the parsed config, which has no spans: the line is looked up.
    let e = err("# settings\nlisten = [\"127.0.0.1:1\"]\n\nworkers = 0\n");
    assert_eq!((e.key.as_str(), e.line), ("workers", Some(4)));
    let e = err("[backpressure]\nhigh_water = 10\nlow_water = 20\n");
    assert_eq!(
        (e.key.as_str(), e.line),
        ("backpressure.low_water", Some(3))
    );
    let e = err("listen = [\n  \"127.0.0.1:1\",\n  \"127.0.0.1:1\",\n]\n");
    assert_eq!((e.key.as_str(), e.line), ("listen[1]", Some(3)));
    let e = err("log_level = \"verbose\"");
    assert_eq!((e.key.as_str(), e.line), ("log_level", Some(1)));
}

#[test]
fn workers_are_bounded_by_the_cores() {
    let most = max_workers();
    assert!(most >= 4);
    assert!(Config::from_toml_str(&format!("workers = {most}")).is_ok());
    let e = err(&format!("workers = {}", most + 1));
    assert_eq!(e.key, "workers");
    assert!(e.reason.contains(&format!("more than {most}")), "{e}");
    assert!(e.reason.contains("per core"), "{e}");
}

#[test]
fn an_error_shown_ends_without_a_blank_line() {
    let e = err("workers = 2\n[keepalive\n");
    let shown = e.to_string();
    assert_eq!(shown, shown.trim_end(), "{shown:?}");
}

#[test]
fn syntax_errors_give_the_line() {
    let e = err("workers = 2\n[keepalive\n");
    assert_eq!(e.line, Some(2));
    assert!(!e.reason.is_empty());
}

#[test]
fn from_file_names_the_file() {
    let dir = std::env::temp_dir().join(format!("pharos-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pharos.toml");
    std::fs::write(&path, "workers = 2\n[keepalive]\ninterval = \"5x\"\n").unwrap();
    let e = Config::from_file(&path).unwrap_err();
    assert_eq!(e.key, "keepalive.interval");
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("{}:3: `keepalive.interval`: ", path.display())),
        "{shown}"
    );

    let missing = dir.join("missing.toml");
    let e = Config::from_file(&missing).unwrap_err();
    assert!(e.to_string().contains("cannot read"), "{e}");
    std::fs::write(&path, "workers = 2\n").unwrap();
    assert_eq!(Config::from_file(&path).unwrap().0.core.workers, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn serializes_back_to_an_equal_config() {
    let c = Config::from_toml_str(
        "[keepalive]\ninterval = \"250ms\"\n[[apps]]\nname = \"hub\"\nparams = { a = 1 }",
    )
    .unwrap();
    let text = toml::to_string(&c).unwrap();
    assert_eq!(Config::from_toml_str(&text).unwrap(), c);
}

#[test]
fn net_config_carries_every_network_setting() {
    let c = Config::from_toml_str(
        "listen = [\"127.0.0.1:1\"]\nworkers = 3\nmax_connections = 9\noutput_buffer_limit = 70000\nmax_message_len = 1000\ncounters_interval = \"2s\"\n[handshake]\nmax_pending = 4\n[keepalive]\nmax_unanswered = 7\n[backpressure]\nhigh_water = 65536\nlow_water = 100\nstall_timeout = \"1m\"",
    )
    .unwrap();
    let n = c.core.net();
    assert_eq!(
        n.listen,
        c.core.listen.iter().map(|l| l.addr).collect::<Vec<_>>()
    );
    assert_eq!((n.workers, n.max_connections), (3, 9));
    assert_eq!((n.output_buffer_limit, n.max_message_len), (70000, 1000));
    assert_eq!(n.counters_interval, Duration::from_secs(2));
    assert_eq!(n.handshake, c.core.handshake);
    assert_eq!(n.keepalive, c.core.keepalive);
    assert_eq!(n.backpressure, c.core.backpressure);
    assert_eq!(n.backpressure.stall_timeout, Duration::from_secs(60));
    let d = Config::default().core.net();
    let nd = controller::controller::NetConfig::default();
    assert_eq!(
        (d.listen, d.workers, d.max_connections),
        (nd.listen, nd.workers, nd.max_connections)
    );
}

/// The repository's example file: it parses, every key is in it, and it says the
/// defaults (workers, which depends on the machine, is commented out).
#[test]
fn the_example_pharos_toml_documents_every_key_with_its_default() {
    let text = include_str!("../../../../pharos.toml");
    let mut c = Config::from_toml_str(text).expect("pharos.toml parses");
    let d = Config::default();
    // The example spells out the default apps' default parameters.
    let names: Vec<&str> = c.app_list().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, apps::DEFAULT_APPS);
    assert!(c.app_list().iter().all(|a| !a.params.is_empty()));
    c.apps = d.apps.clone();
    assert_eq!(c, d);
    let table = toml::Table::try_from(&d).unwrap();
    let mut keys: Vec<String> = Vec::new();
    for (k, v) in &table {
        keys.push(k.clone());
        if let toml::Value::Table(t) = v {
            keys.extend(t.keys().cloned());
        }
    }
    for key in keys {
        let documented = text.lines().any(|l| {
            let l = l.trim_start_matches(['#', ' ']);
            l.starts_with(&format!("{key} ="))
                || l.starts_with(&format!("[{key}]"))
                || l.starts_with(&format!("[[{key}]]"))
        });
        assert!(documented, "pharos.toml does not document `{key}`");
    }
}

#[test]
fn a_bad_api_section_is_refused_with_key_and_line() {
    let e = err("workers = 1\n[api]\nlisten = \"localhost:80\"\n");
    assert_eq!((e.key.as_str(), e.line), ("api.listen", Some(3)));
    assert!(e.reason.contains("\"off\""), "{e}");
    let e = err("[api]\nlisen = \"127.0.0.1:1\"\n");
    assert!(e.key.starts_with("api"), "{e}");
    let e = err("[api]\ntoken_file = \"\"\n");
    assert_eq!((e.key.as_str(), e.line), ("api.token_file", Some(2)));
}

#[test]
fn a_listen_entry_is_an_address_or_a_table_with_tls() {
    let c = Config::from_toml_str(
        r#"
        listen = ["127.0.0.1:6653", { addr = "127.0.0.1:6654", tls = { cert = "c.pem", key = "k.pem", client_ca = "ca.pem" } }]

        [[listen]]
        addr = "[::1]:6655"
        tls = { cert = "c.pem", key = "k.pem", client_auth = "none" }
        "#,
    );
    // An array and an array of tables under one key is not TOML: each form alone.
    assert!(c.is_err());
    let c = Config::from_toml_str(
        r#"listen = ["127.0.0.1:6653", { addr = "127.0.0.1:6654", tls = { cert = "c.pem", key = "k.pem", client_ca = "ca.pem" } }]"#,
    )
    .unwrap();
    assert_eq!(
        c.core.listen[0],
        ListenEntry::plain("127.0.0.1:6653".parse().unwrap())
    );
    let tls = c.core.listen[1].tls.as_ref().expect("TLS");
    assert_eq!(c.core.listen[1].addr.port(), 6654);
    assert_eq!(tls.cert, PathBuf::from("c.pem"));
    assert_eq!(tls.client_ca, Some(PathBuf::from("ca.pem")));
    assert_eq!(
        tls.client_auth,
        ClientAuth::Required,
        "mutual authentication by default"
    );
    let net = c.core.net();
    assert_eq!(net.tls.len(), 2);
    assert!(net.tls[0].is_none() && net.tls[1].is_some());

    let c = Config::from_toml_str(
        "[[listen]]\naddr = \"[::1]:6655\"\ntls = { cert = \"c.pem\", key = \"k.pem\", client_auth = \"none\" }\n",
    )
    .unwrap();
    assert_eq!(
        c.core.listen[0].tls.as_ref().unwrap().client_auth,
        ClientAuth::None
    );
    // Round trip through TOML.
    let text = toml::to_string(&c).unwrap();
    assert_eq!(
        Config::from_toml_str(&text).unwrap().core.listen,
        c.core.listen,
        "{text}"
    );
}

#[test]
fn a_bad_tls_table_is_refused_naming_the_key() {
    let e =
        err(r#"listen = [{ addr = "127.0.0.1:1", tls = { cert = "c", key = "k", ca = "x" } }]"#);
    assert!(e.key.starts_with("listen"), "{e}");
    assert!(e.reason.contains("ca"), "{e}");
    let e = err(r#"listen = [{ tls = { cert = "c", key = "k" } }]"#);
    assert!(e.reason.contains("addr"), "{e}");
    let e = err(
        r#"listen = [{ addr = "127.0.0.1:1", tls = { cert = "c", key = "k", client_auth = "optional" } }]"#,
    );
    assert!(
        e.reason.contains("required") || e.reason.contains("none"),
        "{e}"
    );
    // The files are read by check_tls, naming the key.
    let c = Config::from_toml_str(
        r#"listen = ["127.0.0.1:1", { addr = "127.0.0.1:2", tls = { cert = "/nonexistent/c.pem", key = "k", client_ca = "ca" } }]"#,
    )
    .unwrap();
    let e = c.core.check_tls().unwrap_err();
    assert_eq!(e.key, "listen[1].tls.cert");
    assert!(e.reason.contains("/nonexistent/c.pem"), "{e}");
}

#[test]
fn the_sections_of_the_other_crates_are_read_where_the_file_puts_them() {
    let c = Config::from_toml_str(
        "workers = 1\n[api]\nlisten = \"off\"\nswitch_timeout = \"1s\"\n\n[static_flows]\nstate_file = \"/s.json\"\n\n[[static_flows.flow]]\nname = \"a\"\ndpid = \"0x2\"\nflow = \"actions=drop\"\n",
    )
    .unwrap();
    assert_eq!(c.core.workers, 1);
    assert_eq!(c.api.listen, None);
    assert_eq!(c.api.switch_timeout, Duration::from_secs(1));
    assert_eq!(c.static_flows.state_file(), PathBuf::from("/s.json"));
    assert_eq!(
        (
            c.static_flows.flow[0].name.as_str(),
            c.static_flows.flow[0].dpid
        ),
        ("a", openflow::Dpid(2))
    );
    // Their checks run on the whole file, and the line is the file's.
    let e = err("workers = 1\n\n[api]\nswitch_timeout = \"0s\"\n");
    assert_eq!((e.key.as_str(), e.line), ("api.switch_timeout", Some(4)));
    let e =
        err("workers = 1\n[[static_flows.flow]]\nname = \"a\"\ndpid = 1\nflow = \"nonsense\"\n");
    assert_eq!(
        (e.key.as_str(), e.line),
        ("static_flows.flow[0].flow", Some(5))
    );
    let e = err("[static_flows]\nstatefile = \"x\"\n");
    assert_eq!(e.key, "static_flows.statefile");
    assert!(e.reason.contains("did you mean `state_file`?"), "{e}");
}
