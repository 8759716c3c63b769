//! Current OpenClaw's top-level `mcp.servers` ("bundle-mcp", 2026.9.x).
//!
//! ```json
//! { "mcp": { "servers": { "docs": { "url": "https://…/mcp", "transport": "streamable-http",
//!   "connectionTimeoutMs": 5000, "requestTimeoutMs": 20000,
//!   "toolFilter": { "include": ["search", "read_*"] } } } } }
//! ```
//!
//! | source field | our `McpConfig` |
//! |---|---|
//! | `enabled`, `command`, `args`, `cwd`, `url` | the same |
//! | `workingDirectory` | `cwd` (an alias; `cwd` wins when both are given, with a warning) |
//! | `env`, `headers` | the same; number and boolean values become strings; `${VAR}` strings are left for the secret resolver |
//! | `transport` (`stdio` \| `sse` \| `streamable-http`, any case) | `transport` |
//! | `type` (alias when `transport` is absent; also `http`) | `transport` |
//! | neither | `stdio` when `command` is given, else `sse` when `url` is (as OpenClaw does) |
//! | `connectionTimeoutMs` | `timeout` |
//! | `requestTimeoutMs` | `toolTimeout` |
//! | `toolFilter { include, exclude }` | `toolFilter` (other keys inside: warning, ignored) |
//! | `supportsParallelToolCalls` (boolean) | recorded (`ExtractedConfig::recorded`) |
//! | `auth: "oauth"` with `oauth { clientId, clientSecret, scopes, redirectUri, grant, privateKeyFile, clientMetadataUrl }` | `auth: { type: 'oauth', … }` (other keys of `oauth`: warning, ignored) |
//! | `oauth` without `auth: "oauth"` | warning, ignored |
//! | `sslVerify`, `clientCert`, `clientKey` | warning, ignored |
//! | anything else | warning, ignored (OpenClaw's server type is open: `[key: string]: unknown`) |
//!
//! Other keys of `mcp` are ignored with a warning. The server name `__proto__`
//! is rejected, as OpenClaw does.

use serde_json::Value;

use super::common::{Conv, ConvServer, Item, at, join};
use crate::config::values::{excerpt, type_name};

/// The members of OpenClaw's `oauth` object carried into our `auth`.
const OAUTH_KEYS: [&str; 9] = [
    "assertionFile",
    "idp",
    "clientId",
    "clientSecret",
    "scopes",
    "redirectUri",
    "grant",
    "privateKeyFile",
    "clientMetadataUrl",
];

const TRANSPORTS: &str = "expected 'stdio', 'sse' or 'streamable-http'";

