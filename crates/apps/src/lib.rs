//! Built-in Pharos apps, one module each.
