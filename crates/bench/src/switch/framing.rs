//! Reading a controller's stream: a buffer allocated once, and where its next message
//! ends.

use std::io::Read;

/// Bytes read and not yet framed, in a buffer allocated (and zeroed) once.
pub(crate) struct ReadBuf {
    /// The buffer, allocated once.
    buf: Box<[u8]>,
    /// Bytes read and not consumed, from the start.
    len: usize,
}

impl Default for ReadBuf {
    /// An empty buffer of no size (allocates nothing: what `mem::take` leaves behind).
    fn default() -> ReadBuf {
        ReadBuf {
            buf: Box::new([]),
            len: 0,
        }
    }
}

impl ReadBuf {
    /// Four times the largest OpenFlow message, so that a whole one always fits.
    pub(crate) fn new() -> ReadBuf {
        ReadBuf {
            buf: vec![0; 256 * 1024].into_boxed_slice(),
            len: 0,
        }
    }

    /// One `read(2)` into the free space (`Ok(0)`: end of stream). Not to be called
    /// when full.
    pub(crate) fn read_from(&mut self, r: &mut impl Read) -> std::io::Result<usize> {
        let n = r.read(&mut self.buf[self.len..])?;
        self.len += n;
        Ok(n)
    }

    /// Bytes one read can still take.
    pub(crate) fn free(&self) -> usize {
        self.buf.len() - self.len
    }

    /// No free space left (frame what is there first).
    pub(crate) fn is_full(&self) -> bool {
        self.len == self.buf.len()
    }

    /// The bytes read and not consumed.
    pub(crate) fn filled(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Drops the first `n` bytes.
    pub(crate) fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

/// The length of the message at the front of `buf`: `None` for "not yet", `Err` when
/// the stream cannot be framed.
pub(crate) fn next_frame(buf: &[u8]) -> Option<Result<usize, String>> {
    match openflow::frame_len(buf) {
        Ok(Some(n)) => Some(Ok(n)),
        Ok(None) => None,
        Err(e) => Some(Err(format!(
            "the controller's stream cannot be framed: {e}"
        ))),
    }
}
