"""What ``settings_problems`` finds in ``MCP_SERVERS`` and ``MCP_OPTIONS`` without starting
anything (the Django system check and ``MCP.init_app`` report it), and that the framework modules
name their extra when the framework is missing."""
from __future__ import annotations

import subprocess
import sys

import pytest

from mcpclient.contrib import settings_problems

GOOD = {"files": {"command": "npx", "args": ["-y", "server"]}, "web": {"url": "https://mcp.example/mcp"}}


def found(servers, options=None, environ=None):
    return [(p.setting, p.error, p.message) for p in settings_problems(servers, options, environ=environ or {})]


def test_good_settings_have_no_problem():
    assert found(GOOD) == []
    assert found({"mcpServers": GOOD}, {"separator": "-", "client_options": {"timeout": 5}, "exclude": ["*_delete"]}) == []


@pytest.mark.parametrize("servers, says", [
    (None, "is not set"),
    ([1, 2], "must be an mcpServers object or a path to an mcp.json file, not list"),
    ({}, "names no server"),
    ({"a": {"args": ["x"]}}, "has an entry that cannot be used: server 'a': needs a 'command'"),
    ({"a": {"url": "ftp://x"}}, "server 'a': 'url' must be an http(s) URL"),
    ("/nonexistent/mcp.json", "cannot be read"),
])
def test_malformed_servers_are_errors(servers, says):
    [(setting, error, message)] = found(servers)
    assert setting == "MCP_SERVERS" and error and says in message


def test_a_variable_this_environment_lacks_is_a_warning_not_an_error():
    servers = {"web": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}}
    [(setting, error, message)] = found(servers)
    assert setting == "MCP_SERVERS" and not error and "WEB_TOKEN" in message
    assert found(servers, environ={"WEB_TOKEN": "t"}) == []


@pytest.mark.parametrize("options, says", [
    ("x", "must be a dict of ServerGroup options, not str"),
    ({"bogus": 1}, "has no option 'bogus'"),
    ({"client_options": {"timout": 3}}, "'client_options' has 'timout', which Client does not take"),
    ({"client_options": 3}, "'client_options' must be a dict"),
    ({"separator": "!!"}, "is refused: separator must be"),
    ({"on_pin_change": "ignore"}, "is refused: on_pin_change must be"),
])
def test_malformed_options_are_errors(options, says):
    [(setting, error, message)] = found(GOOD, options)
    assert setting == "MCP_OPTIONS" and error and says in message


@pytest.mark.parametrize("module, framework, extra", [
    ("mcpclient.contrib.django", "django", "django"),
    ("mcpclient.contrib.flask", "flask", "flask"),
    ("mcpclient.contrib.celery", "celery", "celery"),
])
def test_a_framework_module_names_its_extra_when_the_framework_is_missing(module, framework, extra):
    code = (f"import sys; sys.modules[{framework!r}] = None\n"
            "from mcpclient import MissingExtraError\n"
            f"try:\n    import {module}\nexcept MissingExtraError as exc:\n    print(exc.extra, '|', exc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.startswith(f"{extra} | ") and f"pip install 'mcpclient[{extra}]'" in out.stdout, out.stderr


def test_importing_mcpclient_and_contrib_loads_no_framework():
    code = ("import sys, mcpclient, mcpclient.contrib; from mcpclient.contrib import PerProcessGroup; "
            "print(sorted(m for m in ('django', 'flask', 'celery') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "[]", out.stderr
