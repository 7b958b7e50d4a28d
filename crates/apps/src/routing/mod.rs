//! Routing between switches: shortest paths and a spanning tree for flooding, with no
//! I/O inside (the routing app feeds them topology events and reads routes back).
//!
//! ```text
//! route.rs   Route, PortHop, Changes, the RoutingEngine trait: what an engine answers
//! graph.rs   the switches and directed links, as dense slots with adjacency lists
//! engine.rs  ShortestPaths: hop-count shortest paths to each destination asked for,
//!            repaired incrementally
//! tree.rs    SpanningTree: the ports flooding may use, so loops never cause storms
//! flood.rs   the flood policy: tree and edge ports, repeats dropped, and what keeps
//!            a loop whose cables are not discovered yet from storming
//! app.rs     the `routing` app, its algorithm: flows along routes, floods along the
//!            tree (I/O through the app API; fed by the Topology and Devices services)
//! routes.rs  the installed routes: a slab by key, cookie and host, the eviction order,
//!            and the prefetch hint of its key index
//! flows.rs   a route's flows: added hop by hop, deleted under routing's tag; adoption
//! shared.rs  the locks the handlers share, the per-switch state, the Paths service
//! params.rs  the app's parameters
//! ```
//!
//! Links and the test topologies are the network's ([`crate::net`]), named here too.
//!
//! A link is directed: a cable between two switches is two links, one per direction, as
//! LLDP discovers them. Ports are `u32` (OpenFlow 1.3's width; 1.0's fit).
//!
//! ```
//! use apps::routing::{topo::FatTree, RoutingEngine, ShortestPaths};
//!
//! let ft = FatTree { k: 4 };
//! let mut engine = ShortestPaths::from_links(ft.switches(), ft.links());
//! let (a, b) = (ft.edge(0, 0), ft.edge(1, 0));
//! let route = engine.route(a, b).unwrap();
//! assert_eq!(route.links.len(), 4); // edge, aggregation, core, aggregation, edge
//! // Host ports 1 on both edge switches: one flow per switch on the way.
//! let hops: Vec<_> = route.path_ports(1, 1).collect();
//! assert_eq!((hops[0].dpid, hops[0].in_port), (a, 1));
//! assert_eq!((hops[4].dpid, hops[4].out_port), (b, 1));
//! // A link on the route goes down: the route is repaired, and the change says so.
//! let changes = engine.link_removed(route.links[1]);
//! assert!(changes.affects(&route));
//! assert_eq!(engine.route(a, b).unwrap().links.len(), 4);
//! ```

pub mod app;
mod engine;
pub mod flood;
mod flows;
mod graph;
mod params;
mod route;
mod routes;
mod shared;
mod tree;

#[cfg(test)]
mod tests;

pub use app::{Paths, Routing, COOKIE_SEQ, COOKIE_TAG};
pub use engine::ShortestPaths;
pub use route::{Changes, PortHop, Route, RoutingEngine};
pub use shared::PerSwitch;
pub use tree::SpanningTree;

/// The links routes are made of, and the test topologies, are the network's
/// ([`crate::net`]), shared with topology and devices; named here too, where routing's
/// users have always found them.
pub use crate::net::{topo, Cable, Link};
