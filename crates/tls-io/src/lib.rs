//! # pharos-tls-io: TLS on the OpenFlow channel
//!
//! A rustls session over a non-blocking socket, as a byte stream: the controller's TLS
//! connections (server sessions) and `pharos switch`'s `ssl:` controllers (client
//! sessions) both read and write OpenFlow through it, and so do the bench's emulated
//! switches and the test kit's TLS relay (client sessions). And the client configuration
//! `pharos switch` and `pharos bench controller`'s emulated switches connect with.
//!
//! ## Layout
//!
//! ```text
//! lib.rs   TlsIo: a rustls session (server or client) over a non-blocking socket (a
//!          mio one by default, any Read + Write), as a byte stream that reads until
//!          WouldBlock and keeps unsent records for later
//! client   TlsFiles, client_config: a client's certificate, key and CA from PEM
//!          files; a server's certificate checked against the CA, not its name
//! ```
//!
//! Reads decrypt what the socket has (answering the handshake as it goes); writes hand
//! plaintext to the session (which buffers it until the handshake is done) and send
//! the records the socket takes, the rest waiting for [`TlsIo::send_backlog`].
//! Plaintext can wait decrypted in the session while the socket is empty: a reader
//! reads until `WouldBlock`, which [`TlsIo::read_plain`] returns only once the socket
//! said so.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn demo(config: Arc<rustls::ClientConfig>) -> std::io::Result<()> {
//! use rustls::pki_types::ServerName;
//! use tls_io::TlsIo;
//!
//! let tcp = std::net::TcpStream::connect("127.0.0.1:6653")?;
//! tcp.set_nonblocking(true)?;
//! let name = ServerName::try_from("localhost").unwrap();
//! let session = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
//! let mut io = TlsIo::new(tcp, session);
//! io.write_plain(b"plaintext, sent once the handshake is done")?;
//! let mut buf = [0u8; 4096];
//! let _ = io.read_plain(&mut buf, |_| Ok(()), std::io::Error::other); // WouldBlock: later
//! # Ok(()) }
//! ```

mod client;

use std::io::{self, Read, Write};
use std::ops::DerefMut;

use mio::net::TcpStream;
use rustls::{ConnectionCommon, SideData};

pub use client::{client_config, TlsFiles};

/// Plaintext handed to the session per write.
pub const MAX_WRITE: usize = 64 * 1024;

/// A session (`C`: a rustls `ServerConnection` or `ClientConnection`) over a
/// non-blocking socket (`S`: a mio [`TcpStream`] unless said otherwise; any `Read +
/// Write` whose "not now" is `WouldBlock`, such as a non-blocking
/// `std::net::TcpStream`).
#[derive(Debug)]
pub struct TlsIo<C, S = TcpStream> {
    /// The socket the records go over.
    pub tcp: S,
    /// The rustls session: the handshake, the keys, the records buffered.
    pub session: C,
    /// Whether a read from the socket has returned bytes (see [`TlsIo::read_plain`]).
    pub first_read_done: bool,
}

impl<C, D, S> TlsIo<C, S>
where
    C: DerefMut<Target = ConnectionCommon<D>>,
    D: SideData,
    S: Read + Write,
{
    /// `session` over `tcp`, nothing read yet.
    pub fn new(tcp: S, session: C) -> TlsIo<C, S> {
        TlsIo {
            tcp,
            session,
            first_read_done: false,
        }
    }

    /// Writes the session's records while the socket takes them; `Ok` when it is full
    /// (the rest waits), or not connected yet (a non-blocking connect still under way,
    /// as some systems say; Linux says `WouldBlock`).
    pub fn send_backlog(&mut self) -> io::Result<()> {
        while self.session.wants_write() {
            match self.session.write_tls(&mut self.tcp) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::NotConnected
                    ) =>
                {
                    return Ok(())
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads plaintext: what the session holds, else what the socket brings, decrypted.
    /// `Ok(0)` at the end (a close without close_notify too: a peer that drops the
    /// connection is not an attack on the channel). Until a socket read has brought
    /// bytes, `before_first` runs before each (the controller refuses a plain-text peer
    /// there). A record rustls refuses ends the read with `failed`'s error, after the
    /// alert saying why was sent, as far as the socket takes it.
    pub fn read_plain(
        &mut self,
        buf: &mut [u8],
        mut before_first: impl FnMut(&mut S) -> io::Result<()>,
        failed: impl FnOnce(rustls::Error) -> io::Error,
    ) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.session.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if !self.first_read_done {
                before_first(&mut self.tcp)?;
            }
            match self.session.read_tls(&mut self.tcp) {
                Ok(0) => return Ok(0),
                Ok(_) => self.first_read_done = true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            if let Err(e) = self.session.process_new_packets() {
                let _ = self.send_backlog();
                return Err(failed(e));
            }
            // Handshake messages, a key update's answer, session tickets, and the
            // plaintext buffered until the handshake was done.
            self.send_backlog()?;
        }
    }

    /// Writes plaintext (at most [`MAX_WRITE`] bytes of `buf`): `WouldBlock` while
    /// records wait for the socket after the handshake, so that the caller keeps its
    /// own buffer rather than the session growing one.
    pub fn write_plain(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.send_backlog()?;
        if self.session.wants_write() && !self.session.is_handshaking() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = self
            .session
            .writer()
            .write(&buf[..buf.len().min(MAX_WRITE)])?;
        if n == 0 && !buf.is_empty() {
            // The session's buffer is full (only while handshaking).
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.send_backlog()?;
        Ok(n)
    }
}
