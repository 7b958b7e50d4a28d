//! Waiting for a condition, polled, with a deadline.

use std::thread;
use std::time::{Duration, Instant};

/// Polls `cond` every 20 ms until it holds (true) or `timeout` passes (false).
pub fn wait_until(timeout: Duration, cond: impl FnMut() -> bool) -> bool {
    poll_until(timeout, Duration::from_millis(20), cond)
}

/// Polls `cond` every `every` until it holds (true) or `timeout` passes (false); `cond`
/// is tried once more at the deadline.
pub fn poll_until(timeout: Duration, every: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(every);
    }
}
