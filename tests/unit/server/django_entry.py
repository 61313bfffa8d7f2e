"""The hostile table's Django row: a project's view marked as ``domain:notes.erase``, served by
``AgentViews`` inside the project (the example project's settings and middleware), the caller
from the same bearer tokens as the other rows, the CSRF token sent as the page sends it."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.middleware.csrf import get_token
from django.urls import clear_url_caches, include, path
from pydantic import BaseModel

import tests._shared.django.setup  # noqa: F401  # Django set up with the example project's settings
from agentsurface.django import AgentViews, procedure
from agentsurface.server import Caller, CallRecord, ServerLimits, open_store


class NoteIn(BaseModel):
    text: str


class Erased(BaseModel):
    erased: str


APPLIED: list[str] = []


@procedure(
    "domain:notes.erase", effect="destructive", input=NoteIn, output=Erased,
    permissions={"notes.write"}, approval="confirm",
)
def erase_note(request: HttpRequest) -> JsonResponse:
    """Erase a note."""
    text = json.loads(request.body)["text"]
    APPLIED.append(text)
    return JsonResponse({"erased": text})


def home(request: HttpRequest) -> JsonResponse:
    """The page: it gets the session's CSRF token (the cookie) as a Django page does."""
    get_token(request)
    return JsonResponse({"ok": True})


def django_urlconf(
    tmp_path: Path, tokens: dict[str, Caller], limits: ServerLimits, audit: Callable[[CallRecord, Any], None]
) -> str:
    """A fresh URLconf module (its own store) for one test; returns its dotted name."""
    APPLIED.clear()

    def caller(request: HttpRequest) -> Caller | None:
        return tokens.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    patterns: list[Any] = [path("", home), path("notes/erase/", erase_note)]
    agent = AgentViews(
        patterns, store=open_store(f"sqlite:///{tmp_path}/django.sqlite3"), caller=caller, limits=limits, audit=audit
    )
    name = f"tests.unit.server._django_urls_{tmp_path.name}"
    module = types.ModuleType(name)
    module.urlpatterns = [*patterns, path("api/agent/", include(agent.urls))]  # type: ignore[attr-defined]
    sys.modules[name] = module
    clear_url_caches()
    return name
