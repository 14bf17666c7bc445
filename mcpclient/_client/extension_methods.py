"""The ``Client`` methods of protocol extensions: the registry (``Client(extensions=...)``),
tasks (2025-11-25, experimental) and skills (SEP-2640).

A mixin of ``Client``, the way redis-py groups its commands: ``client.py`` keeps the core
protocol, and each extension's methods live here, one or two lines each over the client's one
way to send (``_call``/``_list``). Each loads its feature module on first use (import cost:
``tasks``; ``skills`` with ``hashlib``), so ``import mcpclient`` never pays for them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Union

from ..protocol import params as _params
from .._util.sentinel import DEFAULT
from ..errors import ClientClosedError
from .._engine.futures import CallFuture
from ..protocol.spec import server_has

if TYPE_CHECKING:
    from .responder import Responder
    from .tools import ToolRegistry
    from .connection import Connection
    from ..extensions.registry import Extension, Registry
    from .notifications import NotificationRouter
    from ..types import Tool
    from ..extensions.skills import LoadedSkill, Skill
    from ..extensions.tasks.core import Task, ToolTask

__all__ = ["ExtensionMethods", "build_registry"]

#: What ``Client(extensions=...)`` takes: id -> settings dict, ``True`` (``{}``) or an ``Extension``.
ExtensionsSetting = Optional[Mapping[str, Union[Mapping[str, Any], bool, "Extension"]]]


def build_registry(extensions: ExtensionsSetting, capabilities: Optional[Dict[str, Any]]) -> Optional[Registry]:
    """The registry of ``Client(extensions=...)`` (None when not used: nothing of it loads then).
    Built-in ids get built-in behaviour: ``TASKS`` the Tasks extension (a dict = its options),
    ``APPS`` a declaration whose ``mimeTypes`` always include ``APP_MIME_TYPE``; other ids with
    a dict (or ``True``) are declared as they are; ``False`` declares nothing. ``ValueError``/``TypeError``
    for bad ids or values."""
    if extensions is None:
        return None
    if not isinstance(extensions, Mapping):
        raise TypeError("extensions must be a dict: id -> settings dict, True or an Extension")
    from ..extensions import registry as ext  # deferred: import cost (extensions); only clients that declare one need it

    made = {}
    for key, value in extensions.items():
        ext.check_id(key)
        if value is False:  # (as tracing=False: said, and not declared)
            continue
        settings, instance = ext.split_value(key, value)
        made[key] = instance if instance is not None else _builtin(key, settings or {})
    return ext.Registry(made, capabilities) if made else None


def _builtin(key: str, settings: Dict[str, Any]) -> Extension:
    """The extension a settings dict declares for ``key`` (see ``build_registry``)."""
    from ..extensions import registry as ext  # deferred: import cost (extensions), loaded by build_registry already

    if key == ext.TASKS:
        from ..extensions.tasks.extension import TasksExtension  # deferred: import cost; only clients that declare TASKS need it

        return TasksExtension.from_settings(settings)
    if key == ext.APPS:
        mimes = settings.get("mimeTypes", [])
        if not isinstance(mimes, list) or not all(isinstance(m, str) for m in mimes):
            raise TypeError(f"extensions[{key!r}]['mimeTypes'] must be a list of strings")
        return ext._Declared(key, {**settings, "mimeTypes": mimes if ext.APP_MIME_TYPE in mimes
                                   else [ext.APP_MIME_TYPE, *mimes]})
    return ext._Declared(key, settings)


class ExtensionMethods:
    """The extension registry, tasks and skills; mixed into ``Client``, which provides what is
    declared below."""

    if TYPE_CHECKING:
        _conn: Connection
        _ext: Optional[Registry]
        _responder: Responder
        _notifications: NotificationRouter
        _tools: ToolRegistry
        validate_output: Union[bool, str]
        _call: Callable[..., CallFuture[Any]]
        _list: Callable[..., CallFuture[Any]]
        list_tools: Callable[..., Any]

        @property
        def server_capabilities(self) -> Dict[str, Any]: ...

    # the registry

    def _install_extensions(self, registry: Registry) -> None:
        """(``Client.__init__``, with ``extensions=``.) Plug the registry's tables into the
        responder and the notification router, and give each extension its context."""
        from ..extensions.registry import ExtensionContext  # deferred: import cost, loaded by build_registry already
        from .lifecycle import weakly

        self._responder.extension_requests = registry.requests
        if registry.notifications:
            self._notifications.extensions = registry.notify
        send, caps, stateless = weakly(self._extension_call), weakly(self._server_caps), weakly(self._stateless)
        registry.attach(lambda key, settings: ExtensionContext(key, settings, send, caps, self._responder.answer,
                                                               stateless))

    def _extension_call(self, method: str, params: Optional[Dict[str, Any]], timeout: Any,
                        owned: bool) -> CallFuture[Any]:
        """An ``ExtensionContext`` request: sent the negotiated era's way, gated by the context
        (on the server's declaration of the extension), not by the core capability table."""
        return self._call(method, params, timeout=timeout, owned=owned, check=False)

    def _server_caps(self) -> Dict[str, Any]:
        return self.server_capabilities

    def _stateless(self) -> bool:
        era = self._conn.era
        return era is not None and era.stateless

    def _extend_era(self, era: Any, sends_headers: bool) -> Any:
        """A new era (each connect): the claimed result types, and the Tasks extension's routing
        headers over HTTP in the handshake era."""
        registry = self._ext
        if registry is not None:
            from ..extensions.registry import TASKS  # deferred: import cost, loaded by build_registry already
            from ..protocol.stateless import TASK_EXTENSION_METHODS

            era.resolvers = registry.resolvers()
            if sends_headers and not era.stateless and TASKS in registry.declared:
                era.routed = TASK_EXTENSION_METHODS
        return era

    def _bind_extensions(self) -> None:
        """After each connect: every extension's ``bind(ctx)``."""
        if self._ext is not None:
            self._ext.bind()

    @property
    def extensions(self) -> Mapping[str, Dict[str, Any]]:
        """The extensions this client declares: id -> settings (``extensions=``, and any given in
        ``capabilities["extensions"]``; ``{}`` without either)."""
        found = self._responder.capabilities().get("extensions")
        return {k: dict(v) for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}

    @property
    def server_extensions(self) -> Mapping[str, Dict[str, Any]]:
        """The extensions the server declared: id -> settings (``{}`` before ``connect()``)."""
        found = self.server_capabilities.get("extensions")
        return {k: v for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}

    def supports_extension(self, extension_id: str) -> bool:
        """Whether both sides declared the extension ``extension_id``.

        Returns:
            True if this client and the server declared it (False before ``connect()``).

        Raises:
            Nothing: it only reads what was negotiated.
        """
        return extension_id in self.extensions and extension_id in self.server_extensions

    def known_tool(self, name: str) -> Optional[Tool]:
        """The tool ``name`` from the client's latest tools listing, without a request. Hosts
        (the MCP Apps bridge) check a tool's ``ui`` visibility with it.

        Returns:
            The ``Tool``, or None if no listing since the tools last changed named it.

        Raises:
            Nothing: it only reads what was listed.
        """
        return self._tools.get(name) if isinstance(name, str) else None

    # tasks (the Tasks extension, and 2025-11-25, experimental)

    def task(self, task_id: str) -> ToolTask:
        """A handle for a task of this server, by id (e.g. saved from ``future.task.task_id``
        before a restart); nothing is sent. With the Tasks extension declared
        (``Client(extensions={TASKS: {}})``) and the server declaring it, the handle follows it
        with the extension; else, when the server has 2025-11-25 tasks, it is that kind.

        Returns:
            A ``ToolTask``: ``.status()``, ``.result(timeout=)``, ``.cancel()``, ``.wait()``.

        Raises:
            ValueError: the Tasks extension is not declared (and the server has no 2025-11-25 tasks).
            CapabilityError: the server declared neither (nothing is sent).
            ClientClosedError: the client is closed, or was never connected.
        """
        from ..extensions.tasks.extension import resume  # deferred: import cost (the Tasks extension)

        if self._conn.era_if_ready("tasks/get") is None and not self.server_capabilities:  # closed: raises
            raise ClientClosedError("client.task(): the client is not connected; call connect() or use 'with'")
        registry = self._ext
        ext = registry.extensions.get("io.modelcontextprotocol/tasks") if registry is not None else None
        return resume(ext, self.server_extensions, self.server_capabilities,
                      self._call, task_id)

    def _task(self, name: str, arguments: Optional[Dict[str, Any]], raise_on_error: bool,
              meta: Optional[Dict[str, Any]], task: Any, timeout: Any) -> ToolTask:
        """``call_tool(..., task=...)``: learn whether the tool allows tasks, then start one."""
        from ..extensions.tasks import core as tasks  # deferred: import cost (tasks); only task users need it

        if isinstance(name, str) and self._tools.get(name) is None and server_has(
                self.server_capabilities, "tasks.requests.tools.call"):
            self.list_tools(timeout=timeout)  # to learn whether the tool allows tasks
        known = self._tools.get(name) if isinstance(name, str) else None
        params, transform = _params.tool_call(name, arguments, raise_on_error, meta, known if self.validate_output else None)
        return tasks.start(self._call, self.server_capabilities, known, params, transform, task, timeout)

    def list_tasks(self, *, timeout: Any = DEFAULT) -> List[Task]:
        """Every task the server knows of for this client (``tasks/list``, all pages).

        Returns:
            A list of ``Task``.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``tasks.list`` (nothing was sent).
        """
        from ..extensions.tasks.core import Task  # deferred: import cost (tasks); only task users need it

        return self._list("tasks/list", "tasks", Task.from_wire, timeout, True).result()  # type: ignore[no-any-return]

    def list_tasks_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Task]]:
        """``list_tasks``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``Task`` or raises what ``list_tasks`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        from ..extensions.tasks.core import Task  # deferred: import cost (tasks); only task users need it

        return self._list("tasks/list", "tasks", Task.from_wire, timeout, False)

    # skills (SEP-2640)

    def list_skills(self, *, timeout: Any = DEFAULT) -> List[Skill]:
        """The skills the server offers (``skills/list``, all pages): manifests only, no file is read.

        Args:
            timeout: seconds (omitted: the client's default).

        Returns:
            A list of ``Skill`` manifests.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``the skills extension`` (nothing was sent).
        """
        return self.list_skills_future(timeout=timeout).result()

    def list_skills_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Skill]]:
        """``list_skills``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``Skill`` or raises what ``list_skills`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        from ..extensions import skills  # deferred: import cost (skills, hashlib); only skills users need it

        skills.require(self.server_capabilities, "skills/list")
        return self._call("skills/list", None, skills.listing(), timeout=timeout, owned=False)

    def get_skill(self, uri: str, *, timeout: Any = DEFAULT) -> Skill:
        """One skill's manifest by its ``SKILL.md`` URI (``skills/get``; works for unlisted skills too).

        Args:
            uri: the skill's ``SKILL.md`` URI.
            timeout: seconds (omitted: the client's default).

        Returns:
            The ``Skill`` manifest.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``the skills extension`` (nothing was sent).
        """
        return self.get_skill_future(uri, timeout=timeout).result()

    def get_skill_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[Skill]:
        """``get_skill``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a ``Skill`` or raises what ``get_skill`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        from ..extensions import skills  # deferred: import cost (skills, hashlib); only skills users need it

        skills.require(self.server_capabilities, "skills/get")
        return self._call("skills/get", {"uri": _params.uri(uri)}, skills.entry, timeout=timeout, owned=False)

    def load_skill(self, skill: Union[str, Skill], *, timeout: Any = DEFAULT) -> LoadedSkill:
        """Load a skill: its name (from ``list_skills()``), ``SKILL.md`` URI, or ``Skill``.

        Reads ``SKILL.md`` only now, and verifies its size, digest and frontmatter against the
        manifest; ``read(path)`` of the result serves only listed, verified files.

        Args:
            skill: a name, a ``SKILL.md`` URI, or a ``Skill``.
            timeout: seconds (omitted: the client's default).

        Returns:
            A ``LoadedSkill``.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``the skills extension`` (nothing was sent).
            SkillVerificationError: the content does not match the manifest (nothing else is read then).
        """
        return self.load_skill_future(skill, timeout=timeout).result()

    def load_skill_future(self, skill: Union[str, Skill], *, timeout: Any = DEFAULT) -> CallFuture[LoadedSkill]:
        """``load_skill``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a ``LoadedSkill`` or raises what ``load_skill`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        from ..extensions import skills  # deferred: import cost (skills, hashlib); only skills users need it

        return skills.load(self._call, self._conn.session, self.server_capabilities, skill, timeout)
