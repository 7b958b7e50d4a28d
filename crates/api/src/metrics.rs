//! `GET /metrics`: the controller's counters in the Prometheus text exposition format
//! (version 0.0.4), rendered by the official client, `prometheus-client`, from the
//! snapshots the core already publishes, at scrape time. Nothing is counted twice and
//! nothing on a worker knows about Prometheus: the collector behind [`registry`] reads
//! `Handle::counters()`, the `Switches` directory, `Topology` and `Devices` when asked.
//!
//! Names follow Faucet's where it has one, with its `dp_id` label (`0x` and 16 hex
//! digits); the rest are `pharos_*`:
//!
//! | metric | type | labels | from |
//! |---|---|---|---|
//! | `of_packet_ins_total` | counter | `dp_id` | the connection's PACKET_INs |
//! | `of_flowmsgs_sent_total` | counter | `dp_id` | FLOW_MODs sent to it |
//! | `of_errors_total` | counter | `dp_id` | OpenFlow ERROR messages from it |
//! | `dp_status` | gauge | `dp_id` | 1 while connected |
//! | `port_status` | gauge | `dp_id`, `port` | 1 up, 0 down (admin or link) |
//! | `of_dp_connections_total` | counter | | handshakes completed |
//! | `of_dp_disconnections_total` | counter | `reason` | established switches lost |
//! | `vlan_hosts_learned` | gauge | `dp_id`, `vlan` | hosts attached there (device_manager) |
//! | `pharos_links` | gauge | | directed links (topology) |
//! | `pharos_messages_in_total`, `pharos_messages_out_total` | counter | `dp_id`, `version`, `type` | messages by type |
//! | `pharos_backpressure_pauses_total` | counter | `dp_id` | times the switch was not read because its queue was full |
//! | `pharos_dropped_messages_total` | counter | `dp_id` | outgoing messages lost |
//! | `pharos_admission_refused_total` | counter | `reason` | connections refused at accept |
//! | `pharos_handshake_failures_total` | counter | `reason` | handshakes that failed |
//! | `pharos_connected_switches` | gauge | | switches connected |
//! | `pharos_app_handler_seconds` | histogram | `app`, `handler` | time per handler call, sampled |
//! | `pharos_app_events_total` | counter | `app`, `counter` | what apps count themselves (`Builder::counter`) |
//!
//! What differs from Faucet, and why: per-switch counters belong to the switch's
//! *connection* (the core counts on the worker that owns it), so they start again at 0
//! when a switch reconnects (Prometheus's `rate` and `increase` treat that as a counter
//! reset) and a switch that is gone has no series (so `dp_status` is never 0: absent
//! means disconnected). For the same reason connections and disconnections are counted
//! controller-wide (the admission tier and the workers' totals), not per `dp_id`.
//!
//! `pharos_app_handler_seconds` is sampled so the PACKET_IN path reads no clock per
//! message: one call in 64 of each handler on each switch (one PACKET_IN in 1024 for
//! the PACKET_IN handlers) is timed and counts for the calls since the one before
//! (`controller::timing`), so its `_count` trails the calls by up to 63 (1023) per
//! switch and handler and its `_sum` is an estimate (right on average).
//! The exact call counts are in `GET /api/v1/apps`.

use std::collections::BTreeMap;
use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::dpid::Dpid;
use crate::Core;

/// The `Content-Type` of the Prometheus text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A label set: `(name, value)` pairs.
type Labels = Vec<(&'static str, String)>;

/// The registry `/metrics` renders: one collector over `core`.
pub fn registry(core: Core) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(Scrape { core }));
    r
}

/// Renders `registry` in the text format.
pub fn render(registry: &Registry) -> String {
    let mut body = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut body, registry)
        .expect("writing to a String cannot fail");
    body
}

/// A dpid as Faucet labels it: `0x` and 16 hex digits (the one place a dpid is not in
/// its printed form, `00:00:00:00:00:00:00:01`: Faucet's dashboards read this label).
pub fn dp_id(dpid: Dpid) -> String {
    format!("0x{:016x}", dpid.0)
}

/// Reads the core's snapshots at each scrape.
#[derive(Debug)]
struct Scrape {
    /// What is read.
    core: Core,
}

