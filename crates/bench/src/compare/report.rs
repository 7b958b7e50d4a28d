//! What a comparison measured: each run, the medians per contender, the ratios, and
//! the table; and the generator's JSON report read back.

use std::fmt::Write as _;

use serde::Serialize;

use super::process::tail;

/// One generator run against one contender.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    /// The contender.
    pub name: String,
    /// Round, from 1.
    pub round: usize,
    /// Responses per second, mean over the measured loops (`overall.mean`).
    pub responses_per_s: f64,
    /// Median latency in microseconds, latency mode only.
    pub p50_us: Option<f64>,
    /// 99th percentile latency in microseconds, latency mode only.
    pub p99_us: Option<f64>,
    /// Switches that got no response at all.
    pub silent_switches: usize,
}

/// Medians of one contender's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContenderSummary {
    /// The contender.
    pub name: String,
    /// Median of the runs' responses per second.
    pub responses_per_s: f64,
    /// Median of the runs' p50 latency, when every run has one.
    pub p50_us: Option<f64>,
    /// Median of the runs' p99 latency, when every run has one.
    pub p99_us: Option<f64>,
    /// Every run's responses per second, in round order.
    pub runs: Vec<f64>,
}

/// First contender over second (Pharos / Ryu), on the medians.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratios {
    /// Throughput ratio: above 1, the first answers more per second.
    pub responses_per_s: f64,
    /// p50 latency ratio: below 1, the first is faster.
    pub p50_us: Option<f64>,
    /// p99 latency ratio: below 1, the first is faster.
    pub p99_us: Option<f64>,
}

/// The whole comparison (`--json` prints it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// OpenFlow version of the load.
    pub version: String,
    /// Generator mode.
    pub mode: String,
    /// Emulated switches.
    pub switches: usize,
    /// Loops per run.
    pub loops: usize,
    /// Milliseconds per loop.
    pub loop_ms: u64,
    /// Cores of (controller, generator), when pinned.
    pub cores: Option<(usize, usize)>,
    /// Every run, in the order they ran.
    pub runs: Vec<RunResult>,
    /// Medians per contender, in contender order.
    pub summaries: Vec<ContenderSummary>,
    /// First / second contender, when there are two.
    pub ratio: Option<Ratios>,
}

/// The median of `values` (mean of the middle two for an even count); `None` if empty.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

/// Medians per contender (in `names` order) and the first/second ratios.
pub fn summarize(names: &[String], runs: &[RunResult]) -> (Vec<ContenderSummary>, Option<Ratios>) {
    let summaries: Vec<ContenderSummary> = names
        .iter()
        .map(|name| {
            let mine: Vec<&RunResult> = runs.iter().filter(|r| &r.name == name).collect();
            let tput: Vec<f64> = mine.iter().map(|r| r.responses_per_s).collect();
            let all = |f: fn(&RunResult) -> Option<f64>| -> Option<f64> {
                let v: Option<Vec<f64>> = mine.iter().map(|r| f(r)).collect();
                v.and_then(|v| median(&v))
            };
            ContenderSummary {
                name: name.clone(),
                responses_per_s: median(&tput).unwrap_or(0.0),
                p50_us: all(|r| r.p50_us),
                p99_us: all(|r| r.p99_us),
                runs: tput,
            }
        })
        .collect();
    let ratios = match summaries.as_slice() {
        [a, b, ..] => Some(Ratios {
            responses_per_s: if b.responses_per_s != 0.0 {
                a.responses_per_s / b.responses_per_s
            } else {
                f64::INFINITY
            },
            p50_us: ratio(a.p50_us, b.p50_us),
            p99_us: ratio(a.p99_us, b.p99_us),
        }),
        _ => None,
    };
    (summaries, ratios)
}

impl CompareReport {
    /// The report as a table: the runs, the medians, the ratio.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let pin = match self.cores {
            Some((c, g)) => format!("controller on core {c}, generator on core {g}"),
            None => "not pinned".to_string(),
        };
        let _ = writeln!(
            out,
            "OpenFlow {}, {} mode, {} switches, {} loops of {} ms, {pin}",
            self.version, self.mode, self.switches, self.loops, self.loop_ms
        );
        let _ = writeln!(
            out,
            "{:<10} {:>5} {:>16} {:>10} {:>10} {:>7}",
            "controller", "round", "responses/s", "p50 us", "p99 us", "silent"
        );
        for r in &self.runs {
            let _ = writeln!(
                out,
                "{:<10} {:>5} {:>16.1} {:>10} {:>10} {:>7}",
                r.name,
                r.round,
                r.responses_per_s,
                opt(r.p50_us),
                opt(r.p99_us),
                r.silent_switches
            );
        }
        let _ = writeln!(out, "median:");
        for s in &self.summaries {
            let _ = writeln!(
                out,
                "{:<10} {:>5} {:>16.1} {:>10} {:>10}",
                s.name,
                "",
                s.responses_per_s,
                opt(s.p50_us),
                opt(s.p99_us)
            );
        }
        if let (Some(r), [a, b, ..]) = (&self.ratio, self.summaries.as_slice()) {
            let _ = writeln!(
                out,
                "{}/{}: throughput {:.2}x, p50 {}, p99 {}",
                a.name,
                b.name,
                r.responses_per_s,
                opt_ratio(r.p50_us),
                opt_ratio(r.p99_us)
            );
        }
        out
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

fn opt_ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}x"))
}

