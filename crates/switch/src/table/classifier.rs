//! Tuple-space search: one exact-match hash table per distinct mask (a subtable),
//! visited in descending order of the highest priority each holds, stopping as soon as
//! no later subtable can hold a flow of higher priority than the best one found.
//!
//! A lookup costs one hash probe per subtable visited, whatever the number of flows: a
//! thousand rules over a handful of masks cost a handful of probes. In 1.0 the subtable
//! of the no-wildcard mask is probed first and wins outright (exact-match flows take
//! precedence over wildcard ones, spec 1.0.0 §3.4).

use std::collections::BTreeMap;

use super::exact::FlowMap;
use super::key::{Key, MatchKey};

struct Subtable {
    /// The mask every flow here uses.
    mask: Key,
    /// The masked value -> the flows with it.
    map: FlowMap,
    /// How many flows have each priority (the highest is `max_priority`).
    priorities: BTreeMap<u16, u32>,
    /// The highest priority of a flow here: the lookup stops before this subtable when
    /// it has already found a flow at least this high.
    max_priority: u16,
}

impl Subtable {
    fn new(mask: Key) -> Subtable {
        Subtable {
            mask,
            map: FlowMap::new(mask),
            priorities: BTreeMap::new(),
            max_priority: 0,
        }
    }
}

/// One flow table's matching structure: flow ids by match and priority.
pub struct Classifier {
    subtables: Vec<Subtable>,
    /// The wildcard subtables (all but 1.0's exact one) as (`max_priority`, index),
    /// by descending priority: what a lookup walks, in one small array.
    order: Vec<(u16, u32)>,
    /// 1.0: the no-wildcard mask, whose subtable is probed first and wins.
    exact_mask: Option<Key>,
    /// The index of that subtable in `subtables`, when it exists.
    exact: Option<usize>,
}

impl Classifier {
    /// `exact_mask`: the mask whose flows take precedence over all others (1.0), if any.
    pub fn new(exact_mask: Option<Key>) -> Classifier {
        Classifier {
            subtables: Vec::new(),
            order: Vec::new(),
            exact_mask,
            exact: None,
        }
    }

    /// How many subtables (distinct masks) there are.
    pub fn subtables(&self) -> usize {
        self.subtables.len()
    }

    /// The flow with exactly this match and priority.
    pub fn find(&self, m: &MatchKey, priority: u16) -> Option<u32> {
        let s = self.subtables.iter().find(|s| s.mask == m.mask)?;
        s.map.find_flow(&m.value, priority)
    }

    /// Whether a flow of `priority` overlaps `m` (some frame matches both).
    pub fn overlaps(&self, m: &MatchKey, priority: u16) -> bool {
        self.subtables
            .iter()
            .filter(|s| s.priorities.contains_key(&priority))
            .any(|s| s.map.overlaps(&m.value, &m.mask, priority))
    }

    pub fn insert(&mut self, m: &MatchKey, priority: u16, id: u32) {
        let i = match self.subtables.iter().position(|s| s.mask == m.mask) {
            Some(i) => i,
            None => {
                self.subtables.push(Subtable::new(m.mask));
                self.subtables.len() - 1
            }
        };
        let s = &mut self.subtables[i];
        s.map.insert(&m.value, priority, id);
        *s.priorities.entry(priority).or_insert(0) += 1;
        s.max_priority = s.max_priority.max(priority);
        self.reorder();
    }

    pub fn remove(&mut self, m: &MatchKey, priority: u16, id: u32) {
        let Some(i) = self.subtables.iter().position(|s| s.mask == m.mask) else {
            return;
        };
        let s = &mut self.subtables[i];
        if !s.map.remove(&m.value, id) {
            return;
        }
        if let Some(n) = s.priorities.get_mut(&priority) {
            *n -= 1;
            if *n == 0 {
                s.priorities.remove(&priority);
            }
        }
        match s.priorities.keys().next_back() {
            Some(&p) => s.max_priority = p,
            None => {
                self.subtables.swap_remove(i);
            }
        }
        self.reorder();
    }

    fn reorder(&mut self) {
        self.exact = match self.exact_mask {
            Some(m) => self.subtables.iter().position(|s| s.mask == m),
            None => None,
        };
        self.order.clear();
        for (i, s) in self.subtables.iter().enumerate() {
            if Some(i) != self.exact {
                self.order.push((s.max_priority, i as u32));
            }
        }
        self.order.sort_by_key(|&(max, _)| std::cmp::Reverse(max));
    }

    /// The id of the highest-priority flow matching `key` (in 1.0, an exact-match flow
    /// first). Among flows of equal priority that overlap, which one wins is not defined
    /// (as in the spec).
    #[inline]
    pub fn lookup(&self, key: &Key) -> Option<u32> {
        self.exact(key).or_else(|| self.wildcard(key))
    }

    /// 1.0: the exact-match flow for `key`, if any.
    #[inline]
    pub fn exact(&self, key: &Key) -> Option<u32> {
        let e = self.exact?;
        self.subtables[e].map.best(key).map(|(_, id)| id)
    }

    /// Subtables other than 1.0's exact-match one.
    pub fn wildcard_subtables(&self) -> usize {
        self.order.len()
    }

    /// The best flow for `key` among all but 1.0's exact-match flows.
    #[inline]
    pub fn wildcard(&self, key: &Key) -> Option<u32> {
        let mut best: Option<(u16, u32)> = None;
        for &(max, i) in &self.order {
            if let Some((p, _)) = best {
                if p >= max {
                    break;
                }
            }
            if let Some(top) = self.subtables[i as usize].map.best(key) {
                if best.is_none_or(|(p, _)| top.0 > p) {
                    best = Some(top);
                }
            }
        }
        best.map(|(_, id)| id)
    }
}
