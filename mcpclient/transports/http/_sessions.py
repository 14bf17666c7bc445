"""The MCP session over Streamable HTTP: its id, taken from the answer to a ``setup`` request
only and sent with every later request (with the negotiated protocol version); renewed when the
server forgets it (a 404 to a request carrying it) by replaying the recorded setup messages; and
ended with a DELETE at close.

A renewal runs once however many threads meet the 404 (``SingleFlight``, keyed by the expired
id), with no lock held; the old id stays in use until the new session is initialized, then the
GET stream moves to the new session (``_streams``) and the client hears of it
(``on_session_change``, ``on_session_renewed``). ``HTTPSessions`` is a base of ``GetStreams``
and so of ``HTTPTransport``, which sets the attributes declared below and supplies ``_post``.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Dict, Optional, Tuple

from ..._util.threads import FlightTimeout, SingleFlight, reraise_on_main_thread
from ...errors import SessionExpired
from ._exchange import SESSION_HEADER, HTTPBase
from ._reading import Response, abort, read_body
from ..base import encode_frame

log = logging.getLogger("mcpclient.transport.http")

_DELETE_TIMEOUT = 2.0  # the most the session's DELETE may take of close()'s budget
_RENEW_ID = "mcpclient-renew-session"  # the id of a replayed setup request (its answer is read here)


class HTTPSessions(HTTPBase):
    """The session id's life: recorded setup, the headers that carry it, renewal, DELETE."""

    session_id: Optional[str]
    protocol_version: Optional[str]
    reconnect: bool
    on_session_change: Optional[Callable[[Optional[str], Optional[str]], Any]]
    _setup: Tuple[bytes, ...]
    _renewals: SingleFlight
    _change: Optional[Tuple[str, str]]
    _open_lock: Any  # (these three: see HTTPTransport.__init__)
    _get_open: Optional[Tuple[Response, Optional[str]]]
    _get_wake: Any

    def _record_setup(self, message: Any, body: bytes, rid: Any) -> None:
        """Keep the session-opening messages to replay them when the session expires."""
        if rid is not None:  # the setup request starts a new record (answered by us, not the reader)
            self._setup = (encode_frame(dict(message, id=_RENEW_ID)),)
        else:
            self._setup = self._setup + (body,)

    def _headers(self, verb: str, url: str, authorization: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        headers = super()._headers(verb, url, authorization)
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _renew_session(self, expired: str, deadline: Optional[float]) -> None:
        """Replace the session ``expired`` with a new one: once, however many threads ask.

        The first thread to ask replays the setup messages; the others wait for it (until their
        ``deadline``) and then find the new id in place. No lock is held meanwhile, and the old id
        stays in ``session_id`` until the new session is initialized: a request sent during the
        renewal carries the old id, meets a 404 too and joins this wait, where one sent with no
        id at all would be refused (400) by servers that require one.
        """
        if not self.reconnect:
            raise SessionExpired(f"{self.name} no longer knows our session")
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            self._renewals.run(expired, lambda: self._renew(expired, deadline), timeout)
        except FlightTimeout:
            raise SessionExpired(f"{self.name} lost our session; gave up waiting for the new one "
                                 f"after {timeout:.3g} s") from None
        with self._open_lock:  # exactly one of the threads that waited reports the change
            change, self._change = self._change, None
        if change is None:
            return
        for name, callback, args in (("on_session_change", self.on_session_change, change),
                                     ("on_session_renewed", self.on_session_renewed, ())):
            if callback is not None:
                try:
                    callback(*args)
                except BaseException as exc:  # (user code) sys.exit() too: the request, or the GET
                    reraise_on_main_thread(exc)  # listener, that met the 404 goes on in the new session
                    log.exception("%s callback failed", name)

    def _renew(self, expired: str, deadline: Optional[float]) -> None:
        """The renewal itself (one flight): the setup request without a session id, then the
        recorded notification(s) with the new one; only then is the new id published."""
        if self.session_id != expired:
            return  # a renewal that ended just before this one started replaced it already
        if not self._setup:
            raise SessionExpired(f"{self.name} no longer knows our session")
        log.info("%s lost our session; starting a new one", self.name)
        request, notices = self._setup[0], self._setup[1:]
        headers = super()._headers("POST", self.url)  # no Mcp-Session-Id: "start over"
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        read = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        response = self._post(request, dict(headers), read)
        try:
            new_id = response.headers.get(SESSION_HEADER)
            if response.status_code != 200 or not new_id:
                raise SessionExpired(f"{self.name} lost our session and refused a new one "
                                     f"(HTTP {response.status_code})")
            read_body(response, self.name, self.max_message_size, deadline)  # read and dropped (the client's view stands)
        finally:
            response.close()
        headers[SESSION_HEADER] = new_id
        for notice in notices:
            self._post(notice, dict(headers), read).close()
        with self._open_lock:
            self._change = (expired, new_id)
        self.session_id = new_id  # published last: nothing goes out on a session not yet initialized
        with self._open_lock:  # (after the new id: _hold_get registers or refuses a stream by it)
            stale = self._get_open
        if stale is not None and stale[1] != new_id:
            abort(stale[0])  # the old session's GET stream: _listen reopens it on the new one
        self._get_wake.set()

    def _delete(self, session_id: str, deadline: float) -> None:
        """End our session on the server (the spec asks for it; 405 means "not supported")."""
        from urllib3.util import Timeout  # deferred: import cost (urllib3); stdio-only programs never load it

        budget = min(_DELETE_TIMEOUT, deadline - time.monotonic())
        if budget <= 0:
            return
        headers = self._headers("DELETE", self.url)
        headers[SESSION_HEADER] = session_id
        # total= caps connect + read together: a server that stopped accepting (a full listen
        # backlog: the connect hangs) or never answers cannot hold close() past its deadline.
        timeout = Timeout(connect=budget, read=budget, total=budget)
        try:
            self._http.delete(self.url, headers=headers, timeout=timeout,  # type: ignore[union-attr, arg-type]
                              allow_redirects=False).close()
        except Exception as exc:  # best effort, bounded
            log.debug("DELETE of the session failed: %s", type(exc).__name__)

    # --- supplied by HTTPTransport ----------------------------------------------------------------

    def _post(self, body: bytes, headers: Dict[str, str], read: Optional[float]) -> Response:
        raise NotImplementedError
