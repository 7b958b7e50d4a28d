//! The `open_enum!` macro: wire enums with an `Unknown` variant.

/// Defines an open wire enum: named variants for the values the standards define and
/// `Unknown(raw)` for everything else, so unknown values round-trip exactly.
/// `From` converts both ways; `from_raw` maps a defined value to its named variant.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $repr:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[doc = concat!("Wire value `", stringify!($value), "`.")]
                $variant,
            )*
            /// A value with no name here; kept as received.
            Unknown($repr),
        }

        impl $name {
            /// The wire value.
            #[inline]
            pub const fn to_raw(self) -> $repr {
                match self {
                    $( $name::$variant => $value, )*
                    $name::Unknown(v) => v,
                }
            }

            /// The variant for a wire value.
            #[inline]
            pub const fn from_raw(v: $repr) -> Self {
                $( if v == $value { return $name::$variant; } )*
                $name::Unknown(v)
            }
        }

        impl From<$repr> for $name {
            #[inline]
            fn from(v: $repr) -> Self {
                $name::from_raw(v)
            }
        }

        impl From<$name> for $repr {
            #[inline]
            fn from(v: $name) -> Self {
                v.to_raw()
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self {
                    $( $name::$variant => f.write_str(stringify!($variant)), )*
                    $name::Unknown(v) => write!(f, "{:#x}", v),
                }
            }
        }
    };
}

pub(crate) use open_enum;

/// Copies six bytes into a MAC address. `b` must hold at least six bytes.
#[inline(always)]
pub(crate) fn mac(b: &[u8]) -> openflow::MacAddr {
    openflow::MacAddr([b[0], b[1], b[2], b[3], b[4], b[5]])
}

/// A big-endian u16 at `at`. `b` must hold `at + 2` bytes.
#[inline(always)]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// A big-endian u32 at `at`. `b` must hold `at + 4` bytes.
#[inline(always)]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Writes a big-endian u16 at `at`.
#[inline(always)]
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes a big-endian u32 at `at`.
#[inline(always)]
pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
