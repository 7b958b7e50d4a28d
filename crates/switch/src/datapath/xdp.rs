//! The kernel side of an AF_XDP port (issue 17): an XSKMAP and the XDP program that
//! redirects an interface's frames into the AF_XDP socket the map holds for their
//! receive queue, attached through a BPF link.
//!
//! Why AF_XDP: a C prototype forwarding through AF_XDP on veth reached 0.96–1.08 of the
//! Linux bridge's 64-byte throughput where the AF_PACKET port reaches about 0.6
//! (BENCHMARKS.md, "AF_XDP: a prototype forwarder against the bridge";
//! `crates/switch/experiments/afxdp/`). This module is the first piece of that port in
//! Rust; the sockets and rings come next.
//!
//! The program is five instructions, `bpf_redirect_map(&map, ctx->rx_queue_index,
//! XDP_PASS)`: a frame on a queue with no socket goes on to the kernel's stack. It is
//! loaded with `bpf(2)` directly, as the prototype's `raw` mode does: the Rust BPF
//! loaders want an ELF object, which needs a BPF compiler this project does not
//! otherwise need, and the C ones (libbpf, libxdp) would make the switch link a C
//! library for three system calls.
//!
//! The link holds the program on the interface: dropping [`Redirect`] closes it, and
//! the kernel detaches the program (also when the process dies). An interface already
//! running an XDP program is refused (`EBUSY`), not taken over.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Where the program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    /// In the driver (`XDP_FLAGS_DRV_MODE`): veth and most NIC drivers; the fast one.
    Native,
    /// On the kernel's socket buffers (`XDP_FLAGS_SKB_MODE`): any interface, slower.
    Generic,
}

/// The program attached to one interface, with its map.
#[derive(Debug)]
pub struct Redirect {
    map: OwnedFd,
    // Kept for as long as the link: the link holds its own reference, but the fd makes
    // the program visible to tools (bpftool) as this process's.
    _prog: OwnedFd,
    _link: OwnedFd,
    ifname: String,
    queues: u32,
}

// From <linux/bpf.h> and <linux/if_link.h>.
const BPF_MAP_CREATE: libc::c_int = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_int = 2;
const BPF_MAP_DELETE_ELEM: libc::c_int = 3;
const BPF_PROG_LOAD: libc::c_int = 5;
const BPF_LINK_CREATE: libc::c_int = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const BPF_PSEUDO_MAP_FD: u8 = 1;
const XDP_PASS: i32 = 2;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// One instruction (`struct bpf_insn`): the registers share a byte, destination in the
/// low nibble.
#[repr(C)]
#[derive(Clone, Copy)]
struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: dst | (src << 4),
        off,
        imm,
    }
}

/// `r2 = ctx->rx_queue_index; r1 = map; r3 = XDP_PASS; r0 = bpf_redirect_map(r1, r2,
/// r3); exit`.
fn program(map_fd: RawFd) -> [Insn; 6] {
    [
        // BPF_LDX | BPF_W | BPF_MEM: rx_queue_index is the fifth u32 of `struct xdp_md`.
        insn(0x61, 2, 1, 16, 0),
        // BPF_LD | BPF_DW | BPF_IMM with the map's descriptor (two slots).
        insn(0x18, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
        insn(0, 0, 0, 0, 0),
        // BPF_ALU64 | BPF_MOV | BPF_K
        insn(0xb7, 3, 0, 0, XDP_PASS),
        // BPF_JMP | BPF_CALL
        insn(0x85, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
        // BPF_JMP | BPF_EXIT
        insn(0x95, 0, 0, 0, 0),
    ]
}

#[repr(C)]
#[derive(Default)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
}

#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
}

#[repr(C)]
#[derive(Default)]
struct LinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

