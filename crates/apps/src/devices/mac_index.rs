//! The host table's MAC index (MAC → first slot of its chain), open-addressed so that
//! a look-up can be prefetched.
//!
//! Under cbench's load the device app looks up two MACs per PACKET_IN (the source, and
//! the destination for routing) in a table of 100,000 hosts that does not fit in the
//! core's caches. A std `HashMap` (hashbrown) reads a control group and then, on a tag
//! match, a bucket elsewhere: misses one after the other that nothing can start early,
//! as its layout is private (`HostTable::find` was 15% of the worker's time, most of it
//! waiting on those loads). Here an entry is 16 bytes (the 48-bit address and the slot)
//! in a linearly probed array (line-aligned, in huge pages when large) at most a
//! quarter full, so a look-up reads one line (rarely two), shared with the neighbouring
//! addresses ([`Hint`]'s `home`), and [`Hint::prefetch`] can ask for that line for a
//! PACKET_IN still in the read buffer (`Builder::prefetch_packet_in`), before the
//! handlers take the table's lock.
//!
//! Why a quarter: addresses in runs (cbench's hosts, virtual machines) fill whole
//! lines, so at half full an address the table does not hold, which a full table meets
//! on every PACKET_IN of a new host, probed about two lines, and the second missed
//! cache as often as not (`MacIndex::get` was 9% of the worker with the default apps
//! under cbench's load). At a quarter: 5% more PACKET_INs/s in six alternated pairs,
//! for 64 bytes of index a host instead of 32 (8 MiB for the default 100,000). Asking
//! for the next line as well helped at half full and no longer does (2 of 6 pairs).
//!
//! The [`Hint`] is what the prefetch needs, outside the table's lock: the array's
//! address and size, in atomics the table updates when it grows, and the seeded
//! hasher. A hint read during a grow may name the old array or a mix of old and new:
//! the address it computes is then wrong, and a prefetch of a wrong address is a wasted
//! hint, nothing more (it is never dereferenced; a prefetch does not fault).
//!
//! Removal shifts the entries after it back (no tombstones), so probes stay as short
//! as the load allows. Hashed with foldhash's `quality` variant seeded at random per
//! table: addresses come from the network, and a chosen-collision table must not be
//! computable.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use openflow::MacAddr;

use crate::mac_table::{prefetch_line, shift_back, Slots};

fn key(mac: MacAddr) -> u64 {
    let a = mac.0;
    u64::from_be_bytes([0, 0, a[0], a[1], a[2], a[3], a[4], a[5]])
}

