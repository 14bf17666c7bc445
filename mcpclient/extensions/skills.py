"""The skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): skills a server offers.

A skill is a ``SKILL.md`` (YAML frontmatter + instructions) plus supporting files, all served as
resources. ``skills/list`` gives each skill's manifest: every file's URI, SHA-256 digest and size.
They are reached through ``client.extension(Skills)`` (``Skills``: ``list()``, ``get(uri)``,
``load(skill)``). Loading is deliberate and verified: nothing is fetched before ``load()``; then
``SKILL.md`` is read and checked against the manifest (size, digest, and its frontmatter field
by field) before anything else is read, and a supporting file is read only if the manifest
lists it, and checked the same way. Any mismatch raises ``SkillVerificationError`` and nothing
of the skill is used.
"""
from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union

from ..protocol.params import contents, pages
from . import base as extensions
from ..errors import MCPError, ProtocolError
from .._engine.deadline import Deadline
from .._engine.chained import ChainedFuture
from .._engine.futures import CallFuture
from .._util import lazy
from .._util.waiting import wait_for
from .._util.sentinel import DEFAULT
from ..policies.timeout import CallTimeout
from ..types._base import _SLOTS, _Value, Raw
from ..types._json import JSONObject
from ..types import ResourceContents

if TYPE_CHECKING:
    from .._engine.requester import Requester

__all__ = ["LoadedSkill", "Skill", "SkillFile", "SkillVerificationError", "Skills", "SKILLS_EXTENSION"]


SKILLS_EXTENSION = extensions.SKILLS
MAX_FILES = 512
MAX_TOTAL_SIZE = 16 * 1024 * 1024


class SkillVerificationError(MCPError):
    """A skill's content did not match its manifest (or cannot be verified); nothing of it is used.

    Retrying reads the same content and fails again unless the server's skill changed; never use the
    content anyway.
    """

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        self.reason = reason
        super().__init__(f"skill {uri}: {reason}")


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class SkillFile(_Value):
    """One file of a skill's manifest: its URI, ``sha256:<hex>`` digest and size in bytes."""

    uri: str
    digest: str
    size: int


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Skill(_Value):
    """A manifest entry from ``skills/list`` / ``skills/get``. ``files`` is None for a
    ``"dynamic"`` skill (its files are not listed, so they cannot be verified)."""

    uri: str
    frontmatter: JSONObject = field(hash=False)
    files: Optional[List[SkillFile]] = field(hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        """The skill's name: its frontmatter ``name``, else the name of its directory."""
        return str(self.frontmatter.get("name", posixpath.basename(posixpath.dirname(self.uri))))

    @property
    def description(self) -> str:
        """The frontmatter ``description`` (``""`` if absent)."""
        return str(self.frontmatter.get("description", ""))

    @classmethod
    def from_wire(cls, raw: object) -> "Skill":
        """Build a ``Skill`` manifest from a ``skills/list`` entry.

        Raises ``ProtocolError`` if the entry is malformed.
        """
        if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str) or not isinstance(raw.get("frontmatter"), dict):
            raise ProtocolError("skill entry: expected an object with 'uri' and 'frontmatter'")
        resources = raw.get("resources")
        if resources == "dynamic":
            return cls(raw["uri"], raw["frontmatter"], None, raw)
        if not isinstance(resources, list):
            raise ProtocolError(f"skill {raw['uri']}: 'resources' must be a list or \"dynamic\"")
        files = []
        for entry in resources:
            if not (isinstance(entry, dict) and isinstance(entry.get("uri"), str) and isinstance(entry.get("digest"), str)
                    and isinstance(entry.get("size"), int) and not isinstance(entry.get("size"), bool)):
                raise ProtocolError(f"skill {raw['uri']}: a resources entry lacks uri, digest or size")
            files.append(SkillFile(entry["uri"], entry["digest"], entry["size"]))
        return cls(raw["uri"], raw["frontmatter"], files, raw)


class LoadedSkill:
    """A verified skill: ``text`` is its ``SKILL.md``; ``read(path)`` reads a supporting file
    (relative to the skill's directory, or its full URI) — only files its manifest lists, each
    verified before it is returned."""

    def __init__(self, skill: Skill, text: str, reader: Callable[[str], List[ResourceContents]]) -> None:
        self.skill = skill
        self.text = text
        self._read = reader

    @property
    def body(self) -> str:
        """``SKILL.md`` without its frontmatter."""
        return split_frontmatter(self.text)[1]

    def read(self, path: str) -> bytes:
        """Read one of the skill's files, verified against the manifest.

        Args:
            path: a path relative to the skill's directory, or a file's full URI.

        Returns:
            The file's bytes, whose size and digest match the manifest.

        Raises:
            SkillVerificationError: the file is not in the manifest (nothing is read), or its content
                does not match.
            MCPError: reading it failed (as ``Client.read_resource`` does).
        """
        base = self.skill.uri.rsplit("/", 1)[0] + "/"
        uri = path if "://" in path else base + posixpath.normpath(path).lstrip("/")
        listed = {f.uri: f for f in self.skill.files or []}
        if uri not in listed:
            raise SkillVerificationError(self.skill.uri, f"{uri} is not in the skill's manifest; not read")
        return verified_bytes(self.skill.uri, listed[uri], self._read(uri))

    def __repr__(self) -> str:
        return f"<LoadedSkill {self.skill.name!r} {self.skill.uri}>"


