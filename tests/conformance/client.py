"""The client the MCP conformance suite runs, once per scenario (see run.sh).

    python tests/conformance/client.py <server-url>

The suite appends the mock server's URL as the last argument and names the scenario in
MCP_CONFORMANCE_SCENARIO, the revision its mock speaks in MCP_CONFORMANCE_PROTOCOL_VERSION and,
for scenarios that need data, a JSON object in MCP_CONFORMANCE_CONTEXT. This script does what
the scenario asks with mcpclient's public API only, logs to stderr, and exits 0 when it got
through (the suite's checks decide the verdict), 1 when a step failed, 2 on a usage error.
"""
from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any, Callable, Dict

from mcpclient import Client, Handlers, MCPError, SkillVerificationError, Skills, accept_defaults

log = logging.getLogger("conformance")

#: Revisions mcpclient can be pinned to (``protocol=``); others run with "auto".
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")


class ScenarioFailed(Exception):
    """The server answered, but not what the scenario promises."""


def tool_names(client: Client) -> list:
    names = [tool.name for tool in client.list_tools()]
    log.info("tools: %s", names)
    return names


def call(client: Client, name: str, arguments: Dict[str, Any], **kwargs: Any) -> Any:
    result = client.call_tool(name, arguments, **kwargs)
    log.info("%s -> is_error=%s %s", name, result.is_error, [getattr(c, "text", c) for c in result.content])
    if result.is_error:
        raise ScenarioFailed(f"tool {name} returned an error result")
    return result


# --- one function per scenario: (client, context) -> None; raise to fail ------------------------

def initialize(client: Client, context: Dict[str, Any]) -> None:
    """The handshake (done by connect), then tools/list if the server offers tools: this mock
    declares no capabilities, and mcpclient sends nothing a server did not declare."""
    if "tools" in client.server.capabilities:
        tool_names(client)
    else:
        log.info("the server declares no tools capability; not listing tools")


def tools_call(client: Client, context: Dict[str, Any]) -> None:
    if "add_numbers" not in tool_names(client):
        raise ScenarioFailed("the server lists no add_numbers tool")
    call(client, "add_numbers", {"a": 5, "b": 3})


def sse_retry(client: Client, context: Dict[str, Any]) -> None:
    """The POST's SSE stream is closed after a priming event (retry: 500); the result must be
    taken from the GET stream the client reopens with Last-Event-ID (SEP-1699)."""
    tool_names(client)
    call(client, "test_reconnection", {}, timeout=10.0)


def json_schema_preservation(client: Client, context: Dict[str, Any]) -> None:
    """Send json_schema_2020_12_tool's inputSchema, exactly as received, to json_schema_echo."""
    tools = {tool.name: tool for tool in client.list_tools()}
    log.info("tools: %s", list(tools))
    focal = tools.get("json_schema_2020_12_tool")
    if focal is None or "json_schema_echo" not in tools:
        raise ScenarioFailed("the server lists no json_schema_2020_12_tool / json_schema_echo")
    call(client, "json_schema_echo", {"schema": focal.input_schema})


def elicitation_defaults(client: Client, context: Dict[str, Any]) -> None:
    """The tool makes the server send elicitation/create with a default for every field; the
    ready-made ``accept_defaults`` handler (set for every scenario) accepts it with them (SEP-1034)."""
    tool_names(client)
    call(client, "test_client_elicitation_defaults", {})


def request_state(client: Client, context: Dict[str, Any]) -> None:
    """SEP-2322 (multi-round-trip requests): each test_mrtr_* tool answers input_required (or, for
    no_result_type, a result without resultType); mcpclient answers the elicitation with the
    accept_defaults handler and repeats the call with a new id, echoing requestState exactly."""
    names = tool_names(client)
    for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"):
        if name not in names:
            raise ScenarioFailed(f"the server lists no {name}")
        call(client, name, {})


def everything(client: Client, context: Dict[str, Any]) -> None:
    """Use every method the server offers once: list and call each tool, list and read each
    resource, list and get each prompt (the mock checks the routing headers of each)."""
    for name, arguments in plain_calls(client):
        call(client, name, arguments)
    if "resources" in client.server.capabilities:
        for resource in client.list_resources():
            log.info("read %s -> %d contents", resource.uri, len(client.read_resource(resource.uri)))
    if "prompts" in client.server.capabilities:
        for prompt in client.list_prompts():
            log.info("prompt %s -> %d messages", prompt.name, len(client.get_prompt(prompt.name).messages))


