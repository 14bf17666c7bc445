"""A Django app with a module-level client (apps/django_module_client.py): its view answers through it.

Driven twice: with Django's test client (from several threads at once), and over real HTTP
through Django's own threaded server (``ThreadedWSGIServer``, what ``runserver`` runs) on
127.0.0.1 with concurrent requests. Each request asks for a distinct ``add(a, b)``.
"""
from __future__ import annotations

import http.client
import importlib.util
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Iterator, Tuple

import pytest

from ._procs import APPS, pid_alive, wait_until

pytest.importorskip("django")

REQUESTS = 40
CONCURRENCY = 8


@pytest.fixture
def django_view() -> Iterator[ModuleType]:
    """apps/django_module_client.py, imported as ``django_view`` (its ROOT_URLCONF); its client closed after."""
    from django.urls import clear_url_caches

    spec = importlib.util.spec_from_file_location("django_view", APPS / "django_module_client.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["django_view"] = module
    clear_url_caches()
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        client = getattr(module, "client", None)
        if client is not None:
            server = client.transport.pid
            client.close()
            assert wait_until(lambda: not pid_alive(server)), "the server outlived close()"
        sys.modules.pop("django_view", None)
        clear_url_caches()


def _check(django_view: ModuleType, i: int, status: int, body: bytes) -> None:
    a, b = i, 3 * i + 11
    assert status == 200, (a, b, status, body[:2000])
    answer = json.loads(body)
    assert answer["sum"] == a + b, (a, b, answer)
    assert answer["server_pid"] == django_view.client.transport.pid, answer


@pytest.mark.timeout(60)
def test_the_view_under_django_test_client_from_many_threads(django_view):
    from django.test import Client as DjangoTestClient

    local = threading.local()

    def one(i: int) -> Tuple[int, int, bytes]:
        if not hasattr(local, "browser"):
            local.browser = DjangoTestClient()
        response = local.browser.get("/add", {"a": i, "b": 3 * i + 11})
        return i, response.status_code, response.content

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        for i, status, body in pool.map(one, range(REQUESTS)):
            _check(django_view, i, status, body)


@pytest.mark.timeout(60)
def test_the_view_under_djangos_threaded_http_server(django_view):
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format, *args):  # noqa: A002  (the base class's name)
            pass

    httpd = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler, allow_reuse_address=False)
    httpd.set_app(django_view.application)
    serving = threading.Thread(target=httpd.serve_forever, name="test-django-httpd", daemon=True)
    serving.start()
    port = httpd.server_address[1]

    def one(i: int) -> Tuple[int, int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        try:
            conn.request("GET", f"/add?a={i}&b={3 * i + 11}")
            response = conn.getresponse()
            return i, response.status, response.read()
        finally:
            conn.close()

    try:
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            for i, status, body in pool.map(one, range(REQUESTS)):
                _check(django_view, i, status, body)
    finally:
        httpd.shutdown()
        httpd.server_close()
        serving.join(10)
