"""The MCP session over Streamable HTTP (``SessionLife``): its id, taken from the answer to a
``setup`` request only and sent with every later request (with the negotiated protocol version);
renewed when the server forgets it (a 404 to a request carrying it) by replaying the recorded
setup messages; and ended with a DELETE at close.

A renewal runs once however many threads meet the 404 (``SingleFlight``, keyed by the expired
id), with no lock held; the old id stays in use until the new session is initialized, then the
transport hears of it: ``moved(new_id)`` at once (its GET stream follows the new session), and
``renewed(old_id, new_id)`` once, on one of the threads that met the expiry (the client's
callbacks). The POSTs of a renewal and the DELETE are requests in flight like any other
(``_inflight``): ``close()`` and their deadline end them.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple

from ..._util.threads import FlightTimeout, SingleFlight
from ...errors import SessionExpired
from ..base import encode_frame
from ._exchange import SESSION_HEADER, VERSION_HEADER, Credentials
from ._inflight import InFlight, Request
from ._reading import Response, read_body

__all__ = ["SessionLife"]

log = logging.getLogger("mcpclient.transport.http")

_DELETE_TIMEOUT = 2.0  # the most the session's DELETE may take of close()'s budget
_RENEW_ID = "mcpclient-renew-session"  # the id of a replayed setup request (its answer is read here)

#: ``post(body, headers, read_timeout)``: one POST to the endpoint, no policy applied.
Post = Callable[[bytes, Dict[str, str], Optional[float]], Response]
#: ``delete(headers, budget)``: one DELETE of the endpoint, connect and read within ``budget`` s.
Delete = Callable[[Dict[str, str], float], Response]


class SessionLife:
    """The session id's life: recorded setup, the headers that carry it, renewal, DELETE.

    Args:
        credentials: who the session's requests act as.
        inflight: where its own requests (renewal, DELETE) are registered.
        name: the server, as errors name it.
        reconnect: renew an expired session (else ``SessionExpired``).
        max_message_size: the largest answer read.
        post, delete: how to send its requests.
        moved: called with the new id as soon as a renewal published it.
        renewed: called with ``(old_id, new_id)`` once per renewal, on a thread that met the
            expiry, with no lock held.
    """

    def __init__(self, credentials: Credentials, inflight: InFlight, *, name: str, reconnect: bool,
                 max_message_size: int, post: Post, delete: Delete, moved: Callable[[str], None],
                 renewed: Callable[[str, str], None]) -> None:
        self._credentials = credentials
        self._inflight = inflight
        self._name = name
        self._max_message_size = max_message_size
        self._post = post
        self._delete = delete
        self._moved = moved
        self._renewed = renewed
        self.reconnect = reconnect
        #: The server's session id, from the answer to the setup request (None: no session).
        self.id: Optional[str] = None
        #: The negotiated protocol version, sent with every request once known.
        self.version: Optional[str] = None
        #: A setup request was answered 200 (the server speaks Streamable HTTP).
        self.opened = False
        #: The first setup POST was refused as an HTTP+SSE server refuses it (400/404/405, no
        #: JSON-RPC body): the transport's ``remake("fallback")`` offers the SSE transport.
        self.refused = False
        self._setup: Tuple[bytes, ...] = ()  # the setup request (re-numbered) and notification, for renewal
        self._renewals = SingleFlight()
        self._change: Optional[Tuple[str, str]] = None  # (old, new): reported by one waiting thread
        self._lock = threading.Lock()  # guards _change only

    def record(self, message: Any, body: bytes, rid: Any) -> None:
        """Keep a session-opening message (``body``) to replay it when the session expires."""
        if rid is not None:  # the setup request starts a new record (answered by us, not the reader)
            self._setup = (encode_frame(dict(message, id=_RENEW_ID)),)
        else:
            self._setup = self._setup + (body,)

    def took(self, response: Response) -> None:
        """A setup request was answered 200: the session id it names is ours from now on (only a
        setup answer may set it: other answers echo it, and a late one from an expired session
        must not bring that session back)."""
        self.opened = True
        session_id = response.headers.get(SESSION_HEADER)
        if session_id:
            self.id = session_id

    def stamp(self, headers: Dict[str, str], session_id: Optional[str]) -> None:
        if session_id is not None:
            headers[SESSION_HEADER] = session_id
        if self.version is not None:
            headers[VERSION_HEADER] = self.version

    def renew(self, expired: str, deadline: Optional[float]) -> None:
        """Replace the session ``expired`` with a new one: once, however many threads ask.

        The first thread to ask replays the setup messages; the others wait for it (until their
        ``deadline``) and then find the new id in place. No lock is held meanwhile, and the old id
        stays in ``id`` until the new session is initialized: a request sent during the renewal
        carries the old id, meets a 404 too and joins this wait, where one sent with no id at all
        would be refused (400) by servers that require one.
        """
        if not self.reconnect:
            raise SessionExpired(f"{self._name} no longer knows our session")
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            self._renewals.run(expired, lambda: self._renew(expired, deadline), timeout)
        except FlightTimeout:
            raise SessionExpired(f"{self._name} lost our session; gave up waiting for the new one "
                                 f"after {timeout:.3g} s") from None
        with self._lock:  # exactly one of the threads that waited reports the change
            change, self._change = self._change, None
        if change is not None:
            self._renewed(*change)

    def _renew(self, expired: str, deadline: Optional[float]) -> None:
        """The renewal itself (one flight): the setup request without a session id, then the
        recorded notification(s) with the new one; only then is the new id published."""
        if self.id != expired:
            return  # a renewal that ended just before this one started replaced it already
        if not self._setup:
            raise SessionExpired(f"{self._name} no longer knows our session")
        log.info("%s lost our session; starting a new one", self._name)
        first, notices = self._setup[0], self._setup[1:]
        headers = self._credentials.for_request("POST", self._credentials.url)  # no Mcp-Session-Id: "start over"
        self.stamp(headers, None)
        read = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        request = Request(deadline=deadline)
        self._inflight.add(request)
        try:
            response = self._inflight.send(request, self._post, first, dict(headers), read)
            try:
                new_id = response.headers.get(SESSION_HEADER)
                if response.status_code != 200 or not new_id:
                    raise SessionExpired(f"{self._name} lost our session and refused a new one "
                                         f"(HTTP {response.status_code})")
                read_body(response, self._name, self._max_message_size, deadline)  # dropped: the client's view stands
            finally:
                response.close()
            headers[SESSION_HEADER] = new_id
            for notice in notices:
                self._inflight.send(request, self._post, notice, dict(headers), read).close()
        finally:
            self._inflight.remove(request)
        with self._lock:
            self._change = (expired, new_id)
        self.id = new_id  # published last: nothing goes out on a session not yet initialized
        self._moved(new_id)

    def delete(self, deadline: float) -> None:
        """End our session on the server (the spec asks for it; 405 means "not supported"), within
        ``_DELETE_TIMEOUT`` of ``deadline``, however slowly the server answers; after
        ``InFlight.end_all``. Best effort: nothing is raised."""
        session_id = self.id
        budget = min(_DELETE_TIMEOUT, deadline - time.monotonic())
        if session_id is None or budget <= 0:
            return
        request = Request(deadline=time.monotonic() + budget)
        self._inflight.add_after_end(request)
        try:
            headers = self._credentials.for_request("DELETE", self._credentials.url)
            self.stamp(headers, session_id)
            self._inflight.send(request, self._delete, headers, budget).close()
        except Exception as exc:  # best effort, bounded
            log.debug("DELETE of the session failed: %s", type(exc).__name__)
        finally:
            self._inflight.remove(request)
