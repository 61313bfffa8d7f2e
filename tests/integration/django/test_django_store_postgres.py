"""DjangoInvocationStore on a real PostgreSQL (tests/_shared/server/postgres.py starts one), through a
Django database alias added for this module: the app's writes on Django's connection and the
record commit together; a refusal or a failure after the work keeps none of them; concurrent
duplicates from several threads (each on its own connection) apply once, the advisory lock
making the others wait and replay; an approval challenge is spent once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.db import connections

from agentsurface.django import DjangoInvocationStore
from agentsurface.server import InvocationKey, Outcome
from agentsurface.server.challenges import Challenge
from agentsurface.server.ratelimit import RateLimit
from tests._shared.server.postgres import running_postgres

ALIAS = "agentsurface_pg"
KEY = InvocationKey("\x1fann", "inv-1", "domain:notes.add")


@pytest.fixture(scope="module")
def store() -> Iterator[DjangoInvocationStore]:
    with running_postgres() as server:
        where = urlsplit(server.create_database("dj"))
        wanted = {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": where.path.lstrip("/"),
            "USER": "postgres",
            "HOST": where.hostname,
            "PORT": str(where.port),
        }
        configured = connections.configure_settings({"default": connections.settings["default"], ALIAS: wanted})
        connections.settings[ALIAS] = configured[ALIAS]
        assert connections[ALIAS].vendor == "postgresql"
        with connections[ALIAS].cursor() as cur:
            cur.execute("CREATE TABLE notes (id SERIAL PRIMARY KEY, text TEXT NOT NULL)")
        try:
            yield DjangoInvocationStore(using=ALIAS)
        finally:
            connections[ALIAS].close()
            del connections.settings[ALIAS]


def notes() -> list[str]:
    with connections[ALIAS].cursor() as cur:
        cur.execute("SELECT text FROM notes ORDER BY id")
        return [row[0] for row in cur.fetchall()]


def add_note(text: str, *, keep: bool = True) -> Any:
    def work(db: Any) -> Outcome:
        with db.cursor() as cur:
            cur.execute("INSERT INTO notes (text) VALUES (%s) RETURNING id", [text])
            (note,) = cur.fetchone()
        return Outcome(200, {"ok": True, "output": {"id": note, "text": text}}, keep, keep)

    return work


def test_the_work_and_its_record_commit_together_and_replay(store: DjangoInvocationStore) -> None:
    key = InvocationKey("\x1fann", "inv-commit", "domain:notes.add")
    first = store.execute_once(key, "fp", add_note("kept"))
    again = store.execute_once(key, "fp", add_note("never"))
    other = store.execute_once(key, "other", add_note("never"))
    assert (first.kind, again.kind, other.kind) == ("applied", "replayed", "conflict")
    assert again.outcome is not None and first.outcome is not None
    assert again.outcome.body == first.outcome.body
    assert notes().count("kept") == 1 and "never" not in notes()


def test_a_refusal_or_a_failure_after_the_work_keeps_nothing(store: DjangoInvocationStore) -> None:
    refused = store.execute_once(InvocationKey("\x1fann", "inv-refused", "p"), "fp", add_note("refused", keep=False))
    assert refused.kind == "applied" and "refused" not in notes()

    def failing_audit(db: Any, outcome: Outcome) -> None:
        raise RuntimeError("the audit row could not be written")

    with pytest.raises(RuntimeError):
        store.execute_once(InvocationKey("\x1fann", "inv-failed", "p"), "fp", add_note("failed"), failing_audit)
    assert "failed" not in notes()
    retried = store.execute_once(InvocationKey("\x1fann", "inv-failed", "p"), "fp", add_note("retried"))
    assert retried.kind == "applied" and "retried" in notes()  # nothing was recorded either


def test_concurrent_duplicates_apply_once(store: DjangoInvocationStore) -> None:
    key = InvocationKey("\x1fann", "inv-race", "domain:notes.add")
    kinds: list[str] = []
    start = threading.Barrier(8)

    def race() -> None:
        try:
            start.wait()
            kinds.append(store.execute_once(key, "fp", add_note("raced")).kind)
        finally:
            connections[ALIAS].close()  # this thread's own connection

    threads = [threading.Thread(target=race) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(kinds) == ["applied"] + ["replayed"] * 7
    assert notes().count("raced") == 1


def test_an_approval_challenge_is_spent_once(store: DjangoInvocationStore) -> None:
    now = datetime.now(UTC)
    challenge = Challenge(
        id="ch_pg", caller="\x1fann", procedure="domain:notes.add", digest="d", expires_at=now + timedelta(minutes=2),
        level="confirm", nonce=b"\x00\xffnonce",
    )
    store.save_challenge(challenge)

    def spend(db: Any) -> tuple[Any, bool, bool]:
        found = store.claim_challenge(db, "ch_pg")
        assert found is not None
        return found[0], found[1], store.spend_challenge(db, "ch_pg", "inv-a", now)

    claimed, spent_before, spent = store.run(spend)
    assert claimed == challenge and (spent_before, spent) == (False, True)
    assert store.run(lambda db: store.spend_challenge(db, "ch_pg", "inv-b", now)) is False
    assert store.run(lambda db: store.claim_challenge(db, "ch_missing")) is None
    assert store.forget_challenges_before(now + timedelta(hours=1)) == 1


def test_one_rate_budget_for_every_worker_under_concurrency(store: DjangoInvocationStore) -> None:
    """Threads on connections of their own stand for workers: a burst of 5 is 5 calls in all,
    however the calls interleave; the rest hear when to retry."""
    limit = RateLimit(burst=5, per_second=0.01)
    answers: list[int | None] = []
    lock = threading.Lock()

    def worker() -> None:
        try:
            for _ in range(4):
                wait = store.take_token("bucket-pg", limit)
                with lock:
                    answers.append(wait)
        finally:
            connections[ALIAS].close()

    threads = [threading.Thread(target=worker) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers.count(None) == 5 and len(answers) == 20
    assert all(wait is not None and wait > 1000 for wait in answers if wait is not None)
    assert store.forget_idle_buckets(0) == 1
    assert store.where == f"Django's database {ALIAS!r} (postgresql)"


def test_passkeys_live_in_the_projects_postgres_database_too(store: DjangoInvocationStore) -> None:
    from tests._shared.django.passkeys_on_django import a_persons_passkeys

    a_persons_passkeys(store)
