"""Every exception mcpclient raises.

``MCPError`` is the root. Argument mistakes stay ``TypeError``/``ValueError``. Errors this side
detects on its own (timeouts, closed clients, bad schemas) also inherit the builtin they resemble,
so generic ``except TimeoutError`` clauses keep working. Errors the *server* sent are ``RPCError``
subclasses chosen by JSON-RPC code (``RPCError.from_wire``). No message ever contains a secret.

Two more ``MCPError`` subclasses live with the features that raise them:
``mcpclient.testing.CassetteMismatch`` (a replayed client sent a message its cassette does not
have; in ``mcpclient.testing.cassettes``) and ``mcpclient.extensions.skills.SkillVerificationError``.
"""
# This module imports nothing of mcpclient: ``URLElicitationRequired`` parses its elicitations with
# the decoder ``mcpclient.types`` installs when it loads (it always has by the time a server's error
# is built: the engine imports it).
from __future__ import annotations

import re
from concurrent.futures import CancelledError
from typing import Any, Callable, ClassVar, Container, Dict, FrozenSet, Iterable, List, Optional, Type, Union

__all__ = [
    "AuthError",
    "CapabilityError",
    "ClientClosedError",
    "ConnectError",
    "ConnectionClosed",
    "ForkedClientError",
    "HTTPError",
    "HeaderMismatch",
    "InputRoundsExceeded",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPError",
    "MethodNotFound",
    "MissingClientCapability",
    "MissingExtraError",
    "ParseError",
    "ProcessExited",
    "ProtocolError",
    "RPCError",
    "ReaderThreadError",
    "RequestCancelled",
    "RequestTimeout",
    "ResourceNotFound",
    "SchemaValidationError",
    "SendTimeout",
    "SessionExpired",
    "SubscriptionLost",
    "ToolChangedError",
    "ToolError",
    "TransportError",
    "URLElicitationRequired",
    "UnknownToolError",
    "UnsupportedProtocolVersion",
]


class MCPError(Exception):
    """Root of everything mcpclient raises (except ``TypeError``/``ValueError`` for bad arguments).

    Catch it to handle every mcpclient failure at once; whether retrying is safe depends on the
    subclass (the errors page of the documentation lists each).

    Every subclass pickles (``multiprocessing`` pools and Celery's pickle serializer send a
    worker's exception to the parent): the copy has the same class, message and attributes.
    """

    #: The task the failure is about (the Tasks extension: a task that failed, was cancelled or
    #: outlived the call's timeout), else None.
    task_id: Optional[str] = None
    #: May be transient: the same request tried again after a pause may succeed (timeouts, transport
    #: errors, HTTP 408/425/429/5xx). Not whether repeating it is safe (the class docstrings say).
    retryable: ClassVar[bool] = False

    def __reduce__(self) -> Any:
        """Rebuild from the message and the attributes, not by calling ``__init__`` again (the
        subclasses' constructors take other arguments than ``args`` holds)."""
        return _rebuild, (type(self), self.args, self.__dict__)


