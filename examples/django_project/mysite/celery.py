"""The project's Celery app, Django's documented way: its settings from Django's (``CELERY_*``);
``init_app`` gives each pool process its own group of the ``mcp`` the views use."""
import os
from typing import Dict

from celery import Celery

from mcpclient import StdioTransport
from mcpclient.contrib.celery import init_app
from mcpclient.contrib.django import mcp

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
app = Celery("mysite")
app.config_from_object("django.conf:settings", namespace="CELERY")
init_app(app, mcp)


@app.task
def add(a: int, b: int) -> Dict[str, object]:
    result = mcp.call_tool("tools_add", {"a": a, "b": b})
    structured = result.structured_content  # JSON, as the server sent it: {"sum": ...}
    transport = mcp["tools"].transport
    return {"sum": structured.get("sum") if isinstance(structured, dict) else None, "pid": os.getpid(),
            "server_pid": transport.pid if isinstance(transport, StdioTransport) else None}
