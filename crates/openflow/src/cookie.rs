//! Cookie bits that say who owns a flow, written by the encoder.
//!
//! A controller whose apps share a switch marks each app's flows in their cookies (some
//! bits naming the app). [`CookieOwner`] is those bits and their mask; the FLOW_MOD
//! encoders take one ([`crate::model::FlowMod::encode_owned`],
//! [`crate::Message::encode_owned`]) and write the cookie with the owner's bits in place,
//! so the caller never patches encoded bytes, and no FLOW_MOD can leave without them.
//!
//! On OpenFlow 1.3 a MODIFY or DELETE (strict or not) also gets the owner's mask in its
//! `cookie_mask`, so it reaches only the owner's flows (1.3.5 §7.3.4.1: "cookie_mask ...
//! used to restrict the cookie bits that must match when the command is OFPFC_MODIFY* or
//! OFPFC_DELETE*"). OpenFlow 1.0 has no cookie mask: a 1.0 modify or delete reaches
//! every flow that matches, whoever owns it.
//!
//! ```
//! use openflow::cookie::CookieOwner;
//!
//! let app = CookieOwner::new(0xbeef << 48, 0xffff << 48);
//! assert_eq!(app.cookie(0x1234), 0xbeef_0000_0000_1234);
//! assert_eq!(app.cookie_mask(true, 0xff), 0xffff_0000_0000_00ff);
//! assert_eq!(app.cookie_mask(false, 0), 0);
//! assert_eq!(CookieOwner::NONE.cookie(0x1234), 0x1234);
//! ```

/// The bits of a cookie that name a flow's owner (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CookieOwner {
    /// The owner's bits, within `mask`.
    value: u64,
    /// The cookie bits that belong to the owner's mark.
    mask: u64,
}

impl CookieOwner {
    /// No owner: cookies are encoded as given.
    pub const NONE: CookieOwner = CookieOwner { value: 0, mask: 0 };

    /// The owner whose mark is `value` in the bits of `mask` (bits of `value` outside
    /// `mask` are dropped).
    pub const fn new(value: u64, mask: u64) -> CookieOwner {
        CookieOwner {
            value: value & mask,
            mask,
        }
    }

    /// The owner's bits.
    pub const fn value(self) -> u64 {
        self.value
    }

    /// The mask of the owner's bits.
    pub const fn mask(self) -> u64 {
        self.mask
    }

    /// `cookie` with the owner's bits in place of its own under the mask.
    #[inline]
    pub const fn cookie(self, cookie: u64) -> u64 {
        (cookie & !self.mask) | self.value
    }

    /// A 1.3 `cookie_mask` for a FLOW_MOD whose command `restricts` by cookie (a modify
    /// or delete): `mask` with the owner's bits added, so the command reaches only the
    /// owner's flows; an add's mask is left as it is.
    #[inline]
    pub const fn cookie_mask(self, restricts: bool, mask: u64) -> u64 {
        if restricts {
            mask | self.mask
        } else {
            mask
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Action, FlowMod, FlowModCommand, Match, PortNo};
    use crate::{of10, of13, Message, Version};

    const APP: CookieOwner = CookieOwner::new(0xbeef << 48, 0xffff << 48);

    /// The cookie (and 1.3 cookie mask) of an encoded FLOW_MOD, read back.
    fn cookies(bytes: &[u8]) -> (u64, Option<u64>) {
        match Message::decode(bytes).unwrap().1 {
            Message::V10(of10::Message::FlowMod(f)) => (f.cookie, None),
            Message::V13(of13::Message::FlowMod(f)) => (f.cookie, Some(f.cookie_mask)),
            m => panic!("not a FLOW_MOD: {m:?}"),
        }
    }

    #[test]
    fn the_model_flow_mod_carries_the_owner_in_both_versions() {
        let out = [Action::output(PortNo::Physical(2))];
        let add = FlowMod::add(Match::default(), &out).cookie(0x1234);
        let mut del = FlowMod::delete(Match::default()).cookie(0x77);
        del.cookie_mask = 0xff;
        for v in [Version::V1_0, Version::V1_3] {
            let mut b = Vec::new();
            add.encode_owned(v, 1, APP, &mut b).unwrap();
            let (cookie, mask) = cookies(&b);
            assert_eq!(cookie, 0xbeef_0000_0000_1234, "{v}");
            // An add is not restricted by its cookie: its mask is left as given.
            assert!(mask.is_none_or(|m| m == 0), "{v}");
            // Without an owner the bytes are exactly `encode`'s.
            let (mut plain, mut none) = (Vec::new(), Vec::new());
            add.encode(v, 1, &mut plain).unwrap();
            add.encode_owned(v, 1, CookieOwner::NONE, &mut none)
                .unwrap();
            assert_eq!(plain, none);
        }
        let mut b = Vec::new();
        del.encode_owned(Version::V1_3, 1, APP, &mut b).unwrap();
        assert_eq!(
            cookies(&b),
            (0xbeef_0000_0000_0077, Some(0xffff_0000_0000_00ff))
        );
    }

    #[test]
    fn a_raw_flow_mod_carries_the_owner_and_other_messages_are_untouched() {
        for command in [
            FlowModCommand::Add,
            FlowModCommand::ModifyStrict,
            FlowModCommand::Delete,
        ] {
            let fm = FlowMod {
                command,
                ..FlowMod::add(Match::default(), &[])
            };
            for v in [Version::V1_0, Version::V1_3] {
                let mut bytes = Vec::new();
                fm.encode(v, 9, &mut bytes).unwrap();
                let (_, raw) = Message::decode(&bytes).unwrap();
                let (mut owned, mut model) = (Vec::new(), Vec::new());
                raw.encode_owned(9, APP, &mut owned).unwrap();
                fm.encode_owned(v, 9, APP, &mut model).unwrap();
                assert_eq!(owned, model, "{command:?} {v}");
            }
        }
        let barrier = Message::V13(of13::Message::BarrierRequest);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        barrier.encode(3, &mut a).unwrap();
        barrier.encode_owned(3, APP, &mut b).unwrap();
        assert_eq!(a, b);
    }
}
