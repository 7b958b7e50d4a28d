//! The OpenFlow channel over TLS end to end, on real Open vSwitch: `pharos lab up --tls`
//! makes a private CA and certificates and points the switches at `ssl:`; `pharos run`
//! (a child process) listens with the lab's `pki/controller.toml`.
//!
//! ```text
//! linear,3 over ssl:, OpenFlow 1.0 and 1.3   every switch connected, pingall 100%
//!   (Open vSwitch, and Pharos switches)
//! single,2 switches presenting              refused, the controller logging why:
//!   a certificate from another CA             tls_unknown_ca (UnknownIssuer)
//!   an expired certificate of the right CA    tls_expired_cert
//!   nothing (tcp:, plain text)                tls_plain_text
//!   a good certificate (the control)          connected
//! ```
//!
//! Same rules as the other lab tests (tests/lab.rs): serial, unique lab names, root and
//! Open vSwitch needed unless `PHAROS_SKIP_LAB=1`, nothing left behind.

mod common;
use common::lab as harness;
use common::proc;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::{enabled, serial, wait_until, Lab, Of};
use lab::pki::{self, Ca, Pki, Validity};
use proc::{free_port, Pharos};

/// How long switches get to connect once the controller runs (Open vSwitch retries
/// with a backoff of up to 8 s after failed attempts).
const CONNECT: Duration = Duration::from_secs(20);

/// `pharos run --config CONFIG`, its state and runtime files in `dir`.
fn controller(config: &Path, dir: &Path) -> Pharos {
    Pharos::run(
        &[
            "--config",
            config.to_str().unwrap(),
            "--api",
            "off",
            "--workers",
            "1",
        ],
        &[
            ("XDG_RUNTIME_DIR", dir.to_str().unwrap()),
            ("XDG_STATE_HOME", dir.to_str().unwrap()),
            ("XDG_CONFIG_HOME", dir.to_str().unwrap()),
        ],
    )
}

fn connected(lab: &Lab) -> u64 {
    lab.show()["connected"].as_u64().unwrap_or(0)
}

fn pingall_over_ssl(name: &str, of: Of, pharos_switch: bool) {
    let _serial = serial();
    if !enabled(name) {
        return;
    }
    let mut lab = Lab::new(name, of, false);
    if pharos_switch {
        lab = lab.pharos_switch();
    }
    let port = free_port();
    let target = format!("tcp:127.0.0.1:{port}");
    let out = lab.lab(
        "up",
        &[
            "--topo",
            "linear,3",
            "--of",
            of.flag(),
            "--controller",
            &target,
            "--tls",
            "--switch",
            if pharos_switch { "pharos" } else { "ovs" },
        ],
    );
    out.expect_ok();
    assert!(
        out.stdout
            .contains(&format!("controller ssl:127.0.0.1:{port}")),
        "{out}"
    );
    let show = lab.show();
    assert_eq!(
        show["controller"].as_str(),
        Some(format!("ssl:127.0.0.1:{port}").as_str())
    );
    // Pharos switches run as processes with pid files in the lab's directory.
    assert_eq!(
        lab.lab_dir().join(name).join("s1.pid").exists(),
        pharos_switch,
        "{show}"
    );
    let pki_dir = PathBuf::from(show["tls"]["pki_dir"].as_str().expect("a pki_dir"));
    let config = pki_dir.join(lab::CONTROLLER_TOML);
    let mut ctl = controller(&config, lab.lab_dir());
    assert!(
        ctl.log_has(&format!("tls=[127.0.0.1:{port}]"), Duration::from_secs(20)),
        "the controller should listen with TLS:\n{}",
        ctl.stderr()
    );
    let all = wait_until(CONNECT, || connected(&lab) == 3);
    assert!(
        all && ctl.log_has("switch connected", Duration::from_secs(1)),
        "3 switches should connect over TLS; connected {}; controller:\n{}",
        connected(&lab),
        ctl.stderr()
    );
    let mut last = None;
    let ok = wait_until(Duration::from_secs(15), || {
        let out = lab.pingall();
        let ok = out.ok();
        last = Some(out);
        ok
    });
    let last = last.expect("pingall ran");
    assert!(ok, "pingall over ssl: should reach 100%:\n{last}");
    assert!(last.stdout.contains("0% dropped"), "{last}");
    let stderr = ctl.stderr();
    assert_eq!(
        stderr.matches("switch connected").count(),
        3,
        "each switch connected once:\n{stderr}"
    );
    assert!(!stderr.contains("handshake failed"), "{stderr}");
}

