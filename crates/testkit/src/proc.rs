//! What `/proc` says about sockets, read without touching them: whether something
//! listens on an address (a test must not connect to a server to find out when the
//! server would take the connection for its peer's).

use std::net::SocketAddrV4;

/// Whether a TCP socket listens on exactly `addr` (not on 0.0.0.0), from
/// `/proc/net/tcp`; false where that cannot be read.
pub fn listening(addr: SocketAddrV4) -> bool {
    std::fs::read_to_string("/proc/net/tcp").is_ok_and(|t| listens_in(&t, addr))
}

/// Whether a `/proc/net/tcp` table has a row in state LISTEN (`0A`) whose local
/// address is `addr` (written as the kernel writes it: the address as a
/// native-endian hex word, the port in hex).
pub fn listens_in(table: &str, addr: SocketAddrV4) -> bool {
    let want = format!(
        "{:08X}:{:04X}",
        u32::from_ne_bytes(addr.ip().octets()),
        addr.port()
    );
    table.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 3 && f[1] == want && f[3] == "0A"
    })
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    #[test]
    fn a_listening_row_on_the_address_is_found_and_others_are_not() {
        // 0x19FD = 6653; state 0A = LISTEN, 01 = ESTABLISHED; 0100007F is 127.0.0.1 on
        // a little-endian machine.
        let table = "  sl  local_address rem_address   st tx_queue rx_queue\n\
   0: 0100007F:19FD 00000000:0000 0A 00000000:00000000\n\
   1: 0100007F:A1B2 0100007F:19FD 01 00000000:00000000\n\
   2: 00000000:1F90 00000000:0000 0A 00000000:00000000\n";
        let at = |port| SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        if cfg!(target_endian = "little") {
            assert!(listens_in(table, at(6653)));
        }
        // Established, not listening; and 0.0.0.0:8080 is not 127.0.0.1:8080.
        assert!(!listens_in(table, at(0xA1B2)));
        assert!(!listens_in(table, at(8080)));
        assert!(listens_in(
            table,
            SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 8080)
        ));
    }
}
