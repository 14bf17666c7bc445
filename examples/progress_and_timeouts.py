"""Progress callbacks, timeouts and cancellation.

    python examples/progress_and_timeouts.py
"""
from typing import Optional

from mcpclient import Client, RequestTimeout
from mcpclient.testing import server_command


def show(progress: float, total: Optional[float], message: Optional[str]) -> None:
    print(f"  {message}: {progress}/{total}")


with Client(server_command(), timeout=10) as client:
    print(client.call_tool("slow", {"steps": 5, "delay": 0.05}, on_progress=show).text)

    try:
        client.call_tool("slow", {"steps": 50, "delay": 0.1}, timeout=0.5)
    except RequestTimeout as exc:
        print("timed out as expected:", exc)

    future = client.call_tool_future("slow", {"steps": 50, "delay": 0.1})
    print("cancelled:", future.cancel())
