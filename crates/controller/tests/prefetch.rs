//! The PACKET_IN prefetch hint (`Builder::prefetch_packet_in`), over real TCP: the
//! PACKET_INs already in the read buffer are hinted up to `PREFETCH_AHEAD` ahead of the
//! one handled, each once, and a hint never changes which packets are handled or in
//! what order.

mod harness;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use controller::app::{App, Builder, Flow, Order};
use emu::{host, Emu, Spec};
use harness::{test_config, Running, T};
use testkit::emu;

/// What the app saw, in order: ('p', buffer_id) for a hint, ('h', buffer_id) for a
/// PACKET_IN handled.
type Log = Arc<Mutex<Vec<(char, u32)>>>;

struct Hinted(Log);

impl App for Hinted {
    type State = ();
    fn name(&self) -> &'static str {
        "hinted"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), |a, _, _, p| {
            a.0.lock().unwrap().push(('h', p.buffer_id().unwrap_or(0)));
            Flow::Stop
        });
        b.prefetch_packet_in(|a, _, p| {
            a.0.lock().unwrap().push(('p', p.buffer_id().unwrap_or(0)));
        });
    }
}

#[test]
fn packet_ins_are_hinted_up_to_prefetch_ahead_before_they_are_handled() {
    let log = Log::default();
    let ctl = Running::start(&test_config(), vec![Box::new(Hinted(Arc::clone(&log)))]);
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v10(0x9f), T).unwrap();
    // 60 PACKET_INs (buffer ids 1..=60, ~5 KB) in one write: most reads hold several.
    let mut burst = Vec::new();
    for id in 1..=60u32 {
        let m = sw.packet_in(1, &emu::frame(host(1), host(2)), Some(id));
        burst.extend_from_slice(&m.to_bytes(id).unwrap());
    }
    sw.send_raw(&burst).unwrap();
    let deadline = Instant::now() + T;
    let handled = |l: &[(char, u32)]| l.iter().filter(|e| e.0 == 'h').count();
    while handled(&log.lock().unwrap()) < 60 {
        assert!(
            Instant::now() < deadline,
            "60 PACKET_INs not handled: {:?}",
            log
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let l = log.lock().unwrap().clone();
    let order: Vec<u32> = l.iter().filter(|e| e.0 == 'h').map(|e| e.1).collect();
    assert_eq!(
        order,
        (1..=60).collect::<Vec<_>>(),
        "handled once each, in order"
    );
    let hints: Vec<usize> = (0..l.len()).filter(|&i| l[i].0 == 'p').collect();
    assert!(
        !hints.is_empty(),
        "no hint for 60 PACKET_INs in one write: {l:?}"
    );
    let ahead = controller::conn::PREFETCH_AHEAD as u32;
    let mut hinted = std::collections::HashSet::new();
    let mut deepest = 0;
    for i in hints {
        let k = l[i].1;
        assert!(hinted.insert(k), "{k} hinted twice: {l:?}");
        // Hinted while an earlier one, at most PREFETCH_AHEAD before it, is next.
        let next = l[i..].iter().find(|e| e.0 == 'h').map(|e| e.1);
        let j = next.unwrap_or_else(|| panic!("{k} hinted after the last: {l:?}"));
        assert!(
            j < k && k - j <= ahead,
            "the hint for {k} comes while {j} is next: {l:?}"
        );
        deepest = deepest.max(k - j);
    }
    assert_eq!(deepest, ahead, "hints reach PREFETCH_AHEAD ahead: {l:?}");
}
