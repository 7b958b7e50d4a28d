//! TLS to controllers (`ssl:` targets), with rustls and its *ring* provider: the
//! switch presents its certificate (`--certificate`, `--private-key`) and accepts a
//! controller whose certificate is signed by `--ca-cert`, in TLS 1.2 or 1.3. The client
//! configuration, and how a controller's certificate is checked, are `tls_io`'s
//! ([`tls_io::client_config`]), shared with `pharos bench controller`'s switches.
//!
//! [`TlsStream`] is a client session over a non-blocking socket: reads decrypt what
//! the socket has (and answer the handshake), writes hand plaintext to the session
//! (buffered by it until the handshake is done) and send what records the socket takes.
//! Bytes can wait decrypted in the session while the socket is empty: the loop reads
//! until `WouldBlock`, which this returns only once the socket said so.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;

use mio::net::TcpStream;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use tls_io::TlsIo;

/// A rustls client session over a socket (see the module doc): the byte stream shared
/// with the controller's connections ([`TlsIo`]).
#[derive(Debug)]
pub struct TlsStream {
    /// The client session over the socket, as tls-io's byte stream.
    io: TlsIo<ClientConnection>,
}

impl TlsStream {
    /// A session to the controller at `addr` over `tcp` (connecting or connected).
    pub fn new(tcp: TcpStream, addr: SocketAddr, config: Arc<ClientConfig>) -> io::Result<Self> {
        let name = ServerName::IpAddress(addr.ip().into());
        let session = ClientConnection::new(config, name).map_err(io::Error::other)?;
        Ok(TlsStream {
            io: TlsIo::new(tcp, session),
        })
    }

    /// The socket.
    pub fn tcp(&self) -> &TcpStream {
        &self.io.tcp
    }

    pub fn tcp_mut(&mut self) -> &mut TcpStream {
        &mut self.io.tcp
    }

    /// Sends the session's records while the socket takes them; `Ok` when it is full.
    pub fn send_backlog(&mut self) -> io::Result<()> {
        self.io.send_backlog()
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.read_plain(
            buf,
            |_| Ok(()),
            |e| io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}")),
        )
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
