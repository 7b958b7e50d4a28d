//! Datapath ids: the codec's [`openflow::Dpid`], with its one printed form
//! (`00:00:00:00:00:00:00:01`) and its one parser (the forms and the reasons for them
//! are in [`openflow::dpid`]). `controller::info::Dpid` and `controller::app::Dpid` are
//! this type; [`format()`] and [`parse`] are the same rules for code that holds a `u64`.

pub use openflow::Dpid;

/// The printed form of `dpid`: `00:00:00:00:00:00:00:01` (`Dpid(dpid).to_string()`).
pub fn format(dpid: u64) -> String {
    Dpid(dpid).to_string()
}

/// Reads a dpid in any form [`openflow::Dpid`] reads; the error says what was given and
/// how to write it.
pub fn parse(text: &str) -> Result<u64, String> {
    text.parse::<Dpid>()
        .map(u64::from)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codecs_rules_for_a_u64() {
        assert_eq!(format(1), "00:00:00:00:00:00:00:01");
        for s in ["00:00:00:00:00:00:00:01", "0x1", "of:0000000000000001", "1"] {
            assert_eq!(parse(s), Ok(1), "{s}");
        }
        let e = parse("1:2").unwrap_err();
        assert!(e.contains("8 groups of 2 hex digits"), "{e}");
        assert!(parse("ab").unwrap_err().contains("0xab"));
    }

    #[test]
    fn the_names_apps_use_are_the_codecs_type() {
        let a: crate::app::Dpid = crate::info::Dpid(7);
        let d: openflow::Dpid = a;
        assert_eq!(d.to_string(), "00:00:00:00:00:00:00:07");
    }
}
