use std::collections::{BTreeMap, BTreeSet};

use controller::app::Dpid;
use proptest::prelude::*;

use super::topo::{cable, linear, ring, FatTree};
use super::*;

/// Every (src, dst) with a next hop: (out port, next switch).
fn next_hops(e: &ShortestPaths, switches: &[Dpid]) -> BTreeMap<(u64, u64), (u32, u64)> {
    let mut m = BTreeMap::new();
    for &s in switches {
        for &d in switches {
            if let Some(port) = e.next_hop(s, d) {
                let r = e.route(s, d).unwrap();
                assert_eq!(r.links[0].src_port, port);
                m.insert((s.0, d.0), (port, r.links[0].dst.0));
            }
        }
    }
    m
}

/// Checks every route is a chain of known links of the length `distance` gives.
fn check_routes(e: &ShortestPaths, switches: &[Dpid], links: &BTreeSet<Link>) {
    for &s in switches {
        for &d in switches {
            let Some(r) = e.route(s, d) else {
                assert_eq!(e.distance(s, d), None);
                continue;
            };
            assert_eq!(Some(r.links.len() as u32), e.distance(s, d));
            let mut at = s;
            for l in &r.links {
                assert!(links.contains(l), "{l:?} not a link");
                assert_eq!(l.src, at);
                at = l.dst;
            }
            assert_eq!(at, d);
        }
    }
}

fn dpids(v: &[u64]) -> Vec<Dpid> {
    v.iter().copied().map(Dpid).collect()
}

#[test]
fn linear_routes() {
    let (sw, links) = linear(4);
    let e = ShortestPaths::from_links(sw.clone(), links.clone());
    check_routes(&e, &sw, &links.iter().copied().collect());
    assert_eq!(e.distance(Dpid(1), Dpid(4)), Some(3));
    assert_eq!(e.next_hop(Dpid(1), Dpid(4)), Some(2));
    assert_eq!(e.next_hop(Dpid(4), Dpid(1)), Some(1));
    assert_eq!(e.next_hop(Dpid(2), Dpid(2)), None);
    let r = e.route(Dpid(1), Dpid(3)).unwrap();
    let hops: Vec<_> = r
        .path_ports(7, 9)
        .map(|h| (h.dpid.0, h.in_port, h.out_port))
        .collect();
    assert_eq!(hops, [(1, 7, 2), (2, 1, 2), (3, 1, 9)]);
    let own = e.route(Dpid(2), Dpid(2)).unwrap();
    let hops: Vec<_> = own
        .path_ports(7, 9)
        .map(|h| (h.dpid.0, h.in_port, h.out_port))
        .collect();
    assert_eq!(hops, [(2, 7, 9)]);
}

#[test]
fn ring_ties_go_to_the_lowest_next_dpid() {
    let (sw, links) = ring(4);
    let e = ShortestPaths::from_links(sw, links.clone());
    // 1 → 3: via 2 (port 2) or via 4 (port 1), both 2 hops: 2 wins.
    assert_eq!(e.distance(Dpid(1), Dpid(3)), Some(2));
    assert_eq!(e.route(Dpid(1), Dpid(3)).unwrap().links[0].dst, Dpid(2));
    // 3 → 1 and 4 → 2 alike.
    assert_eq!(e.route(Dpid(3), Dpid(1)).unwrap().links[0].dst, Dpid(2));
    assert_eq!(e.route(Dpid(4), Dpid(2)).unwrap().links[0].dst, Dpid(1));
    // The same links in another order give the same routes.
    let mut incremental = ShortestPaths::new();
    for l in links.iter().rev() {
        incremental.link_added(*l);
    }
    let sw = dpids(&[1, 2, 3, 4]);
    assert_eq!(next_hops(&incremental, &sw), next_hops(&e, &sw));
}

#[test]
fn parallel_links_tie_on_the_lowest_port() {
    let mut e = ShortestPaths::new();
    e.link_added(Link::new(1, 5, 2, 1));
    e.link_added(Link::new(1, 3, 2, 2));
    assert_eq!(e.next_hop(Dpid(1), Dpid(2)), Some(3));
    let c = e.link_removed(Link::new(1, 3, 2, 2));
    assert_eq!(e.next_hop(Dpid(1), Dpid(2)), Some(5));
    assert_eq!(c.iter().collect::<Vec<_>>(), [(Dpid(1), Dpid(2))]);
}

