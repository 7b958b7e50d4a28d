//! The route slab against a plain model, its cookies, host chains and restarts.

use super::*;
use crate::routing::app::{Params, Routing};
use controller::app::App;
use std::sync::Arc;

fn m(n: u8) -> MacAddr {
    MacAddr([2, 0, 0, 0, 0, n])
}

fn k(a: u8, b: u8, vlan: Option<u16>) -> Key {
    Key {
        src: m(a),
        dst: m(b),
        vlan,
    }
}

/// A route within one switch: what the slab's tests install.
fn r() -> Route {
    Route {
        src: Dpid(1),
        dst: Dpid(1),
        links: Vec::new(),
    }
}

/// The routes the host index names for host `n` on `vlan`, in order.
fn of(rs: &Routes, n: u8, vlan: Option<u16>) -> Vec<Key> {
    let mut v = rs.of_host((m(n), vlan));
    v.sort_by_key(|k| (k.src.0, k.dst.0));
    v
}

#[test]
fn the_host_index_and_the_eviction_order_follow_the_installed_routes() {
    let mut rs = Routes::default();
    rs.insert(k(1, 2, None), r(), 1, 2);
    rs.insert(k(2, 1, None), r(), 2, 1);
    rs.insert(k(1, 3, Some(5)), r(), 1, 3);
    assert_eq!(of(&rs, 1, None), [k(1, 2, None), k(2, 1, None)]);
    assert_eq!(of(&rs, 1, Some(5)), [k(1, 3, Some(5))]);
    rs.remove(k(1, 2, None));
    assert_eq!(of(&rs, 2, None), [k(2, 1, None)]);
    // The oldest still installed goes first: the removed one is skipped.
    assert_eq!(rs.evict_oldest().map(|(k, _)| k), Some(k(2, 1, None)));
    rs.remove(k(1, 3, Some(5)));
    assert!(rs.by_host.is_empty() && rs.by_key.is_empty());
    assert_eq!(rs.evict_oldest().map(|(k, _)| k), None);
}

