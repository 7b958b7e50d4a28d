//! Loading a module: compile, link the sandbox's imports, run `init`.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, Weak};

use controller::app::AnyApp;
use controller::host::{intern, AppLoader, LoadSpec};
use wasmtime::component::{Component, HasSelf, Linker};

use crate::app::{Module, WasmApp};
use crate::bindings::App as Bindings;
use crate::host::{HostState, MemoryAccount};
use crate::sandbox::{Limits, Runtime};

/// The WASM host's [`AppLoader`]: compiles a component against the `pharos:app` world
/// and wraps it in a [`WasmApp`].
///
/// The sandbox links only the world's `host` interface. A guest built for
/// `wasm32-wasip2` also imports WASI (the standard library's files, clocks, random,
/// environment, stdio): every such import is linked to a function that traps, so a
/// guest touching the file system, the network or the environment is quarantined
/// at its first attempt, and one that does not still loads.
pub struct WasmLoader {
    limits: Limits,
    /// The engine, while an app made by this loader lives (its ticker thread runs
    /// only then).
    runtime: Mutex<Weak<Runtime>>,
}

impl Default for WasmLoader {
    fn default() -> Self {
        WasmLoader::new(Limits::default())
    }
}

impl WasmLoader {
    /// A loader whose apps run within `limits`.
    pub fn new(limits: Limits) -> WasmLoader {
        WasmLoader {
            limits,
            runtime: Mutex::new(Weak::new()),
        }
    }

    fn runtime(&self) -> Result<Arc<Runtime>, String> {
        let mut weak = self
            .runtime
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(rt) = weak.upgrade() {
            return Ok(rt);
        }
        let rt = Runtime::new(self.limits.tick)?;
        *weak = Arc::downgrade(&rt);
        Ok(rt)
    }

    /// Loads `module` as the app `spec` describes, with its concrete type.
    pub fn load_wasm(&self, spec: &LoadSpec, module: &[u8]) -> Result<WasmApp, String> {
        let name = spec.name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "app name {:?}: letters, digits, '_' and '-' only, not empty",
                spec.name
            ));
        }
        let name = intern(name);
        let runtime = self.runtime()?;
        let component = Component::new(&runtime.engine, module)
            .map_err(|e| format!("wasm app {name}: not a valid component: {e:#}"))?;
        let mut linker = Linker::<HostState>::new(&runtime.engine);
        Bindings::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(|e| format!("wasm app {name}: {e:#}"))?;
        linker
            .define_unknown_imports_as_traps(&component)
            .map_err(|e| format!("wasm app {name}: {e:#}"))?;
        let pre = linker
            .instantiate_pre(&component)
            .and_then(crate::bindings::AppPre::new)
            .map_err(|e| format!("wasm app {name}: does not fit the pharos:app world: {e:#}"))?;
        let params = match spec.params_json.trim() {
            "" => "{}".to_string(),
            p => p.to_string(),
        };
        let module = Module {
            runtime,
            pre,
            params,
            limits: self.limits,
            memory: Arc::new(MemoryAccount {
                used: AtomicUsize::new(0),
                cap: self.limits.memory,
            }),
        };
        WasmApp::new(name, spec.order, module)
    }
}

impl AppLoader for WasmLoader {
    fn load(&self, spec: &LoadSpec, module: &[u8]) -> Result<Box<dyn AnyApp>, String> {
        Ok(Box::new(self.load_wasm(spec, module)?))
    }
}
