//! `invalid-url` (a remote server's URL the transport cannot use) and `insecure-url` (plain
//! `http://` to a host other than this machine: headers and tokens travel unencrypted).
//! Messages show the scheme and host only: a URL's path or query may carry a secret.

use std::net::IpAddr;

use url::{Host, Url};

use super::{Finding, Severity, server_path};
use crate::config::{ServerConfig, TransportKind};

/// The URL when it is one the transports accept (http or https with a host).
pub(super) fn usable(url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("it does not parse as a URL ({e})"))?;
    match parsed.scheme() {
        "http" | "https" => {}
        other => {
            return Err(format!(
                "its scheme '{}' is not http or https",
                other.chars().take(20).collect::<String>()
            ));
        }
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("it has no host".to_owned());
    }
    Ok(parsed)
}

/// `localhost`, `*.localhost`, 127.0.0.0/8, `::1` (and IPv4-mapped loopback).
pub(super) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => false,
    }
}

pub(super) fn check(server: &ServerConfig, out: &mut Vec<Finding>) {
    if server.transport == TransportKind::Stdio {
        return;
    }
    let Some(url) = server.url.as_deref().filter(|u| !u.is_empty()) else {
        return;
    };
    let field = format!("{}.url", server_path(server));
    match usable(url) {
        Err(why) => out.push(Finding::new(
            Severity::Error,
            "invalid-url",
            Some(&server.name),
            Some(field.clone()),
            format!("{field} cannot be used: {why}; the server cannot start"),
            "write the full URL of the server's MCP endpoint, e.g. \"https://mcp.example.com/mcp\" \
             (scheme, host, path)"
                .to_owned(),
        )),
        Ok(parsed) if parsed.scheme() == "http" && !is_loopback(&parsed) => {
            let host = parsed.host_str().unwrap_or_default();
            out.push(Finding::new(
                Severity::Warning,
                "insecure-url",
                Some(&server.name),
                Some(field.clone()),
                format!(
                    "{field} uses plain http:// to {host}, which is not this machine: requests, \
                     headers and tokens travel unencrypted and can be read or changed on the way"
                ),
                format!(
                    "use https://{host}… if the server offers TLS (\"caFile\" trusts a private \
                     CA); otherwise reach it through a TLS proxy or an SSH tunnel to 127.0.0.1"
                ),
            ));
        }
        Ok(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::test_support::*;
    use serde_json::json;

    fn findings(url: &str) -> Vec<&'static str> {
        let mut out = Vec::new();
        check(&server(json!({"transport": "http", "url": url})), &mut out);
        assert_no_secret(&out, &["s3cret", "/p4th"]);
        codes(&out)
    }

    #[test]
    fn http_to_other_hosts_is_insecure() {
        assert_eq!(
            findings("http://mcp.example.com/p4th?token=s3cret"),
            ["insecure-url"]
        );
        assert_eq!(findings("http://10.0.0.5:8080/mcp"), ["insecure-url"]);
        for ok in [
            "https://mcp.example.com/mcp",
            "http://127.0.0.1:3000/mcp",
            "http://127.8.9.1/mcp",
            "http://localhost:3000/mcp",
            "http://api.localhost/mcp",
            "http://[::1]:3000/mcp",
        ] {
            assert_eq!(findings(ok), Vec::<&str>::new(), "{ok}");
        }
    }

    #[test]
    fn unusable_urls_are_errors() {
        assert_eq!(findings("not a url"), ["invalid-url"]);
        assert_eq!(findings("ftp://x.example/p4th"), ["invalid-url"]);
        assert_eq!(findings("mailto:s3cret@x.example"), ["invalid-url"]);
    }
}
