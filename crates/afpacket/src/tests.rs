//! Ports on veth pairs inside a fresh network namespace (root and iproute2 needed; the
//! namespace, and the veths with it, are deleted when each test ends).

use std::time::{Duration, Instant};

use std::os::fd::AsRawFd;

use crate::netns::Netns;
use crate::{recv_batch_among, wait_readable, Port, PortConfig, RingVersion, TxMethod};

/// A port's receive ring and transmit method.
type Cfg = (RingVersion, TxMethod);

/// Every test runs on the default (V2 ring, sendmmsg) and on both transmit rings.
macro_rules! on_every_layout {
    ($($name:ident),* $(,)?) => {
        mod v2_sendmmsg {
            use super::{RingVersion, TxMethod};
            $(#[test] fn $name() { super::$name((RingVersion::V2, TxMethod::Sendmmsg)) })*
        }
        mod v2_ring {
            use super::{RingVersion, TxMethod};
            $(#[test] fn $name() { super::$name((RingVersion::V2, TxMethod::Ring)) })*
        }
        mod v3_ring {
            use super::{RingVersion, TxMethod};
            $(#[test] fn $name() { super::$name((RingVersion::V3, TxMethod::Ring)) })*
        }
    };
}

on_every_layout!(
    frames_are_forwarded_among_ports_straight_from_the_ring,
    a_port_opened_on_a_down_interface_works_once_it_is_up,
    a_deleted_interface_fails_sends_and_reads_nothing,
    a_frame_sent_on_one_end_arrives_intact_on_the_other,
    full_size_frames_arrive_intact_and_larger_ones_are_refused,
    a_batch_of_1000_frames_arrives_whole_and_in_order,
    a_port_does_not_receive_its_own_transmissions,
    a_vlan_tag_the_kernel_strips_is_put_back,
    link_down_and_up_are_seen,
    sending_on_a_down_interface_fails_and_drops_the_queue,
    the_port_is_promiscuous_while_open,
    a_full_receive_ring_counts_drops,
    unknown_interfaces_and_bad_sizes_are_errors,
    sending_and_receiving_allocate_nothing_per_frame,
    a_checksum_left_to_offload_is_completed,
);

fn open_v(v: Cfg, ifname: &str) -> Port {
    try_open(v, ifname).unwrap()
}

fn try_open(v: Cfg, ifname: &str) -> std::io::Result<Port> {
    Port::open_with(
        ifname,
        &PortConfig {
            version: v.0,
            tx: v.1,
            ..PortConfig::default()
        },
    )
}

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

/// Receives test frames on `port` until `want` of them came or `timeout` passed.
fn recv_test_frames(port: &mut Port, want: usize, timeout: Duration) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + timeout;
    let mut got = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        wait_readable(port.as_raw_fd(), 5);
        port.recv_batch(256, |f| {
            if is_test_frame(f) {
                got.push(f.to_vec());
            }
        });
    }
    got
}

/// Sends `frames` on `port`, flushing as often as its queue fills, as the switch's
/// loop does.
fn send_all(port: &mut Port, frames: &[Vec<u8>]) {
    for f in frames {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !port.send(f) {
            port.flush().unwrap();
            assert!(Instant::now() < deadline, "transmit ring stuck");
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    port.flush().unwrap();
}

fn a_frame_sent_on_one_end_arrives_intact_on_the_other(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        let mut a = open_v(v, "a");
        let mut b = open_v(v, "b");
        assert_eq!(a.name(), "a");
        assert_eq!(a.mac().0, [0x02, 0, 0, 0, 0, 0x0a]);
        assert_eq!(b.mac().0, [0x02, 0, 0, 0, 0, 0x0b]);
        assert_eq!(a.mtu(), 1500);

        let f = frame(1, 60);
        assert!(a.send(&f));
        a.flush().unwrap();
        let got = recv_test_frames(&mut b, 1, Duration::from_secs(2));
        assert_eq!(got, vec![f]);

        // And back.
        let g = frame(2, 100);
        send_all(&mut b, std::slice::from_ref(&g));
        assert_eq!(recv_test_frames(&mut a, 1, Duration::from_secs(2)), vec![g]);

        let ca = a.counters();
        assert_eq!((ca.tx_packets, ca.tx_bytes), (1, 60));
        assert_eq!((ca.rx_packets, ca.rx_bytes), (1, 100));
    })
    .unwrap();
}

fn full_size_frames_arrive_intact_and_larger_ones_are_refused(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        let mut a = open_v(v, "a");
        let mut b = open_v(v, "b");
        let frames: Vec<Vec<u8>> = (0..50).map(|i| frame(i, 1514)).collect();
        send_all(&mut a, &frames);
        assert_eq!(recv_test_frames(&mut b, 50, Duration::from_secs(2)), frames);

        // MTU 1500 + 14 + a VLAN tag's 4 is the most the interface takes.
        assert!(!a.send(&frame(99, 1519)));
        assert_eq!(a.counters().tx_errors, 1);
        assert!(!a.send(&[0u8; 10]), "shorter than an Ethernet header");
    })
    .unwrap();
}

