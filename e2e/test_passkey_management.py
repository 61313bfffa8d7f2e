"""A person managing their passkeys end to end in Chromium 156, with Chrome's virtual
authenticator (DevTools ``WebAuthn.addVirtualAuthenticator``): the page lists them, renames one,
adds one, removes one and replaces one through ``agentsurface.browser.passkeys`` (the last three
after a real assertion of a current passkey over a challenge the server minted for that call),
and an administrator re-enrols a person who lost every passkey: the person's page then registers
a new one only with the administrator's enrolment code.

The app is e2e/passkey_app.py (served at http://localhost:PORT), with up to three passkeys a
person; the page is e2e/pages/passkeys.html.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentsurface.bridge.wire import call_url, challenge_url
from passkey_app import TOKENS, PasskeyApp
from test_passkeys import PasskeyPage
from test_passkeys import passkey_page as passkey_page  # the page with its authenticator

ALICE = TOKENS["tok-alice"]
REENROL = "domain:passkeys.reenrol"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[PasskeyApp]:
    made = PasskeyApp(tmp_path, max_per_person=3)
    yield made
    made.close()


def security_key(page: PasskeyPage) -> str:
    """A second authenticator beside the page's platform one: a USB security key."""
    added = page.authenticator.cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {"options": {"protocol": "ctap2", "transport": "usb", "hasResidentKey": True, "hasUserVerification": True,
                     "isUserVerified": True, "automaticPresenceSimulation": True}},
    )
    return str(added["authenticatorId"])


def page_call(page: PasskeyPage, function: str, *args: Any) -> dict[str, Any]:
    answer = page.run.page.evaluate(f"(a) => window.{function}(...a)", list(args))
    return dict(json.loads(answer))


def listed(page: PasskeyPage) -> list[dict[str, Any]]:
    answer = page_call(page, "passkeyList", "tok-alice")
    assert answer["ok"] is True, answer
    return list(answer["value"])


def ids(found: list[dict[str, Any]]) -> set[str]:
    return {p["credentialId"] for p in found}


def admin_reenrols(app: PasskeyApp, name: str) -> dict[str, Any]:
    """The administrator's console: the server's challenge for this call, answered by their
    approval (a dialog's: they hold no passkey), then the call itself."""
    headers = {"Authorization": "Bearer tok-admin"}
    envelope: dict[str, Any] = {"invocationId": f"adm-{secrets.token_hex(6)}", "input": {"person": name}}
    asked = httpx.post(challenge_url(app.url + "/api/agent", REENROL), json=envelope, headers=headers, timeout=30)
    challenge = asked.json()["challenge"]
    assert challenge["level"] == "confirm", challenge
    envelope["confirmation"] = {"challenge": challenge["id"], "approvedAt": datetime.now(UTC).isoformat()}
    done = httpx.post(call_url(app.url + "/api/agent", REENROL), json=envelope, headers=headers, timeout=30)
    assert done.status_code == 200, done.text
    return dict(done.json()["output"])


