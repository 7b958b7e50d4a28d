//! What `pharos bench switch` prints and writes: a [`TestOutput`] per test, holding its
//! tables (printed as text), its JSON (for `--json`), its plots ([`Plot`], written as
//! SVG by [`Plot::write_svg`] for `--plots DIR`) and its findings (one-line readings,
//! such as whether the barrier reply came before the data plane).
//!
//! Any test, whoever writes it, reports through this: build a [`TestOutput`], and the CLI
//! prints, serialises and plots it. Plots are drawn with `plotters`' SVG backend alone
//! (no fonts are loaded; text is left to the viewer), log axes by plotting `log10` of the
//! values with labels of the values themselves.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::Serialize;

use super::probe::Spread;

/// A test's results, in every form the CLI gives them.
#[derive(Debug, Clone, Serialize)]
pub struct TestOutput {
    /// `insert`, `stats`, `interact`, `basics`, `modify`.
    pub test: String,
    pub tables: Vec<Table>,
    #[serde(skip)]
    pub plots: Vec<Plot>,
    /// Readings, one line each ("the barrier reply preceded the data plane in 30 of 30 runs").
    pub findings: Vec<String>,
    /// The measurements, test-specific.
    pub data: serde_json::Value,
}

impl TestOutput {
    pub fn new(test: &str) -> TestOutput {
        TestOutput {
            test: test.to_string(),
            tables: Vec::new(),
            plots: Vec::new(),
            findings: Vec::new(),
            data: serde_json::Value::Null,
        }
    }

    /// The tables and findings as text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for t in &self.tables {
            s.push_str(&t.render());
            s.push('\n');
        }
        for f in &self.findings {
            let _ = writeln!(s, "* {f}");
        }
        s
    }
}

/// A table of text cells.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Printed under the table (units, what a column means).
    pub note: Option<String>,
}

impl Table {
    pub fn new(title: &str, columns: &[&str]) -> Table {
        Table {
            title: title.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            note: None,
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Aligned text: the title, a header line, a rule, the rows (numbers right-aligned).
    pub fn render(&self) -> String {
        let n = self.columns.len();
        let mut w: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut s = format!("{}\n", self.title);
        let line = |cells: &[String]| {
            let mut l = String::new();
            for (i, c) in cells.iter().enumerate().take(n) {
                let pad = w[i] - c.chars().count();
                let numeric = c
                    .chars()
                    .next()
                    .is_some_and(|ch| ch.is_ascii_digit() || ch == '-' || ch == '<');
                if i > 0 {
                    l.push_str("  ");
                }
                if numeric && i > 0 {
                    l.push_str(&" ".repeat(pad));
                    l.push_str(c);
                } else {
                    l.push_str(c);
                    l.push_str(&" ".repeat(pad));
                }
            }
            l.trim_end().to_string()
        };
        let _ = writeln!(s, "{}", line(&self.columns));
        let _ = writeln!(
            s,
            "{}",
            w.iter()
                .map(|x| "-".repeat(*x))
                .collect::<Vec<_>>()
                .join("  ")
        );
        for r in &self.rows {
            let _ = writeln!(s, "{}", line(r));
        }
        if let Some(note) = &self.note {
            let _ = writeln!(s, "{note}");
        }
        s
    }

    /// The table as Markdown (for BENCHMARKS.md).
    pub fn markdown(&self) -> String {
        let mut s = format!("| {} |\n", self.columns.join(" | "));
        let _ = writeln!(
            s,
            "|{}",
            self.columns.iter().map(|_| " --- |").collect::<String>()
        );
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", r.join(" | "));
        }
        s
    }
}

/// Nanoseconds as microseconds with a sensible number of digits (`35.2`, `1 204`).
pub fn us(ns: f64) -> String {
    let u = ns / 1000.0;
    if u.abs() >= 100.0 {
        format!("{u:.0}")
    } else if u.abs() >= 10.0 {
        format!("{u:.1}")
    } else {
        format!("{u:.2}")
    }
}

/// Nanoseconds as milliseconds (`12.3`).
pub fn ms(ns: f64) -> String {
    let m = ns / 1e6;
    if m.abs() >= 100.0 {
        format!("{m:.0}")
    } else if m.abs() >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}

/// `median [p10, p90]` of a spread, in milliseconds; `-` for none.
pub fn ms_spread(s: Option<&Spread>) -> String {
    match s {
        Some(s) => format!(
            "{} [{}, {}]",
            ms(s.median as f64),
            ms(s.p10 as f64),
            ms(s.p90 as f64)
        ),
        None => "-".into(),
    }
}

/// `median [p10, p90]` of a spread, in microseconds; `-` for none.
pub fn us_spread(s: Option<&Spread>) -> String {
    match s {
        Some(s) => format!(
            "{} [{}, {}]",
            us(s.median as f64),
            us(s.p10 as f64),
            us(s.p90 as f64)
        ),
        None => "-".into(),
    }
}

/// One point of a series: a value and an optional range around it (p10..p90).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Point {
    /// The median of `s` with its 10th and 90th percentiles, scaled by `scale`
    /// (1e-6: ns to ms).
    pub fn of_spread(x: f64, s: &Spread, scale: f64) -> Point {
        Point {
            x,
            y: s.median as f64 * scale,
            lo: Some(s.p10 as f64 * scale),
            hi: Some(s.p90 as f64 * scale),
        }
    }
}

