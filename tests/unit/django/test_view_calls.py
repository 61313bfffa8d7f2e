"""How a procedure call reaches its view and how the view's answer comes back (the views of
views_for_tests.py, served at /agent/ by urls_for_tests.py): the request the view receives, URL
arguments that cannot steer the call elsewhere, the view's statuses and exceptions as typed
refusals with its writes undone, and the caller hook's own refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Permission
from django.test import Client, override_settings
from expenses.models import Expense

from tests._shared.django import views_for_tests as v
from tests._shared.django.support import Person, error_of, sign_in

AGENT = "/agent"


@pytest.fixture(autouse=True)
def _test_urls() -> Iterator[None]:
    v.CALLS.clear()
    v.CALLER_MODE["mode"] = "user"
    with override_settings(ROOT_URLCONF="tests._shared.django.urls_for_tests"):
        yield


@pytest.fixture
def ann() -> Person:
    return sign_in("ann")


def test_the_view_gets_the_persons_request_with_its_method_path_and_json_body(ann: Person) -> None:
    status, body = ann.call("things.echo", {"name": "blue pen"}, base=AGENT)
    assert status == 200, body
    assert body["output"] == {
        "path": "/things/blue pen/echo/",
        "method": "PUT",
        "user": ann.user.get_username(),
        "body": "{}",  # the URL's argument is not repeated in the body
        "query": "",
    }
    assert v.CALLS == ["echo:blue pen"]


def test_a_get_view_gets_the_input_as_its_query_string(ann: Person) -> None:
    status, body = ann.call("things.find", {"name": "a&b=c"}, base=AGENT)
    assert status == 200 and body["output"]["method"] == "GET"
    assert body["output"]["query"] == "name=a%26b%3Dc" and body["output"]["body"] == ""


@pytest.mark.parametrize("name", ["x/secret", "../x", "x/echo/../../secret", ""])
def test_a_url_argument_cannot_steer_the_call_to_another_view(ann: Person, name: str) -> None:
    status, body = ann.call("things.echo", {"name": name}, base=AGENT)
    assert (status, error_of(body)) == (400, "INVALID_INPUT")
    assert body["error"]["details"]["issues"][0]["path"] == "/name"
    assert v.CALLS == []


def test_an_unmarked_view_beside_marked_ones_is_unreachable(ann: Person) -> None:
    for name in ("things.secret", "things.secretThing", "secret_thing"):
        status, body = ann.call(name, {"name": "x"}, base=AGENT)
        assert (status, error_of(body)) == (404, "CAPABILITY_NOT_FOUND")
    assert v.CALLS == []


def test_a_refusing_view_has_its_writes_undone(ann: Person) -> None:
    status, body = ann.call("things.writeThenRefuse", {"note": "undone"}, base=AGENT)
    assert (status, error_of(body)) == (409, "PRECONDITION_FAILED")
    assert body["error"]["details"]["reason"] == "conflict"
    assert body["error"]["message"] == "this note conflicts with another one"
    assert v.CALLS == ["write-then-refuse"]
    assert not Expense.objects.filter(description="undone").exists()


@pytest.mark.parametrize(
    ("note", "status", "code"),
    [
        ("denied", 403, "NOT_AUTHORIZED"),
        ("invalid", 400, "INVALID_INPUT"),
        ("crash", 500, "EXECUTION_FAILED"),
        ("html", 500, "EXECUTION_FAILED"),
    ],
)
def test_the_views_exceptions_are_typed_refusals(ann: Person, note: str, status: int, code: str) -> None:
    answered, body = ann.call("things.raise", {"note": note}, base=AGENT)
    assert (answered, error_of(body)) == (status, code)
    assert "secret internals" not in json.dumps(body) and "<p>" not in json.dumps(body)
    if note == "denied":
        assert body["error"]["message"] == "not for this account"
    if note == "invalid":
        assert body["error"]["details"]["issues"] == [{"path": "/note", "message": "is not a note"}]


def test_an_empty_answer_is_no_output(ann: Person) -> None:
    status, body = ann.call("things.raise", {"note": "fine"}, base=AGENT)
    assert (status, body["ok"], body["output"]) == (200, True, None)
    assert v.CALLS == ["raise:fine"]


def test_an_async_view_runs(ann: Person) -> None:
    status, body = ann.call("things.asyncEcho", {"note": "hi"}, base=AGENT)
    assert (status, body["output"]) == (200, {"note": "HI"})


def test_the_caller_hook_may_refuse_with_a_typed_error(ann: Person) -> None:
    v.CALLER_MODE["mode"] = "refuse"
    status, body = ann.call("things.echo", {"name": "x"}, base=AGENT)
    assert (status, error_of(body), body["error"]["message"]) == (401, "NOT_AUTHENTICATED", "The app's sign-in expired.")
    v.CALLER_MODE["mode"] = "deny"
    status, body = ann.call("things.echo", {"name": "x"}, base=AGENT)
    assert (status, error_of(body), body["error"]["message"]) == (403, "NOT_AUTHORIZED", "suspended account")
    assert v.CALLS == []


def test_the_views_own_login_check_answers_a_careless_caller_hook() -> None:
    v.CALLER_MODE["mode"] = "anyone"  # the hook lets an anonymous person through
    stranger = Client(enforce_csrf_checks=True)
    stranger.get("/accounts/login/")
    person = Person(None, stranger, stranger.cookies["csrftoken"].value)  # type: ignore[arg-type]
    status, body = person.call("things.echo", {"name": "x"}, base=AGENT)
    assert (status, error_of(body)) == (401, "NOT_AUTHENTICATED")  # login_required's redirect
    assert v.CALLS == []


def test_django_permissions_refuse_as_not_authorized_until_granted(ann: Person) -> None:
    for name in ("things.guarded", "things.permitted"):
        status, body = ann.call(name, {"note": "x"}, base=AGENT)
        assert (status, error_of(body)) == (403, "NOT_AUTHORIZED"), name
    assert v.CALLS == []  # permission_required's redirect: the view body never ran
    ann.user.user_permissions.add(Permission.objects.get(codename="delete_expense"))
    for name in ("things.guarded", "things.permitted"):
        status, body = ann.call(name, {"note": "x"}, base=AGENT)
        assert status == 200, body
    assert v.CALLS == ["guarded", "permitted"]


def test_an_anonymous_person_is_refused_before_a_view_without_its_own_login_check() -> None:
    stranger = Client(enforce_csrf_checks=True)
    stranger.get("/accounts/login/")
    person = Person(None, stranger, stranger.cookies["csrftoken"].value)  # type: ignore[arg-type]
    status, body = person.call("things.find", {"name": "x"}, base=AGENT)  # find_thing: no login_required
    assert (status, error_of(body)) == (401, "NOT_AUTHENTICATED")
    assert v.CALLS == []