/// One family of counters (`name` without `_total`, which the encoder adds).
fn counters(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (Labels, u64)>,
) -> fmt::Result {
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, v) in rows {
        ConstCounter::new(v).encode(m.encode_family(&labels)?)?;
    }
    Ok(())
}

/// One family of gauges.
fn gauges(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (Labels, i64)>,
) -> fmt::Result {
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, v) in rows {
        ConstGauge::new(v).encode(m.encode_family(&labels)?)?;
    }
    Ok(())
}

/// The handler-time histograms, one per (app, handler).
fn histograms(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    timings: &[controller::timing::HandlerTiming],
) -> fmt::Result {
    let mut m = enc.encode_descriptor(name, help, None, MetricType::Histogram)?;
    for t in timings {
        let labels: Labels = vec![
            ("app", t.app.to_string()),
            ("handler", t.handler.to_string()),
        ];
        m.encode_family(&labels)?.encode_histogram::<NoLabelSet>(
            t.time_secs,
            t.timed_calls,
            &t.buckets,
            None,
        )?;
    }
    Ok(())
}

/// Counts keyed by reason, as `reason`-labelled rows.
fn by_reason(m: &BTreeMap<String, u64>) -> impl Iterator<Item = (Labels, u64)> + '_ {
    m.iter().map(|(r, n)| (vec![("reason", r.clone())], *n))
}

/// The sum of a `"version TYPE"` map's counts for `ty`, whatever the version.
fn of_type(m: &BTreeMap<String, u64>, ty: &str) -> u64 {
    m.iter()
        .filter(|(k, _)| k.split_once(' ').is_some_and(|(_, t)| t == ty))
        .map(|(_, n)| n)
        .sum()
}

/// A `"version TYPE"` map as `dp_id`, `version`, `type` rows.
fn by_type<'a>(
    dp: &'a str,
    m: &'a BTreeMap<String, u64>,
) -> impl Iterator<Item = (Labels, u64)> + 'a {
    m.iter().map(move |(k, n)| {
        let (version, ty) = k.split_once(' ').unwrap_or(("", k));
        (
            vec![
                ("dp_id", dp.to_string()),
                ("version", version.to_string()),
                ("type", ty.to_string()),
            ],
            *n,
        )
    })
}

