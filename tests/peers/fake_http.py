"""Misbehaving HTTP peers for the remote-transport failure tests (standard library only).

    python3 fake_http.py --mode MODE --port P

Modes:
  html          every GET/POST gets `200 text/html` (a web page, not an MCP server).
  sse-silent    GET opens an event stream that never sends the `endpoint` event (only one
                comment), and stays open.
  sse-idle      a legacy SSE server that answers `initialize` and `tools/list` (one tool) on its
                stream, then goes silent for good: no keep-alive comments, and pings (any other
                request) are never answered.
  echo-auth     every request gets `500 text/plain` whose body repeats the request's
                `Authorization` header after 120 characters of padding, so that a message cutting
                the body at 160 characters cuts the header value in half.
"""

import argparse
import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=["html", "sse-silent", "sse-idle", "echo-auth"], required=True)
parser.add_argument("--port", type=int, required=True)
args = parser.parse_args()

stream = queue.Queue()
stop = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def html(self):
        body = b"<!doctype html><html><body><h1>Welcome</h1></body></html>"
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def echo_auth(self):
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        auth = self.headers.get("authorization") or ""
        body = ("x" * 120 + " Authorization=" + auth + " (end)").encode()
        self.send_response(500)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if args.mode == "html":
            return self.html()
        if args.mode == "echo-auth":
            return self.echo_auth()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        if args.mode == "sse-silent":
            self.wfile.write(b": hello\n\n")
            self.wfile.flush()
            stop.wait(600)
            return
        self.wfile.write(b"event: endpoint\ndata: /messages?session=1\n\n")
        self.wfile.flush()
        while not stop.is_set():
            try:
                message = stream.get(timeout=1)
            except queue.Empty:
                continue
            self.wfile.write(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")
            self.wfile.flush()

    def do_POST(self):
        if args.mode == "html":
            return self.html()
        if args.mode == "echo-auth":
            return self.echo_auth()
        length = int(self.headers.get("content-length") or 0)
        message = json.loads(self.rfile.read(length) or b"{}")
        self.send_response(202)
        self.send_header("content-length", "8")
        self.end_headers()
        self.wfile.write(b"Accepted")
        method = message.get("method")
        if method == "initialize":
            stream.put(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "protocolVersion": "2024-11-05",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fake-idle", "version": "0"},
                    },
                }
            )
        elif method == "tools/list":
            stream.put(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "tools": [
                            {"name": "noop", "inputSchema": {"type": "object", "properties": {}}}
                        ]
                    },
                }
            )


server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
server.daemon_threads = True
try:
    server.serve_forever()
finally:
    stop.set()
