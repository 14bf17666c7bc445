"""The ``Transport`` contract the engine drives: bytes in, JSON-RPC messages out.

A transport moves whole JSON-RPC messages (dicts) and knows nothing of futures or MCP methods.
Its contract is six methods (``start``, ``send``, ``receive``, ``close``, ``negotiated``,
``cancel_request``) and one value, ``info`` (``TransportInfo``): where the server is, what names
it across connections, who requests act as, which secrets it sends, what it can carry. What it
needs to know about a message (its routing headers, whether repeating it is harmless, whether it
opens the session) comes with the message. Making another transport to the same server (a
relaunch, a reopen, the legacy fallback) is the business of whoever builds transports (the
client's ``_client.transport_builder``), from the recipe in ``info.remake``. The only id a
transport looks at is that of a request it could not deliver (``DeliveryFailed``). Foreign
exceptions (``OSError``, ``requests``' errors) are mapped to ``mcpclient.errors`` inside the
transport and nowhere else.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, AbstractSet, Any, Callable, Dict, FrozenSet, List, Literal, Optional, Protocol, Union

from .._util.lazy import load
from ..errors import ProtocolError, UnsendableMessage

if TYPE_CHECKING:  # (the types load at connect(): a transport starts without them)
    from ..types._json import JSONObject, JSONValue

__all__ = ["CLOSE_BUDGET", "DEFAULT_MAX_MESSAGE_SIZE", "LATE_ANSWER", "DeliveryFailed", "Endpoint", "PendingExchange", "Remake", "RemakeKind",
           "SessionRenewed", "Transport", "TransportInfo", "decode_frame", "encode_frame"]

#: Seconds ``close()`` may take in all when no deadline is given.
CLOSE_BUDGET = 5.0
#: The largest message (bytes) a transport reads by default: a stdio line, an HTTP body, an SSE
#: event's data. A bigger one is never buffered whole (``max_message_size`` on each transport).
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024


class DeliveryFailed:
    """Returned by ``receive()`` in place of a message: the request ``request_id`` could not be
    delivered or answered (an HTTP error status, a refused connection); its call fails with
    ``error``. Stream transports never produce it: their failures end the whole connection."""

    __slots__ = ("request_id", "error")

    def __init__(self, request_id: Any, error: BaseException) -> None:
        self.request_id = request_id
        self.error = error

    def __repr__(self) -> str:
        return f"DeliveryFailed(request_id={self.request_id!r}, error={self.error!r})"


class SessionRenewed:
    """Returned by ``receive()`` in place of a message: the transport replaced a server session
    that had expired with a new one (Streamable HTTP), so what lived in the old one (resource
    subscriptions) must be set up again. Once per renewal, after the new session is in use."""

    __slots__ = ("session_id",)

    def __init__(self, session_id: Optional[str]) -> None:
        self.session_id = session_id

    def __repr__(self) -> str:
        return "SessionRenewed()"


if TYPE_CHECKING:
    #: What ``Transport.send`` takes: one JSON-RPC message, or a batch of them.
    Message = Union[JSONObject, List[JSONObject]]
    #: What ``Transport.receive`` returns: a message (a JSON object, or a batch), a request that
    #: could not be delivered (``DeliveryFailed``), a renewed session (``SessionRenewed``), or
    #: ``None`` at the end of the stream.
    Received = Union[JSONValue, DeliveryFailed, SessionRenewed]
else:
    def __getattr__(name: str) -> Any:
        """``Message`` and ``Received`` (above), made when first imported (a transport of one's
        own): they name the JSON types, whose recursive alias compiles its forward reference,
        the first ``compile()`` of a process, about 3 ms, which a stdio server's start would
        wait for (benchmarks/cold.py, one-shot)."""
        if name not in ("Message", "Received"):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        json_types = load("mcpclient.types._json")  # the JSON aliases: see above
        globals().update(Message=Union[json_types.JSONObject, List[json_types.JSONObject]],
                         Received=Union[json_types.JSONValue, DeliveryFailed, SessionRenewed])
        return globals()[name]


class Endpoint:
    """Where a transport's server is, as traces and logs may show it (never a secret).

    Args:
        kind: ``"pipe"`` (a child process over stdio), ``"tcp"`` (a network server) or
            ``"memory"`` (in this process); ``None``: not said.
        protocol: the application protocol over it (``"http"``), if any.
        host / port: the network server's host and port.
    """

    __slots__ = ("kind", "protocol", "host", "port")

    def __init__(self, kind: Optional[str] = None, protocol: Optional[str] = None, host: Optional[str] = None,
                 port: Optional[int] = None) -> None:
        self.kind, self.protocol, self.host, self.port = kind, protocol, host, port

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Endpoint) and (self.kind, self.protocol, self.host, self.port) == \
            (other.kind, other.protocol, other.host, other.port)

    def __hash__(self) -> int:
        return hash((self.kind, self.protocol, self.host, self.port))

    @classmethod
    def of_url(cls, url: str) -> "Endpoint":
        """TCP to an http(s) URL's host and port (the scheme's default port if none), speaking
        HTTP; never the URL's userinfo, path or query. (``urllib.parse`` loads with the first
        URL: a stdio-only program never needs it.)"""
        try:
            parts = load("urllib.parse").urlsplit(url)
            host = parts.hostname
        except ValueError:  # (an invalid IPv6 host)
            return cls("tcp", "http")
        try:
            port = parts.port
        except ValueError:  # (out of range: the request will say so)
            port = None
        return cls("tcp", "http", host or None, port or (443 if parts.scheme.lower() == "https" else 80))

    @property
    def address(self) -> Optional[str]:
        """``host:port`` (``[::1]:8080`` for an IPv6 host), or None without a host."""
        if not self.host:
            return None
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}" if self.port is not None else host

    def __repr__(self) -> str:
        where = f" {self.address}" if self.host else ""
        return f"<Endpoint {self.kind}{'/' + self.protocol if self.protocol else ''}{where}>"


#: Seconds the answer to a request its caller gave up on is still waited for and read (it may
#: name what the request made, a task to cancel: ``Session.call(on_late=)``).
LATE_ANSWER = 5.0

#: How a transport is made again (``Remake``).
RemakeKind = Literal["relaunch", "reopen", "fallback"]

_INFO_FIELDS = ("name", "endpoint", "identity", "credentials", "secrets", "session_id", "remote", "handshake_only",
                "sends_headers", "instance", "remake", "stray_output")


class TransportInfo:
    """What a transport tells the client, its tracer and a recording about itself: one frozen
    value, replaced by the transport when something in it changes (a new session, a renewed
    token sent).

    Args:
        name: a short label for thread and logger names (e.g. the server command's basename).
        endpoint: where the server is, as traces show it (``server.address``, ``network.transport``).
        identity: what names this server across connections (a URL, a command with its
            environment), under which the client remembers which era it speaks; ``None``: nothing
            to remember.
        credentials: a fingerprint of the credentials requests carry (never the secret itself),
            so that results cached as private to one identity are never served to another.
        secrets: the secret values the transport sends on its own, that the client never sees:
            a fixed bearer token, secret-looking headers, the credentials in its URL, tokens in
            its command line or environment, and every token an ``AuthProvider`` gave it since.
            A recording scrubs them wherever a server echoes one back; nothing logs them.
        session_id: the server session in use (Streamable HTTP's ``Mcp-Session-Id``), or None.
        remote: a network server that answers every request (HTTP): silence is an outage, never
            the sign of an old server, and its ``server/discover`` answer holds for other
            connections too.
        handshake_only: only the handshake era runs over it (the 2024-11-05 HTTP+SSE
            transport): no 2026 probe.
        sends_headers: per-request headers reach the server (HTTP): the client passes routing
            headers to ``send``.
        instance: the connection number in thread names (``mcpclient-<instance>-<role>``); 0:
            not assigned. A transport made again (``remake``) keeps it.
        remake: the recipe the client's transport builder makes another transport from
            (``Remake``); None: this one is used once.
        stray_output: the first thing the server wrote where only messages belong that was not
            one (a stdio server's banner on stdout), cut to 200 characters, its secrets masked: a
            handshake that fails quotes it. None: nothing stray so far.
    """

    name: str
    endpoint: Endpoint
    identity: Optional[str]
    credentials: Optional[str]
    secrets: FrozenSet[str]
    session_id: Optional[str]
    remote: bool
    handshake_only: bool
    sends_headers: bool
    instance: int
    remake: Optional[Remake]
    stray_output: Optional[str]

    __slots__ = _INFO_FIELDS

    def __init__(self, name: str = "server", endpoint: Optional[Endpoint] = None, identity: Optional[str] = None,
                 credentials: Optional[str] = None, secrets: AbstractSet[str] = frozenset(),
                 session_id: Optional[str] = None, *, remote: bool = False, handshake_only: bool = False,
                 sends_headers: bool = False, instance: int = 0, remake: Optional[Remake] = None,
                 stray_output: Optional[str] = None) -> None:
        for field, value in zip(_INFO_FIELDS, (name, endpoint if endpoint is not None else Endpoint(), identity,
                                               credentials, frozenset(secrets), session_id, remote, handshake_only,
                                               sends_headers, instance, remake, stray_output)):
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"TransportInfo is frozen: use replace({name}=...)")

    def replace(self, **changes: Any) -> "TransportInfo":
        """A copy with ``changes``."""
        values = {field: getattr(self, field) for field in _INFO_FIELDS}
        values.update(changes)
        return TransportInfo(**values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TransportInfo) and all(
            getattr(self, f) == getattr(other, f) for f in _INFO_FIELDS if f != "remake")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:  # (never the secrets, nor the credentials' fingerprint)
        return (f"TransportInfo(name={self.name!r}, endpoint={self.endpoint!r}, session_id={self.session_id!r}, "
                f"remote={self.remote}, handshake_only={self.handshake_only}, sends_headers={self.sends_headers})")


class PendingExchange(Protocol):
    """A request a transport exchanges on a thread (HTTP: the POST and its answer), as
    ``Transport.send`` returns it: not begun yet. It runs once, on the first thread to get to
    it: ``run()`` by a thread that waits for the answer, or the transport's own thread once
    ``post()`` handed it over. The request's deadline, a cancel and ``close()`` end it on
    whichever thread runs it."""

    def run(self) -> Optional["JSONObject"]:
        """Run it on this thread, if no other began it: the reply it read (for the engine to
        dispatch here), or None (begun elsewhere, or an answer that comes through ``receive()``)."""

    def post(self) -> None:
        """Hand it to the transport's own thread (nobody will run it here)."""


class Transport(ABC):
    """One connection to one MCP server.

    ``start()`` connects; ``send()`` may be called from many threads at once; ``receive()`` is
    called by the session's single reader thread only and blocks until a message arrives; it
    returns ``None`` at a clean end of stream and raises ``TransportError`` when the connection
    broke. ``close(deadline)`` is idempotent, callable from any thread, returns by ``deadline``
    (monotonic seconds) and makes a blocked ``receive()`` return. ``info`` says what the
    transport is (``TransportInfo``).
    """

    @property
    @abstractmethod
    def info(self) -> TransportInfo:
        """What this transport is: its name, endpoint, identity, credentials, secrets, session."""

    @abstractmethod
    def start(self) -> None:
        """Connect (spawn the process, open the stream). Raises ``ConnectError``.

        Idempotent: the client may start a transport early, so that what takes longest (a stdio
        server booting) runs while the client gets ready, and its session starts it again; a
        later call returns once the first is done, or raises again what the first raised. A
        closed transport refuses to start (``ConnectionClosed``)."""

    @abstractmethod
    def send(self, message: Message, *, deadline: Optional[float] = None, headers: Optional[Dict[str, str]] = None,
             idempotent: Optional[bool] = False, setup: bool = False) -> Optional[PendingExchange]:
        """Send one message (a dict, or a list for a batch). Raises ``TransportError``.

        Returns None (sent), or, for a request a transport exchanges on a thread (HTTP: the
        POST and its answer), its ``PendingExchange``, not begun: the engine runs it on the thread that
        will wait for the answer (one hand-off less), or ``post()``s it. Everything else the
        transport receives comes through ``receive()``.

        Args:
            deadline: monotonic time by which the peer must have taken the message (``None``:
                until it does or the transport closes); past it ``SendTimeout`` is raised if
                nothing was sent, and a message cut short leaves the connection broken.
            headers: per-request headers for transports that send them (``info.sends_headers``).
            idempotent: may the request be sent again after a failure that may have reached the
                server? ``True``: yes; ``False``: never; ``None``: only if the transport's retry
                policy says so for requests with side effects (``Retry(retry_tool_calls=True)``).
            setup: the message opens the session (the handshake request and the notification
                that completes it): a transport with sessions takes the session id only from the
                answer to such a request, and replays these messages to renew an expired session.
        """

    @abstractmethod
    def receive(self) -> Optional[Received]:
        """Block until the next message; ``None`` at end of stream. In place of a message: a
        ``DeliveryFailed`` (a request that could not be delivered) or a ``SessionRenewed``."""

    @abstractmethod
    def close(self, deadline: Optional[float] = None) -> None:
        """Release everything by ``deadline`` (monotonic; default ``CLOSE_BUDGET`` from now).
        Idempotent; a second caller returns once the first is done or the deadline passed."""

    def negotiated(self, protocol_version: str, stateless: bool) -> None:
        """Called once the client agreed on ``protocol_version`` (before the handshake's closing
        notification). ``stateless``: the 2026 era (no session, no server stream, a request is
        cancelled by closing its response). HTTP transports add the version header from here on
        and, in the handshake era, open their server-to-client stream; others need not care."""

    def cancel_request(self, request_id: Union[int, str]) -> bool:
        """Cancel an in-flight request the transport's own way; True if that replaces the
        ``notifications/cancelled`` message (2026-07-28 HTTP closes the request's stream)."""
        return False


#: ``remake(how)``: a fresh, unstarted transport to the same server with the same settings and
#: connection number, made ``how``: ``"relaunch"`` (the server exited on the ``server/discover``
#: probe), ``"reopen"`` (a new connection after this one was lost, or in a forked child, where
#: this one is the parent's) or ``"fallback"`` (the legacy transport to try after the first
#: handshake was refused); ``None`` when it cannot be made that way.
Remake = Callable[[RemakeKind], Optional[Transport]]


def _make_encode() -> Callable[[Any], str]:
    """``JSONEncoder(...).encode``, compact, refusing NaN/Infinity (not JSON: better refused here
    than by the server's parser). With the C accelerator, the encoder that ``encode`` makes anew
    for every message is made once: without the circular check it keeps no state between
    messages (a cycle ends in ``RecursionError``, as deep nesting does)."""
    encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False, check_circular=False)
    make = json.encoder.c_make_encoder  # type: ignore[attr-defined]
    if make is None:
        return encoder.encode
    c_encode = make(None, encoder.default, json.encoder.encode_basestring, None, ":", ",", False, False, False)
    join = "".join
    return lambda message: join(c_encode(message, 0))


# Built once (hot path).
_encode = _make_encode()
_decoder = json.JSONDecoder()
_decode, _scan = _decoder.decode, _decoder.scan_once  # type: ignore[attr-defined]
_skip_space = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]


def encode_frame(message: Any) -> bytes:
    """Compact UTF-8 JSON without a newline (JSON escapes newlines inside strings); what JSON
    cannot carry (``NaN``, a lone surrogate, a ``set``...) is an ``UnsendableMessage``."""
    try:
        return _encode(message).encode("utf-8")
    except (ValueError, TypeError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        raise UnsendableMessage(f"message cannot be sent as JSON: {type(exc).__name__}: {exc}") from None


def decode_frame(data: Union[bytes, str]) -> Union[JSONObject, List[JSONValue]]:
    """Parse one frame (UTF-8 bytes, or text: an SSE event's data) into a message: a JSON object,
    or a non-empty array (a batch). Raise ``ProtocolError`` for anything else (the caller logs
    and skips it): not JSON, nested deeper than the decoder can go, or a value that is not a
    message (``null``, a number, a string, ``[]``). ``None`` is never returned: it means end of
    stream to the reader."""
    try:
        text = data if type(data) is str else data.decode("utf-8")  # type: ignore[union-attr]
        try:  # (JSONDecoder.decode's own scan: a frame starts with its value)
            message, end = _scan(text, 0)
        except StopIteration:  # leading whitespace, or not JSON: the full decode says which
            message = _decode(text)
        else:
            if end != len(text) and _skip_space(text, end).end() != len(text):
                message = _decode(text)  # (more after the value: its error says so)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        raise ProtocolError(f"frame is not valid JSON: {str(exc)[:200]}") from None
    except RecursionError:  # nested deeper than the interpreter's recursion limit allows
        raise ProtocolError("frame is nested too deep to decode") from None
    except MemoryError:  # (the frame is dropped with it; what the decoder held is freed)
        raise ProtocolError("frame is too large to decode") from None
    if type(message) is dict or (type(message) is list and message):
        return message
    raise ProtocolError(f"frame is not a JSON-RPC message: {_KINDS.get(type(message), 'an empty array')}")


_KINDS = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string"}
