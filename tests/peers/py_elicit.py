"""A Python MCP server (the official `mcp` SDK) over stdio that asks its client for things: an
elicitation with a schema, and the client's roots (asked at each call).

    python3 py_elicit.py

Tools: register() elicits { name: str, age: int >= 0 } and echoes what came back (or the
action); roots() lists the roots the client gives now.
"""

from pydantic import BaseModel, Field

try:
    from mcp.server.mcpserver import Context, MCPServer as Server
except ImportError:  # mcp < 2
    from mcp.server.fastmcp import Context, FastMCP as Server

mcp = Server("py-elicit")


class Person(BaseModel):
    name: str
    age: int = Field(ge=0)


@mcp.tool()
async def register(ctx: Context) -> str:
    """Asks the user for a name and an age, and says what came back."""
    try:
        result = await ctx.elicit("Who are you?", schema=Person)
    except Exception as e:  # the client answered with an error
        return f"elicitation failed: {e}"
    if result.action == "accept":
        return f"accepted: {result.data.name} ({result.data.age})"
    return f"no answer: {result.action}"


@mcp.tool()
async def roots(ctx: Context) -> str:
    """The client's roots, one per line as 'uri name'."""
    listed = await ctx.session.list_roots()
    return "\n".join(f"{r.uri} {r.name or ''}".strip() for r in listed.roots) or "(none)"


if __name__ == "__main__":
    mcp.run()
