//! `GET /api/v1/port_rates`: each port's receive and transmit rates in bits per second
//! and its utilisation, from port statistics the API asks every switch for, every
//! [`INTERVAL`], only while someone reads them.
//!
//! ```text
//! GET /port_rates ─► last read = now ─► (no poll running) spawn poll loop on the API runtime
//!                 ◄─ the rates last computed
//! poll loop: every INTERVAL, while a GET came in the last IDLE:
//!     each connected switch (at once): PORT_STATS ─► Rates::record ─► bytes/s per port
//!     each switch, once per connection and every SPEED_EVERY: its ports' speeds
//!         (1.3: PORT_DESC curr_speed; 1.0: FEATURES_REPLY's OFPPF_* `curr` bits)
//! ```
//!
//! A rate is the difference between two samples of a port's byte counters over the time
//! between them (as the API received them: the switch's own duration fields are not in
//! 1.0). A counter that went backwards (the switch restarted it) gives no rate for that
//! interval. Utilisation is the busier direction's rate over the port's speed, `null`
//! when the switch does not say the speed (1.3 `curr_speed` 0, 1.0 no speed bit). The
//! first rates come one interval after the first read; the web UI reads every few
//! seconds while its topology page is shown, and when nobody has read for [`IDLE`] the
//! switches are no longer asked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::Json;
use openflow::{of10, of13, Message, Version};
use serde::Serialize;
use utoipa::ToSchema;

use crate::ask::ask;
use crate::dpid::Dpid;
use crate::model::ErrorBody;
use crate::routes_switch::{bodies_10, bodies_13, stats_request};
use crate::switch_model::widen;
use crate::{dpid, Shared};

/// How often the switches are asked while someone reads.
pub const INTERVAL: Duration = Duration::from_secs(3);
/// Polling stops when nobody has read the rates for this long.
pub const IDLE: Duration = Duration::from_secs(30);
/// How often a switch's port speeds are read again (a port's speed rarely changes).
pub const SPEED_EVERY: Duration = Duration::from_secs(60);

/// One port's rates.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct PortRate {
    /// The switch, `00:00:00:00:00:00:00:01`.
    pub dpid: String,
    /// The port number.
    pub port: u32,
    /// Bits per second received, over the last interval.
    pub rx_bps: f64,
    /// Bits per second transmitted, over the last interval.
    pub tx_bps: f64,
    /// The port's speed in bits per second; `null` when the switch does not say.
    pub speed_bps: Option<u64>,
    /// The busier direction's rate over the speed (1.0 is full); `null` when the speed
    /// is not known.
    pub utilisation: Option<f64>,
    /// Seconds since the sample these rates end at.
    pub age_secs: f64,
}

/// `GET /port_rates`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PortRates {
    /// Seconds between two reads of a switch's statistics.
    pub interval_secs: f64,
    /// Whether the switches are being asked now (this read starts it if not).
    pub polling: bool,
    /// The ports with a rate (a port needs two samples: the first read gives none).
    pub ports: Vec<PortRate>,
}

/// One port's last sample and the rates it ended.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Instant,
    rx_bytes: u64,
    tx_bytes: u64,
    /// Bytes per second (rx, tx) from the sample before; `None` until there is one, or
    /// when a counter went backwards.
    rates: Option<(f64, f64)>,
}

/// What the poller knows: samples, speeds, and when it was last asked.
#[derive(Debug, Default)]
pub struct Rates {
    /// By (dpid, port).
    samples: HashMap<(Dpid, u32), Sample>,
    /// By dpid: when read, and each port's speed in bits per second (0: not said).
    speeds: HashMap<Dpid, (Instant, HashMap<u32, u64>)>,
}

