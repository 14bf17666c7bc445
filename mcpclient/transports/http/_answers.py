"""Reading the answer to a Streamable HTTP POST into the session's inbox (``Answers``).

An answer is one JSON body, or an SSE stream of messages ending with the response. A JSON
body is read whole by the request's deadline; an event stream answering a request is read until
the session gives up on it (``cancel_request`` ends it), one answering a notification until the
send's deadline. A stream that ends before its answer is resumed from its last event id on the
GET stream (2025-11-25 polling), or, in the 2026 era, reported as ``StreamBroken`` for the
transport to send the request again.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Iterator, Optional, Tuple

from ..._util.ids import names_request
from ...errors import ConnectionClosed, MessageTooLarge, ProtocolError
from ..base import decode_frame
from ._inflight import Inbox, Request
from ._reading import (
    JSON, SSE, Response, SSEEvent, body_socket, chunks, event_message, media_type, parse_sse, read_body, timed_chunks,
)

__all__ = ["Answers", "StreamBroken", "answers"]

log = logging.getLogger("mcpclient.transport.http")

_RETRY_MAX = 30.0  # a server's retry: delay is honoured up to this many seconds
_RETRY_MIN = 0.25  # ... and from this many (a retry: 0 would have the client reconnect in a tight loop)

#: ``resume(request, last_id, retry)``: read the rest of ``request``'s answer from the GET stream.
Resume = Callable[[Request, str, Optional[float]], None]


class StreamBroken(ConnectionClosed):
    """2026-07-28: a request's answer stream ended before its answer (the transport decides
    whether to send it again)."""


def answers(message: Any, rid: Any) -> bool:
    """Whether a JSON body (a message or a batch) holds the response to request ``rid``."""
    for item in message if type(message) is list else (message,):
        if type(item) is dict and names_request(item.get("id"), rid) and ("result" in item or "error" in item):
            return True
    return False


class Answers:
    """How one transport reads the answers to its POSTs: into ``inbox``, for the session's reader.

    Args:
        inbox: where messages go.
        closing: set when the transport closes (a stream cut by it is not resumed).
        name: the server, as errors name it.
        max_message_size: the largest JSON body or event data read, in bytes.
        stream_idle_timeout: the idle bound of a stream read without a deadline (None: none).
    """

    def __init__(self, inbox: Inbox, closing: threading.Event, *, name: str, max_message_size: int,
                 stream_idle_timeout: Optional[float]) -> None:
        self._inbox = inbox
        self._closing = closing
        self._name = name
        self._max = max_message_size
        self._idle = stream_idle_timeout
        #: 2026-07-28: no GET stream to resume a broken answer stream on (``StreamBroken`` instead).
        self.stateless = False
        #: How a broken answer stream is resumed (the transport's ``GetStream.resume``).
        self.resume: Optional[Resume] = None

    def json_answer(self, response: Response, request: Request) -> Optional[Any]:
        """A JSON answer read on the thread that waits for it: the reply, if it is the request's
        (anything else goes to the reader, as ``deliver`` sends it)."""
        body = read_body(response, self._name, self._max, request.deadline)
        message = decode_frame(body)
        if type(message) is dict and answers(message, request.id):
            return message
        self._inbox.put(message)  # (a batch goes to the reader, which takes its messages apart)
        if answers(message, request.id):
            return None
        raise ProtocolError(f"{self._name} answered request {request.id!r} with a JSON body that is not its response")

    def _bound_idle(self, response: Response) -> None:
        """An answer stream read without a deadline (a 2026 listen, a call with ``timeout=None``)
        gets the idle bound: servers keep such streams alive with SSE comments, so silence for
        ``stream_idle_timeout`` means the connection is dead (the stream then counts as broken)."""
        sock = body_socket(response)
        if self._idle is not None and sock is not None and sock.gettimeout() is None:
            sock.settimeout(self._idle)

    def deliver(self, response: Response, request: Request, wire: Any = None) -> None:
        """Queue the messages of a 200 answer to ``request``: one JSON body, or every event of an
        SSE stream (resumed until the answer came, if the server lets it be resumed; 2026: raises
        ``StreamBroken`` instead). ``wire``: the id the request was re-issued under. A JSON body
        must be read whole by the request's deadline (``read_body``); an event stream answering a
        request is read until the session gives up on it (``cancel_request`` ends it), one
        answering a notification until the send's deadline."""
        rid = request.id
        kind = media_type(response)
        if kind == JSON:
            until = request.due if request.cancelled else request.deadline
            body = read_body(response, self._name, self._max, until)
            if not body and rid is None:
                return  # an empty answer to a notification
            message = decode_frame(body)
            if wire is not None and type(message) is dict and names_request(message.get("id"), wire):
                message["id"] = rid
            self._inbox.put(message)
            # A body without the answer (null, [1], another id) fails the call now, not at its timeout.
            if rid is not None and not answers(message, rid) and (wire is None or not answers(message, wire)):
                raise ProtocolError(f"{self._name} answered request {rid!r} with a JSON body that is not its response")
            return
        if kind != SSE:
            raise ProtocolError(f"{self._name} answered with Content-Type {kind or 'none'!r}, not JSON or SSE")
        self._bound_idle(response)
        answered, last_id, retry = self.read_events(response, request, None, None, wire)
        if answered or rid is None or self._closing.is_set() or request.cancelled or request.ended is not None:
            return
        if self.stateless or self.resume is None:  # no GET, no resumption: the caller may send the request again
            raise StreamBroken(f"{self._name} ended the answer stream before the answer")
        if last_id is None:
            raise ConnectionClosed(f"{self._name} ended the stream before the answer, with no event id "
                                   "to resume from")
        self.resume(request, last_id, retry)

    def read_events(self, response: Response, request: Optional[Request], last_id: Optional[str],
                    retry: Optional[float], wire: Any = None) -> Tuple[bool, Optional[str], Optional[float]]:
        """Queue one stream's messages; return (the answer to ``request`` came: nothing more to
        read; the last event id; the retry delay). ``request`` None: the server's own stream, read
        until it ends; a notification's: until its deadline; a request's: until it is answered or
        ended (once the session gave up on it, within ``LATE_ANSWER``). ``wire``: as in
        ``deliver``."""
        if request is None:
            rid, until = None, None
        else:
            rid = request.id
            until = request.deadline if rid is None else (request.due if request.cancelled else None)
        answered = False
        expected = rid if wire is None else wire
        for event in self.events(response, until):
            last_id = event.id if event.id is not None else last_id
            retry = min(max(event.retry / 1000, _RETRY_MIN), _RETRY_MAX) if event.retry is not None else retry
            if event.oversized:
                error = MessageTooLarge(f"{self._name} sent an event over max_message_size="
                                        f"{self._max} bytes", limit=self._max)
                if rid is not None:  # it may have been the answer: the call fails with it
                    raise error
                log.warning("%s; skipped", error)
                continue
            message = event_message(event, self._name)
            if message is None:
                continue
            if rid is not None and isinstance(message, dict) and names_request(message.get("id"), expected) \
                    and ("result" in message or "error" in message):
                answered = True
                if wire is not None:
                    message["id"] = rid  # the answer to the re-issued request is the original's
            self._inbox.put(message)
        return answered, last_id, retry

    def events(self, response: Response, deadline: Optional[float] = None) -> Iterator[SSEEvent]:
        """The events of an SSE response (until ``deadline`` at most); a broken connection just
        ends them (the caller resumes)."""
        try:
            source = chunks(response) if deadline is None else timed_chunks(response, deadline)
            yield from parse_sse(source, self._max)
        except Exception as exc:  # the stream broke (or close() aborted it, or its deadline came)
            log.debug("event stream from %s ended: %s", self._name, type(exc).__name__)
