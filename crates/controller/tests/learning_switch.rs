//! The learning switch end to end, over real TCP, on 1.0 and 1.3 switches: unknown
//! destinations are flooded; once both hosts are known a FLOW_MOD with the right match,
//! output port and idle timeout goes out, carrying the packet's buffer_id when the
//! switch buffered it (no PACKET_OUT then), followed by a PACKET_OUT with the bytes
//! when it did not.

use testkit::emu;
mod harness;

use emu::{
    host, is_flow_mod, is_packet_out, output_ports, packet_out_parts, Emu, Spec, FLOOD, NO_BUFFER,
};
use harness::{test_config, Running, T};
use openflow::of13::{OxmField, OxmValue};
use openflow::{of10, of13, Message};

const IDLE: u16 = 17;

fn start() -> Running {
    let params: toml::Table = toml::from_str(&format!("idle_timeout = {IDLE}")).unwrap();
    let app = apps::by_name("learning_switch", &params).unwrap();
    Running::start(&test_config(), vec![app])
}

/// The learned FLOW_MOD's match as (in_port, eth_src, eth_dst), either version.
fn flow_match(m: &Message) -> Option<(u32, [u8; 6], [u8; 6], u16)> {
    match m {
        Message::V10(of10::Message::FlowMod(f)) => Some((
            f.match_.in_port as u32,
            f.match_.dl_src.0,
            f.match_.dl_dst.0,
            f.idle_timeout,
        )),
        Message::V13(of13::Message::FlowMod(f)) => {
            let int = |field| match f.match_.get(field).map(|b| b.value) {
                Some(OxmValue::Int(v)) => Some(v as u32),
                _ => None,
            };
            let mac = |field| match f.match_.get(field).map(|b| b.value) {
                Some(OxmValue::Mac(m)) => Some(m.0),
                _ => None,
            };
            Some((
                int(OxmField::InPort)?,
                mac(OxmField::EthSrc)?,
                mac(OxmField::EthDst)?,
                f.idle_timeout,
            ))
        }
        _ => None,
    }
}

/// The FLOW_MOD's buffer_id, either version.
fn flow_buffer_id(m: &Message) -> Option<u32> {
    match m {
        Message::V10(of10::Message::FlowMod(f)) => Some(f.buffer_id),
        Message::V13(of13::Message::FlowMod(f)) => Some(f.buffer_id),
        _ => None,
    }
}

fn learns_and_forwards(spec: Spec) {
    let ctl = start();
    let mut sw = Emu::connect_and_handshake(ctl.addr, spec, T).expect("handshake");
    let (a, b) = (host(0xa), host(0xb));

    // A (port 1) → B, unknown: flooded, with the packet's bytes (not buffered).
    let f1 = emu::frame(a, b);
    sw.send_packet_in(1, &f1, None).unwrap();
    let (_, out) = sw.wait_for(T, is_packet_out).unwrap();
    assert_eq!(output_ports(&out), vec![FLOOD]);
    assert_eq!(packet_out_parts(&out), Some((NO_BUFFER, &f1[..])));

    // B (port 2) → A, buffered: A is known behind port 1, so one FLOW_MOD out port 1
    // carrying the buffer id (the switch applies it to the buffered packet).
    let f2 = emu::long_frame(b, a, 300);
    sw.send_packet_in(2, &f2, Some(42)).unwrap();
    let (_, fm) = sw
        .wait_for(T, |m| is_flow_mod(m) && output_ports(m) == vec![1])
        .unwrap();
    assert_eq!(flow_match(&fm), Some((2, b.0, a.0, IDLE)), "{fm:?}");
    assert_eq!(flow_buffer_id(&fm), Some(42), "{fm:?}");

    // A → B again, unbuffered: B is known behind port 2 now, so a FLOW_MOD with no
    // buffer, then the packet's bytes in a PACKET_OUT. Nothing else comes before it:
    // no PACKET_OUT was sent for the buffered packet above.
    sw.send_packet_in(1, &f1, None).unwrap();
    let mut packet_outs = Vec::new();
    let (_, fm) = sw
        .wait_for(T, |m| {
            if is_packet_out(m) {
                packet_outs.push(m.clone());
            }
            is_flow_mod(m) && output_ports(m) == vec![2]
        })
        .unwrap();
    assert!(
        packet_outs.is_empty(),
        "a buffered packet goes with its FLOW_MOD: {packet_outs:?}"
    );
    assert_eq!(flow_match(&fm), Some((1, a.0, b.0, IDLE)), "{fm:?}");
    assert_eq!(flow_buffer_id(&fm), Some(NO_BUFFER), "{fm:?}");
    let (_, out) = sw.wait_for(T, is_packet_out).unwrap();
    assert_eq!(packet_out_parts(&out), Some((NO_BUFFER, &f1[..])));
    assert_eq!(output_ports(&out), vec![2]);

    // Broadcast is flooded whatever is known.
    sw.send_packet_in(1, &emu::frame(a, openflow::MacAddr::BROADCAST), None)
        .unwrap();
    let (_, out) = sw.wait_for(T, is_packet_out).unwrap();
    assert_eq!(output_ports(&out), vec![FLOOD]);
}

#[test]
fn learning_switch_on_openflow_10() {
    learns_and_forwards(Spec::v10(0xa10));
}

#[test]
fn learning_switch_on_openflow_13() {
    learns_and_forwards(Spec::v13(0xa13));
}

