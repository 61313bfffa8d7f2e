"""The example project's views served as procedures (agentsurface.django), through Django's own
test client with CSRF enforced: what works, and what a hostile caller cannot do.

Hostile cases: an unmarked view is no procedure and cannot be reached as one; the app's
authentication failing is a typed NOT_AUTHENTICATED; a missing or foreign CSRF token is refused
as typed JSON (not Django's HTML 403); a body over the limit is a typed 413; an approval is bound
to its input; another person's session cannot use or replay the first person's invocation ids
or challenges.
"""

from __future__ import annotations

import json

from django.contrib.auth.models import User
from django.test import Client
from expenses.models import Expense
from expenses_site.urls import agent

from tests._shared.django.support import Person, approval, error_of, new_id, sign_in

LUNCH = {"amount_cents": 1250, "description": "lunch", "spent_on": "2026-11-03"}


def add(person: Person, **changes: object) -> int:
    status, body = person.call("expenses.add", {**LUNCH, **changes})
    assert status == 200, body
    return int(body["output"]["id"])


def owned(person: Person) -> list[str]:
    return sorted(Expense.objects.filter(owner=person.user).values_list("description", flat=True))


# ---------------------------------------------------------------------- what works


def test_the_marked_views_are_the_procedures_and_only_they() -> None:
    manifest = json.loads(Client().get("/api/agent/.well-known/agentsurface/procedures").content)
    assert sorted(manifest["procedures"]) == ["domain:expenses.add", "domain:expenses.delete", "domain:expenses.list"]
    assert manifest["procedures"]["domain:expenses.delete"]["requiresConfirmation"] is True
    assert [view.callback.__name__ for view in agent.views] == ["list_expenses", "add_expense", "delete_expense"]


def test_a_call_runs_the_view_as_the_signed_in_person() -> None:
    ann = sign_in("ann")
    status, body = ann.call("expenses.add", LUNCH)
    assert status == 200 and body["output"] == {**LUNCH, "id": body["output"]["id"]}
    assert owned(ann) == ["lunch"]
    status, body = ann.call("expenses.list", {"month": "2026-11"})
    assert status == 200 and body["output"]["total_cents"] == 1250
    status, body = ann.call("expenses.list", {"month": "2026-10"})
    assert body["output"] == {"expenses": [], "total_cents": 0}


def test_the_same_invocation_is_applied_once_and_another_input_under_its_id_conflicts() -> None:
    ann = sign_in()
    invocation = new_id()
    first = ann.call("expenses.add", LUNCH, invocation_id=invocation)
    again = ann.call("expenses.add", LUNCH, invocation_id=invocation)
    assert first[0] == again[0] == 200 and again[1]["replayed"] is True
    assert again[1]["output"] == first[1]["output"]
    status, body = ann.call("expenses.add", {**LUNCH, "amount_cents": 99}, invocation_id=invocation)
    assert (status, error_of(body)) == (409, "INVOCATION_CONFLICT")
    assert owned(ann) == ["lunch"]


def test_the_views_refusal_is_typed_applies_nothing_and_is_not_recorded() -> None:
    ann = sign_in()
    invocation = new_id()
    status, body = ann.call("expenses.add", {**LUNCH, "spent_on": "2999-01-01"}, invocation_id=invocation)
    assert (status, error_of(body)) == (400, "INVALID_INPUT")
    assert body["error"]["message"] == "an expense cannot be in the future"  # the view's own words
    assert owned(ann) == []
    status, body = ann.approved("expenses.delete", {"expense_id": 987654})  # get_object_or_404
    assert (status, error_of(body), body["error"]["details"]["reason"]) == (409, "PRECONDITION_FAILED", "not-found")
    # Not recorded: the same id with the same input now gets a fresh answer.
    status, body = ann.call("expenses.add", {**LUNCH, "spent_on": "2999-01-01"}, invocation_id=invocation)
    assert status == 400 and "replayed" not in body


