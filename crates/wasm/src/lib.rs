//! The WebAssembly app host: apps loaded at run time as sandboxed components.
//!
//! An app is a component written against the WIT world `pharos:app` (`wit/app.wit`):
//! it exports handlers (initialise a switch, PACKET_IN one at a time or a turn's worth
//! in one call, PORT_STATUS, FLOW_REMOVED, switch added/removed, timer) over
//! version-neutral records and imports sending
//! (FLOW_MOD, PACKET_OUT, barrier), logging, time and a per-switch store. Guests are
//! written with the `pharos-guest` SDK (`wasm/sdk`, Rust for `wasm32-wasip2`); the
//! examples (a learning switch, a firewall) and the sandbox's test guests are in
//! `wasm/`, built by `scripts/build-wasm-apps` into `wasm/prebuilt/`.
//!
//! ## Layout
//!
//! ```text
//! loader    WasmLoader: compiles a module, links the sandbox (no files, network or
//!           environment: WASI is linked to traps); implements controller's AppLoader
//! app       WasmApp: the loaded module as a controller App, one instance per worker
//!           thread, calls bounded in time, sends queued and written on return
//! sandbox   the engine, its epoch ticker, and Limits (64 MiB of memory per app, 5 ms
//!           per call by default)
//! host      the guest's imports (sending, logging, time, the per-switch store)
//! convert   WIT records to and from the version-neutral model
//! batch     the bytes of `packet-ins`: a turn's PACKET_INs in, the answers out
//! bindings  the host's side of the `pharos:app` world, generated from wit/app.wit
//! ```
//!
//! A trap, an interrupted call or the memory cap reached quarantines the app that
//! caused it and only it: the handler panics with the app's name and the cause, and
//! the dispatcher's quarantine does the rest (the controller, the switch and the
//! other apps carry on).

pub mod app;
mod batch;
mod convert;
mod host;
pub mod loader;
pub mod sandbox;

/// The host's side of the `pharos:app` world (generated from `wit/app.wit`).
mod bindings {
    wasmtime::component::bindgen!({
        world: "app",
        path: "wit",
    });
}

pub use app::WasmApp;
pub use controller::host::{AppLoader, LoadSpec};
pub use loader::WasmLoader;
pub use sandbox::Limits;
