//! A small private PKI for labs over TLS (`pharos lab up --tls`) and for tests: a CA,
//! the controller's certificate, the switches' certificate, and the bad ones tests need
//! (a certificate from another CA, an expired one). Keys are ECDSA P-256, made with
//! rcgen on ring (no OpenSSL); everything is PEM, which Open vSwitch (`ovs-vsctl
//! set-ssl`) and rustls both read.
//!
//! Every certificate this module issues carries both the server and the client
//! authentication purposes, so either side of a TLS connection may present it, and the
//! controller's names (by default `localhost`, `127.0.0.1` and `::1`) as subject
//! alternative names: a client that checks the controller's name (rustls does, Open
//! vSwitch does not) accepts it on loopback.
//!
//! [`Pki::create`] writes a whole PKI into a directory:
//!
//! ```text
//! ca.pem                  the CA's certificate: the controller's client_ca, the switches' CA
//! controller.pem          the controller's certificate and key
//! controller-key.pem
//! switch.pem              the switches' certificate and key (one for all: Open vSwitch
//! switch-key.pem          has one per ovs-vswitchd, set with ovs-vsctl set-ssl)
//! ```
//!
//! The CA's private key is not kept: a lab's PKI issues its certificates once, when it
//! is made. Key files are readable by their owner only.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use time::{Duration, OffsetDateTime};

use crate::LabError;

/// The CA's certificate in a PKI directory.
pub const CA_CERT: &str = "ca.pem";
/// The controller's certificate in a PKI directory.
pub const CONTROLLER_CERT: &str = "controller.pem";
/// The controller's private key in a PKI directory.
pub const CONTROLLER_KEY: &str = "controller-key.pem";
/// The switches' certificate in a PKI directory.
pub const SWITCH_CERT: &str = "switch.pem";
/// The switches' private key in a PKI directory.
pub const SWITCH_KEY: &str = "switch-key.pem";

/// The names the controller's certificate has when none are given.
pub const DEFAULT_CONTROLLER_NAMES: &[&str] = &["localhost", "127.0.0.1", "::1"];

fn pki_err(what: &str, e: rcgen::Error) -> LabError {
    LabError::Other(format!("cannot make {what}: {e}"))
}

/// When a certificate is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// From a day ago (clocks differ a little) for ten years.
    Current,
    /// From two years ago to one year ago: expired.
    Expired,
    /// From a day from now, for a year: not yet valid.
    NotYetValid,
}

impl Validity {
    fn range(self) -> (OffsetDateTime, OffsetDateTime) {
        let now = OffsetDateTime::now_utc();
        match self {
            Validity::Current => (now - Duration::days(1), now + Duration::days(3650)),
            Validity::Expired => (now - Duration::days(730), now - Duration::days(365)),
            Validity::NotYetValid => (now + Duration::days(1), now + Duration::days(366)),
        }
    }
}

/// A certificate and its private key, both PEM.
#[derive(Debug, Clone)]
pub struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
}

impl Issued {
    /// Writes the certificate to `cert` and the key to `key` (mode 0600).
    pub fn write(&self, cert: &Path, key: &Path) -> Result<(), LabError> {
        write_file(cert, &self.cert_pem, 0o644)?;
        write_file(key, &self.key_pem, 0o600)
    }
}

/// Writes `text` to `path` (replacing it) with permissions `mode`.
fn write_file(path: &Path, text: &str, mode: u32) -> Result<(), LabError> {
    let io = |e| LabError::io(format!("write {}", path.display()), e);
    let _ = fs::remove_file(path);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)
}

/// A certificate authority, in memory.
pub struct Ca {
    cert: Certificate,
    key: KeyPair,
}

impl std::fmt::Debug for Ca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ca")
            .field("subject", &self.cert.params().distinguished_name)
            .finish_non_exhaustive()
    }
}

impl Ca {
    /// A new self-signed CA named `common_name`, valid from a day ago for ten years.
    pub fn new(common_name: &str) -> Result<Ca, LabError> {
        let key = KeyPair::generate().map_err(|e| pki_err("a CA key", e))?;
        let mut params =
            CertificateParams::new(Vec::<String>::new()).map_err(|e| pki_err("a CA", e))?;
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params
            .distinguished_name
            .push(DnType::OrganizationName, "pharos lab");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        (params.not_before, params.not_after) = Validity::Current.range();
        let cert = params
            .self_signed(&key)
            .map_err(|e| pki_err("a CA certificate", e))?;
        Ok(Ca { cert, key })
    }

    /// The CA's certificate, PEM.
    pub fn cert_pem(&self) -> String {
        self.cert.pem()
    }

