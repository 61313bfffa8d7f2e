"""Server-verified approvals through ``agentsurface mcp --relay``: the official ``mcp`` SDK client
calls, through the relay, a tab of a Chromium WITHOUT WebMCP (no flag, no polyfill) whose tool is
a server procedure that needs the person's approval (e2e/passkey_app.py's ``domain:e2e.stamp``,
called through the page's ``BackendBridge``; e2e/pages/relay-approvals.py).

The server mints a challenge for each approved call; the person approves in the page's own
dialog, with a real click (the test is the person); the bridge answers the challenge, signed by
the person's passkey (Chrome's virtual authenticator) once they registered one. Without the
person nothing is applied, and the agent's attempts get the same typed refusals as over WebMCP
(the same page on Chromium's WebMCP, for comparison). The relay sends no input events: the page
records every input event from before its scripts run; the only ones are the test's own.
A call the agent cancels (MCP cancellation) closes its dialog and applies nothing, at the dialog or at the
authenticator, and leaves nothing behind that refuses the person's next approval.

The page is served at ``http://localhost:PORT`` (WebAuthn refuses IP addresses as relying party
ids), one origin the person pairs as in e2e/test_relay.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.shared.exceptions import McpError
from playwright.sync_api import BrowserContext, Page

from agentsurface.testing import DialogSelectors, WebMCPAgent
from conftest import Browsers, PageRun
from passkey_app import TOKENS, PasskeyApp
from relay_process import RelayProcess, free_port
from test_passkeys import VirtualAuthenticator
from test_relay import close_tabs, new_tab, pair, wait_state

PAGE = "/e2e/pages/relay-approvals.html"
TOOL = "domain_e2e__stamp"
ACCOUNT = "acct-7"
AGENT = TOKENS["tok-alice-agent"]
CALL_TIMEOUT_S = 60
# Every input event the page sees, recorded from before its own scripts run (capture phase).
INPUT_RECORDER = """(() => {
  window.__inputEvents = [];
  for (const type of ["pointerdown", "pointerup", "mousedown", "mouseup", "click", "auxclick", "dblclick",
                      "keydown", "keyup", "keypress", "beforeinput", "input", "touchstart", "touchend"]) {
    window.addEventListener(type, (event) => {
      const target = event.composedPath()[0];
      window.__inputEvents.push({type, trusted: event.isTrusted, target: (target && target.id) || ""});
    }, true);
  }
})();"""
APPROVE_ID = DialogSelectors().approve.removeprefix("#")
DENY_ID = DialogSelectors().deny.removeprefix("#")


@pytest.fixture
def app(tmp_path: Path) -> Iterator[PasskeyApp]:
    made = PasskeyApp(tmp_path)
    yield made
    made.close()


@pytest.fixture
def relay(tmp_path: Path, app: PasskeyApp) -> Iterator[RelayProcess]:
    with RelayProcess(free_port(), tmp_path) as started:
        yield started


@pytest.fixture
def contexts(relay: RelayProcess) -> Iterator[list[BrowserContext]]:
    """The test's browser contexts, closed before the relay stops (a page that lost its relay
    would log its reconnection attempts as console errors)."""
    made: list[BrowserContext] = []
    yield made
    close_tabs(made)


@pytest.fixture
def tab(browsers: Browsers, contexts: list[BrowserContext], app: PasskeyApp, relay: RelayProcess) -> PageRun:
    """The account page on the Chromium without WebMCP, its origin paired with the relay by the
    person, its tool listed by the MCP client; the input events of the pairing forgotten."""
    run = new_tab(
        browsers, contexts, f"{app.url}{PAGE}?relay={relay.port}",
        before_goto=lambda context: context.add_init_script(INPUT_RECORDER),
    )
    pair(run, relay, app.url)
    assert run.page.evaluate("() => 'modelContext' in document || 'modelContext' in navigator") is False
    relay.client.wait_for_tools({TOOL}, timeout_s=CALL_TIMEOUT_S)
    forget_inputs(run.page)
    return run


def forget_inputs(page: Page) -> None:
    page.evaluate("() => { window.__inputEvents = []; }")


def inputs(page: Page) -> list[dict[str, Any]]:
    return list(page.evaluate("() => window.__inputEvents"))


def only_the_persons_click(page: Page, button_id: str) -> None:
    """Every input event since the last ``forget_inputs`` is trusted, and every click is the
    test's own on ``button_id``: nothing else (the relay, a page script) produced one."""
    events = inputs(page)
    assert events, "the person's click reached the page"
    assert all(e["trusted"] for e in events), events
    assert {e["target"] for e in events if e["type"] == "click"} == {button_id}, events


