//! Where a lab's switches have their OpenFlow channel (`--controller`): the controller
//! they connect to (`tcp:HOST:PORT`, `ssl:HOST:PORT` over TLS), the port each listens on
//! (`ptcp:PORT`), or none.

use std::net::IpAddr;

use crate::LabError;

/// The controller when none is given.
pub const DEFAULT_CONTROLLER: &str = "tcp:127.0.0.1:6653";

/// Checks a controller target `tcp:HOST:PORT` or `ssl:HOST:PORT` (HOST an IPv4 address
/// or a bracketed IPv6 one); returns its port.
pub fn parse_controller(s: &str) -> Result<u16, LabError> {
    let bad = |why: &str| {
        LabError::Invalid(format!(
            "bad controller {s:?}: {why} (expected tcp:HOST:PORT, for example {DEFAULT_CONTROLLER})"
        ))
    };
    let rest = s
        .strip_prefix("tcp:")
        .or_else(|| s.strip_prefix("ssl:"))
        .ok_or_else(|| bad("only tcp: and ssl: are supported"))?;
    let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.parse::<IpAddr>()
        .map_err(|_| bad("HOST must be an IP address"))?;
    match port.parse::<u16>() {
        Ok(p) if p != 0 => Ok(p),
        _ => Err(bad("PORT must be 1-65535")),
    }
}

/// The address of a controller target `tcp:HOST:PORT` or `ssl:HOST:PORT` (checked as
/// [`parse_controller`] does).
pub fn controller_addr(s: &str) -> Result<std::net::SocketAddr, LabError> {
    let port = parse_controller(s)?;
    let host = s["tcp:".len()..s.len() - port.to_string().len() - 1]
        .trim_start_matches('[')
        .trim_end_matches(']');
    let ip: IpAddr = host
        .parse()
        .map_err(|_| LabError::Invalid(format!("bad controller {s:?}")))?;
    Ok(std::net::SocketAddr::new(ip, port))
}

/// The controller target of a lab: with TLS, `tcp:HOST:PORT` becomes `ssl:HOST:PORT`;
/// without, `ssl:` is refused (the switches would have no certificates).
pub(crate) fn tls_target(controller: &str, tls: bool) -> Result<String, LabError> {
    match (tls, ControlTarget::parse(controller)?) {
        (true, ControlTarget::Connect(_)) => Ok(format!("ssl:{}", &controller[4..])),
        (true, _) => Err(LabError::Invalid(format!(
            "--tls needs a controller the switches connect to (tcp:HOST:PORT), not {controller}"
        ))),
        (false, _) if controller.starts_with("ssl:") => Err(LabError::Invalid(format!(
            "{controller}: a lab over TLS is made with --tls (and --controller tcp:HOST:PORT)"
        ))),
        (false, _) => Ok(controller.to_string()),
    }
}

/// Where a lab's switches have their OpenFlow channel (`--controller`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlTarget {
    /// `tcp:HOST:PORT` (or `ssl:HOST:PORT`, over TLS): every switch connects to the
    /// controller there.
    Connect(std::net::SocketAddr),
    /// `ptcp:PORT`: switch sN listens on 127.0.0.1:(PORT + N - 1) for a controller to
    /// connect (`pharos bench switch --switch-connect`).
    Listen(u16),
    /// `none`: no controller at all. With `fail_mode=secure` the switches forward nothing
    /// until someone (`ovs-ofctl`, a bench on a listening target) installs flows.
    None,
}

/// The `--controller` value for [`ControlTarget::None`].
pub const NO_CONTROLLER: &str = "none";

impl ControlTarget {
    /// Parses `tcp:HOST:PORT`, `ptcp:PORT` or `none`.
    pub fn parse(s: &str) -> Result<ControlTarget, LabError> {
        if s == NO_CONTROLLER {
            return Ok(ControlTarget::None);
        }
        if let Some(port) = s.strip_prefix("ptcp:") {
            return match port.parse::<u16>() {
                Ok(p) if p != 0 => Ok(ControlTarget::Listen(p)),
                _ => Err(LabError::Invalid(format!(
                    "bad controller {s:?}: ptcp:PORT with PORT 1-65535 (switch sN listens on \
                     PORT+N-1)"
                ))),
            };
        }
        if !s.starts_with("tcp:") && !s.starts_with("ssl:") {
            return Err(LabError::Invalid(format!(
                "bad controller {s:?}: expected tcp:HOST:PORT (for example \
                 {DEFAULT_CONTROLLER}), ssl:HOST:PORT, ptcp:PORT or none"
            )));
        }
        controller_addr(s).map(ControlTarget::Connect)
    }

