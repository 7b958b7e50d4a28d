//! A MAC index (MAC → a slot: the device table's first slot of the host's chain, or
//! nothing for the topology's host-port guard), open-addressed so that
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
//! **The filter.** A full device table meets mostly addresses it does not hold (under
//! cbench's load every source is new and every destination unknown), and each such
//! look-up read a line of entries (8 MiB of them for 100,000 hosts) that was rarely in
//! cache. The device table's index therefore also keeps a filter (`Filter`, a blocked
//! Bloom filter: 3 bits of one word per address, at least 8 bits per address it may
//! hold, 128 KiB for 100,000 hosts), set when an address comes. A word without the
//! address's bits answers "not here" without the entries; about 4% of absent
//! addresses pass at the most addresses (100,000 for 16,384 words). A removal cannot
//! clear its bits (others may share them), so the bits are set afresh from the entries
//! once as many addresses have gone as are left (at least 1,024), each word in one
//! store: never a false "not here", even to a reader without the table's lock
//! ([`Hint::may_hold`], which the device service asks before it takes the lock).
//!
//! The filter is asked only while the index holds the most addresses it was sized
//! for: then look-ups ask it first, and the prefetch hint asks for the filter's line
//! instead of the entries'. An index with room belongs to a table that learns every
//! new sender, so its look-ups mostly find their address, and go to the entries as
//! before (with every host known, asking the filter first lost 3 of 3 alternated
//! pairs, about 3%, then was even in 4 more: not worth the risk). Under cbench's load (`-s 64 -M 100000`, the default set), the filter
//! gave 3 to 5% more PACKET_INs/s in alternated runs (BENCHMARKS.md, issue 10).
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
use std::sync::atomic::{
    AtomicBool, AtomicU64, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::Arc;

use openflow::MacAddr;

use crate::lines::{prefetch_line, shift_back, Slots};

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
    /// The index's [`Filter`], if it has one: here so that a prefetch can read it.
    filter: Option<Filter>,
    /// Whether the index holds the most addresses its filter was sized for: a table
    /// that is full meets mostly addresses it refused, so the prefetch asks for the
    /// filter's line alone (module doc).
    full: AtomicBool,
}

/// Which addresses the index may hold, in a bit each (hashed): a clear bit says the
/// address is not there without a look at the entries (module doc). Sized once, for
/// the most addresses the index is meant to hold, and never moved, so a prefetch may
/// read it without the table's lock; its bits are atomics for that (plain loads and
/// stores: only the index, under the table's write lock, changes them).
#[derive(Debug)]
struct Filter {
    words: Box<[AtomicU64]>,
}

impl Filter {
    /// Bits per address at the most addresses (at least: the bits are a power of
    /// two). 128 KiB for the device table's default 100,000 hosts.
    const BITS_PER_ADDRESS: usize = 8;
    /// Addresses a filter is sized for at the most (16 MiB of bits): beyond, more
    /// absent addresses pass it.
    const MOST: usize = 1 << 24;
    /// Removals before the bits are set afresh, at the least.
    const REFRESH_AFTER: usize = 1024;

