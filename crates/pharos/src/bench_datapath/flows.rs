//! The flow tables the switches are given for the table and mix tests, written as
//! `ovs-ofctl add-flows` files.

use std::path::PathBuf;

use bench::datapath::gen::Addresses;

/// A file of flows for the mix test, in `ovs-ofctl add-flows` syntax: `wildcards`
/// rules of priority 100, rule `j` matching the /26 of source addresses from
/// `src_ip + first_flow + 64 j` plus one of ten sets of other fields (each matching the
/// generator's frames, so that the rules use ten masks), out of port 2; and, at
/// priority 200, one exact rule (every field of OpenFlow 1.0's match) for each flow
/// `k` of the traffic with `k % 100 < exact_share * 100`, also out of port 2. Returns
/// the path and the number of exact rules.
pub(super) fn mix_flows_file(
    a: &Addresses,
    first_flow: u32,
    wildcards: u32,
    exact_share: f64,
) -> anyhow::Result<(PathBuf, u32)> {
    use std::io::Write as _;
    use std::net::Ipv4Addr;
    let path = std::env::temp_dir().join(format!("pharos-datapath-mix-{}", std::process::id()));
    let base = u32::from_be_bytes(a.src_ip).wrapping_add(first_flow);
    let dst = Ipv4Addr::from(a.dst_ip);
    let dst24 = Ipv4Addr::from(u32::from_be_bytes(a.dst_ip) & 0xffff_ff00);
    let (sp, dp) = (a.src_port, a.dst_port);
    let (smac, dmac) = (colon_mac(&a.src_mac), colon_mac(&a.dst_mac));
    let extras = [
        String::new(),
        format!(",tp_dst={dp}"),
        format!(",tp_src={sp}"),
        format!(",nw_dst={dst}"),
        format!(",dl_src={smac}"),
        format!(",dl_dst={dmac}"),
        ",in_port=1".to_string(),
        ",nw_tos=0".to_string(),
        format!(",tp_src={sp},tp_dst={dp}"),
        format!(",nw_dst={dst24}/24"),
    ];
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for j in 0..wildcards {
        writeln!(
            f,
            "priority=100,udp,nw_src={}/26{},actions=output:2",
            Ipv4Addr::from(base.wrapping_add(64 * j)),
            extras[j as usize % extras.len()]
        )?;
    }
    let percent = (exact_share * 100.0).round() as u32;
    let mut exact = 0;
    for k in (0..wildcards * 64).filter(|k| k % 100 < percent) {
        writeln!(
            f,
            "priority=200,in_port=1,dl_src={smac},dl_dst={dmac},vlan_tci=0x0000,udp,\
             nw_src={},nw_dst={dst},nw_tos=0,tp_src={sp},tp_dst={dp},actions=output:2",
            Ipv4Addr::from(base.wrapping_add(k)),
        )?;
        exact += 1;
    }
    f.flush()?;
    Ok((path, exact))
}

/// A file of `n` flows in `ovs-ofctl add-flows` syntax, each matching exactly (every
/// field of OpenFlow 1.0's match) the generator's frames of one source address, out of
/// port 2.
pub(super) fn exact_flows_file(a: &Addresses, n: u32) -> anyhow::Result<PathBuf> {
    exact_flows_file_of(&[(a, n, 1)])
}

/// [`exact_flows_file`] for several inputs: `n` flows of `a`'s frames entering port
/// `in_port`, for each `(a, n, in_port)`.
pub(super) fn exact_flows_file_of(sets: &[(&Addresses, u32, u16)]) -> anyhow::Result<PathBuf> {
    use std::io::Write as _;
    let n: u32 = sets.iter().map(|s| s.1).sum();
    let path =
        std::env::temp_dir().join(format!("pharos-datapath-flows-{}-{n}", std::process::id()));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for &(a, n, in_port) in sets {
        let (smac, dmac) = (colon_mac(&a.src_mac), colon_mac(&a.dst_mac));
        let src = u32::from_be_bytes(a.src_ip);
        let dst = std::net::Ipv4Addr::from(a.dst_ip);
        for k in 0..n {
            writeln!(
                f,
                "priority=100,in_port={in_port},dl_src={smac},dl_dst={dmac},vlan_tci=0x0000,udp,\
                 nw_src={},nw_dst={dst},nw_tos=0,tp_src={},tp_dst={},actions=output:2",
                std::net::Ipv4Addr::from(src.wrapping_add(k)),
                a.src_port,
                a.dst_port
            )?;
        }
    }
    f.flush()?;
    Ok(path)
}

pub(super) fn colon_mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}
