"""Flask: ``MCP(app)`` (or ``mcp.init_app(app)`` in an app factory) gives the app the MCP servers of
``app.config["MCP_SERVERS"]``, one group per process.

    app.config["MCP_SERVERS"] = {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/srv"]},
    }
    app.config["MCP_OPTIONS"] = {"client_options": {"timeout": 30}}  # optional
    mcp = MCP(app)

    @app.get("/notes")
    def notes():
        path = "/srv/notes.txt"
        return mcp.call_tool("files_read_text_file", {"path": path}).text

``mcp`` is a ``PerProcessGroup`` of the app (``current_app``'s when made without one):
``app.extensions["mcp"]`` holds the app's own. The group is made on first use in each process,
after any fork (gunicorn ``--preload``), shared by the process's threads, closed at exit.
``init_app`` checks the settings at once (``ValueError`` naming what is wrong; a variable this
environment lacks is logged) and adds ``flask mcp status|tools|call``; ``health_blueprint`` serves
``GET <prefix>/health`` (``app.register_blueprint(health_blueprint, url_prefix="/mcp")``).
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional, Tuple

from ..errors import MissingExtraError

try:
    import click
    from flask import Blueprint, Flask, Response, current_app, jsonify
    from flask.cli import AppGroup
except ImportError as exc:
    raise MissingExtraError("mcpclient.contrib.flask needs Flask: pip install 'mcpclient[flask]'",
                            extra="flask", name="flask") from exc

from ..cli.terminal import Output
from . import commands
from .process import PerProcessGroup, settings_problems

__all__ = ["MCP", "health_blueprint"]

log = logging.getLogger("mcpclient.contrib.flask")


class MCP(PerProcessGroup):
    """The MCP servers of a Flask app's ``MCP_SERVERS``: ``MCP(app)``, or ``MCP()`` then
    ``init_app(app)`` for each app (its methods then act on ``current_app``'s group)."""

    def __init__(self, app: Optional[Flask] = None) -> None:
        super().__init__(_unused, name="MCP_SERVERS")
        self.app = app
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Check the app's settings, give it its group (``app.extensions["mcp"]``) and the
        ``flask mcp`` commands."""
        servers, options = app.config.get("MCP_SERVERS"), app.config.get("MCP_OPTIONS")
        found = settings_problems(servers, options)
        errors = [f"{p.setting} {p.message}" for p in found if p.error]
        if errors:
            raise ValueError(f"app {app.name!r}: " + "; ".join(errors))
        for problem in found:
            log.warning("app %r: %s %s", app.name, problem.setting, problem.message)
        app.extensions["mcp"] = PerProcessGroup(lambda: (app.config["MCP_SERVERS"], app.config.get("MCP_OPTIONS") or {}),
                                                name=f"{app.name}.config['MCP_SERVERS']")
        app.cli.add_command(cli)

    def _of_app(self) -> PerProcessGroup:
        app: Any = self.app if self.app is not None else current_app
        group = app.extensions.get("mcp")
        if group is None:
            raise RuntimeError(f"MCP.init_app() was not called for app {app.name!r}")
        return group  # type: ignore[no-any-return]

    def group(self) -> Any:
        """The app's group in this process (``PerProcessGroup.group``)."""
        return self._of_app().group()

    def close(self) -> None:
        """Close the app's group in this process (``PerProcessGroup.close``)."""
        self._of_app().close()

    @property
    def made(self) -> bool:
        return self._of_app().made

    def __repr__(self) -> str:
        return f"<mcpclient.contrib.flask.MCP {self.app.name if self.app is not None else '(current_app)'}>"


def _unused() -> Tuple[Any, Any]:  # (an MCP reads each app's settings in init_app)
    raise RuntimeError("MCP reads the settings of the app it was given")


health_blueprint = Blueprint("mcp", __name__)


@health_blueprint.get("/health")
def health() -> Tuple[Response, int]:
    """The app's group as JSON: 200 when every enabled server is ready, else 503."""
    body = current_app.extensions["mcp"].health()
    return jsonify(body), 200 if body["ok"] else 503


cli = AppGroup("mcp", help="Talk to the app's MCP servers (MCP_SERVERS): status, tools, call.")


def _run(action: Callable[[PerProcessGroup, Output], int]) -> None:
    out = Output(click.get_text_stream("stdout"), click.get_text_stream("stderr"))
    try:
        code = action(current_app.extensions["mcp"], out)
    except commands.CommandFailed as exc:
        out.flush()
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(exc.code) from exc
    out.flush()
    if code:
        raise SystemExit(code)


@cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="one JSON document")
def status_command(as_json: bool) -> None:
    """Each server's state, protocol, tool count and error (exit 1 if one is not ready)."""
    _run(lambda mcp, out: commands.status(mcp, out, as_json))


@cli.command("tools")
@click.option("--server", default=None, help="one server's own tools (names as the server gives them)")
@click.option("--json", "as_json", is_flag=True, help="one JSON document")
def tools_command(server: Optional[str], as_json: bool) -> None:
    """The tools the servers offer, as signatures."""
    _run(lambda mcp, out: commands.tools(mcp, out, server, as_json))


@cli.command("call")
@click.argument("tool")
@click.argument("pairs", nargs=-1, metavar="key=value...")
@click.option("--args-json", default=None, help="the arguments as one JSON object")
@click.option("--timeout", type=float, default=None, help="seconds (default: the client's)")
@click.option("--json", "as_json", is_flag=True, help="one JSON document")
def call_command(tool: str, pairs: Tuple[str, ...], args_json: Optional[str], timeout: Optional[float],
                 as_json: bool) -> None:
    """Call TOOL (its namespaced name) with key=value arguments (JSON values: n=3 flag=true)."""
    extra = {"timeout": timeout} if timeout is not None else {}
    _run(lambda mcp, out: commands.call(mcp, out, tool, pairs, args_json=args_json, as_json=as_json, **extra))
