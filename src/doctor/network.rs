//! With `network: true`: one request to each enabled remote server's URL, through the client
//! the transports build (reqwest + rustls, the server's `caFile`), within the timeout. Any HTTP
//! answer, whatever its status, means reachable. A failure is `url-unreachable` (refused, DNS,
//! timeout, …) or `tls-failure` (with what the certificate check said). The probe carries no
//! credential: no configured header, and the URL without its user info and query.

use std::time::Duration;

use url::Url;

use super::{Finding, Severity, server_path};
use crate::config::{ServerConfig, TransportKind};
use crate::http_client::error_chain;
use crate::transport::net::{build_client, has_io_kind};

/// What went wrong, and whether it was TLS.
struct Failure {
    tls: bool,
    what: String,
    fix: String,
}

/// The URL as probed: no user info, query or fragment.
fn bare(url: &Url) -> Url {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// What rustls's certificate check said, in words (its error texts: `invalid peer certificate:
/// UnknownIssuer`, `certificate expired: …`, `certificate not valid for name …`).
fn certificate_problem(chain: &str, host: &str) -> (String, String) {
    let lower = chain.to_ascii_lowercase();
    let ca_fix = "if the server uses a private CA or a self-signed certificate on purpose, set \
                  \"caFile\" to the PEM file of that CA (or of the certificate); otherwise give \
                  the server a certificate from a public CA";
    if lower.contains("unknownissuer") || lower.contains("unknown issuer") {
        (
            "the certificate's issuer is not trusted (unknown issuer: self-signed, or signed by a \
             private CA)"
                .to_owned(),
            ca_fix.to_owned(),
        )
    } else if lower.contains("caused as end entity") || lower.contains("causedasendentity") {
        (
            "the server presents a CA certificate as its own (a self-signed CA certificate)"
                .to_owned(),
            "give the server a leaf certificate (basicConstraints CA:FALSE, its host name in \
             subjectAltName) signed by a CA, and if that CA is private set \"caFile\" to it: \
             \"caFile\" cannot make a CA certificate acceptable as a server's own"
                .to_owned(),
        )
    } else if lower.contains("expired") {
        (
            "the certificate has expired".to_owned(),
            "renew the server's certificate".to_owned(),
        )
    } else if lower.contains("not valid yet") || lower.contains("notvalidyet") {
        (
            "the certificate is not valid yet (check the clocks)".to_owned(),
            "check the clock of the gateway and of the server, or reissue the certificate"
                .to_owned(),
        )
    } else if lower.contains("not valid for name") || lower.contains("notvalidforname") {
        (
            format!("the certificate is not valid for the host name '{host}' (name mismatch)"),
            "use the host name the certificate was issued for in the URL, or reissue the \
             certificate with this name in its subjectAltName"
                .to_owned(),
        )
    } else if lower.contains("revoked") {
        (
            "the certificate has been revoked".to_owned(),
            "give the server a new certificate".to_owned(),
        )
    } else {
        (
            "the TLS handshake failed".to_owned(),
            "check that the server speaks TLS on this port (an http:// server behind an \
             https:// URL fails this way) and that its certificate is valid"
                .to_owned(),
        )
    }
}

fn classify(error: &reqwest::Error, url: &Url, timeout: Duration) -> Failure {
    let chain = error_chain(error);
    let lower = chain.to_ascii_lowercase();
    let host = url.host_str().unwrap_or_default().to_owned();
    let detail = if chain.is_empty() {
        String::new()
    } else {
        format!(" ({chain})")
    };
    let unreachable = |what: String, fix: &str| Failure {
        tls: false,
        what,
        fix: fix.to_owned(),
    };
    if error.is_timeout() || has_io_kind(error, std::io::ErrorKind::TimedOut) {
        return unreachable(
            format!("no answer within {} ms", timeout.as_millis()),
            "check that the host is up and that no firewall drops the connection; raise \
             timeoutMs if the server is only slow",
        );
    }
    if error.is_connect()
        && (lower.contains("dns error")
            || lower.contains("lookup address")
            || lower.contains("name or service not known")
            || lower.contains("failed to lookup"))
    {
        return unreachable(
            format!("the host name '{host}' does not resolve (DNS){detail}"),
            "check the host name in the URL, and the gateway's DNS",
        );
    }
    if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("handshake")
        || lower.contains("invalidcontenttype")
        || lower.contains("corrupt message")
    {
        let (what, fix) = certificate_problem(&chain, &host);
        return Failure {
            tls: true,
            what: format!("{what}{detail}"),
            fix,
        };
    }
    if has_io_kind(error, std::io::ErrorKind::ConnectionRefused) {
        return unreachable(
            "connection refused: nothing listens on that port".to_owned(),
            "start the server, or correct the host and port in the URL",
        );
    }
    unreachable(
        format!("the connection failed{detail}"),
        "check the URL, that the server runs, and the network path to it (proxy, firewall)",
    )
}

async fn probe(server: &ServerConfig, url: &Url, timeout: Duration) -> Option<Finding> {
    let field = format!("{}.url", server_path(server));
    let origin = format!(
        "{}://{}{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.port().map(|p| format!(":{p}")).unwrap_or_default()
    );
    let client = match build_client(server.ca_file.as_deref(), timeout) {
        Ok(client) => client,
        Err(why) => {
            return Some(Finding::new(
                Severity::Error,
                "tls-failure",
                Some(&server.name),
                Some(format!("{}.caFile", server_path(server))),
                format!("the server's HTTP client cannot be set up: {why}"),
                "point \"caFile\" at a readable PEM file of CA certificates".to_owned(),
            ));
        }
    };
    let request = client.get(bare(url)).timeout(timeout).send();
    let failure = match tokio::time::timeout(timeout + Duration::from_millis(500), request).await {
        Ok(Ok(_answer)) => return None,
        Ok(Err(error)) => classify(&error, url, timeout),
        Err(_) => Failure {
            tls: false,
            what: format!("no answer within {} ms", timeout.as_millis()),
            fix: "check that the host is up and that no firewall drops the connection; raise \
                  timeoutMs if the server is only slow"
                .to_owned(),
        },
    };
    let (code, message) = if failure.tls {
        (
            "tls-failure",
            format!(
                "{field}: the TLS connection to {origin} failed: {}",
                failure.what
            ),
        )
    } else {
        (
            "url-unreachable",
            format!("{field}: cannot reach {origin}: {}", failure.what),
        )
    };
    Some(Finding::new(
        Severity::Error,
        code,
        Some(&server.name),
        Some(field.clone()),
        message,
        failure.fix,
    ))
}

/// `(server index, finding)` for every enabled remote server that does not answer.
pub(super) async fn check(servers: &[&ServerConfig], timeout: Duration) -> Vec<(usize, Finding)> {
    let probes = servers.iter().enumerate().filter_map(|(at, server)| {
        if !server.enabled || server.transport == TransportKind::Stdio {
            return None;
        }
        let url = super::urls::usable(server.url.as_deref()?).ok()?;
        Some(async move { probe(server, &url, timeout).await.map(|f| (at, f)) })
    });
    futures::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::test_support::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_closed_port_is_unreachable_and_an_answer_of_any_status_is_not() {
        // A port that was free a moment ago: bound, then closed.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let closed = server(
            json!({"transport": "http", "url": format!("http://127.0.0.1:{port}/mcp?token=s3cr3t-q")}),
        );
        let found = check(&[&closed], Duration::from_secs(5)).await;
        let f: Vec<Finding> = found.into_iter().map(|(_, f)| f).collect();
        assert_eq!(codes(&f), ["url-unreachable"]);
        assert!(
            f[0].message.contains("connection refused"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message
                .contains(&format!("cannot reach http://127.0.0.1:{port}")),
            "{}",
            f[0].message
        );
        assert_no_secret(&f, &["s3cr3t-q"]);

        // A server that answers 405 to anything, and checks that no credential reached it.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let n = stream.read(&mut buf).await.unwrap();
            stream
                .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await
                .unwrap();
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        let open = server(json!({"transport": "http",
            "url": format!("http://user:pw-s3cret@127.0.0.1:{port}/mcp?api_key=q-s3cret"),
            "headers": {"Authorization": "Bearer h-s3cret-123456"}}));
        assert!(check(&[&open], Duration::from_secs(5)).await.is_empty());
        let request = seen.await.unwrap();
        assert!(request.starts_with("GET /mcp HTTP/1.1"), "{request}");
        for secret in ["pw-s3cret", "q-s3cret", "h-s3cret", "authorization"] {
            assert!(!request.to_ascii_lowercase().contains(secret), "{request}");
        }
    }

    #[test]
    fn certificate_problems_in_words() {
        let p = |s: &str| certificate_problem(s, "h.example").0;
        assert!(p("invalid peer certificate: UnknownIssuer").contains("unknown issuer"));
        assert!(
            p("invalid peer certificate: certificate expired: verification time 1")
                .contains("expired")
        );
        assert!(
            p("invalid peer certificate: certificate not valid for name \"h\"")
                .contains("name mismatch")
        );
        assert!(p("received corrupt message").contains("TLS handshake failed"));
    }
}
