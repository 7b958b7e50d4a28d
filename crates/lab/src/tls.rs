//! A lab over TLS (`up --tls`): where its certificates come from, the files it records,
//! and preparing them: a new private PKI ([`pki`]) with the controller's listen entry for
//! `pharos run --config`, or files of one's own, checked readable.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::words::title;
use crate::{controller_addr, pharos, pki, LabError};

/// Where a lab over TLS gets its certificates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabTls {
    /// A new private PKI in the lab directory, `pki/` ([`pki::Pki::create`]): the
    /// controller is given its certificate and the CA there.
    Generate,
    /// The switches' certificate and key, and the CA the controller's certificate must
    /// be signed by (a PKI of one's own, `ovs-pki`'s for instance).
    Files {
        /// The CA (`--tls-ca`).
        ca_cert: PathBuf,
        /// The switches' certificate (`--tls-cert`).
        cert: PathBuf,
        /// The switches' private key (`--tls-key`).
        key: PathBuf,
    },
}

/// The files a lab over TLS uses (recorded in its `state.json`; `show` lists them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TlsFiles {
    /// The CA the switches check the controller's certificate against.
    pub ca_cert: PathBuf,
    /// The switches' certificate (`ovs-vsctl set-ssl`, one for all).
    pub switch_cert: PathBuf,
    /// The switches' private key.
    pub switch_key: PathBuf,
    /// The PKI the lab made (`up --tls` without files of one's own): the controller's
    /// certificate and key are there, and `controller.toml`, its listen entry.
    pub pki_dir: Option<PathBuf>,
}

/// The file in a lab's `pki/` holding the controller's listen entry.
pub const CONTROLLER_TOML: &str = "controller.toml";

/// The lab's TLS files: a new PKI in `pki/` (with the controller's listen entry in
/// `pki/controller.toml`), or the files given, checked readable.
pub(crate) fn prepare(
    tls: &LabTls,
    lab_dir: &Path,
    lab_name: &str,
    controller: &str,
) -> Result<TlsFiles, LabError> {
    match tls {
        LabTls::Generate => {
            let addr = controller_addr(controller)?;
            let ip = addr.ip().to_string();
            let mut names: Vec<&str> = pki::DEFAULT_CONTROLLER_NAMES.to_vec();
            if !names.contains(&ip.as_str()) {
                names.push(&ip);
            }
            let dir = lab_dir.join("pki");
            let p = pki::Pki::create(&dir, &names)?;
            let toml = dir.join(CONTROLLER_TOML);
            let listen = if addr.ip().is_loopback() || addr.ip().is_unspecified() {
                addr
            } else {
                // The controller listens on every address; its switches reach it here.
                std::net::SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), addr.port())
            };
            let text = format!(
                "# The OpenFlow listener for {}: pharos run --config {}\n{}",
                title(lab_name),
                toml.display(),
                pharos::RunConfig::tls_listener(listen, &p).to_toml()?
            );
            fs::write(&toml, text)
                .map_err(|e| LabError::io(format!("write {}", toml.display()), e))?;
            Ok(TlsFiles {
                ca_cert: p.ca_cert,
                switch_cert: p.switch_cert,
                switch_key: p.switch_key,
                pki_dir: Some(dir),
            })
        }
        LabTls::Files { ca_cert, cert, key } => {
            let check = |what: &str, p: &Path| -> Result<PathBuf, LabError> {
                let text = fs::read_to_string(p).map_err(|e| {
                    LabError::Invalid(format!("cannot read {what} {}: {e}", p.display()))
                })?;
                if !text.contains("-----BEGIN ") {
                    return Err(LabError::Invalid(format!(
                        "{what} {} is not PEM (no -----BEGIN line)",
                        p.display()
                    )));
                }
                fs::canonicalize(p).map_err(|e| LabError::io(format!("resolve {}", p.display()), e))
            };
            Ok(TlsFiles {
                ca_cert: check("the CA certificate (--tls-ca)", ca_cert)?,
                switch_cert: check("the switches' certificate (--tls-cert)", cert)?,
                switch_key: check("the switches' key (--tls-key)", key)?,
                pki_dir: None,
            })
        }
    }
}
