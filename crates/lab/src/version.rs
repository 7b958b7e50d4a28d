//! The OpenFlow versions a lab's switches speak.

use std::fmt;

use serde::Serialize;

use crate::LabError;

/// The OpenFlow version the switches speak (each only one, so a controller that knows
/// both is made to use it): all 1.0, all 1.3, or mixed (odd-numbered switches 1.0,
/// even-numbered 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OfVersion {
    V10,
    V13,
    Mixed,
}

impl OfVersion {
    /// "1.0", "1.3" or "mixed".
    pub fn parse(s: &str) -> Result<OfVersion, LabError> {
        match s.trim() {
            "1.0" | "10" | "1" | "OpenFlow10" => Ok(OfVersion::V10),
            "1.3" | "13" | "OpenFlow13" => Ok(OfVersion::V13),
            "mixed" => Ok(OfVersion::Mixed),
            other => Err(LabError::Invalid(format!(
                "bad OpenFlow version {other:?}: 1.0, 1.3 or mixed"
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OfVersion::V10 => "1.0",
            OfVersion::V13 => "1.3",
            OfVersion::Mixed => "mixed",
        }
    }

    /// The version switch sN speaks: for a mixed lab, 1.0 when N is odd, 1.3 when even.
    pub fn for_switch(self, num: u32) -> OfVersion {
        match self {
            OfVersion::Mixed if num % 2 == 1 => OfVersion::V10,
            OfVersion::Mixed => OfVersion::V13,
            v => v,
        }
    }

    /// The name Open vSwitch uses (`protocols=`, `ovs-ofctl -O`); for a mixed lab the
    /// list `ovs-ofctl -O` takes to talk to either kind of switch.
    pub fn ovs_protocol(self) -> &'static str {
        match self {
            OfVersion::V10 => "OpenFlow10",
            OfVersion::V13 => "OpenFlow13",
            OfVersion::Mixed => "OpenFlow10,OpenFlow13",
        }
    }
}

impl fmt::Display for OfVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(OfVersion::parse("1.0").unwrap(), OfVersion::V10);
        assert_eq!(
            OfVersion::parse("1.3").unwrap().ovs_protocol(),
            "OpenFlow13"
        );
        assert!(OfVersion::parse("1.4")
            .unwrap_err()
            .to_string()
            .contains("1.0, 1.3 or mixed"));
        let mixed = OfVersion::parse("mixed").unwrap();
        assert_eq!(
            (1..=4).map(|n| mixed.for_switch(n)).collect::<Vec<_>>(),
            [
                OfVersion::V10,
                OfVersion::V13,
                OfVersion::V10,
                OfVersion::V13
            ]
        );
        assert_eq!(OfVersion::V10.for_switch(2), OfVersion::V10);
        assert_eq!(mixed.ovs_protocol(), "OpenFlow10,OpenFlow13");
    }
}
