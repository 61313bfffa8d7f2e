"""The demo backend's SQLite store: schema, typed rows, and transactional operations.

The database is the library's :class:`~agent_surface.server.SqliteInvocationStore` (WAL mode for a
file; one shared connection for ``":memory:"``), which also holds the demo's own tables: the
procedure server records each invocation in the same transaction as the procedure's writes and
its audit row, so they commit together or not at all. :class:`Tx` wraps the connection of one
such transaction with the demo's typed operations.

This module knows nothing about HTTP; it raises :class:`UnknownDevicesError` and lets the
procedures turn that into an agent-facing error.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeAlias, TypeVar

from agent_surface.server import SqliteInvocationStore

T = TypeVar("T")

Json: TypeAlias = bool | int | float | str | list["Json"] | dict[str, "Json"] | None
Role: TypeAlias = Literal["viewer", "operator", "admin"]
Status: TypeAlias = Literal["online", "offline", "disabled"]
ROLES: tuple[Role, ...] = ("viewer", "operator", "admin")
STATUSES: tuple[Status, ...] = ("online", "offline", "disabled")

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_DB_PATH = DATA_DIR / "devices.sqlite3"
MEMORY = ":memory:"

SCHEMA = """
CREATE TABLE IF NOT EXISTS tenants (
    id   TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    tenant       TEXT NOT NULL REFERENCES tenants(id),
    role         TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    token_sha256 TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS devices (
    id                    TEXT PRIMARY KEY,
    tenant                TEXT NOT NULL REFERENCES tenants(id),
    name                  TEXT NOT NULL,
    model                 TEXT NOT NULL,
    city                  TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('online', 'offline', 'disabled')),
    last_seen             TEXT NOT NULL,
    disabled_reason       TEXT,
    status_before_disable TEXT CHECK (status_before_disable IN ('online', 'offline')),
    updated_at            TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS devices_by_tenant ON devices (tenant, city, status);
CREATE TABLE IF NOT EXISTS audit (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at              TEXT NOT NULL,
    user_id         TEXT,
    tenant          TEXT,
    operation       TEXT NOT NULL,
    input           TEXT,
    outcome         TEXT NOT NULL,
    http_status     INTEGER NOT NULL,
    reason          TEXT,
    invocation_id   TEXT,
    confirmation_id TEXT,
    attempts        INTEGER NOT NULL DEFAULT 1,
    channel         TEXT
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
# Columns added after the first release, for database files created before them.
MIGRATIONS: tuple[tuple[str, str, str], ...] = (
    ("audit", "attempts", "ALTER TABLE audit ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1"),
    ("audit", "channel", "ALTER TABLE audit ADD COLUMN channel TEXT"),
)

DEVICE_COLUMNS = "id, tenant, name, model, city, status, last_seen, disabled_reason, updated_at"


def iso(moment: datetime) -> str:
    """ISO-8601 in UTC with a ``Z`` suffix and whole seconds: ``2026-11-02T09:00:00Z``."""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def hash_token(token: str) -> str:
    """Tokens are stored as SHA-256 digests, never in clear."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller, as the database knows it."""

    user_id: str
    name: str
    tenant: str
    tenant_name: str
    role: Role


@dataclass(frozen=True, slots=True)
class Device:
    id: str
    tenant: str
    name: str
    model: str
    city: str
    status: Status
    last_seen: str
    disabled_reason: str | None
    updated_at: str

    def to_json(self) -> dict[str, Json]:
        """The API shape (camelCase; the tenant is implicit in the caller's session)."""
        return {
            "id": self.id,
            "name": self.name,
            "model": self.model,
            "city": self.city,
            "status": self.status,
            "lastSeen": self.last_seen,
            "disabledReason": self.disabled_reason,
            "updatedAt": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class DeviceFilter:
    status: Status | None = None
    city: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: str
    operation: str
    outcome: str  # "ok" or an agent-facing error code
    http_status: int
    user_id: str | None = None
    tenant: str | None = None
    input: str | None = None  # canonical JSON of the parsed input, when it parsed
    reason: str | None = None
    invocation_id: str | None = None
    confirmation_id: str | None = None
    attempts: int = 1  # > 1 for one row that stands for many refused anonymous calls
    channel: str | None = None  # "person" (their own buttons) or "agent" (their agent's calls)


@dataclass(frozen=True, slots=True)
class Change:
    """The result of a bulk status change: how many rows changed, and every named device after it."""

    changed: int
    devices: list[Device]


class UnknownDevicesError(Exception):
    """Some ids do not name a device of the caller's tenant (nonexistent or another tenant's)."""

    def __init__(self, ids: Sequence[str]) -> None:
        super().__init__(f"{len(ids)} unknown device id(s)")
        self.ids = list(ids)


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _device(row: sqlite3.Row) -> Device:
    return Device(
        id=row["id"],
        tenant=row["tenant"],
        name=row["name"],
        model=row["model"],
        city=row["city"],
        status=row["status"],
        last_seen=row["last_seen"],
        disabled_reason=row["disabled_reason"],
        updated_at=row["updated_at"],
    )


class Tx:
    """Operations available inside one transaction (obtain it from :meth:`Store.transaction`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    # ---------------------------------------------------------------- identity
    def principal_by_token(self, token: str) -> Principal | None:
        row = self._conn.execute(
            "SELECT u.id, u.name, u.tenant, u.role, t.name AS tenant_name"
            " FROM users u JOIN tenants t ON t.id = u.tenant WHERE u.token_sha256 = ?",
            (hash_token(token),),
        ).fetchone()
        if row is None:
            return None
        return Principal(row["id"], row["name"], row["tenant"], row["tenant_name"], row["role"])

    # ---------------------------------------------------------------- reads
    def query_devices(self, tenant: str, where: DeviceFilter, limit: int) -> tuple[list[Device], int]:
        """Devices of ``tenant`` matching every given filter, by id; and how many match in all."""
        clauses = ["tenant = ?"]
        params: list[str | int] = [tenant]
        if where.status is not None:
            clauses.append("status = ?")
            params.append(where.status)
        if where.city is not None:
            clauses.append("city = ? COLLATE NOCASE")
            params.append(where.city)
        if where.text is not None:
            clauses.append(
                "(id LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\'"
                " OR model LIKE ? ESCAPE '\\' OR city LIKE ? ESCAPE '\\')"
            )
            params.extend([_like_pattern(where.text)] * 4)
        condition = " AND ".join(clauses)
        total = int(self._conn.execute(f"SELECT COUNT(*) FROM devices WHERE {condition}", params).fetchone()[0])
        rows = self._conn.execute(
            f"SELECT {DEVICE_COLUMNS} FROM devices WHERE {condition} ORDER BY id LIMIT ?", [*params, limit]
        ).fetchall()
        return [_device(r) for r in rows], total

    def devices_by_id(self, tenant: str, ids: Sequence[str]) -> list[Device]:
        """The named devices of ``tenant``, in the order asked; raises if any is not the tenant's."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._conn.execute(
            f"SELECT {DEVICE_COLUMNS} FROM devices WHERE tenant = ? AND id IN ({marks})", [tenant, *ids]
        ).fetchall()
        found = {r["id"]: _device(r) for r in rows}
        missing = [i for i in ids if i not in found]
        if missing:
            raise UnknownDevicesError(missing)
        return [found[i] for i in ids]

    # ---------------------------------------------------------------- changes
    def rename(self, tenant: str, device_id: str, name: str, now: str) -> Device:
        (device,) = self.devices_by_id(tenant, [device_id])
        if device.name != name:
            self._conn.execute(
                "UPDATE devices SET name = ?, updated_at = ? WHERE tenant = ? AND id = ?",
                (name, now, tenant, device_id),
            )
        return self.devices_by_id(tenant, [device_id])[0]

    def disable(self, tenant: str, ids: Sequence[str], reason: str | None, now: str) -> Change:
        """Disable every named device, all or nothing; already-disabled ones are left as they are."""
        self.devices_by_id(tenant, ids)  # every id must be the tenant's, or nothing changes
        marks = ",".join("?" * len(ids))
        cursor = self._conn.execute(
            "UPDATE devices SET status_before_disable = status, status = 'disabled',"
            " disabled_reason = ?, updated_at = ?"
            f" WHERE tenant = ? AND status <> 'disabled' AND id IN ({marks})",
            [reason, now, tenant, *ids],
        )
        return Change(cursor.rowcount, self.devices_by_id(tenant, ids))

    def enable(self, tenant: str, ids: Sequence[str], now: str) -> Change:
        """Undo ``disable``: restore the status each device had before; enabled ones are left alone."""
        self.devices_by_id(tenant, ids)
        marks = ",".join("?" * len(ids))
        cursor = self._conn.execute(
            "UPDATE devices SET status = COALESCE(status_before_disable, 'offline'),"
            " status_before_disable = NULL, disabled_reason = NULL, updated_at = ?"
            f" WHERE tenant = ? AND status = 'disabled' AND id IN ({marks})",
            [now, tenant, *ids],
        )
        return Change(cursor.rowcount, self.devices_by_id(tenant, ids))

    # ---------------------------------------------------------------- audit
    def audit(self, entry: AuditEntry) -> int:
        """Write ``entry``; returns the row's id."""
        cursor = self._conn.execute(
            "INSERT INTO audit (at, user_id, tenant, operation, input, outcome, http_status, reason,"
            " invocation_id, confirmation_id, attempts, channel) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.at,
                entry.user_id,
                entry.tenant,
                entry.operation,
                entry.input,
                entry.outcome,
                entry.http_status,
                entry.reason,
                entry.invocation_id,
                entry.confirmation_id,
                entry.attempts,
                entry.channel,
            ),
        )
        return int(cursor.lastrowid or 0)

    def count_attempt(self, row_id: int, attempts: int = 1) -> None:
        """``attempts`` more calls stand behind the aggregated audit row ``row_id``."""
        self._conn.execute("UPDATE audit SET attempts = attempts + ? WHERE id = ?", (attempts, row_id))

    # ---------------------------------------------------------------- metadata
    def meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # ---------------------------------------------------------------- raw access (seeding, inspection)
    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self._conn.executemany(sql, rows)


class Store:
    """The database behind the demo: the procedure server's invocation store, whose connection
    the demo's own routes and tooling also use, one transaction at a time."""

    def __init__(self, invocations: SqliteInvocationStore) -> None:
        self.invocations = invocations
        self.path = invocations.path

    def run(self, work: Callable[[Tx], T]) -> T:
        """Run a unit of work in one transaction; commit if it returns, roll back if it raises."""
        return self.invocations.run(lambda conn: work(Tx(conn)))

    def fetch_all(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        """Read-only inspection (tests, tooling)."""
        return self.run(lambda tx: tx.execute(sql, params).fetchall())

    def close(self) -> None:
        self.invocations.close()


def open_store(path: str | Path = DEFAULT_DB_PATH, *, reset: bool = False) -> Store:
    """Open (creating if needed) the database at ``path``, or a private one for ``":memory:"``.

    ``reset`` deletes an existing database file first. The schema is created if missing; seeding
    is :func:`demo.seed.seed_store`'s job.
    """
    target = str(path)
    if target != MEMORY:
        file = Path(target)
        if reset:
            for stale in (file, Path(f"{target}-wal"), Path(f"{target}-shm"), Path(f"{target}-journal")):
                stale.unlink(missing_ok=True)
        file.parent.mkdir(parents=True, exist_ok=True)
    return Store(SqliteInvocationStore(target, setup=_create_tables))


def _create_tables(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)
    _migrate(conn)


def _migrate(conn: sqlite3.Connection) -> None:
    for table, column, statement in MIGRATIONS:
        if column not in {row["name"] for row in conn.execute(f"PRAGMA table_info({table})")}:
            conn.execute(statement)


def canonical_json(value: object) -> str:
    """Stable JSON text for the audit log."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
