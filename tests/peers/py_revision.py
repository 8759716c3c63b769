"""A Python `mcp` 2.x server for the 2026-07-28 tests: `py_revision.py stdio` or
`py_revision.py http PORT` (stateless Streamable HTTP on 127.0.0.1). One tool, echo(text)."""
import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("py-revision")


@mcp.tool()
def echo(text: str) -> str:
    """Echoes text."""
    return text


if sys.argv[1] == "http":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=True)
else:
    mcp.run()
