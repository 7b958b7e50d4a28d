//! Locks that outlive a panic.
//!
//! Every mutex in the core guards state that a writer replaces whole (a snapshot, a
//! map entry, a list pushed to) or that a panicking app's code never held (handlers run
//! under a guard that catches the panic before any lock of the core is taken), so a
//! poisoned lock still guards whole data: [`lock`] takes it anyway rather than spreading
//! one app's panic to every thread that reads the core.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning (see the module doc).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
