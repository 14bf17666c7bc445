"""Frozen record classes, built without the ``dataclasses`` module.

Every result type is a small immutable record with snake_case fields. ``dataclasses`` would do,
but importing it pulls in ``inspect``, ``ast``, ``dis`` and ``tokenize``: about a third of what
``import mcpclient`` costs. This is the small part of it we use: ``@record`` reads the class's
annotations (and those of record base classes), takes defaults from ``field(...)`` or plain
values, and compiles one ``__init__`` per class (as fast as the dataclass one); instances are
frozen; ``Record`` gives ``repr``/``==``/``hash`` over the fields marked for them.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple, Type, TypeVar

__all__ = ["FrozenInstanceError", "Record", "field", "fields", "record", "replace"]

T = TypeVar("T")
MISSING: Any = type("MISSING", (), {"__repr__": lambda self: "MISSING"})()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a record (they are immutable)."""


class Field:
    """One field: its default (or factory), and whether it is in ``__init__``, ``repr``, ``==``."""

    __slots__ = ("name", "default", "default_factory", "init", "repr", "compare")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
                 repr: bool = True, compare: bool = True) -> None:  # noqa: A002  (dataclasses' names)
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] = MISSING, init: bool = True,
          repr: bool = True, compare: bool = True) -> Any:  # noqa: A002
    return Field(default, default_factory, init, repr, compare)


def fields(cls_or_instance: Any) -> Tuple[Field, ...]:
    return getattr(cls_or_instance, "__record_fields__")


def replace(instance: T, **changes: Any) -> T:
    """A copy of ``instance`` with ``changes`` applied (init fields only)."""
    values = {f.name: getattr(instance, f.name) for f in fields(instance) if f.init}
    values.update(changes)
    return type(instance)(**values)  # type: ignore[call-arg]


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}: {type(self).__name__} is immutable")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}: {type(self).__name__} is immutable")


def record(cls: Type[T]) -> Type[T]:
    """Make ``cls`` a frozen record over its annotated fields (base records' fields first)."""
    found: Dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record_fields__", ()):
            found[f.name] = f
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        found[name] = f
        if f.default is not MISSING:
            setattr(cls, name, f.default)
        elif isinstance(value, Field):
            delattr(cls, name)
    all_fields = tuple(found.values())
    cls.__record_fields__ = all_fields  # type: ignore[attr-defined]
    cls.__init__ = _make_init(cls.__name__, all_fields)  # type: ignore[misc]
    cls.__setattr__ = _frozen_setattr  # type: ignore[assignment]
    cls.__delattr__ = _frozen_delattr  # type: ignore[assignment]
    return cls


def _make_init(name: str, all_fields: Tuple[Field, ...]) -> Callable[..., None]:
    # Fields are set with object.__setattr__, as dataclasses does. Writing through self.__dict__
    # would be quicker here but makes CPython (3.11+) materialise the instance dict and give up
    # its inline attribute storage: every later attribute read is slower (it showed as +6 µs on
    # the median call of the stdio benchmark).
    scope: Dict[str, Any] = {"MISSING": MISSING, "_set": object.__setattr__}
    params, body = ["self"], []
    seen_default = False
    for i, f in enumerate(all_fields):
        if f.init:
            if f.default is not MISSING:
                scope[f"_d{i}"] = f.default
                params.append(f"{f.name}=_d{i}")
                seen_default = True
            elif f.default_factory is not MISSING:
                scope[f"_f{i}"] = f.default_factory
                params.append(f"{f.name}=MISSING")
                body.append(f"if {f.name} is MISSING: {f.name} = _f{i}()")
                seen_default = True
            elif seen_default:
                raise TypeError(f"{name}: field {f.name!r} without a default follows one with a default")
            else:
                params.append(f.name)
            body.append(f"_set(self, {f.name!r}, {f.name})")
        elif f.default_factory is not MISSING:
            scope[f"_f{i}"] = f.default_factory
            body.append(f"_set(self, {f.name!r}, _f{i}())")
        elif f.default is not MISSING:
            scope[f"_d{i}"] = f.default
            body.append(f"_set(self, {f.name!r}, _d{i})")
    source = f"def __init__({', '.join(params)}):\n    " + "\n    ".join(body or ["pass"]) + "\n"
    exec(source, scope)  # noqa: S102  (our own, fixed source: what dataclasses does too)
    init = scope["__init__"]
    init.__qualname__ = f"{name}.__init__"
    return init


class Record:
    """Base of every record: ``repr``, ``==`` and ``hash`` over its fields (those with
    ``repr=False`` / ``compare=False``, such as ``raw``, are left out)."""

    __slots__ = ()
    _shown: Dict[type, Tuple[str, ...]] = {}
    _compared: Dict[type, Tuple[str, ...]] = {}

    def _names(self, table: Dict[type, Tuple[str, ...]], attr: str) -> Tuple[str, ...]:
        cls = type(self)
        names = table.get(cls)
        if names is None:
            names = table[cls] = tuple(f.name for f in fields(cls) if getattr(f, attr))
        return names

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names(Record._shown, "repr"))
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._names(Record._compared, "compare"))

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in self._names(Record._compared, "compare")))
