//! What a switch sends once ready, and how answers retire it: PACKET_INs in a window or
//! keeping the socket full, timeouts, the learning phase's announcements, port
//! statistics and relayed LLDP for a wired network, and the socket writes.

use std::io::{ErrorKind, Read, Write};
use std::time::Instant;

use super::*;

impl<S: Read + Write> Switch<S> {
    /// Wired: sends frame `frame` to the controller as a PACKET_IN from `in_port` (an
    /// LLDP frame another switch sent out of the port wired to it). Not on the hot
    /// path: encoded each time.
    pub fn inject(&mut self, in_port: u32, frame: &[u8]) {
        if self.state != State::Ready {
            return;
        }
        // 1.3: sent by the flow that sends discovery frames to the controller.
        let reason = of13::PacketInReason::Action;
        let msg = packet_in(self.behaviour.version, in_port, reason, frame.to_vec());
        self.wbuf.extend_from_slice(&encode(&msg));
    }

    /// Wired: answers a port statistics request. Port `p` of switch `d` sends and
    /// receives at a steady rate of its own, between 0 and 90 % of its 10 Gbit/s (a
    /// hash of `d` and `p`), so a UI colours its links with a spread of utilisations.
    pub(super) fn port_stats(&mut self, xid: u32) {
        let secs = self.born.elapsed().as_secs_f64();
        let counters = |p: u32, salt: u64| {
            let mut h = self.dpid.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (u64::from(p) << 32) ^ salt;
            h ^= h >> 29;
            h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            h ^= h >> 32;
            let share = (h % 1000) as f64 / 1000.0 * 0.9;
            (share * 10e9 / 8.0 * secs) as u64
        };
        let stats = |p: u32| openflow::common::PortCounters {
            rx_bytes: counters(p, 1),
            tx_bytes: counters(p, 2),
            rx_packets: counters(p, 1) / 1000,
            tx_packets: counters(p, 2) / 1000,
            ..Default::default()
        };
        let ports = 1..=self.behaviour.ports;
        let msg = match self.behaviour.version {
            Version::V1_0 => Message::V10(of10::Message::StatsReply(of10::StatsReply {
                flags: 0,
                body: of10::stats::StatsReplyBody::Port {
                    stats: ports
                        .map(|p| of10::stats::PortStats {
                            port_no: p as u16,
                            counters: stats(p),
                        })
                        .collect(),
                },
            })),
            Version::V1_3 => Message::V13(of13::Message::MultipartReply(MultipartReply {
                flags: 0,
                body: MultipartReplyBody::PortStats {
                    stats: ports
                        .map(|p| of13::multipart::PortStats {
                            port_no: p,
                            counters: stats(p),
                            duration_sec: secs as u32,
                            duration_nsec: 0,
                        })
                        .collect(),
                },
            })),
        };
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(&encode(&msg));
        patch_xid(&mut self.wbuf[at..], xid);
    }

    pub(super) fn reply(&mut self, which: Reply, xid: u32) {
        let bytes = match which {
            Reply::Features => &self.replies.features,
            Reply::GetConfig => &self.replies.get_config,
            Reply::Barrier => &self.replies.barrier,
            Reply::PortDesc => match &self.replies.port_desc {
                Some(b) => b,
                None => return,
            },
        };
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(bytes);
        patch_xid(&mut self.wbuf[at..], xid);
    }

    /// Unbounded mode: PACKET_IN `seq` was answered; counted if it is among the last
    /// [`RING`] sent and not answered before.
    #[inline]
    pub(super) fn retire(&mut self, seq: u32) {
        let offset = seq.wrapping_sub(FIRST_SEQ);
        if offset >= SPAN {
            return;
        }
        // How many PACKET_INs were queued after it (mod SPAN).
        let age = (self.next as u32).wrapping_sub(1).wrapping_sub(offset) & (SPAN - 1);
        if age >= RING || self.next == 0 {
            return;
        }
        let bit = offset & (RING - 1);
        let word = &mut self.outstanding[(bit / 64) as usize];
        let mask = 1u64 << (bit % 64);
        if *word & mask != 0 {
            *word &= !mask;
            self.totals.answered += 1;
        }
    }

    /// Windowed mode: a FLOW_MOD or PACKET_OUT came in: retire the PACKET_IN it answers.
    pub(super) fn answer(&mut self, m: &[u8], recording: bool, now: Instant) {
        let idx = match self.behaviour.counting {
            Counting::Cbench => self.in_flight.iter().position(|p| !p.answered),
            Counting::PerPacketIn => {
                let front = self.in_flight.front().map(|p| p.seq);
                answered_seq(m).and_then(|seq| {
                    front
                        .map(|f| (seq.wrapping_sub(f) & (SPAN - 1)) as usize)
                        .filter(|&i| i < self.in_flight.len() && !self.in_flight[i].answered)
                })
            }
        };
        let Some(i) = idx else {
            return;
        };
        let p = &mut self.in_flight[i];
        p.answered = true;
        self.unanswered -= 1;
        self.totals.answered += 1;
        if recording && self.behaviour.record_latency {
            let ns = now.duration_since(p.sent).as_nanos();
            self.samples.push(ns.min(u128::from(u32::MAX)) as u32);
        }
        while self.in_flight.front().is_some_and(|p| p.answered) {
            self.in_flight.pop_front();
        }
    }

