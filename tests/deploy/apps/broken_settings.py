"""The example project's settings with what ``manage.py check`` must refuse: an entry with no
command (``mcpclient.E001``), a client option ``Client`` does not take (``mcpclient.E002``), and an
entry that needs a variable this environment lacks (``mcpclient.W001``)."""
from mysite.settings import *  # noqa: F401,F403

MCP_SERVERS = {
    "tools": {"args": ["-m", "mcpclient.testing"]},
    "remote": {"url": "https://mcp.example/${MCPCLIENT_TEST_UNSET_VARIABLE}"},
}
MCP_OPTIONS = {"client_options": {"timout": 5}}
