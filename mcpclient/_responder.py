"""Answers the server's requests (sampling, elicitation, roots, ping, tasks) with the user's handlers.

Kept apart from ``handlers`` and ``elicitation`` (the typed requests and results) so that
``import mcpclient`` does not build those classes: they are imported when first needed.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Type

from .errors import InvalidParams, MethodNotFound, ProtocolError

if TYPE_CHECKING:
    from .elicitation import ElicitationRequest  # deferred: import cost (elicitation)
    from .handlers import ElicitationHandler, RootsSetting, SamplingHandler  # deferred: import cost (handlers)
    from .tasks import TaskStore

__all__ = ["Responder"]

log = logging.getLogger("mcpclient")

TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")
Raw = Dict[str, Any]


class Responder:
    """Answers the server's requests with the configured handlers (on a handler thread)."""

    def __init__(self, sampling: Optional["SamplingHandler"], elicitation: Optional["ElicitationHandler"],
                 elicitation_modes: Sequence[str], roots: Optional["RootsSetting"],
                 extra_capabilities: Optional[Dict[str, Any]], tasks: Optional["TaskStore"] = None) -> None:
        for name, handler in (("sampling_handler", sampling), ("elicitation_handler", elicitation)):
            if handler is not None and not callable(handler):
                raise TypeError(f"{name} must be callable")
        from .elicitation import ELICITATION_MODES  # here, not at the top: import cost

        modes = tuple(elicitation_modes)
        if not modes or any(m not in ELICITATION_MODES for m in modes):
            raise ValueError(f"elicitation_modes must name 'form' and/or 'url', not {elicitation_modes!r}")
        if roots is not None and not callable(roots):
            from .handlers import roots_to_wire  # deferred: import cost (handlers)

            roots_to_wire(roots)  # fail at construction, not when the server asks
        if extra_capabilities is not None and not isinstance(extra_capabilities, dict):
            raise TypeError("capabilities must be a dict")
        self.sampling = sampling
        self.elicitation = elicitation
        self.elicitation_modes = modes
        self.roots = roots
        self.extra_capabilities = dict(extra_capabilities or {})
        self.tasks = tasks

    def set_roots(self, roots: "RootsSetting") -> None:
        """``Client.set_roots``: replace the roots (checked now, not when the server asks)."""
        if self.roots is None:
            raise ValueError("this client did not declare roots; pass roots=[] to Client to allow set_roots()")
        if not callable(roots):
            from .handlers import roots_to_wire  # deferred: import cost (handlers)

            roots_to_wire(roots)
        self.roots = roots

    def capabilities(self) -> Dict[str, Any]:
        """The ``ClientCapabilities`` to declare: one entry per configured handler, plus extras."""
        caps: Dict[str, Any] = {}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {mode: {} for mode in self.elicitation_modes}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.tasks is not None:  # the client runs task-augmented sampling / elicitation
            requests: Dict[str, Any] = {}
            if self.sampling is not None:
                requests["sampling"] = {"createMessage": {}}
            if self.elicitation is not None:
                requests["elicitation"] = {"create": {}}
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": requests}
        return _merged(caps, self.extra_capabilities)

    def quick(self, rid: Any, method: str, params: Dict[str, Any], reply: Callable[..., None]) -> bool:
        """What can be answered on the reader thread (see ``Session.on_quick_request``): the
        server's ``tasks/*`` and the creation of a task for a task-augmented request (checked,
        then run on a task thread), so neither waits for a free handler thread."""
        if self.tasks is None:
            return False
        if method in TASK_METHODS:
            return self.tasks.quick(rid, method, params, reply)
        if isinstance(params.get("task"), dict) and (
                (method == "sampling/createMessage" and self.sampling is not None)
                or (method == "elicitation/create" and self.elicitation is not None)):
            run = self._prepare_sample(params) if method == "sampling/createMessage" else self._prepare_elicit(params)
            reply(rid, self.tasks.start(method, params, run))
            return True
        return False

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        """The result for one server request, or an ``RPCError`` raised for the error reply.

        The request is parsed and checked first (-32602 for a malformed or undeclared one).
        (Task-augmented requests never get here: ``quick`` takes them.)
        """
        if method == "ping":
            return {}
        if method == "sampling/createMessage" and self.sampling is not None:
            run = self._prepare_sample(params)
        elif method == "elicitation/create" and self.elicitation is not None:
            run = self._prepare_elicit(params)
        elif method == "roots/list" and self.roots is not None:
            from .handlers import roots_to_wire  # deferred: import cost (handlers)

            roots = self.roots  # read once: set_roots() may swap it meanwhile
            return {"roots": roots_to_wire(roots() if callable(roots) else roots)}
        else:
            raise MethodNotFound(-32601, f"this client does not handle {method}")
        return run()

    def _prepare_sample(self, params: Dict[str, Any]) -> Callable[[], Raw]:
        from .handlers import CreateMessageRequest, CreateMessageResult  # deferred: import cost (handlers)

        request = _parsed(CreateMessageRequest, params, "sampling/createMessage")
        if (request.tools is not None or request.tool_choice is not None) and \
                not isinstance((self.capabilities().get("sampling") or {}).get("tools"), dict):
            raise InvalidParams(-32602, "this client did not declare sampling.tools; tools are not allowed")
        handler = self.sampling

        def run() -> Raw:
            result = _checked(handler(request), CreateMessageResult, "sampling_handler")  # type: ignore[misc]
            if not isinstance(result.get("content"), (dict, list)) or not isinstance(result.get("model"), str):
                raise ProtocolError("sampling_handler returned a result without 'content' and 'model'")
            return result
        return run

    def _prepare_elicit(self, params: Dict[str, Any]) -> Callable[[], Raw]:
        from .elicitation import ElicitationRequest, ElicitationResult, InvalidElicitation  # deferred: import cost (elicitation)

        request = _parsed(ElicitationRequest, params, "elicitation/create", told_as_is=(InvalidElicitation,))
        if request.mode not in self.elicitation_modes:
            raise InvalidParams(-32602, f"this client did not declare {request.mode} elicitation")
        handler = self.elicitation

        def run() -> Raw:
            result = _checked(handler(request), ElicitationResult, "elicitation_handler")  # type: ignore[misc]
            return _checked_answer(request, result)
        return run