#[repr(C)]
#[derive(Default)]
struct MapElem {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// `bpf(cmd, attr, sizeof attr)`: a new descriptor, or 0 for commands that return none.
fn bpf<T>(cmd: libc::c_int, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a valid, initialised `#[repr(C)]` prefix of `union bpf_attr` for
    // `cmd`, of the size passed (the kernel zero-fills the rest); pointers inside it
    // point to memory alive for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut T as *mut libc::c_void,
            mem::size_of::<T>() as libc::c_uint,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn fd(rc: libc::c_long) -> OwnedFd {
    // SAFETY: `rc` is a descriptor the kernel just gave this process, owned by no one.
    unsafe { OwnedFd::from_raw_fd(rc as RawFd) }
}

fn context(what: &str, ifname: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what} for {ifname}: {e}"))
}

impl Redirect {
    /// Loads the program with a map of `queues` entries and attaches it to `ifname`.
    /// Needs CAP_BPF and CAP_NET_ADMIN (root).
    pub fn attach(ifname: &str, mode: XdpMode, queues: u32) -> io::Result<Redirect> {
        let req = afpacket::sys::ifreq(ifname)?;
        // SAFETY: `ifr_name` is NUL-terminated (`ifreq` checks the length).
        let ifindex = unsafe { libc::if_nametoindex(req.ifr_name.as_ptr()) };
        if ifindex == 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("{ifname}: {e}")));
        }
        let mut create = MapCreate {
            map_type: BPF_MAP_TYPE_XSKMAP,
            key_size: 4,
            value_size: 4,
            max_entries: queues.max(1),
        };
        let map = fd(bpf(BPF_MAP_CREATE, &mut create)
            .map_err(|e| context("creating the XSKMAP", ifname, e))?);
        let insns = program(map.as_raw_fd());
        let mut log = vec![0u8; 16 * 1024];
        let license = c"GPL";
        let mut load = ProgLoad {
            prog_type: BPF_PROG_TYPE_XDP,
            insn_cnt: insns.len() as u32,
            insns: insns.as_ptr() as u64,
            license: license.as_ptr() as u64,
            log_level: 1,
            log_size: log.len() as u32,
            log_buf: log.as_mut_ptr() as u64,
        };
        let prog = fd(bpf(BPF_PROG_LOAD, &mut load).map_err(|e| {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let verifier = String::from_utf8_lossy(&log[..end]);
            context(
                "loading the XDP program",
                ifname,
                io::Error::new(e.kind(), format!("{e}; verifier: {}", verifier.trim())),
            )
        })?);
        let mut link = LinkCreate {
            prog_fd: prog.as_raw_fd() as u32,
            target_ifindex: ifindex,
            attach_type: BPF_XDP,
            flags: match mode {
                XdpMode::Native => XDP_FLAGS_DRV_MODE,
                XdpMode::Generic => XDP_FLAGS_SKB_MODE,
            },
        };
        let link = fd(bpf(BPF_LINK_CREATE, &mut link).map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::EBUSY) {
                " (another XDP program is attached)"
            } else if e.raw_os_error() == Some(libc::EOPNOTSUPP) && mode == XdpMode::Native {
                " (the driver has no native XDP: try generic mode)"
            } else {
                ""
            };
            context(
                "attaching the XDP program",
                ifname,
                io::Error::new(e.kind(), format!("{e}{hint}")),
            )
        })?);
        Ok(Redirect {
            map,
            _prog: prog,
            _link: link,
            ifname: ifname.to_string(),
            queues: queues.max(1),
        })
    }

    /// Sends receive queue `queue`'s frames to the AF_XDP socket `socket` (bound to
    /// that queue of this interface); the map refuses any other kind of descriptor.
    pub fn set_socket(&self, queue: u32, socket: RawFd) -> io::Result<()> {
        self.check_queue(queue)?;
        let key = queue;
        let value = socket as u32;
        let mut elem = MapElem {
            map_fd: self.map.as_raw_fd() as u32,
            key: &key as *const u32 as u64,
            value: &value as *const u32 as u64,
            ..MapElem::default()
        };
        bpf(BPF_MAP_UPDATE_ELEM, &mut elem)
            .map(drop)
            .map_err(|e| context(&format!("queue {queue}'s socket"), &self.ifname, e))
    }

    /// Queue `queue`'s frames go to the kernel's stack again.
    pub fn clear_socket(&self, queue: u32) -> io::Result<()> {
        self.check_queue(queue)?;
        let key = queue;
        let mut elem = MapElem {
            map_fd: self.map.as_raw_fd() as u32,
            key: &key as *const u32 as u64,
            ..MapElem::default()
        };
        bpf(BPF_MAP_DELETE_ELEM, &mut elem)
            .map(drop)
            .map_err(|e| context(&format!("clearing queue {queue}"), &self.ifname, e))
    }

    fn check_queue(&self, queue: u32) -> io::Result<()> {
        if queue < self.queues {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: queue {queue}, but the map has {} entries",
                    self.ifname, self.queues
                ),
            ))
        }
    }

    pub fn ifname(&self) -> &str {
        &self.ifname
    }
}

#[cfg(test)]
mod tests {
    //! On a veth pair in a fresh namespace (root and iproute2 needed).
    use super::*;
    use afpacket::netns::Netns;

    fn xdp_shown(ns: &Netns, ifname: &str) -> String {
        let out = std::process::Command::new("ip")
            .args(["-n", ns.name(), "link", "show", "dev", ifname])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn veth() -> Netns {
        let ns = Netns::new("pxdp").unwrap();
        ns.ip("link add name a type veth peer name b\nlink set dev a up\nlink set dev b up\n")
            .unwrap();
        ns
    }

    #[test]
    fn the_program_is_attached_while_the_redirect_lives_and_gone_after() {
        let ns = veth();
        for (mode, shown) in [(XdpMode::Native, "xdp "), (XdpMode::Generic, "xdpgeneric")] {
            assert!(!xdp_shown(&ns, "a").contains("prog/xdp"));
            let r = ns
                .enter(|| Redirect::attach("a", mode, 1))
                .unwrap()
                .unwrap();
            let link = xdp_shown(&ns, "a");
            assert!(
                link.contains(shown) && link.contains("prog/xdp"),
                "{mode:?}: {link}"
            );
            // A second program on the same interface is refused, the first one kept.
            let e = ns
                .enter(|| Redirect::attach("a", mode, 1))
                .unwrap()
                .unwrap_err();
            assert!(e.to_string().contains("another XDP program"), "{e}");
            assert!(xdp_shown(&ns, "a").contains("prog/xdp"));
            drop(r);
            assert!(
                !xdp_shown(&ns, "a").contains("prog/xdp"),
                "{mode:?}: still attached"
            );
        }
    }

    #[test]
    fn the_map_takes_only_xdp_sockets_and_known_queues() {
        let ns = veth();
        let r = ns
            .enter(|| Redirect::attach("a", XdpMode::Native, 1))
            .unwrap()
            .unwrap();
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let e = r.set_socket(0, udp.as_raw_fd()).unwrap_err();
        assert!(e.to_string().contains("queue 0's socket for a"), "{e}");
        let e = r.set_socket(1, udp.as_raw_fd()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        // Clearing a queue with no socket changes nothing; an unknown queue is refused.
        r.clear_socket(0).unwrap();
        assert_eq!(
            r.clear_socket(5).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn unknown_interfaces_are_named_in_the_error() {
        let e = Redirect::attach("pxdp-none0", XdpMode::Native, 1).unwrap_err();
        assert!(e.to_string().contains("pxdp-none0"), "{e}");
        let e = Redirect::attach("", XdpMode::Native, 1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    }
}
