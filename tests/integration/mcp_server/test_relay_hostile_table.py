"""The hostile table for the relay (``agentsurface mcp --relay``), as
tests/unit/server/test_hostile_table.py has it for the HTTP entry points: what an agent can send
through the relay to the person's own tab —
made-up tools, evidence smuggled into the input, wrong types, megabytes, a name with a control
character — is answered with a typed code, applies nothing, leaves no confirmation waiting for
the person, and the tab's own audit records the refusals its pipeline saw. (Evidence the server
mints cannot be forged through the relay at all: the tab's bridge asks its server for it, after
the person approved in the tab.) Connections that are not the paired tab are refused in
test_relay_listener.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentsurface.mcp_server.guard import MAX_ARGUMENT_BYTES, refusal
from agentsurface.mcp_server.results import call_result
from tests.unit.mcp_server.test_mapping import _call

from .test_relay_listener import Relay, _paired_tab, relay  # noqa: F401  (the fixture)

OPEN = "view_bank__vault__openDrawer"

# (case, tool name, arguments, the code the agent gets, where it is refused)
TABLE: list[tuple[str, str, Any, str, str]] = [
    ("made-up tool", "view_bank__vault__burnAll", {}, "CAPABILITY_NOT_FOUND", "relay"),
    ("control character in the name", OPEN + "\n", {"drawer": "d1"}, "CAPABILITY_NOT_FOUND", "relay"),
    ("missing field", OPEN, {}, "INVALID_INPUT", "tab"),
    ("wrong type", OPEN, {"drawer": 5}, "INVALID_INPUT", "tab"),
    ("made-up confirmation id", OPEN, {"drawer": "d1", "confirmationId": "conf_made_up"}, "INVALID_INPUT", "tab"),
    ("claims approval", OPEN, {"drawer": "d1", "approved": True}, "INVALID_INPUT", "tab"),
    ("server evidence", OPEN, {"drawer": "d1", "confirmation": {"challengeId": "ch_1"}}, "INVALID_INPUT", "tab"),
    ("not an object", OPEN, ["d1"], "INVALID_INPUT", "guard"),
    ("megabytes", OPEN, {"drawer": "x" * (2 * MAX_ARGUMENT_BYTES)}, "INVALID_INPUT", "guard"),
]


def code_of(outcome: dict[str, Any]) -> str:
    """The code an MCP client reads from the bridge's tool result for this tab outcome."""
    result = call_result(OPEN, outcome)
    assert result.isError is True and result.structuredContent is not None
    return str(result.structuredContent["code"])


@pytest.mark.parametrize(("case", "name", "arguments", "code", "where"), TABLE, ids=[row[0] for row in TABLE])
async def test_a_hostile_call_through_the_relay_is_typed_applies_nothing_and_is_audited(
    relay: Relay, case: str, name: str, arguments: Any, code: str, where: str  # noqa: F811
) -> None:
    tab = await _paired_tab(relay)
    await relay.wait_tools(2)
    audited_before = len(tab.registry.audit_sink.events())
    answer = refusal(_call(arguments))
    if where == "guard":
        assert answer is not None
        assert answer.message.root.result["structuredContent"]["code"] == code  # type: ignore[union-attr]
    else:
        assert answer is None  # the guard passes it on: the relay and the tab decide
        outcome = await relay.link.call(name, arguments)
        assert code_of(outcome) == code
    assert tab.vault.opened == [] and tab.registry.confirmations.pending() == []
    refused = [e for e in tab.registry.audit_sink.events()[audited_before:] if e.type == "invocation-settled"]
    if where == "tab":  # the tab's pipeline refused it: its audit says so, with the code
        assert [json.loads(json.dumps(e.to_json()))["code"] for e in refused] == [code]
    else:  # never reached the tab
        assert refused == []
    # The tab still serves the agent: the relay connection survived the hostile call.
    read = await relay.link.call("view_bank__vault__openedDrawers", {})
    assert "text" in read
