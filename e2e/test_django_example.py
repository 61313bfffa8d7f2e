"""The Django example project (examples/django_app) end to end in Chromium 156.

The project runs under uvicorn (its ASGI application) on a fresh database; the person signs in
through Django's own login form, the page boots the library under Pyodide and offers the views'
procedures to the browser's own agent client (WebMCP, shape B). The agent adds an expense; its
delete is denied in the page's dialog (no request reaches the view) and then approved with a
real click: the page's bridge asks the server for the challenge of that very call and sends it
with the approval and the session's CSRF token; the view deletes the row, once.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentsurface.testing import WebMCPAgent

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "django_app"
PASSWORD = "correct horse battery"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def expenses_site(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The example project under uvicorn, its runtime the repository's web/ (built), one user."""
    folder = tmp_path_factory.mktemp("expenses")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "EXPENSES_", "PYTHONPATH"))}
    env.update(
        EXPENSES_DB=str(folder / "db.sqlite3"),
        EXPENSES_AGENT_RUNTIME=str(ROOT / "web"),
    )
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v", "0"], cwd=EXAMPLE, env=env, check=True, timeout=120)
    create = f"from django.contrib.auth.models import User; User.objects.create_user('ann', password={PASSWORD!r})"
    subprocess.run([*manage, "shell", "-c", create], cwd=EXAMPLE, env=env, check=True, timeout=120)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "expenses_site.asgi:application", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        cwd=EXAMPLE, env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/accounts/login/", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        yield url, folder
    finally:
        server.terminate()
        server.wait(timeout=10)


def expenses(folder: Path) -> list[str]:
    with sqlite3.connect(folder / "db.sqlite3") as db:
        return [str(row[0]) for row in db.execute("SELECT description FROM expenses_expense ORDER BY id")]


def signed_in(open_page: Callable[..., Any], url: str) -> Any:
    """Ann signs in with Django's own form and lands on the page, booted."""
    run = open_page("/accounts/login/?next=/", variant="webmcp", base=url)
    run.page.fill("input[name=username]", "ann")
    run.page.fill("input[name=password]", PASSWORD)
    run.page.click("button[type=submit]")
    run.page.wait_for_url(url + "/")
    run.wait_ready()
    return run


def tool_named(agent: WebMCPAgent, procedure: str) -> str:
    """The wire name the page gave the procedure (``domain:expenses.delete``)."""
    tail = procedure.split(":", 1)[1].split(".")[-1]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [name for name in agent.tool_names() if name.startswith("domain") and name.endswith(tail)]
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"no tool for {procedure}: {agent.tool_names()}")


def test_the_agent_adds_then_a_delete_is_denied_then_approved(
    open_page: Callable[..., Any], expenses_site: tuple[str, Path]
) -> None:
    url, folder = expenses_site
    run = signed_in(open_page, url)
    calls: list[tuple[str, int, str | None]] = []

    def on_response(response: Any) -> None:
        if "/api/agent/" in response.url and response.request.method == "POST":
            path = response.url.split("/api/agent/", 1)[1]
            calls.append((path, response.status, response.request.headers.get("x-csrftoken")))

    run.page.on("response", on_response)
    agent = WebMCPAgent(run.page)
    add, delete = tool_named(agent, "domain:expenses.add"), tool_named(agent, "domain:expenses.delete")
    assert agent.tool(delete).annotations.get("consequentialHint") is True

    added = agent.call(add, {"amount_cents": 1250, "description": "lunch", "spent_on": "2026-11-03"}).expect_ok()
    assert added["description"] == "lunch" and expenses(folder) == ["lunch"]
    run.page.wait_for_function("() => document.querySelectorAll('#rows li').length === 1")

    denied = agent.start(delete, {"expense_id": added["id"]})
    dialog = agent.wait_for_dialog()  # the view's docstring and exactly this input
    assert "Delete one of the signed-in user's expenses." in dialog and '"expense_id": ' + str(added["id"]) in dialog
    agent.deny()
    refusal = denied.result().expect_error("CONFIRMATION_INVALID")
    assert refusal.details["reason"] == "denied"
    assert expenses(folder) == ["lunch"]
    assert not [c for c in calls if "expenses.delete" in c[0]]  # nothing reached the server

    approved = agent.start(delete, {"expense_id": added["id"]})
    agent.approve()  # the person's trusted click
    assert approved.result().expect_ok() == {"deleted": added["id"]}
    assert expenses(folder) == []
    run.page.wait_for_function("() => document.querySelectorAll('#rows li').length === 0")
    deletes = [c for c in calls if "expenses.delete" in c[0]]
    token = run.context.cookies(url)
    csrf = next(c["value"] for c in token if c["name"] == "csrftoken")
    assert [(path, status) for path, status, _ in deletes] == [
        ("challenges/expenses.delete", 200),
        ("procedures/expenses.delete", 200),
    ]
    assert {sent for _, _, sent in calls} == {csrf}  # every call carried the session's CSRF token
