use std::sync::{Arc, Mutex};
use std::time::Instant;

use openflow::model::{Action, FlowMod, Match, PortNo};
use openflow::ofctl::FlowEntry;
use openflow::Version;

use super::*;
use crate::app::{App, Builder, SwitchCtx};
use crate::cookie::tests::info;
use crate::cookie::{app_tag, with_tag};
use crate::host::AppHost;
use crate::removal::tests::{play, Table};
use crate::services::Services;

/// In an initializer: the app's flows judged so far, and the cookies `ctx.adopted()`
/// listed (`None`: not known).
type Seen = (u32, Option<Vec<u64>>);

/// Keeps its flows of priority 10 and deletes the others; notes what its
/// initializer saw as adopted.
#[derive(Default)]
struct Judge {
    /// What `ctx.adopted()` listed in the initializer (cookies).
    /// And how many of its flows were judged by then.
    seen: Arc<Mutex<Option<Seen>>>,
}

impl App for Judge {
    type State = u32; // flows judged on this switch
    fn name(&self) -> &'static str {
        "judge"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_adopt(|_, _, judged, e: &FlowEntry| {
            *judged += 1;
            if e.flow.priority == 10 {
                Adopt::Keep
            } else {
                Adopt::Delete
            }
        });
        b.on_initialize(|app: &Judge, ctx: &mut SwitchCtx, judged| {
            let cookies = ctx
                .adopted()
                .map(|flows| flows.iter().map(|e| e.flow.cookie).collect());
            *app.seen.lock().unwrap() = Some((*judged, cookies));
        });
    }
}

/// Has no adopt hook: keeps all of its flows.
struct Keeper;
impl App for Keeper {
    type State = ();
    fn name(&self) -> &'static str {
        "keeper"
    }
    fn build(&self, _: &mut Builder<Self>) {}
}

fn a_switch_that_connects_keeps_what_its_owners_keep(version: Version) {
    let judge_app = Judge::default();
    let seen = Arc::clone(&judge_app.seen);
    let p = AppHost::build(vec![Box::new(judge_app), Box::new(Keeper)], Services::new()).unwrap();
    let out = [Action::output(PortNo::Physical(1))];
    let to_controller = [Action::output(PortNo::Controller)];
    let by_port = |port: u32| Match {
        in_port: Some(port),
        ..Match::default()
    };
    let (judge, keeper) = (app_tag("judge"), app_tag("keeper"));
    let flows = [
        FlowMod::add(by_port(1), &out)
            .cookie(with_tag(judge, 1))
            .priority(10),
        FlowMod::add(by_port(2), &out)
            .cookie(with_tag(judge, 2))
            .priority(11),
        FlowMod::add(by_port(3), &out).cookie(with_tag(keeper, 3)),
        FlowMod::add(Match::default(), &to_controller)
            .cookie(with_tag(keeper, 4))
            .priority(0),
        // An app that is not running, and a flow added by hand: deleted.
        FlowMod::add(by_port(4), &out).cookie(with_tag(app_tag("gone"), 5)),
        FlowMod::add(by_port(5), &out).priority(10),
    ];
    let mut table = Table::new(version, &flows);
    let mut sw = p.dispatcher.new_switch(info(1, version));
    let found =
        crate::removal::flows_of_reply(&crate::cookie::tests::messages(&table.reply(9, 1))).0;
    p.dispatcher.set_found_flows(&mut sw, Some(found));
    let mut sent = Vec::new();
    p.dispatcher
        .switch_added(&mut sw, &mut sent, Instant::now());
    let mods = play(&p, &mut sw, &sent, &mut table);
    assert_eq!(
        mods.len(),
        3,
        "one strict delete per flow not kept: {mods:?}"
    );
    let kept = [with_tag(judge, 1), with_tag(keeper, 3), with_tag(keeper, 4)];
    assert_eq!(table.cookies(), kept, "{version}");
    // Every flow of the app judged before initializers, which see every app's kept.
    assert_eq!(*seen.lock().unwrap(), Some((2, Some(kept.to_vec()))));
    let flows: Vec<FlowEntry> =
        crate::removal::flows_of_reply(&crate::cookie::tests::messages(&table.reply(9, 1))).0;
    assert!(has_table_miss(&flows), "the kept table-miss entry is seen");
    // A switch whose flows are not known: nothing deleted, `adopted()` is None.
    let mut sw = p.dispatcher.new_switch(info(2, version));
    let mut sent = Vec::new();
    p.dispatcher
        .switch_added(&mut sw, &mut sent, Instant::now());
    assert!(sent.is_empty());
    assert_eq!(*seen.lock().unwrap(), Some((0, None)));
}

#[test]
fn table_miss_entries_are_told_apart() {
    let to_controller = [Action::output(PortNo::Controller)];
    let out = [Action::output(PortNo::Physical(1))];
    let entries = |fm: FlowMod| {
        let t = Table::new(Version::V1_3, &[fm]);
        crate::removal::flows_of_reply(&crate::cookie::tests::messages(&t.reply(1, 1))).0
    };
    assert!(has_table_miss(&entries(
        FlowMod::add(Match::default(), &to_controller).priority(0)
    )));
    assert!(!has_table_miss(&entries(
        FlowMod::add(Match::default(), &to_controller).priority(1)
    )));
    assert!(!has_table_miss(&entries(
        FlowMod::add(Match::default(), &out).priority(0)
    )));
    let e = entries(FlowMod::add(Match::default(), &out).priority(0));
    assert_eq!(output_ports(&e[0].flow).collect::<Vec<_>>(), [1]);
}

#[test]
fn a_1_3_switch_keeps_what_its_owners_keep() {
    a_switch_that_connects_keeps_what_its_owners_keep(Version::V1_3);
}

#[test]
fn a_1_0_switch_keeps_what_its_owners_keep() {
    a_switch_that_connects_keeps_what_its_owners_keep(Version::V1_0);
}
