"""Views for the hostile tests, beside the example project's: a view with a text URL argument,
one that writes and then refuses, one that raises the app's own exceptions, an async one, and
an ``AgentViews`` whose caller hook can be made to fail (urls_for_tests.py serves them)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from expenses.models import Expense
from pydantic import BaseModel

from agentsurface.django import procedure, user_caller
from agentsurface.server import Caller, Refusal, capability_error

CALLS: list[str] = []  # the views of this module that ran, in order
CALLER_MODE = {"mode": "user"}  # "user", "refuse", "deny", "anyone"
AUDIT = {"fail": False, "records": 0}  # the audit hook fails (after the view ran) when set


class Named(BaseModel):
    name: str


class Note(BaseModel):
    note: str


class Echo(BaseModel):
    path: str
    method: str
    user: str
    body: str
    query: str


@procedure("domain:things.echo", effect="server-mutation", input=Named, output=Echo, method="PUT")
@login_required
def echo_thing(request: HttpRequest, name: str) -> JsonResponse:
    """Answer what the view received."""
    CALLS.append(f"echo:{name}")
    return JsonResponse(
        {
            "path": request.path,
            "method": request.method,
            "user": request.user.get_username(),
            "body": request.body.decode(),
            "query": request.META["QUERY_STRING"],
        }
    )


@procedure("domain:things.find", effect="server-query", input=Named, output=Echo)
def find_thing(request: HttpRequest) -> JsonResponse:
    """Look a thing up (a GET: the input as the query string)."""
    CALLS.append("find")
    return JsonResponse(
        {
            "path": request.path,
            "method": request.method,
            "user": str(request.user),
            "body": request.body.decode(),
            "query": request.META["QUERY_STRING"],
        }
    )


def secret_thing(request: HttpRequest, name: str) -> JsonResponse:
    """Not a procedure: never reachable through the agent's endpoint."""
    CALLS.append(f"secret:{name}")
    return JsonResponse({"secret": name})


@procedure("domain:things.writeThenRefuse", effect="server-mutation", input=Note)
@login_required
def write_then_refuse(request: HttpRequest) -> JsonResponse:
    """Write an expense, then refuse (a conflict)."""
    CALLS.append("write-then-refuse")
    note = json.loads(request.body)["note"]
    Expense.objects.create(owner=request.user, amount_cents=1, description=note, spent_on="2026-01-01")
    return JsonResponse({"error": "this note conflicts with another one"}, status=409)


@procedure("domain:things.raise", effect="server-mutation", input=Note)
def raising(request: HttpRequest) -> HttpResponse:
    """Raise the app's own exceptions, by name."""
    note = json.loads(request.body)["note"]
    CALLS.append(f"raise:{note}")
    if note == "denied":
        raise PermissionDenied("not for this account")
    if note == "invalid":
        raise ValidationError({"note": ["is not a note"]})
    if note == "crash":
        raise RuntimeError("secret internals")
    if note == "html":
        return HttpResponse("<p>ok</p>")
    return HttpResponse(status=204)


@procedure("domain:things.asyncEcho", effect="server-mutation", input=Note, output=Note)
async def async_echo(request: HttpRequest) -> JsonResponse:
    """An async view."""
    CALLS.append("async")
    return JsonResponse({"note": json.loads(request.body)["note"].upper()})


@procedure("domain:things.guarded", effect="server-mutation", input=Note)
@permission_required("expenses.delete_expense")
def guarded(request: HttpRequest) -> JsonResponse:
    """Guarded by Django's permission check alone (it redirects to the login page)."""
    CALLS.append("guarded")
    return JsonResponse({})


@procedure(
    "domain:things.permitted", effect="server-mutation", input=Note, permissions={"expenses.delete_expense"}
)
def permitted(request: HttpRequest) -> JsonResponse:
    """Guarded by the procedure's permissions (the caller's Django permissions)."""
    CALLS.append("permitted")
    return JsonResponse({})


def audit_hook(record: Any, db: Any) -> None:
    """The app's audit hook, in the call's transaction: it may fail after the view ran."""
    AUDIT["records"] = int(AUDIT["records"]) + 1
    if AUDIT["fail"] and record.outcome == "ok":
        raise RuntimeError("the audit table is full")


def hook_caller(request: HttpRequest) -> Caller | None:
    mode = CALLER_MODE["mode"]
    if mode == "refuse":
        raise Refusal(capability_error("NOT_AUTHENTICATED", "The app's sign-in expired."))
    if mode == "deny":
        raise PermissionDenied("suspended account")
    if mode == "anyone":  # a careless hook: the view's own login_required still answers
        return Caller(id="anyone")
    return user_caller(request)


