"""``CallHost``: what a call (``futures.CallFuture``) needs of the session that sends it. Generic
in the call's type, so that it needs nothing of the module that defines calls."""
from __future__ import annotations

from typing import Any, Callable, ContextManager, Dict, FrozenSet, Optional, Protocol, TypeVar

__all__ = ["CallHost"]

C = TypeVar("C", contravariant=True)


class CallHost(Protocol[C]):
    """What a call needs of the session that sends it (``Session`` is the one implementation):
    the next round, the hand-off of a call's next step to a worker, and giving a call up."""

    #: The extensions the client declared (an error about a missing capability names them).
    declared_extensions: FrozenSet[str]
    #: The transport leaves rounds' exchanges to the callers that wait (HTTP): a blocking caller
    #: runs its exchange before it sleeps, so it takes no place among the sleepers in advance.
    exchanges: bool

    def resend(self, call: C, params: Optional[Dict[str, Any]]) -> None:
        """Send the next round of ``call`` within its one deadline."""

    def continue_call(self, call: C, payload: Any) -> bool:
        """Run ``call.run_step(payload)`` on a worker; False once the session is closing."""

    def on_worker(self, label: str, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on a worker; False once the session is closing."""

    def answered_here(self, reply: Dict[str, Any]) -> None:
        """Dispatch a reply read on this (a waiting caller's) thread, as the reader would."""

    def release_held(self, call: C) -> None:
        """Never hold ``call``'s answer back behind its progress callbacks from now on."""

    def abandon(self, rid: Any, reason: str) -> bool:
        """Stop the round ``rid`` (on the server too); False if it was no longer pending."""

    def expire(self, call: C) -> None:
        """The deadline of ``call`` passed."""

    def watch(self, call: C) -> None:
        """Have the timer enforce ``call``'s deadline (``expire``)."""

    def waiting_for(self, call: C, timeout: Optional[float]) -> Optional[ContextManager[None]]:
        """Around a wait for ``call`` on one of the library's threads (refuses the reader and the
        timer); None: nothing to do. Other threads' waits need nothing around them."""
