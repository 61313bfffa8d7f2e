"""A small devices app served by the procedure server: the contracts (shared with the page),
their implementations over SQLite, bearer-token authentication with roles and tenants, and an
audit table written in each call's transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from starlette.requests import Request

from agentsurface import ProcedureContract
from agentsurface.server import (
    Caller,
    CallRecord,
    ProcedureCall,
    ProcedureServer,
    RateLimit,
    ServedProcedure,
    ServerLimits,
    SqliteInvocationStore,
    precondition_failed,
    serve,
)

# ---------------------------------------------------------------- contracts (imported by the page too)

DEVICE_IDS = {"type": "array", "items": {"type": "string", "maxLength": 64}, "minItems": 1, "maxItems": 100}

DISABLE = ProcedureContract(
    id="domain:devices.disable",
    description="Disable the given devices.",
    effect="destructive",
    input={
        "type": "object",
        "properties": {"deviceIds": DEVICE_IDS, "reason": {"type": "string", "maxLength": 200}},
        "required": ["deviceIds"],
        "additionalProperties": False,
    },
    output={
        "type": "object",
        "properties": {"disabled": {"type": "integer"}, "alreadyDisabled": {"type": "integer"}},
        "required": ["disabled", "alreadyDisabled"],
    },
)


class RenameInput(BaseModel):
    deviceId: str = Field(max_length=64)
    name: str = Field(min_length=1, max_length=80)


class RenameOutput(BaseModel):
    id: str
    name: str


RENAME = ProcedureContract(
    id="domain:devices.rename",
    description="Rename one device.",
    effect="server-mutation",
    input=RenameInput,
    output=RenameOutput,
)

QUERY = ProcedureContract(
    id="domain:devices.query",
    description="List the tenant's devices.",
    effect="server-query",
    input={
        "type": "object",
        "properties": {"status": {"enum": ["online", "disabled"]}},
        "additionalProperties": False,
    },
    output={
        "type": "object",
        "properties": {"devices": {"type": "array", "items": {"type": "object"}}},
        "required": ["devices"],
    },
)


class NoteInput(BaseModel):
    text: str = Field(min_length=1, max_length=200)


NOTE = ProcedureContract(
    id="domain:notes.add",
    description="Add a note to the tenant's log.",
    effect="server-mutation",
    input=NoteInput,
)

BROKEN = ProcedureContract(
    id="domain:devices.broken",
    description="Fails inside with a secret in its message.",
    effect="server-mutation",
    input={"type": "object", "properties": {}, "additionalProperties": False},
)

CONTRACTS = (DISABLE, RENAME, QUERY, NOTE, BROKEN)

# ---------------------------------------------------------------- the app's tables and users

TABLES = """
CREATE TABLE IF NOT EXISTS devices (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('online', 'disabled'))
);
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, text TEXT NOT NULL, invocation_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, procedure TEXT NOT NULL, caller TEXT, outcome TEXT NOT NULL,
    status INTEGER NOT NULL, replayed INTEGER NOT NULL, invocation_id TEXT, input TEXT
);
"""

DEVICES = [
    ("acme-1", "acme", "Pump 1", "online"),
    ("acme-2", "acme", "Pump 2", "online"),
    ("acme-3", "acme", "Pump 3", "disabled"),
    ("globex-1", "globex", "Valve 1", "online"),
]

READ, WRITE = "devices.read", "devices.write"
USERS: dict[str, Caller] = {
    "tok-alice": Caller("alice", "acme", frozenset({READ, WRITE})),
    "tok-victor": Caller("victor", "acme", frozenset({READ})),
    "tok-bob": Caller("bob", "globex", frozenset({READ, WRITE})),
}
# Load-test callers: one per client, all in one tenant with write access.
for n in range(64):
    USERS[f"tok-load-{n}"] = Caller(f"load-{n}", "acme", frozenset({READ, WRITE}))


def setup(db: sqlite3.Connection) -> None:
    db.executescript(TABLES)
    db.executemany("INSERT OR IGNORE INTO devices VALUES (?, ?, ?, ?)", DEVICES)


def authenticate(request: Request) -> Caller | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return USERS.get(token.strip()) if scheme.lower() == "bearer" else None


def audit(record: CallRecord, db: sqlite3.Connection) -> None:
    db.execute(
        "INSERT INTO audit (procedure, caller, outcome, status, replayed, invocation_id, input)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            record.procedure_id,
            record.caller.id if record.caller else None,
            record.outcome,
            record.status,
            int(record.replayed),
            record.invocation_id,
            record.input,
        ),
    )


# ---------------------------------------------------------------- implementations


def _owned(db: sqlite3.Connection, tenant: str | None, ids: Sequence[str]) -> list[sqlite3.Row]:
    marks = ",".join("?" * len(ids))
    rows = db.execute(f"SELECT * FROM devices WHERE tenant = ? AND id IN ({marks})", (tenant, *ids)).fetchall()
    if len(rows) != len(set(ids)):  # another tenant's ids look exactly like nonexistent ones
        raise precondition_failed("unknown-device", "Some devices do not exist. Refresh the list and retry.")
    return rows


def disable(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
    rows = _owned(call.db, call.caller.tenant, value["deviceIds"])
    online = [r["id"] for r in rows if r["status"] == "online"]
    call.db.executemany("UPDATE devices SET status = 'disabled' WHERE id = ?", [(i,) for i in online])
    return {"disabled": len(online), "alreadyDisabled": len(rows) - len(online)}


def rename(call: ProcedureCall, value: RenameInput) -> RenameOutput:
    _owned(call.db, call.caller.tenant, [value.deviceId])
    call.db.execute("UPDATE devices SET name = ? WHERE id = ?", (value.name, value.deviceId))
    return RenameOutput(id=value.deviceId, name=value.name)


def query(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
    sql, args = "SELECT id, name, status FROM devices WHERE tenant = ?", [call.caller.tenant]
    if "status" in value:
        sql, args = sql + " AND status = ?", [*args, value["status"]]
    return {"devices": [dict(r) for r in call.db.execute(sql + " ORDER BY id", args)]}


def add_note(call: ProcedureCall, value: NoteInput) -> dict[str, Any]:
    cur = call.db.execute(
        "INSERT INTO notes (tenant, text, invocation_id) VALUES (?, ?, ?)",
        (call.caller.tenant, value.text, call.invocation_id),
    )
    return {"noteId": cur.lastrowid}


def broken(call: ProcedureCall, value: dict[str, Any]) -> None:
    call.db.execute("UPDATE devices SET name = 'half-written' WHERE tenant = ?", (call.caller.tenant,))
    raise RuntimeError("secret: connection string postgres://admin:hunter2@db")


def served_procedures(*, disable_needs_confirmation: bool = True) -> list[ServedProcedure]:
    return [
        serve(DISABLE, disable, permissions={WRITE}, require_confirmation=disable_needs_confirmation),
        serve(RENAME, rename, permissions={WRITE}),
        serve(QUERY, query, permissions={READ}),
        serve(NOTE, add_note, permissions={WRITE}),
        serve(BROKEN, broken, permissions={WRITE}),
    ]


def make_server(
    path: str | Path,
    *,
    procedures: Sequence[ServedProcedure] | None = None,
    rate_limit: RateLimit | None = None,
    limits: ServerLimits | None = None,
) -> ProcedureServer:
    return ProcedureServer(
        served_procedures() if procedures is None else procedures,
        authenticate=authenticate,
        store=SqliteInvocationStore(path, setup=setup),
        rate_limit=rate_limit,
        limits=limits,
        audit=audit,
    )


def snapshot(path: str | Path) -> dict[str, list[tuple[Any, ...]]]:
    """The app's data (not the audit), to show a refused call changed nothing."""
    with sqlite3.connect(path) as db:
        return {
            "devices": db.execute("SELECT * FROM devices ORDER BY id").fetchall(),
            "notes": db.execute("SELECT * FROM notes ORDER BY id").fetchall(),
            "invocations": db.execute(
                "SELECT scope, invocation_id, status FROM agentsurface_invocations ORDER BY 1, 2"
            ).fetchall(),
        }
