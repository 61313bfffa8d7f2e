"""A person managing their passkeys through the procedure server, on both stores (SQLite and a
real PostgreSQL): listing, renaming, removing, adding and replacing one (the last three only
with a fresh assertion of a current passkey of theirs), and an administrator's re-enrolment of
a person who lost every passkey. Assertions come from a software authenticator with real keys
(tests/_shared/server/soft_authenticator.py); e2e/test_passkey_management.py does it in Chromium.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from webauthn.helpers import base64url_to_bytes

from agentsurface.server import Caller, CallRecord, ProcedureServer, open_store
from agentsurface.server.passkeys import (
    PROCEDURE_ADD_OPTIONS,
    PROCEDURE_LIST,
    PROCEDURE_OPTIONS,
    PROCEDURE_REENROL,
    PROCEDURE_REGISTER,
    PROCEDURE_REMOVE,
    PROCEDURE_RENAME,
    ManagementRefused,
    PasskeyConfig,
    Passkeys,
    clean_name,
    manage,
    tables,
)
from agentsurface.server.passkeys.tables import PASSKEY_SCHEMA_VERSION, schema_version
from tests._shared.server.helpers import challenge_of, error_of, new_id, post_raw
from tests._shared.server.postgres import PostgresServer
from tests._shared.server.soft_authenticator import SoftAuthenticator

ORIGIN = "https://devices.example"
CALLERS = {
    "tok-alice": Caller("alice", "acme"),
    "tok-alice-agent": Caller("alice~agent", "acme"),
    "tok-bob": Caller("bob", "acme"),
    "tok-admin": Caller("root", "acme", frozenset({"passkeys.admin"})),
    "tok-admin2": Caller("ops", "acme", frozenset({"passkeys.admin"})),
    "tok-other-admin": Caller("root", "globex", frozenset({"passkeys.admin"})),
}
ALICE, BOB, ADMIN = CALLERS["tok-alice"], CALLERS["tok-bob"], CALLERS["tok-admin"]


def person(caller: Caller) -> str:
    return f"{caller.tenant}\x1f{caller.id.removesuffix('~agent')}"


def people_only(caller: Caller) -> bool:
    return not caller.id.endswith("~agent")


class Clock:
    """One clock for the server (datetimes) and the passkeys (seconds)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def server(self) -> datetime:
        return self.now

    def seconds(self) -> float:
        return self.now.timestamp()