def test_the_input_is_checked_by_the_declared_model_before_the_view_runs() -> None:
    ann = sign_in()
    for bad in ({**LUNCH, "amount_cents": -5}, {**LUNCH, "owner": 1}, {"amount_cents": 5}):
        status, body = ann.call("expenses.add", bad)
        assert (status, error_of(body)) == (400, "INVALID_INPUT"), bad
    assert owned(ann) == []


def test_an_approved_delete_applies_once() -> None:
    ann = sign_in()
    expense = add(ann)
    status, body = ann.approved("expenses.delete", {"expense_id": expense})
    assert (status, body["output"]) == (200, {"deleted": expense})
    assert owned(ann) == []


# ---------------------------------------------------------------------- hostile


def test_an_unmarked_view_is_not_a_procedure_and_cannot_be_reached_as_one() -> None:
    ann = sign_in()
    add(ann)
    for name in ("expenses.clear", "expenses.clearExpenses", "clear_expenses", "expenses.list/../clear"):
        status, body = ann.call(name, {})
        assert (status, error_of(body)) == (404, "CAPABILITY_NOT_FOUND"), name
    # Nor through the path of a served one: the input must fit that view's own URL.
    status, body = ann.call("expenses.delete", {"expense_id": "clear"})
    assert (status, error_of(body)) == (400, "INVALID_INPUT")
    assert owned(ann) == ["lunch"]
    # The view itself still works for the app's own page.
    response = ann.client.post("/expenses/clear/", HTTP_X_CSRFTOKEN=ann.token)
    assert response.status_code == 200 and owned(ann) == []


