//! [`Listener`]: waiting for a switch to connect (its controller target).

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::time::Instant;

use super::io::{io_err, poll_fd};
use super::{Channel, ChannelConfig, ChannelError, Result};

/// A bound listening socket, so that its port is known before the switch is told to
/// connect (bind port 0, read [`Listener::local_addr`], configure the switch, accept).
pub struct Listener {
    /// The bound socket; accepts once the switch has been pointed at it.
    inner: TcpListener,
}

impl Listener {
    pub fn bind(addr: SocketAddr) -> Result<Listener> {
        let inner = TcpListener::bind(addr).map_err(|e| ChannelError::Io {
            what: format!("listening on {addr}"),
            source: e,
        })?;
        inner
            .set_nonblocking(true)
            .map_err(|e| io_err("listener", e))?;
        Ok(Listener { inner })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.inner
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Waits up to `cfg.connect_timeout` for a switch, then opens the channel with it
    /// (`cfg.endpoint` is not used).
    pub fn accept(&self, cfg: &ChannelConfig) -> Result<Channel> {
        let deadline = Instant::now() + cfg.connect_timeout;
        loop {
            match self.inner.accept() {
                Ok((stream, _)) => return Channel::handshake(stream, cfg),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ChannelError::Timeout {
                            what: format!(
                                "a connection on {} (no switch connected)",
                                self.local_addr()
                            ),
                            after: cfg.connect_timeout,
                        });
                    }
                    poll_fd(self.inner.as_raw_fd(), libc::POLLIN, left)
                        .map_err(|e| io_err("waiting for the switch", e))?;
                }
                Err(e) => return Err(io_err("accepting the switch", e)),
            }
        }
    }
}
