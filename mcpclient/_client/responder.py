"""Answers the server's requests (sampling, elicitation, roots, ping, tasks) with the user's handlers.

Kept apart from ``handlers`` and ``elicitation`` (the typed requests and results) so that
``import mcpclient`` does not build those classes: they are imported when first needed.
"""
from __future__ import annotations

import logging
import re
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Type

from .._util.lazy import load
from ..errors import InvalidParams, MethodNotFound, ProtocolError
from ..protocol.spec import ELICITATION_MODES
from ..transports.base import encode_frame

if TYPE_CHECKING:
    from ..types.elicitation import ElicitationRequest  # deferred: import cost (elicitation)
    from ..types.handlers import ElicitationHandler, RootsSetting, SamplingHandler  # deferred: import cost (handlers)
    from ..extensions.tasks.core import TaskStore
    from .._engine.hooks import CallTracer

__all__ = ["Responder"]

log = logging.getLogger("mcpclient")

TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")
Raw = Dict[str, Any]


class Responder:
    """Answers the server's requests with the configured handlers (on a handler thread)."""

    def __init__(self, sampling: Optional["SamplingHandler"], elicitation: Optional["ElicitationHandler"],
                 elicitation_modes: Sequence[str], roots: Optional["RootsSetting"],
                 extra_capabilities: Optional[Dict[str, Any]], task_requests: bool = False, instance: int = 0,
                 max_workers: int = 4, extensions: Optional[Dict[str, Any]] = None) -> None:
        """``extensions``: the declared extensions' ``{"extensions": {...}}``, merged into the
        capabilities (``Registry.capabilities``)."""
        for name, handler in (("Handlers(sampling=)", sampling), ("Handlers(elicitation=)", elicitation)):
            if handler is not None and not callable(handler):
                raise TypeError(f"{name} must be callable")
        modes = tuple(elicitation_modes)
        if not modes or any(m not in ELICITATION_MODES for m in modes):
            raise ValueError(f"elicitation_modes must name 'form' and/or 'url', not {elicitation_modes!r}")
        if roots is not None and not callable(roots):
            from ..types.handlers import roots_to_wire  # roots: only a client that declares them loads the handler types

            roots_to_wire(roots)  # fail at construction, not when the server asks
        if extra_capabilities is not None and not isinstance(extra_capabilities, dict):
            raise TypeError("capabilities must be a dict")
        if extensions:
            extra_capabilities = _merged(extra_capabilities or {}, extensions)
        self.sampling = sampling
        self.elicitation = elicitation
        self.elicitation_modes = modes
        self.roots = roots
        self.extra_capabilities = dict(extra_capabilities or {})
        #: 2025-11-25 tasks the server may ask for (``Handlers(task_requests=True)``), or None.
        self.tasks: Optional["TaskStore"] = None
        if task_requests:
            from ..extensions.tasks.core import TaskStore  # extension: only a client that takes task requests loads it

            self.tasks = TaskStore(instance, max_workers)
        #: Server requests the declared extensions answer: method -> ``(params) -> result``.
        self.extension_requests: Dict[str, Callable[[Dict[str, Any]], Any]] = {}
        #: Traces the handlers (``tracing.CallTracer``; set by the client at connect), or None.
        self.tracer: Optional["CallTracer"] = None

    def set_roots(self, roots: "RootsSetting") -> None:
        """``Client.set_roots``: replace the roots (checked now, not when the server asks)."""
        if self.roots is None:
            raise ValueError("this client did not declare roots; pass roots=[] to Client to allow set_roots()")
        if not callable(roots):
            from ..types.handlers import roots_to_wire  # roots: only a client that declares them loads the handler types

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

    def take_at_once(self, rid: Any, method: str, params: Dict[str, Any], reply: Callable[..., None]) -> bool:
        """What can be answered on the reader thread (see ``ServerRequests.on_request_read``): the
        server's ``tasks/*`` and the creation of a task for a task-augmented request (checked,
        then run on a task thread), so neither waits for a free handler thread."""
        if self.tasks is None:
            return False
        if method in TASK_METHODS:
            return self.tasks.take_at_once(rid, method, params, reply)
        if isinstance(params.get("task"), dict) and (
                (method == "sampling/createMessage" and self.sampling is not None)
                or (method == "elicitation/create" and self.elicitation is not None)):
            run = self._prepare_sample(params) if method == "sampling/createMessage" else self._prepare_elicit(params)
            tracer = self.tracer
            if tracer is not None:  # (the handler runs later, on a task thread: in its span there)
                untraced = run
                run = lambda: tracer.serve(method, params, untraced)
            reply(rid, self.tasks.start(method, params, run))
            return True
        return False

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        """The result for one server request, or an ``RPCError`` raised for the error reply.

        The request is parsed and checked first (-32602 for a malformed or undeclared one).
        (Task-augmented requests never get here: ``take_at_once`` takes them.) With tracing on, the
        handler runs in a span (``tracing.CallTracer.serve``).
        """
        tracer = self.tracer
        if tracer is not None and method != "ping":
            return tracer.serve(method, params, lambda: self._answer(method, params))
        return self._answer(method, params)

    def _answer(self, method: str, params: Dict[str, Any]) -> Any:
        if method == "ping":
            return {}
        if method == "sampling/createMessage" and self.sampling is not None:
            run = self._prepare_sample(params)
        elif method == "elicitation/create" and self.elicitation is not None:
            run = self._prepare_elicit(params)
        elif method == "roots/list" and self.roots is not None:
            from ..types.handlers import roots_to_wire  # roots: only a client that declares them loads the handler types

            roots = self.roots  # read once: set_roots() may swap it meanwhile
            return {"roots": roots_to_wire(roots() if callable(roots) else roots)}
        elif method in self.extension_requests:
            result = self.extension_requests[method](params)
            if not isinstance(result, dict):  # (a non-object result is no answer: answered -32603)
                raise TypeError(f"the extension handler for {method} must return a dict, not {type(result).__name__}")
            encode_frame(result)  # UnsendableMessage now, answered -32603, rather than no answer at all
            return result
        else:
            raise MethodNotFound(-32601, f"this client does not handle {method}")
        return run()

    def _prepare_sample(self, params: Dict[str, Any]) -> Callable[[], Raw]:
        from ..types.handlers import CreateMessageRequest, CreateMessageResult  # sampling: only a client that answers it loads them

        request = _parsed(CreateMessageRequest, params, "sampling/createMessage")
        _check_tool_pairing(params.get("messages"))
        if (request.tools is not None or request.tool_choice is not None) and \
                not isinstance((self.capabilities().get("sampling") or {}).get("tools"), dict):
            raise InvalidParams(-32602, "this client did not declare sampling.tools; tools are not allowed")
        handler = self.sampling

        def run() -> Raw:
            result = _checked(handler(request), CreateMessageResult, "the sampling handler")  # type: ignore[misc]
            if not isinstance(result.get("content"), (dict, list)) or not isinstance(result.get("model"), str):
                raise ProtocolError("the sampling handler returned a result without 'content' and 'model'")
            return result
        return run

    def _prepare_elicit(self, params: Dict[str, Any]) -> Callable[[], Raw]:
        from ..types.elicitation import ElicitationRequest, ElicitationResult, InvalidElicitation  # elicitation: only a client that answers it

        request = _parsed(ElicitationRequest, params, "elicitation/create", told_as_is=(InvalidElicitation,))
        if request.mode not in self.elicitation_modes:
            raise InvalidParams(-32602, f"this client did not declare {request.mode} elicitation")
        handler = self.elicitation

        def run() -> Raw:
            result = _checked(handler(request), ElicitationResult, "the elicitation handler")  # type: ignore[misc]
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


