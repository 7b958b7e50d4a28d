//! One `listen` entry of the file: an address (clear text), or a table with `addr` and
//! a `tls` table (`{ addr = "0.0.0.0:6654", tls = { cert, key, client_ca } }`).

use std::fmt;
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use crate::tls::TlsSettings;

/// One `listen` entry: an address, and TLS settings when the port speaks TLS.
///
/// In the file an entry is either an address string (clear text) or a table:
/// `{ addr = "0.0.0.0:6654", tls = { cert = "...", key = "...", client_ca = "..." } }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenEntry {
    /// Where to listen.
    pub addr: SocketAddr,
    /// `Some`: the port speaks TLS only (OpenFlow inside it).
    pub tls: Option<TlsSettings>,
}

impl ListenEntry {
    /// A clear-text entry.
    pub fn plain(addr: SocketAddr) -> ListenEntry {
        ListenEntry { addr, tls: None }
    }
}

impl From<SocketAddr> for ListenEntry {
    fn from(addr: SocketAddr) -> ListenEntry {
        ListenEntry::plain(addr)
    }
}

/// A clear-text entry from an address (`"0.0.0.0:6653"`).
impl std::str::FromStr for ListenEntry {
    type Err = std::net::AddrParseError;
    fn from_str(s: &str) -> Result<ListenEntry, Self::Err> {
        s.parse().map(ListenEntry::plain)
    }
}

impl fmt::Display for ListenEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tls {
            None => write!(f, "{}", self.addr),
            Some(_) => write!(f, "{} (TLS)", self.addr),
        }
    }
}

impl Serialize for ListenEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match &self.tls {
            None => s.serialize_str(&self.addr.to_string()),
            Some(tls) => {
                let mut t = s.serialize_struct("ListenEntry", 2)?;
                t.serialize_field("addr", &self.addr.to_string())?;
                t.serialize_field("tls", tls)?;
                t.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ListenEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ListenEntry, D::Error> {
        use serde::de::{self, MapAccess, Visitor};

        /// The table form, with serde's own errors for unknown or missing keys.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            addr: String,
            tls: Option<TlsSettings>,
        }

        fn addr<E: de::Error>(text: &str) -> Result<SocketAddr, E> {
            text.trim().parse().map_err(|_| {
                E::custom(format!(
                    "{text:?} is not an address: expected e.g. \"0.0.0.0:6653\" or \"[::]:6653\""
                ))
            })
        }

        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = ListenEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "an address (\"0.0.0.0:6653\") or a table { addr = \"0.0.0.0:6654\", tls = { cert, key, client_ca } }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ListenEntry, E> {
                Ok(ListenEntry::plain(addr(v)?))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ListenEntry, A::Error> {
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ListenEntry {
                    addr: addr(&t.addr)?,
                    tls: t.tls,
                })
            }
        }
        d.deserialize_any(EntryVisitor)
    }
}
