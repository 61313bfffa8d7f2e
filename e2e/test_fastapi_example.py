"""examples/fastapi_app end to end: the FastAPI app served by uvicorn as its README says (the
page `agentsurface bundle` wrote, on the app's own origin), the person signed in with the app's
own session cookie, and Chromium's WebMCP client as the agent.

The agent lists and adds through the app's routes (marked as procedures); a delete needs the
person's approval: approved in the page's dialog with a real click, the server's challenge is
answered and the expense goes; denied, nothing changes and the agent is told so. The unmarked
route (delete all) is never offered. Each change the agent makes shows on the page.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentsurface.testing import WebMCPAgent
from relay_process import free_port

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "fastapi_app"
AGENTSURFACE = str(Path(sys.executable).with_name("agentsurface"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page and its runtime, as `agentsurface bundle` writes them for the app."""
    out = tmp_path_factory.mktemp("fastapi-site") / "site"
    result = subprocess.run(
        [AGENTSURFACE, "bundle", "--out", str(out)], cwd=EXAMPLE, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture
def app_url(site: Path, tmp_path: Path) -> Iterator[str]:
    """``uvicorn --factory expenses.main:create_app``, on a fresh database of its own."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)},
        "EXPENSES_DB": str(tmp_path / "expenses.sqlite3"),
        "EXPENSES_AGENT_STORE": f"sqlite:///{tmp_path}/agent.sqlite3",
        "EXPENSES_SITE": str(site),
    }
    log = (tmp_path / "uvicorn.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "expenses.main:create_app", "--port", str(port)],
        cwd=EXAMPLE, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail("uvicorn did not start: " + (tmp_path / "uvicorn.log").read_text())
            time.sleep(0.1)
    # localhost, not 127.0.0.1: the session cookie and the page share one origin.
    yield f"http://localhost:{port}"
    process.terminate()
    process.wait(timeout=10)
    log.close()
    logged = (tmp_path / "uvicorn.log").read_text()
    assert "Traceback" not in logged, logged


def open_signed_in(open_page: Any, url: str, user: str, password: str) -> tuple[Any, WebMCPAgent]:
    def sign_in(run: Any) -> None:  # the app's own login route sets its session cookie
        answer = run.context.request.post(url + "/login", data={"username": user, "password": password})
        assert answer.ok, answer.text()

    run = open_page("/index.html", variant="webmcp", base=url, before_goto=sign_in)
    agent = WebMCPAgent(run.page)
    agent.wait_for_tool("domain_expenses__add")
    return run, agent


def shown(run: Any) -> str:
    return str(run.page.locator("#expenses").inner_text())


def test_the_agent_adds_and_the_persons_approval_decides_each_delete(open_page: Any, app_url: str) -> None:
    run, agent = open_signed_in(open_page, app_url, "alice", "wonderland")
    names = set(agent.tool_names())
    assert {"domain_expenses__add", "domain_expenses__list"} <= names
    assert not any("all" in name for name in names)  # the unmarked route is never offered

    for amount, note in ((12.5, "lunch"), (3, "tea")):
        added = agent.call("domain_expenses__add", {"amount": amount, "note": note}).expect_ok()
        assert added["note"] == note
    run.page.wait_for_function("() => document.getElementById('expenses').textContent.includes('tea')")
    agent.wait_for_tool("domain_expenses__delete")  # offered once there is something to delete

    refused = agent.call("domain_expenses__add", {"amount": -1}).expect_error("INVALID_INPUT")
    assert refused.details["issues"][0]["path"] == "/amount"

    denied = agent.start("domain_expenses__delete", {"expense_id": 1})
    agent.deny()  # the person's click
    error = denied.result().expect_error("CONFIRMATION_INVALID")
    assert error.details == {"reason": "denied"}
    assert [e["id"] for e in agent.call("domain_expenses__list", {}).expect_ok()] == [1, 2]

    approved = agent.start("domain_expenses__delete", {"expense_id": 1})
    agent.approve()  # the person's click
    assert approved.result().expect_ok() == {"deleted": 1}
    assert [e["id"] for e in agent.call("domain_expenses__list", {}).expect_ok()] == [2]
    run.page.wait_for_function("() => !document.getElementById('expenses').textContent.includes('lunch')")
    assert "tea" in shown(run)
    assert run.console_errors == []


@pytest.mark.allow_page_errors(r"status of 403")  # the browser logs the server's refusal of bob's call
def test_bob_cannot_delete_even_when_he_approves(open_page: Any, app_url: str) -> None:
    run, agent = open_signed_in(open_page, app_url, "bob", "builder")
    agent.call("domain_expenses__add", {"amount": 1, "note": "bob's"}).expect_ok()
    agent.wait_for_tool("domain_expenses__delete")
    pending = agent.start("domain_expenses__delete", {"expense_id": 1})
    agent.approve()
    assert pending.result().expect_error().code == "NOT_AUTHORIZED"
    assert "bob's" in agent.call("domain_expenses__list", {}).expect_ok()[0]["note"]
    assert "bob's" in shown(run)


@pytest.mark.allow_page_errors(r"status of 401")  # the page's first read, before anyone signed in
def test_a_person_signs_in_with_the_pages_form(open_page: Any, app_url: str) -> None:
    run = open_page("/index.html", variant="webmcp", base=app_url)
    run.page.wait_for_function("() => document.getElementById('expenses').textContent !== 'loading…'")
    run.page.fill("input[name=username]", "alice")
    run.page.fill("input[name=password]", "wrong")
    run.page.click("button[type=submit]")
    run.page.wait_for_function("() => document.getElementById('login-error').textContent !== ''")
    run.page.fill("input[name=password]", "wonderland")
    run.page.click("button[type=submit]")  # reloads, signed in
    agent = WebMCPAgent(run.page)
    agent.wait_for_tool("domain_expenses__add")
    agent.call("domain_expenses__add", {"amount": 2, "note": "coffee"}).expect_ok()
    run.page.wait_for_function("() => document.getElementById('expenses').textContent.includes('coffee')")
