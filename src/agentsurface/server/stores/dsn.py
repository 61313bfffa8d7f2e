"""One way to pick the invocation store: a DSN.

- ``sqlite:///relative/path.sqlite3``, ``sqlite:////absolute/path.sqlite3``, ``sqlite:///:memory:``:
  :class:`~agentsurface.server.SqliteInvocationStore` (one host; processes sharing the file
  share its records and budgets). The app's work gets a ``sqlite3.Connection`` (rows as
  ``sqlite3.Row``).
- ``postgresql://user:password@host:5432/db`` (or ``postgres://``):
  :class:`~agentsurface.server.stores.postgres.PostgresInvocationStore` (any number of workers
  and hosts; needs ``agentsurface[postgres]``). The app's work gets a ``psycopg.Connection``
  (rows as ``dict``).

Either way the connection is inside the call's transaction: the app must not commit or roll
back; its SQL is its own (SQLite's ``?`` placeholders, psycopg's ``%s``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

from ..._core.errors import AgentSurfaceError
from .protocol import InvocationStore
from .sqlite import SqliteInvocationStore


class StoreConfigError(AgentSurfaceError, ValueError):
    """A DSN this library cannot open (unknown scheme, missing path)."""


def store_kind(dsn: str) -> str:
    """``"sqlite"`` or ``"postgresql"``; raises :class:`StoreConfigError` for anything else."""
    scheme = urlsplit(dsn).scheme.lower() if isinstance(dsn, str) else ""
    if scheme == "sqlite":
        return "sqlite"
    if scheme in ("postgresql", "postgres"):
        return "postgresql"
    raise StoreConfigError(
        "the store DSN must start with sqlite:/// (a file, or sqlite:///:memory:) or postgresql://"
    )


def sqlite_path(dsn: str) -> str:
    """The file a ``sqlite:///...`` DSN names (``:memory:`` for a private in-memory one)."""
    parts = urlsplit(dsn)
    if parts.netloc not in ("", "localhost"):
        raise StoreConfigError("a sqlite DSN names a local file: sqlite:///relative or sqlite:////absolute")
    path = unquote(parts.path)
    path = path[1:] if path.startswith("/") else path
    if not path:
        raise StoreConfigError("the sqlite DSN names no file: sqlite:///app.sqlite3")
    return path


def describe_dsn(dsn: str) -> str:
    """The database a DSN names, for messages and logs: never its password."""
    if store_kind(dsn) == "sqlite":
        return f"SQLite file {sqlite_path(dsn)}"
    parts = urlsplit(dsn)
    database = unquote(parts.path.lstrip("/")) or "(default)"
    where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
    user = f" as user {unquote(parts.username)!r}" if parts.username else ""
    return f"PostgreSQL database {database!r} on {where}{user}"


def open_store(
    dsn: str,
    *,
    setup: Callable[[Any], None] | None = None,
    pool_size: int | None = None,
    **options: Any,
) -> InvocationStore:
    """The invocation store ``dsn`` names, its schema created or migrated, ``setup(db)`` run once.

    ``pool_size``: connections of this process (SQLite default 4, PostgreSQL 10). Other keyword
    options go to the store's constructor (PostgreSQL: ``pool_timeout``, ``connect_timeout``,
    ``lock_timeout_ms``, ``row_factory``). An unreachable PostgreSQL fails here, at once, with
    :class:`~agentsurface.server.StoreUnavailable` naming the host and database.
    """
    kind = store_kind(dsn)
    sized: dict[str, Any] = {} if pool_size is None else {"pool_size": pool_size}
    if kind == "sqlite":
        return SqliteInvocationStore(sqlite_path(dsn), setup=setup, **sized, **options)
    try:
        from .postgres import PostgresInvocationStore
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise StoreConfigError(
            "a postgresql:// store needs psycopg: pip install 'agentsurface[postgres]'"
        ) from exc
    return PostgresInvocationStore(dsn, setup=setup, **sized, **options)


__all__ = ["StoreConfigError", "describe_dsn", "open_store", "sqlite_path", "store_kind"]
