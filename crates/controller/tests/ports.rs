//! Ports stay current, over real TCP, in 1.0 and 1.3: PORT_STATUS add, modify (port
//! down, link down) and delete reach `on_port_status` handlers in version-neutral form,
//! after the core applied them to the switch's port list (`ctx.info().ports` and
//! `Switches::info(dpid).ports` both show the change), and before the message handlers
//! of PORT_STATUS.

mod harness;

use std::sync::{Arc, Mutex};

use controller::app::{App, Builder, Flow, MessageKind, Order};
use controller::info::{PortReason, SwitchInfo, PORT_CONFIG_DOWN, PORT_STATE_LINK_DOWN};
use emu::{Emu, Spec};
use harness::{eventually, test_config, Running, T};
use testkit::emu;

struct Watcher {
    seen: Arc<Mutex<Vec<String>>>,
}

/// The ports as `(number, up)`.
fn ports(info: &SwitchInfo) -> Vec<(u32, bool)> {
    info.ports.iter().map(|p| (p.port_no, p.is_up())).collect()
}

impl App for Watcher {
    type State = ();

    fn name(&self) -> &'static str {
        "watcher"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_port_status(|app, ctx, _, reason, port| {
            let here = ports(ctx.info());
            let listed = ctx.switches().info(ctx.dpid()).map(|i| ports(&i));
            assert_eq!(Some(&here), listed.as_ref(), "Switches is as current");
            app.seen.lock().unwrap().push(format!(
                "{reason:?} {} {} up={} now {here:?}",
                port.port_no,
                port.name,
                port.is_up()
            ));
        });
        b.on_message(MessageKind::PortStatus, Order::direct(0), |app, _, _, m| {
            app.seen
                .lock()
                .unwrap()
                .push(format!("message {}", m.type_name()));
            Flow::Continue
        });
    }
}

#[test]
fn port_status_updates_the_ports_before_handlers_see_it() {
    for spec in [Spec::v10(0x10), Spec::v13(0x13)] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let app = Watcher {
            seen: Arc::clone(&seen),
        };
        let ctl = Running::start(&test_config(), vec![Box::new(app)]);
        let dpid = spec.dpid;
        let mut sw = Emu::connect_and_handshake(ctl.addr, spec, T).unwrap();
        let switches = Arc::clone(ctl.pipeline.switches());
        assert!(eventually(T, || switches.is_connected(openflow::Dpid(dpid))));
        let all_up = vec![(1, true), (2, true), (3, true), (4, true)];
        assert_eq!(ports(&switches.info(openflow::Dpid(dpid)).unwrap()), all_up);

        sw.send_port_status(0, 5, 0, 0).unwrap(); // add
        sw.send_port_status(2, 1, PORT_CONFIG_DOWN, 0).unwrap(); // modify: port down
        sw.send_port_status(2, 2, 0, PORT_STATE_LINK_DOWN).unwrap(); // modify: link down
        sw.send_port_status(1, 3, 0, 0).unwrap(); // delete
        assert!(eventually(T, || seen.lock().unwrap().len() == 8));
        let message = format!("message {}", "PORT_STATUS");
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "Add 5 eth5 up=true now [(1, true), (2, true), (3, true), (4, true), (5, true)]"
                    .to_string(),
                message.clone(),
                "Modify 1 eth1 up=false now [(1, false), (2, true), (3, true), (4, true), (5, true)]"
                    .to_string(),
                message.clone(),
                "Modify 2 eth2 up=false now [(1, false), (2, false), (3, true), (4, true), (5, true)]"
                    .to_string(),
                message.clone(),
                "Delete 3 eth3 up=true now [(1, false), (2, false), (4, true), (5, true)]"
                    .to_string(),
                message,
            ],
            "OpenFlow {}",
            sw.ver()
        );
        let info = switches.info(openflow::Dpid(dpid)).unwrap();
        assert_eq!(ports(&info), [(1, false), (2, false), (4, true), (5, true)]);
        assert_eq!(info.port(1).unwrap().config, PORT_CONFIG_DOWN);
        assert_eq!(info.port(2).unwrap().state, PORT_STATE_LINK_DOWN);
        assert!(info.port(3).is_none());
        assert_eq!(PortReason::from_raw(1), PortReason::Delete);
        // Up again.
        sw.send_port_status(2, 1, 0, 0).unwrap();
        assert!(eventually(T, || switches
            .info(openflow::Dpid(dpid))
            .unwrap()
            .port(1)
            .unwrap()
            .is_up()));
    }
}
