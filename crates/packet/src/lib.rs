//! Packet views and builders.
