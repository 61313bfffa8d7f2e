"""One table of hostile inputs, sent to every HTTP entry point that serves procedures: the
library's own ``ProcedureServer``, a FastAPI app's marked route (``AgentProcedures``) and a
Django project's marked view (``AgentViews``, with the session's CSRF token as the page sends
it). Each must answer the same typed code and status, apply nothing, and audit the refusal the
same way.

The procedure is the same on each: ``domain:notes.erase`` (destructive, needs the server's
approval and the ``notes.write`` permission), input ``{"text": ...}``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import Depends, FastAPI, Header, HTTPException
from pydantic import BaseModel, Field
from starlette.requests import Request

from agentsurface import ProcedureContract
from agentsurface.bridge.wire import call_url
from agentsurface.fastapi import AgentProcedures, procedure
from agentsurface.server import (
    Caller,
    CallRecord,
    ProcedureCall,
    ProcedureServer,
    ServerLimits,
    open_store,
    serve,
)
from tests._shared.server.helpers import challenge_of

from . import django_entry  # sets Django up (the example project's settings), at collection

TOKENS = {
    "tok-alice": Caller("alice", "acme", frozenset({"notes.write"})),
    "tok-bob": Caller("bob", "acme", frozenset({"notes.write"})),
    "tok-viewer": Caller("vera", "acme", frozenset()),
}
LIMITS = ServerLimits(max_body_bytes=2048, challenge_ttl=120.0)


class NoteIn(BaseModel):
    text: str = Field(min_length=1, max_length=200)


class Erased(BaseModel):
    erased: str


@dataclass
class EntryPoint:
    app: Any
    base: str
    applied: list[str] = field(default_factory=list)
    audited: list[tuple[str, str | None]] = field(default_factory=list)
    urlconf: str | None = None  # Django: the URLconf the test runs with

    def audit(self, record: CallRecord, db: Any) -> None:
        self.audited.append((record.outcome, record.reason))


ERASE = ProcedureContract(
    id="domain:notes.erase", description="Erase a note.", effect="destructive", input=NoteIn, output=Erased
)


def procedure_server(tmp_path: Path) -> EntryPoint:
    entry = EntryPoint(app=None, base="")

    def erase(call: ProcedureCall, value: NoteIn) -> Erased:
        entry.applied.append(value.text)
        return Erased(erased=value.text)

    def authenticate(request: Request) -> Caller | None:
        return TOKENS.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    entry.app = ProcedureServer(
        [serve(ERASE, erase, permissions={"notes.write"}, approval="confirm")],
        authenticate=authenticate,
        store=open_store(f"sqlite:///{tmp_path}/plain.sqlite3"),
        limits=LIMITS,
        audit=entry.audit,
    )
    return entry


def fastapi_app(tmp_path: Path) -> EntryPoint:
    entry = EntryPoint(app=None, base="/api/agent")
    app = FastAPI()

    def user(authorization: str = Header("")) -> Caller:
        found = TOKENS.get(authorization.removeprefix("Bearer "))
        if found is None:
            raise HTTPException(401, "Sign in.")
        return found

    @app.post("/notes/erase")
    @procedure("domain:notes.erase", effect="destructive", permissions={"notes.write"}, approval="confirm")
    def erase_note(body: NoteIn, who: Caller = Depends(user)) -> Erased:
        """Erase a note."""
        entry.applied.append(body.text)
        return Erased(erased=body.text)

    app.mount(
        "/api/agent",
        AgentProcedures(
            app, caller=user, store=open_store(f"sqlite:///{tmp_path}/fastapi.sqlite3"), limits=LIMITS, audit=entry.audit
        ),
    )
    entry.app = app
    return entry


def django_project(tmp_path: Path) -> EntryPoint:
    from django.core.asgi import get_asgi_application

    entry = EntryPoint(app=get_asgi_application(), base="/api/agent", applied=django_entry.APPLIED)
    entry.urlconf = django_entry.django_urlconf(tmp_path, TOKENS, LIMITS, entry.audit)
    return entry


ENTRY_POINTS: dict[str, Callable[[Path], EntryPoint]] = {
    "ProcedureServer": procedure_server,
    "FastAPI": fastapi_app,
    "Django": django_project,
}


@pytest.fixture(params=sorted(ENTRY_POINTS))
async def entry(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[EntryPoint, httpx.AsyncClient]]:
    made = ENTRY_POINTS[request.param](tmp_path)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=made.app), base_url="http://localhost") as client:
        if made.urlconf is None:
            yield made, client
            return
        from django.test import override_settings

        with override_settings(ROOT_URLCONF=made.urlconf):
            await client.get("/")  # the page: the session's CSRF cookie, sent back as X-CSRFToken
            client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
            yield made, client


async def post(
    client: httpx.AsyncClient, entry: EntryPoint, body: bytes | dict[str, Any], *, token: str | None = "tok-alice",
    content_type: str = "application/json", procedure: str = ERASE.id,
) -> httpx.Response:
    headers = {"Content-Type": content_type, **({"X-CSRFToken": client.headers["X-CSRFToken"]} if "X-CSRFToken" in client.headers else {})}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    raw = raw.replace(b'"NOW"', json.dumps(datetime.now(UTC).isoformat()).encode())
    return await client.post(call_url(entry.base, procedure), content=raw, headers=headers)


MADE_UP = {"challenge": "ch_madeup", "approvedAt": "NOW", "id": "x"}  # approved now, at send time


def envelope(text: str, ident: str, evidence: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"invocationId": ident, "input": {"text": text}}
    if evidence is not None:
        body["confirmation"] = evidence
    return body


def evidence_for(challenge: dict[str, Any]) -> dict[str, Any]:
    return {"challenge": challenge["id"], "approvedAt": datetime.now(UTC).isoformat(), "id": "cnf"}


def answer(response: httpx.Response) -> tuple[int, str, str | None]:
    error = response.json()["error"]
    return response.status_code, error["code"], (error.get("details") or {}).get("reason")


async def asked(client: httpx.AsyncClient, entry: EntryPoint, text: str, token: str = "tok-alice") -> dict[str, Any]:
    found = challenge_of(await post(client, entry, envelope(text, f"ask-{text}-{token}"), token=token))
    assert found is not None
    return found


STATIC_CASES: list[tuple[str, Any, dict[str, Any], tuple[int, str, str | None]]] = [
    ("no credentials", envelope("a", "i1"), {"token": None}, (401, "NOT_AUTHENTICATED", None)),
    ("unknown token", envelope("a", "i2"), {"token": "tok-forged"}, (401, "NOT_AUTHENTICATED", None)),
    ("without the permission", envelope("a", "i3"), {"token": "tok-viewer"}, (403, "NOT_AUTHORIZED", None)),
    ("unknown procedure", envelope("a", "i4"), {"procedure": "domain:notes.wipe"}, (404, "CAPABILITY_NOT_FOUND", None)),
    ("a body over the limit", envelope("x" * 3000, "i5"), {}, (413, "INVALID_INPUT", None)),
    ("not JSON", b"{not json", {}, (400, "INVALID_INPUT", None)),
    ("invalid UTF-8", b'{"invocationId": "i6", "input": {"text": "\xff"}}', {}, (400, "INVALID_INPUT", None)),
    ("a duplicated key", b'{"invocationId": "i7", "invocationId": "i8", "input": {"text": "a"}}', {}, (400, "INVALID_INPUT", None)),
    ("nested too deep", b'{"invocationId": "i9", "input": ' + b"[" * 100 + b"]" * 100 + b"}", {}, (400, "INVALID_INPUT", None)),
    ("another content type", envelope("a", "i10"), {"content_type": "text/plain"}, (415, "INVALID_INPUT", None)),
    ("an unknown input field", {"invocationId": "i11", "input": {"text": "a", "owner": "bob"}}, {}, (400, "INVALID_INPUT", None)),
    ("an unknown envelope field", {**envelope("a", "i12"), "caller": "bob"}, {}, (400, "INVALID_INPUT", None)),
    ("made-up evidence", envelope("a", "i13", MADE_UP), {}, (403, "CONFIRMATION_INVALID", "unknown")),
    ("no evidence at all", envelope("a", "i14"), {}, (428, "CONFIRMATION_REQUIRED", None)),
]


@pytest.mark.parametrize(("case", "body", "options", "expected"), STATIC_CASES, ids=[c[0] for c in STATIC_CASES])
async def test_every_entry_point_refuses_alike(
    entry: tuple[EntryPoint, httpx.AsyncClient], case: str, body: Any, options: dict[str, Any],
    expected: tuple[int, str, str | None],
) -> None:
    made, client = entry
    response = await post(client, made, body, **options)
    assert answer(response) == expected, response.text
    assert made.applied == []
    for hostile in ("<b>", "bob", "ch_madeup", "x" * 50):
        assert hostile not in response.json()["error"]["message"]


async def test_evidence_replayed_moved_or_stolen_is_refused_alike(entry: tuple[EntryPoint, httpx.AsyncClient]) -> None:
    made, client = entry
    challenge = await asked(client, made, "keep")
    moved = await post(client, made, envelope("other", "m1", evidence_for(challenge)))
    assert answer(moved) == (403, "CONFIRMATION_INVALID", "mismatch")
    stolen = await post(client, made, envelope("keep", "s1", evidence_for(challenge)), token="tok-bob")
    assert answer(stolen) == (403, "CONFIRMATION_INVALID", "mismatch")
    applied = await post(client, made, envelope("keep", "ok1", evidence_for(challenge)))
    assert applied.json()["output"] == {"erased": "keep"}
    replayed = await post(client, made, envelope("keep", "ok2", evidence_for(challenge)))
    assert answer(replayed) == (403, "CONFIRMATION_INVALID", "used")
    same = await post(client, made, envelope("keep", "ok1", evidence_for(challenge)))
    assert same.json()["replayed"] is True  # the same invocation: its recorded answer
    assert made.applied == ["keep"]


async def test_refusals_are_audited_alike(entry: tuple[EntryPoint, httpx.AsyncClient]) -> None:
    made, client = entry
    await post(client, made, envelope("a", "a1"), token="tok-viewer")
    await post(client, made, envelope("a", "a2", MADE_UP))
    challenge = await asked(client, made, "b")
    await post(client, made, envelope("b", "a3", evidence_for(challenge)))
    assert made.audited == [
        ("NOT_AUTHORIZED", None),
        ("CONFIRMATION_INVALID", "unknown"),
        ("CONFIRMATION_REQUIRED", None),
        ("ok", None),
    ]
