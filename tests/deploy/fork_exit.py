"""Run by test_fork.py in its own interpreter: forked children that leave with ``sys.exit(0)``.

``sys.exit`` in a child is the interpreter's whole exit path (atexit, finalizers, garbage
collection of the inherited clients), which must not reach the parent's servers. Three children,
one after the other: one that never touches the inherited clients, one that calls the default
client (and gets ``ForkedClientError``), one that calls the ``reconnect=`` client (its own server).
After each, the parent checks its servers are alive and both clients still answer; it prints one
JSON line per child and exits 0.
"""
import json
import os
import sys

from mcpclient import Client, ForkedClientError, Reconnect
from mcpclient.testing import server_command


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def child(case, plain, reconnecting, report):
    """Never returns: ends with sys.exit(0), the interpreter's normal exit."""
    line = {"case": case}
    if case == "refused":
        try:
            plain.call_tool("add", {"a": 1, "b": 2})
            line["got"] = "an answer"
        except ForkedClientError:
            line["got"] = "ForkedClientError"
    elif case == "reconnected":
        line["sum"] = reconnecting.call_tool("add", {"a": 1, "b": 2}).structured_content["sum"]
        line["server"] = reconnecting.transport.pid
    os.write(report, (json.dumps(line) + "\n").encode())
    sys.exit(0)


def main():
    plain = Client(server_command(), timeout=10).connect()
    reconnecting = Client(server_command(), timeout=10, reconnect=Reconnect()).connect()
    parent = os.getpid()
    servers = (plain.transport.pid, reconnecting.transport.pid)
    try:
        for n, case in enumerate(("idle", "refused", "reconnected")):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_end)
                child(case, plain, reconnecting, write_end)
            os.close(write_end)
            with os.fdopen(read_end) as reports:
                line = json.loads(reports.readline() or "{}")
            _, status = os.waitpid(pid, 0)
            line["status"] = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
            line["servers_alive"] = [alive(server) for server in servers]
            line["same_servers"] = (plain.transport.pid, reconnecting.transport.pid) == servers
            line["parent_sums"] = [client.call_tool("add", {"a": n, "b": 40}).structured_content["sum"]
                                   for client in (plain, reconnecting)]
            print(json.dumps(line), flush=True)
    finally:
        if os.getpid() == parent:
            plain.close()
            reconnecting.close()


if __name__ == "__main__":
    main()