def refusal(result: types.CallToolResult) -> dict[str, Any]:
    """The typed error the MCP client got: code, retry and details."""
    assert result.isError is True, result
    error = dict(result.structuredContent or {})
    return {"code": error.get("code"), "retry": error.get("retry"), "details": error.get("details")}


def output(result: types.CallToolResult) -> Any:
    assert result.isError is False, result
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return json.loads(first.text)


def waits_for_the_person(run: PageRun, pending: Any, app: PasskeyApp, note: str) -> None:
    """The agent's call shows the page's dialog and then waits: no input event arrives, nothing
    is asked of the server or applied, until the person acts."""
    shown = WebMCPAgent(run.page).wait_for_dialog()
    assert f"Stamp {ACCOUNT}: {note}" in shown
    stamps, challenges = app.stamps(), app.challenges()
    run.page.wait_for_timeout(1_000)
    assert not pending.done()
    assert inputs(run.page) == []
    assert (app.stamps(), app.challenges()) == (stamps, challenges)


HOSTILE_INPUTS: dict[str, dict[str, Any]] = {
    # The bound account (another one than the tab's).
    "bound-field": {"note": "hostile", "account": "acct-1"},
    # Evidence of its own making, as the page's bridge would send it to the server.
    "made-up-evidence": {"note": "hostile", "confirmation": {"challenge": "ch_forged", "approvedAt": "2026-01-01T00:00:00Z",
                                                             "id": "forged"}},
    # A confirmation id, as the meta shape's retry carries one.
    "confirmation-id": {"note": "hostile", "confirmationId": "cnf_forged"},
    # A passkey assertion of its own making.
    "made-up-assertion": {"note": "hostile", "webauthn": {"id": "AAAA", "rawId": "AAAA", "type": "public-key",
                                                          "response": {}}},
}


