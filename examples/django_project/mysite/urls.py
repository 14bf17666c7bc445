"""``/add?a=2&b=3`` calls the server's ``add`` tool; ``/mcp/health`` reports the servers."""
import os

from django.http import HttpRequest, JsonResponse
from django.urls import path

from mcpclient.contrib.django import mcp
from mcpclient.contrib.django.views import health


def add(request: HttpRequest) -> JsonResponse:
    a, b = int(request.GET["a"]), int(request.GET["b"])
    result = mcp.call_tool("tools_add", {"a": a, "b": b})  # the group's name: <server>_<tool>
    return JsonResponse({"sum": result.structured_content["sum"], "pid": os.getpid(),
                         "server_pid": mcp["tools"].transport.pid})


urlpatterns = [path("add", add), path("mcp/health", health)]
