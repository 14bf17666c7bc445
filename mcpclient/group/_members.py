"""The servers of a ``ServerGroup``: each one's client, state, last error and tools, and running
work on several at once (bounded threads, joined before returning)."""
from __future__ import annotations

import logging
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Optional, Sequence, Union

from ..errors import CapabilityError, MCPError
from ..types import Tool

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["Member", "in_parallel", "watch"]

log = logging.getLogger("mcpclient")
#: ``(**client options) -> a new, unconnected Client`` of a server (``Client`` partially applied to its target).
MakeClient = Callable[..., "Client"]


class Member:
    """A server of the group. ``state`` is what the group last found (``new``, ``ready``, ``failed``,
    ``closed``, ``disabled``); ``current_state`` adds what the client knows since (``lost``)."""

    def __init__(self, name: str, source: Union[MakeClient, "Client", ValueError], include: Sequence[str] = (),
                 exclude: Sequence[str] = (), enabled: bool = True, adopted: bool = False) -> None:
        """``source``: how to make the server's client, an adopted ``Client`` (``adopted``: the
        group never makes another), or the ``ValueError`` of a config entry that cannot be used."""
        self.name = name
        self.source = source
        self.adopted = adopted
        self.client: Optional[Client] = source if adopted else None  # type: ignore[assignment]
        self.include, self.exclude = tuple(include), tuple(exclude)
        self.state = "new" if enabled else "disabled"
        self.error: Optional[BaseException] = None
        self.tools: List[Tool] = []
        self.watching: Optional[Client] = None  # the client whose tool changes are followed (watch)
        self.down = False  # its latest call failed with a transport error (error says which)

    @property
    def current_state(self) -> str:
        client_state = self.client.state if self.client is not None else None
        if self.state == "ready" and client_state in ("lost", "closed", "forked"):
            return "closed" if client_state == "closed" else "lost"
        if self.state == "ready" and self.down:
            return "lost"  # (its client still says ready: an HTTP server that stopped answering)
        return self.state

    @property
    def listed(self) -> bool:
        """Ready, or lost with a ``Reconnect`` policy (its next call reconnects): its tools are offered."""
        state = self.current_state
        return state == "ready" or (state == "lost" and self.client is not None
                                    and not self.client._is_closed)  # (with a policy its next call reconnects)

    def open(self, options: Mapping[str, Any], connect_timeout: Optional[float]) -> List[Tool]:
        """Make the client if there is none yet, connect it unless it is ready, and list its tools
        (none when it does not declare the ``tools`` capability)."""
        if self.client is not None and self.client.state == "closed" and not self.adopted:
            self.client = None  # a first connect that failed closed its client: try again with a new one
        if isinstance(self.source, ValueError):  # a config entry that cannot be used
            raise self.source
        if self.client is None:
            self.client = self.source(**options)  # type: ignore[operator]
        if self.client.state != "ready":
            self.client.connect(**({"timeout": connect_timeout} if connect_timeout else {}))
        try:
            return self.client.list_tools()
        except CapabilityError:  # a prompts- or resources-only server: connected, with no tools
            return []


def watch(owner: Any, member: Member, then: Optional[Callable[[str, List[Tool]], Any]]) -> None:
    """Follow ``member``'s tool changes (``Client.listen(tools=True)``; nothing for a server that
    announces none): on each, its tools are listed again, on the notification thread, and handed
    to ``owner._tools_changed(server, tools)``, then to ``then(server, tools)``. The owner is held
    weakly: a client never keeps its group alive."""
    client = member.client
    if client is None or member.watching is client:
        return
    ref = weakref.ref(owner)
    server = member.name

    def changed(_: Any) -> None:
        try:
            tools = client.list_tools()
        except MCPError as exc:
            log.warning("server %r: could not list its tools after it said they changed: %s", server, exc)
            return
        group = ref()
        if group is not None:
            group._tools_changed(server, tools)
        if then is not None:
            then(server, tools)
    try:
        client.listen(tools=True, on_event=changed)
    except CapabilityError:  # the server announces no changes
        pass
    member.watching = client


def in_parallel(work: Callable[[Member], None], members: Sequence[Member], workers: int) -> None:
    """``work(member)`` for each, on at most ``workers`` threads; returns when all are done. At
    interpreter exit (a ``close()`` in an ``atexit`` handler), where executors take no more work,
    each runs in turn on this thread."""
    if not members:
        return
    with ThreadPoolExecutor(min(workers, len(members)), thread_name_prefix="mcpclient-group") as pool:
        # Each in the caller's context (its trace span...): the work is the caller's.
        futures = []
        for i, member in enumerate(members):
            try:
                futures.append(pool.submit(copy_context().run, work, member))
            except RuntimeError:  # "cannot schedule new futures after interpreter shutdown"
                for rest in members[i:]:
                    work(rest)
                break
        for future in futures:
            future.result()

