"""Work run in other processes by the store conformance suite (importable by ``spawn``)."""

from __future__ import annotations

import threading
import time
from typing import Any

from agentsurface.server import InvocationKey, Outcome, open_store

from .store_app import insert_note, setup_notes


def duplicates(dsn: str, scope: str, invocation_id: str, threads: int, start_at: float) -> list[tuple[str, Any]]:
    """``threads`` concurrent execute_once calls of one key from this process, all starting at
    ``start_at`` (wall clock); returns each (settlement kind, outcome body)."""
    store = open_store(dsn, setup=setup_notes)
    results: list[tuple[str, Any]] = []
    lock = threading.Lock()

    def work(db: Any) -> Outcome:
        note = insert_note(db, dsn, scope, "dup")
        time.sleep(0.2)  # the duplicates arrive while this one is still inside its transaction
        return Outcome(200, {"ok": True, "noteId": note})

    def one() -> None:
        time.sleep(max(0.0, start_at - time.time()))
        settled = store.execute_once(InvocationKey(scope, invocation_id, "domain:notes.add"), "fp", work)
        with lock:
            results.append((settled.kind, settled.outcome.body if settled.outcome else None))

    workers = [threading.Thread(target=one) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    store.close()  # type: ignore[attr-defined]
    return results
