"""Where passkeys live: two tables in the invocation store's database, SQLite or PostgreSQL.

``agentsurface_passkeys`` holds each registered credential (credential id, COSE public key,
sign counter, transports, user handle, person, created / last used); ``agentsurface_passkey_ceremonies``
holds the one pending registration challenge per person. Their schema is versioned in the store's
``agentsurface_schema_version`` table under its own component, ``passkeys``, so it evolves apart
from the invocation records. Every function takes the store's connection inside a transaction
(``store.run(lambda db: ...)`` or a procedure's ``call.db``): a counter update commits with the
call it approves, or not at all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..stores.protocol import StoreVersionError

COMPONENT = "passkeys"
PASSKEY_SCHEMA_VERSION = 1
# pg_advisory_xact_lock key of the passkey tables' migrations ("ag_passk").
_SCHEMA_LOCK = 0x61675F706173736B

# One SQL text per statement, with %s placeholders (SQLite's ? are substituted).
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE IF NOT EXISTS agentsurface_passkeys (
            credential_id TEXT PRIMARY KEY,
            person        TEXT NOT NULL,
            public_key    TEXT NOT NULL,
            sign_count    BIGINT NOT NULL,
            transports    TEXT NOT NULL,
            user_handle   TEXT NOT NULL,
            created_at    TEXT NOT NULL,
            last_used_at  TEXT
        )""",
        "CREATE INDEX IF NOT EXISTS agentsurface_passkeys_by_person ON agentsurface_passkeys (person)",
        """CREATE TABLE IF NOT EXISTS agentsurface_passkey_ceremonies (
            person      TEXT PRIMARY KEY,
            challenge   TEXT NOT NULL,
            user_handle TEXT NOT NULL,
            expires_at  DOUBLE PRECISION NOT NULL
        )""",
    ),
}
assert max(MIGRATIONS) == PASSKEY_SCHEMA_VERSION


@dataclass(frozen=True, slots=True)
class StoredPasskey:
    """One registered credential (binary fields base64url-encoded, as WebAuthn's JSON carries them)."""

    credential_id: str
    person: str
    public_key: str
    sign_count: int
    transports: tuple[str, ...]
    user_handle: str
    created_at: str
    last_used_at: str | None = None


@dataclass(frozen=True, slots=True)
class PendingRegistration:
    person: str
    challenge: str
    user_handle: str
    expires_at: float


def is_sqlite(db: Any) -> bool:
    return isinstance(db, sqlite3.Connection)


