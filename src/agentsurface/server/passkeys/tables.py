"""Where passkeys live: three tables in the invocation store's database, SQLite or PostgreSQL.

``agentsurface_passkeys`` holds each registered credential (credential id, COSE public key,
sign counter, transports, user handle, person, the person's name for it, created / last used);
``agentsurface_passkey_ceremonies`` holds the one pending registration challenge per person (and
what it is for: a first passkey, one more, a replacement, or an administrator's enrolment
grant); ``agentsurface_passkey_grants`` holds the re-enrolment grant an administrator issued for a
person (only a digest of its code). Their schema is versioned in the store's
``agentsurface_schema_version`` table under its own component, ``passkeys``, so it evolves apart
from the invocation records. Every function takes the store's connection inside a transaction
(``store.run(lambda db: ...)`` or a procedure's ``call.db``): a counter update commits with the
call it approves, or not at all.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal, cast

from ..._core.records import record
from ..stores.protocol import StoreVersionError

COMPONENT = "passkeys"
PASSKEY_SCHEMA_VERSION = 2
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
    2: (
        "ALTER TABLE agentsurface_passkeys ADD COLUMN name TEXT",
        "ALTER TABLE agentsurface_passkey_ceremonies ADD COLUMN purpose TEXT NOT NULL DEFAULT 'first'",
        "ALTER TABLE agentsurface_passkey_ceremonies ADD COLUMN replaces TEXT",
        "ALTER TABLE agentsurface_passkey_ceremonies ADD COLUMN grant_digest TEXT",
        """CREATE TABLE IF NOT EXISTS agentsurface_passkey_grants (
            person      TEXT PRIMARY KEY,
            digest      TEXT NOT NULL,
            expires_at  DOUBLE PRECISION NOT NULL,
            issued_by   TEXT NOT NULL,
            issued_at   TEXT NOT NULL
        )""",
    ),
}
assert max(MIGRATIONS) == PASSKEY_SCHEMA_VERSION


@record
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
    name: str = ""


# What a pending registration is for: the person's first passkey, one more beside theirs, a
# replacement of one of theirs (``replaces``), or an administrator's enrolment grant.
Purpose = Literal["first", "add", "replace", "grant"]


@record
class PendingRegistration:
    person: str
    challenge: str
    user_handle: str
    expires_at: float
    purpose: Purpose = "first"
    replaces: str | None = None
    grant_digest: str | None = None


@record
class EnrolmentGrant:
    """An administrator's re-enrolment grant: the person may register one passkey without an
    assertion, with the code whose digest this is, before ``expires_at``."""

    person: str
    digest: str
    expires_at: float
    issued_by: str
    issued_at: str


def is_sqlite(db: Any) -> bool:
    """SQLite's own connection (``?`` placeholders, ``db.execute``)."""
    return isinstance(db, sqlite3.Connection)


def _is_django(db: Any) -> bool:
    """Django's connection (DjangoInvocationStore): a cursor that takes ``%s`` on any backend."""
    return hasattr(db, "vendor") and hasattr(db, "in_atomic_block")


def _serialized_already(db: Any) -> bool:
    """SQLite, whichever way it is reached: its write transactions take turns already."""
    return is_sqlite(db) or (_is_django(db) and db.vendor == "sqlite")


