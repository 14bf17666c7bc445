"""``health``: the process's group as JSON, 200 when every enabled server is ready, else 503.

    # urls.py
    from mcpclient.contrib.django.views import health
    urlpatterns = [..., path("mcp/health", health)]
"""
from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from . import mcp


def health(request: HttpRequest) -> JsonResponse:
    """``{"ok": ..., "servers": {name: {"state", "protocol", "tools", "error"}}}`` (``mcp.health()``)."""
    body = mcp.health()
    return JsonResponse(body, status=200 if body["ok"] else 503)
