//! The walks over TPACKET_V2 and TPACKET_V3 receive rings and the slots of the
//! transmit ring.
//!
//! The kernel and this process share the rings' memory; ownership of each piece moves
//! through a status word: a receive *block* (V3) or *slot* (V2) belongs to the kernel
//! while its status lacks `TP_STATUS_USER`, a transmit *slot* belongs to this process while
//! its `tp_status` is `TP_STATUS_AVAILABLE`. Status words are read with an acquire fence
//! after them and written with a release fence before them, so the frame bytes are never
//! read before the kernel finished writing them, nor handed back before we finished.
//! (packet(7), Documentation/networking/packet_mmap.rst.)

use std::ptr::{self, addr_of, addr_of_mut};
use std::sync::atomic::{fence, Ordering};

use libc::{tpacket3_hdr, tpacket_block_desc};

/// Where a transmit slot's frame starts: after the `tpacket3_hdr`, aligned
/// (`tp_hdrlen - sizeof(struct sockaddr_ll)` in the kernel's `tpacket_parse_header`).
pub(super) const TX_DATA_OFFSET: usize =
    libc::TPACKET3_HDRLEN - std::mem::size_of::<libc::sockaddr_ll>();

/// One received frame's metadata besides its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxMeta {
    /// The kernel's receive timestamp, CLOCK_REALTIME nanoseconds.
    pub timestamp_ns: u64,
    /// The frame's length on the wire (more than the bytes given when truncated).
    pub wire_len: u32,
}

/// The receive ring: `block_nr` blocks of `block_size` bytes, read in order.
pub(super) struct RxRing {
    /// The ring's first block in the mapping.
    pub(super) base: *mut u8,
    /// Bytes per block.
    pub(super) block_size: usize,
    /// Blocks in the ring.
    pub(super) block_nr: usize,
    /// The block being read (or the next to look at when `left == 0`).
    block: usize,
    /// Offset in the block of the next frame's header.
    next: usize,
    /// Frames of the current block not read yet; 0 when no block is open.
    left: u32,
}

/// What the walk found for one frame.
pub(super) enum Rx<'a> {
    /// A whole frame (a VLAN tag the kernel stripped put back).
    Frame(&'a [u8], RxMeta),
    /// A frame the ring could not hold whole (`tp_snaplen < tp_len`): skipped.
    Truncated,
}

/// The fields of a receive frame's header both ring versions have.
struct FrameHdr {
    /// Bytes of the frame in the ring.
    snaplen: u32,
    /// Bytes of the frame on the wire (more than `snaplen` when cut short).
    len: u32,
    /// The slot's status word (`TP_STATUS_*`: VLAN valid, checksum not ready, ...).
    status: u32,
    /// Offset of the frame from the header.
    mac: usize,
    /// The kernel's receive timestamp: seconds.
    sec: u32,
    /// The kernel's receive timestamp: nanoseconds.
    nsec: u32,
    /// The VLAN tag the kernel took off the frame (with `TP_STATUS_VLAN_VALID`).
    tci: u16,
    /// That tag's TPID (with `TP_STATUS_VLAN_TPID_VALID`; 802.1Q otherwise).
    tpid: u16,
}

/// The frame whose header starts at `start` (with `room` bytes from `start` ours, and
/// the bytes from `headroom_start` to the frame's start free), made whole: a VLAN tag
/// the kernel took off put back, a checksum left to offload completed.
///
/// # Safety
///
/// `[start, start + room)` is memory of the ring this process owns now, and stays so
/// for `'a`.
unsafe fn frame<'a>(start: *mut u8, room: usize, headroom_start: usize, h: &FrameHdr) -> Rx<'a> {
    let meta = RxMeta {
        timestamp_ns: h.sec as u64 * 1_000_000_000 + h.nsec as u64,
        wire_len: h.len,
    };
    let snaplen = h.snaplen as usize;
    if h.snaplen < h.len || h.mac + snaplen > room || snaplen < 14 {
        return Rx::Truncated;
    }
    let frame = if h.status & libc::TP_STATUS_VLAN_VALID != 0 && h.mac >= headroom_start + 4 {
        // The kernel took the 802.1Q tag off (skb_vlan_untag runs before the packet
        // taps): put it back between the addresses and the EtherType, in the free
        // bytes before the frame, so the switch sees the frame as it was on the wire.
        let tpid = if h.status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
            h.tpid
        } else {
            0x8100
        };
        // SAFETY: [mac - 4, mac + snaplen) is ours (checked above; mac - 4 is past the
        // header and its sockaddr_ll).
        unsafe {
            let at = start.add(h.mac - 4);
            ptr::copy(start.add(h.mac), at, 12);
            let tag = at.add(12);
            ptr::write(tag, (tpid >> 8) as u8);
            ptr::write(tag.add(1), tpid as u8);
            ptr::write(tag.add(2), (h.tci >> 8) as u8);
            ptr::write(tag.add(3), h.tci as u8);
            std::slice::from_raw_parts_mut(at, snaplen + 4)
        }
    } else {
        // SAFETY: [mac, mac + snaplen) is ours (checked above).
        unsafe { std::slice::from_raw_parts_mut(start.add(h.mac), snaplen) }
    };
    if h.status & libc::TP_STATUS_CSUMNOTREADY != 0 {
        super::csum::complete(frame);
    }
    let wire_len = h.len + (frame.len() - snaplen) as u32;
    Rx::Frame(frame, RxMeta { wire_len, ..meta })
}

