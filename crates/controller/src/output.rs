//! What is queued for one switch: the bytes, and each message counted by type where it
//! is made.
//!
//! A worker's connection owns the switch's output queue and its counts of messages out
//! by type ([`crate::counters::SwitchCounters::msgs_out`]); the dispatcher and the
//! apps' [`crate::ctx::SwitchCtx`] append to them through an [`Output`], which counts
//! each message as it is encoded: the type is known there, so nothing reads the bytes
//! back to count them. A switch driven by hand (a test, a simulation) gives a plain
//! `Vec<u8>`, which counts nothing: the dispatcher's methods take either, as a
//! [`Queue`].

use crate::counters::TypeCounts;

/// An append-only view of a switch's output queue, counting what is appended (see the
/// module doc).
#[derive(Debug)]
pub struct Output<'a> {
    /// The queue: messages are appended whole, never changed once there.
    bytes: &'a mut Vec<u8>,
    /// Messages by version and type, counted as each is appended; `None` for a switch
    /// driven by hand.
    counts: Option<&'a mut TypeCounts>,
}

impl<'a> Output<'a> {
    /// Appends to `bytes`, counting each message in `counts`.
    pub fn counted(bytes: &'a mut Vec<u8>, counts: &'a mut TypeCounts) -> Output<'a> {
        Output {
            bytes,
            counts: Some(counts),
        }
    }

    /// The same queue, for a shorter while (to hand to a callee and go on after).
    #[inline]
    pub fn reborrow(&mut self) -> Output<'_> {
        Output {
            bytes: self.bytes,
            counts: self.counts.as_deref_mut(),
        }
    }

    /// The bytes queued (this call's and earlier ones').
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.bytes
    }

    /// How many bytes are queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends one message of wire version `version` and type `msg_type` with
    /// `encode`, and counts it if `encode` succeeds (an encoder leaves the queue as it
    /// was on error).
    #[inline]
    pub fn push<T, E>(
        &mut self,
        version: u8,
        msg_type: u8,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<T, E>,
    ) -> Result<T, E> {
        let r = encode(self.bytes);
        if r.is_ok() {
            self.count(version, msg_type);
        }
        r
    }

    /// Appends `frame`, one whole message, with its xid replaced by `xid`.
    pub fn push_frame(&mut self, frame: &[u8], xid: u32) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(frame);
        if let Some(x) = self.bytes.get_mut(at + 4..at + 8) {
            x.copy_from_slice(&xid.to_be_bytes());
        }
        if frame.len() >= 2 {
            self.count(frame[0], frame[1]);
        }
    }

    /// Counts one message appended by other means.
    #[inline]
    fn count(&mut self, version: u8, msg_type: u8) {
        if let Some(c) = self.counts.as_deref_mut() {
            c.record(version, msg_type);
        }
    }
}

/// What the dispatcher can append to: a worker's counted [`Output`], or a plain
/// `Vec<u8>` (a switch driven by hand).
pub trait Queue {
    /// An output appending here.
    fn output(&mut self) -> Output<'_>;
}

impl Queue for Vec<u8> {
    #[inline]
    fn output(&mut self) -> Output<'_> {
        Output::from(self)
    }
}

impl Queue for Output<'_> {
    #[inline]
    fn output(&mut self) -> Output<'_> {
        self.reborrow()
    }
}

impl<'a> From<&'a mut Vec<u8>> for Output<'a> {
    /// A switch driven by hand: appends to `bytes`, counts nothing.
    fn from(bytes: &'a mut Vec<u8>) -> Output<'a> {
        Output {
            bytes,
            counts: None,
        }
    }
}

impl<'a, 'b> From<&'b mut Output<'a>> for Output<'b> {
    fn from(out: &'b mut Output<'a>) -> Output<'b> {
        out.reborrow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_is_appended_and_only_what_succeeds() {
        let (mut bytes, mut counts) = (Vec::new(), TypeCounts::default());
        let mut out = Output::counted(&mut bytes, &mut counts);
        out.push(4, 14, |b| {
            b.extend_from_slice(&[4, 14, 0, 8, 0, 0, 0, 1]);
            Ok::<_, ()>(8)
        })
        .unwrap();
        assert!(out.push(4, 13, |_| Err::<usize, _>("too big")).is_err());
        out.push_frame(&[4, 13, 0, 8, 0, 0, 0, 0], 7);
        assert_eq!(out.len(), 16);
        assert_eq!(&out.bytes()[12..16], &7u32.to_be_bytes());
        assert_eq!((counts.get(4, 14), counts.get(4, 13)), (1, 1));
    }
}
