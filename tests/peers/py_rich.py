"""A Python MCP server (the official `mcp` SDK) over stdio whose tools return every content
type, structured content with an output schema, and errors, for the rich-result tests.

    python3 py_rich.py

Tools: every_kind() (text, image, audio, embedded text resource, resource link),
weather(city) (a Pydantic model: structuredContent and its outputSchema), broken() (raises).
"""

import base64

from pydantic import BaseModel

try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp < 2
    from mcp.server.fastmcp import FastMCP as Server
import mcp.types as t

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

mcp = Server("py-rich")


@mcp.tool()
def every_kind() -> list[t.ContentBlock]:
    """Returns one block of every content type."""
    return [
        t.TextContent(type="text", text="hello from python"),
        t.ImageContent(type="image", data=PNG, mime_type="image/png"),
        t.AudioContent(type="audio", data=base64.b64encode(b"RIFF1234").decode(), mime_type="audio/wav"),
        t.EmbeddedResource(
            type="resource",
            resource=t.TextResourceContents(uri="file:///notes.txt", text="a note", mime_type="text/plain"),
        ),
        t.ResourceLink(type="resource_link", uri="file:///big.bin", name="big", mime_type="application/octet-stream"),
    ]


class Weather(BaseModel):
    temperature: float
    conditions: str


@mcp.tool()
def weather(city: str) -> Weather:
    """The weather in a city, as structured content."""
    return Weather(temperature=21.5, conditions=f"sunny in {city}")


@mcp.tool()
def broken() -> str:
    """Always fails."""
    raise ValueError("the backend is down")


if __name__ == "__main__":
    mcp.run()