def _rows(db: Any, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    if is_sqlite(db):
        return [tuple(row) for row in db.execute(statement.replace("%s", "?"), tuple(params)).fetchall()]
    if _is_django(db):
        with db.cursor() as cur:
            cur.execute(statement, tuple(params))
            return [tuple(row) for row in cur.fetchall()] if cur.description is not None else []
    from psycopg.rows import tuple_row

    with db.cursor(row_factory=tuple_row) as cur:
        cur.execute(statement, tuple(params))
        return list(cur.fetchall()) if cur.description is not None else []


def _execute(db: Any, statement: str, params: Sequence[Any] = ()) -> int:
    """Run one statement; returns the number of rows it changed."""
    if is_sqlite(db):
        return int(db.execute(statement.replace("%s", "?"), tuple(params)).rowcount)
    with db.cursor() as cur:  # psycopg's and Django's alike
        cur.execute(statement, tuple(params))
        return int(cur.rowcount)


def migrate(db: Any, where: str = "the store") -> None:
    """Create or migrate the passkey tables (idempotent; serialized between PostgreSQL workers)."""
    if not _serialized_already(db):
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


_COLUMNS = "credential_id, person, public_key, sign_count, transports, user_handle, created_at, last_used_at, name"


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
        name="" if row[8] is None else str(row[8]),
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
        f"INSERT INTO agentsurface_passkeys ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            passkey.credential_id,
            passkey.person,
            passkey.public_key,
            passkey.sign_count,
            json.dumps(list(passkey.transports)),
            passkey.user_handle,
            passkey.created_at,
            passkey.last_used_at,
            passkey.name,
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


def delete_passkeys_of(db: Any, person: str) -> int:
    return _execute(db, "DELETE FROM agentsurface_passkeys WHERE person = %s", (person,))


def rename_passkey(db: Any, person: str, credential_id: str, name: str) -> bool:
    return _execute(
        db,
        "UPDATE agentsurface_passkeys SET name = %s WHERE person = %s AND credential_id = %s",
        (name, person, credential_id),
    ) == 1


def lock_person(db: Any, person: str) -> None:
    """Serialize the changes to one person's passkeys until this transaction ends (two removals
    of their last two passkeys, a registration beside a re-enrolment). SQLite's write
    transactions are serialized already; PostgreSQL takes a transaction-scoped advisory lock."""
    if _serialized_already(db):
        return
    key = int.from_bytes(hashlib.sha256(b"agentsurface-passkeys\x1f" + person.encode("utf-8")).digest()[:8], "big", signed=True)
    _execute(db, "SELECT pg_advisory_xact_lock(%s)", (key,))


def save_pending(db: Any, pending: PendingRegistration) -> None:
    _execute(
        db,
        "INSERT INTO agentsurface_passkey_ceremonies"
        " (person, challenge, user_handle, expires_at, purpose, replaces, grant_digest)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (person) DO UPDATE SET challenge = excluded.challenge,"
        " user_handle = excluded.user_handle, expires_at = excluded.expires_at, purpose = excluded.purpose,"
        " replaces = excluded.replaces, grant_digest = excluded.grant_digest",
        (
            pending.person,
            pending.challenge,
            pending.user_handle,
            pending.expires_at,
            pending.purpose,
            pending.replaces,
            pending.grant_digest,
        ),
    )


def take_pending(db: Any, person: str) -> PendingRegistration | None:
    """The person's pending registration, removed (a challenge is good for one attempt)."""
    rows = _rows(
        db,
        "SELECT person, challenge, user_handle, expires_at, purpose, replaces, grant_digest"
        " FROM agentsurface_passkey_ceremonies WHERE person = %s",
        (person,),
    )
    if not rows:
        return None
    _execute(db, "DELETE FROM agentsurface_passkey_ceremonies WHERE person = %s", (person,))
    row = rows[0]
    purpose = str(row[4]) if row[4] in ("first", "add", "replace", "grant") else "first"
    return PendingRegistration(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        float(row[3]),
        cast(Purpose, purpose),
        None if row[5] is None else str(row[5]),
        None if row[6] is None else str(row[6]),
    )


def forget_pending(db: Any, person: str) -> None:
    _execute(db, "DELETE FROM agentsurface_passkey_ceremonies WHERE person = %s", (person,))


def save_grant(db: Any, grant: EnrolmentGrant) -> None:
    """The person's grant, replacing any earlier one (the newest administrator's word counts)."""
    _execute(
        db,
        "INSERT INTO agentsurface_passkey_grants (person, digest, expires_at, issued_by, issued_at)"
        " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (person) DO UPDATE SET digest = excluded.digest,"
        " expires_at = excluded.expires_at, issued_by = excluded.issued_by, issued_at = excluded.issued_at",
        (grant.person, grant.digest, grant.expires_at, grant.issued_by, grant.issued_at),
    )


def grant_of(db: Any, person: str) -> EnrolmentGrant | None:
    """The person's grant, used or not yet, expired or not (its row stays until a passkey is
    registered with it: a person whose passkeys an administrator reset enrols only through one)."""
    rows = _rows(
        db,
        "SELECT person, digest, expires_at, issued_by, issued_at FROM agentsurface_passkey_grants WHERE person = %s",
        (person,),
    )
    if not rows:
        return None
    row = rows[0]
    return EnrolmentGrant(str(row[0]), str(row[1]), float(row[2]), str(row[3]), str(row[4]))


def spend_grant(db: Any, person: str, digest: str) -> bool:
    """Use the person's grant up: True only for the one transaction that removed it."""
    return _execute(
        db, "DELETE FROM agentsurface_passkey_grants WHERE person = %s AND digest = %s", (person, digest)
    ) == 1


def forget_expired_ceremonies(db: Any, now: float) -> int:
    return _execute(db, "DELETE FROM agentsurface_passkey_ceremonies WHERE expires_at < %s", (now,))


__all__ = [
    "PASSKEY_SCHEMA_VERSION",
    "EnrolmentGrant",
    "PendingRegistration",
    "Purpose",
    "StoredPasskey",
    "advance_counter",
    "count_passkeys",
    "delete_passkey",
    "delete_passkeys_of",
    "forget_expired_ceremonies",
    "forget_pending",
    "grant_of",
    "insert_passkey",
    "lock_person",
    "migrate",
    "passkey_by_id",
    "passkeys_of",
    "rename_passkey",
    "save_grant",
    "save_pending",
    "schema_version",
    "spend_grant",
    "take_pending",
]
