"""``python -m mcpclient.testing [--page-size N] [--name NAME] [--apps] [--tasks-ext [--poll-interval MS]
[--notify-tasks]]``: run the demo server on stdio."""

from __future__ import annotations

import argparse
from typing import List, Optional

from .stdio import SERVER_NAME, serve


def main(argv: Optional[List[str]] = None) -> int:
    """Parse options, serve until stdin closes, exit 0."""
    parser = argparse.ArgumentParser(prog="python -m mcpclient.testing",
                                     description="A tiny MCP test server speaking JSON-RPC on stdio.")
    parser.add_argument("--page-size", type=int, default=0, metavar="N",
                        help="return list results in pages of N items (default 0: no pagination)")
    parser.add_argument("--name", default=SERVER_NAME, help=f"serverInfo.name (default {SERVER_NAME})")
    parser.add_argument("--apps", action="store_true",
                        help="add the MCP Apps counter: tools, ui:// resource, extension (tests/servers/APPS.md)")
    parser.add_argument("--tasks-ext", action="store_true",
                        help="also serve the Tasks extension (tests/servers/TASKS-EXT.md)")
    parser.add_argument("--poll-interval", type=int, default=30, metavar="MS",
                        help="with --tasks-ext: pollIntervalMs of every task (default 30)")
    parser.add_argument("--notify-tasks", action="store_true",
                        help="with --tasks-ext: push notifications/tasks on every change of a task")
    args = parser.parse_args(argv)
    serve(page_size=args.page_size, name=args.name, apps=args.apps, tasks_ext=args.tasks_ext,
          poll_interval_ms=args.poll_interval, notify_tasks=args.notify_tasks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