impl Rates {
    /// Records a sample of a port's counters taken at `at`.
    pub fn record(&mut self, dpid: Dpid, port: u32, at: Instant, rx_bytes: u64, tx_bytes: u64) {
        let rates = self.samples.get(&(dpid, port)).and_then(|prev| {
            let secs = at.checked_duration_since(prev.at)?.as_secs_f64();
            if secs <= 0.0 || rx_bytes < prev.rx_bytes || tx_bytes < prev.tx_bytes {
                return None;
            }
            Some((
                (rx_bytes - prev.rx_bytes) as f64 / secs,
                (tx_bytes - prev.tx_bytes) as f64 / secs,
            ))
        });
        self.samples.insert(
            (dpid, port),
            Sample {
                at,
                rx_bytes,
                tx_bytes,
                rates,
            },
        );
    }

    /// Sets switch `dpid`'s port speeds (bits per second, 0 for not known).
    pub fn set_speeds(&mut self, dpid: Dpid, at: Instant, speeds: HashMap<u32, u64>) {
        self.speeds.insert(dpid, (at, speeds));
    }

    /// Whether switch `dpid`'s speeds are to be read (never read, or too long ago).
    fn speeds_due(&self, dpid: Dpid, now: Instant) -> bool {
        self.speeds
            .get(&dpid)
            .is_none_or(|(at, _)| now.saturating_duration_since(*at) >= SPEED_EVERY)
    }

    /// Forgets the switches not in `connected`.
    pub fn retain(&mut self, connected: &[Dpid]) {
        self.samples.retain(|(d, _), _| connected.contains(d));
        self.speeds.retain(|d, _| connected.contains(d));
    }

    /// The rates, ports in order.
    pub fn list(&self, now: Instant) -> Vec<PortRate> {
        let mut keys: Vec<_> = self.samples.keys().copied().collect();
        keys.sort_unstable();
        keys.into_iter()
            .filter_map(|(d, p)| {
                let s = self.samples[&(d, p)];
                let (rx, tx) = s.rates?;
                let speed = self
                    .speeds
                    .get(&d)
                    .and_then(|(_, m)| m.get(&p).copied())
                    .filter(|&v| v > 0);
                let (rx_bps, tx_bps) = (rx * 8.0, tx * 8.0);
                Some(PortRate {
                    dpid: dpid::format(d),
                    port: p,
                    rx_bps,
                    tx_bps,
                    speed_bps: speed,
                    utilisation: speed.map(|v| rx_bps.max(tx_bps) / v as f64),
                    age_secs: now.saturating_duration_since(s.at).as_secs_f64(),
                })
            })
            .collect()
    }
}

/// The poller: the rates, and whether and until when to poll.
#[derive(Debug, Default)]
pub struct Poller {
    state: Mutex<PollState>,
}

#[derive(Debug, Default)]
struct PollState {
    rates: Rates,
    /// The last read of `/port_rates`.
    last_read: Option<Instant>,
    /// A poll loop runs.
    running: bool,
}

impl Poller {
    fn lock(&self) -> std::sync::MutexGuard<'_, PollState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A 1.0 port's speed in bits per second from its `curr` feature bits (the fastest one
/// set), 0 when none is.
pub fn speed_of_v10_features(curr: u32) -> u64 {
    use of10::port::*;
    [
        (OFPPF_10GB_FD, 10_000_000_000),
        (OFPPF_1GB_FD | OFPPF_1GB_HD, 1_000_000_000),
        (OFPPF_100MB_FD | OFPPF_100MB_HD, 100_000_000),
        (OFPPF_10MB_FD | OFPPF_10MB_HD, 10_000_000),
    ]
    .into_iter()
    .find(|(bits, _)| curr & bits != 0)
    .map_or(0, |(_, v)| v)
}

/// Each port's rates and utilisation, from port statistics read every few seconds while
/// someone reads this (the first read starts the polling and has no rates yet).
#[utoipa::path(get, path = "/api/v1/port_rates", tag = "network",
    responses((status = 200, description = "The ports' rates", body = PortRates),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody)))]
