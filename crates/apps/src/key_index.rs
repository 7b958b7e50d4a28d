//! An index from keys to `u32` slots for keys wider than a MAC (routing's source,
//! destination and VLAN), open-addressed so that a look-up can be prefetched, as the
//! device table's [`crate::net::mac_index`] is for MACs.
//!
//! A std `HashMap` hides where a key's bucket is, so nothing can ask for its line
//! before the look-up, and a look-up in a map of tens of thousands of routes waits on
//! it (routing's look-up of an installed route was a quarter of the default apps'
//! worker under cbench's load with every host known). Here an entry is 16 bytes: the
//! key's 64-bit hash (never 0: 0 marks an empty entry) and its slot, in a linearly
//! probed, line-aligned array at most half full; [`Hint::prefetch`] asks for the line
//! where a key's probe starts, from outside the owner's lock.
//!
//! The index holds hashes, not keys: the owner keeps each slot's key and says, through
//! the `is` closure of [`KeyIndex::get`] and [`KeyIndex::remove`], whether a slot
//! holds the key sought. Two keys with the same hash are then two entries, told apart
//! by their slots. Hashed with foldhash's `quality` variant, seeded at random per
//! index: keys come from the network, and a chosen-collision table must not be
//! computable.
//!
//! Removal shifts the entries after it back (no tombstones), so probes stay as short as
//! the load allows. A hint read during a grow may name the old array or a mix of old
//! and new: a prefetch of a wrong address is a wasted hint, never dereferenced.

use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use crate::lines::{prefetch_line, shift_back, Slots};

/// What a prefetch of a look-up needs, readable without the owner's lock.
#[derive(Debug)]
pub struct Hint {
    /// The entries' address (0: none yet) and their number minus one.
    base: AtomicUsize,
    mask: AtomicUsize,
    hasher: foldhash::quality::RandomState,
}

impl Hint {
    /// The hash of `key` as the index keeps it (never 0).
    #[inline]
    pub fn hash<K: Hash>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key).max(1)
    }

    /// Whether the index never held a key (nothing to prefetch).
    #[inline]
    pub fn is_unused(&self) -> bool {
        self.base.load(Relaxed) == 0
    }

    /// Asks the CPU for the line where a look-up of the key hashed to `h` starts. Only
    /// a hint: reads nothing, changes nothing.
    #[inline]
    pub fn prefetch(&self, h: u64) {
        let base = self.base.load(Relaxed);
        if base == 0 {
            return;
        }
        let i = h as usize & self.mask.load(Relaxed);
        prefetch_line(base.wrapping_add(i * 16));
    }
}

/// Key hash → slot (see the module doc).
#[derive(Debug)]
pub struct KeyIndex {
    /// A power of two of entries, or none yet; at most half of them used. Entry `i` is
    /// `entries[2 * i]`, the hash (0: empty), and `entries[2 * i + 1]`, the slot.
    entries: Slots,
    len: usize,
    hint: Arc<Hint>,
}

