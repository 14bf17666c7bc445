"""``loopback_authorize``: the desktop login step — the user's browser, and a one-shot server on
127.0.0.1 that receives the redirect back (RFC 8252 loopback redirect)."""
from __future__ import annotations

import threading
import webbrowser
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Callable, List, Optional
from urllib.parse import parse_qs, urlsplit

from .._util.threads import next_instance, start_thread
from ..errors import AuthError

__all__ = ["loopback_authorize"]

_PAGE = (b"<!doctype html><meta charset=utf-8><title>Signed in</title>"
         b"<p>You can close this window and return to the application.</p>")


def loopback_authorize(open_browser: Optional[Callable[[str], object]] = None,
                       timeout: float = 300.0) -> Callable[[str], str]:
    """An ``AuthorizationCode(authorize=...)`` step for desktop programs: opens the authorization
    URL in the user's browser (``webbrowser.open`` unless ``open_browser`` is given) and waits up
    to ``timeout`` seconds for the redirect to the ``redirect_uri``, which must be an
    ``http://127.0.0.1:<port>/...`` URL (``AuthorizationCode``'s ``redirect_uri``). Nothing else
    is listened for: the server answers one request on loopback and stops."""
    def authorize(url: str) -> str:
        query = parse_qs(urlsplit(url).query)
        redirect = urlsplit((query.get("redirect_uri") or [""])[0])
        if redirect.scheme != "http" or redirect.hostname not in ("127.0.0.1", "localhost") or not redirect.port:
            raise AuthError("loopback_authorize needs redirect_uri='http://127.0.0.1:<port>/<path>'")
        got: List[str] = []
        done = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # the request line carries the code: never log it
                pass

            def do_GET(self) -> None:  # noqa: N802
                if urlsplit(self.path).path != (redirect.path or "/"):
                    self.send_error(404)
                    return
                got.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(_PAGE)))
                self.end_headers()
                self.wfile.write(_PAGE)
                done.set()

        server = HTTPServer(("127.0.0.1", redirect.port), Handler)
        thread = start_thread(server.serve_forever, f"mcpclient-{next_instance()}-auth-loopback")
        try:
            if open_browser is not None:
                open_browser(url)
            else:
                if not webbrowser.open(url):
                    raise AuthError("no browser could be opened for the login; use another authorize step")
            if not done.wait(timeout):
                raise AuthError(f"the login did not come back within {timeout:g} s")
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5.0)
        return f"http://{redirect.hostname}:{redirect.port}{got[0]}"
    return authorize
