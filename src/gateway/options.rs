//! `manager.serve(options)`'s options: the transport (`'stdio'`, or `'http'` with where to
//! listen), what the gateway calls itself (`name`, `version`, `instructions`), the response
//! rules (`limits`, `toolTimeoutMs`), which tools (`view`: a view spec, default all), under
//! which names tools and prompts are served (`names`: `'manager'`, the default, or
//! `'upstream'`) and whether results are wrapped as untrusted content (`wrap`, default true).

use serde_json::{Map, Value};

use super::names::ServedNames;
use crate::manager::ViewSpec;
use crate::server::http::HttpOptions;
use crate::server::options::{HTTP_KEYS, SERVER_KEYS, ServerOptions, http_options};

/// The name the gateway gives itself unless told otherwise.
pub const DEFAULT_NAME: &str = "openclaw-mcp-gateway";

#[derive(Debug, Clone)]
pub enum GatewayTransport {
    Stdio,
    Http(HttpOptions),
}

#[derive(Debug, Clone)]
pub struct GatewayOptions {
    pub transport: GatewayTransport,
    pub server: ServerOptions,
    pub view: Option<ViewSpec>,
    pub names: ServedNames,
    /// Results wrapped as untrusted content (true, the default), or served as the upstream
    /// server's content blocks, redacted.
    pub wrap: bool,
}

impl GatewayOptions {
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Object(options) = value else {
            return Err(
                "options must be an object { transport: 'stdio' | 'http', view?, names?, wrap?, name?, version?, \
                 instructions?, limits?, toolTimeoutMs?, host?, port?, path?, stateless?, \
                 allowedOrigins?, allowedHosts? }"
                    .into(),
            );
        };
        if let Some(unknown) = options.keys().find(|k| {
            !matches!(k.as_str(), "transport" | "view" | "names" | "wrap")
                && !HTTP_KEYS.contains(&k.as_str())
                && !SERVER_KEYS.contains(&k.as_str())
        }) {
            return Err(format!("options.{unknown} is not an option"));
        }
        let pick = |keys: &[&str]| -> Map<String, Value> {
            options
                .iter()
                .filter(|(k, _)| keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let http = pick(HTTP_KEYS);
        let transport = match options.get("transport").and_then(Value::as_str) {
            Some("stdio") => {
                if let Some(key) = http.keys().next() {
                    return Err(format!("options.{key} applies to transport 'http'"));
                }
                GatewayTransport::Stdio
            }
            Some("http") => GatewayTransport::Http(http_options(&Value::Object(http))?),
            _ => {
                return Err(format!(
                    "options.transport must be 'stdio' or 'http', got {}",
                    options
                        .get("transport")
                        .map_or("nothing".to_owned(), Value::to_string)
                ));
            }
        };
        let mut server = pick(SERVER_KEYS);
        server
            .entry("name")
            .or_insert_with(|| Value::from(DEFAULT_NAME));
        server
            .entry("version")
            .or_insert_with(|| Value::from(env!("CARGO_PKG_VERSION")));
        let server = ServerOptions::from_json(&Value::Object(server))?;
        let view = match options.get("view") {
            None | Some(Value::Null) => None,
            Some(Value::Object(spec)) => Some(ViewSpec::from_json(spec)?),
            Some(other) => {
                return Err(format!(
                    "options.view must be a view spec {{ servers?, allow?, deny?, toolNames? }}, got {other}"
                ));
            }
        };
        let names = match options.get("names") {
            None | Some(Value::Null) => ServedNames::default(),
            Some(value) => value.as_str().and_then(ServedNames::parse).ok_or_else(|| {
                format!("options.names must be {}, got {value}", ServedNames::VALUES)
            })?,
        };
        let wrap = match options.get("wrap") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(wrap)) => *wrap,
            Some(other) => {
                return Err(format!(
                    "options.wrap must be true or false, got {}",
                    crate::config::values::kind_in_words(other)
                ));
            }
        };
        Ok(Self {
            transport,
            server,
            view,
            names,
            wrap,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_each_transport_and_fills_the_name() {
        let stdio = GatewayOptions::from_json(&json!({ "transport": "stdio" })).unwrap();
        assert!(matches!(stdio.transport, GatewayTransport::Stdio));
        assert_eq!(stdio.server.name, DEFAULT_NAME);
        assert!(stdio.view.is_none());
        assert_eq!(stdio.names, ServedNames::Manager);
        let upstream =
            GatewayOptions::from_json(&json!({ "transport": "stdio", "names": "upstream" }))
                .unwrap();
        assert_eq!(upstream.names, ServedNames::Upstream);
        assert!(stdio.wrap);
        let plain = GatewayOptions::from_json(&json!({ "transport": "stdio", "wrap": false }));
        assert!(!plain.unwrap().wrap);
        let http = GatewayOptions::from_json(&json!({
            "transport": "http", "port": 0, "path": "/gw", "name": "mine", "version": "2",
            "view": { "servers": ["a"] }
        }))
        .unwrap();
        match http.transport {
            GatewayTransport::Http(h) => {
                assert_eq!((h.host.as_str(), h.path.as_str()), ("127.0.0.1", "/gw"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            (http.server.name.as_str(), http.server.version.as_str()),
            ("mine", "2")
        );
        assert!(http.view.is_some());
    }

    #[test]
    fn names_what_is_wrong() {
        let err = |v| GatewayOptions::from_json(&v).unwrap_err();
        assert!(err(json!(null)).starts_with("options must be an object"));
        assert_eq!(
            err(json!({})),
            "options.transport must be 'stdio' or 'http', got nothing"
        );
        assert_eq!(
            err(json!({ "transport": "ws" })),
            "options.transport must be 'stdio' or 'http', got \"ws\""
        );
        assert_eq!(
            err(json!({ "transport": "stdio", "port": 1 })),
            "options.port applies to transport 'http'"
        );
        assert_eq!(
            err(json!({ "transport": "http", "colour": 1 })),
            "options.colour is not an option"
        );
        assert_eq!(
            err(json!({ "transport": "stdio", "wrap": "no" })),
            "options.wrap must be true or false, got a string"
        );
        assert!(
            err(json!({ "transport": "http", "view": 3 }))
                .starts_with("options.view must be a view spec")
        );
        assert_eq!(
            err(json!({ "transport": "http", "names": "bare" })),
            "options.names must be 'manager' or 'upstream', got \"bare\""
        );
        assert_eq!(
            err(json!({ "transport": "http", "names": true })),
            "options.names must be 'manager' or 'upstream', got true"
        );
        assert!(
            err(json!({ "transport": "http", "view": { "bogus": 1 } }))
                .contains("unknown option 'bogus'")
        );
    }
}
