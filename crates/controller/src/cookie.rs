//! Flows owned by their app: the top 16 bits of every flow's cookie name the app that
//! installed it (its *tag*), the low 48 bits are the app's own.
//!
//! ```text
//!  63            48 47                                             0
//! ┌────────────────┬────────────────────────────────────────────────┐
//! │ app_tag(name)  │ the app's own bits (a route number, a version) │
//! └────────────────┴────────────────────────────────────────────────┘
//! ```
//!
//! The core stamps the tag: every FLOW_MOD an app sends through its
//! [`crate::app::SwitchCtx`] (`send_flow_mod`, `send`, `request`) or through the
//! [`AppSwitches`] that `ctx.switches()` gives has its top 16 bits replaced by the
//! app's tag, after encoding, at the cookie's fixed offset (so raw messages are stamped
//! too and no app can forget). On OpenFlow 1.3 an app's MODIFY and DELETE also get the
//! tag's bits in `cookie_mask`: an app changes and deletes only its own flows. OpenFlow
//! 1.0 has no cookie mask, so a 1.0 delete reaches every app's flows that match; the
//! core's own removal of an app's flows ([`crate::removal`]) is exact on both versions.
//!
//! What the core cannot stamp: sends through the [`Switches`] service an app took in
//! `start` (the core does not know which app calls it) and requests made through
//! `AppSwitches` (`request`, `request_flow_mod`, `request_applied` reach `Switches`
//! itself). An app sending flows that way builds its cookie itself
//! (`with_tag(app_tag(NAME), own)`, as routing does) or wraps the service:
//! `AppSwitches::new(&switches, app_tag(NAME))`.
//!
//! The tag is a hash of the app's name ([`app_tag`]), the same in every run and on every
//! machine, so a restarted controller recognises the flows its apps installed before
//! ([`crate::reconcile`]). Tag 0 is "no app" (flows added by hand, cookie 0) and
//! 0xffff is never given (a cookie of all ones is reserved in 1.3); two registered apps
//! whose names hash alike fail start-up, naming both
//! ([`crate::services::StartError::CookieTagCollision`]).

use openflow::model::FlowMod;
use openflow::Message;

use crate::switches::{SendError, Switches};

/// How far the tag is shifted in a cookie.
pub const TAG_SHIFT: u32 = 48;
/// The cookie bits that hold the tag.
pub const TAG_MASK: u64 = 0xffff << TAG_SHIFT;
/// The cookie bits that are the app's own.
pub const OWN_MASK: u64 = !TAG_MASK;

/// OFPT_FLOW_MOD, the same number in 1.0 and 1.3.
const FLOW_MOD: u8 = 14;

/// The tag of the app called `name`: FNV-1a (64 bits) of the name's bytes, folded to
/// 16 bits; never 0 (no app) nor 0xffff. A `const fn`, so an app can build its cookies
/// from its own tag at compile time.
///
/// ```
/// use controller::cookie::app_tag;
/// assert_eq!(app_tag("routing"), app_tag("routing"));
/// assert_ne!(app_tag("routing"), app_tag("topology"));
/// assert!(app_tag("") != 0 && app_tag("") != 0xffff);
/// ```
pub const fn app_tag(name: &str) -> u16 {
    let bytes = name.as_bytes();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    let t = (h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) as u16;
    match t {
        0 => 1,
        0xffff => 0xfffe,
        t => t,
    }
}

/// The tag in a cookie (0: no app).
pub const fn tag_of(cookie: u64) -> u16 {
    (cookie >> TAG_SHIFT) as u16
}

/// `cookie`'s own bits under `tag`.
pub const fn with_tag(tag: u16, cookie: u64) -> u64 {
    ((tag as u64) << TAG_SHIFT) | (cookie & OWN_MASK)
}

/// Stamps `tag` on `frame` if it is a FLOW_MOD (1.0 or 1.3, whole message with its
/// header); leaves any other message as it is. On 1.3, a MODIFY or DELETE (strict or
/// not) also gets the tag's bits in its cookie mask, so it reaches only the app's own
/// flows.
#[inline]
pub fn stamp(frame: &mut [u8], tag: u16) {
    if frame.len() < 8 || frame[1] != FLOW_MOD {
        return;
    }
    let tag = tag.to_be_bytes();
    match frame[0] {
        // ofp_flow_mod (1.0 §5.3.3): header(8) match(40) cookie(8) command(2)...
        0x01 if frame.len() >= 72 => frame[48..50].copy_from_slice(&tag),
        // ofp_flow_mod (1.3 §7.3.4.1): header(8) cookie(8) cookie_mask(8) table_id(1)
        // command(1)...
        0x04 if frame.len() >= 56 => {
            frame[8..10].copy_from_slice(&tag);
            if (1..=4).contains(&frame[25]) {
                frame[16..18].copy_from_slice(&[0xff, 0xff]);
            }
        }
        _ => {}
    }
}

/// The apps' tags, with their names: who owns a cookie.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owners(Vec<(u16, &'static str)>);

impl Owners {
    /// The tags of `names`; `Err((a, b))` when two names share a tag.
    pub fn new(
        names: impl IntoIterator<Item = &'static str>,
    ) -> Result<Owners, (&'static str, &'static str)> {
        let mut v: Vec<(u16, &'static str)> = Vec::new();
        for name in names {
            let tag = app_tag(name);
            if let Some((_, other)) = v.iter().find(|(t, n)| *t == tag && *n != name) {
                return Err((other, name));
            }
            v.push((tag, name));
        }
        Ok(Owners(v))
    }

    /// The app whose tag `cookie` carries, if any of these.
    pub fn owner(&self, cookie: u64) -> Option<&'static str> {
        let tag = tag_of(cookie);
        self.0.iter().find(|(t, _)| *t == tag).map(|(_, n)| *n)
    }
}

/// [`Switches`] as an app sees it in a handler ([`crate::app::SwitchCtx::switches`]):
/// everything of `Switches` (it derefs to it), with the sends that may carry a
/// FLOW_MOD stamping the app's tag (see the module doc).
#[derive(Clone, Copy)]
pub struct AppSwitches<'a> {
    /// The core's directory.
    switches: &'a Switches,
    /// The app's tag.
    tag: u16,
}

impl std::fmt::Debug for AppSwitches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppSwitches")
            .field("tag", &self.tag)
            .finish()
    }
}

impl<'a> AppSwitches<'a> {
    /// `switches`, sending under `tag`.
    pub fn new(switches: &'a Switches, tag: u16) -> AppSwitches<'a> {
        AppSwitches { switches, tag }
    }

    /// The directory itself (sends from it are not stamped).
    pub fn inner(&self) -> &'a Switches {
        self.switches
    }

    /// [`Switches::send_flow_mod`], stamped with the app's tag.
    pub fn send_flow_mod(&self, dpid: u64, fm: &FlowMod<'_>) -> Result<(), SendError> {
        self.switches.send_tagged(dpid, self.tag, |version, out| {
            fm.encode(version, 0, out).map(drop)
        })
    }

    /// [`Switches::send`], a FLOW_MOD stamped with the app's tag.
    pub fn send(&self, dpid: u64, msg: &Message) -> Result<(), SendError> {
        self.switches.send_tagged_message(dpid, self.tag, msg)
    }
}

impl std::ops::Deref for AppSwitches<'_> {
    type Target = Switches;
    fn deref(&self) -> &Switches {
        self.switches
    }
}

#[cfg(test)]
#[path = "cookie_tests.rs"]
pub(crate) mod tests;
