//! The hash table under every subtable (and under 1.0's exact-match table): flows by
//! their value under one mask, hashed and compared on the words that mask uses only, so
//! a lookup with a frame's key needs no masked copy and no allocation.
//!
//! Open addressing with linear probing over a power-of-two array of slots; a slot holds
//! 32 bits of the hash (a tag compared before the key) and the index of its entry. An
//! entry is a few words in one dense array: the hash, the best flow (priority and id)
//! and the masked key words, so a hit reads one slot and one entry, about two cache
//! lines; the other flows with the same value (other priorities) sit in a side list
//! only insertions and removals touch. Deletion shifts later slots of the cluster back
//! (no tombstones), so a table that churns stays as fast as a fresh one. The load
//! factor stays at or below one half.

use super::key::{Key, WORDS};

const EMPTY: u64 = u64::MAX;
const SEEDS: [u64; WORDS] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
    0x4528_21e6_38d0_1377,
    0xbe54_66cf_34e9_0c6c,
    0xc0ac_29b7_c97c_50dd,
    0x3f84_d5b5_b547_0917,
    0x9216_d5d9_8979_fb1b,
    0xd131_0ba6_98df_b5ac,
    0x2ffd_72db_d01a_dfb7,
    0xb8e1_afed_6a26_7e96,
];
const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Words of an entry before its key words: the hash, then the best flow.
const HEAD: usize = 2;

/// One cache line of entry words: entries are whole lines (one for masks of up to six
/// words, two above), so a hit reads one line, never two halves.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// Flows by masked value: for each value, its flows as (priority, id), highest
/// priority first.
pub struct FlowMap {
    mask: Key,
    /// The indices of the words `mask` uses, `n` of them.
    words: [u8; WORDS],
    n: usize,
    /// `EMPTY`, or the hash's high 32 bits above the entry index.
    slots: Vec<u64>,
    /// Entries of `stride()` words: hash, best flow (`priority << 32 | id`), key
    /// words, padding to the line.
    data: Vec<Line>,
    /// Each entry's flows, highest priority first (the first is also in `data`).
    flows: Vec<Vec<(u16, u32)>>,
}

impl FlowMap {
    pub fn new(mask: Key) -> FlowMap {
        let mut words = [0u8; WORDS];
        let mut n = 0;
        for (i, w) in mask.0.iter().enumerate() {
            if *w != 0 {
                words[n] = i as u8;
                n += 1;
            }
        }
        FlowMap {
            mask,
            words,
            n,
            slots: vec![EMPTY; 8],
            data: Vec::new(),
            flows: Vec::new(),
        }
    }

    /// Distinct values.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Words per entry.
    #[inline(always)]
    fn stride(&self) -> usize {
        (HEAD + self.n).next_multiple_of(8)
    }

    /// The entries' words.
    #[inline(always)]
    fn words(&self) -> &[u64] {
        // SAFETY: `Line` is `repr(C)` over `[u64; 8]`: the lines are `8 * len` words,
        // contiguous and aligned for `u64`, borrowed as long as `self`.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<u64>(), self.data.len() * 8) }
    }

    fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `words`, borrowed mutably as long as `self` is.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.data.as_mut_ptr().cast::<u64>(),
                self.data.len() * 8,
            )
        }
    }

    /// The hash of `key` under the mask (`key` need not be masked): one independent
    /// multiply per pair of words, summed, then mixed (wyhash's folded multiply).
    #[inline(always)]
    fn hash(&self, key: &Key) -> u64 {
        let w = |j: usize| {
            let i = self.words[j] as usize;
            (key.0[i] & self.mask.0[i]) ^ SEEDS[j]
        };
        let mut h = self.n as u64;
        let mut j = 0;
        while j + 1 < self.n {
            h = h.wrapping_add(fold_mul(w(j), w(j + 1)));
            j += 2;
        }
        if j < self.n {
            h = h.wrapping_add(fold_mul(w(j), MUL));
        }
        fold_mul(h ^ SEEDS[WORDS - 1], MUL)
    }

    #[inline(always)]
    fn same(&self, e: usize, key: &Key) -> bool {
        let at = e * self.stride() + HEAD;
        let stored = &self.words()[at..at + self.n];
        let mut d = 0;
        for (j, s) in stored.iter().enumerate() {
            let i = self.words[j] as usize;
            d |= s ^ (key.0[i] & self.mask.0[i]);
        }
        d == 0
    }

    /// The slot holding `key`'s entry, or the empty slot ending its probe.
    #[inline(always)]
    fn find(&self, key: &Key, hash: u64) -> (usize, bool) {
        let m = self.slots.len() - 1;
        let tag = hash >> 32;
        let mut i = hash as usize & m;
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return (i, false);
            }
            if s >> 32 == tag && self.same((s & 0xffff_ffff) as usize, key) {
                return (i, true);
            }
            i = (i + 1) & m;
        }
    }

    fn entry_of(&self, key: &Key) -> Option<usize> {
        match self.find(key, self.hash(key)) {
            (i, true) => Some((self.slots[i] & 0xffff_ffff) as usize),
            _ => None,
        }
    }

    /// The highest-priority flow for a frame's key (masked here), as (priority, id).
    #[inline]
    pub fn best(&self, key: &Key) -> Option<(u16, u32)> {
        let h = self.hash(key);
        match self.find(key, h) {
            (i, true) => {
                let e = (self.slots[i] & 0xffff_ffff) as usize;
                let top = self.words()[e * self.stride() + 1];
                Some(((top >> 32) as u16, top as u32))
            }
            _ => None,
        }
    }

    /// The flow with exactly this value and priority.
    pub fn find_flow(&self, value: &Key, priority: u16) -> Option<u32> {
        let e = self.entry_of(value)?;
        self.flows[e]
            .iter()
            .find(|&&(p, _)| p == priority)
            .map(|&(_, id)| id)
    }

    /// Whether a flow of `priority` here takes some frame that `value` under `mask`
    /// (a match of any mask) takes too. When this table's mask is within `mask`, one
    /// probe answers; otherwise every entry is compared.
    pub fn overlaps(&self, value: &Key, mask: &Key, priority: u16) -> bool {
        let has = |e: usize| self.flows[e].iter().any(|&(p, _)| p == priority);
        let within = (0..WORDS).all(|i| self.mask.0[i] & !mask.0[i] == 0);
        if within {
            return self.entry_of(value).is_some_and(has);
        }
        let s = self.stride();
        (0..self.flows.len()).any(|e| {
            let stored = &self.words()[e * s + HEAD..e * s + HEAD + self.n];
            let agree = stored.iter().enumerate().all(|(j, w)| {
                let i = self.words[j] as usize;
                (w ^ value.0[i]) & mask.0[i] & self.mask.0[i] == 0
            });
            agree && has(e)
        })
    }

    fn set_top(&mut self, e: usize) {
        let (p, id) = self.flows[e][0];
        let s = self.stride();
        self.words_mut()[e * s + 1] = u64::from(p) << 32 | u64::from(id);
    }

    /// Adds a flow (after the others of its priority).
    pub fn insert(&mut self, value: &Key, priority: u16, id: u32) {
        if (self.flows.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let h = self.hash(value);
        let (i, found) = self.find(value, h);
        let e = if found {
            (self.slots[i] & 0xffff_ffff) as usize
        } else {
            let e = self.flows.len();
            let s = self.stride();
            self.data.resize(self.data.len() + s / 8, Line([0; 8]));
            let (words, n, mask) = (self.words, self.n, self.mask);
            let entry = &mut self.words_mut()[e * s..e * s + s];
            entry[0] = h;
            for j in 0..n {
                let w = words[j] as usize;
                entry[HEAD + j] = value.0[w] & mask.0[w];
            }
            self.flows.push(Vec::new());
            self.slots[i] = (h >> 32) << 32 | e as u64;
            e
        };
        let list = &mut self.flows[e];
        let at = list.partition_point(|&(p, _)| p >= priority);
        list.insert(at, (priority, id));
        self.set_top(e);
    }

    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        self.slots.clear();
        self.slots.resize(cap, EMPTY);
        let m = cap - 1;
        let s = self.stride();
        for e in 0..self.flows.len() {
            let h = self.words()[e * s];
            let mut i = h as usize & m;
            while self.slots[i] != EMPTY {
                i = (i + 1) & m;
            }
            self.slots[i] = (h >> 32) << 32 | e as u64;
        }
    }

    /// Removes a flow; false if it is not here.
    pub fn remove(&mut self, value: &Key, id: u32) -> bool {
        let h = self.hash(value);
        let (i, found) = self.find(value, h);
        if !found {
            return false;
        }
        let e = (self.slots[i] & 0xffff_ffff) as usize;
        let list = &mut self.flows[e];
        let Some(at) = list.iter().position(|&(_, f)| f == id) else {
            return false;
        };
        list.remove(at);
        if !list.is_empty() {
            self.set_top(e);
            return true;
        }
        self.remove_entry(i, e);
        true
    }

    /// Frees slot `i` and entry `e`.
    fn remove_entry(&mut self, mut i: usize, e: usize) {
        let m = self.slots.len() - 1;
        let s = self.stride();
        // Backward-shift deletion: move each later slot of the cluster whose home is
        // not cyclically in (hole, slot] into the hole.
        let mut j = i;
        loop {
            j = (j + 1) & m;
            let sl = self.slots[j];
            if sl == EMPTY {
                break;
            }
            let home = self.words()[(sl & 0xffff_ffff) as usize * s] as usize & m;
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.slots[i] = sl;
                i = j;
            }
        }
        self.slots[i] = EMPTY;
        // Move the last entry into `e`, and repoint its slot.
        let last = self.flows.len() - 1;
        self.flows.swap_remove(e);
        if e != last {
            let (dst, src) = (e * s, last * s);
            self.words_mut().copy_within(src..src + s, dst);
            let h = self.words()[dst];
            let mut k = h as usize & m;
            while self.slots[k] == EMPTY || self.slots[k] & 0xffff_ffff != last as u64 {
                k = (k + 1) & m;
            }
            self.slots[k] = (self.slots[k] & !0xffff_ffff) | e as u64;
        }
        self.data.truncate(last * s / 8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn key(a: u64, b: u64) -> Key {
        let mut k = Key::default();
        k.0[0] = a;
        k.0[3] = b;
        k
    }

    #[test]
    fn insert_find_remove_agree_with_a_std_map_under_churn() {
        // Two words (one-line entries) and eleven (two-line entries).
        let mut narrow = Key::default();
        narrow.0[0] = 0xffff;
        narrow.0[3] = u64::MAX;
        let mut wide = Key([u64::MAX; WORDS]);
        wide.0[0] = 0xffff;
        wide.0[5] = 0;
        churn(narrow);
        churn(wide);
    }

    fn churn(mask: Key) {
        let mut m = FlowMap::new(mask);
        // (a, b) -> {(priority, id)}
        let mut reference: BTreeMap<(u64, u64), Vec<(u16, u32)>> = BTreeMap::new();
        let mut x: u64 = 1;
        for n in 0..30_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, b) = (x & 0xff, (x >> 16) % 256);
            let prio = ((x >> 40) % 3) as u16;
            // Bits outside the mask must not matter.
            let k = key(a | 0xdead_0000, b);
            let list = reference.entry((a, b)).or_default();
            if x % 3 == 0 && !list.is_empty() {
                let (_, id) = list.remove((x >> 20) as usize % list.len());
                assert!(m.remove(&k, id), "remove at {n}");
                if list.is_empty() {
                    reference.remove(&(a, b));
                }
            } else {
                m.insert(&k, prio, n);
                list.push((prio, n));
            }
            assert_eq!(m.len(), reference.len());
        }
        for (&(a, b), list) in &reference {
            let top = list.iter().map(|f| f.0).max().unwrap();
            let best = m.best(&key(a, b)).unwrap();
            assert_eq!(best.0, top);
            assert!(list.contains(&best));
            for &(p, id) in list {
                assert!(m.find_flow(&key(a, b), p).is_some());
                let _ = id;
            }
        }
        assert_eq!(m.best(&key(0x1_0000_0000, 1 << 40)), None);
        assert!(!m.remove(&key(0x1_0000_0000, 1 << 40), 1));
    }
}