fn a_batch_of_1000_frames_arrives_whole_and_in_order(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        let mut a = open_v(v, "a");
        let mut b = open_v(v, "b");
        let frames: Vec<Vec<u8>> = (0..1000)
            .map(|i| frame(i, 64 + (i as usize % 200)))
            .collect();
        // One flush for the whole batch: the default ring has 1,024 slots.
        for f in &frames {
            assert!(a.send(f));
        }
        assert_eq!(a.tx_pending(), 1000);
        a.flush().unwrap();
        assert_eq!(a.tx_pending(), 0);
        let got = recv_test_frames(&mut b, 1000, Duration::from_secs(5));
        assert_eq!(got.len(), 1000);
        assert!(got == frames, "frames reordered or altered");
        assert_eq!(a.counters().tx_packets, 1000);
        assert_eq!(b.counters().rx_dropped, 0);
    })
    .unwrap();
}

fn a_port_does_not_receive_its_own_transmissions(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        let mut a = open_v(v, "a");
        let mut b = open_v(v, "b");
        let frames: Vec<Vec<u8>> = (0..100).map(|i| frame(i, 64)).collect();
        send_all(&mut a, &frames);
        assert_eq!(
            recv_test_frames(&mut b, 100, Duration::from_secs(2)).len(),
            100
        );
        // Well past the retire timer: anything a could see has been handed over.
        std::thread::sleep(Duration::from_millis(20));
        let echoed = recv_test_frames(&mut a, 1, Duration::from_millis(50));
        assert!(
            echoed.is_empty(),
            "a read back {} of its own frames",
            echoed.len()
        );

        // Nor frames the interface sends for anyone else: here a plain packet socket
        // (through the queueing layer and its taps, which the ring's sends bypass).
        let f = frame(500, 64);
        plain_send("a", &f);
        assert_eq!(recv_test_frames(&mut b, 1, Duration::from_secs(2)), vec![f]);
        std::thread::sleep(Duration::from_millis(20));
        assert!(recv_test_frames(&mut a, 1, Duration::from_millis(50)).is_empty());
    })
    .unwrap();
}

/// Sends `frame` on `ifname` through an ordinary packet socket (no ring, no bypass).
fn plain_send(ifname: &str, frame: &[u8]) {
    let name = std::ffi::CString::new(ifname).unwrap();
    // SAFETY: plain socket calls on a descriptor closed at the end.
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
        assert!(fd >= 0);
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_ifindex = libc::if_nametoindex(name.as_ptr()) as i32;
        sll.sll_halen = 6;
        let rc = libc::sendto(
            fd,
            frame.as_ptr() as *const libc::c_void,
            frame.len(),
            0,
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        );
        libc::close(fd);
        assert_eq!(rc, frame.len() as isize);
    }
}

fn a_vlan_tag_the_kernel_strips_is_put_back(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        let mut a = open_v(v, "a");
        let mut b = open_v(v, "b");
        let mut tagged = frame(7, 68);
        // dst, src, 802.1Q TPID, PCP 5 + VID 100, then the inner EtherType.
        tagged.splice(12..12, [0x81, 0x00, 0xa0, 0x64]);
        tagged.truncate(68);
        send_all(&mut a, std::slice::from_ref(&tagged));
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut got = Vec::new();
        while got.is_empty() && Instant::now() < deadline {
            wait_readable(b.as_raw_fd(), 5);
            b.recv_batch(16, |f| {
                if f.len() >= 18 && f[16..18] == TEST_ETHERTYPE {
                    got.push(f.to_vec());
                }
            });
        }
        assert_eq!(got, vec![tagged]);
    })
    .unwrap();
}

