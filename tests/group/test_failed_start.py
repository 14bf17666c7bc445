"""A group that cannot finish starting stops every server it started, with a typed error; the pins
file's folder is made on first use; a group takes an ``mcpServers`` document and its entries as
they come, and refuses at once what names no server."""
from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import TESTING_SERVER, pid_alive, wait_until
from mcpclient import ConnectError, ServerGroup, ToolChangedError, ToolPins


def test_pins_in_a_folder_that_does_not_exist_yet_are_written_there(tmp_path) -> None:
    path = tmp_path / "config" / "myapp" / "tool-pins.json"
    with ServerGroup({"a": TESTING_SERVER}, pins=ToolPins(str(path))) as group:
        assert group.status["a"].state == "ready"
    assert "a" in json.loads(path.read_text())["servers"]
    assert stat.S_IMODE(os.stat(path.parent).st_mode) & 0o077 == 0  # only this user's


def test_pins_that_cannot_be_written_stop_every_server_the_group_started() -> None:
    unwritable = "/proc/mcpclient-no-such-folder/pins.json"  # (no folder can be made there, even by root)
    group = ServerGroup({"a": TESTING_SERVER, "b": TESTING_SERVER}, pins=ToolPins(unwritable))
    with pytest.raises(ConnectError) as caught:
        with group:
            pass
    assert unwritable in str(caught.value)
    pids = [group.client(name).transport.pid for name in ("a", "b")]
    assert all(pids)
    assert wait_until(lambda: not any(pid_alive(pid) for pid in pids))
    assert all(group.client(name).state == "closed" for name in ("a", "b"))


def test_a_pins_path_that_cannot_be_read_is_refused_with_the_reason(tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ValueError, match="cannot read the tool pins file"):
        ToolPins(str(blocker / "pins.json"))


def test_the_refusal_names_the_documented_way_to_accept_a_change() -> None:
    error = ToolChangedError("files", "read", [])
    assert "accept_tool_changes()" in str(error) and "ToolPins.update" not in str(error)


def test_an_mcp_servers_document_and_its_entries_are_taken_as_they_come() -> None:
    argv = TESTING_SERVER
    entry = {"command": argv[0], "args": list(argv[1:])}
    with ServerGroup({"mcpServers": {"a": entry}}) as group:
        assert group.names == ["a"] and group.call_tool("a_echo", {"text": "hi"}).text == "hi"
    with ServerGroup({"a": entry, "b": argv}) as group:  # an entry beside a target
        assert [s.state for s in group.status.values()] == ["ready", "ready"]
    with ServerGroup({"servers": {"a": dict(entry, type="stdio")}}) as group:  # VS Code's spelling
        assert group.names == ["a"]


def test_what_names_no_server_is_refused_at_construction() -> None:
    with pytest.raises(TypeError, match="mcpServers entry"):
        ServerGroup({"a": 42})
    group = ServerGroup({"a": {"args": ["x"]}})  # an entry without a command fails alone, at connect
    assert group.status["a"].state == "failed" and "command" in str(group.status["a"].error)
