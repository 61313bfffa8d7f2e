"""Shared by the Django passkey tests (SQLite and PostgreSQL): one person's whole life with
passkeys on the project's own database, through DjangoInvocationStore."""

from __future__ import annotations

import secrets

from agentsurface.django import DjangoInvocationStore
from agentsurface.server import Caller
from agentsurface.server.passkeys import PasskeyConfig, Passkeys
from tests._shared.server.soft_authenticator import SoftAuthenticator

ORIGIN = "https://devices.example"
ALICE = Caller("alice", "acme", frozenset())


def passkeys_on(store: DjangoInvocationStore) -> Passkeys:
    config = PasskeyConfig(rp_id="devices.example", rp_name="Devices", origins=(ORIGIN,))
    return Passkeys(store, config)


def a_persons_passkeys(store: DjangoInvocationStore) -> None:
    passkeys = passkeys_on(store)
    passkeys_on(store)  # a second worker, a restart: the tables are migrated once
    assert passkeys.listing(ALICE) == []
    authenticator = SoftAuthenticator(ORIGIN)
    made = passkeys.register(ALICE, authenticator.create(passkeys.registration_options(ALICE)))
    assert passkeys.has_passkey(ALICE)
    (listed,) = passkeys.listing(ALICE)
    assert listed.credential_id == made.credential_id and listed.last_used_at is None
    assert passkeys.rename(ALICE, made.credential_id, "  Laptop\u202e  ") == "Laptop"
    nonce = secrets.token_bytes(32)
    assertion = authenticator.get(passkeys.authentication_options(ALICE, nonce))
    assert passkeys.verify_assertion(ALICE, nonce, assertion) is None
    assert passkeys.verify_assertion(ALICE, nonce, assertion) == "counter"  # replayed
    (used,) = passkeys.listing(ALICE)
    assert used.name == "Laptop" and used.last_used_at is not None