def plain_calls(client: Client) -> list:
    """(name, arguments) for every listed tool: required string arguments get "x", others are left out.
    Tools with invalid x-mcp-header annotations were dropped by list_tools already."""
    calls = []
    for tool in client.list_tools():
        properties = tool.input_schema.get("properties") or {}
        required = tool.input_schema.get("required") or []
        calls.append((tool.name, {key: "x" for key in required if (properties.get(key) or {}).get("type") == "string"}))
    log.info("tools to call: %s", [name for name, _ in calls])
    return calls


def skills(client: Client, context: Dict[str, Any]) -> None:
    """SEP-2640: list the skills (reading none of their files); for the verify-* scenarios load
    the first one, which the mock has tampered with: Skills.load must refuse it before any
    supporting file is read."""
    listed = client.extension(Skills).list()
    log.info("skills: %s", [(s.name, s.uri) for s in listed])
    if os.environ.get("MCP_CONFORMANCE_SCENARIO", "").endswith("no-prefetch") or not listed:
        return
    try:
        loaded = client.extension(Skills).load(listed[0])
    except SkillVerificationError as exc:
        log.info("refused, as it should be: %s", exc)
        return
    raise ScenarioFailed(f"the tampered skill {loaded.skill.uri} was accepted")


CIMD_URL = "https://conformance-test.local/client-metadata.json"  # the suite's client metadata document


def oauth_for(scenario: str, context: Dict[str, Any]) -> Any:
    """The OAuth setup an auth/* scenario expects (None for the others)."""
    if not scenario.startswith("auth/"):
        return None
    from mcpclient.auth import (AuthorizationCode, ClientCredentials, EnterpriseExchange, JWTBearer, OAuth,
                                headless_authorize)

    if scenario == "auth/client-credentials-basic":
        return OAuth(ClientCredentials(context["client_id"], client_secret=context["client_secret"]))
    if scenario == "auth/client-credentials-jwt":
        return OAuth(ClientCredentials(context["client_id"], private_key=context["private_key_pem"]))
    if scenario == "auth/wif-jwt-bearer":
        return OAuth(JWTBearer(context["valid_jwt"], client_id=context.get("client_id")))
    if scenario == "auth/enterprise-managed-authorization":
        return OAuth(EnterpriseExchange(id_token=context["idp_id_token"],
                                        idp_token_endpoint=context["idp_token_endpoint"],
                                        client_id=context["client_id"], client_secret=context["client_secret"],
                                        idp_client_id=context.get("idp_client_id")))
    return OAuth(AuthorizationCode(headless_authorize(), client_id=context.get("client_id"),
                                   client_secret=context.get("client_secret"), client_metadata_url=CIMD_URL),
                 issuer=context.get("issuer"))


def tools_list_and_call(client: Client, context: Dict[str, Any]) -> None:
    """The auth scenarios' MCP work: list the tools, call test-tool."""
    names = tool_names(client)
    if "test-tool" in names:
        call(client, "test-tool", {})


def default(client: Client, context: Dict[str, Any]) -> None:
    """Anything else (auth/*, the 2026-07-28 and extension scenarios): list tools, then replay
    the context's toolCalls if it has any (http-custom-headers)."""
    if "tools" in client.server.capabilities:
        tool_names(client)
    for tool_call in context.get("toolCalls") or []:
        call(client, tool_call["name"], tool_call.get("arguments") or {})


SCENARIOS: Dict[str, Callable[[Client, Dict[str, Any]], None]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": everything,
    "http-invalid-tool-headers": everything,
    "sep-2640-client-no-prefetch": skills,
    "sep-2640-client-verify-digest": skills,
    "sep-2640-client-verify-size": skills,
    "sep-2640-client-verify-frontmatter": skills,
}


def main(argv: list) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG,
                        format="%(relativeCreated)7.0f ms %(threadName)s %(name)s %(levelname)s %(message)s")
    if len(argv) < 2 or not argv[-1].lower().startswith(("http://", "https://")):
        log.error("usage: client.py <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
        return 2
    url = argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    # Speak the revision the mock speaks when mcpclient knows it; else negotiate.
    protocol = revision if revision in REVISIONS else "auto"
    run = SCENARIOS.get(scenario, tools_list_and_call if scenario.startswith("auth/") else default)
    log.info("scenario %r at %s (protocol=%r, handler %s) against %s",
             scenario, revision or "?", protocol, run.__name__, url)
    if protocol == "auto" and revision:
        log.warning("mcpclient does not speak %s; negotiating", revision)
    try:
        auth = oauth_for(scenario, context)
        with Client(url, protocol=protocol, timeout=15.0, auth=auth, handlers=Handlers(elicitation=accept_defaults)) as client:
            log.info("connected: server %s, protocol %s", client.server.name, client.server.protocol_version)
            run(client, context)
    except (MCPError, ScenarioFailed) as exc:
        log.error("scenario %s failed: %s: %s", scenario, type(exc).__name__, exc)
        return 1
    log.info("scenario %s done", scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
