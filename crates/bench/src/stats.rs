//! Summaries of what a benchmark measured: rates over loops, round-trip percentiles.
//!
//! Rates are summarised over the loops that count (warm-up loops left out); round trips
//! are exact: every sample is kept (a `u32` of nanoseconds each) and sorted once at the
//! end, so percentiles are read from the samples themselves, never derived from counts.
//!
//! Every percentile the bench reports is a nearest-rank one, by [`nearest_rank`]: the
//! controller benchmark's round trips ([`Percentiles`]) and its switches' times to join
//! (`controller_bench::report::JoinReport`), `pharos bench switch`'s delays
//! (`oflops::probe::Spread`) and the data-path generator's latency histogram
//! (`datapath::gen::Histogram`, to its buckets' resolution).

use serde::{Serialize, Serializer};

/// Serde helpers that write measured figures with a sensible number of decimals: a
/// float computed from a clock (`500.11487200000005` ms) says no more at full precision
/// than at a microsecond's, and is harder to read. The values in memory stay exact.
pub mod rounded {
    use super::*;

    /// `v` rounded to `decimals` places (non-finite values as they are).
    pub fn round(v: f64, decimals: i32) -> f64 {
        let scale = 10f64.powi(decimals);
        let r = (v * scale).round() / scale;
        if r.is_finite() {
            r
        } else {
            v
        }
    }

    /// Three decimals: milliseconds to the microsecond, rates to a thousandth.
    pub fn three<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(round(*v, 3))
    }

    /// [`three`] for an optional value.
    pub fn three_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_some(&round(*v, 3)),
            None => s.serialize_none(),
        }
    }

    /// [`three`] for each of a list.
    pub fn three_vec<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|&v| round(v, 3)))
    }

    /// Four decimals, for an index between 0 and 1 (Jain's).
    pub fn four_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_some(&round(*v, 4)),
            None => s.serialize_none(),
        }
    }
}

/// Mean, minimum, maximum and standard deviation of a series (responses/s per loop).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Summary {
    /// Arithmetic mean.
    #[serde(serialize_with = "rounded::three")]
    pub mean: f64,
    /// Smallest value.
    #[serde(serialize_with = "rounded::three")]
    pub min: f64,
    /// Largest value.
    #[serde(serialize_with = "rounded::three")]
    pub max: f64,
    /// Sample standard deviation (n - 1 in the denominator; 0 for fewer than two values).
    #[serde(serialize_with = "rounded::three")]
    pub stddev: f64,
}

impl Summary {
    /// The summary of `values`; all zeros when there are none.
    pub fn of(values: &[f64]) -> Summary {
        if values.is_empty() {
            return Summary::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let stddev = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Summary {
            mean,
            min,
            max,
            stddev,
        }
    }
}

/// How evenly the switches were served: their rates (answers per second, one value per
/// switch that took part), the smallest, the largest, and Jain's fairness index.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct SwitchRates {
    /// Switches counted.
    pub switches: usize,
    /// The slowest switch's rate.
    #[serde(serialize_with = "rounded::three")]
    pub min: f64,
    /// The fastest switch's rate.
    #[serde(serialize_with = "rounded::three")]
    pub max: f64,
    /// Jain's index, (Σx)² / (n·Σx²): 1 when every switch got the same, 1/n when one
    /// got everything; `None` when no switch got anything (or there were none).
    #[serde(serialize_with = "rounded::four_opt")]
    pub jain: Option<f64>,
}

impl SwitchRates {
    /// The summary of per-switch `rates`.
    pub fn of(rates: &[f64]) -> SwitchRates {
        if rates.is_empty() {
            return SwitchRates::default();
        }
        SwitchRates {
            switches: rates.len(),
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max: rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            jain: jain_index(rates),
        }
    }
}

/// Jain's fairness index of `x`: (Σx)² / (n·Σx²), between 1/n and 1; `None` for an
/// empty series or one of zeros.
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    (squares > 0.0).then(|| sum * sum / (x.len() as f64 * squares))
}

/// Round-trip percentiles (PACKET_IN sent to answer read), in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    #[serde(serialize_with = "rounded::three")]
    pub p50_us: f64,
    /// 90th percentile.
    #[serde(serialize_with = "rounded::three")]
    pub p90_us: f64,
    /// 99th percentile.
    #[serde(serialize_with = "rounded::three")]
    pub p99_us: f64,
    /// 99.9th percentile.
    #[serde(serialize_with = "rounded::three")]
    pub p999_us: f64,
    /// The slowest round trip.
    #[serde(serialize_with = "rounded::three")]
    pub max_us: f64,
    /// The mean round trip.
    #[serde(serialize_with = "rounded::three")]
    pub mean_us: f64,
    /// How many round trips were measured.
    pub samples: u64,
}

/// The rank (from 1) of the `p`th percentile among `n` sorted samples, by nearest rank:
/// the smallest rank `r` with `r / n >= p / 100`, that is `ceil(p * n / 100)`, and at
/// least 1 (so the 0th percentile is the smallest sample and the 100th the largest).
/// The sample at that rank is the smallest value with at least `p`% of the samples at
/// or below it. 0 when there are no samples.
///
/// `p` is taken to a ten-thousandth of a percent (99.9999%) and the rank computed in
/// integers, so that floating point never moves it: `0.07 * 100.0` is
/// `7.000000000000001`, whose ceiling would be rank 8 of 100 for the 7th percentile.
pub fn nearest_rank(p: f64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let millionths = (p.clamp(0.0, 100.0) * 10_000.0).round() as u128;
    let rank = (millionths * u128::from(n)).div_ceil(1_000_000);
    (rank as u64).clamp(1, n)
}