#[test]
fn fat_tree_path_lengths() {
    let ft = FatTree { k: 4 };
    let (sw, links) = (ft.switches(), ft.links());
    assert_eq!((sw.len(), links.len()), (20, 64));
    let e = ShortestPaths::from_links(sw.clone(), links.clone());
    check_routes(&e, &sw, &links.iter().copied().collect());
    for p in 0..4 {
        for q in 0..4 {
            for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                let want = if (p, i) == (q, j) {
                    0
                } else if p == q {
                    2
                } else {
                    4
                };
                assert_eq!(e.distance(ft.edge(p, i), ft.edge(q, j)), Some(want));
            }
        }
    }
    // Lowest dpids first: edge (0, 0) goes up by aggregation (0, 0) and core (0, 0).
    let r = e.route(ft.edge(0, 0), ft.edge(3, 1)).unwrap();
    let via: Vec<_> = r.switches().collect();
    assert_eq!(
        via,
        [
            ft.edge(0, 0),
            ft.agg(0, 0),
            ft.core(0, 0),
            ft.agg(3, 0),
            ft.edge(3, 1)
        ]
    );
}

#[test]
fn link_removal_moves_routes_off_the_link() {
    let ft = FatTree { k: 4 };
    let (sw, links) = (ft.switches(), ft.links());
    let mut e = ShortestPaths::from_links(sw.clone(), links.clone());
    let (a, b) = (ft.edge(0, 0), ft.edge(2, 1));
    let before = e.route(a, b).unwrap();
    let old = next_hops(&e, &sw);
    let version = e.version();
    let down = before.links[2]; // core (0, 0) → aggregation (2, 0)
    let changes = e.link_removed(down);
    assert!(e.version() > version);
    assert!(changes.affects(&before));
    let after = e.route(a, b).unwrap();
    assert_eq!(after.links.len(), 4);
    assert!(!after.links.contains(&down));
    // Exactly the pairs whose next hop moved are reported.
    let new = next_hops(&e, &sw);
    let moved: BTreeSet<_> = old
        .keys()
        .chain(new.keys())
        .filter(|k| old.get(k) != new.get(k))
        .copied()
        .collect();
    let reported: BTreeSet<_> = changes.iter().map(|(s, d)| (s.0, d.0)).collect();
    assert_eq!(reported, moved);
    // A route that never used the link is unaffected.
    let other = e.route(ft.edge(1, 0), ft.edge(1, 1)).unwrap();
    assert!(!changes.affects(&other));
    // Removing it again, or a link never seen, changes nothing.
    assert!(e.link_removed(down).is_empty());
    assert!(e.link_removed(Link::new(99, 1, 98, 1)).is_empty());
    let v = e.version();
    assert!(e.link_added(links[0]).is_empty());
    assert_eq!(e.version(), v);
}

#[test]
fn disconnected_switches_have_no_route() {
    let mut e = ShortestPaths::new();
    for l in cable(1, 1, 2, 1).into_iter().chain(cable(3, 1, 4, 1)) {
        e.link_added(l);
    }
    e.switch_added(Dpid(5));
    assert_eq!(e.switch_count(), 5);
    assert_eq!(e.route(Dpid(1), Dpid(3)), None);
    assert_eq!(e.next_hop(Dpid(1), Dpid(4)), None);
    assert_eq!(e.route(Dpid(5), Dpid(1)), None);
    assert_eq!(e.route(Dpid(1), Dpid(9)), None);
    assert_eq!(e.distance(Dpid(1), Dpid(2)), Some(1));
    let c = e.link_added(Link::new(2, 2, 3, 2));
    assert_eq!(e.distance(Dpid(1), Dpid(4)), Some(3));
    // One way only: 4 still cannot reach 1.
    assert_eq!(e.route(Dpid(4), Dpid(1)), None);
    assert!(c.contains(Dpid(1), Dpid(4)) && c.contains(Dpid(2), Dpid(3)));
    let c = e.switch_removed(Dpid(2));
    assert_eq!(e.route(Dpid(1), Dpid(4)), None);
    assert!(c.contains(Dpid(1), Dpid(4)) && c.contains(Dpid(1), Dpid(2)));
    assert_eq!(e.switch_count(), 4);
    // The freed slot is reused, empty.
    e.switch_added(Dpid(6));
    assert_eq!(e.route(Dpid(6), Dpid(1)), None);
    assert_eq!(e.distance(Dpid(6), Dpid(6)), Some(0));
}

