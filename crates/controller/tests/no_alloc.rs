//! No heap allocation per PACKET_IN on the learning-switch path in steady state, end to
//! end: a real controller (admission, a worker, the pipeline, the learning switch) and an
//! emulated switch over loopback TCP, under a counting global allocator.
//!
//! After a warm-up that teaches the switch both hosts, a burst of pre-encoded
//! PACKET_INs (half to a known host: FLOW_MOD + PACKET_OUT; half to an unknown one:
//! flood) is written in one go, followed by an ECHO_REQUEST; the reader (which reads into
//! a buffer reserved up front) stops at the ECHO_REPLY, which the worker sends after it
//! has handled every PACKET_IN before it. Allocations in the whole process during the
//! burst must not grow with the number of packets. No tracing subscriber is installed,
//! as at the default log level no line is written per packet.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use controller::config::CoreConfig;
use controller::controller::Controller;
use controller::host::AppHost;
use controller::services::Services;
use emu::{host, Emu, Spec};
use testkit::emu;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const BURST: usize = 4000;
const ECHO_XID: u32 = 0x0e0e_0e0e;

/// Reads until the ECHO_REPLY with `ECHO_XID`, into `buf` (reserved by the caller, so
/// reading allocates nothing); returns the number of messages read.
fn read_until_echo_reply(stream: &mut TcpStream, buf: &mut Vec<u8>) -> usize {
    let mut chunk = [0u8; 16 * 1024];
    let mut at = 0;
    let mut messages = 0;
    loop {
        let n = stream
            .read(&mut chunk)
            .expect("the controller keeps the connection");
        assert!(n > 0, "the controller closed the connection");
        assert!(
            buf.len() + n <= buf.capacity(),
            "reserve more for the replies"
        );
        buf.extend_from_slice(&chunk[..n]);
        while let Ok(Some(len)) = openflow::frame_len(&buf[at..]) {
            let frame = &buf[at..at + len];
            messages += 1;
            if frame[1] == openflow::msg_type::ECHO_REPLY && frame[4..8] == ECHO_XID.to_be_bytes() {
                return messages;
            }
            at += len;
        }
    }
}

fn steady_state_allocations(spec: Spec) -> (usize, usize) {
    let app = apps::by_name("learning_switch", &toml::Table::new()).unwrap();
    let pipeline = Arc::new(AppHost::build(vec![app], Services::new()).unwrap());
    let config = CoreConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        ..CoreConfig::default()
    };
    let handle = Controller::start(&config.net(), Arc::clone(&pipeline.dispatcher)).unwrap();
    let t = Duration::from_secs(10);
    let mut sw = Emu::connect_and_handshake(handle.local_addrs()[0], spec, t).unwrap();
    let (a, b, stranger) = (host(0xa), host(0xb), host(0xc));

    // Warm-up: both hosts learned, every buffer the path uses has grown once.
    let mut warm = Vec::new();
    let mut burst = Vec::new();
    for i in 0..BURST {
        let (in_port, frame) = match i % 2 {
            0 => (1, emu::frame(a, b)),
            _ => (2, emu::frame(b, if i % 4 == 1 { a } else { stranger })),
        };
        let msg = sw.packet_in(in_port, &frame, Some(i as u32));
        let bytes = msg.to_bytes(i as u32).unwrap();
        if i < 64 {
            warm.extend_from_slice(&bytes);
        }
        burst.extend_from_slice(&bytes);
    }
    let echo = |version: u8| {
        let mut m = vec![version, openflow::msg_type::ECHO_REQUEST, 0, 8];
        m.extend_from_slice(&ECHO_XID.to_be_bytes());
        m
    };
    let version = warm[0];
    warm.extend_from_slice(&echo(version));
    burst.extend_from_slice(&echo(version));

    let mut reader = sw.writer();
    reader.set_read_timeout(Some(t)).unwrap();
    let mut replies = Vec::with_capacity(64 << 20);
    sw.send_raw(&warm).unwrap();
    read_until_echo_reply(&mut reader, &mut replies);
    replies.clear();

    let before = ALLOCATIONS.load(Ordering::SeqCst);
    sw.send_raw(&burst).unwrap();
    let messages = read_until_echo_reply(&mut reader, &mut replies);
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;

    handle.shutdown();
    (allocations, messages)
}

#[test]
fn learning_switch_path_does_not_allocate_per_packet_in() {
    for spec in [Spec::v10(1), Spec::v13(2)] {
        let version = spec.hello_version;
        let (allocations, messages) = steady_state_allocations(spec);
        println!(
            "version {version}: {BURST} PACKET_INs, {messages} messages back, {allocations} allocations"
        );
        // Known destinations get a FLOW_MOD (and the buffered packet rides on it or a
        // PACKET_OUT), unknown ones a flood: at least one reply per PACKET_IN.
        assert!(messages > BURST, "{messages} replies to {BURST} PACKET_INs");
        // Whatever allocates here (a periodic counters snapshot) does not scale with the
        // packets: far fewer allocations than packets.
        assert!(
            allocations < BURST / 100,
            "{allocations} allocations for {BURST} PACKET_INs"
        );
    }
}
