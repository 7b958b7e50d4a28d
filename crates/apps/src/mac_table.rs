//! The learning switch's table, Ethernet address → port: one cache line per lookup.
//!
//! Under cbench's load a switch holds 100,000 addresses, 64 switches a worker: the
//! tables do not fit in the core's caches, and each lookup is a miss. A std
//! `HashMap` (hashbrown) reads a control group, then a bucket elsewhere: two misses
//! one after the other, twice per PACKET_IN (source and destination), and 56% of the
//! worker's time in a profile. Here an entry is one `u64` (the 48-bit address and a
//! 16-bit port) in an open-addressed, linearly probed array: a lookup reads one line
//! (rarely two), and [`MacTable::prefetch`] can ask for that line ahead of time.
//!
//! Ports: every 1.0 port fits in 16 bits, and 1.3's physical ports below 0xff00 and
//! reserved ports (0xfffffff8 and up, which are 1.0's widened) do too. An address
//! seen on another port (a 1.3 port from 0xff00 to 0xfffffff7, or ANY, never an input
//! port) is not learned: packets to it are flooded, as to any unknown address.
//!
//! Neighbouring addresses share a line. The home of an address is in the 64-byte
//! line (8 slots) chosen by hashing the address *without its last 3 bits*, at the
//! slot those 3 bits name turned by 3 bits of the same hash: the 8 addresses that
//! differ only in their last 3 bits (ports of one NIC, hosts numbered in a run —
//! virtual machines, containers, `pharos bench`'s hosts) share a line, a slot each, so
//! a lookup soon after another of the same run finds its line in cache. The turn keeps
//! addresses of different runs that end in the same 3 bits from all starting at the
//! same slot of their lines: cbench's hosts (its last byte is the switch's number, the
//! host's in bytes 1 to 4) did, and queued behind each other (a lookup probed 2 to 3
//! slots, some in the next line; the learning switch answered 1.02–1.25× as many of
//! cbench's PACKET_INs with the turn, 4 alternated pairs). A hostile host gains
//! nothing: it can put 8 addresses in one line, as anyone can fill a line, and where
//! any other run lands it cannot tell (the hash is seeded, below). With addresses in
//! random order every lookup is still one line.
//!
//! Large tables live in 2 MiB pages: 64 tables of 100,000 addresses span 128 MiB,
//! whose 4 KiB pages outnumber the TLB's entries a hundredfold, so each lookup also
//! walked the page tables (a profile under cbench's load put half the worker's time on
//! the two lookups). From [`HUGE_SLOTS`] slots up, the array is mapped on its own,
//! aligned to 2 MiB, with `MADV_HUGEPAGE` (the kernel's transparent huge pages, which
//! Debian enables for regions that ask); where the kernel declines, it is ordinary
//! memory (still line-aligned).
//!
//! Entries are never removed (the learning switch only learns and moves), so probing
//! needs no tombstones. Hashed with foldhash seeded at random per table: addresses
//! come from the network, and a chosen-collision table must not be computable. Its
//! `quality` variant: the `fast` one, at some seeds, put 100 runs of consecutive
//! addresses (as cbench and VMs number them) on as few as 46 lines of 4,096.

use std::hash::BuildHasher;

use openflow::MacAddr;

pub use crate::lines::HUGE_SLOTS;
use crate::lines::{prefetch_line, Slots, LINE};

/// Address → port, at most a given number of addresses (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct MacTable {
    /// Open-addressed slots, a power of two of them (or none yet): 0 is empty, else
    /// `address << 16 | (port16 + 1)` (see [`port16`]), never 0.
    slots: Slots,
    /// Addresses held.
    len: usize,
    /// The seeded hasher (see the module doc).
    hasher: foldhash::quality::RandomState,
}

/// The 16-bit form of a port as `PacketIn::in_port` reports it, if it has one.
fn port16(port: u32) -> Option<u16> {
    match port {
        p if p < 0xff00 => Some(p as u16),
        p if (0xffff_fff8..0xffff_ffff).contains(&p) => Some(p as u16),
        _ => None,
    }
}

/// The port a slot holds.
fn port32(slot: u64) -> u32 {
    let p = (slot & 0xffff) as u32 - 1;
    if p < 0xff00 {
        p
    } else {
        0xffff_0000 | p
    }
}

fn key(mac: MacAddr) -> u64 {
    let a = mac.0;
    u64::from_be_bytes([0, 0, a[0], a[1], a[2], a[3], a[4], a[5]])
}

