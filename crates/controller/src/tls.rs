//! TLS on the OpenFlow channel: the server configuration of a `listen` entry with a
//! `tls` table, and [`Stream`], the transport of a connection (plain TCP or a rustls
//! session over it) that admission and the workers read and write.
//!
//! rustls with the *ring* provider only (no aws-lc, no OpenSSL), TLS 1.2 and 1.3.
//! Switches must present a certificate signed by `client_ca` unless the entry says
//! `client_auth = "none"`.
//!
//! **Where the handshake runs.** Admission wraps each connection accepted on a TLS
//! listener in a [`Stream::Tls`] and runs the TLS handshake, then the OpenFlow one
//! inside it, under the same deadline and caps: a TLS flood costs admission, never a
//! worker. A worker gets the stream with the session established and reads and writes
//! plaintext through it.
//!
//! **Refusals.** A peer that fails the TLS handshake is closed with a reason of its own
//! ([`refusal`]): `tls_plain_text` (its first byte is not a TLS handshake record:
//! an OpenFlow HELLO on a TLS port), `tls_unknown_ca`, `tls_expired_cert`,
//! `tls_cert_not_yet_valid`, `tls_no_cert`, `tls_bad_cert`, `tls_alert_from_peer` (the
//! switch refused us: usually it does not trust our certificate), `tls_incompatible`
//! (no common version or cipher suite), `tls_error` (anything else).
//!
//! **Edge-triggered reads.** Bytes can wait in the session (decrypted, not yet read)
//! while the socket is empty, and a short read says nothing about the socket: a
//! reader of a [`Stream::Tls`] reads until `WouldBlock`, which it gets only once the
//! socket itself said so ([`Stream::drains_on_short_read`]).

use std::fmt;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mio::event::Source;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, RootCertStore, ServerConfig, ServerConnection};
use tls_io::TlsIo;

use serde::{Deserialize, Serialize};

/// The `tls` table of a `listen` entry: the controller's certificate and key, and the
/// CA that signs the switches' certificates. Paths are relative to the working
/// directory. The files are read at start-up: a missing, unreadable or malformed one
/// stops it with the key and the file named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSettings {
    /// The controller's certificate chain (PEM), leaf first.
    pub cert: PathBuf,
    /// The controller's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// The CA certificate(s) (PEM) a switch's certificate must be signed by. Required
    /// unless `client_auth = "none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_ca: Option<PathBuf>,
    /// `"required"` (the default): a switch must present a certificate signed by
    /// `client_ca`. `"none"`: any peer that speaks TLS can connect as a switch, which
    /// only encrypts the channel (unsafe: anyone who reaches the port controls what
    /// the controller believes about the network).
    #[serde(default, skip_serializing_if = "ClientAuth::is_required")]
    pub client_auth: ClientAuth,
}

/// Whether switches must authenticate with a certificate ([`TlsSettings::client_auth`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientAuth {
    /// A certificate signed by `client_ca` is required (mutual authentication).
    #[default]
    Required,
    /// No client certificate is asked for (unsafe; see [`TlsSettings::client_auth`]).
    None,
}

impl ClientAuth {
    fn is_required(&self) -> bool {
        *self == ClientAuth::Required
    }
}

/// The TLS record content type of a handshake message: the first byte a TLS client
/// sends (RFC 8446 §5.1, `handshake(22)`).
const HANDSHAKE_RECORD: u8 = 22;

/// Why a `tls` table cannot be used: the key (`cert`, `key`, `client_ca`), the file,
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSetupError {
    /// The key of the `tls` table (`cert`, `key`, `client_ca`), or empty for the table
    /// as a whole.
    pub key: &'static str,
    /// What is wrong, naming the file.
    pub reason: String,
}

impl fmt::Display for TlsSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", self.key, self.reason)
        }
    }
}

impl std::error::Error for TlsSetupError {}

fn setup_error(key: &'static str, reason: impl Into<String>) -> TlsSetupError {
    TlsSetupError {
        key,
        reason: reason.into(),
    }
}

