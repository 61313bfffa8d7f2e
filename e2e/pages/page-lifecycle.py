"""The page API's e2e fixture (loaded by web/agentsurface.js under Pyodide).

A drawing board whose ``undo`` is available only while there are strokes; the page's own
buttons change the strokes through a ``State`` and never call ``sync_availability()``. Palettes
are attached to elements the TEST adds to and removes from the document: their tools come and
go with the elements. The inspector renders into ``#inspector``.

``window.pageLifecycle`` holds the hooks the test uses to act as the app (prepare a palette
element, churn, live proxy count). The agent side is the browser's own client.
"""

import asyncio
import json
from typing import Literal

import js
from pyodide.ffi import create_proxy, to_js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    action,
    compile_manifest,
    observation,
)
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.browser import live_proxy_count
from agentsurface.page import State, SurfaceInspector, page_surface


class BoardState(State):
    def __init__(self) -> None:
        self.strokes: list[str] = []


class Board(AgentComponent, type="board.canvas", description="A drawing board"):
    def __init__(self, state: BoardState) -> None:
        self.state = state

    @observation("The strokes drawn so far")
    def strokes(self) -> list[str]:
        return list(self.state.strokes)

    @action("Undo the last stroke", unavailable_reason="nothing to undo")
    def undo(self) -> int:
        self.state.strokes = self.state.strokes[:-1]
        return len(self.state.strokes)

    @undo.when
    def can_undo(self) -> bool:
        return bool(self.state.strokes)


class Palette(AgentComponent, type="board.palette", description="A colour palette"):
    def __init__(self) -> None:
        self.color = "black"

    @observation("The colours on offer")
    def colors(self) -> list[str]:
        return ["black", "red", "blue"]

    @action("Pick a colour")
    def pick(self, color: Literal["black", "red", "blue"]) -> str:
        self.color = color
        return color


state = BoardState()
registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Board, Palette])))
surface = page_surface(registry)
adapter = WebMCPAdapter()
await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))  # noqa: F704
surface.attach(Board(state), js.document.getElementById("board"))
inspector = SurfaceInspector(registry, js.document.getElementById("inspector"), adapter=adapter)

proxies = []


def on_click(handler):
    proxy = create_proxy(lambda event: handler())
    proxies.append(proxy)
    return proxy


# The app's own buttons: they change state and nothing else.
js.document.getElementById("add-stroke").addEventListener(
    "click", on_click(lambda: setattr(state, "strokes", [*state.strokes, f"s{len(state.strokes)}"]))
)
js.document.getElementById("clear").addEventListener("click", on_click(lambda: setattr(state, "strokes", [])))


def prepare(instance: str) -> object:
    """A palette element, attached but not yet in the document (the test inserts it)."""
    element = js.document.createElement("div")
    element.className = "palette"
    element.setAttribute("data-agent-instance", instance)
    surface.attach(Palette(), element)
    return element


async def churn(cycles: int) -> str:
    """Insert and remove a palette element ``cycles`` times, waiting for the browser each time."""
    holder = js.document.getElementById("palettes")
    await adapter.settled()
    before = live_proxy_count()
    peak = 0
    for index in range(cycles):
        element = js.document.createElement("div")
        element.setAttribute("data-agent-instance", f"c{index % 3}")
        holder.appendChild(element)
        surface.attach(Palette(), element)
        await adapter.settled()
        peak = max(peak, len(adapter.tool_names))
        element.remove()
        await asyncio.sleep(0)  # the MutationObserver's callback
        await adapter.settled()
    return json.dumps(
        {
            "before": before,
            "after": live_proxy_count(),
            "peak": peak,
            "tools": adapter.tool_names,
            "attachments": len(surface.attachments),
            "registrations": len(registry.registrations()),
        }
    )


def figures() -> str:
    follower = surface.availability
    return json.dumps(
        {
            "availabilityRuns": follower.runs,
            "availabilityMs": follower.seconds * 1000,
            "inspectorRenders": inspector.renders,
            "liveProxies": live_proxy_count(),
        }
    )


hooks = {"prepare": prepare, "churn": churn, "figures": figures, "liveProxies": live_proxy_count}
page_api = to_js({"shape": adapter.shape}, dict_converter=js.Object.fromEntries)
for name, fn in hooks.items():
    proxy = create_proxy(fn)
    proxies.append(proxy)
    setattr(page_api, name, proxy)
js.window.pageLifecycle = page_api
