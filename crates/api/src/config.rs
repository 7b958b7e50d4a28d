//! `[api]` in `pharos.toml`: where the REST API listens (or `"off"`), the token file,
//! whether reads need the token, how long a request to a switch waits, and HTTPS.
//!
//! ```toml
//! [api]
//! listen = "127.0.0.1:8080"
//! # token_file = "/etc/pharos/api-token"
//! read_auth = false
//! switch_timeout = "5s"
//! # tls = { cert = "/etc/pharos/api-cert.pem", key = "/etc/pharos/api-key.pem" }
//! ```
//!
//! The binary's schema puts [`ApiConfig`] under the `api` key; the errors of
//! [`ApiConfig::validate`] name their keys from the top of the file
//! (`api.token_file`). [`DEFAULT_LISTEN`] and [`DEFAULT_URL`] are where the API is
//! when nothing says otherwise, for the clients too (`pharos ctl`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use controller::settings::{ConfigError, ZERO_DURATION};
use controller::units::duration;
use serde::{Deserialize, Serialize};

/// The API's default address: loopback only, port 8080 (as ONOS's 8181 and Floodlight's
/// 8080 are the ports their users know, 8080 is the one most tools try first).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// The API's URL at [`DEFAULT_LISTEN`], for clients given no other (plain HTTP).
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// The REST API's settings (`[api]` in the file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApiConfig {
    /// Where the API listens; `None` (`"off"` in the file, `--api off`) runs none.
    /// Loopback by default: reads are open there, so anything wider is a choice.
    #[serde(with = "listen")]
    pub listen: Option<SocketAddr>,
    /// A file holding the token writes need (and reads, off loopback). When neither it
    /// nor `PHAROS_API_TOKEN` is set, a random token is made at start-up and written to
    /// a file only the user can read.
    pub token_file: Option<PathBuf>,
    /// Reads need the token too, even on a loopback address.
    pub read_auth: bool,
    /// How long a request the API makes to a switch (flow table, statistics, a flow
    /// added) waits for the answer before it is a 504.
    #[serde(with = "duration")]
    pub switch_timeout: Duration,
    /// HTTPS (`tls = { cert = "...", key = "..." }`): the API serves TLS 1.2 and 1.3 with
    /// this certificate chain and private key (PEM) instead of plain HTTP.
    pub tls: Option<ApiTlsConfig>,
}

/// `[api] tls`: the API's certificate chain and private key, PEM files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiTlsConfig {
    /// The certificate, then any intermediate certificates.
    pub cert: PathBuf,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl Default for ApiConfig {
    fn default() -> ApiConfig {
        ApiConfig {
            listen: Some(DEFAULT_LISTEN.parse().expect("a valid literal")),
            token_file: None,
            read_auth: false,
            switch_timeout: Duration::from_secs(5),
            tls: None,
        }
    }
}

impl ApiConfig {
    /// Checks the rules serde cannot express: a request to a switch waits some time, and
    /// a token file given is named.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.switch_timeout.is_zero() {
            return Err(ConfigError::new("api.switch_timeout", ZERO_DURATION));
        }
        if self
            .token_file
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(ConfigError::new(
                "api.token_file",
                "is empty: name a file holding the token, or leave the key out for a generated one",
            ));
        }
        Ok(())
    }
}

/// `[api] listen` (and `pharos run --api`): an address, or `"off"`.
pub mod listen {
    use std::net::SocketAddr;

    use serde::{de, Deserialize, Deserializer, Serializer};

