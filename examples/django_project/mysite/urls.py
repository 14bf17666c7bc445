"""``/add?a=2&b=3`` calls the server's ``add`` tool; ``/mcp/health`` reports the servers."""
import os

from django.http import HttpRequest, JsonResponse
from django.urls import path

from mcpclient import StdioTransport
from mcpclient.contrib.django import mcp
from mcpclient.contrib.django.views import health


def add(request: HttpRequest) -> JsonResponse:
    a, b = int(request.GET["a"]), int(request.GET["b"])
    result = mcp.call_tool("tools_add", {"a": a, "b": b})  # the group's name: <server>_<tool>
    structured = result.structured_content  # JSON, as the server sent it: {"sum": ...}
    transport = mcp["tools"].transport
    return JsonResponse({"sum": structured.get("sum") if isinstance(structured, dict) else None, "pid": os.getpid(),
                         "server_pid": transport.pid if isinstance(transport, StdioTransport) else None})


urlpatterns = [path("add", add), path("mcp/health", health)]