def check_limits(skill: Skill) -> None:
    if skill.files is None:
        raise SkillVerificationError(skill.uri, "a dynamic skill lists no files, so it cannot be verified")
    if len(skill.files) > MAX_FILES or sum(f.size for f in skill.files) > MAX_TOTAL_SIZE:
        raise SkillVerificationError(skill.uri, f"over the limits ({MAX_FILES} files, {MAX_TOTAL_SIZE} bytes)")
    if not any(f.uri == skill.uri for f in skill.files):
        raise SkillVerificationError(skill.uri, "the manifest does not list its SKILL.md")


def verified_bytes(skill_uri: str, expected: SkillFile, contents: List[ResourceContents]) -> bytes:
    """The file's bytes, if their size and SHA-256 match the manifest."""
    if len(contents) != 1:
        raise SkillVerificationError(skill_uri, f"{expected.uri}: expected one content, got {len(contents)}")
    item = contents[0]
    data = item.blob if item.blob is not None else (item.text or "").encode("utf-8")
    if len(data) != expected.size:
        raise SkillVerificationError(skill_uri, f"{expected.uri}: {len(data)} bytes, the manifest says {expected.size}")
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != expected.digest.lower():
        raise SkillVerificationError(skill_uri, f"{expected.uri}: its digest does not match the manifest")
    return data


def split_frontmatter(text: str) -> "tuple[Optional[str], str]":
    """(frontmatter YAML or None, body)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            return "\n".join(lines[1:end]), "\n".join(lines[end + 1:])
    return None, text


def parse_frontmatter(yaml_text: str, uri: str) -> Dict[str, Any]:
    """The frontmatter as a dict: with PyYAML if it is installed, else a strict reader of flat
    ``key: value`` lines (anything fancier cannot be verified without PyYAML, and is refused)."""
    try:
        yaml = lazy.load("yaml")  # PyYAML, if the program has it
    except ImportError:
        return _flat_yaml(yaml_text, uri)
    try:
        value = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        raise SkillVerificationError(uri, f"its frontmatter is not valid YAML: {exc}") from None
    if not isinstance(value, dict):
        raise SkillVerificationError(uri, "its frontmatter is not a mapping")
    return value


def _flat_yaml(text: str, uri: str) -> Dict[str, Any]:
    found: Dict[str, Any] = {}
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or line[:1].isspace() or not key.strip():
            raise SkillVerificationError(uri, "its frontmatter uses YAML this client cannot verify without PyYAML")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            found[key.strip()] = value[1:-1]
            continue
        if value in ("", "|", ">") or value[:1] in "[{&*!|>%@`" or ": " in value or " #" in value:
            raise SkillVerificationError(uri, "its frontmatter uses YAML this client cannot verify without PyYAML")
        found[key.strip()] = _SCALARS.get(value.lower(), value) if value.lower() in _SCALARS else _number(value)
    return found


_SCALARS: Dict[str, Any] = {"true": True, "false": False, "null": None, "~": None}


def _number(value: str) -> Any:
    """YAML reads plain integers and floats as numbers; everything else stays a string."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


def verify_skill_md(skill: Skill, contents: List[ResourceContents]) -> str:
    """``SKILL.md``'s text, once its size, digest and frontmatter match the manifest entry."""
    check_limits(skill)
    expected = next(f for f in skill.files or [] if f.uri == skill.uri)
    data = verified_bytes(skill.uri, expected, contents)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillVerificationError(skill.uri, "SKILL.md is not UTF-8 text") from None
    yaml_text, _ = split_frontmatter(text)
    if yaml_text is None:
        raise SkillVerificationError(skill.uri, "SKILL.md has no frontmatter")
    parsed = parse_frontmatter(yaml_text, skill.uri)
    for key in sorted(set(parsed) | set(skill.frontmatter)):
        if _normal(parsed.get(key)) != _normal(skill.frontmatter.get(key)):
            raise SkillVerificationError(skill.uri, f"its frontmatter field {key!r} differs from the listing")
    return text