/// The `p`th percentile of `sorted` (ascending) by nearest rank ([`nearest_rank`]): the
/// smallest sample with at least `p`% of the samples at or below it; `None` when empty.
pub fn percentile<T: Copy>(sorted: &[T], p: f64) -> Option<T> {
    let rank = nearest_rank(p, sorted.len() as u64);
    (rank > 0).then(|| sorted[rank as usize - 1])
}

impl Percentiles {
    /// Percentiles of `samples_ns` (nanoseconds; sorted in place), by nearest rank
    /// ([`percentile`]); `None` when there are no samples.
    pub fn of(samples_ns: &mut [u32]) -> Option<Percentiles> {
        Percentiles::of_ns(samples_ns)
    }

    /// [`Percentiles::of`] for samples of any unsigned width (`u64` for latencies that
    /// can pass 4.29 s).
    pub fn of_ns<T: Copy + Ord + Into<u64>>(samples_ns: &mut [T]) -> Option<Percentiles> {
        if samples_ns.is_empty() {
            return None;
        }
        samples_ns.sort_unstable();
        let n = samples_ns.len();
        let us = |v: T| v.into() as f64 / 1000.0;
        let at = |p: f64| us(percentile(samples_ns, p).expect("samples"));
        let sum: u64 = samples_ns.iter().map(|&s| s.into()).sum();
        Some(Percentiles {
            p50_us: at(50.0),
            p90_us: at(90.0),
            p99_us: at(99.0),
            p999_us: at(99.9),
            max_us: us(samples_ns[n - 1]),
            mean_us: sum as f64 / n as f64 / 1000.0,
            samples: n as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_a_series() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert!((s.stddev - 2.138).abs() < 0.001, "{}", s.stddev);
        assert_eq!(Summary::of(&[]), Summary::default());
        assert_eq!(Summary::of(&[3.0]).stddev, 0.0);
    }

    #[test]
    fn jain_index_of_known_series() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
        // One of four gets everything: 1/n.
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]), Some(0.25));
        // (1+2+3+4)² / (4·(1+4+9+16)) = 100/120.
        let j = jain_index(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((j - 100.0 / 120.0).abs() < 1e-12, "{j}");
        // (1+2)² / (2·(1+4)) = 9/10.
        assert!((jain_index(&[1.0, 2.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        let r = SwitchRates::of(&[3.0, 1.0, 2.0]);
        assert_eq!((r.switches, r.min, r.max), (3, 1.0, 3.0));
        assert!((r.jain.unwrap() - 36.0 / 42.0).abs() < 1e-12);
        assert_eq!(SwitchRates::of(&[]), SwitchRates::default());
    }

    /// The definition itself: the `p`th percentile is the smallest sample with at least
    /// `p`% of the samples at or below it.
    #[test]
    fn the_nearest_rank_is_the_smallest_value_with_p_percent_at_or_below_it() {
        let ten: Vec<u32> = (1..=10).collect();
        assert_eq!(percentile(&ten, 50.0), Some(5), "5 of 10 at or below 5");
        assert_eq!(percentile(&ten, 50.1), Some(6), "5 of 10 is under 50.1%");
        assert_eq!(percentile(&ten, 10.0), Some(1));
        assert_eq!(percentile(&ten, 0.0), Some(1), "the 0th is the smallest");
        assert_eq!(
            percentile(&ten, 100.0),
            Some(10),
            "the 100th is the largest"
        );
        assert_eq!(percentile(&[4u32, 4, 4, 9], 75.0), Some(4), "ties count");
        assert_eq!(percentile::<u32>(&[], 50.0), None);
        // Floating point does not move a rank: 0.07 * 100 is 7.000000000000001.
        let hundred: Vec<u32> = (1..=100).collect();
        for p in 1..=100u32 {
            assert_eq!(percentile(&hundred, f64::from(p)), Some(p), "p{p}");
        }
        assert_eq!(nearest_rank(99.9, 1000), 999);
        assert_eq!(nearest_rank(99.99, 10_000), 9999);
        assert_eq!(nearest_rank(50.0, 0), 0);
        // Against the definition, on uneven series: the value has at least p% at or
        // below it, and the next smaller sample has not.
        let series: Vec<u32> = (0..37u32).map(|i| (i * 7919) % 101).collect();
        let mut sorted = series.clone();
        sorted.sort_unstable();
        for p in [1.0, 12.5, 33.3, 50.0, 66.7, 90.0, 99.0, 99.9] {
            let v = percentile(&sorted, p).unwrap();
            let at_or_below = |x: u32| series.iter().filter(|&&s| s <= x).count() as f64;
            let n = series.len() as f64;
            assert!(at_or_below(v) / n * 100.0 >= p, "p{p}: {v}");
            if let Some(&smaller) = sorted.iter().rev().find(|&&s| s < v) {
                assert!(
                    at_or_below(smaller) / n * 100.0 < p,
                    "p{p}: {smaller} would do"
                );
            }
        }
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        // 1..=1000 µs, shuffled.
        let mut v: Vec<u32> = (1..=1000u32).rev().map(|us| us * 1000).collect();
        let p = Percentiles::of(&mut v).unwrap();
        assert_eq!(p.p50_us, 500.0);
        assert_eq!(p.p90_us, 900.0);
        assert_eq!(p.p99_us, 990.0);
        assert_eq!(p.p999_us, 999.0);
        assert_eq!(p.max_us, 1000.0);
        assert_eq!(p.samples, 1000);
        assert!(Percentiles::of(&mut []).is_none());
        let mut one = [7000u32];
        assert_eq!(Percentiles::of(&mut one).unwrap().p999_us, 7.0);
    }
}
