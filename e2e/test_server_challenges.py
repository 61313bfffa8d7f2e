"""Server-minted approval challenges end to end in Chromium, on the devices console.

The agent (the browser's WebMCP client) asks to disable devices; the person approves in the
page's dialog with a real click; the page's bridge asks the server for its challenge for that
exact call and answers it with the approval; the server applies it once. A script in the page
holding the operator's token cannot make up evidence, replay the person's or bend it to
another input: each is refused and nothing changes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentsurface.testing import WebMCPAgent
from test_console import (
    CONSOLE_DIALOG,
    agent_for,
    open_console,
    select_offline_in_milan,
    start_disable,
    statuses,
)

ROOT = Path(__file__).resolve().parent.parent
POLYFILL = next((ROOT / "web" / "dist" / "polyfill").glob("webmcp-polyfill-*.iife.js"), None)
MILAN_OFFLINE = ["dev-0003", "dev-0017", "dev-0026", "dev-0051", "dev-0079", "dev-0080", "dev-0112"]


@pytest.fixture
def demo() -> Iterator[tuple[Any, str]]:
    """A fresh demo backend (seeded in-memory database) per test, serving the page too."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from demo.server.backend import start_demo_server

    server, url = start_demo_server(ROOT, port=0)
    yield server, url
    server.shutdown()
    server.server_close()


def challenges(server: Any) -> list[dict[str, Any]]:
    rows = server.store.fetch_all(
        "SELECT procedure_id, level, spent_at IS NOT NULL AS spent, spent_by FROM agentsurface_challenges"
    )
    return [dict(r) for r in rows]


def disable_outcomes(server: Any) -> list[str]:
    server.app.flush_audit()
    return [str(r["outcome"]) for r in server.store.fetch_all(
        "SELECT outcome FROM audit WHERE operation = 'devices.disable' ORDER BY id")]


def approve_milan(run: Any, sent: list[dict[str, Any]]) -> Any:
    """The agent's disable of the offline Milan devices, approved by the person with a real click;
    ``sent`` collects the bodies of the page's calls to the procedure server."""
    agent = agent_for(run)

    def on_request(request: Any) -> None:
        if "/api/agent/procedures/devices.disable" in request.url and request.method == "POST":
            sent.append(json.loads(request.post_data or "{}"))

    run.page.on("request", on_request)
    select_offline_in_milan(agent)
    pending = start_disable(agent)
    agent.approve()  # the person's trusted click
    return pending.result()


def open_shape(open_page: Any, url: str, shape: str) -> Any:
    """The console on Chromium's native WebMCP, or on a Chromium without it, with the vendored
    polyfill installed before the page's scripts (the adapter's other shape)."""
    if shape == "native":
        return open_console(open_page, url)
    assert POLYFILL is not None, "web/dist has no vendored WebMCP polyfill: run scripts/build_web.py"
    run = open_page("/index.html", variant="plain", base=url,
                    before_goto=lambda r: r.context.add_init_script(path=str(POLYFILL)))
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    agent = WebMCPAgent(run.page, dialog=CONSOLE_DIALOG)
    assert agent.shape != "native"
    agent.wait_for_tool("view_devices__table__selectVisible")
    return run


@pytest.mark.parametrize("shape", ["native", "polyfill"])
def test_the_persons_approval_answers_the_servers_challenge_and_applies_once(
    open_page: Any, demo: tuple[Any, str], shape: str
) -> None:
    server, url = demo
    run = open_shape(open_page, url, shape)
    before = statuses(url)
    sent: list[dict[str, Any]] = []
    result = approve_milan(run, sent)
    assert result.ok, result.error
    assert result.expect_ok()["disabled"] == 7
    assert "ch_" not in json.dumps(result.content)  # the agent never sees the challenge

    after = statuses(url)
    assert all(after[i] == "disabled" for i in MILAN_OFFLINE)
    assert {k: v for k, v in after.items() if k not in MILAN_OFFLINE} == {
        k: v for k, v in before.items() if k not in MILAN_OFFLINE
    }
    # One call to the server, answering one challenge the server minted, spent by that call.
    assert len(sent) == 1
    evidence = sent[0]["confirmation"]
    assert evidence["challenge"].startswith("ch_") and set(evidence) == {"challenge", "approvedAt", "id"}
    assert challenges(server) == [
        {"procedure_id": "domain:devices.disable", "level": "confirm", "spent": 1, "spent_by": sent[0]["invocationId"]}
    ]
    assert disable_outcomes(server) == ["ok"]  # applied once, and no refusal on the way
    assert run.console_errors == []


