"""Helpers of the Django tests: people signed in with their own session and CSRF token, and
calls in the bridge's envelope through Django's test client."""

from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

_ids = itertools.count(1)
LUNCH_INPUT = {"amount_cents": 1250, "description": "lunch", "spent_on": "2026-11-03"}


def new_id() -> str:
    return f"inv_dj_{next(_ids)}"


@dataclass
class Person:
    user: User
    client: Client
    token: str  # the CSRF token of this person's session, as the page reads it

    def call(
        self,
        procedure: str,
        input: Any,
        *,
        invocation_id: str | None = None,
        confirmation: dict[str, Any] | None = None,
        token: str | None = "",
        base: str = "/api/agent",
        raw: bytes | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """POST the envelope; ``token=None`` sends no CSRF header, a string sends that one
        (the person's own by default)."""
        envelope: dict[str, Any] = {"invocationId": invocation_id or new_id(), "input": input}
        if confirmation is not None:
            envelope["confirmation"] = confirmation
        headers = {} if token is None else {"HTTP_X_CSRFTOKEN": token or self.token}
        body = raw if raw is not None else json.dumps(envelope).encode()
        response = self.client.post(f"{base}/procedures/{procedure}", body, content_type="application/json", **headers)
        assert response["Content-Type"].startswith("application/json"), response.content[:200]
        return response.status_code, json.loads(response.content)

    def approved(self, procedure: str, input: Any, *, invocation_id: str | None = None, **kw: Any) -> tuple[int, dict[str, Any]]:
        """The call approved as the page's bridge does it: refused with a challenge, then sent
        again answering that challenge."""
        invocation_id = invocation_id or new_id()
        status, body = self.call(procedure, input, invocation_id=invocation_id, **kw)
        assert status == 428 and body["error"]["code"] == "CONFIRMATION_REQUIRED", body
        return self.call(procedure, input, invocation_id=invocation_id, confirmation=approval(body["challenge"]), **kw)


def approval(challenge: dict[str, Any]) -> dict[str, Any]:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"id": "cnf_" + challenge["id"], "challenge": challenge["id"], "approvedAt": now}


def sign_in(name: str = "ann") -> Person:
    """A new user (a unique name) signed in on a client that enforces CSRF, with the token the
    app's page gets (its home view sets the cookie)."""
    user = User.objects.create_user(f"{name}-{uuid.uuid4().hex[:8]}", password="pw")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get("/")
    assert page.status_code == 200
    return Person(user, client, client.cookies["csrftoken"].value)


def error_of(body: dict[str, Any]) -> str:
    assert body["ok"] is False, body
    return str(body["error"]["code"])
