//! Removing an app's flows from every switch ([`remove_flows_of`]), when the app stops.
//!
//! Every flow an app installs carries its tag in the cookie's top 16 bits
//! ([`crate::cookie`]), so its flows are exactly those whose cookie has the tag:
//!
//! - **OpenFlow 1.3**: one DELETE over all tables (`table_id` 0xff) with `cookie` =
//!   the tag and `cookie_mask` = the tag's bits (1.3 §6.4: "the cookie field ... must
//!   be equal to the flow entry's cookie under the cookie_mask"), then a barrier.
//! - **OpenFlow 1.0** has no cookie mask on delete (and a DELETE ignores the cookie),
//!   so the flows are read first (FLOW_STATS, every flow), and each one whose cookie
//!   carries the tag is deleted by DELETE_STRICT on its exact match and priority, in
//!   one batch followed by a barrier.
//!
//! The 1.0 way leaves a window between the read and the deletes. What could happen in
//! it, and why it does no harm:
//!
//! - *A flow of the app is added after the read.* It cannot be: the app is stopped
//!   before its flows are removed (its handlers and timers run no more), and whatever
//!   it queued before reached the switch's connection first (one TCP stream, in order),
//!   so the switch applied it before it answered the read.
//! - *Another app installs, after the read, a flow with exactly the same match and
//!   priority as one of the stopped app's.* OpenFlow replaces the old flow with the new
//!   one (1.0 §4.6: an ADD whose match and priority equal an existing flow's replaces
//!   it), and the DELETE_STRICT then removes the other app's new flow. The result is a
//!   missing flow, not a wrong one: the next packet it would have matched goes to the
//!   controller (table miss) and the app installs it again. No packet is misforwarded.
//! - *A flow expires after the read.* Its DELETE_STRICT matches nothing: a no-op.
//!
//! The function blocks until every switch answered or `timeout` passed (switches are
//! asked in parallel); never call it on a worker thread (the replies come through the
//! workers).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use openflow::model::{FlowMod, FlowModCommand, Match};
use openflow::ofctl::FlowEntry;
use openflow::{of10, Message, Version};

use crate::cookie::{tag_of, with_tag, TAG_MASK};
use crate::info::Dpid;
use crate::requests::Reply;
use crate::switches::{SendError, Switches};

/// What happened on one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchRemoval {
    /// The switch.
    pub dpid: Dpid,
    /// Its version (which way the flows were removed).
    pub version: Version,
    /// `Ok(n)`: the switch applied the removal; `n` is the number of flows deleted on
    /// 1.0 (read first), `None` on 1.3 (one delete by cookie, not counted). `Err`: why
    /// not (the switch refused, did not answer in time, or left).
    pub outcome: Result<Option<usize>, String>,
}

/// What [`remove_flows_of`] did, switch by switch (in dpid order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemovedReport {
    /// One entry per switch connected when the removal began.
    pub switches: Vec<SwitchRemoval>,
}

impl RemovedReport {
    /// Whether every switch applied the removal.
    pub fn is_complete(&self) -> bool {
        self.switches.iter().all(|s| s.outcome.is_ok())
    }

    /// The switches that did not, with why.
    pub fn failures(&self) -> impl Iterator<Item = (Dpid, &str)> {
        self.switches.iter().filter_map(|s| match &s.outcome {
            Ok(_) => None,
            Err(e) => Some((s.dpid, e.as_str())),
        })
    }
}

/// The 1.3 DELETE of every flow whose cookie carries `tag`, in every table.
pub fn delete_by_tag(tag: u16) -> FlowMod<'static> {
    FlowMod {
        cookie: with_tag(tag, 0),
        cookie_mask: TAG_MASK,
        ..FlowMod::delete(Match::default())
    }
}

/// The FLOW_STATS request for every flow in every table, in `version`.
pub fn all_flows_request(version: Version) -> Message {
    let every = openflow::ofctl::Flow {
        table: 0xff,
        ..openflow::ofctl::Flow::default()
    };
    // An empty selection over every table encodes in both versions.
    every
        .stats_request(version)
        .expect("an empty flow selection encodes in every version")
}

/// The flows a FLOW_STATS reply (all its parts) lists; the ones that cannot be read
/// are counted in the second value.
pub fn flows_of_reply(parts: &[Message]) -> (Vec<FlowEntry>, usize) {
    let mut flows = Vec::new();
    let mut unreadable = 0;
    for m in parts {
        for e in FlowEntry::from_message(m).into_iter().flatten() {
            match e {
                Ok(e) => flows.push(e),
                Err(_) => unreadable += 1,
            }
        }
    }
    (flows, unreadable)
}

