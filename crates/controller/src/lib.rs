//! # pharos-controller: the controller core
//!
//! Beacon's run-to-completion I/O and the in-kernel controller's three-tier connection
//! path (see ../shared/DESIGN.md, "The connection path" and "The app API"), apps run by
//! a sans-IO dispatcher, and an app host that starts, stops and loads them while
//! switches are connected.
//!
//! ```text
//! acceptor ──► admission (sans-IO Handshake) ──► worker 0..N (a mio loop each)
//!                                                 │ read until WouldBlock
//!                                                 │ frame::next: each header checked once
//!                                                 │ Driver::handle ─► Dispatcher ─► apps
//!                                                 └ flush each output once a turn
//! Switches (any thread) ─► the worker's bounded queue + waker ─► that switch's output
//! pharos-timers thread  ─► Driver::global_tick (app-wide timers)
//! AppHost (REST, ctl)   ─► new plan (generation + 1) ─► Control::Refresh to every
//!                          worker ─► each switch migrates between two messages
//! ```
//!
//! ## Layout, bottom to top (no module imports one above it)
//!
//! ```text
//! sync, units      poison-tolerant locks; durations as people write them
//! dpid, info       the datapath id (the codec's Dpid); SwitchInfo and its ports
//! cookie           app tags in the top 16 bits of a flow's cookie; the encoders' owner
//! requests         xids and pending requests (replies, timeouts, SwitchGone, Busy)
//! timers, timing   per-switch and global timer schedules; per-handler counts and time
//! counters         per-switch, per-worker and total counters; app counters
//! events, services service events and the panic guard; services looked up by type
//! tls, conn        TLS streams; one switch connection: framing, flush, backpressure
//! handshake        the sans-IO OpenFlow handshake (admission drives it)
//! command          what others tell a worker: control (unbounded), deliveries (bounded)
//! output           a switch's output queue, each message counted as it is made
//! switches         Switches: send to any switch from any thread, look it up, events
//! removal          one app's flows removed from every switch; reconcile: flows adopted
//! packet_in, ctx   what a handler gets: the PACKET_IN (Ethernet checked once), SwitchCtx
//! handlers         the handler tables: Registry (one app's), Plan (the running apps'),
//!                  PlanCell (published), Order/Phase/Flow/MessageKind
//! app              the app API: App, Builder, Required; re-exports all an app uses
//! driver           the Driver trait: what a worker drives per switch
//! dispatch         the Dispatcher (sans-IO, one handler runner) and SwitchState
//! host             the AppHost: build, start, stop, restart, order, load; status
//! worker           one event loop and its switches
//! admission        the acceptor and admission tier, on a thread of its own
//! controller       Controller::start: listeners, admission, workers, timer thread
//! config, settings the core's keys of pharos.toml; refused settings with their line
//! ```
//!
//! Who holds what: a worker drives the [`dispatch::Dispatcher`] through [`driver::Driver`];
//! the REST API, `pharos run` and the WebAssembly host hold the [`host::AppHost`] (the
//! app-control handle), [`switches::Switches`] and [`services::Services`], never the
//! dispatcher. Apps import [`app`] alone.
//!
//! Flows are owned by their app ([`cookie`]: the app's tag in the top 16 bits of every
//! cookie it sends, written by the codec's encoders); [`removal`] deletes one app's
//! flows from every switch; [`reconcile`] has each app keep or delete its flows found on
//! a switch that connects (read by the handshake), so a restart does not empty the
//! tables.
//!
//! Settings: [`config`] holds the core's keys of `pharos.toml` (`CoreConfig`, mapped onto
//! [`controller::NetConfig`]); [`settings`] reports a refused setting with its file, key
//! and line for every crate that owns a part of the file; [`units`] reads durations as
//! people write them. The file's schema is the binary's.
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
pub mod settings;
pub mod switches;
mod sync;
pub mod timers;
pub mod timing;
pub mod tls;
pub mod units;
pub mod worker;
