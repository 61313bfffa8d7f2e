"""Closing a SQLite store while another thread uses it (the server's background upkeep, a call
in flight) never closes a connection under that thread: SQLite connections are not safe to
close from another thread (the process crashed with a segmentation fault)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentsurface.server import SqliteInvocationStore, StoreMisuse


def test_closing_while_another_thread_queries_is_safe(tmp_path: Path) -> None:
    for round_ in range(20):
        store = SqliteInvocationStore(tmp_path / f"s{round_}.sqlite3", pool_size=2)
        errors: list[BaseException] = []
        started = threading.Event()

        def hammer(
            store: SqliteInvocationStore = store, errors: list[BaseException] = errors, started: threading.Event = started
        ) -> None:
            started.set()
            for _ in range(2000):
                try:
                    store.run(lambda db: db.execute("SELECT count(*) FROM agentsurface_invocations").fetchone())
                except StoreMisuse:
                    return
                except BaseException as exc:
                    errors.append(exc)
                    return

        worker = threading.Thread(target=hammer)
        worker.start()
        started.wait()
        store.close()
        worker.join(10)
        assert not worker.is_alive() and errors == []


def test_a_closed_store_refuses_calls(tmp_path: Path) -> None:
    store = SqliteInvocationStore(tmp_path / "s.sqlite3")
    store.close()
    with pytest.raises(StoreMisuse, match="closed"):
        store.run(lambda db: None)
