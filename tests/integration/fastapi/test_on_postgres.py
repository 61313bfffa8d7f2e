"""The FastAPI routes' procedures on a PostgreSQL store (a real server): applied once across
concurrent duplicates, approvals spent once, as on SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from agentsurface.server import open_store
from tests._shared.fastapi.routes_app import Ledger, make_app
from tests._shared.server.helpers import call, challenge_of, new_id
from tests._shared.server.postgres import PostgresServer, running_postgres

BASE = "/api/agent"


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


@pytest.fixture
async def pg_http(postgres: PostgresServer, ledger: Ledger) -> AsyncIterator[httpx.AsyncClient]:
    store: Any = open_store(postgres.create_database())
    app = make_app(store, ledger)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app") as client:
        yield client
    store.close()


async def test_concurrent_duplicates_run_the_route_once_on_postgres(pg_http: httpx.AsyncClient, ledger: Ledger) -> None:
    ident = new_id()
    answers = await asyncio.gather(*(call(pg_http, "notes.add", {"text": "dup"}, invocation_id=ident, base=BASE) for _ in range(8)))
    assert [a.status_code for a in answers] == [200] * 8
    assert sum(1 for a in answers if a.json().get("replayed")) == 7
    assert ledger.runs["add"] == 1


async def test_an_approval_is_spent_once_on_postgres(pg_http: httpx.AsyncClient, ledger: Ledger) -> None:
    await call(pg_http, "notes.add", {"text": "a"}, base=BASE)
    asked = challenge_of(await call(pg_http, "notes.delete", {"note_id": 1}, base=BASE))
    assert asked is not None
    evidence = {"challenge": asked["id"], "approvedAt": datetime.now(UTC).isoformat(), "id": "cnf"}
    first, second = await asyncio.gather(
        call(pg_http, "notes.delete", {"note_id": 1}, confirmation=evidence, base=BASE),
        call(pg_http, "notes.delete", {"note_id": 1}, confirmation=evidence, base=BASE),
    )
    codes = sorted([first.status_code, second.status_code])
    assert codes == [200, 403], (first.text, second.text)
    assert ledger.runs["delete"] == 1 and ledger.notes == {}
