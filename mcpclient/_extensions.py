"""The ``Client`` methods of protocol extensions: tasks (2025-11-25, experimental) and skills
(SEP-2640).

A mixin of ``Client``, the way redis-py groups its commands: ``client.py`` keeps the core
protocol, and each extension's methods live here, one or two lines each over the client's one
way to send (``_call``/``_list``). Each loads its feature module on first use (import cost:
``tasks``; ``skills`` with ``hashlib``), so ``import mcpclient`` never pays for them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union

from . import _params
from ._sentinel import DEFAULT
from .futures import CallFuture
from .protocol import server_has

if TYPE_CHECKING:
    from ._tools import ToolRegistry
    from .connection import Connection
    from .skills import LoadedSkill, Skill
    from .tasks import Task, ToolTask

__all__ = ["ExtensionMethods"]


class ExtensionMethods:
    """Tasks and skills; mixed into ``Client``, which provides what is declared below."""

    if TYPE_CHECKING:
        _conn: Connection
        _tools: ToolRegistry
        validate_output: Union[bool, str]
        _call: Callable[..., CallFuture[Any]]
        _list: Callable[..., CallFuture[Any]]
        list_tools: Callable[..., Any]

        @property
        def server_capabilities(self) -> Dict[str, Any]: ...

    # tasks (2025-11-25, experimental)

    def _task(self, name: str, arguments: Optional[Dict[str, Any]], raise_on_error: bool,
              meta: Optional[Dict[str, Any]], task: Any, timeout: Any) -> ToolTask:
        """``call_tool(..., task=...)``: learn whether the tool allows tasks, then start one."""
        from . import tasks  # deferred: import cost (tasks); only task users need it

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
        from .tasks import Task  # deferred: import cost (tasks); only task users need it

        return self._list("tasks/list", "tasks", Task.from_wire, timeout, True).result()  # type: ignore[no-any-return]

    def list_tasks_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Task]]:
        """``list_tasks``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``Task`` or raises what ``list_tasks`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        from .tasks import Task  # deferred: import cost (tasks); only task users need it

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
        from . import skills  # deferred: import cost (skills, hashlib); only skills users need it

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
        from . import skills  # deferred: import cost (skills, hashlib); only skills users need it

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
        from . import skills  # deferred: import cost (skills, hashlib); only skills users need it

        return skills.load(self._call, self._conn.session, self.server_capabilities, skill, timeout)
