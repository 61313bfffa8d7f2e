"""A FastAPI app's marked routes as procedures: what an agent, and a hostile one, meets.

The routes run with the person's own request (their headers, the app's dependencies), after the
pipeline's steps; every refusal is typed; unmarked routes are never procedures."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from agentsurface.bridge.wire import MANIFEST_PATH
from tests._shared.fastapi.routes_app import Ledger
from tests._shared.server.helpers import call, challenge_of, error_of, new_id, post_raw

BASE = "/api/agent"


def now() -> str:
    return datetime.now(UTC).isoformat()


async def agent(http: httpx.AsyncClient, procedure: str, input: Any, **options: Any) -> httpx.Response:
    return await call(http, procedure, input, base=BASE, **options)


def code(response: httpx.Response) -> str:
    error_of(response)
    return str(response.json()["error"]["code"])


async def test_the_manifest_lists_only_the_marked_routes(http: httpx.AsyncClient) -> None:
    manifest = (await http.get(BASE + MANIFEST_PATH)).json()
    assert sorted(manifest["procedures"]) == [
        "domain:docs.read", "domain:files.touch", "domain:notes.add", "domain:notes.delete", "domain:notes.list",
        "domain:notes.tag",
    ]
    assert manifest["procedures"]["domain:notes.delete"]["requiresConfirmation"] is True


async def test_an_unmarked_route_cannot_be_reached_as_a_procedure(http: httpx.AsyncClient, ledger: Ledger) -> None:
    for name in ("notes.wipe", "notes.wipe_notes", "wipe", "notes.list/../wipe"):
        refused = await agent(http, name, {})
        assert (refused.status_code, code(refused)) == (404, "CAPABILITY_NOT_FOUND")
    assert "wipe" not in ledger.runs


async def test_a_call_runs_the_route_with_its_path_query_and_body(http: httpx.AsyncClient, ledger: Ledger) -> None:
    added = await agent(http, "notes.add", {"text": "buy milk", "pinned": True})
    assert added.status_code == 200, added.text
    assert added.json()["output"] == {"id": 1, "owner": "alice", "text": "buy milk", "pinned": True}
    listed = await agent(http, "notes.list", {"limit": 1})
    assert listed.json()["output"] == {"items": [added.json()["output"]], "total": 1}
    tagged = await agent(http, "notes.tag", {"note_id": 1, "tags": ["home"]})
    assert tagged.json()["output"] is None  # the route's 204


async def test_the_input_is_the_routes_own_schema_and_refuses_unknown_fields(http: httpx.AsyncClient, ledger: Ledger) -> None:
    for bad in ({"text": ""}, {"text": "x", "owner": "bob"}, {"text": 3}, {}):
        refused = await agent(http, "notes.add", bad)
        assert (refused.status_code, code(refused)) == (400, "INVALID_INPUT")
    over = await agent(http, "notes.list", {"limit": 51})
    assert code(over) == "INVALID_INPUT" and over.json()["error"]["details"]["issues"][0]["path"] == "/limit"
    negative = await agent(http, "notes.delete", {"note_id": 0})
    assert code(negative) == "INVALID_INPUT"  # the dependency's Path(gt=0) is the input's too
    assert "add" not in ledger.runs


async def test_the_apps_own_auth_decides_who_calls(http: httpx.AsyncClient, ledger: Ledger) -> None:
    for token in (None, "tok-nobody"):
        refused = await agent(http, "notes.list", {}, token=token)
        assert (refused.status_code, code(refused)) == (401, "NOT_AUTHENTICATED")
    assert "list" not in ledger.runs


async def test_a_permission_the_caller_lacks_is_refused_before_the_route(http: httpx.AsyncClient, ledger: Ledger) -> None:
    refused = await agent(http, "notes.delete", {"note_id": 1}, token="tok-bob", confirmation={"id": "x", "approvedAt": now()})
    assert (refused.status_code, code(refused)) == (403, "NOT_AUTHORIZED")
    assert "delete" not in ledger.runs


async def test_the_routes_refusals_are_typed_and_apply_nothing(http: httpx.AsyncClient, ledger: Ledger) -> None:
    ident = new_id()
    conflict = await agent(http, "notes.add", {"text": "<b>refused</b>"}, invocation_id=ident)
    assert (conflict.status_code, code(conflict)) == (409, "PRECONDITION_FAILED")
    error = conflict.json()["error"]
    assert error["details"]["reason"] == "conflict" and "<b>" not in error["message"]  # no markup passed on
    again = await agent(http, "notes.add", {"text": "<b>refused</b>"}, invocation_id=ident)
    assert code(again) == "PRECONDITION_FAILED" and ledger.runs["add"] == 2  # not recorded: ran again


async def test_a_route_that_crashes_is_a_sanitized_failure(http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        crashed = await agent(http, "notes.add", {"text": "boom"})
    assert (crashed.status_code, code(crashed)) == (500, "EXECUTION_FAILED")
    assert "crashed" not in crashed.text
    assert any("the route crashed" in str(r.exc_info) for r in caplog.records if r.exc_info)


async def test_applied_once_per_invocation_id(http: httpx.AsyncClient, ledger: Ledger) -> None:
    ident = new_id()
    first = await agent(http, "notes.add", {"text": "once"}, invocation_id=ident)
    replay = await agent(http, "notes.add", {"text": "once"}, invocation_id=ident)
    assert replay.json() == {**first.json(), "replayed": True}
    other = await agent(http, "notes.add", {"text": "twice"}, invocation_id=ident)
    assert code(other) == "INVOCATION_CONFLICT"
    assert ledger.runs["add"] == 1 and len(ledger.notes) == 1


async def test_concurrent_duplicates_run_the_route_once(http: httpx.AsyncClient, ledger: Ledger) -> None:
    ident = new_id()
    answers = await asyncio.gather(*(agent(http, "notes.add", {"text": "dup"}, invocation_id=ident) for _ in range(8)))
    assert all(a.status_code == 200 for a in answers)
    assert ledger.runs["add"] == 1


async def test_many_concurrent_calls_to_sync_routes_do_not_starve_the_thread_pool(http: httpx.AsyncClient, ledger: Ledger) -> None:
    """Each call holds a worker thread (its transaction) while the sync route needs another."""
    answers = await asyncio.wait_for(
        asyncio.gather(*(agent(http, "notes.list", {}) for _ in range(60))), timeout=60
    )
    assert [a.status_code for a in answers] == [200] * 60
    assert ledger.runs["list"] == 60


async def test_a_delete_needs_the_servers_challenge_bound_to_its_input(http: httpx.AsyncClient, ledger: Ledger) -> None:
    for text in ("a", "b"):
        await agent(http, "notes.add", {"text": text})
    asked = await agent(http, "notes.delete", {"note_id": 1})
    assert (asked.status_code, code(asked)) == (428, "CONFIRMATION_REQUIRED")
    challenge = challenge_of(asked)
    assert challenge is not None
    evidence = {"challenge": challenge["id"], "approvedAt": now(), "id": "cnf"}
    made_up = await agent(http, "notes.delete", {"note_id": 1}, confirmation={**evidence, "challenge": "ch_madeup"})
    assert code(made_up) == "CONFIRMATION_INVALID"
    moved = await agent(http, "notes.delete", {"note_id": 2}, confirmation=evidence)
    assert code(moved) == "CONFIRMATION_INVALID" and moved.json()["error"]["details"]["reason"] == "mismatch"
    assert "delete" not in ledger.runs
    approved = await agent(http, "notes.delete", {"note_id": 1}, confirmation=evidence)
    assert approved.json()["output"] == {"deleted": 1}
    reused = await agent(http, "notes.delete", {"note_id": 1}, confirmation=evidence)
    assert code(reused) == "CONFIRMATION_INVALID" and reused.json()["error"]["details"]["reason"] == "used"
    assert ledger.runs["delete"] == 1 and sorted(ledger.notes) == [2]


async def test_another_users_challenge_or_invocation_changes_nothing(http: httpx.AsyncClient, ledger: Ledger) -> None:
    ident = new_id()
    mine = await agent(http, "notes.add", {"text": "alice's"}, invocation_id=ident)
    asked = challenge_of(await agent(http, "notes.delete", {"note_id": 1}))
    assert asked is not None
    evidence = {"challenge": asked["id"], "approvedAt": now(), "id": "cnf"}
    stolen = await agent(http, "notes.delete", {"note_id": 1}, token="tok-eve", confirmation=evidence)
    assert code(stolen) == "CONFIRMATION_INVALID"
    theirs = await agent(http, "notes.add", {"text": "alice's"}, token="tok-eve", invocation_id=ident)
    assert "replayed" not in theirs.json() and theirs.json()["output"]["owner"] == "eve"
    assert mine.json()["output"]["owner"] == "alice" and 1 in ledger.notes


async def test_a_body_over_the_limit_is_a_typed_413(http: httpx.AsyncClient, ledger: Ledger) -> None:
    body = json.dumps({"invocationId": new_id(), "input": {"text": "x" * 5000}}).encode()
    refused = await post_raw(http, "domain:notes.add", body, base=BASE)
    assert (refused.status_code, code(refused)) == (413, "INVALID_INPUT")
    assert "add" not in ledger.runs


async def test_the_person_still_uses_the_routes_directly(http: httpx.AsyncClient, ledger: Ledger) -> None:
    made = await http.post("/v1/notes", json={"text": "mine"}, headers={"Authorization": "Bearer tok-alice"})
    assert made.status_code == 201
    wiped = await http.post("/v1/notes/wipe", headers={"Authorization": "Bearer tok-alice"})
    assert wiped.json() == {"wiped": 1}


async def test_a_path_parameter_cannot_reach_an_unmarked_route(http: httpx.AsyncClient, ledger: Ledger) -> None:
    """``{"name": "x/purge"}`` would be ``POST /files/x/purge``: another route, never run."""
    refused = await agent(http, "files.touch", {"name": "x/purge"})
    assert (refused.status_code, code(refused)) == (400, "INVALID_INPUT")
    assert refused.json()["error"]["details"]["issues"][0]["path"] == "/name"
    touched = await agent(http, "files.touch", {"name": "x.txt"})
    assert touched.json()["output"] == {"touched": "x.txt"}
    # A catch-all path parameter may hold slashes, but not to reach a route declared before it.
    read = await agent(http, "docs.read", {"rest": "guides/intro.md"})
    assert read.json()["output"] == {"path": "guides/intro.md"}
    shadowed = await agent(http, "docs.read", {"rest": "secret/k1"})
    assert code(shadowed) == "INVALID_INPUT"
    assert "purge" not in ledger.runs and "secret" not in ledger.runs
