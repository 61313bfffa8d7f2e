"""The WebMCP agent client's fixture page (runs in the page under Pyodide, loaded by
web/agentsurface.js): a small notes app exposed with ``WebMCPAdapter()``.

- ``notes.list``: observation ``notes``; ``add`` (a pydantic model: an empty text is invalid);
  ``clear`` with ``confirmation="required"``; ``wait`` sleeps, for timeouts and cancellation.
- ``notes.archive``: a second component the page's own button ``#toggle-archive`` mounts and
  unmounts (its tools come and go).

The confirmation dialog counts a decision only from a trusted click, keeps its buttons disabled
for a moment whenever it shows a request (as the drop-in dialog does), and uses the drop-in
dialog's element ids, so the agent client's default selectors find it. ``window.notesPage.state()``
lets the test check what the page did; the agent side of every test is the browser's own client.
"""

import asyncio
import json

import js
from pydantic import BaseModel, Field
from pyodide.ffi import create_proxy, to_js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    PendingConfirmation,
    action,
    compile_manifest,
    observation,
)
from agentsurface.adapters.webmcp import WebMCPAdapter

INPUT_PROTECTION_MS = 300


class Note(BaseModel):
    text: str = Field(min_length=1, max_length=80)


class Pause(BaseModel):
    ms: int = Field(ge=0, le=60_000)


class NotesState:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.archived: list[str] = ["old note"]
        self.cleared = 0
        self.untrusted = 0


class Notes(AgentComponent, type="notes.list", description="The notes on the page."):
    def __init__(self, state: NotesState) -> None:
        self.state = state

    @observation("The notes, oldest first.")
    def notes(self) -> list[str]:
        return list(self.state.notes)

    @action("Add a note.")
    def add(self, note: Note) -> int:
        self.state.notes.append(note.text)
        render()
        return len(self.state.notes)

    @action("Remove every note.", confirmation="required")
    def clear(self) -> int:
        removed = len(self.state.notes)
        self.state.notes.clear()
        self.state.cleared += 1
        render()
        return removed

    @action("Wait, doing nothing, for a while.")
    async def wait(self, pause: Pause) -> int:
        await asyncio.sleep(pause.ms / 1000)
        return pause.ms


class Archive(AgentComponent, type="notes.archive", description="The archive, while it is open."):
    def __init__(self, state: NotesState) -> None:
        self.state = state

    @observation("The archived notes.")
    def archived(self) -> list[str]:
        return list(self.state.archived)


state = NotesState()
registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Notes, Archive])))
registry.register(Notes(state))
archive_handle = None

# --------------------------------------------------------------------------- the page's DOM

document = js.document
proxies = []  # the page's own listeners, alive for the page's lifetime


def element(tag: str, parent: object, text: str = "", **attrs: str) -> object:
    node = document.createElement(tag)
    for key, value in attrs.items():
        node.setAttribute(key.replace("_", "-"), value)
    node.textContent = text
    parent.appendChild(node)
    return node


def on(node: object, event: str, handler: object) -> None:
    proxy = create_proxy(handler)
    proxies.append(proxy)
    node.addEventListener(event, proxy)


notes_view = element("ul", document.body, id="notes")
toggle = element("button", document.body, "Open the archive", id="toggle-archive", type="button")

backdrop = element("div", document.body, id="agentsurface-confirm")
dialog = element(
    "div", backdrop, id="agentsurface-confirm-dialog", role="dialog", aria_labelledby="confirm-title"
)
title = element("h2", dialog, "The agent asks", id="confirm-title")
summary = element("p", dialog, id="confirm-summary")
deny_button = element("button", dialog, "Deny", id="agentsurface-confirm-deny", type="button")
approve_button = element("button", dialog, "Approve", id="agentsurface-confirm-approve", type="button")


def render() -> None:
    items = [document.createElement("li") for _ in state.notes]
    for item, text in zip(items, state.notes, strict=True):
        item.textContent = text
    notes_view.replaceChildren(*items)
    toggle.textContent = "Close the archive" if archive_handle is not None else "Open the archive"


def toggle_archive(_event: object) -> None:
    global archive_handle
    if archive_handle is None:
        archive_handle = registry.register(Archive(state))
    else:
        archive_handle.close()
        archive_handle = None
    render()


on(toggle, "click", toggle_archive)

# --------------------------------------------------------------------------- the dialog

shown: list[PendingConfirmation] = []


def unlock() -> None:
    deny_button.disabled = approve_button.disabled = False


unlock_proxy = create_proxy(unlock)
proxies.append(unlock_proxy)


def show(pending: list[PendingConfirmation]) -> None:
    first = pending[:1]
    if first and (not shown or shown[0].confirmation_id != first[0].confirmation_id):
        summary.textContent = f"{first[0].summary} ({first[0].capability_id})"
        deny_button.disabled = approve_button.disabled = True  # input protection
        js.setTimeout(unlock_proxy, INPUT_PROTECTION_MS)
    shown[:] = first
    backdrop.hidden = not first


def decide(approved: bool):
    def handler(event: object) -> None:
        if not event.isTrusted:  # a script clicking the button is not the person
            state.untrusted += 1
            return
        if shown:
            registry.confirmations.resolve(shown[0].confirmation_id, approved=approved)

    return handler


on(approve_button, "click", decide(True))
on(deny_button, "click", decide(False))
registry.confirmations.subscribe(show)
show([])
render()

# --------------------------------------------------------------------------- the adapter

adapter = WebMCPAdapter()
await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))  # noqa: F704


def snapshot_state() -> str:
    return json.dumps(
        {
            "shape": adapter.shape,
            "notes": state.notes,
            "cleared": state.cleared,
            "untrusted": state.untrusted,
            "archiveOpen": archive_handle is not None,
            "pending": [p.to_json() for p in registry.confirmations.pending()],
            "diagnostics": adapter.diagnostics,
        }
    )


page_api = to_js({}, dict_converter=js.Object.fromEntries)
state_proxy = create_proxy(snapshot_state)
proxies.append(state_proxy)
page_api.state = state_proxy
js.window.notesPage = page_api
