"""The WebMCP adapter's e2e page: runs in the page under Pyodide (loaded by web/agentsurface.js).

A small drawing board declared with agentsurface, exposed through ``WebMCPAdapter()`` to
whatever WebMCP the browser has (Chromium's ``document.modelContext``, the polyfill's
``navigator.modelContext``, or nothing):

- ``board.canvas``: observation ``strokes``; plain action ``draw`` (a pydantic model with a nested
  model, so its JSON Schema has ``$defs``); ``eraseAll`` with ``confirmation="required"``;
  ``undo``, available only while the page says so; procedure references ``domain:board.export``
  (server-query) and ``domain:board.archive`` (destructive), run by an executor in this page.
- ``board.palette``: a second component the test mounts and unmounts.

The host confirmation dialog lists ``registry.confirmations`` and counts an approval only from a
trusted click (``event.isTrusted``). The ``confirm`` hook (used where the browser's client offers
``requestUserInteraction``) opens a second, in-call prompt with the same rule.

``window.adapterPage`` holds the hooks the TEST uses to act as the app and the user (mount,
unmount, setAvailable, stop, churn, liveProxies, state). The agent side of every test is the
browser's own client, never this code.
"""

import asyncio
import json
from typing import Literal

import js
from pydantic import BaseModel, Field
from pyodide.ffi import create_proxy, to_js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    PendingConfirmation,
    ProcedureContract,
    action,
    compile_manifest,
    observation,
)
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.browser import live_proxy_count

# --------------------------------------------------------------------------- the surface


class Point(BaseModel):
    x: int = Field(ge=0, le=1000)
    y: int = Field(ge=0, le=1000)


class Stroke(BaseModel):
    label: str = Field(min_length=1, max_length=40)
    points: list[Point] = Field(min_length=1, max_length=20)


class ExportRequest(BaseModel):
    format: Literal["svg", "png"] = "svg"


class ArchiveRequest(BaseModel):
    reason: str = Field(min_length=1, max_length=200)


EXPORT = ProcedureContract(
    id="domain:board.export",
    description="Export the board as an image on the server (nothing changes).",
    effect="server-query",
    input=ExportRequest,
)
ARCHIVE = ProcedureContract(
    id="domain:board.archive",
    description="Archive the board on the server; it can no longer be edited.",
    effect="destructive",
    input=ArchiveRequest,
)


class BoardState:
    def __init__(self) -> None:
        self.strokes: list[Stroke] = []
        self.undo_enabled = True
        self.color = "black"
        self.calls: dict[str, int] = {}
        self.server: list[list[object]] = []

    def count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1


class Board(AgentComponent, type="board.canvas", description="The drawing board."):
    def __init__(self, state: BoardState) -> None:
        self.state = state

    @observation("The strokes on the board, oldest first.")
    def strokes(self) -> list[Stroke]:
        self.state.count("strokes")
        return list(self.state.strokes)

    @action("Draw one stroke: a label and its points.")
    def draw(self, stroke: Stroke) -> int:
        self.state.count("draw")
        self.state.strokes.append(stroke)
        render()
        return len(self.state.strokes)

    @action("Erase every stroke on the board.", confirmation="required")
    def erase_all(self) -> int:
        self.state.count("eraseAll")
        erased = len(self.state.strokes)
        self.state.strokes.clear()
        render()
        return erased

    @action("Undo the last stroke.")
    def undo(self) -> int:
        self.state.count("undo")
        if self.state.strokes:
            self.state.strokes.pop()
        render()
        return len(self.state.strokes)

    @undo.when
    def can_undo(self) -> bool:
        return self.state.undo_enabled

    def agent_procedures(self) -> list:
        return [EXPORT.reference(), ARCHIVE.reference()]


class Palette(AgentComponent, type="board.palette", description="The pen palette."):
    def __init__(self, state: BoardState) -> None:
        self.state = state

    @observation("The pen colors on offer.")
    def colors(self) -> list[str]:
        return ["black", "red", "blue"]

    @action("Pick the pen color.")
    def pick(self, color: Literal["black", "red", "blue"]) -> str:
        self.state.count("pick")
        self.state.color = color
        return color


async def run_procedure(procedure_id: str, value: object, ctx: object) -> object:
    """The page's executor for domain procedures (a real app would call its server here)."""
    await asyncio.sleep(0)
    state.server.append([procedure_id, value])
    if procedure_id == EXPORT.id:
        assert isinstance(value, dict)
        return {"format": value["format"], "strokes": len(state.strokes)}
    return {"archived": True}


state = BoardState()
authority = CapabilityAuthority.from_manifest(compile_manifest([Board, Palette, EXPORT, ARCHIVE]))
registry = AgentSurfaceRegistry(authority=authority, procedure_executor=run_procedure)
registry.register(Board(state))
palette_handle = None

# --------------------------------------------------------------------------- the page's DOM

document = js.document
proxies = []  # the page's own listeners, alive for the page's lifetime


def element(tag: str, parent: object, **attrs: str) -> object:
    node = document.createElement(tag)
    for key, value in attrs.items():
        node.setAttribute(key.replace("_", "-"), value)
    parent.appendChild(node)
    return node


def on(node: object, event: str, handler: object) -> None:
    proxy = create_proxy(handler)
    proxies.append(proxy)
    node.addEventListener(event, proxy)


board_view = element("section", document.body, id="board")
strokes_view = element("p", board_view, id="strokes")
palette_view = element("p", board_view, id="palette")

