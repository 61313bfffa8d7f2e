"""Server-minted approval challenges, on both stores (SQLite and a real PostgreSQL).

A procedure that requires approval answers CONFIRMATION_REQUIRED with a challenge it minted for
the caller, the procedure and the exact input; the approval must name it, and it is spent once,
in the call's own transaction: used, mismatched, unknown, expired and malformed evidence is
refused with nothing applied.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field
from starlette.requests import Request

from agentsurface import DefinitionError, ProcedureContract
from agentsurface.server import (
    SCHEMA_VERSION,
    Caller,
    CallRecord,
    Challenge,
    ProcedureCall,
    ProcedureServer,
    ServerLimits,
    open_store,
    precondition_failed,
    serve,
)
from tests._shared.server.helpers import challenge_of, error_of, new_id, post_raw
from tests._shared.server.postgres import PostgresServer
from tests._shared.server.store_app import insert_note, mark, rows, setup_notes


class NoteInput(BaseModel):
    text: str = Field(min_length=1, max_length=200)


ERASE = ProcedureContract(id="domain:notes.erase", description="Erase notes.", effect="destructive", input=NoteInput)
PIN = ProcedureContract(id="domain:notes.pin", description="Pin a note.", effect="server-mutation", input=NoteInput)
CALLERS = {
    "tok-alice": Caller("alice", "acme", frozenset({"notes.write"})),
    "tok-bob": Caller("bob", "acme", frozenset({"notes.write"})),
    "tok-carol": Caller("carol", "acme", frozenset({"notes.write"})),
}


def authenticate(request: Request) -> Caller | None:
    return CALLERS.get(request.headers.get("authorization", "").removeprefix("Bearer "))


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now


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
def clock() -> Clock:
    return Clock()


def make_server(dsn: str, store: Any, clock: Clock, **options: Any) -> ProcedureServer:
    m = mark(dsn)

    def erase(call: ProcedureCall, value: NoteInput) -> dict[str, Any]:
        if value.text == "refuse":
            insert_note(call.db, dsn, call.caller.scope, "refused-write")
            raise precondition_failed("nope", "Refused.")
        if value.text == "crash":
            insert_note(call.db, dsn, call.caller.scope, "half-written")
            raise RuntimeError("the implementation failed")
        return {"noteId": insert_note(call.db, dsn, call.caller.scope, value.text)}

    def audit(record: CallRecord, db: Any) -> None:
        if record.input == '{"text":"audit-down"}' and record.outcome == "ok":
            raise RuntimeError("the audit table is down")
        db.execute(
            f"INSERT INTO audit (procedure, outcome, replayed, repeats) VALUES ({m}, {m}, {m}, {m})",
            (record.procedure_id, record.outcome, int(record.replayed), record.repeats),
        )

    approval = options.pop("approval", None)
    return ProcedureServer(
        [
            serve(ERASE, erase, permissions={"notes.write"}, require_confirmation=True, approval=approval),
            serve(PIN, erase, permissions={"notes.write"}, require_confirmation=True),
        ],
        authenticate=authenticate,
        store=store,
        audit=audit,
        clock=clock,
        limits=options.pop("limits", ServerLimits(challenge_ttl=120.0)),
        **options,
    )


@pytest.fixture
async def http(dsn: str, store: Any, clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    app = make_server(dsn, store, clock)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app") as client:
        yield client


async def send(
    http: httpx.AsyncClient,
    procedure: str,
    text: str,
    evidence: dict[str, Any] | None = None,
    *,
    token: str = "tok-alice",
    invocation_id: str | None = None,
) -> httpx.Response:
    envelope: dict[str, Any] = {"invocationId": invocation_id or new_id(), "input": {"text": text}}
    if evidence is not None:
        envelope["confirmation"] = evidence
    return await post_raw(http, procedure, json.dumps(envelope).encode(), token=token)


async def ask(http: httpx.AsyncClient, procedure: str, text: str, *, token: str = "tok-alice") -> dict[str, Any]:
    """The server's challenge for this call (its CONFIRMATION_REQUIRED refusal)."""
    refused = await send(http, procedure, text, token=token)
    assert refused.status_code == 428, refused.text
    challenge = challenge_of(refused)
    assert challenge is not None
    return challenge


