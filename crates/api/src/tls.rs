//! HTTPS for the API (`[api] tls = { cert, key }`): rustls on ring (no OpenSSL), TLS 1.2
//! and 1.3, HTTP/1.1.
//!
//! [`server_config`] reads the certificate chain and key, naming the file and the
//! settings key in every error, so that a bad file refuses the start. [`TlsListener`] is
//! what `axum::serve` accepts from: a task accepts TCP connections and runs each TLS
//! handshake in a task of its own, with a deadline ([`HANDSHAKE_TIMEOUT`]) and a cap on
//! handshakes in progress ([`MAX_HANDSHAKES`]), so a client that connects and says
//! nothing holds up no one; only finished handshakes reach the HTTP server. A failed
//! handshake is logged with its reason (plain HTTP on the HTTPS port, a client that
//! does not trust the certificate, ...).

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// How long a client has to finish its TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// TLS handshakes in progress at once; a connection past that is closed at once.
pub const MAX_HANDSHAKES: usize = 256;

/// A certificate or key that cannot be used: the settings key (`api.tls.cert` or
/// `api.tls.key`) and why, naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct TlsConfigError {
    pub key: &'static str,
    pub reason: String,
}

/// The API's TLS settings from the certificate chain `cert` and private key `key` (PEM).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, TlsConfigError> {
    let cert_err = |reason: String| TlsConfigError {
        key: "api.tls.cert",
        reason,
    };
    let key_err = |reason: String| TlsConfigError {
        key: "api.tls.key",
        reason,
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| cert_err(format!("cannot read {}: {}", cert.display(), pem_error(&e))))?;
    if certs.is_empty() {
        return Err(cert_err(format!(
            "{} holds no certificate (no -----BEGIN CERTIFICATE----- block)",
            cert.display()
        )));
    }
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| key_err(format!("cannot read {}: {}", key.display(), pem_error(&e))))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| cert_err(format!("TLS set-up: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| {
            key_err(format!(
                "{} does not go with the certificate in {}: {e}",
                key.display(),
                cert.display()
            ))
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::NoItemsFound => "no PEM block of that kind in it".to_string(),
        Error::Io(io) => io.to_string(),
        other => format!("not valid PEM ({other:?})"),
    }
}

/// TLS connections whose handshake is done, for `axum::serve`.
#[derive(Debug)]
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local_addr: SocketAddr,
}

impl TlsListener {
    /// Starts accepting on `listener` (a task on the current tokio runtime, ended when
    /// this is dropped).
    pub fn new(listener: TcpListener, config: Arc<ServerConfig>) -> io::Result<TlsListener> {
        let local_addr = listener.local_addr()?;
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(accept_loop(listener, TlsAcceptor::from(config), tx));
        Ok(TlsListener { ready, local_addr })
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    tx: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    let handshakes = Arc::new(Semaphore::new(MAX_HANDSHAKES));
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            () = tx.closed() => return,
        };
        let (tcp, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                tracing::debug!("the API could not accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&handshakes).try_acquire_owned() else {
            tracing::warn!(
                "API: {MAX_HANDSHAKES} TLS handshakes already in progress: closed {peer}"
            );
            continue;
        };
        let acceptor = acceptor.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let r = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await;
            drop(permit);
            match r {
                Ok(Ok(tls)) => {
                    let _ = tx.send((tls, peer)).await;
                }
                Ok(Err(e)) => tracing::info!(
                    "API: TLS handshake with {peer} failed: {}",
                    handshake_reason(&e)
                ),
                Err(_) => tracing::info!(
                    "API: TLS handshake with {peer} failed: not finished in {} s",
                    HANDSHAKE_TIMEOUT.as_secs()
                ),
            }
        });
    }
}

/// Why a handshake failed, in words.
fn handshake_reason(e: &io::Error) -> String {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)) => {
            "not TLS (plain HTTP on the HTTPS port?)".to_string()
        }
        Some(rustls::Error::AlertReceived(alert)) => {
            format!("the client refused the handshake ({alert:?}: does it trust the certificate?)")
        }
        Some(other) => other.to_string(),
        None => e.to_string(),
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(c) => c,
            // The accept task ended (it does only once this listener is dropped).
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local_addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_and_its_key_make_a_server_config_and_mismatches_name_the_files() {
        let d = std::env::temp_dir().join(format!("pharos-api-tls-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let pki = lab::pki::Pki::create(&d, &[]).unwrap();
        let c = server_config(&pki.controller_cert, &pki.controller_key).unwrap();
        assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
        let e = server_config(&pki.controller_cert, &pki.switch_key).unwrap_err();
        assert_eq!(e.key, "api.tls.key");
        assert!(e.reason.contains("does not go with"), "{e}");
        let e = server_config(&pki.controller_key, &pki.controller_key).unwrap_err();
        assert_eq!(e.key, "api.tls.cert");
        assert!(e.reason.contains("holds no certificate"), "{e}");
        let missing = d.join("missing.pem");
        let e = server_config(&missing, &pki.controller_key).unwrap_err();
        assert!(
            e.reason.contains(missing.to_str().unwrap()) && e.reason.contains("No such file"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
