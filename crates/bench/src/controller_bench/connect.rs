//! How the emulated switches get in: from which loopback source address, with what
//! backoff after a refusal, over TLS or not (also `pharos bench soak`'s switches).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use crate::tls::{SocketAddrName, Transport};

/// The loopback source address of switch `i` of `n` addresses: 127.0.0.1 first, then
/// upwards through 127.0.0.0/8 (skipping .0 and .255 in the last byte).
pub fn source_addr(i: usize, n: usize) -> std::net::IpAddr {
    let k = (i % n.max(1)) as u32;
    let (hi, lo) = (k / 254, k % 254 + 1);
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(
        127,
        (hi >> 8) as u8,
        hi as u8,
        lo as u8,
    ))
}

/// A non-blocking connection to `addr` from `source` (any port), for mio.
pub(crate) fn connect_from(
    addr: SocketAddr,
    source: Option<std::net::IpAddr>,
) -> std::io::Result<TcpStream> {
    let Some(ip) = source else {
        return TcpStream::connect(addr);
    };
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::new(ip, 0).into())?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(socket.into()))
}

/// The pause before connection attempt `attempt` (1 = the first retry).
pub(crate) fn backoff(attempt: u32, dpid: u64) -> Duration {
    let base = 100u64 << attempt.saturating_sub(1).min(5);
    let base = base.min(2000);
    // ±25%, from the dpid and the attempt: no two switches retry in lockstep.
    let h = (dpid ^ u64::from(attempt) << 32).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 33;
    let jitter = (h % 51) as i64 - 25;
    Duration::from_millis((base as i64 + base as i64 * jitter / 100) as u64)
}

/// How the switches connect.
#[derive(Debug, Clone)]
pub(super) struct Connecting {
    /// Loopback source addresses to spread them over (0: the system's choice).
    pub(super) source_addrs: usize,
    /// Connect again after a refusal, with backoff.
    pub(super) retry: bool,
    /// TLS, or clear text.
    pub(super) tls: Option<Arc<rustls::ClientConfig>>,
}

impl Connecting {
    fn source(&self, dpid: u64) -> Option<std::net::IpAddr> {
        (self.source_addrs > 0).then(|| source_addr(dpid as usize - 1, self.source_addrs))
    }

    /// Switch `dpid`'s connection to `addr` (its TLS session started, if TLS).
    pub(super) fn open(&self, addr: SocketAddr, dpid: u64) -> std::io::Result<Transport> {
        let tcp = connect_from(addr, self.source(dpid))?;
        let _ = tcp.set_nodelay(true);
        Transport::new(tcp, self.tls.as_ref(), SocketAddrName(addr.ip()))
    }
}

/// A switch's way in: its attempts, the next one, and when it was first ready.
pub(super) struct Joining {
    /// When the first attempt began: the time to get in counts from here.
    pub(super) first: Instant,
    /// Connection attempts so far.
    pub(super) attempts: u32,
    /// When to try again after a refusal; `None` while an attempt is under way.
    pub(super) next: Option<Instant>,
    /// How long it took from the first attempt to ready, once ready.
    pub(super) joined: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_addresses_walk_up_127_0_0_0_8_and_wrap() {
        assert_eq!(source_addr(0, 100).to_string(), "127.0.0.1");
        assert_eq!(source_addr(99, 100).to_string(), "127.0.0.100");
        assert_eq!(source_addr(100, 100).to_string(), "127.0.0.1", "wraps at n");
        assert_eq!(source_addr(253, 1000).to_string(), "127.0.0.254");
        assert_eq!(
            source_addr(254, 1000).to_string(),
            "127.0.1.1",
            "no .255, no .0"
        );
    }

    #[test]
    fn backoff_doubles_to_two_seconds_with_jitter() {
        for dpid in 1..50 {
            let ms = |a| backoff(a, dpid).as_millis() as u64;
            assert!((75..=125).contains(&ms(1)), "{}", ms(1));
            assert!((150..=250).contains(&ms(2)), "{}", ms(2));
            assert!((1500..=2500).contains(&ms(9)), "{}", ms(9));
        }
        let firsts: std::collections::HashSet<_> = (1..50).map(|d| backoff(1, d)).collect();
        assert!(firsts.len() > 10, "switches do not retry in lockstep");
    }
}