def approval(challenge: dict[str, Any], clock: Clock, **extra: Any) -> dict[str, Any]:
    return {"challenge": challenge["id"], "approvedAt": clock.now.isoformat(), **extra}


def notes(store: Any) -> list[tuple[Any, ...]]:
    return rows(store, "SELECT scope, text FROM notes ORDER BY id")


def spent(store: Any, challenge_id: str) -> tuple[Any, ...]:
    m = "?" if type(store).__name__.startswith("Sqlite") else "%s"
    found = rows(store, f"SELECT spent_at IS NOT NULL, spent_by FROM agentsurface_challenges WHERE id = {m}",
                 (challenge_id,))
    assert len(found) == 1
    return found[0]


def refusal(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 403, response.text
    error = error_of(response)
    assert error["code"] == "CONFIRMATION_INVALID" and error["details"] == {"reason": reason}
    assert "challenge" not in response.json()


# ---------------------------------------------------------------- mint and spend


async def test_the_server_mints_a_challenge_bound_to_the_call_and_spends_it_once(
    http: httpx.AsyncClient, store: Any, clock: Clock
) -> None:
    refused = await send(http, ERASE.id, "gone")
    assert refused.status_code == 428
    error = error_of(refused)
    assert error["code"] == "CONFIRMATION_REQUIRED"
    assert error["details"] == {"effect": "destructive", "origin": "server"}  # nothing of it for the agent
    challenge = challenge_of(refused)
    assert challenge is not None and set(challenge) == {"id", "procedure", "level", "expiresAt", "nonce"}
    assert challenge["id"] not in json.dumps(error)
    assert (challenge["procedure"], challenge["level"]) == (ERASE.id, "confirm")
    assert datetime.fromisoformat(challenge["expiresAt"]) == clock.now + timedelta(seconds=120)
    assert len(challenge["nonce"]) == 43  # 32 random bytes, base64url
    m = mark_of(store)
    stored = rows(store, f"SELECT scope, procedure_id, level FROM agentsurface_challenges WHERE id = {m}",
                  (challenge["id"],))
    assert stored == [("acme\x1falice", ERASE.id, "confirm")]
    assert notes(store) == []

    ident = new_id()
    applied = await send(http, ERASE.id, "gone", approval(challenge, clock, id="cnf_page"), invocation_id=ident)
    assert applied.status_code == 200, applied.text
    assert notes(store) == [("acme\x1falice", "gone")]
    assert spent(store, challenge["id"]) == (True, ident)

    # The same invocation again is a replay (nothing applied again); a new invocation id is a reuse.
    replay = await send(http, ERASE.id, "gone", approval(challenge, clock), invocation_id=ident)
    assert replay.json() == {**applied.json(), "replayed": True}
    refusal(await send(http, ERASE.id, "gone", approval(challenge, clock)), "used")
    assert notes(store) == [("acme\x1falice", "gone")]


def mark_of(store: Any) -> str:
    return "?" if type(store).__name__.startswith("Sqlite") else "%s"


async def test_evidence_that_names_no_challenge_gets_one_and_applies_nothing(
    http: httpx.AsyncClient, store: Any, clock: Clock
) -> None:
    forged = await send(http, ERASE.id, "gone", {"id": "forged-1", "approvedAt": clock.now.isoformat()})
    assert forged.status_code == 428 and challenge_of(forged) is not None
    refusal(await send(http, ERASE.id, "gone", {"challenge": "ch_made_up", "approvedAt": clock.now.isoformat()}),
            "unknown")
    assert notes(store) == []


async def test_a_challenge_binds_the_input_the_procedure_and_the_caller(
    http: httpx.AsyncClient, store: Any, clock: Clock
) -> None:
    challenge = await ask(http, ERASE.id, "one note")
    refusal(await send(http, ERASE.id, "every note", approval(challenge, clock)), "mismatch")
    refusal(await send(http, PIN.id, "one note", approval(challenge, clock)), "mismatch")
    refusal(await send(http, ERASE.id, "one note", approval(challenge, clock), token="tok-bob"), "mismatch")
    assert notes(store) == []
    assert spent(store, challenge["id"]) == (False, None)  # still the caller's to use
    assert (await send(http, ERASE.id, "one note", approval(challenge, clock))).status_code == 200
    # Another caller learns nothing about a spent challenge: mismatch, not "used".
    refusal(await send(http, ERASE.id, "one note", approval(challenge, clock), token="tok-bob"), "mismatch")
    assert notes(store) == [("acme\x1falice", "one note")]


async def test_a_challenge_expires_and_upkeep_forgets_it(store: Any, dsn: str, clock: Clock) -> None:
    server = make_server(dsn, store, clock)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        old = await ask(http, ERASE.id, "late")
        clock.now += timedelta(seconds=90)
        fresh = await ask(http, ERASE.id, "late")
        clock.now += timedelta(seconds=31)  # old: 121 s, fresh: 31 s
        refusal(await send(http, ERASE.id, "late", approval(old, clock)), "expired")
        # Issue 43.7: expired wins over mismatch (another input, a late approval all the same).
        refusal(await send(http, ERASE.id, "other", approval(old, clock)), "expired")
        assert server.forget_expired_challenges() == 1
        refusal(await send(http, ERASE.id, "late", approval(old, clock)), "unknown")
        assert (await send(http, ERASE.id, "late", approval(fresh, clock))).status_code == 200
    assert notes(store) == [("acme\x1falice", "late")]


@pytest.mark.parametrize(
    "evidence",
    [
        {"challenge": "ch bad", "approvedAt": "now"},
        {"challenge": "ch\x00", "approvedAt": "2026-01-01T00:00:00Z"},
        {"challenge": "c" * 257, "approvedAt": "2026-01-01T00:00:00Z"},
        {"challenge": 7, "approvedAt": "2026-01-01T00:00:00Z"},
        {"challenge": "ch_x", "approvedAt": "2026-01-01T00:00:00Z", "webauthn": "not an object"},
        {"challenge": "ch_x", "approvedAt": "2026-01-01T00:00:00Z", "webauthn": {"blob": "x" * 17_000}},
        {"challenge": "ch_x", "approvedAt": "2026-01-01T00:00:00Z", "extra": 1},
        {"approvedAt": "2026-01-01T00:00:00Z"},
    ],
)
async def test_malformed_evidence_is_refused(http: httpx.AsyncClient, store: Any, evidence: dict[str, Any]) -> None:
    refusal(await send(http, ERASE.id, "x", evidence), "malformed")
    assert notes(store) == []


# ---------------------------------------------------------------- atomicity


async def test_a_challenge_is_spent_only_with_the_call_that_applies(
    http: httpx.AsyncClient, store: Any, clock: Clock
) -> None:
    crash = await ask(http, ERASE.id, "crash")
    failed = await send(http, ERASE.id, "crash", approval(crash, clock))
    assert failed.status_code == 500 and error_of(failed)["code"] == "EXECUTION_FAILED"
    assert spent(store, crash["id"]) == (False, None) and notes(store) == []

    refuse = await ask(http, ERASE.id, "refuse")
    assert error_of(await send(http, ERASE.id, "refuse", approval(refuse, clock)))["code"] == "PRECONDITION_FAILED"
    assert spent(store, refuse["id"]) == (False, None) and notes(store) == []

    # The audit row fails after the write: the write, the record and the spend are undone together.
    audit_down = await ask(http, ERASE.id, "audit-down")
    ident = new_id()
    assert (await send(http, ERASE.id, "audit-down", approval(audit_down, clock), invocation_id=ident)).status_code == 500
    assert spent(store, audit_down["id"]) == (False, None) and notes(store) == []
    assert rows(store, "SELECT count(*) FROM agentsurface_invocations") == [(0,)]


async def test_concurrent_uses_of_one_challenge_apply_once(http: httpx.AsyncClient, store: Any, clock: Clock) -> None:
    challenge = await ask(http, ERASE.id, "race")
    answers = await asyncio.gather(*(send(http, ERASE.id, "race", approval(challenge, clock)) for _ in range(8)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] + [403] * 7
    for refused in (a for a in answers if a.status_code == 403):
        assert error_of(refused)["details"] == {"reason": "used"}
    assert notes(store) == [("acme\x1falice", "race")]


# ---------------------------------------------------------------- levels and hooks


async def test_a_webauthn_challenge_needs_the_presence_hook(store: Any, dsn: str, clock: Clock) -> None:
    seen: list[tuple[str, str, Any]] = []

    def presence(caller: Caller, challenge: Challenge, payload: dict[str, Any] | None) -> str | None:
        seen.append((caller.id, challenge.level, payload))
        return None if payload == {"signed": challenge.nonce_b64} else "presence-rejected"

    def level(caller: Caller) -> str:
        return "webauthn" if caller.id == "alice" else "confirm"

    without = make_server(dsn, store, clock, approval="webauthn")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=without), base_url="http://app") as http:
        challenge = await ask(http, ERASE.id, "x")
        assert challenge["level"] == "webauthn"
        refusal(await send(http, ERASE.id, "x", approval(challenge, clock)), "presence-required")

    hooked = make_server(dsn, store, clock, approval=level, verify_presence=presence)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=hooked), base_url="http://app") as http:
        mine = await ask(http, ERASE.id, "x")
        bobs = await ask(http, ERASE.id, "x", token="tok-bob")
        assert (mine["level"], bobs["level"]) == ("webauthn", "confirm")  # the server decides per caller
        refusal(await send(http, ERASE.id, "x", approval(mine, clock, webauthn={"signed": "other"})),
                "presence-rejected")
        ok = await send(http, ERASE.id, "x", approval(mine, clock, webauthn={"signed": mine["nonce"]}))
        assert ok.status_code == 200, ok.text
        assert (await send(http, ERASE.id, "x", approval(bobs, clock), token="tok-bob")).status_code == 200
    assert seen == [("alice", "webauthn", {"signed": "other"}), ("alice", "webauthn", {"signed": mine["nonce"]})]
    assert len(notes(store)) == 2


