//! MCP over Streamable HTTP: rmcp's `StreamableHttpService` hosted on a hyper HTTP/1.1 server.
//!
//! Bound to 127.0.0.1 unless told otherwise; port 0 takes a free port, and the URL says which.
//! Stateful by default (sessions in rmcp's `LocalSessionManager`, `Mcp-Session-Id`); stateless
//! serves each POST on its own, and a client that goes away cancels its call.
//!
//! DNS rebinding and cross-site requests: on a loopback address only a loopback `Host`
//! (`localhost`, `127.0.0.1`, `::1`, any port, plus `allowedHosts`) is accepted, and a request
//! carrying an `Origin` must come from a loopback origin or one of `allowedOrigins`; anything
//! else is refused with 403 before the MCP layer sees it. On any other address every `Host` is
//! accepted unless `allowedHosts` lists some, and an `Origin` must be one of `allowedOrigins`
//! (none by default). Requests without an `Origin` (non-browser clients) are not affected.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::handler::Server;
use super::provider::ToolProvider;

/// How long `close` waits for open connections (SSE streams end at once; a request still being
/// answered may take this long).
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The loopback origins accepted on a loopback address.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub host: String,
    pub port: u16,
    pub path: String,
    pub stateless: bool,
    /// Origins (`scheme://host[:port|:*]`) allowed beside the loopback ones.
    pub allowed_origins: Vec<String>,
    /// `Host` values (`name` or `name:port`) allowed beside the loopback ones.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 0,
            path: "/mcp".into(),
            stateless: false,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
        }
    }
}

/// A running HTTP server.
pub struct HttpServer {
    pub url: String,
    pub local_addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    /// POST responses still being sent (answers on their way: see [`HttpServer::close`]).
    posts: Arc<tokio::sync::watch::Sender<usize>>,
}

impl HttpServer {
    /// Waits (at most [`CLOSE_GRACE`]) for the POST responses under way to be sent, so answers
    /// already made (`Server::close` answers the calls in flight) reach their clients; then
    /// stops accepting, ends every session (their calls are cancelled) and waits a little for
    /// open connections to finish.
    pub async fn close(self) {
        let mut posts = self.posts.subscribe();
        let _ = tokio::time::timeout(CLOSE_GRACE, posts.wait_for(|n| *n == 0)).await;
        self.stop.cancel();
        let _ = tokio::time::timeout(CLOSE_GRACE * 2, self.task).await;
    }

    /// Ends without waiting (what dropping the host does).
    pub fn stop(&self) {
        self.stop.cancel();
    }
}

/// Why `options` cannot be served, if they cannot (checked before binding).
pub fn options_problem(options: &HttpOptions) -> Option<String> {
    if !options.path.starts_with('/') {
        return Some(format!("path must start with '/', got '{}'", options.path));
    }
    if options.host.is_empty() {
        return Some("host must not be empty".into());
    }
    None
}

/// Binds and serves `server` until [`HttpServer::close`].
pub async fn serve<P: ToolProvider + ?Sized>(
    server: Arc<Server<P>>,
    options: HttpOptions,
) -> Result<HttpServer, String> {
    if let Some(problem) = options_problem(&options) {
        return Err(problem);
    }
    let listener = bind(&options.host, options.port).await?;
    let local_addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let stop = CancellationToken::new();
    let config = config(&options, local_addr.ip(), stop.child_token());
    let mcp = Arc::new(StreamableHttpService::new(
        move || Ok(server.handler()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    let path: Arc<str> = options.path.clone().into();
    let posts = Arc::new(tokio::sync::watch::Sender::new(0));
    let task = tokio::spawn(accept_loop(
        listener,
        mcp,
        path,
        stop.clone(),
        posts.clone(),
    ));
    Ok(HttpServer {
        url: url(&options.host, local_addr, &options.path),
        local_addr,
        stop,
        task,
        posts,
    })
}

async fn bind(host: &str, port: u16) -> Result<TcpListener, String> {
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("cannot resolve host '{host}': {e}"))?
            .collect(),
    };
    let mut last = format!("host '{host}' has no address");
    for addr in addrs {
        match TcpListener::bind(addr).await {
            Ok(listener) => return Ok(listener),
            Err(e) => last = format!("cannot listen on {addr}: {e}"),
        }
    }
    Err(last)
}

fn config(
    options: &HttpOptions,
    ip: IpAddr,
    stop: CancellationToken,
) -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!options.stateless)
        .with_cancellation_token(stop);
    let mut origins: Vec<String> = options.allowed_origins.clone();
    if ip.is_loopback() {
        origins.extend(LOOPBACK_ORIGINS.iter().map(|o| o.to_string()));
        // rmcp's default hosts are the loopback names (any port).
        let mut hosts = config.allowed_hosts.clone();
        hosts.extend(options.allowed_hosts.iter().cloned());
        config = config.with_allowed_hosts(hosts);
    } else if options.allowed_hosts.is_empty() {
        config = config.disable_allowed_hosts();
    } else {
        config = config.with_allowed_hosts(options.allowed_hosts.clone());
    }
    config
        .with_allowed_origins(origins)
        .enforce_origin_validation()
}

