//! Datapath ids in the API: the codec's [`openflow::Dpid`], its one printed form in every
//! answer (`00:00:00:00:00:00:00:01`) and its one parser for every `{dpid}` of a path
//! and `dpid` of a body (the forms, and why those: [`openflow::dpid`]). The functions
//! below read and print it as a request and an answer do.

pub use openflow::Dpid;

/// The printed form of `dpid`, as every answer writes it.
pub fn format(dpid: impl Into<Dpid>) -> String {
    dpid.into().to_string()
}

/// Reads a dpid of a request; the error (a 400's text) says what was given and how to
/// write it.
pub fn parse(text: &str) -> Result<Dpid, String> {
    text.parse::<Dpid>().map_err(|e| e.to_string())
}