# The forged calls below are refused on purpose; the browser logs each refused fetch.
@pytest.mark.allow_page_errors(r"status of 403", r"status of 428")
def test_a_script_with_the_token_cannot_forge_replay_or_bend_an_approval(open_page: Any, demo: tuple[Any, str]) -> None:
    server, url = demo
    run = open_console(open_page, url)
    sent: list[dict[str, Any]] = []
    assert approve_milan(run, sent).ok
    approved = sent[0]
    after = statuses(url)

    # Re-enable one device so that a replayed disable would change something visible.
    run.page.evaluate("""async () => fetch('/api/agent/procedures/devices.enable', {
        method: 'POST',
        headers: {'Content-Type': 'application/json', Authorization: 'Bearer demo-acme-operator'},
        body: JSON.stringify({invocationId: 'inv-reenable', input: {deviceIds: ['dev-0003']}}),
    }).then((r) => r.status)""")
    assert statuses(url)["dev-0003"] == "offline"

    forged = run.page.evaluate(
        """async (approved) => {
        // As the page's agent bridge sends it (the channel header): the very caller that was approved.
        const headers = {'Content-Type': 'application/json', Authorization: 'Bearer demo-acme-operator',
                         'X-AgentSurface-Channel': 'agent'};
        const post = (body) => fetch('/api/agent/procedures/devices.disable', {
            method: 'POST',
            headers,
            body: JSON.stringify(body),
        }).then(async (r) => { const b = await r.json(); return [r.status, b.error.code, (b.error.details || {}).reason || null]; });
        const now = new Date().toISOString();
        const input = {deviceIds: ['dev-0003']};
        // A challenge for one device, asked by the script itself, then used for three.
        const substitute = async (at) => {
            const asked = await fetch('/api/agent/challenges/devices.disable', {
                method: 'POST',
                headers,
                body: JSON.stringify({invocationId: 'inv-ask', input: {deviceIds: ['dev-0044']}}),
            }).then((r) => r.json());
            return post({invocationId: crypto.randomUUID(), input: {deviceIds: ['dev-0003', 'dev-0001', 'dev-0002']},
                         confirmation: {challenge: asked.challenge.id, approvedAt: at}});
        };
        return {
            madeUpId: await post({invocationId: crypto.randomUUID(), input, confirmation: {id: 'forged', approvedAt: now}}),
            madeUpChallenge: await post({invocationId: crypto.randomUUID(), input,
                                         confirmation: {challenge: 'ch_forged', approvedAt: now}}),
            replayed: await post({...approved, invocationId: crypto.randomUUID()}),
            bent: await post({invocationId: crypto.randomUUID(), input,
                              confirmation: approved.confirmation}),
            substituted: await substitute(now),
            // Without the channel header the server sees another caller (the person, not their agent).
            otherCaller: await fetch('/api/agent/procedures/devices.disable', {
                method: 'POST',
                headers: {'Content-Type': 'application/json', Authorization: 'Bearer demo-acme-operator'},
                body: JSON.stringify({...approved, invocationId: crypto.randomUUID()}),
            }).then(async (r) => { const b = await r.json(); return [r.status, b.error.code, b.error.details.reason]; }),
        };
    }""",
        approved,
    )
    assert forged == {
        "madeUpId": [428, "CONFIRMATION_REQUIRED", None],
        "madeUpChallenge": [403, "CONFIRMATION_INVALID", "unknown"],
        "replayed": [403, "CONFIRMATION_INVALID", "used"],
        "bent": [403, "CONFIRMATION_INVALID", "used"],
        "substituted": [403, "CONFIRMATION_INVALID", "mismatch"],
        "otherCaller": [403, "CONFIRMATION_INVALID", "mismatch"],
    }
    current = statuses(url)
    assert current["dev-0003"] == "offline"  # none of it disabled the re-enabled device
    assert {k: v for k, v in current.items() if k != "dev-0003"} == {k: v for k, v in after.items() if k != "dev-0003"}
    assert disable_outcomes(server).count("ok") == 1