def _normal(value: Any) -> Any:
    """Compare YAML scalars with JSON ones loosely only where YAML typing differs (dates, numbers as text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value if value is None or isinstance(value, (str, bool)) else str(value)


# --- the requests --------------------------------------------------------------------------------

def require(capabilities: Dict[str, Any], method: str) -> None:
    """``CapabilityError`` unless the server declared the skills extension (nothing is sent).
    Skills are server-gated only: the extension defines no client settings, so the client
    declares nothing (the wire stays as it was)."""
    extensions.require(capabilities, SKILLS_EXTENSION, method)


def listing() -> Callable[[Any], Any]:
    """The transform of ``skills/list`` (every page)."""
    return pages("skills/list", "skills", Skill.from_wire)


def entry(raw: Any) -> Skill:
    """The transform of ``skills/get``."""
    if not isinstance(raw, dict):
        raise ProtocolError("skills/get result is not an object")
    return Skill.from_wire(raw.get("skill"))


def load(requester: Requester, capabilities: Dict[str, Any], skill: Union[str, Skill], deadline: Deadline,
         timeout: Any) -> CallFuture:
    """``Skills.load``: find the manifest (by name, URI or as given), then read and verify
    ``SKILL.md``; one future for the whole chain, within one ``deadline``. The ``LoadedSkill``'s
    later ``read(path)`` calls each get a deadline of their own from ``timeout``."""
    session = requester.session
    if isinstance(skill, Skill):
        first: CallFuture = CallFuture.completed(session, "skills/get", skill)
    elif "://" in skill:
        require(capabilities, "skills/get")
        first = requester.call("skills/get", {"uri": skill}, entry, deadline)
    else:
        require(capabilities, "skills/list")
        first = requester.call("skills/list", None, listing(), deadline)

    def chosen(found: Any) -> Skill:
        if isinstance(found, Skill):
            return found
        named = [s for s in found if s.name == skill]
        if len(named) != 1:
            raise ValueError(f"{len(named)} skills are named {skill!r}; pass its URI or Skill")
        return named[0]

    def read(found: Any) -> CallFuture:
        manifest = chosen(found)
        check_limits(manifest)

        def reader(uri: str) -> List[ResourceContents]:
            return requester.call("resources/read", {"uri": uri}, contents, requester.deadline(timeout)).result()  # type: ignore[no-any-return]

        text = requester.call("resources/read", {"uri": manifest.uri}, contents, deadline)
        return ChainedFuture(session, "resources/read", text,
                             lambda got: LoadedSkill(manifest, verify_skill_md(manifest, got), reader))
    return ChainedFuture(session, "Skills.load", first, read)


class Skills(extensions.Feature):
    """The skills a server offers, on the client that reaches it: ``client.extension(Skills)``.

    Example::

        skills = client.extension(Skills)
        for skill in skills.list():
            print(skill.name, skill.description)
        loaded = skills.load("pdf-forms")       # SKILL.md read and verified now
        print(loaded.body, loaded.read("forms/fill.py"))

    Each method blocks, within ``timeout`` (omitted: the client's; ``None``: no limit), and
    raises ``CapabilityError`` (nothing sent) when the server declared no skills.
    """

    def list(self, *, timeout: CallTimeout = DEFAULT) -> List[Skill]:
        """The skills the server offers (``skills/list``, all pages): manifests only, no file is read."""
        owner = self._owner
        require(owner.server_capabilities(), "skills/list")
        return wait_for(owner.call, "skills/list", None, listing(), owner.deadline(timeout))  # type: ignore[no-any-return]

    def get(self, uri: str, *, timeout: CallTimeout = DEFAULT) -> Skill:
        """One skill's manifest by its ``SKILL.md`` URI (``skills/get``; unlisted skills too)."""
        owner = self._owner
        require(owner.server_capabilities(), "skills/get")
        if not isinstance(uri, str) or not uri:
            raise TypeError("uri must be a non-empty string")
        return wait_for(owner.call, "skills/get", {"uri": uri}, entry, owner.deadline(timeout))  # type: ignore[no-any-return]

    def load(self, skill: Union[str, Skill], *, timeout: CallTimeout = DEFAULT) -> LoadedSkill:
        """Load a skill by name, ``SKILL.md`` URI, or ``Skill``: ``SKILL.md`` is read now and
        checked against the manifest (size, digest, frontmatter); ``read(path)`` serves only
        listed, verified files (each within a ``timeout`` of its own).

        Raises:
            SkillVerificationError: the content does not match the manifest (nothing else is read then).
        """
        owner = self._owner
        return wait_for(load, owner, owner.server_capabilities(), skill, owner.deadline(timeout), timeout)  # type: ignore[arg-type, no-any-return]
