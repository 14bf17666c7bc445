"""The example project's settings with a second server that cannot start: ``manage.py mcp status``
reports it (exit 1), and the group's warning goes where ``LOGGING`` sends mcpclient's records."""
import sys

from mysite.settings import *  # noqa: F401,F403

MCP_SERVERS = {
    "tools": {"command": sys.executable, "args": ["-m", "mcpclient.testing"]},
    "broken": {"command": "mcpclient-test-no-such-command"},
}
