//! Small value types shared by both versions: MAC addresses, fixed-width NUL-padded
//! strings, raw byte strings (hex in JSON) and the `open_enum!` macro for wire enums.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A 48-bit Ethernet address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    pub const ZERO: MacAddr = MacAddr([0; 6]);
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    pub fn octets(&self) -> [u8; 6] {
        self.0
    }

    /// True for group (multicast and broadcast) addresses.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }

    pub fn to_u64(&self) -> u64 {
        let mut b = [0u8; 8];
        b[2..].copy_from_slice(&self.0);
        u64::from_be_bytes(b)
    }
}

impl From<[u8; 6]> for MacAddr {
    fn from(b: [u8; 6]) -> Self {
        MacAddr(b)
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The error for a string that is not `aa:bb:cc:dd:ee:ff`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a MAC address (want six hex octets separated by ':'): {0:?}")]
pub struct BadMac(pub String);

impl FromStr for MacAddr {
    type Err = BadMac;
    fn from_str(s: &str) -> Result<Self, BadMac> {
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for o in out.iter_mut() {
            let p = parts.next().ok_or_else(|| BadMac(s.into()))?;
            if p.is_empty() || p.len() > 2 {
                return Err(BadMac(s.into()));
            }
            *o = u8::from_str_radix(p, 16).map_err(|_| BadMac(s.into()))?;
        }
        if parts.next().is_some() {
            return Err(BadMac(s.into()));
        }
        Ok(MacAddr(out))
    }
}

impl Serialize for MacAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MacAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Lower-case hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Parses hex, ignoring ASCII whitespace and ':' separators.
pub fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b':')
        .collect();
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits in {s:?}"));
    }
    digits
        .chunks(2)
        .map(|p| {
            let hi = (p[0] as char).to_digit(16);
            let lo = (p[1] as char).to_digit(16);
            match (hi, lo) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => Err(format!(
                    "not hex: {:?}",
                    String::from_utf8_lossy(p).into_owned()
                )),
            }
        })
        .collect()
}

/// `#[serde(with = "crate::types::hex")]` for `Vec<u8>` fields: raw bytes as a hex string.
pub mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::to_hex(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        super::from_hex(&s).map_err(serde::de::Error::custom)
    }
}

/// A fixed-width, NUL-padded string field (`char name[16]`, `char mfr_desc[256]`, ...).
///
/// It keeps the raw bytes, so it re-encodes exactly whatever was received. In JSON and
/// text it reads as a string when the content is UTF-8 followed only by NULs; otherwise
/// JSON carries it as `{"hex": "..."}`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct FixedStr<const N: usize>(pub [u8; N]);

impl<const N: usize> FixedStr<N> {
    /// The field holding `s`, NUL-padded. `None` if `s` is longer than `N` bytes.
    pub fn new(s: &str) -> Option<Self> {
        if s.len() > N {
            return None;
        }
        let mut b = [0u8; N];
        b[..s.len()].copy_from_slice(s.as_bytes());
        Some(FixedStr(b))
    }

    /// The text before the first NUL, if it is UTF-8 and everything after it is NUL.
    pub fn as_str(&self) -> Option<&str> {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(N);
        if self.0[end..].iter().any(|&b| b != 0) {
            return None;
        }
        std::str::from_utf8(&self.0[..end]).ok()
    }

    /// The text, lossily, for display.
    pub fn to_string_lossy(&self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(N);
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }
}

impl<const N: usize> Default for FixedStr<N> {
    fn default() -> Self {
        FixedStr([0; N])
    }
}

impl<const N: usize> fmt::Debug for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => write!(f, "{s:?}"),
            None => write!(f, "hex:{}", to_hex(&self.0)),
        }
    }
}

impl<const N: usize> fmt::Display for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl<const N: usize> Serialize for FixedStr<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.as_str() {
            Some(text) => s.serialize_str(text),
            None => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("hex", &to_hex(&self.0))?;
                m.end()
            }
        }
    }
}

impl<'de, const N: usize> Deserialize<'de> for FixedStr<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Text(String),
            Raw { hex: String },
        }
        match Repr::deserialize(d)? {
            Repr::Text(t) => FixedStr::new(&t).ok_or_else(|| {
                serde::de::Error::custom(format!("string longer than {N} bytes: {t:?}"))
            }),
            Repr::Raw { hex } => {
                let v = from_hex(&hex).map_err(serde::de::Error::custom)?;
                let a: [u8; N] = v.try_into().map_err(|v: Vec<u8>| {
                    serde::de::Error::custom(format!("want {N} bytes, got {}", v.len()))
                })?;
                Ok(FixedStr(a))
            }
        }
    }
}

