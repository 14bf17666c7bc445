"""List and call tools of an MCP server over stdio (the bundled test server by default).

    python examples/quickstart.py                     # the bundled server
    python examples/quickstart.py "npx -y some-server"
"""
import sys

from mcpclient import Client
from mcpclient.testing import server_command

target = sys.argv[1] if len(sys.argv) > 1 else server_command()

with Client(target) as client:
    server = client.server  # what the server said of itself (None only before connect())
    assert server is not None
    print(f"connected to {server.name} {server.version} (protocol {server.protocol_version})")
    for tool in client.list_tools():
        print(f"  {tool.name:12} {tool.description or ''}")
    if len(sys.argv) == 1:  # the bundled server has an "add" tool
        print(client.call_tool("add", {"a": 2, "b": 3}).structured_content)
