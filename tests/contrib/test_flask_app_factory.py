"""``mcpclient.contrib.flask`` in process: the app-factory form (``MCP()`` then ``init_app`` per
app, acting on ``current_app``), settings refused at ``init_app``, and the health blueprint,
through Flask's test client. Real servers over real pipes; gunicorn: tests/deploy/test_contrib_flask.py."""
from __future__ import annotations

import pytest

from conftest import TESTING_SERVER

flask = pytest.importorskip("flask")

from mcpclient.contrib.flask import MCP, health_blueprint  # noqa: E402

ENTRY = {"command": TESTING_SERVER[0], "args": list(TESTING_SERVER[1:])}


def create_app(mcp: MCP, name: str, servers: dict) -> "flask.Flask":
    app = flask.Flask(name)
    app.config["MCP_SERVERS"] = servers
    mcp.init_app(app)
    app.register_blueprint(health_blueprint, url_prefix="/mcp")
    return app


def test_one_mcp_serves_each_app_of_a_factory_with_its_own_group():
    mcp = MCP()
    first = create_app(mcp, "first", {"one": ENTRY})
    second = create_app(mcp, "second", {"two": ENTRY, "three": ENTRY})
    try:
        with first.app_context():
            assert mcp.names == ["one"] and mcp.call_tool("one_add", {"a": 1, "b": 2}).structured_content == {"sum": 3}
            first_server = mcp["one"].transport.pid
        with second.app_context():
            assert mcp.names == ["two", "three"] and mcp["two"].transport.pid != first_server
        assert first.extensions["mcp"].made and second.extensions["mcp"].made
        response = first.test_client().get("/mcp/health")
        assert response.status_code == 200 and response.get_json()["servers"]["one"]["state"] == "ready"
    finally:
        first.extensions["mcp"].close()
        second.extensions["mcp"].close()
    with pytest.raises(RuntimeError, match="application context"):
        mcp.list_tools()  # no app given, none current


def test_init_app_refuses_malformed_settings_at_once():
    with pytest.raises(ValueError, match=r"MCP_SERVERS has an entry that cannot be used: server 'x': needs a 'command'"):
        create_app(MCP(), "broken", {"x": {"args": ["y"]}})
    with pytest.raises(ValueError, match="MCP_SERVERS is not set"):
        MCP(flask.Flask("unset"))


def test_a_server_down_makes_the_health_route_answer_503():
    app = create_app(MCP(), "down", {"ok": ENTRY, "down": {"command": "mcpclient-test-no-such-command"}})
    try:
        response = app.test_client().get("/mcp/health")
        body = response.get_json()
        assert response.status_code == 503 and body["ok"] is False
        assert body["servers"]["ok"]["state"] == "ready" and body["servers"]["down"]["state"] == "failed"
        assert "mcpclient-test-no-such-command" in body["servers"]["down"]["error"]
    finally:
        app.extensions["mcp"].close()
