//! The bytes of `packet-ins` (the layout is in the WIT world, at the export): the
//! PACKET_IN records read, the answers written.

use crate::{Action, FlowMod, FlowModCommand, Match, PacketIn, PacketOut, Port};

/// Bytes per PACKET_IN record.
pub(crate) const RECORD: usize = 48;
/// The barrier answer (a kind byte alone).
pub(crate) const BARRIER: u8 = 4;

fn u16_at(r: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([r[at], r[at + 1]])
}
fn u32_at(r: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(r[at..at + 4].try_into().unwrap())
}
fn u64_at(r: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(r[at..at + 8].try_into().unwrap())
}

/// One PACKET_IN record (`RECORD` bytes).
pub(crate) fn packet_in(r: &[u8]) -> PacketIn {
    let buffer_id = u32_at(r, 4);
    PacketIn {
        in_port: u32_at(r, 0),
        buffer_id: (buffer_id != u32::MAX).then_some(buffer_id),
        total_len: u16_at(r, 8),
        reason: r[10],
        table_id: r[11],
        eth_type: u16_at(r, 12),
        data_len: u32_at(r, 16),
        cookie: u64_at(r, 24),
        eth_src: u64_at(r, 32),
        eth_dst: u64_at(r, 40),
    }
}

fn port(p: Port) -> u32 {
    match p {
        Port::Physical(n) => n,
        Port::InPort => 0xffff_fff8,
        Port::Table => 0xffff_fff9,
        Port::Normal => 0xffff_fffa,
        Port::Flood => 0xffff_fffb,
        Port::All => 0xffff_fffc,
        Port::Controller => 0xffff_fffd,
        Port::Local => 0xffff_fffe,
        Port::Any => 0xffff_ffff,
    }
}

/// Appends `b` to `out` with one store: a `memcpy` in a guest is wasm's
/// `memory.copy`, which wasmtime runs as a call out of the guest, dearer than a small
/// copy (it was a tenth of the batch's cost in a profile).
#[inline(always)]
fn put<const N: usize>(out: &mut Vec<u8>, b: [u8; N]) {
    out.reserve(N);
    let len = out.len();
    // SAFETY: `reserve` left room for N more bytes past `len`; they are written before
    // the length covers them, and `[u8; N]` has no alignment to respect.
    unsafe {
        std::ptr::write_unaligned(out.as_mut_ptr().add(len).cast::<[u8; N]>(), b);
        out.set_len(len + N);
    }
}

#[inline(always)]
fn matching(m: &Match, w: &mut Vec<u8>) {
    let at = w.len();
    put(w, [0, 0]);
    let mut present = 0u16;
    if let Some(v) = m.in_port {
        present |= 1;
        put(w, v.to_le_bytes());
    }
    if let Some(v) = m.eth_src {
        present |= 1 << 1;
        put(w, v.to_le_bytes());
    }
    if let Some(v) = m.eth_dst {
        present |= 1 << 2;
        put(w, v.to_le_bytes());
    }
    if let Some(v) = m.eth_type {
        present |= 1 << 3;
        put(w, v.to_le_bytes());
    }
    if let Some(v) = m.vlan_vid {
        present |= 1 << 4;
        put(w, v.to_le_bytes());
    }
    if let Some(v) = m.ip_proto {
        present |= 1 << 5;
        put(w, [v]);
    }
    if let Some(p) = m.ipv4_src {
        present |= 1 << 6;
        put(w, p.addr.to_le_bytes());
        put(w, [p.len]);
    }
    if let Some(p) = m.ipv4_dst {
        present |= 1 << 7;
        put(w, p.addr.to_le_bytes());
        put(w, [p.len]);
    }
    if let Some(v) = m.tp_src {
        present |= 1 << 8;
        put(w, v.to_le_bytes());
    }
    if let Some(v) = m.tp_dst {
        present |= 1 << 9;
        put(w, v.to_le_bytes());
    }
    let [lo, hi] = present.to_le_bytes();
    w[at] = lo;
    w[at + 1] = hi;
}

#[inline(always)]
fn action(a: &Action, out: &mut Vec<u8>) {
    match *a {
        Action::Output(p) => {
            put(out, [0]);
            put(out, port(p).to_le_bytes());
        }
        Action::SetVlanVid(v) => {
            put(out, [1]);
            put(out, v.to_le_bytes());
        }
        Action::PopVlan => put(out, [2]),
        Action::SetEthSrc(v) => {
            put(out, [3]);
            put(out, v.to_le_bytes());
        }
        Action::SetEthDst(v) => {
            put(out, [4]);
            put(out, v.to_le_bytes());
        }
        Action::SetIpv4Src(v) => {
            put(out, [5]);
            put(out, v.to_le_bytes());
        }
        Action::SetIpv4Dst(v) => {
            put(out, [6]);
            put(out, v.to_le_bytes());
        }
        Action::SetTcpSrc(v) => {
            put(out, [7]);
            put(out, v.to_le_bytes());
        }
        Action::SetTcpDst(v) => {
            put(out, [8]);
            put(out, v.to_le_bytes());
        }
        Action::SetUdpSrc(v) => {
            put(out, [9]);
            put(out, v.to_le_bytes());
        }
        Action::SetUdpDst(v) => {
            put(out, [10]);
            put(out, v.to_le_bytes());
        }
        Action::Enqueue((p, queue)) => {
            put(out, [11]);
            put(out, port(p).to_le_bytes());
            put(out, queue.to_le_bytes());
        }
    }
}

#[inline(always)]
fn actions(actions: &[Action], out: &mut Vec<u8>) {
    // At most 255 in a batch's answer (a FLOW_MOD's actions never come near it).
    let n = actions.len().min(255);
    out.reserve(1 + 9 * n);
    put(out, [n as u8]);
    for a in &actions[..n] {
        action(a, out);
    }
}

pub(crate) fn flow_mod(fm: &FlowMod, out: &mut Vec<u8>) {
    let command = match fm.command {
        FlowModCommand::Add => 0,
        FlowModCommand::Modify => 1,
        FlowModCommand::ModifyStrict => 2,
        FlowModCommand::Delete => 3,
        FlowModCommand::DeleteStrict => 4,
    };
    let flags = u8::from(fm.send_flow_removed) | (u8::from(fm.buffer_id.is_some()) << 1);
    out.reserve(64);
    put(out, [1, command, fm.table_id, flags]);
    put(out, fm.priority.to_le_bytes());
    put(out, fm.idle_timeout.to_le_bytes());
    put(out, fm.hard_timeout.to_le_bytes());
    put(out, fm.buffer_id.unwrap_or(u32::MAX).to_le_bytes());
    put(out, fm.cookie.to_le_bytes());
    matching(&fm.match_, out);
    actions(&fm.actions, out);
}

pub(crate) fn packet_out(po: &PacketOut, out: &mut Vec<u8>) {
    out.push(2);
    out.extend_from_slice(&port(po.in_port).to_le_bytes());
    out.extend_from_slice(&(po.data.len() as u32).to_le_bytes());
    out.extend_from_slice(&po.data);
    actions(&po.actions, out);
}

pub(crate) fn forward(index: u32, acts: &[Action], out: &mut Vec<u8>) {
    put(out, [3]);
    put(out, index.to_le_bytes());
    actions(acts, out);
}