pub async fn port_rates(State(s): State<Arc<Shared>>) -> Json<PortRates> {
    let now = Instant::now();
    let (ports, start) = {
        let mut st = s.port_rates.lock();
        st.last_read = Some(now);
        let start = !st.running;
        st.running = true;
        (st.rates.list(now), start)
    };
    if start {
        tokio::spawn(poll_loop(Arc::clone(&s)));
    }
    Json(PortRates {
        interval_secs: INTERVAL.as_secs_f64(),
        polling: true,
        ports,
    })
}

/// Asks every switch, every [`INTERVAL`], until nobody read for [`IDLE`].
async fn poll_loop(s: Arc<Shared>) {
    let mut tick = tokio::time::interval(INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if *s.stopping.borrow() {
            break;
        }
        let now = Instant::now();
        let dpids = s.core.switches().dpids();
        let due: Vec<bool> = {
            let mut st = s.port_rates.lock();
            if st
                .last_read
                .is_none_or(|t| now.saturating_duration_since(t) >= IDLE)
            {
                st.running = false;
                return;
            }
            st.rates.retain(&dpids);
            dpids.iter().map(|&d| st.rates.speeds_due(d, now)).collect()
        };
        let mut set = tokio::task::JoinSet::new();
        for (&d, speeds) in dpids.iter().zip(due) {
            set.spawn(poll_switch(Arc::clone(&s), d, speeds));
        }
        while set.join_next().await.is_some() {}
    }
    s.port_rates.lock().running = false;
}

