//! Durations in settings files, as people write them: `"250ms"`, `"5s"`, `"1m"`,
//! `"1h"` ([`duration`], for `#[serde(with = "...::duration")]`), and app parameters in
//! seconds that take a number or such a duration ([`seconds`], [`whole_seconds`]).
//! Every crate's settings use these, so a duration is written one way in the whole of
//! `pharos.toml`.

/// Durations as strings with a unit: `"250ms"`, `"5s"`, `"1m"`, `"1h"`.
pub mod duration {
    use std::time::Duration;

    use serde::{de, Deserialize, Deserializer, Serializer};

    /// The reason given for a value that is not a duration.
    fn expected(value: &str) -> String {
        format!("invalid duration {value}: expected e.g. \"5s\" or \"500ms\" (units: ms, s, m, h)")
    }

    /// Parses `"250ms"`, `"5s"`, `"1m"`, `"1h"` (a whole number, then a unit).
    pub fn parse(text: &str) -> Result<Duration, String> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let n: u64 = number.parse().map_err(|_| expected(&format!("{text:?}")))?;
        let millis_per = match unit.trim() {
            "ms" => 1,
            "s" => 1000,
            "m" | "min" => 60_000,
            "h" => 3_600_000,
            _ => return Err(expected(&format!("{text:?}"))),
        };
        n.checked_mul(millis_per)
            .map(Duration::from_millis)
            .ok_or_else(|| format!("duration {text:?} is too long"))
    }

    /// The shortest exact form: `"250ms"`, `"5s"`, `"2m"`.
    pub fn format(d: Duration) -> String {
        let ms = d.as_millis();
        if ms % 60_000 == 0 && ms > 0 {
            format!("{}m", ms / 60_000)
        } else if ms % 1000 == 0 {
            format!("{}s", ms / 1000)
        } else {
            format!("{ms}ms")
        }
    }

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
            Float(f64),
        }
        match Raw::deserialize(d)? {
            Raw::Text(t) => parse(&t).map_err(de::Error::custom),
            Raw::Int(n) => Err(de::Error::custom(expected(&n.to_string()))),
            Raw::Float(x) => Err(de::Error::custom(expected(&x.to_string()))),
        }
    }
}

/// An app parameter in seconds, written as a number of seconds (`2`, `0.5`) or as a
/// duration the way the core's keys are (`"2s"`, `"500ms"`, `"1m"`): for
/// `#[serde(deserialize_with = "controller::config::seconds::deserialize")]` on an `f64`.
pub mod seconds {
    use serde::{de, Deserialize, Deserializer};

    /// Seconds from a number or a duration string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
            Float(f64),
        }
        match Raw::deserialize(d).map_err(|_: D::Error| {
            de::Error::custom(
                "expected seconds: a number (2, 0.5) or a duration (\"2s\", \"500ms\")",
            )
        })? {
            Raw::Text(t) => super::duration::parse(&t)
                .map(|d| d.as_secs_f64())
                .map_err(de::Error::custom),
            Raw::Int(n) => Ok(n as f64),
            Raw::Float(x) => Ok(x),
        }
    }
}

/// An app parameter in whole seconds that goes on the wire as a 16-bit number (a flow's
/// idle and hard timeouts): a number (`10`) or a duration (`"10s"`, `"1m"`) that is a
/// whole number of seconds up to 65535; for
/// `#[serde(deserialize_with = "controller::config::whole_seconds::deserialize")]`.
pub mod whole_seconds {
    use serde::{de, Deserialize, Deserializer};

    /// Whole seconds from a number or a duration string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
        }
        let expected =
            "expected whole seconds from 0 to 65535: a number (10) or a duration (\"10s\", \"1m\")";
        let secs = match Raw::deserialize(d).map_err(|_: D::Error| de::Error::custom(expected))? {
            Raw::Int(n) => n,
            Raw::Text(t) => {
                let d = super::duration::parse(&t).map_err(de::Error::custom)?;
                if d.subsec_nanos() != 0 {
                    return Err(de::Error::custom(format!(
                        "{t:?} is not a whole number of seconds (OpenFlow timeouts are in seconds)"
                    )));
                }
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
            }
        };
        u16::try_from(secs)
            .map_err(|_| de::Error::custom(format!("{secs} is out of range: {expected}")))
    }
}
