//! Server-Sent Events, read line by line (the WHATWG HTML standard, "Event stream
//! interpretation"): `event:` names the event, `data:` lines are joined by `\n`, a blank
//! line dispatches, a line starting with `:` is a comment (the server's heartbeat),
//! `id:` and `retry:` are not needed here and are skipped.

use std::io::{self, BufRead};

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its `event:` name; empty when none was given (the standard's "message").
    pub kind: String,
    pub data: String,
}

/// The events of a stream, as they come.
pub struct Events<R> {
    reader: R,
    line: String,
}

impl<R: BufRead> Events<R> {
    pub fn new(reader: R) -> Events<R> {
        Events {
            reader,
            line: String::new(),
        }
    }
}

impl<R: BufRead> Iterator for Events<R> {
    type Item = io::Result<Event>;

    fn next(&mut self) -> Option<io::Result<Event>> {
        let mut kind = String::new();
        let mut data: Option<String> = None;
        loop {
            self.line.clear();
            match self.reader.read_line(&mut self.line) {
                Err(e) => return Some(Err(e)),
                // The end: an event not closed by a blank line is dropped, as the
                // standard says.
                Ok(0) => return None,
                Ok(_) => {}
            }
            let line = self.line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                match data.take() {
                    Some(data) => return Some(Ok(Event { kind, data })),
                    // A blank line with no data dispatches nothing.
                    None => {
                        kind.clear();
                        continue;
                    }
                }
            }
            if line.starts_with(':') {
                continue;
            }
            let (name, value) = match line.split_once(':') {
                Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match name {
                "event" => kind = value.to_string(),
                "data" => match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => data = Some(value.to_string()),
                },
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_comments_and_multi_line_data() {
        let stream = ": heartbeat\n\nevent: switch\ndata: {\"dpid\":\"01\"}\n\n\
                      event:link\r\ndata: a\r\ndata:b\r\nid: 7\r\n\r\n\
                      data: no name\n\n\
                      event: cut\ndata: never closed\n";
        let got: Vec<Event> = Events::new(stream.as_bytes()).map(Result::unwrap).collect();
        let ev = |k: &str, d: &str| Event {
            kind: k.into(),
            data: d.into(),
        };
        assert_eq!(
            got,
            [
                ev("switch", "{\"dpid\":\"01\"}"),
                ev("link", "a\nb"),
                ev("", "no name")
            ]
        );
    }
}
