"""The devices console's passkeys end to end in Chromium 156, with Chrome's virtual authenticator:
the person registers a passkey once from the console's top bar (a real click), and from then on
the server asks for it: the agent's ``devices.disable`` (on Chromium's WebMCP and on the polyfill)
is approved in the dialog, then signed by the authenticator over the server's challenge, and
applied once; a replay and a token-holding script without the authenticator are refused.

The console is opened at ``http://localhost:PORT``: the demo's relying party id is ``localhost``
(WebAuthn refuses IP addresses), so on ``127.0.0.1`` the console offers no passkey at all.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from a11y import axe_violations, describe_violations
from agentsurface.bridge import CHANNEL_HEADER
from test_console import statuses
from test_server_challenges import approve_milan, challenges, open_shape

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = "demo-acme-operator"
MILAN_OFFLINE = ["dev-0003", "dev-0017", "dev-0026", "dev-0051", "dev-0079", "dev-0080", "dev-0112"]


@pytest.fixture
def console(web_dist: Path) -> Iterator[tuple[Any, str]]:
    """A fresh demo backend (seeded in-memory database); its base URL at localhost."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from demo.server.backend import start_demo_server

    server, url = start_demo_server(ROOT, port=0)
    yield server, url.replace("127.0.0.1", "localhost")
    server.shutdown()
    server.server_close()


