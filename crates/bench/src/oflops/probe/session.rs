//! [`Session`]: senders and a capture on their own threads, started together and
//! stopped or waited for together.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::capture::{Capture, CaptureOptions};
use super::records::Records;
use super::sender::Sender;
use super::stream::{RxRecord, StreamSpec, TxRecord};
use super::ProbeError;

/// Senders and a capture running on their own threads. Dropped without [`Session::wait`]
/// or [`Session::stop`], it stops them (without waiting).
pub struct Session {
    /// Set to end the senders early.
    stop: Arc<AtomicBool>,
    /// Set once the senders are done, to end the capture after its linger.
    cap_stop: Arc<AtomicBool>,
    /// The sender threads, each giving its stream's records.
    senders: Vec<JoinHandle<Result<Vec<TxRecord>, ProbeError>>>,
    /// The capture thread: its records, ports and count of other frames (taken by `wait`).
    capture: Option<JoinHandle<CaptureResult>>,
}

/// What a capture thread gives back: its records, its ports, its count of other frames.
type CaptureResult = (Vec<RxRecord>, Vec<String>, u64);

impl Session {
    /// Opens the capture on `rx_ifaces`, then starts one sender thread per
    /// `(interface, stream)`. All sockets are open (errors returned) before any frame leaves.
    pub fn start(
        streams: Vec<(String, StreamSpec)>,
        rx_ifaces: &[&str],
        opts: CaptureOptions,
    ) -> Result<Session, ProbeError> {
        let mut capture = Capture::open(rx_ifaces, opts)?;
        let mut senders = Vec::new();
        for (iface, spec) in &streams {
            senders.push((Sender::open(iface)?, spec.clone()));
        }
        let mut session = Session {
            stop: Arc::new(AtomicBool::new(false)),
            cap_stop: Arc::new(AtomicBool::new(false)),
            senders: Vec::new(),
            capture: None,
        };
        let cap_stop = session.cap_stop.clone();
        let spawn_err = |e| ProbeError::Io {
            context: "spawn a probe thread".into(),
            source: e,
        };
        session.capture = Some(
            std::thread::Builder::new()
                .name("probe-capture".into())
                .spawn(move || {
                    let rx = capture.run(&cap_stop, None);
                    (rx, capture.ports(), capture.other_frames())
                })
                .map_err(spawn_err)?,
        );
        for (mut s, spec) in senders {
            let stop = session.stop.clone();
            let h = std::thread::Builder::new()
                .name(format!("probe-send-{}", spec.id))
                .spawn(move || s.run(&spec, &stop))
                .map_err(spawn_err)?;
            session.senders.push(h);
        }
        Ok(session)
    }

    /// Whether every sender has finished (count or duration reached).
    pub fn senders_done(&self) -> bool {
        self.senders.iter().all(|h| h.is_finished())
    }

    /// Stops the senders now and returns everything measured (after the capture's linger).
    pub fn stop(self) -> Result<Records, ProbeError> {
        self.stop.store(true, Ordering::SeqCst);
        self.wait()
    }

    /// Waits for the senders to reach their count or duration, then for the capture's
    /// linger, and returns everything measured. A stream with neither a count nor a
    /// duration never ends by itself: end those with [`Session::stop`]. With no senders
    /// the capture ends after its linger.
    pub fn wait(mut self) -> Result<Records, ProbeError> {
        let mut tx = Vec::new();
        let mut err = None;
        for h in std::mem::take(&mut self.senders) {
            match h.join() {
                Ok(Ok(r)) => tx.extend(r),
                Ok(Err(e)) => err = err.or(Some(e)),
                Err(p) => err = err.or(Some(ProbeError::Panicked(panic_text(&p)))),
            }
        }
        self.cap_stop.store(true, Ordering::SeqCst);
        let (rx, ports, other_frames) = match self.capture.take().map(|c| c.join()) {
            Some(Ok(r)) => r,
            Some(Err(p)) => return Err(ProbeError::Panicked(panic_text(&p))),
            None => (Vec::new(), Vec::new(), 0),
        };
        if let Some(e) = err {
            return Err(e);
        }
        Ok(Records {
            ports,
            tx,
            rx,
            other_frames,
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.cap_stop.store(true, Ordering::SeqCst);
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into())
}
