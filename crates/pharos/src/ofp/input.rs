//! Reading the input and deciding what it is: a capture, a hex dump, or raw messages.

use std::io::Read;

use anyhow::{bail, Context};

/// What the input bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pcap file (any of the four magics) or a pcapng file.
    Capture,
    /// OpenFlow messages back to back.
    Raw,
}

/// Reads a whole file, or stdin for `-`.
pub fn read_all(path: &str) -> anyhow::Result<Vec<u8>> {
    let mut data = Vec::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .read_to_end(&mut data)
            .context("reading stdin")?;
    } else {
        data = std::fs::read(path).with_context(|| format!("reading {path}"))?;
    }
    Ok(data)
}

/// pcap magics as they appear in the first four bytes of the file: microsecond and
/// nanosecond resolution, little- and big-endian; and the modified (Kuznetzov) format.
const PCAP_MAGICS: [[u8; 4]; 5] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x34, 0xcd, 0xb2, 0xa1],
];

/// The pcapng Section Header Block type, the same in both byte orders.
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Tells captures from raw messages by the first four bytes. No OpenFlow message can
/// start like a capture: their version bytes (0xd4, 0xa1, 0x4d, 0x34, 0x0a) are not
/// OpenFlow versions.
pub fn detect(data: &[u8]) -> Kind {
    match data.get(..4) {
        Some(m) if PCAP_MAGICS.iter().any(|p| p == m) || m == PCAPNG_MAGIC => Kind::Capture,
        _ => Kind::Raw,
    }
}

/// Parses a hex dump (see the `decode --help` text, which documents exactly this).
///
/// * Plain hex: hex digits with any whitespace, `0x`/`0X` prefixes, `,` and `:`
///   separators; `#` starts a comment that runs to the end of the line.
/// * A dump with an offset column, recognised when the first data line's first token is
///   an offset of zero of at least four digits (`00000000:`, `000000`, `00000000`), or
///   any hex offset of at least four digits followed by `:` (xxd, also `xxd -s`): every
///   line then starts with its offset, which must equal the first line's offset plus
///   the number of bytes read so far. Offsets are hex (xxd, `hexdump -C`,
///   `od -A x`), or octal or decimal (`od` without `-A`, `od -A d`), whichever matches
///   the byte count. The ASCII column is cut off (at the first `|` for `hexdump -C`,
///   at the first two spaces after the hex for xxd, whose offsets end in `:`, at `>`
///   for `od -t x1z`); a `*` line means "the previous line repeats up to the next
///   offset" (`hexdump` and `od` without `-v`).
pub fn parse_hex(text: &str) -> anyhow::Result<Vec<u8>> {
    let first = text
        .lines()
        .map(strip_comment)
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let first_token = first.split_whitespace().next().unwrap_or("");
    let offset_digits = first_token.strip_suffix(':').unwrap_or(first_token);
    let zero = offset_digits.bytes().all(|c| c == b'0');
    let xxd = first_token.ends_with(':') && offset_digits.bytes().all(|c| c.is_ascii_hexdigit());
    if offset_digits.len() >= 4 && (zero || xxd) {
        parse_dump(text)
    } else {
        parse_plain(text)
    }
}

fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("")
}

/// Plain hex: every hex digit counts, in pairs.
fn parse_plain(text: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut high: Option<(u8, usize, usize)> = None;
    for (lineno, line) in text.lines().enumerate() {
        let line = strip_comment(line);
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            let at_token_start = i == 0 || !bytes[i - 1].is_ascii_hexdigit();
            if c == b'0'
                && matches!(bytes.get(i + 1), Some(b'x' | b'X'))
                && at_token_start
                && high.is_none()
            {
                i += 2;
                continue;
            }
            if c.is_ascii_whitespace() || c == b',' || c == b':' {
                i += 1;
                continue;
            }
            let Some(v) = hex_value(c) else {
                bail!(
                    "invalid hex at line {}, column {}: {:?} is not a hex digit",
                    lineno + 1,
                    i + 1,
                    line[i..].chars().next().unwrap_or('?')
                );
            };
            match high.take() {
                None => high = Some((v, lineno + 1, i + 1)),
                Some((h, _, _)) => out.push(h << 4 | v),
            }
            i += 1;
        }
    }
    if let Some((_, line, col)) = high {
        bail!("invalid hex: odd number of hex digits (the last pair starts at line {line}, column {col})");
    }
    Ok(out)
}

