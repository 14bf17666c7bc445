"""mcpclient: a synchronous, thread-based client for the Model Context Protocol.

    from mcpclient import Client

    with Client("python -m mcpclient.testing") as client:
        print(client.call_tool("echo", {"text": "hi"}).text)

Importing this package is cheap: ``requests`` and ``jsonschema`` load only when needed.
"""
import logging as _logging

from ._version import __version__
from .client import DEFAULT, Client
from .errors import (
    AuthError, CapabilityError, ClientClosedError, ConnectError, ConnectionClosed, HTTPError, InternalError,
    InvalidParams, InvalidRequest, MCPError, MethodNotFound, ParseError, ProcessExited, ProtocolError,
    ReaderThreadError, RequestCancelled, RequestTimeout, ResourceNotFound, RPCError, SchemaValidationError,
    SendTimeout, SessionExpired, ToolError, TransportError, URLElicitationRequired, HeaderMismatch,
    InputRoundsExceeded, MissingClientCapability, UnsupportedProtocolVersion,
)
from .handlers import (
    CreateMessageRequest, CreateMessageResult, ElicitationRequest, ElicitationResult, Root, SamplingMessage,
    accept_defaults,
)
from .retry import Retry
from .session import CallFuture
from .tasks import Task, ToolTask
from .transports.base import Transport
from .transports.http import HTTPTransport
from .transports.memory import MemoryTransport
from .transports.sse import SSETransport
from .transports.stdio import StdioTransport
from .types import (
    AudioContent, Completion, EmbeddedResource, ImageContent, Implementation, Prompt, PromptArgument,
    PromptMessage, PromptResult, Resource, ResourceContents, ResourceLink, ResourceTemplate, TextContent, Tool,
    ToolResult, UnknownContent,
)

__all__ = [
    "DEFAULT",
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
    "ElicitationRequest",
    "ElicitationResult",
    "EmbeddedResource",
    "HTTPError",
    "HTTPTransport",
    "HeaderMismatch",
    "ImageContent",
    "Implementation",
    "InputRoundsExceeded",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPError",
    "MemoryTransport",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "ProcessExited",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptResult",
    "ProtocolError",
    "RPCError",
    "ReaderThreadError",
    "RequestCancelled",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceNotFound",
    "ResourceTemplate",
    "Retry",
    "Root",
    "SSETransport",
    "SamplingMessage",
    "SchemaValidationError",
    "SendTimeout",
    "SessionExpired",
    "StdioTransport",
    "Task",
    "TextContent",
    "Tool",
    "ToolError",
    "ToolResult",
    "ToolTask",
    "Transport",
    "TransportError",
    "URLElicitationRequired",
    "UnknownContent",
    "UnsupportedProtocolVersion",
    "accept_defaults",
    "__version__",
]

_logging.getLogger("mcpclient").addHandler(_logging.NullHandler())