def _rows(db: Any, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    if is_sqlite(db):
        return [tuple(row) for row in db.execute(statement.replace("%s", "?"), tuple(params)).fetchall()]
    from psycopg.rows import tuple_row

    with db.cursor(row_factory=tuple_row) as cur:
        cur.execute(statement, tuple(params))
        return list(cur.fetchall()) if cur.description is not None else []


def _execute(db: Any, statement: str, params: Sequence[Any] = ()) -> int:
    """Run one statement; returns the number of rows it changed."""
    if is_sqlite(db):
        return int(db.execute(statement.replace("%s", "?"), tuple(params)).rowcount)
    with db.cursor() as cur:
        cur.execute(statement, tuple(params))
        return int(cur.rowcount)


def migrate(db: Any, where: str = "the store") -> None:
    """Create or migrate the passkey tables (idempotent; serialized between PostgreSQL workers)."""
    if not is_sqlite(db):
        _execute(db, "SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
    _execute(
        db,
        "CREATE TABLE IF NOT EXISTS agentsurface_schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    )
    found = _rows(db, "SELECT version FROM agentsurface_schema_version WHERE component = %s", (COMPONENT,))
    current = int(found[0][0]) if found else 0
    if current > PASSKEY_SCHEMA_VERSION:
        raise StoreVersionError(
            f"the passkey tables in {where} are at schema version {current}; this release knows up to "
            f"{PASSKEY_SCHEMA_VERSION}: upgrade agentsurface"
        )
    for version in range(current + 1, PASSKEY_SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[version]:
            _execute(db, statement)  # our own constant SQL
    _execute(
        db,
        "INSERT INTO agentsurface_schema_version (component, version) VALUES (%s, %s)"
        " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        (COMPONENT, PASSKEY_SCHEMA_VERSION),
    )


def schema_version(db: Any) -> int:
    found = _rows(db, "SELECT version FROM agentsurface_schema_version WHERE component = %s", (COMPONENT,))
    return int(found[0][0]) if found else 0


_COLUMNS = "credential_id, person, public_key, sign_count, transports, user_handle, created_at, last_used_at"


def _passkey(row: tuple[Any, ...]) -> StoredPasskey:
    transports = json.loads(row[4])
    return StoredPasskey(
        credential_id=str(row[0]),
        person=str(row[1]),
        public_key=str(row[2]),
        sign_count=int(row[3]),
        transports=tuple(str(t) for t in transports) if isinstance(transports, list) else (),
        user_handle=str(row[5]),
        created_at=str(row[6]),
        last_used_at=None if row[7] is None else str(row[7]),
    )


def passkeys_of(db: Any, person: str) -> list[StoredPasskey]:
    rows = _rows(db, f"SELECT {_COLUMNS} FROM agentsurface_passkeys WHERE person = %s ORDER BY created_at, credential_id", (person,))
    return [_passkey(row) for row in rows]


def passkey_by_id(db: Any, credential_id: str) -> StoredPasskey | None:
    rows = _rows(db, f"SELECT {_COLUMNS} FROM agentsurface_passkeys WHERE credential_id = %s", (credential_id,))
    return _passkey(rows[0]) if rows else None


def count_passkeys(db: Any, person: str) -> int:
    return int(_rows(db, "SELECT COUNT(*) FROM agentsurface_passkeys WHERE person = %s", (person,))[0][0])


def insert_passkey(db: Any, passkey: StoredPasskey) -> None:
    _execute(
        db,
        f"INSERT INTO agentsurface_passkeys ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            passkey.credential_id,
            passkey.person,
            passkey.public_key,
            passkey.sign_count,
            json.dumps(list(passkey.transports)),
            passkey.user_handle,
            passkey.created_at,
            passkey.last_used_at,
        ),
    )


def advance_counter(db: Any, credential_id: str, seen: int, new: int, used_at: str) -> bool:
    """Compare and set: the counter moves from ``seen`` to ``new`` only if nobody moved it since
    (a concurrent use of the same assertion loses). False when it had moved."""
    changed = _execute(
        db,
        "UPDATE agentsurface_passkeys SET sign_count = %s, last_used_at = %s"
        " WHERE credential_id = %s AND sign_count = %s",
        (new, used_at, credential_id, seen),
    )
    return changed == 1


def delete_passkey(db: Any, person: str, credential_id: str) -> bool:
    return _execute(
        db, "DELETE FROM agentsurface_passkeys WHERE person = %s AND credential_id = %s", (person, credential_id)
    ) == 1


def save_pending(db: Any, pending: PendingRegistration) -> None:
    _execute(
        db,
        "INSERT INTO agentsurface_passkey_ceremonies (person, challenge, user_handle, expires_at)"
        " VALUES (%s, %s, %s, %s) ON CONFLICT (person) DO UPDATE SET challenge = excluded.challenge,"
        " user_handle = excluded.user_handle, expires_at = excluded.expires_at",
        (pending.person, pending.challenge, pending.user_handle, pending.expires_at),
    )


def take_pending(db: Any, person: str) -> PendingRegistration | None:
    """The person's pending registration, removed (a challenge is good for one attempt)."""
    rows = _rows(
        db,
        "SELECT person, challenge, user_handle, expires_at FROM agentsurface_passkey_ceremonies WHERE person = %s",
        (person,),
    )
    if not rows:
        return None
    _execute(db, "DELETE FROM agentsurface_passkey_ceremonies WHERE person = %s", (person,))
    row = rows[0]
    return PendingRegistration(str(row[0]), str(row[1]), str(row[2]), float(row[3]))


def forget_expired_ceremonies(db: Any, now: float) -> int:
    return _execute(db, "DELETE FROM agentsurface_passkey_ceremonies WHERE expires_at < %s", (now,))


__all__ = [
    "PASSKEY_SCHEMA_VERSION",
    "PendingRegistration",
    "StoredPasskey",
    "advance_counter",
    "count_passkeys",
    "delete_passkey",
    "forget_expired_ceremonies",
    "insert_passkey",
    "migrate",
    "passkey_by_id",
    "passkeys_of",
    "save_pending",
    "schema_version",
    "take_pending",
]
