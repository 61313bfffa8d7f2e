from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any

import httpx

from agentsurface._core.errors import ERROR_MATRIX
from agentsurface.bridge.wire import call_url

_ids = itertools.count(1)


def new_id() -> str:
    return f"inv_test_{next(_ids)}"


def approved_now() -> dict[str, str]:
    return {"id": "cnf_1", "approvedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}


async def call(
    http: httpx.AsyncClient,
    procedure: str,
    input: Any,
    *,
    token: str | None = "tok-alice",
    invocation_id: str | None = None,
    confirmation: dict[str, Any] | None = None,
    base: str = "",
    answer: bool = True,
) -> httpx.Response:
    """A call in the bridge's envelope. Like the bridge, evidence that names no challenge is
    sent once, and the server's CONFIRMATION_REQUIRED challenge answered with it (unless
    ``answer=False``)."""
    envelope: dict[str, Any] = {"invocationId": invocation_id or new_id(), "input": input}
    if confirmation is not None:
        envelope["confirmation"] = confirmation
    response = await post_raw(http, procedure, json.dumps(envelope).encode(), token=token, base=base)
    challenge = challenge_of(response)
    if answer and confirmation is not None and "challenge" not in confirmation and challenge is not None:
        envelope["confirmation"] = {**confirmation, "challenge": challenge["id"]}
        response = await post_raw(http, procedure, json.dumps(envelope).encode(), token=token, base=base)
    return response


def challenge_of(response: httpx.Response) -> dict[str, Any] | None:
    """The server-minted challenge of a CONFIRMATION_REQUIRED refusal, if it has one."""
    if response.status_code != 428:
        return None
    found = response.json().get("challenge")
    return dict(found) if isinstance(found, dict) else None


async def post_raw(
    http: httpx.AsyncClient,
    procedure: str,
    body: bytes,
    *,
    token: str | None = "tok-alice",
    content_type: str = "application/json",
    base: str = "",
) -> httpx.Response:
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return await http.post(call_url(base, procedure), content=body, headers=headers)


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The typed error of a refusal, checked against the error matrix."""
    body = response.json()
    assert body["ok"] is False, body
    error = body["error"]
    spec = ERROR_MATRIX[error["code"]]
    assert error["retry"] in spec.retry
    assert set(error.get("details", {})) <= set(spec.details), error
    assert isinstance(error["message"], str) and error["message"]
    return dict(error)