/// A TPACKET_V2 receive ring: fixed slots, each handed over (and woken for) alone.
pub(super) struct RxRingV2 {
    /// The ring's first slot in the mapping.
    pub(super) base: *mut u8,
    /// Bytes per slot.
    pub(super) frame_size: usize,
    /// Slots in the ring.
    pub(super) frame_nr: usize,
    /// The next slot to read.
    next: usize,
}

impl RxRingV2 {
    pub(super) fn new(base: *mut u8, frame_size: usize, frame_nr: usize) -> RxRingV2 {
        RxRingV2 {
            base,
            frame_size,
            frame_nr,
            next: 0,
        }
    }

    fn hdr(&self, i: usize) -> *mut libc::tpacket2_hdr {
        self.base.wrapping_add(i * self.frame_size) as *mut libc::tpacket2_hdr
    }

    pub(super) fn ready(&self) -> bool {
        // SAFETY: a slot header in the mapping; the kernel writes its status word.
        let status = unsafe { ptr::read_volatile(addr_of!((*self.hdr(self.next)).tp_status)) };
        status & libc::TP_STATUS_USER != 0
    }

    pub(super) fn walk(&mut self, max: usize, mut f: impl FnMut(Rx<'_>)) -> usize {
        let mut n = 0;
        while n < max && self.ready() {
            fence(Ordering::Acquire);
            let hdr = self.hdr(self.next);
            // SAFETY: the slot is ours (TP_STATUS_USER seen, acquire fence after).
            let h = unsafe {
                FrameHdr {
                    snaplen: ptr::read(addr_of!((*hdr).tp_snaplen)),
                    len: ptr::read(addr_of!((*hdr).tp_len)),
                    status: ptr::read(addr_of!((*hdr).tp_status)),
                    mac: ptr::read(addr_of!((*hdr).tp_mac)) as usize,
                    sec: ptr::read(addr_of!((*hdr).tp_sec)),
                    nsec: ptr::read(addr_of!((*hdr).tp_nsec)),
                    tci: ptr::read(addr_of!((*hdr).tp_vlan_tci)),
                    tpid: ptr::read(addr_of!((*hdr).tp_vlan_tpid)),
                }
            };
            // SAFETY: the whole slot is ours until its status is written back.
            f(unsafe { frame(hdr as *mut u8, self.frame_size, libc::TPACKET2_HDRLEN, &h) });
            fence(Ordering::Release);
            // SAFETY: handing the slot back.
            unsafe { ptr::write_volatile(addr_of_mut!((*hdr).tp_status), libc::TP_STATUS_KERNEL) };
            self.next = (self.next + 1) % self.frame_nr;
            n += 1;
        }
        n
    }
}

impl RxRing {
    pub(super) fn new(base: *mut u8, block_size: usize, block_nr: usize) -> RxRing {
        RxRing {
            base,
            block_size,
            block_nr,
            block: 0,
            next: 0,
            left: 0,
        }
    }

    fn block_desc(&self, i: usize) -> *mut tpacket_block_desc {
        // SAFETY (of the callers' dereferences): i < block_nr, inside the mapping.
        self.base.wrapping_add(i * self.block_size) as *mut tpacket_block_desc
    }

    /// Whether a frame is waiting (a block is open or the next one is ours).
    pub(super) fn ready(&self) -> bool {
        self.left > 0 || self.block_is_user(self.block)
    }

    fn block_is_user(&self, i: usize) -> bool {
        let bd = self.block_desc(i);
        // SAFETY: the descriptor lies in the mapping; the kernel writes the status word
        // concurrently, hence the volatile read.
        let status = unsafe { ptr::read_volatile(addr_of!((*bd).hdr.bh1.block_status)) };
        status & libc::TP_STATUS_USER != 0
    }

