use std::sync::Arc;
use std::time::{Duration, Instant};

use openflow::model::{Action, FlowMod, Match, PortNo};
use openflow::{of10, of13, Message, Version};

use super::*;
use crate::app::{App, Builder};
use crate::cookie::tests::{info, messages};
use crate::cookie::{app_tag, with_tag};
use crate::host::{AppHost, Core};
use crate::services::Services;

/// A flow table as a switch keeps it, in the switch's version's own terms.
#[derive(Debug, Clone)]
pub(crate) enum Table {
    V10(Vec<of10::stats::FlowStats>),
    V13(Vec<of13::multipart::FlowStats>),
}

impl Table {
    /// A table holding `flows` (ADDs), as `version` stores them.
    pub(crate) fn new(version: Version, flows: &[FlowMod<'_>]) -> Table {
        let mut t = match version {
            Version::V1_0 => Table::V10(Vec::new()),
            Version::V1_3 => Table::V13(Vec::new()),
        };
        for f in flows {
            t.add(f);
        }
        t
    }

    pub(crate) fn add(&mut self, f: &FlowMod<'_>) {
        let version = match self {
            Table::V10(_) => Version::V1_0,
            Table::V13(_) => Version::V1_3,
        };
        let mut bytes = Vec::new();
        f.encode(version, 0, &mut bytes).unwrap();
        match (self, Message::decode(&bytes).unwrap().1) {
            (Table::V10(t), Message::V10(of10::Message::FlowMod(m))) => {
                t.push(of10::stats::FlowStats {
                    table_id: 0,
                    match_: m.match_,
                    duration_sec: 1,
                    duration_nsec: 0,
                    priority: m.priority,
                    idle_timeout: m.idle_timeout,
                    hard_timeout: m.hard_timeout,
                    cookie: m.cookie,
                    packet_count: 0,
                    byte_count: 0,
                    actions: m.actions,
                })
            }
            (Table::V13(t), Message::V13(of13::Message::FlowMod(m))) => {
                t.push(of13::multipart::FlowStats {
                    table_id: m.table_id,
                    duration_sec: 1,
                    duration_nsec: 0,
                    priority: m.priority,
                    idle_timeout: m.idle_timeout,
                    hard_timeout: m.hard_timeout,
                    flags: m.flags,
                    cookie: m.cookie,
                    packet_count: 0,
                    byte_count: 0,
                    match_: m.match_,
                    instructions: m.instructions,
                })
            }
            _ => unreachable!(),
        }
    }

    pub(crate) fn cookies(&self) -> Vec<u64> {
        match self {
            Table::V10(t) => t.iter().map(|f| f.cookie).collect(),
            Table::V13(t) => t.iter().map(|f| f.cookie).collect(),
        }
    }

    /// The FLOW_STATS reply listing the table, in `parts` parts (MORE on all but the
    /// last).
    pub(crate) fn reply(&self, xid: u32, parts: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let n = match self {
            Table::V10(t) => t.len(),
            Table::V13(t) => t.len(),
        };
        let per = n.div_ceil(parts.max(1)).max(1);
        for i in 0..parts.max(1) {
            let range = (i * per).min(n)..((i + 1) * per).min(n);
            let flags = u16::from(i + 1 < parts);
            let m = match self {
                Table::V10(t) => Message::V10(of10::Message::StatsReply(of10::StatsReply {
                    flags,
                    body: of10::StatsReplyBody::Flow {
                        stats: t[range].to_vec(),
                    },
                })),
                Table::V13(t) => Message::V13(of13::Message::MultipartReply(
                    of13::multipart::MultipartReply {
                        flags,
                        body: of13::multipart::MultipartReplyBody::Flow {
                            stats: t[range].to_vec(),
                        },
                    },
                )),
            };
            m.encode(xid, &mut out).unwrap();
        }
        out
    }

    /// Applies a DELETE or DELETE_STRICT as the spec says (1.0 §4.6 / 1.3 §6.4), for
    /// the cases the controller sends: strict by match and priority (and 1.3 cookie
    /// under its mask), non-strict with an empty match by cookie under its mask.
    pub(crate) fn apply(&mut self, m: &Message) {
        match (self, m) {
            (Table::V10(t), Message::V10(of10::Message::FlowMod(f))) => match f.command {
                of10::FlowModCommand::DeleteStrict => {
                    t.retain(|e| !(e.match_ == f.match_ && e.priority == f.priority))
                }
                of10::FlowModCommand::Delete => t.clear(),
                _ => {}
            },
            (Table::V13(t), Message::V13(of13::Message::FlowMod(f))) => {
                let cookie_ok = |c: u64| c & f.cookie_mask == f.cookie & f.cookie_mask;
                let table_ok = |id: u8| f.table_id == 0xff || f.table_id == id;
                match f.command {
                    of13::FlowModCommand::DeleteStrict => t.retain(|e| {
                        !(e.match_ == f.match_
                            && e.priority == f.priority
                            && cookie_ok(e.cookie)
                            && table_ok(e.table_id))
                    }),
                    of13::FlowModCommand::Delete => {
                        assert_eq!(f.match_, of13::Match::default(), "only deletes by cookie");
                        t.retain(|e| !(cookie_ok(e.cookie) && table_ok(e.table_id)))
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// Plays switch `sw`: applies what the controller sent it (`out`) to `table`, answers
/// flow-stats requests and barriers into the pipeline. Returns the FLOW_MODs seen.
pub(crate) fn play(
    p: &Core,
    sw: &mut crate::dispatch::SwitchState,
    out: &[u8],
    table: &mut Table,
) -> Vec<Message> {
    let mut mods = Vec::new();
    let mut rest = out;
    while rest.len() >= 8 {
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        let frame = &rest[..len];
        rest = &rest[len..];
        let xid = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        let m = Message::decode(frame).unwrap().1;
        let mut answer = Vec::new();
        match &m {
            Message::V10(of10::Message::StatsRequest(_))
            | Message::V13(of13::Message::MultipartRequest(_)) => {
                answer = table.reply(xid, 2);
            }
            Message::V10(of10::Message::BarrierRequest) => {
                Message::V10(of10::Message::BarrierReply)
                    .encode(xid, &mut answer)
                    .unwrap();
            }
            Message::V13(of13::Message::BarrierRequest) => {
                Message::V13(of13::Message::BarrierReply)
                    .encode(xid, &mut answer)
                    .unwrap();
            }
            Message::V10(of10::Message::FlowMod(_)) | Message::V13(of13::Message::FlowMod(_)) => {
                table.apply(&m);
                mods.push(m.clone());
            }
            _ => {}
        }
        let mut junk = Vec::new();
        for reply in messages(&answer) {
            let mut bytes = Vec::new();
            reply.encode(xid, &mut bytes).unwrap();
            p.dispatcher.handle(sw, &bytes, &mut junk, Instant::now());
        }
    }
    mods
}

struct Quiet;
impl App for Quiet {
    type State = ();
    fn name(&self) -> &'static str {
        "quiet"
    }
    fn build(&self, _: &mut Builder<Self>) {}
}

/// Two apps' flows (and one added by hand) on two switches; the removal of `mine`
/// leaves exactly the others.
fn removes_exactly_the_apps_flows(version: Version) {
    let p = Arc::new(AppHost::build(vec![Box::new(Quiet)], Services::new()).unwrap());
    let (mine, theirs) = (app_tag("stopped_app"), app_tag("other_app"));
    let out = [Action::output(PortNo::Physical(2))];
    let m = |dst: u8| Match {
        eth_dst: Some(openflow::types::MacAddr([0, 0, 0, 0, 0, dst])),
        ..Match::default()
    };
    let flows = [
        FlowMod::add(m(1), &out).cookie(with_tag(mine, 1)),
        FlowMod::add(m(1), &out)
            .cookie(with_tag(theirs, 1))
            .priority(7),
        FlowMod::add(m(2), &out)
            .cookie(with_tag(mine, 2))
            .priority(9),
        FlowMod::add(Match::default(), &out)
            .cookie(with_tag(mine, 3))
            .priority(0),
        FlowMod::add(m(3), &out).cookie(5),
        FlowMod::add(m(2), &out).cookie(with_tag(theirs, 4)),
    ];
    let mut switches: Vec<_> = (1..=2)
        .map(|d| {
            (
                p.dispatcher.new_switch(info(d, version)),
                Table::new(version, &flows),
            )
        })
        .collect();
    let remover = {
        let p = Arc::clone(&p);
        std::thread::spawn(move || remove_flows_of(p.switches(), mine, Duration::from_secs(5)))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut mods = Vec::new();
    while !remover.is_finished() && Instant::now() < deadline {
        for (sw, table) in &mut switches {
            let mut out = Vec::new();
            p.dispatcher.take_queued(sw, &mut out, Instant::now());
            mods.extend(play(&p, sw, &out, table));
        }
        std::thread::yield_now();
    }
    let report = remover.join().unwrap();
    assert!(report.is_complete(), "{report:?}");
    let count = match version {
        Version::V1_0 => Some(3),
        Version::V1_3 => None,
    };
    for (s, d) in report.switches.iter().zip(1..) {
        assert_eq!((s.dpid.0, &s.outcome), (d, &Ok(count)));
    }
    for (_, table) in &switches {
        assert_eq!(
            table.cookies(),
            [with_tag(theirs, 1), 5, with_tag(theirs, 4)],
            "{version}"
        );
    }
    // 1.3: one delete per switch; 1.0: one strict delete per flow of the app.
    let expected = if version == Version::V1_3 { 2 } else { 6 };
    assert_eq!(mods.len(), expected, "{mods:?}");
}

#[test]
fn removes_exactly_the_apps_flows_on_1_3_by_cookie_and_mask() {
    removes_exactly_the_apps_flows(Version::V1_3);
}

#[test]
fn removes_exactly_the_apps_flows_on_1_0_by_strict_deletes() {
    removes_exactly_the_apps_flows(Version::V1_0);
}

#[test]
fn a_switch_that_does_not_answer_is_reported() {
    let p = Arc::new(AppHost::build(vec![Box::new(Quiet)], Services::new()).unwrap());
    let _sw = p.dispatcher.new_switch(info(7, Version::V1_3));
    let started = Instant::now();
    let report = remove_flows_of(p.switches(), 1, Duration::from_millis(100));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!report.is_complete());
    assert_eq!(
        report.failures().collect::<Vec<_>>(),
        [(Dpid(7), "no answer in time")]
    );
}
