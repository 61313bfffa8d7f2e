"""Passkeys on the server (agentsurface.server.passkeys), on both stores: SQLite (a file) and a
real PostgreSQL server. Registration and assertions come from a software authenticator with
real keys and signatures (tests/_shared/server/soft_authenticator.py); e2e/test_passkeys.py does the
same with Chrome's virtual authenticator.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from agentsurface.server import SCHEMA_VERSION, Caller, ProcedureServer, StoreVersionError, open_store
from agentsurface.server.passkeys import (
    PROCEDURE_OPTIONS,
    PROCEDURE_REGISTER,
    PasskeyConfig,
    PasskeyError,
    Passkeys,
    RegistrationRefused,
)
from agentsurface.server.passkeys.config import origin_allowed
from agentsurface.server.passkeys.tables import PASSKEY_SCHEMA_VERSION, schema_version
from tests._shared.server.helpers import call, error_of
from tests._shared.server.postgres import PostgresServer
from tests._shared.server.soft_authenticator import SoftAuthenticator

ORIGIN = "https://devices.example"
ALICE = Caller("alice", "acme", frozenset({"devices.write"}))
ALICE_AGENT = Caller("alice~agent", "acme", frozenset({"devices.write"}))
BOB = Caller("bob", "acme", frozenset({"devices.write"}))


def person(caller: Caller) -> str:
    """The demo's mapping: the agent acting for alice uses alice's passkeys."""
    return f"{caller.tenant}\x1f{caller.id.removesuffix('~agent')}"


def config(**overrides: Any) -> PasskeyConfig:
    base: dict[str, Any] = {
        "rp_id": "devices.example",
        "rp_name": "Devices",
        "origins": (ORIGIN,),
        "person": person,
        "may_register": lambda caller: not caller.id.endswith("~agent"),
    }
    return PasskeyConfig(**{**base, **overrides})


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


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def passkeys(store: Any, clock: Clock) -> Passkeys:
    return Passkeys(store, config(), clock=clock)


def registered(passkeys: Passkeys, caller: Caller = ALICE, origin: str = ORIGIN) -> SoftAuthenticator:
    authenticator = SoftAuthenticator(origin)
    passkeys.register(caller, authenticator.create(passkeys.registration_options(caller)))
    return authenticator


def challenge() -> bytes:
    return secrets.token_bytes(32)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# ---------------------------------------------------------------------------------- schema


def test_the_passkey_tables_are_versioned_apart_and_created_once(dsn: str, clock: Clock) -> None:
    store = open_store(dsn)
    try:
        first = Passkeys(store, config(), clock=clock)
        registered(first)
        again = Passkeys(store, config(), clock=clock)  # a second worker, a restart: idempotent
        assert again.has_passkey(ALICE)
        assert store.run(schema_version) == PASSKEY_SCHEMA_VERSION == 2
        assert store.schema_version() == SCHEMA_VERSION  # type: ignore[attr-defined]  # the store's own, apart
    finally:
        store.close()  # type: ignore[attr-defined]


def test_passkey_tables_from_a_newer_release_are_refused(store: Any) -> None:
    store.run(
        lambda db: db.execute("INSERT INTO agentsurface_schema_version (component, version) VALUES ('passkeys', 99)")
    )
    with pytest.raises(StoreVersionError, match=r"passkey tables .* version 99"):
        Passkeys(store, config())


def test_a_bad_configuration_is_refused_at_once() -> None:
    for bad in (
        {"rp_id": "https://devices.example"},
        {"rp_id": ""},
        {"origins": ()},
        {"origins": ("devices.example",)},
        {"origins": ("https://devices.example/",)},
        {"user_verification": "always"},
        {"max_per_person": 0},
        {"rp_name": ""},
    ):
        with pytest.raises(PasskeyError):
            config(**bad)


# ---------------------------------------------------------------------------------- registration


def test_registration_stores_the_credential_for_the_person(passkeys: Passkeys, store: Any) -> None:
    assert not passkeys.has_passkey(ALICE) and passkeys.level(ALICE) == "confirm"
    options = passkeys.registration_options(ALICE)
    assert options["rp"] == {"id": "devices.example", "name": "Devices"}
    assert options["authenticatorSelection"]["userVerification"] == "preferred"
    authenticator = SoftAuthenticator(ORIGIN)
    made = authenticator.create(options)
    passkey = passkeys.register(ALICE, made)
    assert passkey.credential_id == made["id"] and passkey.transports == ("internal",)
    assert passkeys.has_passkey(ALICE) and passkeys.level(ALICE) == "webauthn"
    assert passkeys.has_passkey(ALICE_AGENT)  # the agent acting for alice: her passkeys
    assert not passkeys.has_passkey(BOB)
    rows = store.run(
        lambda db: [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in db.execute(
            "SELECT credential_id, person, sign_count, transports, user_handle FROM agentsurface_passkeys"
        ).fetchall()]
    )
    assert rows == [(made["id"], "acme\x1falice", 0, '["internal"]', options["user"]["id"])]


@pytest.mark.parametrize(
    ("bend", "reason"),
    [
        ("origin", "wrong-origin"),
        ("challenge", "challenge-mismatch"),
        ("rp", "wrong-rp"),
        ("presence", "user-not-present"),
        ("no-ceremony", "no-ceremony"),
        ("expired", "expired"),
        ("garbage", "malformed"),
    ],
)
def test_registration_refusals(passkeys: Passkeys, clock: Clock, bend: str, reason: str) -> None:
    authenticator = SoftAuthenticator(ORIGIN)
    options = passkeys.registration_options(ALICE)
    if bend == "origin":
        made = authenticator.create(options, origin="https://evil.example")
    elif bend == "challenge":
        made = authenticator.create({**options, "challenge": b64(challenge())})
    elif bend == "rp":
        made = authenticator.create(options, rp_id="evil.example")
    elif bend == "presence":
        authenticator.user_present = False
        made = authenticator.create(options)
    elif bend == "no-ceremony":
        made = authenticator.create(options)
        passkeys.register(ALICE, made)
        made = authenticator.create(options)  # the same challenge again
    elif bend == "expired":
        clock.now += 301
        made = authenticator.create(options)
    else:
        made = {"id": "x", "type": "public-key", "response": {}}
    with pytest.raises(RegistrationRefused) as refused:
        passkeys.register(ALICE, made)
    assert refused.value.reason == reason
    assert passkeys.has_passkey(ALICE) is (bend == "no-ceremony")


def test_user_verification_required_refuses_a_touch_only_registration(store: Any) -> None:
    strict = Passkeys(store, config(user_verification="required"))
    authenticator = SoftAuthenticator(ORIGIN, user_verified=False)
    with pytest.raises(RegistrationRefused) as refused:
        strict.register(ALICE, authenticator.create(strict.registration_options(ALICE)))
    assert refused.value.reason == "user-not-verified"


def test_a_token_thief_cannot_add_a_passkey_beside_the_persons(store: Any, clock: Clock) -> None:
    # Even where a person may hold several: another one needs an assertion of theirs
    # (passkeys.addOptions, tests/integration/server/test_passkey_management.py).
    passkeys = Passkeys(store, config(max_per_person=5), clock=clock)
    registered(passkeys)
    with pytest.raises(RegistrationRefused) as refused:
        passkeys.registration_options(ALICE)
    assert refused.value.reason == "assertion-required"
    with pytest.raises(RegistrationRefused) as refused:
        passkeys.registration_options(ALICE_AGENT)  # and the agent may never register
    assert refused.value.reason == "not-allowed"


# ---------------------------------------------------------------------------------- assertions


def test_an_assertion_over_the_servers_challenge_verifies_and_moves_the_counter(passkeys: Passkeys) -> None:
    authenticator = registered(passkeys)
    nonce = challenge()
    options = passkeys.authentication_options(ALICE_AGENT, nonce)
    assert options["rpId"] == "devices.example" and options["challenge"] == b64(nonce)
    assert [c["id"] for c in options["allowCredentials"]] == [b64(authenticator.credentials[0].credential_id)]
    assertion = authenticator.get(options)
    assert passkeys.verify_assertion(ALICE_AGENT, nonce, assertion) is None
    # Replayed: same challenge, same counter.
    assert passkeys.verify_assertion(ALICE_AGENT, nonce, assertion) == "counter"
    assert passkeys.verify_assertion(ALICE_AGENT, nonce, json.dumps(authenticator.get(options))) is None


def test_assertion_refusals(passkeys: Passkeys) -> None:
    authenticator = registered(passkeys)
    bob_key = registered(passkeys, BOB)
    nonce = challenge()
    options = passkeys.authentication_options(ALICE, nonce)

    def verify(assertion: Any, caller: Caller = ALICE, expected: bytes = nonce) -> str | None:
        return passkeys.verify_assertion(caller, expected, assertion)

    assert verify(authenticator.get(options), expected=challenge()) == "challenge-mismatch"
    assert verify(authenticator.get({**options, "challenge": b64(challenge())})) == "challenge-mismatch"
    assert verify(authenticator.get(options), caller=BOB) == "foreign-credential"
    assert verify(bob_key.get(passkeys.authentication_options(BOB, nonce))) == "foreign-credential"
    assert verify(authenticator.get(options, origin="https://evil.example")) == "wrong-origin"
    assert verify(authenticator.get({**options, "rpId": "evil.example"})) == "wrong-rp"
    stranger = SoftAuthenticator(ORIGIN)
    stranger.create(passkeys.registration_options(Caller("carol", "acme")))  # never registered
    assert verify(stranger.get(options, credential=stranger.credentials[0])) == "unknown-credential"
    authenticator.user_present = False
    assert verify(authenticator.get(options)) == "user-not-present"
    authenticator.user_present = True
    forged = authenticator.get(options)
    signature = bytearray(base64.urlsafe_b64decode(forged["response"]["signature"] + "=="))
    signature[-1] ^= 1
    forged["response"]["signature"] = b64(bytes(signature))
    assert verify(forged) == "signature"
    for garbage in ({}, "not json", {"id": "!!", "rawId": "!!", "type": "public-key", "response": {}}, []):
        assert verify(garbage) == "malformed"
    # A counter that goes backwards (a cloned authenticator) is refused; forward is accepted.
    assert verify(authenticator.get(options, counter=50)) is None
    assert verify(authenticator.get(options, counter=49)) == "counter"
    assert verify(authenticator.get(options, counter=51)) is None


def test_user_verification_required_refuses_a_touch_only_assertion(store: Any) -> None:
    strict = Passkeys(store, config(user_verification="required"))
    authenticator = registered(strict)
    nonce = challenge()
    options = strict.authentication_options(ALICE, nonce)
    assert options["userVerification"] == "required"
    authenticator.user_verified = False
    assert strict.verify_assertion(ALICE, nonce, authenticator.get(options)) == "user-not-verified"
    authenticator.user_verified = True
    assert strict.verify_assertion(ALICE, nonce, authenticator.get(options)) is None


def test_authenticators_without_a_counter_are_accepted(passkeys: Passkeys) -> None:
    authenticator = SoftAuthenticator(ORIGIN, counting=False)  # synced passkeys report 0 always
    passkeys.register(ALICE, authenticator.create(passkeys.registration_options(ALICE)))
    for _ in range(2):
        nonce = challenge()
        assertion = authenticator.get(passkeys.authentication_options(ALICE, nonce))
        assert passkeys.verify_assertion(ALICE, nonce, assertion) is None


def test_a_verification_in_the_callers_transaction_rolls_back_with_it(passkeys: Passkeys, store: Any) -> None:
    authenticator = registered(passkeys)
    nonce = challenge()
    assertion = authenticator.get(passkeys.authentication_options(ALICE, nonce))

    class Undone(Exception):
        pass

    def approve_then_fail(db: Any) -> None:
        assert passkeys.verify_assertion(ALICE, nonce, assertion, db) is None
        raise Undone

    with pytest.raises(Undone):
        store.run(approve_then_fail)
    # The call failed, so its counter update is gone: the same assertion is still good once.
    assert passkeys.verify_assertion(ALICE, nonce, assertion) is None
    assert passkeys.verify_assertion(ALICE, nonce, assertion) == "counter"


# ---------------------------------------------------------------------------------- as procedures


@pytest.fixture
async def client(passkeys: Passkeys, store: Any) -> AsyncIterator[httpx.AsyncClient]:
    tokens = {"tok-alice": ALICE, "tok-agent": ALICE_AGENT, "tok-bob": BOB}

    def authenticate(request: Request) -> Caller | None:
        return tokens.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    server = ProcedureServer(passkeys.procedures(), authenticate=authenticate, store=store)
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        yield http


async def test_registration_through_the_procedure_server(client: httpx.AsyncClient, passkeys: Passkeys) -> None:
    answer = await call(client, PROCEDURE_OPTIONS, {})
    assert answer.status_code == 200, answer.text
    options = answer.json()["output"]["publicKey"]
    made = SoftAuthenticator(ORIGIN).create(options)
    done = await call(client, PROCEDURE_REGISTER, {"credential": made})
    assert done.status_code == 200, done.text
    assert done.json()["output"]["credentialId"] == made["id"]
    assert passkeys.has_passkey(ALICE)

    again = await call(client, PROCEDURE_OPTIONS, {})
    assert error_of(again)["code"] == "PRECONDITION_FAILED"
    assert error_of(again)["details"]["reason"] == "passkey-assertion-required"
    anonymous = await call(client, PROCEDURE_OPTIONS, {}, token=None)
    assert error_of(anonymous)["code"] == "NOT_AUTHENTICATED"
    agent = await call(client, PROCEDURE_OPTIONS, {}, token="tok-agent")
    assert error_of(agent)["code"] == "NOT_AUTHORIZED"


async def test_a_refused_registration_stores_nothing(client: httpx.AsyncClient, passkeys: Passkeys) -> None:
    options = (await call(client, PROCEDURE_OPTIONS, {}, token="tok-bob")).json()["output"]["publicKey"]
    made = SoftAuthenticator("https://evil.example").create(options)
    refused = await call(client, PROCEDURE_REGISTER, {"credential": made}, token="tok-bob")
    assert error_of(refused)["details"]["reason"] == "passkey-wrong-origin"
    assert not passkeys.has_passkey(BOB)
    malformed = await call(client, PROCEDURE_REGISTER, {"credential": {"id": 3}}, token="tok-bob")
    assert error_of(malformed)["details"]["reason"] == "passkey-malformed"
    extra = await call(client, PROCEDURE_REGISTER, {"credential": made, "more": 1}, token="tok-bob")
    assert error_of(extra)["code"] == "INVALID_INPUT"


# ---------------------------------------------------------------------------------- the server's hook


class MintedChallenge:
    """What the procedure server's verify_presence hook receives: the raw nonce it minted."""

    def __init__(self, nonce: bytes) -> None:
        self.nonce = nonce


