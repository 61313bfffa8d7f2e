"""Passkey approvals through the procedure server, on both stores (SQLite and a real PostgreSQL):
``serve(..., approval=passkeys.level)`` asks a WebAuthn assertion of every person with a passkey
(a server-minted challenge answered by the dialog of the others), and
``verify_presence=passkeys.verify_presence`` checks it in the call's own transaction, where the
credential's counter moves with the call or not at all. Assertions come from a software
authenticator with real keys (tests/_shared/server/soft_authenticator.py).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field
from starlette.requests import Request
from webauthn.helpers import base64url_to_bytes

from agentsurface import ProcedureContract
from agentsurface.server import (
    Caller,
    ProcedureCall,
    ProcedureServer,
    open_store,
    precondition_failed,
    serve,
)
from agentsurface.server.passkeys import PasskeyConfig, Passkeys
from tests._shared.server.helpers import challenge_of, error_of, new_id, post_raw
from tests._shared.server.postgres import PostgresServer
from tests._shared.server.soft_authenticator import SoftAuthenticator
from tests._shared.server.store_app import insert_note, rows, setup_notes

ORIGIN = "https://notes.example"
CALLERS = {
    "tok-alice": Caller("alice", "acme", frozenset({"notes.write"})),
    "tok-bob": Caller("bob", "acme", frozenset({"notes.write"})),
    "tok-carol": Caller("carol", "acme", frozenset({"notes.write"})),
}
ALICE, BOB, CAROL = CALLERS["tok-alice"], CALLERS["tok-bob"], CALLERS["tok-carol"]


class EraseInput(BaseModel):
    text: str = Field(min_length=1, max_length=200)


ERASE = ProcedureContract(id="domain:notes.erase", description="Erase notes.", effect="destructive", input=EraseInput)


def authenticate(request: Request) -> Caller | None:
    return CALLERS.get(request.headers.get("authorization", "").removeprefix("Bearer "))


@pytest.fixture(params=["sqlite", "postgresql"])
def dsn(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/app.sqlite3"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database()


@pytest.fixture
def store(dsn: str) -> Iterator[Any]:
    opened = open_store(dsn, setup=setup_notes)
    yield opened
    opened.close()  # type: ignore[attr-defined]


@pytest.fixture
def passkeys(store: Any) -> Passkeys:
    return Passkeys(store, PasskeyConfig(rp_id="notes.example", rp_name="Notes", origins=(ORIGIN,)))


@pytest.fixture
async def http(store: Any, dsn: str, passkeys: Passkeys) -> AsyncIterator[httpx.AsyncClient]:
    def erase(call: ProcedureCall, value: EraseInput) -> dict[str, Any]:
        if value.text == "refuse":
            raise precondition_failed("nope", "Refused.")
        return {"noteId": insert_note(call.db, dsn, call.caller.scope, value.text)}

    server = ProcedureServer(
        [serve(ERASE, erase, permissions={"notes.write"}, require_confirmation=True, approval=passkeys.level)],
        authenticate=authenticate,
        store=store,
        verify_presence=passkeys.verify_presence,
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as client:
        yield client


def register(passkeys: Passkeys, caller: Caller) -> SoftAuthenticator:
    authenticator = SoftAuthenticator(ORIGIN)
    passkeys.register(caller, authenticator.create(passkeys.registration_options(caller)))
    return authenticator


async def send(
    http: httpx.AsyncClient, text: str, evidence: dict[str, Any] | None = None, token: str = "tok-alice"
) -> httpx.Response:
    envelope: dict[str, Any] = {"invocationId": new_id(), "input": {"text": text}}
    if evidence is not None:
        envelope["confirmation"] = evidence
    return await post_raw(http, ERASE.id, json.dumps(envelope).encode(), token=token)


async def ask(http: httpx.AsyncClient, text: str, token: str = "tok-alice") -> dict[str, Any]:
    refused = await send(http, text, token=token)
    assert refused.status_code == 428, refused.text
    challenge = challenge_of(refused)
    assert challenge is not None
    return challenge


def approval(challenge: dict[str, Any], webauthn: dict[str, Any] | None = None) -> dict[str, Any]:
    evidence: dict[str, Any] = {"challenge": challenge["id"], "approvedAt": datetime.now(UTC).isoformat()}
    if webauthn is not None:
        evidence["webauthn"] = webauthn
    return evidence


def signed(passkeys: Passkeys, authenticator: SoftAuthenticator, caller: Caller, challenge: dict[str, Any]) -> Any:
    """What the page's ``assert_presence`` sends: the person's assertion over the challenge's nonce."""
    return authenticator.get(passkeys.authentication_options(caller, base64url_to_bytes(challenge["nonce"])))


