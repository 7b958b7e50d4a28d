//! A microflow cache in front of each table's classifier: the whole key of a recent
//! frame (and the table it was looked up in) -> the flow it hit, or "none". A hit costs
//! one probe and one key comparison, whatever the number of subtables; it is how a
//! thousand wildcard flows over many masks cost about what an exact-match flow does for
//! traffic with any locality (Open vSwitch's exact-match cache plays the same part).
//!
//! Direct-mapped, fixed size, allocated once: a miss overwrites the entry, never
//! allocates. Any change to the tables' flows (add, replace, delete, expiry) bumps a
//! generation that makes every entry stale at once, so the cache can never answer with
//! a flow the classifier would not choose now.

use super::key::{Key, WORDS};

/// Entries (a power of two).
pub const ENTRIES: usize = 4096;

/// "No flow matched" as a cached answer.
pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
#[repr(align(64))]
struct Entry {
    key: Key,
    /// The generation the answer is from (0: never filled).
    generation: u32,
    id: u32,
    table: u8,
}

pub struct FlowCache {
    entries: Box<[Entry]>,
    /// The current generation; entries of another one are stale.
    generation: u32,
}

#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// A hash of the whole key (pairs of words through independent multiplies).
#[inline(always)]
pub fn hash(key: &Key, table: u8) -> u64 {
    const K: [u64; 2] = [0xa076_1d64_78bd_642f, 0xe703_7ed1_a0b4_28db];
    let mut h = u64::from(table);
    let mut j = 0;
    while j + 1 < WORDS {
        h = h.wrapping_add(fold_mul(key.0[j] ^ K[0], key.0[j + 1] ^ K[1]));
        j += 2;
    }
    fold_mul(h ^ K[1], 0x9e37_79b9_7f4a_7c15)
}

impl FlowCache {
    pub fn new() -> FlowCache {
        let empty = Entry {
            key: Key::default(),
            generation: 0,
            id: NONE,
            table: 0,
        };
        FlowCache {
            entries: vec![empty; ENTRIES].into_boxed_slice(),
            generation: 1,
        }
    }

    /// The cached answer for `key` in `table`: `Some(NONE)` for a cached miss.
    #[inline]
    pub fn get(&self, table: u8, key: &Key, h: u64) -> Option<u32> {
        let e = &self.entries[h as usize & (ENTRIES - 1)];
        (e.generation == self.generation && e.table == table && e.key == *key).then_some(e.id)
    }

    #[inline]
    pub fn put(&mut self, table: u8, key: &Key, h: u64, id: u32) {
        self.entries[h as usize & (ENTRIES - 1)] = Entry {
            key: *key,
            generation: self.generation,
            id,
            table,
        };
    }

    /// Forgets every answer (the tables changed).
    pub fn invalidate(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // After 2^32 changes: clear, so no entry of a reused generation survives.
            for e in self.entries.iter_mut() {
                e.generation = 0;
            }
            self.generation = 1;
        }
    }
}

impl Default for FlowCache {
    fn default() -> Self {
        FlowCache::new()
    }
}
