//! Packet buffers: frames sent to the controllers in a PACKET_IN are kept here under a
//! `buffer_id`, so that a FLOW_MOD or PACKET_OUT naming that id applies to the frame
//! without the controller sending it back (spec 1.0.0 §5.3.6, 1.3.3 §7.3.7).
//!
//! A ring of `n` slots, each with its storage allocated once: storing a frame copies it
//! into the oldest slot, so nothing is allocated per frame (a frame longer than a slot
//! grows that slot once). An id is the slot's index in its low bits and a generation
//! counter above them, as Open vSwitch's `pktbuf` does, so an id whose slot has since
//! been reused is told apart from the frame now in it.

/// Bytes a slot holds without growing (an Ethernet frame with two VLAN tags, rounded).
const SLOT_CAPACITY: usize = 2048;

/// Why a buffer id names no frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferError {
    /// The id was never given out, or its slot has since held another frame
    /// (OFPBRC_BUFFER_UNKNOWN).
    Unknown,
    /// The frame was already used by an earlier FLOW_MOD or PACKET_OUT
    /// (OFPBRC_BUFFER_EMPTY).
    Empty,
}

#[derive(Debug)]
struct Slot {
    /// The id the frame in this slot was given; `None` before the first frame.
    id: Option<u32>,
    /// Whether the frame is still there (not yet used).
    full: bool,
    in_port: u32,
    data: Vec<u8>,
}

/// The ring of packet buffers.
#[derive(Debug)]
pub struct Buffers {
    slots: Vec<Slot>,
    /// Bits of an id that hold the slot index.
    bits: u32,
    /// The slot the next frame goes to.
    next: usize,
    /// Generation of the next id (wraps; kept below the value that would make
    /// `OFP_NO_BUFFER`).
    generation: u32,
}

impl Buffers {
    /// `n` buffers (rounded up to a power of two; 0: no buffering).
    pub fn new(n: u32) -> Buffers {
        let n = if n == 0 { 0 } else { n.next_power_of_two() };
        Buffers {
            slots: (0..n)
                .map(|_| Slot {
                    id: None,
                    full: false,
                    in_port: 0,
                    data: Vec::with_capacity(SLOT_CAPACITY),
                })
                .collect(),
            bits: n.max(1).trailing_zeros(),
            next: 0,
            generation: 0,
        }
    }

    /// How many frames the ring holds (FEATURES_REPLY's `n_buffers`).
    pub fn len(&self) -> u32 {
        self.slots.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Keeps a copy of `frame` received on `in_port`, overwriting the oldest buffer;
    /// returns its id, or `None` when there are no buffers.
    pub fn store(&mut self, in_port: u32, frame: &[u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let index = self.next;
        self.next = (self.next + 1) % self.slots.len();
        // Ids stay below 2^31, far from OFP_NO_BUFFER (0xffffffff).
        let max_generation = (1u32 << (31 - self.bits)) - 1;
        let id = (self.generation << self.bits) | index as u32;
        if index == self.slots.len() - 1 {
            self.generation = if self.generation >= max_generation {
                0
            } else {
                self.generation + 1
            };
        }
        let slot = &mut self.slots[index];
        slot.data.clear();
        slot.data.extend_from_slice(frame);
        slot.id = Some(id);
        slot.full = true;
        slot.in_port = in_port;
        Some(id)
    }

    /// Takes the frame buffered under `id` (each frame can be taken once): its input
    /// port, and the frame copied into `out` (cleared first).
    pub fn take(&mut self, id: u32, out: &mut Vec<u8>) -> Result<u32, BufferError> {
        let index = (id & ((1u32 << self.bits) - 1)) as usize;
        let slot = self.slots.get_mut(index).ok_or(BufferError::Unknown)?;
        if slot.id != Some(id) {
            return Err(BufferError::Unknown);
        }
        if !slot.full {
            return Err(BufferError::Empty);
        }
        slot.full = false;
        out.clear();
        out.extend_from_slice(&slot.data);
        Ok(slot.in_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_taken_once_and_a_reused_slot_forgets_the_old_id() {
        let mut b = Buffers::new(4);
        let mut out = Vec::new();
        let a = b.store(1, b"aaaa").unwrap();
        assert_eq!(b.take(a, &mut out), Ok(1));
        assert_eq!(out, b"aaaa");
        assert_eq!(b.take(a, &mut out), Err(BufferError::Empty));
        let ids: Vec<u32> = (0..4).map(|i| b.store(2, &[i]).unwrap()).collect();
        // The slot of `a` now holds another frame: `a` is stale, the new id works.
        assert!(!ids.contains(&a));
        assert_eq!(b.take(a, &mut out), Err(BufferError::Unknown));
        assert_eq!(b.take(ids[3], &mut out), Ok(2));
        assert_eq!(out, [3]);
        assert_eq!(b.take(0x7fff_fff0, &mut out), Err(BufferError::Unknown));
        assert_eq!(b.take(0xffff_ffff, &mut out), Err(BufferError::Unknown));
    }

    #[test]
    fn no_buffers_means_no_ids() {
        let mut b = Buffers::new(0);
        assert_eq!(b.store(1, b"x"), None);
        assert_eq!(b.take(0, &mut Vec::new()), Err(BufferError::Unknown));
    }

    #[test]
    fn storing_allocates_nothing_once_the_ring_exists() {
        let mut b = Buffers::new(8);
        let frame = [7u8; 1514];
        let n = allocation_counter::measure(|| {
            for _ in 0..100 {
                b.store(3, &frame);
            }
        });
        assert_eq!(n.count_total, 0);
    }
}