/// When the last route goes, the slab starts over: the next routes take slots in
/// the order they come (not the last freed first), and no cookie of a route from
/// before names one of them, even after its slot was taken many times.
#[test]
fn an_emptied_slab_starts_over_and_old_cookies_name_nothing() {
    let mut rs = Routes::with_seed(99);
    let slot = |c: u64| c & SLOT_MASK;
    let mut old = Vec::new();
    for round in 0..5 {
        for n in 2..=9 {
            old.push(rs.insert(k(1, n, None), r(), 1, 2).cookie);
        }
        // Slot 0 taken again and again: its generation runs ahead of the others'.
        for _ in 0..round * 10 {
            old.push(rs.insert(k(1, 2, None), r(), 1, 2).cookie);
        }
        // Removed in the order installed: a free list would hand them out reversed.
        for n in 2..=9 {
            assert!(rs.remove(k(1, n, None)).is_some());
        }
        assert!(rs.slots.is_empty() && rs.free.is_empty() && rs.order.is_empty());
        let fresh: Vec<u64> = (2..=9)
            .map(|n| rs.insert(k(3, n, None), r(), 1, 2).cookie)
            .collect();
        assert_eq!(
            fresh.iter().map(|&c| slot(c)).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
        for &c in &old {
            assert_eq!(
                rs.key_of_cookie(c),
                None,
                "round {round}: an old cookie names a new route"
            );
        }
        old.extend(fresh);
        for n in 2..=9 {
            rs.remove(k(3, n, None));
        }
    }
}

/// A stop empties the routes but keeps their index, so the prefetch hint the app
/// holds stays the index's after a restart.
#[test]
fn the_route_hint_names_the_index_through_a_stop() {
    let app = Routing::new(Params::default());
    let hint = &app.shared.routes_hint;
    assert!(hint.is_unused());
    app.shared.routes().insert(k(1, 2, None), r(), 1, 2);
    assert!(!hint.is_unused());
    app.stop();
    assert!(hint.is_unused() && app.shared.routes_read().len() == 0);
    app.shared.routes().insert(k(1, 2, None), r(), 1, 2);
    assert!(!hint.is_unused(), "the app's hint is the new routes' hint");
    assert!(Arc::ptr_eq(hint, app.shared.routes_read().by_key.hint()));
}

proptest::proptest! {
    /// Against a plain model (a map of routes and the order they were installed
    /// in): after any inserts, removals, removals by cookie and evictions, the same
    /// routes are installed, each host's routes are the ones from or to it, and the
    /// oldest is evicted first.
    #[test]
    fn the_slab_behaves_as_a_map_with_an_install_order(
        ops in proptest::collection::vec((0u8..4, 1u8..6, 1u8..6, proptest::bool::ANY), 1..200)
    ) {
        use std::collections::BTreeMap;
        let mut rs = Routes::with_seed(7);
        // key → (cookie, install sequence)
        let mut model: BTreeMap<(u8, u8, bool), (u64, u64)> = BTreeMap::new();
        let key = |a: u8, b: u8, v: bool| k(a, b, v.then_some(9));
        for (seq, (op, a, b, v)) in ops.into_iter().enumerate() {
            match op {
                0 | 1 => {
                    let c = rs.insert(key(a, b, v), r(), 1, 2).cookie;
                    model.insert((a, b, v), (c, seq as u64));
                }
                2 => {
                    let gone = rs.remove(key(a, b, v)).map(|r| r.cookie);
                    proptest::prop_assert_eq!(gone, model.remove(&(a, b, v)).map(|m| m.0));
                }
                _ => {
                    let oldest = model.iter().min_by_key(|(_, m)| m.1).map(|(k, _)| *k);
                    let evicted = rs.evict_oldest().map(|(k, _)| k);
                    proptest::prop_assert_eq!(evicted, oldest.map(|(a, b, v)| key(a, b, v)));
                    if let Some(o) = oldest {
                        model.remove(&o);
                    }
                }
            }
            proptest::prop_assert_eq!(rs.len(), model.len());
            for (&(a, b, v), &(cookie, _)) in &model {
                proptest::prop_assert_eq!(rs.key_of_cookie(cookie), Some(key(a, b, v)));
            }
            for h in 1u8..6 {
                for v in [false, true] {
                    let mut want: Vec<Key> = model
                        .keys()
                        .filter(|&&(a, b, w)| w == v && (a == h || b == h))
                        .map(|&(a, b, w)| key(a, b, w))
                        .collect();
                    want.sort_by_key(|k| (k.src.0, k.dst.0));
                    proptest::prop_assert_eq!(of(&rs, h, v.then_some(9)), want);
                }
            }
        }
    }
}

/// A cookie names its route while it is installed, and never the route that takes
/// its slot after it; a host's chain survives removals at its head, middle and end.
#[test]
fn cookies_name_slots_and_generations_and_host_chains_follow_removals() {
    let mut rs = Routes::with_seed(12345);
    let c12 = rs.insert(k(1, 2, None), r(), 1, 2).cookie;
    assert_eq!(c12 & !COOKIE_SEQ, COOKIE_TAG);
    assert_eq!(rs.key_of_cookie(c12), Some(k(1, 2, None)));
    for n in 3..=6 {
        rs.insert(k(1, n, None), r(), 1, 2);
    }
    assert_eq!(of(&rs, 1, None).len(), 5);
    // The middle, the newest (head) and the oldest (tail) of host 1's chain.
    for gone in [4, 6, 2] {
        assert!(rs.remove(k(1, gone, None)).is_some());
    }
    assert_eq!(of(&rs, 1, None), [k(1, 3, None), k(1, 5, None)]);
    assert_eq!(of(&rs, 4, None), []);
    assert_eq!(rs.key_of_cookie(c12), None, "removed");
    // The freed slot is taken again: the old cookie does not name the new route.
    let c78 = rs.insert(k(7, 8, None), r(), 1, 2).cookie;
    assert_eq!(c78 & SLOT_MASK, c12 & SLOT_MASK, "the same slot");
    assert_ne!(c78, c12);
    assert_eq!(rs.key_of_cookie(c12), None);
    assert_eq!(rs.key_of_cookie(c78), Some(k(7, 8, None)));
    assert_eq!(
        rs.key_of_cookie(c78 & !COOKIE_TAG),
        None,
        "another app's cookie"
    );
    // Re-installing a key replaces its route (one entry in each index).
    let again = rs.insert(k(1, 3, None), r(), 4, 2).cookie;
    assert_eq!(rs.len(), 3);
    assert_eq!(rs.get(&k(1, 3, None)).map(|r| r.in_port), Some(4));
    assert_eq!(of(&rs, 1, None), [k(1, 3, None), k(1, 5, None)]);
    assert_eq!(rs.key_of_cookie(again), Some(k(1, 3, None)));
}
