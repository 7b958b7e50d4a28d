//! Datapath ids: one type, [`Dpid`], with one printed form and one parser, for every
//! part of Pharos that shows or reads a dpid (log lines, the REST API and its web UI,
//! `pharos ctl`, `pharos switch`, the lab, the benches, the configuration file).
//!
//! A datapath id is the switch's 64-bit `datapath_id` of FEATURES_REPLY ("Datapath
//! unique ID. The lower 48-bits are for a MAC address, while the upper 16-bits are
//! implementer-defined", OpenFlow 1.3.5 §7.3.1; 1.0.0 §5.3.1 says the same).
//!
//! ## The printed form
//!
//! `00:00:00:00:00:00:00:01`: the eight bytes in hex, two digits each, most significant
//! first, joined by colons (`Display`). It is the form Floodlight and ONOS users know,
//! and the one the REST API, the UI and `pharos ctl` printed from the start; it is now
//! the only one, so a dpid copied from a log line can be pasted into `pharos ctl`, a URL
//! or a `grep` of the REST API's answers and found. (Log lines printed 16 bare hex
//! digits before.) Serde writes the same string. The one exception is `/metrics`,
//! whose `dp_id` label is Faucet's `0x` and 16 hex digits, so Faucet's dashboards read
//! Pharos's metrics.
//!
//! ## What the parser reads (`FromStr`)
//!
//! ```text
//! 00:00:00:00:00:00:00:01   the printed form: exactly 8 groups of 2 hex digits
//! 0x1                       0x and 1 to 16 hex digits: a hex number, said so
//! of:0000000000000001       ONOS's device id: of: and 16 hex digits
//! 0000000000000001          exactly 16 hex digits: what `ovs-ofctl show` prints and
//!                           Open vSwitch's other-config:datapath-id takes
//! 1                         any other number of decimal digits: decimal, as ovs-ofctl
//!                           and Ryu read a bare number
//! ```
//!
//! Surrounding white space is ignored, hex digits may be upper or lower case. The rules
//! leave no string two readings:
//!
//! - **A colon means the printed form, and only it.** `1:2` is refused: tools disagree
//!   on it (`pharos switch` once read it as `0x12`, others as the bytes `0x0102`), and a
//!   dpid that reads differently in two commands finds the wrong switch. So is
//!   `0:0:0:0:0:0:0:1`, with the printed form suggested.
//! - **A bare number is decimal** unless it is exactly 16 digits long, which is Open
//!   vSwitch's hex form (so `0000000000000010` is 16, and `10` is ten). A decimal number
//!   of 16 digits must be written another way (`0x...`, or with a leading zero).
//! - **Hex is never guessed**: `1a` or `ff`, hex digits that are neither 16 long nor
//!   decimal, are refused with `0x1a` suggested. Reading them as hex would make `19` and
//!   `1a` two numbers in two bases.
//!
//! Every refusal ([`DpidError`]) says what was given and how to write it right.

use std::fmt;
use std::str::FromStr;

/// A datapath id.
///
/// `Display` prints the colon form of the module doc (`00:00:00:00:00:00:00:01`, no
/// allocation, width and alignment honoured); `str::parse` reads every form there. The
/// field is the id itself: `Dpid(1)` is switch 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dpid(pub u64);

/// The length of the printed form: 8 groups of 2 digits and 7 colons.
const PRINTED_LEN: usize = 23;

impl Dpid {
    /// The printed form as a `String`; the same as `to_string()` (kept for the callers
    /// from when `Display` printed 16 bare hex digits).
    pub fn colon(self) -> String {
        self.to_string()
    }

    /// The printed form in a stack buffer.
    fn printed(self) -> [u8; PRINTED_LEN] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [b':'; PRINTED_LEN];
        for (i, byte) in self.0.to_be_bytes().into_iter().enumerate() {
            out[3 * i] = HEX[usize::from(byte >> 4)];
            out[3 * i + 1] = HEX[usize::from(byte & 0xf)];
        }
        out
    }
}

