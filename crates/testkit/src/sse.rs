//! A Server-Sent Events client for the API tests, on `ureq`: one GET kept open, its
//! body read line by line as it comes, cut into events at each empty line.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::http::{agent, builder};

/// One thing the stream sent: an event, or a comment line (a heartbeat).
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Event {
        event: String,
        id: Option<String>,
        data: String,
    },
    Comment(String),
}

/// An open event stream.
pub struct SseStream {
    /// The body's lines as they come, read by a thread of their own (a read cannot be
    /// given a deadline per call); closed when the stream ended.
    lines: Receiver<String>,
    /// The lines of an event block not yet ended by an empty line.
    block: Vec<String>,
    /// Tells the reader to stop (and close the connection) at its next line.
    dropped: Arc<AtomicBool>,
    /// The response's status.
    pub status: u16,
    /// The response's head: its status line and headers, one per line.
    pub head: String,
}

impl SseStream {
    /// GETs `path` with `headers` and reads the head.
    pub fn open(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> SseStream {
        let request = builder(addr, "GET", path, headers)
            .header("Accept", "text/event-stream")
            .body(())
            .expect("a request");
        let response = agent(true)
            .run(request)
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = response.status();
        let mut head = format!(
            "{:?} {} {}\r\n",
            response.version(),
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        );
        for (n, v) in response.headers() {
            head.push_str(&format!(
                "{n}: {}\r\n",
                String::from_utf8_lossy(v.as_bytes())
            ));
        }
        let (tx, lines) = mpsc::channel();
        let dropped = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&dropped);
        let mut body = BufReader::new(response.into_body().into_reader());
        thread::spawn(move || {
            let mut line = String::new();
            while !stop.load(Ordering::Relaxed) {
                line.clear();
                match body.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let text = line.trim_end_matches(['\r', '\n']).to_string();
                        if tx.send(text).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        SseStream {
            lines,
            block: Vec::new(),
            dropped,
            status: status.as_u16(),
            head,
        }
    }

    /// The next event or comment before `deadline`; `None` at the deadline or when
    /// the stream ended.
    pub fn next_until(&mut self, deadline: Instant) -> Option<Item> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.is_empty() => {
                    if !self.block.is_empty() {
                        let block = std::mem::take(&mut self.block);
                        return Some(parse(&block.join("\n")));
                    }
                }
                Ok(line) => self.block.push(line),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The next event (comments skipped) for which `want` holds, before `timeout`;
    /// panics at the deadline, naming what came instead.
    pub fn expect(
        &mut self,
        timeout: Duration,
        want: impl Fn(&str, &serde_json::Value) -> bool,
    ) -> (String, serde_json::Value) {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            match self.next_until(deadline) {
                Some(Item::Event { event, data, .. }) => {
                    let v: serde_json::Value = serde_json::from_str(&data)
                        .unwrap_or_else(|e| panic!("event data not JSON ({e}): {data}"));
                    if want(&event, &v) {
                        return (event, v);
                    }
                    seen.push((event, v));
                }
                Some(Item::Comment(_)) => {}
                None => panic!("the event never came; came instead: {seen:#?}"),
            }
        }
    }
}

/// One event block: its `event:`, `id:` and `data:` lines, or a comment.
fn parse(block: &str) -> Item {
    let (mut event, mut id, mut data) = (String::from("message"), None, Vec::new());
    let mut comment = None;
    for line in block.lines() {
        if let Some(c) = line.strip_prefix(':') {
            comment = Some(c.trim().to_string());
        } else if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
        }
    }
    match comment {
        Some(c) if data.is_empty() => Item::Comment(c),
        _ => Item::Event {
            event,
            id,
            data: data.join("\n"),
        },
    }
}

impl Drop for SseStream {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Relaxed);
    }
}
