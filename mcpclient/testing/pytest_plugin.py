"""pytest plugin: the ``mcp_cassette`` fixture and the ``--mcp-record`` option.

Registered with pytest through the ``pytest11`` entry point of the mcpclient distribution, so
installing mcpclient is enough. A test wraps its server target in the fixture and gets a
transport that records the session (when there is no cassette yet) or replays it (afterwards,
with the server gone)::

    def test_echo(mcp_cassette):
        with Client(mcp_cassette("python -m my_server")) as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"

Cassettes live next to the test: ``<test dir>/cassettes/<test module>/<test name>.jsonl``
(commit them; ``test_x[a b]`` is ``test_x_a_b-<hash>.jsonl``: a name that had to change gets a
short hash, so no two tests share a cassette). ``--mcp-record`` (or the ``mcp_record`` ini option) says what to do:

- ``missing`` (the default; VCR's "once"): replay a cassette that exists, record one that does
  not. A first run needs the server; later runs (CI) do not.
- ``none``: replay only; a missing cassette fails the test, saying how to record it. Use it in CI
  to guarantee that no test talks to a real server.
- ``all``: record every cassette again (the server changed).

A recording is written beside its cassette and moved in place only if the test passed, so a
failed run never leaves a half-recorded cassette (nor replaces a good one).

pytest loads this plugin in every run of every project that has mcpclient installed: the
cassettes and the transports they wrap load when a test first asks for the fixture, not with
the plugin.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

import pytest

from .._util.lazy import load

__all__ = ["MODES", "CassetteFixture", "mcp_cassette"]

#: The values of ``--mcp-record``.
MODES = ("none", "missing", "all")
_DEFAULT_MODE = "missing"
_OUTCOME = pytest.StashKey[bool]()


def pytest_addoption(parser: Any) -> None:
    """Add ``--mcp-record`` and the ``mcp_record`` ini option."""
    group = parser.getgroup("mcpclient", "mcpclient cassettes (record and replay)")
    group.addoption("--mcp-record", choices=MODES, default=None, dest="mcp_record",
                    help="none: replay cassettes only (a missing one fails); missing: record the cassettes "
                         "that do not exist, replay the others (default); all: record every cassette again")
    parser.addini("mcp_record", f"default for --mcp-record ({', '.join(MODES)}; default {_DEFAULT_MODE})",
                  default=_DEFAULT_MODE)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    """Note whether the test itself failed (a failed recording is thrown away)."""
    outcome: Any = yield
    report = outcome.get_result()
    if report.when == "call" and not report.passed:
        item.stash[_OUTCOME] = False


def _mode(config: Any) -> str:
    mode = config.getoption("mcp_record") or config.getini("mcp_record") or _DEFAULT_MODE
    if mode not in MODES:
        raise pytest.UsageError(f"mcp_record must be one of {', '.join(MODES)}, not {mode!r}")
    return str(mode)


def _safe(name: str) -> str:
    """``name`` as a file name; one that had to change more than ``test[id]`` -> ``test_id``
    gets a short hash of itself, so that ``[a b]``, ``[a/b]`` and ``[a_b]`` stay three files."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "test"
    if re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(\[[A-Za-z0-9_.-]+\])?", name) and not name.endswith(".]"):
        return safe
    return f"{safe}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