fn url(host: &str, addr: SocketAddr, path: &str) -> String {
    match host.parse::<IpAddr>() {
        // The address as bound (`0.0.0.0` stays what was asked for).
        Ok(_) => format!("http://{addr}{path}"),
        Err(_) => format!("http://{host}:{}{path}", addr.port()),
    }
}

async fn accept_loop<S>(
    listener: TcpListener,
    mcp: Arc<StreamableHttpService<S, LocalSessionManager>>,
    path: Arc<str>,
    stop: CancellationToken,
    posts: Arc<tokio::sync::watch::Sender<usize>>,
) where
    S: rmcp::ServerHandler + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        // Reap finished connections as we go.
        while connections.try_join_next().is_some() {}
        let Ok((stream, _)) = accepted else {
            // Out of descriptors and the like: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let stream = accepted_stream(stream);
        let (mcp, path, stop, posts) = (mcp.clone(), path.clone(), stop.clone(), posts.clone());
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let (mcp, path, posts) = (mcp.clone(), path.clone(), posts.clone());
                async move {
                    if request.uri().path() != &*path {
                        return Ok::<_, Infallible>(not_found());
                    }
                    if request.method() != hyper::Method::POST {
                        return Ok(mcp.handle(request).await);
                    }
                    // Counted from the request until its response body is sent (or dropped).
                    let open = Open::count(posts);
                    let (parts, body) = mcp.handle(request).await.into_parts();
                    let body = Counted { body, _open: open }.boxed();
                    Ok(Response::from_parts(parts, body))
                }
            });
            let connection = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(CLOSE_GRACE, connection).await;
                }
            }
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(CLOSE_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
}

/// An accepted connection as it is served: Nagle's algorithm off. A response goes out in small
/// writes (the head, then each SSE event); with it on, each write after the first waited for
/// the client's delayed ACK, tens of milliseconds per call (a gateway call over HTTP: p50
/// 6.6 ms, now 0.56 ms; docs/benchmarks.md).
fn accepted_stream(stream: tokio::net::TcpStream) -> tokio::net::TcpStream {
    let _ = stream.set_nodelay(true);
    stream
}

/// One POST response under way, for [`HttpServer::close`].
struct Open(Arc<tokio::sync::watch::Sender<usize>>);

impl Open {
    fn count(posts: Arc<tokio::sync::watch::Sender<usize>>) -> Self {
        posts.send_modify(|n| *n += 1);
        Self(posts)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// A response body that stays counted as [`Open`] until hyper is done with it.
struct Counted<B> {
    body: B,
    _open: Open,
}

impl<B: hyper::body::Body + Unpin> hyper::body::Body for Counted<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

fn not_found() -> Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"Not Found")).boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

#[cfg(test)]
mod nodelay_tests {
    #[tokio::test]
    async fn an_accepted_connection_sends_small_writes_at_once() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (_client, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(address), listener.accept());
        let (stream, _) = accepted.unwrap();
        assert!(
            !stream.nodelay().unwrap(),
            "a fresh socket has Nagle's algorithm on"
        );
        assert!(super::accepted_stream(stream).nodelay().unwrap());
    }
}