async def test_the_apps_verify_confirmation_hook_still_runs(store: Any, dsn: str, clock: Clock) -> None:
    server = make_server(dsn, store, clock, verify_confirmation=lambda caller, proc, ev: ev.id == "cnf_ok")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        challenge = await ask(http, ERASE.id, "x")
        refusal(await send(http, ERASE.id, "x", approval(challenge, clock, id="cnf_no")), "rejected")
        assert (await send(http, ERASE.id, "x", approval(challenge, clock, id="cnf_ok"))).status_code == 200


def test_a_failing_or_odd_approval_hook_asks_for_the_stronger_proof() -> None:
    from agentsurface.server.challenges import approval_level

    def broken(caller: Caller) -> str:
        raise RuntimeError("directory down")

    alice = CALLERS["tok-alice"]
    assert approval_level(serve(ERASE, lambda c, v: None, approval=broken), alice) == "webauthn"
    assert approval_level(serve(ERASE, lambda c, v: None, approval=lambda c: "none"), alice) == "webauthn"
    assert approval_level(serve(ERASE, lambda c, v: None, approval=lambda c: "confirm"), alice) == "confirm"


def test_approval_levels_are_checked_when_served() -> None:
    with pytest.raises(DefinitionError, match="approval"):
        serve(ERASE, lambda c, v: None, approval="fingerprint")  # type: ignore[arg-type]
    assert serve(ERASE, lambda c, v: None, approval="webauthn").require_confirmation is True
    assert serve(ERASE, lambda c, v: None, require_confirmation=True).approval == "confirm"


