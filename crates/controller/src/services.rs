//! Cross-switch state lives in services, looked up by type (bevy's resources, not
//! Ryu's string-keyed `SERVICE_BRICKS`): an app provides `Arc<dyn Topology>` in
//! [`crate::app::App::build`], another requires it in [`crate::app::App::start`], and
//! a missing one fails start-up naming both the service and the app.
//!
//! ```
//! use std::sync::Arc;
//! use controller::services::Services;
//!
//! trait Clock: Send + Sync { fn ticks(&self) -> u64; }
//! struct Fixed;
//! impl Clock for Fixed { fn ticks(&self) -> u64 { 7 } }
//!
//! let mut s = Services::new();
//! s.provide::<dyn Clock>(Arc::new(Fixed), "clock_app").unwrap();
//! assert_eq!(s.require::<dyn Clock>("user_app").unwrap().ticks(), 7);
//! assert!(s.get::<String>().is_none());
//! ```

use std::any::{type_name, Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Why the pipeline could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// An app requires a service no app (and no caller) provides.
    #[error("app {app} requires the service {service}, which no app provides")]
    MissingService {
        /// The type name of the service.
        service: &'static str,
        /// The app that asked for it.
        app: &'static str,
    },
    /// Two providers for one service type.
    #[error("the service {service} is provided twice: by {first} and by {second}")]
    DuplicateService {
        /// The type name of the service.
        service: &'static str,
        /// Who provided it first.
        first: &'static str,
        /// Who tried to provide it again.
        second: &'static str,
    },
    /// An app's `start` failed for its own reason.
    #[error("app {app} failed to start: {reason}")]
    Failed {
        /// The app.
        app: &'static str,
        /// What went wrong, in the app's words.
        reason: String,
    },
    /// Two apps with the same name (handlers, logs and counters are named by app).
    #[error("two apps are named {app}")]
    DuplicateApp {
        /// The name.
        app: &'static str,
    },
    /// Two apps whose names hash to the same cookie tag ([`crate::cookie::app_tag`]):
    /// their flows could not be told apart. Rename one.
    #[error("apps {first} and {second} have the same cookie tag (a hash of the name): their flows could not be told apart; rename one")]
    CookieTagCollision {
        /// The app registered first.
        first: &'static str,
        /// The app registered second.
        second: &'static str,
    },
}

/// One provided service: the `Arc<T>` (boxed as `Any` so one map holds every type)
/// and who provided it, for error messages.
struct Entry {
    value: Box<dyn Any + Send + Sync>,
    provider: &'static str,
    service: &'static str,
}

/// A registry of services keyed by their type (`TypeId`), usually a trait object type.
#[derive(Default)]
pub struct Services {
    /// `TypeId::of::<T>()` → `Arc<T>`.
    map: HashMap<TypeId, Entry>,
}

impl fmt::Debug for Services {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.map.values().map(|e| (e.service, e.provider)))
            .finish()
    }
}

impl Services {
    /// An empty registry.
    pub fn new() -> Services {
        Services::default()
    }

    /// Makes `value` the service of type `T`, provided by `provider` (an app name, or
    /// whoever builds the pipeline). A second provider of one type is an error.
    pub fn provide<T: ?Sized + Send + Sync + 'static>(
        &mut self,
        value: Arc<T>,
        provider: &'static str,
    ) -> Result<(), StartError> {
        let service = type_name::<T>();
        if let Some(e) = self.map.get(&TypeId::of::<T>()) {
            return Err(StartError::DuplicateService {
                service,
                first: e.provider,
                second: provider,
            });
        }
        self.map.insert(
            TypeId::of::<T>(),
            Entry {
                value: Box::new(value),
                provider,
                service,
            },
        );
        Ok(())
    }

    /// The service of type `T`, if someone provides it.
    pub fn get<T: ?Sized + Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|e| e.value.downcast_ref::<Arc<T>>())
            .cloned()
    }

    /// The service of type `T`, or [`StartError::MissingService`] naming it and `app`.
    pub fn require<T: ?Sized + Send + Sync + 'static>(
        &self,
        app: &'static str,
    ) -> Result<Arc<T>, StartError> {
        self.get::<T>().ok_or(StartError::MissingService {
            service: type_name::<T>(),
            app,
        })
    }

    /// Who provides the service of type id `id` (an app's name, or whoever built the
    /// pipeline).
    pub fn provider(&self, id: TypeId) -> Option<&'static str> {
        self.map.get(&id).map(|e| e.provider)
    }

    /// Number of services provided.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no service is provided.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Moves every service of `other` into `self`; duplicates are an error.
    pub(crate) fn merge(&mut self, other: Services) -> Result<(), StartError> {
        for (id, e) in other.map {
            if let Some(first) = self.map.get(&id) {
                return Err(StartError::DuplicateService {
                    service: e.service,
                    first: first.provider,
                    second: e.provider,
                });
            }
            self.map.insert(id, e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    trait Greeter: Send + Sync {
        fn hello(&self) -> &'static str;
    }
    struct En;
    impl Greeter for En {
        fn hello(&self) -> &'static str {
            "hello"
        }
    }

    #[test]
    fn provide_get_require() {
        let mut s = Services::new();
        assert!(s.is_empty());
        s.provide::<dyn Greeter>(Arc::new(En), "greeter").unwrap();
        s.provide::<u32>(Arc::new(5), "numbers").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s.get::<dyn Greeter>().unwrap().hello(), "hello");
        assert_eq!(*s.require::<u32>("x").unwrap(), 5);
        let e = s.require::<u64>("needs_u64").unwrap_err();
        assert_eq!(
            e,
            StartError::MissingService {
                service: "u64",
                app: "needs_u64"
            }
        );
        assert!(e.to_string().contains("needs_u64"));
    }

    #[test]
    fn duplicates_are_refused() {
        let mut s = Services::new();
        s.provide::<u32>(Arc::new(1), "a").unwrap();
        let e = s.provide::<u32>(Arc::new(2), "b").unwrap_err();
        assert!(matches!(
            e,
            StartError::DuplicateService {
                first: "a",
                second: "b",
                ..
            }
        ));
        let mut other = Services::new();
        other.provide::<u32>(Arc::new(3), "c").unwrap();
        assert!(s.merge(other).is_err());
        assert_eq!(*s.get::<u32>().unwrap(), 1);
    }
}