fn link_down_and_up_are_seen(v: Cfg) {
    let ns = veth_pair();
    let a = ns.enter(|| open_v(v, "a")).unwrap();
    assert!(a.link_up());
    assert!(a.take_error().is_none());
    // The peer going down takes the carrier away.
    ns.ip("link set dev b down\n").unwrap();
    assert!(!a.link_up());
    ns.ip("link set dev b up\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !a.link_up() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(a.link_up());
    ns.ip("link set dev a down\n").unwrap();
    assert!(!a.link_up());
    // The kernel flagged it on the socket too, once.
    assert_eq!(
        a.take_error().and_then(|e| e.raw_os_error()),
        Some(libc::ENETDOWN)
    );
    assert!(a.take_error().is_none());
}

fn sending_on_a_down_interface_fails_and_drops_the_queue(v: Cfg) {
    let ns = veth_pair();
    let mut a = ns.enter(|| open_v(v, "a")).unwrap();
    ns.ip("link set dev a down\n").unwrap();
    assert!(a.send(&frame(1, 64)));
    assert!(a.flush().is_err());
    assert_eq!(a.tx_pending(), 0);
    let c = a.counters();
    assert_eq!((c.tx_packets, c.tx_dropped), (0, 1));
    // The stale frame is not sent when the link comes back.
    ns.ip("link set dev a up\n").unwrap();
    let mut b = ns.enter(|| open_v(v, "b")).unwrap();
    let f = frame(2, 64);
    send_all(&mut a, std::slice::from_ref(&f));
    assert_eq!(
        recv_test_frames(&mut b, 2, Duration::from_millis(300)),
        vec![f]
    );
}

fn the_port_is_promiscuous_while_open(v: Cfg) {
    let ns = veth_pair();
    // The membership raises the interface's promiscuity count (`ip -d link`), not the
    // PROMISC flag a user sets.
    let promisc = || {
        let out = std::process::Command::new("ip")
            .args(["-d", "-n", ns.name(), "link", "show", "dev", "a"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains("promiscuity 1")
    };
    assert!(!promisc());
    let a = ns.enter(|| open_v(v, "a")).unwrap();
    assert!(promisc());
    drop(a);
    assert!(!promisc());
}

fn a_full_receive_ring_counts_drops(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        let mut a = open_v(v, "a");
        // Two 4 KiB blocks: about 56 small frames (V3) or 4 slots (V2), then the
        // kernel drops.
        let small = PortConfig {
            version: v.0,
            tx: v.1,
            block_size: 4096,
            block_nr: 2,
            retire_ms: 1,
            tx_frames: 64,
        };
        let mut b = Port::open_with("b", &small).unwrap();
        let frames: Vec<Vec<u8>> = (0..500).map(|i| frame(i, 64)).collect();
        send_all(&mut a, &frames);
        std::thread::sleep(Duration::from_millis(20));
        let got = recv_test_frames(&mut b, 500, Duration::from_millis(100));
        let c = b.counters();
        assert!(got.len() < 500);
        assert_eq!(c.rx_dropped, 500 - got.len() as u64, "{c:?}");
    })
    .unwrap();
}

fn unknown_interfaces_and_bad_sizes_are_errors(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        assert!(try_open(v, "nosuch0").is_err());
        assert!(try_open(v, "").is_err());
        assert!(try_open(v, "lo").is_err(), "loopback is not Ethernet");
        let bad = PortConfig {
            version: v.0,
            tx: v.1,
            block_size: 1000,
            ..PortConfig::default()
        };
        assert!(Port::open_with("a", &bad).is_err());
    })
    .unwrap();
}

fn sending_and_receiving_allocate_nothing_per_frame(v: Cfg) {
    let ns = veth_pair();
    ns.enter(|| {
        let mut a = open_v(v, "a");
        let mut b = open_v(v, "b");
        let frames: Vec<Vec<u8>> = (0..100).map(|i| frame(i, 64)).collect();
        let mut received = 0usize;
        let mut bytes = 0usize;
        let info = allocation_counter::measure(|| {
            for _ in 0..20 {
                for f in &frames {
                    assert!(a.send(f));
                }
                a.flush().unwrap();
                let mut got = 0;
                let deadline = Instant::now() + Duration::from_secs(2);
                while got < frames.len() && Instant::now() < deadline {
                    wait_readable(b.as_raw_fd(), 5);
                    got += b.recv_batch(64, |f| {
                        if is_test_frame(f) {
                            bytes += f.len();
                        }
                    });
                }
                received += got;
                let _ = b.counters();
            }
        });
        assert!(received >= 2000, "received {received}");
        assert_eq!(bytes, 2000 * 64);
        assert_eq!(info.count_total, 0, "{info:?}");
    })
    .unwrap();
}