    /// Calls `f` with up to `max` frames; returns how many frames were walked (truncated
    /// ones included, so the caller's budget bounds the work).
    pub(super) fn walk(&mut self, max: usize, mut f: impl FnMut(Rx<'_>)) -> usize {
        let mut n = 0;
        while n < max {
            if self.left == 0 {
                if !self.block_is_user(self.block) {
                    break;
                }
                fence(Ordering::Acquire);
                let bd = self.block_desc(self.block);
                // SAFETY: the block is ours (TP_STATUS_USER seen, acquire fence after).
                let (num, first) = unsafe {
                    (
                        ptr::read(addr_of!((*bd).hdr.bh1.num_pkts)),
                        ptr::read(addr_of!((*bd).hdr.bh1.offset_to_first_pkt)),
                    )
                };
                if num == 0 {
                    self.release_block();
                    continue;
                }
                self.left = num;
                self.next = first as usize;
            }
            if self.next + std::mem::size_of::<tpacket3_hdr>() > self.block_size {
                // An offset out of the block: never from a sane kernel; drop the rest
                // of the block rather than read outside it.
                self.release_block();
                continue;
            }
            let block = self.base.wrapping_add(self.block * self.block_size);
            let hdr = block.wrapping_add(self.next) as *mut tpacket3_hdr;
            // SAFETY: the kernel wrote this header inside our block (offsets it gave).
            let (next_offset, snaplen, len, status, mac, sec, nsec, tci, tpid) = unsafe {
                (
                    ptr::read(addr_of!((*hdr).tp_next_offset)),
                    ptr::read(addr_of!((*hdr).tp_snaplen)),
                    ptr::read(addr_of!((*hdr).tp_len)),
                    ptr::read(addr_of!((*hdr).tp_status)),
                    ptr::read(addr_of!((*hdr).tp_mac)) as usize,
                    ptr::read(addr_of!((*hdr).tp_sec)),
                    ptr::read(addr_of!((*hdr).tp_nsec)),
                    ptr::read(addr_of!((*hdr).hv1.tp_vlan_tci)),
                    ptr::read(addr_of!((*hdr).hv1.tp_vlan_tpid)),
                )
            };
            let h = FrameHdr {
                snaplen,
                len,
                status,
                mac,
                sec,
                nsec,
                tci: tci as u16,
                tpid,
            };
            // SAFETY: the header lies in our block, `block_size - next` bytes from its
            // start are ours too.
            f(unsafe {
                frame(
                    hdr as *mut u8,
                    self.block_size - self.next,
                    libc::TPACKET3_HDRLEN,
                    &h,
                )
            });
            n += 1;
            self.left -= 1;
            if self.left == 0 {
                self.release_block();
            } else {
                self.next += next_offset as usize;
            }
        }
        n
    }

    /// Hands the current block back to the kernel and moves to the next.
    fn release_block(&mut self) {
        let bd = self.block_desc(self.block);
        fence(Ordering::Release);
        // SAFETY: the block is ours until this write.
        unsafe {
            ptr::write_volatile(
                addr_of_mut!((*bd).hdr.bh1.block_status),
                libc::TP_STATUS_KERNEL,
            )
        };
        self.left = 0;
        self.block = (self.block + 1) % self.block_nr;
    }
}

/// The layout of a transmit slot's header, by ring version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TxLayout {
    /// Offset of `tp_status` in the slot's header.
    status: usize,
    /// Offset of `tp_len`.
    len: usize,
    /// Offset of `tp_snaplen`.
    snaplen: usize,
    /// Where the frame starts (`tp_hdrlen - sizeof(struct sockaddr_ll)` in the
    /// kernel's `tpacket_parse_header`).
    pub(super) data: usize,
}

impl TxLayout {
    pub(super) const V3: TxLayout = TxLayout {
        status: std::mem::offset_of!(tpacket3_hdr, tp_status),
        len: std::mem::offset_of!(tpacket3_hdr, tp_len),
        snaplen: std::mem::offset_of!(tpacket3_hdr, tp_snaplen),
        data: TX_DATA_OFFSET,
    };
    pub(super) const V2: TxLayout = TxLayout {
        status: std::mem::offset_of!(libc::tpacket2_hdr, tp_status),
        len: std::mem::offset_of!(libc::tpacket2_hdr, tp_len),
        snaplen: std::mem::offset_of!(libc::tpacket2_hdr, tp_snaplen),
        data: libc::TPACKET2_HDRLEN - std::mem::size_of::<libc::sockaddr_ll>(),
    };
}

/// The transmit ring: `frame_nr` slots of `frame_size` bytes, filled in order; the
/// kernel sends them in the same order on `send(2)`.
pub(super) struct TxRing {
    /// The ring's first slot in the mapping (after the receive ring).
    pub(super) base: *mut u8,
    /// Bytes per slot, header included.
    pub(super) frame_size: usize,
    /// Slots in the ring.
    pub(super) frame_nr: usize,
    /// Where the header's fields and the frame sit, for the ring's version.
    layout: TxLayout,
    /// The next slot to fill (the kernel's own head follows the same sequence).
    head: usize,
    /// Slots marked SEND_REQUEST since the last successful `send(2)`.
    pub(super) pending: usize,
}

/// Why a frame was not queued.
pub(super) enum TxFull {
    /// Every slot is waiting for the kernel.
    Ring,
    /// The frame does not fit a slot.
    TooBig,
}

impl TxRing {
    pub(super) fn new(
        base: *mut u8,
        frame_size: usize,
        frame_nr: usize,
        layout: TxLayout,
    ) -> TxRing {
        TxRing {
            base,
            frame_size,
            frame_nr,
            layout,
            head: 0,
            pending: 0,
        }
    }