/// Reads a `pharos bench controller --json` report: `overall.mean`, `latency.p50_us`,
/// `latency.p99_us`, `silent_switches`. The report is the whole output or, failing that,
/// its last line that is a JSON object (for generators that print more).
pub fn parse_generator_json(text: &str, name: &str, round: usize) -> Result<RunResult, String> {
    let whole = serde_json::from_str::<serde_json::Value>(text.trim());
    let v = whole.or_else(|e| {
        text.lines()
            .rev()
            .map(str::trim)
            .filter(|l| l.starts_with('{'))
            .find_map(|l| serde_json::from_str(l).ok())
            .ok_or(e)
    });
    let v = v.map_err(|e| {
        format!(
            "printed something that is not JSON ({e}): {}",
            tail(text, 5)
        )
    })?;
    let mean = v
        .pointer("/overall/mean")
        .and_then(serde_json::Value::as_f64)
        .ok_or_else(|| "printed JSON without a number at overall.mean".to_string())?;
    let lat = |k: &str| {
        v.pointer(&format!("/latency/{k}"))
            .and_then(serde_json::Value::as_f64)
    };
    let silent = v
        .pointer("/silent_switches/count")
        .and_then(serde_json::Value::as_u64)
        .map_or(0, |n| n as usize);
    Ok(RunResult {
        name: name.to_string(),
        round,
        responses_per_s: mean,
        p50_us: lat("p50_us"),
        p99_us: lat("p99_us"),
        silent_switches: silent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, round: usize, tput: f64, p50: Option<f64>) -> RunResult {
        RunResult {
            name: name.to_string(),
            round,
            responses_per_s: tput,
            p50_us: p50,
            p99_us: p50.map(|p| p * 2.0),
            silent_switches: 0,
        }
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn summary_takes_medians_per_contender_and_first_over_second() {
        let names = vec!["pharos".to_string(), "ryu".to_string()];
        let runs = vec![
            run("pharos", 1, 100.0, Some(10.0)),
            run("ryu", 1, 10.0, Some(100.0)),
            run("pharos", 2, 300.0, Some(30.0)),
            run("ryu", 2, 30.0, Some(300.0)),
            run("pharos", 3, 200.0, Some(20.0)),
            run("ryu", 3, 25.0, Some(200.0)),
        ];
        let (s, r) = summarize(&names, &runs);
        assert_eq!(s[0].responses_per_s, 200.0);
        assert_eq!(s[0].runs, vec![100.0, 300.0, 200.0]);
        assert_eq!(s[1].responses_per_s, 25.0);
        assert_eq!(s[1].p50_us, Some(200.0));
        let r = r.expect("two contenders");
        assert_eq!(r.responses_per_s, 8.0);
        assert_eq!(r.p50_us, Some(0.1));
        assert_eq!(r.p99_us, Some(0.1));
    }

    #[test]
    fn latency_medians_need_every_run() {
        let names = vec!["a".to_string(), "b".to_string()];
        let runs = vec![
            run("a", 1, 1.0, Some(5.0)),
            run("a", 2, 1.0, None),
            run("b", 1, 0.0, None),
        ];
        let (s, r) = summarize(&names, &runs);
        assert_eq!(s[0].p50_us, None);
        let r = r.unwrap();
        assert_eq!(r.p50_us, None);
        assert!(r.responses_per_s.is_infinite());
    }

    #[test]
    fn table_shows_runs_medians_and_ratio() {
        let names = vec!["pharos".to_string(), "ryu".to_string()];
        let runs = vec![run("pharos", 1, 1000.0, None), run("ryu", 1, 250.0, None)];
        let (summaries, ratio) = summarize(&names, &runs);
        let report = CompareReport {
            version: "1.0".into(),
            mode: "throughput".into(),
            switches: 16,
            loops: 3,
            loop_ms: 500,
            cores: Some((0, 1)),
            runs,
            summaries,
            ratio,
        };
        let t = report.table();
        assert!(
            t.contains("controller on core 0, generator on core 1"),
            "{t}"
        );
        assert!(t.contains("1000.0"), "{t}");
        assert!(t.contains("pharos/ryu: throughput 4.00x"), "{t}");
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["ratio"]["responses_per_s"], 4.0);
        assert_eq!(json["summaries"][1]["name"], "ryu");
    }

    #[test]
    fn parses_the_generator_report() {
        let j = r#"{"mode":"latency","overall":{"mean":1234.5,"min":1,"max":2,"stddev":0},
                    "latency":{"p50_us":40.0,"p90_us":50,"p99_us":80.5,"p999_us":90,"max_us":99,"samples":10},
                    "silent_switches":{"count":2,"first":[7,9]}}"#;
        let r = parse_generator_json(j, "ryu", 2).unwrap();
        assert_eq!(r.responses_per_s, 1234.5);
        assert_eq!(r.p50_us, Some(40.0));
        assert_eq!(r.p99_us, Some(80.5));
        assert_eq!(r.silent_switches, 2);
        assert_eq!(r.round, 2);
        let r = parse_generator_json(
            r#"{"overall":{"mean":5},"latency":null,"silent_switches":{"count":0,"first":[]}}"#,
            "p",
            1,
        )
        .unwrap();
        assert_eq!(r.p50_us, None);
        let mixed = "running 1 test\n{\"overall\":{\"mean\":9.5}}\ntest x ... ok\n";
        assert_eq!(
            parse_generator_json(mixed, "p", 1).unwrap().responses_per_s,
            9.5
        );
        assert!(parse_generator_json("oops", "p", 1)
            .unwrap_err()
            .contains("not JSON"));
        assert!(parse_generator_json("{}", "p", 1)
            .unwrap_err()
            .contains("overall.mean"));
    }
}
