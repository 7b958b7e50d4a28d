//! The bytes of `packet-ins` (the layout is in `wit/app.wit`, at the export): the
//! host writes a turn's PACKET_INs as fixed records and reads the guest's answers into
//! the outbox. Lifting the same answers as WIT records cost more per PACKET_IN than
//! the native learning switch's whole answer (BENCHMARKS.md, "WebAssembly apps").

use controller::app::PacketIn;
use openflow::model::{self, PacketOut, PortNo};

use crate::bindings::pharos::app::types as wit;
use crate::convert;
use crate::host::Batch;

/// Bytes per PACKET_IN record.
pub(crate) const RECORD: usize = 48;

/// Appends `p`'s record to `out`.
#[inline]
pub(crate) fn put_packet_in(p: &PacketIn, out: &mut Vec<u8>) {
    let w = convert::packet_in(p);
    let mut r = [0u8; RECORD];
    r[0..4].copy_from_slice(&w.in_port.to_le_bytes());
    r[4..8].copy_from_slice(&w.buffer_id.unwrap_or(u32::MAX).to_le_bytes());
    r[8..10].copy_from_slice(&w.total_len.to_le_bytes());
    r[10] = w.reason;
    r[11] = w.table_id;
    r[12..14].copy_from_slice(&w.eth_type.to_le_bytes());
    r[16..20].copy_from_slice(&w.data_len.to_le_bytes());
    r[24..32].copy_from_slice(&w.cookie.to_le_bytes());
    r[32..40].copy_from_slice(&w.eth_src.to_le_bytes());
    r[40..48].copy_from_slice(&w.eth_dst.to_le_bytes());
    out.extend_from_slice(&r);
}

/// A reader of the answers: `None` when they end inside a field (the caller says
/// where).
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    #[inline(always)]
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let b = self.bytes.get(self.at..self.at + N)?;
        self.at += N;
        b.try_into().ok()
    }
    #[inline(always)]
    fn u8(&mut self) -> Option<u8> {
        Some(self.take::<1>()?[0])
    }
    #[inline(always)]
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take()?))
    }
    #[inline(always)]
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take()?))
    }
    #[inline(always)]
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take()?))
    }
    #[inline(always)]
    fn port(&mut self) -> Option<PortNo> {
        Some(PortNo::from_u32(self.u32()?))
    }
    #[inline(always)]
    fn prefix(&mut self) -> Option<wit::Ipv4Prefix> {
        let addr = self.u32()?;
        let len = self.u8()?;
        Some(wit::Ipv4Prefix { addr, len })
    }
    /// A match: `Err` for unknown fields.
    #[inline(always)]
    fn matching(&mut self) -> Option<Result<model::Match, u16>> {
        let present = self.u16()?;
        if present >> 10 != 0 {
            return Some(Err(present));
        }
        let has = |bit: u16| present & (1 << bit) != 0;
        let mut m = model::Match::default();
        if has(0) {
            m.in_port = Some(self.u32()?);
        }
        if has(1) {
            m.eth_src = Some(convert::mac(self.u64()?));
        }
        if has(2) {
            m.eth_dst = Some(convert::mac(self.u64()?));
        }
        if has(3) {
            m.eth_type = Some(self.u16()?);
        }
        if has(4) {
            m.vlan = Some(convert::vlan(self.u16()?));
        }
        if has(5) {
            m.ip_proto = Some(self.u8()?);
        }
        if has(6) {
            m.ipv4_src = Some(convert::prefix(self.prefix()?));
        }
        if has(7) {
            m.ipv4_dst = Some(convert::prefix(self.prefix()?));
        }
        if has(8) {
            m.tp_src = Some(self.u16()?);
        }
        if has(9) {
            m.tp_dst = Some(self.u16()?);
        }
        Some(Ok(m))
    }
    /// A count and the actions, into `out` (emptied first); `Err` names an unknown kind.
    #[inline(always)]
    fn actions(&mut self, out: &mut Vec<model::Action>) -> Option<Result<(), u8>> {
        out.clear();
        for _ in 0..self.u8()? {
            let w = match self.u8()? {
                0 => {
                    out.push(model::Action::output(self.port()?));
                    continue;
                }
                1 => wit::Action::SetVlanVid(self.u16()?),
                2 => wit::Action::PopVlan,
                3 => wit::Action::SetEthSrc(self.u64()?),
                4 => wit::Action::SetEthDst(self.u64()?),
                5 => wit::Action::SetIpv4Src(self.u32()?),
                6 => wit::Action::SetIpv4Dst(self.u32()?),
                7 => wit::Action::SetTcpSrc(self.u16()?),
                8 => wit::Action::SetTcpDst(self.u16()?),
                9 => wit::Action::SetUdpSrc(self.u16()?),
                10 => wit::Action::SetUdpDst(self.u16()?),
                11 => {
                    let port = self.port()?;
                    let queue_id = self.u32()?;
                    out.push(model::Action::Enqueue { port, queue_id });
                    continue;
                }
                k => return Some(Err(k)),
            };
            out.push(convert::action(&w));
        }
        Some(Ok(()))
    }
}