/// The DELETE_STRICT of exactly `flow` (its table, match and priority; on 1.3 its
/// cookie under a full mask too, so only that flow goes), in `version`.
pub fn delete_strict(flow: &openflow::ofctl::Flow, version: Version) -> Option<Message> {
    let mut f = flow.clone();
    f.actions.clear();
    f.write_actions = None;
    f.clear_actions = false;
    f.write_metadata = None;
    f.goto_table = None;
    f.meter = None;
    f.flags = Default::default();
    f.idle_timeout = 0;
    f.hard_timeout = 0;
    match version {
        Version::V1_0 => {
            f.cookie_mask = 0;
            f.table = 0xff;
        }
        Version::V1_3 => f.cookie_mask = u64::MAX,
    }
    f.to_message(version, FlowModCommand::DeleteStrict).ok()
}

/// Removes every flow whose cookie carries `tag` from every connected switch (see the
/// module doc for how, per version); blocks until each switch answered or `timeout`
/// passed. Not on a worker thread.
pub fn remove_flows_of(switches: &Switches, tag: u16, timeout: Duration) -> RemovedReport {
    let deadline = Instant::now() + timeout;
    let (tx, rx) = mpsc::channel::<(Dpid, Step)>();
    let mut report = RemovedReport::default();
    let mut waiting = 0usize;
    for info in switches.connected() {
        let (dpid, version) = (info.dpid, info.version);
        let tx = tx.clone();
        let sent = match version {
            Version::V1_3 => switches.request_flow_mod(
                dpid,
                &delete_by_tag(tag),
                timeout,
                Box::new(move |r| {
                    let _ = tx.send((dpid, Step::Deleted(r, None)));
                }),
            ),
            Version::V1_0 => switches.request(
                dpid,
                &all_flows_request(version),
                timeout,
                Box::new(move |r| {
                    let _ = tx.send((dpid, Step::Read(r)));
                }),
            ),
        };
        report.switches.push(SwitchRemoval {
            dpid,
            version,
            outcome: Err("no answer in time".into()),
        });
        match sent {
            Ok(()) => waiting += 1,
            Err(e) => report.switches.last_mut().expect("just pushed").outcome = Err(e.to_string()),
        }
    }
    while waiting > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((dpid, step)) = rx.recv_timeout(left) else {
            break;
        };
        let Some(entry) = report.switches.iter_mut().find(|s| s.dpid == dpid) else {
            continue;
        };
        match step {
            Step::Deleted(reply, n) => {
                waiting -= 1;
                entry.outcome = applied(reply).map(|()| n);
            }
            Step::Read(Reply::Messages(parts)) => {
                let (flows, _) = flows_of_reply(&parts);
                let mine: Vec<Message> = flows
                    .iter()
                    .filter(|e| tag_of(e.flow.cookie) == tag)
                    .filter_map(|e| delete_strict(&e.flow, Version::V1_0))
                    .collect();
                let left = deadline.saturating_duration_since(Instant::now());
                if let Err(e) = send_batch(switches, dpid, &mine, left, tx.clone()) {
                    waiting -= 1;
                    entry.outcome = Err(e.to_string());
                }
            }
            Step::Read(other) => {
                waiting -= 1;
                entry.outcome = applied(other).map(|()| Some(0));
            }
        }
    }
    report
}

/// A step of one switch's removal, as its callback reports it.
enum Step {
    /// 1.0: the FLOW_STATS reply.
    Read(Reply),
    /// The delete(s) and barrier were answered; the number deleted on 1.0.
    Deleted(Reply, Option<usize>),
}

/// 1.0: the DELETE_STRICTs and a barrier, as one request.
fn send_batch(
    switches: &Switches,
    dpid: Dpid,
    deletes: &[Message],
    timeout: Duration,
    tx: mpsc::Sender<(Dpid, Step)>,
) -> Result<(), SendError> {
    let n = deletes.len();
    switches.request_with(
        dpid,
        timeout,
        Box::new(move |r| {
            let _ = tx.send((dpid, Step::Deleted(r, Some(n))));
        }),
        |version, out| {
            for m in deletes {
                m.encode(0, out)
                    .map_err(|error| SendError::Encode { dpid, error })?;
            }
            let barrier = match version {
                Version::V1_0 => Message::V10(of10::Message::BarrierRequest),
                Version::V1_3 => Message::V13(openflow::of13::Message::BarrierRequest),
            };
            barrier
                .encode(0, out)
                .map(drop)
                .map_err(|error| SendError::Encode { dpid, error })
        },
    )
}

/// A barrier-terminated request's answer as applied or not.
fn applied(reply: Reply) -> Result<(), String> {
    match reply {
        Reply::Messages(_) => Ok(()),
        Reply::Error(e) => Err(format!("the switch refused it: {e:?}")),
        Reply::TimedOut => Err("no answer in time".into()),
        Reply::SwitchGone => Err("the switch left before it answered".into()),
        Reply::Busy => Err("the switch's queue was full: not sent".into()),
    }
}

#[cfg(test)]
#[path = "removal_tests.rs"]
pub(crate) mod tests;
