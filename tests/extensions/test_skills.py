"""The skills extension (SEP-2640) against a scripted server: listing reads no file; loading
reads SKILL.md once and verifies size, digest and frontmatter; supporting files are read only if
listed, and verified; any mismatch is refused before anything else is read."""
from __future__ import annotations

import hashlib
from typing import Any, Dict, List

import pytest

from mcpclient import CapabilityError, Client, SkillVerificationError, Skills

from conftest import LONG
from helpers import ScriptedServer

SKILL = "skill://pdf/SKILL.md"
FORMS = "skill://pdf/references/FORMS.md"
GOOD = "---\nname: pdf\ndescription: 'Fill PDF forms'\n---\n\nUse the forms.\n"
FORMS_TEXT = "Supporting content.\n"


def entry(text: str, forms: str = FORMS_TEXT, frontmatter: Any = None) -> Dict[str, Any]:
    def item(uri: str, body: str) -> Dict[str, Any]:
        data = body.encode("utf-8")
        return {"uri": uri, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
    return {"uri": SKILL, "frontmatter": frontmatter or {"name": "pdf", "description": "Fill PDF forms"},
            "resources": [item(SKILL, text), item(FORMS, forms)]}


@pytest.fixture
def skill_server():
    servers: List[ScriptedServer] = []

    def make(listed: Dict[str, Any], served: Dict[str, str]) -> ScriptedServer:
        def handle(method, params):
            if method == "skills/list":
                return {"skills": [listed]}
            if method == "skills/get":
                return {"skill": listed}
            if method == "resources/read":
                return {"contents": [{"uri": params["uri"], "mimeType": "text/markdown", "text": served[params["uri"]]}]}
            return {}
        servers.append(ScriptedServer(handle, capabilities={
            "resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}}))
        return servers[-1]

    yield make
    for s in servers:
        s.stop()


def reads(server: ScriptedServer) -> List[str]:
    return [m["params"]["uri"] for m in server.received if m.get("method") == "resources/read"]


def test_listing_reads_nothing_and_loading_verifies_then_serves_listed_files(skill_server):
    server = skill_server(entry(GOOD), {SKILL: GOOD, FORMS: FORMS_TEXT})
    with Client(server.transport, timeout=LONG) as client:
        [skill] = client.extension(Skills).list()
        assert (skill.name, skill.description, len(skill.files)) == ("pdf", "Fill PDF forms", 2)
        assert reads(server) == []  # no prefetch
        loaded = client.extension(Skills).load("pdf")
        assert loaded.text == GOOD and loaded.body.strip() == "Use the forms."
        assert reads(server) == [SKILL]
        assert loaded.read("references/FORMS.md") == FORMS_TEXT.encode()
        with pytest.raises(SkillVerificationError, match="not in the skill's manifest"):
            loaded.read("../../etc/passwd")
        assert reads(server) == [SKILL, FORMS]  # the unlisted file was refused locally
        assert client.extension(Skills).get(SKILL).uri == SKILL


@pytest.mark.parametrize("served, reason", [
    (GOOD.replace("forms.", "FORMS."), "digest"),
    (GOOD + "extra\n", "bytes"),
])
def test_a_tampered_skill_md_is_refused_before_anything_else_is_read(skill_server, served, reason):
    server = skill_server(entry(GOOD), {SKILL: served, FORMS: FORMS_TEXT})
    with Client(server.transport, timeout=LONG) as client:
        with pytest.raises(SkillVerificationError, match=reason):
            client.extension(Skills).load(client.extension(Skills).list()[0])
    assert reads(server) == [SKILL]


def test_a_frontmatter_that_differs_from_the_listing_is_refused(skill_server):
    evil = GOOD.replace("'Fill PDF forms'", "Exfiltrate credentials")
    server = skill_server(entry(evil), {SKILL: evil, FORMS: FORMS_TEXT})  # digest and size match
    with Client(server.transport, timeout=LONG) as client:
        with pytest.raises(SkillVerificationError, match="frontmatter field 'description'"):
            client.extension(Skills).load("pdf")
    assert reads(server) == [SKILL]


def test_a_supporting_file_that_does_not_match_is_refused(skill_server):
    server = skill_server(entry(GOOD), {SKILL: GOOD, FORMS: "changed\n"})
    with Client(server.transport, timeout=LONG) as client:
        loaded = client.extension(Skills).load("pdf")
        with pytest.raises(SkillVerificationError):
            loaded.read(FORMS)


def test_skills_need_the_extension(skill_server):
    server = ScriptedServer(lambda m, p: {}, capabilities={"resources": {}})
    try:
        with Client(server.transport, timeout=LONG) as client:
            with pytest.raises(CapabilityError):
                client.extension(Skills).list()
    finally:
        server.stop()
