//! [`LiveProbe`]: a probe stream sent and captured on threads of their own while a test
//! works the control channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::probe::{
    Capture, CaptureOptions, ProbeError, Records, RxRecord, Sender, StreamSpec, TxRecord,
};

/// A probe stream sent on one thread and captured on another while the caller works the
/// control channel; what is captured so far can be looked at any time.
pub struct LiveProbe {
    /// Set to end the sender.
    stop: Arc<AtomicBool>,
    /// Set to end the capture (after the sender, and a linger).
    cap_stop: Arc<AtomicBool>,
    /// The sender thread, giving its records (`None`: capture only, or joined).
    sender: Option<JoinHandle<Result<Vec<TxRecord>, ProbeError>>>,
    /// The capture thread, giving its ports and count of other frames (taken when joined).
    capture: Option<JoinHandle<(Vec<String>, u64)>>,
    /// What the capture has recorded so far, shared so the test can look while it runs.
    rx: Arc<Mutex<Vec<RxRecord>>>,
}

impl LiveProbe {
    /// Opens the capture on `rx_ifaces`, then starts sending `spec` on `tx_iface`.
    pub fn start(
        tx_iface: &str,
        spec: StreamSpec,
        rx_ifaces: &[&str],
    ) -> Result<LiveProbe, ProbeError> {
        LiveProbe::open(Some((tx_iface, spec)), rx_ifaces)
    }

    /// A capture alone (frames sent by someone else: PACKET_OUTs).
    pub fn capture_only(rx_ifaces: &[&str]) -> Result<LiveProbe, ProbeError> {
        LiveProbe::open(None, rx_ifaces)
    }

    fn open(tx: Option<(&str, StreamSpec)>, rx_ifaces: &[&str]) -> Result<LiveProbe, ProbeError> {
        let mut capture = Capture::open(
            rx_ifaces,
            CaptureOptions {
                keep_bytes: 0,
                linger: Duration::ZERO,
            },
        )?;
        let sender = match tx {
            Some((iface, spec)) => Some((Sender::open(iface)?, spec)),
            None => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let cap_stop = Arc::new(AtomicBool::new(false));
        let rx = Arc::new(Mutex::new(Vec::new()));
        let (rx2, cs) = (rx.clone(), cap_stop.clone());
        let capture = std::thread::Builder::new()
            .name("probe-capture".into())
            .spawn(move || {
                let mut buf = vec![0u8; 9216];
                let mut local = Vec::new();
                loop {
                    let stopping = cs.load(Ordering::Relaxed);
                    capture.poll_into(&mut local, &mut buf);
                    if !local.is_empty() {
                        rx2.lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .append(&mut local);
                    }
                    if stopping {
                        break;
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                (capture.ports(), capture.other_frames())
            })
            .map_err(|e| ProbeError::Io {
                context: "spawn capture thread".into(),
                source: e,
            })?;
        let s2 = stop.clone();
        let sender = match sender {
            Some((mut sender, spec)) => Some(
                std::thread::Builder::new()
                    .name("probe-send".into())
                    .spawn(move || sender.run(&spec, &s2))
                    .map_err(|e| ProbeError::Io {
                        context: "spawn sender thread".into(),
                        source: e,
                    })?,
            ),
            None => None,
        };
        Ok(LiveProbe {
            stop,
            cap_stop,
            sender,
            capture: Some(capture),
            rx,
        })
    }

    /// Runs `f` on what has been captured so far.
    pub fn with_rx<T>(&self, f: impl FnOnce(&[RxRecord]) -> T) -> T {
        f(&self.rx.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Stops the sender, captures `linger` more, and returns everything.
    pub fn finish(mut self, linger: Duration) -> Result<Records, ProbeError> {
        self.stop.store(true, Ordering::SeqCst);
        let tx = match self.sender.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(ProbeError::Panicked("probe sender".into())),
            None => Ok(Vec::new()),
        };
        std::thread::sleep(linger);
        self.cap_stop.store(true, Ordering::SeqCst);
        let (ports, other_frames) = self
            .capture
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let tx = tx?;
        let rx = std::mem::take(&mut *self.rx.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Records {
            ports,
            tx,
            rx,
            other_frames,
        })
    }
}

impl Drop for LiveProbe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.cap_stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.sender.take() {
            let _ = h.join();
        }
        if let Some(h) = self.capture.take() {
            let _ = h.join();
        }
    }
}