/// Defines an open wire enum: named variants for the values the spec defines, and
/// `Unknown(raw)` for everything else, so unknown values round-trip exactly.
/// JSON and `Display` use the spec's name (`"OFPAT_OUTPUT"` becomes `"OUTPUT"`), and
/// the raw number for unknown values; JSON input accepts either.
#[macro_export]
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $repr:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr => $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this codec has no name for; kept as received.
            Unknown($repr),
        }

        impl $name {
            /// The wire value.
            pub const fn to_raw(self) -> $repr {
                match self {
                    $( $name::$variant => $value, )*
                    $name::Unknown(v) => v,
                }
            }

            /// The variant for a wire value.
            pub const fn from_raw(v: $repr) -> Self {
                $( if v == $value { return $name::$variant; } )*
                $name::Unknown(v)
            }

            /// The spec's name, without its `OFPxx_` prefix.
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $( $name::$variant => Some($text), )*
                    $name::Unknown(_) => None,
                }
            }

            /// The variant with this name, if any.
            pub fn from_name(s: &str) -> Option<Self> {
                match s {
                    $( $text => Some($name::$variant), )*
                    _ => None,
                }
            }
        }

        impl From<$repr> for $name {
            fn from(v: $repr) -> Self {
                $name::from_raw(v)
            }
        }

        impl From<$name> for $repr {
            fn from(v: $name) -> Self {
                v.to_raw()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "{}", self.to_raw()),
                }
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self.name() {
                    Some(n) => s.serialize_str(n),
                    None => ::serde::Serialize::serialize(&self.to_raw(), s),
                }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(::serde::Deserialize)]
                #[serde(untagged)]
                enum Repr {
                    Num($repr),
                    Name(String),
                }
                match <Repr as ::serde::Deserialize>::deserialize(d)? {
                    Repr::Num(v) => Ok($name::from_raw(v)),
                    Repr::Name(n) => $name::from_name(&n).ok_or_else(|| {
                        ::serde::de::Error::custom(format!(
                            "unknown {} name {:?}", stringify!($name), n
                        ))
                    }),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    open_enum! {
        /// A test enum.
        pub enum Colour: u16 {
            Red = 1 => "RED",
            Green = 2 => "GREEN",
        }
    }

    #[test]
    fn open_enum_round_trips_unknown_values() {
        assert_eq!(Colour::from_raw(1), Colour::Red);
        assert_eq!(Colour::from_raw(9), Colour::Unknown(9));
        assert_eq!(Colour::Unknown(9).to_raw(), 9);
        assert_eq!(serde_json::to_string(&Colour::Green).unwrap(), "\"GREEN\"");
        assert_eq!(serde_json::to_string(&Colour::Unknown(9)).unwrap(), "9");
        let c: Colour = serde_json::from_str("\"RED\"").unwrap();
        assert_eq!(c, Colour::Red);
        let c: Colour = serde_json::from_str("2").unwrap();
        assert_eq!(c, Colour::Green);
        assert!(serde_json::from_str::<Colour>("\"BLUE\"").is_err());
    }

    #[test]
    fn mac_parses_and_prints() {
        let m: MacAddr = "f2:0b:a4:7d:f8:ea".parse().unwrap();
        assert_eq!(m.to_string(), "f2:0b:a4:7d:f8:ea");
        assert!("f2:0b:a4:7d:f8".parse::<MacAddr>().is_err());
        assert!("f2:0b:a4:7d:f8:ea:00".parse::<MacAddr>().is_err());
    }

    #[test]
    fn fixed_str_is_lossless() {
        let s = FixedStr::<8>::new("eth0").unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"eth0\"");
        let junk = FixedStr::<4>([b'a', 0, b'b', 0]);
        let j = serde_json::to_string(&junk).unwrap();
        assert_eq!(j, r#"{"hex":"61006200"}"#);
        assert_eq!(serde_json::from_str::<FixedStr<4>>(&j).unwrap(), junk);
        assert!(FixedStr::<2>::new("abc").is_none());
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(to_hex(&[0, 0xab, 0x10]), "00ab10");
        assert_eq!(from_hex("00 ab:10").unwrap(), vec![0, 0xab, 0x10]);
        assert!(from_hex("abc").is_err());
        assert!(from_hex("zz").is_err());
    }
}
