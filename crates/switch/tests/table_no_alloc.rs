//! No heap allocation per frame in `Pipeline::process`: 1.0 with exact and wildcard
//! flows (hits, a miss to the controller, field writes with checksum fixes, VLAN push
//! and pop), and 1.3 through three tables with write-actions, metadata and the
//! table-miss flow; also PACKET_OUT's `execute` with an output to TABLE, and 1.3's
//! groups (an all group whose buckets write their copies, a select group).

use std::time::Instant;

use ofswitch::table::testutil::{frame, udp, Counter, Ip4};
use ofswitch::table::{FlowModRequest, GroupModRequest, Pipeline, PipelineConfig};
use openflow::model::FlowModCommand;
use openflow::ofctl::parse_flow;
use openflow::Version;

fn pipeline(version: Version, flows: &[&str]) -> Pipeline {
    let mut p = Pipeline::new(PipelineConfig {
        version,
        tables: 4,
        max_flows: 100_000,
    });
    add_flows(&mut p, flows);
    p
}

fn add_flows(p: &mut Pipeline, flows: &[&str]) {
    let mut removed = Vec::new();
    for s in flows {
        let f = parse_flow(s).unwrap();
        let req = FlowModRequest {
            command: FlowModCommand::Add,
            flow: &f,
            out_port: None,
            out_group: None,
        };
        p.flow_mod(&req, Instant::now(), &mut removed).unwrap();
    }
}

#[test]
fn processing_frames_allocates_nothing() {
    let mut v10 = pipeline(
        Version::V1_0,
        &[
            "priority=100,in_port=1,dl_src=02:00:00:00:00:01,dl_dst=02:00:00:00:00:02,dl_vlan=0xffff,udp,nw_tos=0,nw_src=10.0.0.1,nw_dst=10.0.0.2,tp_src=1000,tp_dst=2000,actions=output:2",
            "priority=10,in_port=2,udp,actions=mod_nw_dst:10.1.1.1,mod_tp_dst:53,mod_vlan_vid:7,output:1,strip_vlan,output:3",
            "priority=5,dl_dst=02:00:00:00:00:03,actions=flood",
        ],
    );
    let mut v13 = pipeline(
        Version::V1_3,
        &[
            "table=0,priority=10,udp,actions=write_actions(output:4),write_metadata:0x7/0xff,goto_table:1",
            "table=0,priority=0,actions=controller:128",
            "table=1,priority=10,metadata=0x7/0xff,actions=push_vlan:0x8100,set_field:4100->vlan_vid,goto_table:2",
            "table=2,priority=10,dl_vlan=4,actions=write_actions(dec_ttl,mod_nw_src:10.9.9.9,output:5)",
        ],
    );
    let mut groups = pipeline(Version::V1_3, &[]);
    {
        use openflow::of13::group::{GroupModCommand, GroupType};
        use openflow::of13::{Action, Bucket};
        let bucket = |weight, actions| Bucket {
            weight,
            watch_port: u32::MAX,
            watch_group: u32::MAX,
            actions,
        };
        let out = |port| Action::Output { port, max_len: 0 };
        for (group_type, group_id, buckets) in [
            (
                GroupType::All,
                1,
                vec![
                    bucket(0, vec![Action::DecNwTtl, out(2)]),
                    bucket(0, vec![Action::PushVlan { ethertype: 0x8100 }, out(3)]),
                ],
            ),
            (
                GroupType::Select,
                2,
                vec![bucket(1, vec![out(2)]), bucket(2, vec![out(3)])],
            ),
        ] {
            let req = GroupModRequest {
                command: GroupModCommand::Add,
                group_type,
                group_id,
                buckets: &buckets,
            };
            groups
                .group_mod(&req, Instant::now(), &mut Vec::new())
                .unwrap();
        }
        add_flows(
            &mut groups,
            &[
                "priority=2,tcp,actions=group:1",
                "priority=1,actions=write_actions(group:2)",
            ],
        );
    }
    let known = udp(1, 2);
    let rewrite = udp(5, 6);
    let unknown = udp(7, 8);
    let tcp = frame(
        [2; 6],
        [3; 6],
        None,
        &Ip4 {
            proto: 6,
            ..Ip4::default()
        },
    );
    let actions = parse_flow("actions=mod_dl_src:02:00:00:00:00:09,output:table,output:3")
        .unwrap()
        .actions;
    let now = Instant::now();
    let mut sink = Counter::default();
    v10.process(1, &known, now, &mut sink);
    v13.process(1, &known, now, &mut sink);
    groups.process(1, &tcp, now, &mut sink);
    groups.process(1, &known, now, &mut sink);
    let info = allocation_counter::measure(|| {
        for _ in 0..1000 {
            v10.process(1, &known, now, &mut sink);
            v10.process(2, &rewrite, now, &mut sink);
            v10.process(3, &unknown, now, &mut sink);
            v10.process(3, &tcp, now, &mut sink);
            v13.process(1, &known, now, &mut sink);
            v13.process(1, &tcp, now, &mut sink);
            v10.execute(&actions, 2, &rewrite, now, &mut sink);
            groups.process(1, &tcp, now, &mut sink);
            groups.process(1, &known, now, &mut sink);
        }
    });
    assert_eq!(info.count_total, 0, "the forwarding path allocated");
    // Per turn, 1.0: 1 + 2 + 1 (miss) + 1 (miss); 1.3: 1 + 1 (table-miss); execute:
    // the pipeline's 2 + 1; groups: 2 buckets + 1. Plus the warm-up's 2 + 3.
    assert_eq!(sink.frames, 2 + 3 + 1000 * (5 + 2 + 3 + 3));
}
