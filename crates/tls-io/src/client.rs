//! A TLS client's configuration from its files: the certificate and key it presents and
//! the CA a server's certificate must be signed by, with rustls and its *ring* provider,
//! TLS 1.2 and 1.3. `pharos switch`'s `ssl:` controllers and `pharos bench
//! controller`'s emulated switches (`--tls-cert`, `--tls-key`, `--tls-ca`) both connect
//! with it, so the benchmark's switches meet a controller as Pharos's own switch does.
//!
//! As Open vSwitch does, the server's certificate is checked against the CA, its
//! validity dates and its signature, but not against the address connected to: a lab's
//! or an operator's PKI names its controller as it likes, and the CA is the trust.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// A TLS client's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The CA a server's (a controller's) certificate must be signed by (PEM).
    pub ca_cert: PathBuf,
    /// The client's certificate (PEM, the chain if any).
    pub certificate: PathBuf,
    /// The client's private key (PEM).
    pub private_key: PathBuf,
}

/// The client configuration of `files`: the client's certificate and key, and the CA a
/// server's certificate must be signed by. An error names the file at fault.
pub fn client_config(files: &TlsFiles) -> Result<Arc<ClientConfig>, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let certs = |p: &Path, what: &str| -> Result<Vec<CertificateDer<'static>>, String> {
        let bytes = read(p)?;
        let certs = CertificateDer::pem_slice_iter(&bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{what} {} is not valid PEM: {e}", p.display()))?;
        if certs.is_empty() {
            return Err(format!("{what} {} holds no certificate", p.display()));
        }
        Ok(certs)
    };
    let (ca, cert, key_file) = (&files.ca_cert, &files.certificate, &files.private_key);
    let mut roots = RootCertStore::empty();
    for c in certs(ca, "the CA certificate")? {
        roots.add(c).map_err(|e| {
            format!(
                "the CA certificate {}: not a usable CA certificate: {e}",
                ca.display()
            )
        })?;
    }
    let chain = certs(cert, "the certificate")?;
    let key = PrivateKeyDer::from_pem_slice(&read(key_file)?).map_err(|e| {
        format!(
            "the private key {} holds no usable key: {e}",
            key_file.display()
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| format!("the CA certificate {}: {e}", ca.display()))?;
    let config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyName(webpki)))
        .with_client_auth_cert(chain, key)
        .map_err(|e| format!("{} and {}: {e}", cert.display(), key_file.display()))?;
    Ok(Arc::new(config))
}

/// WebPKI's verification of a controller's certificate (chain to the CA, dates,
/// signatures) without the name check (see the module doc).
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

    fn ca(name: &str) -> (rcgen::Certificate, KeyPair) {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        (p.self_signed(&key).unwrap(), key)
    }

    fn leaf(
        ca: &(rcgen::Certificate, KeyPair),
        name: &str,
        expired: bool,
    ) -> CertificateDer<'static> {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(vec![name.to_string()]).unwrap();
        if expired {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2020, 12, 31);
        }
        p.signed_by(&key, &ca.0, &ca.1).unwrap().der().clone()
    }

    /// The controller's certificate is checked for its CA and its dates, not its name.
    #[test]
    fn a_controller_certificate_needs_the_ca_and_its_dates_but_not_the_address() {
        let ours = ca("the controller's CA");
        let mut roots = RootCertStore::empty();
        roots.add(ours.0.der().clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let v = AnyName(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap(),
        );
        let address = ServerName::IpAddress(std::net::Ipv4Addr::new(10, 0, 0, 1).into());
        let check = |cert: &CertificateDer<'_>| {
            v.verify_server_cert(cert, &[], &address, &[], UnixTime::now())
                .map(|_| ())
        };
        assert_eq!(check(&leaf(&ours, "controller.example", false)), Ok(()));
        let expired = check(&leaf(&ours, "controller.example", true));
        assert!(
            matches!(
                expired,
                Err(rustls::Error::InvalidCertificate(
                    CertificateError::Expired | CertificateError::ExpiredContext { .. }
                ))
            ),
            "an expired certificate from the right CA: {expired:?}"
        );
        assert_eq!(
            check(&leaf(&ca("another CA"), "controller.example", false)),
            Err(rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer
            )),
            "another CA's certificate"
        );
    }
}
