"""Re-enrolment after a person lost every passkey: an administrator's procedure revokes the
person's passkeys and issues a grant, a single-use code good for ``grant_seconds``, which the
administrator hands to the person through a channel they trust (in person, a call they placed).
The person's page registers a new passkey with that code and no assertion; nothing else lets a
person who was reset register one, and their session alone never can.

The store keeps only a digest of the code (a code has 120 random bits: a plain SHA-256 is
enough, nothing to salt). Its row stays after it expires: an expired grant still closes the way
to a first passkey without one, until an administrator issues a new grant.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..._core.records import record
from ..procedures import Caller
from . import tables as db_
from .checks import ManagementRefused, RegistrationReason
from .config import PasskeyConfig

GRANT_BYTES = 15  # 120 bits: 24 base32 characters, read out in six groups of four


def new_code() -> str:
    text = base64.b32encode(secrets.token_bytes(GRANT_BYTES)).decode("ascii")
    return "-".join(text[i:i + 4] for i in range(0, len(text), 4))


def code_digest(code: str) -> str:
    """The digest of a code as a person may type it (case, spaces and dashes do not count)."""
    normal = "".join(ch for ch in code.upper() if ch.isalnum())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def grant_check(db: Any, person: str, code: str | None, now: float) -> tuple[RegistrationReason | None, str | None]:
    """Whether ``person`` (who holds no passkey) may start registering one: ``(None, digest)``
    with their grant's digest, ``(None, None)`` for a first passkey without any grant, or the
    reason to refuse."""
    grant = db_.grant_of(db, person)
    if grant is None:
        # A code where none was issued: someone else's, or made up. Never a silent first enrolment.
        return ("grant-invalid", None) if code is not None else (None, None)
    if code is None:
        return "grant-required", None
    if not secrets.compare_digest(code_digest(code), grant.digest):
        return "grant-invalid", None
    if grant.expires_at <= now:
        return "grant-expired", None
    return None, grant.digest


@record
class Reenrolment:
    """What the administrator's procedure answers: the code to hand over, until when it is
    good, and how many passkeys of the person it revoked."""

    code: str
    expires_at: str
    removed: int


def reenrol(
    db: Any, config: PasskeyConfig, admin: Caller, admin_person: str, name: str, clock: Callable[[], float]
) -> Reenrolment:
    """Inside the call's transaction: revoke the named person's passkeys and pending
    registration, and issue their grant (replacing an earlier one)."""
    person = config.person_named(admin, name)
    if not isinstance(person, str) or not person:
        raise ManagementRefused("unknown-person", "No person of that name is yours to re-enrol.")
    if person == admin_person:
        raise ManagementRefused("self-reenrol", "Another administrator re-enrols you; nobody re-enrols themselves.")
    db_.lock_person(db, person)
    removed = db_.delete_passkeys_of(db, person)
    db_.forget_pending(db, person)
    code = new_code()
    now = clock()
    expires = now + config.grant_seconds
    db_.save_grant(
        db,
        db_.EnrolmentGrant(person, code_digest(code), expires, admin.scope, _iso(now)),
    )
    return Reenrolment(code, _iso(expires), removed)


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")


__all__ = ["GRANT_BYTES", "Reenrolment", "code_digest", "grant_check", "new_code", "reenrol"]
