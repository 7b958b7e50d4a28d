//! Tests for `multipart.rs` and `table_features.rs`.

use super::*;
