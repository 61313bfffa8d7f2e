"""The invocation stores: where each call is applied once, in the app's own database.

Its parts: what every store offers and the errors it raises (:mod:`.protocol`), SQLite
(:mod:`.sqlite`, one host), PostgreSQL (:mod:`.postgres`, several workers and hosts; needs
``agentsurface[postgres]`` and is imported only when a ``postgresql://`` DSN is opened) and
opening either by DSN (:mod:`.dsn`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .dsn import StoreConfigError, describe_dsn, open_store, sqlite_path, store_kind
from .protocol import (
    SCHEMA_VERSION,
    InvocationKey,
    InvocationStore,
    Outcome,
    Settlement,
    StoreMisuse,
    StoreUnavailable,
    StoreVersionError,
    missing_members,
)
from .sqlite import SqliteInvocationStore

if TYPE_CHECKING:  # mypy checks each store against the whole protocol the server uses
    from .postgres import PostgresInvocationStore

    def _conforms(sqlite: SqliteInvocationStore, postgres: PostgresInvocationStore) -> list[InvocationStore]:
        return [sqlite, postgres]

__all__ = [
    "SCHEMA_VERSION",
    "InvocationKey",
    "InvocationStore",
    "Outcome",
    "Settlement",
    "SqliteInvocationStore",
    "StoreConfigError",
    "StoreMisuse",
    "StoreUnavailable",
    "StoreVersionError",
    "describe_dsn",
    "missing_members",
    "open_store",
    "sqlite_path",
    "store_kind",
]