impl Default for KeyIndex {
    fn default() -> Self {
        KeyIndex {
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

impl KeyIndex {
    /// The prefetch hint of this index, which also hashes keys for it.
    pub fn hint(&self) -> &Arc<Hint> {
        &self.hint
    }

    /// Keys indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.entries.len() / 2 - 1
    }

    #[inline]
    fn hash_at(&self, i: usize) -> u64 {
        self.entries[2 * i]
    }

    #[inline]
    fn slot_at(&self, i: usize) -> u32 {
        self.entries[2 * i + 1] as u32
    }

    #[inline]
    fn set(&mut self, i: usize, h: u64, slot: u32) {
        self.entries[2 * i] = h;
        self.entries[2 * i + 1] = u64::from(slot);
    }

    /// The entry of the key hashed to `h` whose slot `is` accepts.
    #[inline]
    fn find(&self, h: u64, is: impl Fn(u32) -> bool) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let mask = self.mask();
        let mut i = h as usize & mask;
        loop {
            match self.hash_at(i) {
                0 => return None,
                e if e == h && is(self.slot_at(i)) => return Some(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The slot of the key hashed to `h` (`is` says whether a slot holds that key).
    #[inline]
    pub fn get(&self, h: u64, is: impl Fn(u32) -> bool) -> Option<u32> {
        self.find(h, is).map(|i| self.slot_at(i))
    }

    /// Indexes `slot` under hash `h`; the caller has removed the key's earlier entry.
    pub fn insert(&mut self, h: u64, slot: u32) {
        debug_assert!(h != 0, "hashes are never 0 (Hint::hash)");
        if (self.len + 1) * 2 > self.entries.len() / 2 {
            self.grow();
        }
        self.place(h, slot);
        self.len += 1;
    }

    fn place(&mut self, h: u64, slot: u32) {
        let mask = self.mask();
        let mut i = h as usize & mask;
        while self.hash_at(i) != 0 {
            i = (i + 1) & mask;
        }
        self.set(i, h, slot);
    }

    /// Removes the entry of the key hashed to `h` whose slot `is` accepts; gives its
    /// slot.
    pub fn remove(&mut self, h: u64, is: impl Fn(u32) -> bool) -> Option<u32> {
        let hole = self.find(h, is)?;
        let slot = self.slot_at(hole);
        let mask = self.mask();
        shift_back(&mut self.entries, hole, |e| e as usize & mask);
        self.len -= 1;
        Some(slot)
    }

    /// Forgets every key; the hint stays this index's (and names no entries until the
    /// next insert).
    pub fn clear(&mut self) {
        self.hint.base.store(0, Relaxed);
        self.hint.mask.store(0, Relaxed);
        self.entries = Slots::default();
        self.len = 0;
    }

    /// Doubles the entries (8 at first), places every one again, and tells the hint.
    fn grow(&mut self) {
        let n = (self.entries.len() / 2 * 2).max(8);
        let old = std::mem::replace(&mut self.entries, Slots::zeroed(2 * n));
        for e in old.chunks_exact(2).filter(|e| e[0] != 0) {
            self.place(e[0], e[1] as u32);
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

    /// Against a std map, through inserts and removals that wrap probes around, with
    /// every key hashed to one of few values so that equal hashes are common.
    #[test]
    fn agrees_with_a_map_through_inserts_removals_and_equal_hashes() {
        let mut ix = KeyIndex::default();
        // Slot `s` holds key keys[s]; the model maps key → slot.
        let mut keys: Vec<u64> = Vec::new();
        let mut m: HashMap<u64, u32> = HashMap::new();
        let hash = |k: u64| 1 + (k * 0x9e37_79b9) % 509;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = x % 3000;
            if x >> 60 < 6 {
                let got = ix.remove(hash(k), |s| keys[s as usize] == k);
                assert_eq!(got, m.remove(&k), "step {step}");
            } else if let std::collections::hash_map::Entry::Vacant(e) = m.entry(k) {
                let slot = keys.len() as u32;
                keys.push(k);
                ix.insert(hash(k), slot);
                e.insert(slot);
            }
            assert_eq!(ix.len(), m.len());
            if step % 997 == 0 {
                for (&k, &v) in &m {
                    assert_eq!(ix.get(hash(k), |s| keys[s as usize] == k), Some(v));
                }
            }
        }
        for k in 0..3000 {
            let got = ix.get(hash(k), |s| keys[s as usize] == k);
            assert_eq!(got, m.get(&k).copied(), "key {k}");
        }
    }

    #[test]
    fn the_hint_follows_the_entries_and_hashes_are_never_zero() {
        let mut ix = KeyIndex::default();
        assert_eq!(ix.hint.base.load(Relaxed), 0);
        for n in 1..100u32 {
            let h = ix.hint().hash(&n);
            assert_ne!(h, 0);
            ix.insert(h, n);
        }
        assert_eq!(ix.hint.base.load(Relaxed), ix.entries.as_ptr() as usize);
        assert_eq!(ix.hint.mask.load(Relaxed), ix.mask());
        assert!(ix.len() * 2 <= ix.mask() + 1, "at most half full");
        let h = ix.hint().hash(&5u32);
        ix.hint().prefetch(h);
        assert_eq!(ix.get(h, |s| s == 5), Some(5));
        assert_eq!(ix.get(h, |s| s == 6), None, "the slot decides");
        // Cleared: nothing to prefetch, then the same hint names the new entries.
        let hint = Arc::clone(ix.hint());
        ix.clear();
        assert!(hint.is_unused() && ix.is_empty());
        assert_eq!(ix.get(h, |s| s == 5), None);
        ix.insert(h, 5);
        assert_eq!(hint.base.load(Relaxed), ix.entries.as_ptr() as usize);
        assert_eq!(ix.get(h, |s| s == 5), Some(5));
    }
}
