//! The parser: one pass over `key=value` items, then the checks that need the whole
//! match (prerequisites, the protocol `mod_tp_src` writes). Every error carries the byte
//! span of the item it is about.
//!
//! ```text
//! mod.rs     the entry points and the Parser: the pass over the items, duplicate checks
//! fields     the items before actions=: flow keys, counters, match fields; then the
//!            checks that need the whole match (Parser::finish)
//! actions    actions= : the actions and 1.3's instructions, in 1.3's order
//! values     integers, addresses, masks, ports, durations; splitting an action list
//! error      ParseError and ErrorKind
//! ```

mod actions;
mod error;
mod fields;
mod values;

#[cfg(test)]
mod tests;

use std::ops::Range;

pub use error::{ErrorKind, ParseError};

use crate::ofctl::flow::{Flow, FlowCounters, FlowEntry, FlowMatch, ALL_TABLES};

/// Parses a flow as `ovs-ofctl add-flow` takes it (`actions=` required; `actions=drop`
/// for none).
pub fn parse_flow(s: &str) -> Result<Flow, ParseError> {
    Ok(Parser::new(s, Mode::Add).run()?.flow)
}

/// Parses a selection of flows as `ovs-ofctl del-flows` and `dump-flows` take it: match
/// fields, `table` (every table when absent: [`Flow::table`] is then `0xff`, 1.3's
/// `OFPTT_ALL`), `priority` (for strict commands), `cookie=VALUE/MASK`; no actions.
/// [`Flow::selection_to_ofctl`] prints it back.
pub fn parse_match(s: &str) -> Result<Flow, ParseError> {
    let mut p = Parser::new(s, Mode::Match);
    p.flow.table = ALL_TABLES;
    Ok(p.run()?.flow)
}

/// Parses one line of `ovs-ofctl dump-flows` output (counters optional; `idle_age` and
/// `hard_age` are read and dropped; durations keep their milliseconds).
pub fn parse_flow_entry(s: &str) -> Result<FlowEntry, ParseError> {
    Parser::new(s, Mode::Dump).run()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Add,
    Match,
    Dump,
}

/// The match fields, for spans (duplicates, prerequisites).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum F {
    InPort,
    EthSrc,
    EthDst,
    EthType,
    Vlan,
    VlanPcp,
    IpDscp,
    IpEcn,
    IpProto,
    Ipv4Src,
    Ipv4Dst,
    TpSrc,
    TpDst,
    Ipv6Src,
    Ipv6Dst,
    Ipv6Label,
    ArpSha,
    ArpTha,
    Metadata,
}
const N_FIELDS: usize = F::Metadata as usize + 1;

/// The parse of one string: the items are read in one pass ([`Parser::item`] before
/// `actions=`, [`Parser::actions`] after), then checked together ([`Parser::finish`]).
struct Parser<'a> {
    /// The input, which every error's span and token point into.
    s: &'a str,
    /// What the input is (a flow to add, a selection, a dump-flows line), and so what it
    /// may hold.
    mode: Mode,
    /// The flow, as far as it is parsed.
    flow: Flow,
    /// Where each match field was set (its item's span).
    spans: [Option<Range<usize>>; N_FIELDS],
    /// The counters of a dump-flows line, once one is read.
    counters: Option<FlowCounters>,
    /// `mod_tp_src`/`mod_tp_dst` actions whose protocol the match decides: (in
    /// write_actions?, index, span).
    tp_actions: Vec<(bool, usize, Range<usize>)>,
}

fn is_sep(b: u8) -> bool {
    b == b',' || b.is_ascii_whitespace()
}

impl<'a> Parser<'a> {
    fn new(s: &'a str, mode: Mode) -> Self {
        Parser {
            s,
            mode,
            flow: Flow::default(),
            spans: Default::default(),
            counters: None,
            tp_actions: Vec::new(),
        }
    }

    fn err(&self, span: Range<usize>, kind: ErrorKind) -> ParseError {
        ParseError::new(span, self.s, kind)
    }

    fn run(mut self) -> Result<FlowEntry, ParseError> {
        let b = self.s.as_bytes();
        let mut i = 0;
        let mut actions_seen = false;
        while i < b.len() {
            if is_sep(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && !is_sep(b[i]) && b[i] != b'=' && b[i] != b':' {
                i += 1;
            }
            let key = &self.s[start..i];
            let mut value = None;
            if i < b.len() && (b[i] == b'=' || b[i] == b':') {
                i += 1;
                let vstart = i;
                if key == "actions" {
                    i = b.len();
                } else {
                    while i < b.len() && !is_sep(b[i]) {
                        i += 1;
                    }
                }
                value = Some((vstart, &self.s[vstart..i]));
            }
            let span = start..i;
            if key == "actions" {
                if self.mode == Mode::Match {
                    return Err(self.err(
                        span,
                        ErrorKind::Actions("a match takes no actions (del-flows, dump-flows)"),
                    ));
                }
                let (vstart, v) = value.ok_or_else(|| self.err(span, ErrorKind::MissingValue))?;
                self.actions(vstart, v)?;
                actions_seen = true;
            } else {
                self.item(key, value, span)?;
            }
        }
        if self.mode != Mode::Match && !actions_seen {
            let end = self.s.len();
            return Err(self.err(
                end..end,
                ErrorKind::Actions(
                    "no actions: end the flow with actions=... (actions=drop for none)",
                ),
            ));
        }
        self.finish()?;
        Ok(FlowEntry {
            flow: self.flow,
            counters: self.counters,
        })
    }

    /// Sets match field `f`; a second setting must agree with the first.
    fn set<T: PartialEq + Copy>(
        &mut self,
        f: F,
        slot: impl Fn(&mut FlowMatch) -> &mut Option<T>,
        v: T,
        span: &Range<usize>,
    ) -> Result<(), ParseError> {
        let cur = slot(&mut self.flow.matching);
        match *cur {
            Some(old) if old != v => {
                let prev = self.spans[f as usize].clone().unwrap_or(0..0);
                let prev_tok = self.s.get(prev).unwrap_or("").to_string();
                Err(self.err(span.clone(), ErrorKind::Conflict(prev_tok)))
            }
            _ => {
                *cur = Some(v);
                self.spans[f as usize] = Some(span.clone());
                Ok(())
            }
        }
    }

    fn span_of(&self, f: F) -> Range<usize> {
        self.spans[f as usize].clone().unwrap_or(0..0)
    }
}

impl std::str::FromStr for Flow {
    type Err = ParseError;

    /// [`parse_flow`].
    fn from_str(s: &str) -> Result<Flow, ParseError> {
        parse_flow(s)
    }
}