    /// Parses `"127.0.0.1:8080"`, `"[::1]:8080"` or `"off"` (`None`).
    pub fn parse(text: &str) -> Result<Option<SocketAddr>, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        t.parse().map(Some).map_err(|_| {
            format!("{text:?} is not an address: expected e.g. \"127.0.0.1:8080\", or \"off\" for no API")
        })
    }

    /// Writes the address, or `"off"`.
    pub fn serialize<S: Serializer>(a: &Option<SocketAddr>, s: S) -> Result<S::Ok, S::Error> {
        match a {
            Some(a) => s.serialize_str(&a.to_string()),
            None => s.serialize_str("off"),
        }
    }

    /// Reads what [`parse`] takes.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SocketAddr>, D::Error> {
        parse(&String::deserialize(d)?).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use controller::settings::from_toml_str;

    use super::*;

    /// The section where the file puts it, read and checked as the binary does.
    fn parse(text: &str) -> Result<ApiConfig, ConfigError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default)]
            api: ApiConfig,
        }
        let f: File = from_toml_str(text)?;
        f.api.validate().map_err(|e| e.in_text(text))?;
        Ok(f.api)
    }

    fn err(text: &str) -> ConfigError {
        parse(text).expect_err("should be refused")
    }

    #[test]
    fn the_default_url_is_the_default_address() {
        assert_eq!(DEFAULT_URL, format!("http://{DEFAULT_LISTEN}"));
        assert_eq!(
            ApiConfig::default().listen,
            Some(DEFAULT_LISTEN.parse().unwrap())
        );
    }

    #[test]
    fn the_api_section_sets_listen_token_file_and_read_auth() {
        let c = parse("").unwrap();
        assert_eq!(c, ApiConfig::default());
        assert_eq!(c.listen, Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!((c.token_file.as_ref(), c.read_auth), (None, false));
        let c = parse(
            "[api]\nlisten = \"0.0.0.0:9090\"\ntoken_file = \"/etc/pharos/token\"\nread_auth = true\n",
        )
        .unwrap();
        assert_eq!(c.listen, Some("0.0.0.0:9090".parse().unwrap()));
        assert_eq!(
            c.token_file.as_deref(),
            Some(Path::new("/etc/pharos/token"))
        );
        assert!(c.read_auth);
        let c = parse("[api]\nlisten = \"off\"\n").unwrap();
        assert_eq!(c.listen, None);
        // Written back, `off` included, it reads the same.
        let text = toml::to_string(&c).unwrap();
        assert!(text.contains("listen = \"off\""), "{text}");
        assert_eq!(toml::from_str::<ApiConfig>(&text).unwrap(), c);
    }

    #[test]
    fn the_api_waits_five_seconds_for_a_switch_unless_told() {
        let c = parse("").unwrap();
        assert_eq!(c.switch_timeout, Duration::from_secs(5));
        let c = parse("[api]\nswitch_timeout = \"250ms\"\n").unwrap();
        assert_eq!(c.switch_timeout, Duration::from_millis(250));
        let e = err("[api]\nswitch_timeout = \"0s\"\n");
        assert_eq!((e.key.as_str(), e.line), ("api.switch_timeout", Some(2)));
        assert!(e.reason.contains("longer than zero"), "{e}");
        let e = err("[api]\nswitch_timeout = 5\n");
        assert!(e.key.contains("switch_timeout"), "{e}");
    }

    #[test]
    fn a_bad_api_section_is_refused_with_key_and_line() {
        let e = err("# the API\n[api]\nlisten = \"localhost:80\"\n");
        assert_eq!((e.key.as_str(), e.line), ("api.listen", Some(3)));
        assert!(e.reason.contains("\"off\""), "{e}");
        let e = err("[api]\nlisen = \"127.0.0.1:1\"\n");
        assert_eq!(e.key, "api.lisen");
        assert!(e.reason.contains("did you mean `listen`?"), "{e}");
        let e = err("[api]\ntoken_file = \"\"\n");
        assert_eq!((e.key.as_str(), e.line), ("api.token_file", Some(2)));
        assert_eq!(listen::parse(" OFF "), Ok(None));
        assert!(listen::parse("8080")
            .unwrap_err()
            .contains("not an address"));
    }

    #[test]
    fn the_api_section_takes_a_tls_table_of_cert_and_key() {
        let c = parse("").unwrap();
        assert_eq!(c.tls, None);
        let c =
            parse("[api]\ntls = { cert = \"/etc/pharos/c.pem\", key = \"/etc/pharos/k.pem\" }\n")
                .unwrap();
        assert_eq!(
            c.tls,
            Some(ApiTlsConfig {
                cert: "/etc/pharos/c.pem".into(),
                key: "/etc/pharos/k.pem".into(),
            })
        );
        for bad in [
            "[api]\ntls = { cert = \"c.pem\" }\n",
            "[api]\ntls = { cert = \"c.pem\", key = \"k.pem\", client_ca = \"ca.pem\" }\n",
            "[api]\ntls = \"c.pem\"\n",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.key.starts_with("api.tls") || e.key == "api", "{bad}: {e}");
        }
    }
}