def refused(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 403, response.text
    error = error_of(response)
    assert error["code"] == "CONFIRMATION_INVALID" and error["details"] == {"reason": reason}


def notes(store: Any) -> list[Any]:
    return [row[0] for row in rows(store, "SELECT text FROM notes ORDER BY id")]


async def test_the_server_asks_a_passkey_of_people_who_have_one(
    http: httpx.AsyncClient, passkeys: Passkeys, store: Any
) -> None:
    # Without a passkey: a server-minted challenge answered by the page's dialog.
    first = await ask(http, "before")
    assert first["level"] == "confirm"
    assert (await send(http, "before", approval(first))).status_code == 200

    authenticator = register(passkeys, ALICE)
    challenge = await ask(http, "gone")
    assert challenge["level"] == "webauthn"  # the server decides, per person
    assert (await ask(http, "gone", token="tok-bob"))["level"] == "confirm"

    # A script with the token: it can mint a challenge and answer it, but not sign it.
    refused(await send(http, "gone", approval(challenge)), "presence-required")
    made_up = {"id": "AAAA", "rawId": "AAAA", "type": "public-key", "response": {}}
    refused(await send(http, "gone", approval(challenge, made_up)), "passkey-malformed")
    assert notes(store) == ["before"]

    assertion = signed(passkeys, authenticator, ALICE, challenge)
    applied = await send(http, "gone", approval(challenge, assertion))
    assert applied.status_code == 200, applied.text
    assert notes(store) == ["before", "gone"]
    # Replayed with a new invocation id: the challenge is spent.
    refused(await send(http, "gone", approval(challenge, assertion)), "used")
    # The same assertion over a new challenge for the same input.
    again = await ask(http, "gone")
    refused(await send(http, "gone", approval(again, assertion)), "passkey-challenge-mismatch")
    assert notes(store) == ["before", "gone"]


async def test_another_persons_passkey_or_challenge_is_refused(
    http: httpx.AsyncClient, passkeys: Passkeys, store: Any
) -> None:
    alice_key, bob_key = register(passkeys, ALICE), register(passkeys, BOB)
    mine = await ask(http, "x")
    bobs = await ask(http, "x", token="tok-bob")
    # Bob signs alice's challenge: his credential, not hers.
    refused(await send(http, "x", approval(mine, signed(passkeys, bob_key, BOB, mine))), "passkey-foreign-credential")
    # Alice's signed approval in bob's hands: the challenge is alice's.
    refused(await send(http, "x", approval(mine, signed(passkeys, alice_key, ALICE, mine)), token="tok-bob"), "mismatch")
    # Alice signs bob's challenge and bob sends it: her credential again.
    refused(await send(http, "x", approval(bobs, signed(passkeys, alice_key, ALICE, bobs)), token="tok-bob"),
            "passkey-foreign-credential")
    # Carol has no passkey: her challenge is confirm-level; a passkey payload is checked anyway.
    carols = await ask(http, "x", token="tok-carol")
    assert carols["level"] == "confirm"
    refused(await send(http, "x", approval(carols, signed(passkeys, alice_key, ALICE, carols)), token="tok-carol"),
            "passkey-foreign-credential")
    assert notes(store) == []


async def test_the_counter_moves_with_the_call_or_not_at_all(
    http: httpx.AsyncClient, passkeys: Passkeys, store: Any
) -> None:
    authenticator = register(passkeys, ALICE)
    challenge = await ask(http, "refuse")
    assertion = signed(passkeys, authenticator, ALICE, challenge)
    # The implementation refuses: nothing is kept, neither the spent challenge nor the counter.
    first = await send(http, "refuse", approval(challenge, assertion))
    assert error_of(first)["code"] == "PRECONDITION_FAILED"
    counter = rows(store, "SELECT sign_count FROM agentsurface_passkeys")
    assert counter == [(0,)]
    # The person's next approval, with the next counter, goes through and is counted.
    ok = await ask(http, "kept")
    assert (await send(http, "kept", approval(ok, signed(passkeys, authenticator, ALICE, ok)))).status_code == 200
    assert rows(store, "SELECT sign_count FROM agentsurface_passkeys") == [(2,)]
    # An assertion with an older counter (a clone of the authenticator) is refused.
    late = await ask(http, "late")
    stale = authenticator.get(passkeys.authentication_options(ALICE, base64url_to_bytes(late["nonce"])), counter=1)
    refused(await send(http, "late", approval(late, stale)), "passkey-counter")
    assert notes(store) == ["kept"]
