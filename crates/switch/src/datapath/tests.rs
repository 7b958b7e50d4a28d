//! The AF_XDP port on veth pairs inside a fresh network namespace, against AF_PACKET
//! ports ([`afpacket::Port`], tested in its own crate) on the other end (root and
//! iproute2 needed; the namespace, and the veths with it, are deleted when each test
//! ends).

use std::time::{Duration, Instant};

use afpacket::netns::Netns;
use afpacket::{wait_readable, Port};

use crate::agent::PortIo;

/// The EtherType of the tests' frames (IEEE local experimental), so frames the stack
/// might send on its own are never counted.
const TEST_ETHERTYPE: [u8; 2] = [0x88, 0xb5];

/// A namespace with the veth pair `a` <-> `b`, both up.
fn veth_pair() -> Netns {
    let ns = Netns::new("pdp-test").expect("ip netns add (root and iproute2 needed)");
    ns.ip("link add name a type veth peer name b\n\
         link set dev a address 02:00:00:00:00:0a up\n\
         link set dev b address 02:00:00:00:00:0b up\n")
        .expect("veth pair");
    ns
}

/// A test frame of `len` bytes from `a` to `b`, numbered `seq`.
fn frame(seq: u32, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x0b]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x0a]);
    f[12..14].copy_from_slice(&TEST_ETHERTYPE);
    f[14..18].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in f.iter_mut().enumerate().skip(18) {
        *b = (i as u32).wrapping_mul(31).wrapping_add(seq) as u8;
    }
    f
}

fn is_test_frame(f: &[u8]) -> bool {
    f.len() >= 18 && f[12..14] == TEST_ETHERTYPE
}

/// Receives test frames on `port` (either kind) until `want` of them came or `timeout`
/// passed.
fn recv_test_frames<P: PortIo>(port: &mut P, want: usize, timeout: Duration) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + timeout;
    let mut got = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        wait_readable(port.raw_fd(), 5);
        port.recv_batch(256, |f| {
            if is_test_frame(f) {
                got.push(f.to_vec());
            }
        });
    }
    got
}

