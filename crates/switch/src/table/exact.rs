//! The hash table under every subtable (and under 1.0's exact-match table): keys are
//! [`Key`]s under one mask, hashed and compared on the words that mask uses only, so a
//! lookup with a frame's key needs no masked copy and no allocation.
//!
//! Open addressing with linear probing over a power-of-two array of slots; a slot holds
//! 32 bits of the hash (a tag compared before the key) and the index of its entry in a
//! dense vector. Deletion shifts later slots of the cluster back (no tombstones), so a
//! table that churns stays as fast as a fresh one. The load factor stays at or below
//! one half: a probe touches one or two slots on average.

use super::key::{Key, WORDS};

const EMPTY: u64 = u64::MAX;
const SEED: u64 = 0x243f_6a88_85a3_08d3;
const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

struct Entry<V> {
    hash: u64,
    /// The masked key (words outside the mask are zero).
    key: Key,
    value: V,
}

/// A map from masked keys to `V`.
pub struct KeyMap<V> {
    mask: Key,
    /// The indices of the words `mask` uses, `n` of them.
    words: [u8; WORDS],
    n: usize,
    /// `EMPTY`, or the hash's high 32 bits above the entry index.
    slots: Vec<u64>,
    entries: Vec<Entry<V>>,
}

impl<V> KeyMap<V> {
    pub fn new(mask: Key) -> KeyMap<V> {
        let mut words = [0u8; WORDS];
        let mut n = 0;
        for (i, w) in mask.0.iter().enumerate() {
            if *w != 0 {
                words[n] = i as u8;
                n += 1;
            }
        }
        KeyMap {
            mask,
            words,
            n,
            slots: vec![EMPTY; 8],
            entries: Vec::new(),
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The hash of `key` under the mask (`key` need not be masked).
    #[inline(always)]
    fn hash(&self, key: &Key) -> u64 {
        let mut h = SEED;
        for &i in &self.words[..self.n] {
            let i = i as usize;
            h = fold_mul(h ^ (key.0[i] & self.mask.0[i]), MUL);
        }
        h
    }

    #[inline(always)]
    fn same(&self, stored: &Key, key: &Key) -> bool {
        let mut d = 0;
        for &i in &self.words[..self.n] {
            let i = i as usize;
            d |= stored.0[i] ^ (key.0[i] & self.mask.0[i]);
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
            if s >> 32 == tag && self.same(&self.entries[(s & 0xffff_ffff) as usize].key, key) {
                return (i, true);
            }
            i = (i + 1) & m;
        }
    }

    /// The value for a key, masked here (a frame's key as it is).
    #[inline]
    pub fn get_masked(&self, key: &Key) -> Option<&V> {
        let h = self.hash(key);
        match self.find(key, h) {
            (i, true) => Some(&self.entries[(self.slots[i] & 0xffff_ffff) as usize].value),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &Key) -> Option<&mut V> {
        let h = self.hash(key);
        match self.find(key, h) {
            (i, true) => {
                let e = (self.slots[i] & 0xffff_ffff) as usize;
                Some(&mut self.entries[e].value)
            }
            _ => None,
        }
    }

    pub fn get_or_insert_with(&mut self, key: &Key, f: impl FnOnce() -> V) -> &mut V {
        if (self.entries.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let h = self.hash(key);
        let (i, found) = self.find(key, h);
        let e = if found {
            (self.slots[i] & 0xffff_ffff) as usize
        } else {
            let e = self.entries.len();
            self.entries.push(Entry {
                hash: h,
                key: key.masked(&self.mask),
                value: f(),
            });
            self.slots[i] = (h >> 32) << 32 | e as u64;
            e
        };
        &mut self.entries[e].value
    }

    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        self.slots.clear();
        self.slots.resize(cap, EMPTY);
        let m = cap - 1;
        for (e, entry) in self.entries.iter().enumerate() {
            let mut i = entry.hash as usize & m;
            while self.slots[i] != EMPTY {
                i = (i + 1) & m;
            }
            self.slots[i] = (entry.hash >> 32) << 32 | e as u64;
        }
    }

    pub fn remove(&mut self, key: &Key) -> Option<V> {
        let h = self.hash(key);
        let (mut i, found) = self.find(key, h);
        if !found {
            return None;
        }
        let e = (self.slots[i] & 0xffff_ffff) as usize;
        // Backward-shift deletion: move each later slot of the cluster whose home is
        // not between the hole and it into the hole.
        let m = self.slots.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & m;
            let s = self.slots[j];
            if s == EMPTY {
                break;
            }
            let home = self.entries[(s & 0xffff_ffff) as usize].hash as usize & m;
            // `home` is cyclically in (i, j]: the slot stays.
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.slots[i] = s;
                i = j;
            }
        }
        self.slots[i] = EMPTY;
        let last = self.entries.len() - 1;
        let removed = self.entries.swap_remove(e);
        if e != last {
            // The entry that was last is now at `e`: repoint its slot.
            let moved = &self.entries[e];
            let mut k = moved.hash as usize & m;
            while self.slots[k] & 0xffff_ffff != last as u64 || self.slots[k] == EMPTY {
                k = (k + 1) & m;
            }
            self.slots[k] = (self.slots[k] & !0xffff_ffff) | e as u64;
        }
        Some(removed.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn key(a: u64, b: u64) -> Key {
        let mut k = Key::default();
        k.0[0] = a;
        k.0[3] = b;
        k
    }

    #[test]
    fn insert_get_remove_agree_with_a_std_map_under_churn() {
        let mut mask = Key::default();
        mask.0[0] = 0xffff;
        mask.0[3] = u64::MAX;
        let mut m: KeyMap<u32> = KeyMap::new(mask);
        let mut reference: HashMap<(u64, u64), u32> = HashMap::new();
        let mut x: u64 = 1;
        for n in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, b) = (x & 0xffff, (x >> 16) % 512);
            // Bits outside the mask must not matter.
            let k = key(a | 0xdead_0000, b);
            if x % 3 == 0 {
                assert_eq!(m.remove(&k), reference.remove(&(a, b)), "remove at {n}");
            } else {
                *m.get_or_insert_with(&k, || n) = n;
                reference.insert((a, b), n);
            }
            assert_eq!(m.len(), reference.len());
        }
        for (&(a, b), &v) in &reference {
            assert_eq!(m.get_masked(&key(a, b)), Some(&v));
        }
        assert_eq!(m.get_masked(&key(0x1_0000_0000, 1 << 40)), None);
    }
}
