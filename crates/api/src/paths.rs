//! `GET /api/v1/paths/{src}/{dst}`: the path the routing app's engine gives now between
//! two switches (dpids) or two hosts (MACs), or a switch and a host.
//!
//! The path comes from the routing app's [`Paths`] service, the engine that decides
//! where traffic goes, so the answer is the path a packet would take. When routing does
//! not run the answer is 503, saying so, rather than a path computed here from the
//! topology: that would be a guess at what another engine would do, and the routes the
//! network actually uses are none (without routing, forwarding is whatever app runs).
//!
//! A host is found in the device manager's table (its latest attachment point if it
//! is seen on several VLANs); its port is the first hop's `in_port` (a source host) or
//! the last hop's `out_port` (a destination host). A switch end has no port there:
//! `null`.

use std::sync::Arc;

use apps::devices::Devices;
use apps::routing::Paths;
use axum::extract::{Path, State};
use axum::Json;
use openflow::MacAddr;
use serde::Serialize;
use utoipa::ToSchema;

use crate::dpid::{self, Dpid};
use crate::error::ApiError;
use crate::model::ErrorBody;
use crate::Shared;

/// One switch on a path.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Hop {
    /// The switch, `00:00:00:00:00:00:00:01`.
    pub dpid: String,
    /// The port the packet enters by; `null` on the first switch when the path starts
    /// at a switch.
    pub in_port: Option<u32>,
    /// The port the packet leaves by; `null` on the last switch when the path ends at
    /// a switch.
    pub out_port: Option<u32>,
}

/// `GET /paths/{src}/{dst}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PathBody {
    /// The source as given, normalized: a dpid in the colon form or a MAC.
    pub src: String,
    /// The destination, likewise.
    pub dst: String,
    /// Links crossed (hops minus one).
    pub length: usize,
    /// Every switch from the source's to the destination's, in order.
    pub hops: Vec<Hop>,
}

/// One end of a path, as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Switch(Dpid),
    Host(MacAddr),
}

/// A MAC (six colon-separated bytes) is a host; anything else must be a dpid.
fn parse_end(text: &str) -> Result<End, ApiError> {
    if text.split(':').count() == 6 {
        return text.parse::<MacAddr>().map(End::Host).map_err(|_| {
            ApiError::bad_request(format!("{text:?} is neither a MAC address nor a dpid"))
        });
    }
    dpid::parse(text)
        .map(End::Switch)
        .map_err(|e| ApiError::bad_request(format!("{e} (nor a host's MAC, aa:bb:cc:dd:ee:ff)")))
}

/// The switch and port of an end (`None` port for a switch).
fn locate(s: &Shared, end: End) -> Result<(Dpid, Option<u32>), ApiError> {
    match end {
        End::Switch(d) => {
            if !s.core.switches().is_connected(d) {
                return Err(ApiError::not_found(format!(
                    "no switch {} is connected",
                    dpid::format(d)
                )));
            }
            Ok((d, None))
        }
        End::Host(mac) => {
            let devices = s.core.services().get::<Devices>().ok_or_else(|| {
                ApiError::unavailable(
                    "hosts are tracked by the device_manager app, which is not running (see --apps)",
                )
            })?;
            let host = devices
                .by_mac(mac)
                .into_iter()
                .max_by_key(|h| h.last_seen())
                .ok_or_else(|| ApiError::not_found(format!("no host {mac} is known")))?;
            let ap = host.attachment_point();
            Ok((ap.dpid, Some(ap.port)))
        }
    }
}

fn show(end: End) -> String {
    match end {
        End::Switch(d) => dpid::format(d),
        End::Host(m) => m.to_string(),
    }
}

/// The routing engine's path between two switches or hosts: each switch with the port
/// a packet enters by and the port it leaves by.
#[utoipa::path(get, path = "/api/v1/paths/{src}/{dst}", tag = "network",
    params(("src" = String, Path, description = "A dpid (`00:00:00:00:00:00:00:01`, `1`, ...) or a host's MAC (`aa:bb:cc:dd:ee:ff`)"),
        ("dst" = String, Path, description = "Likewise")),
    responses((status = 200, description = "The path", body = PathBody),
        (status = 400, description = "Neither a dpid nor a MAC", body = ErrorBody),
        (status = 401, description = "A token is needed", body = ErrorBody),
        (status = 403, description = "Wrong token", body = ErrorBody),
        (status = 404, description = "No such switch connected, no such host known, or no path between them", body = ErrorBody),
        (status = 503, description = "The routing app (or, for a host, the device_manager app) is not running", body = ErrorBody)))]
pub async fn path(
    State(s): State<Arc<Shared>>,
    Path((src, dst)): Path<(String, String)>,
) -> Result<Json<PathBody>, ApiError> {
    let (src, dst) = (parse_end(&src)?, parse_end(&dst)?);
    let paths = s.core.services().get::<Paths>().ok_or_else(|| {
        ApiError::unavailable(
            "paths are computed by the routing app, which is not running (see --apps)",
        )
    })?;
    let (from, in_port) = locate(&s, src)?;
    let (to, out_port) = locate(&s, dst)?;
    let route = paths.route(from, to).ok_or_else(|| {
        ApiError::not_found(format!(
            "the routing engine knows no path from {} to {}",
            show(src),
            show(dst)
        ))
    })?;
    // The engine's ports, with the ends' own (a host's port, or none for a switch).
    let n = route.links.len();
    let hops = route
        .path_ports(in_port.unwrap_or(0), out_port.unwrap_or(0))
        .enumerate()
        .map(|(i, h)| Hop {
            dpid: dpid::format(h.dpid),
            in_port: if i == 0 { in_port } else { Some(h.in_port) },
            out_port: if i == n { out_port } else { Some(h.out_port) },
        })
        .collect();
    Ok(Json(PathBody {
        src: show(src),
        dst: show(dst),
        length: n,
        hops,
    }))
}