def add_virtual_authenticator(run: Any) -> tuple[Any, str]:
    cdp = run.context.new_cdp_session(run.page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    added = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    return cdp, str(added["authenticatorId"])


def open_console(open_page: Any, base: str, token: str = OPERATOR) -> Any:
    run = open_page(f"/index.html?token={token}", variant="webmcp", base=base)
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    return run


def person_passkeys(server: Any) -> list[tuple[str, str]]:
    return list(
        server.store.invocations.run(
            lambda db: [tuple(r) for r in db.execute("SELECT person, transports FROM agentsurface_passkeys")]
        )
    )


def test_the_person_registers_a_passkey_once_from_the_console(open_page: Any, console: tuple[Any, str]) -> None:
    server, base = console
    run = open_console(open_page, base)
    cdp, authenticator = add_virtual_authenticator(run)
    button = run.page.locator("#passkey-register")
    button.wait_for()
    assert button.inner_text() == "Register a passkey"
    button.click()  # the person's click
    run.page.wait_for_selector("#passkey-registered")
    run.page.wait_for_function("() => document.getElementById('notice').textContent.includes('Passkey registered')")
    assert person_passkeys(server) == [("acme\x1fu-acme-operator", '["internal"]')]
    held = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    assert len(held) == 1 and held[0]["rpId"] == "localhost"

    # Once per person: reloaded, the console shows the passkey, and offers no second one.
    run.page.reload()
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    run.page.wait_for_selector("#passkey-registered")
    assert run.page.locator("#passkey-register").count() == 0
    assert len(person_passkeys(server)) == 1


def test_no_passkey_offer_where_passkeys_cannot_work(open_page: Any, console: tuple[Any, str]) -> None:
    _server, base = console
    run = open_console(open_page, base.replace("localhost", "127.0.0.1"))
    run.page.wait_for_timeout(300)
    assert run.page.locator("#passkey-slot").inner_text() == ""


def post(base: str, path: str, envelope: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A script holding the operator's token, calling as their agent (outside the page)."""
    request = urllib.request.Request(
        f"{base}/api/agent/{path}",
        data=json.dumps(envelope).encode(),
        headers={"Authorization": f"Bearer {OPERATOR}", "Content-Type": "application/json", CHANNEL_HEADER: "agent"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def reason_of(answer: tuple[int, dict[str, Any]]) -> str:
    status, body = answer
    assert status == 403 and body["error"]["code"] == "CONFIRMATION_INVALID", answer
    return str(body["error"]["details"]["reason"])


def register_from_console(run: Any) -> tuple[Any, str]:
    cdp, authenticator = add_virtual_authenticator(run)
    run.page.locator("#passkey-register").click()
    run.page.wait_for_selector("#passkey-registered")
    return cdp, authenticator


@pytest.mark.parametrize("shape", ["native", "polyfill"])
def test_the_agents_disable_is_approved_with_the_persons_passkey(
    open_page: Any, console: tuple[Any, str], shape: str
) -> None:
    server, base = console
    run = open_shape(open_page, base, shape)  # Chromium's WebMCP, or the polyfill's shape
    cdp, authenticator = register_from_console(run)

    sent: list[dict[str, Any]] = []
    result = approve_milan(run, sent)  # the agent asks, the person approves in the dialog
    assert result.ok, result.error
    assert result.expect_ok()["disabled"] == 7
    after = statuses(base)
    assert all(after[i] == "disabled" for i in MILAN_OFFLINE)
    # The approval the page sent: the server's webauthn challenge, signed by the authenticator.
    (approved,) = [body for body in sent if "challenge" in (body.get("confirmation") or {})]
    evidence = approved["confirmation"]
    assert evidence["webauthn"]["type"] == "public-key"
    assert [c["level"] for c in challenges(server)] == ["webauthn"]
    held = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    counted = server.store.invocations.run(
        lambda db: db.execute("SELECT sign_count, last_used_at FROM agentsurface_passkeys").fetchall()
    )
    assert [tuple(row) for row in counted] == [(held[0]["signCount"], counted[0][1])]  # the server saw each use
    assert counted[0][1] is not None and len([b for b in sent if "webauthn" in (b.get("confirmation") or {})]) == 1
    assert "ch_" not in json.dumps(result.content)  # the agent never sees the challenge

    # Replayed with a new invocation id: the challenge is spent.
    replay = {**approved, "invocationId": f"inv-replay-{time.monotonic_ns()}"}
    assert reason_of(post(base, "procedures/devices.disable", replay)) == "used"

    # A script with the token mints a challenge for other devices and answers it itself: without
    # the person's authenticator it has no assertion; the person's old one signs another nonce.
    other = {"invocationId": f"inv-script-{time.monotonic_ns()}", "input": {"deviceIds": ["dev-0001", "dev-0002"],
                                                                             "reason": "script"}}
    status, minted = post(base, "challenges/devices.disable", other)
    assert status == 200 and minted["challenge"]["level"] == "webauthn", minted
    answer = {"challenge": minted["challenge"]["id"], "approvedAt": datetime.now(UTC).isoformat()}
    assert reason_of(post(base, "procedures/devices.disable", {**other, "confirmation": answer})) == "presence-required"
    stolen = {**answer, "webauthn": evidence["webauthn"]}
    assert reason_of(post(base, "procedures/devices.disable", {**other, "confirmation": stolen})) == (
        "passkey-challenge-mismatch"
    )
    assert statuses(base) == after  # nothing applied


def console_passkeys(server: Any) -> list[tuple[str, str]]:
    """The person's passkeys as the server keeps them: (credential id, name), oldest first."""
    return [
        (str(r[0]), str(r[1]))
        for r in server.store.invocations.run(
            lambda db: db.execute(
                "SELECT credential_id, name FROM agentsurface_passkeys ORDER BY created_at, credential_id"
            ).fetchall()
        )
    ]


def wait_notice(run: Any, text: str) -> None:
    run.page.wait_for_function("(t) => document.getElementById('notice').textContent.includes(t)", arg=text)


# Chrome logs the server's typed refusal of removing the last passkey (409).
@pytest.mark.allow_page_errors(r"status of 409 \(Conflict\)")
def test_the_person_manages_their_passkeys_in_the_console(
    open_page: Any, console: tuple[Any, str], tmp_path: Path
) -> None:
    """List, rename (keyboard only), add on a security key, remove and replace: each step a real
    click or key press, the risky ones answered by the authenticator first."""
    server, base = console
    run = open_console(open_page, base)
    cdp, _platform = register_from_console(run)
    page = run.page
    summary = page.locator("#passkey-registered")
    assert summary.inner_text() == "Passkeys (1)"
    summary.focus()
    page.keyboard.press("Enter")  # a <details> disclosure: opens from the keyboard
    items = page.locator("#passkey-list li")
    assert items.count() == 1
    assert "last used never" in items.first.locator(".passkey-meta").inner_text()

    # Rename from the keyboard: the field has its label, Enter saves.
    field = page.get_by_label("Name of passkey This device's passkey 1")
    field.fill("Work laptop\u202e")
    field.press("Enter")
    wait_notice(run, "Passkey renamed.")
    [(first, name)] = console_passkeys(server)
    assert name == "Work laptop"

    # Add one on a security key: the console asks the platform passkey, then the key makes it.
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {"options": {"protocol": "ctap2", "transport": "usb", "hasResidentKey": True, "hasUserVerification": True,
                     "isUserVerified": True, "automaticPresenceSimulation": True}},
    )
    page.locator("#passkey-add").click()
    wait_notice(run, "Passkey added.")
    page.wait_for_function("() => document.getElementById('passkey-registered').textContent === 'Passkeys (2)'")
    assert sorted(n for _, n in console_passkeys(server)) == ["Security key 2", "Work laptop"]
    assert page.locator("#passkeys").get_attribute("open") is not None  # stays open across steps
    page.screenshot(path=str(tmp_path / "console-passkeys.png"))
    violations = axe_violations(page, include="#passkey-slot", impacts=None)
    assert not violations, describe_violations(violations)

    # Remove the key's: a fresh assertion first, then it is gone.
    page.get_by_role("button", name="Remove Security key 2").click()
    wait_notice(run, "Passkey removed.")
    assert [c for c, _ in console_passkeys(server)] == [first]
    # The last one cannot be removed: the console says why.
    page.get_by_role("button", name="Remove Work laptop").click()
    wait_notice(run, "only passkey")
    assert [c for c, _ in console_passkeys(server)] == [first]
    # Replace it: one passkey still, a new one.
    page.get_by_role("button", name="Replace Work laptop").click()
    wait_notice(run, "Passkey replaced.")
    [(replaced, _name)] = console_passkeys(server)
    assert replaced != first
    page.wait_for_selector("#passkey-list li")
    assert page.locator("#passkey-list li").count() == 1


# Chrome logs the server's typed refusal of a registration without the administrator's code (409).
@pytest.mark.allow_page_errors(r"status of 409 \(Conflict\)")
def test_a_reenrolled_person_registers_with_the_administrators_code(
    open_page: Any, console: tuple[Any, str]
) -> None:
    """The person's device is lost: an administrator re-enrols them (the library's
    ``passkeys.reenrol``, run here by the server's own code: no demo role holds its permission),
    and the console takes the code they were handed."""
    from demo.server.db import Principal
    from demo.server.passkeys import demo_passkeys
    from demo.server.procedures import Session

    from agentsurface.server import Caller

    server, base = console
    run = open_console(open_page, base)
    register_from_console(run)
    [(lost, _name)] = console_passkeys(server)
    principal = Principal("u-acme-admin", "Alice Moretti", "acme", "Acme", "admin")
    admin = Caller("u-acme-admin", "acme", frozenset({"passkeys.admin"}), Session(principal, "person"))
    grant = demo_passkeys(server.store.invocations).reenrol(admin, "u-acme-operator")
    assert grant.removed == 1 and console_passkeys(server) == []

    run.page.reload()
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    run.page.locator("#passkey-register").click()  # without the code: the console asks for it
    code = run.page.get_by_label("Enrolment code")
    code.wait_for()
    wait_notice(run, "code they gave you")
    code.fill(grant.code)
    run.page.get_by_role("button", name="Register with code").click()
    run.page.wait_for_selector("#passkey-registered")
    [(enrolled, _name)] = console_passkeys(server)
    assert enrolled != lost