# Chrome logs the server's typed refusals (409: the last passkey, a second registration without
# an assertion).
@pytest.mark.allow_page_errors(r"status of 409 \(Conflict\)")
def test_a_person_lists_renames_adds_removes_and_replaces_their_passkeys(
    passkey_page: PasskeyPage, app: PasskeyApp
) -> None:
    first = passkey_page.register("tok-alice")
    assert first["ok"] is True, first
    [only] = listed(passkey_page)
    assert only == {"credentialId": first["credentialId"], "name": "This device's passkey 1",
                    "createdAt": only["createdAt"], "lastUsedAt": None, "transports": ["internal"]}

    renamed = page_call(passkey_page, "passkeyRename", "tok-alice", first["credentialId"], "Work\u202e laptop\u200b")
    assert renamed == {"ok": True, "value": "Work laptop"}

    # A second passkey, on a security key: the page asserts with the first (a real get() over
    # the server's nonce), then the key creates the new one.
    key = security_key(passkey_page)
    added = page_call(passkey_page, "passkeyAdd", "tok-alice")
    assert added["ok"] is True, added
    now = {p["credentialId"]: p for p in listed(passkey_page)}
    assert set(now) == {first["credentialId"], added["credentialId"]}
    assert now[first["credentialId"]]["name"] == "Work laptop"
    assert now[first["credentialId"]]["lastUsedAt"] is not None  # the assertion just made
    assert now[added["credentialId"]]["name"] == "Security key 2"  # its transports say what it is
    on_key = passkey_page.authenticator.cdp.send("WebAuthn.getCredentials", {"authenticatorId": key})["credentials"]
    assert [c["credentialId"] for c in on_key] == [added["credentialId"].replace("-", "+").replace("_", "/")
                                                   + "=" * (-len(added["credentialId"]) % 4)]

    # Removing one: a fresh assertion, and it is gone from the server (the authenticator keeps
    # its key, which the server no longer accepts).
    removed = page_call(passkey_page, "passkeyRemove", "tok-alice", added["credentialId"])
    assert removed == {"ok": True, "removed": added["credentialId"], "remaining": 1}
    assert ids(listed(passkey_page)) == {first["credentialId"]}
    # The last one stays.
    last = page_call(passkey_page, "passkeyRemove", "tok-alice", first["credentialId"])
    assert last["ok"] is False and last["reason"] == "passkey-last-passkey"

    # Replacing it: an assertion of it, a new credential, the old one removed in one transaction.
    replaced = page_call(passkey_page, "passkeyReplace", "tok-alice", first["credentialId"])
    assert replaced["ok"] is True, replaced
    assert ids(listed(passkey_page)) == {replaced["credentialId"]}
    nonce = secrets.token_bytes(32)
    old = {**app.passkeys.authentication_options(ALICE, nonce),
           "allowCredentials": [{"id": first["credentialId"], "type": "public-key"}]}
    stale = passkey_page.assertion(old)
    # The authenticator that made the successor may have dropped the old key (a resident key for
    # the same user); if it still signs with it, the server no longer knows it.
    assert not stale["ok"] or app.passkeys.verify_assertion(ALICE, nonce, stale["assertion"]) == "unknown-credential"

    # A second registration without an assertion: refused (the hole a stolen session would use).
    again = passkey_page.register("tok-alice")
    assert again["ok"] is False and again["reason"] == "passkey-assertion-required"
    # Every step is audited: who, what, the outcome.
    steps = [(r.procedure_id, r.caller.id if r.caller else None, r.outcome) for r in app.audited]
    for step in ("passkeys.rename", "passkeys.addOptions", "passkeys.remove", "passkeys.register"):
        assert (f"domain:{step}", "alice", "ok") in steps


@pytest.mark.allow_page_errors(r"status of 409 \(Conflict\)")
def test_an_administrator_reenrols_a_person_who_lost_every_passkey(passkey_page: PasskeyPage, app: PasskeyApp) -> None:
    lost = passkey_page.register("tok-alice")
    assert lost["ok"] is True, lost
    # The device is lost: the person's session alone cannot re-enrol them.
    envelope = {"invocationId": "self-reenrol", "input": {"person": "alice"}}
    alone = httpx.post(call_url(app.url + "/api/agent", REENROL), json=envelope,
                       headers={"Authorization": "Bearer tok-alice"}, timeout=30)
    assert alone.status_code == 403 and alone.json()["error"]["code"] == "NOT_AUTHORIZED"
    assert app.passkeys.has_passkey(ALICE)

    done = admin_reenrols(app, "alice")
    assert done["removed"] == 1 and done["person"] == "alice"
    assert listed(passkey_page) == []
    assert not app.passkeys.has_passkey(ALICE)

    without = passkey_page.register("tok-alice")
    assert without["ok"] is False and without["reason"] == "passkey-grant-required"
    wrong = page_call(passkey_page, "passkeyRegister", "tok-alice", "AAAA-BBBB-CCCC")
    assert wrong["ok"] is False and wrong["reason"] == "passkey-grant-invalid"
    enrolled = page_call(passkey_page, "passkeyRegister", "tok-alice", done["code"])
    assert enrolled["ok"] is True, enrolled
    assert ids(listed(passkey_page)) == {enrolled["credentialId"]}
    # Used once.
    reused = page_call(passkey_page, "passkeyRegister", "tok-alice", done["code"])
    assert reused["ok"] is False and reused["reason"] == "passkey-assertion-required"
    reenrolled = [r for r in app.audited if r.procedure_id == REENROL and r.outcome == "ok"]
    assert len(reenrolled) == 1 and reenrolled[0].caller is not None and reenrolled[0].caller.id == "root"
