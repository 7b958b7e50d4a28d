//! The hot path allocates nothing: reading a PACKET_IN (either version) down to the
//! fields a learning switch uses, and encoding the FLOW_MOD and PACKET_OUT it answers
//! with into a buffer that has room. allocation-counter's counting allocator proves it.

use openflow::model::{Action, FlowMod, Match, PacketOut, PortNo};
use openflow::view::PacketIn;
use openflow::Version;
use packet::ethernet::EthernetFrame;

fn packet_in(version: Version) -> Vec<u8> {
    let mut frame = vec![0u8; 64];
    frame[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    frame[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    let mut m = Vec::new();
    match version {
        Version::V1_0 => {
            m.extend_from_slice(&[1, 10, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 64, 0, 3, 0, 0]);
        }
        Version::V1_3 => {
            m.extend_from_slice(&[4, 10, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 64, 0, 0]);
            m.extend_from_slice(&[0; 8]);
            m.extend_from_slice(&[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0]);
            m.extend_from_slice(&[0, 0]);
        }
    }
    m.extend_from_slice(&frame);
    let len = m.len() as u16;
    m[2..4].copy_from_slice(&len.to_be_bytes());
    m
}

#[test]
fn learning_switch_path_allocates_nothing() {
    let inputs = [packet_in(Version::V1_0), packet_in(Version::V1_3)];
    let mut out: Vec<u8> = Vec::with_capacity(4096);
    let mut total = 0usize;
    let info = allocation_counter::measure(|| {
        for _ in 0..1000 {
            for msg in &inputs {
                out.clear();
                let p = PacketIn::new_checked(&msg[..]).unwrap();
                let data = p.data();
                let eth = EthernetFrame::new_checked(data).unwrap();
                let (src, dst) = (eth.src_addr(), eth.dst_addr());
                let m = Match {
                    in_port: Some(p.in_port()),
                    eth_src: Some(src),
                    eth_dst: Some(dst),
                    ..Match::default()
                };
                let actions = [Action::output(PortNo::Physical(1))];
                FlowMod::add(m, &actions)
                    .idle_timeout(10)
                    .buffer_id(p.buffer_id())
                    .encode(p.version(), p.xid(), &mut out)
                    .unwrap();
                PacketOut::unbuffered(data, PortNo::from_u32(p.in_port()), &actions)
                    .encode(p.version(), p.xid(), &mut out)
                    .unwrap();
                total += out.len();
            }
        }
    });
    assert!(total > 0);
    assert_eq!(
        info.count_total, 0,
        "the hot path allocated {} times",
        info.count_total
    );
}

#[test]
fn the_counter_does_count() {
    let info = allocation_counter::measure(|| {
        let v: Vec<u8> = Vec::with_capacity(10);
        std::hint::black_box(&v);
    });
    assert!(info.count_total > 0);
}
