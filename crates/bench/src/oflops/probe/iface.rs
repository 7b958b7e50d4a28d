//! The interfaces probes go through: their index and address, and what timestamping
//! they offer (hardware stamps switched on where the NIC has them).

use std::ffi::CString;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{last_err, sys, ProbeError};

/// A network interface of this namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iface {
    /// Its name, as `ip link` shows it.
    pub name: String,
    /// Its ifindex, which `AF_PACKET` binds to.
    pub index: u32,
    /// Its MAC address (a default source address for frames sent on it).
    pub mac: [u8; 6],
}

impl Iface {
    /// Looks an interface up by name (its index, and its MAC from sysfs).
    pub fn lookup(name: &str) -> Result<Iface, ProbeError> {
        let c = CString::new(name)
            .map_err(|_| ProbeError::Invalid(format!("bad interface name {name:?}")))?;
        // SAFETY: c is a valid NUL-terminated string.
        let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
        if index == 0 {
            return Err(ProbeError::Invalid(format!(
                "no interface {name:?} in this namespace"
            )));
        }
        let text =
            std::fs::read_to_string(format!("/sys/class/net/{name}/address")).unwrap_or_default();
        let mac = parse_mac(text.trim()).unwrap_or([0; 6]);
        Ok(Iface {
            name: name.to_string(),
            index,
            mac,
        })
    }
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split(':');
    for b in out.iter_mut() {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// What the kernel and the NIC offer for timestamping on an interface (`ethtool -T`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsCaps {
    /// `SOF_TIMESTAMPING_*` bits the interface supports.
    pub so_timestamping: u32,
    /// The PTP hardware clock, if any.
    pub phc_index: i32,
}

impl TsCaps {
    /// Whether the NIC stamps frames in hardware (both directions).
    pub fn hardware(&self) -> bool {
        let hw = sys::SOF_TX_HARDWARE | sys::SOF_RX_HARDWARE | sys::SOF_RAW_HARDWARE;
        self.so_timestamping & hw == hw
    }
    /// Whether the driver stamps transmitted frames in software (veth does).
    pub fn software_tx(&self) -> bool {
        self.so_timestamping & sys::SOF_TX_SOFTWARE != 0
    }
}

/// Asks the driver of `name` what timestamps it offers (`ETHTOOL_GET_TS_INFO`).
pub fn timestamping_caps(name: &str) -> Result<TsCaps, ProbeError> {
    #[repr(C)]
    struct TsInfo {
        /// `ETHTOOL_GET_TS_INFO`.
        cmd: u32,
        /// The `SOF_TIMESTAMPING_*` flags the driver supports.
        so_timestamping: u32,
        /// Its PTP hardware clock, -1 for none.
        phc_index: i32,
        /// Hardware transmit stamping modes (unused; the kernel's layout).
        tx_types: u32,
        /// Reserved by the kernel.
        tx_reserved: [u32; 3],
        /// Hardware receive filters (unused; the kernel's layout).
        rx_filters: u32,
        /// Reserved by the kernel.
        rx_reserved: [u32; 3],
    }
    let mut info = TsInfo {
        cmd: sys::ETHTOOL_GET_TS_INFO,
        so_timestamping: 0,
        phc_index: -1,
        tx_types: 0,
        tx_reserved: [0; 3],
        rx_filters: 0,
        rx_reserved: [0; 3],
    };
    let fd = dgram_socket()?;
    let mut ifr = ifreq(name)?;
    ifr.ifr_ifru.ifru_data = (&mut info as *mut TsInfo).cast();
    // SAFETY: ifr points at info, which outlives the call and has the layout the ioctl writes.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), sys::SIOCETHTOOL as _, &mut ifr) };
    if r < 0 {
        return Err(last_err(format!("ETHTOOL_GET_TS_INFO on {name}")));
    }
    Ok(TsCaps {
        so_timestamping: info.so_timestamping,
        phc_index: info.phc_index,
    })
}

/// Turns on hardware timestamping of all frames on `name` (`SIOCSHWTSTAMP`), when the NIC
/// has it. Returns whether it is on.
pub(super) fn enable_hw_stamps(name: &str) -> bool {
    #[repr(C)]
    struct HwConfig {
        /// `struct hwtstamp_config`'s flags: none.
        flags: i32,
        /// Stamp every frame sent.
        tx_type: i32,
        /// Stamp every frame received.
        rx_filter: i32,
    }
    match timestamping_caps(name) {
        Ok(c) if c.hardware() => {}
        _ => return false,
    }
    let mut cfg = HwConfig {
        flags: 0,
        tx_type: sys::HWTSTAMP_TX_ON,
        rx_filter: sys::HWTSTAMP_FILTER_ALL,
    };
    let (Ok(fd), Ok(mut ifr)) = (dgram_socket(), ifreq(name)) else {
        return false;
    };
    ifr.ifr_ifru.ifru_data = (&mut cfg as *mut HwConfig).cast();
    // SAFETY: as in timestamping_caps; cfg outlives the call.
    unsafe { libc::ioctl(fd.as_raw_fd(), sys::SIOCSHWTSTAMP as _, &mut ifr) == 0 }
}

pub(super) fn dgram_socket() -> Result<OwnedFd, ProbeError> {
    // SAFETY: plain socket(2); the fd is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(last_err("socket(AF_INET) for an ioctl"));
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(super) fn ifreq(name: &str) -> Result<libc::ifreq, ProbeError> {
    // SAFETY: ifreq is plain data; all zeros is valid.
    let mut ifr: libc::ifreq = unsafe { mem::zeroed() };
    if name.len() >= ifr.ifr_name.len() {
        return Err(ProbeError::Invalid(format!(
            "interface name {name:?} too long"
        )));
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}
