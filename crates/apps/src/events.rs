//! Subscribers to a service's changes, told in the order the changes were made.

use std::sync::{Mutex, RwLock};

type Subscriber<E> = Box<dyn Fn(&E) + Send + Sync>;

/// The subscriber list of a service (`Topology`, `Devices`): [`Subscribers::publish`]
/// runs a change and then tells every subscriber of each event it produced, holding an
/// order lock across both, so subscribers see changes in the order they were made even
/// when several workers change the service at once.
pub(crate) struct Subscribers<E> {
    list: RwLock<Vec<Subscriber<E>>>,
    order: Mutex<()>,
}

impl<E> Default for Subscribers<E> {
    fn default() -> Self {
        Subscribers {
            list: RwLock::new(Vec::new()),
            order: Mutex::new(()),
        }
    }
}

impl<E> Subscribers<E> {
    pub(crate) fn subscribe(&self, f: Subscriber<E>) {
        self.list.write().unwrap_or_else(|e| e.into_inner()).push(f);
    }

    /// Runs `change` (which must release the service's own locks before it returns),
    /// then tells the subscribers about each event, in order. A subscriber that calls
    /// back into a `publish` of the same service deadlocks: the services say so.
    pub(crate) fn publish(&self, change: impl FnOnce() -> Vec<E>) -> Vec<E> {
        let _order = self.order.lock().unwrap_or_else(|e| e.into_inner());
        let events = change();
        if !events.is_empty() {
            let list = self.list.read().unwrap_or_else(|e| e.into_inner());
            for e in &events {
                for s in list.iter() {
                    s(e);
                }
            }
        }
        events
    }
}