/// A named line of points.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

/// One figure: series on two axes, either of them logarithmic.
#[derive(Debug, Clone, Serialize)]
pub struct Plot {
    /// The file name, without `.svg`.
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

impl Plot {
    /// Writes `DIR/NAME.svg`; returns its path.
    pub fn write_svg(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{}.svg", self.name));
        self.draw(&path)
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
        Ok(path)
    }

    fn draw(&self, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        let tx = |v: f64, log: bool| if log { v.max(1e-9).log10() } else { v };
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for s in &self.series {
            for p in &s.points {
                xs.push(tx(p.x, self.log_x));
                ys.push(tx(p.y, self.log_y));
                if let Some(lo) = p.lo {
                    ys.push(tx(lo, self.log_y));
                }
                if let Some(hi) = p.hi {
                    ys.push(tx(hi, self.log_y));
                }
            }
        }
        let range = |v: &[f64], log: bool| {
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            if !lo.is_finite() {
                return (0.0, 1.0);
            }
            if log {
                (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
            } else {
                let lo = lo.min(0.0);
                let pad = ((hi - lo) * 0.05).max(1e-9);
                (lo, hi + pad)
            }
        };
        let (x0, x1) = range(&xs, self.log_x);
        let (y0, y1) = range(&ys, self.log_y);
        let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let fmt = |v: &f64, log: bool| {
            let v = if log { 10f64.powf(*v) } else { *v };
            if v.abs() >= 1000.0 || v == 0.0 || v.fract() == 0.0 {
                format!("{v:.0}")
            } else if v.abs() >= 1.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.3}")
            }
        };
        let (lx, ly) = (self.log_x, self.log_y);
        // Log axes: one label per decade.
        let labels = |log: bool, a: f64, b: f64| {
            if log {
                ((b - a).round() as usize + 1).max(2)
            } else {
                10
            }
        };
        chart
            .configure_mesh()
            .x_labels(labels(lx, x0, x1))
            .y_labels(labels(ly, y0, y1))
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_formatter(&|v| fmt(v, lx))
            .y_label_formatter(&|v| fmt(v, ly))
            .draw()?;
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| (tx(p.x, lx), tx(p.y, ly)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(
                pts.iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
            )?;
            chart.draw_series(s.points.iter().filter_map(|p| {
                let (lo, hi) = (p.lo?, p.hi?);
                Some(ErrorBar::new_vertical(
                    tx(p.x, lx),
                    tx(lo, ly),
                    tx(p.y, ly),
                    tx(hi, ly),
                    color,
                    6,
                ))
            }))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        root.present()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_plots_are_svg() {
        let mut t = Table::new("T", &["N", "barrier ms"]);
        t.row(vec!["1".into(), "0.25".into()]);
        t.row(vec!["1000".into(), "12.5".into()]);
        let r = t.render();
        assert!(
            r.contains("1           0.25") && r.contains("1000        12.5"),
            "{r}"
        );
        let p = Plot {
            name: "t".into(),
            title: "insertion".into(),
            x_label: "flows".into(),
            y_label: "ms".into(),
            log_x: true,
            log_y: true,
            series: vec![Series {
                name: "barrier".into(),
                points: vec![
                    Point {
                        x: 1.0,
                        y: 0.2,
                        lo: Some(0.1),
                        hi: Some(0.3),
                    },
                    Point {
                        x: 1000.0,
                        y: 20.0,
                        lo: None,
                        hi: None,
                    },
                ],
            }],
        };
        let dir = std::env::temp_dir().join(format!("oflops-report-{}", std::process::id()));
        let path = p.write_svg(&dir).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("barrier") && svg.contains("<polyline"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