impl fmt::Display for Dpid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let printed = self.printed();
        f.pad(std::str::from_utf8(&printed).expect("hex digits and colons are ASCII"))
    }
}

impl From<u64> for Dpid {
    fn from(v: u64) -> Dpid {
        Dpid(v)
    }
}

impl From<Dpid> for u64 {
    fn from(d: Dpid) -> u64 {
        d.0
    }
}

/// A string that is not a dpid in any form of the [module doc](self): what was given,
/// and what is wrong with it, with the right spelling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not a dpid: {why}")]
pub struct DpidError {
    /// The text as given (before trimming), so the message quotes what the user wrote.
    given: String,
    /// What is wrong, and how to write the dpid instead.
    why: String,
}

/// The forms, for messages that cannot guess which one was meant.
const FORMS: &str = "write it as 00:00:00:00:00:00:00:01, 0x1, of:0000000000000001, \
                     0000000000000001 (16 hex digits) or decimal 1";

impl FromStr for Dpid {
    type Err = DpidError;

    /// Reads any form of the [module doc](self).
    fn from_str(text: &str) -> Result<Dpid, DpidError> {
        parse(text.trim()).map(Dpid).map_err(|why| DpidError {
            given: text.to_string(),
            why,
        })
    }
}

/// The rules of the module doc, on trimmed text; the error is the reason alone.
fn parse(t: &str) -> Result<u64, String> {
    let is_hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    let hex = |s: &str| u64::from_str_radix(s, 16).expect("checked: 1 to 16 hex digits");
    if t.is_empty() {
        return Err(format!("it is empty; {FORMS}"));
    }
    if let Some(digits) = t.strip_prefix("of:") {
        return if digits.len() == 16 && is_hex(digits) {
            Ok(hex(digits))
        } else {
            Err("ONOS's form is of: and exactly 16 hex digits, as of:0000000000000001".into())
        };
    }
    if t.contains(':') {
        return colon_form(t);
    }
    if let Some(digits) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return if !is_hex(digits) {
            Err(format!(
                "0x takes 1 to 16 hex digits (0-9, a-f), as 0x1; {digits:?} is not hex"
            ))
        } else if digits.len() > 16 {
            Err(format!(
                "0x takes 1 to 16 hex digits, as 0x1; this has {}",
                digits.len()
            ))
        } else {
            Ok(hex(digits))
        };
    }
    if t.len() == 16 && is_hex(t) {
        return Ok(hex(t));
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse()
            .map_err(|_| format!("a decimal dpid is at most {} (in hex: 0x...)", u64::MAX));
    }
    if is_hex(t) {
        return Err(if t.len() < 16 {
            format!("a bare number is decimal; for hex, write 0x{t} (or 16 digits, {t:0>16})")
        } else {
            format!(
                "16 hex digits at most ({} given), as 0000000000000001",
                t.len()
            )
        });
    }
    Err(FORMS.into())
}

/// The colon form: exactly 8 groups of 2 hex digits.
fn colon_form(t: &str) -> Result<u64, String> {
    let groups: Vec<&str> = t.split(':').collect();
    let pair = |g: &&str| g.len() == 2 && g.bytes().all(|b| b.is_ascii_hexdigit());
    if groups.len() == 8 && groups.iter().all(pair) {
        return Ok(groups.iter().fold(0, |v, g| {
            v << 8 | u64::from(u8::from_str_radix(g, 16).expect("checked: 2 hex digits"))
        }));
    }
    let rule = "the colon form is exactly 8 groups of 2 hex digits, as 00:00:00:00:00:00:00:01";
    let short = |g: &&str| (1..=2).contains(&g.len()) && g.bytes().all(|b| b.is_ascii_hexdigit());
    if groups.len() == 8 && groups.iter().all(short) {
        // Only the leading zeros are missing: one reading, so say it.
        let fixed: Vec<String> = groups.iter().map(|g| format!("{g:0>2}")).collect();
        return Err(format!("{rule}: {}", fixed.join(":")));
    }
    if groups.len() != 8 {
        return Err(format!("{rule}; this has {} groups", groups.len()));
    }
    let i = groups.iter().position(|g| !pair(g)).unwrap_or_default();
    Err(format!("{rule}; group {} is {:?}", i + 1, groups[i]))
}

