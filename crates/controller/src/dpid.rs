//! Datapath ids as people write them: [`parse`] takes the colon form
//! `00:00:00:00:00:00:00:01` (how the API prints them, as Floodlight and ONOS users
//! know them), 16 plain hex digits `0000000000000001` (how the log prints them),
//! `0x1`, ONOS's `of:0000000000000001`, and decimal `1`; [`format()`] prints the colon
//! form. The REST API, `pharos ctl` and the configuration file (static flows) share it.
//!
//! A short string of digits only is ambiguous (`10`: ten, or sixteen?). It is read as
//! decimal, as `ovs-ofctl` and Ryu read a bare number; exactly 16 digits is the log's
//! hex form, and any string with a hex letter is hex.
//!
//! [`Dpid`] is the one datapath-id type: `Display` prints the log's 16 hex digits (no
//! allocation), [`Dpid::colon`] the API's form, and `str::parse` reads every form above.
//! `controller::info::Dpid` and `controller::app::Dpid` are this type.

/// A datapath id. Formatted the way every log line shows it, 16 hex digits with no
/// allocation (`tracing::info!(dpid = %Dpid(id), ...)`); [`Dpid::colon`] gives the
/// API's colon form; parsed from any form [`parse`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dpid(pub u64);

impl Dpid {
    /// The colon form, `00:00:00:00:00:00:00:01` ([`format()`]).
    pub fn colon(self) -> String {
        format(self.0)
    }
}

impl std::fmt::Display for Dpid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl std::str::FromStr for Dpid {
    type Err = String;

    /// Any form of the module doc ([`parse`]); the error says what is wrong.
    fn from_str(s: &str) -> Result<Dpid, String> {
        parse(s).map(Dpid)
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

/// The colon form: eight two-digit hex bytes, `00:00:00:00:00:00:00:01`.
pub fn format(dpid: u64) -> String {
    let b = dpid.to_be_bytes();
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
    )
}

/// Reads a dpid in any of the forms of the module doc; the error says what is wrong.
pub fn parse(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let hex = |digits: &str| {
        if digits.is_empty() || digits.len() > 16 {
            return Err(format!(
                "{text:?} is not a dpid: hex dpids have 1 to 16 digits"
            ));
        }
        u64::from_str_radix(digits, 16)
            .map_err(|_| format!("{text:?} is not a dpid: {digits:?} is not hexadecimal"))
    };
    if t.is_empty() {
        return Err("an empty dpid: use e.g. 00:00:00:00:00:00:00:01, 1 or 0x1".into());
    }
    if t.contains(':') && !t.starts_with("of:") {
        let groups: Vec<&str> = t.split(':').collect();
        if groups.len() != 8 {
            return Err(format!(
                "{text:?} is not a dpid: the colon form has 8 bytes (00:00:00:00:00:00:00:01), this has {}",
                groups.len()
            ));
        }
        let mut v = 0u64;
        for g in groups {
            if g.is_empty() || g.len() > 2 || !g.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "{text:?} is not a dpid: {g:?} is not a byte in hex (1 or 2 digits)"
                ));
            }
            v = v << 8 | u64::from_str_radix(g, 16).expect("checked hex");
        }
        return Ok(v);
    }
    if let Some(rest) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return hex(rest);
    }
    if let Some(rest) = t.strip_prefix("of:") {
        return hex(rest);
    }
    if t.len() != 16 && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| {
            format!("{text:?} is not a dpid: a decimal dpid is at most 18446744073709551615")
        });
    }
    hex(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_reads_the_same_dpid() {
        for s in [
            "00:00:00:00:00:00:00:01",
            "0:0:0:0:0:0:0:1",
            "0000000000000001",
            "0x1",
            "of:0000000000000001",
            "1",
        ] {
            assert_eq!(parse(s), Ok(1), "{s}");
        }
        assert_eq!(parse("10"), Ok(10));
        assert_eq!(parse("0000000000000010"), Ok(16));
        assert_eq!(parse("ab"), Ok(0xab));
        assert_eq!(parse("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse(&format(0x0123_4567_89ab_cdef)),
            Ok(0x0123_4567_89ab_cdef)
        );
        assert_eq!(format(1), "00:00:00:00:00:00:00:01");
    }

    #[test]
    fn one_type_prints_and_reads_every_form() {
        let d: Dpid = "of:00000000000000ab".parse().unwrap();
        assert_eq!(d, Dpid(0xab));
        assert_eq!(d.to_string(), "00000000000000ab");
        assert_eq!(d.colon(), "00:00:00:00:00:00:00:ab");
        assert_eq!(d.colon().parse::<Dpid>(), Ok(d));
        assert!("switch1"
            .parse::<Dpid>()
            .unwrap_err()
            .contains("not hexadecimal"));
        // The two names apps used are the same type.
        let a: crate::app::Dpid = crate::info::Dpid(7);
        assert_eq!(u64::from(a), 7);
    }

    #[test]
    fn malformed_dpids_say_why() {
        let e = parse("00:00:01").unwrap_err();
        assert!(e.contains("8 bytes"), "{e}");
        let e = parse("00:00:00:00:00:00:00:zz").unwrap_err();
        assert!(e.contains("\"zz\""), "{e}");
        let e = parse("switch1").unwrap_err();
        assert!(e.contains("not hexadecimal"), "{e}");
        let e = parse("0x11112222333344445").unwrap_err();
        assert!(e.contains("1 to 16"), "{e}");
        assert!(parse("").is_err());
        assert!(parse("99999999999999999999").is_err());
    }
}
