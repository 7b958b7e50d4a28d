//! A Server-Sent Events client for the API tests: one GET kept open, its chunked body
//! decoded as it comes, cut into events.
#![allow(dead_code)] // each test file uses a different part of it

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

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
    s: TcpStream,
    /// Bytes read, not yet dechunked.
    raw: Vec<u8>,
    /// The body, dechunked, not yet cut into events.
    body: Vec<u8>,
    /// The response's status and head.
    pub status: u16,
    pub head: String,
}

impl SseStream {
    /// GETs `path` with `headers` and reads the head.
    pub fn open(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> SseStream {
        let mut s = TcpStream::connect(addr).expect("connect to the API");
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut head =
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n");
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).unwrap();
        let mut st = SseStream {
            s,
            raw: Vec::new(),
            body: Vec::new(),
            status: 0,
            head: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(end) = st.raw.windows(4).position(|w| w == b"\r\n\r\n") {
                st.head = String::from_utf8_lossy(&st.raw[..end]).into_owned();
                st.raw.drain(..end + 4);
                st.status = st
                    .head
                    .split(' ')
                    .nth(1)
                    .and_then(|c| c.parse().ok())
                    .expect("a status line");
                return st;
            }
            assert!(Instant::now() < deadline, "no response head to GET {path}");
            assert!(st.fill(), "closed before the head of GET {path}");
        }
    }

    /// Reads what is there (up to 100 ms); false once the server closed.
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        match self.s.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                self.raw.extend_from_slice(&chunk[..n]);
                true
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => true,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => false,
            Err(e) => panic!("reading the event stream: {e}"),
        }
    }

    /// Moves whole chunks from `raw` to `body`; true at the last chunk.
    fn dechunk(&mut self) -> bool {
        loop {
            let Some(eol) = self.raw.windows(2).position(|w| w == b"\r\n") else {
                return false;
            };
            let size = std::str::from_utf8(&self.raw[..eol])
                .ok()
                .and_then(|t| usize::from_str_radix(t.trim(), 16).ok())
                .expect("a hex chunk size");
            if size == 0 {
                return true;
            }
            if self.raw.len() < eol + 2 + size + 2 {
                return false;
            }
            self.body
                .extend_from_slice(&self.raw[eol + 2..eol + 2 + size]);
            self.raw.drain(..eol + 2 + size + 2);
        }
    }

    /// The next event or comment before `deadline`; `None` at the deadline or when
    /// the stream ended.
    pub fn next_until(&mut self, deadline: Instant) -> Option<Item> {
        loop {
            let ended = self.dechunk();
            if let Some(end) = self.body.windows(2).position(|w| w == b"\n\n") {
                let block = String::from_utf8_lossy(&self.body[..end]).into_owned();
                self.body.drain(..end + 2);
                return Some(parse(&block));
            }
            if ended || Instant::now() >= deadline || !self.fill() {
                return None;
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
