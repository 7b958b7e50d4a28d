//! OpenFlow over TLS against the real `pharos run`: 1.0 and 1.3 switches served on a
//! TLS port beside a plain one, and the peers it must refuse (a certificate from
//! another CA, an expired one, none, plain text on the TLS port), each refused with its
//! reason logged and counted; bad TLS files stop start-up naming the key and the file.
//!
//! The certificates are made with rcgen (a private CA, the controller's, the
//! switches'; see `testkit::tlskit`). A switch is the test kit's emulated one
//! (`testkit::emu`) behind a TLS relay: the emulator speaks clear OpenFlow to the
//! relay on loopback, the relay speaks TLS (rustls, as a switch's client) to the
//! controller.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use emu::{host, is_packet_out, Emu, Spec};
use testkit::emu;
use testkit::tlskit;
use tlskit::{relay, tls_handshake, Pki};

const T: Duration = Duration::from_secs(20);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

// ---------------------------------------------------------------------------------
// The controller.

struct Pharos {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Pharos {
    /// `pharos run` with `args`, its state and config directories in `dir`.
    fn spawn(dir: &Path, args: &[&str]) -> Pharos {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .env_remove("RUST_LOG")
            .env("XDG_STATE_HOME", dir)
            .env("XDG_CONFIG_HOME", dir)
            .env("XDG_RUNTIME_DIR", dir)
            .env_remove("PHAROS_API_TOKEN")
            .arg("run")
            .args(args)
            .args(["--api", "off"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pharos starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        Pharos { child, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn wait_for_log(&self, text: &str) {
        let deadline = Instant::now() + T;
        while !self.stderr().contains(text) {
            assert!(
                Instant::now() < deadline,
                "no {text:?} in stderr:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until `addr` accepts connections.
    fn wait_listening(&mut self, addr: SocketAddr) {
        let deadline = Instant::now() + T;
        while TcpStream::connect(addr).is_err() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("pharos exited with {status}; stderr:\n{}", self.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "not listening: {}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs to its exit: (status code, stderr).
    fn refused(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .env_remove("RUST_LOG")
            .env("XDG_STATE_HOME", dir)
            .env("XDG_CONFIG_HOME", dir)
            .env("XDG_RUNTIME_DIR", dir)
            .arg("run")
            .args(args)
            .args(["--api", "off"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Drop for Pharos {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------

/// A switch behind a relay that completes the OpenFlow handshake and gets its
/// PACKET_IN answered (the learning switch floods an unknown destination).
fn served(relay_addr: SocketAddr, spec: Spec) -> Emu {
    let dpid = spec.dpid;
    let mut sw = Emu::connect_and_handshake(relay_addr, spec, T)
        .unwrap_or_else(|e| panic!("switch {dpid:#x}: {e}"));
    let frame = emu::frame(host(1), host(2));
    sw.send_packet_in(1, &frame, None).unwrap();
    sw.wait_for(T, |m| {
        is_packet_out(m) && emu::packet_out_parts(m).is_some_and(|(_, d)| d == frame)
    })
    .unwrap_or_else(|e| panic!("switch {dpid:#x}: {e}"));
    sw.ping(T).unwrap();
    sw
}

#[test]
fn switches_on_1_0_and_1_3_are_served_over_tls_beside_a_plain_port() {
    let pki = Pki::new("served");
    let (plain, secure, open) = (free_port(), free_port(), free_port());
    let config = pki.write(
        "pharos.toml",
        &format!(
            "listen = [\"127.0.0.1:{plain}\", {{ addr = \"127.0.0.1:{secure}\", tls = {} }}, {{ addr = \"127.0.0.1:{open}\", tls = {} }}]\nworkers = 1\n[[apps]]\nname = \"learning_switch\"\n",
            pki.tls_table(""),
            pki.tls_table(", client_auth = \"none\""),
        ),
    );
    let mut p = Pharos::spawn(&pki.dir, &["--config", config.to_str().unwrap()]);
    let secure: SocketAddr = format!("127.0.0.1:{secure}").parse().unwrap();
    let open: SocketAddr = format!("127.0.0.1:{open}").parse().unwrap();
    p.wait_listening(secure);
    let switch = pki.ca.issue("switch", false, false);

    // 1.3 over TLS 1.3, 1.0 over TLS 1.2.
    let (a, _) = relay(
        secure,
        pki.client(Some(&switch), Some(&rustls::version::TLS13)),
    );
    let mut v13 = served(a, Spec::v13(0x13));
    let (a, _) = relay(
        secure,
        pki.client(Some(&switch), Some(&rustls::version::TLS12)),
    );
    let mut v10 = served(a, Spec::v10(0x10));
    // The plain port beside them.
    let mut clear = served(
        format!("127.0.0.1:{plain}").parse().unwrap(),
        Spec::v13(0xc1),
    );
    // With client_auth = "none", a switch without a certificate is served.
    let (a, _) = relay(open, pki.client(None, None));
    let mut anonymous = served(a, Spec::v13(0xa0));

    // A burst bigger than a TLS record each way: framing across records.
    let frame = emu::long_frame(host(3), host(4), 1400);
    for _ in 0..40 {
        v13.send_packet_in(2, &frame, None).unwrap();
    }
    let mut outs = 0;
    while outs < 40 {
        v13.wait_for(T, |m| {
            is_packet_out(m) && emu::packet_out_parts(m).is_some_and(|(_, d)| d == frame)
        })
        .unwrap();
        outs += 1;
    }
    for sw in [&mut v13, &mut v10, &mut clear, &mut anonymous] {
        sw.ping(T).unwrap();
    }
    p.wait_for_log("00:00:00:00:00:00:00:13");
    let log = p.stderr();
    assert_eq!(log.matches("switch connected").count(), 4, "{log}");
    // (The probe that waited for the port is the only failure: closed, not TLS.)
    assert!(!log.contains("reason=\"tls_"), "{log}");
}

#[test]
fn refused_tls_peers_are_logged_and_counted_with_their_reason() {
    let pki = Pki::new("refused");
    let secure = free_port();
    let config = pki.write(
        "pharos.toml",
        &format!(
            "listen = [{{ addr = \"127.0.0.1:{secure}\", tls = {} }}]\nworkers = 1\ncounters_interval = \"300ms\"\n[[apps]]\nname = \"learning_switch\"\n",
            pki.tls_table(""),
        ),
    );
    let mut p = Pharos::spawn(&pki.dir, &["--config", config.to_str().unwrap()]);
    let secure: SocketAddr = format!("127.0.0.1:{secure}").parse().unwrap();
    p.wait_listening(secure);

    // Each refused peer: the client's view, then the reason the controller gives.
    let stranger = pki.other.issue("switch", false, false);
    let e = tls_handshake(secure, pki.client(Some(&stranger), None)).unwrap_err();
    p.wait_for_log("tls_unknown_ca");
    assert!(!e.is_empty());

    let expired = pki.ca.issue("switch", false, true);
    tls_handshake(secure, pki.client(Some(&expired), None)).unwrap_err();
    p.wait_for_log("tls_expired_cert");

    tls_handshake(secure, pki.client(None, None)).unwrap_err();
    p.wait_for_log("tls_no_cert");

    // An OpenFlow switch speaking clear text: no OpenFlow HELLO comes back (a TLS
    // alert, then the close).
    let mut plain = TcpStream::connect(secure).unwrap();
    plain.set_read_timeout(Some(T)).unwrap();
    plain.write_all(&[4, 0, 0, 8, 0, 0, 0, 1]).unwrap();
    let mut got = Vec::new();
    let _ = plain.read_to_end(&mut got);
    assert!(
        got.first() != Some(&4),
        "an OpenFlow answer on the TLS port: {got:02x?}"
    );
    p.wait_for_log("tls_plain_text");
    p.wait_for_log("plain text on a TLS port");

    // Counted by reason in the counters line.
    let deadline = Instant::now() + T;
    let counted = |log: &str| {
        log.lines().any(|l| {
            l.contains("counters")
                && [
                    "\"tls_unknown_ca\": 1",
                    "\"tls_expired_cert\": 1",
                    "\"tls_no_cert\": 1",
                    "\"tls_plain_text\": 1",
                ]
                .iter()
                .all(|c| l.contains(c))
        })
    };
    while !counted(&p.stderr()) {
        assert!(Instant::now() < deadline, "not counted:\n{}", p.stderr());
        thread::sleep(Duration::from_millis(50));
    }

    // And a good switch is still served.
    let switch = pki.ca.issue("switch", false, false);
    let hello = tls_handshake(secure, pki.client(Some(&switch), None)).unwrap();
    assert_eq!(hello[1], 0, "the controller's HELLO: {hello:02x?}");
    let (a, _) = relay(secure, pki.client(Some(&switch), None));
    served(a, Spec::v13(0x13));
    let log = p.stderr();
    assert_eq!(log.matches("switch connected").count(), 1, "{log}");
}

#[test]
fn bad_tls_files_stop_start_up_naming_the_key_and_the_file() {
    let pki = Pki::new("files");
    let port = free_port();
    let run = |tls: &str| {
        let config = pki.write(
            "pharos.toml",
            &format!(
                "listen = [\"127.0.0.1:{}\", {{ addr = \"127.0.0.1:{port}\", tls = {tls} }}]\n",
                free_port()
            ),
        );
        Pharos::refused(&pki.dir, &["--config", config.to_str().unwrap()])
    };
    let missing = pki.path("nowhere.pem");
    let (code, err) = run(&format!(
        "{{ cert = {missing:?}, key = {:?}, client_ca = {:?} }}",
        pki.path("ctl-key.pem"),
        pki.path("ca.pem")
    ));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("listen[1].tls.cert") && err.contains(&missing),
        "{err}"
    );
    assert!(
        err.contains("pharos.toml:1:"),
        "the line in the file: {err}"
    );

    // A key file holding a certificate.
    let (code, err) = run(&format!(
        "{{ cert = {:?}, key = {:?}, client_ca = {:?} }}",
        pki.path("ctl-cert.pem"),
        pki.path("ctl-cert.pem"),
        pki.path("ca.pem")
    ));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("listen[1].tls.key") && err.contains("private key"),
        "{err}"
    );

    // Mutual authentication without a CA.
    let (code, err) = run(&format!(
        "{{ cert = {:?}, key = {:?} }}",
        pki.path("ctl-cert.pem"),
        pki.path("ctl-key.pem"),
    ));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("listen[1].tls.client_ca") && err.contains("client_auth"),
        "{err}"
    );

    // An unknown key in the table.
    let (code, err) = run(&format!(
        "{{ cert = {:?}, key = {:?}, ca = {:?} }}",
        pki.path("ctl-cert.pem"),
        pki.path("ctl-key.pem"),
        pki.path("ca.pem")
    ));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("ca"), "{err}");

    // The flags: a CA file that is not PEM.
    let junk = pki.write("junk.pem", "not a certificate\n");
    let listen = format!("127.0.0.1:{port}");
    let (code, err) = Pharos::refused(
        &pki.dir,
        &[
            "--listen",
            &listen,
            "--tls-cert",
            &pki.path("ctl-cert.pem"),
            "--tls-key",
            &pki.path("ctl-key.pem"),
            "--tls-client-ca",
            junk.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--tls-client-ca") && err.contains("junk.pem"),
        "{err}"
    );
}

#[test]
fn the_tls_flags_put_every_listen_address_on_tls() {
    let pki = Pki::new("flags");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut p = Pharos::spawn(
        &pki.dir,
        &[
            "--listen",
            &listen,
            "--apps",
            "learning_switch",
            "--tls-cert",
            &pki.path("ctl-cert.pem"),
            "--tls-key",
            &pki.path("ctl-key.pem"),
            "--tls-client-ca",
            &pki.path("ca.pem"),
        ],
    );
    let addr: SocketAddr = listen.parse().unwrap();
    p.wait_listening(addr);
    let switch = pki.ca.issue("switch", false, false);
    let (a, _) = relay(addr, pki.client(Some(&switch), None));
    served(a, Spec::v10(0x10));
    tls_handshake(addr, pki.client(None, None)).unwrap_err();
    p.wait_for_log("tls_no_cert");
}

/// `pharos bench controller` over TLS against `pharos run` on a TLS port: every switch
/// connects and the loops get answers, in both modes; with a certificate from another
/// CA none gets in.
#[test]
fn bench_controller_speaks_tls() {
    let pki = Pki::new("bench");
    let switch = pki.ca.issue("switch", false, false);
    pki.write("sw-cert.pem", &switch.cert.pem());
    pki.write("sw-key.pem", &switch.key.serialize_pem());
    let stranger = pki.other.issue("switch", false, false);
    pki.write("bad-cert.pem", &stranger.cert.pem());
    pki.write("bad-key.pem", &stranger.key.serialize_pem());
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut p = Pharos::spawn(
        &pki.dir,
        &[
            "--listen",
            &listen,
            "--workers",
            "1",
            "--apps",
            "learning_switch",
            "--tls-cert",
            &pki.path("ctl-cert.pem"),
            "--tls-key",
            &pki.path("ctl-key.pem"),
            "--tls-client-ca",
            &pki.path("ca.pem"),
        ],
    );
    p.wait_listening(listen.parse().unwrap());
    let bench = |cert: &str, key: &str, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args([
                "bench",
                "controller",
                "--addr",
                &listen,
                "-s",
                "4",
                "-M",
                "100",
            ])
            .args(["-l", "2", "-m", "200", "--threads", "1", "--json"])
            .args(["--connect-timeout", "5"])
            .args(["--tls-cert", &pki.path(cert), "--tls-key", &pki.path(key)])
            .args(["--tls-ca", &pki.path("ca.pem")])
            .args(extra)
            .output()
            .unwrap()
    };
    for extra in [
        &["--of", "1.0"][..],
        &["--of", "1.3", "--mode", "latency"][..],
    ] {
        let out = bench("sw-cert.pem", "sw-key.pem", extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}\n{}", p.stderr());
        assert!(stderr.contains("over TLS"), "{stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["connected"], 4, "{json}");
        // Answers came (not a rate: a loaded machine can stall a short loop).
        assert!(json["responses_total"].as_u64().unwrap() > 100, "{json}");
        assert_eq!(json["learning"]["switches_done"], 4, "{json}");
    }
    let out = bench("bad-cert.pem", "bad-key.pem", &["--no-retry"]);
    assert!(!out.status.success());
    p.wait_for_log("tls_unknown_ca");
}