def test_a_server_challenge_is_answered_by_the_persons_click_in_the_tab(
    tab: PageRun, relay: RelayProcess, app: PasskeyApp, browsers: Browsers, contexts: list[BrowserContext]
) -> None:
    client, page = relay.client, tab.page
    listed = {t.name: t for t in client.list_tools()}[TOOL]
    assert listed.annotations is not None and listed.annotations.readOnlyHint is False
    assert "account" not in listed.inputSchema["properties"]  # bound by the page, not the agent's

    # Approved in the page's own dialog: the server's challenge answered, applied once.
    _, pending = client.start_call(TOOL, {"note": "approved"})
    waits_for_the_person(tab, pending, app, "approved")
    WebMCPAgent(page).approve()
    done = pending.result(timeout=CALL_TIMEOUT_S)
    assert output(done) == {"stamped": ACCOUNT, "note": "approved"}
    assert "ch_" not in done.model_dump_json()  # the agent never sees the challenge
    assert app.stamps() == [("alice~agent", ACCOUNT, "approved")]
    assert app.challenges() == [("domain:e2e.stamp", "confirm", True)]  # minted for it, spent by it
    only_the_persons_click(page, APPROVE_ID)

    # Denied: nothing asked of the server, nothing applied, a typed refusal.
    forget_inputs(page)
    _, pending = client.start_call(TOOL, {"note": "denied"})
    waits_for_the_person(tab, pending, app, "denied")
    WebMCPAgent(page).deny()
    denied = pending.result(timeout=CALL_TIMEOUT_S)
    assert refusal(denied) == {"code": "CONFIRMATION_INVALID", "retry": "no", "details": {"reason": "denied"}}
    only_the_persons_click(page, DENY_ID)

    # The agent tries again, and cancels when the person does not answer: still nothing.
    forget_inputs(page)
    request_id, pending = client.start_call(TOOL, {"note": "denied"})
    waits_for_the_person(tab, pending, app, "denied")
    client.cancel(request_id)
    with pytest.raises(McpError, match="cancelled"):
        pending.result(timeout=CALL_TIMEOUT_S)
    # The relay's cancel reaches the page: the dialog of the cancelled call closes (as for a
    # call the browser aborts over WebMCP), so no late approval can apply to it.
    page.locator(DialogSelectors().dialog).wait_for(state="hidden", timeout=15_000)
    assert app.stamps() == [("alice~agent", ACCOUNT, "approved")]
    assert app.challenges() == [("domain:e2e.stamp", "confirm", True)]
    assert inputs(page) == []
    # Asked again, the call is the person's to decide again (the late approval is not reused).
    forget_inputs(page)
    _, pending = client.start_call(TOOL, {"note": "denied"})
    waits_for_the_person(tab, pending, app, "denied")
    WebMCPAgent(page).deny()
    assert refusal(pending.result(timeout=CALL_TIMEOUT_S))["code"] == "CONFIRMATION_INVALID"
    only_the_persons_click(page, DENY_ID)
    forget_inputs(page)

    # Everything the agent can put in its input to be applied without the person: refused before
    # any dialog, as over WebMCP (compared below), and nothing reaches the server.
    over_relay = {name: refusal(client.call(TOOL, value)) for name, value in HOSTILE_INPUTS.items()}
    assert all(r["code"] == "INVALID_INPUT" for r in over_relay.values()), over_relay
    assert over_relay["bound-field"]["details"]["lockedFields"] == ["account"]
    assert page.locator(DialogSelectors().dialog).is_hidden()
    assert app.stamps() == [("alice~agent", ACCOUNT, "approved")]
    assert app.challenges() == [("domain:e2e.stamp", "confirm", True)]
    assert inputs(page) == []

    # The same page on Chromium's WebMCP (no relay): the same refusals, field for field.
    over_webmcp = webmcp_refusals(browsers, contexts, app)
    assert over_webmcp == over_relay


def webmcp_refusals(browsers: Browsers, contexts: list[BrowserContext], app: PasskeyApp) -> dict[str, Any]:
    run = new_tab(browsers, contexts, f"{app.url}{PAGE}", variant="webmcp")
    agent = WebMCPAgent(run.page)
    agent.wait_for_tool(TOOL)
    answers: dict[str, Any] = {}
    for name, value in HOSTILE_INPUTS.items():
        result = agent.call(TOOL, value, timeout_ms=CALL_TIMEOUT_S * 1000)
        assert result.ok is False and result.error is not None
        answers[name] = {"code": result.error.code, "retry": result.error.retry, "details": result.error.details}
    assert run.page.locator(DialogSelectors().dialog).is_hidden()
    return answers


def sign_count(app: PasskeyApp) -> int:
    """The person's passkey's signature count as the server last verified it."""
    return int(app.store.run(lambda db: db.execute("SELECT sign_count FROM agentsurface_passkeys").fetchone()[0]))


def add_authenticator(run: PageRun) -> VirtualAuthenticator:
    """Chrome's virtual authenticator in the tab (as e2e/test_passkeys.py's): the person's."""
    cdp = run.context.new_cdp_session(run.page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    added = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True,
    }})
    return VirtualAuthenticator(cdp, str(added["authenticatorId"]))