/// Reads switch `dpid`'s port counters (and, when `speeds`, its ports' speeds).
async fn poll_switch(s: Arc<Shared>, dpid: Dpid, speeds: bool) {
    let switches = s.core.switches();
    let Some(info) = switches.info(dpid) else {
        return;
    };
    if speeds {
        let msg = match info.version {
            Version::V1_0 => Message::V10(of10::Message::FeaturesRequest),
            _ => stats_request(
                info.version,
                of10::stats::StatsRequestBody::Desc,
                of13::multipart::MultipartRequestBody::PortDesc,
            ),
        };
        if let Ok(reply) = ask(switches, dpid, &msg, s.switch_timeout).await {
            let mut m = HashMap::new();
            for r in &reply {
                if let Message::V10(of10::Message::FeaturesReply(f)) = r {
                    for p in &f.ports {
                        m.insert(widen(p.port_no), speed_of_v10_features(p.curr));
                    }
                }
            }
            for b in bodies_13(&reply) {
                if let of13::multipart::MultipartReplyBody::PortDesc { ports } = b {
                    for p in ports {
                        // curr_speed is in kbit/s (1.3 §7.2.1).
                        m.insert(p.port_no, u64::from(p.curr_speed) * 1000);
                    }
                }
            }
            s.port_rates
                .lock()
                .rates
                .set_speeds(dpid, Instant::now(), m);
        }
    }
    let msg = stats_request(
        info.version,
        of10::stats::StatsRequestBody::Port(of10::stats::PortStatsRequest { port_no: 0xffff }),
        of13::multipart::MultipartRequestBody::PortStats {
            port_no: of13::port::OFPP_ANY,
        },
    );
    let Ok(reply) = ask(switches, dpid, &msg, s.switch_timeout).await else {
        return;
    };
    let at = Instant::now();
    let mut st = s.port_rates.lock();
    for b in bodies_10(&reply) {
        if let of10::stats::StatsReplyBody::Port { stats } = b {
            for p in stats {
                let c = &p.counters;
                st.rates
                    .record(dpid, widen(p.port_no), at, c.rx_bytes, c.tx_bytes);
            }
        }
    }
    for b in bodies_13(&reply) {
        if let of13::multipart::MultipartReplyBody::PortStats { stats } = b {
            for p in stats {
                let c = &p.counters;
                st.rates.record(dpid, p.port_no, at, c.rx_bytes, c.tx_bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_needs_two_samples_and_is_bits_per_second_over_the_time_between() {
        let mut r = Rates::default();
        let t0 = Instant::now();
        r.record(openflow::Dpid(1), 2, t0, 1_000, 5_000);
        assert!(r.list(t0).is_empty(), "one sample gives no rate");
        r.record(
            openflow::Dpid(1),
            2,
            t0 + Duration::from_secs(2),
            3_000,
            25_000,
        );
        let l = r.list(t0 + Duration::from_secs(3));
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].rx_bps, 8_000.0, "2,000 bytes in 2 s");
        assert_eq!(l[0].tx_bps, 80_000.0);
        assert_eq!(l[0].speed_bps, None);
        assert_eq!(l[0].utilisation, None, "no speed, no utilisation");
        assert_eq!(l[0].age_secs, 1.0);
        assert_eq!(l[0].dpid, "00:00:00:00:00:00:00:01");
    }

    #[test]
    fn utilisation_is_the_busier_direction_over_the_speed() {
        let mut r = Rates::default();
        let t0 = Instant::now();
        r.set_speeds(
            openflow::Dpid(7),
            t0,
            HashMap::from([(1, 1_000_000), (2, 0)]),
        );
        for p in [1, 2] {
            r.record(openflow::Dpid(7), p, t0, 0, 0);
            r.record(
                openflow::Dpid(7),
                p,
                t0 + Duration::from_secs(1),
                25_000,
                50_000,
            );
        }
        let l = r.list(t0 + Duration::from_secs(1));
        assert_eq!(l[0].utilisation, Some(0.4), "400 kbit/s of 1 Mbit/s");
        assert_eq!(l[1].speed_bps, None, "a speed of 0 is not known");
        assert_eq!(l[1].utilisation, None);
    }

    #[test]
    fn a_counter_that_went_back_gives_no_rate_and_gone_switches_are_forgotten() {
        let mut r = Rates::default();
        let t0 = Instant::now();
        r.record(openflow::Dpid(1), 1, t0, 5_000, 5_000);
        r.record(openflow::Dpid(1), 1, t0 + Duration::from_secs(1), 10, 10);
        assert!(r.list(t0).is_empty());
        r.record(openflow::Dpid(1), 1, t0 + Duration::from_secs(2), 1_010, 10);
        assert_eq!(
            r.list(t0)[0].rx_bps,
            8_000.0,
            "counted again from the reset"
        );
        r.record(openflow::Dpid(2), 1, t0, 0, 0);
        r.set_speeds(openflow::Dpid(2), t0, HashMap::new());
        r.retain(&[openflow::Dpid(1)]);
        assert!(r.samples.keys().all(|(d, _)| *d == openflow::Dpid(1)));
        assert!(r.speeds_due(openflow::Dpid(2), t0), "forgotten: read again");
    }

    #[test]
    fn speeds_are_read_again_after_a_minute() {
        let mut r = Rates::default();
        let t0 = Instant::now();
        assert!(r.speeds_due(openflow::Dpid(1), t0));
        r.set_speeds(openflow::Dpid(1), t0, HashMap::new());
        assert!(!r.speeds_due(openflow::Dpid(1), t0 + Duration::from_secs(59)));
        assert!(r.speeds_due(openflow::Dpid(1), t0 + SPEED_EVERY));
    }

    #[test]
    fn a_1_0_port_speed_is_its_fastest_current_feature() {
        use of10::port::*;
        assert_eq!(speed_of_v10_features(0), 0);
        assert_eq!(
            speed_of_v10_features(OFPPF_COPPER | OFPPF_1GB_FD),
            1_000_000_000
        );
        assert_eq!(
            speed_of_v10_features(OFPPF_100MB_HD | OFPPF_10GB_FD),
            10_000_000_000
        );
        assert_eq!(speed_of_v10_features(OFPPF_10MB_HD), 10_000_000);
    }
}