fn hex_value(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// A dump with an offset column (xxd, od -A x -t x1, hexdump -C).
fn parse_dump(text: &str) -> anyhow::Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::new();
    // The data of the previous line, for `*` (repeat) lines.
    let mut previous: Vec<u8> = Vec::new();
    let mut repeating = false;
    // The first line's offset (non-zero for `xxd -s`), and the radix of the offsets once
    // a line tells it.
    let mut base: Option<usize> = None;
    let mut radix: Option<u32> = None;
    for (lineno, raw_line) in text.lines().enumerate() {
        let lineno = lineno + 1;
        let line = raw_line.trim_end();
        if line.trim().is_empty() {
            continue;
        }
        if line.trim() == "*" {
            repeating = true;
            continue;
        }
        let line = line.trim_start();
        let (offset_token, rest) =
            line.split_at(line.find(char::is_whitespace).unwrap_or(line.len()));
        let xxd = offset_token.ends_with(':');
        let digits = offset_token.strip_suffix(':').unwrap_or(offset_token);
        let bad_offset = || {
            anyhow::anyhow!(
                "invalid hex dump at line {lineno}: expected an offset column, found {offset_token:?}"
            )
        };
        let base =
            *base.get_or_insert(usize::from_str_radix(digits, 16).map_err(|_| bad_offset())?);
        // The offset as a count of bytes since the first line.
        let parse = |r: u32| {
            usize::from_str_radix(digits, r)
                .ok()
                .and_then(|v| v.checked_sub(if r == 16 { base } else { 0 }))
        };
        let offset = match radix {
            Some(r) => parse(r).ok_or_else(bad_offset)?,
            None if out.is_empty() && !repeating => parse(16).ok_or_else(bad_offset)?,
            None => {
                // The first offset after some data tells hex, octal and decimal apart:
                // only one of them can match the byte count (or the repeat).
                let fits = |v: usize| {
                    if repeating {
                        v > out.len()
                            && !previous.is_empty()
                            && (v - out.len()) % previous.len() == 0
                    } else {
                        v == out.len()
                    }
                };
                let r = [16, 8, 10]
                    .into_iter()
                    .find(|&r| parse(r).is_some_and(fits))
                    .unwrap_or(16);
                radix = Some(r);
                parse(r).ok_or_else(bad_offset)?
            }
        };
        if repeating {
            // `*`: the previous line repeats until this offset.
            if previous.is_empty()
                || offset < out.len()
                || (offset - out.len()) % previous.len() != 0
            {
                bail!(
                    "invalid hex dump at line {lineno}: offset {offset:#x} does not continue the repeated line before it"
                );
            }
            while out.len() < offset {
                out.extend_from_slice(&previous);
            }
            repeating = false;
        }
        if offset != out.len() {
            bail!(
                "invalid hex dump at line {lineno}: the offset column says {offset:#x} but {:#x} bytes came before",
                out.len()
            );
        }
        // Cut off the ASCII column.
        // The hex area never holds two spaces in a row in xxd, nor `|` or `>` in the
        // others, so the first of those ends it.
        let hex_area = if xxd {
            let body = rest.strip_prefix(' ').unwrap_or(rest);
            match body.find("  ") {
                Some(end) => &body[..end],
                None => body,
            }
        } else {
            match rest.find(['|', '>']) {
                Some(end) => &rest[..end],
                None => rest,
            }
        };
        let column = line.len() - rest.len();
        let mut bytes = Vec::new();
        for token in hex_area.split_whitespace() {
            if token.len() % 2 != 0 {
                bail!(
                    "invalid hex dump at line {lineno}: {token:?} has an odd number of hex digits"
                );
            }
            for pair in token.as_bytes().chunks(2) {
                match (hex_value(pair[0]), hex_value(pair[1])) {
                    (Some(h), Some(l)) => bytes.push(h << 4 | l),
                    _ => bail!(
                        "invalid hex dump at line {lineno} (after column {column}): {token:?} is not hex"
                    ),
                }
            }
        }
        out.extend_from_slice(&bytes);
        if !bytes.is_empty() {
            previous = bytes;
        }
    }
    if repeating {
        bail!("invalid hex dump: it ends with a `*` line and no final offset");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSG: [u8; 20] = [
        4, 2, 0, 20, 0, 0, 0, 7, 0x41, 0x42, 0x7c, 0x20, 0x20, 0, 0, 0, 0, 0, 0, 0xff,
    ];

    #[test]
    fn detects_every_capture_magic() {
        for m in PCAP_MAGICS.iter().chain([&PCAPNG_MAGIC]) {
            let mut d = m.to_vec();
            d.extend_from_slice(&[0; 20]);
            assert_eq!(detect(&d), Kind::Capture, "{m:x?}");
        }
        assert_eq!(detect(&MSG), Kind::Raw);
        assert_eq!(detect(&[1, 2]), Kind::Raw);
    }

    #[test]
    fn plain_hex_in_many_spellings() {
        for text in [
            "04020014000000074142 7c20200000000000 00ff",
            "04 02 00 14\n00 00 00 07\n41 42 7c 20 20 00 00 00 00 00 00 ff\n",
            "0x04, 0x02, 0x00, 0x14, 0x00, 0x00, 0x00, 0x07, 0x41, 0x42, 0x7c, 0x20, 0x20, 0x00,\n 0x00, 0x00, 0x00, 0x00, 0x00, 0xff",
            "# an echo request\n0402:0014 # header\n00000007 4142 7c20 2000 0000 0000 00ff",
        ] {
            assert_eq!(parse_hex(text).unwrap(), MSG, "{text}");
        }
    }

    #[test]
    fn xxd_dump() {
        let text = "\
00000000: 0402 0014 0000 0007 4142 7c20 2000 0000  ......AB| ......
00000010: 0000 00ff                                ....
";
        assert_eq!(parse_hex(text).unwrap(), MSG);
        // xxd -g1 and -c 8
        let text = "\
00000000: 04 02 00 14 00 00 00 07  ........
00000008: 41 42 7c 20 20 00 00 00  AB|  ...
00000010: 00 00 00 ff              ....
";
        assert_eq!(parse_hex(text).unwrap(), MSG);
    }

    #[test]
    fn od_dump() {
        let text = "\
000000 04 02 00 14 00 00 00 07 41 42 7c 20 20 00 00 00
000010 00 00 00 ff
000014
";
        assert_eq!(parse_hex(text).unwrap(), MSG);
    }

    #[test]
    fn od_with_octal_and_decimal_offsets_and_xxd_with_a_start() {
        let octal = "\
0000000 04 02 00 14 00 00 00 07 41 42 7c 20 20 00 00 00
0000020 00 00 00 ff
0000024
";
        assert_eq!(parse_hex(octal).unwrap(), MSG);
        let decimal = octal
            .replace("0000020", "0000016")
            .replace("0000024", "0000020");
        assert_eq!(parse_hex(&decimal).unwrap(), MSG);
        let skipped = "\
00000010: 0402 0014 0000 0007 4142 7c20 2000 0000  ......AB| ......
00000020: 0000 00ff                                ....
";
        assert_eq!(parse_hex(skipped).unwrap(), MSG);
    }

    #[test]
    fn hexdump_c_with_repeats() {
        let text = "\
00000000  04 02 00 14 00 00 00 07  41 42 7c 20 20 00 00 00  |........AB|  ...|
00000010  00 00 00 ff                                       |....|
00000014
";
        assert_eq!(parse_hex(text).unwrap(), MSG);
        let mut long = vec![4u8, 2, 0, 56, 0, 0, 0, 1];
        long.extend_from_slice(&[0; 48]);
        let text = "\
00000000  04 02 00 38 00 00 00 01  00 00 00 00 00 00 00 00  |...8............|
00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
*
00000030  00 00 00 00 00 00 00 00                           |........|
00000038
";
        assert_eq!(parse_hex(text).unwrap(), long);
    }

    #[test]
    fn bad_hex_is_located() {
        let e = parse_hex("0402 0008\n0000 00zz").unwrap_err().to_string();
        assert!(e.contains("line 2, column 8"), "{e}");
        let e = parse_hex("040").unwrap_err().to_string();
        assert!(e.contains("odd number"), "{e}");
        let e = parse_hex("00000000: 0401 0008\n00000010: 0000 0000\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("offset column"), "{e}");
    }
}
