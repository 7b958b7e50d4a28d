//! What a session recorded ([`Records`]): sent and received joined, loss and delays;
//! and [`Spread`], a set of delays summed up.

use super::stream::{RxRecord, TsSource, TxRecord};

/// What a session measured: every frame sent and every probe frame captured.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// The capture interfaces, indexed by [`RxRecord::port`].
    pub ports: Vec<String>,
    /// Frames sent, per stream in send order.
    pub tx: Vec<TxRecord>,
    /// Frames captured, in arrival order per port.
    pub rx: Vec<RxRecord>,
    /// Frames captured without a probe payload.
    pub other_frames: u64,
}

impl Records {
    /// Frames sent on `stream`.
    pub fn sent(&self, stream: u32) -> u64 {
        self.tx.iter().filter(|t| t.stream == stream).count() as u64
    }

    /// Distinct frames of `stream` captured on any port.
    pub fn received(&self, stream: u32) -> u64 {
        let mut seqs: Vec<u64> = self
            .rx
            .iter()
            .filter(|r| r.stream == stream)
            .map(|r| r.seq)
            .collect();
        seqs.sort_unstable();
        seqs.dedup();
        seqs.len() as u64
    }

    /// Frames of `stream` sent and never captured on any port.
    pub fn lost(&self, stream: u32) -> u64 {
        self.sent(stream).saturating_sub(self.received(stream))
    }

    /// The clock that stamped most transmissions (`User` if the kernel gave none).
    pub fn tx_source(&self) -> TsSource {
        let hw = self
            .tx
            .iter()
            .filter(|t| t.source == TsSource::Hardware)
            .count();
        let sw = self
            .tx
            .iter()
            .filter(|t| t.source == TsSource::Software)
            .count();
        let user = self.tx.len() - hw - sw;
        if hw >= sw && hw > user {
            TsSource::Hardware
        } else if sw >= user && sw > 0 {
            TsSource::Software
        } else {
            TsSource::User
        }
    }

    /// Fraction of transmissions with a kernel or NIC stamp.
    pub fn tx_stamped_fraction(&self) -> f64 {
        if self.tx.is_empty() {
            return 0.0;
        }
        self.tx.iter().filter(|t| t.kernel_ns.is_some()).count() as f64 / self.tx.len() as f64
    }

    /// The index of the port named `name`.
    pub fn port(&self, name: &str) -> Option<usize> {
        self.ports.iter().position(|p| p == name)
    }

    /// Each sent frame of `stream` with its first capture (on `port`, or on any port).
    pub fn joined(&self, stream: u32, port: Option<usize>) -> Vec<(TxRecord, Option<&RxRecord>)> {
        let mut first: std::collections::HashMap<u64, &RxRecord> = Default::default();
        for r in self
            .rx
            .iter()
            .filter(|r| r.stream == stream && port.is_none_or(|p| r.port == p))
        {
            first
                .entry(r.seq)
                .and_modify(|e| {
                    if r.rx_ns < e.rx_ns {
                        *e = r
                    }
                })
                .or_insert(r);
        }
        self.tx
            .iter()
            .filter(|t| t.stream == stream)
            .map(|t| (*t, first.get(&t.seq).copied()))
            .collect()
    }

    /// One-way delays (receive stamp minus transmit stamp, ns) of `stream`'s captured
    /// frames, in send order, on `port` or on any port (first arrival).
    pub fn delays_ns(&self, stream: u32, port: Option<usize>) -> Vec<i64> {
        self.joined(stream, port)
            .into_iter()
            .filter_map(|(t, r)| r.map(|r| r.rx_ns - t.tx_ns()))
            .collect()
    }

    /// The first captured frame of `stream` (on `port`, or any) built from `template`.
    pub fn first_rx_of_template(
        &self,
        stream: u32,
        template: u32,
        port: Option<usize>,
    ) -> Option<&RxRecord> {
        self.rx
            .iter()
            .filter(|r| {
                r.stream == stream && r.template == template && port.is_none_or(|p| r.port == p)
            })
            .min_by_key(|r| r.rx_ns)
    }

    /// A kept frame of `stream` captured on `port` (see [`super::CaptureOptions::keep_bytes`]).
    pub fn sample_bytes(&self, stream: u32, port: Option<usize>) -> Option<&[u8]> {
        self.rx
            .iter()
            .filter(|r| r.stream == stream && port.is_none_or(|p| r.port == p))
            .find_map(|r| r.bytes.as_deref())
    }
}

/// Median and spread of a set of values (ns).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spread {
    /// How many values.
    pub n: usize,
    /// Smallest.
    pub min: i64,
    /// 10th percentile.
    pub p10: i64,
    /// Median.
    pub median: i64,
    /// 90th percentile.
    pub p90: i64,
    /// 99th percentile.
    pub p99: i64,
    /// Largest.
    pub max: i64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stddev: f64,
}

impl Spread {
    /// The spread of `values` (`None` when empty). Percentiles are nearest-rank
    /// ([`crate::stats::percentile`]).
    pub fn of(values: &[i64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        let n = v.len();
        let at = |p: f64| crate::stats::percentile(&v, p).expect("values");
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        Some(Spread {
            n,
            min: v[0],
            p10: at(10.0),
            median: at(50.0),
            p90: at(90.0),
            p99: at(99.0),
            max: v[n - 1],
            mean,
            stddev: var.sqrt(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_percentiles() {
        let v: Vec<i64> = (1..=101).collect();
        let s = Spread::of(&v).unwrap();
        assert_eq!((s.min, s.p10, s.median, s.p90, s.max), (1, 11, 51, 91, 101));
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn records_join_and_loss() {
        let tx = |seq| TxRecord {
            stream: 1,
            seq,
            template: 0,
            user_ns: 1000 * seq as i64,
            kernel_ns: Some(1000 * seq as i64 + 10),
            source: TsSource::Software,
        };
        let rx = |seq, port, ns| RxRecord {
            stream: 1,
            seq,
            template: 0,
            user_tx_ns: 0,
            port,
            rx_ns: ns,
            source: TsSource::Software,
            len: 100,
            bytes: None,
        };
        let r = Records {
            ports: vec!["a".into(), "b".into()],
            tx: vec![tx(0), tx(1), tx(2)],
            rx: vec![rx(0, 0, 510), rx(0, 1, 400), rx(2, 1, 2600)],
            other_frames: 0,
        };
        assert_eq!(r.sent(1), 3);
        assert_eq!(r.lost(1), 1);
        assert_eq!(r.delays_ns(1, None), vec![390, 590]);
        assert_eq!(r.delays_ns(1, Some(0)), vec![500]);
        assert_eq!(r.tx_source(), TsSource::Software);
    }
}