@pytest.fixture(params=["sqlite", "postgresql"])
def dsn(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/app.sqlite3"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database()


@pytest.fixture
def store(dsn: str) -> Iterator[Any]:
    opened = open_store(dsn)
    yield opened
    opened.close()  # type: ignore[attr-defined]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def passkeys(store: Any, clock: Clock) -> Passkeys:
    config = PasskeyConfig(
        rp_id="devices.example",
        rp_name="Devices",
        origins=(ORIGIN,),
        person=person,
        may_register=people_only,
        may_manage=people_only,
        max_per_person=3,
    )
    return Passkeys(store, config, clock=clock.seconds)


@pytest.fixture
def audited() -> list[CallRecord]:
    return []


@pytest.fixture
async def http(
    store: Any, passkeys: Passkeys, clock: Clock, audited: list[CallRecord]
) -> AsyncIterator[httpx.AsyncClient]:
    def authenticate(request: Request) -> Caller | None:
        return CALLERS.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    server = ProcedureServer(
        passkeys.procedures(),
        authenticate=authenticate,
        store=store,
        verify_presence=passkeys.verify_presence,
        audit=lambda record, _db: audited.append(record),
        clock=clock.server,
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as client:
        yield client


class Person:
    """A person's page: their token and their authenticator."""

    def __init__(self, http: httpx.AsyncClient, passkeys: Passkeys, clock: Clock, token: str) -> None:
        self.http, self.passkeys, self.clock, self.token = http, passkeys, clock, token
        self.authenticator = SoftAuthenticator(ORIGIN)

    @property
    def caller(self) -> Caller:
        return CALLERS[self.token]

    async def send(self, procedure: str, value: Any, evidence: dict[str, Any] | None = None) -> httpx.Response:
        envelope: dict[str, Any] = {"invocationId": new_id(), "input": value}
        if evidence is not None:
            envelope["confirmation"] = evidence
        return await post_raw(self.http, procedure, json.dumps(envelope).encode(), token=self.token)

    async def ask(self, procedure: str, value: Any) -> dict[str, Any]:
        refused = await self.send(procedure, value)
        assert refused.status_code == 428, refused.text
        challenge = challenge_of(refused)
        assert challenge is not None
        return challenge

    def sign(self, challenge: dict[str, Any], by: Person | None = None) -> dict[str, Any]:
        """The assertion over the challenge's nonce, by this person's authenticator (or ``by``'s)."""
        signer = by or self
        options = self.passkeys.authentication_options(signer.caller, base64url_to_bytes(challenge["nonce"]))
        evidence: dict[str, Any] = {"challenge": challenge["id"], "approvedAt": self.clock.now.isoformat()}
        evidence["webauthn"] = signer.authenticator.get(options)
        return evidence

    async def approved(self, procedure: str, value: Any) -> httpx.Response:
        """The call with a fresh assertion: ask, sign, send."""
        return await self.send(procedure, value, self.sign(await self.ask(procedure, value)))

    async def first_passkey(self, grant: str | None = None) -> str:
        value = {} if grant is None else {"grant": grant}
        options = await self.send(PROCEDURE_OPTIONS, value)
        assert options.status_code == 200, options.text
        made = self.authenticator.create(options.json()["output"]["publicKey"])
        registered = await self.send(PROCEDURE_REGISTER, {"credential": made})
        assert registered.status_code == 200, registered.text
        return str(made["id"])

    async def another_passkey(self, replaces: str | None = None) -> str:
        value = {} if replaces is None else {"replaces": replaces}
        options = await self.approved(PROCEDURE_ADD_OPTIONS, value)
        assert options.status_code == 200, options.text
        made = self.authenticator.create(options.json()["output"]["publicKey"])
        registered = await self.send(PROCEDURE_REGISTER, {"credential": made})
        assert registered.status_code == 200, registered.text
        return str(made["id"])

    async def listed(self) -> list[dict[str, Any]]:
        answer = await self.send(PROCEDURE_LIST, {})
        assert answer.status_code == 200, answer.text
        return list(answer.json()["output"]["passkeys"])


@pytest.fixture
def alice(http: httpx.AsyncClient, passkeys: Passkeys, clock: Clock) -> Person:
    return Person(http, passkeys, clock, "tok-alice")


@pytest.fixture
def bob(http: httpx.AsyncClient, passkeys: Passkeys, clock: Clock) -> Person:
    return Person(http, passkeys, clock, "tok-bob")


@pytest.fixture
def admin(http: httpx.AsyncClient, passkeys: Passkeys, clock: Clock) -> Person:
    return Person(http, passkeys, clock, "tok-admin")


def reason(response: httpx.Response) -> str:
    return str(error_of(response).get("details", {}).get("reason"))


def ids(listed: list[dict[str, Any]]) -> list[str]:
    return [p["credentialId"] for p in listed]


# ---------------------------------------------------------------------------------- list, rename


async def test_a_person_lists_and_renames_only_their_own_passkeys(alice: Person, bob: Person) -> None:
    first = await alice.first_passkey()
    listed = await alice.listed()
    assert listed == [
        {"credentialId": first, "name": "This device's passkey 1", "createdAt": listed[0]["createdAt"],
         "lastUsedAt": None, "transports": ["internal"]}
    ]
    assert datetime.fromisoformat(listed[0]["createdAt"]).tzinfo is not None
    # Nothing secret or internal crosses: no public key, counter or user handle.
    assert set(listed[0]) == {"credentialId", "name", "createdAt", "lastUsedAt", "transports"}

    # Each successful assertion is the passkey's last use.
    second = await alice.another_passkey()
    used = {p["credentialId"]: p["lastUsedAt"] for p in await alice.listed()}
    assert used[first] is not None and used[second] is None

    renamed = await alice.send(PROCEDURE_RENAME, {"credentialId": first, "name": "  Work\u202e laptop\u200b\n "})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["output"] == {"credentialId": first, "name": "Work laptop"}
    names = {p["credentialId"]: p["name"] for p in await alice.listed()}
    assert names == {first: "Work laptop", second: "This device's passkey 2"}

    for bad in ("\u202e\u200b\x00", " ", "x" * 65):
        refused = await alice.send(PROCEDURE_RENAME, {"credentialId": first, "name": bad})
        assert error_of(refused)["code"] == "INVALID_INPUT", bad
    assert {p["credentialId"]: p["name"] for p in await alice.listed()}[first] == "Work laptop"

    # Bob sees nothing of alice's, and her id in his hands is refused exactly like a made-up one.
    bobs = await bob.first_passkey()
    assert ids(await bob.listed()) == [bobs]
    foreign = await bob.send(PROCEDURE_RENAME, {"credentialId": first, "name": "mine now"})
    unknown = await bob.send(PROCEDURE_RENAME, {"credentialId": "AAAAAAAA", "name": "mine now"})
    assert foreign.status_code == unknown.status_code == 409
    assert error_of(foreign) == error_of(unknown)
    assert reason(foreign) == "passkey-unknown-passkey"
    assert {p["credentialId"]: p["name"] for p in await alice.listed()}[first] == "Work laptop"


async def test_the_agent_acting_for_a_person_manages_nothing(alice: Person, http: httpx.AsyncClient,
                                                             passkeys: Passkeys, clock: Clock) -> None:
    first = await alice.first_passkey()
    agent = Person(http, passkeys, clock, "tok-alice-agent")
    for procedure, value in ((PROCEDURE_LIST, {}), (PROCEDURE_RENAME, {"credentialId": first, "name": "x"})):
        assert error_of(await agent.send(procedure, value))["code"] == "NOT_AUTHORIZED"
    # Even with the person's own assertion over its challenge (a page that signs what it is shown).
    agent.authenticator = alice.authenticator
    refused = await agent.approved(PROCEDURE_REMOVE, {"credentialId": first})
    assert error_of(refused)["code"] == "NOT_AUTHORIZED"
    assert ids(await alice.listed()) == [first]


def test_names_are_cleaned_of_what_could_disguise_them() -> None:
    assert clean_name("a\u202eb\u2066c\u200dd\ufeffe") == "abcde"
    assert clean_name("one\ttwo\r\nthree\u2028four") == "one two three four"
    assert clean_name("Café 🔑") == "Café 🔑"


# ---------------------------------------------------------------------------------- add, remove


async def test_a_second_passkey_needs_an_assertion_of_the_first(alice: Person, bob: Person) -> None:
    await alice.first_passkey()
    # The hole this closes: max_per_person > 1 let a stolen session add its own authenticator.
    again = await alice.send(PROCEDURE_OPTIONS, {})
    assert error_of(again)["code"] == "PRECONDITION_FAILED" and reason(again) == "passkey-assertion-required"
    challenge = await alice.ask(PROCEDURE_ADD_OPTIONS, {})
    assert challenge["level"] == "webauthn"
    # No assertion, an assertion by someone else's passkey: refused.
    unsigned = {"challenge": challenge["id"], "approvedAt": alice.clock.now.isoformat()}
    assert reason(await alice.send(PROCEDURE_ADD_OPTIONS, {}, unsigned)) == "presence-required"
    await bob.first_passkey()
    by_bob = alice.sign(challenge, by=bob)
    assert reason(await alice.send(PROCEDURE_ADD_OPTIONS, {}, by_bob)) == "passkey-foreign-credential"
    await alice.another_passkey()
    await alice.another_passkey()
    assert len(await alice.listed()) == 3
    full = await alice.approved(PROCEDURE_ADD_OPTIONS, {})
    assert reason(full) == "passkey-limit"


async def test_removal_needs_a_fresh_assertion_bound_to_that_passkey(alice: Person, bob: Person,
                                                                     clock: Clock) -> None:
    first = await alice.first_passkey()
    second = await alice.another_passkey()
    await bob.first_passkey()
    challenge = await alice.ask(PROCEDURE_REMOVE, {"credentialId": second})
    assert challenge["level"] == "webauthn"

    # An approval for removing the second, sent to remove the first: bound to its credential id.
    signed = alice.sign(challenge)
    assert reason(await alice.send(PROCEDURE_REMOVE, {"credentialId": first}, signed)) == "mismatch"
    # Signed by bob's passkey; alice's challenge sent by bob.
    assert reason(await alice.send(PROCEDURE_REMOVE, {"credentialId": second}, alice.sign(challenge, by=bob))) \
        == "passkey-foreign-credential"
    assert reason(await bob.send(PROCEDURE_REMOVE, {"credentialId": second}, signed)) == "mismatch"
    # Too late: the challenge is short-lived.
    clock.now += timedelta(seconds=121)
    late = alice.sign(challenge)
    assert reason(await alice.send(PROCEDURE_REMOVE, {"credentialId": second}, late)) == "expired"
    assert set(ids(await alice.listed())) == {first, second}

    fresh = await alice.ask(PROCEDURE_REMOVE, {"credentialId": second})
    evidence = alice.sign(fresh)
    removed = await alice.send(PROCEDURE_REMOVE, {"credentialId": second}, evidence)
    assert removed.status_code == 200, removed.text
    assert removed.json()["output"] == {"removed": second, "remaining": 1}
    assert ids(await alice.listed()) == [first]
    # Replayed under a new invocation id: spent.
    assert reason(await alice.send(PROCEDURE_REMOVE, {"credentialId": second}, evidence)) == "used"

    # The last passkey stays: replace it, or an administrator re-enrols the person.
    last = await alice.approved(PROCEDURE_REMOVE, {"credentialId": first})
    assert reason(last) == "passkey-last-passkey"
    # Bob's passkey in alice's removal, with her own fresh assertion: as unknown as a made-up id.
    bobs = ids(await bob.listed())[0]
    foreign = await alice.approved(PROCEDURE_REMOVE, {"credentialId": bobs})
    unknown = await alice.approved(PROCEDURE_REMOVE, {"credentialId": "AAAAAAAA"})
    assert error_of(foreign) == error_of(unknown) and reason(foreign) == "passkey-unknown-passkey"
    assert ids(await bob.listed()) == [bobs] and ids(await alice.listed()) == [first]


def test_two_removals_of_the_last_two_passkeys_cannot_both_succeed(passkeys: Passkeys, store: Any) -> None:
    authenticator = SoftAuthenticator(ORIGIN)
    passkeys.register(ALICE, authenticator.create(passkeys.registration_options(ALICE)))
    first = passkeys.listing(ALICE)[0].credential_id
    # The second one stored directly (the add ceremony is tested above): two to remove.
    second = "BBBBBBBB"
    row = tables.StoredPasskey(second, person(ALICE), "pk", 0, (), "h", "2026-01-01T00:00:00+00:00")
    store.run(lambda db: tables.insert_passkey(db, row))
    assert len(passkeys.listing(ALICE)) == 2

    holding, proceed = threading.Event(), threading.Event()
    outcomes: dict[str, Any] = {}

    def slow(db: Any) -> int:
        left = manage.remove(db, person(ALICE), first)
        holding.set()
        proceed.wait(10)  # the transaction stays open while the other removal runs
        return left

    def remove_slowly() -> None:
        outcomes["first"] = store.run(slow)

    def remove_second() -> None:
        holding.wait(10)
        try:
            outcomes["second"] = store.run(lambda db: manage.remove(db, person(ALICE), second))
        except ManagementRefused as refused:
            outcomes["second"] = refused.reason

    threads = [threading.Thread(target=remove_slowly), threading.Thread(target=remove_second)]
    for thread in threads:
        thread.start()
    holding.wait(10)
    threading.Timer(0.5, proceed.set).start()  # the second waits on the first, then sees one left
    for thread in threads:
        thread.join(20)
    assert outcomes == {"first": 1, "second": "last-passkey"}
    assert [p.credential_id for p in passkeys.listing(ALICE)] == [second]


# ---------------------------------------------------------------------------------- replace


async def test_replacement_swaps_one_passkey_for_a_new_one_at_once(alice: Person, bob: Person) -> None:
    old = await alice.first_passkey()
    await alice.send(PROCEDURE_RENAME, {"credentialId": old, "name": "Old phone"})
    # A replacement keeps the count: it works at max_per_person too.
    new = await alice.another_passkey(replaces=old)
    listed = await alice.listed()
    assert ids(listed) == [new] and listed[0]["name"] == "This device's passkey 1"
    # The old passkey is no longer the person's: an assertion of it is refused.
    nonce = secrets.token_bytes(32)
    options = alice.passkeys.authentication_options(ALICE, nonce)
    old_key = alice.authenticator.credentials[0]
    stale = alice.authenticator.get(options, credential=old_key)
    assert alice.passkeys.verify_assertion(ALICE, nonce, stale) == "unknown-credential"

    # Replacing bob's passkey: refused like an unknown one, before any ceremony starts.
    bobs = await bob.first_passkey()
    assert reason(await alice.approved(PROCEDURE_ADD_OPTIONS, {"replaces": bobs})) == "passkey-unknown-passkey"
    assert ids(await bob.listed()) == [bobs]


async def test_a_replacement_whose_old_passkey_went_meanwhile_stores_nothing(alice: Person) -> None:
    first = await alice.first_passkey()
    second = await alice.another_passkey()
    options = await alice.approved(PROCEDURE_ADD_OPTIONS, {"replaces": second})
    assert options.status_code == 200
    removed = await alice.approved(PROCEDURE_REMOVE, {"credentialId": second})  # another tab
    assert removed.status_code == 200
    made = alice.authenticator.create(options.json()["output"]["publicKey"])
    refused = await alice.send(PROCEDURE_REGISTER, {"credential": made})
    assert reason(refused) == "passkey-unknown-passkey"
    assert ids(await alice.listed()) == [first]


# ---------------------------------------------------------------------------------- re-enrolment


async def test_an_administrator_reenrols_a_person_who_lost_every_passkey(
    alice: Person, bob: Person, admin: Person, http: httpx.AsyncClient, passkeys: Passkeys, clock: Clock,
    audited: list[CallRecord],
) -> None:
    lost = await alice.first_passkey()
    await alice.another_passkey()
    # Alice's own session cannot: she holds no admin permission.
    assert error_of(await alice.send(PROCEDURE_REENROL, {"person": "alice"}))["code"] == "NOT_AUTHORIZED"
    # The administrator's call needs their own approval (a dialog's answer: they have no passkey).
    challenge = await admin.ask(PROCEDURE_REENROL, {"person": "alice"})
    assert challenge["level"] == "confirm"
    evidence = {"challenge": challenge["id"], "approvedAt": clock.now.isoformat()}
    done = await admin.send(PROCEDURE_REENROL, {"person": "alice"}, evidence)
    assert done.status_code == 200, done.text
    output = done.json()["output"]
    assert output["removed"] == 2 and output["person"] == "alice"
    code = output["code"]
    assert len(code.replace("-", "")) == 24
    assert await alice.listed() == []
    # Her lost device no longer approves anything.
    assert not passkeys.has_passkey(ALICE)

    # Her session alone: no first passkey without the code; a wrong code; bob with her code.
    assert reason(await alice.send(PROCEDURE_OPTIONS, {})) == "passkey-grant-required"
    assert reason(await alice.send(PROCEDURE_OPTIONS, {"grant": "AAAA-BBBB"})) == "passkey-grant-invalid"
    assert reason(await bob.send(PROCEDURE_OPTIONS, {"grant": code})) == "passkey-grant-invalid"
    # The code as a person types it (lower case, spaces): her new passkey.
    new = await alice.first_passkey(grant=code.lower().replace("-", " "))
    assert ids(await alice.listed()) == [new] and new != lost
    # Used once: she has a passkey now; after another reset its code is the only one that counts.
    assert reason(await alice.send(PROCEDURE_OPTIONS, {"grant": code})) == "passkey-assertion-required"
    done = await admin.send(PROCEDURE_REENROL, {"person": "alice"},
                            {"challenge": (await admin.ask(PROCEDURE_REENROL, {"person": "alice"}))["id"],
                             "approvedAt": clock.now.isoformat()})
    fresh = done.json()["output"]["code"]
    assert reason(await alice.send(PROCEDURE_OPTIONS, {"grant": code})) == "passkey-grant-invalid"
    # Short-lived: past grant_seconds it is refused, and it still closes the free first enrolment.
    clock.now += timedelta(seconds=901)
    assert reason(await alice.send(PROCEDURE_OPTIONS, {"grant": fresh})) == "passkey-grant-expired"
    assert reason(await alice.send(PROCEDURE_OPTIONS, {})) == "passkey-grant-required"

    # Every step is in the audit trail: who, what, which passkey or person, the outcome.
    steps = [(r.procedure_id, r.caller.id if r.caller else None, r.outcome) for r in audited]
    assert (PROCEDURE_REENROL, "alice", "NOT_AUTHORIZED") in steps
    assert (PROCEDURE_REENROL, "root", "ok") in steps
    assert (PROCEDURE_REGISTER, "alice", "ok") in steps
    reenrolled = [r for r in audited if r.procedure_id == PROCEDURE_REENROL and r.outcome == "ok"]
    assert reenrolled[0].input is not None and json.loads(reenrolled[0].input) == {"person": "alice"}
    removals = [r for r in audited if r.procedure_id == PROCEDURE_ADD_OPTIONS and r.outcome == "ok"]
    assert removals and all(r.caller == ALICE for r in removals)


async def test_an_administrator_reenrols_nobody_else_and_never_themselves(
    admin: Person, alice: Person, http: httpx.AsyncClient, passkeys: Passkeys, clock: Clock
) -> None:
    await alice.first_passkey()
    # An administrator with a passkey of their own approves with it.
    await admin.first_passkey()
    challenge = await admin.ask(PROCEDURE_REENROL, {"person": "alice"})
    assert challenge["level"] == "webauthn"
    unsigned = {"challenge": challenge["id"], "approvedAt": clock.now.isoformat()}
    assert reason(await admin.send(PROCEDURE_REENROL, {"person": "alice"}, unsigned)) == "presence-required"
    assert len(await alice.listed()) == 1
    # Themselves: refused, whatever their approval.
    assert reason(await admin.approved(PROCEDURE_REENROL, {"person": "root"})) == "passkey-self-reenrol"
    assert passkeys.has_passkey(ADMIN)
    # An administrator of another tenant reaches a person of their own tenant of that name only.
    other = Person(http, passkeys, clock, "tok-other-admin")
    ask = await other.ask(PROCEDURE_REENROL, {"person": "alice"})
    done = await other.send(PROCEDURE_REENROL, {"person": "alice"},
                            {"challenge": ask["id"], "approvedAt": clock.now.isoformat()})
    assert done.status_code == 200 and done.json()["output"]["removed"] == 0
    assert len(await alice.listed()) == 1


# ---------------------------------------------------------------------------------- schema


def test_passkeys_of_the_first_schema_are_kept_and_named(dsn: str, clock: Clock) -> None:
    store = open_store(dsn)
    try:
        def version_one(db: Any) -> None:
            sqlite = "sqlite" in type(db).__module__
            run = (lambda sql, args=(): db.execute(sql.replace("%s", "?"), args)) if sqlite else db.execute
            run("CREATE TABLE IF NOT EXISTS agentsurface_schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
            for statement in tables.MIGRATIONS[1]:
                run(statement)
            run("INSERT INTO agentsurface_schema_version (component, version) VALUES ('passkeys', 1)")
            run("INSERT INTO agentsurface_passkeys (credential_id, person, public_key, sign_count, transports,"
                " user_handle, created_at) VALUES (%s, %s, %s, 0, '[]', 'h', '2026-01-01T00:00:00+00:00')",
                ("AAAA", person(ALICE), "pk"))

        store.run(version_one)
        passkeys = Passkeys(store, PasskeyConfig(rp_id="devices.example", rp_name="D", origins=(ORIGIN,),
                                                 person=person), clock=clock.seconds)
        assert store.run(schema_version) == PASSKEY_SCHEMA_VERSION == 2
        assert [(p.credential_id, p.name) for p in passkeys.listing(ALICE)] == [("AAAA", "Passkey 1")]
    finally:
        store.close()  # type: ignore[attr-defined]
