"""mcpclient: a synchronous, thread-based client for the Model Context Protocol.

    from mcpclient import Client

    with Client("python -m mcpclient.testing") as client:
        print(client.call_tool("echo", {"text": "hi"}).text)

Importing this package is cheap: ``requests``, ``urllib3`` and ``jsonschema``, and the HTTP
transports, load only when needed.
"""
import logging as _logging
from typing import TYPE_CHECKING

from ._lazy import lazy_names as _lazy_names
from ._version import __version__
from .client import DEFAULT, Client
from .errors import (
    AuthError, CapabilityError, ClientClosedError, ConnectError, ConnectionClosed, ForkedClientError, HTTPError, InternalError,
    InvalidParams, InvalidRequest, MCPError, MethodNotFound, ParseError, ProcessExited, ProtocolError,
    ReaderThreadError, RequestCancelled, RequestTimeout, ResourceNotFound, RPCError, SchemaValidationError,
    SendTimeout, SessionExpired, SubscriptionLost, ToolChangedError, ToolError, TransportError, URLElicitationRequired,
    HeaderMismatch, InputRoundsExceeded, MissingClientCapability, MissingExtraError, UnknownToolError, UnsupportedProtocolVersion,
)
from .errors import CassetteMismatch, MessageTooLarge, TooManyPages, UnsendableMessage
from .futures import CallFuture
from .transports.base import Transport
from .types import EmbeddedResource, Implementation, ResourceContents, TextContent, Tool, ToolResult

__all__ = [
    "APPS",
    "APP_MIME_TYPE",
    "AudioContent",
    "AuthError",
    "CallFuture",
    "CapabilityError",
    "CassetteMismatch",
    "Client",
    "ClientClosedError",
    "Completion",
    "ConnectError",
    "ConnectionClosed",
    "CreateMessageRequest",
    "CreateMessageResult",
    "DEFAULT",
    "ElicitationRequest",
    "ElicitationResult",
    "EmbeddedResource",
    "Event",
    "Extension",
    "ExtensionContext",
    "ForkedClientError",
    "HTTPError",
    "HTTPTransport",
    "HeaderMismatch",
    "ImageContent",
    "Implementation",
    "InputRoundsExceeded",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "Keepalive",
    "LoadedSkill",
    "MCPError",
    "MemoryTransport",
    "MessageTooLarge",
    "MethodNotFound",
    "MissingClientCapability",
    "MissingExtraError",
    "ParseError",
    "ProcessExited",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptResult",
    "ProtocolError",
    "RPCError",
    "ReaderThreadError",
    "Reconnect",
    "Redirects",
    "RequestCancelled",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceNotFound",
    "ResourceTemplate",
    "Retry",
    "Root",
    "SKILLS",
    "SSETransport",
    "SamplingMessage",
    "SchemaValidationError",
    "SendTimeout",
    "ServerConfig",
    "ServerGroup",
    "ServerStatus",
    "SessionExpired",
    "Skill",
    "SkillFile",
    "SkillVerificationError",
    "StdioTransport",
    "Subscription",
    "SubscriptionLost",
    "TASKS",
    "Task",
    "TasksExtension",
    "TextContent",
    "TooManyPages",
    "Tool",
    "ToolCallFuture",
    "ToolChange",
    "ToolChangedError",
    "ToolError",
    "ToolIndex",
    "ToolPins",
    "ToolResult",
    "ToolTask",
    "Tracing",
    "Transport",
    "TransportError",
    "URLElicitationRequired",
    "UnknownContent",
    "UnknownToolError",
    "UnsendableMessage",
    "UnsupportedProtocolVersion",
    "__version__",
    "accept_defaults",
    "load_config",
    "search_tool_definition",
    "tool_fingerprint",
]

_logging.getLogger("mcpclient").addHandler(_logging.NullHandler())

if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first use (below)
    from .elicitation import ElicitationRequest, ElicitationResult, accept_defaults
    from .handlers import CreateMessageRequest, CreateMessageResult, Root, SamplingMessage
    from .redirects import Redirects
    from .retry import Retry
    from .transports.http import HTTPTransport
    from .transports.sse import SSETransport
    from .skills import LoadedSkill, Skill, SkillFile, SkillVerificationError
    from .tasks import Task, ToolTask
    from .config import ServerConfig, load_config
    from .group import ServerGroup, ServerStatus
    from .pins import ToolChange, ToolPins, tool_fingerprint
    from .search import ToolIndex, search_tool_definition
    from .tracing import Tracing
    from .reconnect import Keepalive, Reconnect
    from .events import Event, Subscription
    from .types import Completion, Prompt, PromptArgument, PromptMessage, PromptResult, Resource, ResourceTemplate
    from .types import AudioContent, ImageContent, ResourceLink, UnknownContent
    from .transports.memory import MemoryTransport
    from .transports.stdio import StdioTransport
    from .extensions import APP_MIME_TYPE, APPS, SKILLS, TASKS, Extension, ExtensionContext
    from ._taskext import TasksExtension, ToolCallFuture

#: Names whose modules load on first use (PEP 562): most programs never need them, and importing
#: mcpclient stays cheap (see benchmarks/README.md, import time).
_LAZY = {
    "CreateMessageRequest": "handlers", "CreateMessageResult": "handlers", "ElicitationRequest": "elicitation",
    "ElicitationResult": "elicitation", "Root": "handlers", "SamplingMessage": "handlers",
    "accept_defaults": "elicitation", "Task": "tasks", "ToolTask": "tasks", "LoadedSkill": "skills",
    "Skill": "skills", "SkillFile": "skills", "SkillVerificationError": "skills", "Retry": "retry",
    "Redirects": "redirects", "HTTPTransport": "transports.http", "SSETransport": "transports.sse",
    "ServerConfig": "config", "load_config": "config", "ServerGroup": "group", "ServerStatus": "group",
    "ToolChange": "pins", "ToolPins": "pins", "tool_fingerprint": "pins", "ToolIndex": "search",
    "search_tool_definition": "search", "Tracing": "tracing", "Keepalive": "reconnect", "Reconnect": "reconnect",
    "MemoryTransport": "transports.memory", "StdioTransport": "transports.stdio", "Event": "events",
    "Subscription": "events", "Completion": "types", "Prompt": "types", "PromptArgument": "types",
    "Resource": "types", "ResourceTemplate": "types", "PromptMessage": "types", "PromptResult": "types",
    "AudioContent": "types", "ImageContent": "types", "ResourceLink": "types", "UnknownContent": "types",
    "Extension": "extensions", "ExtensionContext": "extensions",
    "TASKS": "extensions", "APPS": "extensions", "SKILLS": "extensions", "APP_MIME_TYPE": "extensions",
    "TasksExtension": "_taskext", "ToolCallFuture": "_taskext",
}


__getattr__ = _lazy_names(__name__, _LAZY, globals())


def __dir__() -> list:
    return sorted(__all__)
