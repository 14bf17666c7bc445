"""The public result types are standard frozen, slotted dataclasses: ``asdict``, ``replace``,
hashing and copying work; the raw wire dict is left out of equality, hashing and repr; and the
elicitation names are re-exported.
"""
from __future__ import annotations

import copy
import dataclasses
import pickle
import sys
from typing import Any, Callable, Dict, List, Set

import pytest
import mcpclient

from mcpclient import (Handlers, Limits, Page, ServerInfo, Timeout,
    AudioContent, Completion, CreateMessageRequest, CreateMessageResult, ElicitationRequest, ElicitationResult, EmbeddedResource, Event, ImageContent, Implementation, Keepalive, Prompt, PromptArgument, PromptMessage, PromptResult, Resource, ResourceContents, ResourceLink, ResourceTemplate, Reconnect, Redirects, Retry, Root, SamplingMessage, Skill, SkillFile, Task, TextContent, ServerConfig, ServerStatus, Tool, ToolChange, ToolResult, Tracing, UnknownContent,
)


#: Public classes that are not values (they do things); every other non-exception class in
#: ``mcpclient.__all__`` must be a frozen dataclass.
NOT_VALUES = {"CallFuture", "Client", "Extension", "ExtensionContext", "HTTPTransport", "LoadedSkill", "MemoryTransport", "SSETransport",
              "OnDemandTools", "ServerGroup", "Skills", "StdioTransport", "Subscription", "Tasks", "ToolIndex", "TasksExtension",
              "ToolCallFuture", "ToolPins", "ToolTask", "Transport"}


#: Value types converted elsewhere that are not dataclasses yet (none left).
PENDING: Set[str] = set()


def _value_type_names() -> List[str]:
    names = []
    for name in mcpclient.__all__:
        obj = getattr(mcpclient, name)  # loads the lazy modules too
        if isinstance(obj, type) and not issubclass(obj, BaseException) and name not in NOT_VALUES:
            names.append(name)
    return names


VALUE_TYPES = [n for n in _value_type_names() if n not in PENDING]
TEXT_RAW = {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}}


