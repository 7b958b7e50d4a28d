//! Interface queries by ioctl (index, hardware address, MTU, link state), on any socket
//! of the interface's namespace: a [`crate::Port`]'s, or the switch's AF_XDP ports'.

use std::io;
use std::os::fd::RawFd;

use crate::sys;

/// [`crate::Port::link_up`] for `ifname`, with ioctls on `fd` (any socket of its namespace).
pub fn link_up(fd: RawFd, ifname: &str) -> bool {
    let Ok(mut req) = sys::ifreq(ifname) else {
        return false;
    };
    if sys::ifioctl(fd, libc::SIOCGIFFLAGS as _, &mut req, "SIOCGIFFLAGS").is_err() {
        return false;
    }
    // SAFETY: SIOCGIFFLAGS wrote the flags member.
    let flags = unsafe { req.ifr_ifru.ifru_flags } as libc::c_int;
    if flags & libc::IFF_UP == 0 {
        return false;
    }
    match sys::carrier(fd, ifname) {
        Some(carrier) => carrier,
        None => flags & libc::IFF_RUNNING != 0,
    }
}

/// An Ethernet interface's index, hardware address and MTU, read with ioctls on `s` (any
/// socket of the interface's namespace); an error for another link type.
pub fn describe(s: RawFd, ifname: &str) -> io::Result<(i32, [u8; 6], usize)> {
    let mut req = sys::ifreq(ifname)?;
    sys::ifioctl(s, libc::SIOCGIFINDEX as _, &mut req, "SIOCGIFINDEX")?;
    // SAFETY: SIOCGIFINDEX wrote the index member.
    let ifindex = unsafe { req.ifr_ifru.ifru_ifindex };
    let mut req = sys::ifreq(ifname)?;
    sys::ifioctl(s, libc::SIOCGIFHWADDR as _, &mut req, "SIOCGIFHWADDR")?;
    // SAFETY: SIOCGIFHWADDR wrote the hwaddr member.
    let hw = unsafe { req.ifr_ifru.ifru_hwaddr };
    if hw.sa_family != libc::ARPHRD_ETHER {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "{ifname} is not an Ethernet interface (ARPHRD {})",
                hw.sa_family
            ),
        ));
    }
    let mut mac = [0u8; 6];
    for (d, s) in mac.iter_mut().zip(hw.sa_data.iter()) {
        *d = *s as u8;
    }
    let mut req = sys::ifreq(ifname)?;
    sys::ifioctl(s, libc::SIOCGIFMTU as _, &mut req, "SIOCGIFMTU")?;
    // SAFETY: SIOCGIFMTU wrote the mtu member.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu }.max(68) as usize;
    Ok((ifindex, mac, mtu))
}