    fn new(most: usize) -> Filter {
        let bits = most.clamp(64, Filter::MOST).next_power_of_two() * Filter::BITS_PER_ADDRESS;
        Filter {
            words: (0..bits / 64).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The word and bits of the address hashed `h`, key `k`: the 4 addresses that
    /// share a line of entries share a word, 16 bits each, and each sets 3 of its 16
    /// (so that a word with a few addresses set passes few others: about 4% of absent
    /// addresses pass at 6 addresses a word, against 9% with one bit each).
    #[inline]
    fn at(&self, h: u64, k: u64) -> (&AtomicU64, u64) {
        (&self.words[self.word(h)], self.bits(h, k))
    }

    /// The word of the address hashed `h`.
    #[inline]
    fn word(&self, h: u64) -> usize {
        (h >> 32) as usize & (self.words.len() - 1)
    }

    #[inline]
    fn bits(&self, h: u64, k: u64) -> u64 {
        let lane = (k & 3) << 4;
        1 << (lane | (h >> 20) & 15) | 1 << (lane | (h >> 24) & 15) | 1 << (lane | (h >> 28) & 15)
    }

    /// Whether the address may be held. Acquire: pairs with [`Filter::add`]'s Release,
    /// for a reader without the table's lock (a clear bit then means the address was
    /// not there when the word was read).
    #[inline]
    fn may_hold(&self, h: u64, k: u64) -> bool {
        let (w, bits) = self.at(h, k);
        w.load(Acquire) & bits == bits
    }

    /// Sets the address's bits (under the table's write lock: the only writer).
    fn add(&self, h: u64, k: u64) {
        let (w, bits) = self.at(h, k);
        w.store(w.load(Relaxed) | bits, Release);
    }

    /// Sets the bits afresh from `keys` (with their hashes): each word goes from its
    /// old bits to its new ones in one store, so a reader without the table's lock
    /// ([`Hint::may_hold`]) sees one or the other, and both hold every key.
    fn refresh(&self, keys: impl Iterator<Item = (u64, u64)>) {
        let mut fresh = vec![0u64; self.words.len()];
        for (h, k) in keys {
            fresh[self.word(h)] |= self.bits(h, k);
        }
        for (w, f) in self.words.iter().zip(fresh) {
            w.store(f, Release);
        }
    }
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
        home_of(self.hash(k), k, mask)
    }

    /// The hash of key `k` that places it (its line, its filter bit).
    #[inline]
    fn hash(&self, k: u64) -> u64 {
        self.hasher.hash_one(k >> 2)
    }

    /// Whether the index may hold `mac`, read without the table's lock: false only if
    /// its filter says the address is not there (an index without a filter may hold
    /// anything). A write under way when this reads may be seen or not, as if this
    /// read came just after or just before it; a false is never wrong for an address
    /// the index held before this began and still holds.
    #[inline]
    pub fn may_hold(&self, mac: MacAddr) -> bool {
        let k = key(mac);
        self.filter
            .as_ref()
            .is_none_or(|f| f.may_hold(self.hash(k), k))
    }

    /// Asks the CPU for the line where a look-up of `mac` starts, unless the filter
    /// says the address is not there. Only a hint: changes nothing.
    #[inline]
    pub fn prefetch(&self, mac: MacAddr) {
        let base = self.base.load(Relaxed);
        if base == 0 {
            return;
        }
        let k = key(mac);
        let h = self.hash(k);
        if let Some(f) = self.filter.as_ref().filter(|_| self.full.load(Relaxed)) {
            let (w, _) = f.at(h, k);
            prefetch_line(w as *const AtomicU64 as usize);
            return;
        }
        let i = home_of(h, k, self.mask.load(Relaxed));
        prefetch_line(base.wrapping_add(i * 16));
    }
}

/// [`Hint::home`] of key `k` hashed `h`.
#[inline]
fn home_of(h: u64, k: u64, mask: usize) -> usize {
    let line = h as usize & (mask / LINE);
    line * LINE + (k as usize & (LINE - 1))
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
    /// Addresses removed since the filter's bits were last set afresh: a removal
    /// leaves its bit (others may share it), so the bits are set again from the
    /// entries once as many have gone as are left.
    stale: usize,
    /// The most addresses the filter was sized for (none: no filter).
    most: Option<usize>,
    hint: Arc<Hint>,
}

impl Default for MacIndex {
    fn default() -> Self {
        MacIndex::with_filter(None)
    }
}

impl Clone for MacIndex {
    /// A copy with a hint of its own (the original's hint keeps naming the original).
    fn clone(&self) -> Self {
        let mut c = MacIndex::with_filter(self.most);
        for (mac, slot) in self.iter() {
            c.insert(mac, slot);
        }
        c
    }
}

impl MacIndex {
    /// An empty index; with a filter sized for `most` addresses if given (module doc).
    pub fn with_filter(most: Option<usize>) -> MacIndex {
        MacIndex {
            entries: Slots::default(),
            len: 0,
            stale: 0,
            most,
            hint: Arc::new(Hint {
                base: AtomicUsize::new(0),
                mask: AtomicUsize::new(0),
                hasher: foldhash::quality::RandomState::default(),
                filter: most.map(Filter::new),
                full: AtomicBool::new(false),
            }),
        }
    }

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
        self.probe(home_of(self.hint.hash(k), k, mask), k)
    }

    /// [`MacIndex::find`] from entry `i`.
    #[inline]
    fn probe(&self, mut i: usize, k: u64) -> Option<usize> {
        let mask = self.capacity() - 1;
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
        if self.entries.is_empty() {
            return None;
        }
        let k = key(mac);
        let h = self.hint.hash(k);
        if let Some(f) = self.hint.filter.as_ref().filter(|_| self.is_full()) {
            if !f.may_hold(h, k) {
                return None;
            }
        }
        let i = self.probe(home_of(h, k, self.capacity() - 1), k)?;
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
        if let Some(f) = &self.hint.filter {
            f.add(self.hint.hash(k), k);
            self.note_fullness();
        }
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
        if let Some(f) = &self.hint.filter {
            self.stale += 1;
            if self.stale > self.len.max(Filter::REFRESH_AFTER) {
                let keys = self.entries.chunks_exact(2).filter(|e| e[0] != 0);
                f.refresh(keys.map(|e| (self.hint.hash(e[0]), e[0])));
                self.stale = 0;
            }
            self.note_fullness();
        }
        Some(slot)
    }

