"""``DEFAULT``: the "use the client's setting" marker for ``timeout=`` (``None`` means wait forever);
the defaults of ``Limits`` and ``Timeout``, which the protocol layer applies and a ``Client``
made without them uses (``_client.settings``)."""
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

__all__ = ["DEFAULT", "DEFAULT_INPUT_ROUNDS", "DEFAULT_MAX_PAGES", "DEFAULT_PROBE", "DEFAULT_SERVER_TEXT", "DEFAULT_WORKERS"]


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()
"""What ``timeout=`` is when it is left out: the client's default (``Client(timeout=)``);
``None`` instead means no limit."""

#: Pages one listing may take (``Limits(pages=)``): a server handing out new cursors for ever
#: must not drive requests and memory without end (each page is bounded by ``max_message_size``).
DEFAULT_MAX_PAGES = 1000
#: Worker threads of a client (``Limits(workers=)``).
DEFAULT_WORKERS = 4
#: Characters kept of the server's instructions and of each tool description (``Limits(server_text=)``).
DEFAULT_SERVER_TEXT = 8192
#: ``input_required`` rounds of one 2026 request (``Limits(input_rounds=)``).
DEFAULT_INPUT_ROUNDS = 10
#: Seconds the ``server/discover`` probe waits on stdio (``Timeout(probe=)``).
DEFAULT_PROBE = 2.0


class Keep:
    """``KEEP``: what a ``replace()`` keyword is when it is left out: the field keeps its value."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = Keep()

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    _D = TypeVar("_D", bound=DataclassInstance)


def replaced(value: "_D", changes: Mapping[str, object]) -> "_D":
    """A copy of the dataclass ``value`` with the ``changes`` that are not ``KEEP`` applied."""
    import dataclasses  # (loaded by the values it copies; Client(...) loads none before the launch)

    return dataclasses.replace(value, **{name: new for name, new in changes.items() if new is not KEEP})
