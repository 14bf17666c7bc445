"""MCP from a Jupyter notebook (or IPython): each ``# %%`` block below is one cell.

    python examples/notebook.py          # or open it in Jupyter / VS Code as a notebook of cells

Nothing here needs an event loop, so nothing clashes with the one Jupyter runs (no
``asyncio.run()``, no ``nest_asyncio``). Two patterns:

- a client per cell, ``with Client(...) as client:``: the server runs only while the cell does;
- one client for the session, made in one cell and closed in a last one. Re-running the cell that
  makes it closes the previous one first (``close()`` is idempotent), so re-runs leave no server
  behind; a client you forget is stopped with the kernel anyway (its server is never orphaned).
"""
# %% A client per cell: one-off questions
from mcpclient import Client, ToolResult
from mcpclient.testing import server_command

with Client(server_command()) as client:
    print("tools:", ", ".join(tool.name for tool in client.list_tools()))

# %% One client for the session (re-running this cell replaces it)
previous = globals().get("mcp_client")  # made by an earlier run of this cell
if isinstance(previous, Client):
    previous.close()
mcp_client = Client(server_command(), timeout=30).connect()
print("connected to", mcp_client.server.name if mcp_client.server else "?")


def total(result: ToolResult) -> object:
    """The ``sum`` of an ``add`` result (its structured content is JSON: look before indexing)."""
    structured = result.structured_content
    return structured.get("sum") if isinstance(structured, dict) else None


# %% Use it from any cell
print("2 + 3 =", total(mcp_client.call_tool("add", {"a": 2, "b": 3})))

# %% Several calls at once: futures, no async
futures = [mcp_client.call_tool_future("add", {"a": i, "b": i}) for i in range(5)]
print("doubles:", [total(future.result()) for future in futures])

# %% Done: stop the server (or just stop the kernel)
mcp_client.close()