def test_verify_presence_answers_the_servers_hook(passkeys: Passkeys) -> None:
    authenticator = registered(passkeys)
    minted = MintedChallenge(challenge())
    options = {**passkeys.request_options(ALICE_AGENT), "challenge": b64(minted.nonce)}
    assert "challenge" not in passkeys.request_options(ALICE_AGENT)
    assertion = authenticator.get(options)
    assert passkeys.verify_presence(ALICE_AGENT, minted, None) == "presence-required"
    assert passkeys.verify_presence(ALICE_AGENT, MintedChallenge(challenge()), assertion) == "passkey-challenge-mismatch"
    assert passkeys.verify_presence(BOB, minted, assertion) == "passkey-foreign-credential"
    assert passkeys.verify_presence(ALICE_AGENT, minted, assertion) is None
    assert passkeys.verify_presence(ALICE_AGENT, minted, assertion) == "passkey-counter"


async def test_the_persons_request_options_through_the_procedure_server(
    client: httpx.AsyncClient, passkeys: Passkeys
) -> None:
    authenticator = registered(passkeys)
    answer = await call(client, "domain:passkeys.assertionOptions", {}, token="tok-agent")
    assert answer.status_code == 200, answer.text
    options = answer.json()["output"]["publicKey"]
    assert options["rpId"] == "devices.example" and "challenge" not in options
    assert [c["id"] for c in options["allowCredentials"]] == [b64(authenticator.credentials[0].credential_id)]
    nobody = await call(client, "domain:passkeys.assertionOptions", {}, token="tok-bob")
    assert nobody.json()["output"]["publicKey"]["allowCredentials"] == []


