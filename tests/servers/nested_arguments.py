"""A FastMCP (official SDK) stdio server whose ``find`` tool takes a nested object with a defaulted field."""
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


if __name__ == "__main__":
    mcp.run("stdio")
