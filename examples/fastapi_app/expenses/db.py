"""The app's own database: one SQLite file, one connection per request (FastAPI dependency)."""

import os
import sqlite3
from collections.abc import Iterator

SCHEMA = """
CREATE TABLE IF NOT EXISTS expenses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    amount REAL NOT NULL,
    note TEXT NOT NULL
)
"""


def database_path() -> str:
    return os.environ.get("EXPENSES_DB", "expenses.sqlite3")


def create_tables(path: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute(SCHEMA)


def get_db() -> Iterator[sqlite3.Connection]:
    # FastAPI may run this dependency and the route in different worker threads.
    db = sqlite3.connect(database_path(), check_same_thread=False)
    try:
        with db:  # one transaction per request: committed when the route returns
            yield db
    finally:
        db.close()
