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
//! The core marks every FLOW_MOD an app sends through its [`crate::ctx::SwitchCtx`]
//! (`send_flow_mod`, `send`, `request`) or through the [`crate::ctx::AppSwitches`] that
//! `ctx.switches()` gives with the app's tag: the codec's encoders take the app's
//! [`owner`] and write the cookie's top 16 bits as they encode (raw messages too, so no
//! app can forget; see `openflow::cookie`). On OpenFlow 1.3 an app's MODIFY and DELETE
//! also get the tag's bits in `cookie_mask`: an app changes and deletes only its own
//! flows. OpenFlow 1.0 has no cookie mask, so a 1.0 delete reaches every app's flows that
//! match; the core's own removal of an app's flows ([`crate::removal`]) is exact on both
//! versions.
//!
//! What the core cannot mark: sends through the [`crate::switches::Switches`] service an
//! app took in `start` (the core does not know which app calls it) and requests made
//! through `AppSwitches` (`request`, `request_flow_mod`, `request_applied` reach
//! `Switches` itself). An app sending flows that way builds its cookie itself
//! (`with_tag(app_tag(NAME), own)`, as routing does) or wraps the service:
//! `AppSwitches::new(&switches, app_tag(NAME))`.
//!
//! The tag is a hash of the app's name ([`app_tag`]), the same in every run and on every
//! machine, so a restarted controller recognises the flows its apps installed before
//! ([`crate::reconcile`]). Tag 0 is "no app" (flows added by hand, cookie 0) and
//! 0xffff is never given (a cookie of all ones is reserved in 1.3); two registered apps
//! whose names hash alike fail start-up, naming both
//! ([`crate::services::StartError::CookieTagCollision`]).

use openflow::cookie::CookieOwner;

/// How far the tag is shifted in a cookie.
pub const TAG_SHIFT: u32 = 48;
/// The cookie bits that hold the tag.
pub const TAG_MASK: u64 = 0xffff << TAG_SHIFT;
/// The cookie bits that are the app's own.
pub const OWN_MASK: u64 = !TAG_MASK;

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

/// The cookie owner that writes `tag` into every FLOW_MOD an encoder makes (tag 0: no
/// owner, cookies as given).
pub const fn owner(tag: u16) -> CookieOwner {
    match tag {
        0 => CookieOwner::NONE,
        t => CookieOwner::new((t as u64) << TAG_SHIFT, TAG_MASK),
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

#[cfg(test)]
#[path = "cookie_tests.rs"]
pub(crate) mod tests;
