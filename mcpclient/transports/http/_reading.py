"""Reading what an HTTP server answers, for both HTTP transports: SSE parsing, streamed and
whole bodies (within a deadline and a size limit), aborting a stream, and mapping failed requests
(``requests``' or urllib3's exceptions) and HTTP statuses to mcpclient errors.

Event streams are parsed here (``parse_sse``) rather than with sseclient-py: resuming needs the
``id`` and ``retry`` of events that carry no data (a server's priming event), which sseclient-py
drops before the caller sees them. Nothing here imports ``requests`` at module level.
"""
from __future__ import annotations

import json
import logging
import re
import socket
import time
from html import unescape
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Protocol

from ...errors import (
    AuthError, ConnectError, ConnectionClosed, HTTPError, MessageTooLarge,
)
from ..._util.secrets import is_secret_key, mapping_secrets, masked
from ...policies.retry import parse_retry_after
from ..base import DEFAULT_MAX_MESSAGE_SIZE, decode_frame



class Response(Protocol):
    """An answer as the transports read it: a ``requests.Response``, or a
    ``_posters.FastResponse`` (the fast path's, over urllib3's response)."""

    status_code: int
    headers: Any  # case-insensitive ``get``
    raw: Any  # the urllib3 response: ``read1``, ``stream``, the connection (``body_socket``)

    @property
    def content(self) -> bytes: ...

    @property
    def text(self) -> str: ...

    def close(self) -> None: ...


#: ``send(headers, read_timeout)``: one HTTP request, its failures already mapped (see ``request_error``).
Send = Callable[[Dict[str, str], Optional[float]], Response]

JSON = "application/json"
SSE = "text/event-stream"
_BODY_IN_ERRORS = 200  # characters of an error body quoted in HTTPError
_MAX_ERROR_BODY = 1 << 20  # bytes of an error answer read (parsed for a JSON-RPC error, quoted)
_MAX_EVENT_ID = 1024  # characters of an SSE ``id`` kept (it goes back as Last-Event-ID); a longer one is ignored
_MAX_RETRY_DIGITS = 10  # an SSE ``retry`` with more digits is ignored (int() of a huge one is costly)
_READ_SIZE = 65536  # bytes asked of one read of a body
_SECRET_HEADERS = {"set-cookie", "set-cookie2", "proxy-authenticate"}  # (besides is_secret_key's)

log = logging.getLogger("mcpclient.transport.http")



class SSEEvent:
    """One server-sent event. ``data`` is ``None`` when the event had no data lines; ``oversized``:
    its data (or a line of it) went over the parser's limit, and was dropped unread."""

    __slots__ = ("event", "data", "id", "retry", "oversized")

    def __init__(self) -> None:
        self.event = "message"
        self.data: Optional[str] = None
        self.id: Optional[str] = None
        self.retry: Optional[int] = None
        self.oversized = False


def parse_sse(chunks: Iterable[bytes], limit: int = DEFAULT_MAX_MESSAGE_SIZE) -> Iterator[SSEEvent]:
    """Events from an SSE byte stream (WHATWG rules), in linear time however the bytes are chunked.

    Events without data are yielded too (their ``id``/``retry`` matter); comments are skipped;
    an event cut off by the end of the stream is dropped, as the standard says. Never holds more
    than about ``limit`` bytes of one event: an event whose data (or any line) is longer is
    yielded as soon as that shows, with ``oversized`` set and no data (so the caller can say so),
    and the rest of it is dropped as it comes.
    """
    chunks = _lf_endings(chunks)
    partial: List[bytes] = []
    pending = 0  # bytes of the line being assembled (in partial)
    kept = 0  # bytes of the event's data so far
    dropping = False  # inside a line over the limit: its bytes go, up to its newline
    event = SSEEvent()
    data: List[str] = []
    seen_field = False
    for chunk in chunks:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not dropping and start < len(chunk):
                    pending += len(chunk) - start
                    if kept + pending > limit:  # a line that cannot fit: drop it as it comes
                        first = partial[0][:1] if partial else chunk[start:start + 1]
                        partial, pending, dropping = [], 0, True
                        if first != b":" and not event.oversized:  # (a comment's loss is nobody's)
                            event.oversized, data = True, []
                            yield event  # at once: the caller need not wait for the rest
                    else:
                        partial.append(chunk[start:])
                break
            piece = chunk[start:newline]
            start = newline + 1
            if dropping:  # the end of the line over the limit
                dropping = False
                continue
            if partial:
                partial.append(piece)
                piece, partial, pending = b"".join(partial), [], 0
            line = piece
            if not line:  # a blank line dispatches the event
                if seen_field and not event.oversized:
                    event.data = "\n".join(data) if data else None
                    yield event
                event, data, seen_field, kept = SSEEvent(), [], False, 0
                continue
            if line.startswith(b":"):
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            seen_field = True
            if name == b"data":
                kept += len(value) + 1
                if event.oversized:
                    continue
                if kept > limit:
                    event.oversized, data = True, []
                    yield event
                    continue
                data.append(value.decode("utf-8", "replace"))
                continue
            text = value.decode("utf-8", "replace")
            if name == b"event":
                event.event = text or "message"
            elif name == b"id" and "\0" not in text and len(text) <= _MAX_EVENT_ID:
                event.id = text
            elif name == b"retry" and text.isdigit() and len(text) <= _MAX_RETRY_DIGITS:
                event.retry = int(text)