impl serde::Serialize for Dpid {
    /// The printed form, as a string (JSON numbers lose 64-bit precision in JavaScript).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Dpid {
    /// A string in any form the parser reads, or a non-negative integer (`dpid = 1` in a
    /// TOML file).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Dpid, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Dpid;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a dpid: \"00:00:00:00:00:00:00:01\", \"0x1\" or 1")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Dpid, E> {
                v.parse().map_err(E::custom)
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Dpid, E> {
                Ok(Dpid(v))
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Dpid, E> {
                u64::try_from(v)
                    .map(Dpid)
                    .map_err(|_| E::custom(format!("{v} is not a dpid: it is negative")))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(s: &str) -> Result<u64, String> {
        s.parse::<Dpid>().map(u64::from).map_err(|e| e.to_string())
    }

    /// The error for `s`, which must be refused.
    fn refused(s: &str) -> String {
        let e = parse(s).expect_err(s);
        assert!(e.starts_with(&format!("{s:?} is not a dpid: ")), "{e}");
        e
    }

    #[test]
    fn prints_the_colon_form_only() {
        assert_eq!(Dpid(1).to_string(), "00:00:00:00:00:00:00:01");
        assert_eq!(
            Dpid(0x0123_4567_89ab_cdef).to_string(),
            "01:23:45:67:89:ab:cd:ef"
        );
        assert_eq!(Dpid(u64::MAX).to_string(), "ff:ff:ff:ff:ff:ff:ff:ff");
        assert_eq!(Dpid(0).to_string(), "00:00:00:00:00:00:00:00");
        assert_eq!(Dpid(0xab).colon(), "00:00:00:00:00:00:00:ab");
        // A table column pads it.
        assert_eq!(format!("[{:>25}]", Dpid(1)), "[  00:00:00:00:00:00:00:01]");
        assert_eq!(format!("[{:<24}]", Dpid(1)), "[00:00:00:00:00:00:00:01 ]");
    }

    #[test]
    fn reads_every_form() {
        for s in [
            "00:00:00:00:00:00:00:01",
            "0x1",
            "0X1",
            "0x0000000000000001",
            "of:0000000000000001",
            "0000000000000001",
            "1",
            "01",
            " 1\n",
        ] {
            assert_eq!(parse(s), Ok(1), "{s:?}");
        }
        assert_eq!(parse("00:00:00:00:00:00:00:AB"), Ok(0xab));
        assert_eq!(parse("of:00000000000000aB"), Ok(0xab));
        assert_eq!(parse("ffffffffffffffff"), Ok(u64::MAX));
        assert_eq!(parse("0xffffffffffffffff"), Ok(u64::MAX));
        // 16 digits are Open vSwitch's hex; any other count of digits is decimal.
        assert_eq!(parse("0000000000000010"), Ok(16));
        assert_eq!(parse("10"), Ok(10));
        assert_eq!(parse("000000000000000a"), Ok(10));
        assert_eq!(parse("00000000000000010"), Ok(10), "17 digits: decimal");
        assert_eq!(parse("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse("0"), Ok(0));
    }

    #[test]
    fn a_short_colon_form_is_refused_with_the_right_form() {
        // `pharos switch` read "1:2" as 0x12, other tools read 0x0102: no reading is safe.
        let e = refused("1:2");
        assert!(
            e.contains("exactly 8 groups of 2 hex digits, as 00:00:00:00:00:00:00:01")
                && e.contains("this has 2 groups"),
            "{e}"
        );
        let e = refused("0:0:0:0:0:0:0:1");
        assert!(e.ends_with(": 00:00:00:00:00:00:00:01"), "{e}");
        let e = refused("00:00:00:00:00:00:00:00:01");
        assert!(e.contains("this has 9 groups"), "{e}");
        let e = refused("00:00:00:00:00:00:00:zz");
        assert!(e.contains("group 8 is \"zz\""), "{e}");
        let e = refused("00:00:00:00:00:00:00:001");
        assert!(e.contains("group 8 is \"001\""), "{e}");
        let e = refused("00:00:00:00:00:00:00:");
        assert!(e.contains("group 8 is \"\""), "{e}");
        refused(":");
        // A MAC address is 6 groups: not a dpid.
        let e = refused("02:00:00:00:00:01");
        assert!(e.contains("this has 6 groups"), "{e}");
    }

    #[test]
    fn hex_is_never_guessed() {
        let e = refused("1a");
        assert!(
            e.contains(
                "a bare number is decimal; for hex, write 0x1a (or 16 digits, 000000000000001a)"
            ),
            "{e}"
        );
        let e = refused("ff");
        assert!(e.contains("write 0xff"), "{e}");
        let e = refused("00000000000000001a");
        assert!(e.contains("16 hex digits at most (18 given)"), "{e}");
    }

    #[test]
    fn other_refusals_say_what_is_wrong_and_what_is_right() {
        let e = refused("");
        assert!(
            e.contains("it is empty; write it as 00:00:00:00:00:00:00:01"),
            "{e}"
        );
        refused("   ");
        let e = refused("switch1");
        assert!(
            e.contains("write it as 00:00:00:00:00:00:00:01, 0x1"),
            "{e}"
        );
        refused("-1");
        refused("+1");
        refused("1.0");
        let e = refused("0x");
        assert!(e.contains("0x takes 1 to 16 hex digits"), "{e}");
        let e = refused("0xzz");
        assert!(e.contains("\"zz\" is not hex"), "{e}");
        let e = refused("0x11112222333344445");
        assert!(e.contains("this has 17"), "{e}");
        let e = refused("of:1");
        assert!(e.contains("of: and exactly 16 hex digits"), "{e}");
        refused("of:00000000000000zz");
        refused("of:00:00:00:00:00:00:00:01");
        let e = refused("99999999999999999999");
        assert!(e.contains("at most 18446744073709551615"), "{e}");
        // The message quotes the text as given, spaces and all.
        assert!(refused(" x ").starts_with("\" x \" is not a dpid"));
    }

    #[test]
    fn serde_writes_the_printed_form_and_reads_any() {
        let v = serde_json::to_value(Dpid(0x1f)).unwrap();
        assert_eq!(v, "00:00:00:00:00:00:00:1f");
        for json in [r#""00:00:00:00:00:00:00:1f""#, r#""0x1f""#, "31", r#""31""#] {
            assert_eq!(
                serde_json::from_str::<Dpid>(json).unwrap(),
                Dpid(0x1f),
                "{json}"
            );
        }
        let e = serde_json::from_str::<Dpid>(r#""1:2""#).unwrap_err();
        assert!(e.to_string().contains("8 groups"), "{e}");
        assert!(serde_json::from_str::<Dpid>("-1").is_err());
        assert!(serde_json::from_str::<Dpid>("1.5").is_err());
    }

    proptest! {
        #[test]
        fn every_dpid_reads_back_from_what_it_prints(v in any::<u64>()) {
            let d = Dpid(v);
            prop_assert_eq!(d.to_string().parse::<Dpid>(), Ok(d));
            prop_assert_eq!(d.to_string().len(), PRINTED_LEN);
            prop_assert_eq!(format!("0x{v:x}").parse::<Dpid>(), Ok(d));
            prop_assert_eq!(format!("of:{v:016x}").parse::<Dpid>(), Ok(d));
            prop_assert_eq!(format!("{v:016X}").parse::<Dpid>(), Ok(d));
            if v.to_string().len() != 16 {
                prop_assert_eq!(v.to_string().parse::<Dpid>(), Ok(d));
            }
            let json = serde_json::to_string(&d).unwrap();
            prop_assert_eq!(serde_json::from_str::<Dpid>(&json).unwrap(), d);
        }
    }
}