/// What a batch's answers are sent to: the switch (a test collects them instead).
pub(crate) trait Sink {
    fn flow_mod(&mut self, fm: &model::FlowMod<'_>);
    fn packet_out(&mut self, po: &PacketOut<'_>);
    fn barrier(&mut self);
}

/// Sends the answers in `bytes`, in order, for the PACKET_INs of `batch` (a forward
/// names one of them); `actions` is scratch space. Stops at the first answer it cannot
/// read (those before it are sent), saying where and why.
pub(crate) fn send_answers(
    bytes: &[u8],
    batch: &Batch,
    actions: &mut Vec<model::Action>,
    to: &mut impl Sink,
) -> Result<(), String> {
    let mut r = Reader { bytes, at: 0 };
    while r.at < bytes.len() {
        let at = r.at;
        let kind = bytes[at];
        match answer(&mut r, batch, actions, to) {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(format!("{e}, in the answer at byte {at}")),
            None => {
                return Err(format!(
                    "the answers end at byte {} inside the answer of kind {kind} at byte {at}",
                    bytes.len()
                ))
            }
        }
    }
    Ok(())
}

/// Reads and sends one answer: `None` when the bytes end inside it, `Err` for what
/// cannot be sent.
#[inline(always)]
fn answer(
    r: &mut Reader<'_>,
    batch: &Batch,
    actions: &mut Vec<model::Action>,
    to: &mut impl Sink,
) -> Option<Result<(), String>> {
    match r.u8()? {
        1 => {
            let command = match r.u8()? {
                0 => model::FlowModCommand::Add,
                1 => model::FlowModCommand::Modify,
                2 => model::FlowModCommand::ModifyStrict,
                3 => model::FlowModCommand::Delete,
                4 => model::FlowModCommand::DeleteStrict,
                c => return Some(Err(format!("a flow-mod with command {c}"))),
            };
            let table_id = r.u8()?;
            let flags = r.u8()?;
            let priority = r.u16()?;
            let idle_timeout = r.u16()?;
            let hard_timeout = r.u16()?;
            let buffer_id = r.u32()?;
            let cookie = r.u64()?;
            let matching = match r.matching()? {
                Ok(m) => m,
                Err(bits) => return Some(Err(format!("a match with unknown fields {bits:#06x}"))),
            };
            if let Err(k) = r.actions(actions)? {
                return Some(Err(format!("an unknown action kind {k}")));
            }
            let mut fm = model::FlowMod::add(matching, actions);
            fm.command = command;
            fm.cookie = cookie & convert::APP_COOKIE_BITS;
            fm.priority = priority;
            fm.idle_timeout = idle_timeout;
            fm.hard_timeout = hard_timeout;
            fm.buffer_id = (flags & 2 != 0).then_some(buffer_id);
            fm.table_id = table_id;
            fm.flags.send_flow_removed = flags & 1 != 0;
            to.flow_mod(&fm);
        }
        2 => {
            let in_port = r.port()?;
            let len = r.u32()? as usize;
            let data = r.bytes.get(r.at..r.at + len)?;
            r.at += len;
            if let Err(k) = r.actions(actions)? {
                return Some(Err(format!("an unknown action kind {k}")));
            }
            to.packet_out(&PacketOut::unbuffered(data, in_port, actions));
        }
        3 => {
            let index = r.u32()?;
            if let Err(k) = r.actions(actions)? {
                return Some(Err(format!("an unknown action kind {k}")));
            }
            match batch.packet_out(index, actions) {
                Some(po) => to.packet_out(&po),
                None => {
                    return Some(Err(format!(
                        "a forward of PACKET_IN {index} in a batch of {}",
                        batch.len()
                    )))
                }
            }
        }
        4 => to.barrier(),
        k => return Some(Err(format!("an unknown answer kind {k}"))),
    }
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What was sent, as text.
    #[derive(Default)]
    struct Sent(Vec<String>);

    impl Sink for Sent {
        fn flow_mod(&mut self, fm: &model::FlowMod<'_>) {
            self.0.push(format!(
                "flow_mod prio={} idle={} buffer={:?} cookie={:#x} frem={} in_port={:?} eth_src={:?} eth_dst={:?} actions={:?}",
                fm.priority,
                fm.idle_timeout,
                fm.buffer_id,
                fm.cookie,
                fm.flags.send_flow_removed,
                fm.matching.in_port,
                fm.matching.eth_src,
                fm.matching.eth_dst.map(|m| m.to_string()),
                fm.actions
            ));
        }
        fn packet_out(&mut self, po: &PacketOut<'_>) {
            self.0.push(format!(
                "packet_out buffer={:?} in_port={:?} data={} actions={:?}",
                po.buffer_id,
                po.in_port,
                po.data.len(),
                po.actions
            ));
        }
        fn barrier(&mut self) {
            self.0.push("barrier".into());
        }
    }

    #[test]
    fn a_flow_mod_a_forward_and_a_barrier_are_sent_and_bad_bytes_are_named() {
        let mut b = vec![1, 0, 0, 1 | 2];
        b.extend_from_slice(&0x8000u16.to_le_bytes());
        b.extend_from_slice(&60u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&7u32.to_le_bytes());
        b.extend_from_slice(&0xabcd_0000_0000_0042u64.to_le_bytes());
        b.extend_from_slice(&0b101u16.to_le_bytes());
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(&0x0e00_0000_0002u64.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&[3]);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&0xffff_fffbu32.to_le_bytes());
        b.push(4);
        let mut batch = Batch::default();
        for (buffer, port) in [(Some(5), PortNo::Physical(1)), (None, PortNo::Physical(2))] {
            batch
                .meta
                .push((buffer, port, batch.bytes.len()..batch.bytes.len() + 60));
            batch.bytes.extend_from_slice(&[0u8; 60]);
        }
        let mut sent = Sent::default();
        let mut actions = Vec::new();
        send_answers(&b, &batch, &mut actions, &mut sent).unwrap();
        assert_eq!(
            sent.0,
            [
                "flow_mod prio=32768 idle=60 buffer=Some(7) cookie=0x42 frem=true in_port=Some(3) \
                 eth_src=None eth_dst=Some(\"0e:00:00:00:00:02\") actions=[Output { port: Physical(2), max_len: 65535 }]",
                "packet_out buffer=None in_port=Physical(2) data=60 actions=[Output { port: Flood, max_len: 65535 }]",
                "barrier",
            ],
            "the cookie's top 16 bits are the core's; forward 1 is the unbuffered packet"
        );

        let e = send_answers(
            &b[..b.len() - 3],
            &batch,
            &mut actions,
            &mut Sent::default(),
        )
        .unwrap_err();
        assert!(e.contains("inside the answer of kind 3 at byte"), "{e}");
        batch.meta.pop();
        let e = send_answers(&b, &batch, &mut actions, &mut Sent::default()).unwrap_err();
        assert!(
            e.contains("a forward of PACKET_IN 1 in a batch of 1, in the answer at byte"),
            "{e}"
        );
        let e = send_answers(&[9], &batch, &mut actions, &mut Sent::default()).unwrap_err();
        assert!(
            e.contains("unknown answer kind 9, in the answer at byte 0"),
            "{e}"
        );
    }
}