    /// What OVS's `set-controller` gets for switch `num`, if anything.
    pub(crate) fn ovs_target(&self, original: &str, num: u32) -> Option<String> {
        match self {
            ControlTarget::Connect(_) => Some(original.to_string()),
            ControlTarget::Listen(p) => Some(format!("ptcp:{}:127.0.0.1", u32::from(*p) + num - 1)),
            ControlTarget::None => None,
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_turns_tcp_into_ssl_and_ssl_needs_tls() {
        assert_eq!(
            tls_target("tcp:127.0.0.1:6653", true).unwrap(),
            "ssl:127.0.0.1:6653"
        );
        assert_eq!(
            tls_target("tcp:[::1]:6653", true).unwrap(),
            "ssl:[::1]:6653"
        );
        assert_eq!(
            tls_target("tcp:127.0.0.1:6653", false).unwrap(),
            "tcp:127.0.0.1:6653"
        );
        for (target, tls) in [
            ("ptcp:6653", true),
            ("none", true),
            ("ssl:127.0.0.1:6653", false),
        ] {
            assert!(
                matches!(tls_target(target, tls), Err(LabError::Invalid(_))),
                "{target} tls={tls}"
            );
        }
        assert_eq!(parse_controller("ssl:127.0.0.1:6654").unwrap(), 6654);
        assert_eq!(
            ControlTarget::parse("ssl:127.0.0.1:6654").unwrap(),
            ControlTarget::Connect("127.0.0.1:6654".parse().unwrap())
        );
    }

    #[test]
    fn control_targets() {
        assert_eq!(ControlTarget::parse("none").unwrap(), ControlTarget::None);
        assert_eq!(
            ControlTarget::parse("ptcp:6653").unwrap(),
            ControlTarget::Listen(6653)
        );
        assert_eq!(
            ControlTarget::parse("tcp:127.0.0.1:6653").unwrap(),
            ControlTarget::Connect("127.0.0.1:6653".parse().unwrap())
        );
        // Switch sN listens on PORT+N-1; a connecting target is passed on as given.
        let t = ControlTarget::Listen(6653);
        assert_eq!(t.ovs_target("ptcp:6653", 3).unwrap(), "ptcp:6655:127.0.0.1");
        assert_eq!(ControlTarget::None.ovs_target("none", 1), None);
        for bad in ["ptcp:0", "ptcp:x", "ptcp:", "udp:1.2.3.4:5", "None", ""] {
            let e = ControlTarget::parse(bad).unwrap_err().to_string();
            assert!(e.contains("bad controller"), "{bad}: {e}");
        }
        // ssl: is a target (a lab over TLS, see tls_turns_tcp_into_ssl_and_ssl_needs_tls);
        // other schemes are not.
        let e = ControlTarget::parse("unix:/tmp/x").unwrap_err().to_string();
        assert!(e.contains("ssl:HOST:PORT, ptcp:PORT or none"), "{e}");
    }

    #[test]
    fn controllers() {
        assert_eq!(parse_controller("tcp:127.0.0.1:6653").unwrap(), 6653);
        assert_eq!(
            controller_addr("tcp:127.0.0.1:6653").unwrap(),
            "127.0.0.1:6653".parse().unwrap()
        );
        assert_eq!(
            controller_addr("tcp:[::1]:6633").unwrap(),
            "[::1]:6633".parse().unwrap()
        );
        assert_eq!(parse_controller("tcp:[::1]:6633").unwrap(), 6633);
        for bad in [
            "127.0.0.1:6653",
            "tcp:127.0.0.1",
            "tcp:localhost:6653",
            "tcp:1.2.3.4:0",
            "udp:1.2.3.4:6653",
            "tcp:1.2.3.4:x",
        ] {
            let e = parse_controller(bad).unwrap_err().to_string();
            assert!(e.contains("expected tcp:HOST:PORT"), "{bad}: {e}");
        }
    }
}
