"""The invocation stores: where each call is applied once, in the app's own database.

Its parts: what every store offers and the errors it raises (:mod:`.protocol`), SQLite
(:mod:`.sqlite`, one host), PostgreSQL (:mod:`.postgres`, several workers and hosts; needs
``agentsurface[postgres]`` and is imported only when a ``postgresql://`` DSN is opened) and
opening either by DSN (:mod:`.dsn`).
"""

from __future__ import annotations

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
)
from .sqlite import SqliteInvocationStore

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
    "open_store",
    "sqlite_path",
    "store_kind",
]