def _rebuild(cls: Type[BaseException], args: Any, state: Dict[str, Any]) -> BaseException:
    """An ``MCPError`` from ``__reduce__``'s parts (``BaseException.__new__`` runs no ``__init__``)."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


# --- errors the server sent ---------------------------------------------------------------------

class RPCError(MCPError):
    """The server answered a request with a JSON-RPC error object.

    ``code``, ``message`` and ``data`` are the server's; ``method`` is the request that failed.
    Retrying is safe only if the request itself is (the server decided, not the transport).
    """

    #: code -> subclass; filled by ``__init_subclass__`` for classes that set ``code_value``.
    _by_code: ClassVar[Dict[int, Type["RPCError"]]] = {}
    code_value: ClassVar[Optional[int]] = None

    #: the HTTP status the error came with, when an HTTP server sent it with a 4xx/5xx status
    http_status: Optional[int] = None

    def __init__(self, code: int, message: str, data: object = None, method: Optional[str] = None):
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        where = f" to {method}" if method else ""
        super().__init__(f"server error {code}{where}: {message}")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.code_value is not None:
            RPCError._by_code[cls.code_value] = cls

    @classmethod
    def from_wire(cls, error: object, method: Optional[str] = None) -> "RPCError":
        """Build the most specific subclass for a wire ``error`` object (tolerating bad shapes)."""
        if not isinstance(error, dict):
            return RPCError(-32603, f"malformed error object: {error!r:.200}", None, method)
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            code = -32603
        message = error.get("message")
        if not isinstance(message, str):
            message = repr(message)
        klass = cls._by_code.get(code, RPCError)
        data = error.get("data")
        if code == _DRAFT_MISSING_CAPABILITY and isinstance(data, dict) and "requiredCapabilities" in data:
            klass = MissingClientCapability  # the code drafts of 2026-07-28 gave it (servers still send it)
        return klass(code, message, data, method)


class ParseError(RPCError):
    """-32700: the server could not parse what we sent.

    Retrying the same message fails the same way: not a transient fault (a bug on one side).
    """
    code_value = -32700


class InvalidRequest(RPCError):
    """-32600: the server judged our message not a valid request.

    Retrying the same message fails the same way: not a transient fault.
    """
    code_value = -32600


class MethodNotFound(RPCError):
    """-32601: the server does not implement the method.

    Retrying is pointless: the server does not implement the method (check
    ``client.server.capabilities``).
    """
    code_value = -32601


class InvalidParams(RPCError):
    """-32602: bad arguments, an unknown tool or prompt, or (2026) an unknown resource.

    Retrying with the same arguments fails again: fix the arguments (or the name).
    """
    code_value = -32602


class InternalError(RPCError):
    """-32603: the server failed while handling the request.

    Retrying may succeed if the fault was transient, but is safe only if the request is idempotent:
    the server may have acted before it failed.
    """
    code_value = -32603


class ResourceNotFound(RPCError):
    """-32002: the resource does not exist (handshake-era servers).

    Retrying fails again unless the resource has appeared meanwhile.
    """
    code_value = -32002


class HeaderMismatch(RPCError):
    """-32020 (2026-07-28): the HTTP routing headers did not match the request body.

    Retrying the same request fails again (a proxy rewriting headers, or a bug): not transient.
    """
    code_value = -32020


_DRAFT_MISSING_CAPABILITY = -32003


class MissingClientCapability(RPCError):
    """-32021 (2026-07-28; drafts' -32003 with ``requiredCapabilities``, as some servers send
    it): the request needs a client capability this client did not declare;
    ``required_capabilities`` is what the server wants.

    Retrying fails again: make a ``Client`` that declares the capability (e.g. with a handler);
    ``missing_extensions`` names the extensions it wants (declare them with
    ``Client(extensions={...})``; extensions are opt-in, so this is never retried for you).
    """
    code_value = -32021

    def __init__(self, code: int, message: str, data: object = None, method: Optional[str] = None):
        super().__init__(code, message, data, method)
        self.explain(())

    def explain(self, declared: Container[str]) -> None:
        """Say in the message what to do about each missing extension: declare it, or (those in
        ``declared``, which this client did declare: the client passes them) that the server did
        not take the declaration."""
        missing = self.missing_extensions[:5]
        if not missing:
            return
        head = f"server error {self.code}{f' to {self.method}' if self.method else ''}: {self.message}"
        hints = []
        undeclared = [m for m in missing if m not in declared]
        if undeclared:
            wanted = ", ".join(f"{m!r:.80}: {{}}" for m in undeclared)
            hints.append(f"the server needs the extension{'s' if len(undeclared) > 1 else ''} "
                         f"{', '.join(repr(m)[:80] for m in undeclared)}: declare it: Client(extensions={{{wanted}}})")
        kept = [m for m in missing if m in declared]
        if kept:
            hints.append(f"the server needs {', '.join(repr(m)[:80] for m in kept)}, which this client declared, but "
                         f"the server did not take the declaration (its answer to the handshake does not list it)")
        self.args = (f"{head} ({'; '.join(hints)})",)

    @property
    def required_capabilities(self) -> Dict[str, object]:
        """The ``requiredCapabilities`` object of the error's ``data`` (``{}`` if absent or malformed)."""
        found = self.data.get("requiredCapabilities") if isinstance(self.data, dict) else None
        return found if isinstance(found, dict) else {}

    @property
    def missing_extensions(self) -> List[str]:
        """The extension ids in ``requiredCapabilities.extensions`` (``[]`` if none)."""
        found = self.required_capabilities.get("extensions")
        return [key for key in found if isinstance(key, str)] if isinstance(found, dict) else []


