//! The REST API over HTTPS (`[api] tls = { cert, key }`), against `pharos run`: a
//! client trusting the CA gets answers over TLS 1.3 and 1.2; plain HTTP on the port
//! gets no HTTP answer, and a client of another CA completes no handshake, each logged
//! with its reason; a missing certificate or a key that does not match refuses the
//! start, naming the key and the file.

mod common;
use common::proc;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lab::pki::{Ca, Pki, Validity};
use proc::{free_port, Pharos};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};

const TOKEN: &str = "s3cret-token-for-the-https-test";

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("pharos-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `pharos run` with the API on `api` over HTTPS with `cert` and `key`.
fn start(dir: &Path, api: SocketAddr, cert: &Path, key: &Path) -> Pharos {
    let config = dir.join("pharos.toml");
    std::fs::write(
        &config,
        format!(
            "[api]\nlisten = \"{api}\"\ntls = {{ cert = {:?}, key = {:?} }}\n",
            cert.to_str().unwrap(),
            key.to_str().unwrap()
        ),
    )
    .unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    Pharos::run(
        &[
            "--config",
            config.to_str().unwrap(),
            "--listen",
            &listen,
            "--workers",
            "1",
        ],
        &[
            ("PHAROS_API_TOKEN", TOKEN),
            ("XDG_RUNTIME_DIR", dir.to_str().unwrap()),
        ],
    )
}

/// A TLS client trusting `ca` only, speaking `versions`.
fn client(
    ca: &Path,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

/// GET `path` over HTTPS (server name `localhost`); the response, or the error.
fn https_get(
    addr: SocketAddr,
    config: rustls::ClientConfig,
    path: &str,
) -> Result<(String, rustls::ProtocolVersion), String> {
    let conn =
        rustls::ClientConnection::new(Arc::new(config), ServerName::try_from("localhost").unwrap())
            .map_err(|e| e.to_string())?;
    let tcp = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    write!(
        tls,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\
         Connection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let r = tls.read_to_end(&mut out);
    if out.is_empty() {
        return Err(format!("no answer: {r:?}"));
    }
    let version = tls.conn.protocol_version().expect("handshake done");
    Ok((String::from_utf8_lossy(&out).into_owned(), version))
}

#[test]
fn the_api_serves_https_with_its_certificate_and_refuses_plain_http_and_strangers() {
    let dir = Dir::new("api-tls");
    let pki = Pki::create(&dir.0.join("pki"), &[]).unwrap();
    let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let mut p = start(&dir.0, api, &pki.controller_cert, &pki.controller_key);
    assert!(
        p.log_has(
            &format!("REST API on https://{api}/api/v1"),
            Duration::from_secs(20)
        ),
        "the API should say it serves HTTPS:\n{}",
        p.stderr()
    );

    for (versions, want) in [
        (
            &[&rustls::version::TLS13][..],
            rustls::ProtocolVersion::TLSv1_3,
        ),
        (
            &[&rustls::version::TLS12][..],
            rustls::ProtocolVersion::TLSv1_2,
        ),
    ] {
        let (resp, got) = https_get(api, client(&pki.ca_cert, versions), "/api/v1/healthz")
            .unwrap_or_else(|e| panic!("HTTPS GET healthz: {e}\n{}", p.stderr()));
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        assert_eq!(got, want);
    }
    // An authenticated read through TLS: the token travels encrypted.
    let (resp, _) = https_get(
        api,
        client(&pki.ca_cert, &[&rustls::version::TLS13]),
        "/api/v1/switches",
    )
    .unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("application/json"), "{resp}");

    // Plain HTTP on the HTTPS port: no HTTP answer, and the log says why.
    let mut plain = TcpStream::connect(api).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    plain
        .write_all(b"GET /api/v1/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let _ = plain.read_to_end(&mut got);
    assert!(
        !String::from_utf8_lossy(&got).contains("HTTP/1.1 200"),
        "plain HTTP was answered: {}",
        String::from_utf8_lossy(&got)
    );
    assert!(
        p.log_has("plain HTTP on the HTTPS port", Duration::from_secs(5)),
        "the refused plain-text client should be logged:\n{}",
        p.stderr()
    );

    // A client that trusts another CA only: no handshake, on both sides.
    let other = Dir::new("api-tls-other");
    let stranger = Pki::create(&other.0, &[]).unwrap();
    let e = https_get(
        api,
        client(&stranger.ca_cert, &[&rustls::version::TLS13]),
        "/api/v1/healthz",
    )
    .expect_err("a client of another CA must not get an answer");
    assert!(e.contains("UnknownIssuer"), "{e}");
    assert!(
        p.log_has("the client refused the handshake", Duration::from_secs(5)),
        "the refused handshake should be logged:\n{}",
        p.stderr()
    );

    // The API still answers after all that.
    let (resp, _) = https_get(
        api,
        client(&pki.ca_cert, &[&rustls::version::TLS13]),
        "/api/v1/healthz",
    )
    .unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
}

#[test]
fn a_missing_certificate_or_a_key_of_another_certificate_refuses_the_start() {
    let dir = Dir::new("api-tls-bad");
    let pki = Pki::create(&dir.0.join("pki"), &[]).unwrap();
    let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();

    let missing = dir.0.join("nope.pem");
    let mut p = start(&dir.0, api, &missing, &pki.controller_key);
    let status = p.wait(Duration::from_secs(20)).expect("pharos should exit");
    let err = p.stderr();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("api.tls.cert") && err.contains(missing.to_str().unwrap()),
        "{err}"
    );

    // The switches' key with the controller's certificate.
    let mut p = start(&dir.0, api, &pki.controller_cert, &pki.switch_key);
    let status = p.wait(Duration::from_secs(20)).expect("pharos should exit");
    let err = p.stderr();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("api.tls.key") && err.contains("does not go with"),
        "{err}"
    );

    // A key file holding a certificate only.
    let cert_only = dir.0.join("cert-only.pem");
    Ca::new("x")
        .unwrap()
        .issue("y", &[], Validity::Current)
        .unwrap()
        .write(&cert_only, &dir.0.join("y-key.pem"))
        .unwrap();
    let mut p = start(&dir.0, api, &pki.controller_cert, &cert_only);
    let status = p.wait(Duration::from_secs(20)).expect("pharos should exit");
    let err = p.stderr();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("api.tls.key") && err.contains("no PEM block"),
        "{err}"
    );
}