#[test]
fn the_13_switch_gets_a_table_miss_entry_to_the_controller() {
    let ctl = start();
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v13(0xb13), T).unwrap();
    let (_, fm) = sw
        .wait_for(
            T,
            |m| matches!(m, Message::V13(of13::Message::FlowMod(f)) if f.priority == 0),
        )
        .unwrap();
    assert_eq!(output_ports(&fm), vec![of13::OFPP_CONTROLLER]);
}

/// What a switch sends before the handshake ends reaches the apps once it does, in
/// order: cbench teaches the controller its destination host with a PACKET_IN sent
/// right after its FEATURES_REPLY, before the barrier's reply, and then expects
/// FLOW_MODs to it. (The handshake used to skip such messages: every later PACKET_IN
/// was flooded.)
fn learns_from_a_packet_in_sent_during_the_handshake(mut spec: Spec) {
    let ctl = start();
    spec.answer_barrier = false;
    let mut sw = Emu::connect(ctl.addr, spec).unwrap();
    let (barrier_xid, _) = sw
        .wait_for(T, |m| {
            matches!(
                m,
                Message::V10(of10::Message::BarrierRequest)
                    | Message::V13(of13::Message::BarrierRequest)
            )
        })
        .unwrap();
    let (a, b) = (host(0x1a), host(0x1b));
    // A is behind port 2 (cbench's gratuitous ARP, broadcast).
    sw.send_packet_in(2, &emu::frame(a, openflow::MacAddr::BROADCAST), None)
        .unwrap();
    let barrier_reply = match sw.ver() {
        openflow::Version::V1_0 => Message::V10(of10::Message::BarrierReply),
        openflow::Version::V1_3 => Message::V13(of13::Message::BarrierReply),
    };
    sw.send_raw(&barrier_reply.to_bytes(barrier_xid).unwrap())
        .unwrap();
    // The broadcast is flooded once the switch is added...
    let (_, out) = sw.wait_for(T, is_packet_out).unwrap();
    assert_eq!(output_ports(&out), vec![FLOOD]);
    // ... and A was learned from it: B → A gets a FLOW_MOD out port 2.
    sw.send_packet_in(1, &emu::frame(b, a), Some(7)).unwrap();
    let (_, fm) = sw
        .wait_for(T, |m| is_flow_mod(m) && output_ports(m) == vec![2])
        .unwrap();
    assert_eq!(flow_match(&fm), Some((1, b.0, a.0, IDLE)), "{fm:?}");
}

#[test]
fn a_packet_in_during_the_handshake_is_learned_from_on_openflow_10() {
    learns_from_a_packet_in_sent_during_the_handshake(Spec::v10(0xe10));
}

#[test]
fn a_packet_in_during_the_handshake_is_learned_from_on_openflow_13() {
    learns_from_a_packet_in_sent_during_the_handshake(Spec::v13(0xe13));
}

#[test]
fn mac_tables_are_per_switch() {
    let ctl = start();
    let mut s1 = Emu::connect_and_handshake(ctl.addr, Spec::v10(0xc1), T).unwrap();
    let mut s2 = Emu::connect_and_handshake(ctl.addr, Spec::v13(0xc2), T).unwrap();
    let (a, b) = (host(1), host(2));
    s1.send_packet_in(3, &emu::frame(a, b), None).unwrap();
    s1.wait_for(T, is_packet_out).unwrap();
    // On s2, A is unknown: B → A is flooded, not forwarded to port 3.
    s2.send_packet_in(4, &emu::frame(b, a), None).unwrap();
    let (_, out) = s2.wait_for(T, is_packet_out).unwrap();
    assert_eq!(output_ports(&out), vec![FLOOD]);
}

/// Reads stop at a short read (the socket drained) instead of reading on to
/// WouldBlock; bytes that arrive afterwards must still be seen as a new event: a
/// PACKET_IN sent in pieces, each its own segment after a pause, is answered, and so is
/// every one of a burst larger than the read buffer.
#[test]
fn messages_in_pieces_and_bursts_are_all_answered() {
    let ctl = start();
    let mut sw = Emu::connect_and_handshake(ctl.addr, Spec::v10(0xd1), T).unwrap();
    let bytes = sw
        .packet_in(1, &emu::frame(host(1), host(2)), None)
        .to_bytes(0x5eed)
        .unwrap();
    for piece in bytes.chunks(7) {
        sw.send_raw(piece).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let (_, out) = sw.wait_for(T, is_packet_out).unwrap();
    assert_eq!(output_ports(&out), vec![FLOOD]);

    // 400 PACKET_INs (~36 KB) in one write: more than one read buffer (8 KiB) holds.
    let mut burst = Vec::new();
    for i in 0..400u16 {
        let m = sw.packet_in(2, &emu::frame(host(100 + i), host(9999)), None);
        burst.extend_from_slice(&m.to_bytes(0x1000 + u32::from(i)).unwrap());
    }
    sw.send_raw(&burst).unwrap();
    // Well within a keepalive interval: an echo exchange would also wake the reader
    // and hide bytes left unread.
    let quick = std::time::Duration::from_secs(2);
    for i in 0..400 {
        sw.wait_for(quick, is_packet_out)
            .unwrap_or_else(|e| panic!("PACKET_OUT {i} of 400: {e}"));
    }
}
