"""Several MCP servers as one tool list (``ServerGroup``): from a config file, or two copies of the
bundled test server and one that cannot start, to show that a failure stays with its server.

    python examples/many_servers.py                        # the bundled server, twice
    python examples/many_servers.py ~/.cursor/mcp.json     # any mcpServers / VS Code servers file
"""
import sys

from mcpclient import ServerGroup
from mcpclient.testing import server_command

servers = sys.argv[1] if len(sys.argv) > 1 else {
    "alpha": server_command(), "beta": server_command(), "broken": ["/no/such/server"]}

with ServerGroup(servers, client_options={"timeout": 30}) as group:
    for name, status in group.status.items():
        print(f"{name:10} {status.state:8} {status.tools:3} tools  {status.error or ''}")
    for tool in group.list_tools():
        print(f"  {tool.name:24} {tool.description or ''}")
    if len(sys.argv) == 1:
        for result in group.call_tools([("alpha_add", {"a": 1, "b": 2}), ("beta_echo", {"text": "hi"}),
                                        ("broken_echo", {"text": "never"})]):
            print(result if isinstance(result, Exception) else result.text)
        print([tool.name for tool in group.search_tools("add numbers", k=2)])
