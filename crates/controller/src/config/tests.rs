//! The core's settings on their own: defaults, the checks of `validate` by value, the
//! file forms of the values this module owns (a `listen` entry, `[handshake]`), the
//! mapping onto `NetConfig`. The file as a whole (every key, unknown keys, lines) is
//! tested where it is read, in the binary (`pharos::config`).

use std::path::PathBuf;
use std::time::Duration;

use openflow::Version;
use serde::{Deserialize, Serialize};

use super::*;
use crate::settings::from_toml_str;

/// A change to the defaults that one check refuses.
type Change = fn(&mut CoreConfig);

/// The check `validate` makes first on `c` changed by `change`: its key and reason.
fn refused(change: impl FnOnce(&mut CoreConfig)) -> ConfigError {
    let mut c = CoreConfig::default();
    change(&mut c);
    c.validate().expect_err("should be refused")
}

/// The `listen` and `[handshake]` keys as the file writes them.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Keys {
    listen: Vec<ListenEntry>,
    #[serde(with = "handshake_table")]
    handshake: HandshakeConfig,
}

fn keys(text: &str) -> Result<Keys, ConfigError> {
    from_toml_str(text)
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let c = CoreConfig::default();
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(c.listen.len(), 2);
    assert_eq!(c.listen[0].addr.port(), 6653);
    assert_eq!(c.listen[1].addr.port(), 6633);
    assert!(c.workers >= 1);
    assert_eq!(c.max_connections, 20_000);
    assert_eq!(c.handshake.timeout, Duration::from_secs(5));
    assert_eq!(c.handshake.max_pending, 1000);
    assert_eq!(c.handshake.max_pending_per_ip, 64);
    assert_eq!(c.keepalive.interval, Duration::from_secs(5));
    assert_eq!(c.keepalive.max_unanswered, 3);
    assert_eq!(c.output_buffer_limit, 16 << 20);
    assert_eq!(c.backpressure.high_water, 1 << 20);
    assert_eq!(c.backpressure.low_water, 256 << 10);
    assert_eq!(c.backpressure.stall_timeout, Duration::from_secs(30));
    assert_eq!(c.max_message_len, 65535);
    assert_eq!(c.counters_interval, Duration::from_secs(10));
    assert_eq!(c.handshake.versions, vec![Version::V1_0, Version::V1_3]);
    assert_eq!(c.handshake.miss_send_len, 128);
    assert!(c.handshake.barrier);
}

#[test]
fn zero_counts_are_refused() {
    let cases: [(&str, Change); 5] = [
        ("workers", |c| c.workers = 0),
        ("max_connections", |c| c.max_connections = 0),
        ("handshake.max_pending", |c| c.handshake.max_pending = 0),
        ("handshake.max_pending_per_ip", |c| {
            c.handshake.max_pending_per_ip = 0
        }),
        ("keepalive.max_unanswered", |c| {
            c.keepalive.max_unanswered = 0
        }),
    ];
    for (key, change) in cases {
        let e = refused(change);
        assert_eq!(e.key, key);
        assert_eq!(e.reason, "must be at least 1");
    }
}

#[test]
fn zero_durations_are_refused() {
    let cases: [(&str, Change); 4] = [
        ("keepalive.interval", |c| {
            c.keepalive.interval = Duration::ZERO
        }),
        ("handshake.timeout", |c| {
            c.handshake.timeout = Duration::ZERO
        }),
        ("counters_interval", |c| {
            c.counters_interval = Duration::ZERO
        }),
        ("backpressure.stall_timeout", |c| {
            c.backpressure.stall_timeout = Duration::ZERO
        }),
    ];
    for (key, change) in cases {
        let e = refused(change);
        assert_eq!(e.key, key);
        assert!(e.reason.contains("longer than zero"), "{e}");
    }
}

#[test]
fn workers_are_bounded_by_the_cores() {
    let most = max_workers();
    assert!(most >= 4);
    let ok = CoreConfig {
        workers: most,
        ..CoreConfig::default()
    };
    assert_eq!(ok.validate(), Ok(()));
    let e = refused(|c| c.workers = most + 1);
    assert_eq!(e.key, "workers");
    assert!(e.reason.contains(&format!("more than {most}")), "{e}");
    assert!(e.reason.contains("per core"), "{e}");
}

#[test]
fn listen_needs_an_address_each_once() {
    let e = refused(|c| c.listen.clear());
    assert_eq!(e.key, "listen");
    assert!(e.reason.contains("at least one"), "{e}");
    let e = refused(|c| c.listen = vec!["127.0.0.1:1".parse().unwrap(); 2]);
    assert_eq!(e.key, "listen[1]");
    assert!(e.reason.contains("twice"), "{e}");
}