def test_an_incomplete_store_of_the_app_s_own_is_refused_at_start_naming_what_it_lacks(clock: Clock) -> None:
    """The server calls every member of InvocationStore without probing: a store that lacks
    some fails when the server is built (whatever it serves), not on the first call that needs them."""

    class Plain:
        transient_errors = ()

        def execute_once(self, *args: Any) -> Any: ...
        def run(self, work: Any) -> Any: ...

    for served in ([serve(ERASE, lambda c, v: None, require_confirmation=True)], []):
        with pytest.raises(DefinitionError, match=r"lacks where, check, close, forget_before, take_token") as info:
            ProcedureServer(served, authenticate=authenticate, store=Plain())  # type: ignore[arg-type]
        assert "save_challenge" in str(info.value) and "transient_errors" not in str(info.value)


def test_the_challenges_table_arrives_by_migration(store: Any, dsn: str) -> None:
    assert SCHEMA_VERSION == 2
    store.run(lambda db: db.execute("DROP TABLE agentsurface_challenges"))
    store.run(lambda db: db.execute("UPDATE agentsurface_schema_version SET version = 1 WHERE component = 'store'"))
    again = open_store(dsn, setup=setup_notes)
    try:
        assert again.schema_version() == 2  # type: ignore[attr-defined]
        assert rows(again, "SELECT count(*) FROM agentsurface_challenges") == [(0,)]
    finally:
        again.close()  # type: ignore[attr-defined]


