//! MPLS label stack entries (RFC 3032 §2.1).

use crate::error::{fits, room, EmitResult, Result};
use crate::macros::{be32, put32};

mod field {
    use crate::Field;
    pub const ENTRY: Field = 0..4;
}

/// Length of one label stack entry.
pub const ENTRY_LEN: usize = 4;

/// A zero-copy view of one label stack entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MplsEntry<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MplsEntry<T> {
    /// A view with no checks: getters panic on a buffer shorter than 4 bytes.
    pub const fn new_unchecked(buffer: T) -> Self {
        MplsEntry { buffer }
    }

    /// A view whose getters cannot panic.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let e = Self::new_unchecked(buffer);
        e.check_len()?;
        Ok(e)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        crate::error::need("mpls", self.buffer.as_ref(), ENTRY_LEN)
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ENTRY.start)
    }

    /// The label (20 bits).
    pub fn label(&self) -> u32 {
        self.word() >> 12
    }

    /// Traffic class (3 bits, formerly EXP).
    pub fn tc(&self) -> u8 {
        ((self.word() >> 9) & 7) as u8
    }

    /// Bottom of stack.
    pub fn bos(&self) -> bool {
        self.word() & 0x100 != 0
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.word() as u8
    }

    /// Everything after this entry.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[ENTRY_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MplsEntry<T> {
    /// Writes the whole entry.
    pub fn set(&mut self, label: u32, tc: u8, bos: bool, ttl: u8) {
        let w = (label << 12) | (u32::from(tc & 7) << 9) | (u32::from(bos) << 8) | u32::from(ttl);
        put32(self.buffer.as_mut(), field::ENTRY.start, w);
    }
}

/// A label stack entry, owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MplsRepr {
    /// 0..=0xfffff.
    pub label: u32,
    /// 0..=7.
    pub tc: u8,
    /// Bottom of stack.
    pub bos: bool,
    /// Time to live.
    pub ttl: u8,
}

impl MplsRepr {
    /// Parses a checked view.
    pub fn parse<T: AsRef<[u8]>>(entry: &MplsEntry<T>) -> Result<Self> {
        entry.check_len()?;
        Ok(MplsRepr {
            label: entry.label(),
            tc: entry.tc(),
            bos: entry.bos(),
            ttl: entry.ttl(),
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        ENTRY_LEN
    }

    /// Writes the structure at the start of `buf`; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        fits(
            self.label <= 0xfffff,
            "mpls",
            "label",
            self.label.into(),
            "20 bits",
        )?;
        fits(self.tc < 8, "mpls", "tc", self.tc.into(), "3 bits")?;
        MplsEntry::new_unchecked(room("mpls", buf, ENTRY_LEN)?)
            .set(self.label, self.tc, self.bos, self.ttl);
        Ok(ENTRY_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use proptest::prelude::*;

    #[test]
    fn vector() {
        let b = &testdata::MPLS_UDP[14..];
        let e = MplsEntry::new_checked(b).unwrap();
        assert_eq!((e.label(), e.tc(), e.bos(), e.ttl()), (16, 0, false, 64));
        let e = MplsEntry::new_checked(e.payload()).unwrap();
        let r = MplsRepr::parse(&e).unwrap();
        assert_eq!(
            r,
            MplsRepr {
                label: 1000,
                tc: 3,
                bos: true,
                ttl: 63
            }
        );
        let mut out = [0u8; 4];
        r.emit(&mut out).unwrap();
        assert_eq!(&out[..], &b[4..8]);
        for n in 0..4 {
            assert!(MplsEntry::new_checked(&b[..n]).unwrap_err().is_truncated());
        }
        assert!(MplsRepr {
            label: 1 << 20,
            ..r
        }
        .emit(&mut out)
        .is_err());
    }

    proptest! {
        #[test]
        fn round_trip(label in 0u32..0x100000, tc in 0u8..8, bos: bool, ttl: u8) {
            let r = MplsRepr { label, tc, bos, ttl };
            let mut buf = [0u8; 4];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(MplsRepr::parse(&MplsEntry::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