def _check_tool_pairing(messages: Any) -> None:
    """The 2025-11-25 sampling rules for ``tool_use``/``tool_result``: ``InvalidParams`` (-32602)
    unless every assistant message with ``tool_use`` blocks is followed at once by a user message
    made only of ``tool_result`` blocks answering exactly those ids, each once, and no
    ``tool_result`` appears anywhere else (nor a ``tool_use`` outside assistant messages)."""
    pending: Optional[List[Any]] = None  # the ids the previous message's tool_use blocks await
    for index, message in enumerate(messages if isinstance(messages, list) else ()):
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [b for b in (content if isinstance(content, list) else [content]) if isinstance(b, dict)]
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        role = message.get("role") if isinstance(message, dict) else None
        if pending is not None:
            answered = sorted(repr(b.get("toolUseId")) for b in results)
            if role != "user" or len(results) != len(blocks) or answered != sorted(map(repr, pending)):
                raise InvalidParams(-32602, f"sampling message {index} must be a user message of tool_result blocks "
                                            f"answering each tool_use of message {index - 1} once "
                                            f"(ids {', '.join(map(repr, pending))[:200]})")
            pending = None
            continue
        if results:
            raise InvalidParams(-32602, f"sampling message {index} has tool_result blocks but message {index - 1} "
                                        "is not an assistant message with tool_use blocks")
        if uses:
            ids = [b.get("id") for b in uses]
            if role != "assistant":
                raise InvalidParams(-32602, f"sampling message {index}: tool_use blocks belong in assistant messages")
            if not all(isinstance(i, str) and i for i in ids) or len(set(ids)) != len(ids):
                raise InvalidParams(-32602, f"sampling message {index}: every tool_use needs its own string id")
            pending = ids
    if pending is not None:
        raise InvalidParams(-32602, "the last sampling message has tool_use blocks no tool_result answers")


