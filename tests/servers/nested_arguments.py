"""A FastMCP (official SDK) stdio server whose ``find`` tool takes a nested object with a defaulted field."""
import _preload  # tests/servers/_preload.py: a fork of a process that imported the SDK may serve this run

_preload.hand_over()

from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("nested")


class Filter(BaseModel):
    kind: str
    limit: int = 10


@mcp.tool()
async def find(query: str, filter: Filter) -> str:
    """Find things."""
    return f"{query} {filter.kind} {filter.limit}"


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