def test_a_localhost_port_wildcard_for_development(store: Any) -> None:
    with pytest.raises(PasskeyError):
        config(origins=("https://devices.example:*",))
    dev = Passkeys(store, config(rp_id="localhost", origins=("http://localhost:*",)))
    authenticator = SoftAuthenticator("http://localhost:8123")
    dev.register(ALICE, authenticator.create(dev.registration_options(ALICE)))
    nonce = challenge()
    options = dev.authentication_options(ALICE, nonce)
    for elsewhere in ("http://localhost:81234", "http://localhost:", "http://localhost.evil:80",
                      "http://127.0.0.1:8123", "https://localhost:8123"):
        assert dev.verify_assertion(ALICE, nonce, authenticator.get(options, origin=elsewhere)) == "wrong-origin"
    assert dev.verify_assertion(ALICE, nonce, authenticator.get(options, origin="http://localhost:9000")) is None


def test_a_port_wildcard_never_matches_a_literal_star(store: Any) -> None:
    # The pattern stands for port numbers: a client claiming the origin "http://localhost:*"
    # itself is refused, at registration and at assertion.
    pattern = config(rp_id="localhost", origins=("http://localhost:*",))
    assert origin_allowed(pattern, "http://localhost:8123")
    for literal in ("http://localhost:*", "http://localhost:**", "http://localhost:*8"):
        assert not origin_allowed(pattern, literal)
    dev = Passkeys(store, pattern)
    starred = SoftAuthenticator("http://localhost:*")
    with pytest.raises(RegistrationRefused) as refused:
        dev.register(ALICE, starred.create(dev.registration_options(ALICE)))
    assert refused.value.reason == "wrong-origin"
    honest = SoftAuthenticator("http://localhost:8123")
    dev.register(ALICE, honest.create(dev.registration_options(ALICE)))
    nonce = challenge()
    options = dev.authentication_options(ALICE, nonce)
    assert dev.verify_assertion(ALICE, nonce, honest.get(options, origin="http://localhost:*")) == "wrong-origin"
    # Exact origins are compared exactly; a star anywhere else is refused when configured.
    for starred_config in (("https://*.devices.example",), ("http://localhost:*0",), ("http://*:*",)):
        with pytest.raises(PasskeyError):
            config(origins=starred_config)
