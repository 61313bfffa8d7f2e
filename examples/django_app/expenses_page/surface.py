"""The expense tracker's page: the person's expenses as one component, whose agent may list,
add and delete them through the procedures the project's views declare (their reviewed
contracts come from contract.json: the page never imports the views)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentsurface import AgentComponent, ProcedureContract, ProcedureReference, observation

CONTRACT = Path(__file__).with_name("contract.json")
LIST, ADD, DELETE = "domain:expenses.list", "domain:expenses.add", "domain:expenses.delete"
API = "/api/agent"  # include(agent.urls) in the project's URLconf


class Expenses(AgentComponent, type="expenses.page", description="The signed-in person's expenses"):
    def __init__(self, procedures: dict[str, ProcedureContract]) -> None:
        self.procedures = procedures
        self.rows: list[dict[str, Any]] = []

    @observation("The expenses on screen, newest first (id, amount_cents, description, spent_on), as JSON")
    def shown(self) -> str:
        return json.dumps(self.rows)

    def agent_procedures(self) -> list[ProcedureReference]:
        return [self.procedures[name].reference() for name in (LIST, ADD, DELETE)]


def csrf_header(cookie: str) -> dict[str, str]:
    """Django's CSRF token from the page's cookies, as the header every call must carry."""
    pairs = (part.strip().partition("=") for part in cookie.split(";"))
    token = next((value for name, _, value in pairs if name == "csrftoken"), "")
    return {"X-CSRFToken": token}


async def main() -> None:  # pragma: no cover - runs in the page (e2e/test_django_example.py)
    import js

    from agentsurface import AgentSurfaceRegistry, Consumer
    from agentsurface.adapters.webmcp import WebMCPAdapter
    from agentsurface.bridge import BackendBridge
    from agentsurface.compiler.load import authority_from_contract, procedures_from_contract
    from agentsurface.page import ConfirmationDialog, SurfaceInspector, page_surface

    text = CONTRACT.read_text(encoding="utf-8")
    procedures = procedures_from_contract(text)
    bridge = BackendBridge(API, headers=lambda: csrf_header(str(js.document.cookie)))
    expenses = Expenses(procedures)
    await bridge.connect([Expenses.contract, *procedures.values()])  # the server serves these

    def render() -> None:
        total = sum(int(row["amount_cents"]) for row in expenses.rows)
        js.document.getElementById("total").textContent = f"{len(expenses.rows)} expenses, {total / 100:.2f} in all"
        items = js.document.getElementById("rows")
        items.replaceChildren()
        for row in expenses.rows:
            item = js.document.createElement("li")
            item.textContent = f"{row['spent_on']}  {row['description']}  {row['amount_cents'] / 100:.2f}"
            item.dataset.id = str(row["id"])
            items.append(item)

    async def refresh() -> None:
        listing = await bridge.call(LIST, {})
        expenses.rows = list(listing["expenses"]) if isinstance(listing, dict) else []
        render()

    async def execute(procedure_id: str, value: Any, context: Any) -> Any:
        output = await bridge(procedure_id, value, context)
        if procedure_id != LIST:
            await refresh()  # the server's answer is the truth
        return output

    registry = AgentSurfaceRegistry(authority=authority_from_contract(text), procedure_executor=execute)
    await refresh()
    adapter = WebMCPAdapter()
    await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))
    page_surface(registry).attach(expenses, js.document.getElementById("expenses"))
    ConfirmationDialog(registry)
    SurfaceInspector(registry, js.document.getElementById("inspector"), adapter=adapter)
