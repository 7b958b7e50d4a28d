//! [`ParseError`]: what is wrong with a flow string ([`ErrorKind`]), and where.

use std::fmt;
use std::ops::Range;

/// A string that is not a flow, and where: `span` is the byte range of `token` in the
/// input. Displays as `nw_dst=10.0.0.300: bad IPv4 address "10.0.0.300" (at byte 13)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Bytes of the input the error is about.
    pub span: Range<usize>,
    /// The offending item (`key=value`, a keyword or an action), as written.
    pub token: String,
    /// What is wrong with it.
    pub kind: ErrorKind,
}

/// What is wrong with a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// A key that is no field, shorthand or flow keyword.
    #[error("unknown field or keyword {0:?}")]
    UnknownField(String),
    /// An action name that is no action or instruction.
    #[error("unknown action {0:?}")]
    UnknownAction(String),
    /// A value that does not parse as what the field holds, or does not fit it.
    #[error("bad {what} {value:?}")]
    BadValue { what: &'static str, value: String },
    /// A field or action that needs a value was given none.
    #[error("needs a value")]
    MissingValue,
    /// A keyword that takes no value was given one.
    #[error("takes no value")]
    UnexpectedValue,
    /// The same field twice with different values, or a value the shorthand before it
    /// contradicts.
    #[error("contradicts {0:?} earlier in the flow")]
    Conflict(String),
    /// A match field whose prerequisite is missing (OpenFlow 1.3 §7.2.3.8: "the
    /// prerequisite ... must be specified"), or an action that needs the match to say
    /// more.
    #[error("needs {0} in the match")]
    Prerequisite(&'static str),
    /// `actions=` is missing (a flow to add), or present where only a match belongs.
    #[error("{0}")]
    Actions(&'static str),
    /// Instructions out of 1.3's order, or `drop` beside other actions.
    #[error("{0}")]
    Order(&'static str),
    /// Something only a `dump-flows` line holds (counters), or a cookie mask in a flow to
    /// add.
    #[error("{0}")]
    NotHere(&'static str),
}

impl ParseError {
    pub(super) fn new(span: Range<usize>, input: &str, kind: ErrorKind) -> ParseError {
        let token = input.get(span.clone()).unwrap_or("").to_string();
        ParseError { span, token, kind }
    }

    /// The input with a caret line under the offending token, for a terminal.
    pub fn show(&self, input: &str) -> String {
        let width = input
            .get(self.span.clone())
            .map_or(1, |t| t.chars().count().max(1));
        let pad = input
            .get(..self.span.start)
            .map_or(0, |p| p.chars().count());
        format!(
            "{input}\n{}{} {}",
            " ".repeat(pad),
            "^".repeat(width),
            self.kind
        )
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.token.is_empty() {
            write!(f, "{} (at byte {})", self.kind, self.span.start)
        } else {
            write!(
                f,
                "{}: {} (at byte {})",
                self.token, self.kind, self.span.start
            )
        }
    }
}

impl std::error::Error for ParseError {}