async def test_a_caller_holds_a_bounded_number_of_live_challenges(store: Any, dsn: str, clock: Clock) -> None:
    """Past the cap, asking is RATE_LIMITED with when to retry; spending one or its expiry frees
    a slot; another procedure or caller has slots of its own."""
    server = make_server(dsn, store, clock, limits=ServerLimits(challenge_ttl=120.0, live_challenges=3))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        held = [await ask(http, ERASE.id, f"n{i}") for i in range(3)]
        clock.now += timedelta(seconds=10)
        over = await send(http, ERASE.id, "n3")
        assert over.status_code == 429 and challenge_of(over) is None
        error = over.json()["error"]
        assert (error["code"], error["details"]["reason"]) == ("RATE_LIMITED", "challenge-cap")
        assert error["details"]["retryAfterMs"] == 110_001 and over.headers["Retry-After"] == "111"
        assert (await ask(http, PIN.id, "other procedure"))["procedure"] == PIN.id
        assert (await ask(http, ERASE.id, "other caller", token="tok-bob"))["procedure"] == ERASE.id
        # Spent by the call it approves: a slot frees.
        assert (await send(http, ERASE.id, "n0", approval(held[0], clock))).status_code == 200
        fourth = await ask(http, ERASE.id, "n3")
        assert (await send(http, ERASE.id, "n4")).status_code == 429
        # Expired: every slot frees (not spent, not yet forgotten by upkeep).
        clock.now += timedelta(seconds=121)
        assert [await ask(http, ERASE.id, f"m{i}") for i in range(3)]
        assert fourth["id"] not in {c["id"] for c in held}


async def test_concurrent_asks_never_pass_the_cap(store: Any, dsn: str, clock: Clock) -> None:
    server = make_server(dsn, store, clock, limits=ServerLimits(challenge_ttl=120.0, live_challenges=3))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        answers = await asyncio.gather(*(send(http, ERASE.id, f"c{i}") for i in range(12)))
    assert sorted(a.status_code for a in answers) == [428] * 3 + [429] * 9
    live = rows(store, "SELECT count(*) FROM agentsurface_challenges")
    assert live[0][0] == 3


async def test_the_same_call_asked_again_gets_its_live_challenge_back(store: Any, dsn: str, clock: Clock) -> None:
    """Retries of one call (the same caller, procedure and input) hold one slot, not one each."""
    server = make_server(dsn, store, clock, limits=ServerLimits(challenge_ttl=120.0, live_challenges=3))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        answers = await asyncio.gather(*(send(http, ERASE.id, "same") for _ in range(10)))
        ids = {c["id"] for c in map(challenge_of, answers) if c is not None}
        assert [a.status_code for a in answers] == [428] * 10 and len(ids) == 1
        clock.now += timedelta(seconds=61)  # less than half its life left: a fresh one
        fresh = await ask(http, ERASE.id, "same")
        assert fresh["id"] not in ids
    assert rows(store, "SELECT count(*) FROM agentsurface_challenges")[0][0] == 2