/// Sends `frames` on `port` (either kind), flushing as often as its queue fills, then
/// until the kernel has taken them all (an AF_XDP port's transmit ring), as the
/// switch's loop does.
fn send_all<P: PortIo>(port: &mut P, frames: &[Vec<u8>]) {
    for f in frames {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !port.send(f) {
            port.flush().unwrap();
            assert!(Instant::now() < deadline, "transmit ring stuck");
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    port.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while port.tx_in_flight() {
        assert!(
            Instant::now() < deadline,
            "frames stuck on the transmit ring"
        );
        std::thread::sleep(Duration::from_micros(100));
        port.flush().unwrap();
    }
}

/// The AF_XDP port ([`super::xsk::XdpPort`]) against an AF_PACKET port on the other end.
mod af_xdp {
    use super::*;
    use crate::datapath::xdp::XdpMode;
    use crate::datapath::xsk::XdpPort;
    use afpacket::Sched;

    /// 5,000 frames of 60 to 1,514 bytes each way, in chunks of 500: more than the port
    /// has frames for receiving (2,048) or sending (2,048), so each is used again.
    #[test]
    fn frames_arrive_intact_and_in_order_both_ways() {
        for mode in [XdpMode::Native, XdpMode::Generic] {
            let ns = veth_pair();
            ns.enter(|| {
                let mut a = XdpPort::open("a", mode).unwrap();
                let mut b = Port::open("b").unwrap();
                assert_eq!(a.mac(), openflow::MacAddr([2, 0, 0, 0, 0, 0x0a]));
                assert!(a.link_up());
                let frames: Vec<Vec<u8>> = (0..5000)
                    .map(|i| frame(i, 60 + (i as usize * 7) % 1455))
                    .collect();
                for chunk in frames.chunks(500) {
                    send_all(&mut b, chunk);
                    let got = recv_test_frames(&mut a, chunk.len(), Duration::from_secs(5));
                    assert!(
                        got == chunk,
                        "{mode:?}: b -> a: {} of {}",
                        got.len(),
                        chunk.len()
                    );
                }
                for chunk in frames.chunks(500) {
                    send_all(&mut a, chunk);
                    let got = recv_test_frames(&mut b, chunk.len(), Duration::from_secs(5));
                    assert!(
                        got == chunk,
                        "{mode:?}: a -> b: {} of {}",
                        got.len(),
                        chunk.len()
                    );
                }
                let c = a.counters();
                assert!(c.rx_packets >= 5000, "{c:?}");
                assert_eq!(c.tx_packets, 5000, "{c:?}");
                assert_eq!((c.tx_dropped, c.tx_errors), (0, 0), "{c:?}");
            })
            .unwrap();
        }
    }

    #[test]
    fn oversized_frames_unknown_interfaces_and_a_second_port_are_refused() {
        let ns = veth_pair();
        ns.enter(|| {
            let e = XdpPort::open("pdp-none0", XdpMode::Native).err().unwrap();
            assert!(e.to_string().contains("pdp-none0"), "{e}");
            let mut a = XdpPort::open("a", XdpMode::Native).unwrap();
            let e = XdpPort::open("a", XdpMode::Native).err().unwrap();
            assert!(e.to_string().contains("another XDP program"), "{e}");
            assert!(!a.send(&vec![0u8; a.mtu() + 19]));
            assert!(!a.send(&[0u8; 13]));
            assert_eq!(a.counters().tx_errors, 2);
            assert_eq!(a.tx_pending(), 0);
        })
        .unwrap();
    }

    /// A tagged frame reaches an AF_XDP port with its tag in place (XDP sees the frame
    /// before the stack takes the tag out). A tag the sender left to the veth's VLAN
    /// offload, beside the frame, is not covered: this kernel has neither VLAN
    /// interfaces (8021q) nor tc's vlan action to send one.
    #[test]
    fn a_vlan_tag_arrives_in_the_frame() {
        for mode in [XdpMode::Native, XdpMode::Generic] {
            let ns = veth_pair();
            ns.enter(|| {
                let mut a = XdpPort::open("a", mode).unwrap();
                let mut b = Port::open("b").unwrap();
                let mut tagged = frame(7, 68);
                // dst, src, 802.1Q TPID, PCP 5 + VID 100, then the inner EtherType.
                tagged.splice(12..12, [0x81, 0x00, 0xa0, 0x64]);
                tagged.truncate(68);
                send_all(&mut b, std::slice::from_ref(&tagged));
                assert_eq!(
                    recv_vlan_frames(&mut a, 1),
                    vec![tagged.clone()],
                    "{mode:?}"
                );
                // And out of the AF_XDP port, tag and all.
                send_all(&mut a, std::slice::from_ref(&tagged));
                assert_eq!(recv_vlan_frames(&mut b, 1), vec![tagged], "{mode:?}");
            })
            .unwrap();
        }
    }

    /// Frames sent while the link is down do not keep the loop busy. With the peer
    /// down the kernel drops them; with the port's own interface down they wait on
    /// the transmit ring (the port cannot take them back), the failure is reported
    /// once and the port stops counting them as in flight. Once the interface is up,
    /// frames go through again.
    #[test]
    fn frames_sent_while_the_link_is_down_do_not_stay_in_flight() {
        let ns = veth_pair();
        let nsr = &ns;
        ns.enter(move || {
            let mut a = XdpPort::open("a", XdpMode::Native).unwrap();
            let frames: Vec<Vec<u8>> = (0..100).map(|i| frame(i, 64)).collect();
            for down in ["b", "a"] {
                nsr.ip(&format!("link set dev {down} down\n")).unwrap();
                for f in &frames {
                    assert!(a.send(f));
                }
                let mut errors = 0;
                for _ in 0..20 {
                    errors += usize::from(a.flush().is_err());
                    std::thread::sleep(Duration::from_millis(1));
                }
                assert!(
                    !PortIo::tx_in_flight(&a),
                    "{down} down: frames still in flight"
                );
                if down == "a" {
                    assert_eq!(errors, 1, "the failure is reported once");
                    assert!(a.stalled());
                    assert_eq!(a.tx_in_flight(), frames.len());
                } else {
                    assert_eq!(a.tx_in_flight(), 0, "dropped by the kernel");
                }
                nsr.ip(&format!("link set dev {down} up\n")).unwrap();
            }
            let deadline = Instant::now() + Duration::from_secs(2);
            while !a.link_up() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            let mut b = Port::open("b").unwrap();
            let after: Vec<Vec<u8>> = (1000..1010).map(|i| frame(i, 64)).collect();
            send_all(&mut a, &after);
            assert!(!a.stalled());
            // The frames that waited go first, then these.
            let got = recv_test_frames(&mut b, frames.len() + after.len(), Duration::from_secs(2));
            assert_eq!(got[got.len() - after.len()..], after[..]);
        })
        .unwrap();
    }

    /// Tagged test frames received on `port` within 2 s, at most `want`.
    fn recv_vlan_frames<P: PortIo>(port: &mut P, want: usize) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut got = Vec::new();
        while got.len() < want && Instant::now() < deadline {
            wait_readable(port.raw_fd(), 5);
            port.recv_batch(16, |f| {
                if f.len() >= 18 && f[16..18] == TEST_ETHERTYPE {
                    got.push(f.to_vec());
                }
            });
        }
        got
    }

    /// A veth's NAPI made threaded and pinned (in this namespace: a thread that entered
    /// another one still sees this one's sysfs).
    #[test]
    fn a_veths_napi_thread_is_made_threaded_pinned_and_real_time_then_put_back() {
        struct Veth(String);
        impl Drop for Veth {
            fn drop(&mut self) {
                let _ = std::process::Command::new("ip")
                    .args(["link", "del", &self.0])
                    .status();
            }
        }
        let id = std::process::id() % 100_000;
        let (a, b) = (format!("pxn{id}a"), format!("pxn{id}b"));
        let ok = std::process::Command::new("ip")
            .args(["link", "add", &a, "type", "veth", "peer", "name", &b])
            .status()
            .unwrap()
            .success();
        assert!(ok, "ip link add (root needed)");
        let _veth = Veth(a.clone());
        for i in [&a, &b] {
            let up = std::process::Command::new("ip")
                .args(["link", "set", i, "up"])
                .status()
                .unwrap();
            assert!(up.success());
        }
        let threaded = || {
            std::fs::read_to_string(format!("/sys/class/net/{a}/threaded"))
                .unwrap()
                .trim()
                .to_string()
        };
        assert_eq!(threaded(), "0", "a new veth's NAPI is not threaded");
        let mut port = XdpPort::open(&a, XdpMode::Native).unwrap();
        let pid = port.napi_threaded(&[0]).unwrap();
        assert_eq!(threaded(), "1");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap();
        assert_eq!(cpus.trim(), "0", "{status}");
        let before = Sched::of(pid).unwrap();
        assert_eq!(before.policy, libc::SCHED_OTHER);
        port.napi_realtime(7).unwrap();
        assert_eq!(Sched::of(pid).unwrap(), Sched::fifo(7));
        drop(port);
        assert_eq!(
            threaded(),
            "0",
            "the port puts the interface's setting back"
        );
        // Its thread too, if it is still there.
        if let Ok(now) = Sched::of(pid) {
            assert_eq!(now, before);
        }
    }
}
