"""Per-call cost of a procedure served from a Django view (a script, not a test).

    .venv/bin/python benchmarks/bench_django.py [--calls 300]

One operation, "record an expense", two ways, sequentially, in this process (httpx over each
ASGI application, no sockets), each with a fresh SQLite store in a temporary folder:

- django: the example project's ``expenses.add`` view (examples/django_app) served by
  ``AgentViews`` in the project's ASGI application: Django's middleware (session, CSRF,
  authentication), the CSRF check, ``request.user`` as the caller, then the view itself (the ORM)
  on a request made from the person's, with its record in the same transaction
  (``DjangoInvocationStore``);
- direct: the same view called as the app's own page calls it (``POST /expenses/add/``, the
  plain JSON body): what Django itself costs, without the procedure pipeline;
- plain: a ``ProcedureServer`` serving the same contract with an implementation that inserts
  the row through the store's own connection, the caller from a bearer token.

Printed: p50 and p95 latency per call in ms for each, and the ratios of the p50s (measured in
one run; figures, never pass/fail).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "django_app"
EXPENSE = {"amount_cents": 1250, "description": "lunch", "spent_on": "2026-11-03"}


def setup_django(folder: Path) -> tuple[Any, dict[str, str], str]:
    """The example project on a fresh database: its ASGI app, a signed-in person's cookies and
    CSRF token."""
    sys.path.insert(0, str(EXAMPLE))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="expenses_site.settings",
        EXPENSES_DB=str(folder / "db.sqlite3"),
    )
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.asgi import get_asgi_application
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    client = Client()
    client.force_login(User.objects.create_user("ann"))
    client.get("/")
    token = client.cookies["csrftoken"].value
    cookies = {"sessionid": client.cookies["sessionid"].value, "csrftoken": token}
    return get_asgi_application(), cookies, token


def plain_server(folder: Path) -> Any:
    from expenses.agent import Expense, NewExpense

    from agentsurface import ProcedureContract
    from agentsurface.server import Caller, ProcedureCall, ProcedureServer, open_store, serve

    contract = ProcedureContract(
        id="domain:expenses.add", effect="server-mutation", description="Record an expense",
        input=NewExpense, output=Expense,
    )

    def setup(db: Any) -> None:
        db.execute(
            "CREATE TABLE IF NOT EXISTS expenses (id INTEGER PRIMARY KEY, owner TEXT, amount_cents INTEGER,"
            " description TEXT, spent_on TEXT)"
        )

    def add(call: ProcedureCall, value: Any) -> dict[str, Any]:
        cur = call.db.execute(
            "INSERT INTO expenses (owner, amount_cents, description, spent_on) VALUES (?, ?, ?, ?)",
            (call.caller.id, value.amount_cents, value.description, value.spent_on),
        )
        return {"id": cur.lastrowid, **value.model_dump()}

    def authenticate(request: Any) -> Caller | None:
        return Caller("ann") if request.headers.get("authorization") == "Bearer ann" else None

    store = open_store("sqlite:///" + str(folder / "plain.sqlite3"), setup=setup)
    return ProcedureServer([serve(contract, add)], authenticate=authenticate, store=store)


async def measure(
    app: Any, path: str, headers: dict[str, str], cookies: dict[str, str], calls: int, envelope: bool = True
) -> list[float]:
    transport = httpx.ASGITransport(app=app)
    timings: list[float] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", cookies=cookies) as http:
        for i in range(calls + 20):
            body = json.dumps({"invocationId": f"inv-{i}", "input": EXPENSE} if envelope else EXPENSE)
            start = time.perf_counter()
            response = await http.post(path, content=body, headers={"Content-Type": "application/json", **headers})
            elapsed = time.perf_counter() - start
            if response.status_code not in (200, 201):
                raise SystemExit(f"{path}: HTTP {response.status_code} {response.text[:200]}")
            if i >= 20:  # warm-up calls are not counted
                timings.append(elapsed * 1000)
    return timings


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-django-") as tmp:
        folder = Path(tmp)
        app, cookies, token = setup_django(folder)
        django_ms = asyncio.run(
            measure(app, "/api/agent/procedures/expenses.add", {"X-CSRFToken": token}, cookies, args.calls)
        )
        direct_ms = asyncio.run(
            measure(app, "/expenses/add/", {"X-CSRFToken": token}, cookies, args.calls, envelope=False)
        )
        plain_ms = asyncio.run(
            measure(plain_server(folder), "/procedures/expenses.add", {"Authorization": "Bearer ann"}, {}, args.calls)
        )
    rows = (("procedure (django)", django_ms), ("view called directly", direct_ms), ("plain server", plain_ms))
    for name, values in rows:
        print(f"{name:>20}: p50 {statistics.median(values):6.2f} ms   p95 {percentile(values, 0.95):6.2f} ms   ({len(values)} calls)")
    p50 = {name: statistics.median(values) for name, values in rows}
    print(f"ratio of p50s, procedure / direct view: {p50['procedure (django)'] / p50['view called directly']:.2f}")
    print(f"ratio of p50s, procedure / plain server: {p50['procedure (django)'] / p50['plain server']:.2f}")


if __name__ == "__main__":
    main()
