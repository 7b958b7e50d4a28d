//! The routing engine on the "1,000-switch fat tree" (k = 28: 980 switches, 10,976
//! cables, 21,952 links):
//!
//! * `routing/full_compute`: every table from scratch (one BFS per destination), for
//!   reference;
//! * `routing/cable_down/{edge_agg,agg_core}`, `routing/cable_up/...`: the incremental
//!   repair after one cable (both its links) goes down or comes back. Each cable is the
//!   first uplink of its switch, which the equal-cost rule (lowest dpid) puts on the
//!   routes to every destination outside the pod: the worst cables to lose;
//! * `tree/cable_down/edge_agg`: the spanning tree's recomputation for the same cable;
//!   `tree/cable_down/blocked` a cable off the tree (no recomputation).
//!
//! Only the change is timed: the opposite change, which restores the topology between
//! iterations, is not. The tables' size, and how many (switch, destination) next hops
//! each cable's changes move, are printed once.
//!
//! Run: `cargo bench -p pharos-apps --bench routing`. Figures go in BENCHMARKS.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use apps::routing::topo::{cable, FatTree};
use apps::routing::{Link, RoutingEngine, ShortestPaths, SpanningTree};
use criterion::{criterion_group, criterion_main, Criterion};

const FT: FatTree = FatTree { k: 28 };

fn cables() -> [(&'static str, [Link; 2]); 2] {
    let h = FT.k / 2;
    [
        ("edge_agg", cable(FT.edge(0, 0).0, h + 1, FT.agg(0, 0).0, 1)),
        ("agg_core", cable(FT.agg(0, 0).0, h + 1, FT.core(0, 0).0, 1)),
    ]
}

/// Times `change` only, running `undo` after each (untimed).
fn timed<T>(state: &mut T, iters: u64, change: impl Fn(&mut T), undo: impl Fn(&mut T)) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let t = Instant::now();
        change(state);
        total += t.elapsed();
        undo(state);
    }
    total
}

fn engine(c: &mut Criterion) {
    let mut e = ShortestPaths::from_links(FT.switches(), FT.links());
    let n = e.switch_count();
    eprintln!(
        "routing tables: {} switches, {} bytes, {:.2} bytes per switch pair",
        n,
        e.table_bytes(),
        e.table_bytes() as f64 / (n * n) as f64
    );
    for (name, links) in cables() {
        let down: usize = links.iter().map(|&l| e.link_removed(l).len()).sum();
        let up: usize = links.iter().map(|&l| e.link_added(l).len()).sum();
        eprintln!("{name} cable: next hops changed: {down} going down, {up} coming back");
    }
    let mut g = c.benchmark_group("routing");
    g.sample_size(10);
    g.bench_function("full_compute", |b| {
        b.iter(|| black_box(&mut e).recompute_all())
    });
    for (name, links) in cables() {
        let down = |e: &mut ShortestPaths| {
            for l in links {
                black_box(e.link_removed(l));
            }
        };
        let up = |e: &mut ShortestPaths| {
            for l in links {
                black_box(e.link_added(l));
            }
        };
        g.bench_function(format!("cable_down/{name}"), |b| {
            b.iter_custom(|iters| timed(&mut e, iters, down, up))
        });
        g.bench_function(format!("cable_up/{name}"), |b| {
            b.iter_custom(|iters| {
                down(&mut e);
                let t = timed(&mut e, iters, up, down);
                up(&mut e);
                t
            })
        });
    }
    g.finish();
}

fn tree(c: &mut Criterion) {
    let mut t = SpanningTree::from_links(FT.switches(), FT.links());
    let [(_, on_tree), _] = cables();
    // A cable the tree blocks: edge (0, 1)'s second uplink (the first reached it).
    let h = FT.k / 2;
    let blocked = cable(FT.edge(0, 1).0, h + 2, FT.agg(0, 1).0, 2);
    assert!(!t.is_tree_port(FT.edge(0, 1), h + 2));
    let mut g = c.benchmark_group("tree");
    g.sample_size(10);
    for (name, links) in [("edge_agg", on_tree), ("blocked", blocked)] {
        g.bench_function(format!("cable_down/{name}"), |b| {
            b.iter_custom(|iters| {
                let down = |t: &mut SpanningTree| {
                    links.iter().for_each(|&l| _ = black_box(t.link_removed(l)))
                };
                let up = |t: &mut SpanningTree| {
                    links.iter().for_each(|&l| _ = black_box(t.link_added(l)))
                };
                timed(&mut t, iters, down, up)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, engine, tree);
criterion_main!(benches);
