//! The results as Markdown tables and as SVG plots.

use bench::oflops::report::{Plot, Point as PlotPoint, Series, Table};

use super::results::{DutResult, Point};
use super::DatapathArgs;

fn name(dut: &str) -> &str {
    match dut {
        "pharos" => "pharos switch (one flow in_port=1 actions=output:2)",
        "ovs" => "Open vSwitch userspace (one flow in_port=1 actions=output:2)",
        "bridge" => "Linux bridge",
        "ip" => "Linux IP forwarding",
        other => other,
    }
}

/// A Markdown section: `## title`, then the table.
fn section(title: String, t: &Table) {
    print!("\n## {title}\n\n{}", t.markdown());
}

/// The points of a throughput or load test.
fn points_table(points: &[Point]) -> Table {
    let mut t = Table::new(
        "",
        &[
            "size",
            "load",
            "offered pps",
            "received pps",
            "Mbit/s",
            "loss",
            "p50 µs",
            "p99 µs",
            "max µs",
        ],
    );
    for p in points {
        t.row(vec![
            p.size.to_string(),
            p.load.map_or("max".to_string(), |l| format!("{l:.2}")),
            format!("{:.0}", p.offered_pps),
            format!("{:.0}", p.received_pps),
            format!("{:.0}", p.received_mbps),
            format!("{:.3}", p.loss),
            format!("{:.1}", p.latency_us[0]),
            format!("{:.1}", p.latency_us[2]),
            format!("{:.1}", p.latency_us[4]),
        ]);
    }
    t
}

/// The tables of one device under test, as Markdown sections.
pub(super) fn print_result(r: &DutResult, a: &DatapathArgs) {
    let dut = name(&r.dut);
    section(
        format!("{dut}: one flow, as fast as the generator sends"),
        &points_table(&r.sizes),
    );
    section(
        format!("{dut}: 64-byte frames against offered load (of the 64-byte rate above)"),
        &points_table(&r.loads),
    );
    if !r.tables.is_empty() {
        let mut t = Table::new(
            "",
            &[
                "flows",
                "received pps",
                "of the smallest table's",
                "p50 µs",
                "p99 µs",
            ],
        );
        for x in &r.tables {
            t.row(vec![
                x.flows.to_string(),
                format!("{:.0}", x.point.received_pps),
                format!("{:.3}", x.of_smallest),
                format!("{:.1}", x.point.latency_us[0]),
                format!("{:.1}", x.point.latency_us[2]),
            ]);
        }
        section(
            format!("{dut}: 64-byte frames, N exact flows and N flows of traffic"),
            &t,
        );
    }
    if !r.mix.is_empty() {
        let mut t = Table::new(
            "",
            &[
                "exact share",
                "exact rules",
                "received pps",
                "ns per frame",
                "p50 µs",
                "p99 µs",
            ],
        );
        for m in &r.mix {
            t.row(vec![
                format!("{:.2}", m.exact_share),
                m.exact_rules.to_string(),
                format!("{:.0}", m.point.received_pps),
                format!("{:.0}", m.ns_per_frame),
                format!("{:.1}", m.point.latency_us[0]),
                format!("{:.1}", m.point.latency_us[2]),
            ]);
        }
        section(
            format!(
                "{dut}: 64-byte frames, {} wildcard rules (ten masks) and exact rules for a \
                 share of {} flows of traffic",
                a.wildcards,
                a.wildcards * 64
            ),
            &t,
        );
    }
    if !r.fairness.is_empty() {
        let mut t = Table::new(
            "",
            &[
                "inputs",
                "heavy load",
                "steady offered pps",
                "heavy offered pps",
                "steady loss",
                "heavy loss",
                "difference",
            ],
        );
        for f in &r.fairness {
            t.row(vec![
                f.inputs.to_string(),
                format!("{:.2}", f.load),
                format!("{:.0}", f.steady.offered_pps),
                format!("{:.0}", f.heavy.offered_pps),
                format!("{:.4}", f.steady.loss),
                format!("{:.4}", f.heavy.loss),
                format!("{:+.4}", f.loss_difference),
            ]);
        }
        section(
            format!(
                "{dut}: fairness, two 64-byte streams into one port, then into two (loads of \
                 the capacity)"
            ),
            &t,
        );
    }
}

/// The paper's figures: throughput against frame size, latency against offered load,
/// throughput against table size and against the traffic mix, fairness.
pub(super) fn plots(results: &[DutResult]) -> Vec<Plot> {
    let xy = |x: f64, y: f64| PlotPoint {
        x,
        y,
        lo: None,
        hi: None,
    };
    let plot = |name: &str, title: &str, x: &str, y: &str, log: (bool, bool), series| Plot {
        name: name.to_string(),
        title: title.to_string(),
        x_label: x.to_string(),
        y_label: y.to_string(),
        log_x: log.0,
        log_y: log.1,
        series,
    };
    let per_dut = |f: &dyn Fn(&DutResult) -> Vec<PlotPoint>| -> Vec<Series> {
        results
            .iter()
            .map(|r| Series {
                name: r.dut.clone(),
                points: f(r),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let mut out = vec![
        plot(
            "datapath-sizes",
            "Throughput of one flow against frame size",
            "frame size (bytes)",
            "received (kframes/s)",
            (false, false),
            per_dut(&|r| {
                r.sizes
                    .iter()
                    .map(|p| xy(p.size as f64, p.received_pps / 1e3))
                    .collect()
            }),
        ),
        plot(
            "datapath-latency",
            "64-byte latency (p50) against offered load",
            "offered (kframes/s)",
            "latency p50 (µs)",
            (false, true),
            per_dut(&|r| {
                r.loads
                    .iter()
                    .map(|p| xy(p.offered_pps / 1e3, p.latency_us[0]))
                    .collect()
            }),
        ),
        plot(
            "datapath-tables",
            "64-byte throughput against exact-match flows (as many flows of traffic)",
            "exact flows",
            "received (kframes/s)",
            (true, false),
            per_dut(&|r| {
                r.tables
                    .iter()
                    .map(|t| xy(f64::from(t.flows), t.point.received_pps / 1e3))
                    .collect()
            }),
        ),
        plot(
            "datapath-mix",
            "64-byte throughput against the share of traffic matching exact rules",
            "share matching exact rules (the rest: wildcard)",
            "received (kframes/s)",
            (false, false),
            per_dut(&|r| {
                r.mix
                    .iter()
                    .map(|m| xy(m.exact_share, m.point.received_pps / 1e3))
                    .collect()
            }),
        ),
    ];
    for inputs in [1u8, 2] {
        out.push(plot(
            &format!("datapath-fairness-{inputs}"),
            &format!(
                "Loss difference (steady - heavy), {}",
                if inputs == 1 {
                    "one input"
                } else {
                    "two inputs"
                }
            ),
            "heavy stream's load (of the capacity)",
            "loss difference",
            (false, false),
            per_dut(&|r| {
                r.fairness
                    .iter()
                    .filter(|f| f.inputs == inputs)
                    .map(|f| xy(f.load, f.loss_difference))
                    .collect()
            }),
        ));
    }
    out.retain(|p| !p.series.is_empty());
    out
}
