use std::time::Instant;

use openflow::model::{Action, FlowMod, Match, PortNo};
use openflow::{of10, of13, Message, Version};

use super::*;
use crate::app::{App, Builder, SwitchCtx};
use crate::host::AppHost;
use crate::info::SwitchInfo;
use crate::services::{Services, StartError};

pub(crate) fn info(dpid: u64, version: Version) -> SwitchInfo {
    SwitchInfo {
        n_buffers: 256,
        n_tables: 1,
        ..SwitchInfo::new(openflow::Dpid(dpid), version)
    }
}

/// Every message in `bytes`.
pub(crate) fn messages(bytes: &[u8]) -> Vec<Message> {
    let mut v = Vec::new();
    let mut rest = bytes;
    while rest.len() >= 8 {
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        v.push(Message::decode(&rest[..len]).unwrap().1);
        rest = &rest[len..];
    }
    v
}

/// (cookie, cookie_mask) of every FLOW_MOD in `bytes` (1.0: mask 0).
fn cookies(bytes: &[u8]) -> Vec<(u64, u64)> {
    messages(bytes)
        .iter()
        .filter_map(|m| match m {
            Message::V10(of10::Message::FlowMod(f)) => Some((f.cookie, 0)),
            Message::V13(of13::Message::FlowMod(f)) => Some((f.cookie, f.cookie_mask)),
            _ => None,
        })
        .collect()
}

#[test]
fn tags_are_the_same_in_every_run_and_never_reserved() {
    // Pinned: a restarted controller (another build, another machine) must find the
    // same tag in the flows its apps installed before.
    // (FNV-1a 64 of "routing" folded by xor of its four 16-bit words, computed apart.)
    assert_eq!(app_tag("routing"), 0x6b9e);
    assert_eq!(app_tag("learning_switch"), app_tag("learning_switch"));
    let mut seen = std::collections::HashSet::new();
    for i in 0..5000 {
        let t = app_tag(&format!("app{i}"));
        assert!(t != 0 && t != 0xffff);
        seen.insert(t);
    }
    // A hash that spreads: 5,000 names over 65,534 tags hardly collide.
    assert!(seen.len() > 4700, "{}", seen.len());
    assert_eq!(tag_of(with_tag(0x1234, u64::MAX)), 0x1234);
    assert_eq!(with_tag(0x1234, u64::MAX) & OWN_MASK, OWN_MASK);
}

#[test]
fn an_owner_replaces_the_top_bits_and_masks_an_apps_deletes_on_1_3() {
    let out = [Action::output(PortNo::Physical(2))];
    let add = FlowMod::add(Match::default(), &out).cookie(0xabcd_0000_0000_0042);
    let del = FlowMod::delete(Match::default());
    for version in [Version::V1_0, Version::V1_3] {
        let mut bytes = Vec::new();
        add.encode_owned(version, 1, owner(0x1234), &mut bytes)
            .unwrap();
        del.encode_owned(version, 2, owner(0x1234), &mut bytes)
            .unwrap();
        let mask = if version == Version::V1_3 {
            TAG_MASK
        } else {
            0
        };
        assert_eq!(
            cookies(&bytes),
            [(0x1234_0000_0000_0042, 0), (0x1234_0000_0000_0000, mask)],
            "{version}"
        );
    }
    // Another message is left as it is.
    let barrier = Message::V13(of13::Message::BarrierRequest);
    let (mut plain, mut owned) = (Vec::new(), Vec::new());
    barrier.encode(3, &mut plain).unwrap();
    barrier.encode_owned(3, owner(0x1234), &mut owned).unwrap();
    assert_eq!(plain, owned);
    // Tag 0 is no owner: the cookie as the app gave it.
    let mut bytes = Vec::new();
    add.encode_owned(Version::V1_3, 1, owner(0), &mut bytes)
        .unwrap();
    assert_eq!(cookies(&bytes), [(0xabcd_0000_0000_0042, 0)]);
}

/// Sends, from an initializer, a FLOW_MOD by every way an app has.
struct Sender;
impl App for Sender {
    type State = ();
    fn name(&self) -> &'static str {
        "sender"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_initialize(|_, ctx: &mut SwitchCtx, _| {
            let out = [Action::output(PortNo::Physical(1))];
            ctx.send_flow_mod(&FlowMod::add(Match::default(), &out).cookie(1));
            let raw = FlowMod::add(Match::default(), &out).cookie(2);
            let mut bytes = Vec::new();
            raw.encode(ctx.version(), 0, &mut bytes).unwrap();
            ctx.send(&Message::decode(&bytes).unwrap().1);
            ctx.send_flow_mod(&FlowMod::delete(Match::default()));
            if ctx.dpid() == openflow::Dpid(1) {
                let other = FlowMod::add(Match::default(), &out).cookie(3);
                ctx.switches()
                    .send_flow_mod(openflow::Dpid(2), &other)
                    .unwrap();
                let _ = ctx
                    .switches()
                    .send(openflow::Dpid(2), &Message::decode(&bytes).unwrap().1);
            }
        });
    }
}

#[test]
fn every_flow_an_app_sends_carries_its_tag() {
    for version in [Version::V1_0, Version::V1_3] {
        let p = AppHost::build(vec![Box::new(Sender)], Services::new()).unwrap();
        let tag = with_tag(app_tag("sender"), 0);
        let mut one = p.dispatcher.new_switch(info(1, version));
        let mut two = p.dispatcher.new_switch(info(2, version));
        let (mut out1, mut out2) = (Vec::new(), Vec::new());
        let now = Instant::now();
        p.dispatcher.switch_added(&mut one, &mut out1, now);
        let mask = if version == Version::V1_3 {
            TAG_MASK
        } else {
            0
        };
        assert_eq!(
            cookies(&out1),
            [(tag | 1, 0), (tag | 2, 0), (tag, mask)],
            "{version}"
        );
        p.dispatcher.take_queued(&mut two, &mut out2, now);
        assert_eq!(cookies(&out2), [(tag | 3, 0), (tag | 2, 0)], "{version}");
    }
}

struct Named(&'static str);
impl App for Named {
    type State = ();
    fn name(&self) -> &'static str {
        self.0
    }
    fn build(&self, _: &mut Builder<Self>) {}
}

#[test]
fn two_apps_with_one_tag_fail_start_up_naming_both() {
    // Two names that hash alike, found by search (16 bits collide within a few
    // hundred names).
    let mut by_tag = std::collections::HashMap::new();
    let (a, b) = (0..)
        .find_map(|i| {
            let name: &'static str = Box::leak(format!("app{i}").into_boxed_str());
            by_tag
                .insert(app_tag(name), name)
                .map(|first| (first, name))
        })
        .unwrap();
    let e = AppHost::build(
        vec![Box::new(Named(a)), Box::new(Named(b))],
        Services::new(),
    )
    .err()
    .unwrap();
    assert_eq!(
        e,
        StartError::CookieTagCollision {
            first: a,
            second: b
        }
    );
    assert!(
        e.to_string().contains(a) && e.to_string().contains(b),
        "{e}"
    );
    assert_eq!(Owners::new([a, b]), Err((a, b)));
    let owners = Owners::new(["routing", "topology"]).unwrap();
    assert_eq!(
        owners.owner(with_tag(app_tag("topology"), 9)),
        Some("topology")
    );
    assert_eq!(owners.owner(0x42), None);
}