def _schema_errors(content: Raw, schema: Raw) -> Optional[str]:
    """The first way ``content`` breaks the form's ``schema`` (jsonschema, Draft 2020-12, formats
    ``email``, ``uri``, ``date``, ``date-time`` checked), or None. A schema jsonschema cannot use
    gives None (the request was sent as the server wrote it; nothing to hold the answer to)."""
    import jsonschema  # optional boundary: tens of ms, loaded only by a client that checks an elicitation answer
    from referencing import Registry

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema, registry=Registry(), format_checker=_formats(jsonschema))
        error = next(iter(validator.iter_errors(content)), None)
    except Exception as exc:  # an unusable schema, an external $ref: the answer is not held to it
        log.debug("elicitation answer not validated: the requested schema is unusable (%s)", type(exc).__name__)
        return None
    if error is None:
        return None
    path = "/".join(str(p) for p in error.absolute_path)
    # (not error.message: it quotes the user's value, and this goes to the log)
    why = error.message if error.validator == "required" else \
        f"fails {error.validator!r} ({error.validator_value!r:.80})"
    return f"{'at /' + path + ': ' if path else ''}{why}"[:300]


def _formats(jsonschema: ModuleType) -> Any:
    """A jsonschema ``FormatChecker`` for the formats elicitation forms may name (stdlib only:
    jsonschema's own ``uri`` and ``date-time`` checks need optional packages). ``datetime``
    loads with it, at the first elicitation answer checked."""
    clock = load("datetime")
    date, datetime = clock.date, clock.datetime
    checker = jsonschema.FormatChecker(formats=())
    uri = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")
    day = re.compile(r"^\d{4}-\d{2}-\d{2}$")
    stamp = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")

    def is_email(value: Any) -> bool:
        return not isinstance(value, str) or (value.count("@") == 1 and all(value.split("@")) and " " not in value)

    def is_uri(value: Any) -> bool:
        return not isinstance(value, str) or bool(uri.match(value))

    def is_date(value: Any) -> bool:
        if not isinstance(value, str):
            return True
        try:
            return bool(day.match(value)) and date.fromisoformat(value) is not None
        except ValueError:
            return False

    def is_date_time(value: Any) -> bool:
        if not isinstance(value, str):
            return True
        if not stamp.match(value):
            return False
        try:
            datetime.fromisoformat(value[:19].replace("t", "T").replace(" ", "T"))
            return True
        except ValueError:
            return False

    for name, check in (("email", is_email), ("uri", is_uri), ("date", is_date), ("date-time", is_date_time)):
        checker.checks(name)(check)
    return checker


_PRIMITIVES = (str, int, float, bool)


def _checked_answer(request: "ElicitationRequest", result: Raw) -> Raw:
    """An elicitation answer as the spec allows it: a valid action; for a form, only the schema's
    fields, each a string, number, boolean or list of strings, and valid against the requested
    schema (required, enum, minimum/maximum, minLength/maxLength, format: ``_schema_errors``); for
    a URL, no content at all. ``ProtocolError`` otherwise: the handler's bug, answered -32603."""
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise ProtocolError("the elicitation handler returned no valid 'action'")
    content = result.get("content")
    if action != "accept" or request.mode == "url" or content is None:
        return {k: v for k, v in result.items() if k != "content"}
    if not isinstance(content, dict):
        raise ProtocolError("the elicitation handler returned 'content' that is not a dict")
    properties = (request.requested_schema or {}).get("properties")
    fields = properties if isinstance(properties, dict) else {}
    unknown = sorted(k for k in content if k not in fields)
    if unknown:
        log.warning("elicitation answer: dropped fields the form did not ask for: %s", ", ".join(unknown)[:200])
    kept = {k: v for k, v in content.items() if k in fields}
    for key, value in kept.items():
        if not (isinstance(value, _PRIMITIVES) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise ProtocolError(f"elicitation answer field {key!r} is not a string, number, boolean or list of strings")
    problem = _schema_errors(kept, request.requested_schema or {})
    if problem is not None:  # the handler's bug: logged, and the server is answered -32603
        raise ProtocolError(f"the elicitation handler's answer does not match the requested schema: {problem}")
    return dict(result, content=kept)


def _checked(value: Any, kind: type, who: str) -> Raw:
    """A handler's return value as a wire dict (typed results are converted, dicts passed through)."""
    if isinstance(value, kind):
        return value.to_wire()  # type: ignore[attr-defined]
    if isinstance(value, dict):
        return value
    raise TypeError(f"{who} must return {kind.__name__} or a dict, not {type(value).__name__}")