fn mac_of(k: u64) -> MacAddr {
    let b = k.to_be_bytes();
    MacAddr([b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// What a prefetch of a look-up needs, readable without the table's lock (module doc).
#[derive(Debug)]
pub struct Hint {
    /// The entries' address (0: none yet) and their number minus one.
    base: AtomicUsize,
    mask: AtomicUsize,
    hasher: foldhash::quality::RandomState,
}

/// Entries per 64-byte line.
const LINE: usize = 4;

impl Hint {
    /// Where probing for key `k` starts among `mask + 1` entries: in the line chosen by
    /// hashing the address without its last 2 bits, at the entry those bits name, so
    /// that the 4 addresses differing only there (hosts numbered in a run: virtual
    /// machines, containers, cbench's hosts, whose partner is the next address) share
    /// a line, as in the learning switch's table (`mac_table`).
    #[inline]
    fn home(&self, k: u64, mask: usize) -> usize {
        let line = self.hasher.hash_one(k >> 2) as usize & (mask / LINE);
        line * LINE + (k as usize & (LINE - 1))
    }

    /// Asks the CPU for the line where a look-up of `mac` starts. Only a hint: reads
    /// nothing, changes nothing.
    #[inline]
    pub fn prefetch(&self, mac: MacAddr) {
        let base = self.base.load(Relaxed);
        if base == 0 {
            return;
        }
        let i = self.home(key(mac), self.mask.load(Relaxed));
        prefetch_line(base.wrapping_add(i * 16));
    }
}

/// MAC → slot (see the module doc).
#[derive(Debug)]
pub struct MacIndex {
    /// A power of two of entries, or none yet; at most a quarter of them used. Entry `i`
    /// is `entries[2 * i]`, the key (the address as a number, [`key`]; 0: empty, as
    /// the all-zero MAC is never indexed), and `entries[2 * i + 1]`, the slot: 16
    /// bytes in one line. Line-aligned, and in 2 MiB pages when large, as the learning
    /// switch's table (`mac_table`): 4 KiB pages made each look-up a TLB miss too.
    entries: Slots,
    len: usize,
    hint: Arc<Hint>,
}

impl Default for MacIndex {
    fn default() -> Self {
        MacIndex {
            entries: Slots::default(),
            len: 0,
            hint: Arc::new(Hint {
                base: AtomicUsize::new(0),
                mask: AtomicUsize::new(0),
                hasher: foldhash::quality::RandomState::default(),
            }),
        }
    }
}

impl Clone for MacIndex {
    /// A copy with a hint of its own (the original's hint keeps naming the original).
    fn clone(&self) -> Self {
        let mut c = MacIndex::default();
        for (mac, slot) in self.iter() {
            c.insert(mac, slot);
        }
        c
    }
}

impl MacIndex {
    /// The prefetch hint of this index (module doc).
    pub fn hint(&self) -> Arc<Hint> {
        Arc::clone(&self.hint)
    }

    /// Addresses indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries (used or not).
    #[inline]
    fn capacity(&self) -> usize {
        self.entries.len() / 2
    }

    #[inline]
    fn home(&self, k: u64) -> usize {
        self.hint.home(k, self.capacity() - 1)
    }

    #[inline]
    fn key_at(&self, i: usize) -> u64 {
        self.entries[2 * i]
    }

    #[inline]
    fn slot_at(&self, i: usize) -> u32 {
        self.entries[2 * i + 1] as u32
    }

    #[inline]
    fn set(&mut self, i: usize, k: u64, slot: u32) {
        self.entries[2 * i] = k;
        self.entries[2 * i + 1] = u64::from(slot);
    }

    /// The entry holding `k`, or the empty one where it would go; `None` with no
    /// entries yet. Never full (at most a quarter), so an empty entry ends every probe.
    #[inline]
    fn find(&self, k: u64) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let mask = self.capacity() - 1;
        let mut i = self.home(k);
        loop {
            let e = self.key_at(i);
            if e == k || e == 0 {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    pub fn get(&self, mac: MacAddr) -> Option<u32> {
        let i = self.find(key(mac))?;
        (self.key_at(i) != 0).then(|| self.slot_at(i))
    }

    /// Sets `mac`'s slot; gives the one it replaced.
    pub fn insert(&mut self, mac: MacAddr, slot: u32) -> Option<u32> {
        let k = key(mac);
        debug_assert!(k != 0, "the all-zero MAC is not indexed");
        if let Some(i) = self.find(k) {
            if self.key_at(i) == k {
                let old = self.slot_at(i);
                self.set(i, k, slot);
                return Some(old);
            }
        }
        if (self.len + 1) * 4 > self.capacity() {
            self.grow();
        }
        let i = self.find(k).expect("entries after a grow");
        self.set(i, k, slot);
        self.len += 1;
        None
    }

    /// Removes `mac`; gives its slot.
    pub fn remove(&mut self, mac: MacAddr) -> Option<u32> {
        let k = key(mac);
        let hole = self.find(k)?;
        if self.key_at(hole) != k {
            return None;
        }
        let slot = self.slot_at(hole);
        let mask = self.capacity() - 1;
        let hint = &self.hint;
        shift_back(&mut self.entries, hole, |e| hint.home(e, mask));
        self.len -= 1;
        Some(slot)
    }

    /// Every (MAC, slot), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (MacAddr, u32)> + '_ {
        self.entries
            .chunks_exact(2)
            .filter(|e| e[0] != 0)
            .map(|e| (mac_of(e[0]), e[1] as u32))
    }

    /// Doubles the entries (16 at first), places every one again, and tells the hint.
    fn grow(&mut self) {
        let n = (self.capacity() * 2).max(16);
        let old = std::mem::replace(&mut self.entries, Slots::zeroed(2 * n));
        for e in old.chunks_exact(2).filter(|e| e[0] != 0) {
            let i = self.find(e[0]).expect("entries after a grow");
            self.set(i, e[0], e[1] as u32);
        }
        self.hint.mask.store(n - 1, Relaxed);
        self.hint
            .base
            .store(self.entries.as_ptr() as usize, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn mac(n: u64) -> MacAddr {
        mac_of(n & 0xffff_ffff_ffff)
    }

    /// Against a std map, through inserts and removals that wrap probes around.
    #[test]
    fn agrees_with_a_map_through_inserts_and_removals() {
        let mut ix = MacIndex::default();
        let mut m = HashMap::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct keys, so removals hit and the table stays small and dense.
            let k = mac(1 + x % 3000);
            if x >> 60 < 6 {
                assert_eq!(ix.remove(k), m.remove(&k), "step {step}");
            } else {
                assert_eq!(ix.insert(k, step), m.insert(k, step), "step {step}");
            }
            if step % 997 == 0 {
                for (k, v) in &m {
                    assert_eq!(ix.get(*k), Some(*v));
                }
                assert_eq!(ix.iter().count(), m.len());
            }
        }
        for k in 1..3001 {
            assert_eq!(ix.get(mac(k)), m.get(&mac(k)).copied());
        }
    }

    #[test]
    fn the_hint_follows_the_entries_and_a_clone_has_its_own() {
        let mut ix = MacIndex::default();
        assert_eq!(ix.hint.base.load(Relaxed), 0);
        for n in 1..100 {
            ix.insert(mac(n), n as u32);
        }
        assert_eq!(ix.hint.base.load(Relaxed), ix.entries.as_ptr() as usize);
        assert_eq!(ix.hint.mask.load(Relaxed), ix.capacity() - 1);
        ix.hint().prefetch(mac(5));
        let c = ix.clone();
        assert_eq!(c.get(mac(5)), Some(5));
        assert_eq!(c.hint.base.load(Relaxed), c.entries.as_ptr() as usize);
        assert_ne!(c.hint.base.load(Relaxed), ix.hint.base.load(Relaxed));
    }
}
