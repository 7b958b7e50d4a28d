//! The TLS path does not allocate per PACKET_IN either: the learning switch behind a
//! TLS listener, an emulated switch behind a TLS relay (rustls client), under a
//! counting global allocator, as `no_alloc.rs` does for clear text.
//!
//! rustls allocates per TLS record (a record's ciphertext on the way out, its plaintext
//! on the way in), not per message, and the worker writes a turn's answers in one
//! write: the allocations of a burst, both ends of the channel and the relay counted
//! together, stay far below one per PACKET_IN.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use controller::config::{ClientAuth, CoreConfig, ListenEntry, TlsSettings};
use controller::controller::Controller;
use controller::host::AppHost;
use controller::services::Services;
use emu::{host, Emu, Spec};
use testkit::emu;
use testkit::tlskit;

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

/// Reads until the ECHO_REPLY with `ECHO_XID` into `buf` (reserved by the caller);
/// returns the number of messages read.
fn read_until_echo_reply(stream: &mut TcpStream, buf: &mut Vec<u8>) -> usize {
    let mut chunk = [0u8; 16 * 1024];
    let mut at = 0;
    let mut messages = 0;
    loop {
        let n = stream
            .read(&mut chunk)
            .expect("the relay keeps the connection");
        assert!(n > 0, "the connection was closed");
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

fn steady_state_allocations(pki: &tlskit::Pki, spec: Spec) -> (usize, usize) {
    let app = apps::by_name("learning_switch", &toml::Table::new()).unwrap();
    let pipeline = Arc::new(AppHost::build(vec![app], Services::new()).unwrap());
    let config = CoreConfig {
        listen: vec![ListenEntry {
            addr: "127.0.0.1:0".parse().unwrap(),
            tls: Some(TlsSettings {
                cert: pki.dir.join("ctl-cert.pem"),
                key: pki.dir.join("ctl-key.pem"),
                client_ca: Some(pki.dir.join("ca.pem")),
                client_auth: ClientAuth::Required,
            }),
        }],
        workers: 1,
        ..CoreConfig::default()
    };
    let handle = Controller::start(&config.net(), Arc::clone(&pipeline.dispatcher)).unwrap();
    let switch = pki.ca.issue("switch", false, false);
    let (relay, _) = tlskit::relay(handle.local_addrs()[0], pki.client(Some(&switch), None));
    let t = Duration::from_secs(10);
    let mut sw = Emu::connect_and_handshake(relay, spec, t).unwrap();
    let (a, b, stranger) = (host(0xa), host(0xb), host(0xc));

    let mut warm = Vec::new();
    let mut burst = Vec::new();
    for i in 0..BURST {
        let (in_port, frame) = match i % 2 {
            0 => (1, emu::frame(a, b)),
            _ => (2, emu::frame(b, if i % 4 == 1 { a } else { stranger })),
        };
        let bytes = sw
            .packet_in(in_port, &frame, Some(i as u32))
            .to_bytes(i as u32)
            .unwrap();
        if i < 256 {
            warm.extend_from_slice(&bytes);
        }
        burst.extend_from_slice(&bytes);
    }
    let version = warm[0];
    let echo = [
        &[version, openflow::msg_type::ECHO_REQUEST, 0, 8][..],
        &ECHO_XID.to_be_bytes(),
    ]
    .concat();
    warm.extend_from_slice(&echo);
    burst.extend_from_slice(&echo);

    let mut reader = sw.writer();
    reader.set_read_timeout(Some(t)).unwrap();
    let mut replies = Vec::with_capacity(64 << 20);
    // Twice: every buffer on the path (the sessions' included) has grown.
    for _ in 0..2 {
        sw.send_raw(&warm).unwrap();
        read_until_echo_reply(&mut reader, &mut replies);
        replies.clear();
    }

    let before = ALLOCATIONS.load(Ordering::SeqCst);
    sw.send_raw(&burst).unwrap();
    let messages = read_until_echo_reply(&mut reader, &mut replies);
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;

    handle.shutdown();
    (allocations, messages)
}

#[test]
fn the_tls_path_does_not_allocate_per_packet_in() {
    let pki = tlskit::Pki::new("no-alloc");
    for spec in [Spec::v10(1), Spec::v13(2)] {
        let version = spec.hello_version;
        let (allocations, messages) = steady_state_allocations(&pki, spec);
        println!(
            "version {version} over TLS: {BURST} PACKET_INs, {messages} messages back, {allocations} allocations"
        );
        assert!(messages > BURST, "{messages} replies to {BURST} PACKET_INs");
        // Per record, not per message: a record carries many messages.
        assert!(
            allocations < BURST / 4,
            "{allocations} allocations for {BURST} PACKET_INs"
        );
    }
}
