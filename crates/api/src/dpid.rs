//! Datapath ids as people write them: the core's [`controller::dpid`] (the API, the
//! configuration file's static flows and `pharos ctl` read them one way).

pub use controller::dpid::{format, parse};
