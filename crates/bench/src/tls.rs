//! The emulated switches' TLS (`pharos bench controller --tls-cert --tls-key
//! --tls-ca`): a rustls client session (ring only) over each non-blocking connection,
//! so the benchmark measures a controller's OpenFlow over TLS as Open vSwitch's
//! `ssl:` connections reach it.
//!
//! As Open vSwitch does, the controller's certificate is checked against the CA and not
//! against a name (switches connect to an address; the CA is private to the network).
//!
//! The session is a [`TlsIo`], the TLS byte stream the controller and `pharos switch`
//! use. [`Transport`] keeps the plain socket's contract the generator relies on: a read
//! shorter than the buffer means the socket is drained (so it reads until the socket
//! says `WouldBlock` or the buffer is full), and `flush` writes the records the socket
//! did not take yet.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use mio::event::Source;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use rustls::pki_types::ServerName;
pub use rustls::ClientConfig;
use rustls::ClientConnection;
use tls_io::TlsIo;

/// The client configuration of `--tls-cert FILE --tls-key FILE --tls-ca FILE`: the
/// switches' certificate and key, and the CA the controller's certificate must be
/// signed by; `pharos switch`'s own ([`tls_io::client_config`]). An error names the
/// file.
pub fn client_config(cert: &Path, key_file: &Path, ca: &Path) -> Result<Arc<ClientConfig>, String> {
    tls_io::client_config(&tls_io::TlsFiles {
        ca_cert: ca.to_path_buf(),
        certificate: cert.to_path_buf(),
        private_key: key_file.to_path_buf(),
    })
}

/// A switch's connection: plain, or a TLS client session over it.
#[derive(Debug)]
pub enum Transport {
    /// Clear text.
    Plain(TcpStream),
    /// TLS (boxed: the session is large).
    Tls(Box<TlsIo<ClientConnection>>),
}

/// Whether a socket error means "not yet" (a connection still being made, or full).
fn waits(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::NotConnected
    )
}

impl Transport {
    /// `tcp` as is, or with a TLS session to the controller at its peer address.
    pub fn new(
        tcp: TcpStream,
        tls: Option<&Arc<ClientConfig>>,
        server: SocketAddrName,
    ) -> io::Result<Transport> {
        match tls {
            None => Ok(Transport::Plain(tcp)),
            Some(config) => {
                let conn = ClientConnection::new(
                    Arc::clone(config),
                    ServerName::IpAddress(server.0.into()),
                )
                .map_err(io::Error::other)?;
                Ok(Transport::Tls(Box::new(TlsIo::new(tcp, conn))))
            }
        }
    }

    /// The socket.
    pub fn tcp(&mut self) -> &mut TcpStream {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(t) => &mut t.tcp,
        }
    }
}

/// The controller's address as the TLS server name (an IP address: the name is not
/// checked, see the module doc).
#[derive(Debug, Clone, Copy)]
pub struct SocketAddrName(pub std::net::IpAddr);

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let tls = match self {
            Transport::Plain(s) => return s.read(buf),
            Transport::Tls(t) => t,
        };
        // Fill `buf` until the socket is drained: a short read then says so, as for
        // plain TCP.
        let mut filled = 0;
        while filled < buf.len() {
            match tls.read_plain(&mut buf[filled..], |_| Ok(()), io::Error::other) {
                // The end: what was decrypted, then 0.
                Ok(0) => return Ok(filled),
                Ok(n) => filled += n,
                Err(e) if waits(&e) => {
                    return if filled > 0 { Ok(filled) } else { Err(e) };
                }
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(t) => t.write_plain(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(_) => Ok(()),
            Transport::Tls(t) => t.send_backlog(),
        }
    }
}

impl Source for Transport {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.tcp().register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        self.tcp().reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        self.tcp().deregister(registry)
    }
}
