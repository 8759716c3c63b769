"""A Python MCP server (the official `mcp` SDK) over HTTP for the remote-transport tests.

    python3 py_server.py --mode sse|http|stateless --port P [--json-response]
        [--header-log FILE] [--tls-cert PEM --tls-key PEM] [--redirect-to URL]

Tools: echo(text), add(a, b), big(size) (a text of `size` bytes), headers() (the request
headers this tool call arrived with, lower-cased names).

Extra routes, outside MCP:
  POST /admin/forget   the server forgets every Streamable HTTP session (its ids answer 404),
                       like a server whose sessions expired.
  ANY  /moved          307 to --redirect-to (for the cross-origin redirect test).

Every HTTP request is appended to --header-log as one JSON line {method, path, headers}.
Works with mcp 2.x (`MCPServer`) and, failing that, mcp 1.x (`FastMCP`).
"""

import argparse
import contextvars
import json
import sys

try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp < 2
    from mcp.server.fastmcp import FastMCP as Server

import uvicorn

parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=["sse", "http", "stateless"], required=True)
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--json-response", action="store_true")
parser.add_argument("--header-log")
parser.add_argument("--tls-cert")
parser.add_argument("--tls-key")
parser.add_argument("--redirect-to")
args = parser.parse_args()

current_headers = contextvars.ContextVar("current_headers", default={})

mcp = Server("py-peer")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@mcp.tool()
def big(size: int) -> str:
    """A text of `size` bytes."""
    return "x" * size


@mcp.tool()
def headers() -> str:
    """The HTTP request headers of this call (JSON)."""
    return json.dumps(current_headers.get())


if args.mode == "sse":
    app = mcp.sse_app()
else:
    app = mcp.streamable_http_app(
        stateless_http=args.mode == "stateless", json_response=args.json_response
    )


def log_request(method, path, headers):
    if not args.header_log:
        return
    with open(args.header_log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"method": method, "path": path, "headers": headers}) + "\n")


async def respond(send, status, body=b"", headers=()):
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", str(len(body)).encode())] + list(headers),
        }
    )
    await send({"type": "http.response.body", "body": body})


async def forget_sessions():
    manager = mcp.session_manager
    for session_id, transport in list(manager._server_instances.items()):
        await manager._discard_session(session_id, transport)


async def outer(scope, receive, send):
    if scope["type"] != "http":
        return await app(scope, receive, send)
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    log_request(scope["method"], scope["path"], headers)
    if scope["path"] == "/admin/forget" and scope["method"] == "POST":
        await forget_sessions()
        return await respond(send, 200, b"forgotten")
    if scope["path"] == "/moved" and args.redirect_to:
        return await respond(send, 307, b"", [(b"location", args.redirect_to.encode())])
    token = current_headers.set(headers)
    try:
        return await app(scope, receive, send)
    finally:
        current_headers.reset(token)


config = uvicorn.Config(
    outer,
    host="127.0.0.1",
    port=args.port,
    log_level="warning",
    ssl_certfile=args.tls_cert,
    ssl_keyfile=args.tls_key,
    lifespan="on",
)
print(f"py-peer {args.mode} on {args.port}", file=sys.stderr, flush=True)
uvicorn.Server(config).run()
