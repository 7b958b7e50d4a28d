//! What a TCP connection to the controller's address sees, for the hint `up` and
//! `restart` print when switches do not connect: "is a controller listening there?" is
//! the wrong question when one is, and refuses them.
//!
//! The probe connects from this machine, as the lab's switches do (their ovs-vswitchd
//! runs here), so a controller that limits connections per source address treats it as
//! it treats them. It sends a HELLO, as a switch does the moment it connects (a
//! controller may hold a connection that has said nothing: Pharos's listeners defer
//! accepting it for a second), reads for a moment and closes.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// What the probe saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// The connection was refused: nothing listens at the address.
    Refused,
    /// The connection did not complete in time (packets dropped, or an accept queue full
    /// and the kernel dropping new connections).
    NoAnswer,
    /// The connection was accepted, then closed before the peer said anything; `reset`
    /// when it was reset rather than closed in order.
    ClosedAtOnce { reset: bool },
    /// The connection was accepted and the peer sent `bytes` bytes (an OpenFlow
    /// controller sends its HELLO first).
    Spoke { bytes: usize },
    /// The connection was accepted and the peer said nothing for the whole wait.
    Silent,
    /// Anything else, in the system's words.
    Failed(String),
}

/// Connects to `addr` (giving up after `wait`), then reads for up to `wait`.
pub fn probe(addr: SocketAddr, wait: Duration) -> Seen {
    let mut stream = match TcpStream::connect_timeout(&addr, wait) {
        Ok(s) => s,
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return Seen::Refused,
        // Accepted and reset so fast that connect(2)'s completion already reports it.
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {
            return Seen::ClosedAtOnce { reset: true }
        }
        Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
            return Seen::NoAnswer
        }
        Err(e) => return Seen::Failed(e.to_string()),
    };
    if let Err(e) = stream.set_read_timeout(Some(wait)) {
        return Seen::Failed(e.to_string());
    }
    // An OpenFlow 1.0 HELLO (version 1, type 0, length 8, xid 0): every controller
    // answers it with its own, whichever versions it speaks. A write error is left to
    // the read to report.
    let _ = stream.write_all(&[1, 0, 0, 8, 0, 0, 0, 0]);
    let mut buf = [0u8; 64];
    match stream.read(&mut buf) {
        Ok(0) => Seen::ClosedAtOnce { reset: false },
        Ok(n) => Seen::Spoke { bytes: n },
        Err(e) if e.kind() == ErrorKind::ConnectionReset => Seen::ClosedAtOnce { reset: true },
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Seen::Silent,
        Err(e) => Seen::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    const WAIT: Duration = Duration::from_secs(2);

    /// A listener on a free port that treats its first connection with `f`.
    fn serve_once(f: impl FnOnce(TcpStream) + Send + 'static) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            if let Ok((s, _)) = l.accept() {
                f(s);
            }
        });
        addr
    }

    #[test]
    fn refused_closed_reset_and_spoken() {
        // A port nobody listens on: bound, read, let go.
        let free = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        assert_eq!(probe(free, WAIT), Seen::Refused);
        // Accepted, the probe's HELLO read, and closed (unread, the HELLO would make the
        // close a reset).
        let addr = serve_once(|mut s| {
            let mut b = [0u8; 8];
            let _ = s.read_exact(&mut b);
        });
        assert_eq!(probe(addr, WAIT), Seen::ClosedAtOnce { reset: false });
        // Accepted and reset (SO_LINGER 0), as Pharos refuses one over its caps.
        let addr = serve_once(|s| {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
            let linger = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            // SAFETY: setsockopt on a socket we own, with a correctly sized value.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    (&linger as *const libc::linger).cast(),
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                );
            }
            drop(s);
        });
        assert_eq!(probe(addr, WAIT), Seen::ClosedAtOnce { reset: true });
        // Accepted and answered, as a controller sending its HELLO.
        let addr = serve_once(|mut s| {
            let _ = s.write_all(&[4, 0, 0, 8, 0, 0, 0, 1]);
            std::thread::sleep(WAIT);
        });
        assert_eq!(probe(addr, WAIT), Seen::Spoke { bytes: 8 });
    }

    #[test]
    fn the_probe_says_hello_first() {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let addr = serve_once(move |mut s| {
            let mut b = [0u8; 8];
            s.set_read_timeout(Some(WAIT)).unwrap();
            let _ = s.read_exact(&mut b);
            let _ = tx.send(b.to_vec());
            let _ = s.write_all(&[4, 0, 0, 8, 0, 0, 0, 1]);
        });
        assert_eq!(probe(addr, WAIT), Seen::Spoke { bytes: 8 });
        assert_eq!(rx.recv().unwrap(), vec![1, 0, 0, 8, 0, 0, 0, 0]);
    }

    #[test]
    fn silent_peer() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let addr = serve_once(move |_s| {
            // Hold the connection open until the probe is done.
            let _ = rx.recv();
        });
        assert_eq!(probe(addr, Duration::from_millis(200)), Seen::Silent);
        let _ = tx.send(());
    }
}