def test_no_session_is_a_typed_not_authenticated_and_runs_no_view() -> None:
    stranger = Client(enforce_csrf_checks=True)
    stranger.get("/accounts/login/")  # the login page sets the CSRF cookie
    token = stranger.cookies["csrftoken"].value
    body = json.dumps({"invocationId": new_id(), "input": LUNCH})
    response = stranger.post(
        "/api/agent/procedures/expenses.add", body, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 401 and response["Content-Type"] == "application/json"
    assert json.loads(response.content)["error"]["code"] == "NOT_AUTHENTICATED"
    assert not Expense.objects.filter(description="lunch", owner__isnull=True).exists()


def test_a_signed_out_session_is_a_typed_not_authenticated() -> None:
    ann = sign_in()
    ann.client.logout()
    status, body = ann.call("expenses.add", LUNCH, token=None)  # logout rotated the token: none sent
    assert (status, error_of(body)) == (401, "NOT_AUTHENTICATED")
    assert owned(ann) == []


def test_a_missing_csrf_token_is_refused_as_typed_json() -> None:
    ann = sign_in()
    response = ann.client.post(
        "/api/agent/procedures/expenses.add",
        json.dumps({"invocationId": new_id(), "input": LUNCH}),
        content_type="application/json",
    )
    assert response.status_code == 401 and response["Content-Type"] == "application/json"
    error = json.loads(response.content)["error"]
    assert (error["code"], error["details"]["reason"]) == ("NOT_AUTHENTICATED", "csrf")
    assert b"<html" not in response.content.lower()
    assert owned(ann) == []


def test_a_foreign_or_made_up_csrf_token_is_refused() -> None:
    ann, bob = sign_in("ann"), sign_in("bob")
    for token in (bob.token, "x" * 32, ann.token[:-1] + ("A" if ann.token[-1] != "A" else "B")):
        status, body = ann.call("expenses.add", LUNCH, token=token)
        assert (status, error_of(body), body["error"]["details"]["reason"]) == (401, "NOT_AUTHENTICATED", "csrf")
    assert owned(ann) == []
    # The approval step is guarded the same way: no challenge without the token.
    response = ann.client.post(
        "/api/agent/challenges/expenses.delete",
        json.dumps({"invocationId": new_id(), "input": {"expense_id": 1}}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=bob.token,
    )
    assert response.status_code == 401 and "challenge" not in json.loads(response.content)


def test_a_body_over_the_limit_is_a_typed_413_and_runs_no_view() -> None:
    ann = sign_in()
    big = {**LUNCH, "description": "x" * (agent.limits.max_body_bytes + 10)}
    status, body = ann.call("expenses.add", big)
    assert (status, error_of(body)) == (413, "INVALID_INPUT")
    assert owned(ann) == []


def test_an_approval_is_bound_to_its_input() -> None:
    ann = sign_in()
    kept, other = add(ann, description="kept"), add(ann, description="other")
    invocation = new_id()
    status, body = ann.call("expenses.delete", {"expense_id": other}, invocation_id=invocation)
    assert status == 428
    challenge = body["challenge"]
    # The approval of "delete other" sent with "delete kept": refused, nothing deleted.
    status, body = ann.call(
        "expenses.delete", {"expense_id": kept}, invocation_id=new_id(), confirmation=approval(challenge)
    )
    assert (status, error_of(body), body["error"]["details"]["reason"]) == (403, "CONFIRMATION_INVALID", "mismatch")
    assert owned(ann) == ["kept", "other"]
    # Made-up evidence is refused too; the real approval of the real input works, once.
    made_up = {**approval(challenge), "challenge": "ch_madeup"}
    status, body = ann.call("expenses.delete", {"expense_id": other}, invocation_id=invocation, confirmation=made_up)
    assert (status, body["error"]["details"]["reason"]) == (403, "unknown")
    status, body = ann.call("expenses.delete", {"expense_id": other}, invocation_id=invocation, confirmation=approval(challenge))
    assert status == 200 and owned(ann) == ["kept"]
    status, body = ann.call("expenses.delete", {"expense_id": other}, invocation_id=new_id(), confirmation=approval(challenge))
    assert (status, body["error"]["details"]["reason"]) == (403, "used")


def test_another_persons_session_cannot_use_or_replay_the_first_persons_calls() -> None:
    ann, bob = sign_in("ann"), sign_in("bob")
    expense = add(ann)
    invocation = new_id()
    status, body = ann.call("expenses.delete", {"expense_id": expense}, invocation_id=invocation)
    challenge = body["challenge"]
    # Bob answers Ann's challenge for the same input and invocation id: not his challenge.
    status, body = bob.call(
        "expenses.delete", {"expense_id": expense}, invocation_id=invocation, confirmation=approval(challenge)
    )
    assert (status, error_of(body), body["error"]["details"]["reason"]) == (403, "CONFIRMATION_INVALID", "mismatch")
    # With his own approval the view runs as Bob: Ann's expense is not his to delete.
    status, body = bob.approved("expenses.delete", {"expense_id": expense}, invocation_id=invocation)
    assert (status, error_of(body)) == (409, "PRECONDITION_FAILED")
    assert owned(ann) == ["lunch"]
    # Ann's call then applies; Bob replaying her invocation id gets nothing of hers.
    status, body = ann.call("expenses.delete", {"expense_id": expense}, invocation_id=invocation, confirmation=approval(challenge))
    assert status == 200 and owned(ann) == []
    listed = ann.call("expenses.add", LUNCH, invocation_id="inv-shared")
    status, body = bob.call("expenses.add", LUNCH, invocation_id="inv-shared")
    assert status == 200 and "replayed" not in body and body["output"]["id"] != listed[1]["output"]["id"]
    assert owned(bob) == ["lunch"] and owned(ann) == ["lunch"]


def test_an_inactive_user_is_not_a_caller() -> None:
    ann = sign_in()
    User.objects.filter(pk=ann.user.pk).update(is_active=False)
    status, body = ann.call("expenses.list", {})
    assert (status, error_of(body)) == (401, "NOT_AUTHENTICATED")