class UnsupportedProtocolVersion(RPCError):
    """-32022 (2026-07-28): the server does not speak the requested revision; ``supported``
    lists the ones it does.

    Retrying with the same revision fails again: use ``protocol="auto"`` or one of ``supported``.
    """
    code_value = -32022

    @property
    def supported(self) -> List[str]:
        """The revisions the server lists in ``data.supported`` (``[]`` if absent or malformed)."""
        found = self.data.get("supported") if isinstance(self.data, dict) else None
        return [v for v in found if isinstance(v, str)] if isinstance(found, list) else []


class URLElicitationRequired(RPCError):
    """-32042 (2025-11-25): the server needs the user to complete URL elicitations first.

    ``elicitations`` lists them (``ElicitationRequest`` objects, mode ``"url"``): show each URL,
    and once the user is done (``Client.wait_for_elicitation`` can wait for the server's
    ``notifications/elicitation/complete``), repeat the original request.

    Retrying before the user has completed them fails the same way; retrying after is what the
    server expects.
    """
    code_value = -32042
    #: ``(wire dict) -> ElicitationRequest``: installed by ``mcpclient.types``, which defines that
    #: class (this module imports nothing of the package).
    decode: ClassVar[Optional[Callable[[Dict[str, object]], object]]] = None

    @property
    def elicitations(self) -> List[object]:
        """The URL elicitations in ``data.elicitations``, as ``ElicitationRequest`` objects (mode
        ``"url"``); malformed entries are skipped. Raises nothing."""
        decode = type(self).decode
        found = self.data.get("elicitations") if isinstance(self.data, dict) else None
        requests = []
        for raw in found if isinstance(found, list) and decode is not None else []:
            try:
                requests.append(decode(dict(raw, mode="url")))
            except (MCPError, TypeError, ValueError):
                continue  # a malformed entry is skipped, the rest stay usable
        return requests


# --- errors this side detects -------------------------------------------------------------------

class CapabilityError(MCPError):
    """The server did not declare the capability a call needs; nothing was sent.

    ``capability`` is the dotted name, e.g. ``"resources.subscribe"``.

    Retrying against the same server fails the same way (nothing was sent, so it is harmless).
    """

    def __init__(self, capability: str, method: Optional[str] = None):
        self.capability = capability
        self.method = method
        what = f"{method} needs" if method else "this call needs"
        super().__init__(f"{what} the server capability {capability!r}, which the server did not declare")


class TransportError(MCPError):
    """The connection below JSON-RPC failed (process, pipe, socket or HTTP).

    Whether the server acted on a pending request is unknown: retry only idempotent requests, on a
    new connection (a new ``Client``, or ``Client(reconnect=Reconnect())``).
    """

    retryable = True


class ConnectError(TransportError):
    """Starting the server or completing the handshake failed. Safe to retry with a new client."""


class ConnectionClosed(TransportError):
    """The connection ended while a call was pending or before it was sent.

    A pending call may or may not have been acted on: retrying is safe only for idempotent requests,
    and needs a new connection (a new ``Client``, or a ``Reconnect`` policy).
    """


class ProcessExited(ConnectionClosed):
    """The stdio server process ended. ``returncode`` and the last lines of its stderr are kept.

    Retrying needs a new client (the process is gone) and is safe only for idempotent requests; the
    stderr tail usually says why the server died.
    """

    def __init__(self, returncode: Optional[int], stderr_tail: str = ""):
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        msg = f"server process exited with code {returncode}"
        if stderr_tail:
            msg += f"\nits last stderr lines:\n{stderr_tail}"
        super().__init__(msg)


class SendTimeout(TransportError, TimeoutError):
    """The server did not take our message in time (it stopped reading). A call whose message
    could not be sent raises ``RequestTimeout`` with this as its cause.

    Retrying on the same connection is unlikely to help (the server is not reading); part of the
    message may have been written, so retry only idempotent requests, on a new connection.
    """


class SessionExpired(ConnectionClosed):
    """The HTTP server no longer knows our session (404), and the request could not be repeated
    in a new one (it is not safe to repeat, or ``reconnect=False``, or re-initializing failed).

    The client already repeated the request in a new session where that was safe; retrying yourself
    is safe only for idempotent requests (a new session has none of the old one's state).
    """


class SubscriptionLost(ConnectionClosed):
    """A ``listen()`` subscription's stream broke without the server ending it.

    Retrying (a new ``listen()``) is safe: listening changes nothing on the server. Events in the
    gap are lost, so re-list what you watch.
    """


