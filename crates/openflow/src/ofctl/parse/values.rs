//! The values items hold: integers (decimal or `0x` hex, of a given width), masked
//! integers, Ethernet and IP addresses with their masks or prefixes, ports, durations;
//! and the splitting of an action list into its actions.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;

use crate::model::PortNo;
use crate::ofctl::flow::Masked;
use crate::types::MacAddr;

/// Splits an action list at the commas outside parentheses; each piece with its span
/// (trimmed) in the whole input (`base` is where `v` starts).
pub(super) fn split_top(v: &str, base: usize) -> Vec<(Range<usize>, &str)> {
    let mut cuts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in v.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                cuts.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    cuts.push(start..v.len());
    let mut out = Vec::new();
    for r in cuts {
        let piece = &v[r.clone()];
        let lead = piece.len() - piece.trim_start().len();
        let t = piece.trim();
        if !t.is_empty() {
            let s = base + r.start + lead;
            out.push((s..s + t.len(), t));
        }
    }
    out
}

/// `name:arg`, `name(arg)` (the argument keeps its parentheses) or `name`.
pub(super) fn split_action(tok: &str) -> (&str, Option<&str>) {
    match tok.find([':', '(', '=']) {
        Some(i) if tok.as_bytes()[i] == b'(' => (&tok[..i], Some(&tok[i..])),
        Some(i) => (&tok[..i], Some(&tok[i + 1..])),
        None => (tok, None),
    }
}

/// A decimal or `0x` hexadecimal integer of at most `bits` bits.
pub(super) fn int(s: &str, bits: u32) -> Option<u64> {
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) if !h.is_empty() && h.len() <= 16 => u64::from_str_radix(h, 16).ok()?,
        Some(_) => return None,
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok()?,
        None => return None,
    };
    (bits >= 64 || v >> bits == 0).then_some(v)
}

/// `VALUE[/MASK]` integers, normalised (see [`Masked`]); `Some(None)`: the mask is 0.
pub(super) fn masked_int(s: &str, bits: u32) -> Option<Option<Masked<u64>>> {
    let all = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    match s.split_once('/') {
        None => Some(Some(Masked::exact(int(s, bits)?))),
        Some((v, m)) => {
            let (v, m) = (int(v, bits)?, int(m, bits)?);
            Some(match m {
                0 => None,
                m if m == all => Some(Masked::exact(v)),
                m => Some(Masked {
                    value: v & m,
                    mask: Some(m),
                }),
            })
        }
    }
}

pub(super) fn mac(s: &str) -> Option<MacAddr> {
    let a: MacAddr = s.parse().ok()?;
    // Two hex digits per byte, as ovs-ofctl writes them.
    (s.len() == 17).then_some(a)
}

pub(super) fn masked_mac(s: &str) -> Option<Option<Masked<MacAddr>>> {
    match s.split_once('/') {
        None => Some(Some(Masked::exact(mac(s)?))),
        Some((v, m)) => {
            let (v, m) = (mac(v)?, mac(m)?);
            Some(match m {
                MacAddr::ZERO => None,
                MacAddr::BROADCAST => Some(Masked::exact(v)),
                m => {
                    let mut x = v.0;
                    for (b, k) in x.iter_mut().zip(m.0) {
                        *b &= k;
                    }
                    Some(Masked {
                        value: MacAddr(x),
                        mask: Some(m),
                    })
                }
            })
        }
    }
}

/// `A.B.C.D[/LEN|/MASK]`, normalised.
pub(super) fn masked_ipv4(s: &str) -> Option<Option<Masked<Ipv4Addr>>> {
    let (a, m) = match s.split_once('/') {
        None => (s, None),
        Some((a, m)) => (a, Some(m)),
    };
    let a = u32::from(a.parse::<Ipv4Addr>().ok()?);
    let m = match m {
        None => u32::MAX,
        Some(m) if m.contains('.') => u32::from(m.parse::<Ipv4Addr>().ok()?),
        Some(m) => match int(m, 8)? {
            0 => 0,
            l @ 1..=32 => u32::MAX << (32 - l),
            _ => return None,
        },
    };
    Some(match m {
        0 => None,
        u32::MAX => Some(Masked::exact(Ipv4Addr::from(a))),
        m => Some(Masked {
            value: Ipv4Addr::from(a & m),
            mask: Some(Ipv4Addr::from(m)),
        }),
    })
}

/// `ADDR[/LEN|/MASK]`, normalised.
pub(super) fn masked_ipv6(s: &str) -> Option<Option<Masked<Ipv6Addr>>> {
    let (a, m) = match s.split_once('/') {
        None => (s, None),
        Some((a, m)) => (a, Some(m)),
    };
    let a = u128::from(a.parse::<Ipv6Addr>().ok()?);
    let m = match m {
        None => u128::MAX,
        Some(m) if m.contains(':') => u128::from(m.parse::<Ipv6Addr>().ok()?),
        Some(m) => match int(m, 8)? {
            0 => 0,
            l @ 1..=128 => u128::MAX << (128 - l),
            _ => return None,
        },
    };
    Some(match m {
        0 => None,
        u128::MAX => Some(Masked::exact(Ipv6Addr::from(a))),
        m => Some(Masked {
            value: Ipv6Addr::from(a & m),
            mask: Some(Ipv6Addr::from(m)),
        }),
    })
}

/// A port number or a reserved port's name (any case). 1.0's and 1.3's reserved numbers
/// read as the port they name, as Open vSwitch reads them.
pub(super) fn port(s: &str) -> Option<PortNo> {
    Some(match s.to_ascii_lowercase().as_str() {
        "in_port" => PortNo::InPort,
        "table" => PortNo::Table,
        "normal" => PortNo::Normal,
        "flood" => PortNo::Flood,
        "all" => PortNo::All,
        "controller" => PortNo::Controller,
        "local" => PortNo::Local,
        "any" | "none" => PortNo::Any,
        n => {
            let n = int(n, 32)?;
            if (0xfff8..=0xffff).contains(&n) {
                PortNo::from_u32(n as u32 | 0xffff_0000)
            } else {
                PortNo::from_u32(n as u32)
            }
        }
    })
}

/// `SEC[.FRACTION]s`, kept to the nanosecond.
pub(super) fn duration(s: &str) -> Option<(u32, u32)> {
    let s = s.strip_suffix('s')?;
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sec = int(sec, 32)? as u32;
    let nsec = if frac.is_empty() {
        0
    } else {
        frac.parse::<u32>().ok()? * 10u32.pow(9 - frac.len() as u32)
    };
    Some((sec, nsec))
}
