//! The hash table under every subtable (and under 1.0's exact-match table): flows by
//! their value under one mask, hashed and compared on the words that mask uses only, so
//! a lookup with a frame's key needs no masked copy and no allocation.
//!
//! Open addressing with linear probing, the entries in the buckets themselves: a
//! bucket is one cache line (two for masks of more than five words) holding the hash,
//! the best flow (priority and id), the index of the value's list of flows and the
//! masked key words. A hit reads the home bucket and, now and then, its neighbour: one
//! cache line where a table of indices would cost two. The other flows with the same
//! value (other priorities) sit in a side list only insertions and removals touch.
//! Deletion shifts later buckets of the cluster back (no tombstones), so a table that
//! churns stays as fast as a fresh one. The load factor stays at or below one half.

use super::key::{Key, WORDS};

/// A bucket's list index when the bucket is empty.
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

/// Words of a bucket before its key words: the hash, the best flow
/// (`priority << 32 | id`), the index of the value's flow list (`EMPTY`: a free
/// bucket).
const HEAD: usize = 3;

/// One cache line of bucket words: buckets are whole lines.
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
    /// `buckets` buckets of `stride()` words each.
    data: Vec<Line>,
    buckets: usize,
    /// Values held.
    len: usize,
    /// Flow lists by index (`free_lists` holds the unused indices).
    lists: Vec<Vec<(u16, u32)>>,
    free_lists: Vec<u32>,
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
        let mut m = FlowMap {
            mask,
            words,
            n,
            data: Vec::new(),
            buckets: 0,
            len: 0,
            lists: Vec::new(),
            free_lists: Vec::new(),
        };
        m.data = m.empty_buckets(8);
        m.buckets = 8;
        m
    }

    /// Distinct values.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Words per bucket.
    #[inline(always)]
    fn stride(&self) -> usize {
        (HEAD + self.n).next_multiple_of(8)
    }

    fn empty_buckets(&self, buckets: usize) -> Vec<Line> {
        let mut free = [0u64; 8];
        free[2] = EMPTY;
        let lines = self.stride() / 8;
        let mut v = vec![Line([0; 8]); buckets * lines];
        for b in 0..buckets {
            v[b * lines] = Line(free);
        }
        v
    }

    /// The buckets' words.
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

    /// Bucket `b`'s words.
    #[inline(always)]
    fn bucket(&self, b: usize) -> &[u64] {
        let s = self.stride();
        &self.words()[b * s..b * s + s]
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

    /// The bucket holding `key`'s value, or the free bucket ending its probe.
    #[inline(always)]
    fn find(&self, key: &Key, hash: u64) -> (usize, bool) {
        let m = self.buckets - 1;
        let mut b = hash as usize & m;
        loop {
            let e = self.bucket(b);
            if e[2] == EMPTY {
                return (b, false);
            }
            if e[0] == hash {
                let mut d = 0;
                for (j, s) in e[HEAD..HEAD + self.n].iter().enumerate() {
                    let i = self.words[j] as usize;
                    d |= s ^ (key.0[i] & self.mask.0[i]);
                }
                if d == 0 {
                    return (b, true);
                }
            }
            b = (b + 1) & m;
        }
    }

    /// The highest-priority flow for a frame's key (masked here), as (priority, id).
    #[inline]
    pub fn best(&self, key: &Key) -> Option<(u16, u32)> {
        match self.find(key, self.hash(key)) {
            (b, true) => {
                let top = self.bucket(b)[1];
                Some(((top >> 32) as u16, top as u32))
            }
            _ => None,
        }
    }

    /// The flow list of a value's bucket.
    fn list_of(&self, b: usize) -> &Vec<(u16, u32)> {
        &self.lists[self.bucket(b)[2] as usize]
    }

    /// The flow with exactly this value and priority.
    pub fn find_flow(&self, value: &Key, priority: u16) -> Option<u32> {
        match self.find(value, self.hash(value)) {
            (b, true) => self
                .list_of(b)
                .iter()
                .find(|&&(p, _)| p == priority)
                .map(|&(_, id)| id),
            _ => None,
        }
    }

    /// Whether a flow of `priority` here takes some frame that `value` under `mask`
    /// (a match of any mask) takes too. When this table's mask is within `mask`, one
    /// probe answers; otherwise every bucket is compared.
    pub fn overlaps(&self, value: &Key, mask: &Key, priority: u16) -> bool {
        let has = |b: usize| self.list_of(b).iter().any(|&(p, _)| p == priority);
        let within = (0..WORDS).all(|i| self.mask.0[i] & !mask.0[i] == 0);
        if within {
            return match self.find(value, self.hash(value)) {
                (b, true) => has(b),
                _ => false,
            };
        }
        (0..self.buckets).any(|b| {
            let e = self.bucket(b);
            let agree = e[2] != EMPTY
                && e[HEAD..HEAD + self.n].iter().enumerate().all(|(j, w)| {
                    let i = self.words[j] as usize;
                    (w ^ value.0[i]) & mask.0[i] & self.mask.0[i] == 0
                });
            agree && has(b)
        })
    }

    /// Copies bucket `b`'s best flow from its list.
    fn set_top(&mut self, b: usize) {
        let (p, id) = self.list_of(b)[0];
        let s = self.stride();
        self.words_mut()[b * s + 1] = u64::from(p) << 32 | u64::from(id);
    }

    /// Adds a flow (after the others of its priority).
    pub fn insert(&mut self, value: &Key, priority: u16, id: u32) {
        if (self.len + 1) * 2 > self.buckets {
            self.grow();
        }
        let h = self.hash(value);
        let (b, found) = self.find(value, h);
        if !found {
            let list = match self.free_lists.pop() {
                Some(l) => l,
                None => {
                    self.lists.push(Vec::new());
                    (self.lists.len() - 1) as u32
                }
            };
            let (words, n, mask, s) = (self.words, self.n, self.mask, self.stride());
            let e = &mut self.words_mut()[b * s..b * s + s];
            e[0] = h;
            e[2] = u64::from(list);
            for j in 0..n {
                let w = words[j] as usize;
                e[HEAD + j] = value.0[w] & mask.0[w];
            }
            self.len += 1;
        }
        let l = self.bucket(b)[2] as usize;
        let list = &mut self.lists[l];
        let at = list.partition_point(|&(p, _)| p >= priority);
        list.insert(at, (priority, id));
        self.set_top(b);
    }

    fn grow(&mut self) {
        let buckets = self.buckets * 2;
        let fresh = self.empty_buckets(buckets);
        let old = std::mem::replace(&mut self.data, fresh);
        let old_buckets = self.buckets;
        self.buckets = buckets;
        let s = self.stride();
        let m = buckets - 1;
        // SAFETY: as in `words`.
        let old_words =
            unsafe { std::slice::from_raw_parts(old.as_ptr().cast::<u64>(), old.len() * 8) };
        for b in 0..old_buckets {
            let e = &old_words[b * s..b * s + s];
            if e[2] == EMPTY {
                continue;
            }
            let mut to = e[0] as usize & m;
            while self.bucket(to)[2] != EMPTY {
                to = (to + 1) & m;
            }
            self.words_mut()[to * s..to * s + s].copy_from_slice(e);
        }
    }

    /// Removes a flow; false if it is not here.
    pub fn remove(&mut self, value: &Key, id: u32) -> bool {
        let (b, found) = self.find(value, self.hash(value));
        if !found {
            return false;
        }
        let l = self.bucket(b)[2] as usize;
        let list = &mut self.lists[l];
        let Some(at) = list.iter().position(|&(_, f)| f == id) else {
            return false;
        };
        list.remove(at);
        if !list.is_empty() {
            self.set_top(b);
            return true;
        }
        self.free_lists.push(l as u32);
        self.len -= 1;
        self.remove_bucket(b);
        true
    }

    /// Frees bucket `hole`, shifting back the later buckets of its cluster whose home
    /// is not cyclically in (hole, bucket].
    fn remove_bucket(&mut self, mut hole: usize) {
        let m = self.buckets - 1;
        let s = self.stride();
        let mut j = hole;
        loop {
            j = (j + 1) & m;
            let e = self.bucket(j);
            if e[2] == EMPTY {
                break;
            }
            let home = e[0] as usize & m;
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                self.words_mut().copy_within(j * s..j * s + s, hole * s);
                hole = j;
            }
        }
        self.words_mut()[hole * s + 2] = EMPTY;
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
