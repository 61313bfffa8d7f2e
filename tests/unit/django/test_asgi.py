"""The same calls through the project's ASGI application (what uvicorn serves), in process:
Django's ASGI handler and its middleware, the agent endpoint as an async view, the caller and
CSRF check in Django's sync thread, the view in the pipeline's worker thread."""

from __future__ import annotations

import json

import httpx
from django.core.asgi import get_asgi_application
from expenses.models import Expense

from tests._shared.django.support import LUNCH_INPUT, new_id, sign_in


async def test_a_call_through_the_asgi_application_runs_the_view_as_the_person() -> None:
    from asgiref.sync import sync_to_async

    ann = await sync_to_async(sign_in)("ann")
    cookies = {"sessionid": ann.client.cookies["sessionid"].value, "csrftoken": ann.token}
    transport = httpx.ASGITransport(app=get_asgi_application())
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", cookies=cookies) as http:
        envelope = {"invocationId": new_id(), "input": LUNCH_INPUT}
        response = await http.post(
            "/api/agent/procedures/expenses.add", content=json.dumps(envelope),
            headers={"Content-Type": "application/json", "X-CSRFToken": ann.token},
        )
        assert response.status_code == 200, response.text
        assert response.json()["output"]["description"] == "lunch"
        refused = await http.post(
            "/api/agent/procedures/expenses.add", content=json.dumps({**envelope, "invocationId": new_id()}),
            headers={"Content-Type": "application/json"},
        )
        assert refused.status_code == 401 and refused.json()["error"]["details"]["reason"] == "csrf"
        manifest = await http.get("/api/agent/.well-known/agentsurface/procedures")
        assert sorted(manifest.json()["procedures"]) == [
            "domain:expenses.add", "domain:expenses.delete", "domain:expenses.list",
        ]
    owned = await sync_to_async(lambda: list(Expense.objects.filter(owner=ann.user).values_list("description", flat=True)))()
    assert owned == ["lunch"]
