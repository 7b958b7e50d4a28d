//! TLS for the integration tests: a private PKI made with rcgen (a CA, another CA
//! nobody trusts, the controller's certificate, switch certificates, expired ones) and
//! a switch's TLS client: a relay between an emulated switch speaking clear OpenFlow on
//! loopback and the controller's TLS port (its session a [`tls_io::TlsIo`], the byte
//! stream the controller and `pharos switch` use), or a bare TLS handshake.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use tls_io::TlsIo;

const T: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------
// A private PKI.

/// A CA: its certificate and key, to sign with.
pub struct Ca {
    pub cert: rcgen::Certificate,
    pub key: KeyPair,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = p.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A leaf certificate for `name` (DNS SAN), for a server or a client; `expired`:
    /// valid in 2020 only.
    pub fn issue(&self, name: &str, server: bool, expired: bool) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(vec![name.to_string()]).unwrap();
        p.distinguished_name.push(DnType::CommonName, name);
        p.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        if expired {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2020, 12, 31);
        }
        let cert = p.signed_by(&key, &self.cert, &self.key).unwrap();
        Leaf { cert, key }
    }
}

pub struct Leaf {
    pub cert: rcgen::Certificate,
    pub key: KeyPair,
}

/// The files `pharos run` reads, in a directory of their own.
pub struct Pki {
    pub dir: PathBuf,
    pub ca: Ca,
    /// Another CA, trusted by nobody here.
    pub other: Ca,
}

impl Pki {
    pub fn new(test: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("pharos-tls-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let pki = Pki {
            dir,
            ca: Ca::new("pharos test CA"),
            other: Ca::new("some other CA"),
        };
        let ctl = pki.ca.issue("localhost", true, false);
        pki.write("ca.pem", &pki.ca.cert.pem());
        pki.write("ctl-cert.pem", &ctl.cert.pem());
        pki.write("ctl-key.pem", &ctl.key.serialize_pem());
        pki
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }

    /// A `tls` table for the config file.
    pub fn tls_table(&self, extra: &str) -> String {
        format!(
            "{{ cert = {:?}, key = {:?}, client_ca = {:?}{extra} }}",
            self.path("ctl-cert.pem"),
            self.path("ctl-key.pem"),
            self.path("ca.pem")
        )
    }

    /// A switch's client configuration: trusts our CA, presents `leaf` (none: no
    /// certificate), speaks only `version` when given.
    pub fn client(
        &self,
        leaf: Option<&Leaf>,
        version: Option<&'static rustls::SupportedProtocolVersion>,
    ) -> Arc<ClientConfig> {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca.cert.der().clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions: Vec<&'static rustls::SupportedProtocolVersion> = match version {
            Some(v) => vec![v],
            None => vec![&rustls::version::TLS13, &rustls::version::TLS12],
        };
        let b = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .unwrap()
            .with_root_certificates(roots);
        Arc::new(match leaf {
            Some(l) => b
                .with_client_auth_cert(
                    vec![CertificateDer::from(l.cert.der().to_vec())],
                    PrivateKeyDer::try_from(l.key.serialize_der()).unwrap(),
                )
                .unwrap(),
            None => b.with_no_client_auth(),
        })
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ---------------------------------------------------------------------------------
// A switch's TLS client: a relay between the emulated switch (clear, loopback) and the
// controller (TLS).

/// How a relay's TLS session ended, when it did.
pub type Outcome = Arc<Mutex<Option<String>>>;

/// Relays one connection: accepts the emulator on a loopback port, connects to
/// `controller` with `config`, and copies both ways until either side closes. Returns
/// the port for the emulator and where the TLS outcome is written (a rustls error, or
/// "closed").
pub fn relay(controller: SocketAddr, config: Arc<ClientConfig>) -> (SocketAddr, Outcome) {
    let front = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = front.local_addr().unwrap();
    let outcome: Outcome = Arc::new(Mutex::new(None));
    let result = Arc::clone(&outcome);
    thread::spawn(move || {
        let end = relay_one(&front, controller, config).unwrap_or_else(|e| e.to_string());
        *result.lock().unwrap() = Some(end);
    });
    (addr, outcome)
}

fn relay_one(
    front: &TcpListener,
    controller: SocketAddr,
    config: Arc<ClientConfig>,
) -> io::Result<String> {
    let (mut clear, _) = front.accept()?;
    let tcp = TcpStream::connect(controller)?;
    clear.set_nonblocking(true)?;
    tcp.set_nonblocking(true)?;
    let name = ServerName::try_from("localhost").unwrap();
    let session = ClientConnection::new(config, name).map_err(io::Error::other)?;
    let mut tls = TlsIo::new(tcp, session);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut idle = true;
        // Emulator -> controller: into the session (which keeps what the socket does not
        // take yet), then as much as the socket takes.
        match clear.read(&mut buf) {
            Ok(0) => {
                tls.session.send_close_notify();
                return Ok(match flush(&mut tls) {
                    Ok(()) => "closed".into(),
                    Err(e) => format!("write: {e}"),
                });
            }
            Ok(n) => {
                tls.session.writer().write_all(&buf[..n])?;
                idle = false;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        if let Err(e) = flush(&mut tls) {
            return Ok(format!("write: {e}"));
        }
        // Controller -> emulator, through the one buffer: the relay allocates nothing
        // per message.
        let mut rustls_error = None;
        match tls.read_plain(
            &mut buf,
            |_| Ok(()),
            |e| {
                let text = format!("tls: {e}");
                rustls_error = Some(text.clone());
                io::Error::other(text)
            },
        ) {
            Ok(0) => return Ok("closed".into()),
            Ok(n) => {
                write_all_nonblocking(&mut clear, &buf[..n])?;
                idle = false;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Ok(rustls_error.unwrap_or_else(|| format!("read: {e}"))),
        }
        if idle {
            thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Sends every record the session holds, waiting for the socket as long as it takes.
fn flush(tls: &mut TlsIo<ClientConnection, TcpStream>) -> io::Result<()> {
    loop {
        tls.send_backlog()?;
        if !tls.session.wants_write() {
            return Ok(());
        }
        thread::sleep(Duration::from_millis(1));
    }
}

fn write_all_nonblocking(s: &mut TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match s.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(1))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A TLS client handshake alone (no OpenFlow), blocking: `Ok` once established and
/// the controller's first OpenFlow bytes (its HELLO) arrived, `Err` with rustls's or
/// the socket's error otherwise.
pub fn tls_handshake(controller: SocketAddr, config: Arc<ClientConfig>) -> Result<Vec<u8>, String> {
    let tcp = TcpStream::connect(controller).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(T)).unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let conn = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    let mut s = rustls::StreamOwned::new(conn, tcp);
    let mut hello = [0u8; 8];
    s.read_exact(&mut hello).map_err(|e| e.to_string())?;
    Ok(hello.to_vec())
}
