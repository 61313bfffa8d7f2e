# app.py: the page's script, run under Pyodide by agentsurface.js
import js
from expenses.surface import Book, ExpenseBook
from pyodide.http import pyfetch

from agentsurface import AgentSurfaceRegistry, Consumer
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.bridge import BackendBridge
from agentsurface.compiler.load import authority_from_bundle, procedures_from_bundle
from agentsurface.page import ConfirmationDialog, on_state_change, page_surface

book = Book()
procedures = procedures_from_bundle()  # the routes marked with @procedure, as reviewed
bridge = BackendBridge("/api/agent")  # same origin: the person's session cookie goes along
authority = await bridge.authority(authority_from_bundle())  # the reviewed contract, as served


async def refresh() -> None:  # the person's own view, read from the app's own route
    response = await pyfetch("/expenses")
    book.items = (await response.json()) if response.ok else []


async def execute(procedure_id, value, context):  # the agent's calls, then the view refreshed
    try:
        return await bridge(procedure_id, value, context)
    finally:
        await refresh()


registry = AgentSurfaceRegistry(authority=authority, procedure_executor=execute)
dialog = ConfirmationDialog(registry)
adapter = WebMCPAdapter(confirm=dialog.confirm)
await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))
page_surface(registry).attach(ExpenseBook(book, procedures), js.document.getElementById("book"))


def render() -> None:
    rows = [f"#{e['id']} {e['amount']:.2f} € {e['note']}" for e in book.items]
    js.document.getElementById("expenses").textContent = "\n".join(rows) or "No expenses yet."


on_state_change(render)
await refresh()
