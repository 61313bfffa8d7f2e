"""A person managing their own passkeys, inside a transaction: the list they see, a new name
for one, and removing one. Every step looks only at the person's own passkeys: another person's
credential id is refused exactly like an unknown one, so nothing tells a caller it exists.

The fresh assertion that a removal needs is not checked here: the procedure that removes is
served with ``approval="webauthn"``, so the server refuses it unless the call carries an
assertion, by a current passkey of the same person, over a challenge minted for this very
call (this procedure, this credential id), short-lived and spent once in this transaction.
"""

from __future__ import annotations

from typing import Any

from ..._core.records import record
from . import tables as db_
from .checks import ManagementRefused
from .names import MAX_NAME, clean_name


@record
class PasskeyListing:
    """What a person sees of one of their passkeys (never its public key, counter or handle)."""

    credential_id: str
    name: str
    created_at: str
    last_used_at: str | None
    transports: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "credentialId": self.credential_id,
            "name": self.name,
            "createdAt": self.created_at,
            "lastUsedAt": self.last_used_at,
            "transports": list(self.transports),
        }


def listing(db: Any, person: str) -> list[PasskeyListing]:
    found = db_.passkeys_of(db, person)
    return [
        PasskeyListing(p.credential_id, p.name or f"Passkey {n}", p.created_at, p.last_used_at, p.transports)
        for n, p in enumerate(found, start=1)
    ]


def _unknown() -> ManagementRefused:
    return ManagementRefused("unknown-passkey", "You have no passkey with this id.")


def rename(db: Any, person: str, credential_id: str, name: str) -> str:
    """Give one of the person's passkeys a new name (cleaned: :func:`clean_name`); returns it."""
    cleaned = clean_name(name)
    if not cleaned or len(cleaned) > MAX_NAME:
        raise ManagementRefused("bad-name", f"A passkey's name is 1 to {MAX_NAME} characters of plain text.")
    if not db_.rename_passkey(db, person, credential_id, cleaned):
        raise _unknown()
    return cleaned


def remove(db: Any, person: str, credential_id: str) -> int:
    """Remove one of the person's passkeys, never their last one (a person who has a passkey
    keeps one: its protection never silently drops to a dialog's word). Serialized per person,
    so two removals of their last two passkeys cannot both succeed. Returns how many remain."""
    db_.lock_person(db, person)
    held = [p.credential_id for p in db_.passkeys_of(db, person)]
    if credential_id not in held:
        raise _unknown()
    if len(held) == 1:
        raise ManagementRefused(
            "last-passkey", "This is your only passkey: replace it instead, or ask an administrator to re-enrol you."
        )
    if not db_.delete_passkey(db, person, credential_id):  # pragma: no cover - held under the lock
        raise _unknown()
    return len(held) - 1


__all__ = ["PasskeyListing", "listing", "remove", "rename"]
