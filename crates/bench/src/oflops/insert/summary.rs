//! Test 2's runs summed up: a table per operation and match, the barrier-before-data
//! findings, and the figures.

use super::super::flows::MatchKind;
use super::super::probe::Spread;
use super::super::report::{ms, ms_spread, Plot, Point, Series, Table, TestOutput};
use super::{InsertConfig, InsertPoint, InsertRun, Op};

fn spread_of(v: impl Iterator<Item = i64>) -> Option<Spread> {
    let v: Vec<i64> = v.collect();
    Spread::of(&v)
}

/// The points, tables, plots and findings of a set of runs.
pub fn summarise(cfg: &InsertConfig, runs: &[InsertRun], cut: bool) -> TestOutput {
    let mut points = Vec::new();
    for &op in &cfg.ops {
        for &kind in &cfg.kinds {
            for &n in &cfg.counts {
                let rs: Vec<&InsertRun> = runs
                    .iter()
                    .filter(|r| r.op == op && r.kind == kind && r.flows == n)
                    .collect();
                if rs.is_empty() {
                    continue;
                }
                points.push(InsertPoint {
                    flows: n,
                    kind,
                    op,
                    runs: rs.len(),
                    barrier: spread_of(rs.iter().map(|r| r.barrier_ns)),
                    transmit: spread_of(rs.iter().map(|r| r.transmit_ns)),
                    last_flow: spread_of(rs.iter().filter_map(|r| r.last_flow_ns)),
                    all_flows: spread_of(rs.iter().filter_map(|r| r.all_flows_ns)),
                    barrier_first: rs
                        .iter()
                        .filter(|r| r.barrier_first() == Some(true))
                        .count(),
                    never_active: rs.iter().filter(|r| r.last_flow_ns.is_none()).count(),
                });
            }
        }
    }
    let mut out = TestOutput::new("insert");
    let mut t = Table::new(
        "Flow insertion (test 2): ms from the first FLOW_MOD, median [p10, p90]",
        &[
            "op",
            "match",
            "flows",
            "runs",
            "transmit",
            "barrier reply",
            "last flow forwards",
            "all flows forward",
            "barrier first",
        ],
    );
    for p in &points {
        t.row(vec![
            p.op.name().into(),
            p.kind.name().into(),
            p.flows.to_string(),
            p.runs.to_string(),
            ms_spread(p.transmit.as_ref()),
            ms_spread(p.barrier.as_ref()),
            ms_spread(p.last_flow.as_ref()),
            ms_spread(p.all_flows.as_ref()),
            format!(
                "{}/{}{}",
                p.barrier_first,
                p.runs,
                if p.never_active > 0 {
                    format!(" ({} never forwarded)", p.never_active)
                } else {
                    String::new()
                }
            ),
        ]);
    }
    t.note = Some(format!(
        "probe {} frames/s, alternating the last flow and each flow in turn: \
         last-flow resolution {} ms, all-flows resolution 2N/rate; \
         'barrier first' = runs where the BARRIER_REPLY was read before the last flow forwarded; \
         delete rows: until the LAST probe forwarded (0 = none after the first FLOW_MOD), \
         'barrier first' = probes still forwarded after the BARRIER_REPLY",
        cfg.probe_rate,
        ms(2e9 / cfg.probe_rate)
    ));
    out.tables.push(t);
    let up: Vec<&InsertRun> = runs.iter().filter(|r| r.op != Op::Delete).collect();
    let total = up.len();
    let first = up
        .iter()
        .filter(|r| r.barrier_first() == Some(true))
        .count();
    let after = up
        .iter()
        .filter(|r| r.barrier_first() == Some(false))
        .count();
    let never = up.iter().filter(|r| r.last_flow_ns.is_none()).count();
    out.findings.push(format!(
        "the BARRIER_REPLY came before the last new flow forwarded a probe in {first} of {total} runs \
         (after it in {after}; {never} runs never saw the last flow forward)"
    ));
    let violated: Vec<&InsertRun> = runs.iter().filter(|r| r.barrier_violations > 0).collect();
    out.findings.push(format!(
        "the BARRIER_REPLY was ahead of the data path in {} of {} runs: probes sent after it \
         were dropped by a new flow, or forwarded by a deleted one ({} probes in all)",
        violated.len(),
        runs.len(),
        violated.iter().map(|r| r.barrier_violations).sum::<usize>()
    ));
    let del: Vec<&InsertRun> = runs.iter().filter(|r| r.op == Op::Delete).collect();
    if !del.is_empty() {
        let stale = del
            .iter()
            .filter(|r| r.all_flows_ns.is_some_and(|t| t > r.barrier_ns))
            .count();
        let worst = del.iter().filter_map(|r| r.all_flows_ns).max().unwrap_or(0);
        let unstopped = del.iter().filter(|r| r.all_flows_ns.is_none()).count();
        out.findings.push(format!(
            "after deletions, probes were still forwarded after the BARRIER_REPLY in {stale} of {} runs \
             (the last up to {} ms after the first FLOW_MOD{})",
            del.len(),
            ms(worst as f64),
            if unstopped > 0 {
                format!("; {unstopped} runs never went quiet within the timeout")
            } else {
                String::new()
            }
        ));
    }
    let kind0 = cfg.kinds.first().copied().unwrap_or(MatchKind::Exact);
    let growth = |p: &&InsertPoint| p.op == Op::Add && p.kind == kind0 && p.last_flow.is_some();
    if let (Some(a), Some(b)) = (points.iter().find(growth), points.iter().rev().find(growth)) {
        if b.flows > a.flows {
            let (la, lb) = (
                a.last_flow.unwrap().median as f64,
                b.last_flow.unwrap().median as f64,
            );
            out.findings.push(format!(
                "adding {} {} flows took {} ms to the data plane, {} flows {} ms: {:.1} µs per extra flow",
                a.flows,
                kind0.name(),
                ms(la),
                b.flows,
                ms(lb),
                (lb - la) / 1000.0 / (b.flows - a.flows) as f64
            ));
        }
    }
    if cut {
        out.findings
            .push("cut short by --max-seconds: not every point has every run".into());
    }
    // Figure 3: the three times against N (exact add); figure 4: data plane, add vs modify.
    for &kind in &cfg.kinds {
        let sel = |op: Op, f: &dyn Fn(&InsertPoint) -> Option<Spread>| -> Vec<Point> {
            points
                .iter()
                .filter(|p| p.op == op && p.kind == kind)
                .filter_map(|p| f(p).map(|s| Point::of_spread(p.flows as f64, &s, 1e-6)))
                .collect()
        };
        if cfg.ops.contains(&Op::Add) {
            out.plots.push(Plot {
                name: format!("insert-{}-add", kind.name()),
                title: format!("Flow insertion, {} match (paper fig. 3)", kind.name()),
                x_label: "flows inserted".into(),
                y_label: "ms from the first FLOW_MOD".into(),
                log_x: true,
                log_y: true,
                series: vec![
                    Series {
                        name: "barrier reply".into(),
                        points: sel(Op::Add, &|p| p.barrier),
                    },
                    Series {
                        name: "transmission".into(),
                        points: sel(Op::Add, &|p| p.transmit),
                    },
                    Series {
                        name: "first packet, last flow".into(),
                        points: sel(Op::Add, &|p| p.last_flow),
                    },
                ],
            });
        }
    }
    let mut fig4 = Vec::new();
    for &op in &cfg.ops {
        for &kind in &cfg.kinds {
            fig4.push(Series {
                name: format!("{} {}", op.name(), kind.name()),
                points: points
                    .iter()
                    .filter(|p| p.op == op && p.kind == kind)
                    .filter_map(|p| {
                        p.last_flow
                            .map(|s| Point::of_spread(p.flows as f64, &s, 1e-6))
                    })
                    .collect(),
            });
        }
    }
    out.plots.push(Plot {
        name: "insert-add-vs-modify".into(),
        title: "Insertion and modification, data plane (paper fig. 4)".into(),
        x_label: "flows".into(),
        y_label: "ms to the last flow's first packet".into(),
        log_x: true,
        log_y: true,
        series: fig4,
    });
    out.data = serde_json::json!({
        "config": cfg,
        "points": points,
        "runs": runs,
        "barrier_first_runs": first,
        "barrier_violation_runs": violated.len(),
        "delete_runs": del.len(),
        "barrier_after_runs": after,
        "never_active_runs": never,
        "cut_by_max_seconds": cut,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::run;
    use super::*;

    #[test]
    fn the_summary_counts_barriers_before_the_data_plane() {
        let cfg = InsertConfig {
            counts: vec![1, 100],
            kinds: vec![MatchKind::Exact],
            ops: vec![Op::Add, Op::Delete],
            reps: 2,
            ..InsertConfig::default()
        };
        let runs = [
            run(Op::Add, 1, 1, Some(5)),     // barrier first
            run(Op::Add, 1, 6, Some(5)),     // data plane first
            run(Op::Add, 100, 3, Some(4)),   // barrier first
            run(Op::Add, 100, 3, None),      // never forwarded
            run(Op::Delete, 1, 1, Some(40)), // forwarded 39 ms after the barrier
            run(Op::Delete, 1, 2, Some(0)),  // stopped at once
        ];
        let out = summarise(&cfg, &runs, false);
        assert_eq!(out.data["barrier_first_runs"], 2);
        assert_eq!(out.data["barrier_after_runs"], 1);
        assert_eq!(out.data["never_active_runs"], 1);
        assert_eq!(out.data["delete_runs"], 2);
        let f = out.findings.join("\n");
        assert!(
            f.contains("in 2 of 4 runs (after it in 1; 1 runs never"),
            "{f}"
        );
        assert!(f.contains("after the BARRIER_REPLY in 1 of 2 runs"), "{f}");
        // One row per point that has runs; the 100-flow add row says one never forwarded.
        let table = out.tables[0].render();
        assert!(table.contains("1/2 (1 never forwarded)"), "{table}");
        assert_eq!(out.tables[0].rows.len(), 3, "{table}");
    }
}