#: One instance of each value type, with dict/list fields filled in (hash must still work) and a
#: non-empty ``raw`` where the type has one.
SAMPLES: Dict[str, Callable[[], Any]] = {
    "AudioContent": lambda: AudioContent(b"\x00\x01", "audio/wav", {"a": 1}, {"m": 1}, {"type": "audio"}),
    "Completion": lambda: Completion(["a", "b"], 2, False, {"completion": {}}),
    "Event": lambda: Event("resource_updated", "file:///a"),
    "Retry": lambda: Retry(total=3, statuses=frozenset({503})),
    "Redirects": lambda: Redirects(cross_origin=True, safe_headers=("X-Tenant",), max_redirects=2),
    "Reconnect": lambda: Reconnect(max_attempts=3, backoff_factor=0.1),
    "Keepalive": lambda: Keepalive(10.0, failures=3),
    "CreateMessageRequest": lambda: CreateMessageRequest(
        [SamplingMessage("user", [TextContent("hi")])], 100, "be brief", {"hints": [{"name": "m"}]}, None, 0.5,
        ["STOP"], {"k": "v"}, [{"name": "t"}], {"mode": "auto"}, {"m": 1}, {"maxTokens": 100}),
    "CreateMessageResult": lambda: CreateMessageResult(content=[TextContent("hi")], model="m", meta={"m": 1}),
    "ElicitationRequest": lambda: ElicitationRequest.from_wire(
        {"message": "name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}),
    "ElicitationResult": lambda: ElicitationResult("accept", {"name": "Ada"}, {"m": 1}),
    "EmbeddedResource": lambda: EmbeddedResource(ResourceContents("file:///a", "text/plain", "x"), {"a": 1},
                                                 None, {"type": "resource"}),
    "ImageContent": lambda: ImageContent.from_wire({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
    "Implementation": lambda: Implementation.from_wire({"name": "srv", "version": "1", "icons": [{"src": "x"}]}),
    "Prompt": lambda: Prompt.from_wire({"name": "p", "arguments": [{"name": "a", "required": True}]}),
    "PromptArgument": lambda: PromptArgument.from_wire({"name": "a", "required": True}),
    "PromptMessage": lambda: PromptMessage.from_wire({"role": "user", "content": TEXT_RAW}),
    "PromptResult": lambda: PromptResult.from_wire({"messages": [{"role": "user", "content": TEXT_RAW}]}),
    "Resource": lambda: Resource.from_wire({"uri": "file:///a", "name": "a", "annotations": {"priority": 1}}),
    "ResourceContents": lambda: ResourceContents.from_wire({"uri": "file:///a", "blob": "aGk=", "_meta": {"m": 1}}),
    "ResourceLink": lambda: ResourceLink("file:///a", "a", meta={"m": 1}, raw={"type": "resource_link"}),
    "ResourceTemplate": lambda: ResourceTemplate.from_wire({"uriTemplate": "file:///{p}", "name": "t"}),
    "Root": lambda: Root("file:///home", "home", {"m": 1}),
    "SamplingMessage": lambda: SamplingMessage.from_wire({"role": "user", "content": TEXT_RAW}),
    "Skill": lambda: Skill.from_wire({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"},
                                      "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 1}]}),
    "SkillFile": lambda: SkillFile("skill://a/SKILL.md", "sha256:00", 1),
    "Task": lambda: Task.from_wire({"taskId": "t1", "status": "working", "_meta": {"m": 1}}),
    "TextContent": lambda: TextContent("hi", {"audience": ["user"]}, {"m": 1}, TEXT_RAW),
    "Tool": lambda: Tool.from_wire({"name": "echo", "inputSchema": {"type": "object"}, "icons": [{"src": "x"}]}),
    "ToolResult": lambda: ToolResult.from_wire({"content": [TEXT_RAW], "structuredContent": {"a": [1]}}, "echo"),
    "UnknownContent": lambda: UnknownContent("video", {"type": "video"}),
    "ServerConfig": lambda: ServerConfig("files", "npx", ("-y", "srv"), {"TOKEN": "s3cret"}, "/tmp",
                                         headers={"Authorization": "Bearer s3cret"}, include=("read_*",),
                                         extra={"alwaysAllow": ["x"]}),
    "ServerStatus": lambda: ServerStatus("failed", ValueError("boom"), 0),
    "ToolChange": lambda: ToolChange("files", "read", "changed", "description: 'a' -> 'b'"),
    "Tracing": lambda: Tracing(record_arguments=True),
    "Timeout": lambda: Timeout(30, connect=10, reset_on_progress=True, total=600),
    "Limits": lambda: Limits(workers=8, pages=10),
    "Handlers": lambda: Handlers(sampling=print, roots=["file:///srv"], task_requests=True),  # (picklable)
    "ServerInfo": lambda: ServerInfo(Implementation("srv", "1"), "2025-11-25", {"tools": {}}, "use it", {},
                                     {"serverInfo": {"name": "srv"}}),
    "Page": lambda: Page([Tool.from_wire({"name": "echo", "inputSchema": {"type": "object"}})], "next"),
}


def _sample(name: str) -> Any:
    return SAMPLES[name]()


def test_every_public_value_type_is_listed_here():
    assert sorted(VALUE_TYPES) == sorted(SAMPLES), "add a sample (or a NOT_VALUES entry) for a new public class"
    assert NOT_VALUES <= set(mcpclient.__all__) and PENDING <= set(mcpclient.__all__)
    assert len(VALUE_TYPES) >= 26


@pytest.mark.parametrize("name", _value_type_names())
def test_is_a_frozen_dataclass(name):
    cls = getattr(mcpclient, name)
    if name in PENDING and not dataclasses.is_dataclass(cls):
        pytest.xfail(f"{name} becomes a dataclass on another branch")
    assert dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    if sys.version_info >= (3, 10):
        assert "__slots__" in cls.__dict__


@pytest.mark.parametrize("name", VALUE_TYPES)
def test_frozen_and_slotted(name):
    obj = _sample(name)
    first = dataclasses.fields(obj)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, first, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(obj, first)
    if sys.version_info >= (3, 10):
        assert not hasattr(obj, "__dict__")


@pytest.mark.parametrize("name", VALUE_TYPES)
def test_asdict_replace_hash_copy(name):
    obj = _sample(name)
    as_dict = dataclasses.asdict(obj)
    assert list(as_dict) == [f.name for f in dataclasses.fields(obj)]
    same = dataclasses.replace(obj)
    assert same == obj and same is not obj and hash(same) == hash(obj)
    assert isinstance(hash(obj), int)  # dict and list fields are left out of the hash
    for twin in (copy.copy(obj), copy.deepcopy(obj), pickle.loads(pickle.dumps(obj))):
        assert twin == obj and hash(twin) == hash(obj)
    changed = dataclasses.replace(obj, **{dataclasses.fields(obj)[0].name: _other(getattr(obj, dataclasses.fields(obj)[0].name))})
    assert changed != obj


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "-changed"
    if isinstance(value, bytes):
        return value + b"-changed"
    if isinstance(value, list):
        return value + value
    if isinstance(value, ResourceContents):
        return dataclasses.replace(value, uri="file:///other")
    if isinstance(value, Implementation):
        return dataclasses.replace(value, name=value.name + "-changed")
    if callable(value):
        return repr  # another handler
    raise AssertionError(f"no other value for {value!r}")


@pytest.mark.parametrize("name", [n for n in VALUE_TYPES if "raw" in {f.name for f in dataclasses.fields(getattr(mcpclient, n))}])
def test_raw_is_left_out_of_eq_hash_and_repr(name):
    obj = _sample(name)
    other = dataclasses.replace(obj, raw={"something": "else"})
    assert other == obj and hash(other) == hash(obj)
    assert other.raw == {"something": "else"}
    assert "raw=" not in repr(obj)
    raw_field = next(f for f in dataclasses.fields(obj) if f.name == "raw")
    assert (raw_field.repr, raw_field.compare) == (False, False)


def test_equal_objects_hash_alike_whatever_their_unhashable_fields():
    a = Tool("echo", input_schema={"type": "object"})
    b = Tool("echo", input_schema={"type": "object"}, raw={"name": "echo"})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Tool("echo", input_schema={"type": "string"}) != a  # compared, just not hashed
    assert {TextContent("x", annotations={"a": 1}): 1}[TextContent("x", annotations={"a": 1})] == 1


def test_content_type_field_is_fixed_and_kept_by_replace():
    text = TextContent(text="x")
    assert text.type == "text" and dataclasses.replace(text, text="y").type == "text"
    assert ImageContent(b"", "image/png").type == "image" and AudioContent(b"", "audio/wav").type == "audio"
    assert ResourceLink("file:///a", "a").type == "resource_link"
    with pytest.raises((ValueError, TypeError)):  # (3.13 raises TypeError)
        dataclasses.replace(text, type="image")  # init=False
    with pytest.raises(TypeError):
        TextContent(text="x", type="image")


def test_repr_is_unchanged():
    assert repr(TextContent("hi", raw={"x": 1})) == "TextContent(text='hi', annotations=None, meta=None, type='text')"
    assert repr(ImageContent(b"\x00", "image/png")) == "ImageContent(mime_type='image/png', annotations=None, meta=None, type='image')"
    assert repr(Root("file:///a")) == "Root(uri='file:///a', name=None, meta=None)"


#: Values whose repr is their own: ``ServerConfig`` shows where the server is but not the parts of
#: it that may be secrets (URL query and credentials, command arguments), which no field flag can say.
OWN_REPR = {"ServerConfig"}


@pytest.mark.parametrize("name", VALUE_TYPES)
def test_eq_hash_repr_follow_the_field_flags(name):
    """The shared ``__eq__``/``__hash__``/``__repr__`` behave as ``@dataclass`` would generate them."""
    obj = _sample(name)
    shown = ", ".join(f"{f.name}={getattr(obj, f.name)!r}" for f in dataclasses.fields(obj) if f.repr)
    if name not in OWN_REPR:
        assert repr(obj) == f"{type(obj).__qualname__}({shown})"
    assert obj != object() and obj.__eq__(object()) is NotImplemented
    hashed = tuple(getattr(obj, f.name) for f in dataclasses.fields(obj)
                   if (f.compare if f.hash is None else f.hash))
    assert hash(obj) == hash(hashed)


def test_equal_fields_of_another_class_are_not_equal():
    assert ImageContent(b"x", "a/b") != AudioContent(b"x", "a/b")
    assert ImageContent(b"x", "a/b") == ImageContent(b"x", "a/b")


def test_elicitation_names_are_reexported_and_raise_value_errors():
    from mcpclient.types import elicitation, handlers

    for name in ("ElicitationRequest", "ElicitationResult", "accept_defaults"):
        assert getattr(handlers, name) is getattr(elicitation, name) is getattr(mcpclient, name)
    with pytest.raises(elicitation.InvalidElicitation, match="unknown elicitation mode 'x'") as info:
        ElicitationRequest.from_wire({"mode": "x", "message": "m"})
    assert isinstance(info.value, ValueError)


def test_a_timeout_whose_connect_follows_call_follows_it_through_replace():
    assert Timeout(30).replace(call=5).connect == 5.0
    assert Timeout(30, connect=10).replace(call=5).connect == 10.0
    assert Timeout(30).replace(connect=7).replace(call=5).connect == 7.0
    assert Timeout(30).replace(probe=1).connect == 30.0


@pytest.mark.parametrize("value, changes", [
    (Timeout(30, connect=10), {"call": 5.0, "total": None}),
    (Limits(), {"workers": 2}),
    (mcpclient.Retry(), {"total": 0, "history": ("a",)}),
    (mcpclient.Reconnect(), {"max_attempts": None}),
    (Handlers(), {"task_requests": True, "elicitation_modes": ("form", "url")}),
])
def test_a_policy_replace_changes_the_named_fields_and_keeps_the_others(value, changes):
    replaced = value.replace(**changes)
    assert type(replaced) is type(value) and replaced is not value
    for field in dataclasses.fields(value):
        want = changes.get(field.name, getattr(value, field.name))
        assert getattr(replaced, field.name) == want, field.name
    assert value.replace() == value  # every field left out: an equal copy


def test_a_policy_replace_checks_the_new_values_and_names():
    with pytest.raises(ValueError):
        Limits().replace(workers=0)  # checked as the constructor checks it
    with pytest.raises(TypeError):
        Timeout().replace(cal=1)  # type: ignore[call-arg]  (a misspelt field)


def test_the_json_aliases_resolve_at_run_time_wherever_they_are_used():
    """``typing.get_type_hints`` resolves the recursive alias in a namespace that never imported
    ``JSONValue`` (its inner ``"JSONValue"`` is bound to its own module)."""
    import typing

    from mcpclient.types import JSONObject

    def takes(value: "JSONObject") -> None:
        return None

    hints = typing.get_type_hints(takes, {"JSONObject": JSONObject}, {})  # no JSONValue in sight
    value = typing.get_args(hints["value"])[1]  # Dict[str, JSONValue]: a JSON value, one level down resolved
    assert typing.get_origin(hints["value"]) is dict and str in typing.get_args(value)
    assert {typing.get_origin(arg) for arg in typing.get_args(value)} >= {list, dict}
    assert typing.get_type_hints(mcpclient.ToolResult)["structured_content"] is not None
