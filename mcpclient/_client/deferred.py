"""The layers the façade's methods use (request params, the result types), loaded when first
used rather than with ``import mcpclient`` (params and the types with the first
``connect()``: ``_client.connection``): a program that imports the package without making a
client (a Django project's every ``manage.py`` command) does not pay for them."""
from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from .._util.lazy import LazyModule

__all__ = ["params", "types"]


def _load_params() -> ModuleType:
    from ..protocol import params  # deferred: the protocol layer loads with the first connect()
    return params


def _load_types() -> ModuleType:
    from .. import types  # deferred, as params; its resources/prompts/completion types load on first use
    return types


if TYPE_CHECKING:
    from .. import types
    from ..protocol import params
else:
    params = LazyModule(_load_params)
    types = LazyModule(_load_types)
