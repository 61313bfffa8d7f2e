"""The demo's passkeys (the server side): each person of the demo may register a passkey from the
console's "Register a passkey" button, then manage theirs in the top bar's "Passkeys" list (up
to three; adding, replacing or removing one asks a current one first); their agent uses the
person's passkeys, never registers or manages one. Re-enrolling a person who lost theirs
(``passkeys.reenrol``) needs the ``passkeys.admin`` permission, which no demo role holds. Once a person has one, the destructive ``devices.disable`` needs it: every
approval of it (the person's or their agent's call) is an assertion of that passkey. WebAuthn needs a domain as relying party id, so passkeys work when the page is
opened at ``http://localhost:PORT`` (any port), not at ``http://127.0.0.1:PORT``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from agentsurface.server import Caller, InvocationStore, ServedProcedure
from agentsurface.server.passkeys import PasskeyConfig, Passkeys

from .procedures import Session

RP_ID = "localhost"
ORIGINS = ("http://localhost:*",)


def _session(caller: Caller) -> Session:
    session = caller.data
    if not isinstance(session, Session):  # every demo caller comes from demo.server.api.Authenticator
        raise RuntimeError("a demo caller without its session")
    return session


def person_of(caller: Caller) -> str:
    """The person behind a call, whoever makes it (the person's buttons or their agent)."""
    principal = _session(caller).principal
    return f"{principal.tenant}\x1f{principal.user_id}"


def display_name(caller: Caller) -> str:
    return _session(caller).principal.user_id


def person_only(caller: Caller) -> bool:
    """Registration is the person's act: their agent never registers a passkey."""
    return _session(caller).channel == "person"


def demo_passkeys(store: InvocationStore) -> Passkeys:
    return Passkeys(
        store,
        PasskeyConfig(
            rp_id=RP_ID,
            rp_name="Devices console (demo)",
            origins=ORIGINS,
            person=person_of,
            user_name=display_name,
            may_register=person_only,
            may_manage=person_only,
            max_per_person=3,
        ),
    )


def with_passkey_approvals(served: Iterable[ServedProcedure], passkeys: Passkeys) -> list[ServedProcedure]:
    """The procedures that require approval ask ``passkeys.level``: ``"webauthn"`` of a person
    with a passkey (their own calls and their agent's), ``"confirm"`` of the others."""
    return [
        dataclasses.replace(p, approval=passkeys.level) if p.require_confirmation else p for p in served
    ]