#[test]
fn thousand_switch_fat_tree_recomputes_incrementally() {
    let ft = FatTree { k: 28 };
    let (sw, links) = (ft.switches(), ft.links());
    assert_eq!(sw.len(), 980);
    let mut e = ShortestPaths::from_links(sw.clone(), links.clone());
    let (a, b) = (ft.edge(0, 0), ft.edge(27, 13));
    assert_eq!(e.distance(a, b), Some(4));
    let before = e.route(a, b).unwrap();
    let mut moved = BTreeSet::new();
    for l in cable(ft.edge(0, 0).0, 15, ft.agg(0, 0).0, 1) {
        moved.extend(e.link_removed(l).iter().map(|(s, d)| (s.0, d.0)));
    }
    assert!(moved.contains(&(a.0, b.0)));
    let after = e.route(a, b).unwrap();
    assert_eq!(after.links.len(), 4);
    assert_ne!(after, before);
    assert_eq!(after.links[0].dst, ft.agg(0, 1));
    let mut kept: BTreeSet<Link> = links.iter().copied().collect();
    kept.remove(&Link::new(ft.edge(0, 0).0, 15, ft.agg(0, 0).0, 1));
    kept.remove(&Link::new(ft.agg(0, 0).0, 1, ft.edge(0, 0).0, 15));
    let scratch = ShortestPaths::from_links(sw.clone(), kept);
    assert!(e.same_tables(&scratch));
    for l in cable(ft.edge(0, 0).0, 15, ft.agg(0, 0).0, 1) {
        e.link_added(l);
    }
    assert_eq!(e.route(a, b).unwrap(), before);
    assert!(e.same_tables(&ShortestPaths::from_links(sw, links)));
}

/// Checks the tree is a spanning forest of the topology: one tree per component.
fn tree_components(tree: &SpanningTree, switches: &[Dpid], links: &[Link]) {
    // Components of the topology (cables either way), by union-find.
    let mut parent: BTreeMap<u64, u64> = switches.iter().map(|d| (d.0, d.0)).collect();
    fn find(p: &mut BTreeMap<u64, u64>, x: u64) -> u64 {
        let up = p[&x];
        if up == x {
            return x;
        }
        let r = find(p, up);
        p.insert(x, r);
        r
    }
    let joined = |p: &mut BTreeMap<u64, u64>, a: u64, b: u64| {
        let (ra, rb) = (find(p, a), find(p, b));
        p.insert(ra.max(rb), ra.min(rb));
        ra != rb
    };
    for l in links {
        joined(&mut parent, l.src.0, l.dst.0);
    }
    let components = switches
        .iter()
        .map(|d| find(&mut parent, d.0))
        .collect::<BTreeSet<_>>()
        .len();
    // n - c tree cables that join all of them with no cycle: a spanning forest.
    assert_eq!(tree.links().len(), switches.len() - components);
    let mut forest: BTreeMap<u64, u64> = switches.iter().map(|d| (d.0, d.0)).collect();
    for t in tree.links() {
        assert!(links.contains(t) || links.contains(&t.reversed()), "{t:?}");
        assert!(joined(&mut forest, t.src.0, t.dst.0), "cycle at {t:?}");
        assert!(tree.is_tree_port(t.src, t.src_port) && tree.is_tree_port(t.dst, t.dst_port));
    }
    for d in switches {
        assert_eq!(
            find(&mut forest, d.0),
            find(&mut parent, d.0),
            "{d} not reached"
        );
    }
}

#[test]
fn spanning_tree_of_a_ring_blocks_one_cable() {
    let (sw, links) = ring(4);
    let t = SpanningTree::from_links(sw.clone(), links.clone());
    tree_components(&t, &sw, &links);
    // From 1: cables to 2 and 4; then 2 reaches 3; the cable 3 — 4 is blocked.
    assert!(!t.floods(Dpid(3), 2) && !t.floods(Dpid(4), 1));
    assert!(t.floods(Dpid(1), 1) && t.floods(Dpid(1), 2) && t.floods(Dpid(4), 2));
    assert!(t.floods(Dpid(3), 7), "a host port");
    // The cable 1 — 2 goes: the tree takes 3 — 4 instead.
    let mut t2 = t.clone();
    assert!(
        !t2.link_removed(Link::new(1, 2, 2, 1)),
        "the other direction holds it"
    );
    assert!(t2.link_removed(Link::new(2, 1, 1, 2)));
    assert!(t2.floods(Dpid(3), 2) && t2.floods(Dpid(4), 1));
    let kept: Vec<Link> = links
        .iter()
        .copied()
        .filter(|l| l.src.0 + l.dst.0 != 3)
        .collect();
    tree_components(&t2, &sw, &kept);
    assert_eq!(
        t2.links(),
        SpanningTree::from_links(sw.clone(), kept).links()
    );
    // Removing a blocked cable changes nothing.
    let mut t3 = t.clone();
    assert!(!t3.link_removed(Link::new(3, 2, 4, 1)) && !t3.link_removed(Link::new(4, 1, 3, 2)));
    assert_eq!(t3.links(), t.links());
}

