//! Thin wrappers over the system calls a port needs: interface ioctls, socket options,
//! the shared ring mapping, poll and the clock. Every `unsafe` block of the ports
//! outside the ring walk is here. [`ifreq`], [`setsockopt`] and [`take_error`] are
//! public for the switch's AF_XDP ports, which make the same calls on their sockets.

use std::io;
use std::mem;
use std::os::fd::RawFd;
use std::ptr;

/// An `ifreq` naming `ifname` (checked: not empty, shorter than `IFNAMSIZ`, no NUL).
pub fn ifreq(ifname: &str) -> io::Result<libc::ifreq> {
    let bytes = ifname.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{ifname:?} is not an interface name (1 to 15 bytes, no NUL)"),
        ));
    }
    // SAFETY: ifreq is plain old data; all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    Ok(req)
}

/// `ioctl(fd, request, &mut req)` for the `SIOCGIF*` requests.
pub(crate) fn ifioctl(
    fd: RawFd,
    request: libc::Ioctl,
    req: &mut libc::ifreq,
    what: &str,
) -> io::Result<()> {
    // SAFETY: `req` is a valid, writable ifreq for the duration of the call; every request
    // used here reads the name and writes one member of the union.
    let rc = unsafe { libc::ioctl(fd, request, req as *mut libc::ifreq) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        let name = name_of(req);
        return Err(io::Error::new(e.kind(), format!("{what} of {name}: {e}")));
    }
    Ok(())
}

/// The driver's link state (`SIOCETHTOOL` `ETHTOOL_GLINK`: `netif_carrier_ok` for
/// most drivers, veth included); `None` when the driver does not say.
pub(crate) fn carrier(fd: RawFd, ifname: &str) -> Option<bool> {
    /// `struct ethtool_value`.
    #[repr(C)]
    struct EthtoolValue {
        /// `ETHTOOL_GLINK`.
        cmd: u32,
        /// The link state the driver writes back (1: up).
        data: u32,
    }
    const ETHTOOL_GLINK: u32 = 0x0000_000a;
    let mut value = EthtoolValue {
        cmd: ETHTOOL_GLINK,
        data: 0,
    };
    let mut req = ifreq(ifname).ok()?;
    req.ifr_ifru.ifru_data = &mut value as *mut EthtoolValue as *mut libc::c_char;
    // SAFETY: `req` names the interface and points at `value`, which outlives the call.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCETHTOOL as _, &mut req as *mut libc::ifreq) };
    (rc == 0).then_some(value.data != 0)
}

fn name_of(req: &libc::ifreq) -> String {
    let bytes: Vec<u8> = req
        .ifr_name
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `setsockopt` with a value of type `T`.
pub fn setsockopt<T>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
    what: &str,
) -> io::Result<()> {
    // SAFETY: `value` points to `size_of::<T>()` readable bytes.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value as *const T as *const libc::c_void,
            mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("setsockopt {what}: {e}")));
    }
    Ok(())
}

/// `getsockopt` into a value of type `T`.
pub(crate) fn getsockopt<T: Default>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<T> {
    let mut value = T::default();
    let mut len = mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is `len` writable bytes; the kernel writes at most `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            &mut value as *mut T as *mut libc::c_void,
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value)
}

/// A shared mapping of a packet socket's rings, unmapped on drop.
pub(crate) struct Mapping {
    /// The mapping's start, from `mmap(2)`.
    pub(crate) base: *mut u8,
    /// Its length, for `munmap(2)`.
    pub(crate) len: usize,
}

impl Mapping {
    pub(crate) fn map(fd: RawFd, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of the socket's rings; the kernel checks `len`
        // against the rings' size. MAP_POPULATE faults the pages in now, not per frame.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("mmap of the rings: {e}")));
        }
        Ok(Mapping {
            base: base as *mut u8,
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` came from a successful mmap and nothing refers to the
        // mapping once its owner (the port) is dropped.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

/// Waits until `fd` is readable or `timeout_ms` passes (`poll(2)`); true when readable.
pub fn wait_readable(fd: RawFd, timeout_ms: i32) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    rc > 0 && pfd.revents & libc::POLLIN != 0
}

/// CLOCK_REALTIME in nanoseconds: the clock of the kernel's receive timestamps
/// (`tp_sec`/`tp_nsec`), so a sender's stamp and a receiver's can be compared.
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Takes the error the kernel flagged on socket `fd` (`SO_ERROR`), if any, so a poller
/// stops reporting it.
pub fn take_error(fd: RawFd) -> Option<io::Error> {
    match getsockopt::<libc::c_int>(fd, libc::SOL_SOCKET, libc::SO_ERROR) {
        Ok(0) => None,
        Ok(e) => Some(io::Error::from_raw_os_error(e)),
        Err(e) => Some(e),
    }
}
