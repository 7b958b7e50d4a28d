//! [`recv_batch_among`]: a frame forwarded from one port's receive ring straight into
//! other ports' transmit batches, with one copy and no allocation.

use crate::port::{send_on, Port, RxKind};
use crate::ring::Rx;

/// Reads up to `max` frames from `ports[from]` and calls `f` with each and an
/// [`Outputs`] that sends on any port of `ports`, `from` included: a switch forwards
/// a frame straight from the receive ring into the other ports' batches, with one
/// copy and no allocation. (With `ports[from].recv_batch` the closure could not
/// borrow the other ports.) Returns how many frames were read.
///
/// # Panics
///
/// If `from` is not an index of `ports`.
pub fn recv_batch_among(
    ports: &mut [Port],
    from: usize,
    max: usize,
    mut f: impl FnMut(&[u8], &mut Outputs<'_>),
) -> usize {
    assert!(from < ports.len(), "port index {from} of {}", ports.len());
    let base = ports.as_mut_ptr();
    let mut outputs = Outputs {
        base,
        len: ports.len(),
        _ports: std::marker::PhantomData,
    };
    // SAFETY: `from` is in bounds; the receive side (ring and counters) of
    // ports[from] is borrowed here, and `Outputs` only ever borrows the transmit
    // sides (`tx`, `tx_counters`) and reads `mtu`: disjoint fields, no `&mut Port`
    // is made while both live. `ports` stays mutably borrowed for the whole call.
    let (rx, counters) = unsafe {
        let port = base.add(from);
        (
            &mut *std::ptr::addr_of_mut!((*port).rx),
            &mut *std::ptr::addr_of_mut!((*port).rx_counters),
        )
    };
    let mut delivered = 0;
    let each = |rx: Rx<'_>| match rx {
        Rx::Frame(frame, _) => {
            counters.rx_packets += 1;
            counters.rx_bytes += frame.len() as u64;
            delivered += 1;
            f(frame, &mut outputs);
        }
        Rx::Truncated => counters.rx_errors += 1,
    };
    match rx {
        RxKind::V3(ring) => ring.walk(max, each),
        RxKind::V2(ring) => ring.walk(max, each),
    };
    delivered
}

/// The transmit sides of a set of ports, during [`recv_batch_among`].
pub struct Outputs<'a> {
    /// The ports' first element: the call holds `&mut` to all of them, and only their
    /// transmit sides are reached through it.
    base: *mut Port,
    /// How many ports there are, to refuse an index past the end.
    len: usize,
    /// Ties the pointer to the borrow of the ports for the call.
    _ports: std::marker::PhantomData<&'a mut [Port]>,
}

impl Outputs<'_> {
    /// How many ports there are.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// [`Port::send`] on port `i`; `false` (and nothing sent) when `i` is out of range.
    #[inline]
    pub fn send(&mut self, i: usize, frame: &[u8]) -> bool {
        if i >= self.len {
            return false;
        }
        // SAFETY: `i` is in bounds; only the transmit side of ports[i] is borrowed
        // (see `recv_batch_among`), and only for this call.
        unsafe {
            let port = self.base.add(i);
            let mtu = std::ptr::read(std::ptr::addr_of!((*port).mtu));
            send_on(
                &mut *std::ptr::addr_of_mut!((*port).tx),
                &mut *std::ptr::addr_of_mut!((*port).tx_counters),
                mtu,
                frame,
            )
        }
    }
}
