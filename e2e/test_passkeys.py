"""Passkeys end to end in Chromium 156 with Chrome's virtual authenticator (DevTools
``WebAuthn.addVirtualAuthenticator`` through a Playwright CDP session): the page registers the
person's passkey with the library's server (agentsurface.browser.passkeys.register_passkey over
the passkeys.* procedures), answers a server-minted challenge with ``assert_presence``, and the
server verifies the assertion (agentsurface.server.passkeys) before it applies anything.

The app is e2e/passkey_app.py (served at http://localhost:PORT: WebAuthn needs a domain, not an
IP address, as its relying party id). Refusals use the authenticator's real answers, bent only
where a person or an attacker could bend them: replayed, over another challenge, another
person's credential, a credential the server forgot, another origin, and no person at the
authenticator (presence or verification off).
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentsurface.bridge.wire import call_url
from agentsurface.server.passkeys import PasskeyConfig, Passkeys
from passkey_app import TOKENS, PasskeyApp, person

PAGE = "/e2e/pages/passkeys.html"
ALICE, AGENT, BOB = TOKENS["tok-alice"], TOKENS["tok-alice-agent"], TOKENS["tok-bob"]


@dataclass
class VirtualAuthenticator:
    cdp: Any
    id: str

    def credentials(self) -> list[dict[str, Any]]:
        return list(self.cdp.send("WebAuthn.getCredentials", {"authenticatorId": self.id})["credentials"])

    def presence(self, present: bool) -> None:
        self.cdp.send("WebAuthn.setAutomaticPresenceSimulation", {"authenticatorId": self.id, "enabled": present})

    def verified(self, verified: bool) -> None:
        self.cdp.send("WebAuthn.setUserVerified", {"authenticatorId": self.id, "isUserVerified": verified})


@dataclass
class PasskeyPage:
    run: Any
    authenticator: VirtualAuthenticator

    def register(self, token: str) -> dict[str, Any]:
        return dict(json.loads(self.run.page.evaluate("(t) => window.passkeyRegister(t)", token)))

    def assertion(self, options: dict[str, Any], abort_after_ms: int | None = None) -> dict[str, Any]:
        answer = self.run.page.evaluate(
            "([o, ms]) => ms === null ? window.passkeyAssert(o) : window.passkeyAssert(o, ms)",
            [json.dumps(options), abort_after_ms],
        )
        return dict(json.loads(answer))


@pytest.fixture
def app(tmp_path: Path) -> Iterator[PasskeyApp]:
    made = PasskeyApp(tmp_path)
    yield made
    made.close()


@pytest.fixture
def passkey_page(open_page: Callable[..., Any], app: PasskeyApp) -> PasskeyPage:
    run = open_page(PAGE, base=app.url)
    run.wait_ready()
    assert run.page.evaluate("() => window.passkeysSupported") is True
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
    return PasskeyPage(run, VirtualAuthenticator(cdp, added["authenticatorId"]))


def post(app: PasskeyApp, procedure: str, value: Any, token: str) -> httpx.Response:
    envelope = {"invocationId": f"inv-{secrets.token_hex(6)}", "input": value}
    return httpx.post(
        call_url(app.url + "/api/agent", procedure),
        json=envelope,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def refusal(answer: httpx.Response) -> str:
    body = answer.json()
    assert body["ok"] is False, body
    return str(body["error"]["details"]["reason"])


# Chrome logs the server's refusals of the second registration (409) and the agent's (403).
@pytest.mark.allow_page_errors(r"status of 409 \(Conflict\)", r"status of 403 \(Forbidden\)")
def test_register_from_the_page_then_approve_a_server_challenge_once(passkey_page: PasskeyPage, app: PasskeyApp) -> None:
    registered = passkey_page.register("tok-alice")
    assert registered["ok"] is True, registered
    stored = app.passkeys.passkeys(ALICE)
    assert [p.credential_id for p in stored] == [registered["credentialId"]]
    assert stored[0].transports == ("internal",)
    held = passkey_page.authenticator.credentials()
    assert len(held) == 1 and held[0]["rpId"] == "localhost" and held[0]["isResidentCredential"] is True
    assert app.passkeys.has_passkey(AGENT)  # the agent acting for alice asks alice's passkey

    # A second registration for alice is refused by the server: another passkey needs an
    # assertion of hers (e2e/test_passkey_management.py).
    again = passkey_page.register("tok-alice")
    assert again == {**again, "ok": False, "name": "PRECONDITION_FAILED", "reason": "passkey-assertion-required"}
    # The agent never registers one.
    assert passkey_page.register("tok-alice-agent")["name"] == "NOT_AUTHORIZED"

    # The agent's call needs an approval: the server mints a challenge, the person answers it.
    minted = post(app, "domain:e2e.approvalOptions", {}, "tok-alice-agent").json()["output"]
    answered = passkey_page.assertion(minted["publicKey"])
    assert answered["ok"] is True, answered
    assertion = answered["assertion"]
    # The user handle the server chose at registration, read back through a JS ArrayBuffer.
    handle = base64.urlsafe_b64decode(assertion["response"]["userHandle"] + "==")
    assert handle == base64.b64decode(held[0]["userHandle"]) and len(handle) == 32
    approval = {"challenge": minted["challenge"], "webauthn": assertion}
    applied = post(app, "domain:e2e.approve", approval, "tok-alice-agent")
    assert applied.status_code == 200, applied.text
    assert app.approvals() == 1

    # Replayed under a new invocation id: the challenge is spent.
    assert refusal(post(app, "domain:e2e.approve", approval, "tok-alice-agent")) == "unknown"
    # The same assertion over a fresh challenge: signed over another one.
    fresh = post(app, "domain:e2e.approvalOptions", {}, "tok-alice-agent").json()["output"]
    reused = {"challenge": fresh["challenge"], "webauthn": assertion}
    assert refusal(post(app, "domain:e2e.approve", reused, "tok-alice-agent")) == "challenge-mismatch"
    # Alice's challenge in bob's hands.
    assert refusal(post(app, "domain:e2e.approve", reused, "tok-bob")) == "unknown"
    # At the counter: Chrome's authenticator counts, the server saw that count already.
    nonce = app.minted[fresh["challenge"]].nonce
    second = passkey_page.assertion(fresh["publicKey"])["assertion"]
    assert app.passkeys.verify_assertion(AGENT, nonce, second) is None
    assert app.passkeys.verify_assertion(AGENT, nonce, second) == "counter"
    # Another origin's server refuses what this origin's page signed.
    elsewhere = Passkeys(
        app.store, PasskeyConfig(rp_id="localhost", rp_name="x", origins=("https://devices.example",), person=person)
    )
    third_nonce = secrets.token_bytes(32)
    third = passkey_page.assertion(app.passkeys.authentication_options(AGENT, third_nonce))["assertion"]
    assert elsewhere.verify_assertion(AGENT, third_nonce, third) == "wrong-origin"
    assert app.approvals() == 1


def test_another_persons_credential_and_a_forgotten_one_are_refused(passkey_page: PasskeyPage, app: PasskeyApp) -> None:
    assert passkey_page.register("tok-alice")["ok"] is True
    assert passkey_page.register("tok-bob")["ok"] is True
    assert len(passkey_page.authenticator.credentials()) == 2
    minted = post(app, "domain:e2e.approvalOptions", {}, "tok-alice-agent").json()["output"]
    # The page (or a script in it) answers alice's challenge with bob's credential.
    bobs = app.passkeys.authentication_options(BOB, secrets.token_bytes(32))["allowCredentials"]
    signed_by_bob = passkey_page.assertion({**minted["publicKey"], "allowCredentials": bobs})["assertion"]
    assert signed_by_bob["id"] == bobs[0]["id"]
    approval = {"challenge": minted["challenge"], "webauthn": signed_by_bob}
    assert refusal(post(app, "domain:e2e.approve", approval, "tok-alice-agent")) == "foreign-credential"
    # Alice's passkey is removed on the server (account reset): her authenticator's answer is unknown.
    signed_by_alice = passkey_page.assertion(minted["publicKey"])["assertion"]
    assert app.passkeys.remove(ALICE, app.passkeys.passkeys(ALICE)[0].credential_id)
    approval = {"challenge": minted["challenge"], "webauthn": signed_by_alice}
    assert refusal(post(app, "domain:e2e.approve", approval, "tok-alice-agent")) == "unknown-credential"
    assert app.approvals() == 0


def test_no_person_at_the_authenticator_no_approval(passkey_page: PasskeyPage, app: PasskeyApp) -> None:
    assert passkey_page.register("tok-alice")["ok"] is True
    minted = post(app, "domain:e2e.approvalOptions", {}, "tok-alice-agent").json()["output"]

    # A touch without verification (a page script asking for less than the app requires):
    # accepted where the app only prefers UV, refused where it requires it.
    strict = Passkeys(app.store, PasskeyConfig(
        rp_id="localhost", rp_name="x", origins=(app.url,), person=person, user_verification="required",
    ))
    nonce = secrets.token_bytes(32)
    options = {**app.passkeys.authentication_options(AGENT, nonce), "userVerification": "discouraged"}
    touch_only = passkey_page.assertion(options)
    assert touch_only["ok"] is True, touch_only
    assert strict.verify_assertion(AGENT, nonce, touch_only["assertion"]) == "user-not-verified"
    assert app.passkeys.verify_assertion(AGENT, nonce, touch_only["assertion"]) is None
    # The person fails verification (wrong PIN, no fingerprint): no assertion at all.
    passkey_page.authenticator.verified(False)
    denied = passkey_page.assertion(minted["publicKey"])
    assert denied["ok"] is False and denied["name"] == "NotAllowedError"
    passkey_page.authenticator.verified(True)

    # Nobody touches the authenticator: the ceremony waits for a person until the page gives up
    # (its AbortSignal), and there is nothing to send.
    passkey_page.authenticator.presence(False)
    started = time.monotonic()
    absent = passkey_page.assertion(minted["publicKey"], abort_after_ms=1500)
    assert absent["ok"] is False and absent["name"] == "TimeoutError", absent
    assert 1.4 < time.monotonic() - started < 30
    assert app.approvals() == 0
    # Someone with the token but without the authenticator: made-up WebAuthn JSON.
    made_up = {"challenge": minted["challenge"], "webauthn": {"id": "AAAA", "rawId": "AAAA", "type": "public-key",
                                                              "response": {}}}
    assert refusal(post(app, "domain:e2e.approve", made_up, "tok-alice-agent")) == "malformed"
    assert app.approvals() == 0