fn a_checksum_left_to_offload_is_completed(v: Cfg) {
    let ns = veth_pair();
    ns.ip("addr add 10.9.0.1/24 dev a\n\
         neigh add 10.9.0.2 lladdr 02:00:00:00:00:0b dev a nud permanent\n")
        .unwrap();
    ns.enter(|| {
        let mut b = open_v(v, "b");
        // The stack sends with checksum offload on (veth's default): only the
        // pseudo-header's sum is in the frame.
        let socket = std::net::UdpSocket::bind("10.9.0.1:0").unwrap();
        socket.send_to(&[0x5a; 101], "10.9.0.2:9").unwrap();
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut got = None;
        while got.is_none() && Instant::now() < deadline {
            wait_readable(b.as_raw_fd(), 5);
            b.recv_batch(16, |f| {
                if f.len() >= 42 && f[12..14] == [0x08, 0x00] && f[23] == 17 {
                    got = Some(f.to_vec());
                }
            });
        }
        let f = got.expect("the UDP datagram");
        // Verify from scratch: pseudo-header + UDP header and data sum to 0xffff.
        let udp = &f[34..34 + 8 + 101];
        let mut sum: u32 = 17 + udp.len() as u32;
        for c in f[26..34].chunks(2).chain(udp.chunks(2)) {
            sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(
            sum, 0xffff,
            "UDP checksum {:02x}{:02x} is wrong",
            f[40], f[41]
        );
    })
    .unwrap();
}

fn a_port_opened_on_a_down_interface_works_once_it_is_up(v: Cfg) {
    let ns = veth_pair();
    ns.ip("link set dev a down\n").unwrap();
    let mut a = ns.enter(|| open_v(v, "a")).unwrap();
    assert!(!a.link_up());
    ns.ip("link set dev a up\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !a.link_up() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut b = ns.enter(|| open_v(v, "b")).unwrap();
    let f = frame(1, 64);
    send_all(&mut a, std::slice::from_ref(&f));
    assert_eq!(
        recv_test_frames(&mut b, 1, Duration::from_secs(2)),
        vec![f.clone()]
    );
    send_all(&mut b, std::slice::from_ref(&f));
    assert_eq!(recv_test_frames(&mut a, 1, Duration::from_secs(2)), vec![f]);
}

fn a_deleted_interface_fails_sends_and_reads_nothing(v: Cfg) {
    let ns = veth_pair();
    let mut a = ns.enter(|| open_v(v, "a")).unwrap();
    ns.ip("link del dev a\n").unwrap();
    assert!(!a.link_up());
    assert!(a.send(&frame(1, 64)));
    assert!(a.flush().is_err());
    assert_eq!(a.tx_pending(), 0);
    assert_eq!(a.counters().tx_dropped, 1);
    assert_eq!(a.recv_batch(16, |_| {}), 0);
}

fn frames_are_forwarded_among_ports_straight_from_the_ring(v: Cfg) {
    // Two wires: a <-> b and c <-> d. The "switch" holds [a, c].
    let ns = veth_pair();
    ns.ip("link add name c type veth peer name d\nlink set dev c up\nlink set dev d up\n")
        .unwrap();
    ns.enter(|| {
        let mut ports = vec![open_v(v, "a"), open_v(v, "c")];
        let mut b = open_v(v, "b");
        let mut d = open_v(v, "d");
        let frames: Vec<Vec<u8>> = (0..300).map(|i| frame(i, 60 + i as usize)).collect();
        send_all(&mut b, &frames);
        let mut read = 0;
        let mut refused = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        let info = allocation_counter::measure(|| {
            while read < frames.len() && Instant::now() < deadline {
                wait_readable(ports[0].as_raw_fd(), 5);
                read += recv_batch_among(&mut ports, 0, 64, |f, out| {
                    if !is_test_frame(f) {
                        return;
                    }
                    assert_eq!(out.len(), 2);
                    // Out of the other port, and back out of the one it came in on.
                    assert!(out.send(1, f));
                    assert!(out.send(0, f));
                    if !out.send(2, f) {
                        refused += 1;
                    }
                });
                for p in ports.iter_mut() {
                    p.flush().unwrap();
                }
            }
        });
        assert_eq!(info.count_total, 0, "{info:?}");
        assert_eq!(refused, 300);
        assert_eq!(
            recv_test_frames(&mut d, 300, Duration::from_secs(2)),
            frames
        );
        assert_eq!(
            recv_test_frames(&mut b, 300, Duration::from_secs(2)),
            frames
        );
        let (ca, cc) = (ports[0].counters(), ports[1].counters());
        assert_eq!(
            (ca.rx_packets, ca.tx_packets, cc.tx_packets),
            (300, 300, 300)
        );
    })
    .unwrap();
}
