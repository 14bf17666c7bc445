"""Hypothesis strategies for fuzz cases (property-based: hypothesis shrinks what fails).

The same case format as ``gen.py``: hypothesis draws JSON values of any shape (lone surrogates,
huge integers, nesting) for a reply's ``result``/``error``, a notification's and a server
request's ``params``, and the ids of server requests; the valid answer follows on stdio (and in
the same event stream on HTTP), so a case that the client rightly skips still ends at once.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List

from hypothesis import strategies as st

from .gen import CALLS, NOTIFY_METHODS, SERVER_METHODS, TIMEOUT, sse_event
from .wire import RESULTS

KEYS = st.sampled_from(["tools", "prompts", "resources", "contents", "content", "messages", "name", "type",
                        "text", "uri", "inputSchema", "outputSchema", "$schema", "structuredContent",
                        "isError", "nextCursor", "completion", "values", "arguments", "_meta", "code",
                        "message", "data", "progressToken", "progress", "level", "role"])
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2 ** 63, max_value=2 ** 200)
           | st.floats(allow_nan=False) | st.text(st.characters(blacklist_categories=()), max_size=12))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=4),
                                                                                      inner, max_size=5),
                    max_leaves=25)


def _result(method: str) -> Any:
    base = RESULTS.get(method, {})
    return JSON | st.fixed_dictionaries({k: JSON for k in base}) | st.just(base).flatmap(
        lambda b: st.dictionaries(KEYS, JSON, max_size=4).map(lambda extra: dict(b, **extra)))


def _text(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=True)  # Infinity included; ascii: lone surrogates as \\udXXX escapes


def _reply(method: str) -> Any:
    result = _result(method).map(lambda r: {"jsonrpc": "2.0", "result": r})
    error = JSON.map(lambda e: {"jsonrpc": "2.0", "error": e})
    marker = "\u0001ID\u0001"
    return (result | error).map(lambda m: _text(dict(m, id=marker)).split(json.dumps(marker))).map(
        lambda halves: [{"b": halves[0]}, {"id": 0}, {"b": halves[1]}])


def _notification() -> Any:
    return st.tuples(st.sampled_from(NOTIFY_METHODS), JSON).map(
        lambda mp: [{"b": _text({"jsonrpc": "2.0", "method": mp[0], "params": mp[1]})}])


def _server_request() -> Any:
    return st.tuples(st.sampled_from(SERVER_METHODS), JSON, SCALARS | st.lists(SCALARS, max_size=2)).map(
        lambda mpi: [{"b": _text({"jsonrpc": "2.0", "id": mpi[2], "method": mpi[0], "params": mpi[1]})}])


@st.composite
def cases(draw: Any, transport: str) -> Dict[str, Any]:
    """A case: a call, 0-2 notifications or server requests, a reply of any shape, then the answer."""
    call, method = draw(st.sampled_from(CALLS))
    frames: List[List[Dict[str, Any]]] = draw(st.lists(_notification() | _server_request(), max_size=2))
    frames.append(draw(_reply(method)))
    case: Dict[str, Any] = {"call": call, "method": method, "timeout": TIMEOUT, "ends": False, "family": "hypothesis"}
    if transport == "stdio":
        case["frames"] = [f + [{"b": "\n"}] for f in frames] + [[{"ans": 1}, {"b": "\n"}]]
    else:
        import random

        rng = random.Random(0)
        case["frames"] = [sse_event(rng, f, False, clean=True) for f in frames + [[{"ans": 1}]]]
        case["http"] = {"headers": {"Content-Type": "text/event-stream"}, "length": "exact"}
    return case
