"""Django with a module-level MCP client (the pattern without ``mcpclient.contrib``): a view
calling a tool through one client shared by every request of the process; ``tests/deploy/test_django.py``
runs it.

    python tests/deploy/apps/django_module_client.py runserver 127.0.0.1:8000 --noreload
    curl 'http://127.0.0.1:8000/add?a=2&b=3'                               # {"sum": 5, ...}
    gunicorn --pythonpath tests/deploy/apps --preload django_module_client:application

One file for the example's sake (``settings.configure``); in a project, put the client in a module
of your app (``myapp/mcp.py``) and import it in views. A client is thread-safe, so the threads of
``runserver`` or of a threaded WSGI server share it. ``reconnect=Reconnect()`` keeps it right
under servers that fork after importing the app (gunicorn ``--preload``, uWSGI without
``lazy-apps``): each worker then opens its own connection on first use.
"""
import os
import sys

import django
from django.conf import settings

if not settings.configured:
    settings.configure(
        DEBUG=False,
        SECRET_KEY="example-only: not a secret",
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost", "testserver"],
        MIDDLEWARE=[],
        INSTALLED_APPS=[],
    )
    django.setup()

from django.core.wsgi import get_wsgi_application  # noqa: E402  (after settings)
from django.http import JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402

from mcpclient import Client, Reconnect  # noqa: E402
from mcpclient.testing import server_command  # noqa: E402

client = Client(server_command(), timeout=10, reconnect=Reconnect()).connect()


def add(request):
    a, b = int(request.GET["a"]), int(request.GET["b"])
    total = client.call_tool("add", {"a": a, "b": b}).structured_content["sum"]
    return JsonResponse({"sum": total, "pid": os.getpid(), "server_pid": client.transport.pid})


urlpatterns = [path("add", add)]
application = get_wsgi_application()

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