def _merged(base: Dict[str, Any], extra: Dict[str, Any]) -> Dict[str, Any]:
    """``base`` with ``extra`` merged in, recursively for nested dicts."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _parsed(kind: Any, params: Dict[str, Any], method: str, told_as_is: Tuple[Type[Exception], ...] = ()) -> Any:
    """Parse a server request's params; anything malformed is the server's error (-32602).
    Errors of the ``told_as_is`` types already say what is wrong: their message is sent unchanged."""
    try:
        return kind.from_wire(params)
    except InvalidParams:
        raise
    except told_as_is as exc:
        raise InvalidParams(-32602, str(exc)) from None
    except (ProtocolError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InvalidParams(-32602, f"malformed {method} request: {exc}") from None


_PRIMITIVES = (str, int, float, bool)


def _checked_answer(request: "ElicitationRequest", result: Raw) -> Raw:
    """An elicitation answer as the spec allows it: a valid action; for a form, only the schema's
    fields, each a string, number, boolean or list of strings; for a URL, no content at all."""
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise ProtocolError("elicitation_handler returned no valid 'action'")
    content = result.get("content")
    if action != "accept" or request.mode == "url" or content is None:
        return {k: v for k, v in result.items() if k != "content"}
    if not isinstance(content, dict):
        raise ProtocolError("elicitation_handler returned 'content' that is not a dict")
    fields = (request.requested_schema or {}).get("properties") or {}
    unknown = sorted(k for k in content if k not in fields)
    if unknown:
        log.warning("elicitation answer: dropped fields the form did not ask for: %s", ", ".join(unknown)[:200])
    kept = {k: v for k, v in content.items() if k in fields}
    for key, value in kept.items():
        if not (isinstance(value, _PRIMITIVES) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise ProtocolError(f"elicitation answer field {key!r} is not a string, number, boolean or list of strings")
    return dict(result, content=kept)


def _checked(value: Any, kind: type, who: str) -> Raw:
    """A handler's return value as a wire dict (typed results are converted, dicts passed through)."""
    if isinstance(value, kind):
        return value.to_wire()  # type: ignore[attr-defined]
    if isinstance(value, dict):
        return value
    raise TypeError(f"{who} must return {kind.__name__} or a dict, not {type(value).__name__}")
