//! (to be written: see the module list in mod.rs)
