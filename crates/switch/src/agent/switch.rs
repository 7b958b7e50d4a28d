//! The switch's loop.
