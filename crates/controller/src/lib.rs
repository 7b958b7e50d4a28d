//! # pharos-controller: the controller core
//!
//! Beacon's run-to-completion I/O and the in-kernel controller's three-tier connection
//! path (see ../shared/DESIGN.md, "The connection path" and "The app API").
//!
//! ```text
//! acceptor ──► admission (handshake, sans-IO Handshake) ──► worker 0..N (mio loop each)
//!                                                            │  read until WouldBlock
//!                                                            │  frame + dispatch in place
//!                                                            │  Pipeline::handle ─► apps
//!                                                            └─ flush each output once/turn
//! Switches (any thread) ─► worker's command channel + waker ─► that switch's output
//! pharos-timers thread  ─► Pipeline::global_tick (app-wide timers)
//! lifecycle (REST, ctl)  ─► new plan (generation + 1) ─► Command::Refresh to every worker
//!                           ─► each switch migrates between two messages ─► acknowledged
//! ```
//!
//! Flows are owned by their app ([`cookie`]: the app's tag in the top 16 bits of every
//! cookie it sends, stamped by the core); [`removal`] deletes one app's flows from
//! every switch; [`reconcile`] has each app keep or delete its flows found on a switch
//! that connects (read by the handshake), so a restart does not empty the tables.
pub mod admission;
pub mod app;
pub mod command;
pub mod config;
pub mod conn;
pub mod controller;
pub mod cookie;
pub mod counters;
pub mod ctx;
pub mod dispatch;
pub mod dpid;
pub mod driver;
pub mod events;
pub mod handlers;
pub mod handshake;
pub mod host;
pub mod info;
pub mod output;
pub mod packet_in;
pub mod reconcile;
pub mod removal;
pub mod requests;
pub mod services;
pub mod switches;
mod sync;
pub mod timers;
pub mod timing;
pub mod tls;
pub mod units;
pub mod worker;
