//! Raw Ethernet frames in and out of a host: an `AF_PACKET` socket made inside the host's
//! network namespace, on a thread of our own that enters it with `setns(2)` (only that
//! thread changes namespace, and it ends when the frames are sent or received).
//!
//! This is how a test plays a misbehaving host: `pharos lab send h1 --hex ...` puts a frame
//! on the wire exactly as given (a forged LLDP frame, say), and `pharos lab recv h1
//! --ethertype 0x88cc` prints the frames the host's interface receives.

use std::fs::File;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::LabError;

/// The shortest frame accepted: an Ethernet header.
pub const MIN_FRAME: usize = 14;
/// The longest: a 1500-byte payload, a VLAN tag and the header (the veths' MTU).
pub const MAX_FRAME: usize = 1518;

/// Parses hex digits into bytes, ignoring whitespace, `:`, `-` and `.` between them and
/// a leading `0x`.
pub fn parse_hex(s: &str) -> Result<Vec<u8>, LabError> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let digits: Vec<u8> = s
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && !matches!(b, b':' | b'-' | b'.'))
        .collect();
    if let Some(bad) = digits.iter().find(|b| !b.is_ascii_hexdigit()) {
        return Err(LabError::Invalid(format!(
            "bad hex frame: {:?} is not a hex digit",
            *bad as char
        )));
    }
    if digits.len() % 2 != 0 {
        return Err(LabError::Invalid(format!(
            "bad hex frame: an odd number of hex digits ({})",
            digits.len()
        )));
    }
    let frame: Vec<u8> = digits
        .chunks(2)
        .map(|p| {
            let s = std::str::from_utf8(p).expect("ASCII hex digits");
            u8::from_str_radix(s, 16).expect("checked hex digits")
        })
        .collect();
    check_len(&frame)?;
    Ok(frame)
}

fn check_len(frame: &[u8]) -> Result<(), LabError> {
    if (MIN_FRAME..=MAX_FRAME).contains(&frame.len()) {
        Ok(())
    } else {
        Err(LabError::Invalid(format!(
            "a frame of {} bytes: an Ethernet frame has {MIN_FRAME} to {MAX_FRAME} (destination, \
             source, EtherType, payload; no FCS)",
            frame.len()
        )))
    }
}

/// Lower-case hex, no separators.
pub fn to_hex(frame: &[u8]) -> String {
    frame.iter().map(|b| format!("{b:02x}")).collect()
}

/// The EtherType of a frame (bytes 12 and 13; a VLAN tag's 0x8100 is not looked through).
pub fn ethertype(frame: &[u8]) -> Option<u16> {
    frame.get(12..14).map(|t| u16::from_be_bytes([t[0], t[1]]))
}

/// Sends `frame` `count` times, `interval` apart, out of interface `iface` of network
/// namespace `netns` (its file is `/run/netns/NETNS`). Returns how many were sent.
pub fn send(
    netns: &str,
    iface: &str,
    frame: &[u8],
    count: u32,
    interval: Duration,
) -> Result<u32, LabError> {
    check_len(frame)?;
    let frame = frame.to_vec();
    let iface = iface.to_string();
    in_netns(netns, move || {
        let (sock, ifindex) = packet_socket(&iface, 0)?;
        let proto = ethertype(&frame).unwrap_or(0);
        let mut addr = sockaddr_ll(ifindex, proto);
        addr.sll_halen = 6;
        addr.sll_addr[..6].copy_from_slice(&frame[..6]);
        for i in 0..count {
            if i > 0 {
                std::thread::sleep(interval);
            }
            // SAFETY: a valid socket, a buffer of frame.len() bytes, and a sockaddr_ll of
            // the size given.
            let n = unsafe {
                libc::sendto(
                    sock.as_raw_fd(),
                    frame.as_ptr().cast(),
                    frame.len(),
                    0,
                    (&addr as *const libc::sockaddr_ll).cast(),
                    size_of::<libc::sockaddr_ll>() as libc::socklen_t,
                )
            };
            if n < 0 {
                return Err(LabError::io(
                    format!("send a frame out of {iface}"),
                    std::io::Error::last_os_error(),
                ));
            }
        }
        Ok(count)
    })
}

