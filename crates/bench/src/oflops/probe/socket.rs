//! The packet sockets under the senders and the capture: bound to an interface,
//! timestamping on, and a receive that returns a frame with its stamps and VLAN tag.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::iface::Iface;
use super::stream::TsSource;
use super::{last_err, sys, ts_ns, ProbeError};

pub(super) fn sockaddr_ll(index: u32, protocol: u16) -> libc::sockaddr_ll {
    // SAFETY: plain data; zeros are valid.
    let mut sa: libc::sockaddr_ll = unsafe { mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_protocol = protocol.to_be();
    sa.sll_ifindex = index as i32;
    sa
}

pub(super) fn setsockopt_int(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: v is a c_int that lives through the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Opens an `AF_PACKET` raw socket bound to `iface`, with timestamping on.
pub(super) fn packet_socket(
    iface: &Iface,
    protocol: u16,
    ts_flags: u32,
) -> Result<OwnedFd, ProbeError> {
    // SAFETY: plain socket(2).
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::c_int::from(protocol.to_be()),
        )
    };
    if fd < 0 {
        return Err(last_err(format!(
            "socket(AF_PACKET) for {} (needs CAP_NET_RAW)",
            iface.name
        )));
    }
    // SAFETY: fresh descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let sa = sockaddr_ll(iface.index, protocol);
    // SAFETY: sa is a valid sockaddr_ll of the given size.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_ll).cast(),
            mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(last_err(format!("bind AF_PACKET to {}", iface.name)));
    }
    let big = 16 << 20;
    if setsockopt_int(&fd, libc::SOL_SOCKET, sys::SO_RCVBUFFORCE, big).is_err() {
        let _ = setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, big);
    }
    if setsockopt_int(&fd, libc::SOL_SOCKET, sys::SO_SNDBUFFORCE, 4 << 20).is_err() {
        let _ = setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, 4 << 20);
    }
    setsockopt_int(
        &fd,
        libc::SOL_SOCKET,
        sys::SO_TIMESTAMPING,
        ts_flags as libc::c_int,
    )
    .map_err(|e| ProbeError::Io {
        context: format!("SO_TIMESTAMPING on {}", iface.name),
        source: e,
    })?;
    Ok(fd)
}

/// What one `recvmsg` gave: bytes, stamps, the packet type.
pub(super) struct Received {
    /// Bytes of the frame received.
    pub(super) len: usize,
    /// `scm_timestamping.ts[0]` (software) and `ts[2]` (raw hardware), 0 when absent.
    pub(super) sw_ns: i64,
    /// The NIC's stamp (`ts[2]`), 0 when absent.
    pub(super) hw_ns: i64,
    /// `sll_pkttype`: frames this host sent (`PACKET_OUTGOING`) are told apart.
    pub(super) pkttype: u8,
    /// The 802.1Q tag the kernel took out of the frame (VLAN receive offload: veths and
    /// most NICs strip the outer tag into the packet's metadata), as (TPID, TCI).
    pub(super) vlan: Option<(u16, u16)>,
}

/// `struct tpacket_auxdata` (linux/if_packet.h).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct TpacketAuxdata {
    /// `TP_STATUS_*`: whether the VLAN fields are valid.
    tp_status: u32,
    /// The frame's length on the wire.
    tp_len: u32,
    /// Its length as captured.
    tp_snaplen: u32,
    /// Offset of the Ethernet header (unused here).
    tp_mac: u16,
    /// Offset of the network header (unused here).
    tp_net: u16,
    /// The VLAN tag the kernel took out (with `TP_STATUS_VLAN_VALID`).
    tp_vlan_tci: u16,
    /// Its TPID (with `TP_STATUS_VLAN_TPID_VALID`).
    tp_vlan_tpid: u16,
}

/// `recvmsg` with `flags`, the frame into `buf`, the stamps out of the control messages.
pub(super) fn recv_stamped(
    fd: &OwnedFd,
    buf: &mut [u8],
    flags: libc::c_int,
) -> io::Result<Received> {
    let mut cbuf = [0u64; 64];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: zeroed sockaddr_ll and msghdr are valid; all pointers below outlive the call.
    let mut sa: libc::sockaddr_ll = unsafe { mem::zeroed() };
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    msg.msg_name = (&mut sa as *mut libc::sockaddr_ll).cast();
    msg.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    msg.msg_controllen = mem::size_of_val(&cbuf) as _;
    // SAFETY: msg describes valid buffers.
    let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, flags | libc::MSG_TRUNC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Received {
        len: n as usize,
        sw_ns: 0,
        hw_ns: 0,
        pkttype: sa.sll_pkttype,
        vlan: None,
    };
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == sys::SO_TIMESTAMPING {
                let ts = libc::CMSG_DATA(c) as *const [libc::timespec; 3];
                let ts = std::ptr::read_unaligned(ts);
                out.sw_ns = ts_ns(&ts[0]);
                out.hw_ns = ts_ns(&ts[2]);
            }
            if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == sys::PACKET_AUXDATA {
                let aux = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const TpacketAuxdata);
                if aux.tp_status & sys::TP_STATUS_VLAN_VALID != 0 {
                    let tpid = if aux.tp_status & sys::TP_STATUS_VLAN_TPID_VALID != 0 {
                        aux.tp_vlan_tpid
                    } else {
                        0x8100
                    };
                    out.vlan = Some((tpid, aux.tp_vlan_tci));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(out)
}

pub(super) fn pick(sw: i64, hw: i64) -> Option<(i64, TsSource)> {
    if hw != 0 {
        Some((hw, TsSource::Hardware))
    } else if sw != 0 {
        Some((sw, TsSource::Software))
    } else {
        None
    }
}