#[test]
fn pingall_over_ssl_with_openflow_1_0() {
    pingall_over_ssl("tl10", Of::V10, false);
}

#[test]
fn pingall_over_ssl_with_openflow_1_3() {
    pingall_over_ssl("tl13", Of::V13, false);
}

/// The same with Pharos switches (`--switch pharos`), which verify the controller's
/// certificate against the lab's CA as Open vSwitch does.
#[test]
fn pingall_over_ssl_with_openflow_1_0_pharos_switch() {
    pingall_over_ssl("tp10", Of::V10, true);
}

#[test]
fn pingall_over_ssl_with_openflow_1_3_pharos_switch() {
    pingall_over_ssl("tp13", Of::V13, true);
}

/// A PKI in `dir` made with `ca` (the controller's files, the CA) plus the switches'
/// certificate `switch` under the names [`Pki::in_dir`] gives.
fn write_pki(dir: &Path, ca: &Ca) -> Pki {
    std::fs::create_dir_all(dir).unwrap();
    let p = Pki::in_dir(dir);
    std::fs::write(&p.ca_cert, ca.cert_pem()).unwrap();
    ca.issue(
        "controller",
        pki::DEFAULT_CONTROLLER_NAMES,
        Validity::Current,
    )
    .unwrap()
    .write(&p.controller_cert, &p.controller_key)
    .unwrap();
    ca.issue("switch", &[], Validity::Current)
        .unwrap()
        .write(&p.switch_cert, &p.switch_key)
        .unwrap();
    p
}

/// `pharos run` listening with `pki`'s TLS files on a free port, its files in `dir`;
/// the `--controller` target for a lab (`tcp:`, turned into `ssl:` by its TLS flags).
fn tls_controller(dir: &Path, pki: &Pki) -> (Pharos, String) {
    let port = free_port();
    let config = dir.join("controller.toml");
    std::fs::write(
        &config,
        lab::pharos::RunConfig::tls_listener(format!("127.0.0.1:{port}").parse().unwrap(), pki)
            .to_toml()
            .unwrap(),
    )
    .unwrap();
    let mut ctl = controller(&config, dir);
    assert!(
        ctl.log_has(&format!("tls=[127.0.0.1:{port}]"), Duration::from_secs(20)),
        "{}",
        ctl.stderr()
    );
    (ctl, format!("tcp:127.0.0.1:{port}"))
}