def test_a_passkey_approval_is_the_persons_authenticator_in_the_tab(
    tab: PageRun, relay: RelayProcess, app: PasskeyApp
) -> None:
    client, page = relay.client, tab.page
    authenticator = add_authenticator(tab)
    page.locator("#register-passkey").click()  # the person registers her passkey, once
    wait_state(tab, lambda s: s["passkey"]["registered"] is True, "a registered passkey", timeout_s=CALL_TIMEOUT_S)
    assert app.passkeys.has_passkey(AGENT)  # her agent's approvals now need it
    held = authenticator.credentials()
    assert len(held) == 1 and held[0]["rpId"] == "localhost"

    # Approved in the dialog, then signed by the authenticator over the server's challenge.
    forget_inputs(page)
    _, pending = client.start_call(TOOL, {"note": "with a passkey"})
    waits_for_the_person(tab, pending, app, "with a passkey")
    WebMCPAgent(page).approve()
    done = pending.result(timeout=CALL_TIMEOUT_S)
    assert output(done) == {"stamped": ACCOUNT, "note": "with a passkey"}
    assert "ch_" not in done.model_dump_json()
    assert app.stamps() == [("alice~agent", ACCOUNT, "with a passkey")]
    assert app.challenges() == [("domain:e2e.stamp", "webauthn", True)]
    signed = sign_count(app)
    assert signed == authenticator.credentials()[0]["signCount"] > 0  # the server verified that assertion
    only_the_persons_click(page, APPROVE_ID)

    # The person approves in the dialog but fails at the authenticator (no fingerprint, wrong
    # PIN): no assertion, a typed refusal, the challenge unspent, nothing applied.
    authenticator.verified(False)
    forget_inputs(page)
    _, pending = client.start_call(TOOL, {"note": "not verified"})
    waits_for_the_person(tab, pending, app, "not verified")
    WebMCPAgent(page).approve()
    failed = pending.result(timeout=CALL_TIMEOUT_S)
    assert refusal(failed) == {"code": "CONFIRMATION_INVALID", "retry": "with-confirmation",
                               "details": {"reason": "passkey-denied"}}
    assert app.stamps() == [("alice~agent", ACCOUNT, "with a passkey")]
    assert app.challenges()[1:] == [("domain:e2e.stamp", "webauthn", False)]
    assert sign_count(app) == signed
    only_the_persons_click(page, APPROVE_ID)

    # The agent's own assertion in its input never reaches the server.
    made_up = refusal(client.call(TOOL, HOSTILE_INPUTS["made-up-assertion"]))
    assert made_up["code"] == "INVALID_INPUT"
    assert app.stamps() == [("alice~agent", ACCOUNT, "with a passkey")] and len(app.challenges()) == 2

    # Nobody at the authenticator: the call waits there (no assertion, nothing applied) until
    # the agent gives up (MCP cancellation), which ends the ceremony too: the person's next
    # approval is not refused as "a request is already pending" (it was, before
    # passkey_presence aborted the ceremony of a call given up on).
    authenticator.verified(True)
    authenticator.presence(False)
    forget_inputs(page)
    request_id, pending = client.start_call(TOOL, {"note": "nobody there"})
    waits_for_the_person(tab, pending, app, "nobody there")
    WebMCPAgent(page).approve()
    client.wait_for(lambda: len(app.challenges()) == 3, "the server's challenge for the call", CALL_TIMEOUT_S)
    page.wait_for_timeout(1_000)
    assert not pending.done()  # at the authenticator
    client.cancel(request_id)
    with pytest.raises(McpError, match="cancelled"):
        pending.result(timeout=CALL_TIMEOUT_S)
    assert app.stamps() == [("alice~agent", ACCOUNT, "with a passkey")]
    assert app.challenges()[2:] == [("domain:e2e.stamp", "webauthn", False)]
    only_the_persons_click(page, APPROVE_ID)
    authenticator.presence(True)
    forget_inputs(page)
    _, pending = client.start_call(TOOL, {"note": "back at the authenticator"})
    waits_for_the_person(tab, pending, app, "back at the authenticator")
    WebMCPAgent(page).approve()
    assert output(pending.result(timeout=CALL_TIMEOUT_S)) == {"stamped": ACCOUNT, "note": "back at the authenticator"}
    assert app.stamps()[1:] == [("alice~agent", ACCOUNT, "back at the authenticator")]
    assert app.challenges()[3:] == [("domain:e2e.stamp", "webauthn", True)]
    only_the_persons_click(page, APPROVE_ID)