fn server(conv: &mut Conv, name: &str, base: String, entry: &Value) {
    let Value::Object(obj) = entry else {
        conv.issue(super::common::expected(&base, "object", entry));
        return;
    };
    let mut s = ConvServer::new(name, base);
    if name == "__proto__" {
        s.issues.push(format!(
            "{}: The server name '__proto__' is reserved; choose a different name",
            s.base
        ));
    }
    let mut transport_given = false;
    let oauth = obj.get("auth") == Some(&Value::String("oauth".to_owned()));
    for (key, v) in obj {
        match key.as_str() {
            "enabled" | "command" | "args" | "url" => s.copy(key, key, v),
            "cwd" => s.copy("cwd", "cwd", v),
            "workingDirectory" => {
                if obj.contains_key("cwd") {
                    conv.warn(format!(
                        "{}: Ignored; 'cwd' is given too and wins",
                        s.path(key)
                    ));
                } else {
                    s.copy("cwd", key, v);
                }
            }
            "env" | "headers" => s.string_record(key, key, v),
            "transport" => {
                transport_given = true;
                match v {
                    Value::String(t) => {
                        let lower = t.to_lowercase();
                        if matches!(lower.as_str(), "stdio" | "sse" | "streamable-http") {
                            s.obj.insert("transport".to_owned(), Value::String(lower));
                        } else {
                            s.issue(
                                key,
                                format_args!("Invalid transport '{}': {TRANSPORTS}", excerpt(t)),
                            );
                        }
                    }
                    other => s.expected(key, "string", other),
                }
            }
            "type" => {
                if obj.contains_key("transport") {
                    conv.warn(format!(
                        "{}: Ignored; 'transport' is given too and wins",
                        s.path(key)
                    ));
                    continue;
                }
                transport_given = true;
                match v {
                    Value::String(t) => {
                        let lower = t.to_lowercase();
                        let mapped = match lower.as_str() {
                            "stdio" => Some("stdio"),
                            "sse" => Some("sse"),
                            "streamable-http" | "http" => Some("streamable-http"),
                            _ => None,
                        };
                        match mapped {
                            Some(m) => {
                                s.obj.insert("transport".to_owned(), Value::from(m));
                                s.rename("transport", "type");
                            }
                            None => s.issue(
                                key,
                                format_args!(
                                    "Invalid type '{}': expected 'stdio', 'sse', 'http' or 'streamable-http'",
                                    excerpt(t)
                                ),
                            ),
                        }
                    }
                    other => s.expected(key, "string", other),
                }
            }
            "connectionTimeoutMs" => s.copy("timeout", key, v),
            "requestTimeoutMs" => s.copy("toolTimeout", key, v),
            "supportsParallelToolCalls" => match v {
                Value::Bool(b) => conv.record(name, key, Value::Bool(*b)),
                other => s.expected(key, "boolean", other),
            },
            "toolFilter" => match v {
                Value::Object(f) => {
                    let mut kept = serde_json::Map::new();
                    for (fk, fv) in f {
                        if fk == "include" || fk == "exclude" {
                            if let Some(c) = s.checked(&format!("{key}.{fk}"), fv) {
                                kept.insert(fk.clone(), c);
                            }
                        } else {
                            conv.ignored_key(&s.path(key), fk);
                        }
                    }
                    s.obj.insert("toolFilter".to_owned(), Value::Object(kept));
                }
                other => s.copy("toolFilter", key, other),
            },
            "auth" => match v {
                Value::String(a) if a == "oauth" => {
                    let mut auth = serde_json::Map::new();
                    auth.insert("type".to_owned(), Value::from("oauth"));
                    if let Some(Value::Object(o)) = obj.get("oauth") {
                        for (ok, ov) in o {
                            if OAUTH_KEYS.contains(&ok.as_str()) {
                                auth.insert(ok.clone(), ov.clone());
                            } else {
                                conv.ignored_key(&s.path("oauth"), ok);
                            }
                        }
                    }
                    s.obj.insert("auth".to_owned(), Value::Object(auth));
                }
                Value::String(a) => s.issue(
                    key,
                    format_args!("Invalid auth '{}': expected 'oauth'", excerpt(a)),
                ),
                other => s.expected(key, "string", other),
            },
            "oauth" => {
                if !oauth {
                    conv.warn(format!(
                        "{}: Ignored (it applies with auth: \"oauth\")",
                        s.path(key)
                    ));
                } else if !v.is_object() {
                    s.expected(key, "object", v);
                }
            }
            "sslVerify" | "clientCert" | "clientKey" => conv.warn(format!(
                "{}: Not supported by this package; ignored",
                s.path(key)
            )),
            other => conv.ignored_key(&s.base, other),
        }
    }
    if !transport_given && !obj.contains_key("command") && obj.contains_key("url") {
        // OpenClaw connects a URL-only server over SSE unless told otherwise.
        s.obj.insert("transport".to_owned(), Value::from("sse"));
    }
    conv.items.push(Item::Server(s));
}

/// Converts the `mcp` object at `base` (`"mcp"`, or `""` when the root itself
/// is that object).
pub(super) fn convert(mcp: &Value, base: &str, conv: &mut Conv) {
    let Value::Object(obj) = mcp else {
        conv.issue(format!(
            "{}: Expected object, received {}",
            at(base),
            type_name(mcp)
        ));
        return;
    };
    for (key, v) in obj {
        if key != "servers" {
            conv.ignored_key(base, key);
            continue;
        }
        let servers_path = join(base, "servers");
        let Value::Object(servers) = v else {
            conv.issue(super::common::expected(&servers_path, "object", v));
            continue;
        };
        for (name, entry) in servers {
            server(conv, name, format!("{servers_path}.{name}"), entry);
        }
    }
}
