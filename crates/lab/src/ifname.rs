//! The budget of a Linux interface name (15 bytes), shared by the two parts every
//! root-namespace name of a lab has: the lab's name as a prefix ([`crate::names`]) and a
//! switch port's `sN-ethP` ([`crate::topo`]). Both modules take their limits from here,
//! so neither needs the other to know how long the other part may be.

/// Linux's IFNAMSIZ less the terminating NUL.
pub const MAX_IFNAME_LEN: usize = 15;

/// Lab names are `[a-z][a-z0-9]{0,3}`.
pub const MAX_LAB_NAME_LEN: usize = 4;

/// The longest switch-side interface suffix `sN-ethP` allowed, so that with a lab prefix
/// of up to [`MAX_LAB_NAME_LEN`] characters and a dash the Linux interface name stays
/// within [`MAX_IFNAME_LEN`].
pub const MAX_SUFFIX_LEN: usize = MAX_IFNAME_LEN - MAX_LAB_NAME_LEN - 1;
