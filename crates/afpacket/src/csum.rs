//! Completing the TCP/UDP checksum of a frame the kernel flags `TP_STATUS_CSUMNOTREADY`:
//! a local stack sent it through a veth with checksum offload, so its checksum field
//! holds only the pseudo-header's sum, and the "hardware" that would finish it is us.
//! Done as the kernel's `skb_checksum_help` does: sum the transport header and payload
//! (the field included), fold, complement.

/// Finishes the checksum in place; returns false (frame untouched) when the frame is
/// not TCP or UDP over IPv4 or IPv6 (without extension headers), or is a fragment.
pub(crate) fn complete(frame: &mut [u8]) -> bool {
    let mut l3 = 14;
    let mut ethertype = be16(frame, 12);
    for _ in 0..2 {
        if ethertype == Some(0x8100) || ethertype == Some(0x88a8) {
            ethertype = be16(frame, l3 + 2);
            l3 += 4;
        }
    }
    let (proto, l4, end) = match ethertype {
        Some(0x0800) => {
            let Some(&vihl) = frame.get(l3) else {
                return false;
            };
            let ihl = (vihl & 0x0f) as usize * 4;
            let (Some(total), Some(frag)) = (be16(frame, l3 + 2), be16(frame, l3 + 6)) else {
                return false;
            };
            if vihl >> 4 != 4 || ihl < 20 || frag & 0x3fff != 0 {
                return false;
            }
            (frame[l3 + 9], l3 + ihl, l3 + total as usize)
        }
        Some(0x86dd) => {
            let Some(payload) = be16(frame, l3 + 4) else {
                return false;
            };
            (frame[l3 + 6], l3 + 40, l3 + 40 + payload as usize)
        }
        _ => return false,
    };
    let field = match proto {
        6 => l4 + 16,
        17 => l4 + 6,
        _ => return false,
    };
    if end > frame.len() || field + 2 > end {
        return false;
    }
    let mut check = packet::checksum::checksum(&frame[l4..end]);
    if proto == 17 && check == 0 {
        check = 0xffff; // RFC 768: a computed 0 is sent as all ones
    }
    frame[field..field + 2].copy_from_slice(&check.to_be_bytes());
    true
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}
