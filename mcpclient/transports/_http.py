"""Plumbing shared by the two HTTP transports (``http.py`` and ``sse.py``): SSE parsing, reading
and aborting streamed bodies, auth headers, and mapping ``requests`` failures and HTTP statuses
to mcpclient errors. Nothing here imports ``requests`` at module level.

Event streams are parsed here (``parse_sse``) rather than with sseclient-py: resuming needs the
``id`` and ``retry`` of events that carry no data (a server's priming event), which sseclient-py
drops before the caller sees them.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional, Union

from ..errors import AuthError, ConnectError, ConnectionClosed, HTTPError

if TYPE_CHECKING:
    import requests

TokenProvider = Callable[[], str]
Auth = Union[str, TokenProvider, None]

JSON = "application/json"
SSE = "text/event-stream"
_BODY_IN_ERRORS = 200  # characters of an error body quoted in HTTPError
_MAX_ERROR_BODY = 1 << 20  # bytes of an error answer parsed for a JSON-RPC error


class SSEEvent:
    """One server-sent event. ``data`` is ``None`` when the event had no data lines."""

    __slots__ = ("event", "data", "id", "retry")

    def __init__(self) -> None:
        self.event = "message"
        self.data: Optional[str] = None
        self.id: Optional[str] = None
        self.retry: Optional[int] = None


def parse_sse(chunks: Iterable[bytes]) -> Iterator[SSEEvent]:
    """Events from an SSE byte stream (WHATWG rules), in linear time however the bytes are chunked.

    Events without data are yielded too (their ``id``/``retry`` matter); comments are skipped;
    an event cut off by the end of the stream is dropped, as the standard says.
    """
    partial: List[bytes] = []
    event = SSEEvent()
    data: List[str] = []
    seen_field = False
    for chunk in chunks:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                partial.append(chunk[start:])
                break
            piece = chunk[start:newline]
            start = newline + 1
            if partial:
                partial.append(piece)
                piece, partial = b"".join(partial), []
            line = piece[:-1] if piece.endswith(b"\r") else piece
            if not line:  # a blank line dispatches the event
                if seen_field:
                    event.data = "\n".join(data) if data else None
                    yield event
                event, data, seen_field = SSEEvent(), [], False
                continue
            if line.startswith(b":"):
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            text = value.decode("utf-8", "replace")
            seen_field = True
            if name == b"data":
                data.append(text)
            elif name == b"event":
                event.event = text or "message"
            elif name == b"id" and "\0" not in text:
                event.id = text
            elif name == b"retry" and text.isdigit():
                event.retry = int(text)


def body_socket(response: "requests.Response") -> Any:
    """The socket a streamed body is read from: urllib3 keeps it on ``raw.connection``, unless
    the answer said ``Connection: close``; then only the body's file (http.client's) holds it."""
    sock = getattr(getattr(response.raw, "connection", None), "sock", None)
    if sock is None:
        sock = getattr(getattr(getattr(getattr(response.raw, "_fp", None), "fp", None), "raw", None), "_sock", None)
    return sock


def abort(response: "requests.Response") -> None:
    """Make a read blocked on ``response`` (in another thread) return at once.

    ``Response.close()`` would wait for that read (it takes the same buffer lock), so the socket
    under it is shut down instead; the reading thread then closes the response itself.
    """
    import socket

    sock = body_socket(response)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # already shut down or closed: nothing is blocked on it
            pass


def chunks(response: "requests.Response") -> Iterator[bytes]:
    """The body as it arrives. ``iter_content(chunk_size=None)`` yields as it arrives only for a
    chunked body (a stream sent without chunking would be held back to its end); ``read1``
    returns what is there, either way (urllib3 2.3+)."""
    read1 = getattr(response.raw, "read1", None)
    if read1 is None:
        return response.iter_content(chunk_size=None)
    return iter(lambda: read1(65536, decode_content=True), b"")


def media_type(response: "requests.Response") -> str:
    return response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()


def auth_headers(headers: Dict[str, str], auth: Auth, auth_header: str, method: str = "POST",
                 url: str = "") -> Dict[str, str]:
    """A copy of ``headers`` with the token (called for, if ``auth`` is a provider) added:
    ``Bearer <token>`` in ``Authorization``, the bare token in any other header. An OAuth
    provider (``headers_for``) gives its own headers: Bearer, or DPoP with a proof for
    ``method`` and ``url``."""
    headers = dict(headers)
    if hasattr(auth, "headers_for"):
        headers.update(auth.headers_for(method, url))  # type: ignore[union-attr]
    elif auth is not None:
        token = auth() if callable(auth) else auth
        if token is not None:  # a provider with no token yet (OAuth before its first flow)
            headers[auth_header] = f"Bearer {token}" if auth_header.lower() == "authorization" else token
    return headers


def challenge_resolved(auth: Auth, url: str, response: "requests.Response", sent_token: Any) -> bool:
    """A 401/403 that the ``auth`` provider (OAuth) resolved: True means send the request again."""
    if response.status_code not in (401, 403) or not hasattr(auth, "on_challenge"):
        return False
    return bool(auth.on_challenge(  # type: ignore[union-attr]
        url, response.status_code, response.headers.get("WWW-Authenticate"), sent_token,
        response.headers.get("DPoP-Nonce")))


def current_token(auth: Auth) -> Any:
    """The token a request is about to carry (so a 401 can say which one was refused)."""
    return auth() if callable(auth) else auth


def rpc_error_body(response: "requests.Response", rid: Any) -> Optional[Dict[str, Any]]:
    """The JSON-RPC error a non-2xx answer carries in a JSON body (2026 servers answer 400 with
    ``-32022``, 404 with ``-32601``...), as the response to ``rid``; None if it carries none."""
    if rid is None or response.status_code in (401, 403) or media_type(response) != JSON:
        return None
    try:
        body = json.loads(response.content[:_MAX_ERROR_BODY])
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return None
    return {"jsonrpc": "2.0", "id": rid, "error": error, "httpStatus": response.status_code}


def status_error(name: str, response: "requests.Response") -> Exception:
    """The error for a status that is not a valid MCP answer (the token is never part of it)."""
    status = response.status_code
    if status in (401, 403):
        return AuthError(f"{name} answered HTTP {status}", status=status,
                         www_authenticate=response.headers.get("WWW-Authenticate"))
    if 300 <= status < 400:
        return HTTPError(status, f"redirect to {response.headers.get('Location', '?')} refused "
                                 "(follow_redirects=False)")
    try:
        text = response.text[:_BODY_IN_ERRORS].strip()
    except Exception:
        text = ""
    return HTTPError(status, text)


def request_error(name: str, exc: BaseException, connect_timeout: float) -> Exception:
    """Map a ``requests`` exception: ``ConnectError`` when nothing reached the server (so the
    request may be sent again), ``ConnectionClosed`` when it may have arrived."""
    import requests
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    cause = type(reason).__name__ if reason is not None else type(exc).__name__
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return ConnectError(f"could not connect to {name} in {connect_timeout:g} s")
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return ConnectionClosed(f"{name} did not answer in time")
    if isinstance(exc, requests.exceptions.ConnectionError):
        if isinstance(reason, (NewConnectionError, ConnectTimeoutError)):
            return ConnectError(f"could not connect to {name}: {cause}")
        return ConnectionClosed(f"the connection to {name} broke: {cause}")
    return ConnectionClosed(f"HTTP request to {name} failed: {cause}")