impl MacTable {
    /// Addresses held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where probing for `mac` starts: in its line (see the module doc), at the slot
    /// its last 3 bits name turned by the line's hash, so that a run of 8 addresses
    /// takes one slot each, each found at its first probe, and addresses of different
    /// runs with the same last 3 bits (a switch's hosts all ending in its number, as
    /// cbench's do) start at different slots instead of queueing behind each other.
    #[inline]
    fn home(&self, k: u64) -> usize {
        let lines = self.slots.len() / LINE;
        let h = self.hasher.hash_one(k >> 3);
        let line = h as usize & lines.wrapping_sub(1);
        // The top 3 bits: independent of the line's (the low ones).
        let turn = (h >> 61) as usize;
        line * LINE + (k as usize).wrapping_add(turn) % LINE
    }

    /// The slot holding `k`, or the empty slot where it would go; `None` when there
    /// are no slots yet.
    #[inline]
    fn find(&self, k: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        // The table is never full (see `learn`), so an empty slot ends every probe.
        loop {
            let s = self.slots[i];
            if s == 0 || s >> 16 == k {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The port behind `mac`, if known.
    #[inline]
    pub fn get(&self, mac: MacAddr) -> Option<u32> {
        let s = self.slots[self.find(key(mac))?];
        (s != 0).then(|| port32(s))
    }

    /// Records that `mac` is behind `port`: updates a known address (writing only
    /// when the port changed, so an unchanged line stays clean), adds a new one
    /// unless `max` are held already or the port has no 16-bit form.
    #[inline]
    pub fn learn(&mut self, mac: MacAddr, port: u32, max: usize) {
        let Some(p) = port16(port) else { return };
        let k = key(mac);
        let slot = k << 16 | (u64::from(p) + 1);
        if let Some(i) = self.find(k) {
            if self.slots[i] != 0 {
                if self.slots[i] != slot {
                    self.slots[i] = slot;
                }
                return;
            }
        }
        if self.len >= max {
            return;
        }
        // At most 3/4 full, so probes stay short (runs of 8 fill whole lines) and
        // always meet an empty slot.
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        if let Some(i) = self.find(k) {
            self.slots[i] = slot;
            self.len += 1;
        }
    }

    /// Doubles the slots (16 at first; from half of [`HUGE_SLOTS`], straight to it)
    /// and places every entry again.
    fn grow(&mut self) {
        let mut n = (self.slots.len() * 2).max(16);
        if n >= HUGE_SLOTS / 2 {
            n = n.max(HUGE_SLOTS);
        }
        let old = std::mem::replace(&mut self.slots, Slots::zeroed(n));
        for &s in old.iter().filter(|&&s| s != 0) {
            if let Some(i) = self.find(s >> 16) {
                self.slots[i] = s;
            }
        }
    }

    /// Asks the CPU to bring in the line where a lookup of `mac` starts, so that a
    /// lookup a little later finds it in cache. Only a hint: changes nothing.
    #[inline]
    pub fn prefetch(&self, mac: MacAddr) {
        if self.slots.is_empty() {
            return;
        }
        let at: *const u64 = &self.slots[self.home(key(mac))];
        prefetch_line(at as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// What the table must do, written with a HashMap.
    fn model_learn(m: &mut HashMap<MacAddr, u32>, mac: MacAddr, port: u32, max: usize) {
        if port16(port).is_none() {
            return;
        }
        if let Some(p) = m.get_mut(&mac) {
            *p = port;
        } else if m.len() < max {
            m.insert(mac, port);
        }
    }

    fn port() -> impl Strategy<Value = u32> {
        prop_oneof![
            0u32..8,
            0u32..0xff00,
            0xff00u32..0x1_0000,
            0xffff_fff0u32..=0xffff_ffff,
            any::<u32>(),
        ]
    }

    proptest! {
        /// Learning and looking up, through growth, a full table, moves and ports
        /// without a 16-bit form, give what a HashMap gives.
        #[test]
        fn behaves_as_a_hashmap(
            ops in proptest::collection::vec((0u8..64, any::<[u8; 2]>(), port()), 0..600),
            max in 0usize..200,
        ) {
            let mut t = MacTable::default();
            let mut m = HashMap::new();
            // Few distinct addresses (64 × a small spread) so that moves happen, the
            // whole 48 bits so that the key packing is checked.
            let mac = |i: u8, hi: [u8; 2]| MacAddr([hi[0], hi[1], 0xff, 0, i >> 4, i]);
            for &(i, hi, p) in &ops {
                let a = mac(i, hi);
                t.learn(a, p, max);
                model_learn(&mut m, a, p, max);
                prop_assert_eq!(t.get(a), m.get(&a).copied());
                prop_assert_eq!(t.len(), m.len());
            }
            for &(i, hi, _) in &ops {
                let a = mac(i, hi);
                prop_assert_eq!(t.get(a), m.get(&a).copied());
            }
            prop_assert_eq!(t.get(MacAddr([0; 6])), m.get(&MacAddr([0; 6])).copied());
        }
    }

    /// A table of 100,000 addresses lives in its own 2 MiB-aligned mapping that the
    /// kernel may back with huge pages (`THPeligible` in /proc/self/smaps), and a
    /// small one on the heap, line-aligned.
    #[test]
    fn a_large_table_is_huge_page_backed() {
        let mut t = MacTable::default();
        t.learn(MacAddr([2, 0, 0, 0, 0, 1]), 1, 10);
        assert_eq!(t.slots.backing(), "heap");
        assert_eq!(t.slots.as_ptr() as usize % 64, 0, "line-aligned");
        for i in 0..100_000u32 {
            let b = i.to_be_bytes();
            t.learn(MacAddr([2, 0, b[0], b[1], b[2], b[3]]), 1, 100_000);
        }
        assert_eq!(t.slots.backing(), "huge");
        let at = t.slots.as_ptr() as usize;
        assert_eq!(at % crate::lines::HUGE_BYTES, 0, "2 MiB-aligned");
        assert_eq!(t.slots.len(), HUGE_SLOTS);
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if thp.contains("[never]") || thp.is_empty() {
            // CI's machine has them (Debian's default, madvise): never skipped there.
            assert!(
                std::env::var_os("CI").is_none(),
                "transparent huge pages are off on this CI machine"
            );
            eprintln!("SKIPPED the THPeligible check: transparent huge pages are off here");
            return;
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut in_region = false;
        let mut eligible = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((a, b)) = range.split_once('-') {
                    if let (Ok(a), Ok(b)) =
                        (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                    {
                        in_region = (a..b).contains(&at);
                        continue;
                    }
                }
            }
            if in_region {
                if let Some(v) = line.strip_prefix("THPeligible:") {
                    eligible = Some(v.trim() == "1");
                }
            }
        }
        assert_eq!(eligible, Some(true), "the region asks for huge pages");
    }

    /// Addresses that differ in their last 3 bits start probing in the same line, a
    /// slot each; others are spread by the seeded hash.
    #[test]
    fn neighbouring_addresses_share_a_line() {
        let mut t = MacTable::default();
        for i in 0..10_000u32 {
            let b = i.to_be_bytes();
            t.learn(MacAddr([2, 0, b[0], b[1], b[2], b[3]]), 1, 100_000);
        }
        let home = |i: u32| {
            let b = i.to_be_bytes();
            t.home(key(MacAddr([2, 0, b[0], b[1], b[2], b[3]])))
        };
        for run in 0..100 {
            let line = home(run * 8) / LINE;
            let slots: std::collections::HashSet<usize> = (0..8)
                .map(|j| home(run * 8 + j))
                .inspect(|h| assert_eq!(h / LINE, line, "run {run}"))
                .collect();
            assert_eq!(slots.len(), LINE, "run {run}: a slot each");
        }
        let lines: std::collections::HashSet<usize> =
            (0..100).map(|r| home(r * 8) / LINE).collect();
        assert!(lines.len() > 90, "runs are spread: {} lines", lines.len());
    }

    #[test]
    fn every_port_with_a_16_bit_form_round_trips() {
        for p in (0..0xff00).chain(0xffff_fff8..0xffff_ffff) {
            let q = port16(p).unwrap();
            assert_eq!(port32(k_slot(q)), p);
        }
        assert_eq!(port16(0xff00), None);
        assert_eq!(port16(0xffff_fff7), None);
        assert_eq!(port16(0xffff_ffff), None);
    }

    fn k_slot(q: u16) -> u64 {
        u64::from(q) + 1
    }

    #[test]
    fn holds_100000_addresses_and_the_all_zero_address() {
        let mut t = MacTable::default();
        for i in 0..100_000u32 {
            let b = i.to_be_bytes();
            t.learn(MacAddr([0, 0, b[0], b[1], b[2], b[3]]), i % 48, 100_000);
        }
        assert_eq!(t.len(), 100_000);
        for i in (0..100_000u32).step_by(7) {
            let b = i.to_be_bytes();
            assert_eq!(t.get(MacAddr([0, 0, b[0], b[1], b[2], b[3]])), Some(i % 48));
        }
        t.learn(MacAddr([9; 6]), 1, 100_000);
        assert_eq!(
            t.get(MacAddr([9; 6])),
            None,
            "full: a new address is not learned"
        );
    }
}