def _lf_endings(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The stream with each of SSE's three line endings (CRLF, a lone CR, LF) made one LF,
    whatever the chunking (a CR that ends one chunk and the LF that opens the next are one)."""
    after_cr = False
    for chunk in chunks:
        if not chunk:
            continue
        if after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        after_cr = chunk[-1:] == b"\r"
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        yield chunk


def event_message(event: SSEEvent, name: str) -> Any:
    """The JSON-RPC message a ``message`` event carries, or None (no data, another event type,
    not JSON: logged, never the end of the stream)."""
    if not event.data or event.event != "message":  # no data, or "" (a priming event)
        return None
    try:
        return decode_frame(event.data)
    except Exception as exc:  # ProtocolError (not a message, too deep); never end the stream for it
        log.warning("%s sent an SSE message event that is not a JSON-RPC message; skipped: %s", name, str(exc)[:200])
        return None


def private(response: Response, keep: Optional[bytes] = None, complete: bool = True, kept: bool = False) -> Any:
    """The one place mcpclient reaches into private attributes of ``requests`` and of the standard
    library's ``http.client`` under urllib3, each for want of a public way:

    * with ``keep``: hand a body read by hand (within a deadline and a size limit, which
      ``requests`` cannot do) to the response as its ``.content``: ``requests.Response._content``,
      and with ``complete`` ``_content_consumed``, so that ``requests`` may give the connection
      back to the pool (a ``FastResponse`` has the slot too). Returns None. With ``kept``: the
      body kept so (or read by ``requests``), or None.
    * without: the socket of an answer whose connection urllib3 let go (``Connection: close``):
      ``raw._fp.fp.raw._sock`` (http.client's buffered socket file), the only handle that can
      time out or shut down a read blocked on it; None if there is none.

    ``tests/transports/http/test_library_internals.py`` fails if either library changes them.
    """
    if keep is not None:
        response._content = keep  # type: ignore[attr-defined]
        if complete and isinstance(response, _requests_response()):
            response._content_consumed = True  # type: ignore[attr-defined]
        return None
    if kept:
        content = getattr(response, "_content", None)  # (False: requests has read nothing yet)
        return content if type(content) is bytes else None
    fp = getattr(response.raw, "_fp", None)  # (http.client's response; None once read and released)
    return getattr(getattr(getattr(fp, "fp", None), "raw", None), "_sock", None)


def _requests_response() -> type:
    import requests  # deferred: import cost (requests), loaded already by any answer

    return requests.Response


def body_socket(response: Response) -> Any:
    """The socket a streamed body is read from: urllib3 keeps it on ``raw.connection``, unless
    the answer said ``Connection: close``; then only the body's file holds it (``private``)."""
    connection = response.raw.connection
    sock = connection.sock if connection is not None else None
    return sock if sock is not None else private(response)


def abort(response: Response) -> None:
    """Make a read blocked on ``response`` (in another thread) return at once.

    ``Response.close()`` would wait for that read (it takes the same buffer lock), so the socket
    under it is shut down instead; the reading thread then closes the response itself. Once the
    body was read to its end (its connection back in the pool) there is no socket to reach.
    """
    sock = body_socket(response)
    if sock is not None:
        shutdown(sock)


def shutdown(sock: Any) -> None:
    """Shut ``sock`` down both ways: a read blocked on it in another thread returns at once."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError):  # already shut down or closed (or a TLS-in-TLS wrapper without it)
        pass


def chunks(response: Response) -> Iterator[bytes]:
    """The body as it arrives: ``read1`` returns what is there (urllib3 2.3+, which setup.cfg requires)."""
    read1 = response.raw.read1
    return iter(lambda: read1(65536, decode_content=True), b"")


def timed_chunks(response: Response, deadline: float) -> Iterator[bytes]:
    """``chunks``, ending by ``deadline`` (monotonic) with ``ConnectionClosed`` however the server
    paces them (each read waits at most until the deadline): for a stream nobody's call ends."""
    raw = response.raw
    read1 = raw.read1
    sock = body_socket(response)
    pooled = raw.connection is not None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ConnectionClosed("the stream was still open at its deadline")
        if sock is not None and (not pooled or raw.connection is not None):  # (as in read_body)
            try:
                sock.settimeout(remaining)
            except OSError:
                pass
        chunk = read1(_READ_SIZE, decode_content=True)
        if not chunk:
            return
        yield chunk


def read_body(response: Response, name: str, limit: int, deadline: Optional[float]) -> bytes:
    """The whole body of ``response``, read by ``deadline`` (monotonic; the whole body, not each
    read: a server trickling it byte by byte cannot stretch it) and never more than ``limit``
    bytes of it (``MessageTooLarge``, checked on ``Content-Length`` first, then as it arrives).
    Past the deadline ``ConnectionClosed`` is raised (the session reports the call's timeout).
    The response is left for the caller to close (unread bytes: its connection is dropped)."""
    length = response.headers.get("Content-Length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise MessageTooLarge(f"{name} answered with a {length}-byte body, over max_message_size={limit}", limit=limit)
    raw = response.raw
    read1 = raw.read1
    sock = body_socket(response) if deadline is not None else None
    pooled = raw.connection is not None
    parts: List[bytes] = []
    size = 0
    while True:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ConnectionClosed(f"{name} did not finish its answer in time")
            # (never once urllib3 gave the connection back to the pool: another request may own it)
            if sock is not None and (not pooled or raw.connection is not None):
                try:
                    sock.settimeout(remaining)
                except OSError:  # closed as the body ended (Connection: close): the read returns b""
                    pass
        chunk = read1(_READ_SIZE, decode_content=True)
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise MessageTooLarge(f"{name} sent a body over max_message_size={limit} bytes", limit=limit)
        parts.append(chunk)
    body = parts[0] if len(parts) == 1 else b"".join(parts)
    private(response, keep=body)
    return body


def error_body(response: Response, deadline: Optional[float] = None) -> bytes:
    """At most ``_MAX_ERROR_BODY`` bytes of an error answer's body (read once, then kept): an
    error page is quoted and parsed, never read whole. ``deadline`` (monotonic): what came by
    then is all there is (a server trickling its error page cannot stretch the call)."""
    content = private(response, kept=True)
    if content is not None:
        return content[:_MAX_ERROR_BODY]
    raw = response.raw
    sock = body_socket(response) if deadline is not None else None
    pooled = raw.connection is not None
    parts: List[bytes] = []
    size = 0
    complete = False
    try:
        while size < _MAX_ERROR_BODY:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                if sock is not None and (not pooled or raw.connection is not None):  # (as in read_body)
                    try:
                        sock.settimeout(remaining)
                    except OSError:
                        pass
            chunk = raw.read1(_MAX_ERROR_BODY - size, decode_content=True)
            if not chunk:
                complete = True
                break
            parts.append(chunk)
            size += len(chunk)
    except Exception:  # the connection broke mid-body (or timed out): what came is all there is
        complete = False
    body = b"".join(parts)[:_MAX_ERROR_BODY]
    private(response, keep=body, complete=complete)
    return body


def media_type(response: Response) -> str:
    value: str = response.headers.get("Content-Type", "")
    return value.split(";", 1)[0].strip().lower()


def rpc_error_body(response: Response, rid: Any, deadline: Optional[float] = None) -> Optional[Dict[str, Any]]:
    """The JSON-RPC error a non-2xx answer carries in a JSON body (2026 servers answer 400 with
    ``-32022``, 404 with ``-32601``...), as the response to ``rid``; None if it carries none
    (or not by ``deadline``: ``error_body``)."""
    if rid is None or response.status_code in (401, 403) or media_type(response) != JSON:
        return None
    try:
        body = json.loads(error_body(response, deadline))
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return None
    return {"jsonrpc": "2.0", "id": rid, "error": error, "httpStatus": response.status_code}


#: What an AuthError's message tells a person to do.
_AUTH_ADVICE = {
    401: "it wants credentials, or refused the ones given: pass Client(url, auth=\"<token>\") for a bearer "
         "token, auth=OAuth(...) to log in, or headers={\"Authorization\": ...}",
    403: "the credentials given are not allowed this (a token without the scope it needs?)",
}


def status_error(name: str, response: Response, deadline: Optional[float] = None) -> Exception:
    """The error for a status that is not a valid MCP answer (the token is never part of it);
    the body quoted is what came by ``deadline`` (``error_body``)."""
    status = response.status_code
    if status in (401, 403):
        return AuthError(f"{name} answered HTTP {status}: {_AUTH_ADVICE[status]}", status=status,
                         www_authenticate=response.headers.get("WWW-Authenticate"))
    headers, retry_after = answer_headers(response)
    if 300 <= status < 400:
        return HTTPError(status, f"redirect to {response.headers.get('Location', '?')} refused "
                                 "(follow_redirects=False)", headers=headers)
    try:
        page = error_body(response, deadline).decode(_charset(response) or "utf-8", "replace")
        # (a page that quotes the request, as some proxies' do, gets its credentials back: masked)
        sent = getattr(response, "sent", None) or getattr(getattr(response, "request", None), "headers", None)
        if sent:
            page = masked(page, mapping_secrets(sent))
        if media_type(response) in ("text/html", "application/xhtml+xml"):
            text = html_summary(page)
        else:
            text = " ".join(page[:_BODY_IN_ERRORS].split())
    except Exception:
        page = text = ""
    return HTTPError(status, text, headers=headers, body=page[:_BODY_IN_ERRORS], retry_after=retry_after)


def answer_headers(response: Response) -> "tuple[Dict[str, str], Optional[float]]":
    """An error answer's headers as ``HTTPError`` keeps them (names lower-cased, the ones that
    may carry a secret left out), and the seconds its ``Retry-After`` asks to wait."""
    kept = {str(name).lower(): str(value) for name, value in response.headers.items()
            if not is_secret_key(name) and str(name).lower() not in _SECRET_HEADERS}
    wait = kept.get("retry-after")
    return kept, (parse_retry_after(wait) if wait is not None else None)


def _charset(response: Response) -> Optional[str]:
    from requests.utils import get_encoding_from_headers  # deferred: import cost (requests), loaded already

    return get_encoding_from_headers(response.headers)  # type: ignore[arg-type]  # (only .get is used)


def html_summary(html: str, limit: int = 120) -> str:
    """An HTML error page (a proxy's ``502 Bad Gateway``) in a few words: its ``<title>``, else
    its first text; whitespace folded, cut to ``limit`` characters."""
    found = re.search(r"<title[^>]*>(.*?)</title\s*>", html, re.I | re.S)
    if found and found.group(1).strip():
        text = found.group(1)
    else:
        body = re.sub(r"<(script|style|head)\b.*?</\1\s*>|<!--.*?-->", " ", html, flags=re.I | re.S)
        text = re.sub(r"<[^>]*>", " ", body)
    text = " ".join(unescape(text).split())
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def request_error(name: str, exc: BaseException, connect_timeout: float) -> Exception:
    """Map a failed HTTP request — ``requests``' exceptions, urllib3's own (the fast path posts
    to urllib3 directly) or anything else (``http.client`` refusing a header value) — to
    ``ConnectError`` when nothing reached the server (so the request may be sent again), or
    ``ConnectionClosed`` when it may have arrived. Messages name exception types only, never
    their text: it may quote a header value (a token)."""
    import requests  # deferred: import cost (requests); stdio-only programs never load it
    from urllib3 import exceptions as u3

    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return ConnectError(f"could not connect to {name} in {connect_timeout:g} s")
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return ConnectionClosed(f"{name} did not answer in time")
    cause = exc
    if isinstance(exc, requests.exceptions.RequestException) and exc.args:
        # requests wraps what urllib3 raised (its MaxRetryError's reason says what happened)
        first = exc.args[0]
        reason = first.reason if isinstance(first, u3.MaxRetryError) else None
        if isinstance(reason, BaseException) or isinstance(first, BaseException):
            cause = reason if isinstance(reason, BaseException) else first
    if isinstance(cause, u3.NewConnectionError):  # refused, unreachable, no such host
        return ConnectError(f"could not connect to {name}: {_os_said(cause) or type(cause).__name__}")
    if isinstance(cause, u3.ConnectTimeoutError):
        return ConnectError(f"could not connect to {name} in {connect_timeout:g} s")
    if isinstance(cause, u3.ReadTimeoutError):
        return ConnectionClosed(f"{name} did not answer in time")
    if isinstance(cause, u3.ClosedPoolError):  # the session was closed: the transport is closing
        return ConnectionClosed("the transport is closed")
    if isinstance(cause, u3.HTTPError) or isinstance(exc, requests.exceptions.ConnectionError):
        # ProtocolError (reset, hung up), SSLError...: it may have arrived; name what is under it
        inner = cause.args[1] if len(cause.args) > 1 and isinstance(cause.args[1], BaseException) else cause
        said = _os_said(inner)
        return ConnectionClosed(f"the connection to {name} broke: {type(inner).__name__}" + (f" ({said})" if said else ""))
    return ConnectionClosed(f"HTTP request to {name} failed: {type(cause).__name__}")


def _os_said(error: Optional[BaseException]) -> Optional[str]:
    """What the operating system said under ``error`` ("Connection refused", "Name or service
    not known"): the ``strerror`` of the first ``OSError`` down its chain of causes. Never the
    wrapping exceptions' own text, which may quote a request."""
    for _ in range(8):
        if error is None:
            return None
        if isinstance(error, OSError) and isinstance(error.strerror, str) and error.strerror:
            return error.strerror
        error = error.__cause__ or error.__context__
    return None