    /// A certificate for `common_name` with the subject alternative names `names` (DNS
    /// names or IP addresses), signed by this CA, for both server and client
    /// authentication, with a new key.
    pub fn issue(
        &self,
        common_name: &str,
        names: &[&str],
        validity: Validity,
    ) -> Result<Issued, LabError> {
        let what = format!("a certificate for {common_name}");
        let key = KeyPair::generate().map_err(|e| pki_err(&what, e))?;
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut params = CertificateParams::new(names).map_err(|e| pki_err(&what, e))?;
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params
            .distinguished_name
            .push(DnType::OrganizationName, "pharos lab");
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.use_authority_key_identifier_extension = true;
        (params.not_before, params.not_after) = validity.range();
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .map_err(|e| pki_err(&what, e))?;
        Ok(Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// The files of a PKI directory ([`Pki::create`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pki {
    pub dir: PathBuf,
    /// The CA's certificate: the switches check the controller's against it, and the
    /// controller the switches' (its `client_ca`).
    pub ca_cert: PathBuf,
    pub controller_cert: PathBuf,
    pub controller_key: PathBuf,
    pub switch_cert: PathBuf,
    pub switch_key: PathBuf,
}

impl Pki {
    /// The paths of the PKI in `dir` (whether or not the files exist).
    pub fn in_dir(dir: &Path) -> Pki {
        Pki {
            dir: dir.to_path_buf(),
            ca_cert: dir.join(CA_CERT),
            controller_cert: dir.join(CONTROLLER_CERT),
            controller_key: dir.join(CONTROLLER_KEY),
            switch_cert: dir.join(SWITCH_CERT),
            switch_key: dir.join(SWITCH_KEY),
        }
    }

    /// Makes a new PKI in `dir` (created if missing; files there replaced): a CA, the
    /// controller's certificate for `controller_names` (none: [`DEFAULT_CONTROLLER_NAMES`])
    /// and the switches' certificate.
    pub fn create(dir: &Path, controller_names: &[&str]) -> Result<Pki, LabError> {
        fs::create_dir_all(dir)
            .map_err(|e| LabError::io(format!("create {}", dir.display()), e))?;
        let pki = Pki::in_dir(dir);
        // A name of its own: a client that trusts another lab's CA then finds no issuer
        // for this PKI's certificates (with the same name it would find one, and fail on
        // its signature).
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let ca = Ca::new(&format!(
            "pharos lab CA {:x}",
            nanos ^ (u128::from(std::process::id()) << 64)
        ))?;
        let names = if controller_names.is_empty() {
            DEFAULT_CONTROLLER_NAMES
        } else {
            controller_names
        };
        write_file(&pki.ca_cert, &ca.cert_pem(), 0o644)?;
        ca.issue("pharos controller", names, Validity::Current)?
            .write(&pki.controller_cert, &pki.controller_key)?;
        ca.issue("pharos lab switch", &[], Validity::Current)?
            .write(&pki.switch_cert, &pki.switch_key)?;
        Ok(pki)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pharos-pki-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_pki_directory_has_pem_files_and_private_keys() {
        use std::os::unix::fs::PermissionsExt as _;
        let d = tmp("dir");
        let pki = Pki::create(&d, &[]).unwrap();
        for (p, tag) in [
            (&pki.ca_cert, "CERTIFICATE"),
            (&pki.controller_cert, "CERTIFICATE"),
            (&pki.switch_cert, "CERTIFICATE"),
            (&pki.controller_key, "PRIVATE KEY"),
            (&pki.switch_key, "PRIVATE KEY"),
        ] {
            let text = fs::read_to_string(p).unwrap();
            assert!(
                text.starts_with(&format!("-----BEGIN {tag}-----")),
                "{p:?}: {text}"
            );
        }
        for k in [&pki.controller_key, &pki.switch_key] {
            let mode = fs::metadata(k).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{k:?}");
        }
        // A second PKI in the same place replaces the first.
        let before = fs::read_to_string(&pki.ca_cert).unwrap();
        Pki::create(&d, &[]).unwrap();
        assert_ne!(before, fs::read_to_string(&pki.ca_cert).unwrap());
        fs::remove_dir_all(&d).unwrap();
    }

    /// `openssl verify` (OpenSSL is what Open vSwitch checks certificates with): the
    /// PKI's certificates verify against its CA; another CA's and an expired one do not.
    #[test]
    fn openssl_accepts_the_good_certificates_and_refuses_the_bad_ones() {
        // Open vSwitch's packages bring openssl (ovs-pki uses it): its absence is a
        // broken test machine, not a reason to pass.
        assert!(
            crate::tools::which("openssl").is_some(),
            "openssl is not installed: install Open vSwitch's dependencies (scripts/install-test-deps)"
        );
        let d = tmp("verify");
        let pki = Pki::create(&d, &[]).unwrap();
        let other = Ca::new("another CA").unwrap();
        other
            .issue("stranger", &[], Validity::Current)
            .unwrap()
            .write(&d.join("other.pem"), &d.join("other-key.pem"))
            .unwrap();
        let expired_here = {
            let ca = Ca::new("y").unwrap();
            fs::write(d.join("y.pem"), ca.cert_pem()).unwrap();
            ca.issue("old", &[], Validity::Expired)
                .unwrap()
                .write(&d.join("old-y.pem"), &d.join("old-y-key.pem"))
                .unwrap();
            (d.join("y.pem"), d.join("old-y.pem"))
        };
        let verify = |ca: &Path, cert: &Path| {
            let out = std::process::Command::new("openssl")
                .arg("verify")
                .arg("-CAfile")
                .arg(ca)
                .arg(cert)
                .output()
                .unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned()
                    + &String::from_utf8_lossy(&out.stderr),
            )
        };
        for cert in [&pki.controller_cert, &pki.switch_cert] {
            let (ok, said) = verify(&pki.ca_cert, cert);
            assert!(ok, "{cert:?}: {said}");
        }
        let (ok, said) = verify(&pki.ca_cert, &d.join("other.pem"));
        assert!(!ok && said.contains("unable to get local issuer"), "{said}");
        let (ok, said) = verify(&expired_here.0, &expired_here.1);
        assert!(!ok && said.contains("expired"), "{said}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn bad_names_are_refused() {
        let ca = Ca::new("t").unwrap();
        assert!(ca
            .issue("x", &["b\u{e4}d.example"], Validity::Current)
            .is_err());
    }
}