#[test]
fn spanning_tree_of_fat_trees() {
    for k in [4, 8, 28] {
        let ft = FatTree { k };
        let (sw, links) = (ft.switches(), ft.links());
        let mut t = SpanningTree::from_links(sw.clone(), links.clone());
        tree_components(&t, &sw, &links);
        // Cut pod 0's edge (0, 0) off entirely: two components.
        let cut: Vec<Link> = links
            .iter()
            .copied()
            .filter(|l| l.src == ft.edge(0, 0) || l.dst == ft.edge(0, 0))
            .collect();
        for l in &cut {
            t.link_removed(*l);
        }
        let kept: Vec<Link> = links.iter().copied().filter(|l| !cut.contains(l)).collect();
        tree_components(&t, &sw, &kept);
        assert_eq!(t.links().len(), sw.len() - 2);
        for l in &cut {
            t.link_added(*l);
        }
        assert_eq!(
            t.links(),
            SpanningTree::from_links(sw.clone(), links.clone()).links()
        );
    }
}

#[derive(Debug, Clone)]
enum Op {
    Link(Link),
    Cable(Link),
    Unlink(usize),
    Uncable(usize),
    AddSwitch(u64),
    RemoveSwitch(u64),
}

fn op(n: u64) -> impl Strategy<Value = Op> {
    let link =
        (1..=n, 1..=3u32, 1..=n, 1..=3u32).prop_map(|(a, pa, b, pb)| Link::new(a, pa, b, pb));
    prop_oneof![
        2 => link.clone().prop_map(Op::Link),
        4 => link.prop_map(Op::Cable),
        2 => any::<usize>().prop_map(Op::Unlink),
        2 => any::<usize>().prop_map(Op::Uncable),
        1 => (1..=n).prop_map(Op::AddSwitch),
        1 => (1..=n).prop_map(Op::RemoveSwitch),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// After any sequence of changes, the repaired tables are the ones a recompute from
    /// scratch gives, the reported changes are exactly the next hops that moved, and the
    /// spanning tree is the one a recompute gives, and spans.
    #[test]
    fn incremental_equals_from_scratch(
        ops in (2..10u64).prop_flat_map(|n| prop::collection::vec(op(n), 1..40))
    ) {
        let mut e = ShortestPaths::new();
        let mut t = SpanningTree::new();
        let mut switches: BTreeSet<u64> = BTreeSet::new();
        let mut links: BTreeSet<Link> = BTreeSet::new();
        for op in ops {
            let all = dpids(&(1..=9).collect::<Vec<_>>());
            // Asking every next hop makes the table of every switch there is now: the
            // changes are reported for those (a table made later starts from the
            // topology as it is then).
            let before = next_hops(&e, &all);
            let had_table = switches.clone();
            let version = e.version();
            let pick = |i: usize| links.iter().nth(i % links.len().max(1)).copied();
            let (changes, changed) = match op {
                Op::Link(l) => {
                    let new = links.insert(l);
                    let ends = [l.src.0, l.dst.0];
                    let new = new || !ends.iter().all(|d| switches.contains(d));
                    switches.extend(ends);
                    t.link_added(l);
                    (e.link_added(l).iter().collect(), new)
                }
                Op::Cable(l) => {
                    let new = links.insert(l) | links.insert(l.reversed());
                    switches.extend([l.src.0, l.dst.0]);
                    t.link_added(l);
                    t.link_added(l.reversed());
                    let mut c: Vec<_> = e.link_added(l).iter().collect();
                    c.extend(e.link_added(l.reversed()).iter());
                    (c, new)
                }
                Op::Unlink(i) | Op::Uncable(i) if links.is_empty() => {
                    let _ = i;
                    continue;
                }
                Op::Unlink(i) => {
                    let l = pick(i).unwrap();
                    links.remove(&l);
                    t.link_removed(l);
                    (e.link_removed(l).iter().collect(), true)
                }
                Op::Uncable(i) => {
                    let l = pick(i).unwrap();
                    links.remove(&l);
                    links.remove(&l.reversed());
                    t.link_removed(l);
                    let mut c: Vec<_> = e.link_removed(l).iter().collect();
                    t.link_removed(l.reversed());
                    c.extend(e.link_removed(l.reversed()).iter());
                    (c, true)
                }
                Op::AddSwitch(d) => {
                    let new = switches.insert(d);
                    t.switch_added(Dpid(d));
                    e.switch_added(Dpid(d));
                    (Vec::new(), new)
                }
                Op::RemoveSwitch(d) => {
                    let had = switches.remove(&d);
                    links.retain(|l| l.src.0 != d && l.dst.0 != d);
                    t.switch_removed(Dpid(d));
                    (e.switch_removed(Dpid(d)).iter().collect(), had)
                }
            };
            prop_assert_eq!(e.version() > version, changed);
            let sw = dpids(&switches.iter().copied().collect::<Vec<_>>());
            let scratch = ShortestPaths::from_links(sw.clone(), links.iter().copied());
            prop_assert!(e.same_tables(&scratch));
            prop_assert_eq!(e.switch_count(), switches.len());
            check_routes(&e, &sw, &links);
            let after = next_hops(&e, &all);
            prop_assert_eq!(&after, &next_hops(&scratch, &all));
            let moved: BTreeSet<_> = before.keys().chain(after.keys())
                .filter(|k| before.get(k) != after.get(k))
                .filter(|(_, d)| had_table.contains(d))
                .copied().collect();
            let reported: BTreeSet<_> = changes.iter().map(|(s, d)| (s.0, d.0)).collect();
            prop_assert_eq!(reported, moved);
            let fresh = SpanningTree::from_links(sw.clone(), links.iter().copied());
            prop_assert_eq!(t.links(), fresh.links());
            tree_components(&t, &sw, &links.iter().copied().collect::<Vec<_>>());
        }
    }
}

/// Tables are made when a route to their destination is first asked, repaired from
/// then on, and dropped with their switch: a network of many switches and few
/// destinations holds few tables.
#[test]
fn a_destinations_table_is_made_when_first_asked_and_repaired_from_then_on() {
    let mut e = ShortestPaths::new();
    let (switches, links) = ring(200);
    for l in &links {
        e.link_added(*l);
    }
    assert_eq!(e.switch_count(), 200);
    assert_eq!(e.tables_made(), 0, "no route asked, no table");
    let empty = e.table_bytes();
    assert!(
        empty < 200 * 64,
        "{empty} bytes for 200 switches and no table"
    );

    // Hosts on one switch need no table.
    assert_eq!(e.route(Dpid(7), Dpid(7)).unwrap().links, Vec::new());
    assert_eq!(e.next_hop(Dpid(7), Dpid(7)), None);
    assert_eq!(e.tables_made(), 0);

    let r = e.route(Dpid(1), Dpid(100)).unwrap();
    assert_eq!(r.links.len(), 99);
    assert_eq!(e.tables_made(), 1);
    assert_eq!(e.table_bytes() - empty, 200 * 12);

    // Cut the ring next to 1 on the short way: the made table is repaired (the
    // change is reported), the others are still not made.
    let changes = e.link_removed(Link::new(1, 2, 2, 1));
    assert!(
        changes.iter().any(|(s, d)| (s.0, d.0) == (1, 100)),
        "{changes:?}"
    );
    assert_eq!(e.tables_made(), 1);
    let scratch = ShortestPaths::from_links(switches.clone(), {
        let mut l = links.clone();
        l.retain(|l| *l != Link::new(1, 2, 2, 1));
        l
    });
    for s in [1, 2, 50, 150, 200] {
        assert_eq!(
            e.route(Dpid(s), Dpid(100)).map(|r| r.links),
            scratch.route(Dpid(s), Dpid(100)).map(|r| r.links),
            "from {s}"
        );
    }
    assert_eq!(e.tables_made(), 1);
    e.switch_removed(Dpid(100));
    assert_eq!(e.tables_made(), 0, "the table went with its switch");
}