fn i64_of(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        let counters_now = self.core.controller.counters();
        let total = &counters_now.total;
        // The snapshot names a switch by its printed dpid: read back, labelled Faucet's way.
        let sw: Vec<(String, &controller::counters::SwitchSnapshot)> = counters_now
            .switches
            .iter()
            .filter_map(|s| Some((dp_id(crate::dpid::parse(&s.dpid).ok()?), s)))
            .collect();
        let dp = |d: &str| vec![("dp_id", d.to_string())];

        counters(
            &mut enc,
            "of_packet_ins",
            "OpenFlow PACKET_INs received from the switch (this connection)",
            sw.iter().map(|(d, s)| (dp(d), s.packet_ins)),
        )?;
        counters(
            &mut enc,
            "of_flowmsgs_sent",
            "OpenFlow FLOW_MODs sent to the switch (this connection)",
            sw.iter()
                .map(|(d, s)| (dp(d), of_type(&s.msgs_out, "FLOW_MOD"))),
        )?;
        counters(
            &mut enc,
            "of_errors",
            "OpenFlow ERROR messages received from the switch (this connection)",
            sw.iter()
                .map(|(d, s)| (dp(d), of_type(&s.msgs_in, "ERROR"))),
        )?;
        counters(
            &mut enc,
            "of_dp_connections",
            "Switch connections established (handshake completed), all switches",
            [(Labels::new(), total.established)],
        )?;
        counters(
            &mut enc,
            "of_dp_disconnections",
            "Established switch connections closed, by reason",
            by_reason(&total.disconnects),
        )?;

        let switches = self.core.switches().connected();
        gauges(
            &mut enc,
            "dp_status",
            "1 while the switch is connected",
            switches.iter().map(|i| (dp(&dp_id(i.dpid)), 1)),
        )?;
        gauges(
            &mut enc,
            "port_status",
            "1 when the port is up, 0 when down (administratively or its link)",
            switches.iter().flat_map(|i| {
                let d = dp_id(i.dpid);
                i.ports.iter().map(move |p| {
                    (
                        vec![("dp_id", d.clone()), ("port", p.port_no.to_string())],
                        i64::from(p.is_up()),
                    )
                })
            }),
        )?;
        gauges(
            &mut enc,
            "pharos_connected_switches",
            "Switches connected now",
            [(Labels::new(), i64_of(switches.len()))],
        )?;

        let services = self.core.services();
        if let Some(devices) = services.get::<apps::devices::Devices>() {
            let mut learned: BTreeMap<(Dpid, Option<u16>), i64> = BTreeMap::new();
            for h in devices.all().iter() {
                *learned
                    .entry((h.attachment_point().dpid, h.vlan()))
                    .or_default() += 1;
            }
            gauges(
                &mut enc,
                "vlan_hosts_learned",
                "Hosts the device manager tracks, by the switch they are attached to and VLAN (none: untagged)",
                learned.into_iter().map(|((d, vlan), n)| {
                    let vlan = vlan.map_or_else(|| "none".to_string(), |v| v.to_string());
                    (vec![("dp_id", dp_id(d)), ("vlan", vlan)], n)
                }),
            )?;
        }
        // The apps' handler times (one call in 64 per handler and switch timed, each
        // standing for the calls since the one before: see controller::timing).
        histograms(
            &mut enc,
            "pharos_app_handler_seconds",
            "Time an app's handler takes per call, sampled (one call in 64 per switch timed, one PACKET_IN in 1024 for PACKET_IN handlers, weighted by the calls it stands for)",
            &self.core.apps.handler_timings(),
        )?;

        // What the apps count themselves (Builder::counter): one family, labelled by
        // app and counter, as apps name their counters freely (two may share a name).
        counters(
            &mut enc,
            "pharos_app_events",
            "Counters the apps publish, by app and counter (GET /api/v1/apps says what each counts)",
            self.core.apps.app_counters().into_iter().map(|c| {
                (
                    vec![("app", c.app.to_string()), ("counter", c.name.to_string())],
                    c.value,
                )
            }),
        )?;

        if let Some(topology) = services.get::<apps::topology::Topology>() {
            gauges(
                &mut enc,
                "pharos_links",
                "Directed links between switches found by discovery (a cable is two)",
                [(Labels::new(), i64_of(topology.snapshot().links().len()))],
            )?;
        }

        counters(
            &mut enc,
            "pharos_messages_in",
            "OpenFlow messages received from the switch (this connection), by version and type",
            sw.iter().flat_map(|(d, s)| by_type(d, &s.msgs_in)),
        )?;
        counters(
            &mut enc,
            "pharos_messages_out",
            "OpenFlow messages queued to the switch (this connection), by version and type",
            sw.iter().flat_map(|(d, s)| by_type(d, &s.msgs_out)),
        )?;
        counters(
            &mut enc,
            "pharos_backpressure_pauses",
            "Times the switch was not read because its outgoing queue passed the high-water mark (this connection)",
            sw.iter().map(|(d, s)| (dp(d), s.pauses)),
        )?;
        counters(
            &mut enc,
            "pharos_dropped_messages",
            "Outgoing messages lost: the connection closed first, or the queue was at its hard cap (this connection)",
            sw.iter().map(|(d, s)| (dp(d), s.drops)),
        )?;
        counters(
            &mut enc,
            "pharos_admission_refused",
            "Connections refused at accept, by reason",
            by_reason(&total.refused),
        )?;
        counters(
            &mut enc,
            "pharos_handshake_failures",
            "Handshakes that failed, by reason",
            by_reason(&total.handshake_failures),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dp_id_is_0x_and_16_hex_digits() {
        assert_eq!(dp_id(openflow::Dpid(1)), "0x0000000000000001");
        assert_eq!(
            dp_id(openflow::Dpid(0x0102_0304_0506_0708)),
            "0x0102030405060708"
        );
    }

    #[test]
    fn of_type_sums_every_version() {
        let m: BTreeMap<String, u64> = [("1.0 ERROR", 2), ("1.3 ERROR", 3), ("1.3 ECHO_REPLY", 7)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(of_type(&m, "ERROR"), 5);
        assert_eq!(of_type(&m, "FLOW_MOD"), 0);
    }
}
