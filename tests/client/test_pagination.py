"""Listings that span pages: a repeated cursor stops them, an empty-string cursor is not the
end, a malformed page is a ``ProtocolError``; endless cursors end at the page cap with a typed
error, and the listing's timeout covers all its pages (a raw-socket server on 127.0.0.1).
"""
from __future__ import annotations

import time
from typing import Any, Dict

import pytest

from conftest import LONG
from helpers import ScriptedServer
from hostile_http import Conn, SLACK, TIMEOUT, answer, client_for, hostile  # noqa: F401  (fixtures: hostile)
from mcpclient import Client, Limits, ProtocolError, RequestTimeout


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedServer(handle, **kwargs))


def test_pagination_stops_on_a_repeated_cursor(scripted, caplog):
    pages = {None: (["a", "b"], "c1"), "c1": (["c"], "c2"), "c2": (["d"], "c1")}  # c2 points back to c1

    def handle(method, params):
        names, cursor = pages[params.get("cursor")]
        return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names], "nextCursor": cursor}

    server = scripted(handle)
    with Client(server.transport, timeout=LONG) as client:
        assert [t.name for t in client.list_tools()] == ["a", "b", "c", "d"]
    assert any("repeated cursor" in r.getMessage() for r in caplog.records)
    assert [m.get("params", {}).get("cursor") for m in server.received if m.get("method") == "tools/list"] == \
        [None, "c1", "c2"]  # the repeated c1 is never requested again


def test_an_empty_string_cursor_is_not_the_end(scripted):
    pages = {None: (["a"], ""), "": (["b"], None)}

    def handle(method, params):
        names, cursor = pages[params.get("cursor")]
        page = {"prompts": [{"name": n} for n in names]}
        if cursor is not None:
            page["nextCursor"] = cursor
        return page

    with Client(scripted(handle).transport, timeout=LONG) as client:
        assert [p.name for p in client.list_prompts()] == ["a", "b"]


def test_a_malformed_page_is_a_protocol_error(scripted):
    with Client(scripted(lambda m, p: {"tools": "not a list"}).transport, timeout=LONG) as client:
        with pytest.raises(ProtocolError, match="tools"):
            client.list_tools()


# --- the page cap (endless cursors once drove 290,592 page requests and +591 MB in 20 s) ----------

def endless_cursors(conn: Conn, message: Dict[str, Any]) -> bool:
    page = int((message.get("params") or {}).get("cursor") or 0)
    return conn.reply(answer(message, {"tools": [{"name": f"t{page}", "inputSchema": {"type": "object"}}],
                                       "nextCursor": str(page + 1)}))


def test_endless_cursors_end_at_the_page_cap_with_a_typed_error(hostile):
    from mcpclient.errors import TooManyPages

    server = hostile(endless_cursors)
    with client_for(server.url, max_pages=50) as client:
        with pytest.raises(TooManyPages):
            client.list_tools(timeout=LONG * 3)
        assert server.calls == 50
        page = client.page("tools", timeout=LONG)  # one page a call: the caller keeps its place
        assert page.next_cursor is not None and server.calls == 51


def test_the_listing_timeout_covers_all_pages(hostile):
    def slow_endless(conn: Conn, message: Dict[str, Any]) -> bool:
        conn.stop.wait(0.1)
        return endless_cursors(conn, message)

    server = hostile(slow_endless)
    with client_for(server.url) as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.list_tools(timeout=TIMEOUT)
        assert time.monotonic() - t0 < TIMEOUT + SLACK
        assert server.calls < 40