    /// The largest frame a slot holds.
    pub(super) fn max_frame(&self) -> usize {
        self.frame_size - self.layout.data
    }

    /// Copies `frame` into the next free slot and marks it for sending.
    pub(super) fn push(&mut self, frame: &[u8]) -> Result<(), TxFull> {
        if frame.len() > self.max_frame() {
            return Err(TxFull::TooBig);
        }
        if self.status(self.head) != libc::TP_STATUS_AVAILABLE {
            // SENDING or SEND_REQUEST: the kernel still has it (WRONG_FORMAT cannot stay:
            // PACKET_LOSS makes the kernel skip a bad slot and hand it back).
            return Err(TxFull::Ring);
        }
        fence(Ordering::Acquire);
        let slot = self.slot(self.head);
        let l = self.layout;
        // SAFETY: the slot is ours (AVAILABLE seen); the frame fits (checked above);
        // the header fields are aligned u32s at offsets of the version's header.
        unsafe {
            ptr::copy_nonoverlapping(frame.as_ptr(), slot.add(l.data), frame.len());
            ptr::write(slot.add(l.len) as *mut u32, frame.len() as u32);
            ptr::write(slot.add(l.snaplen) as *mut u32, frame.len() as u32);
            fence(Ordering::Release);
            ptr::write_volatile(slot.add(l.status) as *mut u32, libc::TP_STATUS_SEND_REQUEST);
        }
        self.head = (self.head + 1) % self.frame_nr;
        self.pending += 1;
        Ok(())
    }

    fn slot(&self, i: usize) -> *mut u8 {
        self.base.wrapping_add(i * self.frame_size)
    }

    fn status(&self, i: usize) -> u32 {
        // SAFETY: a slot header in the mapping; the kernel writes the status word.
        unsafe { ptr::read_volatile(self.slot(i).add(self.layout.status) as *const u32) }
    }

    fn prev(&self, i: usize) -> usize {
        (i + self.frame_nr - 1) % self.frame_nr
    }

    /// After a `send(2)`: nothing is pending when the last slot queued has been taken
    /// (the kernel takes slots in order, and only during `send(2)`).
    pub(super) fn settle(&mut self) {
        if self.pending > 0 && self.status(self.prev(self.head)) != libc::TP_STATUS_SEND_REQUEST {
            self.pending = 0;
        }
    }

    /// Takes back the slots queued and not taken by the kernel (the marked slots just
    /// before `head`: the kernel takes them in order, and only during `send(2)`, so
    /// none is being read now); returns how many and their bytes.
    pub(super) fn discard_pending(&mut self) -> (usize, u64) {
        let mut n = 0;
        let mut bytes = 0;
        while n < self.frame_nr && self.status(self.prev(self.head)) == libc::TP_STATUS_SEND_REQUEST
        {
            self.head = self.prev(self.head);
            let slot = self.slot(self.head);
            // SAFETY: a slot in the mapping that we marked and the kernel has not taken.
            unsafe {
                bytes += ptr::read(slot.add(self.layout.len) as *const u32) as u64;
                ptr::write_volatile(
                    slot.add(self.layout.status) as *mut u32,
                    libc::TP_STATUS_AVAILABLE,
                );
            }
            n += 1;
        }
        self.pending = 0;
        (n, bytes)
    }
}