class CassetteFixture:
    """What the ``mcp_cassette`` fixture gives a test: call it with a target to get a transport.

    Attributes:
        mode: the ``--mcp-record`` setting in force (``none``, ``missing`` or ``all``).
        directory: where this test's cassettes are (``<test dir>/cassettes/<module>``).
        stem: the test's cassette name without extension (the test name, sanitized).
    """

    def __init__(self, mode: str, directory: Path, stem: str) -> None:
        """Made by the ``mcp_cassette`` fixture, once per test.

        Args:
            mode: ``none``, ``missing`` or ``all``.
            directory: the directory for this test's cassettes.
            stem: the base file name for this test's cassettes.
        """
        self.mode = mode
        self.directory = directory
        self.stem = stem
        self._count = 0
        self._recordings: List[Tuple[Path, Path]] = []  # (being written, final)
        self._recorders: List[Any] = []  # their RecordingTransports, stopped at the end of the test
        self.used: List[Tuple[Path, str]] = []  # (cassette, "record" | "replay"), in call order

    def path(self, name: Optional[str] = None) -> Path:
        """The cassette file for ``name`` (None: the test's own name).

        Args:
            name: a suffix telling several cassettes of one test apart.

        Returns:
            ``<directory>/<stem>.jsonl`` or ``<directory>/<stem>.<name>.jsonl``.
        """
        return self.directory / (f"{self.stem}.{_safe(name)}.jsonl" if name else f"{self.stem}.jsonl")

    @property
    def recording(self) -> bool:
        """True if the last transport made records (False: it replays)."""
        return bool(self.used) and self.used[-1][1] == "record"

    def __call__(self, target: Any, *, name: Optional[str] = None, headers: Optional[Dict[str, str]] = None,
                 auth: Any = None, redact: Any = None, secrets: Iterable[str] = (), matcher: Any = None) -> Any:
        """A transport for ``target``: recording it, or replaying its cassette without it.

        Args:
            target: what ``Client()`` takes: a command string, an argv list, an http(s) URL or a
                ``Transport`` (never started when replaying).
            name: tells a test's second and later cassettes apart (default: ``2``, ``3``... in
                call order after the first, which has none).
            headers: HTTP headers, for a URL target.
            auth: HTTP credentials, for a URL target; a string token is also scrubbed from the
                cassette as a secret.
            redact: extra redaction for ``RecordingTransport`` (dotted paths and/or hooks).
            secrets: literal strings never to write to the cassette.
            matcher: a request matcher for ``ReplayTransport``.

        Returns:
            A ``RecordingTransport`` or a ``ReplayTransport``, to pass to ``Client``.

        Raises:
            pytest.fail.Exception: ``--mcp-record=none`` and the cassette does not exist.
        """
        self._count += 1
        if name is None and self._count > 1:
            name = str(self._count)
        path = self.path(name)
        if self.mode == "all" or (self.mode == "missing" and not path.exists()):
            inner = load("mcpclient.transports.targets").make_transport(target, headers, auth)  # see the docstring
            cassettes = load("mcpclient.testing.cassettes")  # see the docstring
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.recording")  # xdist workers: one each
            self._recordings.append((partial, path))
            self.used.append((path, "record"))
            extra = [auth] if isinstance(auth, str) else []
            transport = cassettes.RecordingTransport(inner, partial, redact=redact, secrets=[*secrets, *extra])
            self._recorders.append(transport)
            return transport
        if not path.exists():
            pytest.fail(f"no cassette {path} (--mcp-record=none replays only): run this test once with "
                        "--mcp-record=missing against the real server to record it", pytrace=False)
        self.used.append((path, "replay"))
        return load("mcpclient.testing.cassettes").ReplayTransport(path, matcher=matcher)  # see the docstring

    def _finish(self, passed: bool) -> None:
        """Move the recordings in place if the test passed; else throw them away. A client
        still open records nothing more."""
        for transport in self._recorders:
            transport._rec.stop()
        for partial, final in self._recordings:
            if not partial.exists():
                continue
            if passed:
                os.replace(partial, final)
            else:
                partial.unlink()


@pytest.fixture
def mcp_cassette(request: Any) -> Iterator[CassetteFixture]:
    """Record or replay this test's MCP sessions: ``Client(mcp_cassette(target))``.

    Args:
        request: pytest's request (the test's location names its cassettes).

    Yields:
        A ``CassetteFixture``; call it with a target to get a transport.
    """
    node = request.node
    module = Path(str(getattr(node, "path", None) or node.fspath))
    test = node.name if request.cls is None else f"{request.cls.__name__}.{node.name}"
    fixture = CassetteFixture(_mode(request.config), module.parent / "cassettes" / _safe(module.stem), _safe(test))
    yield fixture
    fixture._finish(node.stash.get(_OUTCOME, True))
