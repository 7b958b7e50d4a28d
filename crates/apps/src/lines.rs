//! Cache lines and huge pages: the memory the open-addressed tables share (the learning
//! switch's [`MacTable`](crate::mac_table::MacTable), routing's route index
//! ([`crate::key_index`]), the MAC index of devices and topology
//! ([`crate::net::mac_index`])), so that their speed lives here and their logic there.
//!
//! ```text
//! Slots          a line-aligned array of u64 slots: on the heap while small, mapped on
//!                its own in 2 MiB pages (MADV_HUGEPAGE) from HUGE_SLOTS up
//! prefetch_line  asks the CPU for a line ahead of a look-up (a hint, never a fault)
//! shift_back     removal from a linearly probed index without tombstones
//! ```
//!
//! Why huge pages: 64 tables of 100,000 addresses span 128 MiB, whose 4 KiB pages
//! outnumber the TLB's entries a hundredfold, so each look-up also walked the page
//! tables (see `mac_table`'s doc for the profile). Where the kernel declines, the
//! memory is ordinary (still line-aligned).

/// From this many slots (2 MiB of them) up, a table's array is huge-page backed; a
/// table growing past half of it goes straight there.
pub const HUGE_SLOTS: usize = HUGE_BYTES / 8;
pub(crate) const HUGE_BYTES: usize = 2 << 20;
/// Slots per 64-byte cache line.
pub(crate) const LINE: usize = 8;

/// Asks the CPU for the cache line holding address `at`. Only a hint: it never
/// faults and changes no memory or register the program can see, whatever the
/// address (the indexes' hints may name an array just replaced), and is never
/// dereferenced.
#[inline]
pub(crate) fn prefetch_line(at: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: see above; a prefetch reads nothing the program sees.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Removes entry `hole` of a linearly probed index of (key, slot) pairs (`pairs[2 * i]`
/// the key, 0 for empty; a power of two of pairs) whose keys start probing at
/// `home(key)`: each entry after the hole that may move into it (its home is not
/// between the hole and itself) does, and leaves the next hole (backward shift, no
/// tombstones, so probes stay as short as the load allows).
pub(crate) fn shift_back(pairs: &mut [u64], mut hole: usize, home: impl Fn(u64) -> usize) {
    let mask = pairs.len() / 2 - 1;
    let mut j = hole;
    loop {
        j = (j + 1) & mask;
        let e = pairs[2 * j];
        if e == 0 {
            break;
        }
        let h = home(e);
        let stays = if hole <= j {
            hole < h && h <= j
        } else {
            hole < h || h <= j
        };
        if !stays {
            pairs[2 * hole] = e;
            pairs[2 * hole + 1] = pairs[2 * j + 1];
            hole = j;
        }
    }
    pairs[2 * hole] = 0;
    pairs[2 * hole + 1] = 0;
}

/// A table's slot array, line-aligned: on the heap while small, a mapping of its own
/// in 2 MiB pages from [`HUGE_SLOTS`] up. Derefs to the slots.
#[derive(Debug)]
pub(crate) struct Slots {
    /// The first slot (dangling when `len` is 0) and the count, for `Deref`.
    ptr: *mut u64,
    len: usize,
    /// What owns the memory `ptr` points into.
    _own: Backing,
}

#[derive(Debug)]
enum Backing {
    None,
    Heap(#[allow(dead_code)] Vec<Line>),
    Huge(#[allow(dead_code)] huge::Region),
}

/// One cache line of slots: a heap array of them is line-aligned.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; LINE]);

// SAFETY: a Slots owns its memory alone (`ptr` points into `_own`), like a Box<[u64]>.
unsafe impl Send for Slots {}
// SAFETY: as above; `&Slots` only reads.
unsafe impl Sync for Slots {}

impl Default for Slots {
    fn default() -> Slots {
        Slots {
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            _own: Backing::None,
        }
    }
}

impl Slots {
    /// What holds the slots: `"none"`, `"heap"` or `"huge"` (a mapping of its own).
    #[cfg(test)]
    pub(crate) fn backing(&self) -> &'static str {
        match self._own {
            Backing::None => "none",
            Backing::Heap(_) => "heap",
            Backing::Huge(_) => "huge",
        }
    }

    /// `n` empty slots, `n` a multiple of [`LINE`].
    pub(crate) fn zeroed(n: usize) -> Slots {
        debug_assert!(n % LINE == 0);
        if n >= HUGE_SLOTS {
            if let Some(mut r) = huge::Region::zeroed(n) {
                return Slots {
                    ptr: r.as_mut_ptr(),
                    len: n,
                    _own: Backing::Huge(r),
                };
            }
        }
        let mut v = vec![Line([0; LINE]); n / LINE];
        Slots {
            ptr: v.as_mut_ptr().cast(),
            len: n,
            _own: Backing::Heap(v),
        }
    }
}

impl std::ops::Deref for Slots {
    type Target = [u64];
    #[inline]
    fn deref(&self) -> &[u64] {
        // SAFETY: `ptr` points at `len` initialised u64s owned by `_own` (a Line is
        // 8 u64s without padding), or dangles with `len` 0.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for Slots {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in deref; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Clone for Slots {
    fn clone(&self) -> Slots {
        if self.len == 0 {
            return Slots::default();
        }
        let mut c = Slots::zeroed(self.len);
        c.copy_from_slice(self);
        c
    }
}

/// Anonymous memory mapped on its own, 2 MiB aligned, asking for transparent huge
/// pages.
mod huge {
    use super::HUGE_BYTES;

    /// `len` zeroed `u64`s in a private anonymous mapping (unmapped on drop).
    #[derive(Debug)]
    pub struct Region {
        ptr: *mut u64,
        len: usize,
    }

    // SAFETY: a Region owns its mapping alone, like a Box<[u64]>.
    unsafe impl Send for Region {}
    // SAFETY: as above; a `&Region` gives no access to the memory.
    unsafe impl Sync for Region {}

    impl Region {
        /// `None` if the mapping fails (the caller falls back to the heap).
        pub fn zeroed(len: usize) -> Option<Region> {
            let bytes = (len * 8).next_multiple_of(HUGE_BYTES);
            // Over-map by one huge page and trim, so the region starts on a 2 MiB
            // boundary whatever the kernel picks (only an aligned 2 MiB range can be
            // one huge page).
            let span = bytes + HUGE_BYTES;
            // SAFETY: a fresh private anonymous mapping, touching no existing memory.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    span,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return None;
            }
            let start = (base as usize).next_multiple_of(HUGE_BYTES);
            let head = start - base as usize;
            let tail = span - head - bytes;
            // SAFETY: both ranges lie inside the mapping just made and outside the
            // region kept; madvise only advises (its failure leaves 4 KiB pages).
            unsafe {
                if head > 0 {
                    libc::munmap(base, head);
                }
                if tail > 0 {
                    libc::munmap((start + bytes) as *mut libc::c_void, tail);
                }
                libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
            }
            // Anonymous pages read as zero until written: zeroed, as promised.
            Some(Region {
                ptr: start as *mut u64,
                len,
            })
        }

        /// The first of the region's `len` u64s (zero until written).
        pub fn as_mut_ptr(&mut self) -> *mut u64 {
            self.ptr
        }
    }

    impl Drop for Region {
        fn drop(&mut self) {
            let bytes = (self.len * 8).next_multiple_of(HUGE_BYTES);
            // SAFETY: exactly the range `zeroed` kept, unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), bytes) };
        }
    }
}
