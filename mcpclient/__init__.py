"""mcpclient: a synchronous, thread-based client for the Model Context Protocol.

    from mcpclient import Client

    with Client("python -m mcpclient.testing") as client:
        print(client.call_tool("echo", {"text": "hi"}).text)

Importing this package is cheap: ``requests``, ``urllib3`` and ``jsonschema``, and the HTTP
transports, load only when needed.
"""
import logging as _logging
from typing import TYPE_CHECKING

from ._util.lazy import lazy_names as _lazy_names
from ._version import __version__
from .errors import (
    AuthError, CapabilityError, ClientClosedError, ConnectError, ConnectionClosed, ForkedClientError,
    HTTPError, InternalError, InvalidParams, InvalidRequest, MCPError, MethodNotFound,
    ParseError, ProcessExited, ProtocolError, ReaderThreadError, RequestCancelled, RequestTimeout,
    ResourceNotFound, RPCError, SchemaValidationError, SendTimeout, SessionExpired, SubscriptionLost,
    ToolChangedError, ToolError, TransportError, URLElicitationRequired, HeaderMismatch, InputRoundsExceeded,
    MissingClientCapability, MissingExtraError, UnknownToolError, UnsupportedProtocolVersion,
)
from .errors import MessageTooLarge, TooManyPages, UnsendableMessage

__all__ = [
    "APPS",
    "APP_MIME_TYPE",
    "AudioContent",
    "AuthError",
    "CallFuture",
    "CapabilityError",
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
    "Handlers",
    "HeaderMismatch",
    "ImageContent",
    "Implementation",
    "InputRoundsExceeded",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "Keepalive",
    "Limits",
    "LoadedSkill",
    "MCPError",
    "MemoryTransport",
    "MessageTooLarge",
    "MethodNotFound",
    "MissingClientCapability",
    "MissingExtraError",
    "OnDemandTools",
    "Page",
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
    "ServerInfo",
    "ServerStatus",
    "SessionExpired",
    "Skill",
    "SkillFile",
    "SkillVerificationError",
    "Skills",
    "StdioTransport",
    "Subscription",
    "SubscriptionLost",
    "TASKS",
    "Task",
    "Tasks",
    "TasksExtension",
    "TextContent",
    "Timeout",
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
    from .client import DEFAULT, Client
    from ._engine.futures import CallFuture
    from .transports.base import Transport
    from .types import EmbeddedResource, Implementation, ResourceContents, TextContent, Tool, ToolResult
    from .types.elicitation import ElicitationRequest, ElicitationResult, accept_defaults
    from .types.handlers import CreateMessageRequest, CreateMessageResult, Root, SamplingMessage
    from .policies.redirects import Redirects
    from .policies.retry import Retry
    from .transports.http.streamable import HTTPTransport
    from .transports.http.sse import SSETransport
    from .extensions.skills import LoadedSkill, Skill, SkillFile, SkillVerificationError
    from .extensions.tasks.core import ToolTask
    from .types import Task
    from .group.config import ServerConfig, load_config
    from .group.server_group import ServerGroup, ServerStatus
    from .group.pins import ToolChange, ToolPins, tool_fingerprint
    from .group.search import ToolIndex, search_tool_definition
    from .group.on_demand import OnDemandTools
    from .policies.tracing import Tracing
    from .policies.handlers import Handlers
    from .policies.timeout import Limits, Timeout
    from .types import Page, ServerInfo
    from .extensions.skills import Skills
    from .extensions.tasks.feature import Tasks
    from .policies.reconnect import Keepalive, Reconnect
    from ._client.events import Event, Subscription
    from .types import Completion, Prompt, PromptArgument, PromptMessage, PromptResult, Resource, ResourceTemplate
    from .types import AudioContent, ImageContent, ResourceLink, UnknownContent
    from .transports.memory import MemoryTransport
    from .transports.stdio.transport import StdioTransport
    from .extensions.base import APP_MIME_TYPE, APPS, SKILLS, TASKS, Extension, ExtensionContext
    from .extensions.tasks.extension import TasksExtension, ToolCallFuture

#: Names whose modules load on first use (``_util.lazy``, PEP 562). ``Client`` loads with its
#: first use: a program that imports the package without making a client (a Django project's
#: every ``manage.py`` command) does not pay for it. The rest is what a stdio one-shot call never needs, each a few per cent of it:
#: the HTTP transports (``requests``), ``ServerGroup`` and its config (about 10 ms), the extensions
#: (tasks, skills, apps: 6 to 15 ms), the policies other than ``Timeout``/``Limits``/``Handlers``.
_LAZY = {
    "Client": "client", "DEFAULT": "client", "CallFuture": "_engine.futures", "Transport": "transports.base", "Implementation": "types",
    "EmbeddedResource": "types", "ResourceContents": "types", "TextContent": "types",
    "Tool": "types", "ToolResult": "types",
    "CreateMessageRequest": "types.handlers", "CreateMessageResult": "types.handlers", "ElicitationRequest": "types.elicitation",
    "ElicitationResult": "types.elicitation", "Root": "types.handlers", "SamplingMessage": "types.handlers",
    "accept_defaults": "types.elicitation", "Task": "types", "ToolTask": "extensions.tasks.core", "LoadedSkill": "extensions.skills",
    "Skill": "extensions.skills", "SkillFile": "extensions.skills", "SkillVerificationError": "extensions.skills", "Retry": "policies.retry",
    "Redirects": "policies.redirects", "HTTPTransport": "transports.http.streamable", "SSETransport": "transports.http.sse",
    "ServerConfig": "group.config", "load_config": "group.config", "ServerGroup": "group.server_group", "ServerStatus": "group.server_group",
    "ToolChange": "group.pins", "ToolPins": "group.pins", "tool_fingerprint": "group.pins", "ToolIndex": "group.search",
    "OnDemandTools": "group.on_demand", "search_tool_definition": "group.search", "Tracing": "policies.tracing", "Keepalive": "policies.reconnect", "Reconnect": "policies.reconnect",
    "MemoryTransport": "transports.memory", "StdioTransport": "transports.stdio.transport", "Event": "_client.events",
    "Subscription": "_client.events", "Completion": "types", "Prompt": "types", "PromptArgument": "types",
    "Resource": "types", "ResourceTemplate": "types", "PromptMessage": "types", "PromptResult": "types",
    "AudioContent": "types", "ImageContent": "types", "ResourceLink": "types", "UnknownContent": "types",
    "Extension": "extensions.base", "ExtensionContext": "extensions.base",
    "TASKS": "extensions.base", "APPS": "extensions.base", "SKILLS": "extensions.base", "APP_MIME_TYPE": "extensions.base",
    "TasksExtension": "extensions.tasks.extension", "ToolCallFuture": "extensions.tasks.extension",
    "Handlers": "policies.handlers", "Limits": "policies.timeout", "Timeout": "policies.timeout",
    "Page": "types", "ServerInfo": "types", "Skills": "extensions.skills",
    "Tasks": "extensions.tasks.feature",
}


__getattr__ = _lazy_names(__name__, _LAZY, globals())


def __dir__() -> list:
    return sorted(__all__)
