"""Celery: each worker process gets its own group of MCP servers (``mcpclient.contrib.celery``).

    export CELERY_BROKER_URL=redis://127.0.0.1:6379/0
    celery --workdir examples -A celery_tasks worker --pool=prefork --concurrency=2
    python -c "from celery_tasks import app; print(app.send_task('celery_tasks.add', (2, 3)).get())"

``init_app`` connects a group in each pool process as it starts (``worker_process_init``) and
closes it when it stops; the worker's main process never starts a server. With ``--pool=threads``
or ``--pool=solo`` the tasks run in the main process, whose group the first task makes. The tasks
use the object ``init_app`` returns. (In a Django project: ``init_app(app, mcpclient.contrib.django.mcp)``,
see examples/django_project.)
"""
import os
import sys
from typing import Dict

from celery import Celery

from mcpclient import StdioTransport
from mcpclient.contrib.celery import init_app

BROKER = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
app = Celery("celery_tasks", broker=BROKER, backend=os.environ.get("CELERY_RESULT_BACKEND", BROKER))

mcp = init_app(app, {"tools": {"command": sys.executable, "args": ["-m", "mcpclient.testing"]}},
               client_options={"timeout": 20})


@app.task  # pyright: ignore[reportUnknownMemberType]  (celery ships no type hints)
def add(a: int, b: int) -> Dict[str, object]:
    result = mcp.call_tool("tools_add", {"a": a, "b": b})
    structured = result.structured_content  # JSON, as the server sent it: {"sum": ...}
    transport = mcp["tools"].transport
    return {"sum": structured.get("sum") if isinstance(structured, dict) else None, "pid": os.getpid(),
            "server_pid": transport.pid if isinstance(transport, StdioTransport) else None}