/// `lab up --topo single,2` of `name` at `target`, with the switches' certificate and
/// key `cert` (none: plain tcp:).
fn up_single(name: &str, target: &str, tls: Option<(&Path, &Path, &Path)>) -> Lab {
    let lab = Lab::new(name, Of::V13, false);
    let mut args = vec![
        "--topo".to_string(),
        "single,2".into(),
        "--controller".into(),
        target.into(),
    ];
    if let Some((cert, key, ca)) = tls {
        for (flag, p) in [("--tls-cert", cert), ("--tls-key", key), ("--tls-ca", ca)] {
            args.push(flag.into());
            args.push(p.to_str().unwrap().into());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    lab.lab("up", &args).expect_ok();
    lab
}

#[test]
fn switches_with_a_foreign_or_expired_certificate_or_none_are_refused_with_the_reason() {
    let _serial = serial();
    if !enabled("switches_with_a_foreign_or_expired_certificate_or_none_are_refused") {
        return;
    }
    let work = harness::TempDir::new("tlsb");
    let ca = Ca::new("the controller's CA").unwrap();
    let good = write_pki(&work.0.join("pki"), &ca);
    // The bad ones: another CA's certificate, and an expired one of the right CA.
    let other = Ca::new("another CA").unwrap();
    let (foreign, foreign_key) = (work.0.join("foreign.pem"), work.0.join("foreign-key.pem"));
    other
        .issue("stranger", &[], Validity::Current)
        .unwrap()
        .write(&foreign, &foreign_key)
        .unwrap();
    let (expired, expired_key) = (work.0.join("expired.pem"), work.0.join("expired-key.pem"));
    ca.issue("old switch", &[], Validity::Expired)
        .unwrap()
        .write(&expired, &expired_key)
        .unwrap();

    let (mut ctl, target) = tls_controller(&work.0, &good);
    /// (lab name, the switches' certificate and key or plain tcp:, reason, detail)
    type Case<'a> = (&'a str, Option<(&'a Path, &'a Path)>, &'a str, &'a str);
    let cases: [Case; 3] = [
        (
            "tlsf",
            Some((&foreign, &foreign_key)),
            "tls_unknown_ca",
            "UnknownIssuer",
        ),
        (
            "tlse",
            Some((&expired, &expired_key)),
            "tls_expired_cert",
            "xpired",
        ),
        ("tlsp", None, "tls_plain_text", "tls_plain_text"),
    ];
    for (name, cert, reason, detail) in cases {
        let mut lab = up_single(
            name,
            &target,
            cert.map(|(c, k)| (c, k, good.ca_cert.as_path())),
        );
        assert!(
            ctl.log_has(&format!("reason=\"{reason}\""), CONNECT),
            "{name}: the controller should refuse the switch with {reason}:\n{}",
            ctl.stderr()
        );
        let stderr = ctl.stderr();
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("reason=\"{reason}\"")))
            .unwrap();
        assert!(
            line.contains("handshake failed") && line.contains(detail),
            "{name}: {line}"
        );
        assert!(
            !stderr.contains("switch connected"),
            "{name}: a switch got in:\n{stderr}"
        );
        assert!(!lab.pingall().ok(), "{name}: hosts reached each other");
        lab.down().expect_ok();
    }

    // The control: the same set-up with the PKI's own switch certificate gets in.
    let mut lab = up_single(
        "tlsg",
        &target,
        Some((&good.switch_cert, &good.switch_key, &good.ca_cert)),
    );
    assert!(
        ctl.log_has("switch connected", CONNECT),
        "a switch with a good certificate should connect:\n{}",
        ctl.stderr()
    );
    lab.down().expect_ok();
}

/// A Pharos switch checks the controller too: told to trust another CA than the one
/// that signed the controller's certificate, it refuses the controller (which logs
/// that its peer refused it) and says why in its own log; told the right CA, it gets
/// in. (The controller accepts the switch's certificate either way.)
#[test]
fn a_pharos_switch_refuses_a_controller_its_ca_did_not_sign() {
    let _serial = serial();
    if !enabled("a_pharos_switch_refuses_a_controller_its_ca_did_not_sign") {
        return;
    }
    let work = harness::TempDir::new("tlsw");
    let ca = Ca::new("the controller's CA").unwrap();
    let good = write_pki(&work.0.join("pki"), &ca);
    let other = write_pki(&work.0.join("other"), &Ca::new("another CA").unwrap());
    let (mut ctl, target) = tls_controller(&work.0, &good);
    let up = |name: &str, ca_cert: &Path| {
        let lab = Lab::new(name, Of::V13, false).pharos_switch();
        let args = [
            "--topo",
            "single,2",
            "--controller",
            &target,
            "--tls-cert",
            good.switch_cert.to_str().unwrap(),
            "--tls-key",
            good.switch_key.to_str().unwrap(),
            "--tls-ca",
            ca_cert.to_str().unwrap(),
            "--switch",
            "pharos",
        ];
        lab.lab("up", &args).expect_ok();
        lab
    };
    let mut lab = up("tlsq", &other.ca_cert);
    assert!(
        ctl.log_has("reason=\"tls_alert_from_peer\"", CONNECT),
        "the controller should see the switch refuse it:\n{}",
        ctl.stderr()
    );
    let log_file = lab.lab_dir().join("tlsq").join("s1.log");
    let log = || std::fs::read_to_string(&log_file).unwrap_or_default();
    assert!(
        wait_until(Duration::from_secs(5), || log().contains("UnknownIssuer")),
        "the switch should log why it refused the controller ({}):\n{}",
        log_file.display(),
        log()
    );
    assert!(
        !ctl.stderr().contains("switch connected"),
        "{}",
        ctl.stderr()
    );
    lab.down().expect_ok();

    let mut lab = up("tlsr", &good.ca_cert);
    assert!(
        ctl.log_has("switch connected", CONNECT),
        "with the right CA the switch should connect:\n{}",
        ctl.stderr()
    );
    lab.down().expect_ok();
}