    /// Gives up PACKET_INs unanswered for the response timeout.
    pub(super) fn expire(&mut self, now: Instant) {
        while let Some(p) = self.in_flight.front() {
            if p.answered {
                self.in_flight.pop_front();
            } else if now.duration_since(p.sent) >= self.behaviour.response_timeout {
                self.in_flight.pop_front();
                self.unanswered -= 1;
                self.totals.timeouts += 1;
            } else {
                break;
            }
        }
    }

    /// Queues the next PACKET_IN; returns its sequence number.
    #[inline]
    pub(super) fn queue_packet_in(&mut self) -> u32 {
        let b = &self.behaviour;
        let seq = seq_of(self.next);
        self.next += 1;
        let src = self.next_mac;
        self.next_mac = if src + 1 >= b.macs { 0 } else { src + 1 };
        let buffer_id = if b.buffered { seq } else { NO_BUFFER };
        self.template
            .append_from_host(&mut self.wbuf, seq, buffer_id, self.dpid, b.macs, src);
        self.totals.packet_ins += 1;
        seq
    }

    /// Unbounded mode: queues the next PACKET_IN and marks it unanswered.
    #[inline]
    pub(super) fn queue_outstanding(&mut self) {
        let seq = self.queue_packet_in();
        let bit = (seq.wrapping_sub(FIRST_SEQ) & (RING - 1)) as usize;
        self.outstanding[bit / 64] |= 1u64 << (bit % 64);
    }

    /// Windowed mode: queues PACKET_INs until the window is full (one write carries
    /// them all).
    pub(super) fn top_up(&mut self, now: Instant) {
        let window = self.behaviour.window;
        while self.unanswered < window
            && self.in_flight.len() < window * 4
            && self.wbuf.len() - self.wpos < MAX_PENDING_OUT
        {
            let seq = self.queue_packet_in();
            self.in_flight.push_back(Pending {
                seq,
                sent: now,
                answered: false,
            });
            self.unanswered += 1;
        }
    }

    /// Unbounded mode (cbench's throughput mode): fill the output buffer with
    /// PACKET_INs and write it, again and again while the socket takes it all (up to a
    /// per-turn cap).
    pub(super) fn fill(&mut self) {
        let mut written = 0;
        let len = self.template.len();
        while self.state == State::Ready && self.writable && written < MAX_WRITE_PER_TURN {
            let n = MAX_PENDING_OUT.saturating_sub(self.wbuf.len() - self.wpos) / len;
            for _ in 0..n {
                self.queue_outstanding();
            }
            let pending = self.wbuf.len() - self.wpos;
            self.flush();
            written += pending - (self.wbuf.len() - self.wpos);
            if self.wants_write() {
                break;
            }
        }
    }

    /// The learning phase: queues announcements (fill and write, as in [`Self::fill`]),
    /// then the ECHO_REQUEST that closes them.
    pub(super) fn announce(&mut self) {
        let macs = self.behaviour.macs;
        let mut written = 0;
        let len = self.template.len();
        loop {
            if self.next_announce < macs {
                let pending = self.wbuf.len() - self.wpos;
                let n = (MAX_PENDING_OUT.saturating_sub(pending) / len) as u32;
                let end = macs.min(self.next_announce + n);
                for i in self.next_announce..end {
                    self.template
                        .append_announcement(&mut self.wbuf, self.dpid, macs, i);
                }
                self.totals.announced += u64::from(end - self.next_announce);
                self.next_announce = end;
                if end == macs {
                    let v = self.behaviour.version.wire();
                    self.wbuf.extend_from_slice(&[v, msg::ECHO_REQUEST, 0, 8]);
                    self.wbuf.extend_from_slice(&LEARN_DONE_XID.to_be_bytes());
                }
            }
            let pending = self.wbuf.len() - self.wpos;
            self.flush();
            written += pending - (self.wbuf.len() - self.wpos);
            if self.next_announce >= macs
                || !self.writable
                || self.wants_write()
                || written >= MAX_WRITE_PER_TURN
                || self.state != State::Ready
            {
                break;
            }
        }
    }

    pub(super) fn flush(&mut self) {
        // A transport with bytes of its own waiting (TLS records the socket did not
        // take) writes them first; a plain socket has none.
        if self.state != State::Closed {
            if let Err(e) = self.stream.flush() {
                match e.kind() {
                    ErrorKind::WouldBlock | ErrorKind::NotConnected | ErrorKind::Interrupted => {}
                    _ => self.close(format!("write: {e}")),
                }
            }
        }
        while self.wpos < self.wbuf.len() && self.state != State::Closed {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => self.close("write: the connection accepts no more bytes".into()),
                Ok(n) => self.wpos += n,
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock | ErrorKind::NotConnected => {
                        self.writable = false;
                        break;
                    }
                    ErrorKind::Interrupted => {}
                    _ => self.close(format!("write: {e}")),
                },
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        } else if self.wpos >= MAX_PENDING_OUT {
            // Keep the buffer from growing: move what is left to the front.
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
    }
}