    /// Whether the index holds the most addresses its filter was sized for (module
    /// doc: only then is the filter asked).
    #[inline]
    fn is_full(&self) -> bool {
        self.most.is_some_and(|most| self.len >= most)
    }

    /// Tells the hint whether the index is full (a store only when that changes).
    fn note_fullness(&self) {
        let full = self.is_full();
        if self.hint.full.load(Relaxed) != full {
            self.hint.full.store(full, Relaxed);
        }
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

    /// The filtered index gives the same answers (a false "not here" would lose a
    /// host), through enough removals that its bits are set afresh many times.
    #[test]
    fn a_filtered_index_agrees_with_a_map_through_refreshes() {
        let mut ix = MacIndex::with_filter(Some(64));
        let mut m = HashMap::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut refreshes = 0;
        for step in 0..100_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = mac(1 + x % 3000);
            if x >> 62 == 0 {
                let stale = ix.stale;
                assert_eq!(ix.remove(k), m.remove(&k), "step {step}");
                refreshes += usize::from(stale > 0 && ix.stale == 0);
            } else {
                assert_eq!(ix.insert(k, step), m.insert(k, step), "step {step}");
            }
            if step % 997 == 0 {
                for k in 1..3001 {
                    assert_eq!(ix.get(mac(k)), m.get(&mac(k)).copied(), "step {step}");
                }
            }
        }
        assert!(refreshes > 5, "{refreshes} refreshes");
    }

    /// What the filter is for: most addresses the index does not hold are answered
    /// by it, and addresses removed stop passing it once its bits are set afresh.
    #[test]
    fn the_filter_turns_most_absent_addresses_away_and_forgets_removed_ones() {
        let most = 10_000;
        let mut ix = MacIndex::with_filter(Some(most));
        let f = |ix: &MacIndex, n: u64| {
            let k = key(mac(n));
            ix.hint
                .filter
                .as_ref()
                .unwrap()
                .may_hold(ix.hint.hash(k), k)
        };
        for n in 1..=most as u64 {
            assert!(!ix.hint.full.load(Relaxed));
            ix.insert(mac(n), n as u32);
            assert!(f(&ix, n), "a held address passes");
        }
        assert!(
            ix.hint.full.load(Relaxed),
            "the hint knows the index is full"
        );
        let absent = (1_000_000..1_100_000).filter(|&n| f(&ix, n)).count();
        // 2,048 words for 10,000 addresses, 3 bits each: about 2.5% pass.
        assert!(
            absent < 4_000,
            "{absent} of 100,000 absent addresses passed"
        );
        for n in 1..=most as u64 - 100 {
            ix.remove(mac(n));
        }
        assert!(!ix.hint.full.load(Relaxed));
        let removed = (1..=most as u64 - 100).filter(|&n| f(&ix, n)).count();
        assert!(
            removed < 500,
            "{removed} of 9,900 removed addresses still pass"
        );
        for n in most as u64 - 99..=most as u64 {
            assert_eq!(ix.get(mac(n)), Some(n as u32));
        }
        // A clone has a filter of its own, as good.
        let c = ix.clone();
        assert_eq!(c.get(mac(most as u64)), Some(most as u32));
        assert!(!c
            .hint
            .filter
            .as_ref()
            .unwrap()
            .may_hold(c.hint.hash(key(mac(1))), key(mac(1))));
    }

    /// The device service reads the filter without the table's lock while the index
    /// changes: an address held all along must never read as absent, not even while
    /// the bits are set afresh.
    #[test]
    fn a_reader_without_the_lock_never_misses_an_address_held_all_along() {
        let mut ix = MacIndex::with_filter(Some(2_000));
        let kept: Vec<MacAddr> = (1..=500).map(|n| mac(n * 7919)).collect();
        for m in &kept {
            ix.insert(*m, 1);
        }
        let hint = ix.hint();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut reads = 0u64;
                while !stop.load(Relaxed) {
                    for m in &kept {
                        assert!(hint.may_hold(*m), "{m:?} read as absent");
                    }
                    reads += 1;
                }
                reads
            });
            let mut refreshes = 0;
            for round in 0..200u64 {
                for n in 0..1_500 {
                    ix.insert(mac(1 << 40 | round << 20 | n), 2);
                }
                for n in 0..1_500 {
                    let stale = ix.stale;
                    ix.remove(mac(1 << 40 | round << 20 | n));
                    refreshes += usize::from(stale > 0 && ix.stale == 0);
                }
            }
            stop.store(true, Relaxed);
            assert!(refreshes >= 200, "{refreshes} refreshes");
            assert!(reader.join().unwrap() > 0);
        });
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
