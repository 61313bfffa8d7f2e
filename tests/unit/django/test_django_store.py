"""The invocation store on the project's own database (DjangoInvocationStore): the view's writes,
the invocation record, the spent approval and the audit row commit in one transaction on
Django's connection, so a failure after the view ran undoes the view too (with a store of its
own, the view's commit is already done: the difference is shown side by side)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test import Client, override_settings
from expenses.models import Expense

from agentsurface.django import DjangoInvocationStore
from agentsurface.server.ratelimit import RateLimit
from tests._shared.django import views_for_tests as v
from tests._shared.django.support import Person, error_of, new_id, sign_in

AGENT = "/agent"
LUNCH = {"amount_cents": 1250, "description": "lunch", "spent_on": "2026-11-03"}
DJANGO_STORE = "tests._shared.django.urls_django_store"
OWN_STORE = "tests._shared.django.urls_for_tests"


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    v.CALLS.clear()
    v.CALLER_MODE["mode"] = "user"
    v.AUDIT.update(fail=False, records=0)
    yield
    v.AUDIT["fail"] = False


def owned(person: Person) -> list[str]:
    return sorted(Expense.objects.filter(owner=person.user).values_list("description", flat=True))


def recorded(invocation_id: str) -> list[tuple[Any, ...]]:
    with connection.cursor() as cur:
        cur.execute("SELECT procedure_id, status FROM agentsurface_invocations WHERE invocation_id = %s", [invocation_id])
        return [tuple(row) for row in cur.fetchall()]


@override_settings(ROOT_URLCONF=DJANGO_STORE)
def test_the_record_is_in_the_projects_database_and_replays() -> None:
    ann = sign_in()
    invocation = new_id()
    first = ann.call("expenses.add", LUNCH, invocation_id=invocation, base=AGENT)
    assert first[0] == 200 and owned(ann) == ["lunch"]
    assert recorded(invocation) == [("domain:expenses.add", 200)]
    again = ann.call("expenses.add", LUNCH, invocation_id=invocation, base=AGENT)
    assert again[1]["replayed"] is True and again[1]["output"] == first[1]["output"]
    assert owned(ann) == ["lunch"]


@override_settings(ROOT_URLCONF=DJANGO_STORE)
def test_an_approval_is_minted_and_spent_in_the_projects_database() -> None:
    ann = sign_in()
    status, body = ann.call("expenses.add", LUNCH, base=AGENT)
    expense = body["output"]["id"]
    status, body = ann.approved("expenses.delete", {"expense_id": expense}, base=AGENT)
    assert (status, body["output"]) == (200, {"deleted": expense}) and owned(ann) == []
    with connection.cursor() as cur:
        cur.execute("SELECT spent_by FROM agentsurface_challenges WHERE spent_at IS NOT NULL")
        assert [row[0] for row in cur.fetchall()] == [body["invocationId"]]


@override_settings(ROOT_URLCONF=DJANGO_STORE)
def test_a_refusing_view_is_undone_and_not_recorded() -> None:
    ann = sign_in()
    invocation = new_id()
    status, body = ann.call("things.writeThenRefuse", {"note": "undone"}, invocation_id=invocation, base=AGENT)
    assert (status, error_of(body)) == (409, "PRECONDITION_FAILED")
    assert not Expense.objects.filter(description="undone").exists() and recorded(invocation) == []


@pytest.mark.parametrize(("urls", "kept"), [(DJANGO_STORE, []), (OWN_STORE, ["lunch"])])
def test_a_failure_after_the_view_ran_undoes_the_view_only_on_the_projects_database(
    urls: str, kept: list[str]
) -> None:
    with override_settings(ROOT_URLCONF=urls):
        ann = sign_in()
        v.AUDIT["fail"] = True  # the audit row, written after the view, fails
        status, body = ann.call("expenses.add", LUNCH, base=AGENT)
        assert (status, error_of(body)) == (500, "EXECUTION_FAILED")
        # One transaction: nothing of the call stays. A store of its own: the view had committed.
        assert owned(ann) == kept


@override_settings(ROOT_URLCONF=DJANGO_STORE)
def test_concurrent_duplicates_apply_once() -> None:
    ann = sign_in()
    invocation = new_id()
    envelope = json.dumps({"invocationId": invocation, "input": LUNCH})
    answers: list[dict[str, Any]] = []

    def post() -> None:
        client = Client(enforce_csrf_checks=True)
        client.cookies = ann.client.cookies
        response = client.post(
            f"{AGENT}/procedures/expenses.add", envelope, content_type="application/json", HTTP_X_CSRFTOKEN=ann.token
        )
        answers.append({"status": response.status_code, **json.loads(response.content)})

    threads = [threading.Thread(target=post) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert [a["status"] for a in answers] == [200] * 5
    assert sum(1 for a in answers if a.get("replayed")) == 4
    assert len({a["output"]["id"] for a in answers}) == 1 and owned(ann) == ["lunch"]


def test_two_stores_on_one_database_spend_one_rate_budget() -> None:
    """Two DjangoInvocationStore objects on the project's database stand for two workers: the
    bucket is a row, so the second sees what the first spent."""
    first, second = DjangoInvocationStore(), DjangoInvocationStore()
    limit = RateLimit(burst=3, per_second=0.5)
    answers = [store.take_token("bucket-sqlite", limit) for store in (first, second, first, second)]
    assert answers[:3] == [None, None, None]
    assert answers[3] is not None and 1000 <= answers[3] <= 2000  # one token back in 2 s at most
    assert first.forget_idle_buckets(3600) == 0 and second.forget_idle_buckets(0) == 1
    assert first.where == "Django's database 'default' (sqlite)"


def test_passkeys_live_in_the_projects_database_too() -> None:
    from tests._shared.django.passkeys_on_django import a_persons_passkeys

    a_persons_passkeys(DjangoInvocationStore())
