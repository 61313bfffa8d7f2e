"""The app with FastAPI's own test client: its routes for the person, and the same routes as the
agent's procedures, with the approval the server requires and the refusals an agent gets."""

from datetime import UTC, datetime

import pytest
from expenses.main import create_app
from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPENSES_DB", str(tmp_path / "expenses.sqlite3"))
    monkeypatch.setenv("EXPENSES_AGENT_STORE", f"sqlite:///{tmp_path}/agent.sqlite3")
    with TestClient(create_app()) as client:
        yield client


def now():
    return datetime.now(UTC).isoformat()


def sign_in(client, user, password):
    assert client.post("/login", json={"username": user, "password": password}).status_code == 200


def agent_call(client, procedure, input, invocation_id, confirmation=None):
    envelope = {"invocationId": invocation_id, "input": input}
    if confirmation is not None:
        envelope["confirmation"] = confirmation
    return client.post(f"/api/agent/procedures/{procedure}", json=envelope)


def test_the_person_uses_the_routes_as_before(client):
    sign_in(client, "alice", "wonderland")
    assert client.post("/expenses", json={"amount": 4.5, "note": "tea"}).status_code == 201
    assert client.get("/expenses").json() == [{"id": 1, "amount": 4.5, "note": "tea"}]


def test_the_agent_adds_through_the_procedure_once_per_invocation(client):
    sign_in(client, "alice", "wonderland")
    first = agent_call(client, "expenses.add", {"amount": 12, "note": "lunch"}, "inv-1")
    again = agent_call(client, "expenses.add", {"amount": 12, "note": "lunch"}, "inv-1")
    assert first.json()["output"] == {"id": 1, "amount": 12.0, "note": "lunch"}
    assert again.json()["replayed"] is True
    assert len(client.get("/expenses").json()) == 1  # the retry applied nothing


def test_a_delete_needs_the_persons_approval_of_that_very_call(client):
    sign_in(client, "alice", "wonderland")
    client.post("/expenses", json={"amount": 1, "note": "a"})
    client.post("/expenses", json={"amount": 2, "note": "b"})
    asked = agent_call(client, "expenses.delete", {"expense_id": 1}, "inv-2")
    assert asked.status_code == 428
    assert asked.json()["error"]["code"] == "CONFIRMATION_REQUIRED"
    approval = {"challenge": asked.json()["challenge"]["id"], "approvedAt": now(), "id": "cnf-1"}
    moved = agent_call(client, "expenses.delete", {"expense_id": 2}, "inv-3", confirmation=approval)
    assert moved.json()["error"]["code"] == "CONFIRMATION_INVALID"  # approved for another input
    assert moved.json()["error"]["details"]["reason"] == "mismatch"
    assert len(client.get("/expenses").json()) == 2
    approved = agent_call(client, "expenses.delete", {"expense_id": 1}, "inv-3b", confirmation=approval)
    assert approved.json()["output"] == {"deleted": 1}
    assert [e["id"] for e in client.get("/expenses").json()] == [2]


def test_routes_not_marked_are_not_procedures(client):
    sign_in(client, "alice", "wonderland")
    refused = agent_call(client, "expenses.delete_all_expenses", {}, "inv-4")
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "CAPABILITY_NOT_FOUND"


def test_without_a_session_the_agent_is_refused(client):
    refused = agent_call(client, "expenses.list", {}, "inv-5")
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "NOT_AUTHENTICATED")


def test_bob_may_not_delete_and_cannot_reuse_alices_invocation(client):
    sign_in(client, "alice", "wonderland")
    alices = agent_call(client, "expenses.add", {"amount": 3, "note": "alice's"}, "inv-6").json()["output"]
    client.cookies.clear()
    sign_in(client, "bob", "builder")
    refused = agent_call(client, "expenses.delete", {"expense_id": alices["id"]}, "inv-7")
    assert refused.json()["error"]["code"] == "NOT_AUTHORIZED"
    # The same invocation id is bob's own call, not a replay of alice's answer.
    own = agent_call(client, "expenses.add", {"amount": 3, "note": "alice's"}, "inv-6").json()
    assert "replayed" not in own and own["output"]["id"] != alices["id"]
    assert [e["note"] for e in client.get("/expenses").json()] == ["alice's"]  # bob's own
