"""A tiny app over either store: one table of notes, written in the dialect of the DSN."""

from __future__ import annotations

from typing import Any

from agentsurface.server.stores import store_kind


def setup_notes(db: Any) -> None:
    sqlite = type(db).__module__ == "sqlite3"
    key = "INTEGER PRIMARY KEY AUTOINCREMENT" if sqlite else "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    db.execute(f"CREATE TABLE IF NOT EXISTS notes (id {key}, scope TEXT NOT NULL, text TEXT NOT NULL)")
    db.execute(
        "CREATE TABLE IF NOT EXISTS audit (id " + key + ", procedure TEXT NOT NULL, outcome TEXT NOT NULL,"
        " replayed INTEGER NOT NULL, repeats INTEGER NOT NULL DEFAULT 0)"
    )


def mark(dsn: str) -> str:
    return "?" if store_kind(dsn) == "sqlite" else "%s"


def insert_note(db: Any, dsn: str, scope: str, text: str) -> int:
    m = mark(dsn)
    row = db.execute(f"INSERT INTO notes (scope, text) VALUES ({m}, {m}) RETURNING id", (scope, text)).fetchone()
    return int(row[0] if not isinstance(row, dict) else row["id"])


def rows(store: Any, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    def read(db: Any) -> list[tuple[Any, ...]]:
        return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in db.execute(sql, params).fetchall()]

    result: list[tuple[Any, ...]] = store.run(read)
    return result