/// The ring provider: the only one this crate builds with.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads the certificates of a PEM file (at least one).
fn read_certs(
    key: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let shown = path.display();
    // Read first so that a missing or unreadable file says so (the PEM parser's own
    // error does not name the file).
    let bytes =
        std::fs::read(path).map_err(|e| setup_error(key, format!("cannot read {shown}: {e}")))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| setup_error(key, format!("{shown} is not valid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(setup_error(
            key,
            format!("{shown} holds no certificate (a PEM \"BEGIN CERTIFICATE\" block)"),
        ));
    }
    Ok(certs)
}

/// Reads the private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsSetupError> {
    let shown = path.display();
    let bytes =
        std::fs::read(path).map_err(|e| setup_error("key", format!("cannot read {shown}: {e}")))?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| {
        setup_error(
            "key",
            format!("{shown} holds no usable private key (PEM PKCS#8, PKCS#1 or SEC1): {e}"),
        )
    })
}

/// The rustls server configuration of a `tls` table: its files read and checked (a
/// missing, unreadable or malformed file, or a key that does not match the
/// certificate, is an error naming the key and the file).
pub fn server_config(s: &TlsSettings) -> Result<Arc<ServerConfig>, TlsSetupError> {
    let certs = read_certs("cert", &s.cert)?;
    let key = read_key(&s.key)?;
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| setup_error("", format!("TLS versions: {e}")))?;
    let builder = match (s.client_auth, &s.client_ca) {
        (ClientAuth::None, _) => builder.with_no_client_auth(),
        (ClientAuth::Required, None) => {
            return Err(setup_error(
                "client_ca",
                "missing: mutual authentication (the default) needs the CA that signs the \
                 switches' certificates; client_auth = \"none\" turns it off (unsafe: any \
                 peer can then connect as a switch)",
            ))
        }
        (ClientAuth::Required, Some(ca)) => {
            let mut roots = RootCertStore::empty();
            for cert in read_certs("client_ca", ca)? {
                roots.add(cert).map_err(|e| {
                    setup_error(
                        "client_ca",
                        format!("{}: not a usable CA certificate: {e}", ca.display()),
                    )
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| setup_error("client_ca", format!("{}: {e}", ca.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder.with_single_cert(certs, key).map_err(|e| {
        setup_error(
            "key",
            format!(
                "{} and {} do not make a usable certificate and key: {e}",
                s.cert.display(),
                s.key.display()
            ),
        )
    })?;
    Ok(Arc::new(config))
}

/// A TLS failure as the io error [`Stream`] returns it.
#[derive(Debug)]
enum TlsFailure {
    /// The peer's first byte is not a TLS handshake record.
    PlainText(u8),
    /// rustls refused what the peer sent (or the peer refused us: an alert).
    Rustls(rustls::Error),
}

impl fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsFailure::PlainText(b) => write!(
                f,
                "plain text on a TLS port: the first byte is {b:#04x}, not a TLS handshake \
                 record (0x16){}",
                match b {
                    1 => " (an OpenFlow 1.0 message)",
                    4 => " (an OpenFlow 1.3 message)",
                    _ => "",
                }
            ),
            TlsFailure::Rustls(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TlsFailure {}

fn failure(f: TlsFailure) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, f)
}

/// The counted reason of a TLS failure returned by a [`Stream`] (see the module doc);
/// `None` for an error that is not one (a plain socket error).
pub fn refusal(e: &io::Error) -> Option<&'static str> {
    let f = e.get_ref()?.downcast_ref::<TlsFailure>()?;
    Some(match f {
        TlsFailure::PlainText(_) => "tls_plain_text",
        TlsFailure::Rustls(e) => match e {
            rustls::Error::NoCertificatesPresented => "tls_no_cert",
            rustls::Error::InvalidCertificate(c) => match c {
                CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                    "tls_unknown_ca"
                }
                CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                    "tls_expired_cert"
                }
                CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                    "tls_cert_not_yet_valid"
                }
                _ => "tls_bad_cert",
            },
            rustls::Error::AlertReceived(_) => "tls_alert_from_peer",
            rustls::Error::PeerIncompatible(_) => "tls_incompatible",
            _ => "tls_error",
        },
    })
}

/// A rustls server session over a socket (see the module doc): the byte stream shared
/// with `pharos switch` ([`TlsIo`]), plus the refusal of a peer whose first byte is not
/// a TLS handshake record, and this module's failure classes.
#[derive(Debug)]
pub struct TlsStream {
    io: TlsIo<ServerConnection>,
}

impl TlsStream {
    /// Writes the session's encrypted records while the socket takes them; `Ok` when
    /// the socket is full (the rest waits: [`Stream::backlog`]).
    fn send_backlog(&mut self) -> io::Result<()> {
        self.io.send_backlog()
    }
}

/// Refuses a peer whose first byte is not a TLS handshake record, before rustls sees
/// it (rustls would say only "invalid content type"). Nothing yet, or the end: the
/// read that follows says which. (Bytes that arrive between the peek and that read are
/// the first ones unchecked: rustls judges them.)
fn check_first_byte(tcp: &mut TcpStream) -> io::Result<()> {
    let mut b = [0u8; 1];
    match tcp.peek(&mut b) {
        Ok(1) if b[0] != HANDSHAKE_RECORD => Err(failure(TlsFailure::PlainText(b[0]))),
        _ => Ok(()),
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .read_plain(buf, check_first_byte, |e| failure(TlsFailure::Rustls(e)))
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.io.write_plain(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.io.send_backlog()
    }
}

/// A connection's transport: plain TCP, or TLS over it (see the module doc).
#[derive(Debug)]
pub enum Stream {
    /// Clear text.
    Plain(TcpStream),
    /// A rustls session (boxed: a session is a few hundred bytes of state).
    Tls(Box<TlsStream>),
}

impl Stream {
    /// A TLS server session over an accepted socket.
    pub fn tls(tcp: TcpStream, config: Arc<ServerConfig>) -> Result<Stream, rustls::Error> {
        let session = ServerConnection::new(config)?;
        Ok(Stream::Tls(Box::new(TlsStream {
            io: TlsIo::new(tcp, session),
        })))
    }

    /// Whether this is a TLS connection.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Whether a short read proves the socket empty (plain TCP); over TLS only
    /// `WouldBlock` does (see the module doc).
    #[inline]
    pub fn drains_on_short_read(&self) -> bool {
        matches!(self, Stream::Plain(_))
    }

    /// Whether the TLS handshake is still going on (false for plain TCP).
    pub fn tls_handshaking(&self) -> bool {
        match self {
            Stream::Plain(_) => false,
            Stream::Tls(t) => t.io.session.is_handshaking(),
        }
    }

    /// The negotiated TLS version and cipher suite, for the log (`None`: plain, or
    /// still handshaking).
    pub fn tls_summary(&self) -> Option<String> {
        let Stream::Tls(t) = self else { return None };
        let version = t.io.session.protocol_version()?;
        let suite = t.io.session.negotiated_cipher_suite()?;
        Some(format!("{version:?} {:?}", suite.suite()))
    }

    /// Whether encrypted records wait for the socket (always false for plain TCP):
    /// the connection needs WRITABLE even with its own queue empty.
    #[inline]
    pub fn backlog(&self) -> bool {
        match self {
            Stream::Plain(_) => false,
            Stream::Tls(t) => t.io.session.wants_write(),
        }
    }

    /// Writes waiting encrypted records while the socket takes them (nothing for
    /// plain TCP).
    #[inline]
    pub fn send_backlog(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(_) => Ok(()),
            Stream::Tls(t) => t.send_backlog(),
        }
    }

    /// Shuts the socket down; a TLS session that is established says close_notify
    /// first (best effort).
    pub fn shutdown(&mut self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.shutdown(how),
            Stream::Tls(t) => {
                if how != Shutdown::Read && !t.io.session.is_handshaking() {
                    t.io.session.send_close_notify();
                }
                let _ = t.send_backlog();
                t.io.tcp.shutdown(how)
            }
        }
    }

    /// The socket.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &t.io.tcp,
        }
    }

    fn tcp_mut(&mut self) -> &mut TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &mut t.io.tcp,
        }
    }
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

impl Source for Stream {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.tcp_mut().register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.tcp_mut().reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        self.tcp_mut().deregister(registry)
    }
}