class HTTPError(TransportError):
    """The HTTP server answered with a status that is not a valid MCP reply.

    A 5xx or 429 may be transient (``retryable``): retrying is safe for idempotent requests
    (``HTTPTransport(retry=Retry(...))`` does that for you); another 4xx fails again. ``headers``
    (lower-cased names; ``Set-Cookie`` and others that may carry a secret left out), ``body`` (200
    characters) and ``retry_after`` (seconds, or None) are what a retry policy needs.
    """

    #: RFC 9110's timeout, too early, too many requests, and 5xx.
    RETRYABLE_STATUSES: ClassVar[FrozenSet[int]] = frozenset({408, 425, 429, 500, 502, 503, 504})

    def __init__(self, status: int, message: str = "", *, headers: Optional[Dict[str, str]] = None,
                 body: str = "", retry_after: Optional[float] = None):
        self.status = status
        self.headers: Dict[str, str] = dict(headers or {})
        self.body = body[:200]
        self.retry_after = retry_after
        super().__init__(f"HTTP {status}" + (f": {message}" if message else ""))

    @property
    def retryable(self) -> bool:  # type: ignore[override]
        return self.status in self.RETRYABLE_STATUSES


class ProtocolError(MCPError):
    """Malformed traffic, or protocol-version negotiation failed.

    Retrying usually fails the same way (the server sent something malformed): not transient.
    """


class RequestTimeout(MCPError, TimeoutError):
    """No answer within the timeout; the request was cancelled on the server (best effort).

    Retrying is safe only if the request is idempotent: the server may have acted on it.
    """

    retryable = True

    def __init__(self, message: str, *, method: Optional[str] = None, request_id: Union[int, str, None] = None):
        self.method = method
        self.request_id = request_id
        super().__init__(message)


class RequestCancelled(MCPError, CancelledError):
    """The call was cancelled on this side (``Future.cancel()``) before an answer arrived.

    It is also a ``concurrent.futures.CancelledError``, what cancelled futures raise.

    You cancelled it: retrying is safe only if the request is idempotent (the server may have
    started on it).
    """


class InputRoundsExceeded(ProtocolError):
    """The server kept answering ``input_required`` beyond ``Limits(input_rounds=)``.

    Retrying fails the same way unless ``Limits(input_rounds=)`` is raised.
    """


class ClientClosedError(MCPError, RuntimeError):
    """The client is closed (or closing); make a new ``Client``.

    Retrying on this client always fails; retrying with a new ``Client`` is safe.
    """


class ForkedClientError(ClientClosedError):
    """The client was made in another process and inherited through ``fork()`` (gunicorn
    ``--preload``, Celery prefork, ``multiprocessing``): its connection belongs to the parent.
    Make the client after the fork, or pass ``reconnect=Reconnect()`` to open a new connection
    in each process on first use.

    Retrying in this process fails until it has its own client (make one, or use
    ``reconnect=Reconnect()``).
    """


class ReaderThreadError(MCPError, RuntimeError):
    """A blocking call was made on the connection's reader thread, which would deadlock.

    Done-callbacks of futures run there: hand the work to another thread instead.

    A programming error: retrying on the reader thread fails again; move the blocking call to
    another thread.
    """


class ToolError(MCPError):
    """A tool result had ``isError`` set, and the caller asked for an exception.

    ``result`` is the full ``ToolResult``; its text is the message.

    The tool ran and reported failure: retrying is safe only if the tool is idempotent
    (``Tool.annotations`` may say so with ``idempotentHint``).
    """

    def __init__(self, result: object, tool: Optional[str] = None, text: str = ""):
        """``result``: the ``ToolResult``; ``text``: its text, quoted in the message."""
        self.result = result
        self.tool = tool
        text = text or "(no text)"
        super().__init__(f"tool {tool!r} failed: {text}" if tool else f"tool failed: {text}")


class SchemaValidationError(MCPError, ValueError):
    """Structured tool output did not match the tool's ``outputSchema`` (or the schema is unusable).

    The tool ran (and may have acted); retrying returns the same shape, so it is rarely useful.
    """

    def __init__(self, message: str, *, tool: Optional[str] = None, path: str = ""):
        self.tool = tool
        self.path = path
        super().__init__(message)


