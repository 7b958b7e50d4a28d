//! [`Contract`]: every JSON response checked against the schema `/api/v1/openapi.json`
//! gives for its path, method and status.

use std::net::SocketAddr;

use serde_json::Value;

use crate::http::{request, Resp};

/// The OpenAPI document, and the check of responses against it.
pub struct Contract {
    pub doc: Value,
}

impl Contract {
    /// Fetches `/api/v1/openapi.json` (with `token`, in case reads need it).
    pub fn fetch(addr: SocketAddr, token: &str) -> Contract {
        let auth = format!("Bearer {token}");
        let r = request(
            addr,
            "GET",
            "/api/v1/openapi.json",
            &[("Authorization", &auth)],
            None,
        );
        assert_eq!(r.status, 200, "{}", r.text());
        let doc = r.json();
        assert_eq!(doc["openapi"], "3.1.0");
        Contract { doc }
    }

    /// The document's path template matching `path` (`/api/v1/switches/{dpid}` for
    /// `/api/v1/switches/0x1`); a literal match wins over a template.
    fn template(&self, path: &str) -> Option<String> {
        let path = path.split('?').next().unwrap();
        let paths = self.doc["paths"].as_object()?;
        if paths.contains_key(path) {
            return Some(path.to_string());
        }
        let want: Vec<&str> = path.split('/').collect();
        paths
            .keys()
            .find(|t| {
                let segs: Vec<&str> = t.split('/').collect();
                segs.len() == want.len()
                    && segs
                        .iter()
                        .zip(&want)
                        .all(|(s, w)| s == w || (s.starts_with('{') && s.ends_with('}')))
            })
            .cloned()
    }

    /// Panics unless the document describes this response (path, method, status) and,
    /// when it gives a JSON schema, the body validates against it.
    pub fn check(&self, method: &str, path: &str, r: &Resp) {
        let Some(t) = self.template(path) else {
            panic!("{path} is not in openapi.json")
        };
        let op = &self.doc["paths"][&t][method.to_ascii_lowercase()];
        assert!(op.is_object(), "{method} {t} is not in openapi.json");
        let resp = &op["responses"][r.status.to_string()];
        assert!(
            resp.is_object(),
            "{method} {t} answered {} which openapi.json does not list: {}",
            r.status,
            r.text()
        );
        // A text response (`/metrics`) is checked for its media type only.
        if resp["content"].get("text/plain").is_some() {
            assert!(
                r.header("content-type")
                    .is_some_and(|c| c.starts_with("text/plain")),
                "{method} {path}: {:?}",
                r.header("content-type")
            );
            return;
        }
        assert_eq!(
            r.header("content-type"),
            Some("application/json"),
            "{method} {path}"
        );
        let body = r.json();
        let Some(schema) = resp["content"]["application/json"].get("schema") else {
            return;
        };
        let root = self.rooted(schema);
        let validator = jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("the schema of {method} {t} {}: {e}", r.status));
        let errors: Vec<String> = validator
            .iter_errors(&body)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {path} {}: the body does not match openapi.json: {errors:#?}\n{body:#}",
            r.status
        );
    }

    /// `schema` as a root document, the document's components beside it so that its
    /// `#/components/schemas/...` references resolve.
    fn rooted(&self, schema: &Value) -> Value {
        let mut root = schema.clone();
        if let Some(obj) = root.as_object_mut() {
            obj.insert(
                "$schema".into(),
                "https://json-schema.org/draft/2020-12/schema".into(),
            );
            obj.insert("components".into(), self.doc["components"].clone());
        }
        root
    }

    /// Panics unless `value` validates against the document's component schema
    /// `name` (an event stream's data, which no response schema describes).
    pub fn check_component(&self, name: &str, value: &Value) {
        let schema = &self.doc["components"]["schemas"][name];
        assert!(schema.is_object(), "no component {name} in openapi.json");
        let root = self.rooted(schema);
        let validator = jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("the schema of {name}: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{value:#} does not match {name} in openapi.json: {errors:#?}"
        );
    }
}