#[test]
fn message_and_buffer_limits_are_checked() {
    let e = refused(|c| c.max_message_len = 70_000);
    assert_eq!(e.key, "max_message_len");
    let e = refused(|c| c.max_message_len = 8);
    assert_eq!(e.key, "max_message_len");
    let e = refused(|c| c.output_buffer_limit = 1000);
    assert_eq!(e.key, "output_buffer_limit");
    assert!(e.reason.contains("max_message_len"), "{e}");
}

#[test]
fn backpressure_marks_are_ordered() {
    // low < high <= output_buffer_limit, each error naming its key and the other one.
    let e = refused(|c| c.backpressure.low_water = 2_000_000);
    assert_eq!(e.key, "backpressure.low_water");
    assert!(
        e.reason.contains("backpressure.high_water (1048576)"),
        "{e}"
    );
    let e = refused(|c| {
        c.backpressure.high_water = 1000;
        c.backpressure.low_water = 1000;
    });
    assert_eq!(e.key, "backpressure.low_water");
    let e = refused(|c| c.output_buffer_limit = 100_000);
    assert_eq!(e.key, "backpressure.high_water");
    assert!(e.reason.contains("output_buffer_limit (100000)"), "{e}");
    let e = refused(|c| {
        c.backpressure.high_water = 0;
        c.backpressure.low_water = 0;
    });
    assert_eq!(e.key, "backpressure.high_water");
    let mut ok = CoreConfig {
        output_buffer_limit: 100_000,
        ..CoreConfig::default()
    };
    ok.backpressure.high_water = 100_000;
    ok.backpressure.low_water = 0;
    assert_eq!(ok.validate(), Ok(()));
}

#[test]
fn a_version_must_be_offered() {
    let e = refused(|c| c.handshake.versions.clear());
    assert_eq!(e.key, "handshake.versions");
}

#[test]
fn the_handshake_table_takes_versions_as_strings_or_bare_numbers() {
    let k = keys("[handshake]\nversions = [1.3, 1.0, 1.3]").unwrap();
    assert_eq!(k.handshake.versions, vec![Version::V1_0, Version::V1_3]);
    // The other keys keep their defaults.
    assert_eq!(
        k.handshake,
        HandshakeConfig {
            versions: vec![Version::V1_0, Version::V1_3],
            ..HandshakeConfig::default()
        }
    );
    let k =
        keys("[handshake]\ntimeout = \"250ms\"\nversions = [\"1.3\"]\nbarrier = false").unwrap();
    assert_eq!(k.handshake.timeout, Duration::from_millis(250));
    assert_eq!(k.handshake.versions, vec![Version::V1_3]);
    assert!(!k.handshake.barrier);
    let e = keys("[handshake]\nversions = [\"1.0\", \"1.4\"]").unwrap_err();
    assert_eq!(e.key, "handshake.versions");
    assert!(
        e.reason.contains("1.4") && e.reason.contains("\"1.3\""),
        "{e}"
    );
    let e = keys("[handshake]\nbarier = true").unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("handshake.barier", Some(2)));
    assert!(e.reason.contains("did you mean `barrier`?"), "{e}");
    let e = keys("[handshake]\ntimeout = 1.5").unwrap_err();
    assert_eq!(e.key, "handshake.timeout");
    let e = keys("[handshake]\nmiss_send_len = 70000").unwrap_err();
    assert_eq!(e.key, "handshake.miss_send_len");
}

#[test]
fn written_back_the_keys_read_the_same() {
    let text = toml::to_string(&k_default()).unwrap();
    assert_eq!(keys(&text).unwrap(), k_default(), "{text}");
}

/// The keys at their defaults, with one TLS entry.
fn k_default() -> Keys {
    Keys {
        listen: vec![
            "127.0.0.1:6653".parse().unwrap(),
            ListenEntry {
                addr: "127.0.0.1:6654".parse().unwrap(),
                tls: Some(TlsSettings {
                    cert: "c.pem".into(),
                    key: "k.pem".into(),
                    client_ca: None,
                    client_auth: ClientAuth::None,
                }),
            },
        ],
        handshake: HandshakeConfig::default(),
    }
}