dialog = element("div", document.body, id="confirm-dialog", role="dialog", aria_label="Confirm")
dialog_summary = element("p", dialog, id="confirm-summary")
approve_button = element("button", dialog, id="confirm-approve", type="button")
approve_button.textContent = "Approve"
deny_button = element("button", dialog, id="confirm-deny", type="button")
deny_button.textContent = "Deny"

prompt = element("div", document.body, id="interaction-dialog", role="dialog", aria_label="Agent asks")
prompt_summary = element("p", prompt, id="interaction-summary")
prompt_approve = element("button", prompt, id="interaction-approve", type="button")
prompt_approve.textContent = "Allow"
prompt_deny = element("button", prompt, id="interaction-deny", type="button")
prompt_deny.textContent = "Refuse"

counters = {"approvals": 0, "denials": 0, "untrusted": 0, "hookPrompts": 0, "hookAnswers": 0, "hookClosed": 0}
hook_clients: list[list[str]] = []  # the own keys of each client the confirm hook received
hook_waiting: list[asyncio.Future] = []


def render() -> None:
    strokes_view.textContent = f"{len(state.strokes)} stroke(s)"
    palette_view.textContent = "palette mounted" if palette_handle is not None else "no palette"


# --------------------------------------------------------------------------- host confirmation UI

shown: list[PendingConfirmation] = []


def show_pending(pending: list[PendingConfirmation]) -> None:
    shown[:] = pending[:1]
    if shown:
        dialog.dataset.confirmationId = shown[0].confirmation_id
        dialog_summary.textContent = f"{shown[0].summary} ({shown[0].capability_id})"
        dialog.hidden = False
    else:
        dialog.removeAttribute("data-confirmation-id")
        dialog.hidden = True


def decide(approved: bool):
    def handler(event: object) -> None:
        if not event.isTrusted:  # a script clicking the button is not the user
            counters["untrusted"] += 1
            return
        if shown and registry.confirmations.resolve(shown[0].confirmation_id, approved=approved):
            counters["approvals" if approved else "denials"] += 1

    return handler


on(approve_button, "click", decide(True))
on(deny_button, "click", decide(False))
registry.confirmations.subscribe(show_pending)
show_pending([])

# --------------------------------------------------------------------------- the confirm hook


async def confirm(pending: PendingConfirmation, client: object) -> bool:
    """Runs inside the client's requestUserInteraction (WebMCP shape A only). It does not watch
    the registry: if the confirmation is settled elsewhere, the adapter cancels it."""
    counters["hookPrompts"] += 1
    hook_clients.append(list(js.Object.keys(client)))
    future = asyncio.get_running_loop().create_future()
    hook_waiting.append(future)
    prompt_summary.textContent = f"The agent asks: {pending.summary}"
    prompt.hidden = False
    try:
        answer = await future
    finally:
        hook_waiting.remove(future)
        prompt.hidden = True
        counters["hookClosed"] += 1
    counters["hookAnswers"] += 1
    return answer


def prompt_answer(approved: bool):
    def handler(event: object) -> None:
        if not event.isTrusted:
            counters["untrusted"] += 1
            return
        if hook_waiting and not hook_waiting[-1].done():
            hook_waiting[-1].set_result(approved)

    return handler


on(prompt_approve, "click", prompt_answer(True))
on(prompt_deny, "click", prompt_answer(False))
prompt.hidden = True

# --------------------------------------------------------------------------- the adapter

adapter = WebMCPAdapter(confirm=confirm)
await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))  # noqa: F704
render()

# --------------------------------------------------------------------------- hooks for the test


def mount() -> None:
    global palette_handle
    if palette_handle is None:
        palette_handle = registry.register(Palette(state))
    render()


def unmount() -> None:
    global palette_handle
    if palette_handle is not None:
        palette_handle.close()
        palette_handle = None
    render()


def set_available(flag: bool) -> None:
    state.undo_enabled = bool(flag)
    registry.sync_availability()  # the host publishes the flip, as a UI framework would


async def stop() -> str:
    await adapter.aclose()
    return snapshot_state()


async def churn(cycles: int) -> str:
    """Mount and unmount the palette ``cycles`` times, letting the browser see each change."""
    before = live_proxy_count()
    peak = before
    for _ in range(int(cycles)):
        mount()
        await adapter.settled()
        peak = max(peak, live_proxy_count())
        unmount()
        await adapter.settled()
    return json.dumps({"before": before, "peak": peak, "after": live_proxy_count()})


def snapshot_state() -> str:
    return json.dumps(
        {
            "shape": adapter.shape,
            "tools": adapter.tool_names,
            "wireNames": adapter.wire_name_map(),
            "liveProxies": live_proxy_count(),
            "strokes": [s.model_dump() for s in state.strokes],
            "undoEnabled": state.undo_enabled,
            "color": state.color,
            "calls": state.calls,
            "server": state.server,
            "counters": counters,
            "hookClients": hook_clients,
            "pending": [p.to_json() for p in registry.confirmations.pending()],
            "diagnostics": adapter.diagnostics,
        }
    )


hooks = {
    "mount": mount,
    "unmount": unmount,
    "setAvailable": set_available,
    "stop": stop,
    "churn": churn,
    "liveProxies": live_proxy_count,
    "state": snapshot_state,
}
page_api = to_js({"shape": adapter.shape}, dict_converter=js.Object.fromEntries)
for name, fn in hooks.items():
    proxy = create_proxy(fn)
    proxies.append(proxy)
    setattr(page_api, name, proxy)
js.window.adapterPage = page_api