class ToolChangedError(MCPError):
    """A tool's definition differs from the one pinned (``ToolPins``) and the group was told to
    refuse such calls (``on_pin_change="refuse"``). ``changes`` are the ``ToolChange`` values.

    Nothing was sent; retrying fails until the change is reviewed and accepted
    (``ServerGroup.accept_tool_changes()``).
    """

    def __init__(self, server: str, tool: str, changes: Iterable[object] = ()):
        self.server = server
        self.tool = tool
        self.changes = list(changes)
        super().__init__(f"tool {tool!r} of server {server!r} changed since it was pinned; "
                         "review the change and accept it (ServerGroup.accept_tool_changes()) before calling it")


class UnknownToolError(MCPError, KeyError):
    """No tool of that name in the group (``ServerGroup.resolve``). ``suggestions`` are close names.

    Nothing was sent; retrying with the same name fails again (try one of ``suggestions``).
    """

    def __init__(self, name: str, suggestions: Iterable[str] = (), detail: str = ""):
        self.name = name
        self.suggestions = list(suggestions)
        hint = f"; did you mean {', '.join(repr(s) for s in self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"no tool {name!r} in the group{detail}{hint}")

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return str(self.args[0]) if self.args else ""


class AuthError(MCPError):
    """Authorization failed or is required (HTTP 401/403).

    ``status`` is the HTTP status and ``www_authenticate`` the server's challenge header, if any
    (it names the scheme, realm, scopes and resource metadata; it carries no secret of ours).

    Retrying with the same credentials fails again (``OAuth`` already re-ran the grant on a 401
    where it could); retry after re-authorizing or fixing the token.
    """

    def __init__(self, message: str, *, status: Optional[int] = None, www_authenticate: Optional[str] = None):
        self.status = status
        self.www_authenticate = www_authenticate
        super().__init__(message)

    @property
    def challenge(self) -> Dict[str, str]:
        """The ``WWW-Authenticate`` challenge parsed: ``{"scheme": "Bearer", "realm": …,
        "error": …, "scope": …, "resource_metadata": …}`` (parameter names lower-cased)."""
        return parse_challenge(self.www_authenticate or "")


class MissingExtraError(MCPError, ImportError):
    """A feature needs an optional extra that is not installed: DPoP and ``private_key_jwt``
    need ``mcpclient[oauth]`` (the ``cryptography`` package), ``RedisTokenStore`` needs
    ``mcpclient[redis]``, ``Client(tracing=True)`` needs ``mcpclient[otel]``. The message names the ``pip install`` command;
    ``extra`` is the extra's name. An ``ImportError`` too, so ``except ImportError`` still works.

    Retrying fails until the extra is installed.
    """

    def __init__(self, message: str, *, extra: str, name: Optional[str] = None):
        self.extra = extra
        super().__init__(message)
        self.msg, self.name = message, name  # what an ImportError carries


def parse_challenge(header: str) -> Dict[str, str]:
    """Parse one RFC 9110 challenge, ``Scheme k=v, k="quoted, value"``, into a dict."""
    scheme, _, rest = header.strip().partition(" ")
    params: Dict[str, str] = {"scheme": scheme} if scheme else {}
    for key, quoted, bare in re.findall(r'([\w.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))', rest):
        params[key.lower()] = re.sub(r"\\(.)", r"\1", quoted) if quoted else bare
    return params


# --- bounds: what a server may not make the client hold or do ----------------------------------------

class MessageTooLarge(ProtocolError):
    """A message from the server was over the transport's ``max_message_size``: it was not read
    (never buffered whole), and the call it answers fails with this; the connection lives on.

    Retrying gets the same oversized answer: raise ``max_message_size`` or ask for less.
    """

    def __init__(self, message: str, *, limit: Optional[int] = None):
        self.limit = limit
        super().__init__(message)


class TooManyPages(ProtocolError):
    """A listing went on past the client's ``Limits(pages=)`` (a server that hands out a new
    cursor for ever); the items gathered so far are dropped.

    Retrying starts the listing over and likely fails the same way: raise ``Limits(pages=)`` if
    the server is honest.
    """

    def __init__(self, message: str, *, method: Optional[str] = None, pages: Optional[int] = None):
        self.method = method
        self.pages = pages
        super().__init__(message)


class UnsendableMessage(MCPError, ValueError):
    """A message cannot be encoded as JSON (``NaN`` or infinity, a lone surrogate, an object JSON
    has no form for): nothing was sent. Also a ``ValueError``, which ``json`` would have raised.

    Retrying with the same arguments fails again: fix the value.
    """


__all__ += ["MessageTooLarge", "TooManyPages", "UnsendableMessage"]