/// Receives up to `count` frames arriving on interface `iface` of network namespace
/// `netns` (not the ones it sends), of EtherType `ethertype` if given, until `timeout`
/// passes. Returns them in arrival order; fewer than `count` when the time ran out.
pub fn recv(
    netns: &str,
    iface: &str,
    ethertype_filter: Option<u16>,
    count: usize,
    timeout: Duration,
) -> Result<Vec<Vec<u8>>, LabError> {
    let iface = iface.to_string();
    in_netns(netns, move || {
        let (sock, _) = packet_socket(&iface, libc::ETH_P_ALL as u16)?;
        let deadline = Instant::now() + timeout;
        let mut frames = Vec::new();
        let mut buf = vec![0u8; 65536];
        while frames.len() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            set_recv_timeout(&sock, left.min(Duration::from_millis(100)))?;
            // SAFETY: an all-zero sockaddr_ll is valid.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: a valid socket, a buffer of buf.len() bytes, an address buffer of
            // the size given.
            let n = unsafe {
                libc::recvfrom(
                    sock.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                    (&mut from as *mut libc::sockaddr_ll).cast(),
                    &mut len,
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    std::io::ErrorKind::WouldBlock
                    | std::io::ErrorKind::TimedOut
                    | std::io::ErrorKind::Interrupted => continue,
                    _ => return Err(LabError::io(format!("receive on {iface}"), e)),
                }
            }
            if from.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            let frame = &buf[..n as usize];
            if ethertype_filter.is_none_or(|t| ethertype(frame) == Some(t)) {
                frames.push(frame.to_vec());
            }
        }
        Ok(frames)
    })
}

/// Runs `f` on a new thread that has entered network namespace `netns`.
fn in_netns<T: Send + 'static>(
    netns: &str,
    f: impl FnOnce() -> Result<T, LabError> + Send + 'static,
) -> Result<T, LabError> {
    let path = Path::new("/run/netns").join(netns);
    let ns = File::open(&path).map_err(|e| {
        LabError::io(
            format!(
                "open the network namespace {} (is the lab complete? pharos lab show)",
                path.display()
            ),
            e,
        )
    })?;
    let netns = netns.to_string();
    std::thread::spawn(move || {
        // SAFETY: setns on a namespace file we opened; it changes this thread only (a
        // network namespace may be entered by one thread of a process).
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(LabError::io(
                format!("enter the network namespace {netns}"),
                std::io::Error::last_os_error(),
            ));
        }
        drop(ns);
        f()
    })
    .join()
    .unwrap_or_else(|_| Err(LabError::Other("the frame thread panicked".into())))
}

fn sockaddr_ll(ifindex: i32, protocol: u16) -> libc::sockaddr_ll {
    // SAFETY: an all-zero sockaddr_ll is valid.
    let mut a: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    a.sll_family = libc::AF_PACKET as u16;
    a.sll_protocol = protocol.to_be();
    a.sll_ifindex = ifindex;
    a
}

/// A raw packet socket bound to `iface` (in the calling thread's namespace), receiving
/// `protocol` (0: none, for sending only); and the interface's index.
fn packet_socket(iface: &str, protocol: u16) -> Result<(OwnedFd, i32), LabError> {
    let name = std::ffi::CString::new(iface)
        .map_err(|_| LabError::Invalid(format!("bad interface name {iface:?}")))?;
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(LabError::io(
            format!("find interface {iface}"),
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: socket(2) has no memory-safety preconditions.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            i32::from(protocol.to_be()),
        )
    };
    if fd < 0 {
        return Err(LabError::io(
            "open an AF_PACKET socket",
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: a descriptor we just opened and own.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let addr = sockaddr_ll(ifindex as i32, protocol);
    // SAFETY: a valid socket and a sockaddr_ll of the size given.
    let r = unsafe {
        libc::bind(
            sock.as_raw_fd(),
            (&addr as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(LabError::io(
            format!("bind an AF_PACKET socket to {iface}"),
            std::io::Error::last_os_error(),
        ));
    }
    Ok((sock, ifindex as i32))
}

fn set_recv_timeout(sock: &OwnedFd, t: Duration) -> Result<(), LabError> {
    let tv = libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: t.subsec_micros().max(1) as libc::suseconds_t,
    };
    // SAFETY: a valid socket and a timeval of the size given.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(LabError::io(
            "set a receive timeout",
            std::io::Error::last_os_error(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_frames() {
        let f = parse_hex("01:80:c2:00:00:0e 02-00-00-00-00-01 88cc\n0000").unwrap();
        assert_eq!(f.len(), 16);
        assert_eq!(ethertype(&f), Some(0x88cc));
        assert_eq!(to_hex(&f), "0180c200000e02000000000188cc0000");
        assert_eq!(parse_hex(&format!("0x{}", to_hex(&f))).unwrap(), f);
        for (bad, why) in [
            ("0180c200000e02000000000188c", "odd number"),
            ("0180c200000e02000000000188cg00", "'g' is not a hex digit"),
            ("0180c2", "a frame of 3 bytes"),
            ("", "a frame of 0 bytes"),
        ] {
            let e = parse_hex(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(parse_hex(&"00".repeat(MAX_FRAME + 1)).is_err());
        assert!(parse_hex(&"00".repeat(MAX_FRAME)).is_ok());
    }

    #[test]
    fn a_missing_namespace_is_named() {
        let e = send(
            "pharos-no-such-netns",
            "eth0",
            &[0u8; 14],
            1,
            Duration::ZERO,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("/run/netns/pharos-no-such-netns"), "{e}");
    }
}