#[test]
fn a_listen_entry_is_an_address_or_a_table_with_tls() {
    let k = keys(
        r#"listen = ["127.0.0.1:6653", { addr = "127.0.0.1:6654", tls = { cert = "c.pem", key = "k.pem", client_ca = "ca.pem" } }]"#,
    )
    .unwrap();
    assert_eq!(
        k.listen[0],
        ListenEntry::plain("127.0.0.1:6653".parse().unwrap())
    );
    assert_eq!(k.listen[0].to_string(), "127.0.0.1:6653");
    let tls = k.listen[1].tls.as_ref().expect("TLS");
    assert_eq!(k.listen[1].addr.port(), 6654);
    assert_eq!(k.listen[1].to_string(), "127.0.0.1:6654 (TLS)");
    assert_eq!(tls.cert, PathBuf::from("c.pem"));
    assert_eq!(tls.client_ca, Some(PathBuf::from("ca.pem")));
    assert_eq!(
        tls.client_auth,
        ClientAuth::Required,
        "mutual authentication by default"
    );
    let k = keys(
        "[[listen]]\naddr = \"[::1]:6655\"\ntls = { cert = \"c.pem\", key = \"k.pem\", client_auth = \"none\" }\n",
    )
    .unwrap();
    assert_eq!(
        k.listen[0].tls.as_ref().unwrap().client_auth,
        ClientAuth::None
    );
}

#[test]
fn a_bad_listen_entry_is_refused_naming_the_key() {
    let e = keys("listen = [\"localhost\"]").unwrap_err();
    assert!(e.key.starts_with("listen"), "{e}");
    assert!(e.reason.contains("not an address"), "{e}");
    let e =
        keys(r#"listen = [{ addr = "127.0.0.1:1", tls = { cert = "c", key = "k", ca = "x" } }]"#)
            .unwrap_err();
    assert!(e.key.starts_with("listen"), "{e}");
    assert!(e.reason.contains("ca"), "{e}");
    let e = keys(r#"listen = [{ tls = { cert = "c", key = "k" } }]"#).unwrap_err();
    assert!(e.reason.contains("addr"), "{e}");
    let e = keys(
        r#"listen = [{ addr = "127.0.0.1:1", tls = { cert = "c", key = "k", client_auth = "optional" } }]"#,
    )
    .unwrap_err();
    assert!(
        e.reason.contains("required") || e.reason.contains("none"),
        "{e}"
    );
}

#[test]
fn check_tls_reads_the_files_naming_the_key() {
    let c = CoreConfig {
        listen: vec![
            "127.0.0.1:1".parse().unwrap(),
            ListenEntry {
                addr: "127.0.0.1:2".parse().unwrap(),
                tls: Some(TlsSettings {
                    cert: "/nonexistent/c.pem".into(),
                    key: "k".into(),
                    client_ca: Some("ca".into()),
                    client_auth: ClientAuth::Required,
                }),
            },
        ],
        ..CoreConfig::default()
    };
    let e = c.check_tls().unwrap_err();
    assert_eq!(e.key, "listen[1].tls.cert");
    assert!(e.reason.contains("/nonexistent/c.pem"), "{e}");
    assert_eq!(CoreConfig::default().check_tls(), Ok(()));
}

#[test]
fn net_config_carries_every_network_setting() {
    let mut c = CoreConfig {
        listen: vec![
            "127.0.0.1:1".parse().unwrap(),
            k_default().listen[1].clone(),
        ],
        workers: 3,
        max_connections: 9,
        output_buffer_limit: 70_000,
        max_message_len: 1000,
        counters_interval: Duration::from_secs(2),
        ..CoreConfig::default()
    };
    c.handshake.max_pending = 4;
    c.keepalive.max_unanswered = 7;
    c.backpressure.high_water = 65536;
    c.backpressure.low_water = 100;
    c.backpressure.stall_timeout = Duration::from_secs(60);
    let n = c.net();
    assert_eq!(
        n.listen,
        c.listen.iter().map(|l| l.addr).collect::<Vec<_>>()
    );
    assert_eq!(n.tls.len(), 2);
    assert!(n.tls[0].is_none() && n.tls[1].is_some());
    assert_eq!((n.workers, n.max_connections), (3, 9));
    assert_eq!((n.output_buffer_limit, n.max_message_len), (70000, 1000));
    assert_eq!(n.counters_interval, Duration::from_secs(2));
    assert_eq!(n.handshake, c.handshake);
    assert_eq!(n.keepalive, c.keepalive);
    assert_eq!(n.backpressure, c.backpressure);
    assert_eq!(n.backpressure.stall_timeout, Duration::from_secs(60));
    let d = CoreConfig::default().net();
    let nd = NetConfig::default();
    assert_eq!(
        (d.listen, d.workers, d.max_connections),
        (nd.listen, nd.workers, nd.max_connections)
    );
    assert_eq!(
        (
            d.output_buffer_limit,
            d.max_message_len,
            d.counters_interval
        ),
        (
            nd.output_buffer_limit,
            nd.max_message_len,
            nd.counters_interval
        )
    );
}
